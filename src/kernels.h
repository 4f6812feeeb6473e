/* kernels.h — the per-type matrix kernels and activation converters, which the type table
 * (types.c) names and sac_matmul (matmul.c) runs, plus the f32 primitives attention uses.
 *
 * A weight type's kernels compute output rows [o0, o1) of y = W x: matvec for one activation
 * row, matmat for several. They read the activations in the layout of the weight type's
 * vec_dot_type: f32 as given (x) for F32 and F16 weights; BF16's rounded values (act) for
 * BF16 weights; for Q8_0, Q4_0 and Q5_0 weights
 * the Q8_0 activation layout (act) that sac_quantize_activations_q8_0 writes; for Q4_1 and
 * Q5_1 Q8_1's; for the K-quants the Q8_K one of sac_quantize_activations_q8_K. */
#ifndef SAC_KERNELS_H
#define SAC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define SAC_ROW_TILE 4   /* weight rows per matvec step: row ranges should be whole tiles */
#define SAC_PANEL_ROWS 8 /* weight rows per matmat panel: its units of rows should be whole panels */

/* The work of one sac_matmul call, shared by all threads. */
typedef struct sac_kernel_task {
    const char *w;    /* n_out weight rows, row_bytes apart */
    size_t row_bytes;
    int64_t n_in, n_out, n_batch;
    const float *x;   /* n_batch × n_in activations, row-major */
    const void *act;  /* the activations converted to the vec_dot_type's layout, or NULL */
    float *y;         /* n_batch × n_out results, row-major */
    int finite;       /* 1: no weight is inf or NaN (sac_matrix.finite) */
    int read_ahead;   /* 1: the 2-byte float matvecs also read rows further on (float_matvec) */
} sac_kernel_task;

typedef void (*sac_rows_fn)(const sac_kernel_task *t, int64_t o0, int64_t o1);

void sac_matvec_f32(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_f32(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_f16(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_f16(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_bf16(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_bf16(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q8_0(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q8_0(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q4_0(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q4_0(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q5_0(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q5_0(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q4_1(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q4_1(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q5_1(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q5_1(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q2_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q2_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q3_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q3_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q4_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q4_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q5_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q5_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matvec_q6_K(const sac_kernel_task *t, int64_t o0, int64_t o1);
void sac_matmat_q6_K(const sac_kernel_task *t, int64_t o0, int64_t o1);

/* Q8_0 activations (n_in a multiple of 32): each 32-value block as int8 (held as int16) with
 * an f16-rounded scale, by ggml's quantize_row_q8_0 rules. Size: 0 on overflow, else 1 and
 * *bytes. The conversion writes rows [b0, b1) of the n_batch rows of x. */
int sac_activations_size_q8_0(int64_t n_in, int64_t n_batch, size_t *bytes);
void sac_quantize_activations_q8_0(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act);

/* BF16 activations (BF16 weights): x rounded to bfloat16 as ggml rounds it (nearest even,
 * NaN kept quiet), held as f32 values, row-major like x. */
int sac_activations_size_bf16(int64_t n_in, int64_t n_batch, size_t *bytes);
void sac_quantize_activations_bf16(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act);

/* Q8_1 activations (Q4_1 and Q5_1 weights): Q8_0's, plus each block's s = f16(d * sum(q))
 * with the f32 d, as ggml's quantize_row_q8_1 makes it. */
int sac_activations_size_q8_1(int64_t n_in, int64_t n_batch, size_t *bytes);
void sac_quantize_activations_q8_1(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act);

/* Q8_K activations (n_in a multiple of 256), the K-quants' vec_dot_type: each 256-value
 * block as int8 (held as int16) with an f32 scale and the sums of each 16 values, by ggml's
 * quantize_row_q8_K rules (ties to even). Size and rows as for Q8_0. */
int sac_activations_size_q8_K(int64_t n_in, int64_t n_batch, size_t *bytes);
void sac_quantize_activations_q8_K(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act);

/* f32 primitives (SIMD where available): dot product and y += a * x. sac_dot_f32 gives the
 * bits of an F32 matvec of that row. */
float sac_dot_f32(const float *a, const float *b, int64_t n);
void sac_axpy_f32(float *y, float a, const float *x, int64_t n);

#endif
