/* bench_stream.c — the machine's plain streaming-read bandwidth, the ceiling of decode (which
 * reads every weight once per token): 1 and 2 threads each sum their half of a 256 MB buffer
 * (far larger than any cache), best of several passes. A benchmark, not a test; make bench-wasm
 * runs it in each round beside the engines, so the effective GB/s of their decode compares
 * with what the machine allowed during the same run.
 *
 *   build/tools/bench_stream [MB]      prints {"threads_1_gb_s": X, "threads_2_gb_s": Y} */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct part {
    const uint64_t *p;
    size_t n;
    uint64_t sum;
} part;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Eight independent sums: the compiler vectorizes the loop, and the loads, not the adds, set
 * the pace. */
static void *read_part(void *arg) {
    part *pt = arg;
    uint64_t s[8] = {0};
    for (size_t i = 0; i + 8 <= pt->n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += pt->p[i + k];
    pt->sum = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
    return NULL;
}

static double pass(const uint64_t *buf, size_t n, int threads, uint64_t *check) {
    part parts[2];
    pthread_t th;
    size_t half = n / (size_t)threads / 8 * 8;
    double t0 = now();
    for (int i = 0; i < threads; i++) parts[i] = (part){buf + (size_t)i * half, half, 0};
    if (threads == 2 && pthread_create(&th, NULL, read_part, &parts[1]) != 0) return -1;
    read_part(&parts[0]);
    if (threads == 2) pthread_join(th, NULL);
    double t = now() - t0;
    for (int i = 0; i < threads; i++) *check += parts[i].sum;
    return (double)(half * (size_t)threads * sizeof *buf) / t / 1e9;
}

int main(int argc, char **argv) {
    long mb = argc > 1 ? atol(argv[1]) : 256;
    if (mb <= 0 || mb > 4096) return fprintf(stderr, "bench_stream: MB must be 1-4096\n"), 1;
    size_t n = (size_t)mb * 1024 * 1024 / sizeof(uint64_t);
    uint64_t *buf = malloc(n * sizeof *buf);
    if (!buf) return fprintf(stderr, "bench_stream: out of memory\n"), 1;
    for (size_t i = 0; i < n; i++) buf[i] = i; /* touch every page before timing */
    uint64_t check = 0;
    double best[3] = {0, 0, 0};
    for (int rep = 0; rep < 6; rep++)
        for (int threads = 1; threads <= 2; threads++) {
            double g = pass(buf, n, threads, &check);
            if (g < 0) return fprintf(stderr, "bench_stream: cannot start a thread\n"), 1;
            if (g > best[threads]) best[threads] = g;
        }
    printf("{\"threads_1_gb_s\": %.2f, \"threads_2_gb_s\": %.2f, \"check\": %llu}\n", best[1], best[2],
           (unsigned long long)(check & 0xFFFF));
    free(buf);
    return 0;
}
