/* kv_cache.h — the element types a KV cache can hold (sac_context_params.kv_type) and the one
 * place values enter it: f32 as computed, or bf16 (the top 16 bits of an f32), which halves the
 * bytes attention streams per token at long contexts.
 *
 * bf16 → f32 is exact (a 16-bit shift), so attention over a bf16 cache does the float
 * arithmetic of the f32 cache on the rounded values; only the rounding on the way in, done
 * here for every build, differs from f32. */
#ifndef SAC_KV_CACHE_H
#define SAC_KV_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "saccade.h"

/* Bytes of one cached value: 4 or 2; 0 for a type that is not a KV cache type. */
static inline size_t sac_kv_type_size(int32_t type) {
    return type == SAC_KV_F32 ? 4 : type == SAC_KV_BF16 ? 2 : 0;
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

/* Writes n values into a cache of `type` at element `at`, and replaces each src value by
 * what the cache now holds (the rounded value, for bf16): the caller's copy then matches
 * the cache exactly (the probe's key capture reads it). */
void sac_kv_store(void *cache, int32_t type, int64_t at, float *src, int64_t n);

#endif
