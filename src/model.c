/* model.c — from GGUF bytes to a model: architecture, hyperparameters, and every weight
 * bound by name and checked against the shape the architecture expects.
 *
 * gpt2, llama and qwen2 use the names llama.cpp's converters write (see gguf-notes.md), and
 * bind the tensors llama.cpp's loader binds for them: llama may carry Q/K/V/output biases and
 * rope_freqs.weight (Llama 3.x's per-pair frequency divisors); qwen2 is llama with required
 * Q/K/V biases and NEOX-style RoPE (pairs (i, i + rope_dim/2)). gemma (the first Gemma) is
 * llama with NEOX RoPE, embeddings scaled by √n_embd, a GELU-gated feed-forward and the output
 * always tied to token_embd (llama.cpp reads no output.weight); its converter already stores
 * RMSNorm weights as 1 + w, so the norm is the plain one. phi3 is llama with NEOX RoPE, Q|K|V
 * fused in attn_qkv.weight [E, E + 2·KV] (or separate, as llama.cpp accepts both) and gate|up
 * fused in ffn_up.weight [E, 2F] (gate rows first); its LongRoPE factor tensors are refused. "encdec" is
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

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_split.h"
#include "types.h"
#include "unicode.h"

/* Sanity bounds: far above any model that fits in wasm memory, low enough that products of
 * them cannot overflow the size arithmetic of the context. */
#define MAX_DIM (1 << 20)
#define MAX_LAYERS 4096

static sac_status render_text(sac_model *m, gguf_string s, char **buf, size_t *cap);

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

/* A required float hyperparameter "<arch>.<suffix>" in [lo, hi]; NaN and infinities fail. */
static sac_status get_float_in(sac_model *m, const char *suffix, float lo, float hi, const char *why, float *out) {
    char key[96];
    arch_key(m, suffix, key, sizeof key);
    sac_status st = sac_gguf_get_f32(&m->gguf, key, out, &m->error);
    if (st != SAC_OK) return st;
    if (!(*out >= lo && *out <= hi))
        return sac_fail(&m->error, SAC_ERR_MODEL, "metadata key '%s' is %g, expected %g..%g (%s)", key,
                        (double)*out, (double)lo, (double)hi, why);
    return SAC_OK;
}

/* RoPE scaling as llama.cpp reads it: rope.scaling.type (absent means "linear") and
 * rope.scaling.factor (or the older rope.scale_linear; absent or 0 means 1). Linear scaling
 * multiplies every angle by 1 / factor; "none" ignores the factor. YaRN and LongRoPE change
 * more than the angles and are refused by name. */
static sac_status read_rope_scaling(sac_model *m) {
    sac_model_info *hp = &m->info;
    char key[96];
    sac_status st;
    float factor = 0.0f;
    hp->rope_freq_scale = 1.0f;
    arch_key(m, "rope.scaling.factor", key, sizeof key);
    if (!sac_gguf_find_kv(&m->gguf, key)) arch_key(m, "rope.scale_linear", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key)) {
        if ((st = sac_gguf_get_f32(&m->gguf, key, &factor, &m->error))) return st;
        /* bounded so that angles stay within 1000 × the position */
        if (!(factor == 0.0f || (factor >= 1e-3f && factor <= 1e6f)))
            return sac_fail(&m->error, SAC_ERR_MODEL, "metadata key '%s' is %g, expected 0 (unset) or 0.001..1e+06 "
                            "(a RoPE scaling factor)", key, (double)factor);
    }
    arch_key(m, "rope.scaling.type", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key)) {
        gguf_string type;
        if ((st = sac_gguf_get_string(&m->gguf, key, &type, &m->error))) return st;
        if (sac_gguf_string_eq(type, "none")) return SAC_OK;
        if (!sac_gguf_string_eq(type, "linear")) {
            if ((st = render_text(m, type, &m->meta_value, &m->meta_value_cap))) return st;
            gguf_string shown = {m->meta_value, strlen(m->meta_value)};
            return sac_fail(&m->error, SAC_ERR_UNSUPPORTED, "metadata key '%s' asks for '%.*s' RoPE scaling, which "
                            "saccade does not implement (only 'none' and 'linear')", key,
                            sac_gguf_clip(shown, 64), shown.data);
        }
    }
    if (factor != 0.0f) hp->rope_freq_scale = 1.0f / factor;
    return SAC_OK;
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
    /* An epsilon that is NaN, negative or huge turns every normalisation into NaN or zeros. */
    if ((st = get_float_in(m, sac_arch_llama_like(m->arch) ? "attention.layer_norm_rms_epsilon"
                                                       : "attention.layer_norm_epsilon",
                           0.0f, 1.0f, "a normalisation epsilon", &hp->norm_eps)))
        return st;

    if (m->arch == SAC_ARCH_ENCDEC) {
        if ((st = get_dim(m, "encoder.block_count", MAX_LAYERS, &hp->n_encoder_layer))) return st;
        if (hp->n_embd % 2)
            return sac_fail(&m->error, SAC_ERR_MODEL, "encdec embedding_length %d must be even (sinusoids)", hp->n_embd);
    }
    if (!sac_arch_llama_like(m->arch)) return SAC_OK;

    char key[96];
    arch_key(m, "attention.head_count_kv", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key) && (st = get_dim(m, "attention.head_count_kv", MAX_DIM, &hp->n_head_kv)))
        return st;
    if (hp->n_head % hp->n_head_kv != 0)
        return sac_fail(&m->error, SAC_ERR_MODEL, "head_count %d is not a multiple of head_count_kv %d",
                        hp->n_head, hp->n_head_kv);
    /* base >= 1 keeps every angle pos * base^(-2i/d) within [0, pos]; a smaller base can
     * overflow it to infinity. */
    hp->rope_freq_base = 10000.0f;
    arch_key(m, "rope.freq_base", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key) &&
        (st = get_float_in(m, "rope.freq_base", 1.0f, FLT_MAX, "a RoPE base", &hp->rope_freq_base)))
        return st;
    hp->rope_dim = hp->head_dim;
    arch_key(m, "rope.dimension_count", key, sizeof key);
    if (sac_gguf_find_kv(&m->gguf, key) && (st = get_dim(m, "rope.dimension_count", hp->head_dim, &hp->rope_dim)))
        return st;
    if (hp->rope_dim % 2) /* RoPE rotates pairs */
        return sac_fail(&m->error, SAC_ERR_MODEL, "the rotary dimension count %d must be even%s", hp->rope_dim,
                        sac_gguf_find_kv(&m->gguf, key) ? "" : " (it defaults to the head size)");
    hp->rope_neox = m->arch == SAC_ARCH_QWEN2 || m->arch == SAC_ARCH_GEMMA || m->arch == SAC_ARCH_PHI3;
    return read_rope_scaling(m);
}

static int in_list(gguf_string s, const char *const *list) {
    for (; *list; list++)
        if (sac_gguf_string_eq(s, *list)) return 1;
    return 0;
}

static int is_hparam_read(const sac_model *m, gguf_string suffix) {
    static const char *const common[] = {"context_length", "embedding_length", "feed_forward_length",
                                         "block_count", "attention.head_count", NULL};
    static const char *const gpt2[] = {"attention.layer_norm_epsilon", NULL};
    static const char *const encdec[] = {"attention.layer_norm_epsilon", "encoder.block_count", NULL};
    static const char *const llama[] = {"attention.layer_norm_rms_epsilon", "attention.head_count_kv",
                                        "rope.freq_base", "rope.dimension_count", "rope.scaling.type",
                                        "rope.scaling.factor", "rope.scale_linear", NULL};
    const char *const *own = sac_arch_llama_like(m->arch) ? llama : m->arch == SAC_ARCH_ENCDEC ? encdec : gpt2;
    return in_list(suffix, common) || in_list(suffix, own);
}

/* An integer key that must equal `want` (what saccade computes with). */
static sac_status expect_int(sac_model *m, const char *key, uint32_t want, const char *meaning) {
    uint32_t v;
    sac_status st = sac_gguf_get_u32(&m->gguf, key, &v, &m->error);
    if (st != SAC_OK) return st;
    if (v != want)
        return sac_fail(&m->error, SAC_ERR_UNSUPPORTED, "metadata key '%s' is %" PRIu32 ", but %s is %" PRIu32
                        "; saccade does not implement that", key, v, meaning, want);
    return SAC_OK;
}

static sac_status check_arch_key(sac_model *m, const gguf_kv *kv, gguf_string suffix) {
    const sac_model_info *hp = &m->info;
    const int llama = sac_arch_llama_like(m->arch);
    char key[160];
    snprintf(key, sizeof key, "%.*s", sac_gguf_clip(kv->key, 150), kv->key.data);
    if (sac_gguf_string_eq(suffix, "vocab_size"))
        return expect_int(m, key, (uint32_t)hp->n_vocab, "the number of rows of token_embd.weight");
    if (sac_gguf_string_eq(suffix, "attention.key_length") || sac_gguf_string_eq(suffix, "attention.value_length"))
        return expect_int(m, key, (uint32_t)hp->head_dim, "the head size (embedding_length / head_count)");
    if (sac_gguf_string_eq(suffix, "attention.head_count_kv"))
        return expect_int(m, key, (uint32_t)hp->n_head, "head_count (this architecture has no grouped-query attention)");
    if (sac_gguf_string_eq(suffix, "expert_count") || sac_gguf_string_eq(suffix, "expert_used_count"))
        return expect_int(m, key, 0, "the number of experts (saccade has no mixture of experts)");
    /* llama.cpp disables phi3's sliding window (its converter does not describe it right,
     * llama.cpp PR 13676) and attends over the whole context; saccade computes the same. */
    if (m->arch == SAC_ARCH_PHI3 && sac_gguf_string_eq(suffix, "attention.sliding_window")) return SAC_OK;
    /* With no scaling or linear scaling these only describe the training; the layout key
     * names the Q/K permutation the converter already applied. */
    if (llama && (sac_gguf_string_eq(suffix, "rope.scaling.original_context_length") ||
                  sac_gguf_string_eq(suffix, "rope.scaling.finetuned") ||
                  sac_gguf_string_eq(suffix, "tensor_data_layout")))
        return SAC_OK;
    return sac_fail(&m->error, SAC_ERR_UNSUPPORTED,
                    "metadata key '%s' is not implemented for architecture %s; saccade refuses the file "
                    "rather than ignore it", key, m->arch_name);
}

/* Keys under "<arch>." describe the computation, so each is either read by read_hparams or
 * holds the value saccade implements; any other would be ignored and the model would run
 * differently from how it was trained (RoPE scaling, experts, ...), so it is refused. */
static sac_status check_arch_keys(sac_model *m) {
    const size_t n = strlen(m->arch_name);
    for (uint64_t i = 0; i < m->gguf.n_kv; i++) {
        const gguf_kv *kv = &m->gguf.kv[i];
        if (kv->key.len <= n || memcmp(kv->key.data, m->arch_name, n) != 0 || kv->key.data[n] != '.') continue;
        gguf_string suffix = {kv->key.data + n + 1, kv->key.len - n - 1};
        if (is_hparam_read(m, suffix)) continue;
        sac_status st = check_arch_key(m, kv, suffix);
        if (st != SAC_OK) return st;
    }
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Tensors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const gguf_tensor *find_tensor(sac_model *m, const char *name, int required) {
    const gguf_tensor *t = sac_gguf_find_tensor(&m->gguf, name);
    if (t) m->bound[t - m->gguf.tensors] = 1;
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
    out->finite = 1; /* check_finite refuses the model before any use otherwise */
    return SAC_OK;
}

/* Binds a 1-D parameter of n values; non-F32 storage is converted into m->converted,
 * whose cursor `*used` (in floats) advances. First pass (m->converted == NULL) only counts. */
static sac_status bind_vector(sac_model *m, const char *name, int64_t n, int required, uint64_t *used,
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
    *used += (uint64_t)n; /* no overflow: the sum of tensor sizes is bounded by the file */
    return SAC_OK;
}

/* Rows [first, first + count) of a bound matrix, as a matrix of its own (a fused weight's part). */
static sac_matrix matrix_rows(const sac_matrix *w, int64_t first, int64_t count) {
    size_t row_bytes = 0;
    sac_type_row_bytes(w->type, w->n_in, &row_bytes); /* cannot fail: the tensor was bound */
    sac_matrix part = *w;
    part.n_out = count;
    part.data = (const char *)w->data + (size_t)first * row_bytes;
    return part;
}

/* phi3: Q|K|V fused in attn_qkv.weight, or separate; gate|up fused in ffn_up.weight. */
static sac_status bind_phi3_layer(sac_model *m, const char *base, sac_layer *L, uint64_t *used) {
    const sac_model_info *hp = &m->info;
    const int64_t E = hp->n_embd, F = hp->n_ff, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    char name[96];
    sac_status st;
#define NAME(suffix) (snprintf(name, sizeof name, "%s" suffix, base), name)
    if (sac_gguf_find_tensor(&m->gguf, NAME("attn_qkv.weight"))) {
        sac_matrix qkv;
        if ((st = bind_matrix(m, name, E, E + 2 * KV, 1, &qkv))) return st;
        L->wq = matrix_rows(&qkv, 0, E);
        L->wk = matrix_rows(&qkv, E, KV);
        L->wv = matrix_rows(&qkv, E + KV, KV);
    } else if ((st = bind_matrix(m, NAME("attn_q.weight"), E, E, 1, &L->wq)) ||
               (st = bind_matrix(m, NAME("attn_k.weight"), E, KV, 1, &L->wk)) ||
               (st = bind_matrix(m, NAME("attn_v.weight"), E, KV, 1, &L->wv))) {
        return st;
    }
    sac_matrix gate_up;
    if ((st = bind_vector(m, NAME("attn_norm.weight"), E, 1, used, &L->attn_norm)) ||
        (st = bind_matrix(m, NAME("attn_output.weight"), E, E, 1, &L->wo)) ||
        (st = bind_vector(m, NAME("ffn_norm.weight"), E, 1, used, &L->ffn_norm)) ||
        (st = bind_matrix(m, NAME("ffn_up.weight"), E, 2 * F, 1, &gate_up)) ||
        (st = bind_matrix(m, NAME("ffn_down.weight"), F, E, 1, &L->w_down)))
        return st;
#undef NAME
    L->w_gate = matrix_rows(&gate_up, 0, F);
    L->w_up = matrix_rows(&gate_up, F, F);
    return SAC_OK;
}

/* Binds one block; `prefix` is "blk.%d." (gpt2, llama), "enc.blk.%d." or "dec.blk.%d." (encdec). */
static sac_status bind_layer(sac_model *m, const char *prefix, int il, sac_layer *L, uint64_t *used) {
    const sac_model_info *hp = &m->info;
    const int64_t E = hp->n_embd, F = hp->n_ff, KV = (int64_t)hp->n_head_kv * hp->head_dim;
    char base[32], name[96];
    sac_status st;
    snprintf(base, sizeof base, prefix, il);
    if (m->arch == SAC_ARCH_PHI3) return bind_phi3_layer(m, base, L, used);
#define NAME(suffix) (snprintf(name, sizeof name, "%s" suffix, base), name)
    if (sac_arch_llama_like(m->arch)) {
        /* Q/K/V biases: required in qwen2, optional in llama (as is the output bias), none in gemma */
        const int llama = m->arch == SAC_ARCH_LLAMA, qwen2 = m->arch == SAC_ARCH_QWEN2, qkv_bias = llama || qwen2;
        if ((st = bind_vector(m, NAME("attn_norm.weight"), E, 1, used, &L->attn_norm)) ||
            (st = bind_matrix(m, NAME("attn_q.weight"), E, E, 1, &L->wq)) ||
            (qkv_bias && (st = bind_vector(m, NAME("attn_q.bias"), E, qwen2, used, &L->bq))) ||
            (st = bind_matrix(m, NAME("attn_k.weight"), E, KV, 1, &L->wk)) ||
            (qkv_bias && (st = bind_vector(m, NAME("attn_k.bias"), KV, qwen2, used, &L->bk))) ||
            (st = bind_matrix(m, NAME("attn_v.weight"), E, KV, 1, &L->wv)) ||
            (qkv_bias && (st = bind_vector(m, NAME("attn_v.bias"), KV, qwen2, used, &L->bv))) ||
            (st = bind_matrix(m, NAME("attn_output.weight"), E, E, 1, &L->wo)) ||
            (llama && (st = bind_vector(m, NAME("attn_output.bias"), E, 0, used, &L->bo))) ||
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
static sac_status bind_all(sac_model *m, uint64_t *used) {
    const sac_model_info *hp = &m->info;
    sac_status st;
    *used = 0;
    const gguf_tensor *embd = find_tensor(m, "token_embd.weight", 1);
    if (!embd) return SAC_ERR_MODEL;
    if (embd->n_dims != 2)
        return sac_fail(&m->error, SAC_ERR_MODEL, "tensor 'token_embd.weight' must be 2-D [n_embd, n_vocab]");
    if (embd->ne[1] > MAX_DIM * 4u)
        return sac_fail(&m->error, SAC_ERR_MODEL, "tensor 'token_embd.weight' has %" PRIu64 " rows (tokens): at most %u",
                        embd->ne[1], MAX_DIM * 4u);
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
    if (!sac_arch_llama_like(m->arch) &&
        (st = bind_vector(m, "output_norm.bias", hp->n_embd, 1, used, &m->output_norm_b)))
        return st;
    if (m->arch == SAC_ARCH_LLAMA &&
        (st = bind_vector(m, "rope_freqs.weight", hp->rope_dim / 2, 0, used, &m->rope_freqs)))
        return st;
    m->output = m->token_embd;
    m->info.tied_output = 1;
    if (m->arch != SAC_ARCH_GEMMA && sac_gguf_find_tensor(&m->gguf, "output.weight")) {
        if ((st = bind_matrix(m, "output.weight", hp->n_embd, n_vocab, 1, &m->output))) return st;
        m->info.tied_output = 0;
    }
    return SAC_OK;
}

/* A tensor the architecture does not bind would be ignored, and the model would compute
 * something other than what was trained (a bias, RoPE frequency factors, ...): refuse it. */
static sac_status check_all_bound(sac_model *m) {
    for (uint64_t i = 0; i < m->gguf.n_tensors; i++)
        if (!m->bound[i]) {
            const gguf_string name = m->gguf.tensors[i].name;
            return sac_fail(&m->error, SAC_ERR_UNSUPPORTED,
                            "tensor '%.*s' is not used by architecture %s; saccade refuses the file rather "
                            "than ignore it", sac_gguf_clip(name, 150), name.data, m->arch_name);
        }
    return SAC_OK;
}

/* RoPE frequency factors divide the frequencies: zero or a negative factor has no meaning. */
static sac_status check_rope_freqs(sac_model *m) {
    m->info.rope_freq_factors = m->rope_freqs.data != NULL;
    for (int64_t i = 0; m->rope_freqs.data && i < m->rope_freqs.n; i++)
        if (!(m->rope_freqs.data[i] > 0.0f))
            return sac_fail(&m->error, SAC_ERR_MODEL, "tensor 'rope_freqs.weight' holds %g at element %" PRId64
                            "; RoPE frequency factors must be positive", (double)m->rope_freqs.data[i], i);
    return SAC_OK;
}

/* Every weight is finite: one NaN or infinity makes every later logit NaN. Each tensor's
 * type says so from the bits that decide it (its finite check reads a block's scales, not
 * its values); only a tensor that fails is decoded, in chunks, to name the first bad value. */
static sac_status check_finite(sac_model *m) {
    enum { CHUNK = 1024 }; /* a multiple of every block size */
    float buf[CHUNK];
    for (uint64_t i = 0; i < m->gguf.n_tensors; i++) {
        const gguf_tensor *t = &m->gguf.tensors[i];
        const sac_type_traits *tt = sac_type_traits_get(t->type);
        if (tt->finite(t->data, (int64_t)t->n_elements)) continue;
        const uint8_t *p = t->data;
        for (uint64_t done = 0; done < t->n_elements; done += CHUNK) {
            int64_t k = (int64_t)(t->n_elements - done < CHUNK ? t->n_elements - done : CHUNK);
            tt->to_float(p, buf, k);
            p += (size_t)(k / tt->block_size) * tt->type_size;
            int ok = 1;
            for (int64_t j = 0; j < k; j++) ok &= isfinite(buf[j]) != 0;
            if (ok) continue;
            int64_t j = 0;
            while (isfinite(buf[j])) j++;
            return sac_fail(&m->error, SAC_ERR_MODEL, "tensor '%.*s' holds a non-finite value (%s) at element %" PRIu64,
                            sac_gguf_clip(t->name, 150), t->name.data, buf[j] != buf[j] ? "NaN" : "infinity",
                            done + (uint64_t)j);
        }
    }
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Text from the file                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* Renders a string from the file as C text for the API: ill-formed UTF-8 becomes U+FFFD, one
 * per maximal subpart, exactly as JavaScript's TextDecoder reads it, and so does NUL, which a
 * C string cannot carry. *buf grows as needed (to at most 3 bytes per input byte + 1). */
static sac_status reserve(sac_model *m, char **buf, size_t *cap, uint64_t need) {
    if (need <= *cap) return SAC_OK;
    char *grown = need <= SIZE_MAX ? realloc(*buf, (size_t)need) : NULL;
    if (!grown) return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory rendering %" PRIu64 " bytes of text", need);
    *buf = grown;
    *cap = (size_t)need;
    return SAC_OK;
}

static sac_status render_text(sac_model *m, gguf_string s, char **buf, size_t *cap) {
    uint64_t need = UINT64_MAX;
    if (sac_mul_u64(s.len, 3, &need)) sac_add_u64(need, 1, &need);
    sac_status st = reserve(m, buf, cap, need);
    if (st != SAC_OK) return st;
    const uint8_t *in = (const uint8_t *)s.data;
    size_t i = 0, o = 0;
    while (i < s.len) {
        uint32_t cp;
        size_t len;
        if (sac_utf8_next(in + i, (size_t)s.len - i, &cp, &len) == SAC_UTF8_OK && cp != 0) {
            memcpy(*buf + o, in + i, len);
            o += len;
        } else {
            memcpy(*buf + o, SAC_REPLACEMENT_UTF8, 3);
            o += 3;
        }
        i += len;
    }
    (*buf)[o] = '\0';
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

/* general.architecture: one of the names saccade implements, exactly. */
static sac_status read_architecture(sac_model *m) {
    static const char *const arch_names[] = {"gpt2", "llama", "encdec", "qwen2", "gemma", "phi3"}; /* enum order */
    gguf_string arch;
    if (!sac_gguf_find_kv(&m->gguf, "general.architecture"))
        return sac_fail(&m->error, SAC_ERR_MODEL, "missing metadata key 'general.architecture'");
    sac_status st = sac_gguf_get_string(&m->gguf, "general.architecture", &arch, &m->error);
    if (st != SAC_OK) return st;
    for (int a = 0; a < 6; a++)
        if (sac_gguf_string_eq(arch, arch_names[a])) {
            m->arch = (enum sac_arch)a;
            snprintf(m->arch_name, sizeof m->arch_name, "%s", arch_names[a]);
            m->info.architecture = m->arch_name;
            return SAC_OK;
        }
    if ((st = render_text(m, arch, &m->meta_value, &m->meta_value_cap))) return st;
    gguf_string shown = {m->meta_value, strlen(m->meta_value)};
    /* "gpt2\0evil" must not pass for (or be reported as) "gpt2" */
    if (arch.len && memchr(arch.data, 0, (size_t)arch.len))
        return sac_fail(&m->error, SAC_ERR_MODEL,
                        "metadata key 'general.architecture' contains a NUL byte ('%.*s'); a name cannot",
                        sac_gguf_clip(shown, 64), shown.data);
    return sac_fail(&m->error, SAC_ERR_UNSUPPORTED,
                    "unknown architecture '%.*s' (saccade supports gpt2, llama, qwen2, gemma, phi3 and encdec)",
                    sac_gguf_clip(shown, 64), shown.data);
}

/* Everything after parsing: m->gguf holds the whole model (one file, or joined shards). */
static sac_status load(sac_model *m, int vocab_only) {
    sac_status st;
    m->info.gguf_version = m->gguf.version;
    gguf_string name = {"", 0};
    if (sac_gguf_find_kv(&m->gguf, "general.name"))
        sac_gguf_get_string(&m->gguf, "general.name", &name, NULL); /* a non-string name is shown as "" */
    size_t cap = 0;
    if ((st = render_text(m, name, &m->name, &cap))) return st;
    m->info.name = m->name;
    if (vocab_only) {
        if ((st = load_tokenizer(m))) return st;
        if (!m->tokenizer) return sac_fail(&m->error, SAC_ERR_MODEL, "the file has no tokenizer metadata (tokenizer.ggml.model)");
        m->vocab_only = 1;
        m->info.architecture = "";
        m->info.n_vocab = sac_tokenizer_n_vocab(m->tokenizer);
        m->loaded = 1;
        return SAC_OK;
    }

    if ((st = read_architecture(m))) return st;

    if ((st = read_hparams(m))) return st;

    m->layers = calloc((size_t)m->info.n_layer, sizeof *m->layers);
    m->enc_layers = calloc((size_t)m->info.n_encoder_layer + 1, sizeof *m->enc_layers);
    m->bound = calloc((size_t)m->gguf.n_tensors + 1, 1); /* n_tensors fits: the parser allocated n of them */
    if (!m->layers || !m->enc_layers || !m->bound)
        return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory for %d layers", m->info.n_layer);
    uint64_t n_converted;
    if ((st = bind_all(m, &n_converted))) return st;
    if (n_converted) {
        if (n_converted > SIZE_MAX / sizeof(float) || !(m->converted = malloc((size_t)n_converted * sizeof(float))))
            return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory converting 1-D parameters");
        if ((st = bind_all(m, &n_converted))) return st;
    }
    if ((st = check_all_bound(m)) || (st = check_arch_keys(m)) || (st = check_finite(m)) ||
        (st = check_rope_freqs(m)))
        return st;

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

/* A file that is one shard of several cannot load alone (say which and what to do), but for
 * the first shard vocab-only: it holds every metadata key (gguf-split gives the others only
 * split.*), the tokenizer's among them, which makes a tokenizer without the weights' download. */
static sac_status check_loads_alone(sac_model *m, int vocab_only) {
    uint32_t no, count;
    sac_status st = sac_gguf_split_place(&m->gguf, &no, &count, &m->error);
    if (st) return st;
    if (count == 1 || (vocab_only && no == 0)) return SAC_OK;
    if (vocab_only)
        return sac_fail(&m->error, SAC_ERR_ARG,
                        "the file is shard %" PRIu32 " of a model split in %" PRIu32 " files ('split.count'); "
                        "the tokenizer is in the first shard, whose name ends in -00001-of-%05" PRIu32 ".gguf",
                        no + 1, count, count);
    return sac_fail(&m->error, SAC_ERR_ARG,
                    "the file is shard %" PRIu32 " of a model split in %" PRIu32 " files ('split.count'); "
                    "load every shard together (the first one's name ends in -00001-of-%05" PRIu32 ".gguf)",
                    no + 1, count, count);
}

static int known_flags(uint32_t flags) { return !(flags & ~(uint32_t)(SAC_LOAD_TAKE_OWNERSHIP | SAC_LOAD_VOCAB_ONLY)); }

/* One whole file (or a split in one shard, split.count = 1), for sac_model_load and for
 * sac_model_load_split with n = 1, so that both give the same verdict in the same words. */
static sac_status load_one_file(sac_model *m, const void *data, size_t size, uint32_t flags) {
    if (!data && size > 0) return sac_fail(&m->error, SAC_ERR_ARG, "data is NULL but size is %zu", size);
    /* the same words as the JS library's own check, so every surface says the same */
    if (size == 0) return sac_fail(&m->error, SAC_ERR_FORMAT, "the model is empty (0 bytes)");
    if (!known_flags(flags)) return sac_fail(&m->error, SAC_ERR_ARG, "unknown load flags 0x%x", (unsigned)flags);
    sac_status st = sac_gguf_parse(&m->gguf, data, size, &m->error);
    const int vocab_only = (flags & SAC_LOAD_VOCAB_ONLY) != 0;
    if (st || (st = check_loads_alone(m, vocab_only))) return st;
    return load(m, vocab_only);
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
    return load_one_file(m, data, size, flags);
}

sac_status sac_model_load_split(const void *const *data, const size_t *sizes, int32_t n, uint32_t flags,
                                sac_model **out) {
    int own = (flags & SAC_LOAD_TAKE_OWNERSHIP) && data && n > 0;
    sac_model *m = out ? calloc(1, sizeof *m) : NULL;
    if (out) *out = m;
    if (m && own && !(m->owned_buffers = calloc((size_t)n, sizeof *m->owned_buffers))) {
        /* nowhere to keep them: free them now, as the flag promises */
        for (int32_t i = 0; i < n; i++) free((void *)data[i]);
        return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory for %" PRId32 " shards", n);
    }
    if (!m) {
        if (own)
            for (int32_t i = 0; i < n; i++) free((void *)data[i]);
        return out ? SAC_ERR_NOMEM : SAC_ERR_ARG;
    }
    if (own) {
        memcpy(m->owned_buffers, data, (size_t)n * sizeof *data);
        m->n_owned = n;
    }
    if (!data || !sizes) return sac_fail(&m->error, SAC_ERR_ARG, "data or sizes is NULL");
    if (n < 1 || n > SAC_SPLIT_MAX)
        return sac_fail(&m->error, SAC_ERR_ARG, "%" PRId32 " shards: a model has 1 to %d", n, SAC_SPLIT_MAX);
    if (n == 1) return load_one_file(m, data[0], sizes[0], flags);
    if (!known_flags(flags)) return sac_fail(&m->error, SAC_ERR_ARG, "unknown load flags 0x%x", (unsigned)flags);
    for (int32_t i = 0; i < n; i++) {
        if (!data[i] && sizes[i] > 0)
            return sac_fail(&m->error, SAC_ERR_ARG, "shard %" PRId32 " of %" PRId32 ": data is NULL but size is %zu", i + 1,
                            n, sizes[i]);
        if (sizes[i] == 0)
            return sac_fail(&m->error, SAC_ERR_FORMAT, "shard %" PRId32 " of %" PRId32 " is empty (0 bytes)", i + 1, n);
    }
    sac_status st;
    if (!(m->shards = calloc((size_t)n, sizeof *m->shards)))
        return sac_fail(&m->error, SAC_ERR_NOMEM, "out of memory for %" PRId32 " shards", n);
    m->n_shards = n;
    for (int32_t i = 0; i < n; i++)
        if ((st = sac_gguf_parse(&m->shards[i], data[i], sizes[i], &m->error)))
            return sac_gguf_shard_fail(&m->error, st, (uint32_t)i, (uint32_t)n);
    if ((st = sac_gguf_join_split(&m->gguf, m->shards, (uint32_t)n, &m->error))) return st;
    return load(m, (flags & SAC_LOAD_VOCAB_ONLY) != 0);
}

void sac_model_free(sac_model *m) {
    if (!m) return;
    sac_tokenizer_free(m->tokenizer);
    sac_gguf_release(&m->gguf); /* before the shards its tensors point into */
    for (int32_t i = 0; i < m->n_shards; i++) sac_gguf_release(&m->shards[i]);
    free(m->shards);
    for (int32_t i = 0; i < m->n_owned; i++) free(m->owned_buffers[i]);
    free(m->owned_buffers);
    free(m->layers);
    free(m->enc_layers);
    free(m->converted);
    free(m->bound);
    free(m->name);
    free(m->meta_key);
    free(m->meta_value);
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
    sac_status loaded = sac_model_require_loaded(m);
    if (loaded) return loaded;
    if (index < 0 || (uint64_t)index >= m->gguf.n_tensors)
        return sac_fail(&m->error, SAC_ERR_ARG, "tensor index %d out of range (0..%" PRIu64 ")", index,
                        m->gguf.n_tensors);
    const gguf_tensor *t = &m->gguf.tensors[index];
    /* Names in the file are not NUL-terminated: render into scratch. */
    sac_status st = render_text(m, t->name, &m->meta_key, &m->meta_key_cap);
    if (st != SAC_OK) return st;
    if (name) *name = m->meta_key;
    if (type_name) *type_name = sac_type_name(t->type);
    if (n_dims) *n_dims = (int32_t)t->n_dims;
    if (dims)
        for (int d = 0; d < 4; d++) dims[d] = d < (int)t->n_dims ? (int64_t)t->ne[d] : 1;
    return SAC_OK;
}

int32_t sac_model_n_metadata(const sac_model *m) { return m && m->loaded ? (int32_t)m->gguf.n_kv : 0; }

sac_status sac_model_metadata(sac_model *m, int32_t index, const char **key, const char **value) {
    sac_status loaded = sac_model_require_loaded(m);
    if (loaded) return loaded;
    if (index < 0 || (uint64_t)index >= m->gguf.n_kv)
        return sac_fail(&m->error, SAC_ERR_ARG, "metadata index %d out of range (0..%" PRIu64 ")", index,
                        m->gguf.n_kv);
    const gguf_kv *kv = &m->gguf.kv[index];
    sac_status st = render_text(m, kv->key, &m->meta_key, &m->meta_key_cap);
    if (!st) st = kv->type == GGUF_TYPE_STRING ? render_text(m, kv->str, &m->meta_value, &m->meta_value_cap)
                                               : reserve(m, &m->meta_value, &m->meta_value_cap, 64);
    if (st != SAC_OK) return st;
    char *v = m->meta_value;
    size_t cap = m->meta_value_cap;
    switch (kv->type) {
    case GGUF_TYPE_STRING: break;
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
