/* quants.c — f16 conversion, and the row codecs and finite checks of each format.
 *
 * The quantizers follow ggml's reference ones (quantize_row_q8_0_ref, quantize_row_q4_0_ref)
 * operation for operation, so that a tensor quantized here has the same bytes as one
 * quantized by ggml. */
#include "quants.h"

#include <math.h>
#include <string.h>

/* The quantizers' float operations must round as ggml's do, one at a time. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ------------------------------------------------------------------------------------------
 * IEEE binary16 <-> binary32
 * ---------------------------------------------------------------------------------------- */

static float bits_to_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t f32_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float sac_f16_to_f32(sac_f16 h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    if (exp == 0x1F) /* inf, NaN (payload kept) */
        return bits_to_f32(sign | 0x7F800000u | (mant << 13));
    if (exp != 0) /* normal: rebias 15 → 127 */
        return bits_to_f32(sign | ((exp + 112) << 23) | (mant << 13));
    if (mant == 0) return bits_to_f32(sign);
    /* subnormal: mant * 2^-24, normalized so the leading 1 becomes implicit */
    uint32_t e = 113; /* exponent of 2^-14 in binary32 */
    while (!(mant & 0x400u)) {
        mant <<= 1;
        e--;
    }
    return bits_to_f32(sign | (e << 23) | ((mant & 0x3FFu) << 13));
}

sac_f16 sac_f32_to_f16(float f) {
    uint32_t u = f32_to_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) /* NaN: quiet it, keep the top payload bits */
        return (sac_f16)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    if (a >= 0x477FF000u) /* >= 65520 rounds past 65504 (the largest half): inf */
        return (sac_f16)(sign | 0x7C00u);
    if (a >= 0x38800000u) { /* normal half (>= 2^-14) */
        uint32_t h = (a - (112u << 23)) >> 13;
        uint32_t rem = a & 0x1FFFu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; /* carry may bump the exponent: fine */
        return (sac_f16)(sign | h);
    }
    /* subnormal half: value = m * 2^-24, m = significand >> (126 - exp) */
    uint32_t e = a >> 23;
    if (e < 102) return (sac_f16)sign; /* below 2^-25: rounds to zero */
    uint32_t sig = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - e; /* 14..24 */
    uint32_t m = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) m++; /* m may reach 0x400: the smallest normal */
    return (sac_f16)(sign | m);
}

float sac_bf16_to_f32(sac_bf16 h) { return bits_to_f32((uint32_t)h << 16); }

sac_bf16 sac_f32_to_bf16(float f) {
    uint32_t u = f32_to_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (sac_bf16)((u >> 16) | 64); /* NaN: force quiet */
    return (sac_bf16)((u + (0x7FFFu + ((u >> 16) & 1u))) >> 16);
}

/* ------------------------------------------------------------------------------------------
 * Row codecs (n is a multiple of the type's block size)
 * ---------------------------------------------------------------------------------------- */

void sac_to_float_f32(const void *src, float *dst, int64_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void sac_from_float_f32(const float *src, void *dst, int64_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void sac_to_float_f16(const void *src, float *dst, int64_t n) {
    const sac_f16 *h = src;
    for (int64_t i = 0; i < n; i++) dst[i] = sac_f16_to_f32(h[i]);
}

void sac_from_float_f16(const float *src, void *dst, int64_t n) {
    sac_f16 *h = dst;
    for (int64_t i = 0; i < n; i++) h[i] = sac_f32_to_f16(src[i]);
}

void sac_to_float_bf16(const void *src, float *dst, int64_t n) {
    const sac_bf16 *h = src;
    for (int64_t i = 0; i < n; i++) dst[i] = sac_bf16_to_f32(h[i]);
}

void sac_from_float_bf16(const float *src, void *dst, int64_t n) {
    sac_bf16 *h = dst;
    for (int64_t i = 0; i < n; i++) h[i] = sac_f32_to_bf16(src[i]);
}

/* 32 int8 values times their f16 scale: Q8_0's and Q8_1's values. */
static void int8_block_to_float(sac_f16 d16, const int8_t *qs, float *dst) {
    float d = sac_f16_to_f32(d16);
    for (int j = 0; j < SAC_QK; j++) dst[j] = (float)qs[j] * d;
}

void sac_to_float_q8_0(const void *src, float *dst, int64_t n) {
    const block_q8_0 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) int8_block_to_float(b[i].d, b[i].qs, dst + i * SAC_QK);
}

/* ggml's quantize_row_q8_0_ref for one block: d = amax/127 in f32; the ints use 1/d of that f32
 * d (before it is rounded to f16 for storage), rounded half away from zero. Returns the f32 d. */
static float int8_block_from_float(const float *x, sac_f16 *d16, int8_t *qs) {
    float amax = 0.0f;
    for (int j = 0; j < SAC_QK; j++) amax = fmaxf(amax, fabsf(x[j]));
    const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    *d16 = sac_f32_to_f16(d);
    for (int j = 0; j < SAC_QK; j++) {
        float q = roundf(x[j] * id);
        /* finite inputs always land in [-127, 127]; the test keeps NaN/inf from being UB */
        qs[j] = (int8_t)(q >= -127.0f && q <= 127.0f ? q : 0.0f);
    }
    return d;
}

void sac_from_float_q8_0(const float *src, void *dst, int64_t n) {
    block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) int8_block_from_float(src + i * SAC_QK, &b[i].d, b[i].qs);
}

void sac_to_float_q4_0(const void *src, float *dst, int64_t n) {
    const block_q4_0 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        float d = sac_f16_to_f32(b[i].d);
        for (int j = 0; j < SAC_QK / 2; j++) {
            dst[i * SAC_QK + j] = (float)((b[i].qs[j] & 0x0F) - 8) * d;
            dst[i * SAC_QK + j + SAC_QK / 2] = (float)((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

/* The value of largest magnitude, the first of equals, sign kept (a NaN never wins): the
 * scale of ggml's Q4_0, Q5_0 and Q8_K quantizers and of make_qx_quants/make_q3_quants. */
static float largest_magnitude(int n, const float *x) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; i++) {
        float ax = fabsf(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    return max;
}

/* ggml's quantize_row_q4_0_ref: the value of largest magnitude (sign kept) maps to -8, so
 * d = max / -8; q = min(15, trunc(x/d + 8.5)). */
void sac_from_float_q4_0(const float *src, void *dst, int64_t n) {
    block_q4_0 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        const float *x = src + i * SAC_QK;
        float max = largest_magnitude(SAC_QK, x);
        float d = max / -8.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = sac_f32_to_f16(d);
        for (int j = 0; j < SAC_QK / 2; j++) {
            /* two statements, as in ggml, so no compiler fuses them into one fma */
            float x0 = x[j] * id, x1 = x[j + SAC_QK / 2] * id;
            float v0 = x0 + 8.5f, v1 = x1 + 8.5f;
            /* finite inputs give v in [0.5, 16.5]; the range test keeps NaN/inf from being UB */
            int q0 = v0 >= 0.0f && v0 < 16.0f ? (int)v0 : (v0 >= 16.0f ? 15 : 8);
            int q1 = v1 >= 0.0f && v1 < 16.0f ? (int)v1 : (v1 >= 16.0f ? 15 : 8);
            b[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

static uint32_t qh_bits(const uint8_t qh[4]) {
    return (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
}

void sac_to_float_q5_0(const void *src, float *dst, int64_t n) {
    const block_q5_0 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        float d = sac_f16_to_f32(b[i].d);
        uint32_t qh = qh_bits(b[i].qh);
        for (int j = 0; j < SAC_QK / 2; j++) {
            int q0 = (b[i].qs[j] & 0x0F) | (int)((qh >> j) << 4 & 0x10);
            int q1 = (b[i].qs[j] >> 4) | (int)((qh >> (j + 12)) & 0x10);
            dst[i * SAC_QK + j] = (float)(q0 - 16) * d;
            dst[i * SAC_QK + j + SAC_QK / 2] = (float)(q1 - 16) * d;
        }
    }
}

/* ggml's quantize_row_q5_0_ref: as Q4_0 with 32 levels, d = max / -16; q = min(31,
 * trunc(x/d + 16.5)), its fifth bit in qh. */
void sac_from_float_q5_0(const float *src, void *dst, int64_t n) {
    block_q5_0 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        const float *x = src + i * SAC_QK;
        float max = largest_magnitude(SAC_QK, x);
        float d = max / -16.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = sac_f32_to_f16(d);
        uint32_t qh = 0;
        for (int j = 0; j < SAC_QK / 2; j++) {
            float x0 = x[j] * id, x1 = x[j + SAC_QK / 2] * id;
            float v0 = x0 + 16.5f, v1 = x1 + 16.5f;
            /* finite inputs give v in [0.5, 32.5]; the range test keeps NaN/inf from being UB */
            int q0 = v0 >= 0.0f && v0 < 32.0f ? (int)v0 : (v0 >= 32.0f ? 31 : 16);
            int q1 = v1 >= 0.0f && v1 < 32.0f ? (int)v1 : (v1 >= 32.0f ? 31 : 16);
            b[i].qs[j] = (uint8_t)((q0 & 0x0F) | (q1 & 0x0F) << 4);
            qh |= (uint32_t)(q0 >> 4) << j | (uint32_t)(q1 >> 4) << (j + SAC_QK / 2);
        }
        for (int k = 0; k < 4; k++) b[i].qh[k] = (uint8_t)(qh >> (8 * k));
    }
}

/* Minimum and maximum of a block as ggml's Q4_1/Q5_1 quantizers find them (NaN never wins). */
static void block_min_max(const float *x, float *min, float *max) {
    float lo = 3.40282347e+38f, hi = -3.40282347e+38f;
    for (int j = 0; j < SAC_QK; j++) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *min = lo;
    *max = hi;
}

/* trunc(v) for a level expected in [0, top]; NaN (and what inf makes) gives 0, too large top. */
static int level_of(float v, int top) { return v >= 0.0f && v < (float)top + 1.0f ? (int)v : (v > 0.0f ? top : 0); }

void sac_to_float_q4_1(const void *src, float *dst, int64_t n) {
    const block_q4_1 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        float d = sac_f16_to_f32(b[i].d), m = sac_f16_to_f32(b[i].m);
        for (int j = 0; j < SAC_QK / 2; j++) {
            dst[i * SAC_QK + j] = (float)(b[i].qs[j] & 0x0F) * d + m;
            dst[i * SAC_QK + j + SAC_QK / 2] = (float)(b[i].qs[j] >> 4) * d + m;
        }
    }
}

/* The common part of ggml's Q4_1 and Q5_1 reference quantizers for one block: d = (max -
 * min) / top, m = min, q = trunc((x - min)/d + 0.5) kept within `clamp` (Q4_1: min(15, q);
 * Q5_1: as uint8_t, 255). */
static void quantize_with_min(const float *x, int top, int clamp, sac_f16 *d16, sac_f16 *m16, int q[SAC_QK]) {
    float min, max;
    block_min_max(x, &min, &max);
    float d = (max - min) / (float)top;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    *d16 = sac_f32_to_f16(d);
    *m16 = sac_f32_to_f16(min);
    for (int j = 0; j < SAC_QK; j++) {
        float v = (x[j] - min) * id;
        q[j] = level_of(v + 0.5f, clamp) & 0xFF;
    }
}

/* ggml's quantize_row_q4_1_ref: d = (max - min) / 15, m = min, q = min(15, trunc((x - min)/d + 0.5)). */
void sac_from_float_q4_1(const float *src, void *dst, int64_t n) {
    block_q4_1 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        int q[SAC_QK];
        quantize_with_min(src + i * SAC_QK, 15, 15, &b[i].d, &b[i].m, q);
        for (int j = 0; j < SAC_QK / 2; j++) b[i].qs[j] = (uint8_t)(q[j] | q[j + SAC_QK / 2] << 4);
    }
}

void sac_to_float_q5_1(const void *src, float *dst, int64_t n) {
    const block_q5_1 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        float d = sac_f16_to_f32(b[i].d), m = sac_f16_to_f32(b[i].m);
        uint32_t qh = qh_bits(b[i].qh);
        for (int j = 0; j < SAC_QK / 2; j++) {
            int q0 = (b[i].qs[j] & 0x0F) | (int)((qh >> j) << 4 & 0x10);
            int q1 = (b[i].qs[j] >> 4) | (int)((qh >> (j + 12)) & 0x10);
            dst[i * SAC_QK + j] = (float)q0 * d + m;
            dst[i * SAC_QK + j + SAC_QK / 2] = (float)q1 * d + m;
        }
    }
}

/* ggml's quantize_row_q5_1_ref: d = (max - min) / 31, q = trunc((x - min)/d + 0.5) (ggml
 * does not clamp: the 5 bits kept of a 32 are 0, as here). */
void sac_from_float_q5_1(const float *src, void *dst, int64_t n) {
    block_q5_1 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        int q[SAC_QK];
        quantize_with_min(src + i * SAC_QK, 31, 255, &b[i].d, &b[i].m, q);
        uint32_t qh = 0;
        for (int j = 0; j < SAC_QK / 2; j++) {
            int q0 = q[j], q1 = q[j + SAC_QK / 2];
            b[i].qs[j] = (uint8_t)((q0 & 0x0F) | (q1 & 0x0F) << 4);
            qh |= (uint32_t)((q0 & 0x10) >> 4) << j | (uint32_t)((q1 & 0x10) >> 4) << (j + SAC_QK / 2);
        }
        for (int k = 0; k < 4; k++) b[i].qh[k] = (uint8_t)(qh >> (8 * k));
    }
}

void sac_to_float_q8_1(const void *src, float *dst, int64_t n) {
    const block_q8_1 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) int8_block_to_float(b[i].d, b[i].qs, dst + i * SAC_QK);
}

/* ggml's quantize_row_q8_1_ref: Q8_0's rules, and s = f16(sum(qs) * d) with the f32 d. */
void sac_from_float_q8_1(const float *src, void *dst, int64_t n) {
    block_q8_1 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        const float d = int8_block_from_float(src + i * SAC_QK, &b[i].d, b[i].qs);
        int sum = 0;
        for (int j = 0; j < SAC_QK; j++) sum += b[i].qs[j];
        b[i].s = sac_f32_to_f16((float)sum * d);
    }
}

/* ------------------------------------------------------------------------------------------
 * K-quants: super-blocks of 256 values
 * ---------------------------------------------------------------------------------------- */

int sac_nearest_int(float x) {
    if (!(fabsf(x) <= 4194303.0f)) return 0; /* NaN, inf: ggml asserts; no finite input gets here */
    float v = x + 12582912.0f;
    int32_t i;
    memcpy(&i, &v, sizeof i);
    return (i & 0x007FFFFF) - 0x00400000;
}

#define GROUP_MAX_EPS 1e-15f /* ggml's: groups below it are all zero */

static int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

void sac_to_float_q4_K(const void *src, float *dst, int64_t n) {
    const block_q4_K *b = src;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        float d = sac_f16_to_f32(b[i].d), dmin = sac_f16_to_f32(b[i].dmin);
        float *y = dst + i * SAC_QK_K;
        for (int j = 0; j < 8; j += 2) { /* two sub-blocks share 32 bytes: low, then high nibbles */
            const uint8_t *q = b[i].qs + 16 * j;
            int sc, m;
            sac_q4_K_scale_min(b[i].scales, j, &sc, &m);
            float d1 = d * (float)sc, m1 = dmin * (float)m;
            sac_q4_K_scale_min(b[i].scales, j + 1, &sc, &m);
            float d2 = d * (float)sc, m2 = dmin * (float)m;
            for (int l = 0; l < 32; l++) y[32 * j + l] = d1 * (float)(q[l] & 0x0F) - m1;
            for (int l = 0; l < 32; l++) y[32 * j + 32 + l] = d2 * (float)(q[l] >> 4) - m2;
        }
    }
}

/* ggml's make_qkx2_quants: levels 0..nmax with a scale and a min (min <= 0) for n values,
 * fitted by weighted least squares over nstep + 1 trial scales, judged by the weighted
 * squared (or, use_mad, absolute) error; returns the scale and -min in *the_min. Each float
 * operation as ggml writes it. */
static float make_qkx2_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                              uint8_t *Laux, float rmin, float rdelta, int nstep, int use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; i++) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    float iscale = (float)nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; i++) {
        int l = sac_nearest_int(iscale * (x[i] - min));
        L[i] = (uint8_t)clamp_int(l, 0, nmax);
        float diff = scale * (float)L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_error += weights[i] * diff;
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta * (float)is + (float)nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; i++) {
            int l = clamp_int(sac_nearest_int(iscale * (x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t)l;
            float w = weights[i];
            sum_l += w * (float)l;
            sum_l2 += w * (float)l * (float)l;
            sum_xl += w * (float)l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; i++) {
                float diff = this_scale * (float)Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                cur_error += weights[i] * diff;
            }
            if (cur_error < best_error) {
                memcpy(L, Laux, (size_t)n);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

/* The common part of ggml's quantize_row_q4_K_ref and quantize_row_q5_K_ref for one
 * super-block: per sub-block a (scale, min) pair by make_qkx2_quants (levels 0..nmax, weights
 * av_x + |x|), both sets quantized to 6 bits against their maxima and packed into sm, d and
 * dmin as f16; the levels recomputed with the stored scales into L. */
static void quantize_k_super_block(const float *x, int nmax, float rmin, float rdelta, int nstep, uint8_t L[SAC_QK_K],
                                   uint8_t sm[12], sac_f16 *d_out, sac_f16 *dmin_out) {
    uint8_t Laux[32];
    float weights[32], mins[8], scales[8];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; j++) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
        float av_x = sqrtf(sum_x2 / 32);
        for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, 0);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; j++) {
        uint8_t ls = (uint8_t)sac_nearest_int(inv_scale * scales[j]);
        uint8_t lm = (uint8_t)sac_nearest_int(inv_min * mins[j]);
        ls = ls < 63 ? ls : 63;
        lm = lm < 63 ? lm : 63;
        if (j < 4) {
            sm[j] = ls;
            sm[j + 4] = lm;
        } else {
            sm[j + 4] = (uint8_t)((ls & 0x0F) | (lm & 0x0F) << 4);
            sm[j - 4] |= (uint8_t)((ls >> 4) << 6);
            sm[j] |= (uint8_t)((lm >> 4) << 6);
        }
    }
    *d_out = sac_f32_to_f16(max_scale / 63.0f);
    *dmin_out = sac_f32_to_f16(max_min / 63.0f);
    for (int j = 0; j < 8; j++) {
        int sc, m;
        sac_q4_K_scale_min(sm, j, &sc, &m);
        float d = sac_f16_to_f32(*d_out) * (float)sc;
        if (d == 0.0f) continue; /* the levels of make_qkx2_quants stay */
        float dm = sac_f16_to_f32(*dmin_out) * (float)m;
        for (int l = 0; l < 32; l++)
            L[32 * j + l] = (uint8_t)clamp_int(sac_nearest_int((x[32 * j + l] + dm) / d), 0, nmax);
    }
}

/* ggml's quantize_row_q4_K_ref: 4-bit levels, 21 trial scales from nmax - 1 in steps of 0.1. */
void sac_from_float_q4_K(const float *src, void *dst, int64_t n) {
    block_q4_K *b = dst;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        uint8_t L[SAC_QK_K];
        quantize_k_super_block(src + i * SAC_QK_K, 15, -1.0f, 0.1f, 20, L, b[i].scales, &b[i].d, &b[i].dmin);
        for (int j = 0; j < SAC_QK_K; j += 64)
            for (int l = 0; l < 32; l++) b[i].qs[j / 2 + l] = (uint8_t)(L[j + l] | L[j + l + 32] << 4);
    }
}

void sac_to_float_q5_K(const void *src, float *dst, int64_t n) {
    const block_q5_K *b = src;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        float d = sac_f16_to_f32(b[i].d), dmin = sac_f16_to_f32(b[i].dmin);
        float *y = dst + i * SAC_QK_K;
        for (int j = 0; j < 8; j += 2) { /* as Q4_K, the fifth bit of sub-block j in bit j of qh */
            const uint8_t *q = b[i].qs + 16 * j;
            int sc, m;
            sac_q4_K_scale_min(b[i].scales, j, &sc, &m);
            float d1 = d * (float)sc, m1 = dmin * (float)m;
            sac_q4_K_scale_min(b[i].scales, j + 1, &sc, &m);
            float d2 = d * (float)sc, m2 = dmin * (float)m;
            for (int l = 0; l < 32; l++) {
                y[32 * j + l] = d1 * (float)((q[l] & 0x0F) + (b[i].qh[l] >> j & 1) * 16) - m1;
                y[32 * j + 32 + l] = d2 * (float)((q[l] >> 4) + (b[i].qh[l] >> (j + 1) & 1) * 16) - m2;
            }
        }
    }
}

/* ggml's quantize_row_q5_K_ref: 5-bit levels, 16 trial scales from nmax - 0.5 in steps of 0.1. */
void sac_from_float_q5_K(const float *src, void *dst, int64_t n) {
    block_q5_K *b = dst;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        uint8_t L[SAC_QK_K];
        quantize_k_super_block(src + i * SAC_QK_K, 31, -0.5f, 0.1f, 15, L, b[i].scales, &b[i].d, &b[i].dmin);
        memset(b[i].qh, 0, sizeof b[i].qh);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                int l1 = L[64 * c + l], l2 = L[64 * c + 32 + l];
                b[i].qs[32 * c + l] = (uint8_t)((l1 & 0x0F) | (l2 & 0x0F) << 4);
                b[i].qh[l] |= (uint8_t)((l1 >> 4) << (2 * c) | (l2 >> 4) << (2 * c + 1));
            }
    }
}

/* Q2_K's and Q3_K's 2-bit levels: value v = 128 h + 32 k + l (l < 32) in bits 2k of qs[32 h + l]. */
static int two_bits(const uint8_t *qs, int v) { return (qs[32 * (v / 128) + v % 32] >> (2 * ((v % 128) / 32))) & 3; }

static void pack_two_bits(const uint8_t L[SAC_QK_K], uint8_t qs[SAC_QK_K / 4]) {
    for (int j = 0; j < SAC_QK_K; j += 128)
        for (int l = 0; l < 32; l++)
            qs[j / 4 + l] = (uint8_t)(L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

void sac_to_float_q2_K(const void *src, float *dst, int64_t n) {
    const block_q2_K *b = src;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        float d = sac_f16_to_f32(b[i].d), dmin = sac_f16_to_f32(b[i].dmin);
        for (int v = 0; v < SAC_QK_K; v++) {
            int sc = b[i].scales[v / 16];
            float dl = d * (float)(sc & 0x0F), ml = dmin * (float)(sc >> 4);
            dst[i * SAC_QK_K + v] = dl * (float)two_bits(b[i].qs, v) - ml;
        }
    }
}

/* ggml's quantize_row_q2_K_ref: per 16 values a (scale, min) pair by make_qkx2_quants (levels
 * 0..3, weights |x|, absolute error), both quantized to 4 bits against their maxima, the
 * levels recomputed with the stored scales. */
void sac_from_float_q2_K(const float *src, void *dst, int64_t n) {
    block_q2_K *b = dst;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        const float *x = src + i * SAC_QK_K;
        uint8_t L[SAC_QK_K], Laux[16];
        float weights[16], mins[16], scales[16];
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 16; j++) {
            for (int l = 0; l < 16; l++) weights[l] = fabsf(x[16 * j + l]);
            scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, 1);
            if (scales[j] > max_scale) max_scale = scales[j];
            if (mins[j] > max_min) max_min = mins[j];
        }
        if (max_scale > 0) {
            float iscale = 15.0f / max_scale;
            for (int j = 0; j < 16; j++) b[i].scales[j] = (uint8_t)sac_nearest_int(iscale * scales[j]);
            b[i].d = sac_f32_to_f16(max_scale / 15.0f);
        } else {
            memset(b[i].scales, 0, sizeof b[i].scales);
            b[i].d = sac_f32_to_f16(0.0f);
        }
        if (max_min > 0) {
            float iscale = 15.0f / max_min;
            for (int j = 0; j < 16; j++) b[i].scales[j] |= (uint8_t)(sac_nearest_int(iscale * mins[j]) << 4);
            b[i].dmin = sac_f32_to_f16(max_min / 15.0f);
        } else {
            b[i].dmin = sac_f32_to_f16(0.0f);
        }
        for (int j = 0; j < 16; j++) {
            float d = sac_f16_to_f32(b[i].d) * (float)(b[i].scales[j] & 0x0F);
            if (d == 0.0f) continue;
            float dm = sac_f16_to_f32(b[i].dmin) * (float)(b[i].scales[j] >> 4);
            for (int l = 0; l < 16; l++)
                L[16 * j + l] = (uint8_t)clamp_int(sac_nearest_int((x[16 * j + l] + dm) / d), 0, 3);
        }
        pack_two_bits(L, b[i].qs);
    }
}

void sac_to_float_q3_K(const void *src, float *dst, int64_t n) {
    const block_q3_K *b = src;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        float d = sac_f16_to_f32(b[i].d);
        for (int v = 0; v < SAC_QK_K; v++) {
            float dl = d * (float)sac_q3_K_scale(b[i].scales, v / 16);
            int high = (b[i].hmask[v % 32] >> (v / 32)) & 1;
            dst[i * SAC_QK_K + v] = dl * (float)(two_bits(b[i].qs, v) - (high ? 0 : 4));
        }
    }
}

/* largest_magnitude, or 0 for a group below GROUP_MAX_EPS (all zero, for make_qx_quants and
 * make_q3_quants). */
static float signed_max(int n, const float *x) {
    float max = largest_magnitude(n, x);
    return fabsf(max) < GROUP_MAX_EPS ? 0.0f : max;
}

/* Their fit at one scale: levels l = clamp(nearest(iscale x), -nmax, nmax - 1), stored as
 * l + offset, and the x²-weighted sums of l x and l², in ggml's order of operations. */
static void fit_levels(int n, int nmax, const float *x, float iscale, int offset, int8_t *L, float *sumlx,
                       float *suml2) {
    float slx = 0, sl2 = 0;
    for (int i = 0; i < n; i++) {
        int l = clamp_int(sac_nearest_int(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)(l + offset);
        float w = x[i] * x[i];
        slx += w * x[i] * (float)l;
        sl2 += w * (float)l * (float)l;
    }
    *sumlx = slx;
    *suml2 = sl2;
}

/* ggml's make_q3_quants with do_rmse: signed levels -nmax..nmax-1 (returned + nmax in L) for
 * n values, refined by up to 5 passes that move single levels while the x²-weighted fit
 * improves; returns the scale. */
static float make_q3_quants(int n, int nmax, const float *x, int8_t *L) {
    float max = signed_max(n, x);
    if (max == 0.0f) {
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    float sumlx, suml2;
    fit_levels(n, nmax, x, (float)-nmax / max, 0, L, &sumlx, &suml2);
    for (int itry = 0; itry < 5; itry++) {
        int n_changed = 0;
        for (int i = 0; i < n; i++) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * (float)L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * (float)L[i] * (float)L[i];
                int new_l = clamp_int(sac_nearest_int(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (new_l != L[i]) {
                    slx += w * x[i] * (float)new_l;
                    sl2 += w * (float)new_l * (float)new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (int8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed++;
                    }
                }
            }
        }
        if (!n_changed) break;
    }
    for (int i = 0; i < n; i++) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* ggml's quantize_row_q3_K_ref: a scale per 16 values by make_q3_quants, the scales
 * quantized to 6 bits (signed, offset 32) against the one of largest magnitude, the levels
 * recomputed with the stored scales; their third bit goes to hmask. */
void sac_from_float_q3_K(const float *src, void *dst, int64_t n) {
    block_q3_K *b = dst;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        const float *x = src + i * SAC_QK_K;
        int8_t L[SAC_QK_K];
        float scales[16], max_scale = 0, amax = 0;
        for (int j = 0; j < 16; j++) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
            float scale = fabsf(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }
        memset(b[i].scales, 0, sizeof b[i].scales);
        if (max_scale != 0.0f) {
            float iscale = -32.0f / max_scale;
            for (int j = 0; j < 16; j++) {
                int l = (int8_t)sac_nearest_int(iscale * scales[j]); /* int8_t, as ggml */
                l = clamp_int(l, -32, 31) + 32;
                if (j < 8) b[i].scales[j] = (uint8_t)(l & 0x0F);
                else b[i].scales[j - 8] |= (uint8_t)((l & 0x0F) << 4);
                b[i].scales[j % 4 + 8] |= (uint8_t)((l >> 4) << (2 * (j / 4)));
            }
            b[i].d = sac_f32_to_f16(1 / iscale);
        } else {
            b[i].d = sac_f32_to_f16(0.0f);
        }
        for (int j = 0; j < 16; j++) {
            float d = sac_f16_to_f32(b[i].d) * (float)sac_q3_K_scale(b[i].scales, j);
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; l++)
                L[16 * j + l] = (int8_t)(clamp_int(sac_nearest_int(x[16 * j + l] / d), -4, 3) + 4);
        }
        memset(b[i].hmask, 0, sizeof b[i].hmask);
        uint8_t levels[SAC_QK_K];
        for (int j = 0; j < SAC_QK_K; j++) { /* the third bit of value j: bit j/32 of hmask[j % 32] */
            if (L[j] > 3) b[i].hmask[j % 32] |= (uint8_t)(1 << (j / 32));
            levels[j] = (uint8_t)(L[j] > 3 ? L[j] - 4 : L[j]);
        }
        pack_two_bits(levels, b[i].qs);
    }
}

void sac_to_float_q6_K(const void *src, float *dst, int64_t n) {
    const block_q6_K *b = src;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        float d = sac_f16_to_f32(b[i].d);
        for (int h = 0; h < 2; h++) { /* halves of 128 values */
            const uint8_t *ql = b[i].ql + 64 * h, *qh = b[i].qh + 32 * h;
            const int8_t *sc = b[i].scales + 8 * h;
            float *y = dst + i * SAC_QK_K + 128 * h;
            for (int l = 0; l < 32; l++) {
                int is = l / 16;
                int q1 = ((ql[l] & 0x0F) | ((qh[l] >> 0) & 3) << 4) - 32;
                int q2 = ((ql[l + 32] & 0x0F) | ((qh[l] >> 2) & 3) << 4) - 32;
                int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
                int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
                y[l] = d * (float)sc[is] * (float)q1;
                y[l + 32] = d * (float)sc[is + 2] * (float)q2;
                y[l + 64] = d * (float)sc[is + 4] * (float)q3;
                y[l + 96] = d * (float)sc[is + 6] * (float)q4;
            }
        }
    }
}

/* ggml's make_qx_quants with rmse_type 1 and no importance weights: signed levels
 * -nmax..nmax-1 (returned + nmax in L) and the scale that minimizes the x²-weighted error
 * over 19 trial scales. */
static float make_qx_quants(int n, int nmax, const float *x, int8_t *L) {
    float max = signed_max(n, x);
    if (max == 0.0f) {
        for (int i = 0; i < n; i++) L[i] = 0;
        return 0.0f;
    }
    float sumlx, suml2;
    fit_levels(n, nmax, x, (float)-nmax / max, nmax, L, &sumlx, &suml2);
    float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) continue;
        int8_t trial[SAC_QK_K];
        fit_levels(n, nmax, x, -((float)nmax + 0.1f * (float)is) / max, nmax, trial, &sumlx, &suml2);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            memcpy(L, trial, (size_t)n);
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/* ggml's quantize_row_q6_K_ref: a scale per 16 values by make_qx_quants, the scales
 * quantized to int8 against the one of largest magnitude, the levels recomputed with the
 * stored scales. */
void sac_from_float_q6_K(const float *src, void *dst, int64_t n) {
    block_q6_K *b = dst;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        const float *x = src + i * SAC_QK_K;
        int8_t L[SAC_QK_K];
        float scales[16];
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < 16; ib++) {
            scales[ib] = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
            float abs_scale = fabsf(scales[ib]);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scales[ib];
            }
        }
        if (max_abs_scale < GROUP_MAX_EPS) {
            memset(&b[i], 0, sizeof b[i]);
            continue;
        }
        float iscale = -128.0f / max_scale;
        b[i].d = sac_f32_to_f16(1 / iscale);
        for (int ib = 0; ib < 16; ib++) {
            int v = sac_nearest_int(iscale * scales[ib]);
            b[i].scales[ib] = (int8_t)(v < 127 ? v : 127);
        }
        for (int j = 0; j < 16; j++) {
            float d = sac_f16_to_f32(b[i].d) * (float)b[i].scales[j];
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; l++)
                L[16 * j + l] = (int8_t)(clamp_int(sac_nearest_int(x[16 * j + l] / d), -32, 31) + 32);
        }
        for (int h = 0; h < 2; h++) {
            uint8_t *ql = b[i].ql + 64 * h, *qh = b[i].qh + 32 * h;
            const int8_t *Lh = L + 128 * h;
            for (int l = 0; l < 32; l++) {
                ql[l] = (uint8_t)((Lh[l] & 0x0F) | (Lh[l + 64] & 0x0F) << 4);
                ql[l + 32] = (uint8_t)((Lh[l + 32] & 0x0F) | (Lh[l + 96] & 0x0F) << 4);
                qh[l] = (uint8_t)((Lh[l] >> 4) | (Lh[l + 32] >> 4) << 2 | (Lh[l + 64] >> 4) << 4 | (Lh[l + 96] >> 4) << 6);
            }
        }
    }
}

void sac_to_float_q8_K(const void *src, float *dst, int64_t n) {
    const block_q8_K *b = src;
    for (int64_t i = 0; i < n / SAC_QK_K; i++)
        for (int j = 0; j < SAC_QK_K; j++) dst[i * SAC_QK_K + j] = b[i].d * (float)b[i].qs[j];
}

/* ggml's quantize_row_q8_K_ref: the value of largest magnitude (sign kept) maps to -127,
 * q = min(127, nearest_int(x * -127/max)) (ties to even), d = max / -127 as 1/iscale. */
void sac_from_float_q8_K(const float *src, void *dst, int64_t n) {
    block_q8_K *b = dst;
    for (int64_t i = 0; i < n / SAC_QK_K; i++) {
        const float *x = src + i * SAC_QK_K;
        float max = largest_magnitude(SAC_QK_K, x);
        memset(&b[i], 0, sizeof b[i]);
        if (max == 0.0f) continue;
        float iscale = -127.0f / max;
        for (int j = 0; j < SAC_QK_K; j++) {
            int v = sac_nearest_int(iscale * x[j]);
            b[i].qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int j = 0; j < SAC_QK_K / 16; j++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) sum += b[i].qs[16 * j + l];
            b[i].bsums[j] = (int16_t)sum;
        }
        b[i].d = 1 / iscale;
    }
}

/* ------------------------------------------------------------------------------------------
 * Finite checks (n is a multiple of the type's block size)
 *
 * Whether all n values a row codec would give are finite, read from the bits that decide it
 * rather than decoded: a float type's exponent fields; a block type's f16 scales (d, and m or
 * dmin). Every value of a block multiplies d (and subtracts a multiple of dmin or adds m), so
 * one non-finite scale makes every value of its block non-finite (inf times a level of 0 is
 * NaN); finite scales keep every value finite (at most 65504 · 128 · 32 in magnitude, Q6_K's:
 * far inside f32). So the verdict is the decoded values' own, at a fraction of their cost.
 * ---------------------------------------------------------------------------------------- */

static inline int f16_finite(sac_f16 h) { return (h & 0x7C00u) != 0x7C00u; }

/* The float types, eight bytes at a time: in each value's lane, the exponent field (mask) plus
 * its lowest bit (low) carries into the lane's top bit exactly when the field is all ones, and
 * never further, so the lanes stay apart in one 64-bit sum (and SIMD sums eight halves at once,
 * where a compare per value widened each to 32 bits). The last word is padded with zeros. */
static uint64_t exponent_carries(const void *src, int64_t bytes, uint64_t mask, uint64_t low) {
    const unsigned char *p = src;
    uint64_t carry = 0, w;
    int64_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        memcpy(&w, p + i, sizeof w);
        carry |= (w & mask) + low;
    }
    if (i < bytes) {
        w = 0;
        memcpy(&w, p + i, (size_t)(bytes - i));
        carry |= (w & mask) + low;
    }
    return carry;
}

int sac_finite_f32(const void *src, int64_t n) {
    return !(exponent_carries(src, 4 * n, 0x7F8000007F800000u, 0x0080000000800000u) & 0x8000000080000000u);
}

int sac_finite_f16(const void *src, int64_t n) {
    return !(exponent_carries(src, 2 * n, 0x7C007C007C007C00u, 0x0400040004000400u) & 0x8000800080008000u);
}

int sac_finite_bf16(const void *src, int64_t n) {
    return !(exponent_carries(src, 2 * n, 0x7F807F807F807F80u, 0x0080008000800080u) & 0x8000800080008000u);
}

/* The block types: whether each block's scales are finite. */
#define FINITE_BLOCKS(name, block, values, scales_finite)                                        \
    int name(const void *src, int64_t n) {                                                       \
        const block *b = src;                                                                    \
        uint32_t bad = 0;                                                                        \
        for (int64_t i = 0; i < n / (values); i++) bad |= !(scales_finite);                      \
        return !bad;                                                                             \
    }
FINITE_BLOCKS(sac_finite_q4_0, block_q4_0, SAC_QK, f16_finite(b[i].d))
FINITE_BLOCKS(sac_finite_q5_0, block_q5_0, SAC_QK, f16_finite(b[i].d))
FINITE_BLOCKS(sac_finite_q8_0, block_q8_0, SAC_QK, f16_finite(b[i].d))
FINITE_BLOCKS(sac_finite_q4_1, block_q4_1, SAC_QK, f16_finite(b[i].d) & f16_finite(b[i].m))
FINITE_BLOCKS(sac_finite_q5_1, block_q5_1, SAC_QK, f16_finite(b[i].d) & f16_finite(b[i].m))
FINITE_BLOCKS(sac_finite_q2_K, block_q2_K, SAC_QK_K, f16_finite(b[i].d) & f16_finite(b[i].dmin))
FINITE_BLOCKS(sac_finite_q3_K, block_q3_K, SAC_QK_K, f16_finite(b[i].d))
FINITE_BLOCKS(sac_finite_q4_K, block_q4_K, SAC_QK_K, f16_finite(b[i].d) & f16_finite(b[i].dmin))
FINITE_BLOCKS(sac_finite_q5_K, block_q5_K, SAC_QK_K, f16_finite(b[i].d) & f16_finite(b[i].dmin))
FINITE_BLOCKS(sac_finite_q6_K, block_q6_K, SAC_QK_K, f16_finite(b[i].d))
#undef FINITE_BLOCKS
