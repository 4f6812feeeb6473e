/* types.h — tensor element types, with ggml's numbering and exact block layouts.
 *
 * Per-type behaviour is found through one table of traits, so adding a type touches one
 * place (after ggml's type_traits). */
#ifndef SAC_TYPES_H
#define SAC_TYPES_H

#include <stddef.h>
#include <stdint.h>

enum sac_type {
    SAC_TYPE_F32 = 0,
    SAC_TYPE_F16 = 1,
    SAC_TYPE_Q4_0 = 2,
    SAC_TYPE_Q8_0 = 8,
};

#define SAC_QK 32 /* values per quantized block */

typedef uint16_t sac_f16; /* IEEE 754 binary16 bits */

/* Q8_0: value = d * qs[i]. 34 bytes. */
typedef struct block_q8_0 {
    sac_f16 d;
    int8_t qs[SAC_QK];
} block_q8_0;

/* Q4_0: element j = ((qs[j] & 0xF) - 8) * d, element j + 16 = ((qs[j] >> 4) - 8) * d. 18 bytes. */
typedef struct block_q4_0 {
    sac_f16 d;
    uint8_t qs[SAC_QK / 2];
} block_q4_0;

typedef struct sac_type_traits {
    const char *name;     /* "F32", "F16", "Q4_0", "Q8_0" */
    int64_t block_size;   /* values per block (1 for float types) */
    size_t type_size;     /* bytes per block */
    /* n must be a multiple of block_size */
    void (*to_float)(const void *src, float *dst, int64_t n);
    void (*from_float)(const float *src, void *dst, int64_t n);
} sac_type_traits;

/* NULL for a type saccade does not implement. */
const sac_type_traits *sac_type_traits_get(uint32_t type);
/* A name for any ggml type number, supported or not ("Q4_1", "BF16", ...; "type 99" when unknown). */
const char *sac_type_name(uint32_t type);

float sac_f16_to_f32(sac_f16 h);
sac_f16 sac_f32_to_f16(float f); /* round to nearest even, with subnormals, inf and NaN */

#endif
