/* kv_cache.c — rounding into a KV cache's element type (see the header). Plain integer C, the
 * same in every build, so a bf16 cache holds the same bits natively and in wasm. */
#include "kv_cache.h"

const char *sac_kv_type_name(int32_t type) {
    return type == SAC_KV_F32 ? "f32" : type == SAC_KV_BF16 ? "bf16" : NULL;
}

uint16_t sac_kv_bf16_round(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    /* NaN: truncating could clear every mantissa bit left and make an infinity */
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u);
    /* round to nearest, ties to even: add just under half an ulp, plus one when the kept
     * part is odd; a carry into the exponent is the correctly rounded result (up to inf) */
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

void sac_kv_store(void *cache, int32_t type, int64_t at, float *src, int64_t n) {
    if (type == SAC_KV_F32) {
        memcpy((float *)cache + at, src, (size_t)n * sizeof(float));
        return;
    }
    uint16_t *dst = (uint16_t *)cache + at;
    for (int64_t i = 0; i < n; i++) {
        dst[i] = sac_kv_bf16_round(src[i]);
        src[i] = sac_kv_bf16_to_f32(dst[i]);
    }
}
