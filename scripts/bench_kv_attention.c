/* bench_kv_attention.c — speed of attention's passes over the KV cache for one decode token:
 * scores (sac_kv_scores), softmax (sac_softmax_exp and the scaling by 1/Σ, as forward.c does)
 * and the weighted sum of values (sac_kv_mix), one thread, for a GPT-2-small-sized shape
 * (12 layers of 12 heads of 64, blocks of heads as one thread takes them), f32, bf16 and q8
 * caches laid out as the model's (each head's rows together, room for 2048), at depths 128 and 2048.
 * The cache is left as a decode token leaves it: before each layer's passes, 128 MB / 12 of
 * other memory is read (the layer's weights), so the keys and values come from memory, not from
 * L2. Prints nanoseconds per key per head of each pass, the best of several tokens, and `read`:
 * the same key and value bytes read in address order, 32 bytes a step (the floor: a pass that
 * reads them cannot be faster).
 *
 * make bench-kv-attention (BENCH_KV_ARGS) builds and runs it natively and in wasm (Node).
 * arguments: [heads per block (default 12; 6 is what each of 2 threads takes)] [tokens (default 24)]
 * [query heads per kv head (default 1; 4: 3 kv heads, as a grouped-query model keeps them)] */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kv_attention.h"
#include "kv_cache.h"
#include "softmax.h"
#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

enum { HEADS = 12, HEAD_DIM = 64, LAYERS = 12, SWEEP_MB = 128 };

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t rng = 1;
static float uniform(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / (float)(1u << 24) - 0.5f;
}

typedef struct run {
    sac_kv_heads heads;
    float *max, *out;
} run;

static void pass_scores(run *r) { sac_kv_scores(&r->heads, r->max); }

static void pass_softmax(run *r) {
    const sac_kv_heads *a = &r->heads;
    for (int32_t h = 0; h < a->h1 - a->h0; h++) {
        float *s = a->rows[h];
        const float inv = 1.0f / sac_softmax_exp(s, a->n_keys, r->max[h], 1.0f);
        for (int32_t j = 0; j < a->n_keys; j++) s[j] *= inv;
    }
}

static void pass_mix(run *r) { sac_kv_mix(&r->heads, r->out); }

/* The floor: the same key and value bytes read in address order (an OR of every word), head
 * by head. */
static uint32_t read_order_sum;
static void pass_read(run *r) {
    const sac_kv_heads *a = &r->heads;
    const int64_t row = (int64_t)sac_kv_row_bytes(a->kv_type, a->head_dim), words = a->n_keys * row / 4;
    uint32_t acc = 0;
    for (int32_t g = 0; g < HEADS / a->group; g++) { /* each kv head's rows once */
        const uint32_t *k = (const void *)((const char *)a->k + g * (a->head_stride / a->head_dim) * row);
        const uint32_t *v = (const void *)((const char *)a->v + g * (a->head_stride / a->head_dim) * row);
#ifdef __wasm_simd128__
        /* (a scalar loop here runs at half the speed of the passes) */
        const int64_t w8 = words - words % 8;
        v128_t x = wasm_i32x4_splat(0), y = x;
        for (int64_t i = 0; i < w8; i += 8) x = wasm_v128_or(x, wasm_v128_load(k + i)), y = wasm_v128_or(y, wasm_v128_load(k + i + 4));
        for (int64_t i = 0; i < w8; i += 8) x = wasm_v128_or(x, wasm_v128_load(v + i)), y = wasm_v128_or(y, wasm_v128_load(v + i + 4));
        acc |= wasm_i32x4_extract_lane(wasm_v128_or(x, y), 0);
        for (int64_t i = w8; i < words; i++) acc |= k[i] | v[i];
#else
        for (int64_t i = 0; i < words; i++) acc |= k[i];
        for (int64_t i = 0; i < words; i++) acc |= v[i];
#endif
    }
    read_order_sum += acc;
}

/* Walks `bytes` of memory, as a decode token's matvecs do between two layers' attention, so
 * that the next token finds the cache as a model leaves it (the KV rows mostly not in L2). */
static float sweep(const float *buf, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; i += 16) s += buf[i];
    return s;
}

int main(int argc, char **argv) {
    const int32_t block = argc > 1 ? atoi(argv[1]) : HEADS;
    const int tokens = argc > 2 ? atoi(argv[2]) : 24;
    const int32_t group = argc > 3 ? atoi(argv[3]) : 1;
    const int32_t depths[] = {128, 2048};
    const int32_t max_keys = 2048;
    const int64_t stride = (int64_t)HEADS * HEAD_DIM, cache = max_keys * stride;
    const int64_t sweep_n = (int64_t)SWEEP_MB << 18; /* floats */
    float *q = malloc(sizeof(float) * stride), *k = malloc(sizeof(float) * (size_t)cache);
    float *v = malloc(sizeof(float) * (size_t)cache), *out = malloc(sizeof(float) * stride);
    float *scores = malloc(sizeof(float) * (size_t)(HEADS * max_keys)), max[SAC_KV_HEAD_BLOCK];
    float *evict = malloc(sizeof(float) * (size_t)sweep_n);
    void *kc[LAYERS], *vc[LAYERS];
    uint8_t *mask = malloc((size_t)max_keys);
    if (!q || !k || !v || !out || !scores || !evict || !mask || block < 1 || block > SAC_KV_HEAD_BLOCK || group < 1 ||
        HEADS % group)
        return 1;
    for (int l = 0; l < LAYERS; l++)
        if (!(kc[l] = malloc(sizeof(float) * (size_t)cache)) || !(vc[l] = malloc(sizeof(float) * (size_t)cache))) return 1;
    for (int64_t i = 0; i < sweep_n; i++) evict[i] = (float)(i & 7);
    for (int64_t i = 0; i < stride; i++) q[i] = 2.0f * uniform();
    for (int64_t i = 0; i < cache; i++) k[i] = 2.0f * uniform(), v[i] = uniform();
    memset(mask, 1, (size_t)max_keys);
    float *rows[SAC_KV_HEAD_BLOCK];
    for (int32_t h = 0; h < block; h++) rows[h] = scores + (int64_t)h * max_keys;
    printf("ns per key per head (%d layers of %d heads of %d, %d per kv head, in blocks of %d, 1 thread, %d MB swept "
           "between tokens; the best of %d tokens)\n", LAYERS, HEADS, HEAD_DIM, group, block, SWEEP_MB, tokens);
    printf("%-5s %6s %8s %8s %8s %8s %8s\n", "kv", "keys", "scores", "softmax", "mix", "total", "read");
    float sink = 0.0f;
    for (int32_t type = SAC_KV_F32; type <= SAC_KV_Q8; type++) {
        for (int l = 0; l < LAYERS; l++) /* row r: head r / max_keys, key r % max_keys */
            for (int64_t r = 0; r < cache / HEAD_DIM; r++)
                sac_kv_store(kc[l], type, r, k + r * HEAD_DIM, HEAD_DIM), sac_kv_store(vc[l], type, r, v + r * HEAD_DIM, HEAD_DIM);
        for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
            const int32_t n = depths[d];
            double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
            for (int token = 0; token < tokens; token++) {
                double t[4] = {0, 0, 0, 0};
                for (int l = 0; l < LAYERS; l++) {
                    sink += sweep(evict + (int64_t)l * (sweep_n / LAYERS), sweep_n / LAYERS);
                    for (int32_t h0 = 0; h0 < HEADS; h0 += block) {
                        const int32_t h1 = h0 + block < HEADS ? h0 + block : HEADS;
                        run r = {.heads = {.q = q, .k = kc[l], .v = vc[l], .kv_type = type, .kv_stride = HEAD_DIM,
                                           .head_stride = max_keys * HEAD_DIM,
                                           .head_dim = HEAD_DIM, .group = group, .h0 = h0, .h1 = h1, .n_keys = n, .own = n - 1,
                                           .key_mask = mask, .scale = 0.125f, .rows = rows},
                                 .max = max, .out = out};
                        double t0 = now();
                        pass_scores(&r);
                        double t1 = now();
                        pass_softmax(&r);
                        double t2 = now();
                        pass_mix(&r);
                        t[0] += t1 - t0, t[1] += t2 - t1, t[2] += now() - t2;
                    }
                }
                for (int l = 0; l < LAYERS; l++) { /* the floor, from the same cache state */
                    sink += sweep(evict + (int64_t)l * (sweep_n / LAYERS), sweep_n / LAYERS);
                    run r = {.heads = {.k = kc[l], .v = vc[l], .kv_type = type, .head_stride = max_keys * HEAD_DIM,
                                       .head_dim = HEAD_DIM, .group = group, .n_keys = n}};
                    const double t0 = now();
                    pass_read(&r);
                    t[3] += now() - t0;
                }
                best[4] = t[3] < best[4] ? t[3] : best[4];
                for (int p = 0; p < 3; p++) best[p] = t[p] < best[p] ? t[p] : best[p];
                best[3] = t[0] + t[1] + t[2] < best[3] ? t[0] + t[1] + t[2] : best[3];
            }
            const double per = 1e9 / ((double)n * HEADS * LAYERS);
            printf("%-5s %6d %8.2f %8.2f %8.2f %8.2f %8.2f\n", sac_kv_type_name(type), n, best[0] * per, best[1] * per,
                   best[2] * per, best[3] * per, best[4] * per);
        }
    }
    /* a checksum, so the passes cannot be optimised away and two builds can be compared */
    uint32_t sum = 0;
    for (int64_t i = 0; i < stride; i++) {
        uint32_t b;
        memcpy(&b, &out[i], sizeof b);
        sum = sum * 31u + b;
    }
    printf("checksum of the last output: %08x (%g)\n", (unsigned)sum, (double)sink + read_order_sum);
    for (int l = 0; l < LAYERS; l++) free(kc[l]), free(vc[l]);
    free(q), free(k), free(v), free(out), free(scores), free(evict), free(mask);
    return 0;
}
