/* kv_attention.c — attention's passes over the KV cache for a block of heads (see the header).
 *
 * The dot product repeats sac_dot_f32's arithmetic for f32 rows: eight running sums (lane l
 * takes the elements i with i % 8 == l), acc[l] = acc[l] + q·k, folded as
 * ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)), then the head_dim % 8 leftover products summed in
 * order and added. The weighted sum adds w_j·v_j to each output value in key order, as
 * sac_axpy_f32 key after key does. What changes is only which values are worked on together:
 *   - scores: four keys per step for one head, so the head's query is loaded once for four;
 *   - values: a run of keys per piece of 32 output values, which stay in registers over the
 *     run instead of being loaded and stored for every key.
 * The eight lanes are a GCC vector type: one AVX register natively, two SIMD128 registers in
 * wasm, plain scalar code where there are no vectors. Loads and stores go through memcpy, so
 * no function passes a vector (which would tie the ABI to the vector extension a build has).
 *
 * A bf16 cache differs only in its loads: each value widened to the f32 it stands for (a
 * 16-bit shift, exact), then the same arithmetic. Each pass is written once with a `bf16`
 * flag that is a constant where it is inlined, so each type gets its own loop. */
#include "kv_attention.h"

#include <math.h>
#include <string.h>

#include "kv_cache.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

/* Fused multiply-add would change rounding between paths; keep mul and add separate. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define LANES 8
typedef float lanes8 __attribute__((vector_size(LANES * sizeof(float))));

#define KEYS_PER_STEP 4
#define PIECE 32       /* output values a value run keeps in registers: 4 × 8 lanes */
#define VALUE_RUN 64   /* keys per value run: their rows (for a 12-head block, 192 KB) stay cached */

#define INLINE static inline __attribute__((always_inline))

/* Value i of a cache row, as f32. */
INLINE float value_at(const void *row, int64_t i, int bf16) {
    return bf16 ? sac_kv_bf16_to_f32(((const uint16_t *)row)[i]) : ((const float *)row)[i];
}

/* Where value i of a row starts. */
INLINE const void *value_ptr(const void *row, int64_t i, int bf16) {
    return bf16 ? (const void *)((const uint16_t *)row + i) : (const void *)((const float *)row + i);
}

INLINE float leftover(float sum, const float *a, const void *b, int32_t n8, int32_t n, int bf16) {
    if (n8 == n) return sum;
    float tail = 0.0f;
    for (int32_t i = n8; i < n; i++) tail = tail + a[i] * value_at(b, i, bf16);
    return sum + tail;
}

#ifdef __wasm_simd128__

/* Values [i, i + 8) of a row as two f32 registers. */
INLINE void load8(const void *row, int64_t i, int bf16, v128_t *lo, v128_t *hi) {
    if (bf16) {
        const v128_t h = wasm_v128_load((const uint16_t *)row + i), zero = wasm_i32x4_splat(0);
        *lo = wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11); /* h << 16 per lane: the f32 */
        *hi = wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15);
    } else {
        *lo = wasm_v128_load((const float *)row + i);
        *hi = wasm_v128_load((const float *)row + i + 4);
    }
}

/* The eight lanes as two SIMD128 registers written out (clang lowers the 8-lane vector type
 * through memory here). */
static inline float fold_v(v128_t lo, v128_t hi) {
    v128_t s = wasm_f32x4_add(lo, hi); /* [a0+a4, a1+a5, a2+a6, a3+a7] */
    s = wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1);
}

INLINE float dot(const float *restrict a, const void *b, int32_t n, int bf16) {
    const int32_t n8 = n - n % LANES;
    v128_t al = wasm_f32x4_splat(0.0f), ah = al, bl, bh;
    for (int32_t i = 0; i < n8; i += LANES) {
        load8(b, i, bf16, &bl, &bh);
        al = wasm_f32x4_add(al, wasm_f32x4_mul(wasm_v128_load(a + i), bl));
        ah = wasm_f32x4_add(ah, wasm_f32x4_mul(wasm_v128_load(a + i + 4), bh));
    }
    return leftover(fold_v(al, ah), a, b, n8, n, bf16);
}

INLINE void dot4(const float *restrict q, const void *const k[KEYS_PER_STEP], int32_t n, float out[KEYS_PER_STEP],
                 int bf16) {
    const int32_t n8 = n - n % LANES;
    v128_t a0l = wasm_f32x4_splat(0.0f), a0h = a0l, a1l = a0l, a1h = a0l, a2l = a0l, a2h = a0l, a3l = a0l, a3h = a0l;
    v128_t kl, kh;
    for (int32_t i = 0; i < n8; i += LANES) {
        const v128_t ql = wasm_v128_load(q + i), qh = wasm_v128_load(q + i + 4);
        load8(k[0], i, bf16, &kl, &kh);
        a0l = wasm_f32x4_add(a0l, wasm_f32x4_mul(ql, kl));
        a0h = wasm_f32x4_add(a0h, wasm_f32x4_mul(qh, kh));
        load8(k[1], i, bf16, &kl, &kh);
        a1l = wasm_f32x4_add(a1l, wasm_f32x4_mul(ql, kl));
        a1h = wasm_f32x4_add(a1h, wasm_f32x4_mul(qh, kh));
        load8(k[2], i, bf16, &kl, &kh);
        a2l = wasm_f32x4_add(a2l, wasm_f32x4_mul(ql, kl));
        a2h = wasm_f32x4_add(a2h, wasm_f32x4_mul(qh, kh));
        load8(k[3], i, bf16, &kl, &kh);
        a3l = wasm_f32x4_add(a3l, wasm_f32x4_mul(ql, kl));
        a3h = wasm_f32x4_add(a3h, wasm_f32x4_mul(qh, kh));
    }
    out[0] = leftover(fold_v(a0l, a0h), q, k[0], n8, n, bf16);
    out[1] = leftover(fold_v(a1l, a1h), q, k[1], n8, n, bf16);
    out[2] = leftover(fold_v(a2l, a2h), q, k[2], n8, n, bf16);
    out[3] = leftover(fold_v(a3l, a3h), q, k[3], n8, n, bf16);
}

INLINE void mix_piece(float *restrict out, const float *restrict w, const void *v, int64_t stride, int32_t j0,
                      int32_t j1, int bf16) {
    v128_t o[PIECE / 4], lo, hi;
    for (int r = 0; r < PIECE / 4; r++) o[r] = wasm_v128_load(out + 4 * r);
    for (int32_t j = j0; j < j1; j++) {
        if (w[j] == 0.0f) continue;
        const void *vj = value_ptr(v, (int64_t)j * stride, bf16);
        const v128_t wv = wasm_f32x4_splat(w[j]);
        for (int r = 0; r < PIECE / 8; r++) {
            load8(vj, 8 * r, bf16, &lo, &hi);
            o[2 * r] = wasm_f32x4_add(o[2 * r], wasm_f32x4_mul(wv, lo));
            o[2 * r + 1] = wasm_f32x4_add(o[2 * r + 1], wasm_f32x4_mul(wv, hi));
        }
    }
    for (int r = 0; r < PIECE / 4; r++) wasm_v128_store(out + 4 * r, o[r]);
}

#else

static inline float fold(lanes8 acc) {
    const float s0 = acc[0] + acc[4], s1 = acc[1] + acc[5], s2 = acc[2] + acc[6], s3 = acc[3] + acc[7];
    return (s0 + s2) + (s1 + s3);
}

typedef uint16_t halves8 __attribute__((vector_size(LANES * sizeof(uint16_t))));
typedef uint32_t words8 __attribute__((vector_size(LANES * sizeof(uint32_t))));

/* Values [i, i + 8) of a row as f32 lanes (through a pointer: a vector is never passed). */
INLINE void load8(const void *row, int64_t i, int bf16, lanes8 *x) {
    if (bf16) {
        halves8 h;
        memcpy(&h, (const uint16_t *)row + i, sizeof h);
        const words8 bits = __builtin_convertvector(h, words8) << 16;
        memcpy(x, &bits, sizeof *x);
    } else {
        memcpy(x, (const float *)row + i, sizeof *x);
    }
}

INLINE float dot(const float *restrict a, const void *b, int32_t n, int bf16) {
    const int32_t n8 = n - n % LANES;
    lanes8 acc = {0}, x, y;
    for (int32_t i = 0; i < n8; i += LANES) {
        memcpy(&x, a + i, sizeof x);
        load8(b, i, bf16, &y);
        acc = acc + x * y;
    }
    return leftover(fold(acc), a, b, n8, n, bf16);
}

/* dot(q, k[r]) for four keys r, the query loaded once per step. */
INLINE void dot4(const float *restrict q, const void *const k[KEYS_PER_STEP], int32_t n, float out[KEYS_PER_STEP],
                 int bf16) {
    const int32_t n8 = n - n % LANES;
    lanes8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, x, y;
    for (int32_t i = 0; i < n8; i += LANES) {
        memcpy(&x, q + i, sizeof x);
        load8(k[0], i, bf16, &y);
        a0 = a0 + x * y;
        load8(k[1], i, bf16, &y);
        a1 = a1 + x * y;
        load8(k[2], i, bf16, &y);
        a2 = a2 + x * y;
        load8(k[3], i, bf16, &y);
        a3 = a3 + x * y;
    }
    out[0] = leftover(fold(a0), q, k[0], n8, n, bf16);
    out[1] = leftover(fold(a1), q, k[1], n8, n, bf16);
    out[2] = leftover(fold(a2), q, k[2], n8, n, bf16);
    out[3] = leftover(fold(a3), q, k[3], n8, n, bf16);
}

/* out[0, PIECE) += Σ_{j in [j0, j1)} w[j] · v_j[0, PIECE), key by key, the sums in registers. */
INLINE void mix_piece(float *restrict out, const float *restrict w, const void *v, int64_t stride, int32_t j0,
                      int32_t j1, int bf16) {
    lanes8 o0, o1, o2, o3, x;
    memcpy(&o0, out, sizeof o0);
    memcpy(&o1, out + 8, sizeof o1);
    memcpy(&o2, out + 16, sizeof o2);
    memcpy(&o3, out + 24, sizeof o3);
    for (int32_t j = j0; j < j1; j++) {
        if (w[j] == 0.0f) continue;
        const void *vj = value_ptr(v, (int64_t)j * stride, bf16);
        load8(vj, 0, bf16, &x);
        o0 = o0 + w[j] * x;
        load8(vj, 8, bf16, &x);
        o1 = o1 + w[j] * x;
        load8(vj, 16, bf16, &x);
        o2 = o2 + w[j] * x;
        load8(vj, 24, bf16, &x);
        o3 = o3 + w[j] * x;
    }
    memcpy(out, &o0, sizeof o0);
    memcpy(out + 8, &o1, sizeof o1);
    memcpy(out + 16, &o2, sizeof o2);
    memcpy(out + 24, &o3, sizeof o3);
}

#endif

static inline int visible(const sac_kv_heads *a, int32_t j) { return a->key_mask[j] || j == a->own; }

INLINE void scores(const sac_kv_heads *a, float *max, int bf16) {
    const int32_t hd = a->head_dim, nh = a->h1 - a->h0;
    for (int32_t h = 0; h < nh; h++) max[h] = -INFINITY;
    int32_t j = 0;
    for (; j + KEYS_PER_STEP <= a->n_keys; j += KEYS_PER_STEP) {
        int seen[KEYS_PER_STEP];
        for (int r = 0; r < KEYS_PER_STEP; r++) seen[r] = visible(a, j + r);
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const int64_t kv_off = (int64_t)(head / a->group) * hd;
            const void *k[KEYS_PER_STEP];
            for (int r = 0; r < KEYS_PER_STEP; r++) k[r] = value_ptr(a->k, (int64_t)(j + r) * a->kv_stride + kv_off, bf16);
            float s[KEYS_PER_STEP];
            dot4(a->q + (int64_t)head * hd, k, hd, s, bf16);
            for (int r = 0; r < KEYS_PER_STEP; r++) {
                const float x = seen[r] ? s[r] * a->scale : -INFINITY;
                a->rows[h][j + r] = x;
                if (x > max[h]) max[h] = x;
            }
        }
    }
    for (; j < a->n_keys; j++) {
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const void *k = value_ptr(a->k, (int64_t)j * a->kv_stride + (int64_t)(head / a->group) * hd, bf16);
            const float x = visible(a, j) ? dot(a->q + (int64_t)head * hd, k, hd, bf16) * a->scale : -INFINITY;
            a->rows[h][j] = x;
            if (x > max[h]) max[h] = x;
        }
    }
}

INLINE void mix(const sac_kv_heads *a, float *out, int bf16) {
    const int32_t hd = a->head_dim, nh = a->h1 - a->h0, whole = hd - hd % PIECE;
    for (int32_t h = 0; h < nh; h++)
        for (int32_t i = 0; i < hd; i++) out[(int64_t)(a->h0 + h) * hd + i] = 0.0f;
    for (int32_t j0 = 0; j0 < a->n_keys; j0 += VALUE_RUN) {
        const int32_t j1 = a->n_keys - j0 < VALUE_RUN ? a->n_keys : j0 + VALUE_RUN;
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const float *w = a->rows[h];
            const void *v = value_ptr(a->v, (int64_t)(head / a->group) * hd, bf16);
            float *o = out + (int64_t)head * hd;
            for (int32_t i = 0; i < whole; i += PIECE) mix_piece(o + i, w, value_ptr(v, i, bf16), a->kv_stride, j0, j1, bf16);
            for (int32_t i = whole; i < hd; i++) /* head_dim % 32 values, one by one */
                for (int32_t j = j0; j < j1; j++)
                    if (w[j] != 0.0f) o[i] = o[i] + w[j] * value_at(v, (int64_t)j * a->kv_stride + i, bf16);
        }
    }
}

void sac_kv_scores(const sac_kv_heads *a, float *max) {
    if (a->kv_type == SAC_KV_BF16) scores(a, max, 1);
    else scores(a, max, 0);
}

void sac_kv_mix(const sac_kv_heads *a, float *out) {
    if (a->kv_type == SAC_KV_BF16) mix(a, out, 1);
    else mix(a, out, 0);
}
