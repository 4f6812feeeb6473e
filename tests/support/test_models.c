/* test_models.c — writes small random gpt2/llama/qwen2/gemma/phi3/encdec GGUF files with the project's GGUF writer
 * and keeps, for the reference, the values the file really stores (after quantization),
 * dequantized by reference.c's own decoder. */
#include "test_models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_writer.h"
#include "reference.h"
#include "types.h"

test_model_spec test_spec(const char *arch, uint32_t type) {
    test_model_spec s;
    memset(&s, 0, sizeof s);
    s.arch = arch;
    s.type = type;
    s.n_vocab = 97;
    s.n_ctx = 48;
    s.n_embd = 64;
    s.n_ff = 96;
    s.n_layer = 2;
    s.n_head = 4;
    s.n_head_kv = strcmp(arch, "gpt2") && strcmp(arch, "encdec") ? 2 : 4;
    s.rope_dim = 16;
    s.rope_base = 10000.0f;
    s.eps = 1e-5f;
    s.tied = 0;
    s.seed = 1234;
    s.n_enc_layer = strcmp(arch, "encdec") ? 0 : 2;
    return s;
}

test_model_spec test_spec_gpt2_small(uint32_t type) {
    test_model_spec s = test_spec("gpt2", type);
    s.n_vocab = 50257;
    s.n_ctx = 1024;
    s.n_embd = 768;
    s.n_ff = 3072;
    s.n_layer = 12;
    s.n_head = 12;
    s.n_head_kv = 12;
    s.no_reference = 1;
    return s;
}

static double next_uniform(uint64_t *state) { /* xorshift64*, in [-1, 1) */
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (double)((*state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-52 - 1.0;
}

typedef struct maker {
    gguf_writer *w;
    ref_model *ref;
    const test_model_spec *spec;
    uint64_t rng;
    int failed;
} maker;

/* Adds one tensor of rows × cols (cols innermost): values `center + scale · U(-1, 1)`. */
static void add(maker *mk, const char *name, int64_t cols, int64_t rows, double center, double scale) {
    if (mk->failed) return;
    const int matrix = rows > 1;
    const uint32_t type = matrix ? mk->spec->type : SAC_TYPE_F32;
    const int64_t n = cols * rows;
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = (float)(center + scale * next_uniform(&mk->rng));
    const sac_type_traits *tt = sac_type_traits_get(type);
    size_t bytes = (size_t)(n / tt->block_size) * tt->type_size;
    uint8_t *q = malloc(bytes);
    tt->from_float(f, q, n);
    int64_t ne[2] = {cols, rows};
    sac_error err;
    if (sac_gguf_writer_add_tensor(mk->w, name, type, matrix ? 2 : 1, ne, q, bytes, &err) != SAC_OK) {
        fprintf(stderr, "test_models: %s\n", err.msg);
        mk->failed = 1;
    }
    ref_tensor *t = &mk->ref->t[mk->ref->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ne[0] = cols;
    t->ne[1] = rows;
    if (!mk->spec->no_reference) {
        t->v = malloc((size_t)n * sizeof *t->v);
        ref_dequantize(type, q, n, t->v);
    }
    free(q);
    free(f);
}

int test_model_make(const test_model_spec *s, test_model *out) {
    memset(out, 0, sizeof *out);
    out->ref.spec = *s;
    out->ref.t = calloc((size_t)(24 * (s->n_layer + s->n_enc_layer) + 8), sizeof *out->ref.t);
    maker mk = {NULL, &out->ref, s, s->seed * 2654435761ull + 1, 0};
    sac_error err;
    if (sac_gguf_writer_new(&mk.w, &err) != SAC_OK) return 1;
    const int encdec = !strcmp(s->arch, "encdec");
    const int gpt2 = !strcmp(s->arch, "gpt2") || encdec; /* encdec blocks are gpt2 blocks */
    char key[96];
#define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", s->arch, suffix), key)
    sac_gguf_writer_set_string(mk.w, "general.architecture", s->arch, &err);
    sac_gguf_writer_set_string(mk.w, "general.name", "saccade test model", &err);
    sac_gguf_writer_set_u32(mk.w, KEY("context_length"), (uint32_t)s->n_ctx, &err);
    sac_gguf_writer_set_u32(mk.w, KEY("embedding_length"), (uint32_t)s->n_embd, &err);
    sac_gguf_writer_set_u32(mk.w, KEY("feed_forward_length"), (uint32_t)s->n_ff, &err);
    sac_gguf_writer_set_u32(mk.w, KEY("block_count"), (uint32_t)s->n_layer, &err);
    sac_gguf_writer_set_u32(mk.w, KEY("attention.head_count"), (uint32_t)s->n_head, &err);
    if (encdec) sac_gguf_writer_set_u32(mk.w, KEY("encoder.block_count"), (uint32_t)s->n_enc_layer, &err);
    if (gpt2) {
        sac_gguf_writer_set_f32(mk.w, KEY("attention.layer_norm_epsilon"), s->eps, &err);
    } else {
        sac_gguf_writer_set_u32(mk.w, KEY("attention.head_count_kv"), (uint32_t)s->n_head_kv, &err);
        sac_gguf_writer_set_f32(mk.w, KEY("attention.layer_norm_rms_epsilon"), s->eps, &err);
        sac_gguf_writer_set_f32(mk.w, KEY("rope.freq_base"), s->rope_base, &err);
        sac_gguf_writer_set_u32(mk.w, KEY("rope.dimension_count"), (uint32_t)s->rope_dim, &err);
        if (!strcmp(s->arch, "gemma")) { /* as llama.cpp's converter writes them */
            sac_gguf_writer_set_u32(mk.w, KEY("attention.key_length"), (uint32_t)(s->n_embd / s->n_head), &err);
            sac_gguf_writer_set_u32(mk.w, KEY("attention.value_length"), (uint32_t)(s->n_embd / s->n_head), &err);
        }
        if (s->rope_scale > 0) {
            sac_gguf_writer_set_string(mk.w, KEY("rope.scaling.type"), "linear", &err);
            sac_gguf_writer_set_f32(mk.w, KEY("rope.scaling.factor"), s->rope_scale, &err);
        }
    }
#undef KEY
    const int64_t E = s->n_embd, F = s->n_ff, KV = (int64_t)s->n_head_kv * (E / s->n_head);
    const double wE = 1.0 / sqrt((double)E) * sqrt(3.0), wF = 1.0 / sqrt((double)F) * sqrt(3.0);
    const int qkv_bias = !strcmp(s->arch, "qwen2") || (!strcmp(s->arch, "llama") && s->attn_bias);
    add(&mk, "token_embd.weight", E, s->n_vocab, 0, 1.0);
    if (s->rope_freqs) add(&mk, "rope_freqs.weight", s->rope_dim / 2, 1, 4.5, 3.5);
    if (gpt2 && !encdec) add(&mk, "position_embd.weight", E, s->n_ctx, 0, 0.5);
    char name[64];
    /* encoder blocks, then decoder blocks (the only blocks of decoder-only models) */
    for (int stack = encdec ? 0 : 1; stack < 2; stack++) {
        const char *prefix = !encdec ? "blk" : stack == 0 ? "enc.blk" : "dec.blk";
        const int n_layer = stack == 0 ? s->n_enc_layer : s->n_layer;
        for (int l = 0; l < n_layer; l++) {
#define NAME(suffix) (snprintf(name, sizeof name, "%s.%d." suffix, prefix, l), name)
            add(&mk, NAME("attn_norm.weight"), E, 1, 1.0, 0.2);
            if (gpt2) {
                add(&mk, NAME("attn_norm.bias"), E, 1, 0, 0.1);
                add(&mk, NAME("attn_qkv.weight"), E, 3 * E, 0, wE);
                add(&mk, NAME("attn_qkv.bias"), 3 * E, 1, 0, 0.1);
            } else if (!strcmp(s->arch, "phi3")) { /* Q|K|V fused, as llama.cpp's converter writes it */
                add(&mk, NAME("attn_qkv.weight"), E, E + 2 * KV, 0, wE);
            } else {
                add(&mk, NAME("attn_q.weight"), E, E, 0, wE);
                if (qkv_bias) add(&mk, NAME("attn_q.bias"), E, 1, 0, 0.3);
                add(&mk, NAME("attn_k.weight"), E, KV, 0, wE);
                if (qkv_bias) add(&mk, NAME("attn_k.bias"), KV, 1, 0, 0.3);
                add(&mk, NAME("attn_v.weight"), E, KV, 0, wE);
                if (qkv_bias) add(&mk, NAME("attn_v.bias"), KV, 1, 0, 0.3);
            }
            add(&mk, NAME("attn_output.weight"), E, E, 0, wE);
            if (gpt2 || (!strcmp(s->arch, "llama") && s->attn_bias)) add(&mk, NAME("attn_output.bias"), E, 1, 0, 0.1);
            if (encdec && stack == 1) {
                add(&mk, NAME("cross_attn_norm.weight"), E, 1, 1.0, 0.2);
                add(&mk, NAME("cross_attn_norm.bias"), E, 1, 0, 0.1);
                add(&mk, NAME("cross_attn_q.weight"), E, E, 0, wE);
                add(&mk, NAME("cross_attn_q.bias"), E, 1, 0, 0.1);
                add(&mk, NAME("cross_attn_kv.weight"), E, 2 * E, 0, wE);
                add(&mk, NAME("cross_attn_kv.bias"), 2 * E, 1, 0, 0.1);
                add(&mk, NAME("cross_attn_output.weight"), E, E, 0, wE);
                add(&mk, NAME("cross_attn_output.bias"), E, 1, 0, 0.1);
            }
            add(&mk, NAME("ffn_norm.weight"), E, 1, 1.0, 0.2);
            if (gpt2) {
                add(&mk, NAME("ffn_norm.bias"), E, 1, 0, 0.1);
                add(&mk, NAME("ffn_up.weight"), E, F, 0, wE);
                add(&mk, NAME("ffn_up.bias"), F, 1, 0, 0.1);
            } else if (!strcmp(s->arch, "phi3")) { /* gate rows, then up rows */
                add(&mk, NAME("ffn_up.weight"), E, 2 * F, 0, wE);
            } else {
                add(&mk, NAME("ffn_gate.weight"), E, F, 0, wE);
                add(&mk, NAME("ffn_up.weight"), E, F, 0, wE);
            }
            add(&mk, NAME("ffn_down.weight"), F, E, 0, wF);
            if (gpt2) add(&mk, NAME("ffn_down.bias"), E, 1, 0, 0.1);
#undef NAME
        }
        if (encdec && stack == 0) {
            add(&mk, "enc.output_norm.weight", E, 1, 1.0, 0.2);
            add(&mk, "enc.output_norm.bias", E, 1, 0, 0.1);
        }
    }
    add(&mk, "output_norm.weight", E, 1, 1.0, 0.2);
    if (gpt2) add(&mk, "output_norm.bias", E, 1, 0, 0.1);
    if (!s->tied && strcmp(s->arch, "gemma")) add(&mk, "output.weight", E, s->n_vocab, 0, wE);
    if (!mk.failed && sac_gguf_writer_to_buffer(mk.w, &out->bytes, &out->size, &err) != SAC_OK) {
        fprintf(stderr, "test_models: %s\n", err.msg);
        mk.failed = 1;
    }
    sac_gguf_writer_free(mk.w);
    return mk.failed;
}

void test_model_free(test_model *m) {
    for (int i = 0; i < m->ref.n; i++) free(m->ref.t[i].v);
    free(m->ref.t);
    free(m->bytes);
    memset(m, 0, sizeof *m);
}

const ref_tensor *ref_find(const ref_model *m, const char *name) {
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->t[i].name, name)) return &m->t[i];
    return NULL;
}
