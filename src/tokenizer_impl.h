/* tokenizer_impl.h — the tokenizer's tables: read by tokenizer.c (which loads them and
 * implements the public calls), by the encoders of each kind of vocabulary
 * (tokenizer_encoders.h), by the text → id table (token_lookup.h) and by detokenizer.c.
 * Everything here is built once at load and read-only afterwards, so one model can
 * tokenize on several threads at once. */
#ifndef SAC_TOKENIZER_IMPL_H
#define SAC_TOKENIZER_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "tokenizer.h"

enum sac_tokenizer_kind {
    SAC_TOKENIZER_GPT2,  /* byte-level BPE */
    SAC_TOKENIZER_LLAMA, /* SentencePiece */
    SAC_TOKENIZER_CHAR,  /* one token per character (saccade's own models) */
};

/* tokenizer.ggml.token_type values, as llama.cpp's converters write them. */
enum sac_token_type {
    SAC_TOKEN_NORMAL = 1,
    SAC_TOKEN_UNKNOWN = 2,
    SAC_TOKEN_CONTROL = 3,
    SAC_TOKEN_USER_DEFINED = 4,
    SAC_TOKEN_UNUSED = 5,
    SAC_TOKEN_BYTE = 6,
};

typedef struct sac_token_entry {
    uint32_t text_off, text_len;   /* the token as the vocabulary spells it, in tok->text */
    uint32_t piece_off, piece_len; /* the bytes it decodes to, in tok->pieces */
    float score;                   /* SentencePiece: higher merges first */
    uint8_t type;                  /* enum sac_token_type */
    uint8_t strip;                 /* SAC_STRIP_*: white space a matched special token swallows */
} sac_token_entry;

/* llama.cpp's lstrip / rstrip token attributes: a special token found in the text drops the
 * ASCII white space before / after it (the loader sets them; see tokenizer.c). */
enum { SAC_STRIP_LEFT = 1, SAC_STRIP_RIGHT = 2 };

/* One BPE merge: the pair of token ids (left << 32 | right), its rank (lower merges
 * first) and the token the pair becomes. */
typedef struct sac_merge {
    uint64_t pair;
    int32_t rank;
    int32_t result; /* -1 marks an empty slot */
} sac_merge;

struct sac_tokenizer {
    enum sac_tokenizer_kind kind;
    int32_t n_vocab;
    sac_token_entry *tokens;
    char *text;   /* every token's text, back to back */
    char *pieces; /* every token's decoded bytes, back to back */
    uint32_t max_text_len;

    /* text → id: open addressing, slots hold id + 1 (0 = empty), size a power of two */
    uint32_t *text_map;
    uint32_t text_map_mask;
    uint64_t text_map_seed; /* secret per table: a file cannot choose texts that share a slot */

    /* gpt2: the token of each byte's printable stand-in; llama: the <0xNN> tokens; -1 none */
    int32_t byte_token[256];

    /* gpt2: how a text is split into words (tokenizer.ggml.pre), and whether a word that is
     * a token as a whole skips merging */
    const struct sac_pretokenizer *pretok;
    int ignore_merges;

    /* gpt2: pair → merge, open addressing, size a power of two */
    sac_merge *merges;
    uint64_t merges_mask;
    uint64_t merges_seed; /* sac_table_seed */

    /* control, unknown and user-defined tokens, longest text first: the ones a text can
     * spell out ("<s>") and that are matched before the text is split any further */
    int32_t *specials;
    int32_t n_specials;

    int32_t bos, eos, unk; /* -1 when the vocabulary has none */
    int add_bos, add_eos;
    int add_space_prefix; /* llama: prepend ▁ to a text (and strip it when decoding) */
    int spm_split_at_space; /* llama: ▁ appears in tokens only as a leading run (see tokenizer_spm.c) */
};

/* Where encoders put ids: `out` holds `capacity`; every id is counted in `count` even
 * when it no longer fits, so that the caller learns the size it needs. */
typedef struct sac_token_sink {
    int32_t *out;
    int64_t capacity;
    int64_t count;
} sac_token_sink;

static inline void sac_sink_push(sac_token_sink *sink, int32_t id) {
    if (sink->count < sink->capacity) sink->out[sink->count] = id;
    sink->count++;
}

static inline const char *sac_token_text(const sac_tokenizer *tok, int32_t id) {
    return tok->text + tok->tokens[id].text_off;
}

#endif
