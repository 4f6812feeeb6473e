/* pretokenize.h — BPE pre-tokenizers: how a text is split into words before BPE merges each
 * word, named as tokenizer.ggml.pre names them. A pre-tokenizer is a list of rules
 * (pretokenize_rules.h) applied in turn: the first splits the text around its matches (a
 * match is a piece, and so is the text between two matches), each next one splits every
 * piece the one before left, as llama.cpp's unicode_regex_split does. */
#ifndef SAC_PRETOKENIZE_H
#define SAC_PRETOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#include "pretokenize_rules.h"

#define SAC_PRETOK_MAX_RULES 6

typedef struct sac_pretokenizer {
    const char *names; /* the tokenizer.ggml.pre values that mean it, separated by spaces */
    uint8_t n_rules;
    uint8_t rules[SAC_PRETOK_MAX_RULES]; /* enum sac_pretok_rule */
    uint8_t ignore_merges; /* a word that is a token as a whole is that token, merges or not */
    uint8_t add_bos;       /* the default of tokenizer.ggml.add_bos_token */
} sac_pretokenizer;

/* The pre-tokenizer tokenizer.ggml.pre names, or NULL when it is not supported. */
const sac_pretokenizer *sac_pretokenizer_find(const char *name, size_t len);
/* The names supported, for messages: "gpt-2, mpt, ..." */
const char *sac_pretokenizer_names(void);

/* Walks the words of one text without allocating: one position per rule. */
typedef struct sac_pretok_iter {
    const sac_pretokenizer *pt;
    const char *text;
    size_t len;
    int text_taken; /* the first rule has been given the whole text */
    size_t pos[SAC_PRETOK_MAX_RULES], end[SAC_PRETOK_MAX_RULES];          /* the piece each rule splits */
    size_t match_start[SAC_PRETOK_MAX_RULES], match_end[SAC_PRETOK_MAX_RULES]; /* a match found ahead */
    uint8_t has_match[SAC_PRETOK_MAX_RULES];
} sac_pretok_iter;

void sac_pretok_begin(sac_pretok_iter *it, const sac_pretokenizer *pt, const char *text, size_t len);
/* The next word, [*start, *end) of the text, never empty: 1, or 0 at the end of the text. */
int sac_pretok_next(sac_pretok_iter *it, size_t *start, size_t *end);

#endif
