/* test_kv_attention — attention's block passes over the KV cache (kv_attention.c) give, for
 * every head, the bits of one head at a time with sac_dot_f32 and sac_axpy_f32 (what attention
 * did before the passes were blocked): whatever the block of heads, the head_dim (leftovers
 * of head_dim % 8 included), the query heads per kv head (scored together from one read of a
 * key row, up to four at a time), hidden keys, and the layout (rows of every head interleaved,
 * or each head's rows together with room to spare). Over a bf16 cache,
 * the bits of the same head-by-head computation on the bf16-rounded keys and values. Over a q8
 * cache, the bits of the computation kv_cache.h and kv_attention.c define, written here key by
 * key from the cache's bytes (so the SIMD128 build's vector passes are checked against plain C
 * on every build), and within stated tolerances of float64 attention on the unrounded values.
 * The tile passes (several query rows over the same keys) give the bits of the row passes. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels.h"
#include "kv_attention.h"
#include "kv_cache.h"

static uint32_t rng = 12345;
static float uniform(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 24) - 0.5f;
}

/* A q8 row's parts, read as kv_cache.h lays them out: block scales, then int8 values. */
static float q8_scale_of(const unsigned char *row, int32_t b) {
    float s;
    memcpy(&s, row + 4 * b, sizeof s);
    return s;
}

/* The q8 score of one key, before the 1/√d scale: per block the exact integer dot of the
 * rounded query with the key, times the two scales, summed block after block. */
static float q8_score_spec(const float *q, const unsigned char *row, int32_t hd) {
    const int32_t nb = sac_kv_q8_blocks(hd);
    const int8_t *k = (const int8_t *)(row + 4 * nb);
    float acc = 0.0f;
    for (int32_t b = 0; b < nb; b++) {
        const int32_t i0 = b * SAC_KV_Q8_BLOCK, n = hd - i0 < SAC_KV_Q8_BLOCK ? hd - i0 : SAC_KV_Q8_BLOCK;
        int8_t qq[SAC_KV_Q8_BLOCK];
        const float qd = sac_kv_q8_round(q + i0, n, qq);
        int32_t dot = 0;
        for (int32_t i = 0; i < n; i++) dot += qq[i] * k[i0 + i];
        acc = acc + (float)dot * (qd * q8_scale_of(row, b));
    }
    return acc;
}

/* A head's q8 output values from its weights w over keys [0, n_keys) (rows row_bytes apart):
 * groups of 8 keys from key 0; for each block of a group, each key's weight c = w × scale is
 * rounded to an integer against the group's largest |c|, M: nearest(c × 32767 / M); the exact
 * integer sum of those times the int8 values, per value, then out += (M / 32767) × sum. A group
 * with M = 0 adds nothing; with M below 1e-30, the weights (w × scale) × v8 one key at a time
 * (keys of weight 0 skipped). */
static void q8_mix_spec(float *out, const float *w, const unsigned char *rows, size_t row_bytes, int32_t n_keys,
                        int32_t hd) {
    const int32_t nb = sac_kv_q8_blocks(hd);
    memset(out, 0, sizeof(float) * (size_t)hd);
    for (int32_t g0 = 0; g0 < n_keys; g0 += 8) {
        const int32_t g1 = g0 + 8 < n_keys ? g0 + 8 : n_keys;
        for (int32_t b = 0; b < nb; b++) {
            const int32_t i0 = b * SAC_KV_Q8_BLOCK, n = hd - i0 < SAC_KV_Q8_BLOCK ? hd - i0 : SAC_KV_Q8_BLOCK;
            float c[8], m = 0.0f;
            for (int32_t j = g0; j < g1; j++) {
                c[j - g0] = w[j] == 0.0f ? 0.0f : w[j] * q8_scale_of(rows + (size_t)j * row_bytes, b);
                if (fabsf(c[j - g0]) > m) m = fabsf(c[j - g0]);
            }
            if (m == 0.0f) continue;
            for (int32_t i = i0; i < i0 + n; i++) {
                if (m < 1e-30f) {
                    for (int32_t j = g0; j < g1; j++)
                        if (w[j] != 0.0f) out[i] = out[i] + c[j - g0] * (float)((const int8_t *)(rows + (size_t)j * row_bytes + 4 * nb))[i];
                    continue;
                }
                int32_t sum = 0;
                for (int32_t j = g0; j < g1; j++)
                    sum += (int32_t)nearbyintf(c[j - g0] * (32767.0f / m)) *
                           ((const int8_t *)(rows + (size_t)j * row_bytes + 4 * nb))[i];
                out[i] = out[i] + m / 32767.0f * (float)sum;
            }
        }
    }
}

/* One shape: n_head query heads over n_kv kv heads of head_dim, n_keys keys with some hidden,
 * computed in blocks of `block` heads and head by head; every score and output must match.
 * kv_type: the cache the block passes read (bf16: the head-by-head pass gets the rounded
 * values as f32; q8: the spec above). by_head: the cache keeps each kv head's rows together,
 * with room for 3 more (as the model's cache has room for n_ctx); else a row holds every head
 * (not for q8, which attention reads only by head). */
static void check_shape(int32_t n_head, int32_t n_kv, int32_t hd, int32_t n_keys, int32_t block, int32_t kv_type,
                        int by_head) {
    const int64_t stride = (int64_t)n_kv * hd;
    float *q = malloc(sizeof(float) * (size_t)(n_head * hd));
    float *k = malloc(sizeof(float) * (size_t)(n_keys * stride)), *v = malloc(sizeof(float) * (size_t)(n_keys * stride));
    float *rows = malloc(sizeof(float) * (size_t)(n_head * n_keys)), *want = malloc(sizeof(float) * (size_t)n_keys);
    float *out = malloc(sizeof(float) * (size_t)(n_head * hd)), *want_out = malloc(sizeof(float) * (size_t)hd);
    uint8_t *mask = malloc((size_t)n_keys);
    for (int32_t i = 0; i < n_head * hd; i++) q[i] = uniform();
    for (int64_t i = 0; i < n_keys * stride; i++) k[i] = uniform(), v[i] = uniform();
    /* the cache the passes read; k and v become the values it holds */
    const int64_t room = by_head ? n_keys + 3 : n_keys, kv_stride = by_head ? hd : stride;
    const int64_t head_stride = by_head ? room * hd : hd;
    const size_t row_bytes = sac_kv_row_bytes(kv_type, hd);
    unsigned char *k_cache = malloc(row_bytes * (size_t)(room * n_kv)), *v_cache = malloc(row_bytes * (size_t)(room * n_kv));
    for (int32_t j = 0; j < n_keys; j++)
        for (int32_t g = 0; g < n_kv; g++) {
            const int64_t row = (g * head_stride + j * kv_stride) / hd, from = j * stride + (int64_t)g * hd;
            sac_kv_store(k_cache, kv_type, row, k + from, hd);
            sac_kv_store(v_cache, kv_type, row, v + from, hd);
        }
    for (int32_t j = 0; j < n_keys; j++) mask[j] = j % 5 != 3;
    const int32_t own = n_keys - 2 >= 0 && n_keys % 5 == 0 ? n_keys - 2 : n_keys - 1; /* often a hidden one */
    const float scale = 1.0f / sqrtf((float)hd);
    int mismatches = 0;

    for (int32_t h0 = 0; h0 < n_head; h0 += block) {
        const int32_t h1 = h0 + block < n_head ? h0 + block : n_head;
        float *row_ptrs[SAC_KV_HEAD_BLOCK], max[SAC_KV_HEAD_BLOCK];
        for (int32_t h = h0; h < h1; h++) row_ptrs[h - h0] = rows + (int64_t)h * n_keys;
        const sac_kv_heads heads = {.q = q, .k = k_cache, .v = v_cache, .kv_type = kv_type, .kv_stride = kv_stride,
                                    .head_stride = head_stride, .head_dim = hd,
                                    .group = n_head / n_kv, .h0 = h0, .h1 = h1, .n_keys = n_keys, .own = own,
                                    .key_mask = mask, .scale = scale, .rows = row_ptrs};
        sac_kv_scores(&heads, max);
        for (int32_t h = h0; h < h1; h++) {
            /* head by head, as attention computed it before */
            const float *kh = k + (int64_t)(h / (n_head / n_kv)) * hd;
            float m = -INFINITY;
            const unsigned char *kq8 = k_cache + (size_t)(h / (n_head / n_kv)) * (size_t)room * row_bytes;
            for (int32_t j = 0; j < n_keys; j++) {
                const float dot = kv_type == SAC_KV_Q8 ? q8_score_spec(q + (int64_t)h * hd, kq8 + (size_t)j * row_bytes, hd)
                                                       : sac_dot_f32(q + (int64_t)h * hd, kh + j * stride, hd);
                want[j] = !mask[j] && j != own ? -INFINITY : dot * scale;
                if (want[j] > m) m = want[j];
            }
            mismatches += memcmp(want, row_ptrs[h - h0], sizeof(float) * (size_t)n_keys) != 0;
            mismatches += memcmp(&m, &max[h - h0], sizeof m) != 0;
            /* weights: some exact zeros, which the value pass skips; q8: keys 24-31 all zero (a
             * group that adds nothing) and 16-23 tiny (one added in floats) */
            for (int32_t j = 0; j < n_keys; j++) {
                const float wj = j % 7 == 2 ? 0.0f : uniform() + 0.5f;
                row_ptrs[h - h0][j] = j >= 24 && j < 32 ? 0.0f : j >= 16 && j < 24 ? wj * 1e-33f : wj;
            }
        }
        memset(out, 0xff, sizeof(float) * (size_t)(n_head * hd)); /* NaNs: the pass must clear its heads */
        sac_kv_mix(&heads, out);
        for (int32_t h = h0; h < h1; h++) {
            const float *vh = v + (int64_t)(h / (n_head / n_kv)) * hd;
            const unsigned char *vq8 = v_cache + (size_t)(h / (n_head / n_kv)) * (size_t)room * row_bytes;
            memset(want_out, 0, sizeof(float) * (size_t)hd);
            if (kv_type == SAC_KV_Q8) q8_mix_spec(want_out, row_ptrs[h - h0], vq8, row_bytes, n_keys, hd);
            else
                for (int32_t j = 0; j < n_keys; j++)
                    if (row_ptrs[h - h0][j] != 0.0f) sac_axpy_f32(want_out, row_ptrs[h - h0][j], vh + j * stride, hd);
            mismatches += memcmp(want_out, out + (int64_t)h * hd, sizeof(float) * (size_t)hd) != 0;
        }
    }
    CHECK_MSG(mismatches == 0, "%s, %s: %d rows differ (heads %d/%d, head_dim %d, keys %d, block %d)",
              sac_kv_type_name(kv_type), by_head ? "by head" : "interleaved", mismatches, n_head, n_kv, hd, n_keys, block);
    free(q), free(k), free(v), free(rows), free(want), free(out), free(want_out), free(mask);
    free(k_cache), free(v_cache);
}

static void test_blocks_match_head_by_head(void) {
    const int32_t dims[] = {64, 16, 5, 12, 20, 3, 40, 96, 80, 128};
    for (int32_t type = SAC_KV_F32; type <= SAC_KV_Q8; type++)
        for (int by_head = type == SAC_KV_Q8; by_head <= 1; by_head++) {
            for (size_t d = 0; d < sizeof dims / sizeof *dims; d++)
                for (int32_t block = 1; block <= 12; block += 5) {
                    check_shape(12, 12, dims[d], 37, block, type, by_head);
                    check_shape(12, 4, dims[d], 20, block, type, by_head); /* 3 query heads per kv head */
                    check_shape(16, 2, dims[d], 23, block, type, by_head); /* 8: runs of 4, some cut by the block */
                    check_shape(20, 4, dims[d], 9, block, type, by_head);  /* 5: a run of 4 and one alone */
                    check_shape(8, 1, dims[d], 1, block, type, by_head);   /* one key, one kv head */
                }
            check_shape(20, 10, 64, 300, SAC_KV_HEAD_BLOCK, type, by_head);
            check_shape(6, 3, 20, 131, 4, type, by_head); /* interleaved: several runs, the last not a multiple of 4 */
            check_shape(16, 4, 24, 150, 11, type, by_head); /* groups of 4 (and 3, cut by the block) over runs */
            if (type != SAC_KV_Q8) check_shape(8, 2, 264, 70, 8, type, by_head); /* longer than wasm's bf16 query copy */
        }
}

/* A q8 value pass with a weight that is not a number or infinite (a softmax over overflowed
 * scores): its group is summed in floats, key by key, so the head's values come out NaN, or +∞
 * for an infinite weight over positive values, as an f32 cache's would (rounded against an
 * infinite largest weight they would be NaN); the other heads' stay finite. */
static void test_q8_nonfinite_weights(void) {
    enum { HD = 64, KEYS = 20, HEADS = 4 };
    const size_t row_bytes = sac_kv_row_bytes(SAC_KV_Q8, HD);
    unsigned char *vc = malloc(row_bytes * HEADS * KEYS);
    float x[HD], w[HEADS][KEYS], out[HEADS * HD];
    for (int32_t r = 0; r < HEADS * KEYS; r++) {
        for (int i = 0; i < HD; i++) x[i] = uniform() + 1.0f; /* positive */
        sac_kv_store(vc, SAC_KV_Q8, r, x, HD);
    }
    for (int h = 0; h < HEADS; h++)
        for (int j = 0; j < KEYS; j++) w[h][j] = 0.05f;
    /* in a whole group of 8 keys (the SIMD128 build's vector rounding) and in the last, partial one */
    w[0][9] = NAN, w[1][3] = INFINITY, w[2][17] = INFINITY;
    float *rows[HEADS] = {w[0], w[1], w[2], w[3]};
    const sac_kv_heads heads = {.v = vc, .kv_type = SAC_KV_Q8, .kv_stride = HD, .head_stride = KEYS * HD,
                                .head_dim = HD, .group = 1, .h0 = 0, .h1 = HEADS, .n_keys = KEYS, .own = KEYS - 1,
                                .rows = rows};
    sac_kv_mix(&heads, out);
    int nan = 0, inf = 0, finite = 0;
    for (int i = 0; i < HD; i++) {
        nan += isnan(out[i]);
        inf += (isinf(out[HD + i]) && out[HD + i] > 0) + (isinf(out[2 * HD + i]) && out[2 * HD + i] > 0);
        finite += isfinite(out[3 * HD + i]);
    }
    CHECK_MSG(nan == HD && inf == 2 * HD && finite == HD, "q8, non-finite weights: %d NaN of %d, %d +inf of %d, %d finite of %d",
              nan, HD, inf, 2 * HD, finite, HD);
    free(vc);
}

/* The passes over a rounded cache against float64 attention on the unrounded keys and values
 * (hence not equal: the path really reads 16- or 8-bit values), within what the rounding
 * explains. Scores: q·k/8 for keys and query uniform in ±0.5, head_dim 64 (|score| < 2);
 * values: the mean of 40 value rows. Measured largest errors (this test prints them): bf16
 * 2.5e-4 and 2.1e-4, q8 1.3e-3 and 3.4e-4 (q8 rounds to 1/254 of each block's largest |value|
 * where bf16 keeps 8 significant bits of each, and q8 rounds the query too); the tolerances
 * are 4-6× those. */
static void check_rounded_cache(int32_t kv_type, double score_tol, double value_tol) {
    enum { HD = 64, KEYS = 40 };
    float q[HD], k[KEYS * HD], v[KEYS * HD], kr[KEYS * HD], vr[KEYS * HD], rows[KEYS], m, o[HD];
    unsigned char kc[KEYS * HD * 4], vc[KEYS * HD * 4];
    uint8_t mask[KEYS];
    for (int i = 0; i < HD; i++) q[i] = uniform();
    for (int i = 0; i < KEYS * HD; i++) k[i] = kr[i] = uniform(), v[i] = vr[i] = uniform();
    memset(mask, 1, sizeof mask);
    for (int j = 0; j < KEYS; j++) sac_kv_store(kc, kv_type, j, kr + j * HD, HD), sac_kv_store(vc, kv_type, j, vr + j * HD, HD);
    float *r[1] = {rows};
    const sac_kv_heads a = {.q = q, .k = kc, .v = vc, .kv_type = kv_type, .kv_stride = HD, .head_stride = KEYS * HD,
                            .head_dim = HD, .group = 1, .h0 = 0, .h1 = 1, .n_keys = KEYS, .own = -1, .key_mask = mask,
                            .scale = 0.125f, .rows = r};
    sac_kv_scores(&a, &m);
    double worst = 0;
    for (int j = 0; j < KEYS; j++) {
        double dot = 0;
        for (int i = 0; i < HD; i++) dot += (double)q[i] * k[j * HD + i];
        worst = fmax(worst, fabs(rows[j] - dot * 0.125));
    }
    printf("  %s scores: largest error %.3g (tolerance %g)\n", sac_kv_type_name(kv_type), worst, score_tol);
    CHECK_MSG(worst > 0 && worst < score_tol, "%s scores vs float64: largest error %g", sac_kv_type_name(kv_type), worst);
    for (int j = 0; j < KEYS; j++) rows[j] = 1.0f / KEYS;
    sac_kv_mix(&a, o);
    worst = 0;
    for (int i = 0; i < HD; i++) {
        double sum = 0;
        for (int j = 0; j < KEYS; j++) sum += (double)(1.0f / KEYS) * v[j * HD + i];
        worst = fmax(worst, fabs(o[i] - sum));
    }
    printf("  %s values: largest error %.3g (tolerance %g)\n", sac_kv_type_name(kv_type), worst, value_tol);
    CHECK_MSG(worst > 0 && worst < value_tol, "%s values vs float64: largest error %g", sac_kv_type_name(kv_type), worst);
}

static void test_rounded_caches_against_float64(void) {
    check_rounded_cache(SAC_KV_BF16, 1e-3, 1e-3);
    check_rounded_cache(SAC_KV_Q8, 8e-3, 2e-3);
}

/* A tile of n query rows (consecutive tokens of a causal batch: row r sees first_keys + r keys,
 * its own key the last, hidden by the mask on some rows) over a by-head cache, heads [h0, h1):
 * every score, maximum and output value has the bits of sac_kv_scores and sac_kv_mix row by
 * row, which test_blocks_match_head_by_head holds to one head at a time; the other heads'
 * outputs are left alone. Each row's scores have room for its own keys only (so that the
 * sanitizer builds catch a write past them). */
static void check_tile(int32_t n_head, int32_t n_kv, int32_t hd, int32_t first_keys, int32_t n, int32_t h0,
                       int32_t h1, int32_t kv_type) {
    enum { ROWS = 20 };
    const int32_t n_keys = first_keys + n - 1, nh = h1 - h0, room = n_keys + 5;
    const size_t row_bytes = sac_kv_row_bytes(kv_type, hd);
    float *q = malloc(sizeof(float) * (size_t)(n * n_head * hd)), *x = malloc(sizeof(float) * (size_t)hd);
    unsigned char *k = malloc(row_bytes * (size_t)(room * n_kv)), *v = malloc(row_bytes * (size_t)(room * n_kv));
    float *out = malloc(sizeof(float) * (size_t)(2 * n * n_head * hd));
    uint8_t *mask = malloc((size_t)n_keys);
    for (int32_t i = 0; i < n * n_head * hd; i++) q[i] = uniform();
    for (int32_t g = 0; g < n_kv; g++)
        for (int32_t j = 0; j < n_keys; j++) {
            for (int32_t i = 0; i < hd; i++) x[i] = uniform();
            sac_kv_store(k, kv_type, (int64_t)g * room + j, x, hd);
            for (int32_t i = 0; i < hd; i++) x[i] = uniform();
            sac_kv_store(v, kv_type, (int64_t)g * room + j, x, hd);
        }
    for (int32_t j = 0; j < n_keys; j++) mask[j] = j % 6 != 4;
    /* [0]: the tile's, [1]: row by row's */
    sac_kv_heads a[2][ROWS];
    float *rows[2][ROWS][SAC_KV_HEAD_BLOCK], max[2][ROWS * SAC_KV_HEAD_BLOCK], *outs[ROWS];
    for (int w = 0; w < 2; w++)
        for (int32_t r = 0; r < n; r++) {
            for (int32_t h = 0; h < nh; h++) rows[w][r][h] = malloc(sizeof(float) * (size_t)(first_keys + r));
            a[w][r] = (sac_kv_heads){.q = q + (int64_t)r * n_head * hd, .k = k, .v = v, .kv_type = kv_type,
                                     .kv_stride = hd, .head_stride = (int64_t)room * hd, .head_dim = hd,
                                     .group = n_head / n_kv, .h0 = h0, .h1 = h1, .n_keys = first_keys + r,
                                     .own = first_keys + r - 1, .key_mask = mask,
                                     .scale = 1.0f / sqrtf((float)hd), .rows = rows[w][r]};
        }
    sac_kv_scores_tile(a[0], n, max[0]);
    for (int32_t r = 0; r < n; r++) sac_kv_scores(&a[1][r], max[1] + r * nh);
    int differ = 0;
    for (int32_t r = 0; r < n; r++)
        for (int32_t h = 0; h < nh; h++) {
            differ += memcmp(rows[0][r][h], rows[1][r][h], sizeof(float) * (size_t)(first_keys + r)) != 0;
            differ += memcmp(&max[0][r * nh + h], &max[1][r * nh + h], sizeof(float)) != 0;
            /* weights, some exact zeros (skipped), the same for both */
            for (int32_t j = 0; j < first_keys + r; j++)
                rows[0][r][h][j] = rows[1][r][h][j] = j % 9 == 5 ? 0.0f : uniform() + 0.5f;
        }
    memset(out, 0xff, sizeof(float) * (size_t)(2 * n * n_head * hd)); /* NaNs: the passes clear their heads */
    for (int32_t r = 0; r < n; r++) outs[r] = out + (int64_t)r * n_head * hd;
    sac_kv_mix_tile(a[0], n, outs);
    for (int32_t r = 0; r < n; r++) sac_kv_mix(&a[1][r], out + (int64_t)(n + r) * n_head * hd);
    int touched = 0; /* other heads' values the tile wrote */
    for (int32_t r = 0; r < n; r++) {
        differ += memcmp(out + ((int64_t)r * n_head + h0) * hd, out + ((int64_t)(n + r) * n_head + h0) * hd,
                         sizeof(float) * (size_t)(nh * hd)) != 0;
        for (int32_t i = 0; i < n_head * hd; i++)
            touched += (i < h0 * hd || i >= h1 * hd) && !isnan(out[(int64_t)r * n_head * hd + i]);
    }
    CHECK_MSG(differ == 0 && touched == 0,
              "%s tile of %d rows (first %d keys, heads %d-%d of %d/%d, head_dim %d): %d rows differ, %d values of other heads written",
              sac_kv_type_name(kv_type), n, first_keys, h0, h1, n_head, n_kv, hd, differ, touched);
    for (int w = 0; w < 2; w++)
        for (int32_t r = 0; r < n; r++)
            for (int32_t h = 0; h < nh; h++) free(rows[w][r][h]);
    free(q), free(x), free(k), free(v), free(out), free(mask);
}

/* Runs (kv_attention.c's tile_run) for head_dim 64: 64 keys f32, 128 bf16, 224 q8; 40: 100,
 * 204, 336; 264: 12, 28; 5: 816, 1636, 1816 (q8's: whole groups of 8 keys). */
static void test_tiles_match_row_by_row(void) {
    for (int32_t type = SAC_KV_F32; type <= SAC_KV_Q8; type++) {
        check_tile(4, 4, 64, 300, 8, 0, 4, type);   /* several runs for each type */
        check_tile(4, 4, 64, 128, 8, 1, 2, type);   /* the first row ends on an f32 / bf16 run's edge */
        check_tile(4, 1, 64, 220, 8, 0, 4, type);   /* rows ending before and past q8's first run; 4 heads a kv head */
        check_tile(6, 2, 64, 250, 10, 2, 5, type);  /* rows ending before and past 256 (f32, bf16); 3 a kv head */
        check_tile(6, 2, 64, 62, 5, 2, 5, type);    /* rows ending before, on and past f32's first run */
        check_tile(4, 1, 40, 700, 8, 0, 4, type);   /* a head of 32 + 8 values (q8: its short block value by value) */
        if (type != SAC_KV_Q8) /* (q8 heads are at most SAC_KV_Q8_MAX_HEAD_DIM) */
            check_tile(2, 2, 264, 70, 4, 0, 2, type); /* runs not a multiple of 8 keys */
        check_tile(2, 2, 5, 1817, 6, 0, 2, type);   /* odd head_dim (leftovers in both passes), past every type's run */
        check_tile(3, 3, 13, 700, 5, 0, 3, type);   /* 8 values in lanes and 5 left over, over several runs */
        check_tile(3, 3, 16, 1, 8, 0, 3, type);     /* the first row sees one key */
        check_tile(4, 2, 64, 60, 16, 0, 4, type);   /* sixteen rows, as attention's tiles go */
        check_tile(4, 2, 64, 90, 20, 1, 4, type);   /* more than SAC_KV_HEAD_BLOCK rows: in two pieces */
        check_tile(2, 1, 64, 200, 1, 0, 2, type);   /* a tile of one row */
    }
}

int main(void) {
    RUN(test_blocks_match_head_by_head);
    RUN(test_rounded_caches_against_float64);
    RUN(test_q8_nonfinite_weights);
    RUN(test_tiles_match_row_by_row);
    return check_summary("test_kv_attention");
}
