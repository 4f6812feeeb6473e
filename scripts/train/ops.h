/* ops.h — the trainer's layers, each a forward and a hand-written backward in float32.
 *
 * Conventions (after llm.c's train_gpt2.c):
 *   - activations are row-major [N][C], N = B·T token positions;
 *   - a weight matrix is stored as the core stores it: n_out rows of n_in values (GGUF dims
 *     [n_in, n_out]), so the trained buffers go to a GGUF file as they are;
 *   - backward functions ACCUMULATE (+=) into every gradient they write (dx, dw, db): the
 *     caller zeroes gradients once per step, and a tensor used twice (the tied embedding, the
 *     residual stream) collects both contributions;
 *   - work is split over the core's thread pool (pool may be NULL) so that every output value
 *     is computed by one thread in a fixed order: results do not depend on the thread count.
 * Matrix products in the forward direction go through the core's sac_matmul, the same kernel
 * sac_eval uses; the backward products go through product_acc.h, whose summation order is
 * fixed (the same on every build and thread count). */
#ifndef TRAIN_OPS_H
#define TRAIN_OPS_H

#include <stdint.h>

#include "threadpool.h"

/* x[b][t] = wte[tokens[b][t]] + wpe[t]: token plus learned position embedding. */
void embedding_forward(sac_pool *pool, float *out, const int32_t *tokens, const float *wte, const float *wpe,
                       int32_t B, int32_t T, int64_t C);
void embedding_backward(sac_pool *pool, float *dwte, float *dwpe, const float *dout, const int32_t *tokens,
                        int32_t B, int32_t T, int64_t C);

/* out = (x − mean) / sqrt(var + eps) · w + b per row; keeps mean and 1/sqrt(var + eps) of
 * each row for the backward. */
void layernorm_forward(sac_pool *pool, float *out, float *mean, float *rstd, const float *x, const float *w,
                       const float *b, int64_t N, int64_t C, float eps);
void layernorm_backward(sac_pool *pool, float *dx, float *dw, float *db, const float *dout, const float *x,
                        const float *w, const float *mean, const float *rstd, int64_t N, int64_t C);

/* out[n][o] = Σ_i w[o][i] · x[n][i] + bias[o] (bias may be NULL). */
void linear_forward(sac_pool *pool, float *out, const float *x, const float *w, const float *bias, int64_t N,
                    int64_t C_in, int64_t C_out);
/* dx += dout · w, dw += doutᵀ · x, dbias += Σ_n dout[n]; dx and dbias may be NULL. */
void linear_backward(sac_pool *pool, float *dx, float *dw, float *dbias, const float *dout, const float *x,
                     const float *w, int64_t N, int64_t C_in, int64_t C_out);

/* GPT-2's tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). The forward keeps
 * the tanh of each value in th[n] (tanhf is the costly part, and the backward needs it too). */
void gelu_forward(sac_pool *pool, float *out, float *th, const float *x, int64_t n);
void gelu_backward(sac_pool *pool, float *dx, const float *x, const float *th, const float *dout, int64_t n);

/* Multi-head scaled dot-product attention over B independent sequences.
 * Query row (b, t) starts at q + (b·Tq + t)·q_stride, key/value row (b, j) at
 * k/v + (b·Tk + j)·kv_stride; head h takes the head_dim values from h·head_dim on. With
 * fused Q|K|V rows of 3C values, q = qkv, k = qkv + C, v = qkv + 2C and both strides are 3C.
 * out is [B][Tq][n_head·head_dim] (heads concatenated); probs is [B][n_head][Tq][Tk], the
 * softmax of q·k/√head_dim (0 for masked keys). The same op serves masked self-attention
 * (causal = 1, Tq == Tk: query t sees keys 0..t), a bidirectional encoder (causal = 0) and
 * cross-attention (causal = 0, queries from the decoder, keys and values from the encoder). */
typedef struct attention_dims {
    int32_t B, Tq, Tk;
    int32_t n_head, head_dim;
    int64_t q_stride, kv_stride;
    int causal;
} attention_dims;

void attention_forward(sac_pool *pool, float *out, float *probs, const float *q, const float *k, const float *v,
                       const attention_dims *d);
/* dq, dk, dv have the strides of q, k, v (they may point into one fused gradient buffer). */
void attention_backward(sac_pool *pool, float *dq, float *dk, float *dv, const float *dout, const float *probs,
                        const float *q, const float *k, const float *v, const attention_dims *d);

/* probs = softmax(logits) per row, losses[n] = −log probs[n][targets[n]]. */
void crossentropy_forward(sac_pool *pool, float *losses, float *probs, const float *logits, const int32_t *targets,
                          int64_t N, int64_t V);
/* The gradient of Σ_n dlosses[n] · losses[n]: dlogits[n] += dlosses[n] · (probs[n] − onehot(targets[n])). */
void crossentropy_backward(sac_pool *pool, float *dlogits, const float *probs, const int32_t *targets,
                           const float *dlosses, int64_t N, int64_t V);

/* out = a + b (the residual connection); its backward adds dout to both gradients. */
void residual_forward(float *out, const float *a, const float *b, int64_t n);
void residual_backward(float *da, float *db, const float *dout, int64_t n);

#endif
