/* exp.h — e^x for x <= 0, computed here rather than by the C library's expf: softmax over long
 * contexts takes tens of thousands of exponentials per layer and token, and the wasm libc's expf is
 * a scalar call (~5 ns). The same float operations in the same order, a lane at a time or four
 * in a SIMD128 vector, give the same bits in every build. Used by softmax (softmax.h) and the
 * feed-forward activations (forward.c), whose arguments are made non-positive first. */
#ifndef SAC_EXP_H
#define SAC_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

/* Below this, e^x (< 1.7e-38, about FLT_MIN) is taken as 0: a softmax's terms sum to at least
 * 1, and the activations add it to 1, so it changes nothing a float could show. */
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

#ifdef SAC_SIMD128
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

#endif
