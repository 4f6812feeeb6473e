/* quants.h — the number formats of tensor data, as ggml stores them: IEEE binary16, and the
 * quantized blocks as named structs that are the bytes on disk, each with a compile-time
 * check of its size. Row codecs convert whole rows to and from f32. */
#ifndef SAC_QUANTS_H
#define SAC_QUANTS_H

#include <stdint.h>

#define SAC_QK 32 /* values per block of the 32-value formats (Q8_0, Q4_0) */

typedef uint16_t sac_f16; /* IEEE 754 binary16 bits */

/* Q8_0: value j = d * qs[j]. 34 bytes. */
typedef struct block_q8_0 {
    sac_f16 d;
    int8_t qs[SAC_QK];
} block_q8_0;
_Static_assert(sizeof(block_q8_0) == 34 && sizeof(block_q8_0) == sizeof(sac_f16) + SAC_QK,
               "block_q8_0 must be ggml's 34 bytes, without padding");

/* Q4_0: value j = ((qs[j] & 0xF) - 8) * d, value j + 16 = ((qs[j] >> 4) - 8) * d. 18 bytes. */
typedef struct block_q4_0 {
    sac_f16 d;
    uint8_t qs[SAC_QK / 2];
} block_q4_0;
_Static_assert(sizeof(block_q4_0) == 18 && sizeof(block_q4_0) == sizeof(sac_f16) + SAC_QK / 2,
               "block_q4_0 must be ggml's 18 bytes, without padding");

float sac_f16_to_f32(sac_f16 h);
sac_f16 sac_f32_to_f16(float f); /* round to nearest even, with subnormals, inf and NaN */

/* Row codecs: n values (a multiple of the format's block size) from src to dst. The
 * quantizers follow ggml's reference ones, so their bytes are ggml's. */
void sac_to_float_f32(const void *src, float *dst, int64_t n);
void sac_from_float_f32(const float *src, void *dst, int64_t n);
void sac_to_float_f16(const void *src, float *dst, int64_t n);
void sac_from_float_f16(const float *src, void *dst, int64_t n);
void sac_to_float_q8_0(const void *src, float *dst, int64_t n);
void sac_from_float_q8_0(const float *src, void *dst, int64_t n);
void sac_to_float_q4_0(const void *src, float *dst, int64_t n);
void sac_from_float_q4_0(const float *src, void *dst, int64_t n);

#endif
