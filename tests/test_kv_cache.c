/* test_kv_cache — the bf16 and q8 KV caches (sac_context_params.kv_type): bf16 rounding to
 * nearest even with NaN kept, q8's blocks and scales, whole models against the float64
 * reference that rounds the same way, identical bits across thread counts and batch sizes,
 * what the probe records, the context's memory, the encoder–decoder cross-attention cache
 * staying f32, and refused types and shapes.
 *
 * Tolerance against the reference that rounds K and V the same way (relative to the largest
 * reference logit): bf16 1e-3 — the engine's K and V differ from the reference's by float
 * rounding (~1e-7), which moves a value across a bf16 rounding boundary only rarely; against
 * the reference that keeps K and V exact, the error is bf16's (~1e-3), at least 10× more.
 * q8 (which rounds the query too) the same 1e-3 (measured: ~3e-7), where its error against
 * exact K, V and Q is 4e-4 to 1e-2 (gemma to llama), at least 10× more. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "float_bits.h"
#include "kv_cache.h"
#include "reference.h"
#include "saccade.h"
#include "types.h"

static const int32_t prompt[] = {5, 17, 42, 3, 88, 61, 0, 96, 23, 23, 7, 50, 11, 64, 2, 39, 71, 8, 30, 45};
#define N_PROMPT ((int)(sizeof prompt / sizeof *prompt))

/* The rounding, independently: the f32 to 8 significant bits with nearbyint (ties to even). */
static double bf16_by_frexp(float x) {
    int e;
    const double f = frexp(x, &e);
    return ldexp(nearbyint(ldexp(f, 8)), e - 8);
}

static void test_rounding(void) {
    const struct { uint32_t in; uint16_t out; } cases[] = {
        {0x3f800000, 0x3f80}, /* 1 */
        {0x3f808000, 0x3f80}, /* 1 + half an ulp: tie, to the even 1 */
        {0x3f818000, 0x3f82}, /* a tie above an odd value rounds up */
        {0x3f807fff, 0x3f80}, {0x3f808001, 0x3f81},
        {0xbfc00000, 0xbfc0}, /* −1.5 */
        {0x7f800000, 0x7f80}, {0xff800000, 0xff80}, /* ±inf */
        {0x7f7fffff, 0x7f80}, /* FLT_MAX rounds to inf */
        {0x7f7f7fff, 0x7f7f}, /* the largest that stays finite */
        {0x00000000, 0x0000}, {0x80000000, 0x8000}, /* ±0 */
        {0x00008000, 0x0000}, {0x00018000, 0x0002}, /* subnormal ties */
        {0x007fffff, 0x0080}, /* the largest subnormal rounds up to the smallest normal */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const uint16_t got = sac_kv_bf16_round(float_of(cases[i].in));
        CHECK_MSG(got == cases[i].out, "0x%08x → 0x%04x, want 0x%04x", cases[i].in, got, cases[i].out);
    }
    /* NaNs stay NaNs, sign kept, even those whose payload is all in the low 16 bits */
    const uint32_t nans[] = {0x7fc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0xffc12345};
    for (size_t i = 0; i < sizeof nans / sizeof *nans; i++) {
        const float back = sac_kv_bf16_to_f32(sac_kv_bf16_round(float_of(nans[i])));
        CHECK_MSG(isnan(back) && (bits_of(back) >> 31) == (nans[i] >> 31), "NaN 0x%08x became 0x%08x", nans[i],
                  bits_of(back));
    }
    /* a million normal floats of every exponent against the independent rounding */
    uint32_t rng = 7;
    int wrong = 0;
    for (int i = 0; i < 1000000; i++) {
        rng = rng * 1664525u + 1013904223u;
        uint32_t u = rng;
        const uint32_t exponent = (u >> 23) & 0xff;
        if (exponent == 0 || exponent >= 0xfe) continue; /* subnormals, inf/NaN, and overflow: above */
        const float x = float_of(u);
        wrong += (double)sac_kv_bf16_to_f32(sac_kv_bf16_round(x)) != bf16_by_frexp(x);
    }
    CHECK_MSG(wrong == 0, "%d of a million floats rounded differently from nearbyint", wrong);
}

static void test_store_rounds_the_source(void) {
    float src[4] = {1.0f, float_of(0x3f818000), -3.14159f, 1e-3f}, copy[4];
    memcpy(copy, src, sizeof src);
    uint16_t cache[12] = {0};
    sac_kv_store(cache, SAC_KV_BF16, 2, src, 4); /* row 2 of rows of 4 */
    CHECK(cache[0] == 0 && cache[7] == 0);
    for (int i = 0; i < 4; i++) {
        CHECK(cache[8 + i] == sac_kv_bf16_round(copy[i]));
        CHECK(bits_of(src[i]) == (uint32_t)cache[8 + i] << 16);
    }
    float f32[8] = {0};
    memcpy(src, copy, sizeof src);
    sac_kv_store(f32, SAC_KV_F32, 1, src, 4);
    CHECK(!memcmp(f32 + 4, copy, sizeof copy) && !memcmp(src, copy, sizeof copy));
}

/* q8 rounding: each block's scale is its largest |value| / 127, every value the nearest
 * multiple of it (the largest ±127), an all-zero block scale 0, a block with inf or NaN a NaN
 * scale; a stored row is its scales then its values, and the source becomes scale × int8. */
static void test_q8_rounding(void) {
    float x[40];
    for (int i = 0; i < 40; i++) x[i] = (float)sin(i * 1.7) * (i % 7 + 1);
    int8_t q[40];
    const float scale = sac_kv_q8_round(x, 32, q);
    float amax = 0;
    int worst = 0, bad_bound = 0;
    for (int i = 0; i < 32; i++) amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    CHECK(scale == amax / 127.0f);
    for (int i = 0; i < 32; i++) {
        const double r = (double)x[i] / scale; /* q[i] is r to the nearest integer */
        bad_bound += fabs(r - q[i]) > 0.5 + 1e-5;
        if (abs(q[i]) > worst) worst = abs(q[i]);
    }
    CHECK_MSG(bad_bound == 0 && worst == 127, "%d values off by more than half a step; largest |q| %d", bad_bound, worst);
    const float zeros[5] = {0}, with_inf[3] = {1.0f, INFINITY, 2.0f}, with_nan[3] = {NAN, 1.0f, 0.0f};
    memset(q, 9, sizeof q);
    CHECK(sac_kv_q8_round(zeros, 5, q) == 0.0f && !q[0] && !q[4]);
    const float tiny[3] = {0.0f, 1e-45f, -1e-45f}; /* the scale underflows: zeros, not 0 / 0 */
    memset(q, 9, sizeof q);
    CHECK(sac_kv_q8_round(tiny, 3, q) == 0.0f && !q[0] && !q[1] && !q[2]);
    CHECK(isnan(sac_kv_q8_round(with_inf, 3, q)) && !q[0] && !q[2]);
    CHECK(isnan(sac_kv_q8_round(with_nan, 3, q)) && !q[1]);

    /* a row of 40 values: two blocks (32 and 8), 8 bytes of scales, then 40 int8 */
    CHECK(sac_kv_row_bytes(SAC_KV_Q8, 40) == 48 && sac_kv_row_bytes(SAC_KV_Q8, 64) == 72 &&
          sac_kv_row_bytes(SAC_KV_Q8, 5) == 9 && sac_kv_row_bytes(SAC_KV_BF16, 64) == 128);
    unsigned char cache[3 * 48];
    memset(cache, 0xee, sizeof cache);
    float src[40];
    memcpy(src, x, sizeof src);
    sac_kv_store(cache, SAC_KV_Q8, 1, src, 40);
    CHECK(cache[47] == 0xee && cache[96] == 0xee); /* rows 0 and 2 untouched */
    float s0, s1;
    memcpy(&s0, cache + 48, 4), memcpy(&s1, cache + 52, 4);
    int8_t q0[32], q1[8];
    CHECK(s0 == sac_kv_q8_round(x, 32, q0) && s1 == sac_kv_q8_round(x + 32, 8, q1));
    CHECK(!memcmp(cache + 56, q0, 32) && !memcmp(cache + 88, q1, 8));
    int wrong = 0;
    for (int i = 0; i < 40; i++) wrong += src[i] != (i < 32 ? s0 * (float)q0[i] : s1 * (float)q1[i - 32]);
    CHECK_MSG(wrong == 0, "%d source values are not what the cache holds", wrong);
}

static sac_context *context(sac_model *m, int threads, int batch, int32_t kv_type, int qk) {
    sac_context_params p = sac_context_default_params();
    p.n_threads = threads;
    p.n_batch = batch;
    p.kv_type = kv_type;
    p.capture_qk = qk;
    sac_context *ctx = NULL;
    const sac_status st = sac_context_new(m, &p, &ctx);
    CHECK_MSG(st == SAC_OK, "context failed: %s", sac_context_errmsg(ctx));
    if (st != SAC_OK) sac_context_free(ctx), ctx = NULL;
    return ctx;
}

/* Every architecture at F32 and one quantized type with a bf16 or q8 cache, against the
 * reference with and without the same rounding; identical bits for 1, 2 and 3 threads and
 * batches of 20, 7 and 1 (token by token through the cache). one_head: a single head of 64
 * (q8: two whole blocks, the SIMD128 build's block passes) instead of the spec's four of 16. */
static void check_models(int32_t kv_type, double tol_f32, double tol_q8_0, double exact_factor, int one_head) {
    const char *archs[] = {"gpt2", "llama", "qwen2", "gemma", "phi3"};
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_Q8_0};
    const char *kv = sac_kv_type_name(kv_type);
    for (int a = 0; a < 5; a++)
        for (int t = 0; t < 2; t++) {
            test_model_spec s = test_spec(archs[a], types[t]);
            if (one_head) s.n_head = s.n_head_kv = 1;
            test_model tm;
            CHECK(test_model_make(&s, &tm) == 0);
            sac_model *m = NULL;
            CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
            const size_t n = (size_t)N_PROMPT * s.n_vocab;
            float *first = malloc(n * sizeof *first);
            double *ref = malloc(n * sizeof *ref);
            const int threads[] = {1, 2, 3}, batches[] = {20, 7, 1};
            for (int r = 0; r < 3; r++) {
                sac_context *ctx = context(m, threads[r], batches[r], kv_type, 0);
                if (!ctx) continue;
                CHECK(sac_context_kv_type(ctx) == kv_type);
                if (batches[r] == 1) /* token by token: each call's logits row is that token's */
                    for (int i = 0; i < N_PROMPT; i++) {
                        CHECK(sac_eval(ctx, prompt + i, 1, NULL, 0) == SAC_OK);
                        memcpy(ref, sac_logits(ctx, NULL, NULL), s.n_vocab * sizeof(float)); /* scratch */
                        CHECK_MSG(!memcmp(ref, first + (size_t)i * s.n_vocab, s.n_vocab * sizeof(float)),
                                  "%s %s, %s: token %d alone differs from the batch", archs[a], sac_type_name(types[t]), kv, i);
                    }
                else {
                    CHECK(sac_eval(ctx, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
                    const float *lg = sac_logits(ctx, NULL, NULL);
                    if (r == 0) memcpy(first, lg, n * sizeof *first);
                    else CHECK_MSG(!memcmp(first, lg, n * sizeof *first), "%s %s, %s: %d threads, batch %d differ",
                                   archs[a], sac_type_name(types[t]), kv, threads[r], batches[r]);
                }
                sac_context_free(ctx);
            }
            ref_probe_opts.kv_bf16 = kv_type == SAC_KV_BF16, ref_probe_opts.kv_q8 = kv_type == SAC_KV_Q8;
            ref_forward(&tm.ref, prompt, N_PROMPT, NULL, ref, NULL);
            ref_probe_opts.kv_bf16 = ref_probe_opts.kv_q8 = 0;
            const double rounded = ref_rel_error(first, ref, n);
            ref_forward(&tm.ref, prompt, N_PROMPT, NULL, ref, NULL);
            const double exact = ref_rel_error(first, ref, n);
            const double tol = types[t] == SAC_TYPE_F32 ? tol_f32 : tol_q8_0; /* Q8_0: its activations' */
            printf("  %s %s, %s cache, head_dim %d: relative error %.3g against %s K/V (tolerance %g), %.3g against exact\n",
                   archs[a], sac_type_name(types[t]), kv, s.n_embd / s.n_head, rounded, kv, tol, exact);
            CHECK_MSG(rounded <= tol, "%s %s, %s: relative error %.3g", archs[a], sac_type_name(types[t]), kv, rounded);
            if (types[t] == SAC_TYPE_F32) /* the cache really rounds, and the reference knows how */
                CHECK_MSG(exact >= exact_factor * rounded, "%s, %s: error %.3g against exact K/V, %.3g against rounded",
                          archs[a], kv, exact, rounded);
            free(first);
            free(ref);
            sac_model_free(m);
            test_model_free(&tm);
        }
}

static void test_models_match_rounding_reference(void) {
    check_models(SAC_KV_BF16, 1e-3, 3e-2, 10, 0);
    check_models(SAC_KV_Q8, 1e-3, 3e-2, 10, 0);
    check_models(SAC_KV_Q8, 1e-3, 3e-2, 10, 1);
}

/* The probe records the keys the bf16 or q8 cache holds (for bf16, q·k then reproduces the
 * scores; q8 also rounds the query); the encoder–decoder cross-attention keys stay f32: a bf16
 * or q8 context records the f32 context's. */
static void test_probe_keys_and_cross_cache(void) {
    test_model_spec s = test_spec("encdec", SAC_TYPE_F32);
    test_model tm;
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    sac_context *c32 = context(m, 2, 0, SAC_KV_F32, 1), *c16 = context(m, 2, 0, SAC_KV_BF16, 1);
    const int32_t src[] = {4, 9, 16, 25, 36, 49}, tgt[] = {1, 8, 27, 64};
    if (c32 && c16) {
        float k32[64 * 64], k16[64 * 64];
        int32_t nq, nk, hd;
        for (int c = 0; c < 2; c++) {
            sac_context *ctx = c ? c16 : c32;
            CHECK(sac_encode(ctx, src, 6, NULL) == SAC_OK);
            CHECK(sac_eval(ctx, tgt, 4, NULL, 0) == SAC_OK);
        }
        for (int l = 0; l < s.n_layer; l++) {
            CHECK(sac_context_qk(c32, SAC_ATTENTION_CROSS, l, 1, NULL, 0, k32, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            CHECK(sac_context_qk(c16, SAC_ATTENTION_CROSS, l, 1, NULL, 0, k16, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            CHECK_MSG(nk == 6 && !memcmp(k32, k16, (size_t)(nk * hd) * sizeof(float)), "layer %d: cross keys differ", l);
            CHECK(sac_context_qk(c16, SAC_ATTENTION_SELF, l, 1, NULL, 0, k16, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            int unrounded = 0, changed = 0;
            CHECK(sac_context_qk(c32, SAC_ATTENTION_SELF, l, 1, NULL, 0, k32, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            for (int i = 0; i < nk * hd; i++) unrounded += (bits_of(k16[i]) & 0xffff) != 0, changed += k16[i] != k32[i];
            CHECK_MSG(nk == 4 && unrounded == 0 && changed > 0, "layer %d: %d self keys not bf16, %d rounded", l,
                      unrounded, changed);
        }
        /* a q8 context records its cache's keys too: each head's row is whole multiples of its
         * largest |value| / 127 (head_dim 16: one block); its cross keys are f32's */
        sac_context *cq = context(m, 2, 0, SAC_KV_Q8, 1);
        CHECK(cq && sac_encode(cq, src, 6, NULL) == SAC_OK && sac_eval(cq, tgt, 4, NULL, 0) == SAC_OK);
        for (int l = 0; cq && l < s.n_layer; l++) {
            CHECK(sac_context_qk(cq, SAC_ATTENTION_CROSS, l, 1, NULL, 0, k16, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            CHECK(sac_context_qk(c32, SAC_ATTENTION_CROSS, l, 1, NULL, 0, k32, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            CHECK_MSG(!memcmp(k32, k16, (size_t)(nk * hd) * sizeof(float)), "layer %d: q8 context's cross keys differ", l);
            CHECK(sac_context_qk(cq, SAC_ATTENTION_SELF, l, 1, NULL, 0, k16, 64 * 64, &nq, &nk, &hd) == SAC_OK);
            int off_grid = 0;
            for (int r = 0; r < nk; r++) {
                float amax = 0;
                for (int i = 0; i < hd; i++) amax = fabsf(k16[r * hd + i]) > amax ? fabsf(k16[r * hd + i]) : amax;
                for (int i = 0; amax > 0 && i < hd; i++) {
                    const double steps = k16[r * hd + i] / (amax / 127.0);
                    off_grid += fabs(steps - nearbyint(steps)) > 1e-3;
                }
            }
            CHECK_MSG(nk == 4 && off_grid == 0, "layer %d: %d recorded q8 keys are not on their row's grid", l, off_grid);
        }
        sac_context_free(cq);
        /* the cross cache is f32 either way: memory differs by half the self cache only */
        sac_context_params p = sac_context_default_params();
        const uint64_t f32 = sac_context_memory(m, &p);
        p.kv_type = SAC_KV_BF16;
        const uint64_t bf16 = sac_context_memory(m, &p);
        const uint64_t half_self = 2ull * s.n_layer * sac_context_n_ctx(c16) * s.n_embd * 2;
        CHECK_MSG(f32 - bf16 == half_self, "memory %llu (f32) vs %llu (bf16), want %llu less", (unsigned long long)f32,
                  (unsigned long long)bf16, (unsigned long long)half_self);
    }
    sac_context_free(c32);
    sac_context_free(c16);
    sac_model_free(m);
    test_model_free(&tm);
}

/* p is refused before anything is allocated (sac_context_memory answers 0, so no budget check
 * hides the verdict), with a message holding both words. */
static void check_refused(const sac_model *m, const sac_context_params *p, const char *word, const char *other) {
    CHECK(sac_context_memory(m, p) == 0);
    sac_context *ctx = NULL;
    CHECK(sac_context_new(m, p, &ctx) == SAC_ERR_ARG);
    CHECK_MSG(ctx && strstr(sac_context_errmsg(ctx), word) && strstr(sac_context_errmsg(ctx), other), "%s",
              ctx ? sac_context_errmsg(ctx) : "no context");
    sac_context_free(ctx);
}

static void test_types_and_memory(void) {
    CHECK(!strcmp(sac_kv_type_name(SAC_KV_F32), "f32") && !strcmp(sac_kv_type_name(SAC_KV_BF16), "bf16") &&
          !strcmp(sac_kv_type_name(SAC_KV_Q8), "q8"));
    CHECK(sac_kv_type_name(3) == NULL && sac_kv_type_name(-1) == NULL);
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    test_model tm;
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    sac_context_params p = sac_context_default_params();
    CHECK(p.kv_type == SAC_KV_F32);
    p.n_ctx = 40;
    const uint64_t f32 = sac_context_memory(m, &p);
    p.kv_type = SAC_KV_BF16;
    const uint64_t bf16 = sac_context_memory(m, &p);
    const uint64_t kv_values = 2ull * s.n_layer * 40 * s.n_head_kv * (s.n_embd / s.n_head);
    CHECK_MSG(f32 - bf16 == kv_values * 2, "memory %llu vs %llu", (unsigned long long)f32, (unsigned long long)bf16);
    p.kv_type = SAC_KV_Q8; /* head_dim 16: a row is one scale and 16 bytes, 20 bytes for f32's 64 */
    const uint64_t q8 = sac_context_memory(m, &p), rows = kv_values / (s.n_embd / s.n_head);
    CHECK_MSG(f32 - q8 == rows * (64 - 20), "memory %llu vs %llu", (unsigned long long)f32, (unsigned long long)q8);
    /* refused with a message that names the types */
    const int32_t bad[] = {3, -1, 16};
    for (int i = 0; i < 3; i++) {
        p.kv_type = bad[i];
        check_refused(m, &p, "kv_type", "bf16");
    }
    sac_model_free(m);
    test_model_free(&tm);

    /* q8 rounds the query on the stack: a head_dim over SAC_KV_Q8_MAX_HEAD_DIM is refused */
    s = test_spec("llama", SAC_TYPE_F32);
    s.n_embd = 2 * SAC_KV_Q8_MAX_HEAD_DIM, s.n_head = s.n_head_kv = 1;
    CHECK(test_model_make(&s, &tm) == 0);
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    p = sac_context_default_params();
    p.kv_type = SAC_KV_Q8;
    check_refused(m, &p, "q8", "512");
    sac_context *ctx = NULL;
    p.kv_type = SAC_KV_BF16;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
    /* the largest it takes */
    s.n_embd = SAC_KV_Q8_MAX_HEAD_DIM;
    CHECK(test_model_make(&s, &tm) == 0);
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    p.kv_type = SAC_KV_Q8;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    CHECK(sac_eval(ctx, prompt, 4, NULL, 0) == SAC_OK);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

int main(void) {
    RUN(test_rounding);
    RUN(test_store_rounds_the_source);
    RUN(test_q8_rounding);
    RUN(test_models_match_rounding_reference);
    RUN(test_probe_keys_and_cross_cache);
    RUN(test_types_and_memory);
    return check_summary("test_kv_cache");
}
