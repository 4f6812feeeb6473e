/* test_model.c — whole-model checks: the engine against the float64 reference for each
 * architecture (gpt2, llama, qwen2, gemma, phi3; encdec in test_encdec.c) and all four weight types, RoPE
 * frequency factors and scaling, KV-cached decoding, batching, threads,
 * attention capture and masks, and the errors of bad models and bad calls.
 *
 * Tolerances (relative to the largest reference logit, max |engine − reference| / max |reference|):
 *   F32  1e-4  (float vs double rounding)
 *   F16  1e-4  (weights are exactly representable; activations stay f32)
 *   Q8_0 3e-2, Q4_0 3e-2  (the reference runs on the dequantized weights but keeps activations
 *        in float64; the engine quantizes activations to int8 per 32-block as ggml does)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files.h"
#include "reference.h"
#include "saccade.h"
#include "types.h"

static const int32_t prompt[] = {5, 17, 42, 3, 88, 61, 0, 96, 23, 23, 7, 50, 11, 64, 2, 39, 71, 8, 30, 45};
#define N_PROMPT ((int)(sizeof prompt / sizeof *prompt))

static sac_model *load(const test_model *tm) {
    sac_model *m = NULL;
    sac_status st = sac_model_load(tm->bytes, tm->size, 0, &m);
    CHECK_MSG(st == SAC_OK, "load failed: %s", sac_model_errmsg(m));
    if (st != SAC_OK) {
        sac_model_free(m);
        return NULL;
    }
    return m;
}

static sac_context *context(sac_model *m, int threads, int batch, int capture) {
    sac_context_params p = sac_context_default_params();
    p.n_threads = threads;
    p.n_batch = batch;
    p.capture_attention = capture;
    sac_context *ctx = NULL;
    sac_status st = sac_context_new(m, &p, &ctx);
    CHECK_MSG(st == SAC_OK, "context failed: %s", sac_context_errmsg(ctx));
    return ctx;
}

/* Evaluates the prompt as one batch with all logits and compares with the reference. */
static double model_error(const test_model_spec *spec, int threads, int batch) {
    test_model tm;
    CHECK(test_model_make(spec, &tm) == 0);
    double err = INFINITY;
    sac_model *m = load(&tm);
    if (m) {
        sac_context *ctx = context(m, threads, batch, 0);
        CHECK(sac_eval(ctx, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
        int32_t rows, V;
        const float *logits = sac_logits(ctx, &rows, &V);
        CHECK(rows == N_PROMPT && V == spec->n_vocab);
        double *ref = malloc((size_t)N_PROMPT * V * sizeof *ref);
        ref_forward(&tm.ref, prompt, N_PROMPT, NULL, ref, NULL);
        err = ref_rel_error(logits, ref, (size_t)N_PROMPT * V);
        free(ref);
        sac_context_free(ctx);
        sac_model_free(m);
    }
    test_model_free(&tm);
    return err;
}

static void test_f32_models_match_reference(void) {
    const char *archs[] = {"gpt2", "llama", "qwen2", "gemma", "phi3"};
    for (int a = 0; a < 5; a++)
        for (int tied = 0; tied < 2; tied++) {
            test_model_spec s = test_spec(archs[a], SAC_TYPE_F32);
            s.tied = tied;
            double err = model_error(&s, 1, 64);
            CHECK_MSG(err <= 1e-4, "%s tied=%d: relative error %.3g", archs[a], tied, err);
        }
    /* llama without GQA, a partial rotary dimension and another RoPE base */
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    s.n_head_kv = 4;
    s.rope_dim = 8;
    s.rope_base = 500.0f;
    double err = model_error(&s, 1, 64);
    CHECK_MSG(err <= 1e-4, "llama MHA partial rope: relative error %.3g", err);
    /* GQA with one KV head for all four query heads */
    s = test_spec("llama", SAC_TYPE_F32);
    s.n_head_kv = 1;
    err = model_error(&s, 2, 64);
    CHECK_MSG(err <= 1e-4, "llama MQA: relative error %.3g", err);
}

static void test_quantized_models_match_reference(void) {
    const char *archs[] = {"gpt2", "llama", "qwen2", "gemma", "phi3"};
    const uint32_t types[] = {SAC_TYPE_F16, SAC_TYPE_Q8_0, SAC_TYPE_Q4_0};
    const double tol[] = {1e-4, 3e-2, 3e-2};
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 3; t++) {
            test_model_spec s = test_spec(archs[a], types[t]);
            s.tied = t == 1;
            double err = model_error(&s, 2, 64);
            printf("  %s %s: relative error %.3g (tolerance %g)\n", archs[a], sac_type_name(types[t]), err, tol[t]);
            CHECK_MSG(err <= tol[t], "%s %s: relative error %.3g", archs[a], sac_type_name(types[t]), err);
        }
}

/* The types added for real files, each a whole model against the float64 reference (which
 * dequantizes the stored blocks itself, and keeps the activations unquantized). The
 * K-quants need rows of whole 256-value blocks: a width of 256 and a feed-forward of 512.
 * Their activations (Q8_K) have one scale per 256 values, so even Q6_K's error is mostly
 * the activations': the tolerance is Q8_0's. */
static void test_more_quantized_types_match_reference(void) {
    const char *archs[] = {"gpt2", "llama"};
    const uint32_t types[] = {SAC_TYPE_BF16, SAC_TYPE_Q5_0, SAC_TYPE_Q4_1, SAC_TYPE_Q5_1, SAC_TYPE_Q2_K,
                              SAC_TYPE_Q3_K, SAC_TYPE_Q4_K, SAC_TYPE_Q5_K, SAC_TYPE_Q6_K};
    for (int a = 0; a < 2; a++)
        for (int t = 0; t < 9; t++) {
            const double tol = types[t] == SAC_TYPE_BF16 ? 1e-2 : 3e-2; /* bf16: 8-bit activations' mantissas */
            test_model_spec s = test_spec(archs[a], types[t]);
            if (sac_type_traits_get(types[t])->block_size == 256) {
                s.n_embd = 256;
                s.n_ff = 512;
            }
            s.tied = a == 1;
            double err = model_error(&s, 2, 64);
            printf("  %s %s: relative error %.3g (tolerance %g)\n", archs[a], sac_type_name(types[t]), err, tol);
            CHECK_MSG(err <= tol, "%s %s: relative error %.3g", archs[a], sac_type_name(types[t]), err);
        }
}

/* Prefill part of the prompt, then decode one token at a time: each step's logits equal
 * the corresponding row of a single full-sequence evaluation. */
static void test_kv_cache_decode_matches_full_sequence(void) {
    const char *archs[] = {"gpt2", "llama", "qwen2", "gemma", "phi3"};
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_Q8_0};
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 2; t++) {
            test_model tm;
            test_model_spec s = test_spec(archs[a], types[t]);
            CHECK(test_model_make(&s, &tm) == 0);
            sac_model *m = load(&tm);
            if (!m) continue;
            sac_context *full = context(m, 1, 64, 0), *step = context(m, 1, 64, 0);
            CHECK(sac_eval(full, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
            const float *all = sac_logits(full, NULL, NULL);
            const int V = s.n_vocab, n0 = 6;
            CHECK(sac_eval(step, prompt, n0, NULL, 0) == SAC_OK);
            double worst = 0;
            for (int i = n0; i <= N_PROMPT; i++) {
                const float *lg = sac_logits(step, NULL, NULL);
                double num = 0, den = 0;
                for (int v = 0; v < V; v++) {
                    num = fmax(num, fabs(lg[v] - all[(size_t)(i - 1) * V + v]));
                    den = fmax(den, fabs(all[(size_t)(i - 1) * V + v]));
                }
                worst = fmax(worst, num / den);
                if (i < N_PROMPT) CHECK(sac_eval(step, prompt + i, 1, NULL, 0) == SAC_OK);
            }
            CHECK(sac_context_n_past(step) == N_PROMPT);
            CHECK_MSG(worst <= 1e-5, "%s %s: cached decode differs by %.3g", archs[a], sac_type_name(types[t]), worst);
            sac_context_free(full);
            sac_context_free(step);
            sac_model_free(m);
            test_model_free(&tm);
        }
}

/* sac_context_truncate: a context that evaluated the first tokens of a prompt and then others,
 * cut back to the shared tokens and given the rest of the prompt, has the logits and captured
 * attention of the whole prompt evaluated at once, to the bit (no kernel depends on how the
 * tokens were batched), for every cache type; and bad counts are refused. */
static void test_truncate_reuses_the_prefix(void) {
    const char *archs[] = {"gpt2", "llama"};
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_Q8_0, SAC_TYPE_Q4_0};
    const int32_t kv_types[] = {SAC_KV_F32, SAC_KV_BF16, SAC_KV_Q8};
    const int shared = 8, other[] = {90, 91, 92, 93, 94};
    for (int a = 0; a < 2; a++)
        for (int t = 0; t < 3; t++) {
            test_model tm;
            test_model_spec s = test_spec(archs[a], types[t]);
            CHECK(test_model_make(&s, &tm) == 0);
            sac_model *m = load(&tm);
            if (!m) continue;
            const int kv = kv_types[t];
            sac_context_params p = sac_context_default_params();
            p.capture_attention = 1;
            p.kv_type = kv;
            sac_context *whole = NULL, *cut = NULL;
            CHECK(sac_context_new(m, &p, &whole) == SAC_OK && sac_context_new(m, &p, &cut) == SAC_OK);
            CHECK(sac_eval(whole, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
            /* the shared tokens in two batches, then others, cut back to the shared ones */
            CHECK(sac_eval(cut, prompt, 3, NULL, 0) == SAC_OK && sac_eval(cut, prompt + 3, shared - 3, NULL, 0) == SAC_OK);
            CHECK(sac_eval(cut, (const int32_t *)other, 5, NULL, 0) == SAC_OK);
            CHECK(sac_context_truncate(cut, shared) == SAC_OK && sac_context_n_past(cut) == shared);
            int32_t rows = -1;
            CHECK(sac_logits(cut, &rows, NULL) == NULL && rows == 0); /* the forgotten token's logits are gone */
            CHECK(sac_attention_n_rows(cut, SAC_ATTENTION_SELF) == shared);
            CHECK(sac_eval(cut, prompt + shared, N_PROMPT - shared, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
            const size_t V = (size_t)s.n_vocab;
            const float *lw = sac_logits(whole, NULL, NULL), *lc = sac_logits(cut, &rows, NULL);
            CHECK(rows == N_PROMPT - shared);
            CHECK_MSG(memcmp(lw + (size_t)shared * V, lc, (size_t)rows * V * sizeof *lc) == 0,
                      "%s %s, kv %s: logits after the cut differ", archs[a], sac_type_name(types[t]), sac_kv_type_name(kv));
            for (int32_t q = 0; q < N_PROMPT; q++) {
                const float *rw = NULL, *rc = NULL;
                int32_t kw = 0, kc = 0;
                const int read = sac_attention_row(whole, q, &rw, &kw) == SAC_OK && sac_attention_row(cut, q, &rc, &kc) == SAC_OK;
                CHECK(read);
                if (!read) continue;
                CHECK_MSG(kw == kc && memcmp(rw, rc, (size_t)s.n_layer * s.n_head * kw * sizeof *rw) == 0,
                          "%s %s: attention row %d differs", archs[a], sac_type_name(types[t]), q);
            }
            /* bad counts change nothing */
            CHECK(sac_context_truncate(cut, N_PROMPT + 1) == SAC_ERR_ARG);
            CHECK(strstr(sac_context_errmsg(cut), "cannot keep 21 tokens: the context holds 20") != NULL);
            CHECK(sac_context_truncate(cut, -1) == SAC_ERR_ARG && sac_context_n_past(cut) == N_PROMPT);
            CHECK(sac_context_truncate(cut, N_PROMPT) == SAC_OK && sac_logits(cut, &rows, NULL) && rows == N_PROMPT - shared);
            /* with capture off, the kept tokens keep no rows (the capture that made them ended),
             * also when all of them are kept */
            CHECK(sac_attention_enable(cut, 0) == SAC_OK && sac_context_truncate(cut, N_PROMPT) == SAC_OK);
            CHECK(sac_context_n_past(cut) == N_PROMPT && sac_attention_n_rows(cut, SAC_ATTENTION_SELF) == 0);
            CHECK(sac_context_truncate(cut, 4) == SAC_OK);
            CHECK(sac_context_n_past(cut) == 4 && sac_attention_n_rows(cut, SAC_ATTENTION_SELF) == 0);
            CHECK(sac_context_truncate(cut, 0) == SAC_OK && sac_context_n_past(cut) == 0);
            sac_context_free(whole);
            sac_context_free(cut);
            sac_model_free(m);
            test_model_free(&tm);
        }
    CHECK(sac_context_truncate(NULL, 0) == SAC_ERR_ARG);
}

/* Splitting a prompt into small batches changes nothing but the order of additions. */
static void test_batch_size_does_not_change_logits(void) {
    const char *archs[] = {"gpt2", "llama", "qwen2", "gemma", "phi3"};
    for (int a = 0; a < 5; a++) {
        test_model_spec s = test_spec(archs[a], SAC_TYPE_Q4_0);
        double e64 = model_error(&s, 1, 64), e3 = model_error(&s, 1, 3), e1 = model_error(&s, 1, 1);
        CHECK_MSG(fabs(e64 - e3) <= 1e-5 && fabs(e64 - e1) <= 1e-5, "%s: errors %.6g %.6g %.6g", archs[a], e64, e3, e1);
    }
}

/* Every output value is computed by one thread in a fixed order: bitwise identical logits,
 * and identical greedy continuations, for 1, 2 and 4 threads. */
static void test_threads_give_identical_results(void) {
    const char *archs[] = {"gpt2", "llama", "qwen2", "gemma", "phi3"};
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_F16, SAC_TYPE_Q8_0, SAC_TYPE_Q4_0};
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 4; t++) {
            test_model tm;
            test_model_spec s = test_spec(archs[a], types[t]);
            CHECK(test_model_make(&s, &tm) == 0);
            sac_model *m = load(&tm);
            if (!m) continue;
            float *first = NULL;
            int32_t gen[3][24];
            const int threads[3] = {1, 2, 4};
            for (int k = 0; k < 3; k++) {
                sac_context *ctx = context(m, threads[k], 8, 0);
                CHECK(sac_context_n_threads(ctx) == threads[k]);
                CHECK(sac_eval(ctx, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
                const float *lg = sac_logits(ctx, NULL, NULL);
                size_t bytes = (size_t)N_PROMPT * s.n_vocab * sizeof(float);
                if (!first) {
                    first = malloc(bytes);
                    memcpy(first, lg, bytes);
                } else {
                    CHECK_MSG(!memcmp(first, lg, bytes), "%s %s: logits with %d threads differ", archs[a],
                              sac_type_name(types[t]), threads[k]);
                }
                sac_sampling_params sp = sac_sampling_default_params();
                sp.temperature = 0;
                CHECK(sac_sampler_init(ctx, &sp) == SAC_OK);
                for (int i = 0; i < 24; i++) {
                    CHECK(sac_sample(ctx, &gen[k][i]) == SAC_OK);
                    if (i < 23 && sac_context_n_past(ctx) < s.n_ctx) sac_eval(ctx, &gen[k][i], 1, NULL, 0);
                }
                if (k) CHECK_MSG(!memcmp(gen[0], gen[k], sizeof gen[0]), "greedy tokens differ with %d threads", threads[k]);
                sac_context_free(ctx);
            }
            free(first);
            sac_model_free(m);
            test_model_free(&tm);
        }
}

/* Threads replaced between calls (1 → 3 → 2 → 1 → 3) change no bit: the logits and the captured
 * attention of a decode whose thread count changes every few tokens equal a 1-thread run's. */
static void test_set_threads_between_calls(void) {
    const char *archs[] = {"gpt2", "llama"};
    for (int a = 0; a < 2; a++) {
        test_model tm;
        test_model_spec s = test_spec(archs[a], SAC_TYPE_Q8_0);
        CHECK(test_model_make(&s, &tm) == 0);
        sac_model *m = load(&tm);
        if (!m) continue;
        sac_context *ref = context(m, 1, 8, 1), *ctx = context(m, 1, 8, 1);
        const int32_t steps[] = {3, 2, 1, 3};
        int32_t at = 0;
        for (int k = 0; k < 4; k++) {
            CHECK(sac_context_set_threads(ctx, steps[k]) == SAC_OK);
            CHECK(sac_context_n_threads(ctx) == steps[k]);
            const int32_t n = k == 0 ? 5 : 3;
            CHECK(sac_eval(ref, prompt + at, n, NULL, 0) == SAC_OK);
            CHECK(sac_eval(ctx, prompt + at, n, NULL, 0) == SAC_OK);
            at += n;
            CHECK_MSG(!memcmp(sac_logits(ref, NULL, NULL), sac_logits(ctx, NULL, NULL), (size_t)s.n_vocab * sizeof(float)),
                      "%s: logits differ after switching to %d threads", archs[a], steps[k]);
        }
        const float *r_row, *c_row;
        int32_t r_keys, c_keys;
        CHECK(sac_attention_row(ref, at - 1, &r_row, &r_keys) == SAC_OK);
        CHECK(sac_attention_row(ctx, at - 1, &c_row, &c_keys) == SAC_OK);
        CHECK(r_keys == c_keys && !memcmp(r_row, c_row, (size_t)s.n_layer * s.n_head * c_keys * sizeof(float)));
        CHECK(sac_context_set_threads(ctx, 0) == SAC_OK && sac_context_n_threads(ctx) == 1);
        CHECK(sac_context_set_threads(ctx, -1) == SAC_ERR_ARG);
        CHECK(sac_context_set_threads(ctx, 257) == SAC_ERR_ARG);
        CHECK(strstr(sac_context_errmsg(ctx), "257") != NULL);
        CHECK(sac_context_n_threads(ctx) == 1);
        CHECK(sac_context_set_threads(NULL, 2) == SAC_ERR_ARG);
        sac_context_free(ref);
        sac_context_free(ctx);
        sac_model_free(m);
        test_model_free(&tm);
    }
}

/* Captured probabilities equal the reference's, rows sum to one, and padding keys get none. */
static void check_attention(const char *arch, const uint8_t *mask) {
    test_model tm;
    test_model_spec s = test_spec(arch, SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = load(&tm);
    if (!m) return;
    const int n = N_PROMPT, L = s.n_layer, H = s.n_head;
    sac_context *ctx = context(m, 2, 7, 1);
    CHECK(sac_attention_enabled(ctx) == 1);
    CHECK(sac_eval(ctx, prompt, 12, mask, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    CHECK(sac_eval(ctx, prompt + 12, n - 12, mask ? mask + 12 : NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    double *probs = malloc((size_t)L * H * n * n * sizeof *probs), *logits = malloc((size_t)n * s.n_vocab * sizeof *logits);
    ref_forward(&tm.ref, prompt, n, mask, logits, probs);
    /* the last call's logits rows are positions 12..n-1 */
    CHECK(ref_rel_error(sac_logits(ctx, NULL, NULL), logits + (size_t)12 * s.n_vocab, (size_t)(n - 12) * s.n_vocab) <= 1e-4);
    float *mat = malloc((size_t)n * n * sizeof *mat);
    double worst = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            CHECK(sac_attention_matrix(ctx, l, h, mat, (size_t)n * n) == SAC_OK);
            for (int i = 0; i < n * n; i++) worst = fmax(worst, fabs(mat[i] - probs[((size_t)l * H + h) * n * n + i]));
        }
    CHECK_MSG(worst <= 1e-5, "%s: attention differs from the reference by %.3g", arch, worst);
    for (int q = 0; q < n; q++) {
        const float *row;
        int32_t keys;
        CHECK(sac_attention_row(ctx, q, &row, &keys) == SAC_OK);
        CHECK(keys == q + 1);
        for (int lh = 0; lh < L * H; lh++) {
            double sum = 0;
            for (int j = 0; j <= q; j++) {
                sum += row[lh * (q + 1) + j];
                if (mask && !mask[j] && j != q) CHECK(row[lh * (q + 1) + j] == 0.0f);
            }
            CHECK_NEAR(sum, 1.0, 1e-5);
        }
    }
    CHECK(sac_attention_row(ctx, n, NULL, NULL) == SAC_ERR_ARG);
    CHECK(sac_attention_matrix(ctx, L, 0, mat, (size_t)n * n) == SAC_ERR_ARG);
    CHECK(sac_attention_matrix(ctx, 0, 0, mat, (size_t)n * n - 1) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(ctx), "needs") != NULL);
    free(mat);
    free(probs);
    free(logits);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

static void test_attention_capture_matches_reference(void) {
    check_attention("gpt2", NULL);
    check_attention("llama", NULL);
    check_attention("qwen2", NULL);
    check_attention("gemma", NULL);
    check_attention("phi3", NULL);
}

/* Logits of the prompt with `threads` threads into a new buffer (NULL when loading fails). */
static float *prompt_logits(const test_model *tm, int threads) {
    sac_model *m = load(tm);
    if (!m) return NULL;
    sac_context *ctx = context(m, threads, 7, 0);
    CHECK(sac_eval(ctx, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    size_t bytes = (size_t)N_PROMPT * tm->ref.spec.n_vocab * sizeof(float);
    float *out = malloc(bytes);
    memcpy(out, sac_logits(ctx, NULL, NULL), bytes);
    sac_context_free(ctx);
    sac_model_free(m);
    return out;
}

/* Llama 3.x's RoPE frequency factors (rope_freqs.weight), linear RoPE scaling and llama's
 * optional attention biases, each against the reference at F32 and bitwise across threads;
 * and what sac_model_info reports of them. */
static void test_rope_variants_match_reference(void) {
    struct { const char *what, *arch; int freqs; float scale; int bias, rope_dim; } cases[] = {
        {"llama rope_freqs", "llama", 1, 0, 0, 16},
        {"llama linear x4", "llama", 0, 4.0f, 0, 16},
        {"llama rope_freqs + linear x2, partial rope", "llama", 1, 2.0f, 0, 8},
        {"llama attention biases", "llama", 0, 0, 1, 16},
        {"qwen2 linear x8, partial rope", "qwen2", 0, 8.0f, 0, 8},
        {"gemma linear x2", "gemma", 0, 2.0f, 0, 16},
        {"phi3 partial rope", "phi3", 0, 0, 0, 8},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        test_model_spec s = test_spec(cases[c].arch, SAC_TYPE_F32);
        s.rope_freqs = cases[c].freqs;
        s.rope_scale = cases[c].scale;
        s.attn_bias = cases[c].bias;
        s.rope_dim = cases[c].rope_dim;
        double err = model_error(&s, 1, 64);
        printf("  %s: relative error %.3g (tolerance 1e-4)\n", cases[c].what, err);
        CHECK_MSG(err <= 1e-4, "%s: relative error %.3g", cases[c].what, err);

        test_model tm;
        CHECK(test_model_make(&s, &tm) == 0);
        float *one = prompt_logits(&tm, 1), *three = prompt_logits(&tm, 3);
        CHECK_MSG(one && three && !memcmp(one, three, (size_t)N_PROMPT * s.n_vocab * sizeof(float)),
                  "%s: logits with 1 and 3 threads differ", cases[c].what);
        free(one);
        free(three);
        sac_model *m = load(&tm);
        if (m) {
            sac_model_info in;
            sac_model_get_info(m, &in);
            CHECK(in.rope_freq_factors == cases[c].freqs);
            CHECK(in.rope_neox == !!strcmp(cases[c].arch, "llama"));
            CHECK(in.tied_output == !strcmp(cases[c].arch, "gemma"));
            CHECK_NEAR(in.rope_freq_scale, cases[c].scale > 0 ? 1.0 / cases[c].scale : 1.0, 1e-7);
            sac_model_free(m);
        }
        test_model_free(&tm);
    }
}

static void test_padding_mask_hides_keys(void) {
    uint8_t mask[N_PROMPT];
    for (int i = 0; i < N_PROMPT; i++) mask[i] = (i % 5) != 1;
    mask[0] = 0;
    check_attention("gpt2", mask);
    check_attention("llama", mask);
}

static void test_attention_capture_switch(void) {
    test_model tm;
    test_model_spec s = test_spec("gpt2", SAC_TYPE_Q8_0);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = load(&tm);
    if (!m) return;
    sac_context *ctx = context(m, 1, 64, 0);
    CHECK(sac_attention_enabled(ctx) == 0);
    CHECK(sac_eval(ctx, prompt, 5, NULL, 0) == SAC_OK);
    CHECK(sac_attention_row(ctx, 0, NULL, NULL) == SAC_ERR_STATE);
    CHECK(sac_attention_enable(ctx, 1) == SAC_OK);
    CHECK(sac_eval(ctx, prompt + 5, 3, NULL, 0) == SAC_OK);
    const float *row;
    int32_t keys;
    CHECK(sac_attention_row(ctx, 2, &row, &keys) == SAC_OK); /* evaluated before capture: zeros */
    for (int i = 0; i < s.n_layer * s.n_head * 3; i++) CHECK(row[i] == 0.0f);
    CHECK(sac_attention_row(ctx, 7, &row, &keys) == SAC_OK && keys == 8);
    double sum = 0;
    for (int j = 0; j < 8; j++) sum += row[j];
    CHECK_NEAR(sum, 1.0, 1e-5);
    sac_context_reset(ctx);
    CHECK(sac_attention_row(ctx, 0, NULL, NULL) == SAC_ERR_STATE);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

/* ------------------------------------------------------------------------------------------ */

static void softmax(const float *logits, int n, double temp, double *p) {
    double max = -INFINITY, sum = 0;
    for (int i = 0; i < n; i++) max = fmax(max, logits[i] / temp);
    for (int i = 0; i < n; i++) sum += (p[i] = exp(logits[i] / temp - max));
    for (int i = 0; i < n; i++) p[i] /= sum;
}

static void test_sampling(void) {
    test_model tm;
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = load(&tm);
    if (!m) return;
    sac_context *ctx = context(m, 1, 64, 0);
    int32_t tok = 12345;
    CHECK(sac_sample(ctx, &tok) == SAC_ERR_STATE && tok == -1); /* an id no eval accepts, not what was there */
    CHECK(strstr(sac_context_errmsg(ctx), "evaluate") != NULL);
    CHECK(sac_eval(ctx, prompt, 4, NULL, 0) == SAC_OK);
    const float *lg = sac_logits(ctx, NULL, NULL);
    const int V = s.n_vocab;
    int argmax = 0;
    for (int i = 1; i < V; i++)
        if (lg[i] > lg[argmax]) argmax = i;

    sac_sampling_params p = sac_sampling_default_params();
    p.temperature = 0;
    CHECK(sac_sampler_init(ctx, &p) == SAC_OK && sac_sample(ctx, &tok) == SAC_OK && tok == argmax);
    p = sac_sampling_default_params();
    p.top_k = 1;
    CHECK(sac_sampler_init(ctx, &p) == SAC_OK && sac_sample(ctx, &tok) == SAC_OK && tok == argmax);
    p.top_k = 0;
    p.top_p = 1e-6f;
    CHECK(sac_sampler_init(ctx, &p) == SAC_OK && sac_sample(ctx, &tok) == SAC_OK && tok == argmax);

    /* Same seed, same sequence; another seed, another sequence. */
    int32_t a[64], b[64], c[64];
    p = sac_sampling_default_params();
    p.temperature = 1.5f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.seed = 42;
    sac_sampler_init(ctx, &p);
    for (int i = 0; i < 64; i++) sac_sample(ctx, &a[i]);
    sac_sampler_init(ctx, &p);
    for (int i = 0; i < 64; i++) sac_sample(ctx, &b[i]);
    p.seed = 43;
    sac_sampler_init(ctx, &p);
    for (int i = 0; i < 64; i++) sac_sample(ctx, &c[i]);
    CHECK(!memcmp(a, b, sizeof a));
    CHECK(memcmp(a, c, sizeof a) != 0);

    /* Frequencies follow softmax(logits / T) (20000 draws: |f − p| < 0.015 for every id). */
    double *pr = malloc(V * sizeof *pr);
    int *count = calloc(V, sizeof *count);
    const int draws = 20000;
    p.temperature = 2.0f;
    p.seed = 7;
    sac_sampler_init(ctx, &p);
    for (int i = 0; i < draws; i++) {
        CHECK(sac_sample(ctx, &tok) == SAC_OK);
        count[tok]++;
    }
    softmax(lg, V, 2.0, pr);
    double worst = 0;
    for (int i = 0; i < V; i++) worst = fmax(worst, fabs((double)count[i] / draws - pr[i]));
    CHECK_MSG(worst < 0.015, "sampled frequencies differ from the softmax by %.4f", worst);

    /* top-k keeps only the k best; top-p only the nucleus. */
    int order[128];
    for (int i = 0; i < V; i++) order[i] = i;
    for (int i = 0; i < V; i++) /* selection sort by probability, ties by id */
        for (int j = i + 1; j < V; j++)
            if (pr[order[j]] > pr[order[i]]) { int t = order[i]; order[i] = order[j]; order[j] = t; }
    p.top_k = 5;
    p.top_p = 1.0f;
    sac_sampler_init(ctx, &p);
    memset(count, 0, V * sizeof *count);
    for (int i = 0; i < 4000; i++) { sac_sample(ctx, &tok); count[tok]++; }
    int outside = 0, seen_top = 0;
    for (int i = 0; i < V; i++) {
        int rank = 0;
        while (order[rank] != i) rank++;
        if (rank >= 5) outside += count[i];
        else seen_top += count[i] > 0;
    }
    CHECK(outside == 0 && seen_top == 5);
    p.top_k = 0;
    p.top_p = 0.5f;
    sac_sampler_init(ctx, &p);
    int nucleus = 0;
    for (double acc = 0; acc < 0.5; nucleus++) acc += pr[order[nucleus]];
    memset(count, 0, V * sizeof *count);
    for (int i = 0; i < 4000; i++) { sac_sample(ctx, &tok); count[tok]++; }
    outside = 0;
    for (int r = nucleus; r < V; r++) outside += count[order[r]];
    CHECK_MSG(outside == 0, "%d draws outside a nucleus of %d ids", outside, nucleus);

    /* Repetition penalty: a token seen in the context loses probability. */
    p = sac_sampling_default_params();
    p.temperature = 0;
    p.repeat_penalty = 1e6f;
    p.repeat_last_n = -1;
    sac_sampler_init(ctx, &p);
    sac_sample(ctx, &tok);
    for (int i = 0; i < 4; i++) CHECK(tok != prompt[i] || lg[tok] <= 0);

    /* Invalid parameters are refused with a message naming the parameter. */
    struct { float temp, top_p, rp; int top_k, last_n; const char *word; } bad[] = {
        {NAN, 1, 1, 0, 0, "temperature"}, {-1, 1, 1, 0, 0, "temperature"}, {INFINITY, 1, 1, 0, 0, "temperature"},
        {1, 0, 1, 0, 0, "top_p"}, {1, 1.5f, 1, 0, 0, "top_p"}, {1, NAN, 1, 0, 0, "top_p"},
        {1, 1, 0, 0, 0, "repeat_penalty"}, {1, 1, NAN, 0, 0, "repeat_penalty"}, {1, 1, 1, -1, 0, "top_k"},
        {1, 1, 1, 0, -2, "repeat_last_n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = sac_sampling_default_params();
        p.temperature = bad[i].temp;
        p.top_p = bad[i].top_p;
        p.repeat_penalty = bad[i].rp;
        p.top_k = bad[i].top_k;
        p.repeat_last_n = bad[i].last_n;
        CHECK(sac_sampler_init(ctx, &p) == SAC_ERR_ARG);
        CHECK_MSG(strstr(sac_context_errmsg(ctx), bad[i].word) != NULL, "message '%s'", sac_context_errmsg(ctx));
    }
    free(pr);
    free(count);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

/* ------------------------------------------------------------------------------------------ */

static void test_info(void) {
    test_model tm;
    test_model_spec s = test_spec("llama", SAC_TYPE_Q4_0);
    s.tied = 1;
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = load(&tm);
    if (!m) return;
    sac_model_info in;
    sac_model_get_info(m, &in);
    CHECK(!strcmp(in.architecture, "llama") && !strcmp(in.name, "saccade test model"));
    CHECK(in.n_vocab == s.n_vocab && in.n_ctx == s.n_ctx && in.n_embd == s.n_embd && in.n_ff == s.n_ff);
    CHECK(in.n_layer == s.n_layer && in.n_head == s.n_head && in.n_head_kv == s.n_head_kv);
    CHECK(in.head_dim == s.n_embd / s.n_head && in.rope_dim == s.rope_dim && in.tied_output == 1);
    CHECK(in.gguf_version == 3 && in.has_tokenizer == 0);
    uint64_t params = 0;
    for (int i = 0; i < tm.ref.n; i++) params += (uint64_t)(tm.ref.t[i].ne[0] * tm.ref.t[i].ne[1]);
    CHECK(in.n_params == params);
    CHECK(sac_model_n_tensors(m) == tm.ref.n);
    const char *name, *type;
    int32_t nd;
    int64_t dims[4];
    CHECK(sac_model_tensor(m, 0, &name, &type, &nd, dims) == SAC_OK);
    CHECK(!strcmp(name, "token_embd.weight") && !strcmp(type, "Q4_0") && nd == 2 && dims[1] == s.n_vocab);
    CHECK(sac_model_tensor(m, tm.ref.n, &name, &type, &nd, dims) == SAC_ERR_ARG);
    const char *key, *value;
    int found = 0;
    for (int i = 0; i < sac_model_n_metadata(m); i++) {
        CHECK(sac_model_metadata(m, i, &key, &value) == SAC_OK);
        if (!strcmp(key, "llama.block_count")) found = !strcmp(value, "2");
    }
    CHECK(found);
    int32_t tok;
    CHECK(sac_tokenize(m, "a", 1, 0, &tok, 1, &nd) == SAC_ERR_STATE);
    CHECK(strstr(sac_model_errmsg(m), "no tokenizer") != NULL);
    sac_model_free(m);
    test_model_free(&tm);
}

/* Replaces the first occurrence of `from` by `to` (same length) in the file bytes. */
static int patch(test_model *tm, const char *from, const char *to) {
    size_t n = strlen(from);
    for (size_t i = 0; i + n <= tm->size; i++)
        if (!memcmp(tm->bytes + i, from, n)) {
            memcpy(tm->bytes + i, to, n);
            return 1;
        }
    return 0;
}

static void expect_load_error(test_model *tm, sac_status want, const char *words) {
    sac_model *m = NULL;
    sac_status st = sac_model_load(tm->bytes, tm->size, 0, &m);
    CHECK_MSG(st == want, "status %s, want %s (%s)", sac_status_name(st), sac_status_name(want), sac_model_errmsg(m));
    CHECK_MSG(strstr(sac_model_errmsg(m), words) != NULL, "message '%s' lacks '%s'", sac_model_errmsg(m), words);
    /* a failed model refuses contexts with a message */
    sac_context *ctx = NULL;
    CHECK(sac_context_new(m, NULL, &ctx) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(ctx), "failed to load") != NULL);
    sac_context_free(ctx);
    sac_model_free(m);
}

static void test_bad_models(void) {
    struct { const char *arch, *from, *to; sac_status want; const char *words; } cases[] = {
        {"gpt2", "blk.1.ffn_up.weight", "blk.1.ffn_UP.weight", SAC_ERR_MODEL, "missing tensor 'blk.1.ffn_up.weight'"},
        {"llama", "blk.0.attn_k.weight", "blk.0.attn_K.weight", SAC_ERR_MODEL, "missing tensor 'blk.0.attn_k.weight'"},
        {"gpt2", "output_norm.bias", "output_norm.BIAS", SAC_ERR_MODEL, "missing tensor 'output_norm.bias'"},
        {"gpt2", "gpt2.block_count", "gpt2.block_COUNT", SAC_ERR_MODEL, "missing metadata key 'gpt2.block_count'"},
        {"llama", "llama.attention.layer_norm_rms_epsilon", "llama.attention.layer_norm_rms_EPSILON", SAC_ERR_MODEL,
         "llama.attention.layer_norm_rms_epsilon"},
        {"llama", "general.architecture", "general.ARCHITECTURE", SAC_ERR_MODEL, "general.architecture"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        test_model tm;
        test_model_spec s = test_spec(cases[i].arch, SAC_TYPE_F32);
        CHECK(test_model_make(&s, &tm) == 0);
        CHECK(patch(&tm, cases[i].from, cases[i].to));
        expect_load_error(&tm, cases[i].want, cases[i].words);
        test_model_free(&tm);
    }
    /* an architecture saccade does not know */
    test_model tm;
    test_model_spec s = test_spec("mamba", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    expect_load_error(&tm, SAC_ERR_UNSUPPORTED, "unknown architecture 'mamba'");
    test_model_free(&tm);
    /* a wrong shape: shrink ffn_up's row count by one (the data still fits, nothing overlaps) */
    s = test_spec("gpt2", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    const char *name = "blk.0.ffn_up.weight";
    for (size_t i = 0; i + strlen(name) < tm.size; i++)
        if (!memcmp(tm.bytes + i, name, strlen(name))) {
            uint8_t *dims = tm.bytes + i + strlen(name) + 4; /* after n_dims */
            uint64_t rows;
            memcpy(&rows, dims + 8, 8);
            CHECK(rows == (uint64_t)s.n_ff);
            rows--;
            memcpy(dims + 8, &rows, 8);
            break;
        }
    expect_load_error(&tm, SAC_ERR_MODEL, "has shape [64, 95], expected [64, 96]");
    test_model_free(&tm);
    /* heads that do not divide the width */
    s = test_spec("gpt2", SAC_TYPE_F32);
    s.n_head = 5;
    CHECK(test_model_make(&s, &tm) == 0);
    expect_load_error(&tm, SAC_ERR_MODEL, "not a multiple of head_count");
    test_model_free(&tm);
    /* not GGUF at all, and nothing */
    uint8_t junk[64] = "this is not a model file at all, just text................";
    sac_model *m;
    CHECK(sac_model_load(junk, sizeof junk, 0, &m) == SAC_ERR_FORMAT);
    CHECK(strlen(sac_model_errmsg(m)) > 10);
    sac_model_free(m);
    CHECK(sac_model_load(NULL, 0, 0, &m) == SAC_ERR_FORMAT);
    sac_model_free(m);
    CHECK(sac_model_load(junk, sizeof junk, 0x80, &m) == SAC_ERR_ARG);
    CHECK(strstr(sac_model_errmsg(m), "flags") != NULL);
    sac_model_free(m);
}

/* The real vocab-only files parse but are not models. */
static void test_vocab_file_is_not_a_model(void) {
    size_t size;
    void *buf = test_read_file("../shared/data/vocab/ggml-vocab-gpt-2.gguf", &size);
    if (!buf) SKIP("../shared/data/vocab/ggml-vocab-gpt-2.gguf not found (run from the repository root)");
    sac_model *m;
    CHECK(sac_model_load(buf, (size_t)size, 0, &m) == SAC_ERR_MODEL);
    CHECK_MSG(strstr(sac_model_errmsg(m), "missing") != NULL, "%s", sac_model_errmsg(m));
    sac_model_free(m);
    /* ... but load vocab-only, tokenize, and refuse contexts */
    CHECK(sac_model_load(buf, (size_t)size, SAC_LOAD_VOCAB_ONLY | SAC_LOAD_TAKE_OWNERSHIP, &m) == SAC_OK);
    sac_model_info in;
    sac_model_get_info(m, &in);
    CHECK(in.has_tokenizer == 1 && in.n_vocab == 50257);
    int32_t ids[8], n = 0;
    CHECK(sac_tokenize(m, "Hello world", 11, 0, ids, 8, &n) == SAC_OK);
    CHECK(n == 2 && ids[0] == 15496 && ids[1] == 995); /* as in ggml-vocab-gpt-2.gguf.out */
    sac_context *ctx;
    CHECK(sac_context_new(m, NULL, &ctx) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(ctx), "vocab-only") != NULL);
    CHECK(sac_context_memory(m, NULL) == 0);
    sac_context_free(ctx);
    sac_model_free(m);
}

static void test_bad_calls(void) {
    test_model tm;
    test_model_spec s = test_spec("gpt2", SAC_TYPE_Q8_0);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = load(&tm);
    if (!m) return;
    sac_context_params p = sac_context_default_params();
    p.n_ctx = 16;
    sac_context *ctx;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    int32_t bad[] = {1, 2, 97};
    CHECK(sac_eval(ctx, bad, 3, NULL, 0) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(ctx), "token id 97 at index 2 is out of range") != NULL);
    bad[2] = -1;
    CHECK(sac_eval(ctx, bad, 3, NULL, 0) == SAC_ERR_ARG);
    CHECK(sac_context_n_past(ctx) == 0);
    CHECK(sac_eval(ctx, prompt, 17, NULL, 0) == SAC_ERR_CONTEXT);
    CHECK(strstr(sac_context_errmsg(ctx), "do not fit") != NULL);
    CHECK(sac_eval(ctx, prompt, 0, NULL, 0) == SAC_ERR_ARG);
    CHECK(sac_eval(ctx, NULL, 3, NULL, 0) == SAC_ERR_ARG);
    CHECK(sac_eval(ctx, prompt, 3, NULL, 0x10) == SAC_ERR_ARG);
    /* the context stays usable after errors */
    CHECK(sac_eval(ctx, prompt, 16, NULL, 0) == SAC_OK);
    CHECK(sac_eval(ctx, prompt, 1, NULL, 0) == SAC_ERR_CONTEXT);
    sac_context_reset(ctx);
    CHECK(sac_eval(ctx, prompt, 1, NULL, 0) == SAC_OK && sac_context_n_past(ctx) == 1);
    sac_context_free(ctx);
    /* context parameters */
    p.n_ctx = s.n_ctx + 1;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(ctx), "learned positions") != NULL);
    CHECK(sac_context_memory(m, &p) == 0); /* refused parameters have no size: a budget must not hide why */
    sac_context_free(ctx);
    p.n_ctx = -1;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_ERR_ARG);
    CHECK(sac_context_memory(m, &p) == 0);
    sac_context_free(ctx);
    CHECK(sac_context_new(NULL, NULL, &ctx) == SAC_ERR_ARG);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

/* sac_context_memory bounds what sac_context_new allocates, with the matmul workspace counted
 * as it is allocated: BF16 weights convert a batch to f32 (4 bytes a value, more than the 3 an
 * int8-and-scales copy takes), here for a feed-forward wider than the slack of the rest. The
 * heap's growth is what the C library's allocator reports (under ASan, whose allocator is
 * another, the check holds trivially). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
static uint64_t heap_in_use(void) {
    const struct mallinfo2 mi = mallinfo2();
    return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd; /* (large blocks are mapped: hblkhd) */
}
#elif defined(__EMSCRIPTEN__)
#include <malloc.h>
static uint64_t heap_in_use(void) { return (uint64_t)(uint32_t)mallinfo().uordblks; }
#else
static uint64_t heap_in_use(void) { return 0; } /* (no mallinfo2: the check holds trivially) */
#endif

static void test_memory_estimate_bounds_allocation(void) {
    const uint32_t types[] = {SAC_TYPE_BF16, SAC_TYPE_Q8_0, SAC_TYPE_F32};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        test_model tm;
        test_model_spec s = test_spec("llama", types[i]);
        s.n_embd = 32;
        s.rope_dim = 8; /* the head's width */
        s.n_ff = 2048;
        s.n_ctx = 512;
        s.no_reference = 1;
        CHECK(test_model_make(&s, &tm) == 0);
        sac_model *m = load(&tm);
        if (!m) {
            test_model_free(&tm);
            continue;
        }
        sac_context_params p = sac_context_default_params();
        p.n_ctx = 512;
        p.n_batch = 512;
        const uint64_t estimate = sac_context_memory(m, &p);
        const uint64_t before = heap_in_use();
        sac_context *ctx = NULL;
        CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
        const uint64_t grown = heap_in_use() - before;
        CHECK_MSG(estimate >= grown, "%s: estimate %llu < %llu allocated", sac_type_name(types[i]),
                  (unsigned long long)estimate, (unsigned long long)grown);
        sac_context_free(ctx);
        sac_model_free(m);
        test_model_free(&tm);
    }
}

/* n_ctx = 0 is the model's training length capped at SAC_DEFAULT_N_CTX: a model declaring
 * 32 768 tokens gets 4096 unless the caller asks for more; sac_context_memory resolves
 * n_ctx = 0 the same way. */
static void test_default_context_length(void) {
    test_model tm;
    test_model_spec s = test_spec("llama", SAC_TYPE_Q8_0);
    s.n_ctx = 32768;
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = load(&tm);
    if (!m) return test_model_free(&tm);
    sac_context_params p = sac_context_default_params();
    CHECK(p.n_ctx == 0);
    sac_context *ctx = NULL;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    CHECK_MSG(sac_context_n_ctx(ctx) == SAC_DEFAULT_N_CTX, "default n_ctx %d", sac_context_n_ctx(ctx));
    CHECK(sac_eval(ctx, prompt, N_PROMPT, NULL, 0) == SAC_OK);
    sac_context_free(ctx);
    const uint64_t by_default = sac_context_memory(m, &p), none = sac_context_memory(m, NULL);
    p.n_ctx = SAC_DEFAULT_N_CTX;
    CHECK(sac_context_memory(m, &p) == by_default && none == by_default);
    p.capture_attention = 1;
    const uint64_t capture_default = sac_context_memory(m, &p);
    p.n_ctx = 0;
    CHECK(sac_context_memory(m, &p) == capture_default);
    /* the full length on request */
    p.capture_attention = 0;
    p.n_ctx = 32768;
    CHECK(sac_context_memory(m, &p) > by_default);
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK && sac_context_n_ctx(ctx) == 32768);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);

    /* a model trained on fewer tokens keeps its own length */
    s = test_spec("gpt2", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    m = load(&tm);
    if (!m) return test_model_free(&tm);
    CHECK(sac_context_new(m, NULL, &ctx) == SAC_OK && sac_context_n_ctx(ctx) == s.n_ctx);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

int main(void) {
    RUN(test_f32_models_match_reference);
    RUN(test_quantized_models_match_reference);
    RUN(test_more_quantized_types_match_reference);
    RUN(test_kv_cache_decode_matches_full_sequence);
    RUN(test_truncate_reuses_the_prefix);
    RUN(test_batch_size_does_not_change_logits);
    RUN(test_threads_give_identical_results);
    RUN(test_set_threads_between_calls);
    RUN(test_attention_capture_matches_reference);
    RUN(test_rope_variants_match_reference);
    RUN(test_padding_mask_hides_keys);
    RUN(test_attention_capture_switch);
    RUN(test_sampling);
    RUN(test_info);
    RUN(test_bad_models);
    RUN(test_vocab_file_is_not_a_model);
    RUN(test_bad_calls);
    RUN(test_default_context_length);
    RUN(test_memory_estimate_bounds_allocation);
    return check_summary("test_model");
}
