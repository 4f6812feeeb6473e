/* model.h — what the rest of the engine needs to know about a loaded model. */
#ifndef SAC_MODEL_H
#define SAC_MODEL_H

#include "error.h"
#include "gguf.h"
#include "matmul.h"
#include "tokenizer.h"

/* gpt2 and encdec blocks share one layout: pre-LayerNorm, fused QKV with biases, GELU MLP.
 * encdec adds an encoder stack and, in decoder blocks, cross-attention (see model.c).
 * llama, qwen2, gemma and phi3 share another: RMSNorm, separate Q/K/V (qwen2 with biases), RoPE, a
 * gated feed-forward (SwiGLU; GELU-gated in gemma, which also scales its embeddings by √n_embd). */
enum sac_arch { SAC_ARCH_GPT2, SAC_ARCH_LLAMA, SAC_ARCH_ENCDEC, SAC_ARCH_QWEN2, SAC_ARCH_GEMMA, SAC_ARCH_PHI3 };

/* The llama layout (RMSNorm, separate projections, RoPE, gated FFN, no output-norm bias).
 * phi3 stores Q|K|V and gate|up fused; the loader binds each part as a view of its rows. */
static inline int sac_arch_llama_like(enum sac_arch a) {
    return a == SAC_ARCH_LLAMA || a == SAC_ARCH_QWEN2 || a == SAC_ARCH_GEMMA || a == SAC_ARCH_PHI3;
}

/* A 1-D parameter (norm weight, bias): always F32 in use; other stored types are
 * converted once at load time. */
typedef struct sac_vector {
    const float *data;
    int64_t n;
} sac_vector;

typedef struct sac_layer {
    sac_vector attn_norm, attn_norm_b;   /* LayerNorm (gpt2) or RMSNorm weight (llama) */
    sac_matrix wqkv; sac_vector bqkv;    /* gpt2: fused Q|K|V */
    sac_matrix wq, wk, wv;               /* llama: separate projections */
    sac_vector bq, bk, bv;               /* qwen2 (optional in llama); data NULL when absent */
    sac_matrix wo; sac_vector bo;        /* bo: data NULL when absent (llama) */
    sac_vector ffn_norm, ffn_norm_b;
    sac_matrix w_up; sac_vector b_up;
    sac_matrix w_gate;                   /* llama only */
    sac_matrix w_down; sac_vector b_down;
    /* encdec decoder blocks: cross-attention to the encoder output */
    sac_vector cross_norm, cross_norm_b;
    sac_matrix cross_q; sac_vector cross_bq;
    sac_matrix cross_kv; sac_vector cross_bkv; /* fused K|V of the encoder output */
    sac_matrix cross_o; sac_vector cross_bo;
} sac_layer;

struct sac_model {
    sac_error error;
    gguf_file gguf;
    void *owned_buffer;      /* the caller's buffer when SAC_LOAD_TAKE_OWNERSHIP */
    gguf_file *shards;       /* a split model's files, parsed; gguf joins them */
    int32_t n_shards;
    void **owned_buffers;    /* a split model's buffers when SAC_LOAD_TAKE_OWNERSHIP */
    int32_t n_owned;
    void *converted;         /* F32 copies of non-F32 1-D parameters */
    int loaded;              /* 1 once everything below is valid */
    int vocab_only;          /* loaded with SAC_LOAD_VOCAB_ONLY: tokenizer and metadata only */

    enum sac_arch arch;
    sac_model_info info;
    char arch_name[16];
    char *name;              /* general.name rendered as text (see render_text in model.c) */
    uint8_t *bound;          /* per tensor: 1 once the architecture has bound it */

    sac_matrix token_embd;   /* [n_embd, n_vocab] */
    sac_matrix pos_embd;     /* gpt2: [n_embd, n_ctx] */
    sac_layer *layers;       /* decoder blocks */
    sac_layer *enc_layers;   /* encdec: encoder blocks */
    sac_vector enc_output_norm, enc_output_norm_b;
    sac_vector output_norm, output_norm_b;
    sac_matrix output;       /* token_embd when tied */
    sac_vector rope_freqs;   /* llama: per-pair RoPE frequency divisors [rope_dim / 2]; data NULL when absent */

    sac_tokenizer *tokenizer;

    /* scratch for the text sac_model_metadata and sac_model_tensor return, grown as needed */
    char *meta_key, *meta_value;
    size_t meta_key_cap, meta_value_cap;
};

/* Row `row` of an embedding matrix, converted to f32. */
void sac_matrix_get_row(const sac_matrix *m, int64_t row, float *out);

/* SAC_OK for a loaded model; SAC_ERR_ARG for NULL, and SAC_ERR_STATE with a message on the
 * handle for one that failed to load (it keeps its failure's message otherwise stale). */
static inline sac_status sac_model_require_loaded(sac_model *m) {
    if (!m) return SAC_ERR_ARG;
    return m->loaded ? SAC_OK : sac_fail(&m->error, SAC_ERR_STATE, "the model failed to load: it has no tensors or metadata to read");
}

#endif
