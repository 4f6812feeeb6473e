/* context.c — making a context, evaluating tokens through it, and reading what it keeps
 * (logits and captured attention). The math is in forward.c, the capture's storage in
 * capture.c. */
#include "context.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"
#include "kv_attention.h"
#include "kv_cache.h"

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

/* a·b·c, or UINT64_MAX when that overflows (which every allocation then refuses) */
static uint64_t mul3(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t ab, abc;
    return sac_mul_u64(a, b, &ab) && sac_mul_u64(ab, c, &abc) ? abc : UINT64_MAX;
}

/* The context length for these parameters: the request, or the model's training length
 * capped at SAC_DEFAULT_N_CTX. */
static int32_t effective_n_ctx(const sac_model *m, const sac_context_params *p) {
    if (p->n_ctx > 0) return p->n_ctx;
    return m->info.n_ctx < SAC_DEFAULT_N_CTX ? m->info.n_ctx : SAC_DEFAULT_N_CTX;
}

/* Allocates n values of `size` bytes (n computed with overflow checks by the caller), zeroed
 * when `cleared`, or records NOMEM naming them in `unit`s.
 * The KV caches are not cleared: every pass reads only rows that a token wrote (positions below
 * the context's tokens). Cleared, they cost wasm a write of all of them at creation, each page
 * faulted in (the libc's calloc clears even fresh pages: dlmalloc cannot know that sbrk's are
 * zero): for GPT-2 small's 2 × 37.7 MB, loadModel in Node took 102 ms against 90. The sanitizer
 * build fills what is not cleared with 0xFF bytes (NaN) instead, so that a read of a row no
 * token wrote shows in its tests. */
static sac_status alloc_values(sac_context *ctx, void **p, uint64_t n, size_t size, const char *unit,
                               const char *what, int cleared) {
    const size_t bytes = n ? (size_t)n * size : size; /* (n <= SIZE_MAX / size, checked first) */
    if (n > SIZE_MAX / size || !(*p = cleared ? calloc(1, bytes) : malloc(bytes)))
        return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the %s (%" PRIu64 " %s)", what, n, unit);
#ifdef SAC_POISON_FRESH
    if (!cleared) memset(*p, 0xFF, bytes);
#endif
    return SAC_OK;
}

static sac_status alloc_floats(sac_context *ctx, float **p, uint64_t n, const char *what) {
    void *values = NULL;
    const sac_status st = alloc_values(ctx, &values, n, sizeof(float), "floats", what, 1);
    *p = values;
    return st;
}

/* The matmul workspace: the most any matrix needs for a batch of n_batch rows (its activations
 * converted to the weights' vec_dot type; sac_matmul_work_size). Every 2-D tensor of the file
 * counts, bound or not, so no matrix can be missed. SIZE_MAX, with *culprit (when not NULL),
 * when one cannot be addressed: a batch must be addressable in f32 (the activations themselves), and each
 * converted copy's size is overflow-checked by its type (a copy need not be smaller than the
 * f32 batch). */
static size_t workspace_bytes(const sac_model *m, int64_t n_batch, const gguf_tensor **culprit) {
    size_t work = 0;
    for (uint64_t i = 0; i < m->gguf.n_tensors; i++) {
        const gguf_tensor *t = &m->gguf.tensors[i];
        if (t->n_dims < 2) continue;
        const sac_matrix w = {t->type, (int64_t)t->ne[0], (int64_t)t->ne[1], t->data, 0};
        const size_t s = mul3((uint64_t)n_batch, t->ne[0], sizeof(float)) <= SIZE_MAX - 64
                             ? sac_matmul_work_size(&w, n_batch) : SIZE_MAX;
        if (s == SIZE_MAX) {
            if (culprit) *culprit = t;
            return SIZE_MAX;
        }
        if (s > work) work = s;
    }
    return work;
}

static sac_status alloc_activations(sac_context *ctx) {
    const sac_model *m = ctx->model;
    const sac_model_info *hp = &m->info;
    sac_activations *a = &ctx->act;
    const uint64_t B = (uint64_t)ctx->n_batch, E = (uint64_t)hp->n_embd, F = (uint64_t)hp->n_ff;
    const uint64_t KV = (uint64_t)hp->n_head_kv * (uint64_t)hp->head_dim;
    sac_status st;
    if ((st = alloc_floats(ctx, &a->x, mul3(B, E, 1), "residual stream")) ||
        (st = alloc_floats(ctx, &a->xn, mul3(B, E, 1), "normalised activations")) ||
        (st = alloc_floats(ctx, &a->qkv, !sac_arch_llama_like(m->arch) ? mul3(B, 3, E) : 0, "fused QKV")) ||
        (st = alloc_floats(ctx, &a->q, mul3(B, E, 1), "queries")) ||
        (st = alloc_floats(ctx, &a->k, mul3(B, KV, 1), "keys")) ||
        (st = alloc_floats(ctx, &a->v, mul3(B, KV, 1), "values")) ||
        (st = alloc_floats(ctx, &a->att, mul3(B, E, 1), "attention output")) ||
        (st = alloc_floats(ctx, &a->proj, mul3(B, E, 1), "projection output")) ||
        (st = alloc_floats(ctx, &a->ff, mul3(B, F, 1), "feed-forward hidden")) ||
        (st = alloc_floats(ctx, &a->ff2, sac_arch_llama_like(m->arch) ? mul3(B, F, 1) : 0, "feed-forward gate")) ||
        (st = alloc_floats(ctx, &a->rope, mul3(B, (uint64_t)(hp->rope_dim ? hp->rope_dim : 1), 1), "RoPE table")) ||
        (st = alloc_floats(ctx, &a->scores, mul3((uint64_t)ctx->n_threads, (uint64_t)sac_kv_block(hp->n_head),
                                                          (uint64_t)ctx->n_ctx), "attention scores")))
        return st;

    const gguf_tensor *culprit = NULL;
    const size_t work = workspace_bytes(m, ctx->n_batch, &culprit);
    if (work == SIZE_MAX)
        return sac_fail(&ctx->error, SAC_ERR_NOMEM,
                        "the matmul workspace for tensor '%.*s' (%" PRIu64 " inputs) and a batch of %d tokens "
                        "does not fit in memory: use a smaller batch (n_batch)",
                        (int)culprit->name.len, culprit->name.data, culprit->ne[0], ctx->n_batch);
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

/* The parameters sac_context_new refuses before allocating anything (sac_context_memory
 * answers 0 for them, so a host's budget check never hides this verdict). */
static sac_status check_params(const sac_model *m, const sac_context_params *p, sac_error *err) {
    const sac_model_info *hp = &m->info;
    if (p->n_ctx < 0 || p->n_batch < 0 || p->n_threads < 0)
        return sac_fail(err, SAC_ERR_ARG, "n_ctx, n_batch and n_threads must be >= 0 (got %d, %d, %d)", p->n_ctx,
                        p->n_batch, p->n_threads);
    if (p->n_ctx > hp->n_ctx && m->arch == SAC_ARCH_GPT2)
        return sac_fail(err, SAC_ERR_ARG, "a context of %d tokens exceeds the model's %d learned positions", p->n_ctx,
                        hp->n_ctx);
    if (p->n_threads > 256) return sac_fail(err, SAC_ERR_ARG, "n_threads %d is more than 256", p->n_threads);
    if (!sac_kv_type_name(p->kv_type))
        return sac_fail(err, SAC_ERR_ARG, "kv_type %d is not a KV cache type (%d = f32, %d = bf16, %d = q8)",
                        p->kv_type, SAC_KV_F32, SAC_KV_BF16, SAC_KV_Q8);
    if (p->kv_type == SAC_KV_Q8 && hp->head_dim > SAC_KV_Q8_MAX_HEAD_DIM)
        return sac_fail(err, SAC_ERR_ARG, "a q8 KV cache takes head_dim up to %d; this model's is %d: use f32 or bf16",
                        SAC_KV_Q8_MAX_HEAD_DIM, hp->head_dim);
    return SAC_OK;
}

static sac_status setup(sac_context *ctx, const sac_context_params *p) {
    const sac_model *m = ctx->model;
    const sac_model_info *hp = &m->info;
    sac_status st = check_params(m, p, &ctx->error);
    if (st) return st;
    ctx->n_ctx = effective_n_ctx(m, p);
    ctx->n_batch = p->n_batch ? p->n_batch : 64;
    ctx->no_positions = p->no_positions != 0;
    /* The encoder sees the whole source at once: encdec batches span the context. */
    if (ctx->n_batch > ctx->n_ctx || m->arch == SAC_ARCH_ENCDEC) ctx->n_batch = ctx->n_ctx;
    sac_capture_init(&ctx->capture, hp->n_layer, hp->n_encoder_layer, hp->n_head, ctx->n_ctx,
                     m->arch == SAC_ARCH_ENCDEC);
    ctx->capture.scores = p->capture_scores != 0; /* probe hook */

    st = sac_pool_new(p->n_threads ? p->n_threads : 1, &ctx->pool, &ctx->error);
    if (st) return st;
    ctx->n_threads = sac_pool_size(ctx->pool);

    /* Capture first: a context whose full capture cannot fit is refused before anything big is made. */
    if (p->capture_attention && (st = sac_capture_start(&ctx->capture, 0, &ctx->error))) return st;
    ctx->kv_type = p->kv_type;
    /* rows of head_dim values: one per layer, position and kv head */
    const uint64_t kv = mul3((uint64_t)hp->n_layer, (uint64_t)ctx->n_ctx, (uint64_t)hp->n_head_kv);
    const size_t row_bytes = sac_kv_row_bytes(ctx->kv_type, hp->head_dim);
    char kv_unit[32];
    snprintf(kv_unit, sizeof kv_unit, "%s rows of %zu bytes", sac_kv_type_name(ctx->kv_type), row_bytes);
    if ((st = alloc_values(ctx, &ctx->k_cache, kv, row_bytes, kv_unit, "key cache", 0)) ||
        (st = alloc_values(ctx, &ctx->v_cache, kv, row_bytes, kv_unit, "value cache", 0)))
        return st;
    ctx->key_mask = calloc((size_t)ctx->n_ctx, 1);
    ctx->tokens = calloc((size_t)ctx->n_ctx, sizeof *ctx->tokens);
    if (!ctx->key_mask || !ctx->tokens) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the token history");
    if ((st = alloc_activations(ctx))) return st;
    if ((st = sac_probe_init(ctx, p->capture_qk, p->ablate_heads))) return st; /* probe hook */
    if (m->arch == SAC_ARCH_ENCDEC) {
        const uint64_t cross = mul3((uint64_t)hp->n_layer, (uint64_t)ctx->n_ctx, (uint64_t)hp->n_embd);
        if ((st = alloc_floats(ctx, &ctx->cross_k, cross, "cross-attention keys")) ||
            (st = alloc_floats(ctx, &ctx->cross_v, cross, "cross-attention values")))
            return st;
        if (!(ctx->src_mask = calloc((size_t)ctx->n_ctx, 1)))
            return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the source mask");
    }
    ctx->logits_cap = (size_t)hp->n_vocab;
    if ((st = alloc_floats(ctx, &ctx->logits, ctx->logits_cap, "logits"))) return st;
    /* calloc checks count × size, which wasm32's 32-bit size_t could wrap */
    ctx->sampler.prob = calloc((size_t)hp->n_vocab, sizeof *ctx->sampler.prob);
    ctx->sampler.index = calloc((size_t)hp->n_vocab, 2 * sizeof *ctx->sampler.index);
    if (!ctx->sampler.prob || !ctx->sampler.index) return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for the sampler");
    return SAC_OK;
}

/* Saturating sums and products: an estimate that overflows reads as UINT64_MAX, which no
 * memory budget accepts. */
static uint64_t sat_add(uint64_t a, uint64_t b) { return sac_add_u64(a, b, &a) ? a : UINT64_MAX; }
static uint64_t sat_mul(uint64_t a, uint64_t b) { return sac_mul_u64(a, b, &a) ? a : UINT64_MAX; }

uint64_t sac_context_memory(const sac_model *m, const sac_context_params *params) {
    if (!m || !m->loaded || m->vocab_only) return 0;
    sac_context_params p = params ? *params : sac_context_default_params();
    sac_error ignored;
    if (check_params(m, &p, &ignored)) return 0;
    const sac_model_info *hp = &m->info;
    const uint64_t n_ctx = (uint64_t)effective_n_ctx(m, &p);
    uint64_t B = p.n_batch > 0 ? (uint64_t)p.n_batch : 64;
    if (B > n_ctx || m->arch == SAC_ARCH_ENCDEC) B = n_ctx; /* as setup() chooses */
    const uint64_t T = p.n_threads > 0 ? (uint64_t)p.n_threads : 1;
    const uint64_t E = (uint64_t)hp->n_embd, F = (uint64_t)hp->n_ff, V = (uint64_t)hp->n_vocab;
    const uint64_t KV = (uint64_t)hp->n_head_kv * (uint64_t)hp->head_dim, L = (uint64_t)hp->n_layer;
    uint64_t floats = sat_mul(B, 9 * E + 2 * KV + 2 * F + (uint64_t)hp->rope_dim); /* activations (upper bound) */
    floats = sat_add(floats, sat_add(sat_mul(T * (uint64_t)sac_kv_block(hp->n_head), n_ctx), V)); /* scores, logits */
    if (m->arch == SAC_ARCH_ENCDEC) floats = sat_add(floats, sat_mul(2 * L * n_ctx, E)); /* cross keys and values */
    uint64_t bytes = sat_mul(floats, 4);
    const uint64_t kv_rows = sat_mul(2 * L * n_ctx, (uint64_t)hp->n_head_kv);
    bytes = sat_add(bytes, sat_mul(kv_rows, sac_kv_row_bytes(p.kv_type, hp->head_dim))); /* KV cache */
    const size_t work = workspace_bytes(m, (int64_t)B, NULL); /* matmul workspace, as setup() allocates it */
    bytes = sat_add(bytes, work == SIZE_MAX ? UINT64_MAX : (uint64_t)work);
    bytes = sat_add(bytes, n_ctx * 6 + V * 16);                  /* key and source masks, token history, sampler */
    if (p.capture_attention) {
        sac_capture c;
        sac_capture_init(&c, hp->n_layer, hp->n_encoder_layer, hp->n_head, (int32_t)n_ctx, m->arch == SAC_ARCH_ENCDEC);
        c.scores = p.capture_scores != 0; /* probe hook */
        bytes = sat_add(bytes, sac_capture_full_bytes(&c));
    }
    bytes = sat_add(bytes, sac_probe_bytes(m, (int32_t)n_ctx, p.capture_qk)); /* probe hook */
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
    sac_capture_free(&ctx->capture);
    sac_probe_free(&ctx->probe); /* probe hook */
    free(ctx->sampler.prob);
    free(ctx->sampler.index);
    free(ctx->src_mask);
    free(ctx->cross_k);
    free(ctx->cross_v);
    free(ctx);
}

const char *sac_context_errmsg(const sac_context *ctx) {
    return ctx ? ctx->error.msg : "out of memory (no context handle)";
}

void sac_context_reset(sac_context *ctx) {
    if (!ctx) return;
    ctx->n_past = 0;
    ctx->logits_rows = 0;
    ctx->n_src = 0;
    sac_capture_reset(&ctx->capture);
}

int32_t sac_context_n_source(const sac_context *ctx) { return ctx ? ctx->n_src : 0; }

int32_t sac_context_n_past(const sac_context *ctx) { return ctx ? ctx->n_past : 0; }
int32_t sac_context_n_ctx(const sac_context *ctx) { return sac_context_usable(ctx) ? ctx->n_ctx : 0; }
int32_t sac_context_n_threads(const sac_context *ctx) { return sac_context_usable(ctx) ? ctx->n_threads : 0; }
int32_t sac_context_kv_type(const sac_context *ctx) { return ctx ? ctx->kv_type : SAC_KV_F32; }

/* ---------------------------------------------------------------------------------------- */
/* Evaluation                                                                                */
/* ---------------------------------------------------------------------------------------- */


sac_status sac_context_truncate(sac_context *ctx, int32_t n_keep) {
    if (!ctx) return SAC_ERR_ARG;
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (n_keep < 0 || n_keep > ctx->n_past)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "cannot keep %d tokens: the context holds %d", n_keep, ctx->n_past);
    /* with capture off, the rows kept would outlive the capture that made them */
    sac_capture_truncate(&ctx->capture, ctx->capture.on ? n_keep : 0);
    if (n_keep < ctx->n_past) {
        ctx->n_past = n_keep;
        ctx->logits_rows = 0; /* they were the forgotten last token's */
    }
    return SAC_OK;
}

sac_status sac_context_set_threads(sac_context *ctx, int32_t n_threads) {
    if (!ctx) return SAC_ERR_ARG;
    if (!sac_context_usable(ctx))
        return sac_fail(&ctx->error, SAC_ERR_STATE, "sac_context_set_threads: the context failed to be created");
    if (n_threads < 0 || n_threads > 256)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "n_threads %d is not between 0 and 256", n_threads);
    if (n_threads == 0) n_threads = 1;
    if (n_threads == ctx->n_threads) return SAC_OK;
    /* Scores rows for the new count first (more rows serve any smaller pool too): on a failure
     * here the context keeps everything it had. */
    if (n_threads > ctx->n_threads) {
        float *scores = NULL;
        sac_status st = alloc_floats(ctx, &scores, mul3((uint64_t)n_threads, (uint64_t)sac_kv_block(ctx->model->info.n_head),
                                                        (uint64_t)ctx->n_ctx), "attention scores");
        if (st) return st;
        free(ctx->act.scores);
        ctx->act.scores = scores;
    }
    sac_pool *pool = NULL;
    sac_status st = sac_pool_new(n_threads, &pool, &ctx->error);
    if (st) return st;
    if (sac_pool_size(pool) < n_threads && ctx->n_threads > 1) {
        /* A platform with a fixed set of workers (a wasm build's pool) may have lent them all to
         * the old pool: give them back, then start again. */
        sac_pool_free(pool);
        sac_pool_free(ctx->pool);
        ctx->pool = NULL; /* (sac_pool_run runs a NULL pool on the caller) */
        ctx->n_threads = 1;
        if ((st = sac_pool_new(n_threads, &pool, &ctx->error))) return st;
    }
    sac_pool_free(ctx->pool);
    ctx->pool = pool;
    ctx->n_threads = sac_pool_size(pool);
    return SAC_OK;
}

static sac_status check_ids(sac_context *ctx, const int32_t *tokens, int32_t n_tokens) {
    const int32_t V = ctx->model->info.n_vocab;
    for (int32_t i = 0; i < n_tokens; i++)
        if (tokens[i] < 0 || tokens[i] >= V)
            return sac_fail(&ctx->error, SAC_ERR_ARG, "token id %d at index %d is out of range (vocabulary size %d)",
                            tokens[i], i, V);
    return SAC_OK;
}

sac_status sac_encode(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask) {
    if (!ctx) return SAC_ERR_ARG;
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
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
    if ((st = sac_capture_set_source(&ctx->capture, n_tokens, &ctx->error))) {
        ctx->n_src = 0;
        return st;
    }
    sac_encoder_forward(ctx, tokens, n_tokens);
    sac_capture_commit_encoder(&ctx->capture);
    return SAC_OK;
}

/* No NaN or Inf among x[0..n): a min over the exponent fields, which vectorizes (an early-exit
 * isfinite loop does not, and ran on one thread over a vocabulary's logits per token). */
static int all_finite(const float *x, size_t n) {
    uint32_t lowest = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        const uint32_t m = (bits & 0x7F800000u) ^ 0x7F800000u; /* 0: all exponent bits set, inf or NaN */
        lowest = m < lowest ? m : lowest;
    }
    return lowest != 0;
}

sac_status sac_eval(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask,
                    uint32_t flags) {
    if (!ctx) return SAC_ERR_ARG;
    sac_status st;
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    const sac_model_info *hp = &ctx->model->info;
    if (flags & ~(uint32_t)SAC_EVAL_ALL_LOGITS)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown eval flags 0x%x", (unsigned)flags);
    if (n_tokens <= 0 || !tokens)
        return sac_fail(&ctx->error, SAC_ERR_ARG, tokens ? "no tokens to evaluate (n_tokens = %d)"
                                                         : "tokens is NULL (n_tokens = %d)", n_tokens);
    if (ctx->model->arch == SAC_ARCH_ENCDEC && ctx->n_src == 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "encoder-decoder model: call sac_encode with a source first");
    if ((st = check_ids(ctx, tokens, n_tokens))) return st;
    if (n_tokens > ctx->n_ctx - ctx->n_past)
        return sac_fail(&ctx->error, SAC_ERR_CONTEXT,
                        "%d tokens do not fit in the context: it holds %d tokens and already has %d",
                        n_tokens, ctx->n_ctx, ctx->n_past);

    const int all = (flags & SAC_EVAL_ALL_LOGITS) != 0;
    const int32_t rows = all ? n_tokens : 1;
    const uint64_t need = mul3((uint64_t)rows, (uint64_t)hp->n_vocab, 1);
    if (need > ctx->logits_cap) {
        float *grown = need <= SIZE_MAX / sizeof(float) ? realloc(ctx->logits, (size_t)need * sizeof(float)) : NULL;
        if (!grown)
            return sac_fail(&ctx->error, SAC_ERR_NOMEM, "out of memory for %d rows of %d logits", rows, hp->n_vocab);
        ctx->logits = grown;
        ctx->logits_cap = (size_t)need;
    }
    if ((st = sac_capture_reserve(&ctx->capture, ctx->n_past + n_tokens, &ctx->error))) return st;

    /* Split into batches of n_batch; only the last batch's last row matters without `all`. */
    const int32_t n_past0 = ctx->n_past;
    for (int32_t done = 0; done < n_tokens;) {
        int32_t n = n_tokens - done < ctx->n_batch ? n_tokens - done : ctx->n_batch;
        const int last = done + n == n_tokens;
        const int32_t logits_row = all ? done : last ? 0 : -1;
        sac_forward(ctx, tokens + done, n, key_mask ? key_mask + done : NULL, all, logits_row);
        ctx->n_past += n;
        done += n;
    }

    /* NaN or Inf logits would make every sampler pick token 0 forever: refuse them, and
     * leave the context as it was before the call. */
    const size_t V = (size_t)hp->n_vocab;
    for (int32_t r = 0; r < rows; r++)
        if (!all_finite(ctx->logits + (size_t)r * V, V)) {
            const int32_t token = all ? r : n_tokens - 1;
            ctx->n_past = n_past0;
            ctx->logits_rows = 0;
            return sac_fail(&ctx->error, SAC_ERR_MODEL,
                            "the forward pass produced non-finite logits (NaN or Inf) for token %d (position %d): "
                            "the weights or activations overflowed", token, n_past0 + token);
        }
    ctx->logits_rows = rows;
    sac_capture_commit_decoder(&ctx->capture, ctx->n_past);
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

int32_t sac_attention_enabled(const sac_context *ctx) { return ctx ? ctx->capture.on : 0; }

sac_status sac_attention_enable(sac_context *ctx, int32_t on) {
    if (!ctx) return SAC_ERR_ARG;
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (!on) {
        sac_capture_stop(&ctx->capture);
        return SAC_OK;
    }
    return sac_capture_start(&ctx->capture, ctx->n_past, &ctx->error);
}

int32_t sac_attention_n_rows(const sac_context *ctx, sac_attention_kind kind) {
    return ctx ? sac_capture_n_rows(&ctx->capture, kind) : 0;
}

sac_status sac_attention_rows(sac_context *ctx, sac_attention_kind kind, int32_t from, int32_t to, const float **data,
                              size_t *n_floats) {
    if (!ctx) return SAC_ERR_ARG;
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    return sac_capture_rows(&ctx->capture, kind, from, to, data, n_floats, &ctx->error);
}

/* One query row of a decoder kind (self or cross), through the common row reader. */
static sac_status decoder_row(sac_context *ctx, sac_attention_kind kind, int32_t query, const float **row,
                              int32_t *n_keys) {
    const int32_t n = sac_capture_n_rows(&ctx->capture, kind);
    if (n == 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "no captured attention (is capture on, and was anything evaluated?)");
    if (query < 0 || query >= n)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "no captured attention for query %d (%d rows captured)", query, n);
    sac_status st = sac_capture_rows(&ctx->capture, kind, query, query + 1, row, NULL, &ctx->error);
    if (!st && n_keys) *n_keys = sac_capture_n_keys(&ctx->capture, kind, query);
    return st;
}

sac_status sac_attention_row(sac_context *ctx, int32_t query, const float **row, int32_t *n_keys) {
    if (!ctx) return SAC_ERR_ARG;
    return decoder_row(ctx, SAC_ATTENTION_SELF, query, row, n_keys);
}

sac_status sac_attention_cross_row(sac_context *ctx, int32_t query, const float **row, int32_t *n_keys) {
    if (!ctx) return SAC_ERR_ARG;
    if (!ctx->n_src)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "no cross-attention: not an encoder-decoder model, or nothing encoded");
    return decoder_row(ctx, SAC_ATTENTION_CROSS, query, row, n_keys);
}

sac_status sac_attention_matrix(sac_context *ctx, int32_t layer, int32_t head, float *out, size_t out_len) {
    return sac_attention_get(ctx, SAC_ATTENTION_SELF, layer, head, out, out_len, NULL, NULL);
}

sac_status sac_attention_get(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head, float *out,
                             size_t out_len, int32_t *n_queries, int32_t *n_keys) {
    if (!ctx) return SAC_ERR_ARG;
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    const sac_capture *c = &ctx->capture;
    if (kind != SAC_ATTENTION_SELF && kind != SAC_ATTENTION_CROSS && kind != SAC_ATTENTION_ENCODER)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "unknown attention kind %d", (int)kind);
    if (kind != SAC_ATTENTION_SELF && ctx->model->arch != SAC_ARCH_ENCDEC)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "cross and encoder attention need an encoder-decoder model");
    const int32_t n_layers = sac_capture_n_layers(c, kind);
    if (layer < 0 || layer >= n_layers || head < 0 || head >= c->n_head)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "layer %d / head %d out of range (%d layers, %d heads)", layer, head,
                        n_layers, c->n_head);
    const int32_t nq = sac_capture_n_rows(c, kind), nk = kind == SAC_ATTENTION_SELF ? nq : c->n_src;
    if (nq == 0 || nk == 0)
        return sac_fail(&ctx->error, SAC_ERR_STATE, "no captured attention (is capture on, and was anything evaluated?)");
    if (n_queries) *n_queries = nq;
    if (n_keys) *n_keys = nk;
    if (!out) return SAC_OK;
    if (out_len / (size_t)nk < (size_t)nq)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "the output holds %zu floats, the matrix needs %d x %d", out_len, nq, nk);
    sac_capture_copy_head(c, kind, layer, head, out);
    return SAC_OK;
}
