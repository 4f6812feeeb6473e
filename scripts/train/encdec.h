/* encdec.h — an encoder–decoder transformer for training, exported as the engine's "encdec"
 * architecture (see the top of src/model.c).
 *
 * Token embedding shared by source, target and output (tied); fixed sinusoidal positions
 * from 0 in source and target; pre-LayerNorm encoder blocks x += attn(LN(x)) (bidirectional);
 * x += mlp(LN(x)); the encoder's final LayerNorm; pre-LayerNorm decoder blocks
 * x += attn(LN(x)) (causal); x += cross(LN(x), encoder); x += mlp(LN(x)); output_norm; logits
 * through token_embd. Everything is built from the ops of ops.h.
 *
 * Batches are ragged on the source side: sources of different lengths are packed one after
 * the other (no padding, so nothing differs from what the engine computes for one source);
 * the targets of one batch have one length. */
#ifndef TRAIN_ENCDEC_H
#define TRAIN_ENCDEC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"
#include "saccade.h"
#include "threadpool.h"

typedef struct encdec_config {
    int32_t n_vocab, n_ctx, n_embd, n_head, n_enc_layer, n_dec_layer, n_ff;
    float norm_eps;
} encdec_config;

/* One block's parameters, stacked over the blocks of its stack ([L][...]). A matrix is n_out
 * rows of n_in values, as in GGUF. The cross_* fields exist in decoder blocks only. */
typedef struct encdec_block_params {
    float *attn_norm_w, *attn_norm_b;   /* [L][C] */
    float *attn_qkv_w, *attn_qkv_b;     /* [L][3C][C], [L][3C]: rows Q, then K, then V */
    float *attn_out_w, *attn_out_b;     /* [L][C][C], [L][C] */
    float *cross_norm_w, *cross_norm_b; /* [L][C] */
    float *cross_q_w, *cross_q_b;       /* [L][C][C], [L][C] */
    float *cross_kv_w, *cross_kv_b;     /* [L][2C][C], [L][2C]: rows K, then V */
    float *cross_out_w, *cross_out_b;   /* [L][C][C], [L][C] */
    float *ffn_norm_w, *ffn_norm_b;     /* [L][C] */
    float *ffn_up_w, *ffn_up_b;         /* [L][F][C], [L][F] */
    float *ffn_down_w, *ffn_down_b;     /* [L][C][F], [L][C] */
} encdec_block_params;

/* The parameters (or their gradients, or AdamW moments): views into one buffer, in the order
 * of encdec_tensors. */
typedef struct encdec_params {
    float *token_embd;               /* [V][C]; also the output projection */
    encdec_block_params enc;
    float *enc_norm_w, *enc_norm_b;  /* [C] */
    encdec_block_params dec;
    float *out_norm_w, *out_norm_b;  /* [C] */
} encdec_params;

#define ENCDEC_N_TENSORS 37

typedef enum encdec_stack { ENCDEC_WHOLE = 0, ENCDEC_ENCODER = 1, ENCDEC_DECODER = 2 } encdec_stack;

/* One of the 37 tensors: a whole-model tensor, or one per block of a stack. */
typedef struct encdec_tensor {
    const char *name;    /* GGUF name; block tensors are "enc.blk.N." / "dec.blk.N." + name */
    encdec_stack stack;
    int64_t rows, cols;  /* of one block's slice; rows == 1 for a vector */
    int is_matrix;       /* matrices get weight decay (and are quantized when shipped) */
} encdec_tensor;

/* The tensors in buffer order; returns the total number of parameters. */
size_t encdec_tensors(const encdec_config *c, encdec_tensor out[ENCDEC_N_TENSORS]);
/* Floats of tensor t over all its blocks. */
size_t encdec_tensor_size(const encdec_config *c, const encdec_tensor *t);

/* One training (or evaluation) batch. */
typedef struct encdec_batch {
    int32_t B;
    const int32_t *src;     /* Σ src_len ids: sequence 0, then sequence 1, … */
    const int32_t *src_len; /* [B], each ≥ 1 */
    int32_t T;              /* decoder positions of every sequence */
    const int32_t *tgt_in;  /* [B][T] decoder inputs: <bos> then the target */
    const int32_t *tgt_out; /* [B][T] what each position predicts (the target then <eos>); NULL: no loss */
} encdec_batch;

/* One stack's activations, per block where it says [L] (N rows: source or target tokens). */
typedef struct encdec_stack_acts {
    float *ln1, *ln1_mean, *ln1_rstd;    /* [L][N][C], [L][N] */
    float *qkv;                          /* [L][N][3C] */
    float *att;                          /* [L][N][C] */
    float *att_probs;                    /* [L][probs of one layer] */
    float *res_att;                      /* [L][N][C] */
    float *lnc, *lnc_mean, *lnc_rstd;    /* decoder: [L][N][C], [L][N] */
    float *cq;                           /* decoder: [L][N][C] cross-attention queries */
    float *ckv;                          /* decoder: [L][N_src][2C] keys|values of the encoder output */
    float *catt;                         /* decoder: [L][N][C] */
    float *cross_probs;                  /* decoder: [L][cross probs of one layer] */
    float *res_cross;                    /* decoder: [L][N][C] */
    float *ln2, *ln2_mean, *ln2_rstd;    /* [L][N][C], [L][N] */
    float *ffn_h, *ffn_gelu, *ffn_tanh;  /* [L][N][F] */
    float *res_ffn;                      /* [L][N][C] the block's output */
} encdec_stack_acts;

typedef struct encdec_acts {
    float *enc_x;                        /* [N_src][C] embeddings + positions */
    encdec_stack_acts enc;
    float *mem, *mem_mean, *mem_rstd;    /* [N_src][C] the encoder output (after enc.output_norm) */
    float *dec_x;                        /* [N_tgt][C] */
    encdec_stack_acts dec;
    float *lnf, *lnf_mean, *lnf_rstd;    /* [N_tgt][C] */
    float *logits, *probs, *losses;      /* [N_tgt][V], [N_tgt][V], [N_tgt] */
    float *proj;                         /* [max N][C] scratch */
} encdec_acts;

typedef struct encdec_grad_acts {
    float *dres, *dln;                   /* [max N][C] */
    float *dqkv;                         /* [max N][3C] */
    float *datt;                         /* [max N][C] */
    float *dcq;                          /* [N_tgt][C] */
    float *dckv;                         /* [N_src][2C] */
    float *dmem;                         /* [N_src][C] */
    float *dffn_h, *dffn_gelu;           /* [max N][F] */
    float *dlogits, *dlosses;            /* [N_tgt][V], [N_tgt] */
} encdec_grad_acts;

typedef struct encdec_model {
    encdec_config config;
    size_t n_params;
    float *params_memory, *grads_memory;
    encdec_params params, grads;
    int32_t max_B, max_src, max_T;       /* the activation buffers hold this much */
    float *pe;                           /* [n_ctx][C] the sinusoids, as the engine computes them */
    encdec_acts acts;
    encdec_grad_acts grad_acts;
    float *acts_memory, *grad_acts_memory;
    int32_t *src_off;                    /* [max_B + 1] first source row of each sequence */
    int32_t *src_pos;                    /* [max_B · max_src] position of each source row */
    int32_t *dec_pos;                    /* [max_B · max_T] */
    encdec_batch batch;                  /* of the last forward, for the backward */
    int has_loss;
    sac_pool *pool;                      /* borrowed; NULL runs everything on the caller */
} encdec_model;

/* Checks the configuration and allocates parameters (zero), gradients and activations for
 * batches of up to max_B sequences with sources of up to max_src tokens and targets of up to
 * max_T (both ≤ n_ctx). On failure the model is left empty (encdec_free is still safe). */
sac_status encdec_build(encdec_model *m, const encdec_config *c, int32_t max_B, int32_t max_src, int32_t max_T,
                        sac_pool *pool, sac_error *err);
void encdec_free(encdec_model *m);

/* Every matrix N(0, 1/√n_in) (token_embd: 1/√n_embd), the projections that write into a
 * residual stream (attn_output, cross_attn_output, ffn_down) further divided by √writes
 * (2 per encoder block, 3 per decoder block), as GPT-2 does; biases 0, norm weights 1.
 * GPT-2's fixed 0.02 suits widths of ~768: at 32–128 it leaves attention uniform and its
 * gradients tiny for hundreds of steps, and the tokens drowned by the unit-size sinusoids
 * (a toy copy task did not learn at all in 2 000 steps). */
void encdec_init(encdec_model *m, train_rng *rng);

/* Runs a batch that fits the model's buffers (sizes are checked by the caller). With
 * tgt_out, also the cross entropy: returns the mean loss over the B·T positions. Without,
 * returns 0 and fills acts.logits. The batch's arrays must stay valid until encdec_backward. */
float encdec_forward(encdec_model *m, const encdec_batch *b);
void encdec_zero_grad(encdec_model *m);
/* Adds the gradient of the mean loss of the last forward (which had targets) to m->grads. */
void encdec_backward(encdec_model *m);

/* The character vocabulary of the exported tokenizer: control tokens, then single characters. */
typedef struct encdec_vocab {
    const char *const *tokens;  /* n_tokens NUL-terminated UTF-8 strings */
    const int32_t *token_types; /* 1 normal, 2 unknown, 3 control */
    int32_t n_tokens;
    int32_t bos_id, eos_id, pad_id, unknown_id; /* -1: none */
} encdec_vocab;

/* The model as an "encdec" GGUF file in memory (F32 tensors, the engine's names and keys, a
 * "char" tokenizer). The caller frees *out. */
sac_status encdec_export_gguf(const encdec_model *m, const char *name, const encdec_vocab *vocab, uint8_t **out,
                              size_t *size, sac_error *err);

/* Greedy translation through the engine, as a user of the exported file runs it: tokenize
 * `src` (no BOS/EOS), sac_encode, then sac_eval from <bos> and sac_sample at temperature 0
 * until <eos> or until the context is full. Writes the decoded text (NUL-terminated,
 * truncated to cap − 1 bytes) to out. The model needs bos and eos ids. */
sac_status encdec_translate(sac_model *model, sac_context *ctx, const char *src, char *out, size_t cap,
                            sac_error *err);

#endif
