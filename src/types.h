/* types.h — tensor element types, with ggml's numbering, and the one table of what each type
 * needs: its name, block size, bytes and alignment, its codecs to and from f32 and its finite
 * check, the type its activations are converted to before the products (vec_dot_type, as in
 * ggml), and its kernels.
 *
 * Adding a type is one entry in the table (types.c) plus what the entry names: the block
 * layout and codecs (quants.h) and the kernels (kernels.h). No other code in src/ chooses
 * by type. */
#ifndef SAC_TYPES_H
#define SAC_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"
#include "quants.h"

/* ggml's enum ggml_type (4 and 5, the removed Q4_2/Q4_3, have no name). */
enum sac_type {
    SAC_TYPE_F32 = 0,
    SAC_TYPE_F16 = 1,
    SAC_TYPE_Q4_0 = 2,
    SAC_TYPE_Q4_1 = 3,
    SAC_TYPE_Q5_0 = 6,
    SAC_TYPE_Q5_1 = 7,
    SAC_TYPE_Q8_0 = 8,
    SAC_TYPE_Q8_1 = 9,
    SAC_TYPE_Q2_K = 10,
    SAC_TYPE_Q3_K = 11,
    SAC_TYPE_Q4_K = 12,
    SAC_TYPE_Q5_K = 13,
    SAC_TYPE_Q6_K = 14,
    SAC_TYPE_Q8_K = 15,
    SAC_TYPE_BF16 = 30,
    SAC_TYPE_COUNT = 31 /* ggml's numbers 0..30 have table entries (most name-only) */
};

typedef struct sac_type_traits {
    const char *name;   /* "F32", "Q8_0", ... */
    int64_t block_size; /* values per block (1 for float types) */
    size_t type_size;   /* bytes per block */
    size_t align;       /* the alignment its values or blocks are read at (a tensor must start at one) */
    /* row codecs; n must be a multiple of block_size */
    void (*to_float)(const void *src, float *dst, int64_t n);
    void (*from_float)(const float *src, void *dst, int64_t n);
    int (*finite)(const void *src, int64_t n); /* 1 when to_float would give only finite values */
    /* As a weight type: activations are converted to this type's layout first, and the
     * kernels compute output rows [o0, o1) for one activation row (matvec) or several. */
    uint32_t vec_dot_type;
    sac_rows_fn matvec, matmat;
    int matvec_reads_ahead; /* 1: the matvec may read rows further on (sac_kernel_task.read_ahead) */
    /* As a vec_dot_type: the conversion into the kernels' layout and the bytes it takes for
     * n_batch rows of n_in (0 on overflow). Both NULL for F32: activations are used as given. */
    int (*activations_size)(int64_t n_in, int64_t n_batch, size_t *bytes);
    void (*quantize_activations)(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                 void *act);
} sac_type_traits;

/* The entry of a weight type saccade implements (every field above set but the two activation
 * ones), or NULL. */
const sac_type_traits *sac_type_traits_get(uint32_t type);
/* The entry of a weight type's vec_dot_type: F32 (activations used as given) or a type with
 * the activation conversion. Q8_K is only that: it has no kernels, so sac_type_traits_get
 * does not return it. */
const sac_type_traits *sac_type_vec_dot_traits(const sac_type_traits *weight);
/* A name for any ggml type number, supported or not ("Q4_1", "BF16", ...; "type 99" when unknown). */
const char *sac_type_name(uint32_t type);
/* The weight type saccade implements with this name, any case ("q4_k", "Q8_0"), or
 * SAC_TYPE_COUNT. */
uint32_t sac_type_by_name(const char *name);
/* Bytes of a row of n values: 1 and *bytes, or 0 if the type is not implemented, n is
 * negative or not a multiple of the block size, or the size does not fit a size_t. */
int sac_type_row_bytes(uint32_t type, int64_t n, size_t *bytes);

#endif
