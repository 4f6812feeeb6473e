/* test_train_order.c — the trainer's vectorised paths against their scalar definitions, bit
 * for bit, so that the native (AVX2) and wasm (SIMD128) trainers keep giving the same losses:
 *   - the backward products of linear_backward: every dx and dw value is its old value plus
 *     the products in ascending order (product_acc.h), on 1 and 2 threads, with sizes that
 *     leave partial tiles and span several k chunks;
 *   - gelu_forward: each value is 0.5·x·(1 + train_tanhf(…)) of the scalar formula, over
 *     ordinary values and the edges of train_tanhf's branches (0, ±1e-3, ±20, huge, ±∞).
 * The wasm test builds compile the SIMD128 paths, the native builds the vector-type ones. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ops.h"
#include "rng.h"
#include "threadpool.h"
#include "train_math.h"

static float *random_floats(int64_t n, train_rng *rng) {
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = (float)(2.0 * train_rng_uniform(rng) - 1.0);
    return x;
}

static int same_bits(const float *a, const float *b, int64_t n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

/* dx, dw and dbias of one linear layer against the loops that define their order. */
static void check_linear_order(int64_t N, int64_t C_in, int64_t C_out, sac_pool *pool) {
    train_rng rng = train_rng_seed((uint64_t)(N * 1000 + C_in * 10 + C_out));
    float *x = random_floats(N * C_in, &rng), *w = random_floats(C_out * C_in, &rng);
    float *dout = random_floats(N * C_out, &rng);
    /* gradients start non-zero: the ops accumulate */
    float *dx = random_floats(N * C_in, &rng), *dw = random_floats(C_out * C_in, &rng);
    float *db = random_floats(C_out, &rng);
    float *ref_dx = malloc((size_t)(N * C_in) * sizeof *ref_dx), *ref_dw = malloc((size_t)(C_out * C_in) * sizeof *ref_dw);
    float *ref_db = malloc((size_t)C_out * sizeof *ref_db);
    memcpy(ref_dx, dx, (size_t)(N * C_in) * sizeof *dx);
    memcpy(ref_dw, dw, (size_t)(C_out * C_in) * sizeof *dw);
    memcpy(ref_db, db, (size_t)C_out * sizeof *db);

    for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < C_in; i++) {
            float acc = ref_dx[n * C_in + i];
            for (int64_t o = 0; o < C_out; o++) acc = acc + dout[n * C_out + o] * w[o * C_in + i];
            ref_dx[n * C_in + i] = acc;
        }
    for (int64_t o = 0; o < C_out; o++) {
        for (int64_t i = 0; i < C_in; i++) {
            float acc = ref_dw[o * C_in + i];
            for (int64_t n = 0; n < N; n++) acc = acc + dout[n * C_out + o] * x[n * C_in + i];
            ref_dw[o * C_in + i] = acc;
        }
        for (int64_t n = 0; n < N; n++) ref_db[o] += dout[n * C_out + o];
    }

    linear_backward(pool, dx, dw, db, dout, x, w, N, C_in, C_out);
    const int threads = pool ? sac_pool_size(pool) : 1;
    CHECK_MSG(same_bits(dx, ref_dx, N * C_in), "dx, N=%lld C_in=%lld C_out=%lld, %d threads", (long long)N,
              (long long)C_in, (long long)C_out, threads);
    CHECK_MSG(same_bits(dw, ref_dw, C_out * C_in), "dw, N=%lld C_in=%lld C_out=%lld, %d threads", (long long)N,
              (long long)C_in, (long long)C_out, threads);
    CHECK_MSG(same_bits(db, ref_db, C_out), "dbias, %d threads", threads);
    free(x), free(w), free(dout), free(dx), free(dw), free(db), free(ref_dx), free(ref_dw), free(ref_db);
}

static void test_linear_backward_order(void) {
    sac_pool *pool = NULL;
    sac_error err;
    CHECK(sac_pool_new(2, &pool, &err) == SAC_OK);
    /* whole tiles; partial tiles in rows and columns with k over two chunks; fewer rows than a tile */
    const int64_t sizes[][3] = {{8, 32, 16}, {11, 21, 70}, {67, 19, 9}, {3, 5, 2}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        check_linear_order(sizes[s][0], sizes[s][1], sizes[s][2], NULL);
        check_linear_order(sizes[s][0], sizes[s][1], sizes[s][2], pool);
    }
    sac_pool_free(pool);
}

static void test_gelu_forward_order(void) {
    enum { N = 4099 }; /* not a multiple of the vector width: the scalar tail runs too */
    float *x = malloc(N * sizeof *x), *out = malloc(N * sizeof *out), *th = malloc(N * sizeof *th);
    const float edges[] = {0.0f, -0.0f, 1e-3f, -1e-3f, 0.99e-3f, 1.01e-3f, 1e-3f / 0.7978845608f, 20.0f, -20.0f,
                           20.0001f, 19.9999f, 30.0f, -30.0f, 1e30f, -1e30f, INFINITY, -INFINITY, 1e-30f, 1e-45f};
    const int n_edges = (int)(sizeof edges / sizeof *edges);
    train_rng rng = train_rng_seed(99);
    for (int i = 0; i < N; i++)
        x[i] = i < n_edges ? edges[i] : (float)((train_rng_uniform(&rng) - 0.5) * (i % 3 ? 12.0 : 0.01));
    gelu_forward(NULL, out, th, x, N);
    int bad = 0;
    for (int i = 0; i < N && bad < 5; i++) {
        const float xi = x[i];
        const float t = train_tanhf(0.7978845608028654f * (xi + 0.044715f * xi * xi * xi));
        const float o = 0.5f * xi * (1.0f + t);
        if (memcmp(&t, &th[i], sizeof t) || (memcmp(&o, &out[i], sizeof o) && !(isnan(o) && isnan(out[i])))) {
            CHECK_MSG(0, "gelu at x=%.9g: tanh %.9g vs %.9g, out %.9g vs %.9g", xi, th[i], t, out[i], o);
            bad++;
        }
    }
    free(x), free(out), free(th);
}

int main(void) {
    RUN(test_linear_backward_order);
    RUN(test_gelu_forward_order);
    return check_summary("test_train_order");
}
