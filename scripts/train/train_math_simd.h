/* train_math_simd.h — train_tanhf of train_math.h on four floats at once with wasm SIMD128,
 * two doubles per vector, by the same operations in the same order, so each lane gives the
 * bits the scalar function gives (for finite inputs; a NaN stays a NaN). Both of its branches
 * are computed and one is chosen per lane; within |u| ≤ 20, where the exp branch is taken,
 * e^{2u} needs none of train_exp's range checks. */
#ifndef TRAIN_MATH_SIMD_H
#define TRAIN_MATH_SIMD_H

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

#include "train_math.h"

/* 2^k per lane of two int32 lanes (the low half of k), as doubles. */
static inline v128_t train_pow2_x2(v128_t k) {
    const v128_t k64 = wasm_i64x2_extend_low_i32x4(k);
    return wasm_i64x2_shl(wasm_i64x2_add(k64, wasm_i64x2_splat(1023)), 52);
}

/* train_exp for |x| ≤ 40 (and NaN), two lanes. */
static inline v128_t train_exp_x2(v128_t x) {
    const v128_t k = wasm_f64x2_floor(
        wasm_f64x2_add(wasm_f64x2_mul(x, wasm_f64x2_splat(1.44269504088896338700)), wasm_f64x2_splat(0.5)));
    const v128_t r = wasm_f64x2_sub(wasm_f64x2_sub(x, wasm_f64x2_mul(k, wasm_f64x2_splat(TRAIN_LN2_HI))),
                                    wasm_f64x2_mul(k, wasm_f64x2_splat(TRAIN_LN2_LO)));
    static const double c[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                               1.0 / 40320.0,     1.0 / 5040.0,      1.0 / 720.0,     1.0 / 120.0,
                               1.0 / 24.0,        1.0 / 6.0,         0.5,             1.0,
                               1.0};
    v128_t p = wasm_f64x2_splat(1.0 / 6227020800.0);
    for (int i = 0; i < 13; i++) p = wasm_f64x2_add(wasm_f64x2_mul(p, r), wasm_f64x2_splat(c[i]));
    /* ki/2 rounded toward zero, as C's division: (ki − (ki >> 31)) >> 1 */
    const v128_t ki = wasm_i32x4_trunc_sat_f64x2_zero(k);
    const v128_t half = wasm_i32x4_shr(wasm_i32x4_sub(ki, wasm_i32x4_shr(ki, 31)), 1);
    return wasm_f64x2_mul(wasm_f64x2_mul(p, train_pow2_x2(half)), train_pow2_x2(wasm_i32x4_sub(ki, half)));
}

/* train_tanhf on two lanes of doubles (floats widened). */
static inline v128_t train_tanh_x2(v128_t x) {
    const v128_t ax = wasm_f64x2_abs(x);
    const v128_t x2 = wasm_f64x2_mul(x, x);
    const v128_t series = wasm_f64x2_mul(
        x, wasm_f64x2_sub(wasm_f64x2_splat(1.0),
                          wasm_f64x2_mul(x2, wasm_f64x2_sub(wasm_f64x2_splat(1.0 / 3.0),
                                                            wasm_f64x2_mul(x2, wasm_f64x2_splat(2.0 / 15.0))))));
    /* ±1 beyond 20: 1.0 with the sign of x */
    const v128_t one = wasm_v128_or(wasm_f64x2_splat(1.0), wasm_v128_and(x, wasm_i64x2_splat(INT64_MIN)));
    const v128_t t = train_exp_x2(wasm_f64x2_mul(wasm_f64x2_splat(2.0), x));
    const v128_t ratio = wasm_f64x2_div(wasm_f64x2_sub(t, wasm_f64x2_splat(1.0)), wasm_f64x2_add(t, wasm_f64x2_splat(1.0)));
    const v128_t big = wasm_v128_bitselect(one, ratio, wasm_f64x2_gt(ax, wasm_f64x2_splat(20.0)));
    return wasm_v128_bitselect(series, big, wasm_f64x2_lt(ax, wasm_f64x2_splat(1e-3)));
}

/* train_tanhf on four floats. */
static inline v128_t train_tanhf_x4(v128_t u) {
    const v128_t lo = train_tanh_x2(wasm_f64x2_promote_low_f32x4(u));
    const v128_t hi = train_tanh_x2(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(u, u, 2, 3, 0, 1)));
    return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 1, 4, 5);
}

#endif
#endif
