/* kv_cache.c — rounding into a KV cache's element type (see the header). Plain C, the same in
 * every build, so a bf16 or q8 cache holds the same bits natively and in wasm. */
#include "kv_cache.h"

#include <math.h>

const char *sac_kv_type_name(int32_t type) {
    return type == SAC_KV_F32 ? "f32" : type == SAC_KV_BF16 ? "bf16" : type == SAC_KV_Q8 ? "q8" : NULL;
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

float sac_kv_q8_round(const float *x, int32_t n, int8_t *q) {
    float amax = 0.0f;
    int finite = 1;
    for (int32_t i = 0; i < n; i++) {
        finite &= isfinite(x[i]) != 0;
        if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
    }
    const float scale = amax / 127.0f; /* 0 for a block of zeros, or one so small it underflows */
    if (!finite || scale == 0.0f) {
        for (int32_t i = 0; i < n; i++) q[i] = 0;
        return finite ? 0.0f : NAN;
    }
    for (int32_t i = 0; i < n; i++) {
        /* |x / scale| <= 127 up to rounding; the clamp keeps the conversion defined */
        const float r = nearbyintf(x[i] / scale);
        q[i] = (int8_t)(r > 127.0f ? 127 : r < -127.0f ? -127 : (int)r);
    }
    return scale;
}

void sac_kv_store(void *cache, int32_t type, int64_t row, float *src, int32_t head_dim) {
    unsigned char *at = (unsigned char *)cache + row * (int64_t)sac_kv_row_bytes(type, head_dim);
    if (type == SAC_KV_F32) {
        memcpy(at, src, (size_t)head_dim * sizeof(float));
    } else if (type == SAC_KV_BF16) {
        for (int32_t i = 0; i < head_dim; i++) {
            const uint16_t h = sac_kv_bf16_round(src[i]);
            memcpy(at + 2 * i, &h, sizeof h);
            src[i] = sac_kv_bf16_to_f32(h);
        }
    } else {
        const int32_t nb = sac_kv_q8_blocks(head_dim);
        int8_t *q = (int8_t *)(at + 4 * nb);
        for (int32_t b = 0; b < nb; b++) {
            const int32_t i0 = b * SAC_KV_Q8_BLOCK, n = sac_kv_q8_block_len(head_dim, b);
            const float scale = sac_kv_q8_round(src + i0, n, q + i0);
            memcpy(at + 4 * b, &scale, sizeof scale);
            for (int32_t i = i0; i < i0 + n; i++) src[i] = scale * (float)q[i];
        }
    }
}
