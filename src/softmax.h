/* softmax.h — the exponentiation step of a masked softmax, shared by the model's attention
 * (forward.c), the attention primitive (attend.c) and the probe (probe.c). Inline so that the
 * model's hot loop compiles exactly as if it were written there (with inv_temp = 1 the
 * multiply folds away).
 *
 * The exponential is computed here (sac_exp_nonpos), not by the C library's expf: at long
 * contexts a decode token takes tens of thousands of exponentials per layer, and the wasm
 * libc's expf is a scalar call (~5 ns per key and head, a fifth of attention over a bf16
 * cache at 2 048 keys). The same float operations in the same order, a lane at a time or four
 * in a SIMD128 vector, give the same bits in every build. */
#ifndef SAC_SOFTMAX_H
#define SAC_SOFTMAX_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

/* Below this, e^x (< 1.7e-38, about FLT_MIN) is taken as 0: a softmax's terms sum to at least
 * 1, so such a term changes nothing a float could show. */
#define SAC_EXP_MIN (-87.0f)

/* Cody–Waite: x = n·ln2 + r with |r| ≤ ln2/2, n = round(x·log2 e); ln2 in two parts (the
 * first exact in 9 bits), so n·ln2_hi is exact. e^r from Cephes' expf polynomial, then scaled
 * by 2^n built in the exponent field: within one ulp of e^x on [-87, 0] (every float checked).
 * Adding and subtracting 1.5·2^23 rounds x·log2 e to the nearest integer and leaves n in the
 * low bits of t. */
#define SAC_EXP_LOG2E 1.44269504088896341f
#define SAC_EXP_ROUND 12582912.0f /* 1.5 · 2^23 */
#define SAC_EXP_LN2_HI 0.693359375f
#define SAC_EXP_LN2_LO (-2.12194440e-4f)
#define SAC_EXP_P0 1.9875691500e-4f
#define SAC_EXP_P1 1.3981999507e-3f
#define SAC_EXP_P2 8.3334519073e-3f
#define SAC_EXP_P3 4.1665795894e-2f
#define SAC_EXP_P4 1.6666665459e-1f
#define SAC_EXP_P5 5.0000001201e-1f
/* t's bits minus ROUND's are n; plus 127, shifted into the exponent field: 2^n */
#define SAC_EXP_BIAS ((uint32_t)127 - (uint32_t)0x4B400000u)

/* e^x for x ≤ 0 (a shifted score): 0 below SAC_EXP_MIN and for −∞, NaN for NaN. Each
 * operation is its own statement, so no build may fuse a multiply and an add. */
static inline float sac_exp_nonpos(float x) {
    if (x < SAC_EXP_MIN) return 0.0f;
    float t = x * SAC_EXP_LOG2E;
    t = t + SAC_EXP_ROUND;
    const float n = t - SAC_EXP_ROUND;
    float hi = n * SAC_EXP_LN2_HI, lo = n * SAC_EXP_LN2_LO;
    float r = x - hi;
    r = r - lo;
    float p = SAC_EXP_P0 * r;
    p = p + SAC_EXP_P1, p = p * r;
    p = p + SAC_EXP_P2, p = p * r;
    p = p + SAC_EXP_P3, p = p * r;
    p = p + SAC_EXP_P4, p = p * r;
    p = p + SAC_EXP_P5;
    const float r2 = r * r;
    p = p * r2;
    p = p + r;
    p = p + 1.0f;
    uint32_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits + SAC_EXP_BIAS) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

#ifdef __wasm_simd128__
/* sac_exp_nonpos on four lanes. */
static inline v128_t sac_exp_nonpos4(v128_t x) {
    const v128_t low = wasm_f32x4_lt(x, wasm_f32x4_splat(SAC_EXP_MIN));
    v128_t t = wasm_f32x4_mul(x, wasm_f32x4_splat(SAC_EXP_LOG2E));
    t = wasm_f32x4_add(t, wasm_f32x4_splat(SAC_EXP_ROUND));
    const v128_t n = wasm_f32x4_sub(t, wasm_f32x4_splat(SAC_EXP_ROUND));
    v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(SAC_EXP_LN2_HI)));
    r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(SAC_EXP_LN2_LO)));
    v128_t p = wasm_f32x4_mul(wasm_f32x4_splat(SAC_EXP_P0), r);
    p = wasm_f32x4_mul(wasm_f32x4_add(p, wasm_f32x4_splat(SAC_EXP_P1)), r);
    p = wasm_f32x4_mul(wasm_f32x4_add(p, wasm_f32x4_splat(SAC_EXP_P2)), r);
    p = wasm_f32x4_mul(wasm_f32x4_add(p, wasm_f32x4_splat(SAC_EXP_P3)), r);
    p = wasm_f32x4_mul(wasm_f32x4_add(p, wasm_f32x4_splat(SAC_EXP_P4)), r);
    p = wasm_f32x4_add(p, wasm_f32x4_splat(SAC_EXP_P5));
    p = wasm_f32x4_mul(p, wasm_f32x4_mul(r, r));
    p = wasm_f32x4_add(wasm_f32x4_add(p, r), wasm_f32x4_splat(1.0f));
    const v128_t scale = wasm_i32x4_shl(wasm_i32x4_add(t, wasm_i32x4_splat((int32_t)SAC_EXP_BIAS)), 23);
    return wasm_v128_andnot(wasm_f32x4_mul(p, scale), low);
}
#endif

/* s[j] ← exp((s[j] − max) · inv_temp), with masked scores (−∞) giving exactly 0; returns Σ s[j].
 * `max` is the largest finite score of the row, so the largest term is 1 and the sum is >= 1
 * when any score is finite (no overflow, no division by 0 after it). The sum has four running
 * parts (part l takes terms j ≡ l mod 4 of the whole groups of four), added as
 * (p0 + p1) + (p2 + p3), then the last n % 4 terms in order: a vector's lanes in wasm, four
 * variables elsewhere, the same additions either way (and no chain of dependent adds). */
static inline float sac_softmax_exp(float *s, int32_t n, float max, float inv_temp) {
    const int32_t n4 = n - n % 4;
    float sum;
#ifdef __wasm_simd128__
    const v128_t m = wasm_f32x4_splat(max), it = wasm_f32x4_splat(inv_temp);
    v128_t parts = wasm_f32x4_splat(0.0f);
    for (int32_t j = 0; j < n4; j += 4) {
        const v128_t e = sac_exp_nonpos4(wasm_f32x4_mul(wasm_f32x4_sub(wasm_v128_load(s + j), m), it));
        wasm_v128_store(s + j, e);
        parts = wasm_f32x4_add(parts, e);
    }
    sum = (wasm_f32x4_extract_lane(parts, 0) + wasm_f32x4_extract_lane(parts, 1)) +
          (wasm_f32x4_extract_lane(parts, 2) + wasm_f32x4_extract_lane(parts, 3));
#else
    float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
    for (int32_t j = 0; j < n4; j += 4) {
        s[j] = sac_exp_nonpos((s[j] - max) * inv_temp);
        s[j + 1] = sac_exp_nonpos((s[j + 1] - max) * inv_temp);
        s[j + 2] = sac_exp_nonpos((s[j + 2] - max) * inv_temp);
        s[j + 3] = sac_exp_nonpos((s[j + 3] - max) * inv_temp);
        p0 += s[j], p1 += s[j + 1], p2 += s[j + 2], p3 += s[j + 3];
    }
    sum = (p0 + p1) + (p2 + p3);
#endif
    for (int32_t j = n4; j < n; j++) {
        s[j] = sac_exp_nonpos((s[j] - max) * inv_temp);
        sum += s[j];
    }
    return sum;
}

#endif
