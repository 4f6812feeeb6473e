/* gpt2.c — the GPT-2 model the trainer optimizes: memory layout, initialisation, the forward
 * pass (read it top to bottom to follow a batch), the backward pass (the same steps in reverse)
 * and the export to GGUF. */
#include "gpt2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf_writer.h"
#include "ops.h"
#include "types.h"

/* ---------------------------------------------------------------------------------------- */
/* Layout                                                                                    */
/* ---------------------------------------------------------------------------------------- */

size_t gpt2_tensors(const gpt2_config *c, gpt2_tensor out[GPT2_N_TENSORS]) {
    const int64_t V = c->n_vocab, C = c->n_embd, F = c->n_ff;
    const gpt2_tensor t[GPT2_N_TENSORS] = {
        {"token_embd.weight", 0, V, C, 1},
        {"position_embd.weight", 0, c->n_ctx, C, 1},
        {"attn_norm.weight", 1, 1, C, 0},
        {"attn_norm.bias", 1, 1, C, 0},
        {"attn_qkv.weight", 1, 3 * C, C, 1},
        {"attn_qkv.bias", 1, 1, 3 * C, 0},
        {"attn_output.weight", 1, C, C, 1},
        {"attn_output.bias", 1, 1, C, 0},
        {"ffn_norm.weight", 1, 1, C, 0},
        {"ffn_norm.bias", 1, 1, C, 0},
        {"ffn_up.weight", 1, F, C, 1},
        {"ffn_up.bias", 1, 1, F, 0},
        {"ffn_down.weight", 1, C, F, 1},
        {"ffn_down.bias", 1, 1, C, 0},
        {"output_norm.weight", 0, 1, C, 0},
        {"output_norm.bias", 0, 1, C, 0},
    };
    size_t total = 0;
    for (int i = 0; i < GPT2_N_TENSORS; i++) {
        out[i] = t[i];
        total += (size_t)(t[i].per_layer ? c->n_layer : 1) * (size_t)(t[i].rows * t[i].cols);
    }
    return total;
}

/* The 16 pointer fields of a gpt2_params, in table order. */
static void param_slots(gpt2_params *p, float **slots[GPT2_N_TENSORS]) {
    float **s[GPT2_N_TENSORS] = {
        &p->token_embd, &p->pos_embd,   &p->attn_norm_w, &p->attn_norm_b, &p->attn_qkv_w, &p->attn_qkv_b,
        &p->attn_out_w, &p->attn_out_b, &p->ffn_norm_w,  &p->ffn_norm_b,  &p->ffn_up_w,   &p->ffn_up_b,
        &p->ffn_down_w, &p->ffn_down_b, &p->out_norm_w,  &p->out_norm_b,
    };
    memcpy(slots, s, sizeof s);
}

static void point_params(gpt2_params *p, float *memory, const gpt2_config *c) {
    gpt2_tensor t[GPT2_N_TENSORS];
    float **slots[GPT2_N_TENSORS];
    gpt2_tensors(c, t);
    param_slots(p, slots);
    for (int i = 0; i < GPT2_N_TENSORS; i++) {
        *slots[i] = memory;
        memory += (size_t)(t[i].per_layer ? c->n_layer : 1) * (size_t)(t[i].rows * t[i].cols);
    }
}

/* Lays out the activation buffers of B × T tokens in `memory` (NULL: only counts); returns floats. */
static size_t point_acts(gpt2_acts *a, float *memory, const gpt2_config *c, int64_t B, int64_t T) {
    const int64_t N = B * T, C = c->n_embd, F = c->n_ff, L = c->n_layer, V = c->n_vocab;
    struct {
        float **slot;
        int64_t n;
    } bufs[] = {
        {&a->encoded, N * C},      {&a->ln1, L * N * C},      {&a->ln1_mean, L * N},
        {&a->ln1_rstd, L * N},     {&a->qkv, L * N * 3 * C},  {&a->att, L * N * C},
        {&a->att_probs, L * B * c->n_head * T * T},          {&a->res_att, L * N * C},
        {&a->ln2, L * N * C},      {&a->ln2_mean, L * N},     {&a->ln2_rstd, L * N},
        {&a->ffn_h, L * N * F},    {&a->ffn_gelu, L * N * F}, {&a->ffn_tanh, L * N * F},
        {&a->res_ffn, L * N * C},
        {&a->lnf, N * C},          {&a->lnf_mean, N},         {&a->lnf_rstd, N},
        {&a->logits, N * V},       {&a->probs, N * V},        {&a->losses, N},
        {&a->proj, N * C},
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (memory) *bufs[i].slot = memory + total;
        total += (size_t)bufs[i].n;
    }
    return total;
}

static size_t point_grad_acts(gpt2_grad_acts *g, float *memory, const gpt2_config *c, int64_t B, int64_t T) {
    const int64_t N = B * T, C = c->n_embd, F = c->n_ff, V = c->n_vocab;
    struct {
        float **slot;
        int64_t n;
    } bufs[] = {
        {&g->dres, N * C},   {&g->dln, N * C},       {&g->dqkv, N * 3 * C}, {&g->datt, N * C},
        {&g->dffn_h, N * F}, {&g->dffn_gelu, N * F}, {&g->dlogits, N * V},  {&g->dlosses, N},
    };
    size_t total = 0;
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (memory) *bufs[i].slot = memory + total;
        total += (size_t)bufs[i].n;
    }
    return total;
}

sac_status gpt2_build(gpt2_model *m, const gpt2_config *c, int32_t B, int32_t T, sac_pool *pool, sac_error *err) {
    memset(m, 0, sizeof *m);
    if (c->n_vocab < 1 || c->n_ctx < 1 || c->n_embd < 1 || c->n_head < 1 || c->n_layer < 1 || c->n_ff < 1)
        return sac_fail(err, SAC_ERR_ARG, "gpt2: every dimension must be positive");
    if (c->n_embd % c->n_head)
        return sac_fail(err, SAC_ERR_ARG, "gpt2: n_embd %d is not a multiple of n_head %d", c->n_embd, c->n_head);
    if (B < 1 || T < 1 || T > c->n_ctx)
        return sac_fail(err, SAC_ERR_ARG, "gpt2: batch %d × %d does not fit (context %d)", B, T, c->n_ctx);
    gpt2_tensor t[GPT2_N_TENSORS];
    m->config = *c;
    m->n_params = gpt2_tensors(c, t);
    m->max_B = B;
    m->max_T = T;
    m->pool = pool;
    const size_t n_acts = point_acts(&m->acts, NULL, c, B, T);
    const size_t n_grad_acts = point_grad_acts(&m->grad_acts, NULL, c, B, T);
    m->params_memory = calloc(m->n_params, sizeof(float));
    m->grads_memory = calloc(m->n_params, sizeof(float));
    m->acts_memory = calloc(n_acts, sizeof(float));
    m->grad_acts_memory = calloc(n_grad_acts, sizeof(float));
    if (!m->params_memory || !m->grads_memory || !m->acts_memory || !m->grad_acts_memory) {
        gpt2_free(m);
        return sac_fail(err, SAC_ERR_NOMEM, "gpt2: out of memory (%zu parameters, %zu activations)",
                        (size_t)m->n_params, n_acts + n_grad_acts);
    }
    point_params(&m->params, m->params_memory, c);
    point_params(&m->grads, m->grads_memory, c);
    point_acts(&m->acts, m->acts_memory, c, B, T);
    point_grad_acts(&m->grad_acts, m->grad_acts_memory, c, B, T);
    return SAC_OK;
}

void gpt2_free(gpt2_model *m) {
    free(m->params_memory);
    free(m->grads_memory);
    free(m->acts_memory);
    free(m->grad_acts_memory);
    memset(m, 0, sizeof *m);
}

void gpt2_init(gpt2_model *m, train_rng *rng) {
    const gpt2_config *c = &m->config;
    gpt2_tensor t[GPT2_N_TENSORS];
    float **slots[GPT2_N_TENSORS];
    gpt2_tensors(c, t);
    param_slots(&m->params, slots);
    const double residual_std = 0.02 / sqrt(2.0 * c->n_layer);
    for (int i = 0; i < GPT2_N_TENSORS; i++) {
        const size_t n = (size_t)(t[i].per_layer ? c->n_layer : 1) * (size_t)(t[i].rows * t[i].cols);
        float *p = *slots[i];
        const int is_norm_weight = strstr(t[i].name, "norm.weight") != NULL;
        const int writes_residual = !strcmp(t[i].name, "attn_output.weight") || !strcmp(t[i].name, "ffn_down.weight");
        for (size_t j = 0; j < n; j++) {
            if (t[i].is_matrix) p[j] = (float)((writes_residual ? residual_std : 0.02) * train_rng_normal(rng));
            else p[j] = is_norm_weight ? 1.0f : 0.0f;
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Forward                                                                                   */
/* ---------------------------------------------------------------------------------------- */

float gpt2_forward(gpt2_model *m, const int32_t *inputs, const int32_t *targets, int32_t B, int32_t T) {
    const gpt2_config *c = &m->config;
    const gpt2_params *p = &m->params;
    gpt2_acts *a = &m->acts;
    const int64_t N = (int64_t)B * T, C = c->n_embd, F = c->n_ff, V = c->n_vocab;
    sac_pool *pool = m->pool;
    m->inputs = inputs;
    m->targets = NULL;
    m->B = B;
    m->T = T;

    embedding_forward(pool, a->encoded, inputs, p->token_embd, p->pos_embd, B, T, C);
    const attention_dims dims = {B, T, T, c->n_head, c->n_embd / c->n_head, 3 * C, 3 * C, 1};

    for (int64_t l = 0; l < c->n_layer; l++) {
        const float *x = l == 0 ? a->encoded : a->res_ffn + (l - 1) * N * C;
        float *ln1 = a->ln1 + l * N * C, *qkv = a->qkv + l * N * 3 * C, *att = a->att + l * N * C;
        float *res_att = a->res_att + l * N * C, *ln2 = a->ln2 + l * N * C;
        float *ffn_h = a->ffn_h + l * N * F, *ffn_gelu = a->ffn_gelu + l * N * F, *ffn_tanh = a->ffn_tanh + l * N * F;
        float *probs = a->att_probs + l * B * c->n_head * T * T;

        /* attention block: res_att = x + W_o · attention(LN1(x)) */
        layernorm_forward(pool, ln1, a->ln1_mean + l * N, a->ln1_rstd + l * N, x, p->attn_norm_w + l * C,
                          p->attn_norm_b + l * C, N, C, c->norm_eps);
        linear_forward(pool, qkv, ln1, p->attn_qkv_w + l * 3 * C * C, p->attn_qkv_b + l * 3 * C, N, C, 3 * C);
        attention_forward(pool, att, probs, qkv, qkv + C, qkv + 2 * C, &dims);
        linear_forward(pool, a->proj, att, p->attn_out_w + l * C * C, p->attn_out_b + l * C, N, C, C);
        residual_forward(res_att, x, a->proj, N * C);

        /* MLP block: res_ffn = res_att + W_down · GELU(W_up · LN2(res_att)) */
        layernorm_forward(pool, ln2, a->ln2_mean + l * N, a->ln2_rstd + l * N, res_att, p->ffn_norm_w + l * C,
                          p->ffn_norm_b + l * C, N, C, c->norm_eps);
        linear_forward(pool, ffn_h, ln2, p->ffn_up_w + l * F * C, p->ffn_up_b + l * F, N, C, F);
        gelu_forward(pool, ffn_gelu, ffn_tanh, ffn_h, N * F);
        linear_forward(pool, a->proj, ffn_gelu, p->ffn_down_w + l * C * F, p->ffn_down_b + l * C, N, F, C);
        residual_forward(a->res_ffn + l * N * C, res_att, a->proj, N * C);
    }

    /* final norm, then logits through the (tied) token embedding */
    layernorm_forward(pool, a->lnf, a->lnf_mean, a->lnf_rstd, a->res_ffn + (c->n_layer - 1) * N * C, p->out_norm_w,
                      p->out_norm_b, N, C, c->norm_eps);
    linear_forward(pool, a->logits, a->lnf, p->token_embd, NULL, N, C, V);
    if (!targets) return 0.0f;

    crossentropy_forward(pool, a->losses, a->probs, a->logits, targets, N, V);
    double sum = 0.0;
    for (int64_t n = 0; n < N; n++) sum += a->losses[n];
    m->targets = targets;
    return (float)(sum / (double)N);
}

/* ---------------------------------------------------------------------------------------- */
/* Backward                                                                                  */
/* ---------------------------------------------------------------------------------------- */

void gpt2_zero_grad(gpt2_model *m) { memset(m->grads_memory, 0, m->n_params * sizeof(float)); }

static void zero(float *x, int64_t n) { memset(x, 0, (size_t)n * sizeof *x); }

void gpt2_backward(gpt2_model *m) {
    const gpt2_config *c = &m->config;
    const gpt2_params *p = &m->params;
    gpt2_params *g = &m->grads;
    const gpt2_acts *a = &m->acts;
    gpt2_grad_acts *d = &m->grad_acts;
    const int32_t B = m->B, T = m->T;
    const int64_t N = (int64_t)B * T, C = c->n_embd, F = c->n_ff, V = c->n_vocab;
    sac_pool *pool = m->pool;
    if (!m->targets) return; /* the last forward computed no loss */

    /* the loss is the mean over the N positions */
    for (int64_t n = 0; n < N; n++) d->dlosses[n] = 1.0f / (float)N;
    zero(d->dlogits, N * V);
    crossentropy_backward(pool, d->dlogits, a->probs, m->targets, d->dlosses, N, V);

    /* logits = token_embd · lnf: the tied embedding collects its first gradient here */
    zero(d->dln, N * C);
    linear_backward(pool, d->dln, g->token_embd, NULL, d->dlogits, a->lnf, p->token_embd, N, C, V);
    zero(d->dres, N * C);
    layernorm_backward(pool, d->dres, g->out_norm_w, g->out_norm_b, d->dln, a->res_ffn + (c->n_layer - 1) * N * C,
                       p->out_norm_w, a->lnf_mean, a->lnf_rstd, N, C);

    const attention_dims dims = {B, T, T, c->n_head, c->n_embd / c->n_head, 3 * C, 3 * C, 1};
    for (int64_t l = c->n_layer - 1; l >= 0; l--) {
        const float *x = l == 0 ? a->encoded : a->res_ffn + (l - 1) * N * C;
        const float *ln1 = a->ln1 + l * N * C, *qkv = a->qkv + l * N * 3 * C, *att = a->att + l * N * C;
        const float *res_att = a->res_att + l * N * C, *ln2 = a->ln2 + l * N * C;
        const float *ffn_h = a->ffn_h + l * N * F, *ffn_gelu = a->ffn_gelu + l * N * F;
        const float *ffn_tanh = a->ffn_tanh + l * N * F;
        const float *probs = a->att_probs + l * B * c->n_head * T * T;

        /* MLP block, in reverse; d->dres holds d(res_ffn), which flows unchanged to res_att
         * and, through the MLP, adds to it */
        zero(d->dffn_gelu, N * F);
        linear_backward(pool, d->dffn_gelu, g->ffn_down_w + l * C * F, g->ffn_down_b + l * C, d->dres, ffn_gelu,
                        p->ffn_down_w + l * C * F, N, F, C);
        zero(d->dffn_h, N * F);
        gelu_backward(pool, d->dffn_h, ffn_h, ffn_tanh, d->dffn_gelu, N * F);
        zero(d->dln, N * C);
        linear_backward(pool, d->dln, g->ffn_up_w + l * F * C, g->ffn_up_b + l * F, d->dffn_h, ln2,
                        p->ffn_up_w + l * F * C, N, C, F);
        layernorm_backward(pool, d->dres, g->ffn_norm_w + l * C, g->ffn_norm_b + l * C, d->dln, res_att,
                           p->ffn_norm_w + l * C, a->ln2_mean + l * N, a->ln2_rstd + l * N, N, C);

        /* attention block, in reverse; d->dres now holds d(res_att) */
        zero(d->datt, N * C);
        linear_backward(pool, d->datt, g->attn_out_w + l * C * C, g->attn_out_b + l * C, d->dres, att,
                        p->attn_out_w + l * C * C, N, C, C);
        zero(d->dqkv, N * 3 * C);
        attention_backward(pool, d->dqkv, d->dqkv + C, d->dqkv + 2 * C, d->datt, probs, qkv, qkv + C, qkv + 2 * C,
                           &dims);
        zero(d->dln, N * C);
        linear_backward(pool, d->dln, g->attn_qkv_w + l * 3 * C * C, g->attn_qkv_b + l * 3 * C, d->dqkv, ln1,
                        p->attn_qkv_w + l * 3 * C * C, N, C, 3 * C);
        layernorm_backward(pool, d->dres, g->attn_norm_w + l * C, g->attn_norm_b + l * C, d->dln, x,
                           p->attn_norm_w + l * C, a->ln1_mean + l * N, a->ln1_rstd + l * N, N, C);
    }

    /* d->dres holds d(encoded): to the token and position embeddings */
    embedding_backward(pool, g->token_embd, g->pos_embd, d->dres, m->inputs, B, T, C);
}

/* ---------------------------------------------------------------------------------------- */
/* Export                                                                                    */
/* ---------------------------------------------------------------------------------------- */

sac_status gpt2_export_gguf(const gpt2_model *m, const char *name, const gpt2_vocab *vocab, uint8_t **out,
                            size_t *size, sac_error *err) {
    const gpt2_config *c = &m->config;
    if (vocab->n_tokens > c->n_vocab)
        return sac_fail(err, SAC_ERR_ARG, "gpt2: %d tokens for %d embedding rows", vocab->n_tokens, c->n_vocab);
    gguf_writer *w;
    sac_status st = sac_gguf_writer_new(&w, err);
    if (st) return st;

    if ((st = sac_gguf_writer_set_string(w, "general.architecture", "gpt2", err)) ||
        (st = sac_gguf_writer_set_string(w, "general.name", name, err)) ||
        (st = sac_gguf_writer_set_u32(w, "general.file_type", 0, err)) || /* llama.cpp's ALL_F32 */
        (st = sac_gguf_writer_set_u32(w, "gpt2.context_length", (uint32_t)c->n_ctx, err)) ||
        (st = sac_gguf_writer_set_u32(w, "gpt2.embedding_length", (uint32_t)c->n_embd, err)) ||
        (st = sac_gguf_writer_set_u32(w, "gpt2.feed_forward_length", (uint32_t)c->n_ff, err)) ||
        (st = sac_gguf_writer_set_u32(w, "gpt2.block_count", (uint32_t)c->n_layer, err)) ||
        (st = sac_gguf_writer_set_u32(w, "gpt2.attention.head_count", (uint32_t)c->n_head, err)) ||
        (st = sac_gguf_writer_set_f32(w, "gpt2.attention.layer_norm_epsilon", c->norm_eps, err)) ||
        (st = sac_gguf_writer_set_string(w, "tokenizer.ggml.model", "char", err)) ||
        (st = sac_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", vocab->tokens, (uint64_t)vocab->n_tokens,
                                           err)))
        goto done;
    if (vocab->token_types &&
        (st = sac_gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_I32, (uint64_t)vocab->n_tokens,
                                    vocab->token_types, (size_t)vocab->n_tokens * sizeof(int32_t), err)))
        goto done;
    if (vocab->unknown_id >= 0 &&
        (st = sac_gguf_writer_set_u32(w, "tokenizer.ggml.unknown_token_id", (uint32_t)vocab->unknown_id, err)))
        goto done;

    /* tensors in the order llama.cpp writes them: embeddings, then block by block, then the
     * final norm; each one a slice of the stacked buffers */
    gpt2_tensor t[GPT2_N_TENSORS];
    float **slots[GPT2_N_TENSORS];
    gpt2_tensors(c, t);
    gpt2_params p = m->params;
    param_slots(&p, slots);
    for (int pass = 0; pass < 3; pass++) {
        const int n_layers = pass == 1 ? c->n_layer : 1;
        for (int l = 0; l < n_layers; l++)
            for (int i = 0; i < GPT2_N_TENSORS; i++) {
                /* pass 0: the two embeddings; pass 1: per-layer tensors; pass 2: the final norm */
                const int group = t[i].per_layer ? 1 : i < 2 ? 0 : 2;
                if (group != pass) continue;
                char full[96];
                if (t[i].per_layer) snprintf(full, sizeof full, "blk.%d.%s", l, t[i].name);
                else snprintf(full, sizeof full, "%s", t[i].name);
                const int64_t n = t[i].rows * t[i].cols;
                const int64_t ne[2] = {t[i].cols, t[i].rows};
                if ((st = sac_gguf_writer_add_tensor(w, full, SAC_TYPE_F32, t[i].is_matrix ? 2 : 1, ne, *slots[i] + l * n,
                                                 (size_t)n * sizeof(float), err)))
                    goto done;
            }
    }
    st = sac_gguf_writer_to_buffer(w, out, size, err);
done:
    sac_gguf_writer_free(w);
    return st;
}
