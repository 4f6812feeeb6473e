/* forward.c — the transformer: one batch of tokens in, logits out (and, for encoder–decoder
 * models, the encoder that prepares what cross-attention reads).
 *
 * Read sac_forward from top to bottom to follow a token: embedding → for each layer
 * (norm → attention → residual → norm → feed-forward → residual) → final norm → logits.
 * Weight products go through sac_matmul (matmul.c); attention reads the KV cache and, when
 * capture is on, writes its probabilities where capture.c says. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "forward.h"
#include "activation.h"
#include "kv_attention.h"
#include "kv_cache.h"
#include "softmax.h"
#include "types.h"

/* ---------------------------------------------------------------------------------------- */
/* Element-wise math                                                                         */
/* ---------------------------------------------------------------------------------------- */

static void layernorm(float *out, const float *x, const sac_vector *w, const sac_vector *b, int64_t n, float eps) {
    float mean = 0.0f, var = 0.0f;
    for (int64_t i = 0; i < n; i++) mean += x[i];
    mean /= (float)n;
    for (int64_t i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    var /= (float)n;
    const float inv = 1.0f / sqrtf(var + eps);
    for (int64_t i = 0; i < n; i++) out[i] = (x[i] - mean) * inv * w->data[i] + b->data[i];
}

static void rmsnorm(float *out, const float *x, const sac_vector *w, int64_t n, float eps) {
    float ss = 0.0f;
    for (int64_t i = 0; i < n; i++) ss += x[i] * x[i];
    const float inv = 1.0f / sqrtf(ss / (float)n + eps);
    for (int64_t i = 0; i < n; i++) out[i] = x[i] * inv * w->data[i];
}

/* A step on each token of the batch on its own: a batch of several is shared out over the
 * pool's threads (a 128-token prefill's norms took ~2% of it, on one thread while the others
 * waited); one token is done where it is. */
static void for_tokens(sac_context *ctx, int32_t n, sac_slice_fn step, void *arg) {
    sac_pool_run_slices(ctx->pool, n, 4, step, arg);
}

typedef struct norm_job {
    const sac_model *m;
    float *out;
    const float *x;
    const sac_vector *w, *b;
} norm_job;

static void norm_tokens(void *arg, int64_t t0, int64_t t1) {
    const norm_job *j = arg;
    const sac_model *m = j->m;
    const int64_t E = m->info.n_embd;
    for (int32_t t = (int32_t)t0; t < t1; t++) {
        if (!sac_arch_llama_like(m->arch)) layernorm(j->out + t * E, j->x + t * E, j->w, j->b, E, m->info.norm_eps);
        else rmsnorm(j->out + t * E, j->x + t * E, j->w, E, m->info.norm_eps);
    }
}

/* Pre-attention or pre-FFN norm of every token in the batch. */
static void norm_rows(sac_context *ctx, float *out, const float *x, int32_t n, const sac_vector *w,
                      const sac_vector *b) {
    norm_job job = {ctx->model, out, x, w, b};
    for_tokens(ctx, n, norm_tokens, &job);
}

/* encdec positions: PE[p][2i] = sin(p / 10000^(2i/E)), PE[p][2i+1] = cos(same). */
static void add_sinusoid(float *x, int32_t pos, int64_t E) {
    for (int64_t i = 0; i < E / 2; i++) {
        double angle = pos * pow(10000.0, -2.0 * (double)i / (double)E);
        x[2 * i] += (float)sin(angle);
        x[2 * i + 1] += (float)cos(angle);
    }
}

/* Token embeddings of a batch at positions pos0.., plus the architecture's positions. */
static void embed(const sac_model *m, float *x, const int32_t *tokens, int32_t n, int32_t pos0, float *tmp,
                  int positions) {
    const int64_t E = m->info.n_embd;
    for (int32_t t = 0; t < n; t++) {
        sac_matrix_get_row(&m->token_embd, tokens[t], x + t * E);
        if (!positions && m->arch != SAC_ARCH_GEMMA) continue; /* no_positions (gemma's scale is not one) */
        if (m->arch == SAC_ARCH_GPT2) {
            sac_matrix_get_row(&m->pos_embd, pos0 + t, tmp);
            for (int64_t i = 0; i < E; i++) x[t * E + i] += tmp[i];
        } else if (m->arch == SAC_ARCH_ENCDEC) {
            add_sinusoid(x + t * E, pos0 + t, E);
        } else if (m->arch == SAC_ARCH_GEMMA) {
            const float scale = sqrtf((float)E); /* gemma scales its embeddings by √n_embd */
            for (int64_t i = 0; i < E; i++) x[t * E + i] *= scale;
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Rotary position embedding                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* cos/sin of the angle of pair i at each token's position, computed once per pass:
 *   theta = pos · freq_scale · base^(−2i/rope_dim) / factor_i
 * freq_scale is linear RoPE scaling (1 / rope.scaling.factor), factor_i rope_freqs.weight
 * (Llama 3.x; 1 when absent). Double precision keeps every angle exact to float. */
static void rope_table(const sac_model *m, float *table, int32_t pos0, int32_t n) {
    const sac_model_info *hp = &m->info;
    const int32_t half = hp->rope_dim / 2;
    for (int32_t t = 0; t < n; t++)
        for (int32_t i = 0; i < half; i++) {
            double theta = (double)(pos0 + t) * hp->rope_freq_scale *
                           pow((double)hp->rope_freq_base, -2.0 * i / hp->rope_dim);
            if (m->rope_freqs.data) theta /= m->rope_freqs.data[i];
            table[(int64_t)t * 2 * half + 2 * i] = (float)cos(theta);
            table[(int64_t)t * 2 * half + 2 * i + 1] = (float)sin(theta);
        }
}

/* Rotates the first rope_dim values of each of n_heads heads of one token. Pair i is
 * (2i, 2i+1) in the original mode, (i, i + rope_dim/2) in NEOX mode (qwen2). */
static void rope_apply(const sac_model *m, float *vec, int32_t n_heads, const float *cs) {
    const int32_t hd = m->info.head_dim, half = m->info.rope_dim / 2;
    const int32_t stride = m->info.rope_neox ? 1 : 2, offset = m->info.rope_neox ? half : 1;
    for (int32_t h = 0; h < n_heads; h++) {
        float *v = vec + (int64_t)h * hd;
        for (int32_t i = 0; i < half; i++) {
            const float c = cs[2 * i], s = cs[2 * i + 1];
            float *x0 = v + stride * i, *x1 = x0 + offset;
            const float a = *x0, b = *x1;
            *x0 = a * c - b * s;
            *x1 = a * s + b * c;
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Attention: the batch's (token, head) pairs, shared out by token or by head                */
/* ---------------------------------------------------------------------------------------- */

/* One attention call: causal self-attention over the KV cache, bidirectional encoder
 * self-attention, or decoder → encoder cross-attention. */
typedef struct attention_job {
    sac_context *ctx;
    sac_attention_kind kind;
    int32_t layer, n;          /* layer of its stack; queries in the batch */
    const float *q;            /* [n][n_head × head_dim] */
    const void *k, *v;         /* key/value rows of kv_type, addressed as sac_kv_heads says */
    int32_t kv_type;
    int64_t kv_stride, head_stride;
    const uint8_t *key_mask;   /* 0 = padding, hidden from queries */
    int32_t n_keys;            /* keys of every query (encoder, cross); causal: pos + 1 */
    float *out;                /* [n][n_head × head_dim] */
    _Atomic int32_t next_item; /* tokens, tiles or pieces taken so far (attention_task) */
} attention_job;

/* Query row t's row number in capture: decoder rows by position, encoder rows by source token. */
static int32_t query_row(const attention_job *job, int32_t t) {
    return job->kind == SAC_ATTENTION_ENCODER ? t : job->ctx->n_past + t;
}

/* The keys query row t of the batch sees (causal: up to its own position), its own key, which
 * stays visible even when it is padding so that every row has at least one key (cross-attention
 * has none: the source is checked to have a visible token), and its row number in capture. */
static void query_keys(const attention_job *job, int32_t t, int32_t *n_keys, int32_t *own, int32_t *query) {
    const sac_context *ctx = job->ctx;
    const int32_t causal = job->kind == SAC_ATTENTION_SELF;
    *n_keys = causal ? ctx->n_past + t + 1 : job->n_keys;
    *own = causal ? ctx->n_past + t : job->kind == SAC_ATTENTION_ENCODER ? t : -1;
    *query = query_row(job, t);
}

/* Query row t's heads [h0, h1) as the passes take them, each head's row where capture keeps it
 * (no copy), else in scratch (a row of n_ctx per head). */
static sac_kv_heads query_heads(const attention_job *job, float *scratch, int32_t t, int32_t h0, int32_t h1,
                                float **rows) {
    sac_context *ctx = job->ctx;
    const sac_model_info *hp = &ctx->model->info;
    int32_t n_keys, own, query;
    query_keys(job, t, &n_keys, &own, &query);
    for (int32_t h = h0; h < h1; h++) {
        float *captured = sac_capture_slot(&ctx->capture, job->kind, job->layer, h, query);
        rows[h - h0] = captured ? captured : scratch + (int64_t)(h - h0) * ctx->n_ctx;
    }
    return (sac_kv_heads){
        .q = job->q + (int64_t)t * hp->n_embd, .k = job->k, .v = job->v, .kv_type = job->kv_type,
        .kv_stride = job->kv_stride, .head_stride = job->head_stride,
        .head_dim = hp->head_dim, .group = hp->n_head / hp->n_head_kv, .h0 = h0, .h1 = h1, .n_keys = n_keys,
        .own = own, .key_mask = job->key_mask, .scale = 1.0f / sqrtf((float)hp->head_dim), .rows = rows,
    };
}

/* Softmax of query row t's heads [h0, h1), scored into a's rows. */
static void softmax_heads(const attention_job *job, const sac_kv_heads *a, int32_t t, const float *max) {
    sac_context *ctx = job->ctx;
    const int32_t query = query_row(job, t);
    for (int32_t h = a->h0; h < a->h1; h++) {
        float *scores = a->rows[h - a->h0];
        float *pre = sac_capture_score_slot(&ctx->capture, job->kind, job->layer, h, query); /* probe hook */
        if (pre) memcpy(pre, scores, (size_t)a->n_keys * sizeof *scores);
        const float inv = 1.0f / sac_softmax_exp(scores, a->n_keys, max[h - a->h0], 1.0f);
        for (int32_t j = 0; j < a->n_keys; j++) scores[j] *= inv;
    }
}

/* One query's heads [h0, h1): scores, softmax, the weighted sum of values. */
static void attend_heads(const attention_job *job, float *scratch, int32_t t, int32_t h0, int32_t h1) {
    float *rows[SAC_KV_HEAD_BLOCK], max[SAC_KV_HEAD_BLOCK];
    const sac_kv_heads heads = query_heads(job, scratch, t, h0, h1, rows);
    sac_kv_scores(&heads, max); /* scores = q·k / √d, hidden keys at −∞ */
    softmax_heads(job, &heads, t, max);
    sac_kv_mix(&heads, job->out + (int64_t)t * job->ctx->model->info.n_embd); /* out = Σ softmax(scores)_j · v_j */
}

/* Query rows [t0, t0 + n) of a self-attention batch, head by head: the same three steps, the
 * passes taking the rows as one tile (sac_kv_scores_tile), so that a long prefill reads each
 * run of keys and values from memory once per tile rather than once per row. The n rows of
 * one head fill the thread's scratch (n ≤ its sac_kv_block(n_head) rows). */
static void attend_tile(const attention_job *job, float *scratch, int32_t t0, int32_t n) {
    const sac_model_info *hp = &job->ctx->model->info;
    sac_kv_heads rows_of[SAC_KV_HEAD_BLOCK];
    float *rows[SAC_KV_HEAD_BLOCK], max[SAC_KV_HEAD_BLOCK], *out[SAC_KV_HEAD_BLOCK];
    for (int32_t r = 0; r < n; r++) out[r] = job->out + (int64_t)(t0 + r) * hp->n_embd;
    for (int32_t h = 0; h < hp->n_head; h++) {
        for (int32_t r = 0; r < n; r++)
            rows_of[r] = query_heads(job, scratch + (int64_t)r * job->ctx->n_ctx, t0 + r, h, h + 1, rows + r);
        sac_kv_scores_tile(rows_of, n, max);
        for (int32_t r = 0; r < n; r++) softmax_heads(job, &rows_of[r], t0 + r, max + r);
        sac_kv_mix_tile(rows_of, n, out);
    }
}

/* Query rows in a self-attention tile: up to QUERY_TILE and the scratch's rows (the heads
 * block), and few enough that each thread gets about four tiles, so that the shared counter
 * still evens out their causal sizes; fewer than 2: no tiles. None for other batches, nor for
 * grouped-query models (measured slower: their token-by-token f32 and bf16 scores already read
 * each key once for a kv head's query heads).
 * Prefill of 2048 tokens, Node, 2 threads, GPT-2-small-sized llama (12 heads): 107-117 ->
 * 125-127 tokens/s with tiles of 4, 128 with 8, 131-140 with 12; its grouped-query twin (4 query
 * heads a kv head) 153-159 token by token, 147-148 in tiles of 3 rows × 4 heads. */
#define QUERY_TILE 16

static int32_t tile_rows(const attention_job *job, int nth) {
    const sac_model_info *hp = &job->ctx->model->info;
    if (job->kind != SAC_ATTENTION_SELF || hp->n_head != hp->n_head_kv) return 1;
    int32_t rows = job->n / (4 * nth);
    if (rows > QUERY_TILE) rows = QUERY_TILE;
    const int32_t room = sac_kv_block(hp->n_head);
    return rows > room ? room : rows;
}

/* The thread's (token, head) items. A self-attention batch of at least eight rows a thread (of
 * a model of two heads or more, each its own kv head) goes in tiles of consecutive rows
 * (attend_tile), which the threads take from a shared counter, the last (most keys, under the
 * causal mask) first: an even split of the tokens left the thread with the later half three
 * times the keys of the other (a causal 128-token prefill). Other batches of at least a token
 * per thread go token by token the same way, in runs of one token's heads (at most
 * SAC_KV_HEAD_BLOCK): the key and value rows are read once per run, not once per head. Fewer
 * tokens (a decoded one) go in nth even pieces of their heads. Every item comes from the
 * counter, so a thread alone does them all (sac_pool_run_shared). Which thread takes an item,
 * and in which tile, changes none of its bits. */
static void attention_task(void *arg, int ith, int nth) {
    attention_job *job = arg;
    const int32_t H = job->ctx->model->info.n_head, block = sac_kv_block(H);
    float *scratch = job->ctx->act.scores + (int64_t)ith * block * job->ctx->n_ctx;
    const int32_t tile = tile_rows(job, nth);
    if (tile >= 2) {
        for (;;) {
            const int32_t k = atomic_fetch_add_explicit(&job->next_item, 1, memory_order_relaxed);
            const int32_t t1 = job->n - k * tile;
            if (t1 <= 0) break;
            const int32_t t0 = t1 - tile > 0 ? t1 - tile : 0;
            attend_tile(job, scratch, t0, t1 - t0);
        }
        return;
    }
    if (job->n >= nth) {
        for (;;) {
            const int32_t k = atomic_fetch_add_explicit(&job->next_item, 1, memory_order_relaxed);
            if (k >= job->n) break;
            const int32_t t = job->n - 1 - k;
            for (int32_t h0 = 0; h0 < H; h0 += block) attend_heads(job, scratch, t, h0, h0 + block < H ? h0 + block : H);
        }
        return;
    }
    for (;;) { /* the items in nth even pieces, taken from the counter too */
        const int32_t k = atomic_fetch_add_explicit(&job->next_item, 1, memory_order_relaxed);
        if (k >= nth) break;
        int64_t start, end;
        sac_split((int64_t)job->n * H, k, nth, &start, &end);
        for (int64_t item = start; item < end;) {
            const int32_t t = (int32_t)(item / H), h0 = (int32_t)(item % H);
            int32_t h1 = h0 + block < H ? h0 + block : H;
            if (end - item < h1 - h0) h1 = h0 + (int32_t)(end - item);
            item += h1 - h0;
            attend_heads(job, scratch, t, h0, h1);
        }
    }
}

/* k, v: rows of kv_type, kv head g's key j at g × head_stride + j × kv_stride values (q8: that
 * offset / head_dim rows of sac_kv_row_bytes; see sac_kv_heads). probe_k: the same
 * keys as floats for the probe, rows probe_stride apart (self-attention: only the batch's new
 * keys, row 0 at position n_past). */
static void attend(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t n, const void *k, const void *v,
                   int32_t kv_type, int64_t kv_stride, int64_t head_stride, const uint8_t *key_mask, int32_t n_keys,
                   const float *probe_k, int64_t probe_stride) {
    attention_job job = {ctx, kind, layer, n, ctx->act.q, k, v, kv_type, kv_stride, head_stride, key_mask, n_keys, ctx->act.att, 0};
    sac_pool_run_shared(ctx->pool, attention_task, &job);
    sac_probe_attended(ctx, kind, layer, n, probe_k, probe_stride, n_keys); /* probe hook: q/k, ablation */
}

/* ---------------------------------------------------------------------------------------- */
/* The forward pass                                                                          */
/* ---------------------------------------------------------------------------------------- */

static void matmul(sac_context *ctx, const sac_matrix *w, const float *x, int32_t n, float *y) {
    sac_matmul(ctx->pool, w, x, n, y, ctx->act.work);
}

/* The product, then bias, activation and residual as `then` says, each output in the thread
 * that computed it (matmul.h): no serial pass over the outputs between two pool runs. */
static void matmul_then(sac_context *ctx, const sac_matrix *w, const float *x, int32_t n, float *y,
                        sac_epilogue then) {
    sac_matmul_then(ctx->pool, w, x, n, y, ctx->act.work, &then);
}

/* Where project_qkv's rows go, token by token: the fused rows of Q|K|V (gpt2, encdec) split
 * into act.q, act.k, act.v; RoPE on the queries and keys; and, for the decoder's
 * self-attention, the keys and values into the cache (store_kv). */
typedef struct place_job {
    sac_context *ctx;
    int64_t layer_rows; /* the layer's first row in the cache, or −1: keys stay in act.k/act.v */
} place_job;

/* Token t's new key and value into one layer's cache (starting layer_rows rows in), at
 * position n_past + t. The cache keeps each kv head's rows together (head g's position p is row
 * g × n_ctx + p): attention then reads every head as one stream. */
static void store_kv(sac_context *ctx, int64_t layer_rows, int32_t t) {
    const sac_model_info *hp = &ctx->model->info;
    const int64_t hd = hp->head_dim, kv_dim = (int64_t)hp->n_head_kv * hd;
    for (int32_t g = 0; g < hp->n_head_kv; g++) {
        const int64_t row = layer_rows + (int64_t)g * ctx->n_ctx + ctx->n_past + t, from = t * kv_dim + g * hd;
        sac_kv_store(ctx->k_cache, ctx->kv_type, row, ctx->act.k + from, hp->head_dim);
        sac_kv_store(ctx->v_cache, ctx->kv_type, row, ctx->act.v + from, hp->head_dim);
    }
}

static void place_tokens(void *arg, int64_t t0, int64_t t1) {
    const place_job *j = arg;
    sac_context *ctx = j->ctx;
    const sac_model *m = ctx->model;
    sac_activations *a = &ctx->act;
    const int64_t E = m->info.n_embd, kv_dim = (int64_t)m->info.n_head_kv * m->info.head_dim;
    for (int32_t t = (int32_t)t0; t < t1; t++) {
        if (!sac_arch_llama_like(m->arch)) {
            const float *row = a->qkv + t * 3 * E;
            memcpy(a->q + t * E, row, (size_t)E * sizeof(float));
            memcpy(a->k + t * E, row + E, (size_t)E * sizeof(float));
            memcpy(a->v + t * E, row + 2 * E, (size_t)E * sizeof(float));
        } else if (!ctx->no_positions) {
            const float *cs = a->rope + (int64_t)t * m->info.rope_dim;
            rope_apply(m, a->q + t * E, m->info.n_head, cs);
            rope_apply(m, a->k + t * kv_dim, m->info.n_head_kv, cs);
        }
        if (j->layer_rows >= 0) store_kv(ctx, j->layer_rows, t);
    }
}

/* Queries into act.q and new keys/values into act.k/act.v, with biases and RoPE; with
 * layer_rows ≥ 0 (the decoder), the keys and values into that layer's cache as well. */
static void project_qkv(sac_context *ctx, const sac_layer *L, int32_t n, int64_t layer_rows) {
    const sac_model *m = ctx->model;
    sac_activations *a = &ctx->act;
    if (!sac_arch_llama_like(m->arch)) {
        /* fused rows: Q, then K, then V */
        matmul_then(ctx, &L->wqkv, a->xn, n, a->qkv, (sac_epilogue){.bias = L->bqkv.data});
    } else {
        /* biases: qwen2 (and some llama files) */
        matmul_then(ctx, &L->wq, a->xn, n, a->q, (sac_epilogue){.bias = L->bq.data});
        matmul_then(ctx, &L->wk, a->xn, n, a->k, (sac_epilogue){.bias = L->bk.data});
        matmul_then(ctx, &L->wv, a->xn, n, a->v, (sac_epilogue){.bias = L->bv.data});
    }
    place_job job = {ctx, layer_rows};
    for_tokens(ctx, n, place_tokens, &job);
}

/* x += FFN(xn) */
static void feed_forward(sac_context *ctx, const sac_layer *L, int32_t n) {
    const sac_model *m = ctx->model;
    sac_activations *a = &ctx->act;
    if (!sac_arch_llama_like(m->arch)) {
        matmul_then(ctx, &L->w_up, a->xn, n, a->ff, (sac_epilogue){.bias = L->b_up.data, .activation = SAC_ACT_GELU});
        matmul_then(ctx, &L->w_down, a->ff, n, a->proj, (sac_epilogue){.bias = L->b_down.data, .residual = a->x});
        return;
    }
    /* SwiGLU: down(silu(gate(x)) ⊙ up(x)); gemma gates with GELU instead. up first, so that
     * the gate's outputs are activated and multiplied as they are computed. */
    matmul(ctx, &L->w_up, a->xn, n, a->ff2);
    matmul_then(ctx, &L->w_gate, a->xn, n, a->ff,
                (sac_epilogue){.activation = m->arch == SAC_ARCH_GEMMA ? SAC_ACT_GELU : SAC_ACT_SILU, .mul = a->ff2});
    matmul_then(ctx, &L->w_down, a->ff, n, a->proj, (sac_epilogue){.residual = a->x});
}

/* x += W_o · attention(norm(x)) + b_o, for the attention already described by project_qkv's
 * output and the given keys. */
static void attention_block_output(sac_context *ctx, const sac_layer *L, int32_t n) {
    sac_activations *a = &ctx->act;
    /* b_o: gpt2, encdec; optional in llama */
    matmul_then(ctx, &L->wo, a->att, n, a->proj, (sac_epilogue){.bias = L->bo.data, .residual = a->x});
}

/* encdec decoder blocks: x += W_co · cross_attention(W_cq · norm(x), encoder) */
static void cross_attention_block(sac_context *ctx, const sac_layer *L, int32_t l, int32_t n) {
    sac_activations *a = &ctx->act;
    const int64_t E = ctx->model->info.n_embd, span = (int64_t)ctx->n_ctx * E;
    norm_rows(ctx, a->xn, a->x, n, &L->cross_norm, &L->cross_norm_b);
    matmul_then(ctx, &L->cross_q, a->xn, n, a->q, (sac_epilogue){.bias = L->cross_bq.data});
    const float *k = ctx->cross_k + l * span; /* f32: see sac_kv_type */
    attend(ctx, SAC_ATTENTION_CROSS, l, n, k, ctx->cross_v + l * span, SAC_KV_F32, E, ctx->model->info.head_dim,
           ctx->src_mask, ctx->n_src, k, E);
    matmul_then(ctx, &L->cross_o, a->att, n, a->proj, (sac_epilogue){.bias = L->cross_bo.data, .residual = a->x});
}

static void feed_forward_block(sac_context *ctx, const sac_layer *L, int32_t n) {
    sac_activations *a = &ctx->act;
    norm_rows(ctx, a->xn, a->x, n, &L->ffn_norm, &L->ffn_norm_b);
    feed_forward(ctx, L, n);
}

void sac_forward(sac_context *ctx, const int32_t *tokens, int32_t n, const uint8_t *key_mask, int all_logits,
                 int32_t logits_row) {
    const sac_model *m = ctx->model;
    const sac_model_info *hp = &m->info;
    sac_activations *a = &ctx->act;
    const int64_t E = hp->n_embd, kv_dim = (int64_t)hp->n_head_kv * hp->head_dim;
    const int32_t pos0 = ctx->n_past;

    embed(m, a->x, tokens, n, pos0, a->proj, !ctx->no_positions);
    for (int32_t t = 0; t < n; t++) {
        ctx->tokens[pos0 + t] = tokens[t];
        ctx->key_mask[pos0 + t] = key_mask ? (key_mask[t] != 0) : 1;
    }
    if (sac_arch_llama_like(m->arch)) rope_table(m, a->rope, pos0, n);

    for (int32_t l = 0; l < hp->n_layer; l++) {
        const sac_layer *L = &m->layers[l];

        /* Attention block: x += W_o · attention(norm(x)), keys and values appended to the cache */
        norm_rows(ctx, a->xn, a->x, n, &L->attn_norm, &L->attn_norm_b);
        const int64_t layer_rows = (int64_t)l * ctx->n_ctx * hp->n_head_kv; /* rows before this layer's */
        project_qkv(ctx, L, n, layer_rows);
        const int64_t layer_at = layer_rows * (int64_t)sac_kv_row_bytes(ctx->kv_type, hp->head_dim);
        attend(ctx, SAC_ATTENTION_SELF, l, n, (const char *)ctx->k_cache + layer_at,
               (const char *)ctx->v_cache + layer_at, ctx->kv_type, hp->head_dim,
               (int64_t)ctx->n_ctx * hp->head_dim, ctx->key_mask, 0, a->k, kv_dim);
        attention_block_output(ctx, L, n);

        if (m->arch == SAC_ARCH_ENCDEC) cross_attention_block(ctx, L, l, n);

        /* Feed-forward block: x += FFN(norm(x)) */
        feed_forward_block(ctx, L, n);
    }

    /* Final norm and the output projection, for the rows the caller wants. */
    if (logits_row < 0) return;
    const int32_t first = all_logits ? 0 : n - 1, rows = n - first;
    norm_rows(ctx, a->xn, a->x + first * E, rows, &m->output_norm, &m->output_norm_b);
    matmul(ctx, &m->output, a->xn, rows, ctx->logits + (int64_t)logits_row * hp->n_vocab);
}

void sac_encoder_forward(sac_context *ctx, const int32_t *tokens, int32_t n) {
    const sac_model *m = ctx->model;
    const sac_model_info *hp = &m->info;
    sac_activations *a = &ctx->act;
    const int64_t E = hp->n_embd, span = (int64_t)ctx->n_ctx * E;

    embed(m, a->x, tokens, n, 0, a->proj, !ctx->no_positions);
    for (int32_t l = 0; l < hp->n_encoder_layer; l++) {
        const sac_layer *L = &m->enc_layers[l];
        /* bidirectional self-attention over the whole source */
        norm_rows(ctx, a->xn, a->x, n, &L->attn_norm, &L->attn_norm_b);
        project_qkv(ctx, L, n, -1);
        attend(ctx, SAC_ATTENTION_ENCODER, l, n, a->k, a->v, SAC_KV_F32, E, hp->head_dim, ctx->src_mask, n, a->k, E);
        attention_block_output(ctx, L, n);
        feed_forward_block(ctx, L, n);
    }
    norm_rows(ctx, a->xn, a->x, n, &m->enc_output_norm, &m->enc_output_norm_b);

    /* What every decoder layer's cross-attention reads: K|V projections of the encoder output. */
    for (int32_t l = 0; l < hp->n_layer; l++) {
        const sac_layer *L = &m->layers[l];
        matmul_then(ctx, &L->cross_kv, a->xn, n, a->qkv, (sac_epilogue){.bias = L->cross_bkv.data});
        for (int32_t t = 0; t < n; t++) {
            memcpy(ctx->cross_k + l * span + t * E, a->qkv + t * 2 * E, (size_t)E * sizeof(float));
            memcpy(ctx->cross_v + l * span + t * E, a->qkv + t * 2 * E + E, (size_t)E * sizeof(float));
        }
    }
}
