/* test_tokenizer.c — the gpt2, llama and char tokenizers: llama.cpp's reference cases, round
 * trips, invalid UTF-8, streaming detokenization and per-token pieces, special tokens, ids
 * of a padded embedding table and the error paths.
 *
 * The reference vocabularies are read from ../shared/data/vocab and the shipped models from
 * models/ (relative to the repository root: the current directory, or found from the
 * binary's place in build/<flavour>/tests); tests that need the vocabularies SKIP when they
 * are absent. Vocab-only files are no models, so a sac_model is put together by
 * hand: sac_gguf_parse into model.gguf, sac_tokenizer_load into model.tokenizer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "check.h"
#include "gguf_writer.h"
#include "model.h"
#include "pretokenize.h"
#include "token_lookup.h"
#include "tokenizer_encoders.h"
#include "unicode.h"
#include "word_cache.h"

/* ------------------------------------------------------------------------------------------
 * Helpers
 * ---------------------------------------------------------------------------------------- */

typedef struct vocab {
    struct sac_model model;
    void *buf;
    int loaded;
} vocab;

static vocab gpt2_vocab, llama_vocab;
static char repo_dir[1024] = ".", data_dir[1100] = "../shared/data";


/* The repository root: the current directory, or three levels above build/<flavour>/tests
 * (where /proc/self/exe says the program is); the data sits beside it in ../shared/data. */
static void find_dirs(void) {
    FILE *f = fopen("src/tokenizer.c", "rb");
    char exe[1024];
    ssize_t n = f ? -1 : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (f) fclose(f);
    if (n > 0) {
        exe[n] = '\0';
        const char *slash = strrchr(exe, '/');
        if (slash) snprintf(repo_dir, sizeof repo_dir, "%.*s/../../..", (int)(slash - exe), exe);
    }
    snprintf(data_dir, sizeof data_dir, "%s/../shared/data", repo_dir);
}

/* Builds a tokenizer-only model from GGUF bytes; returns the status of the first failing step. */
static sac_status model_from_gguf(struct sac_model *m, const void *buf, size_t size) {
    memset(m, 0, sizeof *m);
    sac_status st = sac_gguf_parse(&m->gguf, buf, size, &m->error);
    if (st) return st;
    return sac_tokenizer_load(&m->gguf, &m->tokenizer, &m->error);
}

static void model_release(struct sac_model *m) {
    sac_tokenizer_free(m->tokenizer);
    m->tokenizer = NULL;
    sac_gguf_release(&m->gguf);
}

static void vocab_open(vocab *v, const char *name) {
    char path[1200];
    size_t size;
    snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf", data_dir, name);
    v->buf = test_read_file(path, &size);
    if (!v->buf) return;
    sac_status st = model_from_gguf(&v->model, v->buf, size);
    if (st || !v->model.tokenizer) {
        fprintf(stderr, "%s: %s\n", path, v->model.error.msg);
        return;
    }
    v->loaded = 1;
}

static void vocab_close(vocab *v) {
    model_release(&v->model);
    free(v->buf);
}

/* All ids of a text (sizing the output with a first call). NULL on failure, *st says why. */
static int32_t *tokenize(struct sac_model *m, const char *text, size_t len, uint32_t flags, int32_t *n,
                         sac_status *st) {
    *n = 0;
    *st = sac_tokenize(m, text, len, flags, NULL, 0, n);
    if (*st && !(*st == SAC_ERR_ARG && *n > 0)) return NULL;
    int32_t *ids = malloc(((size_t)*n + 1) * sizeof *ids);
    int32_t needed = *n;
    *st = sac_tokenize(m, text, len, flags, ids, needed, n);
    if (*st || *n != needed) {
        free(ids);
        return NULL;
    }
    return ids;
}

typedef struct text_buf {
    char *data;
    size_t len, cap;
} text_buf;

static void buf_add(text_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = 2 * (b->len + n + 1);
        b->data = realloc(b->data, b->cap);
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Decodes ids through the streaming detokenizer, checking that every chunk is well-formed
 * UTF-8. Returns the text (malloc'd; *len its length). */
static char *detokenize(struct sac_model *m, const int32_t *ids, int32_t n, size_t *len) {
    sac_detokenizer *dt = NULL;
    sac_status st = sac_detokenizer_new(m, &dt);
    CHECK_MSG(st == SAC_OK, "sac_detokenizer_new: %s", m->error.msg);
    text_buf out = {0};
    buf_add(&out, "", 0);
    if (st) return out.data;
    for (int32_t i = 0; i < n; i++) {
        const char *chunk;
        size_t chunk_len;
        st = sac_detokenizer_push(dt, ids[i], &chunk, &chunk_len);
        CHECK_MSG(st == SAC_OK, "push %d: %s", ids[i], sac_detokenizer_errmsg(dt));
        CHECK_MSG(sac_utf8_valid((const uint8_t *)chunk, chunk_len), "chunk of token %d is not well-formed UTF-8",
                  ids[i]);
        buf_add(&out, chunk, chunk_len);
    }
    const char *rest;
    size_t rest_len;
    CHECK(sac_detokenizer_flush(dt, &rest, &rest_len) == SAC_OK);
    CHECK(sac_utf8_valid((const uint8_t *)rest, rest_len));
    buf_add(&out, rest, rest_len);
    sac_detokenizer_free(dt);
    *len = out.len;
    return out.data;
}

/* The reference decode: sac_token_bytes of every id, concatenated; llama drops the space its
 * encoder put in front; ill-formed UTF-8 replaced. */
static char *decode_pieces(struct sac_model *m, const int32_t *ids, int32_t n, size_t *len) {
    text_buf raw = {0};
    buf_add(&raw, "", 0);
    int at_start = 1;
    for (int32_t i = 0; i < n; i++) {
        const char *bytes;
        size_t blen;
        CHECK(sac_token_bytes(m, ids[i], &bytes, &blen) == SAC_OK);
        if (blen && at_start) {
            at_start = 0;
            if (m->tokenizer->add_space_prefix && bytes[0] == ' ') {
                bytes++;
                blen--;
            }
        }
        buf_add(&raw, bytes, blen);
    }
    size_t clean_len = sac_utf8_sanitized_len((const uint8_t *)raw.data, raw.len);
    char *clean = malloc(clean_len + 1);
    sac_utf8_sanitize((const uint8_t *)raw.data, raw.len, clean);
    clean[clean_len] = '\0';
    free(raw.data);
    *len = clean_len;
    return clean;
}

static int contains(const char *s, size_t n, const char *needle) {
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, needle, m) == 0) return 1;
    return 0;
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* ------------------------------------------------------------------------------------------
 * UTF-8 and character classes
 * ---------------------------------------------------------------------------------------- */

static void test_utf8_replacement(void) {
    /* Unicode's example of maximal subparts (and what TextDecoder and Python produce) */
    static const struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64",
         "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD\xEF\xBF\xBD" "d"},
        {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                                 /* overlong */
        {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},                 /* surrogate */
        {"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* > U+10FFFF */
        {"\xE2\x82", "\xEF\xBF\xBD"},                                             /* truncated */
        {"\xF0\x9F\x98", "\xEF\xBF\xBD"},
        {"\xFF\xFE", "\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"A\xE2\x82\xAC" "B\xE2\x82", "A\xE2\x82\xAC" "B\xEF\xBF\xBD"},
        {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"}, /* U+10FFFF is fine */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint8_t *in = (const uint8_t *)cases[i].in;
        size_t n = strlen(cases[i].in), want = strlen(cases[i].out);
        CHECK_MSG(sac_utf8_sanitized_len(in, n) == want, "case %zu", i);
        char out[64] = {0};
        sac_utf8_sanitize(in, n, out);
        CHECK_MSG(memcmp(out, cases[i].out, want) == 0, "case %zu", i);
        CHECK_MSG(sac_utf8_valid(in, n) == (strcmp(cases[i].in, cases[i].out) == 0), "case %zu", i);
    }
    uint32_t cp;
    size_t len;
    CHECK(sac_utf8_next((const uint8_t *)"\xF0\x9F\x98\x80", 4, &cp, &len) == SAC_UTF8_OK && cp == 0x1F600 && len == 4);
    CHECK(sac_utf8_next((const uint8_t *)"\xF0\x9F\x98", 3, &cp, &len) == SAC_UTF8_TRUNCATED && len == 3);
    CHECK(sac_utf8_next((const uint8_t *)"\xF0\x9F\x41", 3, &cp, &len) == SAC_UTF8_INVALID && len == 2);
    char enc[4];
    CHECK(sac_utf8_encode(0x1F600, enc) == 4 && memcmp(enc, "\xF0\x9F\x98\x80", 4) == 0);
    CHECK(sac_utf8_encode(0xE9, enc) == 2 && memcmp(enc, "\xC3\xA9", 2) == 0);
}

static void test_char_classes(void) {
    static const struct {
        uint32_t cp;
        enum sac_char_class cls;
    } cases[] = {
        {'a', SAC_CHAR_LETTER},     {'Z', SAC_CHAR_LETTER},     {'7', SAC_CHAR_NUMBER},
        {' ', SAC_CHAR_SPACE},      {'\t', SAC_CHAR_SPACE},     {'\n', SAC_CHAR_SPACE},
        {0x0B, SAC_CHAR_SPACE},     {'\r', SAC_CHAR_SPACE},     {'!', SAC_CHAR_OTHER},
        {'\'', SAC_CHAR_OTHER},     {0x1C, SAC_CHAR_OTHER},     /* not \s, although isspace() */
        {0x00E9, SAC_CHAR_LETTER},  /* é */
        {0x0416, SAC_CHAR_LETTER},  /* Ж */
        {0x05D0, SAC_CHAR_LETTER},  /* א */
        {0x4E2D, SAC_CHAR_LETTER},  /* 中 */
        {0xAC00, SAC_CHAR_LETTER},  /* 가 */
        {0x02B0, SAC_CHAR_LETTER},  /* ʰ, Lm */
        {0x20000, SAC_CHAR_LETTER}, /* 𠀀, CJK extension B */
        {0x1D400, SAC_CHAR_LETTER}, /* 𝐀 */
        {0x0663, SAC_CHAR_NUMBER},  /* ٣ Arabic-Indic three */
        {0x096A, SAC_CHAR_NUMBER},  /* ४ Devanagari four */
        {0xFF15, SAC_CHAR_NUMBER},  /* ５ fullwidth */
        {0x216B, SAC_CHAR_NUMBER},  /* Ⅻ, Nl */
        {0x00BD, SAC_CHAR_NUMBER},  /* ½, No */
        {0x1D7CE, SAC_CHAR_NUMBER}, /* 𝟎 */
        {0x00A0, SAC_CHAR_SPACE},   {0x0085, SAC_CHAR_SPACE},   {0x1680, SAC_CHAR_SPACE},
        {0x2003, SAC_CHAR_SPACE},   {0x2028, SAC_CHAR_SPACE},   {0x3000, SAC_CHAR_SPACE},
        {0x200B, SAC_CHAR_OTHER},   /* zero width space is Cf, not White_Space */
        {0x0301, SAC_CHAR_OTHER},   /* combining acute: a mark, not a letter */
        {0x1F600, SAC_CHAR_OTHER},  {0x100BD, SAC_CHAR_LETTER}, /* a Linear B ideogram is Lo */
        {0x0378, SAC_CHAR_OTHER},   /* unassigned */
        {0xE000, SAC_CHAR_OTHER},   /* private use */
        {0x10FFFF, SAC_CHAR_OTHER}, {0x110000, SAC_CHAR_OTHER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(sac_char_class_of(cases[i].cp) == cases[i].cls, "U+%04X: class %d, expected %d",
                  (unsigned)cases[i].cp, sac_char_class_of(cases[i].cp), cases[i].cls);
}

/* GPT-2's bytes_to_unicode: printable bytes as themselves ('!'..'~', '¡'..'¬', '®'..'ÿ'), the
 * n-th of the others in byte order as U+0100 + n; every other code point is no byte. */
static void test_gpt2_byte_map(void) {
    int byte_of[0x200];
    for (int cp = 0; cp < 0x200; cp++) byte_of[cp] = -1;
    for (int b = 0, n = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        uint32_t cp = printable ? (uint32_t)b : 0x100u + (uint32_t)n++;
        CHECK_MSG(sac_gpt2_byte_to_cp((uint8_t)b) == cp, "byte %d", b);
        byte_of[cp] = b;
    }
    for (uint32_t cp = 0; cp < 0x200; cp++)
        CHECK_MSG(sac_gpt2_cp_to_byte(cp) == byte_of[cp], "U+%04X", (unsigned)cp);
    CHECK(sac_gpt2_cp_to_byte(0x10000) == -1);
    CHECK(sac_gpt2_cp_to_byte(UINT32_MAX) == -1);
    CHECK(sac_gpt2_byte_to_cp(' ') == 0x120);  /* Ġ */
    CHECK(sac_gpt2_byte_to_cp('\n') == 0x10A); /* Ċ */
    CHECK(sac_gpt2_byte_to_cp('A') == 'A');
    CHECK(sac_gpt2_byte_to_cp(0xAD) == 0x143); /* the soft hyphen is the last one remapped */
    CHECK(sac_gpt2_cp_to_byte(' ') == -1);
    CHECK(sac_gpt2_cp_to_byte(0x144) == -1);
}

/* ------------------------------------------------------------------------------------------
 * llama.cpp's reference cases
 * ---------------------------------------------------------------------------------------- */

/* Every text in <vocab>.gguf.inp must give exactly the ids on the same line of .gguf.out. */
static void check_reference_cases(vocab *v, const char *name) {
    char path[1200];
    size_t n_inp, n_out;
    snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf.inp", data_dir, name);
    char *inp = test_read_file(path, &n_inp);
    snprintf(path, sizeof path, "%s/vocab/ggml-vocab-%s.gguf.out", data_dir, name);
    char *out = test_read_file(path, &n_out);
    CHECK(inp && out);
    if (!inp || !out) {
        free(inp);
        free(out);
        return;
    }
    const char *sep = "\n__ggml_vocab_test__\n";
    char *text = inp, *line = out;
    int n_cases = 0, n_ok = 0;
    for (char *end; (end = strstr(text, sep)) != NULL; text = end + strlen(sep)) {
        size_t len = (size_t)(end - text);
        char *eol = strchr(line, '\n');
        CHECK_MSG(eol != NULL, "%s: more inputs than output lines", name);
        if (!eol) break;
        *eol = '\0';
        int32_t want[1024];
        int n_want = 0;
        for (char *p = line; *p && n_want < 1024;) {
            char *q;
            long id = strtol(p, &q, 10);
            if (q == p) break;
            want[n_want++] = (int32_t)id;
            p = q;
        }
        line = eol + 1;
        n_cases++;

        int32_t n;
        sac_status st;
        int32_t *ids = tokenize(&v->model, text, len, 0, &n, &st);
        int ok = ids && n == n_want && memcmp(ids, want, (size_t)n * sizeof *ids) == 0;
        CHECK_MSG(ok, "%s: case %d '%.*s': status %s, %d ids, expected %d", name, n_cases, (int)len, text,
                  sac_status_name(st), n, n_want);
        n_ok += ok;

        /* and back: the detokenizer gives the text again */
        size_t back_len;
        char *back = detokenize(&v->model, ids, ids ? n : 0, &back_len);
        CHECK_MSG(back_len == len && memcmp(back, text, len) == 0, "%s: case %d does not round-trip: '%s'", name,
                  n_cases, back);
        free(back);
        free(ids);
    }
    CHECK_MSG(n_cases == 46, "%s: %d cases", name, n_cases);
    printf("  %s: %d/%d reference cases match llama.cpp\n", name, n_ok, n_cases);
    free(inp);
    free(out);
}

static void test_gpt2_reference_cases(void) {
    if (!gpt2_vocab.loaded) SKIP("../shared/data/vocab/ggml-vocab-gpt-2.gguf not found");
    check_reference_cases(&gpt2_vocab, "gpt-2");
}

static void test_llama_reference_cases(void) {
    if (!llama_vocab.loaded) SKIP("../shared/data/vocab/ggml-vocab-llama-spm.gguf not found");
    check_reference_cases(&llama_vocab, "llama-spm");
}

/* A vocabulary read for one test: its reference cases must all pass. */
static void check_reference_vocab(const char *name) {
    vocab v = {0};
    vocab_open(&v, name);
    if (!v.buf) SKIP("a vocabulary of ../shared/data/vocab is missing");
    CHECK_MSG(v.loaded, "%s: %s", name, v.model.error.msg);
    if (v.loaded) check_reference_cases(&v, name);
    vocab_close(&v);
}

/* pre-tokenizer "mpt": GPT-2's rules */
static void test_mpt_reference_cases(void) { check_reference_vocab("mpt"); }
/* "starcoder" and "refact": every digit is a word of its own, then GPT-2's rules */
static void test_starcoder_reference_cases(void) { check_reference_vocab("starcoder"); }
static void test_refact_reference_cases(void) { check_reference_vocab("refact"); }
/* "deepseek-coder": newlines, letters, punctuation, CJK and digits split in turn */
static void test_deepseek_coder_reference_cases(void) { check_reference_vocab("deepseek-coder"); }

static void test_vocab_metadata(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    struct sac_model *g = &gpt2_vocab.model, *l = &llama_vocab.model;
    CHECK(sac_tokenizer_n_vocab(g->tokenizer) == 50257);
    CHECK(sac_token_bos(g) == 50256 && sac_token_eos(g) == 50256 && sac_token_add_bos(g) == 0);
    CHECK(sac_tokenizer_n_vocab(l->tokenizer) == 32000);
    CHECK(sac_token_bos(l) == 1 && sac_token_eos(l) == 2 && sac_token_add_bos(l) == 1);
    CHECK(l->tokenizer->unk == 0);
    /* every token's text finds its own id (neither vocabulary spells a token twice) */
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        const sac_tokenizer *tok = (k ? l : g)->tokenizer;
        for (int32_t i = 0; i < tok->n_vocab; i++)
            bad += sac_token_lookup(tok, sac_token_text(tok, i), tok->tokens[i].text_len) != i;
    }
    CHECK_MSG(bad == 0, "%d tokens do not map back to their id", bad);
}

static void test_token_bytes(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    struct sac_model *g = &gpt2_vocab.model, *l = &llama_vocab.model;
    static const struct {
        int llama;
        int32_t id;
        const char *bytes;
        size_t len;
    } cases[] = {
        {0, 220, " ", 1},           {0, 198, "\n", 1},        {0, 18435, " Hello", 6},
        {0, 50256, "", 0},          /* <|endoftext|> is a control token */
        {0, 157, "\xE1", 1},        /* a byte token in the middle of a character */
        {1, 15043, " Hello", 6},    /* ▁Hello */
        {1, 13, "\n", 1},           /* <0x0A> */
        {1, 3 + 0xE2, "\xE2", 1},   /* <0xE2> */
        {1, 1, "", 0},              {1, 2, "", 0}, {1, 0, "", 0}, /* <s> </s> <unk> */
        {1, 29871, " ", 1},         /* ▁ */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *bytes = NULL;
        size_t len = 99;
        sac_status st = sac_token_bytes(cases[i].llama ? l : g, cases[i].id, &bytes, &len);
        CHECK_MSG(st == SAC_OK && len == cases[i].len && memcmp(bytes, cases[i].bytes, len) == 0, "token %d (%s)",
                  cases[i].id, cases[i].llama ? "llama" : "gpt2");
    }
    const char *bytes;
    size_t len;
    CHECK(sac_token_bytes(g, 50257, &bytes, &len) == SAC_ERR_ARG && strstr(g->error.msg, "out of range"));
    CHECK(sac_token_bytes(g, -1, &bytes, &len) == SAC_ERR_ARG);
    CHECK(sac_token_bytes(g, 0, NULL, &len) == SAC_ERR_ARG);
}

/* ------------------------------------------------------------------------------------------
 * Round trips
 * ---------------------------------------------------------------------------------------- */

/* Ranges to draw code points from: scripts, marks, numbers of other scripts, spaces, emoji,
 * astral planes, unassigned and private-use code points. */
static const uint32_t unicode_pools[][2] = {
    {0x20, 0x7E},       {0x20, 0x7E},       {0x20, 0x7E},       {'\n', '\n'},       {'\t', '\r'},
    {0xA0, 0xFF},       {0x100, 0x24F},     {0x300, 0x36F},     {0x370, 0x3FF},     {0x400, 0x4FF},
    {0x5D0, 0x5EA},     {0x600, 0x6FF},     {0x900, 0x97F},     {0xE00, 0xE5B},     {0x1680, 0x1680},
    {0x2000, 0x200D},   {0x2028, 0x202F},   {0x2160, 0x2188},   {0x3000, 0x303F},   {0x3040, 0x30FF},
    {0x4E00, 0x9FFF},   {0xAC00, 0xD7A3},   {0xE000, 0xE0FF},   {0xFE00, 0xFE0F},   {0xFF01, 0xFF5E},
    {0xFFF0, 0xFFFD},   {0x10300, 0x1034F}, {0x1D400, 0x1D7FF}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF},
    {0x20000, 0x2A6DF}, {0xE0001, 0xE007F}, {0x10FFF0, 0x10FFFF}, {0x85, 0x85},     {0x378, 0x379},
};
static const char *const snippets[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'RE", "  ", "\n\n", " 3",
                                       "<s>", "<|endoftext|>", "\xE2\x96\x81"};

/* A random well-formed string of up to max_chars code points (and snippets). */
static size_t random_text(uint64_t *rng, char *out, int max_chars, int allow_space_mark) {
    size_t n = 0;
    int count = (int)(rng_next(rng) % (uint64_t)(max_chars + 1));
    for (int i = 0; i < count; i++) {
        uint64_t r = rng_next(rng);
        if (r % 8 == 0) {
            size_t k = (size_t)(r / 8 % (sizeof snippets / sizeof snippets[0]));
            if (!allow_space_mark && strcmp(snippets[k], "\xE2\x96\x81") == 0) continue;
            memcpy(out + n, snippets[k], strlen(snippets[k]));
            n += strlen(snippets[k]);
            continue;
        }
        const uint32_t *pool = unicode_pools[r / 8 % (sizeof unicode_pools / sizeof unicode_pools[0])];
        uint32_t cp = pool[0] + (uint32_t)(rng_next(rng) % (pool[1] - pool[0] + 1));
        if (!allow_space_mark && cp == 0x2581) cp = 0x2580;
        n += sac_utf8_encode(cp, out + n);
    }
    return n;
}

/* text → ids → text for random Unicode strings, through the detokenizer and token bytes. */
static void check_random_round_trips(vocab *v, uint64_t seed, int allow_space_mark) {
    uint64_t rng = seed;
    char text[64 * 16];
    int failures = 0;
    for (int iter = 0; iter < 400 && failures < 5; iter++) {
        size_t len = random_text(&rng, text, 60, allow_space_mark);
        int32_t n;
        sac_status st;
        int32_t *ids = tokenize(&v->model, text, len, 0, &n, &st);
        CHECK_MSG(ids != NULL, "tokenize: %s", v->model.error.msg);
        if (!ids) {
            failures++;
            continue;
        }
        int in_range = 1;
        for (int32_t i = 0; i < n; i++) in_range &= ids[i] >= 0 && ids[i] < v->model.tokenizer->n_vocab;
        CHECK(in_range);
        size_t back_len, ref_len;
        char *back = detokenize(&v->model, ids, n, &back_len);
        char *ref = decode_pieces(&v->model, ids, n, &ref_len);
        int ok = back_len == len && memcmp(back, text, len) == 0 && ref_len == len && memcmp(ref, text, len) == 0;
        CHECK_MSG(ok, "iteration %d: '%.*s' came back as '%s'", iter, (int)len, text, back);
        failures += !ok;
        free(back);
        free(ref);
        free(ids);
    }
}

static void test_gpt2_random_round_trip(void) {
    if (!gpt2_vocab.loaded) SKIP("gpt-2 vocabulary not found");
    check_random_round_trips(&gpt2_vocab, 0x9E3779B97F4A7C15ull, 1);
}

/* SentencePiece reads ▁ as a space, so a text holding U+2581 itself comes back with a space:
 * the random texts for llama leave it out. */
static void test_llama_random_round_trip(void) {
    if (!llama_vocab.loaded) SKIP("llama-spm vocabulary not found");
    check_random_round_trips(&llama_vocab, 0xD1B54A32D192ED03ull, 0);
}

static void test_gpt2_pretokenizer(void) {
    /* Letters of any script stay one word with the space before them, numbers of any script
     * form their own word, a mark is no letter, a run of spaces leaves its last one to the
     * word after it, and Unicode spaces are \s too. */
    static const struct {
        const char *text;
        const char *words[8];
    } cases[] = {
        {"\xC3\xBC" "ber alles", {"\xC3\xBC" "ber", " alles"}},
        {" \xE6\x97\xA5\xE6\x9C\xAC", {" \xE6\x97\xA5\xE6\x9C\xAC"}},                 /* " 日本" */
        {"abc\xD9\xA3\xD9\xA4 12", {"abc", "\xD9\xA3\xD9\xA4", " 12"}},                 /* ٣٤ */
        {"x\xE2\x85\xAB\xC2\xBD", {"x", "\xE2\x85\xAB\xC2\xBD"}},                     /* Ⅻ½ are numbers */
        {"e\xCC\x81t", {"e", "\xCC\x81", "t"}},                                          /* e + combining acute */
        {"a\xC2\xA0\xC2\xA0" "b", {"a", "\xC2\xA0", "\xC2\xA0", "b"}},                  /* no-break spaces */
        {"hi   there  ", {"hi", "  ", " there", "  "}},
        {"it's 'll 'LL", {"it", "'s", " '", "ll", " '", "LL"}},
        {"a\xE3\x80\x80" "b\n\n c", {"a", "\xE3\x80\x80", "b", "\n\n", " c"}},       /* ideographic space */
        {"$$ (x) !?", {"$$", " (", "x", ")", " !?"}},
        {"\xF0\x9F\x98\x80\xF0\x9F\x98\x81 ok", {"\xF0\x9F\x98\x80\xF0\x9F\x98\x81", " ok"}}, /* emoji */
        {"\t\tx", {"\t", "\t", "x"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *text = cases[i].text;
        size_t len = strlen(text), p = 0;
        int w = 0, ok = 1;
        while (p < len && ok) {
            size_t end = sac_gpt2_pretokenize_next(text, len, p);
            const char *want = w < 8 ? cases[i].words[w] : NULL;
            ok = end > p && want && strlen(want) == end - p && memcmp(text + p, want, end - p) == 0;
            CHECK_MSG(ok, "case %zu: word %d is '%.*s'", i, w, (int)(end - p), text + p);
            p = end;
            w++;
        }
        CHECK_MSG(!ok || w == 8 || !cases[i].words[w], "case %zu: fewer words than expected", i);
    }
}

/* Each pre-tokenizer on strings derived from its regex: the words expected, in order. */
static void test_pretokenizers(void) {
    static const struct {
        const char *pre, *text;
        const char *words[10];
    } cases[] = {
        /* StarCoder: digits first, each alone; GPT-2's rules then see pieces that end where a
         * digit starts, so "a  1" keeps both spaces together (GPT-2: "a", " ", " 1") */
        {"starcoder", "a  1", {"a", "  ", "1"}},
        {"smollm", "x=123.45", {"x", "=", "1", "2", "3", ".", "4", "5"}},
        {"command-r", " 2nd \xD9\xA3\xD9\xA4", {" ", "2", "nd", " ", "\xD9\xA3", "\xD9\xA4"}}, /* ٣٤ */
        /* Llama 3: contractions in any case, 1-3 digits, one non-letter joins the letters after
         * it, punctuation takes the newlines after it, a white-space run up to its last newline */
        {"llama-bpe", "I'VE 12345 apples", {"I", "'VE", " ", "123", "45", " apples"}},
        {"llama-bpe", "(hello)\n\n  world", {"(hello", ")\n\n", " ", " world"}},
        {"llama-bpe", " \n\n x\t", {" \n\n", " x", "\t"}},
        {"llama-bpe", "3.14159ab'S", {"3", ".", "141", "59", "ab", "'S"}},
        {"llama-bpe", "\xC2\xA0\xC3\xA9t\xC3\xA9 \xE2\x85\xAB\xE2\x85\xAB\xE2\x85\xAB\xE2\x85\xAB",
         {"\xC2\xA0\xC3\xA9t\xC3\xA9", " ", "\xE2\x85\xAB\xE2\x85\xAB\xE2\x85\xAB", "\xE2\x85\xAB"}}, /* NBSP été ⅫⅫⅫⅫ */
        /* Qwen2: the same, one digit at a time */
        {"qwen2", "I'VE 12345", {"I", "'VE", " ", "1", "2", "3", "4", "5"}},
        {"qwen2", "..\r\nend  ", {"..\r\n", "end", "  "}},
        /* Falcon: runs of punctuation and $+<=>^~|` first, GPT-2's rules, then 3 ASCII digits */
        {"falcon", "Hi, x+y=12345!", {"Hi", ",", " x", "+", "y", "=", "123", "45", "!"}},
        {"falcon", " 1234567 a--b", {" ", "123", "456", "7", " a", "--", "b"}},
        /* DeepSeek Coder: newlines, \s?\p{L}+, \s?\p{P}+, CJK, digits, each within the last */
        {"deepseek-coder", "a\nb", {"a", "\n", "b"}},
        {"deepseek-coder", "  hello, world", {" ", " hello", ",", " world"}},
        {"deepseek-coder", "x \xE4\xB8\xAD\xE6\x96\x87 12", {"x", " ", "\xE4\xB8\xAD\xE6\x96\x87", " ", "1", "2"}},
        {"deepseek-coder", "f(x) += 1", {"f", "(", "x", ")", " += ", "1"}}, /* + and = are symbols, not \p{P} */
        /* DeepSeek LLM: newlines, \\s?[its letters]+, \\s?[ASCII punctuation and letters, ...]+,
         * trailing white space, CJK, then runs of digits */
        {"deepseek-llm", "caf\xC3\xA9 au lait", {"caf", "\xC3\xA9", " au", " lait"}},
        {"deepseek-llm", "x 42!  ", {"x", " ", "42", "!", "  "}},
        {"deepseek-llm", "\xD0\x9C\xD0\xB8\xD1\x80, \xD0\xB4\xD0\xB0\n",
         {"\xD0\x9C\xD0\xB8\xD1\x80", ",", " \xD0\xB4\xD0\xB0", "\n"}}, /* Мир, да */
        {"deepseek-llm", "\xE4\xB8\xAD\xE6\x96\x87 ok", {"\xE4\xB8\xAD\xE6\x96\x87", " ok"}},
        {"deepseek-llm", "\xE2\x84\xAA 1", {"\xE2\x84\xAA", " ", "1"}}, /* U+212A KELVIN SIGN is one of its letters */
        /* GPT-2's rules under other names */
        {"mpt", "it's 12", {"it", "'s", " 12"}},
        {"olmo", "a  1", {"a", " ", " 1"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const sac_pretokenizer *pt = sac_pretokenizer_find(cases[i].pre, strlen(cases[i].pre));
        CHECK_MSG(pt != NULL, "case %zu: '%s' not found", i, cases[i].pre);
        if (!pt) continue;
        const char *text = cases[i].text;
        sac_pretok_iter it;
        sac_pretok_begin(&it, pt, text, strlen(text));
        int w = 0, ok = 1;
        size_t covered = 0;
        for (size_t a, b; ok && sac_pretok_next(&it, &a, &b); w++) {
            const char *want = w < 10 ? cases[i].words[w] : NULL;
            ok = a == covered && b > a && want && strlen(want) == b - a && memcmp(text + a, want, b - a) == 0;
            CHECK_MSG(ok, "case %zu (%s): word %d is '%.*s'", i, cases[i].pre, w, (int)(b - a), text + a);
            covered = b;
        }
        CHECK_MSG(!ok || (covered == strlen(text) && (w == 10 || !cases[i].words[w])), "case %zu: fewer words", i);
    }
    CHECK(sac_char_is_deepseek_llm_letter('a') && sac_char_is_deepseek_llm_letter(0x212A) &&
          sac_char_is_deepseek_llm_letter(0x1E943) && !sac_char_is_deepseek_llm_letter(0x1E944) &&
          !sac_char_is_deepseek_llm_letter('@') && !sac_char_is_deepseek_llm_letter(0x4E2D));
    /* \p{P}: punctuation of every script, not symbols, to the table's last run */
    CHECK(sac_char_is_punct('!') && sac_char_is_punct('_') && sac_char_is_punct(0xAB) && sac_char_is_punct(0x3001));
    CHECK(!sac_char_is_punct('+') && !sac_char_is_punct('$') && !sac_char_is_punct(0x20AC) && !sac_char_is_punct(0));
    CHECK(sac_char_is_punct(0x1E95F) && !sac_char_is_punct(0x1E960) && !sac_char_is_punct(0x10FFFF));
    /* names sharing a pre-tokenizer find the same one; unknown names none */
    const sac_pretokenizer *gpt2 = sac_pretokenizer_find("gpt-2", 5);
    CHECK(gpt2 && sac_pretokenizer_find("jais", 4) == gpt2 && sac_pretokenizer_find("trillion", 8) == gpt2);
    CHECK(sac_pretokenizer_find("refact", 6) == sac_pretokenizer_find("starcoder", 9));
    CHECK(sac_pretokenizer_find("gpt", 3) == NULL && sac_pretokenizer_find("gpt-2 ", 6) == NULL);
    CHECK(sac_pretokenizer_find("tekken", 6) == NULL && sac_pretokenizer_find("", 0) == NULL);
    /* an empty text has no words */
    sac_pretok_iter it;
    size_t a, b;
    sac_pretok_begin(&it, sac_pretokenizer_find("deepseek-coder", 14), "", 0);
    CHECK(!sac_pretok_next(&it, &a, &b));
}

/* ------------------------------------------------------------------------------------------
 * Invalid UTF-8
 * ---------------------------------------------------------------------------------------- */

/* Random bytes: never a failure; the ids are those of the text with U+FFFD substituted, and
 * decoding gives that text back. */
static void check_invalid_utf8(vocab *v, uint64_t seed) {
    uint64_t rng = seed;
    uint8_t bytes[80];
    char clean[80 * 3 + 1];
    int failures = 0;
    for (int iter = 0; iter < 1000 && failures < 5; iter++) {
        size_t len = (size_t)(rng_next(&rng) % 80);
        for (size_t i = 0; i < len; i++) {
            uint64_t r = rng_next(&rng);
            /* a mixture of ASCII, lead bytes and continuation bytes */
            bytes[i] = (uint8_t)(r % 4 == 0 ? 0x20 + (r >> 8) % 0x60 : r % 4 == 1 ? 0x80 + (r >> 8) % 0x40 : (r >> 8));
        }
        size_t clean_len = sac_utf8_sanitized_len(bytes, len);
        sac_utf8_sanitize(bytes, len, clean);
        int32_t n1, n2;
        sac_status st1, st2;
        int32_t *a = tokenize(&v->model, (const char *)bytes, len, 0, &n1, &st1);
        int32_t *b = tokenize(&v->model, clean, clean_len, 0, &n2, &st2);
        int ok = a && b && n1 == n2 && memcmp(a, b, (size_t)n1 * sizeof *a) == 0;
        CHECK_MSG(ok, "iteration %d: %s / %s", iter, sac_status_name(st1), sac_status_name(st2));
        if (ok && !contains(clean, clean_len, "\xE2\x96\x81")) { /* (▁ reads as a space in llama) */
            size_t back_len;
            char *back = detokenize(&v->model, a, n1, &back_len);
            ok = back_len == clean_len && memcmp(back, clean, clean_len) == 0;
            CHECK_MSG(ok, "iteration %d does not decode to the replaced text", iter);
            free(back);
        }
        failures += !ok;
        free(a);
        free(b);
    }
}

static void test_invalid_utf8(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    check_invalid_utf8(&gpt2_vocab, 12345);
    check_invalid_utf8(&llama_vocab, 67890);
    /* a lone continuation byte is one U+FFFD: gpt2 spells "\xEF\xBF\xBD" with byte tokens */
    int32_t n1, n2;
    sac_status st;
    int32_t *a = tokenize(&gpt2_vocab.model, "a\x80" "b", 3, 0, &n1, &st);
    int32_t *b = tokenize(&gpt2_vocab.model, "a\xEF\xBF\xBD" "b", 5, 0, &n2, &st);
    CHECK(a && b && n1 == n2 && memcmp(a, b, (size_t)n1 * sizeof *a) == 0);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------------------------------
 * Streaming detokenizer
 * ---------------------------------------------------------------------------------------- */

static int push_text(sac_detokenizer *dt, int32_t id, const char *want) {
    const char *text;
    size_t len;
    if (sac_detokenizer_push(dt, id, &text, &len) != SAC_OK) return 0;
    return len == strlen(want) && memcmp(text, want, len) == 0;
}

static int flush_text(sac_detokenizer *dt, const char *want) {
    const char *text;
    size_t len;
    if (sac_detokenizer_flush(dt, &text, &len) != SAC_OK) return 0;
    return len == strlen(want) && memcmp(text, want, len) == 0;
}

static void test_detokenizer_holds_partial_characters(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    struct sac_model *l = &llama_vocab.model, *g = &gpt2_vocab.model;
    sac_detokenizer *dt;
    CHECK(sac_detokenizer_new(l, &dt) == SAC_OK);
    const int32_t byte0 = 3; /* <0x00> */
    /* 😀 = F0 9F 98 80 as four byte tokens: nothing until the last one */
    CHECK(push_text(dt, byte0 + 0xF0, ""));
    CHECK(push_text(dt, byte0 + 0x9F, ""));
    CHECK(push_text(dt, byte0 + 0x98, ""));
    CHECK(push_text(dt, byte0 + 0x80, "\xF0\x9F\x98\x80"));
    /* a character broken off by an ASCII token: U+FFFD, then the letter */
    CHECK(push_text(dt, byte0 + 0xE2, ""));
    CHECK(push_text(dt, byte0 + 0x82, ""));
    CHECK(push_text(dt, byte0 + 'A', "\xEF\xBF\xBD" "A"));
    /* a byte that starts nothing */
    CHECK(push_text(dt, byte0 + 0xFF, "\xEF\xBF\xBD"));
    /* the flush turns an incomplete character into one U+FFFD */
    CHECK(push_text(dt, byte0 + 0xE2, ""));
    CHECK(push_text(dt, byte0 + 0x82, ""));
    CHECK(flush_text(dt, "\xEF\xBF\xBD"));
    CHECK(flush_text(dt, ""));
    /* after a flush a new text starts: the first ▁ is the encoder's and goes away */
    CHECK(push_text(dt, 1, "")); /* <s> */
    CHECK(push_text(dt, 15043, "Hello"));
    CHECK(push_text(dt, 15043, " Hello"));
    /* errors leave a message on the detokenizer */
    const char *text;
    size_t len;
    CHECK(sac_detokenizer_push(dt, 32000, &text, &len) == SAC_ERR_ARG);
    CHECK(strstr(sac_detokenizer_errmsg(dt), "out of range") != NULL);
    CHECK(sac_detokenizer_push(dt, 5, NULL, &len) == SAC_ERR_ARG);
    sac_detokenizer_free(dt);

    /* gpt2: an emoji in byte tokens streams out only once complete */
    const char *s = "I \xF0\x9F\xA6\x99 llamas \xE2\x9C\x85 and \xE6\x97\xA5\xE6\x9C\xAC";
    int32_t n;
    sac_status st;
    int32_t *ids = tokenize(g, s, strlen(s), 0, &n, &st);
    CHECK(ids != NULL);
    CHECK(sac_detokenizer_new(g, &dt) == SAC_OK);
    text_buf all = {0};
    buf_add(&all, "", 0);
    int held = 0;
    for (int32_t i = 0; ids && i < n; i++) {
        const char *piece;
        size_t piece_len;
        CHECK(sac_token_bytes(g, ids[i], &piece, &piece_len) == SAC_OK);
        CHECK(sac_detokenizer_push(dt, ids[i], &text, &len) == SAC_OK);
        CHECK(sac_utf8_valid((const uint8_t *)text, len));
        held += piece_len > 0 && len == 0;
        buf_add(&all, text, len);
    }
    CHECK(sac_detokenizer_flush(dt, &text, &len) == SAC_OK && len == 0);
    CHECK_MSG(held > 0, "no token was held back");
    CHECK(all.len == strlen(s) && memcmp(all.data, s, all.len) == 0);
    free(all.data);
    free(ids);
    sac_detokenizer_free(dt);
}

/* Random id sequences, byte tokens included: every chunk well-formed, and all chunks equal
 * the replacement-decoded bytes of the tokens. */
static void test_detokenizer_random_ids(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    uint64_t rng = 424242;
    for (int k = 0; k < 2; k++) {
        struct sac_model *m = k ? &llama_vocab.model : &gpt2_vocab.model;
        for (int iter = 0; iter < 300; iter++) {
            int32_t ids[40];
            int32_t n = (int32_t)(rng_next(&rng) % 40);
            for (int32_t i = 0; i < n; i++) {
                uint64_t r = rng_next(&rng);
                /* mostly the byte-level tokens (gpt2: ids < 256 are single bytes; llama: 3..258) */
                ids[i] = r % 3 ? (int32_t)(r / 3 % 256) + (k ? 3 : 0) : (int32_t)(r / 3 % (uint64_t)m->tokenizer->n_vocab);
            }
            size_t got_len, ref_len;
            char *got = detokenize(m, ids, n, &got_len);
            char *ref = decode_pieces(m, ids, n, &ref_len);
            CHECK_MSG(got_len == ref_len && memcmp(got, ref, ref_len) == 0, "%s iteration %d", k ? "llama" : "gpt2",
                      iter);
            free(got);
            free(ref);
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * Special tokens, BOS/EOS, capacity, errors
 * ---------------------------------------------------------------------------------------- */

static int ids_equal(const int32_t *ids, int32_t n, const int32_t *want, int32_t n_want) {
    return ids && n == n_want && memcmp(ids, want, (size_t)n * sizeof *ids) == 0;
}

static void test_special_tokens(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    struct sac_model *g = &gpt2_vocab.model, *l = &llama_vocab.model;
    int32_t n;
    sac_status st;
    const char *eot = "Hello<|endoftext|> world";
    int32_t *ids = tokenize(g, eot, strlen(eot), SAC_TOKENIZE_SPECIAL, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){15496, 50256, 995}, 3));
    free(ids);
    ids = tokenize(g, eot, strlen(eot), 0, &n, &st); /* as plain text: no 50256 */
    int found = 0;
    for (int32_t i = 0; ids && i < n; i++) found |= ids[i] == 50256;
    CHECK(ids && n > 3 && !found);
    free(ids);

    /* llama: a space prefix at the start and after each special token, as llama.cpp */
    const char *s = "<s>Hello</s> world";
    ids = tokenize(l, s, strlen(s), SAC_TOKENIZE_SPECIAL, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){1, 15043, 2, 29871, 3186}, 5));
    free(ids);
    ids = tokenize(l, "<s>", 3, 0, &n, &st); /* plain text */
    found = 0;
    for (int32_t i = 0; ids && i < n; i++) found |= ids[i] == 1;
    CHECK(ids && !found);
    free(ids);

    /* BOS / EOS flags */
    ids = tokenize(l, "Hello", 5, SAC_TOKENIZE_BOS | SAC_TOKENIZE_EOS, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){1, 15043, 2}, 3));
    free(ids);
    ids = tokenize(l, "", 0, SAC_TOKENIZE_BOS, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){1}, 1));
    free(ids);
    ids = tokenize(g, "Hello", 5, SAC_TOKENIZE_BOS, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){50256, 15496}, 2));
    free(ids);
    /* decoding skips control tokens */
    size_t len;
    char *text = detokenize(l, (const int32_t[]){1, 15043, 2}, 3, &len);
    CHECK(strcmp(text, "Hello") == 0);
    free(text);
}

static void test_capacity_and_arguments(void) {
    if (!gpt2_vocab.loaded) SKIP("gpt-2 vocabulary not found");
    struct sac_model *g = &gpt2_vocab.model;
    int32_t out[4] = {-1, -1, -1, -1}, n = -1;
    CHECK(sac_tokenize(g, "Hello world", 11, 0, out, 1, &n) == SAC_ERR_ARG);
    CHECK(n == 2 && out[0] == 15496 && out[1] == -1); /* the first id fits and is written */
    CHECK(strstr(g->error.msg, "capacity 1 is too small") != NULL);
    CHECK(sac_tokenize(g, "Hello world", 11, 0, out, 2, &n) == SAC_OK && n == 2 && out[1] == 995);
    CHECK(sac_tokenize(g, "Hello world", 11, 0, NULL, 0, &n) == SAC_ERR_ARG && n == 2);
    CHECK(sac_tokenize(g, "", 0, 0, NULL, 0, &n) == SAC_OK && n == 0);
    CHECK(sac_tokenize(g, NULL, 0, 0, NULL, 0, &n) == SAC_OK && n == 0);
    CHECK(sac_tokenize(g, NULL, 3, 0, out, 4, &n) == SAC_ERR_ARG);
    CHECK(sac_tokenize(g, "a", 1, 0, out, -1, &n) == SAC_ERR_ARG);
    CHECK(sac_tokenize(g, "a", 1, 0, NULL, 4, &n) == SAC_ERR_ARG);
    CHECK(sac_tokenize(g, "a", 1, 0, out, 4, NULL) == SAC_ERR_ARG);
    CHECK(sac_tokenize(g, "a", 1, 0x100, out, 4, &n) == SAC_ERR_ARG && strstr(g->error.msg, "flags"));
    CHECK(sac_tokenize(NULL, "a", 1, 0, out, 4, &n) == SAC_ERR_ARG);
}

static void test_no_tokenizer(void) {
    struct sac_model m;
    memset(&m, 0, sizeof m);
    int32_t out[4], n = -1;
    CHECK(sac_tokenize(&m, "abc", 3, 0, out, 4, &n) == SAC_ERR_STATE);
    CHECK(strstr(m.error.msg, "no tokenizer") != NULL);
    CHECK(n == 0);
    const char *bytes;
    size_t len;
    CHECK(sac_token_bytes(&m, 0, &bytes, &len) == SAC_ERR_STATE);
    sac_detokenizer *dt = (sac_detokenizer *)(uintptr_t)1; /* must be reset to NULL */
    CHECK(sac_detokenizer_new(&m, &dt) == SAC_ERR_STATE && dt == NULL);
    CHECK(sac_token_bos(&m) == -1 && sac_token_eos(&m) == -1 && sac_token_add_bos(&m) == 0);
    CHECK(sac_token_bos(NULL) == -1);
}

/* ------------------------------------------------------------------------------------------
 * Char vocabularies and metadata errors (GGUF files built in memory)
 * ---------------------------------------------------------------------------------------- */

typedef struct vocab_spec {
    const char *model;
    const char *pre;
    const char *const *tokens;
    uint64_t n_tokens;
    const int32_t *types; /* NULL: no token_type key */
    uint64_t n_types;
    const float *scores;
    uint64_t n_scores;
    const char *const *merges;
    uint64_t n_merges;
    int64_t bos, eos, unk; /* < 0: key absent */
    const char *name;      /* general.name, or NULL */
} vocab_spec;

static uint8_t *build_vocab(const vocab_spec *s, size_t *size) {
    sac_error err = {0};
    gguf_writer *w = NULL;
    uint8_t *bytes = NULL;
    int ok = sac_gguf_writer_new(&w, &err) == SAC_OK;
    ok = ok && sac_gguf_writer_set_string(w, "general.architecture", "llama", &err) == SAC_OK;
    if (s->name) ok = ok && sac_gguf_writer_set_string(w, "general.name", s->name, &err) == SAC_OK;
    if (s->model) ok = ok && sac_gguf_writer_set_string(w, "tokenizer.ggml.model", s->model, &err) == SAC_OK;
    if (s->pre) ok = ok && sac_gguf_writer_set_string(w, "tokenizer.ggml.pre", s->pre, &err) == SAC_OK;
    if (s->tokens)
        ok = ok && sac_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", s->tokens, s->n_tokens, &err) == SAC_OK;
    if (s->types)
        ok = ok && sac_gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_I32, s->n_types, s->types,
                                         s->n_types * sizeof(int32_t), &err) == SAC_OK;
    if (s->scores)
        ok = ok && sac_gguf_writer_set_array(w, "tokenizer.ggml.scores", GGUF_TYPE_F32, s->n_scores, s->scores,
                                         s->n_scores * sizeof(float), &err) == SAC_OK;
    if (s->merges)
        ok = ok && sac_gguf_writer_set_string_array(w, "tokenizer.ggml.merges", s->merges, s->n_merges, &err) == SAC_OK;
    if (s->bos >= 0) ok = ok && sac_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)s->bos, &err) == SAC_OK;
    if (s->eos >= 0) ok = ok && sac_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)s->eos, &err) == SAC_OK;
    if (s->unk >= 0)
        ok = ok && sac_gguf_writer_set_u32(w, "tokenizer.ggml.unknown_token_id", (uint32_t)s->unk, &err) == SAC_OK;
    ok = ok && sac_gguf_writer_to_buffer(w, &bytes, size, &err) == SAC_OK;
    CHECK_MSG(ok, "building the GGUF: %s", err.msg);
    sac_gguf_writer_free(w);
    return ok ? bytes : NULL;
}

/* The vocabulary of `spec` loaded into *m. Returns the GGUF bytes the model reads (free them
 * after model_release), or NULL, with a failed check, when building or loading failed. */
static uint8_t *load_spec(const vocab_spec *spec, struct sac_model *m) {
    size_t size;
    uint8_t *bytes = build_vocab(spec, &size);
    memset(m, 0, sizeof *m);
    if (!bytes) return NULL;
    sac_status st = model_from_gguf(m, bytes, size);
    CHECK_MSG(st == SAC_OK && m->tokenizer, "%s", st ? m->error.msg : "no tokenizer");
    if (st == SAC_OK && m->tokenizer) return bytes;
    model_release(m);
    free(bytes);
    return NULL;
}

static const char *const char_tokens[] = {"<pad>", "<bos>", "<eos>", "<unk>", "\n", " ", "a", "b", "e",
                                          "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80", "\xCC\x81", "!"};
static const int32_t char_types[] = {3, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
#define N_CHAR_TOKENS (sizeof char_tokens / sizeof char_tokens[0])

static void test_char_vocab(void) {
    vocab_spec spec = {"char", NULL, char_tokens, N_CHAR_TOKENS, char_types, N_CHAR_TOKENS, NULL, 0, NULL, 0, 1, 2, 3, NULL};
    struct sac_model m;
    uint8_t *bytes = load_spec(&spec, &m);
    if (!bytes) return;
    sac_status st;
    CHECK(sac_tokenizer_n_vocab(m.tokenizer) == (int32_t)N_CHAR_TOKENS);
    CHECK(sac_token_bos(&m) == 1 && sac_token_eos(&m) == 2 && sac_token_add_bos(&m) == 0);

    int32_t n;
    const char *text = "ab \xF0\x9F\x98\x80\n\xE6\x97\xA5\xC3\xA9" "e\xCC\x81!";
    int32_t *ids = tokenize(&m, text, strlen(text), 0, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){6, 7, 5, 11, 4, 10, 9, 8, 12, 13}, 10));
    size_t len;
    char *back = detokenize(&m, ids, n, &len);
    CHECK(len == strlen(text) && memcmp(back, text, len) == 0);
    free(back);
    free(ids);

    /* unknown characters → <unk>; control tokens only with SAC_TOKENIZE_SPECIAL */
    ids = tokenize(&m, "az\xC3\xBF", 4, 0, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){6, 3, 3}, 3));
    free(ids);
    ids = tokenize(&m, "<bos>ab<eos>", 12, SAC_TOKENIZE_SPECIAL, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){1, 6, 7, 2}, 4));
    free(ids);
    ids = tokenize(&m, "ab", 2, SAC_TOKENIZE_BOS | SAC_TOKENIZE_EOS, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){1, 6, 7, 2}, 4));
    free(ids);
    const char *piece;
    CHECK(sac_token_bytes(&m, 1, &piece, &len) == SAC_OK && len == 0);
    CHECK(sac_token_bytes(&m, 11, &piece, &len) == SAC_OK && len == 4 && memcmp(piece, "\xF0\x9F\x98\x80", 4) == 0);
    model_release(&m);
    free(bytes);

    /* without an unknown token, an unknown character is an error naming it and its offset */
    static const int32_t types_no_unk[] = {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const char *const tokens_no_unk[] = {"<pad>", "<bos>", "<eos>", "c", "\n", " ", "a", "b", "e",
                                                "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80", "\xCC\x81", "!"};
    vocab_spec strict = {"char", NULL, tokens_no_unk, 14, types_no_unk, 14, NULL, 0, NULL, 0, 1, 2, -1, NULL};
    if (!(bytes = load_spec(&strict, &m))) return;
    int32_t out[8];
    CHECK(sac_tokenize(&m, "ab\xC3\xA9z", 5, 0, out, 8, &n) == SAC_ERR_ARG);
    CHECK_MSG(strstr(m.error.msg, "U+007A") && strstr(m.error.msg, "byte offset 4"), "%s", m.error.msg);
    CHECK(sac_tokenize(&m, "a\xFF", 2, 0, out, 8, &n) == SAC_ERR_ARG); /* U+FFFD is not in it either */
    CHECK_MSG(strstr(m.error.msg, "U+FFFD") && strstr(m.error.msg, "invalid UTF-8"), "%s", m.error.msg);
    model_release(&m);
    free(bytes);
}

static void check_load_fails(const vocab_spec *spec, sac_status want, const char *msg_part) {
    size_t size;
    uint8_t *bytes = build_vocab(spec, &size);
    if (!bytes) return;
    struct sac_model m;
    sac_status st = model_from_gguf(&m, bytes, size);
    CHECK_MSG(st == want && m.tokenizer == NULL && strstr(m.error.msg, msg_part),
              "expected %s '%s', got %s '%s'", sac_status_name(want), msg_part, sac_status_name(st), m.error.msg);
    model_release(&m);
    free(bytes);
}

static void test_bad_metadata(void) {
    static const char *const toks[] = {"a", "b", "ab"};
    static const int32_t types[] = {1, 1, 1};
    static const int32_t bad_types[] = {1, 9, 1};
    static const float scores[] = {0, 0};
    static const char *const merges[] = {"a b"};
    static const char *const bad_merges[] = {"ab"};
    static const char *const two_chars[] = {"a", "bc"};
    static const char *const twice[] = {"a", "b", "a"};
    vocab_spec s;

    s = (vocab_spec){"wordpiece", NULL, toks, 3, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_UNSUPPORTED, "tokenizer model 'wordpiece'");
    /* pre-tokenizers not implemented are refused by name (tekken: Mistral's regex; jina-v2-es:
     * GPT-2's rules, but its <mask> token strips the space before it) */
    static const char *const refused[] = {"tekken", "jina-v2-es", "gpt-2x", ""};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char want[96];
        snprintf(want, sizeof want, "pre-tokenizer '%s' is not supported", refused[i]);
        s = (vocab_spec){"gpt2", refused[i], toks, 3, NULL, 0, NULL, 0, merges, 1, -1, -1, -1, NULL};
        check_load_fails(&s, SAC_ERR_UNSUPPORTED, want);
    }
    s = (vocab_spec){"gpt2", "gpt-2", toks, 3, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "tokenizer.ggml.merges");
    s = (vocab_spec){"gpt2", "gpt-2", toks, 3, NULL, 0, NULL, 0, bad_merges, 1, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "merges[0]");
    s = (vocab_spec){"llama", NULL, NULL, 0, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "tokenizer.ggml.tokens");
    s = (vocab_spec){"llama", NULL, toks, 3, types, 3, scores, 2, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "tokenizer.ggml.scores has 2 entries");
    s = (vocab_spec){"llama", NULL, toks, 3, bad_types, 3, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "token_type[1] = 9");
    s = (vocab_spec){"llama", NULL, toks, 3, NULL, 0, NULL, 0, NULL, 0, 3, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "bos_token_id = 3");
    s = (vocab_spec){"char", NULL, two_chars, 2, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "not one UTF-8 character");
    s = (vocab_spec){"char", NULL, twice, 3, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "appears twice");

    /* tokens without tokenizer.ggml.model: which tokenizer they are for is unknown (llama.cpp refuses too) */
    s = (vocab_spec){NULL, NULL, toks, 3, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "missing metadata key 'tokenizer.ggml.model'");
    /* no tokenizer metadata at all (or llama.cpp's "none"): a model without tokenizer, not an error */
    for (int k = 0; k < 2; k++) {
        s = (vocab_spec){k ? "none" : NULL, NULL, k ? toks : NULL, k ? 3 : 0, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
        size_t size;
        uint8_t *bytes = build_vocab(&s, &size);
        if (!bytes) continue;
        struct sac_model m;
        CHECK(model_from_gguf(&m, bytes, size) == SAC_OK && m.tokenizer == NULL);
        model_release(&m);
        free(bytes);
    }
}

/* A tiny gpt2 vocabulary: merges by rank, including the ones the reference vocab has not. */
static void test_small_bpe_vocab(void) {
    /* bytes 'a' 'b' 'c' ' ' (as Ġ) and merges: rank 0 "b c", rank 1 "a b", rank 2 "a bc" */
    static const char *const toks[] = {"a", "b", "c", "\xC4\xA0", "bc", "ab", "abc", ("\xC4\xA0" "a")};
    static const char *const merges[] = {"b c", "a b", "a bc", "\xC4\xA0 a"};
    vocab_spec s = {"gpt2", NULL, toks, 8, NULL, 0, NULL, 0, merges, 4, -1, -1, -1, NULL};
    struct sac_model m;
    uint8_t *bytes = load_spec(&s, &m);
    if (!bytes) return;
    sac_status st;
    int32_t n;
    /* "abc": "b c" (rank 0) before "a b" (rank 1), then "a bc" → abc */
    int32_t *ids = tokenize(&m, "abc", 3, 0, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){6}, 1));
    free(ids);
    /* "abab c": words "abab", " c" → ab ab, Ġ c */
    ids = tokenize(&m, "abab c", 6, 0, &n, &st);
    CHECK(ids_equal(ids, n, (const int32_t[]){5, 5, 3, 2}, 4));
    free(ids);
    /* "bx": 'x' has no token and there is no unknown token */
    int32_t out[4];
    CHECK(sac_tokenize(&m, "bx", 2, 0, out, 4, &n) == SAC_ERR_ARG && strstr(m.error.msg, "0x78"));
    model_release(&m);
    free(bytes);
}

/* sac_token_lookup_many answers as sac_token_lookup does, text by text, for batches of every
 * size: each token's own text, texts one byte longer or changed (mostly no token), the empty
 * text, one longer than every token; in a vocabulary that spells a token twice, the later id. */
static void check_lookup_many(const sac_tokenizer *tok, const char *what) {
    enum { MAX_TEXT = 64 };
    const int32_t n_texts = 4 * tok->n_vocab + 2;
    char(*texts)[MAX_TEXT + 2] = calloc((size_t)n_texts, sizeof *texts);
    size_t *lens = calloc((size_t)n_texts, sizeof *lens);
    const char **ptrs = calloc((size_t)n_texts, sizeof *ptrs);
    int32_t *ids = calloc((size_t)n_texts, sizeof *ids);
    if (!texts || !lens || !ptrs || !ids) {
        CHECK(0);
        goto done;
    }
    int32_t n = 0;
    for (int32_t i = 0; i < tok->n_vocab; i++) {
        size_t len = tok->tokens[i].text_len < MAX_TEXT ? tok->tokens[i].text_len : MAX_TEXT;
        for (int k = 0; k < 4; k++) {
            memcpy(texts[n], sac_token_text(tok, i), len);
            lens[n] = len;
            if (k == 1) texts[n][lens[n]++] = 'e';                          /* one byte more */
            if (k == 2 && len) texts[n][len - 1] ^= 0x20;                   /* the last byte changed */
            if (k == 3) lens[n] = len / 2;                                    /* its first half */
            n++;
        }
    }
    lens[n++] = 0;
    lens[n] = tok->max_text_len + 1 <= MAX_TEXT ? tok->max_text_len + 1 : MAX_TEXT; /* (longer than every token when it fits) */
    memset(texts[n++], 'a', MAX_TEXT);
    for (int32_t i = 0; i < n; i++) ptrs[i] = texts[i];
    int bad = 0, found = 0;
    for (int32_t at = 0, count = 0; at < n; at += count) {
        count = 1 + (at / 7) % 150; /* 1 ... 150: within one batch of the lookup's and over several */
        if (count > n - at) count = n - at;
        sac_token_lookup_many(tok, ptrs + at, lens + at, count, ids + at);
        for (int32_t i = at; i < at + count; i++) {
            const int32_t want = sac_token_lookup(tok, ptrs[i], lens[i]);
            bad += ids[i] != want;
            found += want >= 0;
        }
    }
    ids[0] = 12345;
    sac_token_lookup_many(tok, ptrs, lens, 0, ids); /* none: nothing written */
    CHECK(ids[0] == 12345);
    CHECK_MSG(bad == 0, "%s: %d of %d texts looked up in batches differ from one by one", what, bad, n);
    CHECK_MSG(found > tok->n_vocab / 2 && found < n, "%s: %d of %d texts are tokens", what, found, n);
done:
    free(texts);
    free(lens);
    free(ptrs);
    free(ids);
}

/* Texts that collided under every seed of a hash whose rounds multiply by a constant: block b
 * of text i is 16 letters, with, when bit b of i is set, the top bit of its first word and bits
 * 63 and 34 of its second flipped (the first difference leaves a round as exactly the second). */
enum { COLLIDING_BLOCKS = 12, COLLIDING_LEN = 16 * COLLIDING_BLOCKS };

static void colliding_text(uint32_t i, char out[COLLIDING_LEN]) {
    for (int b = 0; b < COLLIDING_BLOCKS; b++) {
        unsigned char *p = (unsigned char *)out + 16 * b;
        for (int j = 0; j < 16; j++) p[j] = (unsigned char)('a' + (b * 7 + j) % 26);
        if (i >> b & 1) {
            p[7] ^= 0x80;
            p[15] ^= 0x80;
            p[12] ^= 0x04;
        }
    }
}

/* A vocabulary a file spells to collide: 4 096 texts of one slot took their count squared to
 * insert (a minute at 200 000). The table's hash is keyed, so they spread: no run of full
 * slots is longer than a table of random texts would have. */
static void test_lookup_colliding_texts(void) {
    enum { N = 1 << COLLIDING_BLOCKS };
    sac_tokenizer tok = {0};
    tok.n_vocab = N;
    tok.tokens = calloc(N, sizeof *tok.tokens);
    tok.text = malloc((size_t)N * COLLIDING_LEN);
    if (!tok.tokens || !tok.text) {
        CHECK(0);
        goto done;
    }
    for (uint32_t i = 0; i < N; i++) {
        colliding_text(i, tok.text + COLLIDING_LEN * i);
        tok.tokens[i] = (sac_token_entry){.text_off = COLLIDING_LEN * i, .text_len = COLLIDING_LEN};
    }
    tok.max_text_len = COLLIDING_LEN;
    sac_error err = {0};
    CHECK(sac_token_lookup_build(&tok, &err) == SAC_OK);
    uint32_t longest = 0, run = 0; /* the longest run of full slots: a miss probes at most that */
    for (uint32_t s = 0; s <= 2 * tok.text_map_mask + 1; s++) {
        run = tok.text_map[s & tok.text_map_mask] ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    CHECK_MSG(longest < 100, "a run of %u full slots in a table of %u for %d texts", longest, tok.text_map_mask + 1, N);
    int bad = 0;
    for (int32_t i = 0; i < N; i++) bad += sac_token_lookup(&tok, tok.text + COLLIDING_LEN * i, COLLIDING_LEN) != i;
    CHECK(bad == 0);
done:
    free(tok.text_map);
    free(tok.tokens);
    free(tok.text);
}

/* Words a text chooses to collide in the BPE word cache: with the hash unkeyed (seed 0), 1 024
 * words whose hashes share their low 11 bits share a slot in the cache's table of 2 048, so
 * each new word probed through all the others (and once the cache is full, every later word
 * would). Keyed by the tokenizer's secret, they spread like any words. */
static void test_word_cache_colliding_words(void) {
    enum { N = 1024, LEN = 12, LOW_BITS = 0x7FF };
    char *words = malloc((size_t)N * LEN);
    int32_t *ids = malloc(N * sizeof *ids);
    if (!words || !ids) {
        CHECK(0);
        goto done;
    }
    uint32_t found = 0;
    uint64_t target = 0;
    for (uint64_t k = 0; found < N; k++) { /* about 2 048 tries a word */
        char *w = words + (size_t)found * LEN, text[LEN + 1];
        snprintf(text, sizeof text, "w%011llx", (unsigned long long)k);
        memcpy(w, text, LEN);
        uint64_t low = sac_hash_bytes_seeded(0, w, LEN) & LOW_BITS;
        if (found == 0) target = low;
        if (low == target) ids[found++] = (int32_t)k;
    }
    const uint64_t seeds[] = {0, 0x9E3779B97F4A7C15ull, sac_table_seed(words)};
    for (int s = 0; s < 3; s++) {
        sac_word_cache c;
        sac_word_cache_init(&c, seeds[s]);
        for (int i = 0; i < N; i++) sac_word_cache_add(&c, words + (size_t)i * LEN, LEN, &ids[i], 1);
        CHECK(c.used == N && c.mask + 1 == 2048); /* half full: the table grows past that */
        uint32_t longest = 0, run = 0; /* the longest run of full slots: a miss probes at most that */
        for (size_t i = 0; c.slots && i <= 2 * c.mask + 1; i++) {
            run = c.slots[i & c.mask].word ? run + 1 : 0;
            if (run > longest) longest = run;
        }
        if (s == 0)
            CHECK_MSG(longest >= N, "unkeyed: the chosen words should share one run, the longest is %u", longest);
        else
            CHECK_MSG(longest < 64, "seed %d: a run of %u full slots for %d words in %zu", s, longest, N, c.mask + 1);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            const sac_cached_word *e = sac_word_cache_find(&c, words + (size_t)i * LEN, LEN);
            bad += !e || e->count != 1 || c.ids[e->first] != ids[i];
        }
        CHECK_MSG(bad == 0, "seed %d: %d words not found with their tokens", s, bad);
        CHECK(sac_word_cache_find(&c, "w-not-a-word", LEN) == NULL);
        sac_word_cache_free(&c);
    }
done:
    free(words);
    free(ids);
}

static void test_lookup_many(void) {
    /* "a" twice: the later id (2) is the one found */
    static const char *const twice[] = {"a", "b", "a", "ab", "abc", "\xE2\x96\x81x"};
    vocab_spec s = {"llama", NULL, twice, 6, NULL, 0, NULL, 0, NULL, 0, -1, -1, -1, NULL};
    struct sac_model m;
    uint8_t *bytes = load_spec(&s, &m);
    if (bytes) {
        const char *texts[] = {"a", "b", "ab", "x"};
        const size_t lens[] = {1, 1, 2, 1};
        int32_t ids[4];
        sac_token_lookup_many(m.tokenizer, texts, lens, 4, ids);
        CHECK(ids[0] == 2 && ids[1] == 1 && ids[2] == 3 && ids[3] == -1);
        check_lookup_many(m.tokenizer, "small");
        model_release(&m);
        free(bytes);
    }
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    check_lookup_many(gpt2_vocab.model.tokenizer, "gpt-2");
    check_lookup_many(llama_vocab.model.tokenizer, "llama-spm");
}

static const char *const abc_tokens[] = {"a", "b", "c", "ab", "bc"};

/* "abc" tokenized with these merges of the vocabulary abc_tokens: ids, or NULL. */
static int32_t *tokenize_abc(const char *const *merges, int n_merges, int32_t *n) {
    vocab_spec s = {"gpt2", NULL, abc_tokens, 5, NULL, 0, NULL, 0, merges, (uint64_t)n_merges, -1, -1, -1, NULL};
    struct sac_model m;
    uint8_t *bytes = load_spec(&s, &m);
    if (!bytes) return NULL;
    sac_status st;
    int32_t *ids = tokenize(&m, "abc", 3, 0, n, &st);
    model_release(&m);
    free(bytes);
    return ids;
}

/* The merges are read in batches (32 at a time): a pair repeated in the same batch or a later
 * one keeps its first rank, ranks carry over the batches' edges, and a malformed merge is named
 * by its own index. */
static void test_merges_across_batches(void) {
    enum { N = 80 };
    char filler[N][32];
    const char *merges[N];
    for (int r = 0; r < N; r++) {
        snprintf(filler[r], sizeof filler[r], "x%d y%d", r, r); /* sides that are no token: skipped */
        merges[r] = filler[r];
    }
    int32_t n;
    /* in one batch: "a b" at 5 and again at 12, "b c" at 8: "a b" first → ab, c */
    merges[5] = "a b", merges[8] = "b c", merges[12] = "a b";
    int32_t *ids = tokenize_abc(merges, N, &n);
    CHECK(ids && ids_equal(ids, n, (const int32_t[]){3, 2}, 2));
    free(ids);
    merges[5] = filler[5], merges[8] = filler[8], merges[12] = filler[12];
    /* on a batch's edge: "b c" at 31, "a b" at 32, "b c" again at 70 (a later batch): a, bc */
    merges[31] = "b c", merges[32] = "a b", merges[70] = "b c";
    ids = tokenize_abc(merges, N, &n);
    CHECK(ids && ids_equal(ids, n, (const int32_t[]){0, 4}, 2));
    free(ids);
    /* and the other way round: ab, c */
    merges[31] = "a b", merges[32] = "b c", merges[70] = "a b";
    ids = tokenize_abc(merges, N, &n);
    CHECK(ids && ids_equal(ids, n, (const int32_t[]){3, 2}, 2));
    free(ids);
    merges[77] = "abc"; /* no space, in the third batch */
    vocab_spec s = {"gpt2", NULL, abc_tokens, 5, NULL, 0, NULL, 0, merges, N, -1, -1, -1, NULL};
    check_load_fails(&s, SAC_ERR_MODEL, "tokenizer.ggml.merges[77] has no space");
}

/* Llama 3's pre-tokenizer takes a word that is a token as a whole (ignore_merges), where
 * merging alone cannot reach it, and adds BOS by default; GPT-2's merges and does not. */
static void test_bpe_ignore_merges(void) {
    static const char *const toks[] = {"a", "b", "c", "ab", "abc", "<s>"};
    static const int32_t types[] = {1, 1, 1, 1, 1, 3};
    static const char *const merges[] = {"a b"}; /* no merge makes "abc" */
    for (int k = 0; k < 3; k++) {
        const char *pre = k == 0 ? "gpt-2" : k == 1 ? "llama-bpe" : "smaug-bpe";
        vocab_spec s = {"gpt2", pre, toks, 6, types, 6, NULL, 0, merges, 1, 5, 5, -1, NULL};
        struct sac_model m;
        uint8_t *bytes = load_spec(&s, &m);
        if (!bytes) return;
        sac_status st;
        int32_t n;
        int32_t *ids = tokenize(&m, "abc", 3, 0, &n, &st);
        if (k == 1) CHECK_MSG(ids_equal(ids, n, (const int32_t[]){4}, 1), "%s", pre);
        else CHECK_MSG(ids_equal(ids, n, (const int32_t[]){3, 2}, 2), "%s", pre);
        free(ids);
        CHECK_MSG(sac_token_add_bos(&m) == (k == 1), "%s", pre);
        model_release(&m);
        free(bytes);
    }
}

/* 1 when two texts give the same ids with special tokens parsed. */
static int same_ids(struct sac_model *m, const char *a, const char *b) {
    int32_t na, nb;
    sac_status st;
    int32_t *x = tokenize(m, a, strlen(a), SAC_TOKENIZE_SPECIAL, &na, &st);
    int32_t *y = tokenize(m, b, strlen(b), SAC_TOKENIZE_SPECIAL, &nb, &st);
    int same = x && y && na == nb && memcmp(x, y, (size_t)na * sizeof *x) == 0;
    free(x);
    free(y);
    return same;
}

/* Token attributes llama.cpp sets by the model's name: in a Phi-3, special tokens swallow
 * the white space after them (not <s>, <unk>, <|endoftext|>); in a ModernBERT, [MASK] the
 * white space before it; other models keep their white space. */
static void test_strip_attributes(void) {
    static const char *const toks[] = {"<unk>", "<s>", "</s>", "<|user|>", "\xE2\x96\x81", "h", "i", "<|endoftext|>"};
    static const int32_t types[] = {2, 3, 3, 3, 1, 1, 1, 3};
    static const float scores[] = {0, 0, 0, 0, -1, -2, -2, 0};
    for (int k = 0; k < 3; k++) {
        const char *name = k == 0 ? "Phi-3-mini-4k-instruct" : k == 1 ? "phi3" : "Llama-2";
        vocab_spec spec = {"llama", NULL, toks, 8, types, 8, scores, 8, NULL, 0, 1, 2, 0, name};
        struct sac_model m;
        uint8_t *bytes = load_spec(&spec, &m);
        if (!bytes) return;
        int phi = k < 2;
        CHECK_MSG(same_ids(&m, "<|user|> \n hi", "<|user|>hi") == phi, "%s", name);
        CHECK_MSG(same_ids(&m, "</s>\thi", "</s>hi") == phi, "%s", name);
        CHECK_MSG(!same_ids(&m, "<s> hi", "<s>hi") && !same_ids(&m, "<|endoftext|> hi", "<|endoftext|>hi"), "%s", name);
        CHECK_MSG(!same_ids(&m, "hi <|user|>", "hi<|user|>"), "%s: rstrip only", name);
        model_release(&m);
        free(bytes);
    }
    static const char *const bpe_toks[] = {"a", "\xC4\xA0", "[MASK]"};
    static const int32_t bpe_types[] = {1, 1, 3};
    static const char *const merges[] = {"\xC4\xA0 a"};
    for (int k = 0; k < 2; k++) {
        const char *name = k == 0 ? "modern-bert-base" : "gpt-2";
        vocab_spec spec = {"gpt2", "gpt-2", bpe_toks, 3, bpe_types, 3, NULL, 0, merges, 1, -1, -1, -1, name};
        struct sac_model m;
        uint8_t *bytes = load_spec(&spec, &m);
        if (!bytes) return;
        CHECK_MSG(same_ids(&m, "a  [MASK] a", "a[MASK] a") == (k == 0), "%s", name);
        model_release(&m);
        free(bytes);
    }
}

/* A llama vocabulary with a token that holds ▁ after a character ("a▁") cannot be encoded
 * word by word: the whole text merges in one queue, as llama.cpp's llm_tokenizer_spm does.
 * "a b" → ▁a▁b: "a▁" (score -1) merges before "▁a" (-2), then "a▁b" (0): ▁ + a▁b, where
 * word-by-word merging would give ▁a ▁ b. */
static void test_small_spm_vocab(void) {
    static const char *const toks[] = {"<unk>", "\xE2\x96\x81", "a", "b", "a\xE2\x96\x81", "a\xE2\x96\x81" "b",
                                       "\xE2\x96\x81" "a"};
    static const int32_t types[] = {2, 1, 1, 1, 1, 1, 1};
    static const float scores[] = {0, -1, -2, -2, -1, 0, -2};
    vocab_spec spec = {"llama", NULL, toks, 7, types, 7, scores, 7, NULL, 0, -1, -1, 0, NULL};
    struct sac_model m;
    uint8_t *bytes = load_spec(&spec, &m);
    if (!bytes) return;
    CHECK(m.tokenizer->spm_split_at_space == 0);
    int32_t n;
    sac_status st;
    int32_t *ids = tokenize(&m, "a b", 3, 0, &n, &st);
    CHECK_MSG(ids_equal(ids, n, (const int32_t[]){1, 5}, 2), "%d ids, the first %d", n, ids && n ? ids[0] : -1);
    size_t len;
    char *back = detokenize(&m, ids, ids ? n : 0, &len);
    CHECK(len == 3 && memcmp(back, "a b", 3) == 0);
    free(back);
    free(ids);
    ids = tokenize(&m, "b c", 3, 0, &n, &st); /* 'c' has no token and there are no byte tokens: <unk> */
    CHECK(ids_equal(ids, n, (const int32_t[]){1, 3, 1, 0}, 4));
    free(ids);
    model_release(&m);
    free(bytes);
}

/* ------------------------------------------------------------------------------------------
 * Per-token pieces, and models whose embedding table has more rows than tokens
 * ---------------------------------------------------------------------------------------- */

/* sac_detokenize_pieces(ids) against a detokenizer pushed the same ids chunk by chunk, and
 * all pieces against the reference decode (sac_token_bytes, concatenated and replaced). */
static void check_pieces(struct sac_model *m, const int32_t *ids, int32_t n, const char *what) {
    size_t *ends = malloc(((size_t)n + 1) * sizeof *ends);
    size_t need = 99;
    sac_status st = sac_detokenize_pieces(m, ids, n, NULL, 0, ends, &need);
    CHECK_MSG(st == (need > 0 ? SAC_ERR_ARG : SAC_OK), "%s: asking the size: %s", what, m->error.msg);
    char *text = malloc(need + 1);
    size_t got = 99;
    st = sac_detokenize_pieces(m, ids, n, text, need, ends, &got);
    CHECK_MSG(st == SAC_OK && got == need, "%s: %s", what, m->error.msg);
    if (st != SAC_OK || got != need) {
        free(ends);
        free(text);
        return;
    }

    sac_detokenizer *dt = NULL;
    CHECK(sac_detokenizer_new(m, &dt) == SAC_OK);
    size_t start = 0;
    int same = 1;
    for (int32_t i = 0; i < n && dt; i++) {
        const char *chunk;
        size_t len;
        text_buf want = {0};
        buf_add(&want, "", 0);
        same &= sac_detokenizer_push(dt, ids[i], &chunk, &len) == SAC_OK;
        buf_add(&want, chunk, len);
        if (i == n - 1) {
            same &= sac_detokenizer_flush(dt, &chunk, &len) == SAC_OK;
            buf_add(&want, chunk, len);
        }
        same &= ends[i] >= start && ends[i] <= got && ends[i] - start == want.len &&
                memcmp(text + start, want.data, want.len) == 0 &&
                sac_utf8_valid((const uint8_t *)text + start, want.len);
        start = ends[i];
        free(want.data);
    }
    sac_detokenizer_free(dt);
    CHECK_MSG(same && start == got, "%s: the pieces differ from the streaming detokenizer's chunks", what);
    size_t ref_len;
    char *ref = decode_pieces(m, ids, n, &ref_len);
    CHECK_MSG(ref_len == got && memcmp(ref, text, got) == 0, "%s: the pieces do not add up to the text", what);
    free(ref);

    if (need > 0) { /* one byte short: refused, nothing written past the capacity */
        size_t again = 0;
        text[need - 1] = '\x7F';
        st = sac_detokenize_pieces(m, ids, n, text, need - 1, ends, &again);
        CHECK_MSG(st == SAC_ERR_ARG && again == need && strstr(m->error.msg, "too small") && text[need - 1] == '\x7F',
                  "%s: capacity %zu of %zu: %s", what, need - 1, need, m->error.msg);
    }
    free(ends);
    free(text);
}

/* Random id sequences, half of them byte tokens (characters split over tokens), a text's
 * own ids, and the empty sequence. */
static void check_pieces_of_model(struct sac_model *m, const char *name, uint64_t seed) {
    const sac_tokenizer *tok = m->tokenizer;
    int32_t n_ids = sac_tokenizer_n_ids(m);
    char what[128];
    for (int iter = 0; iter < 200; iter++) {
        int32_t ids[48];
        int32_t n = (int32_t)(rng_next(&seed) % 48);
        for (int32_t i = 0; i < n; i++) {
            uint64_t r = rng_next(&seed);
            int32_t byte_id = tok->byte_token[r / 2 % 256];
            ids[i] = r % 2 && byte_id >= 0 ? byte_id : (int32_t)(r / 512 % (uint64_t)n_ids);
        }
        snprintf(what, sizeof what, "%s, sequence %d", name, iter);
        check_pieces(m, ids, n, what);
    }
    const char *text = "Hello world: caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80!\n  ROMEO: what light";
    int32_t n;
    sac_status st;
    int32_t *ids = tokenize(m, text, strlen(text), 0, &n, &st);
    if (ids) { /* a char vocabulary without <unk> may refuse some of the text */
        snprintf(what, sizeof what, "%s, a text", name);
        check_pieces(m, ids, n, what);
    }
    free(ids);
    snprintf(what, sizeof what, "%s, no ids", name);
    check_pieces(m, NULL, 0, what);
}

static void test_detokenize_pieces_reference_vocabs(void) {
    if (!gpt2_vocab.loaded || !llama_vocab.loaded) SKIP("reference vocabularies not found");
    check_pieces_of_model(&gpt2_vocab.model, "gpt-2", 11);
    check_pieces_of_model(&llama_vocab.model, "llama-spm", 12);
    /* The other reference vocabularies, each with its own pre-tokenizer */
    static const char *const others[] = {"deepseek-coder", "mpt", "refact", "starcoder"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        vocab v = {0};
        vocab_open(&v, others[i]);
        CHECK_MSG(!v.buf || v.loaded, "%s: %s", others[i], v.model.error.msg);
        if (v.loaded) check_pieces_of_model(&v.model, others[i], 20 + (int)i);
        vocab_close(&v);
    }
}

static void test_detokenize_pieces_char_and_shipped(void) {
    vocab_spec spec = {"char", NULL, char_tokens, N_CHAR_TOKENS, char_types, N_CHAR_TOKENS, NULL, 0, NULL, 0, 1, 2, 3, NULL};
    struct sac_model cm;
    uint8_t *bytes = load_spec(&spec, &cm);
    if (bytes) {
        check_pieces_of_model(&cm, "char", 13);
        model_release(&cm);
        free(bytes);
    }
    size_t size;

    static const char *const shipped[] = {"shakespeare-char-q8_0", "dates-q8_0"};
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/models/%s.gguf", repo_dir, shipped[i]);
        void *buf = test_read_file(path, &size);
        CHECK_MSG(buf != NULL, "%s not found", path);
        if (!buf) continue;
        sac_model *m = NULL;
        sac_status st = sac_model_load(buf, size, 0, &m);
        CHECK_MSG(st == SAC_OK && m->tokenizer, "%s: %s", path, sac_model_errmsg(m));
        if (st == SAC_OK && m->tokenizer) check_pieces_of_model(m, shipped[i], 14 + i);
        sac_model_free(m);
        free(buf);
    }
}

static void test_detokenize_pieces_arguments(void) {
    if (!gpt2_vocab.loaded) SKIP("../shared/data/vocab/ggml-vocab-gpt-2.gguf not found");
    struct sac_model *g = &gpt2_vocab.model;
    int32_t ids[2] = {15496, 50257};
    size_t ends[2], len = 99;
    char text[16];
    CHECK(sac_detokenize_pieces(NULL, ids, 1, text, sizeof text, ends, &len) == SAC_ERR_ARG);
    CHECK(sac_detokenize_pieces(g, ids, 1, text, sizeof text, ends, NULL) == SAC_ERR_ARG);
    CHECK(sac_detokenize_pieces(g, ids, -1, text, sizeof text, ends, &len) == SAC_ERR_ARG);
    CHECK(sac_detokenize_pieces(g, ids, 1, text, sizeof text, NULL, &len) == SAC_ERR_ARG);
    CHECK(sac_detokenize_pieces(g, NULL, 1, text, sizeof text, ends, &len) == SAC_ERR_ARG);
    CHECK(sac_detokenize_pieces(g, ids, 1, NULL, 4, ends, &len) == SAC_ERR_ARG);
    len = 99;
    CHECK(sac_detokenize_pieces(g, ids, 2, text, sizeof text, ends, &len) == SAC_ERR_ARG && len == 0 &&
          strstr(g->error.msg, "token 50257 is out of range"));
    CHECK(sac_detokenize_pieces(g, ids, 1, text, sizeof text, ends, &len) == SAC_OK && len == 5 && ends[0] == 5 &&
          memcmp(text, "Hello", 5) == 0);
    struct sac_model none;
    memset(&none, 0, sizeof none);
    CHECK(sac_detokenize_pieces(&none, ids, 1, text, sizeof text, ends, &len) == SAC_ERR_STATE);
}

/* A copy of a GGUF file whose tokenizer keeps only its first n_keep tokens (the per-token
 * arrays cut to match, special ids past them dropped): then the embedding table has more
 * rows than the tokenizer has tokens, as in Qwen's files. */
static uint8_t *cut_tokenizer(const void *buf, size_t size, uint64_t n_keep, size_t *out_size) {
    gguf_file f;
    sac_error err = {0};
    gguf_writer *w = NULL;
    uint8_t *bytes = NULL;
    int ok = sac_gguf_parse(&f, buf, size, &err) == SAC_OK && sac_gguf_writer_new(&w, &err) == SAC_OK;
    for (uint64_t i = 0; ok && i < f.n_kv; i++) {
        const gguf_kv *kv = &f.kv[i];
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)kv->key.len, kv->key.data);
        int per_token = !strcmp(key, "tokenizer.ggml.tokens") || !strcmp(key, "tokenizer.ggml.token_type") ||
                        !strcmp(key, "tokenizer.ggml.scores");
        size_t key_len = strlen(key);
        int is_id = key_len > 9 && !strcmp(key + key_len - 9, "_token_id");
        switch (kv->type) {
        case GGUF_TYPE_U32:
            if (!strcmp(key, "general.alignment")) ok = sac_gguf_writer_set_alignment(w, (uint32_t)kv->i64, &err) == SAC_OK;
            else if (!is_id || (uint64_t)kv->i64 < n_keep) ok = sac_gguf_writer_set_u32(w, key, (uint32_t)kv->i64, &err) == SAC_OK;
            break;
        case GGUF_TYPE_I32: ok = sac_gguf_writer_set_i32(w, key, (int32_t)kv->i64, &err) == SAC_OK; break;
        case GGUF_TYPE_F32: ok = sac_gguf_writer_set_f32(w, key, (float)kv->f64, &err) == SAC_OK; break;
        case GGUF_TYPE_BOOL: ok = sac_gguf_writer_set_bool(w, key, (int)kv->i64, &err) == SAC_OK; break;
        case GGUF_TYPE_STRING: {
            char *v = strndup(kv->str.data, (size_t)kv->str.len);
            ok = v && sac_gguf_writer_set_string(w, key, v, &err) == SAC_OK;
            free(v);
            break;
        }
        case GGUF_TYPE_ARRAY: {
            uint64_t count = per_token && kv->arr_count > n_keep ? n_keep : kv->arr_count;
            if (kv->arr_type == GGUF_TYPE_STRING) {
                gguf_string *strs = calloc((size_t)kv->arr_count + 1, sizeof *strs);
                char **copies = calloc((size_t)count + 1, sizeof *copies);
                ok = strs && copies;
                if (ok) sac_gguf_array_strings(kv, strs);
                for (uint64_t j = 0; ok && j < count; j++) ok = (copies[j] = strndup(strs[j].data, (size_t)strs[j].len)) != NULL;
                ok = ok && sac_gguf_writer_set_string_array(w, key, (const char *const *)copies, count, &err) == SAC_OK;
                for (uint64_t j = 0; copies && j < count; j++) free(copies[j]);
                free(copies);
                free(strs);
            } else {
                unsigned elem = sac_gguf_value_size(kv->arr_type);
                ok = sac_gguf_writer_set_array(w, key, kv->arr_type, count, kv->arr_data, (size_t)(count * elem), &err) == SAC_OK;
            }
            break;
        }
        default: ok = 0; snprintf(err.msg, sizeof err.msg, "key %s: type %u not copied", key, kv->type); break;
        }
    }
    for (uint64_t i = 0; ok && i < f.n_tensors; i++) {
        const gguf_tensor *t = &f.tensors[i];
        char name[256];
        int64_t ne[GGUF_MAX_DIMS];
        snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.data);
        for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) ne[d] = (int64_t)t->ne[d];
        ok = sac_gguf_writer_add_tensor(w, name, t->type, t->n_dims, ne, t->data, (size_t)t->n_bytes, &err) == SAC_OK;
    }
    ok = ok && sac_gguf_writer_to_buffer(w, &bytes, out_size, &err) == SAC_OK;
    CHECK_MSG(ok, "cutting the tokenizer: %s", err.msg);
    sac_gguf_writer_free(w);
    sac_gguf_release(&f);
    return ok ? bytes : NULL;
}

/* Every id the model can produce is a token: the ids past the tokenizer's decode to nothing
 * in sac_token_bytes, the detokenizer and the pieces; only ids past the table are refused. */
static void test_embedding_table_larger_than_tokenizer(void) {
    char path[1200];
    size_t size, cut_size;
    snprintf(path, sizeof path, "%s/models/shakespeare-char-q8_0.gguf", repo_dir);
    void *buf = test_read_file(path, &size);
    CHECK_MSG(buf != NULL, "%s not found", path);
    if (!buf) return;
    uint8_t *cut = cut_tokenizer(buf, size, 60, &cut_size);
    free(buf);
    if (!cut) return;
    sac_model *m = NULL;
    sac_status st = sac_model_load(cut, cut_size, 0, &m);
    CHECK_MSG(st == SAC_OK, "%s", sac_model_errmsg(m));
    sac_model_info info;
    sac_model_get_info(m, &info);
    CHECK(st == SAC_OK && info.n_vocab == 66 && sac_tokenizer_n_vocab(m->tokenizer) == 60);
    if (st == SAC_OK) {
        const char *bytes;
        size_t len = 99;
        for (int32_t id = 60; id < 66; id++)
            CHECK_MSG(sac_token_bytes(m, id, &bytes, &len) == SAC_OK && len == 0, "token %d: %s", id, sac_model_errmsg(m));
        CHECK(sac_token_bytes(m, 66, &bytes, &len) == SAC_ERR_ARG &&
              strstr(sac_model_errmsg(m), "token 66 is out of range (vocabulary size 66)"));
        CHECK(sac_token_bytes(m, -1, &bytes, &len) == SAC_ERR_ARG);
        /* spelled as nothing too (labels ask for every id the model can produce) */
        for (int32_t id = 60; id < 66; id++)
            CHECK_MSG(sac_token_spelling(m, id, &bytes, &len) == SAC_OK && len == 0, "token %d: %s", id, sac_model_errmsg(m));
        CHECK(sac_token_spelling(m, 59, &bytes, &len) == SAC_OK && len > 0);
        CHECK(sac_token_spelling(m, 66, &bytes, &len) == SAC_ERR_ARG &&
              strstr(sac_model_errmsg(m), "token 66 is out of range (vocabulary size 66)"));

        int32_t n;
        int32_t *ids = tokenize(m, "ROMEO:", 6, 0, &n, &st);
        CHECK(ids && n == 6);
        if (ids && n == 6) {
            int32_t with_padding[8] = {ids[0], ids[1], ids[2], 63, ids[3], ids[4], ids[5], 65};
            size_t text_len;
            char *text = detokenize(m, with_padding, 8, &text_len);
            CHECK_MSG(text_len == 6 && memcmp(text, "ROMEO:", 6) == 0, "'%s'", text);
            free(text);
            check_pieces(m, with_padding, 8, "padded ids");
            sac_detokenizer *dt = NULL;
            const char *chunk;
            CHECK(sac_detokenizer_new(m, &dt) == SAC_OK);
            CHECK(sac_detokenizer_push(dt, 66, &chunk, &len) == SAC_ERR_ARG &&
                  strstr(sac_detokenizer_errmsg(dt), "out of range"));
            sac_detokenizer_free(dt);
        }
        free(ids);
    }
    sac_model_free(m);
    free(cut);
}

int main(void) {
    find_dirs();
    vocab_open(&gpt2_vocab, "gpt-2");
    vocab_open(&llama_vocab, "llama-spm");

    RUN(test_utf8_replacement);
    RUN(test_char_classes);
    RUN(test_gpt2_byte_map);
    RUN(test_gpt2_reference_cases);
    RUN(test_llama_reference_cases);
    RUN(test_mpt_reference_cases);
    RUN(test_starcoder_reference_cases);
    RUN(test_refact_reference_cases);
    RUN(test_deepseek_coder_reference_cases);
    RUN(test_vocab_metadata);
    RUN(test_token_bytes);
    RUN(test_gpt2_random_round_trip);
    RUN(test_llama_random_round_trip);
    RUN(test_gpt2_pretokenizer);
    RUN(test_pretokenizers);
    RUN(test_invalid_utf8);
    RUN(test_detokenizer_holds_partial_characters);
    RUN(test_detokenizer_random_ids);
    RUN(test_special_tokens);
    RUN(test_capacity_and_arguments);
    RUN(test_no_tokenizer);
    RUN(test_char_vocab);
    RUN(test_bad_metadata);
    RUN(test_small_bpe_vocab);
    RUN(test_lookup_many);
    RUN(test_merges_across_batches);
    RUN(test_bpe_ignore_merges);
    RUN(test_strip_attributes);
    RUN(test_small_spm_vocab);
    RUN(test_lookup_colliding_texts);
    RUN(test_word_cache_colliding_words);
    RUN(test_detokenize_pieces_reference_vocabs);
    RUN(test_detokenize_pieces_char_and_shipped);
    RUN(test_detokenize_pieces_arguments);
    RUN(test_embedding_table_larger_than_tokenizer);

    vocab_close(&gpt2_vocab);
    vocab_close(&llama_vocab);
    return check_summary("test_tokenizer");
}
