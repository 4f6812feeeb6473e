/* kv_attention.c — attention's passes over the KV cache for a block of heads (see the header).
 *
 * The dot product repeats sac_dot_f32's arithmetic for f32 rows: eight running sums (lane l
 * takes the elements i with i % 8 == l), acc[l] = acc[l] + q·k, folded as
 * ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)), then the head_dim % 8 leftover products summed in
 * order and added. The weighted sum adds w_j·v_j to each output value in key order, as
 * sac_axpy_f32 key after key does. What changes is only which values are worked on together:
 * both passes go head by head through runs of keys (all the keys when each head's rows are
 * contiguous; runs of 64 when a row holds every head, so that a run's rows stay in cache for
 * the block's next head), and
 *   - scores: four keys per step for one head, so the head's query is loaded once for four;
 *   - values: a piece of 32 output values at a time, which stay in registers over the run
 *     instead of being loaded and stored for every key.
 * The eight lanes are a GCC vector type: one AVX register natively, two SIMD128 registers in
 * wasm, plain scalar code where there are no vectors. Loads and stores go through memcpy, so
 * no function passes a vector (which would tie the ABI to the vector extension a build has).
 *
 * A bf16 cache differs only in its loads: each value widened to the f32 it stands for (a
 * 16-bit shift, exact; in wasm a step's eight values come out split by parity, see load8),
 * then the same arithmetic. Each pass is written once with a `bf16`
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
#define KEY_RUN 64     /* keys per run of interleaved rows */

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

/* Values [i, i + 8) of a row as two f32 registers: an f32 row's in order (values 0–3 and 4–7),
 * a bf16 row's split by parity (the even values: each 32-bit lane's low half shifted up; the
 * odd ones: its high half with the low bits cleared). One operation per register, where
 * widening bf16 in order takes a shuffle per register, which V8 makes several instructions.
 * Which lane holds which value changes no sum: every value keeps its own running sum, and the
 * lanes are put back in order (in_order) before sums of different values are combined. */
INLINE void load8(const void *row, int64_t i, int bf16, v128_t *a, v128_t *b) {
    if (bf16) {
        const v128_t h = wasm_v128_load((const uint16_t *)row + i);
        *a = wasm_i32x4_shl(h, 16);
        *b = wasm_v128_and(h, wasm_i32x4_splat((int32_t)0xffff0000u));
    } else {
        *a = wasm_v128_load((const float *)row + i);
        *b = wasm_v128_load((const float *)row + i + 4);
    }
}

/* Eight f32 values in order (lo, hi) in the lanes load8 gives a row of this type. */
INLINE void as_loaded(v128_t lo, v128_t hi, int bf16, v128_t *a, v128_t *b) {
    *a = bf16 ? wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6) : lo;
    *b = bf16 ? wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7) : hi;
}

/* Back: lanes as load8 gives them, in order. */
INLINE void in_order(v128_t a, v128_t b, int bf16, v128_t *lo, v128_t *hi) {
    *lo = bf16 ? wasm_i32x4_shuffle(a, b, 0, 4, 1, 5) : a;
    *hi = bf16 ? wasm_i32x4_shuffle(a, b, 2, 6, 3, 7) : b;
}

/* The eight lanes as two SIMD128 registers written out (clang lowers the 8-lane vector type
 * through memory here). */
static inline float fold_v(v128_t lo, v128_t hi) {
    v128_t s = wasm_f32x4_add(lo, hi); /* [a0+a4, a1+a5, a2+a6, a3+a7] */
    s = wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1);
}

INLINE float dot(const float *restrict q, const void *k, int32_t n, int bf16) {
    const int32_t n8 = n - n % LANES;
    v128_t acc_a = wasm_f32x4_splat(0.0f), acc_b = acc_a, qa, qb, ka, kb;
    for (int32_t i = 0; i < n8; i += LANES) {
        as_loaded(wasm_v128_load(q + i), wasm_v128_load(q + i + 4), bf16, &qa, &qb);
        load8(k, i, bf16, &ka, &kb);
        acc_a = wasm_f32x4_add(acc_a, wasm_f32x4_mul(qa, ka));
        acc_b = wasm_f32x4_add(acc_b, wasm_f32x4_mul(qb, kb));
    }
    v128_t lo, hi;
    in_order(acc_a, acc_b, bf16, &lo, &hi);
    return leftover(fold_v(lo, hi), q, k, n8, n, bf16);
}

/* dot(q, k[r]) for four keys r, the query loaded once per step; the four sums are folded
 * together, fold_v's additions lane by lane (lane r: key r). */
INLINE void dot4(const float *restrict q, const void *const k[KEYS_PER_STEP], int32_t n, float out[KEYS_PER_STEP],
                 int bf16) {
    const int32_t n8 = n - n % LANES;
    v128_t acc[2 * KEYS_PER_STEP], qa, qb, ka, kb;
    for (int r = 0; r < 2 * KEYS_PER_STEP; r++) acc[r] = wasm_f32x4_splat(0.0f);
    for (int32_t i = 0; i < n8; i += LANES) {
        as_loaded(wasm_v128_load(q + i), wasm_v128_load(q + i + 4), bf16, &qa, &qb);
        for (int r = 0; r < KEYS_PER_STEP; r++) {
            load8(k[r], i, bf16, &ka, &kb);
            acc[2 * r] = wasm_f32x4_add(acc[2 * r], wasm_f32x4_mul(qa, ka));
            acc[2 * r + 1] = wasm_f32x4_add(acc[2 * r + 1], wasm_f32x4_mul(qb, kb));
        }
    }
    v128_t s[KEYS_PER_STEP], lo, hi; /* s[r] = [a0+a4, a1+a5, a2+a6, a3+a7] of key r */
    for (int r = 0; r < KEYS_PER_STEP; r++) {
        in_order(acc[2 * r], acc[2 * r + 1], bf16, &lo, &hi);
        s[r] = wasm_f32x4_add(lo, hi);
    }
    const v128_t t01 = wasm_f32x4_add(wasm_i32x4_shuffle(s[0], s[1], 0, 1, 4, 5), wasm_i32x4_shuffle(s[0], s[1], 2, 3, 6, 7));
    const v128_t t23 = wasm_f32x4_add(wasm_i32x4_shuffle(s[2], s[3], 0, 1, 4, 5), wasm_i32x4_shuffle(s[2], s[3], 2, 3, 6, 7));
    wasm_v128_store(out, wasm_f32x4_add(wasm_i32x4_shuffle(t01, t23, 0, 2, 4, 6), wasm_i32x4_shuffle(t01, t23, 1, 3, 5, 7)));
    if (n8 != n)
        for (int r = 0; r < KEYS_PER_STEP; r++) out[r] = leftover(out[r], q, k[r], n8, n, bf16);
}

/* out[0, PIECE) += Σ_{j in [j0, j1)} w[j] · v_j[0, PIECE), key by key, the sums in registers
 * in load8's lanes. */
INLINE void mix_piece(float *restrict out, const float *restrict w, const void *v, int64_t stride, int32_t j0,
                      int32_t j1, int bf16) {
    v128_t o[PIECE / 4], a, b;
    for (int r = 0; r < PIECE / 8; r++)
        as_loaded(wasm_v128_load(out + 8 * r), wasm_v128_load(out + 8 * r + 4), bf16, &o[2 * r], &o[2 * r + 1]);
    for (int32_t j = j0; j < j1; j++) {
        if (w[j] == 0.0f) continue;
        const void *vj = value_ptr(v, (int64_t)j * stride, bf16);
        const v128_t wv = wasm_f32x4_splat(w[j]);
        for (int r = 0; r < PIECE / 8; r++) {
            load8(vj, 8 * r, bf16, &a, &b);
            o[2 * r] = wasm_f32x4_add(o[2 * r], wasm_f32x4_mul(wv, a));
            o[2 * r + 1] = wasm_f32x4_add(o[2 * r + 1], wasm_f32x4_mul(wv, b));
        }
    }
    for (int r = 0; r < PIECE / 8; r++) {
        in_order(o[2 * r], o[2 * r + 1], bf16, &a, &b);
        wasm_v128_store(out + 8 * r, a), wasm_v128_store(out + 8 * r + 4, b);
    }
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

/* Keys per run: all of them when each head's rows are contiguous (a run would break the head's
 * one stream into pieces: 2-2.5x slower, make bench-kv-attention), else KEY_RUN. */
static inline int32_t key_run(const sac_kv_heads *a) {
    return a->kv_stride == a->head_dim ? a->n_keys : KEY_RUN;
}

static inline int visible(const sac_kv_heads *a, int32_t j) { return a->key_mask[j] || j == a->own; }

INLINE void scores(const sac_kv_heads *a, float *max, int bf16) {
    const int32_t hd = a->head_dim, nh = a->h1 - a->h0;
    for (int32_t h = 0; h < nh; h++) max[h] = -INFINITY;
    const int32_t run = key_run(a);
    for (int32_t j0 = 0; j0 < a->n_keys; j0 += run) {
        const int32_t j1 = a->n_keys - j0 < run ? a->n_keys : j0 + run;
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const float *q = a->q + (int64_t)head * hd;
            const void *kh = value_ptr(a->k, (int64_t)(head / a->group) * a->head_stride, bf16);
            float *row = a->rows[h], m = max[h];
            int32_t j = j0;
            for (; j + KEYS_PER_STEP <= j1; j += KEYS_PER_STEP) {
                const void *k[KEYS_PER_STEP];
                for (int r = 0; r < KEYS_PER_STEP; r++) k[r] = value_ptr(kh, (int64_t)(j + r) * a->kv_stride, bf16);
                float s[KEYS_PER_STEP];
                dot4(q, k, hd, s, bf16);
                for (int r = 0; r < KEYS_PER_STEP; r++) {
                    const float x = visible(a, j + r) ? s[r] * a->scale : -INFINITY;
                    row[j + r] = x;
                    if (x > m) m = x;
                }
            }
            for (; j < j1; j++) {
                const float x = visible(a, j) ? dot(q, value_ptr(kh, (int64_t)j * a->kv_stride, bf16), hd, bf16) * a->scale
                                              : -INFINITY;
                row[j] = x;
                if (x > m) m = x;
            }
            max[h] = m;
        }
    }
}

INLINE void mix(const sac_kv_heads *a, float *out, int bf16) {
    const int32_t hd = a->head_dim, nh = a->h1 - a->h0, whole = hd - hd % PIECE;
    for (int32_t h = 0; h < nh; h++)
        for (int32_t i = 0; i < hd; i++) out[(int64_t)(a->h0 + h) * hd + i] = 0.0f;
    const int32_t run = key_run(a);
    for (int32_t j0 = 0; j0 < a->n_keys; j0 += run) {
        const int32_t j1 = a->n_keys - j0 < run ? a->n_keys : j0 + run;
        for (int32_t h = 0; h < nh; h++) {
            const int32_t head = a->h0 + h;
            const float *w = a->rows[h];
            const void *v = value_ptr(a->v, (int64_t)(head / a->group) * a->head_stride, bf16);
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
