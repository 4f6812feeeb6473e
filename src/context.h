/* context.h — the mutable state of one decoding stream. All buffers are allocated when the
 * context is made (the attention capture grows on demand), never inside the token loop. */
#ifndef SAC_CONTEXT_H
#define SAC_CONTEXT_H

#include "capture.h"
#include "model.h"
#include "probe.h"
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
    float *scores;   /* attention rows per thread  [n_threads][min(n_head, 16)][n_ctx] */
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
    int32_t no_positions;        /* sac_context_params.no_positions: no position embeddings, no RoPE */

    /* KV cache, per layer and kv head: n_ctx rows of head_dim values of kv_type (kv_cache.h) */
    void *k_cache, *v_cache;
    int32_t kv_type;
    uint8_t *key_mask;           /* [n_ctx]: 0 marks padding no query attends to */
    int32_t *tokens;             /* [n_ctx]: the ids in the cache (repetition penalty) */

    sac_activations act;

    float *logits;               /* [logits_rows][n_vocab] */
    size_t logits_cap;           /* floats allocated */
    int32_t logits_rows;

    sac_capture capture;         /* captured attention (capture.h) */
    sac_probe probe;             /* q/k capture and head ablation (probe.h) */

    sac_sampler_state sampler;

    /* encdec: the encoded source */
    int32_t n_src;
    uint8_t *src_mask;           /* [n_ctx] */
    float *cross_k, *cross_v;    /* per decoder layer: [n_ctx][n_embd] */
};

/* 0 for NULL or a context whose initialisation failed (it holds only its message). */
static inline int sac_context_usable(const sac_context *ctx) {
    return ctx && ctx->model && ctx->k_cache && ctx->act.work;
}

#endif
