/* encdec.c — the encoder–decoder model the date trainer optimizes: memory layout,
 * initialisation, the forward pass (encoder, then decoder), the backward pass (decoder, then
 * encoder: cross-attention hands the encoder its gradient), export to GGUF, and greedy
 * translation through the engine. */
#include "encdec.h"

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

size_t encdec_tensors(const encdec_config *c, encdec_tensor out[ENCDEC_N_TENSORS]) {
    const int64_t V = c->n_vocab, C = c->n_embd, F = c->n_ff;
    const encdec_stack W = ENCDEC_WHOLE, E = ENCDEC_ENCODER, D = ENCDEC_DECODER;
    const encdec_tensor t[ENCDEC_N_TENSORS] = {
        {"token_embd.weight", W, V, C, 1},
        {"attn_norm.weight", E, 1, C, 0},          {"attn_norm.bias", E, 1, C, 0},
        {"attn_qkv.weight", E, 3 * C, C, 1},       {"attn_qkv.bias", E, 1, 3 * C, 0},
        {"attn_output.weight", E, C, C, 1},        {"attn_output.bias", E, 1, C, 0},
        {"ffn_norm.weight", E, 1, C, 0},           {"ffn_norm.bias", E, 1, C, 0},
        {"ffn_up.weight", E, F, C, 1},             {"ffn_up.bias", E, 1, F, 0},
        {"ffn_down.weight", E, C, F, 1},           {"ffn_down.bias", E, 1, C, 0},
        {"enc.output_norm.weight", W, 1, C, 0},    {"enc.output_norm.bias", W, 1, C, 0},
        {"attn_norm.weight", D, 1, C, 0},          {"attn_norm.bias", D, 1, C, 0},
        {"attn_qkv.weight", D, 3 * C, C, 1},       {"attn_qkv.bias", D, 1, 3 * C, 0},
        {"attn_output.weight", D, C, C, 1},        {"attn_output.bias", D, 1, C, 0},
        {"cross_attn_norm.weight", D, 1, C, 0},    {"cross_attn_norm.bias", D, 1, C, 0},
        {"cross_attn_q.weight", D, C, C, 1},       {"cross_attn_q.bias", D, 1, C, 0},
        {"cross_attn_kv.weight", D, 2 * C, C, 1},  {"cross_attn_kv.bias", D, 1, 2 * C, 0},
        {"cross_attn_output.weight", D, C, C, 1},  {"cross_attn_output.bias", D, 1, C, 0},
        {"ffn_norm.weight", D, 1, C, 0},           {"ffn_norm.bias", D, 1, C, 0},
        {"ffn_up.weight", D, F, C, 1},             {"ffn_up.bias", D, 1, F, 0},
        {"ffn_down.weight", D, C, F, 1},           {"ffn_down.bias", D, 1, C, 0},
        {"output_norm.weight", W, 1, C, 0},        {"output_norm.bias", W, 1, C, 0},
    };
    size_t total = 0;
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) {
        out[i] = t[i];
        total += encdec_tensor_size(c, &t[i]);
    }
    return total;
}

size_t encdec_tensor_size(const encdec_config *c, const encdec_tensor *t) {
    const int64_t blocks = t->stack == ENCDEC_ENCODER ? c->n_enc_layer : t->stack == ENCDEC_DECODER ? c->n_dec_layer : 1;
    return (size_t)(blocks * t->rows * t->cols);
}

/* The 37 pointer fields of an encdec_params, in table order. */
static void param_slots(encdec_params *p, float **slots[ENCDEC_N_TENSORS]) {
    encdec_block_params *e = &p->enc, *d = &p->dec;
    float **s[ENCDEC_N_TENSORS] = {
        &p->token_embd,
        &e->attn_norm_w,  &e->attn_norm_b,  &e->attn_qkv_w,   &e->attn_qkv_b,   &e->attn_out_w,  &e->attn_out_b,
        &e->ffn_norm_w,   &e->ffn_norm_b,   &e->ffn_up_w,     &e->ffn_up_b,     &e->ffn_down_w,  &e->ffn_down_b,
        &p->enc_norm_w,   &p->enc_norm_b,
        &d->attn_norm_w,  &d->attn_norm_b,  &d->attn_qkv_w,   &d->attn_qkv_b,   &d->attn_out_w,  &d->attn_out_b,
        &d->cross_norm_w, &d->cross_norm_b, &d->cross_q_w,    &d->cross_q_b,    &d->cross_kv_w,  &d->cross_kv_b,
        &d->cross_out_w,  &d->cross_out_b,
        &d->ffn_norm_w,   &d->ffn_norm_b,   &d->ffn_up_w,     &d->ffn_up_b,     &d->ffn_down_w,  &d->ffn_down_b,
        &p->out_norm_w,   &p->out_norm_b,
    };
    memcpy(slots, s, sizeof s);
}

static void point_params(encdec_params *p, float *memory, const encdec_config *c) {
    encdec_tensor t[ENCDEC_N_TENSORS];
    float **slots[ENCDEC_N_TENSORS];
    memset(p, 0, sizeof *p);
    encdec_tensors(c, t);
    param_slots(p, slots);
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) {
        *slots[i] = memory;
        memory += encdec_tensor_size(c, &t[i]);
    }
}

typedef struct buffer_slot {
    float **slot;
    int64_t n;
} buffer_slot;

/* Points the slots into `memory` one after the other (memory NULL: only counts); returns floats. */
static size_t lay_out(buffer_slot *bufs, size_t n_bufs, float *memory) {
    size_t total = 0;
    for (size_t i = 0; i < n_bufs; i++) {
        if (memory) *bufs[i].slot = bufs[i].n ? memory + total : NULL;
        total += (size_t)bufs[i].n;
    }
    return total;
}

/* The activations for batches of max_B sequences, sources ≤ max_src, targets ≤ max_T. */
static size_t point_acts(encdec_acts *a, float *memory, const encdec_config *c, int64_t max_B, int64_t max_src,
                         int64_t max_T) {
    const int64_t C = c->n_embd, F = c->n_ff, V = c->n_vocab, H = c->n_head;
    const int64_t Ns = max_B * max_src, Nt = max_B * max_T, N = Ns > Nt ? Ns : Nt;
    const int64_t Le = c->n_enc_layer, Ld = c->n_dec_layer;
    encdec_stack_acts *e = &a->enc, *d = &a->dec;
    buffer_slot bufs[] = {
        {&a->enc_x, Ns * C},
        {&e->ln1, Le * Ns * C}, {&e->ln1_mean, Le * Ns}, {&e->ln1_rstd, Le * Ns}, {&e->qkv, Le * Ns * 3 * C},
        {&e->att, Le * Ns * C}, {&e->att_probs, Le * max_B * H * max_src * max_src}, {&e->res_att, Le * Ns * C},
        {&e->ln2, Le * Ns * C}, {&e->ln2_mean, Le * Ns}, {&e->ln2_rstd, Le * Ns},
        {&e->ffn_h, Le * Ns * F}, {&e->ffn_gelu, Le * Ns * F}, {&e->ffn_tanh, Le * Ns * F}, {&e->res_ffn, Le * Ns * C},
        {&a->mem, Ns * C}, {&a->mem_mean, Ns}, {&a->mem_rstd, Ns},
        {&a->dec_x, Nt * C},
        {&d->ln1, Ld * Nt * C}, {&d->ln1_mean, Ld * Nt}, {&d->ln1_rstd, Ld * Nt}, {&d->qkv, Ld * Nt * 3 * C},
        {&d->att, Ld * Nt * C}, {&d->att_probs, Ld * max_B * H * max_T * max_T}, {&d->res_att, Ld * Nt * C},
        {&d->lnc, Ld * Nt * C}, {&d->lnc_mean, Ld * Nt}, {&d->lnc_rstd, Ld * Nt}, {&d->cq, Ld * Nt * C},
        {&d->ckv, Ld * Ns * 2 * C}, {&d->catt, Ld * Nt * C}, {&d->cross_probs, Ld * max_B * H * max_T * max_src},
        {&d->res_cross, Ld * Nt * C},
        {&d->ln2, Ld * Nt * C}, {&d->ln2_mean, Ld * Nt}, {&d->ln2_rstd, Ld * Nt},
        {&d->ffn_h, Ld * Nt * F}, {&d->ffn_gelu, Ld * Nt * F}, {&d->ffn_tanh, Ld * Nt * F}, {&d->res_ffn, Ld * Nt * C},
        {&a->lnf, Nt * C}, {&a->lnf_mean, Nt}, {&a->lnf_rstd, Nt},
        {&a->logits, Nt * V}, {&a->probs, Nt * V}, {&a->losses, Nt},
        {&a->proj, N * C},
    };
    return lay_out(bufs, sizeof bufs / sizeof bufs[0], memory);
}

static size_t point_grad_acts(encdec_grad_acts *g, float *memory, const encdec_config *c, int64_t max_B,
                              int64_t max_src, int64_t max_T) {
    const int64_t C = c->n_embd, F = c->n_ff, V = c->n_vocab;
    const int64_t Ns = max_B * max_src, Nt = max_B * max_T, N = Ns > Nt ? Ns : Nt;
    buffer_slot bufs[] = {
        {&g->dres, N * C},     {&g->dln, N * C},        {&g->dqkv, N * 3 * C}, {&g->datt, N * C},
        {&g->dcq, Nt * C},     {&g->dckv, Ns * 2 * C},  {&g->dmem, Ns * C},
        {&g->dffn_h, N * F},   {&g->dffn_gelu, N * F},  {&g->dlogits, Nt * V}, {&g->dlosses, Nt},
    };
    return lay_out(bufs, sizeof bufs / sizeof bufs[0], memory);
}

sac_status encdec_build(encdec_model *m, const encdec_config *c, int32_t max_B, int32_t max_src, int32_t max_T,
                        sac_pool *pool, sac_error *err) {
    memset(m, 0, sizeof *m);
    if (c->n_vocab < 1 || c->n_ctx < 1 || c->n_embd < 2 || c->n_head < 1 || c->n_enc_layer < 1 ||
        c->n_dec_layer < 1 || c->n_ff < 1)
        return sac_fail(err, SAC_ERR_ARG, "encdec: every dimension must be positive");
    if (c->n_embd % c->n_head || c->n_embd % 2)
        return sac_fail(err, SAC_ERR_ARG, "encdec: n_embd %d must be even and a multiple of n_head %d", c->n_embd,
                        c->n_head);
    if (max_B < 1 || max_src < 1 || max_T < 1 || max_src > c->n_ctx || max_T > c->n_ctx)
        return sac_fail(err, SAC_ERR_ARG, "encdec: batch %d × (source %d, target %d) does not fit (context %d)", max_B,
                        max_src, max_T, c->n_ctx);
    encdec_tensor t[ENCDEC_N_TENSORS];
    m->config = *c;
    m->n_params = encdec_tensors(c, t);
    m->max_B = max_B;
    m->max_src = max_src;
    m->max_T = max_T;
    m->pool = pool;
    const size_t n_acts = point_acts(&m->acts, NULL, c, max_B, max_src, max_T);
    const size_t n_grad_acts = point_grad_acts(&m->grad_acts, NULL, c, max_B, max_src, max_T);
    m->params_memory = calloc(m->n_params, sizeof(float));
    m->grads_memory = calloc(m->n_params, sizeof(float));
    m->acts_memory = calloc(n_acts, sizeof(float));
    m->grad_acts_memory = calloc(n_grad_acts, sizeof(float));
    m->pe = calloc((size_t)c->n_ctx * (size_t)c->n_embd, sizeof(float));
    m->src_off = calloc((size_t)max_B + 1, sizeof(int32_t));
    m->src_pos = calloc((size_t)max_B * (size_t)max_src, sizeof(int32_t));
    m->dec_pos = calloc((size_t)max_B * (size_t)max_T, sizeof(int32_t));
    if (!m->params_memory || !m->grads_memory || !m->acts_memory || !m->grad_acts_memory || !m->pe || !m->src_off ||
        !m->src_pos || !m->dec_pos) {
        encdec_free(m);
        return sac_fail(err, SAC_ERR_NOMEM, "encdec: out of memory (%zu parameters, %zu activations)", m->n_params,
                        n_acts + n_grad_acts);
    }
    point_params(&m->params, m->params_memory, c);
    point_params(&m->grads, m->grads_memory, c);
    point_acts(&m->acts, m->acts_memory, c, max_B, max_src, max_T);
    point_grad_acts(&m->grad_acts, m->grad_acts_memory, c, max_B, max_src, max_T);
    /* the engine's sinusoids (src/forward.c add_sinusoid): the angle in double, then float */
    const int64_t E = c->n_embd;
    for (int64_t p = 0; p < c->n_ctx; p++)
        for (int64_t i = 0; i < E / 2; i++) {
            const double angle = (double)p * pow(10000.0, -2.0 * (double)i / (double)E);
            m->pe[p * E + 2 * i] = (float)sin(angle);
            m->pe[p * E + 2 * i + 1] = (float)cos(angle);
        }
    return SAC_OK;
}

void encdec_free(encdec_model *m) {
    free(m->params_memory);
    free(m->grads_memory);
    free(m->acts_memory);
    free(m->grad_acts_memory);
    free(m->pe);
    free(m->src_off);
    free(m->src_pos);
    free(m->dec_pos);
    memset(m, 0, sizeof *m);
}

void encdec_init(encdec_model *m, train_rng *rng) {
    const encdec_config *c = &m->config;
    encdec_tensor t[ENCDEC_N_TENSORS];
    float **slots[ENCDEC_N_TENSORS];
    encdec_tensors(c, t);
    param_slots(&m->params, slots);
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) {
        const size_t n = encdec_tensor_size(c, &t[i]);
        float *p = *slots[i];
        const int is_norm_weight = strstr(t[i].name, "norm.weight") != NULL;
        const int writes_residual = !strcmp(t[i].name, "attn_output.weight") ||
                                    !strcmp(t[i].name, "cross_attn_output.weight") ||
                                    !strcmp(t[i].name, "ffn_down.weight");
        /* encoder blocks write the residual stream twice, decoder blocks three times */
        const double writes = t[i].stack == ENCDEC_ENCODER ? 2.0 * c->n_enc_layer : 3.0 * c->n_dec_layer;
        const double std = 1.0 / sqrt((double)t[i].cols) / (writes_residual ? sqrt(writes) : 1.0);
        for (size_t j = 0; j < n; j++) {
            if (t[i].is_matrix) p[j] = (float)(std * train_rng_normal(rng));
            else p[j] = is_norm_weight ? 1.0f : 0.0f;
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Token embeddings and attention over ragged sources                                        */
/* ---------------------------------------------------------------------------------------- */

typedef struct embed_task {
    float *out, *dwte;
    const float *wte, *pe, *dout;
    const int32_t *tokens, *pos;
    int64_t N, C;
} embed_task;

static void embed_forward_task(void *arg, int ith, int nth) {
    const embed_task *a = arg;
    int64_t n0, n1;
    sac_split(a->N, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        const float *tok = a->wte + (int64_t)a->tokens[n] * a->C, *pos = a->pe + (int64_t)a->pos[n] * a->C;
        float *o = a->out + n * a->C;
        for (int64_t c = 0; c < a->C; c++) o[c] = tok[c] + pos[c];
    }
}

/* out[n] = wte[tokens[n]] + pe[pos[n]]: the positions are fixed, only the tokens learn. */
static void embed_forward(sac_pool *pool, float *out, const int32_t *tokens, const int32_t *pos, const float *wte,
                          const float *pe, int64_t N, int64_t C) {
    embed_task a = {.out = out, .wte = wte, .pe = pe, .tokens = tokens, .pos = pos, .N = N, .C = C};
    sac_pool_run_pieces(pool, embed_forward_task, &a);
}

/* Rows may share a token, so threads split the channels. */
static void embed_backward_task(void *arg, int ith, int nth) {
    const embed_task *a = arg;
    int64_t c0, c1;
    sac_split(a->C, ith, nth, &c0, &c1);
    for (int64_t n = 0; n < a->N; n++) {
        const float *d = a->dout + n * a->C;
        float *tok = a->dwte + (int64_t)a->tokens[n] * a->C;
        for (int64_t c = c0; c < c1; c++) tok[c] += d[c];
    }
}

static void embed_backward(sac_pool *pool, float *dwte, const float *dout, const int32_t *tokens, int64_t N,
                           int64_t C) {
    embed_task a = {.dwte = dwte, .dout = dout, .tokens = tokens, .N = N, .C = C};
    sac_pool_run_pieces(pool, embed_backward_task, &a);
}

/* The three attentions: the encoder's (one call per source, bidirectional), the decoder's
 * (one call for the whole batch, causal) and cross-attention (one call per source, the
 * decoder's T queries over that source's keys). */
typedef enum att_kind { ATT_ENCODER, ATT_DECODER, ATT_CROSS } att_kind;

/* Base pointers of one attention; a call's rows are found from them. Forward fills out and
 * probs; backward reads dout and probs and accumulates into dq, dk, dv. */
typedef struct att_io {
    const float *q, *k, *v;
    float *out, *probs;
    const float *dout;
    float *dq, *dk, *dv;
} att_io;

static void attend(const encdec_model *m, att_kind kind, int backward, const att_io *io) {
    const int32_t B = m->batch.B, T = m->batch.T, H = m->config.n_head, hd = m->config.n_embd / H;
    const int64_t C = m->config.n_embd;
    const int32_t n_calls = kind == ATT_DECODER ? 1 : B;
    int64_t probs_at = 0;
    for (int32_t s = 0; s < n_calls; s++) {
        attention_dims d;
        int64_t q_row, kv_row;
        if (kind == ATT_DECODER) {
            d = (attention_dims){B, T, T, H, hd, 3 * C, 3 * C, 1};
            q_row = kv_row = 0;
        } else {
            const int32_t len = m->batch.src_len[s];
            kv_row = m->src_off[s];
            if (kind == ATT_ENCODER) {
                d = (attention_dims){1, len, len, H, hd, 3 * C, 3 * C, 0};
                q_row = kv_row;
            } else {
                d = (attention_dims){1, T, len, H, hd, C, 2 * C, 0};
                q_row = (int64_t)s * T;
            }
        }
        const int64_t q_at = q_row * d.q_stride, kv_at = kv_row * d.kv_stride, out_at = q_row * C;
        if (!backward)
            attention_forward(m->pool, io->out + out_at, io->probs + probs_at, io->q + q_at, io->k + kv_at,
                              io->v + kv_at, &d);
        else
            attention_backward(m->pool, io->dq + q_at, io->dk + kv_at, io->dv + kv_at, io->dout + out_at,
                               io->probs + probs_at, io->q + q_at, io->k + kv_at, io->v + kv_at, &d);
        probs_at += (int64_t)d.B * H * d.Tq * d.Tk;
    }
}

/* Probabilities one layer of an attention kind keeps. */
static int64_t att_probs_per_layer(const encdec_model *m, att_kind kind) {
    const int64_t H = m->config.n_head, T = m->batch.T;
    if (kind == ATT_DECODER) return (int64_t)m->batch.B * H * T * T;
    int64_t n = 0;
    for (int32_t s = 0; s < m->batch.B; s++) {
        const int64_t len = m->batch.src_len[s];
        n += H * (kind == ATT_ENCODER ? len : T) * len;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Forward                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Views of one block's parameters and activations (layer l of a stack of N rows). */
typedef struct block_view {
    int decoder;
    int64_t l, N, Ns;                 /* block, rows of the stack, source rows (for cross-attention) */
    const encdec_block_params *p;
    encdec_block_params *g;
    const encdec_stack_acts *a;
    const float *x;                   /* the block's input */
    int64_t self_probs, cross_probs;  /* probabilities per layer */
} block_view;

static block_view view_of(encdec_model *m, int decoder, int64_t l) {
    const int64_t C = m->config.n_embd, Nt = (int64_t)m->batch.B * m->batch.T, Ns = m->src_off[m->batch.B];
    block_view v;
    v.decoder = decoder;
    v.l = l;
    v.N = decoder ? Nt : Ns;
    v.Ns = Ns;
    v.p = decoder ? &m->params.dec : &m->params.enc;
    v.g = decoder ? &m->grads.dec : &m->grads.enc;
    v.a = decoder ? &m->acts.dec : &m->acts.enc;
    v.x = l > 0 ? v.a->res_ffn + (l - 1) * v.N * C : decoder ? m->acts.dec_x : m->acts.enc_x;
    v.self_probs = att_probs_per_layer(m, decoder ? ATT_DECODER : ATT_ENCODER);
    v.cross_probs = decoder ? att_probs_per_layer(m, ATT_CROSS) : 0;
    return v;
}

static void block_forward(encdec_model *m, const block_view *v) {
    const encdec_config *c = &m->config;
    const int64_t C = c->n_embd, F = c->n_ff, l = v->l, N = v->N, Ns = v->Ns;
    const encdec_block_params *p = v->p;
    const encdec_stack_acts *a = v->a;
    sac_pool *pool = m->pool;
    float *ln1 = a->ln1 + l * N * C, *qkv = a->qkv + l * N * 3 * C, *att = a->att + l * N * C;
    float *res_att = a->res_att + l * N * C, *proj = m->acts.proj;

    /* self-attention: res_att = x + W_o · attention(LN1(x)) */
    layernorm_forward(pool, ln1, a->ln1_mean + l * N, a->ln1_rstd + l * N, v->x, p->attn_norm_w + l * C,
                      p->attn_norm_b + l * C, N, C, c->norm_eps);
    linear_forward(pool, qkv, ln1, p->attn_qkv_w + l * 3 * C * C, p->attn_qkv_b + l * 3 * C, N, C, 3 * C);
    const att_io self = {.q = qkv, .k = qkv + C, .v = qkv + 2 * C, .out = att,
                         .probs = a->att_probs + l * v->self_probs};
    attend(m, v->decoder ? ATT_DECODER : ATT_ENCODER, 0, &self);
    linear_forward(pool, proj, att, p->attn_out_w + l * C * C, p->attn_out_b + l * C, N, C, C);
    residual_forward(res_att, v->x, proj, N * C);
    const float *h = res_att;

    if (v->decoder) { /* cross-attention: res_cross = res_att + W_co · attention(W_cq · LNc(res_att), memory) */
        float *lnc = a->lnc + l * N * C, *cq = a->cq + l * N * C, *ckv = a->ckv + l * Ns * 2 * C;
        float *catt = a->catt + l * N * C;
        layernorm_forward(pool, lnc, a->lnc_mean + l * N, a->lnc_rstd + l * N, res_att, p->cross_norm_w + l * C,
                          p->cross_norm_b + l * C, N, C, c->norm_eps);
        linear_forward(pool, cq, lnc, p->cross_q_w + l * C * C, p->cross_q_b + l * C, N, C, C);
        linear_forward(pool, ckv, m->acts.mem, p->cross_kv_w + l * 2 * C * C, p->cross_kv_b + l * 2 * C, Ns, C,
                       2 * C);
        const att_io cross = {.q = cq, .k = ckv, .v = ckv + C, .out = catt,
                              .probs = a->cross_probs + l * v->cross_probs};
        attend(m, ATT_CROSS, 0, &cross);
        linear_forward(pool, proj, catt, p->cross_out_w + l * C * C, p->cross_out_b + l * C, N, C, C);
        residual_forward(a->res_cross + l * N * C, res_att, proj, N * C);
        h = a->res_cross + l * N * C;
    }

    /* MLP: res_ffn = h + W_down · GELU(W_up · LN2(h)) */
    float *ln2 = a->ln2 + l * N * C, *ffn_h = a->ffn_h + l * N * F, *ffn_gelu = a->ffn_gelu + l * N * F;
    layernorm_forward(pool, ln2, a->ln2_mean + l * N, a->ln2_rstd + l * N, h, p->ffn_norm_w + l * C,
                      p->ffn_norm_b + l * C, N, C, c->norm_eps);
    linear_forward(pool, ffn_h, ln2, p->ffn_up_w + l * F * C, p->ffn_up_b + l * F, N, C, F);
    gelu_forward(pool, ffn_gelu, a->ffn_tanh + l * N * F, ffn_h, N * F);
    linear_forward(pool, proj, ffn_gelu, p->ffn_down_w + l * C * F, p->ffn_down_b + l * C, N, F, C);
    residual_forward(a->res_ffn + l * N * C, h, proj, N * C);
}

float encdec_forward(encdec_model *m, const encdec_batch *b) {
    const encdec_config *c = &m->config;
    const encdec_params *p = &m->params;
    encdec_acts *a = &m->acts;
    const int64_t C = c->n_embd, V = c->n_vocab;
    sac_pool *pool = m->pool;
    m->batch = *b;
    m->has_loss = 0;

    /* where each source starts in the packed rows, and every row's position in its sequence */
    m->src_off[0] = 0;
    for (int32_t s = 0; s < b->B; s++) {
        for (int32_t t = 0; t < b->src_len[s]; t++) m->src_pos[m->src_off[s] + t] = t;
        m->src_off[s + 1] = m->src_off[s] + b->src_len[s];
    }
    const int64_t Ns = m->src_off[b->B], Nt = (int64_t)b->B * b->T;
    for (int64_t n = 0; n < Nt; n++) m->dec_pos[n] = (int32_t)(n % b->T);

    /* encoder: the memory every decoder block's cross-attention reads */
    embed_forward(pool, a->enc_x, b->src, m->src_pos, p->token_embd, m->pe, Ns, C);
    for (int64_t l = 0; l < c->n_enc_layer; l++) {
        const block_view v = view_of(m, 0, l);
        block_forward(m, &v);
    }
    layernorm_forward(pool, a->mem, a->mem_mean, a->mem_rstd, a->enc.res_ffn + (c->n_enc_layer - 1) * Ns * C,
                      p->enc_norm_w, p->enc_norm_b, Ns, C, c->norm_eps);

    /* decoder */
    embed_forward(pool, a->dec_x, b->tgt_in, m->dec_pos, p->token_embd, m->pe, Nt, C);
    for (int64_t l = 0; l < c->n_dec_layer; l++) {
        const block_view v = view_of(m, 1, l);
        block_forward(m, &v);
    }
    layernorm_forward(pool, a->lnf, a->lnf_mean, a->lnf_rstd, a->dec.res_ffn + (c->n_dec_layer - 1) * Nt * C,
                      p->out_norm_w, p->out_norm_b, Nt, C, c->norm_eps);
    linear_forward(pool, a->logits, a->lnf, p->token_embd, NULL, Nt, C, V);
    if (!b->tgt_out) return 0.0f;

    crossentropy_forward(pool, a->losses, a->probs, a->logits, b->tgt_out, Nt, V);
    double sum = 0.0;
    for (int64_t n = 0; n < Nt; n++) sum += a->losses[n];
    m->has_loss = 1;
    return (float)(sum / (double)Nt);
}

/* ---------------------------------------------------------------------------------------- */
/* Backward                                                                                  */
/* ---------------------------------------------------------------------------------------- */

void encdec_zero_grad(encdec_model *m) { memset(m->grads_memory, 0, m->n_params * sizeof(float)); }

static void zero(float *x, int64_t n) { memset(x, 0, (size_t)n * sizeof *x); }

/* On entry d->dres holds the gradient of the block's output; on return, of its input. A
 * decoder block also adds its cross-attention's gradient of the memory to d->dmem. */
static void block_backward(encdec_model *m, const block_view *v) {
    const encdec_config *c = &m->config;
    const int64_t C = c->n_embd, F = c->n_ff, l = v->l, N = v->N, Ns = v->Ns;
    const encdec_block_params *p = v->p;
    encdec_block_params *g = v->g;
    const encdec_stack_acts *a = v->a;
    encdec_grad_acts *d = &m->grad_acts;
    sac_pool *pool = m->pool;
    const float *h = v->decoder ? a->res_cross + l * N * C : a->res_att + l * N * C;

    /* MLP */
    zero(d->dffn_gelu, N * F);
    linear_backward(pool, d->dffn_gelu, g->ffn_down_w + l * C * F, g->ffn_down_b + l * C, d->dres,
                    a->ffn_gelu + l * N * F, p->ffn_down_w + l * C * F, N, F, C);
    zero(d->dffn_h, N * F);
    gelu_backward(pool, d->dffn_h, a->ffn_h + l * N * F, a->ffn_tanh + l * N * F, d->dffn_gelu, N * F);
    zero(d->dln, N * C);
    linear_backward(pool, d->dln, g->ffn_up_w + l * F * C, g->ffn_up_b + l * F, d->dffn_h, a->ln2 + l * N * C,
                    p->ffn_up_w + l * F * C, N, C, F);
    layernorm_backward(pool, d->dres, g->ffn_norm_w + l * C, g->ffn_norm_b + l * C, d->dln, h, p->ffn_norm_w + l * C,
                       a->ln2_mean + l * N, a->ln2_rstd + l * N, N, C);

    if (v->decoder) { /* cross-attention; d->dres holds d(res_cross) */
        const float *cq = a->cq + l * N * C, *ckv = a->ckv + l * Ns * 2 * C;
        zero(d->datt, N * C);
        linear_backward(pool, d->datt, g->cross_out_w + l * C * C, g->cross_out_b + l * C, d->dres,
                        a->catt + l * N * C, p->cross_out_w + l * C * C, N, C, C);
        zero(d->dcq, N * C);
        zero(d->dckv, Ns * 2 * C);
        const att_io cross = {.q = cq, .k = ckv, .v = ckv + C, .probs = a->cross_probs + l * v->cross_probs,
                              .dout = d->datt, .dq = d->dcq, .dk = d->dckv, .dv = d->dckv + C};
        attend(m, ATT_CROSS, 1, &cross);
        linear_backward(pool, d->dmem, g->cross_kv_w + l * 2 * C * C, g->cross_kv_b + l * 2 * C, d->dckv,
                        m->acts.mem, p->cross_kv_w + l * 2 * C * C, Ns, C, 2 * C);
        zero(d->dln, N * C);
        linear_backward(pool, d->dln, g->cross_q_w + l * C * C, g->cross_q_b + l * C, d->dcq, a->lnc + l * N * C,
                        p->cross_q_w + l * C * C, N, C, C);
        layernorm_backward(pool, d->dres, g->cross_norm_w + l * C, g->cross_norm_b + l * C, d->dln,
                           a->res_att + l * N * C, p->cross_norm_w + l * C, a->lnc_mean + l * N,
                           a->lnc_rstd + l * N, N, C);
    }

    /* self-attention; d->dres holds d(res_att) */
    const float *qkv = a->qkv + l * N * 3 * C;
    zero(d->datt, N * C);
    linear_backward(pool, d->datt, g->attn_out_w + l * C * C, g->attn_out_b + l * C, d->dres, a->att + l * N * C,
                    p->attn_out_w + l * C * C, N, C, C);
    zero(d->dqkv, N * 3 * C);
    const att_io self = {.q = qkv, .k = qkv + C, .v = qkv + 2 * C, .probs = a->att_probs + l * v->self_probs,
                         .dout = d->datt, .dq = d->dqkv, .dk = d->dqkv + C, .dv = d->dqkv + 2 * C};
    attend(m, v->decoder ? ATT_DECODER : ATT_ENCODER, 1, &self);
    zero(d->dln, N * C);
    linear_backward(pool, d->dln, g->attn_qkv_w + l * 3 * C * C, g->attn_qkv_b + l * 3 * C, d->dqkv,
                    a->ln1 + l * N * C, p->attn_qkv_w + l * 3 * C * C, N, C, 3 * C);
    layernorm_backward(pool, d->dres, g->attn_norm_w + l * C, g->attn_norm_b + l * C, d->dln, v->x,
                       p->attn_norm_w + l * C, a->ln1_mean + l * N, a->ln1_rstd + l * N, N, C);
}

void encdec_backward(encdec_model *m) {
    if (!m->has_loss) return; /* the last forward computed no loss */
    const encdec_config *c = &m->config;
    const encdec_params *p = &m->params;
    encdec_params *g = &m->grads;
    const encdec_acts *a = &m->acts;
    encdec_grad_acts *d = &m->grad_acts;
    const encdec_batch *b = &m->batch;
    const int64_t C = c->n_embd, V = c->n_vocab, Nt = (int64_t)b->B * b->T, Ns = m->src_off[b->B];
    sac_pool *pool = m->pool;

    /* the loss is the mean over the Nt target positions */
    for (int64_t n = 0; n < Nt; n++) d->dlosses[n] = 1.0f / (float)Nt;
    zero(d->dlogits, Nt * V);
    crossentropy_backward(pool, d->dlogits, a->probs, b->tgt_out, d->dlosses, Nt, V);
    zero(d->dln, Nt * C);
    linear_backward(pool, d->dln, g->token_embd, NULL, d->dlogits, a->lnf, p->token_embd, Nt, C, V);
    zero(d->dres, Nt * C);
    layernorm_backward(pool, d->dres, g->out_norm_w, g->out_norm_b, d->dln,
                       a->dec.res_ffn + (c->n_dec_layer - 1) * Nt * C, p->out_norm_w, a->lnf_mean, a->lnf_rstd, Nt,
                       C);

    /* decoder, collecting the memory's gradient from every cross-attention */
    zero(d->dmem, Ns * C);
    for (int64_t l = c->n_dec_layer - 1; l >= 0; l--) {
        const block_view v = view_of(m, 1, l);
        block_backward(m, &v);
    }
    embed_backward(pool, g->token_embd, d->dres, b->tgt_in, Nt, C);

    /* encoder */
    zero(d->dres, Ns * C);
    layernorm_backward(pool, d->dres, g->enc_norm_w, g->enc_norm_b, d->dmem,
                       a->enc.res_ffn + (c->n_enc_layer - 1) * Ns * C, p->enc_norm_w, a->mem_mean, a->mem_rstd, Ns,
                       C);
    for (int64_t l = c->n_enc_layer - 1; l >= 0; l--) {
        const block_view v = view_of(m, 0, l);
        block_backward(m, &v);
    }
    embed_backward(pool, g->token_embd, d->dres, b->src, Ns, C);
}

/* ---------------------------------------------------------------------------------------- */
/* Export                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static sac_status set_id(gguf_writer *w, const char *key, int32_t id, sac_error *err) {
    return id >= 0 ? sac_gguf_writer_set_u32(w, key, (uint32_t)id, err) : SAC_OK;
}

sac_status encdec_export_gguf(const encdec_model *m, const char *name, const encdec_vocab *vocab, uint8_t **out,
                              size_t *size, sac_error *err) {
    const encdec_config *c = &m->config;
    if (vocab->n_tokens > c->n_vocab)
        return sac_fail(err, SAC_ERR_ARG, "encdec: %d tokens for %d embedding rows", vocab->n_tokens, c->n_vocab);
    gguf_writer *w;
    sac_status st = sac_gguf_writer_new(&w, err);
    if (st) return st;

    if ((st = sac_gguf_writer_set_string(w, "general.architecture", "encdec", err)) ||
        (st = sac_gguf_writer_set_string(w, "general.name", name, err)) ||
        (st = sac_gguf_writer_set_u32(w, "general.file_type", 0, err)) || /* llama.cpp's ALL_F32 */
        (st = sac_gguf_writer_set_u32(w, "encdec.context_length", (uint32_t)c->n_ctx, err)) ||
        (st = sac_gguf_writer_set_u32(w, "encdec.embedding_length", (uint32_t)c->n_embd, err)) ||
        (st = sac_gguf_writer_set_u32(w, "encdec.feed_forward_length", (uint32_t)c->n_ff, err)) ||
        (st = sac_gguf_writer_set_u32(w, "encdec.encoder.block_count", (uint32_t)c->n_enc_layer, err)) ||
        (st = sac_gguf_writer_set_u32(w, "encdec.block_count", (uint32_t)c->n_dec_layer, err)) ||
        (st = sac_gguf_writer_set_u32(w, "encdec.attention.head_count", (uint32_t)c->n_head, err)) ||
        (st = sac_gguf_writer_set_f32(w, "encdec.attention.layer_norm_epsilon", c->norm_eps, err)) ||
        (st = sac_gguf_writer_set_string(w, "tokenizer.ggml.model", "char", err)) ||
        (st = sac_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", vocab->tokens, (uint64_t)vocab->n_tokens,
                                           err)) ||
        (st = sac_gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_I32, (uint64_t)vocab->n_tokens,
                                    vocab->token_types, (size_t)vocab->n_tokens * sizeof(int32_t), err)) ||
        (st = set_id(w, "tokenizer.ggml.bos_token_id", vocab->bos_id, err)) ||
        (st = set_id(w, "tokenizer.ggml.eos_token_id", vocab->eos_id, err)) ||
        (st = set_id(w, "tokenizer.ggml.padding_token_id", vocab->pad_id, err)) ||
        (st = set_id(w, "tokenizer.ggml.unknown_token_id", vocab->unknown_id, err)) ||
        /* the source is plain text; the caller starts the decoder with <bos> itself */
        (st = sac_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", 0, err)))
        goto done;

    /* tensors in buffer order, a stack's tensors block by block: token_embd, enc.blk.0.*, …,
     * enc.output_norm.*, dec.blk.0.*, …, output_norm.* */
    encdec_tensor t[ENCDEC_N_TENSORS];
    float **slots[ENCDEC_N_TENSORS];
    encdec_tensors(c, t);
    encdec_params p = m->params;
    param_slots(&p, slots);
    for (int i = 0; i < ENCDEC_N_TENSORS;) {
        int end = i + 1; /* the run of tensors of one stack */
        while (t[i].stack != ENCDEC_WHOLE && end < ENCDEC_N_TENSORS && t[end].stack == t[i].stack) end++;
        const int n_blocks = t[i].stack == ENCDEC_ENCODER ? c->n_enc_layer
                             : t[i].stack == ENCDEC_DECODER ? c->n_dec_layer
                                                            : 1;
        for (int l = 0; l < n_blocks; l++)
            for (int k = i; k < end; k++) {
                char full[96];
                if (t[k].stack == ENCDEC_WHOLE) snprintf(full, sizeof full, "%s", t[k].name);
                else snprintf(full, sizeof full, "%s.blk.%d.%s", t[k].stack == ENCDEC_ENCODER ? "enc" : "dec", l,
                              t[k].name);
                const int64_t n = t[k].rows * t[k].cols;
                const int64_t ne[2] = {t[k].cols, t[k].rows};
                if ((st = sac_gguf_writer_add_tensor(w, full, SAC_TYPE_F32, t[k].is_matrix ? 2 : 1, ne, *slots[k] + l * n,
                                                 (size_t)n * sizeof(float), err)))
                    goto done;
            }
        i = end;
    }
    st = sac_gguf_writer_to_buffer(w, out, size, err);
done:
    sac_gguf_writer_free(w);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Translation through the engine                                                            */
/* ---------------------------------------------------------------------------------------- */

sac_status encdec_translate(sac_model *model, sac_context *ctx, const char *src, char *out, size_t cap,
                            sac_error *err) {
    const int32_t bos = sac_token_bos(model), eos = sac_token_eos(model), n_ctx = sac_context_n_ctx(ctx);
    if (cap < 1) return sac_fail(err, SAC_ERR_ARG, "no room for the translation");
    out[0] = '\0';
    if (bos < 0 || eos < 0) return sac_fail(err, SAC_ERR_MODEL, "the model has no <bos> or <eos> token");
    int32_t *ids = malloc((size_t)n_ctx * sizeof *ids), n_ids = 0;
    if (!ids) return sac_fail(err, SAC_ERR_NOMEM, "out of memory");
    sac_status st = sac_tokenize(model, src, strlen(src), 0, ids, n_ctx, &n_ids);
    if (st) {
        free(ids);
        if (n_ids > n_ctx)
            return sac_fail(err, SAC_ERR_CONTEXT, "'%s' is %d tokens, the context holds %d", src, n_ids, n_ctx);
        return sac_fail(err, st, "tokenize: %s", sac_model_errmsg(model));
    }
    if (n_ids == 0) {
        free(ids);
        return sac_fail(err, SAC_ERR_ARG, "the source is empty");
    }
    st = sac_encode(ctx, ids, n_ids, NULL);
    free(ids);
    if (st) return sac_fail(err, st, "encode: %s", sac_context_errmsg(ctx));
    sac_sampling_params sp = sac_sampling_default_params();
    sp.temperature = 0.0f; /* greedy */
    if ((st = sac_sampler_init(ctx, &sp))) return sac_fail(err, st, "sampler: %s", sac_context_errmsg(ctx));

    size_t len = 0;
    for (int32_t tok = bos; sac_context_n_past(ctx) < n_ctx;) {
        if ((st = sac_eval(ctx, &tok, 1, NULL, 0)) || (st = sac_sample(ctx, &tok)))
            return sac_fail(err, st, "decode: %s", sac_context_errmsg(ctx));
        if (tok == eos) break;
        const char *bytes;
        size_t n;
        if ((st = sac_token_bytes(model, tok, &bytes, &n))) return sac_fail(err, st, "%s", sac_model_errmsg(model));
        for (size_t i = 0; i < n && len + 1 < cap; i++) out[len++] = bytes[i];
        out[len] = '\0';
    }
    return SAC_OK;
}
