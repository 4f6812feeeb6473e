/* context.c — making a context, evaluating tokens through it, and reading what it keeps
 * (logits and captured attention). The math is in forward.c. */
#include "context.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

sac_context_params sac_context_default_params(void) {
    sac_context_params p = {0};
    p.n_ctx = 0;
    p.n_batch = 64;
    p.n_threads = 1;
    p.capture_attention = 0;
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Allocation                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Allocates n floats (n computed with overflow checks by the caller) or records NOMEM. */
static sac_status alloc_floats(sac_context *ctx, float **p, uint64_t n, const char *what) {
    if (n > SIZE_MAX / sizeof(float) || !(*p = calloc(n ? (size_t)n : 1, sizeof(float))))
        return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the %s (%" PRIu64 " floats)", what, n);
    return SAC_OK;
}

static sac_status alloc_activations(sac_context *ctx) {
    const sac_model *m = ctx->model;
    const sac_model_info *hp = &m->info;
    sac_activations *a = &ctx->act;
    const uint64_t B = (uint64_t)ctx->n_batch, E = (uint64_t)hp->n_embd, F = (uint64_t)hp->n_ff;
    const uint64_t KV = (uint64_t)hp->n_head_kv * (uint64_t)hp->head_dim;
    sac_status st;
    if ((st = alloc_floats(ctx, &a->x, B * E, "residual stream")) ||
        (st = alloc_floats(ctx, &a->xn, B * E, "normalised activations")) ||
        (st = alloc_floats(ctx, &a->qkv, m->arch != SAC_ARCH_LLAMA ? B * 3 * E : 0, "fused QKV")) ||
        (st = alloc_floats(ctx, &a->q, B * E, "queries")) ||
        (st = alloc_floats(ctx, &a->k, B * KV, "keys")) ||
        (st = alloc_floats(ctx, &a->v, B * KV, "values")) ||
        (st = alloc_floats(ctx, &a->att, B * E, "attention output")) ||
        (st = alloc_floats(ctx, &a->proj, B * E, "projection output")) ||
        (st = alloc_floats(ctx, &a->ff, B * F, "feed-forward hidden")) ||
        (st = alloc_floats(ctx, &a->ff2, m->arch == SAC_ARCH_LLAMA ? B * F : 0, "feed-forward gate")) ||
        (st = alloc_floats(ctx, &a->rope, B * (uint64_t)(hp->rope_dim ? hp->rope_dim : 1), "RoPE table")) ||
        (st = alloc_floats(ctx, &a->scores, (uint64_t)ctx->n_threads * (uint64_t)ctx->n_ctx, "attention scores")))
        return st;

    /* Workspace: the largest any weight matrix needs for a full batch. */
    size_t work = 0;
    const sac_matrix *mats[2] = {&m->output, &m->token_embd};
    for (int i = 0; i < 2; i++) {
        size_t s = sac_matmul_work_size(mats[i], ctx->n_batch);
        if (s > work) work = s;
    }
    for (int32_t l = 0; l < hp->n_layer + hp->n_encoder_layer; l++) {
        const sac_layer *L = l < hp->n_layer ? &m->layers[l] : &m->enc_layers[l - hp->n_layer];
        const sac_matrix *lm[10] = {&L->wqkv, &L->wq,     &L->wk,      &L->wo,       &L->w_up,
                                    &L->w_gate, &L->w_down, &L->cross_q, &L->cross_kv, &L->cross_o};
        for (int i = 0; i < 10; i++) {
            if (!lm[i]->data) continue;
            size_t s = sac_matmul_work_size(lm[i], ctx->n_batch);
            if (s > work) work = s;
        }
    }
    if (!(a->work = malloc(work ? work : 1)))
        return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the matmul workspace (%zu bytes)", work);
    return SAC_OK;
}

static void free_activations(sac_activations *a) {
    float *bufs[] = {a->x, a->xn, a->qkv, a->q, a->k, a->v, a->att, a->proj, a->ff, a->ff2, a->rope, a->scores};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) free(bufs[i]);
    free(a->work);
    memset(a, 0, sizeof *a);
}

static sac_status setup(sac_context *ctx, const sac_context_params *p) {
    const sac_model *m = ctx->model;
    const sac_model_info *hp = &m->info;
    if (p->n_ctx < 0 || p->n_batch < 0 || p->n_threads < 0)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "n_ctx, n_batch and n_threads must be >= 0 (got %d, %d, %d)",
                        p->n_ctx, p->n_batch, p->n_threads);
    if (p->n_ctx > hp->n_ctx && m->arch == SAC_ARCH_GPT2)
        return sac_fail(&ctx->error, SAC_ERR_ARG,
                        "n_ctx %d exceeds the model's %d learned positions", p->n_ctx, hp->n_ctx);
    if (p->n_threads > 256) return sac_fail(&ctx->error, SAC_ERR_ARG, "n_threads %d is more than 256", p->n_threads);
    ctx->n_ctx = p->n_ctx ? p->n_ctx : hp->n_ctx;
    ctx->n_batch = p->n_batch ? p->n_batch : 64;
    /* The encoder sees the whole source at once: encdec batches span the context. */
    if (ctx->n_batch > ctx->n_ctx || m->arch == SAC_ARCH_ENCDEC) ctx->n_batch = ctx->n_ctx;
    ctx->capture = p->capture_attention != 0;

    sac_status st = sac_pool_new(p->n_threads ? p->n_threads : 1, &ctx->pool, &ctx->error);
    if (st) return st;
    ctx->n_threads = sac_pool_size(ctx->pool);

    const uint64_t kv = (uint64_t)hp->n_layer * (uint64_t)ctx->n_ctx * (uint64_t)hp->n_head_kv * hp->head_dim;
    if ((st = alloc_floats(ctx, &ctx->k_cache, kv, "key cache")) ||
        (st = alloc_floats(ctx, &ctx->v_cache, kv, "value cache")))
        return st;
    ctx->key_mask = calloc((size_t)ctx->n_ctx, 1);
    ctx->tokens = calloc((size_t)ctx->n_ctx, sizeof *ctx->tokens);
    if (!ctx->key_mask || !ctx->tokens) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the token history");
    if ((st = alloc_activations(ctx))) return st;
    if (m->arch == SAC_ARCH_ENCDEC) {
        const uint64_t cross = (uint64_t)hp->n_layer * (uint64_t)ctx->n_ctx * (uint64_t)hp->n_embd;
        if ((st = alloc_floats(ctx, &ctx->cross_k, cross, "cross-attention keys")) ||
            (st = alloc_floats(ctx, &ctx->cross_v, cross, "cross-attention values")))
            return st;
        if (!(ctx->src_mask = calloc((size_t)ctx->n_ctx, 1)))
            return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the source mask");
    }
    ctx->logits_cap = (size_t)hp->n_vocab;
    if ((st = alloc_floats(ctx, &ctx->logits, ctx->logits_cap, "logits"))) return st;
    ctx->sampler.prob = malloc((size_t)hp->n_vocab * sizeof *ctx->sampler.prob);
    ctx->sampler.index = malloc(2 * (size_t)hp->n_vocab * sizeof *ctx->sampler.index);
    if (!ctx->sampler.prob || !ctx->sampler.index) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the sampler");
    return SAC_OK;
}

uint64_t sac_context_memory(const sac_model *m, const sac_context_params *params) {
    if (!m || !m->loaded || m->vocab_only) return 0;
    sac_context_params p = params ? *params : sac_context_default_params();
    const sac_model_info *hp = &m->info;
    const uint64_t n_ctx = p.n_ctx > 0 ? (uint64_t)p.n_ctx : (uint64_t)hp->n_ctx;
    uint64_t B = p.n_batch > 0 ? (uint64_t)p.n_batch : 64;
    if (B > n_ctx) B = n_ctx;
    const uint64_t T = p.n_threads > 0 ? (uint64_t)p.n_threads : 1;
    const uint64_t E = (uint64_t)hp->n_embd, F = (uint64_t)hp->n_ff, V = (uint64_t)hp->n_vocab;
    const uint64_t KV = (uint64_t)hp->n_head_kv * (uint64_t)hp->head_dim, L = (uint64_t)hp->n_layer;
    uint64_t floats = 2 * L * n_ctx * KV        /* KV cache */
                      + B * (9 * E + 2 * KV + 2 * F + (uint64_t)hp->rope_dim) /* activations (upper bound) */
                      + T * n_ctx              /* attention scores */
                      + V;                     /* logits */
    uint64_t bytes = floats * 4 + B * (E + F) * 2 /* matmul workspace (int8 blocks, upper bound) */
                     + n_ctx * 5               /* key mask and token history */
                     + V * 16;                 /* sampler */
    if (p.capture_attention) bytes += 4 * L * (uint64_t)hp->n_head * (n_ctx * (n_ctx + 1) / 2);
    if (m->arch == SAC_ARCH_ENCDEC) {
        /* batches span the context; cross keys and values; encoder and cross capture */
        bytes += 4 * (n_ctx - B) * (9 * E + 2 * KV + 2 * F) + 8 * L * n_ctx * E + n_ctx;
        if (p.capture_attention)
            bytes += 4 * (uint64_t)hp->n_head * n_ctx * n_ctx * (L + (uint64_t)hp->n_encoder_layer);
    }
    return bytes;
}

sac_status sac_context_new(const sac_model *model, const sac_context_params *params, sac_context **out) {
    if (!out) return SAC_ERR_ARG;
    sac_context *ctx = calloc(1, sizeof *ctx);
    *out = ctx;
    if (!ctx) return SAC_ERR_NOMEM;
    if (!model || !model->loaded)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "the model is NULL or failed to load");
    if (model->vocab_only)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "the model was loaded vocab-only (SAC_LOAD_VOCAB_ONLY): no weights to run");
    ctx->model = model;
    sac_context_params defaults = sac_context_default_params();
    return setup(ctx, params ? params : &defaults);
}

void sac_context_free(sac_context *ctx) {
    if (!ctx) return;
    sac_pool_free(ctx->pool);
    free(ctx->k_cache);
    free(ctx->v_cache);
    free(ctx->key_mask);
    free(ctx->tokens);
    free_activations(&ctx->act);
    free(ctx->logits);
    free(ctx->attn);
    free(ctx->sampler.prob);
    free(ctx->sampler.index);
    free(ctx->src_mask);
    free(ctx->cross_k);
    free(ctx->cross_v);
    free(ctx->cross_attn);
    free(ctx->enc_attn);
    free(ctx);
}

const char *sac_context_errmsg(const sac_context *ctx) {
    return ctx ? ctx->error.msg : "out of memory (no context handle)";
}

void sac_context_reset(sac_context *ctx) {
    if (!ctx) return;
    ctx->n_past = 0;
    ctx->logits_rows = 0;
    ctx->attn_rows = 0;
    ctx->n_src = 0;
    ctx->enc_attn_valid = 0;
}

int32_t sac_context_n_source(const sac_context *ctx) { return ctx ? ctx->n_src : 0; }

int32_t sac_context_n_past(const sac_context *ctx) { return ctx ? ctx->n_past : 0; }
int32_t sac_context_n_ctx(const sac_context *ctx) { return ctx ? ctx->n_ctx : 0; }
int32_t sac_context_n_threads(const sac_context *ctx) { return ctx ? ctx->n_threads : 0; }

/* ---------------------------------------------------------------------------------------- */
/* Evaluation                                                                                */
/* ---------------------------------------------------------------------------------------- */

static int context_usable(const sac_context *ctx) { return ctx && ctx->model && ctx->k_cache && ctx->act.work; }

static sac_status check_ids(sac_context *ctx, const int32_t *tokens, int32_t n_tokens) {
    const int32_t V = ctx->model->info.n_vocab;
    for (int32_t i = 0; i < n_tokens; i++)
        if (tokens[i] < 0 || tokens[i] >= V)
            return sac_fail(&ctx->error, SAC_ERR_ARG, "token id %d at index %d is out of range (vocabulary size %d)",
                            tokens[i], i, V);
    return SAC_OK;
}

/* Cross-attention capture for n_ctx decoder rows against the current source. */
static sac_status reserve_cross_capture(sac_context *ctx) {
    const sac_model_info *hp = &ctx->model->info;
    size_t rows = (size_t)hp->n_layer * hp->n_head * (size_t)ctx->n_src;
    size_t enc = (size_t)hp->n_encoder_layer * hp->n_head * (size_t)ctx->n_src * (size_t)ctx->n_src;
    float *c = realloc(ctx->cross_attn, ((size_t)ctx->n_ctx * rows + 1) * sizeof(float));
    if (c) ctx->cross_attn = c;
    float *e = realloc(ctx->enc_attn, (enc + 1) * sizeof(float));
    if (e) ctx->enc_attn = e;
    if (!c || !e) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for cross-attention capture");
    return SAC_OK;
}

sac_status sac_encode(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask) {
    if (!ctx) return SAC_ERR_ARG;
    if (!context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (ctx->model->arch != SAC_ARCH_ENCDEC)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "sac_encode needs an encoder-decoder model, this one is %s",
                        ctx->model->arch_name);
    if (n_tokens <= 0 || !tokens)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "no source tokens to encode (n_tokens = %d)", n_tokens);
    if (n_tokens > ctx->n_ctx)
        return sac_fail(&ctx->error, SAC_ERR_CONTEXT, "the source has %d tokens, the context holds %d", n_tokens,
                        ctx->n_ctx);
    sac_status st = check_ids(ctx, tokens, n_tokens);
    if (st) return st;
    int32_t visible = 0;
    for (int32_t i = 0; i < n_tokens; i++) visible += !key_mask || key_mask[i];
    if (!visible) return sac_fail(&ctx->error, SAC_ERR_ARG, "every source token is masked as padding");
    sac_context_reset(ctx);
    ctx->n_src = n_tokens;
    for (int32_t i = 0; i < n_tokens; i++) ctx->src_mask[i] = !key_mask || key_mask[i];
    if (ctx->capture && (st = reserve_cross_capture(ctx))) {
        ctx->n_src = 0;
        return st;
    }
    sac_encoder_forward(ctx, tokens, n_tokens);
    ctx->enc_attn_valid = ctx->capture;
    return SAC_OK;
}

sac_status sac_eval(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask,
                    uint32_t flags) {
    if (!ctx) return SAC_ERR_ARG;
    sac_status st;
    if (!context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    const sac_model_info *hp = &ctx->model->info;
    if (flags & ~(uint32_t)SAC_EVAL_ALL_LOGITS)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown eval flags 0x%x", (unsigned)flags);
    if (n_tokens <= 0 || !tokens)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "no tokens to evaluate (n_tokens = %d)", n_tokens);
    if (ctx->model->arch == SAC_ARCH_ENCDEC && ctx->n_src == 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "encoder-decoder model: call sac_encode with a source first");
    if ((st = check_ids(ctx, tokens, n_tokens))) return st;
    if (n_tokens > ctx->n_ctx - ctx->n_past)
        return sac_fail(&ctx->error, SAC_ERR_CONTEXT,
                        "%d tokens do not fit in the context: it holds %d tokens and already has %d",
                        n_tokens, ctx->n_ctx, ctx->n_past);

    const int all = (flags & SAC_EVAL_ALL_LOGITS) != 0;
    const size_t need = (size_t)(all ? n_tokens : 1) * (size_t)hp->n_vocab;
    if (need > ctx->logits_cap) {
        float *grown = realloc(ctx->logits, need * sizeof(float));
        if (!grown) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for %d rows of logits", n_tokens);
        ctx->logits = grown;
        ctx->logits_cap = need;
    }
    if (ctx->capture && (st = sac_attn_reserve(ctx, ctx->n_past + n_tokens))) return st;

    /* Split into batches of n_batch; only the last batch's last row matters without `all`. */
    for (int32_t done = 0; done < n_tokens;) {
        int32_t n = n_tokens - done < ctx->n_batch ? n_tokens - done : ctx->n_batch;
        const int last = done + n == n_tokens;
        const int32_t logits_row = all ? done : last ? 0 : -1;
        sac_forward(ctx, tokens + done, n, key_mask ? key_mask + done : NULL, all, logits_row);
        ctx->n_past += n;
        done += n;
    }
    ctx->logits_rows = all ? n_tokens : 1;
    if (ctx->capture) ctx->attn_rows = ctx->n_past;
    return SAC_OK;
}

const float *sac_logits(const sac_context *ctx, int32_t *n_rows, int32_t *n_vocab) {
    if (n_rows) *n_rows = ctx ? ctx->logits_rows : 0;
    if (n_vocab) *n_vocab = ctx && ctx->model ? ctx->model->info.n_vocab : 0;
    return ctx && ctx->logits_rows ? ctx->logits : NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Attention capture                                                                         */
/* ---------------------------------------------------------------------------------------- */

size_t sac_attn_row_offset(const sac_context *ctx, int64_t q) {
    const sac_model_info *hp = &ctx->model->info;
    return (size_t)hp->n_layer * (size_t)hp->n_head * (size_t)(q * (q + 1) / 2);
}

sac_status sac_attn_reserve(sac_context *ctx, int32_t n_rows) {
    const size_t need = sac_attn_row_offset(ctx, n_rows);
    if (need <= ctx->attn_cap) return SAC_OK;
    /* Grow geometrically, but never past what the whole context needs. */
    size_t cap = ctx->attn_cap * 2 > need ? ctx->attn_cap * 2 : need;
    const size_t full = sac_attn_row_offset(ctx, ctx->n_ctx);
    if (cap > full) cap = full;
    float *grown = realloc(ctx->attn, cap * sizeof(float));
    if (!grown)
        return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for attention capture (%zu MB)",
                        cap * sizeof(float) >> 20);
    ctx->attn = grown;
    ctx->attn_cap = cap;
    return SAC_OK;
}

int32_t sac_attention_enabled(const sac_context *ctx) { return ctx ? ctx->capture : 0; }

sac_status sac_attention_enable(sac_context *ctx, int32_t on) {
    if (!ctx) return SAC_ERR_ARG;
    if (!context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (on && !ctx->capture) {
        /* Rows of tokens evaluated while capture was off read as zeros. */
        sac_status st = sac_attn_reserve(ctx, ctx->n_past);
        if (st) return st;
        size_t from = sac_attn_row_offset(ctx, ctx->attn_rows), to = sac_attn_row_offset(ctx, ctx->n_past);
        if (to > from) memset(ctx->attn + from, 0, (to - from) * sizeof(float));
        if (ctx->n_src) {
            if ((st = reserve_cross_capture(ctx))) return st;
            const size_t row = (size_t)ctx->model->info.n_layer * ctx->model->info.n_head * ctx->n_src;
            memset(ctx->cross_attn + ctx->attn_rows * row, 0, (size_t)(ctx->n_past - ctx->attn_rows) * row * sizeof(float));
        }
        ctx->attn_rows = ctx->n_past;
    }
    ctx->capture = on != 0;
    return SAC_OK;
}

sac_status sac_attention_row(sac_context *ctx, int32_t query, const float **row, int32_t *n_keys) {
    if (!ctx) return SAC_ERR_ARG;
    if (query < 0 || query >= ctx->attn_rows)
        return sac_fail(&ctx->error, ctx->attn_rows ? SAC_ERR_ARG : SAC_ERR_STATE,
                        "no captured attention for query %d (%d rows captured; is capture on?)", query,
                        ctx->attn_rows);
    if (row) *row = ctx->attn + sac_attn_row_offset(ctx, query);
    if (n_keys) *n_keys = query + 1;
    return SAC_OK;
}

sac_status sac_attention_matrix(sac_context *ctx, int32_t layer, int32_t head, float *out, size_t out_len) {
    return sac_attention_get(ctx, SAC_ATTENTION_SELF, layer, head, out, out_len, NULL, NULL);
}

sac_status sac_attention_cross_row(sac_context *ctx, int32_t query, const float **row, int32_t *n_keys) {
    if (!ctx) return SAC_ERR_ARG;
    if (!ctx->n_src)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "no cross-attention: not an encoder-decoder model, or nothing encoded");
    if (query < 0 || query >= ctx->attn_rows)
        return sac_fail(&ctx->error, ctx->attn_rows ? SAC_ERR_ARG : SAC_ERR_STATE,
                        "no captured attention for query %d (%d rows captured; is capture on?)", query, ctx->attn_rows);
    const sac_model_info *hp = &ctx->model->info;
    if (row) *row = ctx->cross_attn + (size_t)query * hp->n_layer * hp->n_head * ctx->n_src;
    if (n_keys) *n_keys = ctx->n_src;
    return SAC_OK;
}

sac_status sac_attention_get(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head, float *out,
                             size_t out_len, int32_t *n_queries, int32_t *n_keys) {
    if (!ctx) return SAC_ERR_ARG;
    if (!context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    const sac_model_info *hp = &ctx->model->info;
    int32_t nq, nk, n_layers;
    switch (kind) {
    case SAC_ATTENTION_SELF: nq = nk = ctx->attn_rows; n_layers = hp->n_layer; break;
    case SAC_ATTENTION_CROSS: nq = ctx->attn_rows; nk = ctx->n_src; n_layers = hp->n_layer; break;
    case SAC_ATTENTION_ENCODER: nq = nk = ctx->enc_attn_valid ? ctx->n_src : 0; n_layers = hp->n_encoder_layer; break;
    default: return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown attention kind %d", (int)kind);
    }
    if (kind != SAC_ATTENTION_SELF && ctx->model->arch != SAC_ARCH_ENCDEC)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "cross and encoder attention need an encoder-decoder model");
    if (layer < 0 || layer >= n_layers || head < 0 || head >= hp->n_head)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "layer %d / head %d out of range (%d layers, %d heads)", layer, head,
                        n_layers, hp->n_head);
    if (nq == 0 || nk == 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "no captured attention (is capture on, and was anything evaluated?)");
    if (n_queries) *n_queries = nq;
    if (n_keys) *n_keys = nk;
    if (!out) return SAC_OK;
    if (out_len < (size_t)nq * (size_t)nk)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "the output holds %zu floats, the matrix needs %d x %d", out_len, nq, nk);
    const size_t H = (size_t)hp->n_head;
    for (int32_t q = 0; q < nq; q++) {
        float *dst = out + (size_t)q * nk;
        if (kind == SAC_ATTENTION_SELF) {
            memcpy(dst, ctx->attn + sac_attn_row_offset(ctx, q) + ((size_t)layer * H + head) * (q + 1),
                   (size_t)(q + 1) * sizeof(float));
            memset(dst + q + 1, 0, (size_t)(nk - q - 1) * sizeof(float));
        } else if (kind == SAC_ATTENTION_CROSS) {
            memcpy(dst, ctx->cross_attn + (((size_t)q * hp->n_layer + layer) * H + head) * nk, (size_t)nk * sizeof(float));
        } else {
            memcpy(dst, ctx->enc_attn + (((size_t)layer * H + head) * nk + q) * nk, (size_t)nk * sizeof(float));
        }
    }
    return SAC_OK;
}
