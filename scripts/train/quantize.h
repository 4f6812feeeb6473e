/* quantize.h — converts the weights of a GGUF file to another tensor type.
 *
 * Every tensor of two or more dimensions (the weight matrices and embeddings) is converted to
 * `type` (any weight type of the core's table) through its type traits (to_float, then
 * from_float, which follow ggml's reference quantizers); 1-D tensors (biases, norm weights)
 * stay as they are. A matrix whose rows are not a whole number of the type's blocks is
 * stored as llama.cpp stores it then: Q4_K as Q5_0, Q5_K as Q5_1, Q6_K as Q8_0 (Q2_K and
 * Q3_K as Q4_0, where llama.cpp takes IQ4_NL), others (or when 32 does not divide the row
 * either) as F16; counted in n_fallback. Metadata is copied unchanged, except general.file_type, which is set to
 * llama.cpp's value for the new type. The output is GGUF version 3. */
#ifndef TRAIN_QUANTIZE_H
#define TRAIN_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct quantize_stats {
    int64_t n_converted, n_kept, n_fallback; /* tensors */
    uint64_t bytes_in, bytes_out;            /* of tensor data */
} quantize_stats;

/* `type` is a ggml type number the core implements (sac_type_traits_get). The caller frees *out.
 * stats may be NULL. */
sac_status quantize_gguf(const void *in, size_t in_size, uint32_t type, uint8_t **out, size_t *out_size,
                         quantize_stats *stats, sac_error *err);

#endif
