/* product_acc.h — y += A·B with one summation order on every build: the backward products.
 *
 * Every value y[r][i] is updated as y = y + A(r,k)·B[k][i] for k = k0, k0+1, …, k1−1, one
 * rounded product and one rounded sum per k: the order of a plain scalar loop. Blocking over
 * rows and columns (so that the inner step is an element-wise multiply-add of whole vectors,
 * with AVX2 natively and SIMD128 in wasm) changes which values are computed together, never
 * the order of any one sum, so native and wasm agree bit for bit, and so do any split of the
 * rows over threads and any chunking of k done in ascending order. */
#ifndef TRAIN_PRODUCT_ACC_H
#define TRAIN_PRODUCT_ACC_H

#include <stdint.h>

/* The operands: y has rows ldy apart and n_cols values per row; A(r,k) = a[r·a_row + k·a_k]
 * (so A may be a matrix or its transpose); row k of B starts at b + k·ldb. */
typedef struct product_acc {
    float *y;
    int64_t ldy;
    const float *a;
    int64_t a_row, a_k;
    const float *b;
    int64_t ldb;
    int64_t n_cols;
} product_acc;

/* Rows r0..r1−1 of y += Σ_{k0 ≤ k < k1} A(r,k)·B[k], in ascending k. */
void product_acc_rows(const product_acc *p, int64_t r0, int64_t r1, int64_t k0, int64_t k1);

#endif
