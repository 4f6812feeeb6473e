/* test_models.h — small random GGUF models for the tests and benchmarks, and the float64
 * copy of their weights the reference forward pass (reference.h) computes with. */
#ifndef SAC_TEST_MODELS_H
#define SAC_TEST_MODELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct test_model_spec {
    const char *arch;    /* "gpt2", "llama", "qwen2", "gemma", "phi3" or "encdec" */
    uint32_t type;       /* storage type of every 2-D weight (1-D parameters stay F32) */
    int32_t n_vocab, n_ctx, n_embd, n_ff, n_layer, n_head, n_head_kv, rope_dim;
    int32_t n_enc_layer; /* encdec: encoder blocks (n_layer: decoder blocks) */
    float rope_base, eps;
    int tied;            /* 1: no output.weight (the output reuses token_embd); gemma: always */
    uint64_t seed;
    int no_reference;    /* 1: keep no float64 copy (benchmark-sized models) */
    /* llama options (qwen2 always has Q/K/V biases and no output bias) */
    int attn_bias;       /* 1: attn_{q,k,v,output}.bias, which llama.cpp's llama binds when present */
    int rope_freqs;      /* 1: rope_freqs.weight, per-pair frequency divisors in [1, 8] (Llama 3.x) */
    float rope_scale;    /* > 0: rope.scaling.type "linear" with this rope.scaling.factor (llama, qwen2) */
} test_model_spec;

/* A weight as the reference sees it: the stored values, dequantized to double by code that
 * shares nothing with src/ (rows of ne[0] values; ne[1] == 1 for vectors). */
typedef struct ref_tensor {
    char name[64];
    int64_t ne[2];
    double *v;
} ref_tensor;

typedef struct ref_model {
    test_model_spec spec;
    int n;
    ref_tensor *t;
} ref_model;

typedef struct test_model {
    uint8_t *bytes;      /* the GGUF file */
    size_t size;
    ref_model ref;
} test_model;

/* A small model of the architecture: vocab 97, context 48, width 64, 2 layers, 4 heads
 * (2 KV heads for llama, qwen2, gemma and phi3), feed-forward 96, rope on all head dims. */
test_model_spec test_spec(const char *arch, uint32_t type);
/* GPT-2 small's shape: vocab 50257, context 1024, width 768, 12 layers, 12 heads, ff 3072;
 * no_reference set. */
test_model_spec test_spec_gpt2_small(uint32_t type);
/* 0 on success. */
int test_model_make(const test_model_spec *spec, test_model *out);
void test_model_free(test_model *m);

/* The dequantized weight with this name, or NULL. */
const ref_tensor *ref_find(const ref_model *m, const char *name);

#endif
