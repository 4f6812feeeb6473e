/* kv_attention.c — attention's passes over the KV cache for a block of heads (see the header).
 *
 * The dot product repeats sac_dot_f32's arithmetic for f32 rows: eight running sums (lane l
 * takes the elements i with i % 8 == l), acc[l] = acc[l] + q·k, folded as
 * ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)), then the head_dim % 8 leftover products summed in
 * order and added. The weighted sum adds w_j·v_j to each output value in key order, as
 * sac_axpy_f32 key after key does. What changes is only which values are worked on together:
 * both passes go through runs of keys (all the keys when each head's rows are contiguous;
 * runs of 64 when a row holds every head, so that a run's rows stay in cache for the block's
 * next heads), head by head or, for scores, a kv head's query heads together, and
 *   - scores: four keys per step for one head, their sums folded together at the end, each
 *     key's row read in address order (in plain C f32 rows only; see dot4); or, where query
 *     heads share a kv head (grouped-query attention), up to four of them a key, each key's
 *     row read once for them;
 *   - values: a piece of 32 output values at a time, which stay in registers over the run
 *     instead of being loaded and stored for every key.
 * With SIMD128 (simd.h: wasm's, or SIMDe's natively) the eight lanes are two f32x4 registers;
 * in plain C (SAC_PLAIN_C) a GCC vector type: one AVX register where there is AVX, plain scalar
 * code where there are no vectors. Loads and stores go through memcpy, so
 * no function passes a vector (which would tie the ABI to the vector extension a build has).
 *
 * A tile (several query rows over the same keys: a prefill's consecutive tokens) goes head by
 * head through runs of ~16 KB of key or value rows, the tile's rows in turn over a run while it
 * is in L1 (f32 and bf16: a kv head's runs once for its query heads, and the keys that four
 * query vectors all see scored from one read of each key row, dot_heads; q8: query head by query
 * head), the other keys and the values vector by vector with the passes' own steps: the same
 * bits.
 *
 * A bf16 cache differs only in its loads: each value widened to the f32 it stands for (a
 * 16-bit shift, exact; with SIMD128 a step's eight values come out split by parity, see load8),
 * then the same arithmetic. Each pass is written once with a `bf16`
 * flag that is a constant where it is inlined, so each type gets its own loop. */
#include "kv_attention.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "kv_cache.h"

#include "simd.h"

/* Fused multiply-add would change rounding between paths; keep mul and add separate. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define LANES 8
typedef float lanes8 __attribute__((vector_size(LANES * sizeof(float))));

#define KEYS_PER_STEP 4
#define PIECE 32       /* output values a value run keeps in registers: 4 × 8 lanes */
#define KEY_RUN 64     /* keys per run of interleaved rows */
#define GROUP_STEP 4   /* query heads of a group scored together from one read of a key row */
#define QUERY_LANES_MAX 256 /* wasm: longest head whose queries scores_group puts in load8's lanes */

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

#ifdef SAC_SIMD128

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

/* dot(q, k[r]) for four keys r, key after key, so that the loads go through the rows in
 * address order; the four sums are folded together, fold_v's additions lane by lane (lane r:
 * key r). The four rows' loads interleaved (the query loaded once for four keys) jump back and
 * forth over a kilobyte of f32 rows, which the hardware prefetcher follows poorly: make
 * bench-kv-attention, wasm, depth 2048, scores 17.5-19.0 -> 8.4-8.7 ns per key and head for
 * f32 (the plain read of the keys: ~10), 6.5-6.7 -> 5.9-6.2 for bf16. */
INLINE void dot4(const float *restrict q, const void *const k[KEYS_PER_STEP], int32_t n, float out[KEYS_PER_STEP],
                 int bf16) {
    const int32_t n8 = n - n % LANES;
    v128_t acc[2 * KEYS_PER_STEP], qa, qb, ka, kb;
    for (int r = 0; r < 2 * KEYS_PER_STEP; r++) acc[r] = wasm_f32x4_splat(0.0f);
    for (int r = 0; r < KEYS_PER_STEP; r++)
        for (int32_t i = 0; i < n8; i += LANES) {
            as_loaded(wasm_v128_load(q + i), wasm_v128_load(q + i + 4), bf16, &qa, &qb);
            load8(k[r], i, bf16, &ka, &kb);
            acc[2 * r] = wasm_f32x4_add(acc[2 * r], wasm_f32x4_mul(qa, ka));
            acc[2 * r + 1] = wasm_f32x4_add(acc[2 * r + 1], wasm_f32x4_mul(qb, kb));
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

/* dot(q[h], k) for the nq query heads of a group that share the key row k, the row read once
 * for all of them, each head's sums as dot's. in_lanes: each q[h] already holds its values in
 * the lanes load8 gives this type's rows (then n % 8 == 0). */
INLINE void dot_heads(const float *const q[GROUP_STEP], int nq, int in_lanes, const void *k, int32_t n,
                      float out[GROUP_STEP], int bf16) {
    const int32_t n8 = n - n % LANES;
    v128_t acc[2 * GROUP_STEP], qa, qb, ka, kb;
    for (int h = 0; h < 2 * nq; h++) acc[h] = wasm_f32x4_splat(0.0f);
    for (int32_t i = 0; i < n8; i += LANES) {
        load8(k, i, bf16, &ka, &kb);
        for (int h = 0; h < nq; h++) {
            if (in_lanes) qa = wasm_v128_load(q[h] + i), qb = wasm_v128_load(q[h] + i + 4);
            else as_loaded(wasm_v128_load(q[h] + i), wasm_v128_load(q[h] + i + 4), bf16, &qa, &qb);
            acc[2 * h] = wasm_f32x4_add(acc[2 * h], wasm_f32x4_mul(qa, ka));
            acc[2 * h + 1] = wasm_f32x4_add(acc[2 * h + 1], wasm_f32x4_mul(qb, kb));
        }
    }
    for (int h = 0; h < nq; h++) {
        v128_t lo, hi;
        in_order(acc[2 * h], acc[2 * h + 1], bf16, &lo, &hi);
        out[h] = leftover(fold_v(lo, hi), q[h], k, n8, n, bf16);
    }
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

/* dot(q, k[r]) for four keys r: f32 rows key after key, in address order (as the SIMD128 dot4,
 * in plain C natively 15.8-16.1 -> 8.8-9.0 ns per key and head at depth 2048); bf16's
 * half-length rows with the four keys' loads interleaved and the query loaded once per step,
 * which stays faster for them there (6.6-6.9 against 7.8-7.9 key after key). */
INLINE void dot4(const float *restrict q, const void *const k[KEYS_PER_STEP], int32_t n, float out[KEYS_PER_STEP],
                 int bf16) {
    if (!bf16) {
        for (int r = 0; r < KEYS_PER_STEP; r++) out[r] = dot(q, k[r], n, bf16);
        return;
    }
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

/* dot(q[h], k) for the nq query heads of a group that share the key row k (as wasm's; in_lanes
 * is always 0 here: load8 gives a row's values in order). */
INLINE void dot_heads(const float *const q[GROUP_STEP], int nq, int in_lanes, const void *k, int32_t n,
                      float out[GROUP_STEP], int bf16) {
    const int32_t n8 = n - n % LANES;
    lanes8 acc[GROUP_STEP], x, y;
    for (int h = 0; h < nq; h++) acc[h] = (lanes8){0};
    for (int32_t i = 0; i < n8; i += LANES) {
        load8(k, i, bf16, &y);
        for (int h = 0; h < nq; h++) {
            memcpy(&x, q[h] + i, sizeof x);
            acc[h] = acc[h] + x * y;
        }
    }
    for (int h = 0; h < nq; h++) out[h] = leftover(fold(acc[h]), q[h], k, n8, n, bf16);
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

/* The end of the run of `run` keys from j0, cut at the row's last key. */
static inline int32_t run_end(const sac_kv_heads *a, int32_t j0, int32_t run) {
    return a->n_keys - j0 < run ? a->n_keys : j0 + run;
}

/* Zeroes the output values of the heads [h0, h1), which the value passes add to. */
static inline void clear_heads(const sac_kv_heads *a, float *out) {
    for (int64_t i = (int64_t)a->h0 * a->head_dim; i < (int64_t)a->h1 * a->head_dim; i++) out[i] = 0.0f;
}

/* Key j's score: s × scale, or −∞ when hidden; stored in row, and the new running maximum returned. */
INLINE float keep(const sac_kv_heads *a, float *row, int32_t j, float s, float m) {
    const float x = visible(a, j) ? s * a->scale : -INFINITY;
    row[j] = x;
    return x > m ? x : m;
}

#ifdef SAC_SIMD128
/* keep() of keys j to j + 3 (lane r: key j + r), the running maxima lane by lane: pmax keeps m
 * where x is not larger, as keep does. Lanes folded with keep_max; the maximum may then be a
 * zero of the other sign than keep's key by key, which softmax's e^(s − max) cannot tell. */
INLINE v128_t keep4(const sac_kv_heads *a, float *row, int32_t j, v128_t s, v128_t m) {
    const v128_t own = wasm_i32x4_eq(wasm_i32x4_add(wasm_i32x4_splat(j), wasm_i32x4_make(0, 1, 2, 3)),
                                     wasm_i32x4_splat(a->own));
    const v128_t mask = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(a->key_mask + j)));
    const v128_t shown = wasm_v128_or(own, wasm_i32x4_ne(mask, wasm_i32x4_splat(0)));
    const v128_t x = wasm_v128_bitselect(wasm_f32x4_mul(s, wasm_f32x4_splat(a->scale)), wasm_f32x4_splat(-INFINITY), shown);
    wasm_v128_store(row + j, x);
    return wasm_f32x4_pmax(m, x);
}

INLINE float keep_max(v128_t m4, float m) {
    float lane[4];
    wasm_v128_store(lane, m4);
    for (int r = 0; r < 4; r++) m = lane[r] > m ? lane[r] : m;
    return m;
}
#endif

/* Keys [j0, j1) of query head h0 + h alone, four keys a step. */
INLINE void scores_head(const sac_kv_heads *a, int32_t h, int32_t j0, int32_t j1, float *max, int bf16) {
    const int32_t hd = a->head_dim, head = a->h0 + h;
    const float *q = a->q + (int64_t)head * hd;
    const void *kh = value_ptr(a->k, (int64_t)(head / a->group) * a->head_stride, bf16);
    float *row = a->rows[h], m = max[h];
    int32_t j = j0;
    for (; j + KEYS_PER_STEP <= j1; j += KEYS_PER_STEP) {
        const void *k[KEYS_PER_STEP];
        for (int r = 0; r < KEYS_PER_STEP; r++) k[r] = value_ptr(kh, (int64_t)(j + r) * a->kv_stride, bf16);
        float s[KEYS_PER_STEP];
        dot4(q, k, hd, s, bf16);
        for (int r = 0; r < KEYS_PER_STEP; r++) m = keep(a, row, j + r, s[r], m);
    }
    for (; j < j1; j++) {
        const void *k = value_ptr(kh, (int64_t)j * a->kv_stride, bf16);
        m = keep(a, row, j, visible(a, j) ? dot(q, k, hd, bf16) : 0.0f, m);
    }
    max[h] = m;
}

/* Keys [j0, j1) of the nq query heads from h0 + h on, each key's row read once for them;
 * m[r]: head h + r's running maximum. */
INLINE void score_keys(const sac_kv_heads *a, int32_t h, int nq, const float *const q[GROUP_STEP], int in_lanes,
                       int32_t j0, int32_t j1, float m[GROUP_STEP], int bf16) {
    const void *kh = value_ptr(a->k, (int64_t)((a->h0 + h) / a->group) * a->head_stride, bf16);
    float s[GROUP_STEP];
    for (int32_t j = j0; j < j1; j++) {
        dot_heads(q, nq, in_lanes, value_ptr(kh, (int64_t)j * a->kv_stride, bf16), a->head_dim, s, bf16);
        for (int r = 0; r < nq; r++) m[r] = keep(a, a->rows[h + r], j, s[r], m[r]);
    }
}

/* Keys [j0, j1) of the nq query heads from h0 + h on, which share a kv head: each key row
 * read once for them (grouped-query attention). */
INLINE void scores_group(const sac_kv_heads *a, int32_t h, int nq, int32_t j0, int32_t j1, float *max, int bf16) {
    const int32_t hd = a->head_dim;
    const float *q[GROUP_STEP];
    float m[GROUP_STEP];
    for (int r = 0; r < nq; r++) q[r] = a->q + (int64_t)(a->h0 + h + r) * hd, m[r] = max[h + r];
#ifdef SAC_SIMD128
    /* bf16 rows come out of load8 split by parity: the queries put in those lanes once here
     * rather than shuffled for every key */
    float lanes[GROUP_STEP][QUERY_LANES_MAX] __attribute__((aligned(16)));
    if (bf16 && hd % LANES == 0 && hd <= QUERY_LANES_MAX) {
        const float *ql[GROUP_STEP];
        for (int r = 0; r < nq; r++) {
            for (int32_t i = 0; i < hd; i += LANES)
                for (int t = 0; t < 4; t++) lanes[r][i + t] = q[r][i + 2 * t], lanes[r][i + 4 + t] = q[r][i + 2 * t + 1];
            ql[r] = lanes[r];
        }
        score_keys(a, h, nq, ql, 1, j0, j1, m, bf16);
    } else
#endif
        score_keys(a, h, nq, q, 0, j0, j1, m, bf16);
    for (int r = 0; r < nq; r++) max[h + r] = m[r];
}

/* Query heads from h0 + h on that share its kv head, at most GROUP_STEP. */
static inline int group_run(const sac_kv_heads *a, int32_t h) {
    const int32_t head = a->h0 + h, last = a->h1 - head < GROUP_STEP ? a->h1 : head + GROUP_STEP;
    int n = 1;
    while (head + n < last && (head + n) / a->group == head / a->group) n++;
    return n;
}

INLINE void scores(const sac_kv_heads *a, float *max, int bf16) {
    const int32_t nh = a->h1 - a->h0;
    for (int32_t h = 0; h < nh; h++) max[h] = -INFINITY;
    const int32_t run = key_run(a);
    for (int32_t j0 = 0; j0 < a->n_keys; j0 += run) {
        const int32_t j1 = run_end(a, j0, run);
        for (int32_t h = 0; h < nh;) {
            const int n = group_run(a, h);
            if (n == 4) scores_group(a, h, 4, j0, j1, max, bf16); /* constants: each its own loop */
            else if (n == 3) scores_group(a, h, 3, j0, j1, max, bf16);
            else if (n == 2) scores_group(a, h, 2, j0, j1, max, bf16);
            else scores_head(a, h, j0, j1, max, bf16);
            h += n;
        }
    }
}

/* Head h0 + h's output values += keys [j0, j1) of its weighted values, in key order. */
INLINE void mix_head(const sac_kv_heads *a, int32_t h, float *out, int32_t j0, int32_t j1, int bf16) {
    const int32_t hd = a->head_dim, whole = hd - hd % PIECE, head = a->h0 + h;
    const float *w = a->rows[h];
    const void *v = value_ptr(a->v, (int64_t)(head / a->group) * a->head_stride, bf16);
    float *o = out + (int64_t)head * hd;
    for (int32_t i = 0; i < whole; i += PIECE) mix_piece(o + i, w, value_ptr(v, i, bf16), a->kv_stride, j0, j1, bf16);
    for (int32_t i = whole; i < hd; i++) /* head_dim % 32 values, one by one */
        for (int32_t j = j0; j < j1; j++)
            if (w[j] != 0.0f) o[i] = o[i] + w[j] * value_at(v, (int64_t)j * a->kv_stride + i, bf16);
}

INLINE void mix(const sac_kv_heads *a, float *out, int bf16) {
    clear_heads(a, out);
    const int32_t run = key_run(a);
    for (int32_t j0 = 0; j0 < a->n_keys; j0 += run) {
        const int32_t j1 = run_end(a, j0, run);
        for (int32_t h = 0; h < a->h1 - a->h0; h++) mix_head(a, h, out, j0, j1, bf16);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* q8 cache: each row its blocks' scales, then int8 values (kv_cache.h)                      */
/* ---------------------------------------------------------------------------------------- */

/* A q8 key's score is Σ_b (float)(q8·k8 over block b) × (query scale_b × key scale_b), the
 * blocks in order: the integer dots are exact, so how a build sums them changes nothing, and
 * the float steps are the same few in every build. The values' pass works in integers too, over
 * groups of keys (below). */

/* Scale of block b of a row (rows need not be 4-byte aligned: head_dim may be odd). */
INLINE float q8_scale(const unsigned char *row, int32_t b) {
    float s;
    memcpy(&s, row + 4 * b, sizeof s);
    return s;
}

/* The int8 values of a row, after its nb blocks' scales. */
INLINE const int8_t *q8_values(const unsigned char *row, int32_t nb) { return (const int8_t *)(row + 4 * nb); }

/* Kv head g's first row in a q8 cache, which is kept by head (kv_stride == head_dim). */
INLINE const unsigned char *q8_head(const void *cache, const sac_kv_heads *a, int32_t g, int64_t row_bytes) {
    return (const unsigned char *)cache + (int64_t)g * (a->head_stride / a->head_dim) * row_bytes;
}

static inline int32_t idot(const int16_t *q, const int8_t *k, int32_t n) {
    int32_t s = 0;
    for (int32_t i = 0; i < n; i++) s += q[i] * k[i];
    return s;
}

/* One key's score before the 1/√d scale: every key in plain C; in SIMD128 builds the keys after
 * q8_dot4's last whole step. */
static float q8_dot(const int16_t *qw, const float *qd, const unsigned char *row, int32_t hd) {
    const int32_t nb = sac_kv_q8_blocks(hd);
    const int8_t *k = q8_values(row, nb);
    float acc = 0.0f;
    for (int32_t b = 0; b < nb; b++) {
        const int32_t i0 = b * SAC_KV_Q8_BLOCK;
        acc = acc + (float)idot(qw + i0, k + i0, sac_kv_q8_block_len(hd, b)) * (qd[b] * q8_scale(row, b));
    }
    return acc;
}

/* Value passes go through groups of MIX_GROUP keys from key 0 (runs are whole groups, so that
 * every pass makes the same groups). For block b of a group, each key's weight c_j = w_j ×
 * scale_jb is rounded to an int16, ĉ_j = nearest(c_j × 32767 / M) with M the group's largest
 * |c_j|; the integer sums Σ_j ĉ_j × v8_ji are exact in any order, and each output value adds
 * (M / 32767) × (float)sum. Pairs of keys then go through i32x4.dot_i16x8 instead of each int8
 * value becoming a float and being multiplied and added on its own (make bench-kv-attention,
 * depth 2048, wasm: 6.9 -> 5.0 ns a key and head). The rounding moves each term by at most 2^-16
 * of the group's largest, far below the int8 values' own 1/254. A group whose weights are all
 * zero adds nothing; one whose M is not finite, or below MIX_SMALLEST (where 32767 / M could
 * overflow and M / 32767 lose bits), adds its keys' (w_j × scale_jb) × v8_ji one by one. */
#define MIX_GROUP 8
#define MIX_LEVELS 32767.0f
#define MIX_SMALLEST 1e-30f

enum { MIX_NOTHING, MIX_INTEGER, MIX_FLOAT };

/* Block b's rounded weights of keys [g0, g1), zero from g1 − g0 to MIX_GROUP; *step: M / 32767. */
static int q8_group_weights(const float *w, const unsigned char *v, int64_t row_bytes, int32_t b, int32_t g0,
                            int32_t g1, int16_t c[MIX_GROUP], float *step) {
    float x[MIX_GROUP], m = 0.0f;
    int nan = 0;
    for (int32_t j = g0; j < g1; j++) {
        const float cj = w[j] == 0.0f ? 0.0f : w[j] * q8_scale(v + j * row_bytes, b);
        x[j - g0] = cj;
        nan |= cj != cj;
        if (fabsf(cj) > m) m = fabsf(cj);
    }
    if (nan) return MIX_FLOAT;
    if (m == 0.0f) return MIX_NOTHING;
    if (!(m >= MIX_SMALLEST && m <= FLT_MAX)) return MIX_FLOAT;
    const float up = MIX_LEVELS / m;
    for (int32_t j = 0; j < MIX_GROUP; j++) c[j] = j < g1 - g0 ? (int16_t)nearbyintf(x[j] * up) : 0;
    *step = m / MIX_LEVELS;
    return MIX_INTEGER;
}

#ifdef SAC_SIMD128

/* Sixteen int8 values from k, widened to int16: k[0, 8) in *lo, k[8, 16) in *hi. wasm's load8x8
 * widens as it loads, one instruction in V8 where extend_high alone is two (make
 * bench-kv-attention, wasm, q8 scores at depth 2048: ~0.3 ns less a key and head); natively
 * SIMDe's load8x8 came out slower than its extends. */
INLINE void widen16(const int8_t *k, v128_t *lo, v128_t *hi) {
#ifdef __wasm_simd128__
    *lo = wasm_i16x8_load8x8(k);
    *hi = wasm_i16x8_load8x8(k + 8);
#else
    const v128_t kk = wasm_v128_load(k);
    *lo = wasm_i16x8_extend_low_i8x16(kk);
    *hi = wasm_i16x8_extend_high_i8x16(kk);
#endif
}

/* The integer dots of block [i0, i0 + n) of four key rows with the query, lane r: key r. */
INLINE v128_t q8_block_dot4(const int16_t *qw, const int8_t *const k[KEYS_PER_STEP], int32_t i0, int32_t n) {
    v128_t acc[KEYS_PER_STEP];
    for (int r = 0; r < KEYS_PER_STEP; r++) acc[r] = wasm_i32x4_splat(0);
    int32_t i = i0;
    for (; i + 16 <= i0 + n; i += 16) {
        const v128_t q_lo = wasm_v128_load(qw + i), q_hi = wasm_v128_load(qw + i + 8);
        for (int r = 0; r < KEYS_PER_STEP; r++) {
            v128_t k_lo, k_hi;
            widen16(k[r] + i, &k_lo, &k_hi);
            acc[r] = wasm_i32x4_add(acc[r], wasm_i32x4_dot_i16x8(k_lo, q_lo));
            acc[r] = wasm_i32x4_add(acc[r], wasm_i32x4_dot_i16x8(k_hi, q_hi));
        }
    }
    /* lane r ← the sum of acc[r]'s lanes (integers: any order gives the same sum) */
    const v128_t t01 = wasm_i32x4_add(wasm_i32x4_shuffle(acc[0], acc[1], 0, 1, 4, 5),
                                      wasm_i32x4_shuffle(acc[0], acc[1], 2, 3, 6, 7));
    const v128_t t23 = wasm_i32x4_add(wasm_i32x4_shuffle(acc[2], acc[3], 0, 1, 4, 5),
                                      wasm_i32x4_shuffle(acc[2], acc[3], 2, 3, 6, 7));
    v128_t sums = wasm_i32x4_add(wasm_i32x4_shuffle(t01, t23, 0, 2, 4, 6), wasm_i32x4_shuffle(t01, t23, 1, 3, 5, 7));
    const int32_t left = i0 + n - i; /* fewer than 16 values: one by one */
    if (left)
        sums = wasm_i32x4_add(sums, wasm_i32x4_make(idot(qw + i, k[0] + i, left), idot(qw + i, k[1] + i, left),
                                                    idot(qw + i, k[2] + i, left), idot(qw + i, k[3] + i, left)));
    return sums;
}

/* acc + dots × (query scale × key scales), lane r: key r; block b's float steps as q8_dot's. */
INLINE v128_t q8_add_block(v128_t acc, const int16_t *qw, const float *qd, const int8_t *const k[KEYS_PER_STEP],
                           int32_t hd, int32_t b, v128_t scales) {
    const v128_t dots = wasm_f32x4_convert_i32x4(q8_block_dot4(qw, k, b * SAC_KV_Q8_BLOCK, sac_kv_q8_block_len(hd, b)));
    return wasm_f32x4_add(acc, wasm_f32x4_mul(dots, wasm_f32x4_mul(wasm_f32x4_splat(qd[b]), scales)));
}

/* The scores (before the 1/√d scale) of four key rows, lane r: row r. A row's scales of blocks
 * b and b + 1 come as one 8-byte load, split by shuffles (as q8_group_weights8's). */
INLINE v128_t q8_dot4(const int16_t *qw, const float *qd, const unsigned char *const row[KEYS_PER_STEP], int32_t hd) {
    const int32_t nb = sac_kv_q8_blocks(hd);
    const int8_t *k[KEYS_PER_STEP];
    for (int r = 0; r < KEYS_PER_STEP; r++) k[r] = q8_values(row[r], nb);
    v128_t acc = wasm_f32x4_splat(0.0f);
    int32_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        int64_t p[KEYS_PER_STEP];
        for (int r = 0; r < KEYS_PER_STEP; r++) memcpy(&p[r], row[r] + 4 * b, sizeof p[r]);
        const v128_t lo = wasm_i64x2_make(p[0], p[1]), hi = wasm_i64x2_make(p[2], p[3]);
        acc = q8_add_block(acc, qw, qd, k, hd, b, wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6));
        acc = q8_add_block(acc, qw, qd, k, hd, b + 1, wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7));
    }
    if (b < nb)
        acc = q8_add_block(acc, qw, qd, k, hd, b,
                           wasm_f32x4_make(q8_scale(row[0], b), q8_scale(row[1], b), q8_scale(row[2], b),
                                           q8_scale(row[3], b)));
    return acc;
}

/* q8_group_weights' rounding of a whole group's eight weights (x[0], x[1]), with the same
 * results: M from the integer maximum of the |c| bits (a NaN's or an infinity's bits are the
 * largest), and each nearest(c × up) as the low 16 bits of c × up + 1.5 × 2^23, whose addition
 * rounds half to even as nearbyintf does (|c × up| ≤ 32767). Each a single instruction where
 * wasm's f32x4.max, i32x4.trunc_sat_f32x4_s and i16x8.narrow are several in V8. */
INLINE int q8_round8(const v128_t x[2], int16_t c[MIX_GROUP], float *step) {
    v128_t m4 = wasm_i32x4_max(wasm_f32x4_abs(x[0]), wasm_f32x4_abs(x[1]));
    m4 = wasm_i32x4_max(m4, wasm_i32x4_shuffle(m4, m4, 2, 3, 0, 1));
    m4 = wasm_i32x4_max(m4, wasm_i32x4_shuffle(m4, m4, 1, 0, 3, 2));
    const float m = wasm_f32x4_extract_lane(m4, 0);
    if (m == 0.0f) return MIX_NOTHING;
    if (!(m >= MIX_SMALLEST && m <= FLT_MAX)) return MIX_FLOAT;
    const v128_t up = wasm_f32x4_splat(MIX_LEVELS / m), magic = wasm_f32x4_splat(12582912.0f);
    const v128_t t0 = wasm_f32x4_add(wasm_f32x4_mul(x[0], up), magic), t1 = wasm_f32x4_add(wasm_f32x4_mul(x[1], up), magic);
    wasm_v128_store(c, wasm_i8x16_shuffle(t0, t1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29));
    *step = m / MIX_LEVELS;
    return MIX_INTEGER;
}

/* The weights of a whole group (keys g0 to g0 + 8) for block b, and for block b + 1 too when
 * `two` (both blocks' scales of a row read as one 8-byte load, split by a shuffle, where each
 * scale alone took a load and a lane insert: the gather was a third of the pass); each block as
 * q8_group_weights gives it. */
INLINE void q8_group_weights8(const float *w, const unsigned char *v, int64_t row_bytes, int32_t b, int two,
                              int32_t g0, int16_t c[2][MIX_GROUP], float step[2], int kind[2]) {
    v128_t x[2][2];
    for (int k = 0; k < 2; k++) {
        const unsigned char *r = v + (g0 + 4 * k) * row_bytes + 4 * b;
        const v128_t wk = wasm_v128_load(w + g0 + 4 * k), zero = wasm_f32x4_eq(wk, wasm_f32x4_splat(0.0f));
        v128_t s0, s1;
        if (two) {
            int64_t p[4];
            for (int i = 0; i < 4; i++) memcpy(&p[i], r + i * row_bytes, sizeof p[i]);
            const v128_t lo = wasm_i64x2_make(p[0], p[1]), hi = wasm_i64x2_make(p[2], p[3]);
            s0 = wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6);
            s1 = wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7);
            x[1][k] = wasm_v128_andnot(wasm_f32x4_mul(wk, s1), zero);
        } else
            s0 = wasm_f32x4_make(q8_scale(r, 0), q8_scale(r + row_bytes, 0), q8_scale(r + 2 * row_bytes, 0),
                                 q8_scale(r + 3 * row_bytes, 0));
        x[0][k] = wasm_v128_andnot(wasm_f32x4_mul(wk, s0), zero);
    }
    for (int t = 0; t <= two; t++) kind[t] = q8_round8(x[t], c[t], &step[t]);
}

/* Block b's integer sums of a group's keys [g0, g1) (g1 − g0 ≤ MIX_GROUP), whole blocks of 32:
 * sum[i] = Σ_j c[j − g0] × v8_ji, two keys a step, their values interleaved into int16 pairs
 * (key j's, key j+1's) for i32x4.dot_i16x8; an odd last key paired with itself and weight 0. */
INLINE void q8_group_sums32(v128_t sum[8], const unsigned char *v, int64_t row_bytes, int32_t nb, int32_t b,
                            int32_t g0, int32_t g1, const int16_t c[MIX_GROUP]) {
    for (int r = 0; r < 8; r++) sum[r] = wasm_i32x4_splat(0);
    for (int32_t j = g0; j < g1; j += 2) {
        const int32_t j2 = j + 1 < g1 ? j + 1 : j;
        const int8_t *va = q8_values(v + j * row_bytes, nb) + b * SAC_KV_Q8_BLOCK;
        const int8_t *vb = q8_values(v + j2 * row_bytes, nb) + b * SAC_KV_Q8_BLOCK;
        int32_t both; /* keys j's and j+1's weights, int16 lanes 2p and 2p + 1 */
        memcpy(&both, c + (j - g0), sizeof both);
        const v128_t pair = wasm_i32x4_splat(both);
        for (int half = 0; half < 2; half++) {
            const v128_t x = wasm_v128_load(va + 16 * half), y = wasm_v128_load(vb + 16 * half);
            const v128_t lo = wasm_i8x16_shuffle(x, y, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            const v128_t hi = wasm_i8x16_shuffle(x, y, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
            v128_t *s = sum + 4 * half;
            s[0] = wasm_i32x4_add(s[0], wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(lo), pair));
            s[1] = wasm_i32x4_add(s[1], wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(lo), pair));
            s[2] = wasm_i32x4_add(s[2], wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(hi), pair));
            s[3] = wasm_i32x4_add(s[3], wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(hi), pair));
        }
    }
}

/* o[0, 32) += step × (float)sum, value by value. */
INLINE void q8_add_sums32(float *o, const v128_t sum[8], float step) {
    const v128_t d = wasm_f32x4_splat(step);
    for (int r = 0; r < 8; r++)
        wasm_v128_store(o + 4 * r,
                        wasm_f32x4_add(wasm_v128_load(o + 4 * r), wasm_f32x4_mul(d, wasm_f32x4_convert_i32x4(sum[r]))));
}

#endif

/* A query head rounded as the keys were, widened once for the integer dots. */
typedef struct q8_query {
    int16_t w[SAC_KV_Q8_MAX_HEAD_DIM] __attribute__((aligned(16)));
    float d[SAC_KV_Q8_MAX_HEAD_DIM / SAC_KV_Q8_BLOCK];
} q8_query;

static void q8_round_query(const sac_kv_heads *a, int32_t head, q8_query *qq) {
    const int32_t hd = a->head_dim, nb = sac_kv_q8_blocks(hd);
    const float *q = a->q + (int64_t)head * hd;
    int8_t q8[SAC_KV_Q8_MAX_HEAD_DIM];
    for (int32_t b = 0; b < nb; b++)
        qq->d[b] = sac_kv_q8_round(q + b * SAC_KV_Q8_BLOCK, sac_kv_q8_block_len(hd, b), q8 + b * SAC_KV_Q8_BLOCK);
    for (int32_t i = 0; i < hd; i++) qq->w[i] = q8[i];
}

/* Keys [j0, j1) of query head h0 + h (SIMD128: four keys a step); *m: its running maximum. */
static void scores_q8_head(const sac_kv_heads *a, int32_t h, const q8_query *qq, int32_t j0, int32_t j1, float *m) {
    const int32_t hd = a->head_dim, head = a->h0 + h;
    const int64_t row_bytes = (int64_t)sac_kv_row_bytes(SAC_KV_Q8, hd);
    const unsigned char *kh = q8_head(a->k, a, head / a->group, row_bytes);
    float *row = a->rows[h];
    int32_t j = j0;
#ifdef SAC_SIMD128
    v128_t m4 = wasm_f32x4_splat(*m);
    for (; j + KEYS_PER_STEP <= j1; j += KEYS_PER_STEP) {
        const unsigned char *k[KEYS_PER_STEP];
        for (int r = 0; r < KEYS_PER_STEP; r++) k[r] = kh + (j + r) * row_bytes;
        m4 = keep4(a, row, j, q8_dot4(qq->w, qq->d, k, hd), m4);
    }
    *m = keep_max(m4, *m);
#endif
    for (; j < j1; j++) *m = keep(a, row, j, visible(a, j) ? q8_dot(qq->w, qq->d, kh + j * row_bytes, hd) : 0.0f, *m);
}

static void scores_q8(const sac_kv_heads *a, float *max) {
    q8_query qq;
    for (int32_t h = 0; h < a->h1 - a->h0; h++) {
        q8_round_query(a, a->h0 + h, &qq);
        max[h] = -INFINITY;
        scores_q8_head(a, h, &qq, 0, a->n_keys, &max[h]);
    }
}

/* Block b ([i0, i0 + n)) of a head's output values o += keys [g0, g1) of one group, rounded
 * (c, step) or, for MIX_FLOAT, in floats. */
static inline void mix_q8_group(float *o, const float *w, const unsigned char *v, int64_t row_bytes, int32_t hd,
                                int32_t b, int32_t g0, int32_t g1, int kind, const int16_t c[MIX_GROUP], float step) {
    const int32_t nb = sac_kv_q8_blocks(hd), i0 = b * SAC_KV_Q8_BLOCK, n = sac_kv_q8_block_len(hd, b);
    if (kind == MIX_FLOAT) {
        for (int32_t j = g0; j < g1; j++) {
            if (w[j] == 0.0f) continue;
            const unsigned char *row = v + j * row_bytes;
            const float wd = w[j] * q8_scale(row, b);
            const int8_t *q = q8_values(row, nb);
            for (int32_t i = i0; i < i0 + n; i++) o[i] = o[i] + wd * (float)q[i];
        }
        return;
    }
#ifdef SAC_SIMD128
    if (n == SAC_KV_Q8_BLOCK) {
        v128_t sum[8];
        q8_group_sums32(sum, v, row_bytes, nb, b, g0, g1, c);
        q8_add_sums32(o + i0, sum, step);
        return;
    }
#endif
    for (int32_t i = i0; i < i0 + n; i++) { /* value by value */
        int32_t sum = 0;
        for (int32_t j = g0; j < g1; j++) sum += c[j - g0] * q8_values(v + j * row_bytes, nb)[i];
        o[i] = o[i] + step * (float)sum;
    }
}

/* Keys whose weights are rounded, group by group, before their sums are taken: the sums do not
 * wait on each group's rounding (its division and conversions); a group at a time, the value
 * pass was ~15% slower (make bench-kv-attention, wasm). */
#define MIX_CHUNK 32

/* Head h0 + h's output values += keys [j0, j1) of its weighted values (j0: a whole number of
 * groups), chunk by chunk, two blocks at a time, group by group. */
static void mix_q8_head(const sac_kv_heads *a, int32_t h, float *out, int32_t j0, int32_t j1) {
    const int32_t hd = a->head_dim, nb = sac_kv_q8_blocks(hd), head = a->h0 + h;
    const int64_t row_bytes = (int64_t)sac_kv_row_bytes(SAC_KV_Q8, hd);
    const float *w = a->rows[h];
    const unsigned char *v = q8_head(a->v, a, head / a->group, row_bytes);
    float *o = out + (int64_t)head * hd;
    enum { GROUPS = MIX_CHUNK / MIX_GROUP };
    int16_t c[GROUPS][2][MIX_GROUP] __attribute__((aligned(16)));
    float step[GROUPS][2];
    int kind[GROUPS][2];
    for (int32_t c0 = j0; c0 < j1; c0 += MIX_CHUNK) {
        const int32_t c1 = j1 - c0 < MIX_CHUNK ? j1 : c0 + MIX_CHUNK, groups = (c1 - c0 + MIX_GROUP - 1) / MIX_GROUP;
        for (int32_t b = 0; b < nb; b += 2) {
            const int two = b + 1 < nb;
            for (int32_t g = 0; g < groups; g++) {
                const int32_t g0 = c0 + g * MIX_GROUP, g1 = c1 - g0 < MIX_GROUP ? c1 : g0 + MIX_GROUP;
#ifdef SAC_SIMD128
                if (g1 - g0 == MIX_GROUP) {
                    q8_group_weights8(w, v, row_bytes, b, two, g0, c[g], step[g], kind[g]);
                    continue;
                }
#endif
                for (int t = 0; t <= two; t++)
                    kind[g][t] = q8_group_weights(w, v, row_bytes, b + t, g0, g1, c[g][t], &step[g][t]);
            }
            for (int t = 0; t <= two; t++)
                for (int32_t g = 0; g < groups; g++) {
                    const int32_t g0 = c0 + g * MIX_GROUP, g1 = c1 - g0 < MIX_GROUP ? c1 : g0 + MIX_GROUP;
                    if (kind[g][t] != MIX_NOTHING)
                        mix_q8_group(o, w, v, row_bytes, hd, b + t, g0, g1, kind[g][t], c[g][t], step[g][t]);
                }
        }
    }
}

static void mix_q8(const sac_kv_heads *a, float *out) {
    clear_heads(a, out);
    for (int32_t h = 0; h < a->h1 - a->h0; h++) mix_q8_head(a, h, out, 0, a->n_keys);
}

/* ---------------------------------------------------------------------------------------- */
/* Tiles: several query rows over the same keys                                              */
/* ---------------------------------------------------------------------------------------- */

/* A tile's run: keys of one head that fill ~16 KB of rows, which stay in the 32 KB L1 cache
 * while each of the tile's rows passes over them (a multiple of four keys; of MIX_GROUP for q8). Row by row, a long
 * prefill read every key and value from memory once per query row. (Prefill of 2048 tokens,
 * Node, 2 threads: 8 KB runs as fast, 32 KB 3-5% slower.) */
#define TILE_RUN_BYTES (16 * 1024)

/* (type: the cache type the pass reads) */
static int32_t tile_run(const sac_kv_heads *a, int32_t type) {
    const int32_t step = type == SAC_KV_Q8 ? MIX_GROUP : KEYS_PER_STEP; /* (a multiple of KEYS_PER_STEP) */
    int64_t keys = TILE_RUN_BYTES / (int64_t)sac_kv_row_bytes(type, a->head_dim);
    keys -= keys % step;
    return keys < step ? step : (int32_t)keys;
}

static int32_t most_keys(const sac_kv_heads *a, int32_t n) {
    int32_t most = 0;
    for (int32_t r = 0; r < n; r++)
        if (a[r].n_keys > most) most = a[r].n_keys;
    return most;
}

/* Query heads from h0 + h on that share its kv head (all of them, within [h0, h1)). */
static inline int32_t kv_group_heads(const sac_kv_heads *a, int32_t h) {
    int32_t n = 1;
    while (a->h0 + h + n < a->h1 && (a->h0 + h + n) / a->group == (a->h0 + h) / a->group) n++;
    return n;
}

/* One query vector of a tile: head h0 + h of the row a, and its running maximum. */
typedef struct tile_query {
    const sac_kv_heads *a;
    int32_t h;
    float *max;
} tile_query;

/* Keys [j0, j0 + run) of nq query vectors of a tile that share a kv head, each up to its row's
 * keys: those every one sees scored for all of them from one read of each key row (dot_heads,
 * as query heads sharing a kv head are), the rest one by one (scores_head). Each score has
 * dot's bits either way. */
INLINE void score_queries(const tile_query *t, int nq, int32_t j0, int32_t run, int bf16) {
    const sac_kv_heads *a = t[0].a;
    const int32_t hd = a->head_dim;
    int32_t shared = j0 + run;
    for (int r = 0; r < nq; r++)
        if (t[r].a->n_keys < shared) shared = t[r].a->n_keys;
    if (nq > 1 && shared > j0) {
        const void *kh = value_ptr(a->k, (int64_t)((a->h0 + t[0].h) / a->group) * a->head_stride, bf16);
        const float *q[GROUP_STEP];
        float *row[GROUP_STEP], m[GROUP_STEP], s[GROUP_STEP];
        for (int r = 0; r < nq; r++)
            q[r] = t[r].a->q + (int64_t)(a->h0 + t[r].h) * hd, row[r] = t[r].a->rows[t[r].h], m[r] = *t[r].max;
        for (int32_t j = j0; j < shared; j++) {
            dot_heads(q, nq, 0, value_ptr(kh, (int64_t)j * a->kv_stride, bf16), hd, s, bf16);
            for (int r = 0; r < nq; r++) m[r] = keep(t[r].a, row[r], j, s[r], m[r]);
        }
        for (int r = 0; r < nq; r++) *t[r].max = m[r];
    } else
        shared = j0;
    for (int r = 0; r < nq; r++) {
        const int32_t j1 = run_end(t[r].a, j0, run);
        if (shared < j1) scores_head(t[r].a, t[r].h, shared, j1, t[r].max - t[r].h, bf16);
    }
}

/* score_queries with a constant group size and cache type, each its own function (not inlined
 * into the tile pass): a wasm engine optimizes a function once it has run a while, and a
 * prompt's first evaluation waits for that in Node; a model runs one or two of the eight, and
 * the engine then optimizes only those, not one large function holding all of them. */
#define SCORE_QUERIES(nq, bf16)                                                                    \
    static __attribute__((noinline)) void score_queries_##nq##_##bf16(const tile_query *t, int32_t j0, \
                                                                      int32_t run) {               \
        score_queries(t, nq, j0, run, bf16);                                                       \
    }
SCORE_QUERIES(1, 0)
SCORE_QUERIES(2, 0)
SCORE_QUERIES(3, 0)
SCORE_QUERIES(4, 0)
SCORE_QUERIES(1, 1)
SCORE_QUERIES(2, 1)
SCORE_QUERIES(3, 1)
SCORE_QUERIES(4, 1)
#undef SCORE_QUERIES

INLINE void score_some(const tile_query *t, int nq, int32_t j0, int32_t run, int bf16) {
    static void (*const by_size[2][GROUP_STEP + 1])(const tile_query *, int32_t, int32_t) = {
        {NULL, score_queries_1_0, score_queries_2_0, score_queries_3_0, score_queries_4_0},
        {NULL, score_queries_1_1, score_queries_2_1, score_queries_3_1, score_queries_4_1},
    };
    if (nq > 0 && nq <= GROUP_STEP) by_size[bf16 != 0][nq](t, j0, run);
}

/* Each kv head's runs in key order; over each run, its query heads' vectors of every row,
 * GROUP_STEP at a time. max: n × (h1 − h0). */
INLINE void scores_tile(const sac_kv_heads *a, int32_t n, float *max, int bf16) {
    const int32_t nh = a->h1 - a->h0, run = tile_run(a, bf16 ? SAC_KV_BF16 : SAC_KV_F32), most = most_keys(a, n);
    for (int32_t i = 0; i < n * nh; i++) max[i] = -INFINITY;
    for (int32_t h = 0; h < nh;) {
        const int32_t heads = kv_group_heads(a, h);
        for (int32_t j0 = 0; j0 < most; j0 += run) {
            tile_query t[GROUP_STEP];
            int nq = 0;
            for (int32_t g = h; g < h + heads; g++)
                for (int32_t r = 0; r < n; r++) {
                    t[nq++] = (tile_query){&a[r], g, &max[r * nh + g]};
                    if (nq == GROUP_STEP) score_some(t, nq, j0, run, bf16), nq = 0;
                }
            score_some(t, nq, j0, run, bf16);
        }
        h += heads;
    }
}

/* Each kv head's runs in key order; over each run, its query heads of every row in turn
 * (mix_head, or mix_q8_head for type SAC_KV_Q8): every output value adds its row's weighted
 * values in key order, as mix and mix_q8 do. */
INLINE void mix_tile(const sac_kv_heads *a, int32_t n, float *const *out, int32_t type) {
    const int32_t nh = a->h1 - a->h0, run = tile_run(a, type), most = most_keys(a, n);
    for (int32_t r = 0; r < n; r++) clear_heads(&a[r], out[r]);
    for (int32_t h = 0; h < nh;) {
        const int32_t heads = kv_group_heads(a, h);
        for (int32_t j0 = 0; j0 < most; j0 += run)
            for (int32_t g = h; g < h + heads; g++)
                for (int32_t r = 0; r < n; r++) {
                    const int32_t j1 = run_end(&a[r], j0, run);
                    if (j0 >= j1) continue;
                    if (type == SAC_KV_Q8) mix_q8_head(&a[r], g, out[r], j0, j1);
                    else mix_head(&a[r], g, out[r], j0, j1, type == SAC_KV_BF16);
                }
        h += heads;
    }
}

/* A q8 cache's tile: the same runs, each row's query rounded once a head. */
static void scores_tile_q8(const sac_kv_heads *a, int32_t n, float *max) {
    const int32_t nh = a->h1 - a->h0, run = tile_run(a, SAC_KV_Q8), most = most_keys(a, n);
    q8_query qq[SAC_KV_HEAD_BLOCK];
    for (int32_t h = 0; h < nh; h++) {
        for (int32_t r = 0; r < n; r++) q8_round_query(&a[r], a->h0 + h, &qq[r]), max[r * nh + h] = -INFINITY;
        for (int32_t j0 = 0; j0 < most; j0 += run)
            for (int32_t r = 0; r < n; r++) {
                const int32_t j1 = run_end(&a[r], j0, run);
                if (j0 < j1) scores_q8_head(&a[r], h, &qq[r], j0, j1, &max[r * nh + h]);
            }
    }
}

static void scores_f32(const sac_kv_heads *a, float *max) { scores(a, max, 0); }
static void scores_bf16(const sac_kv_heads *a, float *max) { scores(a, max, 1); }
static void mix_f32(const sac_kv_heads *a, float *out) { mix(a, out, 0); }
static void mix_bf16(const sac_kv_heads *a, float *out) { mix(a, out, 1); }
static void scores_tile_f32(const sac_kv_heads *a, int32_t n, float *max) { scores_tile(a, n, max, 0); }
static void scores_tile_bf16(const sac_kv_heads *a, int32_t n, float *max) { scores_tile(a, n, max, 1); }
static void mix_tile_f32(const sac_kv_heads *a, int32_t n, float *const *out) { mix_tile(a, n, out, SAC_KV_F32); }
static void mix_tile_bf16(const sac_kv_heads *a, int32_t n, float *const *out) { mix_tile(a, n, out, SAC_KV_BF16); }
static void mix_tile_q8(const sac_kv_heads *a, int32_t n, float *const *out) { mix_tile(a, n, out, SAC_KV_Q8); }

/* The passes of each cache type, called through a table: each stays a function of its own in
 * wasm, where binaryen would otherwise inline it (its only caller) into attention's task, and
 * V8 compiles the one large function worse. */
typedef struct kv_passes {
    void (*scores)(const sac_kv_heads *, float *);
    void (*mix)(const sac_kv_heads *, float *);
    void (*scores_tile)(const sac_kv_heads *, int32_t, float *);
    void (*mix_tile)(const sac_kv_heads *, int32_t, float *const *);
} kv_passes;

static const kv_passes passes[] = {
    [SAC_KV_F32] = {scores_f32, mix_f32, scores_tile_f32, mix_tile_f32},
    [SAC_KV_BF16] = {scores_bf16, mix_bf16, scores_tile_bf16, mix_tile_bf16},
    [SAC_KV_Q8] = {scores_q8, mix_q8, scores_tile_q8, mix_tile_q8},
};

/* Any type but bf16 and q8 is read as f32. */
static const kv_passes *passes_of(int32_t kv_type) {
    return &passes[kv_type == SAC_KV_BF16 || kv_type == SAC_KV_Q8 ? kv_type : SAC_KV_F32];
}

void sac_kv_scores(const sac_kv_heads *a, float *max) { passes_of(a->kv_type)->scores(a, max); }
void sac_kv_mix(const sac_kv_heads *a, float *out) { passes_of(a->kv_type)->mix(a, out); }
/* (Tiles of at most SAC_KV_HEAD_BLOCK rows: the q8 passes keep each row's rounded query.) */
void sac_kv_scores_tile(const sac_kv_heads *a, int32_t n, float *max) {
    for (int32_t r = 0; r < n; r += SAC_KV_HEAD_BLOCK)
        passes_of(a->kv_type)->scores_tile(a + r, n - r < SAC_KV_HEAD_BLOCK ? n - r : SAC_KV_HEAD_BLOCK,
                                           max + (int64_t)r * (a->h1 - a->h0));
}

void sac_kv_mix_tile(const sac_kv_heads *a, int32_t n, float *const *out) {
    for (int32_t r = 0; r < n; r += SAC_KV_HEAD_BLOCK)
        passes_of(a->kv_type)->mix_tile(a + r, n - r < SAC_KV_HEAD_BLOCK ? n - r : SAC_KV_HEAD_BLOCK, out + r);
}
