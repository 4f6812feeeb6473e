/* test_stories.c — a real pretrained model, stories260K (Karpathy's 260K-parameter TinyStories
 * Llama as the ggml project converted it; ../shared/data/models), end to end: its documented
 * greedy story, its logits against the float64 reference, and both again after the project's
 * quantizer converts the file to every weight type.
 *
 * The model is 64 wide with a feed-forward of 172, so no row is a whole 256-value K-quant
 * block and ffn_down's rows (172) are not whole 32-value blocks either. The quantizer follows
 * llama.cpp's fallback (llama-quant.cpp: Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, Q2_K/Q3_K →
 * IQ4_NL, which saccade lacks, so Q4_0; F16 when the fallback's blocks do not fit the row
 * either). Hence the files hold: a K-quant "Q4_K" is Q5_0 for the 64-wide rows and F16 for
 * ffn_down; a legacy "Q4_0" is Q4_0 with ffn_down in F16 (llama.cpp refuses such a row). The K-quant
 * kernels themselves are checked on 256-wide models in test_model.c.
 *
 * Two errors per type, as max |Δlogit| over every position of the F32 model's greedy story:
 *   vs F32       the quantized engine against the F32 engine (the type's precision loss);
 *   vs reference the quantized engine against the float64 reference on the same file's
 *                dequantized weights (what the kernels and ggml's activation rounding add).
 * Tolerances: the error measured on this file (native, 1 thread; wasm gives the same bits)
 * times about 2, rounded up. Measured vs F32: F16 0.011, BF16 0.11, Q8_0 0.29, Q5_1 1.7,
 * Q5_0 2.0, Q4_1 3.5, Q4_0 8.6 (the logits span [-17, 22]: a 260K-parameter model keeps
 * little when its weights lose bits). The order is llama.cpp's: its quantize tool lists, for
 * Llama-3-8B, +0.0026 ppl for Q8_0, +0.106 Q5_1, +0.132 Q5_0, +0.451 Q4_1, +0.469 Q4_0. Measured
 * vs the reference: 7e-6 (F32), 8e-6 (F16), 0.066 (BF16: activations rounded to bf16), 0.22-0.25
 * (int8 activations per 32 values, ggml's vec_dot_type); test_model.c's relative 3e-2 in absolute
 * terms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files.h"
#include "gguf.h"
#include "quantize.h"
#include "reference.h"
#include "saccade.h"
#include "types.h"

#define STORIES_PATH "../shared/data/models/stories260K.gguf"
#define PROMPT "Once upon a time"
/* ../shared/data/README.md: the continuation documented for this model */
#define STORY ", there was a little girl named Lily. She loved to play outside in the park."
#define MAX_TOKENS 96

typedef struct type_case {
    uint32_t type;
    double tol_f32, tol_ref; /* max |Δlogit| vs the F32 engine, vs the float64 reference */
    const char *stored;      /* the converted file's tensors by type (the fallbacks above) */
} type_case;

#define LEGACY(t) "F32 x11, F16 x5, " t " x32" /* ffn_down (rows of 172) in F16 */
static const type_case cases[] = {
    {SAC_TYPE_F32, 0, 3e-5, "F32 x48"},
    {SAC_TYPE_F16, 0.025, 3e-5, "F32 x11, F16 x37"},
    {SAC_TYPE_BF16, 0.25, 0.15, "F32 x11, BF16 x37"},
    {SAC_TYPE_Q8_0, 0.6, 0.5, LEGACY("Q8_0")},
    {SAC_TYPE_Q5_0, 4, 0.5, LEGACY("Q5_0")},
    {SAC_TYPE_Q5_1, 4, 0.5, LEGACY("Q5_1")},
    {SAC_TYPE_Q4_0, 18, 0.5, LEGACY("Q4_0")},
    {SAC_TYPE_Q4_1, 8, 0.5, LEGACY("Q4_1")},
    /* the K-quants fall back for every matrix: the same files as the types they fall back to */
    {SAC_TYPE_Q2_K, 18, 0.5, LEGACY("Q4_0")},
    {SAC_TYPE_Q3_K, 18, 0.5, LEGACY("Q4_0")},
    {SAC_TYPE_Q4_K, 4, 0.5, LEGACY("Q5_0")},
    {SAC_TYPE_Q5_K, 4, 0.5, LEGACY("Q5_1")},
    {SAC_TYPE_Q6_K, 0.6, 0.5, LEGACY("Q8_0")},
};
#undef LEGACY
#define N_CASES ((int)(sizeof cases / sizeof *cases))

/* ------------------------------------------------------------------------------------------
 * The reference's copy of a file: every tensor dequantized to double by tests/support.
 * ---------------------------------------------------------------------------------------- */

static int ref_from_file(const void *bytes, size_t size, ref_model *out) {
    gguf_file f;
    sac_error err = {0};
    if (sac_gguf_parse(&f, bytes, size, &err) != SAC_OK) {
        CHECK_MSG(0, "parse: %s", err.msg);
        sac_gguf_release(&f);
        return 0;
    }
    /* the hyperparameters in the file's metadata (README of ../shared/data); RoPE base 10000,
     * llama's default, as the file names none */
    *out = (ref_model){.spec = {.arch = "llama", .n_vocab = 512, .n_ctx = 2048, .n_embd = 64, .n_ff = 172,
                                .n_layer = 5, .n_head = 8, .n_head_kv = 4, .rope_dim = 8,
                                .rope_base = 10000.0f, .eps = 1e-5f}};
    out->t = calloc((size_t)f.n_tensors, sizeof *out->t);
    for (uint64_t i = 0; out->t && i < f.n_tensors; i++) {
        const gguf_tensor *t = &f.tensors[i];
        ref_tensor *r = &out->t[out->n++];
        snprintf(r->name, sizeof r->name, "%.*s", (int)t->name.len, t->name.data);
        r->ne[0] = (int64_t)t->ne[0];
        r->ne[1] = (int64_t)(t->n_elements / t->ne[0]);
        r->v = malloc((size_t)t->n_elements * sizeof *r->v);
        if (r->v) ref_dequantize(t->type, t->data, (int64_t)t->n_elements, r->v);
        CHECK(r->v != NULL);
    }
    sac_gguf_release(&f);
    return out->t != NULL;
}

static void ref_free(ref_model *m) {
    for (int i = 0; i < m->n; i++) free(m->t[i].v);
    free(m->t);
}

/* ------------------------------------------------------------------------------------------
 * The engine: greedy decoding and the logits of a whole sequence
 * ---------------------------------------------------------------------------------------- */

static int32_t argmax(const float *v, int32_t n) {
    int32_t best = 0;
    for (int32_t i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

/* Appends the prompt's tokens and the greedy continuation to tokens (at most MAX_TOKENS in all)
 * and its text to text (cap bytes); returns the token count (0 on failure). Stops at EOS or once
 * the text is as long as the documented story. */
static int greedy(sac_model *m, int32_t *tokens, int *n_prompt, char *text, size_t cap) {
    int32_t n = 0;
    if (sac_tokenize(m, PROMPT, strlen(PROMPT), SAC_TOKENIZE_BOS, tokens, MAX_TOKENS, &n) != SAC_OK) return 0;
    *n_prompt = n;
    sac_context *ctx = NULL;
    sac_detokenizer *dt = NULL;
    size_t len = 0;
    text[0] = '\0';
    CHECK(sac_context_new(m, NULL, &ctx) == SAC_OK && sac_detokenizer_new(m, &dt) == SAC_OK);
    sac_status st = sac_eval(ctx, tokens, n, NULL, 0);
    while (st == SAC_OK && n < MAX_TOKENS && len < strlen(STORY)) {
        int32_t V;
        const float *logits = sac_logits(ctx, NULL, &V);
        const int32_t next = argmax(logits, V);
        if (next == sac_token_eos(m)) break;
        tokens[n++] = next;
        const char *piece;
        size_t piece_len;
        if ((st = sac_detokenizer_push(dt, next, &piece, &piece_len)) != SAC_OK) break;
        if (len + piece_len < cap) {
            memcpy(text + len, piece, piece_len);
            text[len += piece_len] = '\0';
        }
        st = sac_eval(ctx, &next, 1, NULL, 0);
    }
    CHECK_MSG(st == SAC_OK, "%s", sac_context_errmsg(ctx));
    sac_detokenizer_free(dt);
    sac_context_free(ctx);
    return st == SAC_OK ? n : 0;
}

/* The logits of every position of tokens, in one batch, into out[n][n_vocab]. */
static int all_logits(sac_model *m, const int32_t *tokens, int n, float *out) {
    sac_context *ctx = NULL;
    sac_status st = sac_context_new(m, NULL, &ctx);
    if (st == SAC_OK) st = sac_eval(ctx, tokens, n, NULL, SAC_EVAL_ALL_LOGITS);
    CHECK_MSG(st == SAC_OK, "%s", ctx ? sac_context_errmsg(ctx) : "out of memory");
    if (st == SAC_OK) memcpy(out, sac_logits(ctx, NULL, NULL), (size_t)n * 512 * sizeof *out);
    sac_context_free(ctx);
    return st == SAC_OK;
}

static double max_abs_diff_f(const float *a, const float *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    return worst;
}

static double max_abs_diff_d(const float *a, const double *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(a[i] - b[i]));
    return worst;
}

/* Tensors of the converted file by stored type, e.g. "Q5_0 ×30, F16 ×5, F32 ×11". */
static void describe_types(const uint8_t *bytes, size_t size, char *out, size_t cap) {
    gguf_file f;
    sac_error err = {0};
    int count[SAC_TYPE_COUNT] = {0};
    out[0] = '\0';
    if (sac_gguf_parse(&f, bytes, size, &err) == SAC_OK)
        for (uint64_t i = 0; i < f.n_tensors; i++) count[f.tensors[i].type]++;
    sac_gguf_release(&f);
    size_t len = 0;
    for (uint32_t t = 0; t < SAC_TYPE_COUNT; t++)
        if (count[t] && len < cap)
            len += (size_t)snprintf(out + len, cap - len, "%s%s x%d", len ? ", " : "", sac_type_name(t), count[t]);
}

/* ------------------------------------------------------------------------------------------ */

static void test_stories_every_type(void) {
    size_t size;
    uint8_t *file = test_read_file(STORIES_PATH, &size);
    if (!file) SKIP(STORIES_PATH " is absent (run from the repository root with ../shared present)");

    int32_t tokens[MAX_TOKENS];
    int n = 0, n_prompt = 0;
    float *f32_logits = NULL, *logits = NULL;
    double *ref = NULL;
    char f32_text[1024];

    for (int c = 0; c < N_CASES; c++) {
        const type_case *tc = &cases[c];
        uint8_t *bytes = file;
        size_t n_bytes = size;
        quantize_stats stats;
        sac_error err = {0};
        if (tc->type != SAC_TYPE_F32 &&
            quantize_gguf(file, size, tc->type, &bytes, &n_bytes, &stats, &err) != SAC_OK) {
            CHECK_MSG(0, "quantize to %s: %s", sac_type_name(tc->type), err.msg);
            continue;
        }
        char stored[160];
        describe_types(bytes, n_bytes, stored, sizeof stored);
        CHECK_MSG(!strcmp(stored, tc->stored), "%s: the file holds %s, not %s", sac_type_name(tc->type), stored,
                  tc->stored);

        sac_model *m = NULL;
        sac_status st = sac_model_load(bytes, n_bytes, 0, &m);
        CHECK_MSG(st == SAC_OK, "%s: %s", sac_type_name(tc->type), sac_model_errmsg(m));
        char text[1024];
        int32_t own[MAX_TOKENS];
        int own_prompt = 0;
        const int n_own = st == SAC_OK ? greedy(m, own, &own_prompt, text, sizeof text) : 0;
        if (tc->type == SAC_TYPE_F32) {
            /* the documented story, and the sequence every type's logits are compared on */
            CHECK_MSG(n_own > 0 && !strncmp(text, STORY, strlen(STORY)), "F32 greedy text: \"%s\"", text);
            memcpy(tokens, own, sizeof own);
            n = n_own;
            n_prompt = own_prompt;
            strcpy(f32_text, text);
            f32_logits = malloc((size_t)n * 512 * sizeof *f32_logits);
            logits = malloc((size_t)n * 512 * sizeof *logits);
            ref = malloc((size_t)n * 512 * sizeof *ref);
            CHECK(n > n_prompt && f32_logits && logits && ref);
            if (!(n > n_prompt && f32_logits && logits && ref)) {
                sac_model_free(m);
                break;
            }
        }
        ref_model rm;
        if (st == SAC_OK && all_logits(m, tokens, n, logits) && ref_from_file(bytes, n_bytes, &rm)) {
            ref_forward(&rm, tokens, n, NULL, ref, NULL);
            ref_free(&rm);
            if (tc->type == SAC_TYPE_F32) {
                memcpy(f32_logits, logits, (size_t)n * 512 * sizeof *logits);
                float lo = logits[0], hi = logits[0];
                for (size_t i = 0; i < (size_t)n * 512; i++) lo = fminf(lo, logits[i]), hi = fmaxf(hi, logits[i]);
                printf("  %d tokens (%d of prompt); F32 logits span [%.1f, %.1f]; max |Δlogit|:\n", n, n_prompt, lo, hi);
                printf("  %-5s %-30s %12s %12s  %s\n", "type", "stored as", "vs F32", "vs reference", "greedy text");
            }
            const size_t count = (size_t)n * 512;
            const double vs_f32 = max_abs_diff_f(logits, f32_logits, count);
            const double vs_ref = max_abs_diff_d(logits, ref, count);
            const int same = !strcmp(text, f32_text);
            printf("  %-5s %-30s %12.3g %12.3g  %s\n", sac_type_name(tc->type), stored, vs_f32, vs_ref,
                   same ? "unchanged" : text);
            CHECK_MSG(vs_f32 <= tc->tol_f32, "%s: max |logit - F32's| %.3g > %g", sac_type_name(tc->type), vs_f32,
                      tc->tol_f32);
            CHECK_MSG(vs_ref <= tc->tol_ref, "%s: max |logit - reference| %.3g > %g", sac_type_name(tc->type),
                      vs_ref, tc->tol_ref);
        }
        sac_model_free(m);
        if (bytes != file) free(bytes);
    }
    free(f32_logits);
    free(logits);
    free(ref);
    free(file);
}

int main(void) {
    RUN(test_stories_every_type);
    return check_summary("test_stories");
}
