/* quantize.h — converts the weights of a GGUF file to another tensor type.
 *
 * Every tensor of two or more dimensions (the weight matrices and embeddings) is converted to
 * `type` (F32, F16, Q8_0 or Q4_0) through the core's type traits (to_float, then from_float);
 * 1-D tensors (biases, norm weights) stay as they are. A matrix whose rows are not a whole
 * number of 32-value blocks cannot be Q8_0/Q4_0: it is stored as F16 instead (and counted in
 * n_fallback). Metadata is copied unchanged, except general.file_type, which is set to
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

/* `type` is a ggml type number (SAC_TYPE_F32, _F16, _Q8_0, _Q4_0). The caller frees *out.
 * stats may be NULL. */
sac_status quantize_gguf(const void *in, size_t in_size, uint32_t type, uint8_t **out, size_t *out_size,
                         quantize_stats *stats, sac_error *err);

#endif
