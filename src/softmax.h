/* softmax.h — the exponentiation step of a masked softmax, shared by the model's attention
 * (forward.c), the attention primitive (attend.c) and the probe (probe.c). Inline so that the
 * model's hot loop compiles exactly as if it were written there (with inv_temp = 1 the
 * multiply folds away). The exponential is exp.h's. */
#ifndef SAC_SOFTMAX_H
#define SAC_SOFTMAX_H

#include <stdint.h>

#include "exp.h"

/* s[j] ← exp((s[j] − max) · inv_temp), with masked scores (−∞) giving exactly 0; returns Σ s[j].
 * `max` is the largest finite score of the row, so the largest term is 1 and the sum is >= 1
 * when any score is finite (no overflow, no division by 0 after it). The sum has four running
 * parts (part l takes terms j ≡ l mod 4 of the whole groups of four), added as
 * (p0 + p1) + (p2 + p3), then the last n % 4 terms in order: a vector's lanes with SIMD128, four
 * variables in plain C, the same additions either way (and no chain of dependent adds). */
static inline float sac_softmax_exp(float *s, int32_t n, float max, float inv_temp) {
    const int32_t n4 = n - n % 4;
    float sum;
#ifdef SAC_SIMD128
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
