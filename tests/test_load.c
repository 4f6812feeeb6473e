/* test_load.c — what the loader refuses and how it shows a file's text: every hyperparameter
 * range-checked for every architecture, tensors and <arch>.* keys it would ignore refused by
 * name, non-finite weights refused, metadata rendered as well-formed UTF-8, and the real files
 * (shipped models, stories260K, llama.cpp's vocab files) still loading.
 *
 * Variants of the small random test models are made by rewriting them: every entry and tensor
 * copied through the GGUF writer, with keys replaced or added and tensors added or altered. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files.h"
#include "error.h"
#include "gguf.h"
#include "gguf_copy.h"
#include "gguf_writer.h"
#include "saccade.h"
#include "test_models.h"
#include "types.h"

/* ------------------------------------------------------------------------------------------
 * Rewriting a model file
 * ---------------------------------------------------------------------------------------- */

typedef struct rewrite {
    const char *key;           /* replaced (or added) with one of the values below */
    uint32_t type;             /* GGUF_TYPE_F32, _U32 or _STRING */
    float f;
    uint32_t u;
    const char *s;
    const char *tensor;        /* added as F32 of n values, all 1 (but `bad` at 3 when it is `poison`) */
    int64_t n;
    const char *poison;        /* this tensor's element 3 (its first block for Q8_0) becomes `bad` */
    float bad;
    const char *drop;          /* this tensor is left out */
} rewrite;


/* The test model `arch` (F32 weights unless `type`), rewritten as `r` says. */
static test_model rewritten(const char *arch, uint32_t type, const rewrite *r) {
    test_model tm;
    test_model_spec spec = test_spec(arch, type);
    CHECK(test_model_make(&spec, &tm) == 0);
    gguf_file f;
    sac_error err = {0};
    CHECK(sac_gguf_parse(&f, tm.bytes, tm.size, &err) == SAC_OK);
    gguf_writer *w;
    CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
    for (uint64_t i = 0; i < f.n_kv; i++)
        if (!r->key || !sac_gguf_string_eq(f.kv[i].key, r->key)) CHECK(test_copy_kv(w, &f.kv[i]) == 0);
    if (r->key) {
        if (r->type == GGUF_TYPE_F32) sac_gguf_writer_set_f32(w, r->key, r->f, &err);
        if (r->type == GGUF_TYPE_U32) sac_gguf_writer_set_u32(w, r->key, r->u, &err);
        if (r->type == GGUF_TYPE_STRING) sac_gguf_writer_set_string(w, r->key, r->s, &err);
    }
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const gguf_tensor *t = &f.tensors[i];
        char *name = test_cstr(t->name);
        if (r->drop && !strcmp(name, r->drop)) {
            free(name);
            continue;
        }
        int64_t ne[4];
        for (int d = 0; d < 4; d++) ne[d] = (int64_t)t->ne[d];
        uint8_t *data = malloc(t->n_bytes);
        memcpy(data, t->data, t->n_bytes);
        if (r->poison && !strcmp(name, r->poison)) {
            if (t->type == SAC_TYPE_F32) memcpy(data + 3 * sizeof(float), &r->bad, sizeof(float));
            if (t->type == SAC_TYPE_F16 || t->type == SAC_TYPE_Q8_0) { /* an f16 value, or a block's scale */
                sac_f16 h = sac_f32_to_f16(r->bad);
                memcpy(data + (t->type == SAC_TYPE_F16 ? 3 * sizeof h : 0), &h, sizeof h);
            }
        }
        CHECK(sac_gguf_writer_add_tensor(w, name, t->type, t->n_dims, ne, data, (size_t)t->n_bytes, &err) == SAC_OK);
        free(data);
        free(name);
    }
    if (r->tensor) {
        float *ones = malloc((size_t)r->n * sizeof *ones);
        for (int64_t i = 0; i < r->n; i++) ones[i] = 1.0f;
        if (r->poison && !strcmp(r->tensor, r->poison) && r->n > 3) ones[3] = r->bad;
        CHECK(sac_gguf_writer_add_tensor(w, r->tensor, SAC_TYPE_F32, 1, &r->n, ones, (size_t)r->n * sizeof *ones,
                                         &err) == SAC_OK);
        free(ones);
    }
    sac_gguf_release(&f);
    free(tm.bytes);
    CHECK_MSG(sac_gguf_writer_to_buffer(w, &tm.bytes, &tm.size, &err) == SAC_OK, "%s", err.msg);
    sac_gguf_writer_free(w);
    return tm;
}

/* Loads `tm`: SAC_OK, or `want` with every one of `words` in the message. */
static void expect_load(test_model *tm, sac_status want, const char *words1, const char *words2, const char *label) {
    sac_model *m = NULL;
    sac_status st = sac_model_load(tm->bytes, tm->size, 0, &m);
    CHECK_MSG(st == want, "%s: status %s, want %s (%s)", label, sac_status_name(st), sac_status_name(want),
              sac_model_errmsg(m));
    if (want != SAC_OK) {
        CHECK_MSG(strstr(sac_model_errmsg(m), words1), "%s: '%s' lacks '%s'", label, sac_model_errmsg(m), words1);
        if (words2) CHECK_MSG(strstr(sac_model_errmsg(m), words2), "%s: '%s' lacks '%s'", label, sac_model_errmsg(m), words2);
    }
    sac_model_free(m);
    test_model_free(tm);
}

/* ------------------------------------------------------------------------------------------
 * Hyperparameters
 * ---------------------------------------------------------------------------------------- */

static void test_epsilon_checked_for_every_architecture(void) {
    const char *archs[] = {"gpt2", "llama", "encdec"};
    const float bad[] = {NAN, -1.0f, INFINITY, 2.0f};
    for (int a = 0; a < 3; a++) {
        char key[96];
        snprintf(key, sizeof key, "%s.attention.%s", archs[a], strcmp(archs[a], "llama") ? "layer_norm_epsilon"
                                                                                         : "layer_norm_rms_epsilon");
        for (int i = 0; i < 4; i++) {
            test_model tm = rewritten(archs[a], SAC_TYPE_F32, &(rewrite){.key = key, .type = GGUF_TYPE_F32, .f = bad[i]});
            expect_load(&tm, SAC_ERR_MODEL, key, "normalisation epsilon", key);
        }
        test_model tm = rewritten(archs[a], SAC_TYPE_F32, &(rewrite){.key = key, .type = GGUF_TYPE_F32, .f = 0.0f});
        expect_load(&tm, SAC_OK, NULL, NULL, "epsilon 0");
    }
}

static void test_rope_checked(void) {
    const float bad[] = {NAN, INFINITY, 0.0f, -5.0f, 1e-30f, 0.5f};
    for (int i = 0; i < 6; i++) {
        test_model tm = rewritten("llama", SAC_TYPE_F32,
                                  &(rewrite){.key = "llama.rope.freq_base", .type = GGUF_TYPE_F32, .f = bad[i]});
        expect_load(&tm, SAC_ERR_MODEL, "llama.rope.freq_base", "RoPE base", "rope base");
    }
    test_model tm = rewritten("llama", SAC_TYPE_F32,
                              &(rewrite){.key = "llama.rope.dimension_count", .type = GGUF_TYPE_U32, .u = 15});
    expect_load(&tm, SAC_ERR_MODEL, "rotary dimension count 15 must be even", NULL, "odd rope dims");
    /* without the key, the rotary dims default to the head size, which must then be even */
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    s.n_embd = 60; /* 4 heads of 15 */
    s.rope_dim = 14;
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK); /* 14 rotary dims of 15: fine */
    sac_model_free(m);
    test_model_free(&tm);
    tm = rewritten("llama", SAC_TYPE_F32, &(rewrite){.key = "llama.embedding_length", .type = GGUF_TYPE_U32, .u = 64});
    expect_load(&tm, SAC_OK, NULL, NULL, "control");
}

/* ------------------------------------------------------------------------------------------
 * Tensors and keys the loader would ignore
 * ---------------------------------------------------------------------------------------- */

static void test_unbound_tensors_refused(void) {
    struct { const char *arch, *name; int64_t n; } cases[] = {
        {"llama", "blk.0.attn_norm.bias", 64},    /* RMSNorm has no bias */
        {"llama", "blk.0.ffn_up.bias", 96},       /* a bias llama does not bind */
        {"llama", "blk.2.attn_norm.weight", 64},  /* a block beyond block_count */
        {"qwen2", "rope_freqs.weight", 8},        /* llama.cpp binds these for llama only */
        {"qwen2", "blk.0.attn_output.bias", 64},  /* qwen2 has Q/K/V biases, not this one */
        {"gemma", "blk.0.attn_q.bias", 64},       /* gemma has no biases */
        {"gemma", "rope_freqs.weight", 8},
        {"phi3", "rope_factors_long.weight", 8},  /* LongRoPE (Phi-3 128k) is not implemented */
        {"phi3", "blk.0.attn_q.weight", 4096},    /* beside the fused attn_qkv */
        {"gpt2", "output_norm.scale", 64},
        {"encdec", "enc.blk.0.cross_attn_norm.weight", 64}, /* cross-attention is decoder-only */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        test_model tm = rewritten(cases[i].arch, SAC_TYPE_F32, &(rewrite){.tensor = cases[i].name, .n = cases[i].n});
        char words[128];
        snprintf(words, sizeof words, "tensor '%s' is not used by architecture %s", cases[i].name, cases[i].arch);
        expect_load(&tm, SAC_ERR_UNSUPPORTED, words, NULL, cases[i].name);
    }
}

/* Tensors llama.cpp binds when present: the loader binds them too (test_model.c checks what
 * they compute), with their shapes and values checked. */
static void test_optional_tensors_checked(void) {
    struct { const char *arch; rewrite r; sac_status want; const char *words; } cases[] = {
        {"llama", {.tensor = "rope_freqs.weight", .n = 8}, SAC_OK, NULL},
        {"llama", {.tensor = "blk.1.attn_q.bias", .n = 64}, SAC_OK, NULL},
        {"llama", {.tensor = "blk.0.attn_output.bias", .n = 64}, SAC_OK, NULL},
        {"llama", {.tensor = "rope_freqs.weight", .n = 7}, SAC_ERR_MODEL,
         "tensor 'rope_freqs.weight' has 7 values in 1 dims, expected 8"},
        {"llama", {.tensor = "blk.0.attn_k.bias", .n = 64}, SAC_ERR_MODEL,
         "'blk.0.attn_k.bias' has 64 values in 1 dims, expected 32"},
        {"llama", {.tensor = "rope_freqs.weight", .n = 8, .poison = "rope_freqs.weight", .bad = 0.0f}, SAC_ERR_MODEL,
         "tensor 'rope_freqs.weight' holds 0 at element 3; RoPE frequency factors must be positive"},
        {"llama", {.tensor = "rope_freqs.weight", .n = 8, .poison = "rope_freqs.weight", .bad = -2.0f}, SAC_ERR_MODEL,
         "holds -2 at element 3"},
        {"llama", {.tensor = "rope_freqs.weight", .n = 8, .poison = "rope_freqs.weight", .bad = NAN}, SAC_ERR_MODEL,
         "'rope_freqs.weight' holds a non-finite value (NaN) at element 3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        test_model tm = rewritten(cases[i].arch, SAC_TYPE_F32, &cases[i].r);
        expect_load(&tm, cases[i].want, cases[i].words, NULL, cases[i].r.tensor);
    }
    /* qwen2 requires its Q/K/V biases; llama's are optional */
    const char *biases[] = {"blk.0.attn_q.bias", "blk.1.attn_k.bias", "blk.1.attn_v.bias"};
    for (int i = 0; i < 3; i++) {
        char words[96];
        snprintf(words, sizeof words, "missing tensor '%s' (required by architecture qwen2)", biases[i]);
        test_model tm = rewritten("qwen2", SAC_TYPE_F32, &(rewrite){.drop = biases[i]});
        expect_load(&tm, SAC_ERR_MODEL, words, NULL, biases[i]);
    }
    test_model tm = rewritten("qwen2", SAC_TYPE_F32, &(rewrite){.drop = "output.weight"});
    expect_load(&tm, SAC_OK, NULL, NULL, "qwen2 with tied output");
    /* phi3: fused QKV [E, E + 2·KV] and gate|up [E, 2F] checked; output.weight optional */
    tm = rewritten("phi3", SAC_TYPE_F32, &(rewrite){.drop = "blk.1.attn_qkv.weight"});
    expect_load(&tm, SAC_ERR_MODEL, "missing tensor 'blk.1.attn_q.weight' (required by architecture phi3)", NULL,
                "phi3 without attn_qkv");
    tm = rewritten("phi3", SAC_TYPE_F32, &(rewrite){.drop = "output.weight"});
    expect_load(&tm, SAC_OK, NULL, NULL, "phi3 with tied output");
    /* gemma's output is token_embd: llama.cpp reads no output.weight, so one is refused */
    tm = rewritten("gemma", SAC_TYPE_F32, &(rewrite){.tensor = "output.weight", .n = 64});
    expect_load(&tm, SAC_ERR_UNSUPPORTED, "tensor 'output.weight' is not used by architecture gemma", NULL, "gemma");
}

static void test_arch_keys_refused_unless_implemented(void) {
    struct { const char *arch; rewrite r; sac_status want; const char *words; } cases[] = {
        /* RoPE scaling: "none" and "linear" (the default type) as llama.cpp reads them */
        {"llama", {.key = "llama.rope.scaling.type", .type = GGUF_TYPE_STRING, .s = "linear"}, SAC_OK, NULL},
        {"llama", {.key = "llama.rope.scaling.type", .type = GGUF_TYPE_STRING, .s = "none"}, SAC_OK, NULL},
        {"llama", {.key = "llama.rope.scaling.type", .type = GGUF_TYPE_STRING, .s = "yarn"}, SAC_ERR_UNSUPPORTED,
         "'llama.rope.scaling.type' asks for 'yarn' RoPE scaling, which saccade does not implement"},
        {"qwen2", {.key = "qwen2.rope.scaling.type", .type = GGUF_TYPE_STRING, .s = "longrope"}, SAC_ERR_UNSUPPORTED,
         "asks for 'longrope' RoPE scaling"},
        {"llama", {.key = "llama.rope.scaling.type", .type = GGUF_TYPE_U32, .u = 1}, SAC_ERR_MODEL,
         "llama.rope.scaling.type"},
        {"llama", {.key = "llama.rope.scaling.factor", .type = GGUF_TYPE_F32, .f = 8.0f}, SAC_OK, NULL},
        {"llama", {.key = "llama.rope.scaling.factor", .type = GGUF_TYPE_F32, .f = 1.0f}, SAC_OK, NULL},
        {"llama", {.key = "llama.rope.scaling.factor", .type = GGUF_TYPE_F32, .f = 0.0f}, SAC_OK, NULL},
        {"llama", {.key = "llama.rope.scale_linear", .type = GGUF_TYPE_F32, .f = 2.0f}, SAC_OK, NULL},
        {"llama", {.key = "llama.rope.scaling.factor", .type = GGUF_TYPE_F32, .f = -4.0f}, SAC_ERR_MODEL,
         "'llama.rope.scaling.factor' is -4, expected 0 (unset) or 0.001..1e+06"},
        {"llama", {.key = "llama.rope.scaling.factor", .type = GGUF_TYPE_F32, .f = NAN}, SAC_ERR_MODEL,
         "a RoPE scaling factor"},
        {"qwen2", {.key = "qwen2.rope.scaling.factor", .type = GGUF_TYPE_F32, .f = 1e30f}, SAC_ERR_MODEL,
         "a RoPE scaling factor"},
        {"gemma", {.key = "gemma.attention.key_length", .type = GGUF_TYPE_U32, .u = 32}, SAC_ERR_UNSUPPORTED,
         "'gemma.attention.key_length' is 32, but the head size (embedding_length / head_count) is 16"},
        /* llama.cpp disables phi3's sliding window; saccade reads it as llama.cpp does */
        {"phi3", {.key = "phi3.attention.sliding_window", .type = GGUF_TYPE_U32, .u = 2047}, SAC_OK, NULL},
        {"llama", {.key = "llama.attention.sliding_window", .type = GGUF_TYPE_U32, .u = 2047}, SAC_ERR_UNSUPPORTED,
         "'llama.attention.sliding_window' is not implemented"},
        {"llama", {.key = "llama.rope.scaling.attn_factor", .type = GGUF_TYPE_F32, .f = 1.0f}, SAC_ERR_UNSUPPORTED,
         "'llama.rope.scaling.attn_factor' is not implemented for architecture llama"},
        {"llama", {.key = "llama.rope.scaling.original_context_length", .type = GGUF_TYPE_U32, .u = 8192}, SAC_OK, NULL},
        {"llama", {.key = "llama.vocab_size", .type = GGUF_TYPE_U32, .u = 97}, SAC_OK, NULL},
        {"llama", {.key = "llama.vocab_size", .type = GGUF_TYPE_U32, .u = 98}, SAC_ERR_UNSUPPORTED,
         "'llama.vocab_size' is 98, but the number of rows of token_embd.weight is 97"},
        {"llama", {.key = "llama.expert_count", .type = GGUF_TYPE_U32, .u = 8}, SAC_ERR_UNSUPPORTED, "'llama.expert_count' is 8"},
        {"llama", {.key = "llama.attention.key_length", .type = GGUF_TYPE_U32, .u = 16}, SAC_OK, NULL},
        {"llama", {.key = "llama.attention.key_length", .type = GGUF_TYPE_U32, .u = 32}, SAC_ERR_UNSUPPORTED,
         "'llama.attention.key_length' is 32"},
        {"llama", {.key = "llama.attention.layer_norm_epsilon", .type = GGUF_TYPE_F32, .f = 1e-5f}, SAC_ERR_UNSUPPORTED,
         "'llama.attention.layer_norm_epsilon' is not implemented for architecture llama"},
        {"gpt2", {.key = "gpt2.attention.head_count_kv", .type = GGUF_TYPE_U32, .u = 4}, SAC_OK, NULL},
        {"gpt2", {.key = "gpt2.attention.head_count_kv", .type = GGUF_TYPE_U32, .u = 2}, SAC_ERR_UNSUPPORTED,
         "'gpt2.attention.head_count_kv' is 2"},
        {"gpt2", {.key = "gpt2.rope.freq_base", .type = GGUF_TYPE_F32, .f = 10000.0f}, SAC_ERR_UNSUPPORTED,
         "'gpt2.rope.freq_base' is not implemented for architecture gpt2"},
        {"encdec", {.key = "encdec.attention.clamp_kqv", .type = GGUF_TYPE_F32, .f = 8.0f}, SAC_ERR_UNSUPPORTED,
         "'encdec.attention.clamp_kqv' is not implemented"},
        /* keys outside the architecture's namespace describe, they do not compute */
        {"gpt2", {.key = "llama.rope.scaling.type", .type = GGUF_TYPE_STRING, .s = "yarn"}, SAC_OK, NULL},
        {"gpt2", {.key = "general.license", .type = GGUF_TYPE_STRING, .s = "mit"}, SAC_OK, NULL},
        {"gpt2", {.key = "quantize.imatrix.file", .type = GGUF_TYPE_STRING, .s = "x.dat"}, SAC_OK, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        test_model tm = rewritten(cases[i].arch, SAC_TYPE_F32, &cases[i].r);
        expect_load(&tm, cases[i].want, cases[i].words, NULL, cases[i].r.key);
    }
}

/* ------------------------------------------------------------------------------------------
 * Non-finite weights
 * ---------------------------------------------------------------------------------------- */

static void test_nonfinite_weights_refused(void) {
    struct { const char *arch; uint32_t type; const char *tensor; float bad; const char *words; } cases[] = {
        {"gpt2", SAC_TYPE_F32, "blk.1.attn_qkv.weight", NAN, "tensor 'blk.1.attn_qkv.weight' holds a non-finite value (NaN) at element 3"},
        {"gpt2", SAC_TYPE_F32, "blk.0.ffn_norm.bias", INFINITY, "'blk.0.ffn_norm.bias' holds a non-finite value (infinity) at element 3"},
        {"llama", SAC_TYPE_F32, "token_embd.weight", -INFINITY, "'token_embd.weight' holds a non-finite value (infinity)"},
        {"llama", SAC_TYPE_F16, "blk.0.ffn_down.weight", NAN, "'blk.0.ffn_down.weight' holds a non-finite value (NaN) at element 3"},
        {"llama", SAC_TYPE_Q8_0, "blk.0.attn_v.weight", INFINITY, "'blk.0.attn_v.weight' holds a non-finite value"},
        {"encdec", SAC_TYPE_Q8_0, "dec.blk.1.cross_attn_kv.weight", NAN, "'dec.blk.1.cross_attn_kv.weight' holds a non-finite value (NaN) at element 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        test_model tm = rewritten(cases[i].arch, cases[i].type, &(rewrite){.poison = cases[i].tensor, .bad = cases[i].bad});
        expect_load(&tm, SAC_ERR_MODEL, cases[i].words, NULL, cases[i].tensor);
    }
    /* the largest finite values load (what they compute is the forward pass's concern) */
    test_model tm = rewritten("gpt2", SAC_TYPE_F32, &(rewrite){.poison = "blk.0.attn_qkv.weight", .bad = 3.4e38f});
    expect_load(&tm, SAC_OK, NULL, NULL, "FLT_MAX-ish weight");
}

/* ------------------------------------------------------------------------------------------
 * Text from the file
 * ---------------------------------------------------------------------------------------- */

static const char *metadata_value(sac_model *m, const char *key) {
    for (int32_t i = 0; i < sac_model_n_metadata(m); i++) {
        const char *k, *v;
        if (sac_model_metadata(m, i, &k, &v) == SAC_OK && !strcmp(k, key)) return v;
    }
    return NULL;
}

/* Ill-formed UTF-8 reads as TextDecoder reads it (one U+FFFD per maximal subpart); NUL, which
 * a C string cannot carry, as U+FFFD too; nothing is cut. */
static void test_metadata_text_is_well_formed(void) {
    struct { const char *in, *out; } cases[] = {
        {"plain é 😀", "plain é 😀"},
        {"a\xff" "b", "a\xEF\xBF\xBD" "b"},
        {"\xc0\xaf", "\xEF\xBF\xBD\xEF\xBF\xBD"},                          /* overlong: two subparts */
        {"\xed\xa0\x80!", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD!"},         /* surrogate: three */
        {"\xf4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* > U+10FFFF */
        {"x\xe2\x82", "x\xEF\xBF\xBD"},                                     /* truncated at the end: one */
        {"\xe2\x82" "a", "\xEF\xBF\xBD" "a"},
        {"\xef\xbb\xbf" "bom", "\xef\xbb\xbf" "bom"},                       /* a BOM is kept */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        test_model tm = rewritten("gpt2", SAC_TYPE_F32,
                                  &(rewrite){.key = "general.name", .type = GGUF_TYPE_STRING, .s = cases[i].in});
        sac_model *m = NULL;
        CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
        const char *v = metadata_value(m, "general.name");
        CHECK_MSG(v && !strcmp(v, cases[i].out), "case %zu: got '%s'", i, v ? v : "(none)");
        sac_model_info in;
        sac_model_get_info(m, &in);
        CHECK_MSG(!strcmp(in.name, cases[i].out), "case %zu: info.name '%s'", i, in.name);
        sac_model_free(m);
        test_model_free(&tm);
    }
    /* NUL inside a value: patch a placeholder byte of the file */
    test_model tm = rewritten("gpt2", SAC_TYPE_F32,
                              &(rewrite){.key = "general.name", .type = GGUF_TYPE_STRING, .s = "before#after"});
    uint8_t *hash = memchr(tm.bytes, '#', tm.size);
    CHECK(hash != NULL);
    *hash = 0;
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    const char *v = metadata_value(m, "general.name");
    CHECK_MSG(v && !strcmp(v, "before\xEF\xBF\xBD" "after"), "got '%s'", v ? v : "(none)");
    sac_model_free(m);
    test_model_free(&tm);
    /* a long value is returned whole (it was cut at 255 bytes, possibly inside a character) */
    char long_value[701];
    memset(long_value, 'x', 301);
    for (int i = 301; i < 700; i += 2) memcpy(long_value + i, "\xc3\xa9", 2);
    long_value[700] = '\0';
    long_value[699] = 'z';
    tm = rewritten("gpt2", SAC_TYPE_F32, &(rewrite){.key = "general.description", .type = GGUF_TYPE_STRING, .s = long_value});
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    v = metadata_value(m, "general.description");
    CHECK_MSG(v && !strcmp(v, long_value), "length %zu", v ? strlen(v) : 0);
    sac_model_free(m);
    test_model_free(&tm);
}

/* "gpt2\0evil" is not gpt2, and the message does not pretend it is. */
static void test_nul_in_architecture_refused(void) {
    test_model tm = rewritten("gpt2", SAC_TYPE_F32,
                              &(rewrite){.key = "general.architecture", .type = GGUF_TYPE_STRING, .s = "gpt2#evil"});
    uint8_t *hash = memchr(tm.bytes, '#', tm.size);
    CHECK(hash != NULL);
    *hash = 0;
    expect_load(&tm, SAC_ERR_MODEL, "metadata key 'general.architecture' contains a NUL byte",
                "gpt2\xEF\xBF\xBD" "evil", "NUL");
    tm = rewritten("gpt2", SAC_TYPE_F32,
                   &(rewrite){.key = "general.architecture", .type = GGUF_TYPE_STRING, .s = "gpt2\xff"});
    expect_load(&tm, SAC_ERR_UNSUPPORTED, "unknown architecture 'gpt2\xEF\xBF\xBD'", NULL, "ill-formed");
}

/* An empty file gets the message the JS library gives before it calls C. */
static void test_empty_file(void) {
    for (uint32_t flags = 0; flags <= SAC_LOAD_VOCAB_ONLY; flags += SAC_LOAD_VOCAB_ONLY) {
        sac_model *m = NULL;
        uint8_t byte = 0;
        CHECK(sac_model_load(&byte, 0, flags, &m) == SAC_ERR_FORMAT);
        CHECK_MSG(!strcmp(sac_model_errmsg(m), "the model is empty (0 bytes)"), "%s", sac_model_errmsg(m));
        sac_model_free(m);
    }
}

/* ------------------------------------------------------------------------------------------
 * Real files
 * ---------------------------------------------------------------------------------------- */

static void test_real_files_still_load(void) {
    const char *models[] = {"models/shakespeare-char-q8_0.gguf", "models/dates-q8_0.gguf",
                            "../shared/data/models/stories260K.gguf"};
    for (int i = 0; i < 3; i++) {
        size_t size;
        void *buf = test_read_file(models[i], &size);
        if (!buf) SKIP("a real model file is missing (run from the repository root)");
        sac_model *m = NULL;
        if (i == 0) { /* loaded vocab-only, it keeps its name (it was "") */
            sac_model_info info;
            CHECK(sac_model_load(buf, size, SAC_LOAD_VOCAB_ONLY, &m) == SAC_OK);
            sac_model_get_info(m, &info);
            CHECK_MSG(!strcmp(info.name, "saccade shakespeare-char"), "%s", info.name);
            sac_model_free(m);
        }
        CHECK_MSG(sac_model_load(buf, size, SAC_LOAD_TAKE_OWNERSHIP, &m) == SAC_OK, "%s: %s", models[i],
                  sac_model_errmsg(m));
        sac_model_free(m);
    }
    /* llama.cpp's vocab files: every key and name they carry parses; the two whose
     * tokenizers saccade implements load vocab-only; as models they lack tensors */
    const char *vocabs[] = {"gpt-2", "llama-spm", "deepseek-coder", "mpt", "refact", "starcoder"};
    for (int i = 0; i < 6; i++) {
        char path[128];
        snprintf(path, sizeof path, "../shared/data/vocab/ggml-vocab-%s.gguf", vocabs[i]);
        size_t size;
        void *buf = test_read_file(path, &size);
        if (!buf) SKIP("../shared/data/vocab is missing");
        gguf_file f;
        sac_error err = {0};
        CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s: %s", path, err.msg);
        sac_gguf_release(&f);
        sac_model *m = NULL;
        if (i < 2) {
            CHECK_MSG(sac_model_load(buf, size, SAC_LOAD_VOCAB_ONLY, &m) == SAC_OK, "%s: %s", path, sac_model_errmsg(m));
            for (int32_t k = 0; k < sac_model_n_metadata(m); k++) CHECK(sac_model_metadata(m, k, NULL, NULL) == SAC_OK);
            sac_model_free(m);
        }
        CHECK(sac_model_load(buf, size, SAC_LOAD_TAKE_OWNERSHIP, &m) != SAC_OK);
        sac_model_free(m);
    }
}

/* A message quoting ill-formed text (a file's bytes, or a quote cut mid-character) carries
 * U+FFFD where a browser's or Node's decoder would put it: every surface prints the same bytes.
 * What does not fit is cut at a character. */
static void test_messages_are_well_formed_utf8(void) {
    sac_error err = {0};
    sac_fail(&err, SAC_ERR_MODEL, "token '%s' and '%.*s'", "a\xE2\x82", 2, "\xC3\xA9");
    CHECK_MSG(!strcmp(err.msg, "token 'a\xEF\xBF\xBD' and '\xC3\xA9'"), "%s", err.msg);
    sac_fail(&err, SAC_ERR_MODEL, "%.*s", 1, "\xC3\xA9"); /* cut inside é */
    CHECK(!strcmp(err.msg, "\xEF\xBF\xBD"));
    char ill[600];
    memset(ill, 0xFF, sizeof ill - 1);
    ill[sizeof ill - 1] = '\0';
    sac_fail(&err, SAC_ERR_MODEL, "%s", ill); /* 511 bytes, each one U+FFFD: 170 of them fit */
    CHECK(strlen(err.msg) == 170 * 3);
    CHECK(!strncmp(err.msg, "\xEF\xBF\xBD", 3) && !strcmp(err.msg + 169 * 3, "\xEF\xBF\xBD"));
}

int main(void) {
    RUN(test_epsilon_checked_for_every_architecture);
    RUN(test_rope_checked);
    RUN(test_unbound_tensors_refused);
    RUN(test_optional_tensors_checked);
    RUN(test_arch_keys_refused_unless_implemented);
    RUN(test_nonfinite_weights_refused);
    RUN(test_metadata_text_is_well_formed);
    RUN(test_nul_in_architecture_refused);
    RUN(test_empty_file);
    RUN(test_real_files_still_load);
    RUN(test_messages_are_well_formed_utf8);
    return check_summary("test_load");
}
