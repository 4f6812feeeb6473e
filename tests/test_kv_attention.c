/* test_kv_attention — attention's block passes over the KV cache (kv_attention.c) give, for
 * every head, the bits of one head at a time with sac_dot_f32 and sac_axpy_f32 (what attention
 * did before the passes were blocked): whatever the block of heads, the head_dim (leftovers
 * of head_dim % 8 included), the query heads per kv head, hidden keys, and the layout (rows of
 * every head interleaved, or each head's rows together with room to spare). Over a bf16 cache,
 * the bits of the same head-by-head computation on the bf16-rounded keys and values. */
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

/* One shape: n_head query heads over n_kv kv heads of head_dim, n_keys keys with some hidden,
 * computed in blocks of `block` heads and head by head; every score and output must match.
 * kv_type: the cache the block passes read (bf16: the head-by-head pass gets the rounded
 * values as f32). by_head: the cache keeps each kv head's rows together, with room for 3 more
 * (as the model's cache has room for n_ctx); else a row holds every head. */
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
    void *k_cache = malloc(sac_kv_type_size(kv_type) * (size_t)(room * stride));
    void *v_cache = malloc(sac_kv_type_size(kv_type) * (size_t)(room * stride));
    for (int32_t j = 0; j < n_keys; j++)
        for (int32_t g = 0; g < n_kv; g++) {
            const int64_t at = g * head_stride + j * kv_stride, from = j * stride + (int64_t)g * hd;
            sac_kv_store(k_cache, kv_type, at, k + from, hd);
            sac_kv_store(v_cache, kv_type, at, v + from, hd);
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
            for (int32_t j = 0; j < n_keys; j++) {
                want[j] = !mask[j] && j != own ? -INFINITY : sac_dot_f32(q + (int64_t)h * hd, kh + j * stride, hd) * scale;
                if (want[j] > m) m = want[j];
            }
            mismatches += memcmp(want, row_ptrs[h - h0], sizeof(float) * (size_t)n_keys) != 0;
            mismatches += memcmp(&m, &max[h - h0], sizeof m) != 0;
            /* weights: some exact zeros, which the value pass skips */
            for (int32_t j = 0; j < n_keys; j++) row_ptrs[h - h0][j] = j % 7 == 2 ? 0.0f : uniform() + 0.5f;
        }
        memset(out, 0xff, sizeof(float) * (size_t)(n_head * hd)); /* NaNs: the pass must clear its heads */
        sac_kv_mix(&heads, out);
        for (int32_t h = h0; h < h1; h++) {
            const float *vh = v + (int64_t)(h / (n_head / n_kv)) * hd;
            memset(want_out, 0, sizeof(float) * (size_t)hd);
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
    const int32_t dims[] = {64, 16, 5, 12, 20, 3, 40};
    for (int32_t type = SAC_KV_F32; type <= SAC_KV_BF16; type++)
        for (int by_head = 0; by_head <= 1; by_head++) {
            for (size_t d = 0; d < sizeof dims / sizeof *dims; d++)
                for (int32_t block = 1; block <= 12; block += 5) {
                    check_shape(12, 12, dims[d], 37, block, type, by_head);
                    check_shape(12, 4, dims[d], 20, block, type, by_head); /* 3 query heads per kv head */
                    check_shape(8, 1, dims[d], 1, block, type, by_head);   /* one key, one kv head */
                }
            check_shape(20, 10, 64, 300, SAC_KV_HEAD_BLOCK, type, by_head);
            check_shape(6, 3, 20, 131, 4, type, by_head); /* interleaved: several runs, the last not a multiple of 4 */
        }
}

/* The block passes over a bf16 cache differ from those over the f32 cache they were rounded
 * from (so the bf16 path really reads 16-bit values), by about bf16's precision. */
static void test_bf16_cache_is_rounded(void) {
    enum { HD = 64, KEYS = 40 };
    float q[HD], k[KEYS * HD], v[KEYS * HD], kr[KEYS * HD], vr[KEYS * HD], row32[KEYS], row16[KEYS];
    uint16_t k16[KEYS * HD], v16[KEYS * HD];
    uint8_t mask[KEYS];
    for (int i = 0; i < HD; i++) q[i] = uniform();
    for (int i = 0; i < KEYS * HD; i++) k[i] = kr[i] = uniform(), v[i] = vr[i] = uniform();
    memset(mask, 1, sizeof mask);
    sac_kv_store(k16, SAC_KV_BF16, 0, kr, KEYS * HD);
    sac_kv_store(v16, SAC_KV_BF16, 0, vr, KEYS * HD);
    float *r32[1] = {row32}, *r16[1] = {row16}, m32, m16, o32[HD], o16[HD];
    sac_kv_heads a = {.q = q, .k = k, .v = v, .kv_stride = HD, .head_stride = HD, .head_dim = HD, .group = 1, .h0 = 0, .h1 = 1,
                      .n_keys = KEYS, .own = -1, .key_mask = mask, .scale = 0.125f, .rows = r32};
    sac_kv_heads b = a;
    b.k = k16, b.v = v16, b.kv_type = SAC_KV_BF16, b.rows = r16;
    sac_kv_scores(&a, &m32);
    sac_kv_scores(&b, &m16);
    double worst = 0;
    int same = 1;
    for (int j = 0; j < KEYS; j++) worst = fmax(worst, fabs(row32[j] - row16[j])), same &= row32[j] == row16[j];
    CHECK_MSG(!same && worst < 2e-2, "bf16 scores vs f32: largest difference %g", worst);
    for (int j = 0; j < KEYS; j++) row32[j] = row16[j] = 1.0f / KEYS;
    sac_kv_mix(&a, o32);
    sac_kv_mix(&b, o16);
    worst = 0, same = 1;
    for (int i = 0; i < HD; i++) worst = fmax(worst, fabs(o32[i] - o16[i])), same &= o32[i] == o16[i];
    CHECK_MSG(!same && worst < 4e-3, "bf16 values vs f32: largest difference %g", worst);
}

int main(void) {
    RUN(test_blocks_match_head_by_head);
    RUN(test_bf16_cache_is_rounded);
    return check_summary("test_kv_attention");
}
