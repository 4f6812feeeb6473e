/* test_types.c — the type table's entries, f16 conversion, and the Q8_0/Q4_0 codecs against
 * references written here in float64 (one IEEE operation at a time, each rounded to float
 * where ggml's code rounds). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "float_bits.h"
#include "types.h"

/* ------------------------------------------------------------------------------------------
 * References
 * ---------------------------------------------------------------------------------------- */

/* The value a half encodes, from the IEEE 754 definition. NaN for NaNs. */
static double ref_half_value(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v;
    if (exp == 31) v = mant ? NAN : INFINITY;
    else if (exp == 0) v = ldexp(mant, -24);
    else v = ldexp(1024 + mant, exp - 25);
    return sign ? -v : v;
}

/* Nearest half to a finite or infinite x, ties to even (nearbyint rounds to even). */
static uint16_t ref_half_of(double x) {
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (a >= 65520.0) return sign | 0x7C00; /* halfway between 65504 and 2^16 rounds up */
    if (a < ldexp(1, -14)) return sign | (uint16_t)nearbyint(a * ldexp(1, 24)); /* 0x400: min normal */
    int e;
    frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): a in [2^(e-1), 2^e) */
    e -= 1;
    double m = nearbyint(a * ldexp(1, 10 - e)); /* 1024..2048 */
    if (m == 2048) {
        m = 1024;
        e++;
    }
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(m - 1024);
}

/* Deterministic pseudo-random numbers (xorshift), so failures reproduce. */
static uint32_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

static float rng_float(uint64_t *s, float scale) { /* uniform in [-scale, scale) */
    return scale * ((float)(rng_next(s) & 0xFFFFFF) / 8388608.0f - 1.0f);
}

/* ggml's Q8_0 rules, one f32 operation at a time, carried out in double and rounded to float
 * (exact for + - * /: double has more than 2 * 24 + 2 bits). */
static void ref_quantize_q8_0(const float *x, block_q8_0 *out) {
    double amax = 0;
    for (int j = 0; j < SAC_QK; j++) amax = fabs(x[j]) > amax ? fabs(x[j]) : amax;
    float d = (float)(amax / 127.0);
    float id = d != 0 ? (float)(1.0 / d) : 0.0f;
    out->d = ref_half_of(d);
    for (int j = 0; j < SAC_QK; j++) {
        double v = (float)((double)x[j] * id);
        double r = floor(fabs(v) + 0.5); /* round half away from zero */
        out->qs[j] = (int8_t)(v < 0 ? -r : r);
    }
}

static void ref_quantize_q4_0(const float *x, block_q4_0 *out) {
    double amax = 0, max = 0;
    for (int j = 0; j < SAC_QK; j++) {
        if (amax < fabs(x[j])) { /* the first of equal magnitudes wins */
            amax = fabs(x[j]);
            max = x[j];
        }
    }
    float d = (float)(max / -8.0);
    float id = d != 0 ? (float)(1.0 / d) : 0.0f;
    out->d = ref_half_of(d);
    int q[SAC_QK];
    for (int j = 0; j < SAC_QK; j++) {
        double v = (float)((double)(float)((double)x[j] * id) + 8.5);
        int t = (int)trunc(v);
        q[j] = t > 15 ? 15 : t;
    }
    for (int j = 0; j < SAC_QK / 2; j++) out->qs[j] = (uint8_t)(q[j] | (q[j + 16] << 4));
}

static void ref_quantize_q5_0(const float *x, block_q5_0 *out) {
    double amax = 0, max = 0;
    for (int j = 0; j < SAC_QK; j++) {
        if (amax < fabs(x[j])) {
            amax = fabs(x[j]);
            max = x[j];
        }
    }
    float d = (float)(max / -16.0);
    float id = d != 0 ? (float)(1.0 / d) : 0.0f;
    out->d = ref_half_of(d);
    uint32_t qh = 0;
    for (int j = 0; j < SAC_QK; j++) {
        double v = (float)((double)(float)((double)x[j] * id) + 16.5);
        int t = (int)trunc(v);
        int q = t > 31 ? 31 : t;
        if (j < 16) out->qs[j] = (uint8_t)(q & 15);
        else out->qs[j - 16] |= (uint8_t)((q & 15) << 4);
        qh |= (uint32_t)(q >> 4) << j;
    }
    memcpy(out->qh, &qh, 4); /* little-endian hosts only, as the GGUF reader */
}

static int same_value(float got, double want) { return isnan(want) ? isnan(got) : (double)got == want; }

/* ggml's Q4_1 (bits 4) and Q5_1 (bits 5) rules in float64: min and max of the block,
 * d = (max - min) / (2^bits - 1), q = trunc(f32(f32(x - min) * f32(1/d)) + 0.5), Q4_1's
 * clamped at 15. Levels into q[]. */
static void ref_quantize_min(const float *x, int bits, uint16_t *d16, uint16_t *m16, int q[SAC_QK]) {
    double min = 3.40282347e+38, max = -3.40282347e+38;
    for (int j = 0; j < SAC_QK; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    float d = (float)((double)(float)(max - min) / ((1 << bits) - 1));
    float id = d != 0 ? (float)(1.0 / d) : 0.0f;
    *d16 = ref_half_of(d);
    *m16 = ref_half_of(min);
    for (int j = 0; j < SAC_QK; j++) {
        double v = (float)((double)(float)((double)(float)(x[j] - min) * id) + 0.5);
        int t = (int)trunc(v);
        q[j] = bits == 4 && t > 15 ? 15 : t;
    }
}

static void ref_quantize_q4_1(const float *x, block_q4_1 *out) {
    int q[SAC_QK];
    ref_quantize_min(x, 4, &out->d, &out->m, q);
    for (int j = 0; j < 16; j++) out->qs[j] = (uint8_t)(q[j] | q[j + 16] << 4);
}

static void ref_quantize_q5_1(const float *x, block_q5_1 *out) {
    int q[SAC_QK];
    ref_quantize_min(x, 5, &out->d, &out->m, q);
    uint32_t qh = 0;
    for (int j = 0; j < 16; j++) out->qs[j] = (uint8_t)((q[j] & 15) | (q[j + 16] & 15) << 4);
    for (int j = 0; j < SAC_QK; j++) qh |= (uint32_t)((q[j] >> 4) & 1) << j;
    memcpy(out->qh, &qh, 4);
}

/* Value j of Q4_1/Q5_1 blocks by ggml's formula: f32(f32(q d) + m). */
static double ref_value_min(uint16_t d, uint16_t m, int q) {
    return (double)(float)((double)(float)(q * ref_half_value(d)) + ref_half_value(m));
}

static int q5_level(const uint8_t qh[4], const uint8_t qs[16], int j) {
    int nib = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
    return nib | ((qh[j / 8] >> (j % 8)) & 1) << 4;
}

/* Value j of a Q5_0 block by ggml's formula: (nibble | fifth bit << 4) - 16, times d. */
static double ref_value_q5_0(const block_q5_0 *b, int j) {
    uint32_t qh = (uint32_t)b->qh[0] | (uint32_t)b->qh[1] << 8 | (uint32_t)b->qh[2] << 16 | (uint32_t)b->qh[3] << 24;
    int nib = j < 16 ? b->qs[j] & 15 : b->qs[j - 16] >> 4;
    int q = nib | (int)((qh >> j) & 1) << 4;
    return (double)(float)((q - 16) * (double)(float)ref_half_value(b->d));
}

/* ------------------------------------------------------------------------------------------
 * f16
 * ---------------------------------------------------------------------------------------- */

static void test_f16_to_f32_all_halves(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sac_f16_to_f32((sac_f16)h);
        double want = ref_half_value((uint16_t)h);
        int ok;
        if (isnan(want)) /* NaN: sign and payload carried into the top mantissa bits */
            ok = isnan(f) && (bits_of(f) >> 31) == (h >> 15) &&
                 ((bits_of(f) >> 13) & 1023) == (h & 1023) && (bits_of(f) & 0x1FFF) == 0;
        else
            ok = (double)f == want && !signbit(f) == !signbit(want);
        if (!ok && bad++ < 5) CHECK_MSG(0, "half 0x%04x -> %.9g (bits 0x%08x), want %.9g", h, f, bits_of(f), want);
    }
    CHECK_MSG(bad == 0, "%d halves converted wrongly", bad);
}

static void test_f16_round_trip(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        sac_f16 back = sac_f32_to_f16(sac_f16_to_f32((sac_f16)h));
        int is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
        /* a NaN comes back quiet, with its sign and payload */
        sac_f16 want = is_nan ? (sac_f16)(h | 0x200) : (sac_f16)h;
        if (back != want && bad++ < 5) CHECK_MSG(0, "0x%04x came back as 0x%04x", h, back);
    }
    CHECK(bad == 0);
}

static void check_to_f16(float f, int *bad) {
    sac_f16 got = sac_f32_to_f16(f);
    uint16_t want = ref_half_of(f);
    if (got != want && (*bad)++ < 5)
        CHECK_MSG(0, "%.9g (0x%08x) -> 0x%04x, want 0x%04x", f, bits_of(f), got, want);
}

/* Every half, the midpoints between neighbouring halves (ties) and the floats just either side
 * of each midpoint, plus a sweep through all f32 exponents. */
static void test_f32_to_f16_rounding(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 0x7C00; h++) {
        for (int s = 0; s < 2; s++) {
            double lo = ref_half_value((uint16_t)h), hi = h < 0x7BFF ? ref_half_value((uint16_t)(h + 1)) : 65536.0;
            double sign = s ? -1.0 : 1.0;
            float mid = (float)((lo + hi) / 2); /* exact: halves have 11 significant bits */
            check_to_f16((float)(sign * lo), &bad);
            check_to_f16((float)(sign * mid), &bad);
            check_to_f16((float)(sign * nextafterf(mid, 0)), &bad);
            check_to_f16((float)(sign * nextafterf(mid, INFINITY)), &bad);
        }
    }
    for (uint64_t u = 0; u < 0x7F800000u; u += 997) {
        check_to_f16(float_of((uint32_t)u), &bad);
        check_to_f16(float_of((uint32_t)u | 0x80000000u), &bad);
    }
    check_to_f16(INFINITY, &bad);
    check_to_f16(-INFINITY, &bad);
    check_to_f16(65519.996f, &bad);
    check_to_f16(65520.0f, &bad);
    check_to_f16(1e30f, &bad);
    check_to_f16(ldexpf(1, -25), &bad); /* tie between 0 and the smallest subnormal: 0 */
    check_to_f16(nextafterf(ldexpf(1, -25), 1), &bad);
    CHECK_MSG(bad == 0, "%d floats rounded wrongly", bad);
    CHECK(sac_f32_to_f16(-0.0f) == 0x8000);
    CHECK(sac_f32_to_f16(65504.0f) == 0x7BFF);
    CHECK(sac_f32_to_f16(1.0f) == 0x3C00);
    sac_f16 n = sac_f32_to_f16(NAN);
    CHECK((n & 0x7C00) == 0x7C00 && (n & 0x3FF) != 0);
    CHECK(isnan(sac_f16_to_f32(sac_f32_to_f16(-NAN))));
}

/* ------------------------------------------------------------------------------------------
 * bf16
 * ---------------------------------------------------------------------------------------- */

/* Every bfloat16 decodes to the f32 with those 16 high bits; f32 → bf16 is nearest-even (the
 * midpoints and their neighbours, over every exponent), inf stays inf, a NaN stays NaN
 * (quiet, ggml sets bit 6); the codecs do this per element. */
static void test_bf16(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_BF16);
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sac_bf16_to_f32((sac_bf16)h);
        bad += bits_of(f) != h << 16;
        if ((h & 0x7F80) != 0x7F80 || !(h & 0x7F)) { /* finite or inf: the round trip is exact */
            bad += sac_f32_to_bf16(f) != h;
            /* the midpoint to the next bf16 (away from zero) rounds to the even one of the two */
            if ((h & 0x7FFF) < 0x7F7F) {
                float mid = float_of((h << 16) | 0x8000);
                uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
                bad += sac_f32_to_bf16(mid) != even;
                bad += sac_f32_to_bf16(nextafterf(mid, 0)) != h;
                bad += sac_f32_to_bf16(float_of((h << 16) | 0x8001)) != (uint16_t)(h + 1);
            }
        } else {
            uint16_t q = sac_f32_to_bf16(f);
            bad += (q & 0x7F80) != 0x7F80 || !(q & 0x40) || (q & 0x8000) != (h & 0x8000);
        }
    }
    CHECK_MSG(bad == 0, "%d bf16 conversions wrong", bad);
    CHECK(sac_f32_to_bf16(3.0e38f) == 0x7F62 && sac_f32_to_bf16(3.4028235e38f) == 0x7F80); /* rounds up to inf */
    float x[3] = {1.0f, -2.5f, 1.00390625f}, y[3]; /* the last one a tie: to even, 1.0 */
    sac_bf16 h[3];
    t->from_float(x, h, 3);
    t->to_float(h, y, 3);
    CHECK(h[0] == 0x3F80 && h[1] == 0xC020 && h[2] == 0x3F80 && y[0] == 1.0f && y[1] == -2.5f && y[2] == 1.0f);
}

/* ------------------------------------------------------------------------------------------
 * Blocks
 * ---------------------------------------------------------------------------------------- */

static void test_block_layout(void) {
    CHECK(sizeof(block_q8_0) == 34);
    CHECK(sizeof(block_q4_0) == 18);
    CHECK(sizeof(block_q5_0) == 22 && sizeof(block_q4_K) == 144 && sizeof(block_q6_K) == 210);
    CHECK(sizeof(block_q5_K) == 176 && sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110);
    CHECK(sizeof(block_q8_K) == 292 && sizeof(block_q4_1) == 20 && sizeof(block_q5_1) == 24 && sizeof(block_q8_1) == 36);
    const sac_type_traits *t;
    CHECK((t = sac_type_traits_get(SAC_TYPE_F32)) && t->block_size == 1 && t->type_size == 4 && !strcmp(t->name, "F32"));
    CHECK((t = sac_type_traits_get(SAC_TYPE_F16)) && t->block_size == 1 && t->type_size == 2 && !strcmp(t->name, "F16"));
    CHECK((t = sac_type_traits_get(SAC_TYPE_Q4_0)) && t->block_size == 32 && t->type_size == 18 && !strcmp(t->name, "Q4_0"));
    CHECK((t = sac_type_traits_get(SAC_TYPE_Q8_0)) && t->block_size == 32 && t->type_size == 34 && !strcmp(t->name, "Q8_0"));
    CHECK(sac_type_traits_get(20) == NULL); /* IQ4_NL */
    CHECK((t = sac_type_traits_get(SAC_TYPE_BF16)) && t->block_size == 1 && t->type_size == 2 && !strcmp(t->name, "BF16"));
    CHECK(sac_type_traits_get(0xFFFFFFFFu) == NULL);
}

/* Every implemented entry is complete, so that sac_matmul, the loader and the quantizer can
 * use any of its fields; its activation type is implemented and either converts activations
 * (both functions) or is F32 (the kernels read them as given). */
static void test_table_entries(void) {
    int n_implemented = 0;
    for (uint32_t type = 0; type < 300; type++) {
        const sac_type_traits *t = sac_type_traits_get(type);
        if (!t) continue;
        n_implemented++;
        CHECK_MSG(t->name && !strcmp(t->name, sac_type_name(type)), "type %u: name", type);
        CHECK_MSG(t->block_size > 0 && t->type_size > 0, "type %u: sizes", type);
        CHECK_MSG(t->align > 0 && (t->align & (t->align - 1)) == 0 && t->type_size % t->align == 0 && 16 % t->align == 0,
                  "type %u: alignment %zu", type, t->align); /* (the data section starts at 16) */
        CHECK_MSG(t->to_float && t->from_float && t->finite && t->matvec && t->matmat,
                  "type %u: a codec, finite check or kernel is missing", type);
        const sac_type_traits *act = sac_type_vec_dot_traits(t);
        CHECK_MSG(act->to_float && act->block_size > 0 && t->block_size % act->block_size == 0 &&
                      (act->activations_size || t->vec_dot_type == SAC_TYPE_F32),
                  "type %u: vec_dot_type %u is not implemented", type, t->vec_dot_type);
        CHECK_MSG(!act->activations_size == !act->quantize_activations, "type %u: half an activation conversion",
                  t->vec_dot_type);
        CHECK_MSG(act->quantize_activations || t->vec_dot_type == SAC_TYPE_F32,
                  "type %u: vec_dot_type %u has no activation conversion", type, t->vec_dot_type);
    }
    CHECK(n_implemented == 13);
    CHECK(sac_type_traits_get(SAC_TYPE_Q8_K) == NULL && sac_type_traits_get(SAC_TYPE_Q8_1) == NULL); /* activations only */
    /* as ggml pairs them: the quantized weights meet Q8_0 activations, the float ones f32 */
    CHECK(sac_type_traits_get(SAC_TYPE_F32)->vec_dot_type == SAC_TYPE_F32);
    CHECK(sac_type_traits_get(SAC_TYPE_F16)->vec_dot_type == SAC_TYPE_F32);
    CHECK(sac_type_traits_get(SAC_TYPE_Q4_0)->vec_dot_type == SAC_TYPE_Q8_0);
    CHECK(sac_type_traits_get(SAC_TYPE_Q8_0)->vec_dot_type == SAC_TYPE_Q8_0);
    CHECK(sac_type_traits_get(SAC_TYPE_Q5_0)->vec_dot_type == SAC_TYPE_Q8_0);
    CHECK(sac_type_traits_get(SAC_TYPE_BF16)->vec_dot_type == SAC_TYPE_BF16); /* activations rounded to bf16 */
    CHECK(sac_type_traits_get(SAC_TYPE_Q4_1)->vec_dot_type == SAC_TYPE_Q8_1);
    CHECK(sac_type_traits_get(SAC_TYPE_Q5_1)->vec_dot_type == SAC_TYPE_Q8_1);
    CHECK(sac_type_traits_get(SAC_TYPE_Q2_K)->vec_dot_type == SAC_TYPE_Q8_K);
    CHECK(sac_type_traits_get(SAC_TYPE_Q3_K)->vec_dot_type == SAC_TYPE_Q8_K);
    CHECK(sac_type_traits_get(SAC_TYPE_Q4_K)->vec_dot_type == SAC_TYPE_Q8_K);
    CHECK(sac_type_traits_get(SAC_TYPE_Q5_K)->vec_dot_type == SAC_TYPE_Q8_K);
    CHECK(sac_type_traits_get(SAC_TYPE_Q6_K)->vec_dot_type == SAC_TYPE_Q8_K);
}

/* Each codec reads and writes exactly the bytes of its rows: three blocks' worth between
 * guard bytes, and back. */
static void test_codecs_stay_in_their_rows(void) {
    uint64_t s = 777;
    for (uint32_t type = 0; type < SAC_TYPE_COUNT; type++) {
        const sac_type_traits *t = sac_type_traits_get(type);
        if (!t) continue;
        int64_t n = 3 * t->block_size;
        size_t bytes;
        CHECK(sac_type_row_bytes(type, n, &bytes) && bytes == 3 * t->type_size);
        float x[3 * SAC_QK_K + 2], y[3 * SAC_QK_K + 2];
        _Alignas(8) unsigned char data[8 + 3 * sizeof(block_q6_K) + 1]; /* the row starts aligned at 8 */
        for (int64_t i = 0; i < n; i++) x[i] = rng_float(&s, 4.0f);
        memset(data, 0xA5, sizeof data);
        t->from_float(x, data + 8, n);
        CHECK_MSG(data[7] == 0xA5 && data[8 + bytes] == 0xA5, "%s: from_float wrote outside its row", t->name);
        y[0] = y[n + 1] = -1.0f;
        t->to_float(data + 8, y + 1, n);
        CHECK_MSG(y[0] == -1.0f && y[n + 1] == -1.0f, "%s: to_float wrote outside its row", t->name);
        int close = 1;
        /* Q4_0: 1.5 d, d <= 4/8; the 2- and 3-bit K-quants: a level step of the 8-wide range
         * (8/3 for Q2_K's 4 levels) */
        float tol = type == SAC_TYPE_Q2_K || type == SAC_TYPE_Q3_K ? 8.0f / 3 : 0.8f;
        for (int64_t i = 0; i < n; i++) close &= fabsf(y[i + 1] - x[i]) <= tol;
        CHECK_MSG(close, "%s: the values did not come back", t->name);
    }
}

/* Whether the n values row decodes to (into y) are all finite. */
static int decodes_finite(const sac_type_traits *t, const void *row, float *y, int64_t n) {
    t->to_float(row, y, n);
    int finite = 1;
    for (int64_t i = 0; i < n; i++) finite &= isfinite(y[i]) != 0;
    return finite;
}

/* Each type's finite check gives the verdict of its decoded values: rows of random bytes, a
 * quarter of them 0xFF (so that exponent fields of all ones, a float's or a block scale's, are
 * common), each checked against to_float; both verdicts must occur. Then rows whose every
 * 16-bit word is 0x7BFF (every f16 scale 65504, the largest finite half, and large levels)
 * must pass. */
static void test_finite_checks_agree_with_decoding(void) {
    uint64_t s = 4242;
    for (uint32_t type = 0; type < SAC_TYPE_COUNT; type++) {
        const sac_type_traits *t = sac_type_traits_get(type);
        if (!t) continue;
        int verdicts[2] = {0, 0};
        _Alignas(8) unsigned char data[4 * sizeof(block_q6_K)];
        float y[4 * SAC_QK_K];
        CHECK_MSG(4 * t->type_size <= sizeof data && 4 * t->block_size <= 4 * SAC_QK_K, "%s: larger blocks", t->name);
        for (int trial = 0; trial < 2000; trial++) {
            const int64_t n = (1 + trial % 4) * t->block_size;
            const size_t bytes = (size_t)(n / t->block_size) * t->type_size;
            for (size_t i = 0; i < bytes; i++) {
                const uint32_t r = rng_next(&s);
                data[i] = r % 4 == 0 ? 0xFF : (unsigned char)(r >> 8);
            }
            const int decoded = decodes_finite(t, data, y, n);
            const int checked = t->finite(data, n);
            CHECK_MSG(checked == decoded, "%s, trial %d: the finite check says %d, the decoded values %d", t->name,
                      trial, checked, decoded);
            verdicts[decoded]++;
        }
        CHECK_MSG(verdicts[0] >= 100 && verdicts[1] >= 100, "%s: %d rows with a non-finite value, %d without",
                  t->name, verdicts[0], verdicts[1]);
        const int64_t n = 4 * t->block_size;
        const size_t bytes = 4 * t->type_size;
        for (size_t i = 0; i < bytes; i += 2) data[i] = 0xFF, data[i + 1] = 0x7B; /* 0x7BFF: the largest finite half */
        CHECK_MSG(decodes_finite(t, data, y, n) && t->finite(data, n), "%s: the largest scales and levels", t->name);
        if (t->block_size != 1) continue;
        /* float types read eight bytes at a time: one non-finite value anywhere in a longer row,
         * in the first words, the unrolled middle and the zero-padded last word */
        enum { LONG = 333 };
        float x[LONG];
        unsigned char row[LONG * sizeof(float)];
        for (int i = 0; i < LONG; i++) x[i] = rng_float(&s, 100.0f);
        t->from_float(x, row, LONG);
        CHECK_MSG(t->finite(row, LONG), "%s: a finite row of %d", t->name, LONG);
        const int at[] = {0, 1, 3, 4, 7, 8, 100, 329, 330, 331, 332};
        for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
            const float bad = k % 2 ? NAN : -INFINITY;
            unsigned char *v = row + (size_t)at[k] * t->type_size, keep[4];
            memcpy(keep, v, t->type_size);
            t->from_float(&bad, v, 1);
            CHECK_MSG(!t->finite(row, LONG), "%s: a non-finite value at %d of %d", t->name, at[k], LONG);
            CHECK_MSG(t->finite(row, at[k]), "%s: the %d values before it", t->name, at[k]);
            memcpy(v, keep, t->type_size);
        }
    }
}

static void test_row_bytes(void) {
    size_t b = 12345;
    CHECK(sac_type_row_bytes(SAC_TYPE_Q8_0, 64, &b) && b == 68);
    CHECK(sac_type_row_bytes(SAC_TYPE_Q4_0, 4096, &b) && b == 128 * 18);
    CHECK(sac_type_row_bytes(SAC_TYPE_F16, 7, &b) && b == 14);
    CHECK(sac_type_row_bytes(SAC_TYPE_F32, 0, &b) && b == 0);
    b = 12345;
    CHECK(!sac_type_row_bytes(SAC_TYPE_Q8_0, 33, &b) && b == 12345); /* not whole blocks */
    CHECK(!sac_type_row_bytes(SAC_TYPE_F32, -1, &b) && b == 12345);
    CHECK(!sac_type_row_bytes(20 /* IQ4_NL */, 32, &b) && b == 12345); /* not implemented */
    CHECK(!sac_type_row_bytes(SAC_TYPE_Q8_K, 256, &b) && b == 12345); /* not a weight type */
    CHECK(!sac_type_row_bytes(1000, 32, &b) && b == 12345);
    /* the largest row that fits a size_t (4 GB on wasm32), and one value more */
    int64_t most = (int64_t)((uint64_t)SIZE_MAX / 4 < (uint64_t)INT64_MAX ? SIZE_MAX / 4 : INT64_MAX / 4);
    CHECK(sac_type_row_bytes(SAC_TYPE_F32, most, &b) && b == (size_t)most * 4);
    CHECK(!sac_type_row_bytes(SAC_TYPE_F32, most + 1, &b) && b == (size_t)most * 4);
    uint64_t blocks = (uint64_t)SIZE_MAX / 34 + 1; /* Q8_0: one block more than fits */
    if (blocks <= (uint64_t)INT64_MAX / 32) CHECK(!sac_type_row_bytes(SAC_TYPE_Q8_0, (int64_t)(blocks * 32), &b));
}

static void test_type_names(void) {
    CHECK(!strcmp(sac_type_name(0), "F32"));
    CHECK(!strcmp(sac_type_name(1), "F16"));
    CHECK(!strcmp(sac_type_name(2), "Q4_0"));
    CHECK(!strcmp(sac_type_name(3), "Q4_1"));
    CHECK(!strcmp(sac_type_name(6), "Q5_0"));
    CHECK(!strcmp(sac_type_name(7), "Q5_1"));
    CHECK(!strcmp(sac_type_name(8), "Q8_0"));
    CHECK(!strcmp(sac_type_name(9), "Q8_1"));
    CHECK(!strcmp(sac_type_name(10), "Q2_K"));
    CHECK(!strcmp(sac_type_name(14), "Q6_K"));
    CHECK(!strcmp(sac_type_name(15), "Q8_K"));
    CHECK(!strcmp(sac_type_name(30), "BF16"));
    CHECK(!strcmp(sac_type_name(4), "type 4"));
    CHECK(!strcmp(sac_type_name(99), "type 99"));
    CHECK(!strcmp(sac_type_name(255), "type 255"));
    CHECK(!strcmp(sac_type_name(31), "type 31"));
    CHECK(!strcmp(sac_type_name(123456), "type >255"));
}

/* Blocks of several shapes: random, all zero, one spike, negative maxima, tiny values. */
static void fill_block(float *x, int kind, uint64_t *s) {
    for (int j = 0; j < SAC_QK; j++) x[j] = rng_float(s, kind == 4 ? 1e-6f : 3.0f);
    if (kind == 1) memset(x, 0, SAC_QK * sizeof *x);
    if (kind == 2) x[rng_next(s) % SAC_QK] = 1000.0f;
    if (kind == 3) x[rng_next(s) % SAC_QK] = -50.0f;
}

static void test_q8_0_matches_reference(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q8_0);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    int bad_bytes = 0, bad_values = 0;
    for (int b = 0; b < 5000; b++) {
        float x[SAC_QK], y[SAC_QK];
        block_q8_0 got, want;
        fill_block(x, b % 5, &s);
        t->from_float(x, &got, SAC_QK);
        ref_quantize_q8_0(x, &want);
        if (memcmp(&got, &want, sizeof got) && bad_bytes++ < 3)
            CHECK_MSG(0, "block %d: d 0x%04x vs 0x%04x", b, got.d, want.d);
        /* dequantized: |x - q*d16| <= d/2 + 127*|d - d16| (d16 = d rounded to f16) */
        t->to_float(&got, y, SAC_QK);
        double amax = 0;
        for (int j = 0; j < SAC_QK; j++) amax = fmax(amax, fabs(x[j]));
        double d = amax / 127, d16 = ref_half_value(got.d);
        double tol = d / 2 + 127 * fabs(d - d16) + 1e-12;
        for (int j = 0; j < SAC_QK; j++) {
            if ((double)y[j] != got.qs[j] * d16) bad_values++;
            if (fabs(x[j] - y[j]) > tol && bad_values++ < 3)
                CHECK_MSG(0, "block %d [%d]: %.9g -> %.9g (tol %g)", b, j, x[j], y[j], tol);
        }
    }
    CHECK_MSG(bad_bytes == 0, "%d blocks differ from the reference quantizer", bad_bytes);
    CHECK(bad_values == 0);
}

static void test_q8_0_rounding_ties(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q8_0);
    float x[SAC_QK] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.49f, 126.5f};
    block_q8_0 q;
    t->from_float(x, &q, SAC_QK); /* d = 1, so q = round(x), halves away from zero */
    CHECK(q.d == 0x3C00);
    CHECK(q.qs[0] == 127 && q.qs[1] == 3 && q.qs[2] == -3 && q.qs[3] == 1 && q.qs[4] == -1);
    CHECK(q.qs[5] == 1 && q.qs[6] == 127 && q.qs[7] == 0);
}

static void test_q4_0_matches_reference(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q4_0);
    uint64_t s = 0x243F6A8885A308D3ull;
    int bad_bytes = 0, bad_values = 0;
    for (int b = 0; b < 5000; b++) {
        float x[SAC_QK], y[SAC_QK];
        block_q4_0 got, want;
        fill_block(x, b % 5, &s);
        t->from_float(x, &got, SAC_QK);
        ref_quantize_q4_0(x, &want);
        if (memcmp(&got, &want, sizeof got) && bad_bytes++ < 3)
            CHECK_MSG(0, "block %d: d 0x%04x vs 0x%04x", b, got.d, want.d);
        t->to_float(&got, y, SAC_QK);
        double amax = 0;
        for (int j = 0; j < SAC_QK; j++) amax = fmax(amax, fabs(x[j]));
        double d = amax / 8, d16 = fabs(ref_half_value(got.d));
        /* half a step from rounding, one more step where the clamp at 15 cuts (values of
         * magnitude near amax with the sign opposite to the max), plus f16 rounding of d */
        double tol = 1.5 * d + 8 * fabs(d - d16) + 1e-12;
        for (int j = 0; j < SAC_QK; j++) {
            int q = j < 16 ? (got.qs[j] & 15) : (got.qs[j - 16] >> 4);
            if ((double)y[j] != (q - 8) * ref_half_value(got.d)) bad_values++;
            if (fabs(x[j] - y[j]) > tol && bad_values++ < 3)
                CHECK_MSG(0, "block %d [%d]: %.9g -> %.9g (tol %g)", b, j, x[j], y[j], tol);
        }
    }
    CHECK_MSG(bad_bytes == 0, "%d blocks differ from the reference quantizer", bad_bytes);
    CHECK(bad_values == 0);
}

static void test_q4_0_nibbles_and_clamp(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q4_0);
    float x[SAC_QK] = {0};
    x[0] = -8.0f; /* the max by magnitude, negative: d = 1 */
    x[1] = 2.5f;  /* 2.5 + 8.5 = 11 → q 11 → value 3 */
    x[2] = -2.5f; /* → q 6 → value -2 */
    x[16] = 7.9f; /* high nibble of byte 0 → q 16 → clamped to 15 → value 7 */
    block_q4_0 q;
    t->from_float(x, &q, SAC_QK);
    CHECK(q.d == 0x3C00);
    CHECK(q.qs[0] == (0 | (15 << 4)));
    CHECK(q.qs[1] == (11 | (8 << 4)));
    CHECK(q.qs[2] == (6 | (8 << 4)));
    float y[SAC_QK];
    t->to_float(&q, y, SAC_QK);
    CHECK(y[0] == -8.0f && y[1] == 3.0f && y[2] == -2.0f && y[16] == 7.0f && y[17] == 0.0f);

    /* positive max: d = -1, and the opposite extreme -8 clamps to 15 → -7 */
    memset(x, 0, sizeof x);
    x[3] = 8.0f;
    x[4] = -8.0f;
    t->from_float(x, &q, SAC_QK);
    t->to_float(&q, y, SAC_QK);
    CHECK(q.d == 0xBC00 && y[3] == 8.0f && y[4] == -7.0f);
}

static void test_q5_0_matches_reference(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q5_0);
    uint64_t s = 0x13198A2E03707344ull;
    int bad_bytes = 0, bad_values = 0;
    double worst = 0;
    for (int b = 0; b < 5000; b++) {
        float x[SAC_QK], y[SAC_QK];
        block_q5_0 got, want;
        fill_block(x, b % 5, &s);
        t->from_float(x, &got, SAC_QK);
        ref_quantize_q5_0(x, &want);
        if (memcmp(&got, &want, sizeof got) && bad_bytes++ < 3)
            CHECK_MSG(0, "block %d: d 0x%04x vs 0x%04x", b, got.d, want.d);
        t->to_float(&got, y, SAC_QK);
        double amax = 0;
        for (int j = 0; j < SAC_QK; j++) amax = fmax(amax, fabs(x[j]));
        double d = amax / 16, d16 = fabs(ref_half_value(got.d));
        /* as Q4_0 with 16 steps each side: half a step, one more where the clamp at 31 cuts */
        double tol = 1.5 * d + 16 * fabs(d - d16) + 1e-12;
        for (int j = 0; j < SAC_QK; j++) {
            if ((double)y[j] != ref_value_q5_0(&got, j)) bad_values++;
            if (fabs(x[j] - y[j]) > tol && bad_values++ < 3)
                CHECK_MSG(0, "block %d [%d]: %.9g -> %.9g (tol %g)", b, j, x[j], y[j], tol);
            if (b % 5 == 0) worst = fmax(worst, fabs(x[j] - y[j]) / amax); /* random blocks */
        }
    }
    printf("  Q5_0 round trip, random blocks: worst |x - y| / amax = %.4f\n", worst);
    CHECK_MSG(bad_bytes == 0, "%d blocks differ from the reference quantizer", bad_bytes);
    CHECK(bad_values == 0);
}

/* Q4_1 and Q5_1 quantizers against the float64 references, byte for byte; the dequantized
 * values by ggml's formula; the round trip within half a step (plus the f16 roundings of d
 * and m, and Q4_1's clamp). */
static void test_q4_1_q5_1_match_reference(void) {
    for (int five = 0; five <= 1; five++) {
        const sac_type_traits *t = sac_type_traits_get(five ? SAC_TYPE_Q5_1 : SAC_TYPE_Q4_1);
        uint64_t s = five ? 0xBE5466CF34E90C6Cull : 0x452821E638D01377ull;
        int bad_bytes = 0, bad_values = 0;
        double worst = 0;
        for (int b = 0; b < 5000; b++) {
            float x[SAC_QK], y[SAC_QK];
            fill_block(x, b % 5, &s);
            block_q5_1 got5, want5;
            block_q4_1 got4, want4;
            uint16_t d16, m16;
            if (five) {
                t->from_float(x, &got5, SAC_QK);
                ref_quantize_q5_1(x, &want5);
                bad_bytes += memcmp(&got5, &want5, sizeof got5) != 0;
                t->to_float(&got5, y, SAC_QK);
                d16 = got5.d;
                m16 = got5.m;
            } else {
                t->from_float(x, &got4, SAC_QK);
                ref_quantize_q4_1(x, &want4);
                bad_bytes += memcmp(&got4, &want4, sizeof got4) != 0;
                t->to_float(&got4, y, SAC_QK);
                d16 = got4.d;
                m16 = got4.m;
            }
            double lo = INFINITY, hi = -INFINITY;
            for (int j = 0; j < SAC_QK; j++) {
                lo = fmin(lo, x[j]);
                hi = fmax(hi, x[j]);
            }
            int top = five ? 31 : 15;
            double d = (hi - lo) / top, dd = fabs(d - ref_half_value(d16)), dm = fabs(lo - ref_half_value(m16));
            double tol = d / 2 + top * dd + dm + 1e-6 * fabs(hi) + 1e-12;
            for (int j = 0; j < SAC_QK; j++) {
                int q = five ? q5_level(got5.qh, got5.qs, j) : (j < 16 ? got4.qs[j] & 15 : got4.qs[j - 16] >> 4);
                if ((double)y[j] != ref_value_min(d16, m16, q)) bad_values++;
                if (fabs(x[j] - y[j]) > tol && bad_values++ < 3)
                    CHECK_MSG(0, "%s block %d [%d]: %.9g -> %.9g (tol %g)", t->name, b, j, x[j], y[j], tol);
                if (b % 5 == 0) worst = fmax(worst, fabs(x[j] - y[j]) / (hi - lo));
            }
        }
        printf("  %s round trip, random blocks: worst |x - y| / (max - min) = %.4f\n", t->name, worst);
        CHECK_MSG(bad_bytes == 0, "%s: %d blocks differ from the reference quantizer", t->name, bad_bytes);
        CHECK_MSG(bad_values == 0, "%s: %d values", t->name, bad_values);
    }
}

/* Hand-built Q4_1/Q5_1 blocks: every fifth bit alone, extreme d and m. */
static void test_q4_1_q5_1_dequantize(void) {
    const uint16_t ds[] = {0x0001, 0x0400, 0x3C00, 0x7BFF, 0xBC00, 0x7C00, 0xFC00, 0x7E00};
    const size_t nd = sizeof ds / sizeof ds[0];
    for (size_t k = 0; k < nd * nd; k++) {
        block_q4_1 b4;
        block_q5_1 b5;
        b4.d = b5.d = ds[k % nd];
        b4.m = b5.m = ds[k / nd];
        for (int j = 0; j < 16; j++) b4.qs[j] = b5.qs[j] = (uint8_t)(j | (15 - j) << 4);
        uint32_t qh = 1u << (k % 32) | 0x30C00000u;
        memcpy(b5.qh, &qh, 4);
        float y4[SAC_QK], y5[SAC_QK];
        sac_type_traits_get(SAC_TYPE_Q4_1)->to_float(&b4, y4, SAC_QK);
        sac_type_traits_get(SAC_TYPE_Q5_1)->to_float(&b5, y5, SAC_QK);
        int bad = 0;
        for (int j = 0; j < SAC_QK; j++) {
            int q4 = j < 16 ? b4.qs[j] & 15 : b4.qs[j - 16] >> 4;
            bad += !same_value(y4[j], ref_value_min(b4.d, b4.m, q4));
            bad += !same_value(y5[j], ref_value_min(b5.d, b5.m, q5_level(b5.qh, b5.qs, j)));
        }
        CHECK_MSG(bad == 0, "d 0x%04x m 0x%04x: %d values differ", b4.d, b4.m, bad);
    }
}

/* Q8_1 (Q4_1/Q5_1's activations): Q8_0's d and qs, and s = f16(f32(sum(qs) d)), d the f32 one. */
static void test_q8_1_matches_reference(void) {
    const sac_type_traits *t = sac_type_vec_dot_traits(sac_type_traits_get(SAC_TYPE_Q4_1));
    uint64_t s = 0xC0AC29B7C97C50DDull;
    int bad = 0;
    for (int b = 0; b < 3000; b++) {
        float x[SAC_QK];
        fill_block(x, b % 5, &s);
        block_q8_1 got;
        block_q8_0 want;
        t->from_float(x, &got, SAC_QK);
        ref_quantize_q8_0(x, &want);
        double amax = 0;
        long sum = 0;
        for (int j = 0; j < SAC_QK; j++) {
            amax = fmax(amax, fabs(x[j]));
            sum += want.qs[j];
        }
        uint16_t s16 = ref_half_of((float)((double)sum * (float)(amax / 127.0)));
        bad += got.d != want.d || memcmp(got.qs, want.qs, sizeof got.qs) != 0 || got.s != s16;
    }
    CHECK_MSG(bad == 0, "%d blocks differ", bad);
}

/* Hand-built Q5_0 blocks: every qh bit alone (each value's fifth bit, in ggml's order), and
 * the extremes of the level range with the smallest, largest, negative, inf and NaN scales. */
static void test_q5_0_bits_and_extremes(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q5_0);
    for (int bit = 0; bit < 32; bit++) {
        block_q5_0 b;
        memset(&b, 0, sizeof b);
        b.d = 0x3C00;
        uint32_t qh = 1u << bit;
        memcpy(b.qh, &qh, 4);
        float y[SAC_QK];
        t->to_float(&b, y, SAC_QK);
        for (int j = 0; j < SAC_QK; j++) CHECK_MSG(y[j] == (j == bit ? 0.0f : -16.0f), "bit %d value %d: %g", bit, j, y[j]);
    }
    const uint16_t ds[] = {0x0001, 0x03FF, 0x0400, 0x3C00, 0x7BFF, 0xBC00, 0x7C00, 0xFC00, 0x7E00};
    for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
        block_q5_0 b;
        b.d = ds[k];
        for (int j = 0; j < 16; j++) b.qs[j] = (uint8_t)(j | (15 - j) << 4);
        uint32_t qh = 0xA5C3F00Fu;
        memcpy(b.qh, &qh, 4);
        float y[SAC_QK];
        t->to_float(&b, y, SAC_QK);
        int bad = 0;
        for (int j = 0; j < SAC_QK; j++) {
            double want = ref_value_q5_0(&b, j);
            bad += !(isnan(want) ? isnan(y[j]) : (double)y[j] == want);
        }
        CHECK_MSG(bad == 0, "d 0x%04x: %d values differ", ds[k], bad);
    }
    /* x = -16 the max by magnitude: d = 1, and q = x + 16 from 0 to 31 */
    float x[SAC_QK];
    for (int j = 0; j < SAC_QK; j++) x[j] = (float)(j - 16);
    x[0] = -16.0f;
    block_q5_0 b;
    t->from_float(x, &b, SAC_QK);
    float y[SAC_QK];
    t->to_float(&b, y, SAC_QK);
    CHECK(b.d == 0x3C00);
    for (int j = 0; j < SAC_QK; j++) CHECK_MSG(y[j] == x[j], "value %d: %g", j, y[j]);
}

/* ------------------------------------------------------------------------------------------
 * K-quants
 * ---------------------------------------------------------------------------------------- */

/* f32 rounding of a double (the references round where ggml's float code does). */
static double f32(double v) { return (double)(float)v; }

/* Q4_K's scale packing as ggml's quantizer writes it. */
static void pack_q4_K_scales(uint8_t sm[12], const int sc[8], const int m[8]) {
    memset(sm, 0, 12);
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            sm[j] = (uint8_t)sc[j];
            sm[j + 4] = (uint8_t)m[j];
        } else {
            sm[j + 4] = (uint8_t)((sc[j] & 15) | (m[j] & 15) << 4);
            sm[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
            sm[j] |= (uint8_t)((m[j] >> 4) << 6);
        }
    }
}

/* Value j of a Q4_K block given its sub-block scales: f32(f32(d sc) q) - f32(dmin m). */
static double ref_value_q4_K(const block_q4_K *b, const int sc[8], const int m[8], int j) {
    int sub = j / 32, byte = b->qs[32 * (j / 64) + j % 32];
    int q = sub % 2 ? byte >> 4 : byte & 15;
    return f32(f32(f32(ref_half_value(b->d) * sc[sub]) * q) - f32(ref_half_value(b->dmin) * m[sub]));
}

static int q6_K_level(const block_q6_K *b, int j) {
    int h = j / 128, k = (j % 128) / 32, l = j % 32;
    int ql = b->ql[64 * h + l + (k % 2) * 32];
    return ((k < 2 ? ql & 15 : ql >> 4) | ((b->qh[32 * h + l] >> (2 * k)) & 3) << 4) - 32;
}

static double ref_value_q6_K(const block_q6_K *b, int j) {
    return f32(f32(ref_half_value(b->d) * b->scales[j / 16]) * q6_K_level(b, j));
}

/* Hand-built Q4_K blocks: every 6-bit scale and min in every sub-block position (the packing
 * splits sub-blocks 0-3 and 4-7 differently), random levels, and extreme d and dmin. */
static void test_q4_K_dequantize(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q4_K);
    const uint16_t ds[] = {0x3C00, 0x0001, 0x7BFF, 0xBC00, 0x2E66, 0x7C00, 0x7E00};
    uint64_t s = 4321;
    int bad = 0, blocks = 0;
    for (int v = 0; v < 64; v++)
        for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
            block_q4_K b;
            int sc[8], m[8];
            for (int j = 0; j < 8; j++) {
                sc[j] = (v + 9 * j) % 64; /* every value in every position over the 64 blocks */
                m[j] = (63 - v + 5 * j) % 64;
            }
            pack_q4_K_scales(b.scales, sc, m);
            b.d = ds[k];
            b.dmin = ds[(k + 3) % (sizeof ds / sizeof ds[0])];
            for (int j = 0; j < 128; j++) b.qs[j] = (uint8_t)rng_next(&s);
            float y[SAC_QK_K];
            t->to_float(&b, y, SAC_QK_K);
            for (int j = 0; j < SAC_QK_K; j++) {
                double want = ref_value_q4_K(&b, sc, m, j);
                if (!same_value(y[j], want) && bad++ < 3)
                    CHECK_MSG(0, "v %d d 0x%04x [%d]: %.9g, want %.9g", v, b.d, j, y[j], want);
            }
            blocks++;
        }
    CHECK_MSG(bad == 0, "%d values of %d blocks differ", bad, blocks);
}

/* Hand-built Q6_K blocks: every level in every position of the ql/qh packing, every int8
 * scale (-128..127), and extreme d. */
static void test_q6_K_dequantize(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q6_K);
    const uint16_t ds[] = {0x3C00, 0x0001, 0x7BFF, 0xBC00, 0x7C00, 0xFE00};
    uint64_t s = 8765;
    int bad = 0;
    for (int v = 0; v < 64; v++)
        for (size_t k = 0; k < sizeof ds / sizeof ds[0]; k++) {
            block_q6_K b;
            for (int j = 0; j < 128; j++) b.ql[j] = (uint8_t)rng_next(&s);
            for (int j = 0; j < 64; j++) b.qh[j] = (uint8_t)rng_next(&s);
            for (int g = 0; g < 16; g++) b.scales[g] = (int8_t)(v * 4 + g % 4 - 128); /* -128..127 */
            b.d = ds[k];
            float y[SAC_QK_K];
            t->to_float(&b, y, SAC_QK_K);
            for (int j = 0; j < SAC_QK_K; j++) {
                double want = ref_value_q6_K(&b, j);
                if (!same_value(y[j], want) && bad++ < 3)
                    CHECK_MSG(0, "v %d d 0x%04x [%d]: %.9g, want %.9g", v, b.d, j, y[j], want);
            }
        }
    CHECK(bad == 0);
    /* each level alone: value j = level - 32 with d 1 and scales 1 */
    for (int j = 0; j < SAC_QK_K; j++) {
        block_q6_K b;
        memset(&b, 0, sizeof b);
        memset(b.scales, 1, sizeof b.scales);
        b.d = 0x3C00;
        int h = j / 128, k = (j % 128) / 32, l = j % 32, level = (j * 7 + 3) % 64;
        b.ql[64 * h + l + (k % 2) * 32] = (uint8_t)(k < 2 ? level & 15 : (level & 15) << 4);
        b.qh[32 * h + l] = (uint8_t)((level >> 4) << (2 * k));
        float y[SAC_QK_K];
        t->to_float(&b, y, SAC_QK_K);
        int ok = 1;
        for (int i = 0; i < SAC_QK_K; i++) ok &= y[i] == (i == j ? level - 32 : -32);
        CHECK_MSG(ok, "level %d at %d", level, j);
    }
}

/* Q2_K's and Q3_K's 2-bit level of value v (bits 2k of qs[32 h + l] for v = 128 h + 32 k + l). */
static int two_bit_level(const uint8_t *qs, int v) { return (qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3; }

static int q3_K_scale_ref(const uint8_t sc[12], int g) {
    int lo = g < 8 ? sc[g] & 15 : sc[g - 8] >> 4;
    return (lo | ((sc[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
}

static int q3_K_level(const block_q3_K *b, int v) {
    return two_bit_level(b->qs, v) - ((b->hmask[v % 32] >> (v / 32)) & 1 ? 0 : 4);
}

/* Hand-built Q2_K and Q3_K blocks: random levels and high bits, every 4-bit scale and min
 * (Q2_K) and every 6-bit scale in every group position (Q3_K's packing splits low and high
 * bits over two places), extreme d and dmin; values by ggml's formulas. */
static void test_q2_K_q3_K_dequantize(void) {
    const uint16_t ds[] = {0x3C00, 0x0001, 0x7BFF, 0xBC00, 0x2E66, 0x7C00, 0x7E00};
    const size_t nd = sizeof ds / sizeof ds[0];
    uint64_t s = 24680;
    int bad = 0;
    for (int v = 0; v < 64; v++)
        for (size_t k = 0; k < nd; k++) {
            block_q2_K b2;
            block_q3_K b3;
            for (int g = 0; g < 16; g++) b2.scales[g] = (uint8_t)((v + g) % 16 | ((v * 3 + g) % 16) << 4);
            memset(b3.scales, 0, 12);
            for (int g = 0; g < 16; g++) { /* 6-bit value (v + 5g) % 64 for group g */
                int l = (v + 5 * g) % 64;
                if (g < 8) b3.scales[g] |= (uint8_t)(l & 15);
                else b3.scales[g - 8] |= (uint8_t)((l & 15) << 4);
                b3.scales[8 + g % 4] |= (uint8_t)((l >> 4) << (2 * (g / 4)));
            }
            for (int g = 0; g < 16; g++) bad += q3_K_scale_ref(b3.scales, g) != (v + 5 * g) % 64 - 32;
            for (int j = 0; j < 64; j++) b2.qs[j] = b3.qs[j] = (uint8_t)rng_next(&s);
            for (int j = 0; j < 32; j++) b3.hmask[j] = (uint8_t)rng_next(&s);
            b2.d = b3.d = ds[k];
            b2.dmin = ds[(k + 2) % nd];
            float y2[SAC_QK_K], y3[SAC_QK_K];
            sac_type_traits_get(SAC_TYPE_Q2_K)->to_float(&b2, y2, SAC_QK_K);
            sac_type_traits_get(SAC_TYPE_Q3_K)->to_float(&b3, y3, SAC_QK_K);
            for (int j = 0; j < SAC_QK_K; j++) {
                int sc = b2.scales[j / 16] & 15, m = b2.scales[j / 16] >> 4;
                double w2 = f32(f32(f32(ref_half_value(b2.d) * sc) * two_bit_level(b2.qs, j)) - f32(ref_half_value(b2.dmin) * m));
                double w3 = f32(f32(ref_half_value(b3.d) * q3_K_scale_ref(b3.scales, j / 16)) * q3_K_level(&b3, j));
                if (!same_value(y2[j], w2) && bad++ < 3) CHECK_MSG(0, "Q2_K v %d [%d]: %.9g want %.9g", v, j, y2[j], w2);
                if (!same_value(y3[j], w3) && bad++ < 3) CHECK_MSG(0, "Q3_K v %d [%d]: %.9g want %.9g", v, j, y3[j], w3);
            }
        }
    CHECK(bad == 0);
}

/* Super-blocks of several shapes: random, all zero, one spike, tiny, and groups of very
 * different magnitudes (which the scales' 6/8-bit quantization must cover). */
static void fill_super_block(float *x, int kind, uint64_t *s) {
    for (int j = 0; j < SAC_QK_K; j++) x[j] = rng_float(s, kind == 3 ? 1e-6f : 2.0f);
    if (kind == 1) memset(x, 0, SAC_QK_K * sizeof *x);
    if (kind == 2) x[rng_next(s) % SAC_QK_K] = -40.0f;
    if (kind == 4)
        for (int j = 0; j < SAC_QK_K; j++) x[j] *= (float)(1 + j / 32);
    if (kind == 5)
        for (int j = 0; j < SAC_QK_K; j++) x[j] = fabsf(x[j]) + 1.0f; /* all positive: min > 0 */
}

/* The quantizers: the round trip within the format's error, and the last step of ggml's
 * algorithm checked exactly: with the scales as stored, each level is the nearest one
 * (clamped), wherever the sub-block's scale is not 0. */
/* Level j of a Q4_K or Q5_K block (Q5_K: the fifth bit in bit j/32 of qh[j % 32]). */
static int k_min_level(uint32_t type, const void *block, int j) {
    int sub = j / 32;
    if (type == SAC_TYPE_Q5_K) {
        const block_q5_K *b = block;
        int byte = b->qs[32 * (j / 64) + j % 32];
        return (sub % 2 ? byte >> 4 : byte & 15) | ((b->qh[j % 32] >> sub) & 1) << 4;
    }
    const block_q4_K *b = block;
    int byte = b->qs[32 * (j / 64) + j % 32];
    return sub % 2 ? byte >> 4 : byte & 15;
}

/* Q4_K and Q5_K (the scales and mins open both blocks alike). */
static void check_k_min_round_trip(uint32_t type) {
    const sac_type_traits *t = sac_type_traits_get(type);
    const int top = type == SAC_TYPE_Q5_K ? 31 : 15;
    uint64_t s = 0xA4093822299F31D0ull + type;
    double worst = 0, sum2 = 0, n2 = 0;
    int bad_levels = 0, bad_err = 0;
    for (int blk = 0; blk < 3000; blk++) {
        float x[SAC_QK_K], y[SAC_QK_K];
        block_q5_K b5; /* the larger of the two blocks, which share the first 16 bytes */
        block_q4_K *b4 = (block_q4_K *)(void *)&b5;
        fill_super_block(x, blk % 6, &s);
        t->from_float(x, &b5, SAC_QK_K);
        t->to_float(&b5, y, SAC_QK_K);
        block_q4_K b = *b4;
        double lo = 0, hi = 0;
        for (int j = 0; j < SAC_QK_K; j++) {
            lo = fmin(lo, x[j]);
            hi = fmax(hi, x[j]);
        }
        for (int sub = 0; sub < 8; sub++) {
            int sc, m;
            sac_q4_K_scale_min(b.scales, sub, &sc, &m);
            double d = f32(ref_half_value(b.d) * sc), dm = f32(ref_half_value(b.dmin) * m);
            if (d == 0) continue;
            for (int l = 0; l < 32; l++) {
                int j = 32 * sub + l;
                double r = nearbyint(f32(f32(x[j] + dm) / d));
                int want = r < 0 ? 0 : r > top ? top : (int)r;
                bad_levels += k_min_level(type, &b5, j) != want;
            }
        }
        /* a level step of the coarsest sub-block, (max - min) / top over the super-block, and
         * half one more: the 6-bit scales and mins move the top level and the offset by up to
         * half their own step (about top / 126 and a half min step) */
        double step = 1.5 * (hi - lo) / top;
        for (int j = 0; j < SAC_QK_K; j++) {
            double e = fabs(x[j] - y[j]);
            /* (tiny blocks, kind 3, have scales below f16's smallest subnormal: they come back 0) */
            if (blk % 6 != 3 && e > step + 1e-7 && bad_err++ < 3)
                CHECK_MSG(0, "block %d [%d]: %.9g -> %.9g (step %g)", blk, j, x[j], y[j], step);
            if (blk % 6 == 0) {
                worst = fmax(worst, e / (hi - lo));
                sum2 += e * e / ((hi - lo) * (hi - lo));
                n2++;
            }
        }
    }
    printf("  %s round trip, random blocks: worst |x - y| / (max - min) = %.4f, rms %.4f\n", t->name, worst,
           sqrt(sum2 / n2));
    CHECK_MSG(bad_levels == 0, "%s: %d levels are not the nearest for the stored scales", t->name, bad_levels);
    CHECK_MSG(bad_err == 0, "%s: %d values off by more than a level step", t->name, bad_err);
}

static void test_q4_K_round_trip(void) { check_k_min_round_trip(SAC_TYPE_Q4_K); }
static void test_q5_K_round_trip(void) { check_k_min_round_trip(SAC_TYPE_Q5_K); }

/* Hand-built Q5_K blocks: every fifth bit alone (value j's bit is bit j/32 of qh[j % 32]),
 * then random levels, every 6-bit scale and min in every position, extreme d and dmin. */
static void test_q5_K_dequantize(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q5_K);
    for (int j = 0; j < SAC_QK_K; j++) {
        block_q5_K b;
        memset(&b, 0, sizeof b);
        b.d = 0x3C00;
        for (int k = 0; k < 4; k++) b.scales[k] = 1; /* sc 1, m 0 everywhere */
        b.scales[8] = b.scales[9] = b.scales[10] = b.scales[11] = 1;
        b.qh[j % 32] = (uint8_t)(1 << (j / 32));
        float y[SAC_QK_K];
        t->to_float(&b, y, SAC_QK_K);
        int ok = 1;
        for (int i = 0; i < SAC_QK_K; i++) ok &= y[i] == (i == j ? 16.0f : 0.0f);
        CHECK_MSG(ok, "fifth bit of value %d", j);
    }
    const uint16_t ds[] = {0x3C00, 0x0001, 0x7BFF, 0xBC00, 0x2E66, 0x7C00, 0x7E00};
    const size_t nd = sizeof ds / sizeof ds[0];
    uint64_t s = 97531;
    int bad = 0;
    for (int v = 0; v < 64; v++)
        for (size_t k = 0; k < nd; k++) {
            block_q5_K b;
            int sc[8], m[8];
            for (int j = 0; j < 8; j++) {
                sc[j] = (v + 9 * j) % 64;
                m[j] = (63 - v + 5 * j) % 64;
            }
            pack_q4_K_scales(b.scales, sc, m);
            b.d = ds[k];
            b.dmin = ds[(k + 3) % nd];
            for (int j = 0; j < 128; j++) b.qs[j] = (uint8_t)rng_next(&s);
            for (int j = 0; j < 32; j++) b.qh[j] = (uint8_t)rng_next(&s);
            float y[SAC_QK_K];
            t->to_float(&b, y, SAC_QK_K);
            for (int j = 0; j < SAC_QK_K; j++) {
                double want = f32(f32(f32(ref_half_value(b.d) * sc[j / 32]) * k_min_level(SAC_TYPE_Q5_K, &b, j)) -
                                  f32(ref_half_value(b.dmin) * m[j / 32]));
                if (!same_value(y[j], want) && bad++ < 3)
                    CHECK_MSG(0, "v %d d 0x%04x [%d]: %.9g, want %.9g", v, b.d, j, y[j], want);
            }
        }
    CHECK(bad == 0);
}

/* The quantizers' round trips, and their last step exactly: with the stored scales, each
 * level is the nearest one (clamped) wherever the group's scale is not 0. The bounds are a
 * level step of the coarsest group, and one more: the 4-bit (Q2_K) or 6-bit (Q3_K) scales. */
static void test_q2_K_q3_K_round_trip(void) {
    for (int three = 0; three <= 1; three++) {
        const sac_type_traits *t = sac_type_traits_get(three ? SAC_TYPE_Q3_K : SAC_TYPE_Q2_K);
        uint64_t s = three ? 0x9216D5D98979FB1Bull : 0xD1310BA698DFB5ACull;
        double worst = 0, sum2 = 0, n2 = 0;
        int bad_levels = 0, bad_err = 0;
        for (int blk = 0; blk < 2000; blk++) {
            float x[SAC_QK_K], y[SAC_QK_K];
            block_q2_K b2;
            block_q3_K b3;
            fill_super_block(x, blk % 6, &s);
            if (three) {
                t->from_float(x, &b3, SAC_QK_K);
                t->to_float(&b3, y, SAC_QK_K);
            } else {
                t->from_float(x, &b2, SAC_QK_K);
                t->to_float(&b2, y, SAC_QK_K);
            }
            double lo = 0, hi = 0, amax = 0;
            for (int j = 0; j < SAC_QK_K; j++) {
                lo = fmin(lo, x[j]);
                hi = fmax(hi, x[j]);
                amax = fmax(amax, fabs(x[j]));
            }
            for (int j = 0; j < SAC_QK_K; j++) {
                if (three) {
                    double d = f32(ref_half_value(b3.d) * q3_K_scale_ref(b3.scales, j / 16));
                    if (d != 0) {
                        double r = nearbyint(f32(x[j] / d));
                        bad_levels += q3_K_level(&b3, j) != (r < -4 ? -4 : r > 3 ? 3 : (int)r);
                    }
                } else {
                    double d = f32(ref_half_value(b2.d) * (b2.scales[j / 16] & 15));
                    double dm = f32(ref_half_value(b2.dmin) * (b2.scales[j / 16] >> 4));
                    if (d != 0) {
                        double r = nearbyint(f32(f32(x[j] + dm) / d));
                        bad_levels += two_bit_level(b2.qs, j) != (r < 0 ? 0 : r > 3 ? 3 : (int)r);
                    }
                }
                double range = three ? 2 * amax : hi - lo, e = fabs(x[j] - y[j]);
                double step = 2 * range / (three ? 7 : 3);
                if (blk % 6 != 3 && e > step + 1e-7 && bad_err++ < 3)
                    CHECK_MSG(0, "%s block %d [%d]: %.9g -> %.9g (step %g)", t->name, blk, j, x[j], y[j], step);
                if (blk % 6 == 0) {
                    worst = fmax(worst, e / range);
                    sum2 += e * e / (range * range);
                    n2++;
                }
            }
        }
        printf("  %s round trip, random blocks: worst |x - y| / %s = %.4f, rms %.4f\n", t->name,
               three ? "(2 amax)" : "(max - min)", worst, sqrt(sum2 / n2));
        CHECK_MSG(bad_levels == 0, "%s: %d levels are not the nearest for the stored scales", t->name, bad_levels);
        CHECK_MSG(bad_err == 0, "%s: %d values off by more than two level steps", t->name, bad_err);
    }
}

static void test_q6_K_round_trip(void) {
    const sac_type_traits *t = sac_type_traits_get(SAC_TYPE_Q6_K);
    uint64_t s = 0x082EFA98EC4E6C89ull;
    double worst = 0, sum2 = 0, n2 = 0;
    int bad_levels = 0, bad_err = 0;
    for (int blk = 0; blk < 3000; blk++) {
        float x[SAC_QK_K], y[SAC_QK_K];
        block_q6_K b;
        fill_super_block(x, blk % 6, &s);
        t->from_float(x, &b, SAC_QK_K);
        t->to_float(&b, y, SAC_QK_K);
        double amax = 0;
        for (int j = 0; j < SAC_QK_K; j++) amax = fmax(amax, fabs(x[j]));
        for (int j = 0; j < SAC_QK_K; j++) {
            double d = f32(ref_half_value(b.d) * b.scales[j / 16]);
            if (d != 0) {
                double r = nearbyint(f32(x[j] / d));
                int want = r < -32 ? -32 : r > 31 ? 31 : (int)r;
                bad_levels += q6_K_level(&b, j) != want;
            }
            double e = fabs(x[j] - y[j]);
            if (blk % 6 != 3 && e > amax / 32 + 1e-7 && bad_err++ < 3) /* two steps of the coarsest group */
                CHECK_MSG(0, "block %d [%d]: %.9g -> %.9g (amax %g)", blk, j, x[j], y[j], amax);
            if (blk % 6 == 0) {
                worst = fmax(worst, e / amax);
                sum2 += e * e / (amax * amax);
                n2++;
            }
        }
    }
    printf("  Q6_K round trip, random blocks: worst |x - y| / amax = %.4f, rms %.4f\n", worst, sqrt(sum2 / n2));
    CHECK_MSG(bad_levels == 0, "%d levels are not the nearest for the stored scales", bad_levels);
    CHECK_MSG(bad_err == 0, "%d values off by more than two level steps", bad_err);
}

/* Q8_K (the K-quants' activations) against ggml's rules in float64: the first value of
 * largest magnitude maps to -127, ties round to even, bsums are the 16-value sums. */
static void test_q8_K_matches_reference(void) {
    const sac_type_traits *t = sac_type_vec_dot_traits(sac_type_traits_get(SAC_TYPE_Q4_K));
    uint64_t s = 0x3F84D5B5B5470917ull;
    int bad = 0;
    for (int blk = 0; blk < 2000; blk++) {
        float x[SAC_QK_K], y[SAC_QK_K];
        fill_super_block(x, blk % 6, &s);
        if (blk % 7 == 0) { /* ties: max -127 makes iscale 1 */
            x[0] = -127.0f;
            for (int j = 1; j < 40; j++) x[j] = (float)(j - 20) + 0.5f;
        }
        block_q8_K got;
        t->from_float(x, &got, SAC_QK_K);
        double amax = 0, max = 0;
        for (int j = 0; j < SAC_QK_K; j++)
            if (fabs(x[j]) > amax) {
                amax = fabs(x[j]);
                max = x[j];
            }
        double iscale = amax ? f32(-127.0 / max) : 0;
        int ok = amax ? (double)got.d == f32(1.0 / iscale) : got.d == 0.0f;
        for (int j = 0; j < SAC_QK_K; j++) {
            double r = nearbyint(f32(iscale * x[j]));
            ok &= got.qs[j] == (r > 127 ? 127 : (int)r);
        }
        for (int g = 0; g < 16; g++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += got.qs[16 * g + l];
            ok &= got.bsums[g] == sum;
        }
        t->to_float(&got, y, SAC_QK_K);
        for (int j = 0; j < SAC_QK_K; j++) ok &= (double)y[j] == f32((double)got.d * got.qs[j]);
        if (!ok && bad++ < 3) CHECK_MSG(0, "block %d differs from the reference", blk);
    }
    CHECK(bad == 0);
    float ties[SAC_QK_K] = {-127.0f, 2.5f, -2.5f, 0.5f, 3.5f};
    block_q8_K q;
    t->from_float(ties, &q, SAC_QK_K);
    CHECK(q.d == 1.0f && q.qs[0] == -127 && q.qs[1] == 2 && q.qs[2] == -2 && q.qs[3] == 0 && q.qs[4] == 4);
}

static void test_multi_block_rows_and_float_codecs(void) {
    uint64_t s = 12345;
    float x[4 * SAC_QK], y[4 * SAC_QK];
    for (int i = 0; i < 4 * SAC_QK; i++) x[i] = rng_float(&s, 10.0f);
    block_q8_0 q8[4], r8;
    block_q4_0 q4[4], r4;
    sac_type_traits_get(SAC_TYPE_Q8_0)->from_float(x, q8, 4 * SAC_QK);
    sac_type_traits_get(SAC_TYPE_Q4_0)->from_float(x, q4, 4 * SAC_QK);
    for (int b = 0; b < 4; b++) {
        ref_quantize_q8_0(x + b * SAC_QK, &r8);
        ref_quantize_q4_0(x + b * SAC_QK, &r4);
        CHECK(!memcmp(&r8, &q8[b], sizeof r8));
        CHECK(!memcmp(&r4, &q4[b], sizeof r4));
    }
    float f32[4 * SAC_QK];
    sac_type_traits_get(SAC_TYPE_F32)->from_float(x, f32, 4 * SAC_QK);
    sac_type_traits_get(SAC_TYPE_F32)->to_float(f32, y, 4 * SAC_QK);
    CHECK(!memcmp(x, y, sizeof x));
    sac_f16 h[4 * SAC_QK];
    sac_type_traits_get(SAC_TYPE_F16)->from_float(x, h, 4 * SAC_QK);
    sac_type_traits_get(SAC_TYPE_F16)->to_float(h, y, 4 * SAC_QK);
    for (int i = 0; i < 4 * SAC_QK; i++) {
        CHECK(h[i] == ref_half_of(x[i]));
        CHECK((double)y[i] == ref_half_value(h[i]));
    }
}

int main(void) {
    RUN(test_f16_to_f32_all_halves);
    RUN(test_f16_round_trip);
    RUN(test_f32_to_f16_rounding);
    RUN(test_bf16);
    RUN(test_block_layout);
    RUN(test_table_entries);
    RUN(test_codecs_stay_in_their_rows);
    RUN(test_finite_checks_agree_with_decoding);
    RUN(test_row_bytes);
    RUN(test_type_names);
    RUN(test_q8_0_matches_reference);
    RUN(test_q8_0_rounding_ties);
    RUN(test_q4_0_matches_reference);
    RUN(test_q4_0_nibbles_and_clamp);
    RUN(test_q5_0_matches_reference);
    RUN(test_q5_0_bits_and_extremes);
    RUN(test_q4_1_q5_1_match_reference);
    RUN(test_q4_1_q5_1_dequantize);
    RUN(test_q8_1_matches_reference);
    RUN(test_q4_K_dequantize);
    RUN(test_q6_K_dequantize);
    RUN(test_q2_K_q3_K_dequantize);
    RUN(test_q2_K_q3_K_round_trip);
    RUN(test_q4_K_round_trip);
    RUN(test_q5_K_dequantize);
    RUN(test_q5_K_round_trip);
    RUN(test_q6_K_round_trip);
    RUN(test_q8_K_matches_reference);
    RUN(test_multi_block_rows_and_float_codecs);
    return check_summary("test_types");
}
