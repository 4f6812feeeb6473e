/* matmul.h — y = W x for every weight type: the activations are converted to the type's
 * vec_dot_type, then the rows of W are shared out over the pool's threads and computed by
 * the type's kernels (both found in the type table, types.h; the kernels are in kernels.c,
 * in plain C, and in SIMD128's operations wherever simd.h provides them).
 *
 * Quantized weights multiply activations quantized as ggml's vec_dot_type says: per 32-value
 * block to int8 (Q8_0: d = amax/127, q = round(x/d), ties to even; Q8_1 adds the block sums
 * for Q4_1 and Q5_1), or per 256-value block (Q8_K, for the K-quants), with integer dot
 * products per block. F16 weights multiply f32 activations, BF16 weights the activations
 * rounded to bf16; the conversions are vectorized, never a per-element library call in the
 * hot loop. */
#ifndef SAC_MATMUL_H
#define SAC_MATMUL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h" /* also the f32 primitives attention uses: sac_dot_f32, sac_axpy_f32 */
#include "threadpool.h"

/* A weight matrix as GGUF stores it: dims [n_in, n_out] → n_out rows of n_in values.
 * n_in is a multiple of the type's block size (32, or 256 for the K-quants). */
typedef struct sac_matrix {
    uint32_t type;
    int64_t n_in;
    int64_t n_out;
    const void *data;
    /* 1: no value is inf or NaN (a loaded model's weights: its loader refuses any other), so
     * the F16 matvec converts without watching for them; 0: not known, and watched. */
    int finite;
} sac_matrix;

/* Bytes of workspace sac_matmul needs for n_batch activation rows of this matrix (the
 * activations in the vec_dot_type's layout: 0 for float types, whose activations are used as
 * given). SIZE_MAX when the size does not fit a size_t, which no allocation satisfies. */
size_t sac_matmul_work_size(const sac_matrix *w, int64_t n_batch);

/* y[b][o] = sum_i w[o][i] * x[b][i] for b < n_batch, o < n_out. x is n_batch × n_in and y
 * n_batch × n_out, both row-major and contiguous. Rows of w are split over the pool's
 * threads; each output value is computed by exactly one thread in a fixed order, so the
 * result does not depend on the thread count. n_batch == 1 uses the matrix-vector kernel,
 * larger batches the register-tiled matrix-matrix kernel. `work` holds
 * sac_matmul_work_size() bytes. */
void sac_matmul(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch,
                float *y, void *work);

/* What sac_matmul_then does to each output y[b][o] after its product, in the thread that
 * computed it — while the row is in cache, and without a serial pass between two pool runs:
 *   y ← act(y + bias[o]) · mul[b][o], then residual[b][o] ← residual[b][o] + y.
 * Every part is optional (NULL, SAC_ACT_NONE); each is the operation the separate pass would
 * do, so the bits are the same. */
typedef struct sac_epilogue {
    const float *bias;      /* [n_out] */
    int activation;         /* enum sac_activation (activation.h); 0 is SAC_ACT_NONE */
    const float *mul;       /* [n_batch][n_out]: the gated forms' other half */
    float *residual;        /* [n_batch][n_out] */
} sac_epilogue;

/* sac_matmul, then the epilogue (NULL: none). */
void sac_matmul_then(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch, float *y,
                     void *work, const sac_epilogue *epilogue);

#endif
