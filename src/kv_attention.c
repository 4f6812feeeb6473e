/* kv_attention.c — attention's passes over the KV cache for a block of heads (see the header).
 *
 * The dot product repeats sac_dot_f32's arithmetic for f32 rows: eight running sums (lane l
 * takes the elements i with i % 8 == l), acc[l] = acc[l] + q·k, folded as
 * ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)), then the head_dim % 8 leftover products summed in
 * order and added. Inlined here, per head, it costs no call and no stride. */
#include "kv_attention.h"

#include <math.h>
#include <string.h>

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

/* Fused multiply-add would change rounding between paths; keep mul and add separate. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define LANES 8

static inline float leftover(float sum, const float *a, const float *b, int32_t n8, int32_t n) {
    if (n8 == n) return sum;
    float tail = 0.0f;
    for (int32_t i = n8; i < n; i++) tail = tail + a[i] * b[i];
    return sum + tail;
}

#ifdef __wasm_simd128__

static inline float dot(const float *a, const float *b, int32_t n) {
    const int32_t n8 = n - n % LANES;
    v128_t lo = wasm_f32x4_splat(0.0f), hi = lo;
    for (int32_t i = 0; i < n8; i += LANES) {
        lo = wasm_f32x4_add(lo, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
        hi = wasm_f32x4_add(hi, wasm_f32x4_mul(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4)));
    }
    v128_t s = wasm_f32x4_add(lo, hi); /* [a0+a4, a1+a5, a2+a6, a3+a7] */
    s = wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
    return leftover(wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1), a, b, n8, n);
}

static inline void axpy(float *restrict y, float w, const float *restrict x, int32_t n) {
    int32_t i = 0;
    const v128_t wv = wasm_f32x4_splat(w);
    for (; i + 4 <= n; i += 4)
        wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(y + i), wasm_f32x4_mul(wv, wasm_v128_load(x + i))));
    for (; i < n; i++) y[i] = y[i] + w * x[i];
}

#else

/* GCC vector types: lane-wise the same operations as the loop they replace (one register
 * per eight lanes natively; plain scalar code on a target without vectors). Left to itself,
 * gcc turned the lane loop into gathers here. */
typedef float lanes8 __attribute__((vector_size(LANES * sizeof(float))));

/* Loads and stores by memcpy, so no function passes a vector (which would tie the ABI to the
 * vector extension the build has). */
static inline float dot(const float *restrict a, const float *restrict b, int32_t n) {
    const int32_t n8 = n - n % LANES;
    lanes8 acc = {0}, x, y;
    for (int32_t i = 0; i < n8; i += LANES) {
        memcpy(&x, a + i, sizeof x);
        memcpy(&y, b + i, sizeof y);
        acc = acc + x * y;
    }
    const float s0 = acc[0] + acc[4], s1 = acc[1] + acc[5], s2 = acc[2] + acc[6], s3 = acc[3] + acc[7];
    return leftover((s0 + s2) + (s1 + s3), a, b, n8, n);
}

static inline void axpy(float *restrict y, float w, const float *restrict x, int32_t n) {
    const int32_t n8 = n - n % LANES;
    lanes8 yv, xv;
    for (int32_t i = 0; i < n8; i += LANES) {
        memcpy(&yv, y + i, sizeof yv);
        memcpy(&xv, x + i, sizeof xv);
        yv = yv + w * xv;
        memcpy(y + i, &yv, sizeof yv);
    }
    for (int32_t i = n8; i < n; i++) y[i] = y[i] + w * x[i];
}

#endif

void sac_kv_scores(const sac_kv_heads *a, float *max) {
    const int32_t hd = a->head_dim, nh = a->h1 - a->h0;
    for (int32_t h = 0; h < nh; h++) max[h] = -INFINITY;
    for (int32_t j = 0; j < a->n_keys; j++) {
        if (!a->key_mask[j] && j != a->own) {
            for (int32_t h = 0; h < nh; h++) a->rows[h][j] = -INFINITY;
            continue;
        }
        const float *k = a->k + (int64_t)j * a->kv_stride;
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const float s = dot(a->q + (int64_t)head * hd, k + (int64_t)(head / a->group) * hd, hd) * a->scale;
            a->rows[h][j] = s;
            if (s > max[h]) max[h] = s;
        }
    }
}

void sac_kv_mix(const sac_kv_heads *a, float *out) {
    const int32_t hd = a->head_dim, nh = a->h1 - a->h0;
    for (int32_t h = 0; h < nh; h++)
        for (int32_t i = 0; i < hd; i++) out[(int64_t)(a->h0 + h) * hd + i] = 0.0f;
    for (int32_t j = 0; j < a->n_keys; j++) {
        const float *v = a->v + (int64_t)j * a->kv_stride;
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const float w = a->rows[h][j];
            if (w != 0.0f) axpy(out + (int64_t)head * hd, w, v + (int64_t)(head / a->group) * hd, hd);
        }
    }
}
