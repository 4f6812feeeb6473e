/* quants.h — the number formats of tensor data, as ggml stores them: IEEE binary16, and the
 * quantized blocks as named structs that are the bytes on disk, each with a compile-time
 * check of its size. Row codecs convert whole rows to and from f32. */
#ifndef SAC_QUANTS_H
#define SAC_QUANTS_H

#include <stdint.h>

#define SAC_QK 32    /* values per block of the 32-value formats (Q8_0, Q4_0, Q5_0) */
#define SAC_QK_K 256 /* values per super-block of the K-quants (Q4_K, Q5_K, Q6_K, Q8_K) */

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

/* Q5_0: q = low nibble from qs (as Q4_0) | bit j of qh as bit 4; value j = (q - 16) * d.
 * 22 bytes. */
typedef struct block_q5_0 {
    sac_f16 d;
    uint8_t qh[4];
    uint8_t qs[SAC_QK / 2];
} block_q5_0;
_Static_assert(sizeof(block_q5_0) == 22 && sizeof(block_q5_0) == sizeof(sac_f16) + 4 + SAC_QK / 2,
               "block_q5_0 must be ggml's 22 bytes, without padding");

/* Q4_1: value j = q * d + m, q the 4-bit level (nibbles as Q4_0), m the block's minimum.
 * 20 bytes. */
typedef struct block_q4_1 {
    sac_f16 d;
    sac_f16 m;
    uint8_t qs[SAC_QK / 2];
} block_q4_1;
_Static_assert(sizeof(block_q4_1) == 20 && sizeof(block_q4_1) == 2 * sizeof(sac_f16) + SAC_QK / 2,
               "block_q4_1 must be ggml's 20 bytes, without padding");

/* Q5_1: as Q4_1 with a fifth bit per value in qh (as Q5_0). 24 bytes. */
typedef struct block_q5_1 {
    sac_f16 d;
    sac_f16 m;
    uint8_t qh[4];
    uint8_t qs[SAC_QK / 2];
} block_q5_1;
_Static_assert(sizeof(block_q5_1) == 24 && sizeof(block_q5_1) == 2 * sizeof(sac_f16) + 4 + SAC_QK / 2,
               "block_q5_1 must be ggml's 24 bytes, without padding");

/* Q8_1 (the activation format of Q4_1 and Q5_1): as Q8_0, plus s = d * sum(qs) as f16.
 * 36 bytes. */
typedef struct block_q8_1 {
    sac_f16 d;
    sac_f16 s;
    int8_t qs[SAC_QK];
} block_q8_1;
_Static_assert(sizeof(block_q8_1) == 36 && sizeof(block_q8_1) == 2 * sizeof(sac_f16) + SAC_QK,
               "block_q8_1 must be ggml's 36 bytes, without padding");

/* Q2_K: 16 groups of 16 values, each with a 4-bit scale (low nibble of scales[g]) and min
 * (high nibble); value = d * sc * q - dmin * m, q a 2-bit level (value 128 h + 32 k + l in
 * bits 2k of qs[32 h + l]). 84 bytes. */
typedef struct block_q2_K {
    uint8_t scales[SAC_QK_K / 16];
    uint8_t qs[SAC_QK_K / 4];
    sac_f16 d;
    sac_f16 dmin;
} block_q2_K;
_Static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q2_K) == SAC_QK_K / 16 + SAC_QK_K / 4 + 2 * sizeof(sac_f16),
               "block_q2_K must be ggml's 84 bytes, without padding");

/* Q3_K: 16 groups of 16 values with 6-bit signed scales (sac_q3_K_scale); value = d * sc *
 * q, q = the 2-bit level (as Q2_K) - 4 unless the value's bit in hmask is set (bit j/32 of
 * hmask[j % 32]). 110 bytes. */
typedef struct block_q3_K {
    uint8_t hmask[SAC_QK_K / 8];
    uint8_t qs[SAC_QK_K / 4];
    uint8_t scales[12];
    sac_f16 d;
} block_q3_K;
_Static_assert(sizeof(block_q3_K) == 110 && sizeof(block_q3_K) == SAC_QK_K / 8 + SAC_QK_K / 4 + 12 + sizeof(sac_f16),
               "block_q3_K must be ggml's 110 bytes, without padding");

/* Q4_K: 8 sub-blocks of 32 values, each with a 6-bit scale sc and a 6-bit min m packed in
 * `scales` (sub-blocks 0-3: low 6 bits of bytes 0-3 and 4-7; 4-7: the nibbles of bytes 8-11
 * and the top 2 bits of bytes 0-7); value = d * sc * q - dmin * m, q a 4-bit level (each
 * 64 values: 32 low nibbles, then the 32 high nibbles of the same bytes). 144 bytes. */
typedef struct block_q4_K {
    sac_f16 d;
    sac_f16 dmin;
    uint8_t scales[12];
    uint8_t qs[SAC_QK_K / 2];
} block_q4_K;
_Static_assert(sizeof(block_q4_K) == 144 && sizeof(block_q4_K) == 2 * sizeof(sac_f16) + 12 + SAC_QK_K / 2,
               "block_q4_K must be ggml's 144 bytes, without padding");

/* Q5_K: Q4_K with 5-bit levels, the fifth bit of sub-block j's value l in bit j of qh[l].
 * 176 bytes. */
typedef struct block_q5_K {
    sac_f16 d;
    sac_f16 dmin;
    uint8_t scales[12];
    uint8_t qh[SAC_QK_K / 8];
    uint8_t qs[SAC_QK_K / 2];
} block_q5_K;
_Static_assert(sizeof(block_q5_K) == 176 && sizeof(block_q5_K) == 2 * sizeof(sac_f16) + 12 + SAC_QK_K / 8 + SAC_QK_K / 2,
               "block_q5_K must be ggml's 176 bytes, without padding");

/* Q6_K: 16 sub-blocks of 16 values with int8 scales; value = d * sc * (q - 32), q a 6-bit
 * level: its low 4 bits in ql, its high 2 in qh (each 128 values: ql holds 64 bytes of
 * nibbles, qh 32 bytes of four 2-bit fields). 210 bytes. */
typedef struct block_q6_K {
    uint8_t ql[SAC_QK_K / 2];
    uint8_t qh[SAC_QK_K / 4];
    int8_t scales[SAC_QK_K / 16];
    sac_f16 d;
} block_q6_K;
_Static_assert(sizeof(block_q6_K) == 210 && sizeof(block_q6_K) == SAC_QK_K / 2 + SAC_QK_K / 4 + SAC_QK_K / 16 + 2,
               "block_q6_K must be ggml's 210 bytes, without padding");

/* Q8_K (the K-quants' activation format): value j = d * qs[j], d an f32; bsums are the sums of
 * each 16 qs. 292 bytes. */
typedef struct block_q8_K {
    float d;
    int8_t qs[SAC_QK_K];
    int16_t bsums[SAC_QK_K / 16];
} block_q8_K;
_Static_assert(sizeof(block_q8_K) == 292 && sizeof(block_q8_K) == 4 + SAC_QK_K + 2 * (SAC_QK_K / 16),
               "block_q8_K must be ggml's 292 bytes, without padding");

typedef uint16_t sac_bf16; /* bfloat16 bits: the high half of an IEEE binary32 */

float sac_f16_to_f32(sac_f16 h);
float sac_bf16_to_f32(sac_bf16 h);
sac_bf16 sac_f32_to_bf16(float f); /* ggml's rounding: nearest even; a NaN stays a quiet NaN */
sac_f16 sac_f32_to_f16(float f); /* round to nearest even, with subnormals, inf and NaN */

/* Row codecs: n values (a multiple of the format's block size) from src to dst. The
 * quantizers follow ggml's reference ones, so their bytes are ggml's. */
void sac_to_float_f32(const void *src, float *dst, int64_t n);
void sac_from_float_f32(const float *src, void *dst, int64_t n);
void sac_to_float_f16(const void *src, float *dst, int64_t n);
void sac_from_float_f16(const float *src, void *dst, int64_t n);
void sac_to_float_bf16(const void *src, float *dst, int64_t n);
void sac_from_float_bf16(const float *src, void *dst, int64_t n);
void sac_to_float_q8_0(const void *src, float *dst, int64_t n);
void sac_from_float_q8_0(const float *src, void *dst, int64_t n);
void sac_to_float_q4_0(const void *src, float *dst, int64_t n);
void sac_from_float_q4_0(const float *src, void *dst, int64_t n);
void sac_to_float_q4_1(const void *src, float *dst, int64_t n);
void sac_from_float_q4_1(const float *src, void *dst, int64_t n);
void sac_to_float_q5_1(const void *src, float *dst, int64_t n);
void sac_from_float_q5_1(const float *src, void *dst, int64_t n);
void sac_to_float_q8_1(const void *src, float *dst, int64_t n);
void sac_from_float_q8_1(const float *src, void *dst, int64_t n);
void sac_to_float_q5_0(const void *src, float *dst, int64_t n);
void sac_from_float_q5_0(const float *src, void *dst, int64_t n);
void sac_to_float_q2_K(const void *src, float *dst, int64_t n);
void sac_from_float_q2_K(const float *src, void *dst, int64_t n);
void sac_to_float_q3_K(const void *src, float *dst, int64_t n);
void sac_from_float_q3_K(const float *src, void *dst, int64_t n);
void sac_to_float_q4_K(const void *src, float *dst, int64_t n);
void sac_from_float_q4_K(const float *src, void *dst, int64_t n);
void sac_to_float_q5_K(const void *src, float *dst, int64_t n);
void sac_from_float_q5_K(const float *src, void *dst, int64_t n);
void sac_to_float_q6_K(const void *src, float *dst, int64_t n);
void sac_from_float_q6_K(const float *src, void *dst, int64_t n);
void sac_to_float_q8_K(const void *src, float *dst, int64_t n);
void sac_from_float_q8_K(const float *src, void *dst, int64_t n);

/* Finite checks: 1 when every value to_float would give for these n is finite (read from a
 * float's exponent or a block's scales; quants.c says why that is exact). */
int sac_finite_f32(const void *src, int64_t n);
int sac_finite_f16(const void *src, int64_t n);
int sac_finite_bf16(const void *src, int64_t n);
int sac_finite_q4_0(const void *src, int64_t n);
int sac_finite_q5_0(const void *src, int64_t n);
int sac_finite_q8_0(const void *src, int64_t n);
int sac_finite_q4_1(const void *src, int64_t n);
int sac_finite_q5_1(const void *src, int64_t n);
int sac_finite_q2_K(const void *src, int64_t n);
int sac_finite_q3_K(const void *src, int64_t n);
int sac_finite_q4_K(const void *src, int64_t n);
int sac_finite_q5_K(const void *src, int64_t n);
int sac_finite_q6_K(const void *src, int64_t n);

/* ggml's nearest_int: round to nearest, ties to even, by adding 1.5 * 2^23 (exact for
 * |x| < 2^22, which the callers ensure; NaN gives 0). */
int sac_nearest_int(float x);
/* Q3_K's scale of group j (0-15): 4 low bits from scales[0-7], 2 high bits from scales[8-11],
 * minus 32. */
static inline int sac_q3_K_scale(const uint8_t scales[12], int j) {
    int low = j < 8 ? scales[j] & 0x0F : scales[j - 8] >> 4;
    return (low | ((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32;
}
/* Q4_K's packed 6-bit scale and min of sub-block j (0-7) (inline: the kernels use it per block). */
static inline void sac_q4_K_scale_min(const uint8_t scales[12], int j, int *sc, int *m) {
    if (j < 4) {
        *sc = scales[j] & 63;
        *m = scales[j + 4] & 63;
    } else {
        *sc = (scales[j + 4] & 0x0F) | (scales[j - 4] >> 6) << 4;
        *m = (scales[j + 4] >> 4) | (scales[j] >> 6) << 4;
    }
}

#endif
