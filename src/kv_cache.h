/* kv_cache.h — the element types a KV cache can hold (sac_context_params.kv_type) and the one
 * place values enter it: f32 as computed; bf16 (the top 16 bits of an f32), which halves the
 * bytes attention streams per token at long contexts; or q8, 8-bit integers with a scale per
 * block of 32 values, which takes a bit more than a quarter.
 *
 * The cache holds rows of head_dim values (one kv head at one position). An f32 or bf16 row is
 * head_dim values; a q8 row is its blocks' f32 scales, then its head_dim int8 values (block b
 * covers values [32b, 32b + 32), the last block what is left). bf16 → f32 is exact (a 16-bit
 * shift), so attention over a bf16 cache does f32's arithmetic on the values the cache stands
 * for; a q8 cache's values are scale × int8, and attention scores its keys with integer dots
 * against the query rounded to q8 the same way, and sums its values with integer dots against
 * the weights rounded to int16 (kv_attention.c). The rounding on the way in is
 * done here, the same in every build. */
#ifndef SAC_KV_CACHE_H
#define SAC_KV_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "saccade.h"

#define SAC_KV_Q8_BLOCK 32

static inline int32_t sac_kv_q8_blocks(int32_t head_dim) { return (head_dim + SAC_KV_Q8_BLOCK - 1) / SAC_KV_Q8_BLOCK; }

/* Values in block b of a q8 row: 32, or what is left in the last. */
static inline int32_t sac_kv_q8_block_len(int32_t head_dim, int32_t b) {
    const int32_t left = head_dim - b * SAC_KV_Q8_BLOCK;
    return left < SAC_KV_Q8_BLOCK ? left : SAC_KV_Q8_BLOCK;
}

/* Bytes of one cached row of head_dim values; 0 for a type that is not a KV cache type. */
static inline size_t sac_kv_row_bytes(int32_t type, int32_t head_dim) {
    const size_t n = (size_t)head_dim;
    return type == SAC_KV_F32 ? 4 * n : type == SAC_KV_BF16 ? 2 * n
         : type == SAC_KV_Q8 ? 4 * (size_t)sac_kv_q8_blocks(head_dim) + n : 0;
}

static inline float sac_kv_bf16_to_f32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* x rounded to the nearest bf16, ties to even; a NaN stays a NaN (quieted, sign kept) and
 * values beyond the largest bf16 become ±inf, as IEEE rounding gives. */
uint16_t sac_kv_bf16_round(float x);

/* n values (n <= SAC_KV_Q8_BLOCK) as int8 q[i] with x[i] ≈ scale × q[i]: scale = max|x| / 127,
 * q[i] = x[i] / scale rounded to the nearest (ties to even). A block holding an infinity or a
 * NaN gets a NaN scale (every value it stands for is NaN) and zeros; an all-zero block (or one
 * whose largest |value| / 127 underflows to 0), scale 0. */
float sac_kv_q8_round(const float *x, int32_t n, int8_t *q);

/* Writes src's head_dim values as row `row` of a cache of `type`, and replaces each src value
 * by what the cache now holds (the rounded value, for bf16 and q8): the caller's copy then
 * matches the cache exactly (the probe's key capture reads it). */
void sac_kv_store(void *cache, int32_t type, int64_t row, float *src, int32_t head_dim);

#endif
