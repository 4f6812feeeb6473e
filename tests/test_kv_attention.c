/* test_kv_attention — attention's block passes over the KV cache (kv_attention.c) give, for
 * every head, the bits of one head at a time with sac_dot_f32 and sac_axpy_f32 (what attention
 * did before the passes were blocked): whatever the block of heads, the head_dim (leftovers
 * of head_dim % 8 included), the query heads per kv head, and hidden keys. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels.h"
#include "kv_attention.h"

static uint32_t rng = 12345;
static float uniform(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 24) - 0.5f;
}

/* One shape: n_head query heads over n_kv kv heads of head_dim, n_keys keys with some hidden,
 * computed in blocks of `block` heads and head by head; every score and output must match. */
static void check_shape(int32_t n_head, int32_t n_kv, int32_t hd, int32_t n_keys, int32_t block) {
    const int64_t stride = (int64_t)n_kv * hd;
    float *q = malloc(sizeof(float) * (size_t)(n_head * hd));
    float *k = malloc(sizeof(float) * (size_t)(n_keys * stride)), *v = malloc(sizeof(float) * (size_t)(n_keys * stride));
    float *rows = malloc(sizeof(float) * (size_t)(n_head * n_keys)), *want = malloc(sizeof(float) * (size_t)n_keys);
    float *out = malloc(sizeof(float) * (size_t)(n_head * hd)), *want_out = malloc(sizeof(float) * (size_t)hd);
    uint8_t *mask = malloc((size_t)n_keys);
    for (int32_t i = 0; i < n_head * hd; i++) q[i] = uniform();
    for (int64_t i = 0; i < n_keys * stride; i++) k[i] = uniform(), v[i] = uniform();
    for (int32_t j = 0; j < n_keys; j++) mask[j] = j % 5 != 3;
    const int32_t own = n_keys - 2 >= 0 && n_keys % 5 == 0 ? n_keys - 2 : n_keys - 1; /* often a hidden one */
    const float scale = 1.0f / sqrtf((float)hd);
    int mismatches = 0;

    for (int32_t h0 = 0; h0 < n_head; h0 += block) {
        const int32_t h1 = h0 + block < n_head ? h0 + block : n_head;
        float *row_ptrs[SAC_KV_HEAD_BLOCK], max[SAC_KV_HEAD_BLOCK];
        for (int32_t h = h0; h < h1; h++) row_ptrs[h - h0] = rows + (int64_t)h * n_keys;
        const sac_kv_heads heads = {.q = q, .k = k, .v = v, .kv_stride = stride, .head_dim = hd,
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
    CHECK_MSG(mismatches == 0, "%d rows differ (heads %d/%d, head_dim %d, keys %d, block %d)", mismatches, n_head,
              n_kv, hd, n_keys, block);
    free(q), free(k), free(v), free(rows), free(want), free(out), free(want_out), free(mask);
}

static void test_blocks_match_head_by_head(void) {
    const int32_t dims[] = {64, 16, 5, 12, 20, 3};
    for (size_t d = 0; d < sizeof dims / sizeof *dims; d++)
        for (int32_t block = 1; block <= 12; block += 5) {
            check_shape(12, 12, dims[d], 37, block);
            check_shape(12, 4, dims[d], 20, block); /* 3 query heads per kv head */
            check_shape(8, 1, dims[d], 1, block);   /* one key, one kv head */
        }
    check_shape(20, 10, 64, 300, SAC_KV_HEAD_BLOCK);
}

int main(void) {
    RUN(test_blocks_match_head_by_head);
    return check_summary("test_kv_attention");
}
