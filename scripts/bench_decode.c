/* bench_decode.c — the matvecs of one GPT-2-small decode token (12 layers of 768→2304,
 * 768→768, 768→3072, 3072→768, then the 768→50257 output matrix), each matrix its own
 * allocation as in a loaded model, so the weights stream from memory as in decode; beside it a
 * plain streaming read of the same bytes. Prints tokens/s (matvecs only) and GB/s per thread
 * count: the ceiling the kernels put on decode, without attention, norms or sampling.
 *
 * `make bench-decode` builds it native (build/tools/bench_decode) and wasm
 * (build/bench-decode/bench_decode.cjs, SIMD128 + pthreads, run with node) and runs both with BENCH_DECODE_ARGS.
 *
 *   bench_decode [type names, comma-separated: F32 when absent] [tokens per window] [threads: 1, 2 or 12]
 *                [windows: the best is kept] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matmul.h"
#include "types.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define N_LAYER 12
#define N_MATS (4 * N_LAYER + 1)

typedef struct stream_task {
    const char *const *data;
    const size_t *bytes;
    float sum[2];
} stream_task;

/* Each thread sums its half of every matrix as floats (what an F32 matvec must read). */
static void stream_rows(void *arg, int ith, int nth) {
    stream_task *s = arg;
    float total = 0.0f;
    for (int m = 0; m < N_MATS; m++) {
        size_t n = s->bytes[m] / 64, a = n * (size_t)ith / (size_t)nth, b = n * (size_t)(ith + 1) / (size_t)nth;
        const char *p = s->data[m];
#ifdef __wasm_simd128__
        v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (size_t i = a; i < b; i++) {
            acc0 = wasm_f32x4_add(acc0, wasm_v128_load(p + i * 64));
            acc1 = wasm_f32x4_add(acc1, wasm_v128_load(p + i * 64 + 16));
            acc2 = wasm_f32x4_add(acc2, wasm_v128_load(p + i * 64 + 32));
            acc3 = wasm_f32x4_add(acc3, wasm_v128_load(p + i * 64 + 48));
        }
        v128_t t = wasm_f32x4_add(wasm_f32x4_add(acc0, acc1), wasm_f32x4_add(acc2, acc3));
        total += wasm_f32x4_extract_lane(t, 0) + wasm_f32x4_extract_lane(t, 1);
#else
        float acc[16] = {0};
        for (size_t i = a; i < b; i++) {
            const float *f = (const float *)(p + i * 64);
            for (int k = 0; k < 16; k++) acc[k] += f[k];
        }
        for (int k = 0; k < 16; k++) total += acc[k];
#endif
    }
    s->sum[ith & 1] = total;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : "F32";
    int tokens = argc > 2 ? atoi(argv[2]) : 8;
    int thr_arg = argc > 3 ? atoi(argv[3]) : 12;
    int windows = argc > 4 ? atoi(argv[4]) : 5;
    const int64_t shapes[4][2] = {{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}}; /* n_in, n_out */
    const int64_t out_shape[2] = {768, 50257};
    const uint32_t all[] = {SAC_TYPE_F32,  SAC_TYPE_F16,  SAC_TYPE_BF16, SAC_TYPE_Q8_0, SAC_TYPE_Q4_0,
                            SAC_TYPE_Q5_0, SAC_TYPE_Q4_1, SAC_TYPE_Q5_1, SAC_TYPE_Q2_K, SAC_TYPE_Q3_K,
                            SAC_TYPE_Q4_K, SAC_TYPE_Q5_K, SAC_TYPE_Q6_K};
    sac_pool *pools[3] = {NULL, NULL, NULL};
    for (int nt = 1; nt <= 2; nt++)
        if (thr_arg == 12 || thr_arg == nt) sac_pool_new(nt, &pools[nt], NULL);
    uint64_t s = 88172645463325252ull;
    for (size_t ti = 0; ti < sizeof all / sizeof all[0]; ti++) {
        const sac_type_traits *tr = sac_type_traits_get(all[ti]);
        int listed = 0; /* one of the comma-separated names */
        for (const char *p = only; *p && !listed; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
            size_t len = strcspn(p, ",");
            listed = len == strlen(tr->name) && !strncmp(p, tr->name, len);
        }
        if (!listed) continue;
        sac_matrix w[N_MATS];
        const char *data[N_MATS];
        size_t bytes[N_MATS], total = 0, work_bytes = 0;
        float *f = malloc(sizeof(float) * 768 * 50257);
        for (int m = 0; m < N_MATS; m++) {
            const int64_t *sh = m == N_MATS - 1 ? out_shape : shapes[m % 4];
            size_t row_bytes = 0;
            sac_type_row_bytes(all[ti], sh[0], &row_bytes);
            bytes[m] = row_bytes * (size_t)sh[1];
            char *d = malloc(bytes[m]);
            for (int64_t i = 0; i < sh[0] * sh[1]; i++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                f[i] = ((float)(s >> 40) / (float)(1 << 24) - 0.5f) * 0.1f;
            }
            tr->from_float(f, d, sh[0] * sh[1]);
            w[m] = (sac_matrix){all[ti], sh[0], sh[1], d, 1}; /* finite, as every loaded model is */
            data[m] = d;
            total += bytes[m];
            size_t wb = sac_matmul_work_size(&w[m], 1);
            if (wb > work_bytes) work_bytes = wb;
        }
        free(f);
        float *x = malloc(sizeof(float) * 3072), *y = malloc(sizeof(float) * 50257);
        for (int i = 0; i < 3072; i++) x[i] = (float)(i % 17) * 0.01f - 0.08f;
        void *work = malloc(work_bytes + 16);
        for (int nt = 1; nt <= 2; nt++) {
            if (!pools[nt]) continue;
            double best = 1e30, best_stream = 1e30;
            for (int window = 0; window < windows; window++) {
                double t0 = now();
                for (int k = 0; k < tokens; k++)
                    for (int m = 0; m < N_MATS; m++) sac_matmul(pools[nt], &w[m], x, 1, y, work);
                double t = (now() - t0) / tokens;
                if (t < best) best = t;
                stream_task st = {data, bytes, {0, 0}};
                t0 = now();
                for (int k = 0; k < tokens; k++) sac_pool_run(pools[nt], stream_rows, &st);
                t = (now() - t0) / tokens;
                if (t < best_stream) best_stream = t;
            }
            printf("%-5s thr %d  matvecs %7.2f tok/s %6.2f GB/s   stream %7.2f tok/s %6.2f GB/s  (%.0f MB, y0 %g)\n",
                   tr->name, nt, 1 / best, (double)total / best * 1e-9, 1 / best_stream,
                   (double)total / best_stream * 1e-9, (double)total * 1e-6, (double)y[0]);
            fflush(stdout);
        }
        free(work);
        free(x);
        free(y);
        for (int m = 0; m < N_MATS; m++) free((void *)data[m]);
    }
    for (int nt = 1; nt <= 2; nt++) sac_pool_free(pools[nt]);
    return 0;
}
