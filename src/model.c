/* model.c — from GGUF bytes to a model: architecture, hyperparameters, and every weight
 * bound by name and checked against the shape the architecture expects.
 *
 * gpt2 and llama use the names llama.cpp's converters write (see gguf-notes.md). "encdec" is
 * saccade's own encoder–decoder (a Vaswani-style transformer with GPT-2's pre-LayerNorm
 * blocks):
 *   keys    encdec.context_length, .embedding_length, .feed_forward_length,
 *           .encoder.block_count, .block_count (decoder blocks), .attention.head_count,
 *           .attention.layer_norm_epsilon
 *   tensors token_embd.weight [E, V]   shared by source, target (and output when tied)
 *           enc.blk.N.{attn_norm, attn_qkv, attn_output, ffn_norm, ffn_up, ffn_down}.{weight,bias}
 *           enc.output_norm.{weight,bias}
 *           dec.blk.N.{attn_norm, attn_qkv, attn_output, ffn_norm, ffn_up, ffn_down}.{weight,bias}
 *           dec.blk.N.cross_attn_norm.{weight,bias}, dec.blk.N.cross_attn_q.{weight,bias} [E, E],
 *           dec.blk.N.cross_attn_kv.{weight,bias} [E, 2E] (K rows, then V rows),
 *           dec.blk.N.cross_attn_output.{weight,bias} [E, E]
 *           output_norm.{weight,bias}, output.weight [E, V] (absent: tied to token_embd)
 *   positions: fixed sinusoids added to the token embeddings, from 0 in source and target
 *   (PE[p][2i] = sin(p / 10000^(2i/E)), PE[p][2i+1] = cos(p / 10000^(2i/E))).
 * A decoder block is x += attn(LN(x)) (causal); x += cross(LN(x), encoder); x += mlp(LN(x)). */
#include "model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

/* Sanity bounds: far above any model that fits in wasm memory, low enough that products of
 * them cannot overflow the size arithmetic of the context. */
#define MAX_DIM (1 << 20)
#define MAX_LAYERS 4096

/* ---------------------------------------------------------------------------------------- */
/* Hyperparameters                                                                           */
/* ---------------------------------------------------------------------------------------- */

static sac_status arch_key(const sac_model *m, const char *suffix, char *key, size_t cap) {
    snprintf(key, cap, "%s.%s", m->arch_name, suffix);
    return SAC_OK;
}

/* A required positive integer hyperparameter "<arch>.<suffix>", at most `max`. */
static sac_status get_dim(sac_model *m, const char *suffix, int32_t max, int32_t *out) {
    char key[96];
    uint32_t v;
    arch_key(m, suffix, key, sizeof key);
    sac_status st = sac_gguf_get_u32(&m->gguf, key, &v, &m->error);
    if (st != SAC_OK) return st;
    if (v == 0 || v > (uint32_t)max)
        return sac_fail(&m->error, SAC_ERR_MODEL, "metadata key '%s' is %" PRIu32 ", expected 1..%" PRId32,
                        key, v, max);
    *out = (int32_t)v;
    return SAC_OK;
}

/* An optional float hyperparameter: `fallback` when the key is absent. */
static sac_status get_float_or(sac_model *m, const char *suffix, float fallback, float *out) {
    char key[96];
    arch_key(m, suffix, key, sizeof key);
    if (!sac_gguf_find_kv(&m->gguf, key)) {
        *out = fallback;
        return SAC_OK;
    }
    return sac_gguf_get_f32(&m->gguf, key, out, &m->error);
}

static sac_status read_hparams(sac_model *m) {
    sac_model_info *hp = &m->info;
    sac_status st;
    if ((st = get_dim(m, "context_length", MAX_DIM, &hp->n_ctx)) ||
        (st = get_dim(m, "embedding_length", MAX_DIM, &hp->n_embd)) ||
        (st = get_dim(m, "feed_forward_length", MAX_DIM, &hp->n_ff)) ||
        (st = get_dim(m, "block_count", MAX_LAYERS, &hp->n_layer)) ||
        (st = get_dim(m, "attention.head_count", MAX_DIM, &hp->n_head)))
        return st;
    if (hp->n_embd % hp->n_head != 0)
        return sac_fail(&m->error, SAC_ERR_MODEL, "embedding_length %d is not a multiple of head_count %d",
                        hp->n_embd, hp->n_head);
    hp->head_dim = hp->n_embd / hp->n_head;
    hp->n_head_kv = hp->n_head;

    if (m->arch != SAC_ARCH_LLAMA) {
        char key[96];
        arch_key(m, "attention.layer_norm_epsilon", key, sizeof key);
        if ((st = sac_gguf_get_f32(&m->gguf, key, &hp->norm_eps, &m->error))) return st;
        if (m->arch == SAC_ARCH_ENCDEC &&
            (st = get_dim(m, "encoder.block_count", MAX_LAYERS, &hp->n_encoder_layer)))
            return st;
        if (m->arch == SAC_ARCH_ENCDEC && hp->n_embd % 2)
            return sac_fail(&m->error, SAC_ERR_MODEL, "encdec embedding_length %d must be even (sinusoids)", hp->n_embd);
        return SAC_OK;
    }

    /* llama */
    char key[96];
    arch_key(m, "attention.head_count_kv", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key) && (st = get_dim(m, "attention.head_count_kv", MAX_DIM, &hp->n_head_kv)))
        return st;
    if (hp->n_head % hp->n_head_kv != 0)
        return sac_fail(&m->error, SAC_ERR_MODEL, "head_count %d is not a multiple of head_count_kv %d",
                        hp->n_head, hp->n_head_kv);
    arch_key(m, "attention.layer_norm_rms_epsilon", key, sizeof key);
    if ((st = sac_gguf_get_f32(&m->gguf, key, &hp->norm_eps, &m->error))) return st;
    if ((st = get_float_or(m, "rope.freq_base", 10000.0f, &hp->rope_freq_base))) return st;
    if (!(hp->rope_freq_base > 0.0f))
        return sac_fail(&m->error, SAC_ERR_MODEL, "rope.freq_base must be positive, got %g",
                        (double)hp->rope_freq_base);
    hp->rope_dim = hp->head_dim;
    arch_key(m, "rope.dimension_count", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key)) {
        if ((st = get_dim(m, "rope.dimension_count", hp->head_dim, &hp->rope_dim))) return st;
        if (hp->rope_dim % 2)
            return sac_fail(&m->error, SAC_ERR_MODEL, "rope.dimension_count %d must be even", hp->rope_dim);
    }
    if (!(hp->norm_eps >= 0.0f))
        return sac_fail(&m->error, SAC_ERR_MODEL, "normalisation epsilon must be >= 0");
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Tensors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const gguf_tensor *find_tensor(sac_model *m, const char *name, int required) {
    const gguf_tensor *t = sac_gguf_find_tensor(&m->gguf, name);
    if (!t && required)
        sac_fail(&m->error, SAC_ERR_MODEL, "missing tensor '%s' (required by architecture %s)", name,
                 m->arch_name);
    return t;
}

/* Binds a 2-D weight of dims [n_in, n_out]. Returns 0 when absent and not required. */
static sac_status bind_matrix(sac_model *m, const char *name, int64_t n_in, int64_t n_out, int required,
                              sac_matrix *out) {
    const gguf_tensor *t = find_tensor(m, name, required);
    if (!t) return required ? SAC_ERR_MODEL : SAC_OK;
    if (t->n_dims != 2 || (int64_t)t->ne[0] != n_in || (int64_t)t->ne[1] != n_out)
        return sac_fail(&m->error, SAC_ERR_MODEL,
                        "tensor '%s' has shape [%" PRIu64 ", %" PRIu64 "%s], expected [%" PRId64 ", %" PRId64 "]",
                        name, t->ne[0], t->n_dims > 1 ? t->ne[1] : 1, t->n_dims > 2 ? ", ..." : "", n_in, n_out);
    out->type = t->type;
    out->n_in = n_in;
    out->n_out = n_out;
    out->data = t->data;
    return SAC_OK;
}

/* Binds a 1-D parameter of n values; non-F32 storage is converted into m->converted,
 * whose cursor `*used` (in floats) advances. First pass (m->converted == NULL) only counts. */
static sac_status bind_vector(sac_model *m, const char *name, int64_t n, int required, size_t *used,
                              sac_vector *out) {
    const gguf_tensor *t = find_tensor(m, name, required);
    if (!t) return required ? SAC_ERR_MODEL : SAC_OK;
    if (t->n_dims != 1 || (int64_t)t->ne[0] != n)
        return sac_fail(&m->error, SAC_ERR_MODEL, "tensor '%s' has %" PRIu64 " values in %u dims, expected %" PRId64
                        " in 1 dim", name, t->n_elements, t->n_dims, n);
    out->n = n;
    if (t->type == SAC_TYPE_F32) {
        out->data = t->data;
        return SAC_OK;
    }
    if (m->converted) {
        float *dst = (float *)m->converted + *used;
        sac_type_traits_get(t->type)->to_float(t->data, dst, n);
        out->data = dst;
    }
    *used += (size_t)n;
    return SAC_OK;
}

/* Binds one block; `prefix` is "blk.%d." (gpt2, llama), "enc.blk.%d." or "dec.blk.%d." (encdec). */
static sac_status bind_layer(sac_model *m, const char *prefix, int il, sac_layer *L, size_t *used) {
    const sac_model_info *hp = &m->info;
    const int64_t E = hp->n_embd, F = hp->n_ff, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    char base[32], name[96];
    sac_status st;
    snprintf(base, sizeof base, prefix, il);
#define NAME(suffix) (snprintf(name, sizeof name, "%s" suffix, base), name)
    if (m->arch == SAC_ARCH_LLAMA) {
        if ((st = bind_vector(m, NAME("attn_norm.weight"), E, 1, used, &L->attn_norm)) ||
            (st = bind_matrix(m, NAME("attn_q.weight"), E, E, 1, &L->wq)) ||
            (st = bind_matrix(m, NAME("attn_k.weight"), E, KV, 1, &L->wk)) ||
            (st = bind_matrix(m, NAME("attn_v.weight"), E, KV, 1, &L->wv)) ||
            (st = bind_matrix(m, NAME("attn_output.weight"), E, E, 1, &L->wo)) ||
            (st = bind_vector(m, NAME("ffn_norm.weight"), E, 1, used, &L->ffn_norm)) ||
            (st = bind_matrix(m, NAME("ffn_gate.weight"), E, F, 1, &L->w_gate)) ||
            (st = bind_matrix(m, NAME("ffn_up.weight"), E, F, 1, &L->w_up)) ||
            (st = bind_matrix(m, NAME("ffn_down.weight"), F, E, 1, &L->w_down)))
            return st;
        return SAC_OK;
    }
    if ((st = bind_vector(m, NAME("attn_norm.weight"), E, 1, used, &L->attn_norm)) ||
        (st = bind_vector(m, NAME("attn_norm.bias"), E, 1, used, &L->attn_norm_b)) ||
        (st = bind_matrix(m, NAME("attn_qkv.weight"), E, 3 * E, 1, &L->wqkv)) ||
        (st = bind_vector(m, NAME("attn_qkv.bias"), 3 * E, 1, used, &L->bqkv)) ||
        (st = bind_matrix(m, NAME("attn_output.weight"), E, E, 1, &L->wo)) ||
        (st = bind_vector(m, NAME("attn_output.bias"), E, 1, used, &L->bo)) ||
        (st = bind_vector(m, NAME("ffn_norm.weight"), E, 1, used, &L->ffn_norm)) ||
        (st = bind_vector(m, NAME("ffn_norm.bias"), E, 1, used, &L->ffn_norm_b)) ||
        (st = bind_matrix(m, NAME("ffn_up.weight"), E, F, 1, &L->w_up)) ||
        (st = bind_vector(m, NAME("ffn_up.bias"), F, 1, used, &L->b_up)) ||
        (st = bind_matrix(m, NAME("ffn_down.weight"), F, E, 1, &L->w_down)) ||
        (st = bind_vector(m, NAME("ffn_down.bias"), E, 1, used, &L->b_down)))
        return st;
    if (m->arch == SAC_ARCH_ENCDEC && prefix[0] == 'd' &&
        ((st = bind_vector(m, NAME("cross_attn_norm.weight"), E, 1, used, &L->cross_norm)) ||
         (st = bind_vector(m, NAME("cross_attn_norm.bias"), E, 1, used, &L->cross_norm_b)) ||
         (st = bind_matrix(m, NAME("cross_attn_q.weight"), E, E, 1, &L->cross_q)) ||
         (st = bind_vector(m, NAME("cross_attn_q.bias"), E, 1, used, &L->cross_bq)) ||
         (st = bind_matrix(m, NAME("cross_attn_kv.weight"), E, 2 * E, 1, &L->cross_kv)) ||
         (st = bind_vector(m, NAME("cross_attn_kv.bias"), 2 * E, 1, used, &L->cross_bkv)) ||
         (st = bind_matrix(m, NAME("cross_attn_output.weight"), E, E, 1, &L->cross_o)) ||
         (st = bind_vector(m, NAME("cross_attn_output.bias"), E, 1, used, &L->cross_bo))))
        return st;
#undef NAME
    return SAC_OK;
}

/* Binds every tensor. Called twice: to count the floats 1-D conversions need, then to bind. */
static sac_status bind_all(sac_model *m, size_t *used) {
    const sac_model_info *hp = &m->info;
    sac_status st;
    *used = 0;
    const gguf_tensor *embd = find_tensor(m, "token_embd.weight", 1);
    if (!embd) return SAC_ERR_MODEL;
    if (embd->n_dims != 2 || embd->ne[1] > MAX_DIM * 4u)
        return sac_fail(&m->error, SAC_ERR_MODEL, "tensor 'token_embd.weight' must be 2-D [n_embd, n_vocab]");
    int64_t n_vocab = (int64_t)embd->ne[1];
    if ((st = bind_matrix(m, "token_embd.weight", hp->n_embd, n_vocab, 1, &m->token_embd))) return st;
    m->info.n_vocab = (int32_t)n_vocab;
    if (m->arch == SAC_ARCH_GPT2 &&
        (st = bind_matrix(m, "position_embd.weight", hp->n_embd, hp->n_ctx, 1, &m->pos_embd)))
        return st;
    const int encdec = m->arch == SAC_ARCH_ENCDEC;
    for (int il = 0; il < hp->n_encoder_layer; il++)
        if ((st = bind_layer(m, "enc.blk.%d.", il, &m->enc_layers[il], used))) return st;
    if (encdec && ((st = bind_vector(m, "enc.output_norm.weight", hp->n_embd, 1, used, &m->enc_output_norm)) ||
                   (st = bind_vector(m, "enc.output_norm.bias", hp->n_embd, 1, used, &m->enc_output_norm_b))))
        return st;
    for (int il = 0; il < hp->n_layer; il++)
        if ((st = bind_layer(m, encdec ? "dec.blk.%d." : "blk.%d.", il, &m->layers[il], used))) return st;
    if ((st = bind_vector(m, "output_norm.weight", hp->n_embd, 1, used, &m->output_norm))) return st;
    if (m->arch != SAC_ARCH_LLAMA &&
        (st = bind_vector(m, "output_norm.bias", hp->n_embd, 1, used, &m->output_norm_b)))
        return st;
    m->output = m->token_embd;
    m->info.tied_output = 1;
    if (sac_gguf_find_tensor(&m->gguf, "output.weight")) {
        if ((st = bind_matrix(m, "output.weight", hp->n_embd, n_vocab, 1, &m->output))) return st;
        m->info.tied_output = 0;
    }
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Loading                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static sac_status load_tokenizer(sac_model *m) {
    sac_status st = sac_tokenizer_load(&m->gguf, &m->tokenizer, &m->error);
    if (st) return st;
    m->info.has_tokenizer = m->tokenizer != NULL;
    return SAC_OK;
}

static sac_status load(sac_model *m, const void *data, size_t size, int vocab_only) {
    sac_status st = sac_gguf_parse(&m->gguf, data, size, &m->error);
    if (st != SAC_OK) return st;
    m->info.gguf_version = m->gguf.version;
    if (vocab_only) {
        if ((st = load_tokenizer(m))) return st;
        if (!m->tokenizer) return sac_fail(&m->error, SAC_ERR_MODEL, "the file has no tokenizer metadata (tokenizer.ggml.model)");
        m->vocab_only = 1;
        m->info.architecture = "";
        m->info.name = "";
        m->info.n_vocab = sac_tokenizer_n_vocab(m->tokenizer);
        m->loaded = 1;
        return SAC_OK;
    }

    gguf_string arch;
    if (!sac_gguf_find_kv(&m->gguf, "general.architecture"))
        return sac_fail(&m->error, SAC_ERR_MODEL, "missing metadata key 'general.architecture'");
    if ((st = sac_gguf_get_string(&m->gguf, "general.architecture", &arch, &m->error))) return st;
    static const char *const arch_names[] = {"gpt2", "llama", "encdec"};
    int found = 0;
    for (int a = 0; a < 3; a++)
        if (sac_gguf_string_eq(arch, arch_names[a])) {
            m->arch = (enum sac_arch)a;
            found = 1;
        }
    if (!found)
        return sac_fail(&m->error, SAC_ERR_UNSUPPORTED,
                        "unknown architecture '%.*s' (saccade supports gpt2, llama and encdec)",
                        (int)(arch.len > 64 ? 64 : arch.len), arch.data);
    snprintf(m->arch_name, sizeof m->arch_name, "%s", arch_names[m->arch]);
    m->info.architecture = m->arch_name;
    gguf_string name;
    if (sac_gguf_find_kv(&m->gguf, "general.name") &&
        sac_gguf_get_string(&m->gguf, "general.name", &name, NULL) == SAC_OK)
        snprintf(m->name, sizeof m->name, "%.*s", (int)(name.len > 127 ? 127 : name.len), name.data);
    m->info.name = m->name;

    if ((st = read_hparams(m))) return st;

    m->layers = calloc((size_t)m->info.n_layer, sizeof *m->layers);
    m->enc_layers = calloc((size_t)m->info.n_encoder_layer + 1, sizeof *m->enc_layers);
    if (!m->layers || !m->enc_layers)
        return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory for %d layers", m->info.n_layer);
    size_t n_converted;
    if ((st = bind_all(m, &n_converted))) return st;
    if (n_converted) {
        m->converted = malloc(n_converted * sizeof(float));
        if (!m->converted) return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory converting 1-D parameters");
        if ((st = bind_all(m, &n_converted))) return st;
    }

    for (uint64_t i = 0; i < m->gguf.n_tensors; i++) {
        m->info.n_params += m->gguf.tensors[i].n_elements;
        m->info.n_bytes += m->gguf.tensors[i].n_bytes;
    }

    if ((st = load_tokenizer(m))) return st;
    if (m->tokenizer && sac_tokenizer_n_vocab(m->tokenizer) > m->info.n_vocab)
        return sac_fail(&m->error, SAC_ERR_MODEL, "the tokenizer has %d tokens but token_embd.weight only %d rows",
                        sac_tokenizer_n_vocab(m->tokenizer), m->info.n_vocab);
    m->loaded = 1;
    return SAC_OK;
}

sac_status sac_model_load(const void *data, size_t size, uint32_t flags, sac_model **out) {
    if (!out) {
        if (flags & SAC_LOAD_TAKE_OWNERSHIP) free((void *)data);
        return SAC_ERR_ARG;
    }
    sac_model *m = calloc(1, sizeof *m);
    *out = m;
    if (!m) {
        if (flags & SAC_LOAD_TAKE_OWNERSHIP) free((void *)data);
        return SAC_ERR_NOMEM;
    }
    if (flags & SAC_LOAD_TAKE_OWNERSHIP) m->owned_buffer = (void *)data;
    if (!data && size > 0) return sac_fail(&m->error, SAC_ERR_ARG, "data is NULL but size is %zu", size);
    if (flags & ~(uint32_t)(SAC_LOAD_TAKE_OWNERSHIP | SAC_LOAD_VOCAB_ONLY))
        return sac_fail(&m->error, SAC_ERR_ARG, "unknown load flags 0x%x", (unsigned)flags);
    return load(m, data, size, (flags & SAC_LOAD_VOCAB_ONLY) != 0);
}

void sac_model_free(sac_model *m) {
    if (!m) return;
    sac_tokenizer_free(m->tokenizer);
    sac_gguf_release(&m->gguf);
    free(m->layers);
    free(m->enc_layers);
    free(m->converted);
    free(m->owned_buffer);
    free(m);
}

const char *sac_model_errmsg(const sac_model *m) {
    if (!m) return "out of memory (no model handle)";
    return m->error.msg;
}

void sac_model_get_info(const sac_model *m, sac_model_info *info) {
    if (!info) return;
    if (!m || !m->loaded) {
        memset(info, 0, sizeof *info);
        info->architecture = "";
        info->name = "";
        return;
    }
    *info = m->info;
}

int32_t sac_model_n_tensors(const sac_model *m) { return m && m->loaded ? (int32_t)m->gguf.n_tensors : 0; }

sac_status sac_model_tensor(sac_model *m, int32_t index, const char **name, const char **type_name,
                            int32_t *n_dims, int64_t dims[4]) {
    if (!m || !m->loaded) return SAC_ERR_STATE;
    if (index < 0 || (uint64_t)index >= m->gguf.n_tensors)
        return sac_fail(&m->error, SAC_ERR_ARG, "tensor index %d out of range (0..%" PRIu64 ")", index,
                        m->gguf.n_tensors);
    const gguf_tensor *t = &m->gguf.tensors[index];
    /* Names in the file are not NUL-terminated: render into scratch. */
    snprintf(m->meta_key, sizeof m->meta_key, "%.*s", (int)(t->name.len > 255 ? 255 : t->name.len), t->name.data);
    if (name) *name = m->meta_key;
    if (type_name) *type_name = sac_type_name(t->type);
    if (n_dims) *n_dims = (int32_t)t->n_dims;
    if (dims)
        for (int d = 0; d < 4; d++) dims[d] = d < (int)t->n_dims ? (int64_t)t->ne[d] : 1;
    return SAC_OK;
}

int32_t sac_model_n_metadata(const sac_model *m) { return m && m->loaded ? (int32_t)m->gguf.n_kv : 0; }

sac_status sac_model_metadata(sac_model *m, int32_t index, const char **key, const char **value) {
    if (!m || !m->loaded) return SAC_ERR_STATE;
    if (index < 0 || (uint64_t)index >= m->gguf.n_kv)
        return sac_fail(&m->error, SAC_ERR_ARG, "metadata index %d out of range (0..%" PRIu64 ")", index,
                        m->gguf.n_kv);
    const gguf_kv *kv = &m->gguf.kv[index];
    char *v = m->meta_value;
    size_t cap = sizeof m->meta_value;
    snprintf(m->meta_key, sizeof m->meta_key, "%.*s", (int)(kv->key.len > 255 ? 255 : kv->key.len), kv->key.data);
    switch (kv->type) {
    case GGUF_TYPE_STRING:
        snprintf(v, cap, "%.*s", (int)(kv->str.len > cap - 1 ? cap - 1 : kv->str.len), kv->str.data);
        break;
    case GGUF_TYPE_F32:
    case GGUF_TYPE_F64: snprintf(v, cap, "%.9g", kv->f64); break;
    case GGUF_TYPE_BOOL: snprintf(v, cap, "%s", kv->i64 ? "true" : "false"); break;
    case GGUF_TYPE_U64: snprintf(v, cap, "%" PRIu64, kv->u64); break;
    case GGUF_TYPE_ARRAY:
        snprintf(v, cap, "[%s; %" PRIu64 "]", sac_gguf_value_type_name(kv->arr_type), kv->arr_count);
        break;
    default: snprintf(v, cap, "%" PRId64, kv->i64); break;
    }
    if (key) *key = m->meta_key;
    if (value) *value = m->meta_value;
    return SAC_OK;
}

void sac_matrix_get_row(const sac_matrix *m, int64_t row, float *out) {
    const sac_type_traits *tt = sac_type_traits_get(m->type);
    size_t row_bytes = (size_t)(m->n_in / tt->block_size) * tt->type_size;
    tt->to_float((const uint8_t *)m->data + (size_t)row * row_bytes, out, m->n_in);
}
