/* probe.c — q/k capture, head ablation, score reading and the row softmax: what the page's
 * "row arithmetic", neuron view and ablation panels read. See probe.h. */
#include "probe.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "softmax.h"
#include "types.h"

static int usable(const sac_context *ctx) { return ctx && ctx->model && ctx->k_cache && ctx->act.work; }

static int valid_kind(sac_attention_kind kind) {
    return kind == SAC_ATTENTION_SELF || kind == SAC_ATTENTION_CROSS || kind == SAC_ATTENTION_ENCODER;
}

/* Layers of a kind's stack, 0 when the model lacks the kind. */
static int32_t kind_layers(const sac_model *m, sac_attention_kind kind) {
    if (kind == SAC_ATTENTION_SELF) return m->info.n_layer;
    if (m->arch != SAC_ARCH_ENCDEC) return 0;
    return kind == SAC_ATTENTION_CROSS ? m->info.n_layer : m->info.n_encoder_layer;
}

static int32_t kind_k_dim(const sac_model *m, sac_attention_kind kind) {
    return kind == SAC_ATTENTION_SELF ? m->info.n_head_kv * m->info.head_dim : m->info.n_embd;
}

/* Floats of one kind's q and k stores, UINT64_MAX on overflow. */
static uint64_t kind_floats(const sac_model *m, sac_attention_kind kind, int32_t n_ctx, uint64_t *q, uint64_t *k) {
    uint64_t rows, sum;
    if (!sac_mul_u64((uint64_t)kind_layers(m, kind), (uint64_t)n_ctx, &rows) ||
        !sac_mul_u64(rows, (uint64_t)m->info.n_embd, q) || !sac_mul_u64(rows, (uint64_t)kind_k_dim(m, kind), k) ||
        !sac_add_u64(*q, *k, &sum))
        return UINT64_MAX;
    return sum;
}

uint64_t sac_probe_bytes(const sac_model *m, int32_t n_ctx, int qk) {
    if (!qk) return 0;
    uint64_t total = 0, q, k;
    for (int kind = 0; kind < 3; kind++) {
        const uint64_t f = kind_floats(m, (sac_attention_kind)kind, n_ctx, &q, &k);
        if (f == UINT64_MAX || !sac_add_u64(total, f, &total)) return UINT64_MAX;
    }
    return sac_mul_u64(total, sizeof(float), &total) ? total : UINT64_MAX;
}

static sac_status alloc_store(sac_context *ctx, float **p, uint64_t n, const char *what) {
    if (n > SIZE_MAX / sizeof(float) || !(*p = calloc(n ? (size_t)n : 1, sizeof(float))))
        return sac_fail(&ctx->error, SAC_ERR_NOMEM,
                        "out of memory for the %s of q/k capture (%" PRIu64 " floats): use a shorter context (n_ctx)",
                        what, n);
    return SAC_OK;
}

static sac_status set_mask(sac_context *ctx, sac_attention_kind kind, const uint8_t *mask) {
    sac_probe *p = &ctx->probe;
    const size_t n = (size_t)kind_layers(ctx->model, kind) * (size_t)ctx->model->info.n_head;
    if (!mask) {
        free(p->ablate[kind]);
        p->ablate[kind] = NULL;
        return SAC_OK;
    }
    int any = 0;
    for (size_t i = 0; i < n; i++) any |= mask[i] != 0;
    if (!any) return set_mask(ctx, kind, NULL); /* an empty mask costs nothing */
    if (!p->ablate[kind] && !(p->ablate[kind] = malloc(n ? n : 1)))
        return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the ablation mask");
    for (size_t i = 0; i < n; i++) p->ablate[kind][i] = mask[i] != 0;
    return SAC_OK;
}

/* The q/k stores of every kind the model has (once). */
static sac_status alloc_qk(sac_context *ctx) {
    sac_probe *p = &ctx->probe;
    const sac_model *m = ctx->model;
    if (p->q[SAC_ATTENTION_SELF]) return SAC_OK; /* made before */
    for (int kind = 0; kind < 3; kind++) {
        uint64_t q, k;
        if (!kind_layers(m, (sac_attention_kind)kind)) continue;
        sac_status st;
        if (kind_floats(m, (sac_attention_kind)kind, ctx->n_ctx, &q, &k) == UINT64_MAX)
            return sac_fail(&ctx->error, SAC_ERR_NOMEM, "q/k capture for %d tokens overflows: use a shorter context",
                            ctx->n_ctx);
        if ((st = alloc_store(ctx, &p->q[kind], q, "queries")) || (st = alloc_store(ctx, &p->k[kind], k, "keys"))) {
            for (int i = 0; i < 3; i++) { /* all or nothing: a later call tries again */
                free(p->q[i]);
                free(p->k[i]);
                p->q[i] = p->k[i] = NULL;
            }
            return st;
        }
        p->q_dim[kind] = m->info.n_embd;
        p->k_dim[kind] = kind_k_dim(m, (sac_attention_kind)kind);
    }
    return SAC_OK;
}

sac_status sac_probe_init(sac_context *ctx, int qk, const uint8_t *ablate) {
    sac_probe *p = &ctx->probe;
    sac_status st;
    if (qk && (st = alloc_qk(ctx))) return st;
    p->qk = qk != 0;
    return set_mask(ctx, SAC_ATTENTION_SELF, ablate);
}

sac_status sac_context_capture_qk(sac_context *ctx, int32_t on) {
    if (!ctx) return SAC_ERR_ARG;
    if (!usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    sac_probe *p = &ctx->probe;
    if (!on) {
        p->qk = 0;
        return SAC_OK;
    }
    if (p->qk) return SAC_OK;
    sac_status st = alloc_qk(ctx);
    if (st) return st;
    p->qk = 1;
    p->qk_from = ctx->n_past; /* earlier positions were not recorded */
    p->enc_qk = 0;
    return SAC_OK;
}

void sac_probe_free(sac_probe *p) {
    for (int i = 0; i < 3; i++) {
        free(p->q[i]);
        free(p->k[i]);
        free(p->ablate[i]);
    }
    memset(p, 0, sizeof *p);
}

void sac_probe_attended(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t n, const float *k,
                        int64_t kv_stride, int32_t n_keys) {
    sac_probe *p = &ctx->probe;
    const sac_model_info *hp = &ctx->model->info;
    const int64_t E = hp->n_embd;
    if (p->ablate[kind]) {
        const uint8_t *mask = p->ablate[kind] + (size_t)layer * (size_t)hp->n_head;
        for (int32_t t = 0; t < n; t++)
            for (int32_t h = 0; h < hp->n_head; h++)
                if (mask[h]) memset(ctx->act.att + t * E + (int64_t)h * hp->head_dim, 0, (size_t)hp->head_dim * sizeof(float));
    }
    if (!p->qk) return;
    if (kind == SAC_ATTENTION_ENCODER) p->enc_qk = 1;
    else if (ctx->n_past == 0) p->qk_from = 0; /* a fresh decoder run: every position is recorded */
    /* decoder queries sit at their positions, encoder queries at their source index */
    const int32_t first = kind == SAC_ATTENTION_ENCODER ? 0 : ctx->n_past;
    const int64_t n_ctx = ctx->n_ctx, qd = p->q_dim[kind], kd = p->k_dim[kind];
    float *q_layer = p->q[kind] + layer * n_ctx * qd, *k_layer = p->k[kind] + layer * n_ctx * kd;
    memcpy(q_layer + first * qd, ctx->act.q, (size_t)(n * qd) * sizeof(float));
    /* self: the batch's new keys (the cache holds the rest), k's row 0 at n_past; cross,
     * encoder: every key */
    const int32_t k_from = kind == SAC_ATTENTION_SELF ? ctx->n_past : 0;
    const int32_t k_to = kind == SAC_ATTENTION_SELF ? ctx->n_past + n : n_keys;
    for (int32_t j = k_from; j < k_to; j++)
        memcpy(k_layer + j * kd, k + (j - k_from) * kv_stride, (size_t)kd * sizeof(float));
}

/* ---------------------------------------------------------------------------------------- */
/* Public calls                                                                              */
/* ---------------------------------------------------------------------------------------- */

sac_status sac_attention_scores_rows(sac_context *ctx, sac_attention_kind kind, int32_t from, int32_t to,
                                     const float **data, size_t *n_floats) {
    if (!ctx) return SAC_ERR_ARG;
    if (!usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    return sac_capture_score_rows(&ctx->capture, kind, from, to, data, n_floats, &ctx->error);
}

sac_status sac_attention_scores_enable(sac_context *ctx, int32_t on) {
    if (!ctx) return SAC_ERR_ARG;
    if (!usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (on) return sac_capture_scores_start(&ctx->capture, &ctx->error);
    ctx->capture.scores = 0; /* the buffers stay for a later start */
    return SAC_OK;
}

float sac_attention_scale(const sac_model *model) {
    return model && model->info.head_dim > 0 ? 1.0f / sqrtf((float)model->info.head_dim) : 0.0f;
}

sac_status sac_softmax_row(const float *scores, int32_t n, float tau, float *out) {
    if (!scores || !out || n <= 0 || !(tau > 0.0f) || !isfinite(tau)) return SAC_ERR_ARG;
    if (!isfinite(1.0f / tau)) return SAC_ERR_ARG; /* a subnormal τ: scores / τ would be 0 · ∞ = NaN */
    float max = -INFINITY;
    for (int32_t j = 0; j < n; j++) {
        if (isnan(scores[j]) || scores[j] == INFINITY) return SAC_ERR_ARG;
        out[j] = scores[j];
        if (out[j] > max) max = out[j];
    }
    if (max == -INFINITY) return SAC_ERR_ARG; /* every key masked: no distribution */
    /* as the forward pass does it, so τ = 1 gives the captured probabilities bit for bit */
    const float inv = 1.0f / sac_softmax_exp(out, n, max, 1.0f / tau);
    for (int32_t j = 0; j < n; j++) out[j] *= inv;
    return SAC_OK;
}

sac_status sac_context_qk(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head, float *q_out,
                          size_t q_len, float *k_out, size_t k_len, int32_t *n_queries, int32_t *n_keys,
                          int32_t *head_dim) {
    if (!ctx) return SAC_ERR_ARG;
    if (!usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    const sac_model_info *hp = &ctx->model->info;
    if (!valid_kind(kind)) return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown attention kind %d", (int)kind);
    const int32_t layers = kind_layers(ctx->model, kind);
    if (!layers) return sac_fail(&ctx->error, SAC_ERR_ARG, "cross and encoder attention need an encoder-decoder model");
    if (layer < 0 || layer >= layers || head < 0 || head >= hp->n_head)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "layer %d / head %d out of range (%d layers, %d heads)", layer, head,
                        layers, hp->n_head);
    if (!ctx->probe.qk)
        return sac_fail(&ctx->error, SAC_ERR_STATE,
                        "no captured queries and keys: make the context with capture_qk = 1 or call "
                        "sac_context_capture_qk(ctx, 1), then evaluate");
    if (kind == SAC_ATTENTION_ENCODER ? !ctx->probe.enc_qk : ctx->probe.qk_from != 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE,
                        "these tokens were evaluated before q/k capture began: evaluate (or encode) them again");
    const int32_t nq = kind == SAC_ATTENTION_ENCODER ? ctx->n_src : ctx->n_past;
    const int32_t nk = kind == SAC_ATTENTION_SELF ? ctx->n_past : ctx->n_src;
    if (nq == 0 || nk == 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "no queries and keys yet: evaluate (or encode) tokens first");
    const int32_t hd = hp->head_dim;
    if (n_queries) *n_queries = nq;
    if (n_keys) *n_keys = nk;
    if (head_dim) *head_dim = hd;
    if ((q_out && q_len / (size_t)hd < (size_t)nq) || (k_out && k_len / (size_t)hd < (size_t)nk))
        return sac_fail(&ctx->error, SAC_ERR_ARG, "the outputs hold %zu and %zu floats, need %d x %d and %d x %d", q_len,
                        k_len, nq, hd, nk, hd);
    /* under grouped-query attention a head reads the keys of its kv head */
    const int32_t kvh = kind == SAC_ATTENTION_SELF ? head / (hp->n_head / hp->n_head_kv) : head;
    const sac_probe *p = &ctx->probe;
    const size_t n_ctx = (size_t)ctx->n_ctx, qd = (size_t)p->q_dim[kind], kd = (size_t)p->k_dim[kind];
    const float *q_layer = p->q[kind] + (size_t)layer * n_ctx * qd, *k_layer = p->k[kind] + (size_t)layer * n_ctx * kd;
    for (int32_t i = 0; q_out && i < nq; i++)
        memcpy(q_out + (size_t)i * hd, q_layer + i * qd + (size_t)head * hd, (size_t)hd * sizeof(float));
    for (int32_t j = 0; k_out && j < nk; j++)
        memcpy(k_out + (size_t)j * hd, k_layer + j * kd + (size_t)kvh * hd, (size_t)hd * sizeof(float));
    return SAC_OK;
}

sac_status sac_context_set_ablation(sac_context *ctx, sac_attention_kind kind, const uint8_t *mask, size_t n) {
    if (!ctx) return SAC_ERR_ARG;
    if (!usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (!valid_kind(kind)) return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown attention kind %d", (int)kind);
    const int32_t layers = kind_layers(ctx->model, kind);
    if (!layers) return sac_fail(&ctx->error, SAC_ERR_ARG, "cross and encoder attention need an encoder-decoder model");
    const size_t need = (size_t)layers * (size_t)ctx->model->info.n_head;
    if (mask && n != need)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "the ablation mask has %zu entries, the model has %d layers x %d heads",
                        n, layers, ctx->model->info.n_head);
    return set_mask(ctx, kind, mask);
}

int32_t sac_context_ablated(const sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head) {
    if (!ctx || !ctx->model || !valid_kind(kind) || !ctx->probe.ablate[kind]) return 0;
    if (layer < 0 || layer >= kind_layers(ctx->model, kind) || head < 0 || head >= ctx->model->info.n_head) return 0;
    return ctx->probe.ablate[kind][(size_t)layer * (size_t)ctx->model->info.n_head + (size_t)head];
}

/* "L:H,L:H,...": decimal layer and head numbers, no spaces. */
sac_status sac_context_set_ablation_spec(sac_context *ctx, sac_attention_kind kind, const char *spec) {
    if (!ctx) return SAC_ERR_ARG;
    if (!usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (!valid_kind(kind)) return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown attention kind %d", (int)kind);
    const int32_t layers = kind_layers(ctx->model, kind), H = ctx->model->info.n_head;
    if (!layers) return sac_fail(&ctx->error, SAC_ERR_ARG, "cross and encoder attention need an encoder-decoder model");
    if (!spec || !*spec) return set_mask(ctx, kind, NULL);
    uint8_t *mask = calloc((size_t)layers * (size_t)H, 1);
    if (!mask) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the ablation mask");
    sac_status st = SAC_OK;
    for (const char *p = spec; !st;) {
        long v[2] = {0, 0};
        for (int part = 0; part < 2 && !st; part++) {
            const char *start = p;
            while (*p >= '0' && *p <= '9' && v[part] < 1000000) v[part] = v[part] * 10 + (*p++ - '0');
            if (p == start || (*p >= '0' && *p <= '9') || (part == 0 && *p++ != ':'))
                st = sac_fail(&ctx->error, SAC_ERR_ARG,
                              "ablation '%.64s' is not a list of layer:head pairs (e.g. 0:1,1:3)", spec);
        }
        if (st) break;
        if (v[0] >= layers || v[1] >= H) {
            st = sac_fail(&ctx->error, SAC_ERR_ARG, "ablated head %ld:%ld is out of range (%d layers x %d heads)", v[0],
                          v[1], layers, H);
            break;
        }
        mask[v[0] * H + v[1]] = 1;
        if (!*p) break;
        if (*p++ != ',' || !*p)
            st = sac_fail(&ctx->error, SAC_ERR_ARG, "ablation '%.64s' is not a list of layer:head pairs (e.g. 0:1,1:3)",
                          spec);
    }
    if (!st) st = set_mask(ctx, kind, mask);
    free(mask);
    return st;
}
