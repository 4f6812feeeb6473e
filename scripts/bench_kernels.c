/* bench_kernels.c — speed of sac_matmul per weight type: matvec (GB/s of weights, GFLOP/s)
 * and a 128-row matmat (GFLOP/s), for 768×768 and 768×3072 matrices, on 1 and 2 threads.
 *
 * native: gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O3 -march=native -pthread -Isrc \
 *           scripts/bench_kernels.c src/{matmul,kernels,types,quants,threadpool,error}.c -lm
 * wasm:   emcc -std=c11 -D_POSIX_C_SOURCE=200809L -O3 -msimd128 -pthread -Isrc \
 *           -sPTHREAD_POOL_SIZE=2 -sINITIAL_MEMORY=512MB -sEXIT_RUNTIME=1 -sSINGLE_FILE=1 \
 *           -sENVIRONMENT=node scripts/bench_kernels.c src/{matmul,kernels,types,quants,threadpool,error}.c
 *         (run the .js with node from a directory without a "type": "module" package.json) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "matmul.h"
#include "types.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds per call: the best of several timed windows (the machine may be shared, and the
 * best window is the one least disturbed), each repeating the call for budget/8 seconds. */
static long fixed_calls; /* > 0: exactly this many calls, once (to count cycles with perf stat) */

static double time_call(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch,
                        float *y, void *work, double budget) {
    if (fixed_calls > 0) {
        double t0 = now();
        for (long i = 0; i < fixed_calls; i++) sac_matmul(pool, w, x, n_batch, y, work);
        return (now() - t0) / (double)fixed_calls;
    }
    for (int i = 0; i < 3; i++) sac_matmul(pool, w, x, n_batch, y, work);
    double best = 1e30;
    for (int window = 0; window < 8; window++) {
        int reps = 0;
        double t0 = now(), t;
        do {
            sac_matmul(pool, w, x, n_batch, y, work);
            reps++;
            t = now() - t0;
        } while (t < budget / 8);
        if (t / reps < best) best = t / reps;
    }
    return best;
}

int main(int argc, char **argv) {
    /* [budget seconds] [type names, comma-separated: all when absent] [fixed calls] [max threads]:
     * on a busy machine, `perf stat -e cycles:u` of a fixed number of calls compares two builds
     * better than wall time does */
    double budget = argc > 1 ? atof(argv[1]) : 0.4;
    const char *only = argc > 2 ? argv[2] : NULL;
    fixed_calls = argc > 3 ? atol(argv[3]) : 0;
    const int max_threads = argc > 4 && atoi(argv[4]) == 1 ? 1 : 2;
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_F16, SAC_TYPE_BF16, SAC_TYPE_Q8_0, SAC_TYPE_Q4_0, SAC_TYPE_Q5_0,
                              SAC_TYPE_Q4_1, SAC_TYPE_Q5_1, SAC_TYPE_Q2_K, SAC_TYPE_Q3_K, SAC_TYPE_Q4_K, SAC_TYPE_Q5_K, SAC_TYPE_Q6_K};
    const int64_t shapes[][2] = {{768, 768}, {768, 3072}, {3072, 768}}; /* n_in, n_out */
    const int64_t n_batch = 128;
    uint64_t s = 88172645463325252ull;
    sac_pool *pools[3] = {NULL, NULL, NULL};
    for (int nt = 1; nt <= 2; nt++) sac_pool_new(nt, &pools[nt], NULL);
    printf("%-5s %-10s %3s  %9s %9s %9s  %12s\n", "type", "n_in×n_out", "thr", "matvec us",
           "GB/s", "GFLOP/s", "matmat128 GF");
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const sac_type_traits *tr = sac_type_traits_get(types[ti]);
        if (only) {
            const char *hit = strstr(only, tr->name);
            size_t len = strlen(tr->name);
            if (!hit || (hit != only && hit[-1] != ',') || (hit[len] && hit[len] != ',')) continue;
        }
        for (size_t si = 0; si < 3; si++) {
            int64_t n_in = shapes[si][0], n_out = shapes[si][1];
            float *f = malloc(sizeof(float) * (size_t)(n_in * n_out));
            float *x = malloc(sizeof(float) * (size_t)(n_in * n_batch));
            float *y = malloc(sizeof(float) * (size_t)(n_out * n_batch));
            size_t row_bytes = 0;
            sac_type_row_bytes(types[ti], n_in, &row_bytes);
            size_t bytes = row_bytes * (size_t)n_out;
            void *data = malloc(bytes);
            for (int64_t i = 0; i < n_in * n_out; i++) {
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                f[i] = (float)(s >> 40) / (float)(1 << 24) - 0.5f;
            }
            for (int64_t i = 0; i < n_in * n_batch; i++) x[i] = f[i % (n_in * n_out)];
            tr->from_float(f, data, n_in * n_out);
            sac_matrix w = {types[ti], n_in, n_out, data, 1}; /* finite, as every loaded model is */
            void *work = malloc(sac_matmul_work_size(&w, n_batch) + 1);
            for (int nt = 1; nt <= max_threads; nt++) {
                double tv = time_call(pools[nt], &w, x, 1, y, work, budget);
                double tm = time_call(pools[nt], &w, x, n_batch, y, work, budget);
                double flop = 2.0 * (double)n_in * (double)n_out;
                printf("%-5s %4lldx%-5lld %3d  %9.1f %9.2f %9.2f  %12.2f\n", tr->name, (long long)n_in,
                       (long long)n_out, sac_pool_size(pools[nt]), tv * 1e6, (double)bytes / tv * 1e-9,
                       flop / tv * 1e-9, flop * (double)n_batch / tm * 1e-9);
                fflush(stdout);
            }
            free(work);
            free(data);
            free(f);
            free(x);
            free(y);
        }
    }
    for (int nt = 1; nt <= 2; nt++) sac_pool_free(pools[nt]);
    return 0;
}
