/* matmul.h — the only matrix kernels: one matrix-vector and one matrix-matrix kernel per
 * weight type (scalar path everywhere, wasm SIMD128 path under __wasm_simd128__), plus the
 * f32 vector primitives attention uses.
 *
 * Quantized weights (Q8_0, Q4_0) multiply activations quantized per 32-value block to
 * int8 (d = amax/127, q = round(x/d)), with integer dot products per block, as ggml does.
 * F16 weights multiply f32 activations; the f16 → f32 conversion is vectorized, never a
 * per-element library call in the hot loop. */
#ifndef SAC_MATMUL_H
#define SAC_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "threadpool.h"

/* A weight matrix as GGUF stores it: dims [n_in, n_out] → n_out rows of n_in values.
 * n_in is a multiple of 32 for quantized types. */
typedef struct sac_matrix {
    uint32_t type;
    int64_t n_in;
    int64_t n_out;
    const void *data;
} sac_matrix;

/* Bytes of workspace sac_matmul needs for n_batch activation rows of this matrix
 * (the int8-quantized copy of x for quantized types; 0 for float types). */
size_t sac_matmul_work_size(const sac_matrix *w, int64_t n_batch);

/* y[b][o] = sum_i w[o][i] * x[b][i] for b < n_batch, o < n_out. x is n_batch × n_in and y
 * n_batch × n_out, both row-major and contiguous. Rows of w are split over the pool's
 * threads; each output value is computed by exactly one thread in a fixed order, so the
 * result does not depend on the thread count. n_batch == 1 uses the matrix-vector kernel,
 * larger batches the register-tiled matrix-matrix kernel. `work` holds
 * sac_matmul_work_size() bytes. */
void sac_matmul(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch,
                float *y, void *work);

/* f32 primitives (SIMD where available): dot product and y += a * x. */
float sac_dot_f32(const float *a, const float *b, int64_t n);
void sac_axpy_f32(float *y, float a, const float *x, int64_t n);

#endif
