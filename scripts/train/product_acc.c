/* product_acc.c — the blocked kernel of product_acc.h: tiles of 4 rows of y held in registers
 * over the whole k range, so each loaded vector of B serves four rows and y is read and
 * written once per call. What falls outside whole tiles takes the scalar loop, whose order
 * is the same. */
#include "product_acc.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define TILE_ROWS 4

/* y[r][i] for one value, the reference order. */
static void product_acc_one(const product_acc *p, int64_t r, int64_t i, int64_t k0, int64_t k1) {
    float *y = p->y + r * p->ldy + i;
    float acc = *y;
    for (int64_t k = k0; k < k1; k++) acc = acc + p->a[r * p->a_row + k * p->a_k] * p->b[k * p->ldb + i];
    *y = acc;
}

#ifdef __wasm_simd128__
/* Eight columns (two vectors) by four rows: eight accumulators, two loads of B and four
 * broadcasts of A per k, within the sixteen registers V8 has on x86-64. */
#define TILE_COLS 8

static void product_acc_tile(const product_acc *p, int64_t r, int64_t i, int64_t k0, int64_t k1) {
    float *y0 = p->y + r * p->ldy + i, *y1 = y0 + p->ldy, *y2 = y1 + p->ldy, *y3 = y2 + p->ldy;
    v128_t a00 = wasm_v128_load(y0), a01 = wasm_v128_load(y0 + 4);
    v128_t a10 = wasm_v128_load(y1), a11 = wasm_v128_load(y1 + 4);
    v128_t a20 = wasm_v128_load(y2), a21 = wasm_v128_load(y2 + 4);
    v128_t a30 = wasm_v128_load(y3), a31 = wasm_v128_load(y3 + 4);
    const float *a = p->a + r * p->a_row, *b = p->b + i;
    const int64_t a_row = p->a_row;
    for (int64_t k = k0; k < k1; k++) {
        const float *ak = a + k * p->a_k, *bk = b + k * p->ldb;
        const v128_t b0 = wasm_v128_load(bk), b1 = wasm_v128_load(bk + 4);
        v128_t s = wasm_v128_load32_splat(ak);
        a00 = wasm_f32x4_add(a00, wasm_f32x4_mul(s, b0));
        a01 = wasm_f32x4_add(a01, wasm_f32x4_mul(s, b1));
        s = wasm_v128_load32_splat(ak + a_row);
        a10 = wasm_f32x4_add(a10, wasm_f32x4_mul(s, b0));
        a11 = wasm_f32x4_add(a11, wasm_f32x4_mul(s, b1));
        s = wasm_v128_load32_splat(ak + 2 * a_row);
        a20 = wasm_f32x4_add(a20, wasm_f32x4_mul(s, b0));
        a21 = wasm_f32x4_add(a21, wasm_f32x4_mul(s, b1));
        s = wasm_v128_load32_splat(ak + 3 * a_row);
        a30 = wasm_f32x4_add(a30, wasm_f32x4_mul(s, b0));
        a31 = wasm_f32x4_add(a31, wasm_f32x4_mul(s, b1));
    }
    wasm_v128_store(y0, a00), wasm_v128_store(y0 + 4, a01);
    wasm_v128_store(y1, a10), wasm_v128_store(y1 + 4, a11);
    wasm_v128_store(y2, a20), wasm_v128_store(y2 + 4, a21);
    wasm_v128_store(y3, a30), wasm_v128_store(y3 + 4, a31);
}
#else
/* Sixteen columns (two 8-float vectors, in the compiler's generic vector type: AVX2 registers
 * with -march=native, SSE pairs otherwise) by four rows: eight accumulators. Vector
 * arithmetic is lane by lane, so it reorders nothing. */
#define TILE_COLS 16
typedef float v8f __attribute__((vector_size(32), aligned(4), may_alias));

static void product_acc_tile(const product_acc *p, int64_t r, int64_t i, int64_t k0, int64_t k1) {
    float *y0 = p->y + r * p->ldy + i, *y1 = y0 + p->ldy, *y2 = y1 + p->ldy, *y3 = y2 + p->ldy;
    v8f a00 = *(v8f *)y0, a01 = *(v8f *)(y0 + 8);
    v8f a10 = *(v8f *)y1, a11 = *(v8f *)(y1 + 8);
    v8f a20 = *(v8f *)y2, a21 = *(v8f *)(y2 + 8);
    v8f a30 = *(v8f *)y3, a31 = *(v8f *)(y3 + 8);
    const float *a = p->a + r * p->a_row, *b = p->b + i;
    const int64_t a_row = p->a_row, a_k = p->a_k, ldb = p->ldb;
    for (int64_t k = k0; k < k1; k++) {
        const float *ak = a + k * a_k, *bk = b + k * ldb;
        const v8f b0 = *(const v8f *)bk, b1 = *(const v8f *)(bk + 8);
        const float s0 = ak[0], s1 = ak[a_row], s2 = ak[2 * a_row], s3 = ak[3 * a_row];
        a00 = a00 + s0 * b0, a01 = a01 + s0 * b1;
        a10 = a10 + s1 * b0, a11 = a11 + s1 * b1;
        a20 = a20 + s2 * b0, a21 = a21 + s2 * b1;
        a30 = a30 + s3 * b0, a31 = a31 + s3 * b1;
    }
    *(v8f *)y0 = a00, *(v8f *)(y0 + 8) = a01;
    *(v8f *)y1 = a10, *(v8f *)(y1 + 8) = a11;
    *(v8f *)y2 = a20, *(v8f *)(y2 + 8) = a21;
    *(v8f *)y3 = a30, *(v8f *)(y3 + 8) = a31;
}
#endif

void product_acc_rows(const product_acc *p, int64_t r0, int64_t r1, int64_t k0, int64_t k1) {
    const int64_t whole_cols = p->n_cols - p->n_cols % TILE_COLS;
    int64_t r = r0;
    for (; r + TILE_ROWS <= r1; r += TILE_ROWS) {
        for (int64_t i = 0; i < whole_cols; i += TILE_COLS) product_acc_tile(p, r, i, k0, k1);
        for (int64_t rr = r; rr < r + TILE_ROWS; rr++)
            for (int64_t i = whole_cols; i < p->n_cols; i++) product_acc_one(p, rr, i, k0, k1);
    }
    for (; r < r1; r++)
        for (int64_t i = 0; i < p->n_cols; i++) product_acc_one(p, r, i, k0, k1);
}
