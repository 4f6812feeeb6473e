/* gpt2.h — a GPT-2 model for training: parameters, a forward pass that keeps what the backward
 * needs, the backward pass, and export to a GGUF file the engine loads.
 *
 * The architecture is exactly the engine's `gpt2` (see ../shared/docs/gguf-notes.md):
 * token + learned position embeddings, pre-LayerNorm blocks x += attn(LN1(x)); x += mlp(LN2(x))
 * with fused Q|K|V and a tanh-GELU MLP, a final LayerNorm, and the output projection tied to
 * the token embedding (the GGUF file has no output.weight). */
#ifndef TRAIN_GPT2_H
#define TRAIN_GPT2_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"
#include "threadpool.h"

typedef struct gpt2_config {
    int32_t n_vocab, n_ctx, n_embd, n_head, n_layer, n_ff;
    float norm_eps;
} gpt2_config;

/* The parameters, or with the same layout their gradients or AdamW moments: views into one
 * buffer, in this order. Per-layer tensors are stacked, [n_layer][...]. A matrix is n_out rows
 * of n_in values, as in GGUF. */
typedef struct gpt2_params {
    float *token_embd;               /* [V][C]; also the output projection */
    float *pos_embd;                 /* [n_ctx][C] */
    float *attn_norm_w, *attn_norm_b; /* [L][C] */
    float *attn_qkv_w, *attn_qkv_b;  /* [L][3C][C], [L][3C]: rows Q, then K, then V */
    float *attn_out_w, *attn_out_b;  /* [L][C][C], [L][C] */
    float *ffn_norm_w, *ffn_norm_b;  /* [L][C] */
    float *ffn_up_w, *ffn_up_b;      /* [L][F][C], [L][F] */
    float *ffn_down_w, *ffn_down_b;  /* [L][C][F], [L][C] */
    float *out_norm_w, *out_norm_b;  /* [C] */
} gpt2_params;

#define GPT2_N_TENSORS 16

/* What the trainer and the exporter need to know about one of the 16 tensors. */
typedef struct gpt2_tensor {
    const char *name;    /* GGUF name; per-layer tensors are "blk.N." + name */
    int per_layer;
    int64_t rows, cols;  /* of one layer's slice; rows == 1 for a vector */
    int is_matrix;       /* matrices get weight decay (and are quantized when shipped) */
} gpt2_tensor;

/* The tensors in buffer order; returns the total number of parameters. */
size_t gpt2_tensors(const gpt2_config *c, gpt2_tensor out[GPT2_N_TENSORS]);

/* Activations of one forward pass over B sequences of T tokens (N = B·T rows), per layer
 * where it says [L]: everything the backward pass reads. */
typedef struct gpt2_acts {
    float *encoded;                    /* [N][C] embeddings */
    float *ln1, *ln1_mean, *ln1_rstd;  /* [L][N][C], [L][N] */
    float *qkv;                        /* [L][N][3C] */
    float *att;                        /* [L][N][C] attention output, heads concatenated */
    float *att_probs;                  /* [L][B][H][T][T] */
    float *res_att;                    /* [L][N][C] residual stream after attention */
    float *ln2, *ln2_mean, *ln2_rstd;  /* [L][N][C], [L][N] */
    float *ffn_h;                      /* [L][N][F] before GELU */
    float *ffn_gelu;                   /* [L][N][F] */
    float *ffn_tanh;                   /* [L][N][F] the tanh inside each GELU */
    float *res_ffn;                    /* [L][N][C] residual stream after the MLP (the layer's output) */
    float *lnf, *lnf_mean, *lnf_rstd;  /* [N][C], [N] */
    float *logits, *probs;             /* [N][V] */
    float *losses;                     /* [N] */
    float *proj;                       /* [N][C] scratch: a projection before it joins the stream */
} gpt2_acts;

/* Gradients of activations, one layer's worth, reused from the last layer to the first. */
typedef struct gpt2_grad_acts {
    float *dres;                       /* [N][C] the residual stream */
    float *dln;                        /* [N][C] a LayerNorm output */
    float *dqkv;                       /* [N][3C] */
    float *datt;                       /* [N][C] */
    float *dffn_h, *dffn_gelu;         /* [N][F] */
    float *dlogits;                    /* [N][V] */
    float *dlosses;                    /* [N] */
} gpt2_grad_acts;

typedef struct gpt2_model {
    gpt2_config config;
    size_t n_params;
    float *params_memory, *grads_memory; /* n_params floats each */
    gpt2_params params, grads;
    int32_t max_B, max_T;                /* the activation buffers hold this many */
    gpt2_acts acts;
    gpt2_grad_acts grad_acts;
    float *acts_memory, *grad_acts_memory;
    const int32_t *inputs, *targets;     /* of the last forward, for the backward */
    int32_t B, T;                        /* of the last forward */
    sac_pool *pool;                      /* borrowed; NULL runs everything on the caller */
} gpt2_model;

/* Checks the configuration and allocates parameters (zero), gradients and activations for up
 * to B × T tokens (T ≤ n_ctx). On failure the model is left empty (gpt2_free is still safe). */
sac_status gpt2_build(gpt2_model *m, const gpt2_config *c, int32_t B, int32_t T, sac_pool *pool, sac_error *err);
void gpt2_free(gpt2_model *m);

/* GPT-2's initialisation: matrices and embeddings N(0, 0.02), the two projections that write
 * into the residual stream N(0, 0.02/√(2·n_layer)), biases 0, norm weights 1. */
void gpt2_init(gpt2_model *m, train_rng *rng);

/* Runs B ≤ max_B sequences of T ≤ max_T tokens ([B][T] ids). With targets, also the cross
 * entropy: returns the mean loss over the B·T positions (acts.losses has each); without,
 * returns 0 and only acts.logits is filled. The inputs must stay valid until gpt2_backward. */
float gpt2_forward(gpt2_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T);
void gpt2_zero_grad(gpt2_model *m);
/* Adds the gradient of the mean loss of the last forward (which had targets) to m->grads. */
void gpt2_backward(gpt2_model *m);

/* The model as a GGUF file in memory (F32 tensors, gpt2 metadata, and a "char" tokenizer whose
 * tokens are `tokens[0..n_tokens)`, each a NUL-terminated UTF-8 string, with types `token_types`
 * (NULL: all normal) and `unknown_id` (-1: none)). The caller frees *out. */
typedef struct gpt2_vocab {
    const char *const *tokens;
    const int32_t *token_types;
    int32_t n_tokens;
    int32_t unknown_id;
} gpt2_vocab;

sac_status gpt2_export_gguf(const gpt2_model *m, const char *name, const gpt2_vocab *vocab, uint8_t **out,
                            size_t *size, sac_error *err);

#endif
