/* context.h — the mutable state of one decoding stream. All buffers are allocated when the
 * context is made (the attention capture grows on demand), never inside the token loop. */
#ifndef SAC_CONTEXT_H
#define SAC_CONTEXT_H

#include "model.h"
#include "threadpool.h"

/* Scratch activations for a batch of up to n_batch tokens. */
typedef struct sac_activations {
    float *x;        /* residual stream            [n_batch][n_embd] */
    float *xn;       /* normalised x               [n_batch][n_embd] */
    float *qkv;      /* gpt2 fused projection      [n_batch][3 n_embd] */
    float *q;        /* queries                    [n_batch][n_embd] */
    float *k, *v;    /* new keys and values        [n_batch][kv_dim] */
    float *att;      /* attention output (heads)   [n_batch][n_embd] */
    float *proj;     /* output of a projection     [n_batch][n_embd] */
    float *ff, *ff2; /* feed-forward hidden        [n_batch][n_ff] */
    float *rope;     /* cos, sin per token         [n_batch][rope_dim] */
    float *scores;   /* per-thread attention row   [n_threads][n_ctx] */
    void *work;      /* matmul workspace (quantized activations) */
} sac_activations;

typedef struct sac_sampler_state {
    int ready;
    sac_sampling_params params;
    uint64_t rng;
    double *prob;    /* [n_vocab] */
    int32_t *index;  /* [2 n_vocab]: candidates, then sort scratch */
} sac_sampler_state;

struct sac_context {
    sac_error error;
    const sac_model *model;
    sac_pool *pool;
    int32_t n_ctx, n_batch, n_threads;
    int32_t n_past;              /* tokens in the KV cache */

    /* KV cache, per layer: [n_ctx][kv_dim] */
    float *k_cache, *v_cache;
    uint8_t *key_mask;           /* [n_ctx]: 0 marks padding no query attends to */
    int32_t *tokens;             /* [n_ctx]: the ids in the cache (repetition penalty) */

    sac_activations act;

    float *logits;               /* [logits_rows][n_vocab] */
    size_t logits_cap;           /* floats allocated */
    int32_t logits_rows;

    /* Attention capture: row q holds n_layer × n_head × (q + 1) floats at
     * attn_row_offset(q); rows < attn_rows are captured (or zero-filled). */
    int capture;
    float *attn;
    size_t attn_cap;             /* floats allocated */
    int32_t attn_rows;

    sac_sampler_state sampler;

    /* encdec: the encoded source */
    int32_t n_src;
    uint8_t *src_mask;           /* [n_ctx] */
    float *cross_k, *cross_v;    /* per decoder layer: [n_ctx][n_embd] */
    float *cross_attn;           /* capture: decoder row q → [n_layer][n_head][n_src] */
    float *enc_attn;             /* capture: [n_encoder_layer][n_head][n_src][n_src] */
    int enc_attn_valid;          /* 1 when the last encode ran with capture on */
};

/* Offset in floats of query row q in the capture buffer. */
size_t sac_attn_row_offset(const sac_context *ctx, int64_t q);
/* Makes room for rows [0, n_rows) of attention capture. */
sac_status sac_attn_reserve(sac_context *ctx, int32_t n_rows);

/* The transformer itself: runs n tokens (n <= n_batch) at positions n_past.., writes logits
 * for the last token (or every token with all_logits) starting at row `logits_row`, or no
 * logits when logits_row < 0 (an early chunk of a long prompt). */
void sac_forward(sac_context *ctx, const int32_t *tokens, int32_t n, const uint8_t *key_mask,
                 int all_logits, int32_t logits_row);

/* The encoder over n source tokens (n <= n_batch; ctx->src_mask and n_src already set):
 * fills cross_k/cross_v (and enc_attn when capturing). */
void sac_encoder_forward(sac_context *ctx, const int32_t *tokens, int32_t n);

#endif
