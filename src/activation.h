/* activation.h — the feed-forward activations (GELU, SiLU) on rows of values, for the matmul's
 * epilogue (matmul.h); a header so that test_exp can check the vector form against the scalar
 * one. */
#ifndef SAC_ACTIVATION_H
#define SAC_ACTIVATION_H

#include <math.h>
#include <stdint.h>

#include "exp.h"

/* The feed-forward activations, on rows of n values: x[i] ← act(x[i]), times mul[i] when mul
 * is given (the gated forms). Their exponentials are exp.h's, of arguments made non-positive,
 * four lanes at a time in the SIMD128 builds with the same operations as the scalar form (each
 * its own statement, so nothing is fused): the bits are those of every build. (musl's expf,
 * the wasm libc's, cost ~5 ns a call, and these loops run once per output of a feed-forward.) */

/* GPT-2's tanh approximation of GELU, 0.5·x·(1 + tanh u) with u = √(2/π)·(x + 0.044715·x³), and
 * tanh |u| = (1 − t) / (1 + t), t = e^{−2|u|} (the sign put back): saturates to ±1 where t
 * reaches 0, and near 0 loses ~1e-7 absolute to the cancellation in 1 − t. */
#define SAC_GELU_C 0.7978845608028654f
#define SAC_GELU_A 0.044715f

static inline float sac_gelu(float x) {
    float cube = SAC_GELU_A * x;
    cube = cube * x;
    cube = cube * x;
    float u = x + cube;
    u = SAC_GELU_C * u;
    const float t = sac_exp_nonpos(-2.0f * fabsf(u));
    float th = (1.0f - t) / (1.0f + t);
    th = copysignf(th, u);
    const float half_x = 0.5f * x;
    return half_x * (1.0f + th);
}

/* x·σ(x), σ from t = e^{−|x|}: 1 / (1 + t) for x ≥ 0, t / (1 + t) below. */
static inline float sac_silu(float x) {
    const float t = sac_exp_nonpos(-fabsf(x));
    const float sigma = (x >= 0.0f ? 1.0f : t) / (1.0f + t);
    return x * sigma;
}

#ifdef SAC_SIMD128
static inline v128_t sac_gelu4(v128_t x) {
    v128_t cube = wasm_f32x4_mul(wasm_f32x4_splat(SAC_GELU_A), x);
    cube = wasm_f32x4_mul(wasm_f32x4_mul(cube, x), x);
    const v128_t u = wasm_f32x4_mul(wasm_f32x4_splat(SAC_GELU_C), wasm_f32x4_add(x, cube));
    const v128_t t = sac_exp_nonpos4(wasm_f32x4_mul(wasm_f32x4_splat(-2.0f), wasm_f32x4_abs(u)));
    const v128_t one = wasm_f32x4_splat(1.0f), sign = wasm_i32x4_splat((int32_t)0x80000000u);
    v128_t th = wasm_f32x4_div(wasm_f32x4_sub(one, t), wasm_f32x4_add(one, t));
    th = wasm_v128_or(wasm_v128_andnot(th, sign), wasm_v128_and(u, sign)); /* copysign */
    return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.5f), x), wasm_f32x4_add(one, th));
}

static inline v128_t sac_silu4(v128_t x) {
    const v128_t t = sac_exp_nonpos4(wasm_f32x4_neg(wasm_f32x4_abs(x))), one = wasm_f32x4_splat(1.0f);
    const v128_t top = wasm_v128_bitselect(one, t, wasm_f32x4_ge(x, wasm_f32x4_splat(0.0f)));
    return wasm_f32x4_mul(x, wasm_f32x4_div(top, wasm_f32x4_add(one, t)));
}
#endif

enum sac_activation { SAC_ACT_NONE, SAC_ACT_GELU, SAC_ACT_SILU };

/* x[i] ← act(x[i]), times mul[i] when mul is given. */
static inline void sac_activation_rows(enum sac_activation act, float *x, const float *mul, int64_t n) {
    int64_t i = 0;
#ifdef SAC_SIMD128
    for (; i + 4 <= n; i += 4) {
        const v128_t v = wasm_v128_load(x + i);
        v128_t y = act == SAC_ACT_SILU ? sac_silu4(v) : sac_gelu4(v);
        if (mul) y = wasm_f32x4_mul(y, wasm_v128_load(mul + i));
        wasm_v128_store(x + i, y);
    }
#endif
    for (; i < n; i++) {
        const float y = act == SAC_ACT_SILU ? sac_silu(x[i]) : sac_gelu(x[i]);
        x[i] = mul ? y * mul[i] : y;
    }
}

#endif
