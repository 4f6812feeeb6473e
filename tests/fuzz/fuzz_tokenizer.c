/* fuzz_tokenizer.c — libFuzzer target for the gpt2, llama and char encoders, the BPE
 * pre-tokenizers, and detokenization (streaming and per-token pieces).
 *
 * Loads the gpt-2 and llama-spm reference vocabularies once (../shared/data/vocab, relative
 * to the current directory or to the binary in build/fuzz; skipped with a message when
 * absent) plus two vocabularies built in memory: a char one, and a small llama one whose
 * tokens hold ▁ inside (the encoder's one-queue path) with byte tokens and a user-defined
 * token. The gpt-2 vocabulary is loaded once more per pre-tokenizer family (StarCoder's,
 * Llama 3's with and without ignore-merges, Qwen2's, Falcon's, DeepSeek Coder's and LLM's), relabelled,
 * so that every splitter runs on every input and must round-trip; each splitter also walks
 * the sanitized text directly, and its words must be non-empty, contiguous, cover the text
 * and end on character boundaries. Each input is:
 *   byte 0      flags (SAC_TOKENIZE_BOS / _EOS / _SPECIAL in the low bits; bits 3-6: which
 *               vocabulary, modulo their number; bit 7: ask sac_tokenize for the size first,
 *               with no room for ids)
 *   the rest    text, arbitrary bytes (invalid UTF-8 included)
 * and is encoded with the vocabulary it selects. One vocabulary per input rather than all of
 * them keeps an execution ~10x cheaper and lets coverage feedback steer each vocabulary's paths. Checked beyond ASan/UBSan: every id is in range;
 * every chunk the detokenizer emits is well-formed UTF-8; without SAC_TOKENIZE_SPECIAL the
 * decoded text equals the input with invalid UTF-8 replaced (gpt2 always; llama unless the
 * text holds U+2581, which SentencePiece reads as a space, or, in the small llama
 * vocabulary, its user-defined token, after which llama.cpp's encoder adds a ▁). The same
 * bytes, read as 16-bit ids, are also pushed straight into the detokenizer and through sac_detokenize_pieces,
 * whose pieces must add up to the same text. Each model's embedding table is taken to have
 * 7 rows more than its tokenizer has tokens, so the raw ids include padding ids. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "gguf_writer.h"
#include "model.h"
#include "pretokenize.h"
#include "tokenizer_impl.h"
#include "unicode.h"

typedef struct fuzz_vocab {
    struct sac_model model;
    void *buf;
    int loaded;
    int round_trips; /* decode(encode(text)) == text is expected */
} fuzz_vocab;

/* the pre-tokenizers the relabelled gpt-2 vocabularies (vocabs[4..]) use */
static const char *const relabelled[] = {"starcoder", "llama-bpe", "dbrx", "qwen2", "falcon", "deepseek-coder",
                                         "deepseek-llm"};
#define N_RELABELLED (sizeof relabelled / sizeof relabelled[0])
#define N_VOCABS (4 + N_RELABELLED)

static fuzz_vocab vocabs[N_VOCABS];


static int load_from_buffer(fuzz_vocab *v, void *buf, size_t size) {
    memset(&v->model, 0, sizeof v->model);
    v->buf = buf;
    if (sac_gguf_parse(&v->model.gguf, buf, size, &v->model.error) ||
        sac_tokenizer_load(&v->model.gguf, &v->model.tokenizer, &v->model.error) || !v->model.tokenizer) {
        fprintf(stderr, "fuzz_tokenizer: %s\n", v->model.error.msg);
        return 0;
    }
    v->model.info.n_vocab = sac_tokenizer_n_vocab(v->model.tokenizer) + 7; /* padding rows */
    v->loaded = 1;
    return 1;
}

static void load_reference(fuzz_vocab *v, const char *argv0, const char *name) {
    char path[2048];
    size_t size = 0;
    snprintf(path, sizeof path, "../shared/data/vocab/ggml-vocab-%s.gguf", name);
    void *buf = test_read_file(path, &size);
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    if (!buf && slash) { /* build/fuzz/fuzz_tokenizer → ../../../shared */
        snprintf(path, sizeof path, "%.*s/../../../shared/data/vocab/ggml-vocab-%s.gguf", (int)(slash - argv0), argv0,
                 name);
        buf = test_read_file(path, &size);
    }
    if (!buf) {
        fprintf(stderr, "fuzz_tokenizer: ../shared/data/vocab/ggml-vocab-%s.gguf not found: skipping it\n", name);
        return;
    }
    if (load_from_buffer(v, buf, size)) v->round_trips = 1;
}

/* The gpt-2 vocabulary with another pre-tokenizer (its bytes all have tokens, so every text
 * round-trips whatever the splitting). */
static void load_relabelled(fuzz_vocab *v, const char *argv0, const char *pre) {
    load_reference(v, argv0, "gpt-2");
    if (!v->loaded) return;
    const sac_pretokenizer *pt = sac_pretokenizer_find(pre, strlen(pre));
    if (!pt) __builtin_trap();
    v->model.tokenizer->pretok = pt;
    v->model.tokenizer->ignore_merges = pt->ignore_merges;
}

/* A vocabulary built in memory from its tokens (types and scores optional), BOS 0, EOS 1. */
static void load_built_vocab(fuzz_vocab *v, const char *model, const char *const *tokens, const int32_t *types,
                             const float *scores, int n, int round_trips) {
    sac_error err = {0};
    gguf_writer *w = NULL;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (sac_gguf_writer_new(&w, &err) || sac_gguf_writer_set_string(w, "tokenizer.ggml.model", model, &err) ||
        sac_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, (uint64_t)n, &err) ||
        sac_gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_I32, (uint64_t)n, types,
                                  (size_t)n * sizeof *types, &err) ||
        (scores && sac_gguf_writer_set_array(w, "tokenizer.ggml.scores", GGUF_TYPE_F32, (uint64_t)n, scores,
                                             (size_t)n * sizeof *scores, &err)) ||
        sac_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 0, &err) ||
        sac_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 1, &err) ||
        sac_gguf_writer_to_buffer(w, &bytes, &size, &err)) {
        fprintf(stderr, "fuzz_tokenizer: building the %s vocabulary: %s\n", model, err.msg);
        sac_gguf_writer_free(w);
        return;
    }
    sac_gguf_writer_free(w);
    if (load_from_buffer(v, bytes, size)) v->round_trips = round_trips;
}

static void load_char_vocab(fuzz_vocab *v) {
    static const char *const tokens[] = {"<bos>", "<eos>", "<unk>", " ", "\n", "a", "b", "\xC3\xA9",
                                         "\xF0\x9F\x98\x80", "<", ">"};
    static const int32_t types[] = {3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1};
    load_built_vocab(v, "char", tokens, types, NULL, (int)(sizeof tokens / sizeof tokens[0]), 0);
}

/* A small SentencePiece vocabulary with tokens that hold ▁ after a character ("a▁"), so the
 * encoder merges the whole text in one queue instead of word by word, and <0xNN> tokens for
 * every byte, so every text round-trips. */
static void load_small_spm_vocab(fuzz_vocab *v) {
    static const char *const words[] = {"\xE2\x96\x81", "a", "b", "c", "a\xE2\x96\x81", "a\xE2\x96\x81" "b",
                                        "\xE2\x96\x81" "a", "ab", "abc", "\xE2\x96\x81\xE2\x96\x81", "\xC3\xA9",
                                        "\xE2\x96\x81\xC3\xA9", "<x>"};
    static const float word_scores[] = {-1, -2, -2, -3, -1, 0, -2, -1.5f, -0.5f, -4, -2, -1, 0};
    enum { N_WORDS = sizeof words / sizeof words[0], N = 3 + 256 + N_WORDS };
    static char byte_names[256][7];
    const char *tokens[N];
    int32_t types[N];
    float scores[N];
    tokens[0] = "<s>", tokens[1] = "</s>", tokens[2] = "<unk>";
    types[0] = types[1] = 3, types[2] = 2;
    for (int b = 0; b < 256; b++) {
        snprintf(byte_names[b], sizeof byte_names[b], "<0x%02X>", b);
        tokens[3 + b] = byte_names[b];
        types[3 + b] = 6;
    }
    for (int i = 0; i < N_WORDS; i++) {
        tokens[259 + i] = words[i];
        types[259 + i] = i == N_WORDS - 1 ? 4 : 1; /* "<x>" is user-defined: always matched */
    }
    for (int i = 0; i < N; i++) scores[i] = i >= 259 ? word_scores[i - 259] : 0;
    load_built_vocab(v, "llama", tokens, types, scores, N, 1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *argv0 = argc && *argc > 0 && argv && *argv ? (*argv)[0] : NULL;
    load_reference(&vocabs[0], argv0, "gpt-2");
    load_reference(&vocabs[1], argv0, "llama-spm");
    load_char_vocab(&vocabs[2]);
    load_small_spm_vocab(&vocabs[3]);
    for (size_t i = 0; i < N_RELABELLED; i++) load_relabelled(&vocabs[4 + i], argv0, relabelled[i]);
    return 0;
}

static int contains(const char *s, size_t n, const char *needle, size_t m) {
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, needle, m) == 0) return 1;
    return 0;
}

/* Pushes ids through a fresh detokenizer; returns the text (malloc'd) or traps on a broken chunk. */
static char *detokenize(struct sac_model *m, const int32_t *ids, size_t n, size_t *len) {
    sac_detokenizer *dt;
    if (sac_detokenizer_new(m, &dt)) __builtin_trap();
    size_t cap = 64, used = 0;
    char *out = malloc(cap);
    if (!out) __builtin_trap();
    for (size_t i = 0; i <= n; i++) {
        const char *text;
        size_t text_len;
        sac_status st = i < n ? sac_detokenizer_push(dt, ids[i], &text, &text_len)
                              : sac_detokenizer_flush(dt, &text, &text_len);
        if (st != SAC_OK || !sac_utf8_valid((const uint8_t *)text, text_len)) __builtin_trap();
        if (used + text_len > cap) {
            while (used + text_len > cap) cap *= 2;
            char *grown = realloc(out, cap);
            if (!grown) __builtin_trap();
            out = grown;
        }
        memcpy(out + used, text, text_len);
        used += text_len;
    }
    sac_detokenizer_free(dt);
    *len = used;
    return out;
}

/* The pieces of ids must be the detokenizer's text, cut at non-decreasing ends. */
static void check_pieces(struct sac_model *m, const int32_t *ids, int32_t n, const char *text, size_t len) {
    size_t *ends = malloc(((size_t)n + 1) * sizeof *ends);
    char *pieces = malloc(len + 1);
    size_t need = 0;
    if (!ends || !pieces) __builtin_trap();
    if (sac_detokenize_pieces(m, ids, n, pieces, len, ends, &need) != SAC_OK || need != len ||
        memcmp(pieces, text, len) != 0)
        __builtin_trap();
    for (int32_t i = 0; i < n; i++)
        if (ends[i] > len || (i > 0 && ends[i] < ends[i - 1])) __builtin_trap();
    if (n > 0 && ends[n - 1] != len) __builtin_trap();
    free(ends);
    free(pieces);
}

/* A splitter's words: non-empty, back to back from 0 to len, each ending on a character boundary. */
static void check_words(const char *pre, const char *text, size_t len) {
    sac_pretok_iter it;
    sac_pretok_begin(&it, sac_pretokenizer_find(pre, strlen(pre)), text, len);
    size_t covered = 0;
    for (size_t a, b; sac_pretok_next(&it, &a, &b); covered = b)
        if (a != covered || b <= a || b > len || (b < len && ((uint8_t)text[b] & 0xC0) == 0x80)) __builtin_trap();
    if (covered != len) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    uint32_t flags = data[0] & (SAC_TOKENIZE_BOS | SAC_TOKENIZE_EOS | SAC_TOKENIZE_SPECIAL);
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    size_t clean_len = sac_utf8_sanitized_len((const uint8_t *)text, len);
    char *clean = malloc(clean_len + 1);
    if (!clean) return 0;
    sac_utf8_sanitize((const uint8_t *)text, len, clean);
    int k = (int)((data[0] >> 3 & 15u) % N_VOCABS);
    check_words(k >= 4 ? relabelled[k - 4] : "gpt-2", clean, clean_len);

    do {
        fuzz_vocab *v = &vocabs[k];
        if (!v->loaded) break;
        struct sac_model *m = &v->model;
        /* At most one id per byte of the sanitized text, 3 when a space or byte becomes byte
         * tokens, plus BOS, EOS and llama's leading ▁. Bit 7 of byte 0 asks for the size first. */
        int32_t capacity = (int32_t)(3 * clean_len + 8), n = 0, needed = -1;
        sac_status st = SAC_OK;
        if (data[0] & 0x80) {
            st = sac_tokenize(m, text, len, flags, NULL, 0, &n);
            if (st != SAC_OK && !(st == SAC_ERR_ARG && n > 0)) {
                if (k != 2 || st != SAC_ERR_ARG) __builtin_trap(); /* only char vocabularies reject text */
                break;
            }
            needed = n;
            if (n > capacity) __builtin_trap();
        }
        int32_t *ids = malloc((size_t)capacity * sizeof *ids);
        if (!ids) break;
        st = sac_tokenize(m, text, len, flags, ids, capacity, &n);
        if (st != SAC_OK) {
            if (k != 2 || st != SAC_ERR_ARG || n > capacity) __builtin_trap();
            free(ids);
            break;
        }
        if (needed >= 0 && n != needed) __builtin_trap();
        for (int32_t i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= sac_tokenizer_n_vocab(m->tokenizer)) __builtin_trap();
        size_t back_len;
        char *back = detokenize(m, ids, (size_t)n, &back_len);
        if (v->round_trips && !(flags & SAC_TOKENIZE_SPECIAL) &&
            !(m->tokenizer->kind == SAC_TOKENIZER_LLAMA && contains(clean, clean_len, "\xE2\x96\x81", 3)) &&
            !(k == 3 && contains(clean, clean_len, "<x>", 3)) &&
            (back_len != clean_len || memcmp(back, clean, clean_len) != 0))
            __builtin_trap();
        free(back);
        free(ids);

        /* the input as raw ids, byte tokens and all */
        size_t n_raw = len / 2;
        int32_t *raw = malloc((n_raw + 1) * sizeof *raw);
        if (!raw) break;
        int32_t n_ids = sac_tokenizer_n_ids(m);
        for (size_t i = 0; i < n_raw; i++) raw[i] = (int32_t)(((uint32_t)data[1 + 2 * i] | (uint32_t)data[2 + 2 * i] << 8) % (uint32_t)n_ids);
        back = detokenize(m, raw, n_raw, &back_len);
        check_pieces(m, raw, (int32_t)n_raw, back, back_len);
        free(back);
        free(raw);
    } while (0);
    free(clean);
    return 0;
}
