/* quants.c — f16 conversion and the row codecs of each format.
 *
 * The quantizers follow ggml's reference ones (quantize_row_q8_0_ref, quantize_row_q4_0_ref)
 * operation for operation, so that a tensor quantized here has the same bytes as one
 * quantized by ggml. */
#include "quants.h"

#include <math.h>
#include <string.h>

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

void sac_to_float_q8_0(const void *src, float *dst, int64_t n) {
    const block_q8_0 *b = src;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        float d = sac_f16_to_f32(b[i].d);
        for (int j = 0; j < SAC_QK; j++) dst[i * SAC_QK + j] = (float)b[i].qs[j] * d;
    }
}

/* ggml's quantize_row_q8_0_ref: d = amax/127 in f32; the ints use 1/d of that f32 d (before
 * it is rounded to f16 for storage), rounded half away from zero. */
void sac_from_float_q8_0(const float *src, void *dst, int64_t n) {
    block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        const float *x = src + i * SAC_QK;
        float amax = 0.0f;
        for (int j = 0; j < SAC_QK; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f;
        float id = d != 0.0f ? 1.0f / d : 0.0f;
        b[i].d = sac_f32_to_f16(d);
        for (int j = 0; j < SAC_QK; j++) {
            float q = roundf(x[j] * id);
            /* finite inputs always land in [-127, 127]; the test keeps NaN/inf from being UB */
            b[i].qs[j] = (int8_t)(q >= -127.0f && q <= 127.0f ? q : 0.0f);
        }
    }
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

/* ggml's quantize_row_q4_0_ref: the value of largest magnitude (sign kept) maps to -8, so
 * d = max / -8; q = min(15, trunc(x/d + 8.5)). */
void sac_from_float_q4_0(const float *src, void *dst, int64_t n) {
    block_q4_0 *b = dst;
    for (int64_t i = 0; i < n / SAC_QK; i++) {
        const float *x = src + i * SAC_QK;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < SAC_QK; j++) {
            if (amax < fabsf(x[j])) {
                amax = fabsf(x[j]);
                max = x[j];
            }
        }
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
