/* ops.c — forward and backward of every layer the trainer needs, float32.
 *
 * Each op is one or two pool runs; a *_task struct carries the arguments and sac_split() cuts
 * the work into as many slices of rows (or of channels, when a gradient sums over rows) as the
 * pool has threads, which the threads take in turn (sac_pool_run_pieces), so no two slices ever
 * write the same value and the results do not depend on which thread took which. */
#include "ops.h"

#include <math.h>
#include <string.h>

#include "matmul.h"
#include "product_acc.h"
#include "train_math.h"
#include "train_math_simd.h"
#include "types.h"

/* ---------------------------------------------------------------------------------------- */
/* Embedding                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct embedding_task {
    float *out, *dwte, *dwpe;
    const float *dout, *wte, *wpe;
    const int32_t *tokens;
    int32_t B, T;
    int64_t C;
} embedding_task;

static void embedding_forward_task(void *arg, int ith, int nth) {
    const embedding_task *a = arg;
    int64_t n0, n1;
    sac_split((int64_t)a->B * a->T, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        const float *tok = a->wte + (int64_t)a->tokens[n] * a->C, *pos = a->wpe + (n % a->T) * a->C;
        float *o = a->out + n * a->C;
        for (int64_t c = 0; c < a->C; c++) o[c] = tok[c] + pos[c];
    }
}

void embedding_forward(sac_pool *pool, float *out, const int32_t *tokens, const float *wte, const float *wpe,
                       int32_t B, int32_t T, int64_t C) {
    embedding_task a = {.out = out, .wte = wte, .wpe = wpe, .tokens = tokens, .B = B, .T = T, .C = C};
    sac_pool_run_pieces(pool, embedding_forward_task, &a);
}

/* Several positions may hold the same token, so threads split the channels, not the rows. */
static void embedding_backward_task(void *arg, int ith, int nth) {
    const embedding_task *a = arg;
    int64_t c0, c1;
    sac_split(a->C, ith, nth, &c0, &c1);
    for (int64_t n = 0; n < (int64_t)a->B * a->T; n++) {
        const float *d = a->dout + n * a->C;
        float *tok = a->dwte + (int64_t)a->tokens[n] * a->C, *pos = a->dwpe + (n % a->T) * a->C;
        for (int64_t c = c0; c < c1; c++) {
            tok[c] += d[c];
            pos[c] += d[c];
        }
    }
}

void embedding_backward(sac_pool *pool, float *dwte, float *dwpe, const float *dout, const int32_t *tokens,
                        int32_t B, int32_t T, int64_t C) {
    embedding_task a = {.dwte = dwte, .dwpe = dwpe, .dout = dout, .tokens = tokens, .B = B, .T = T, .C = C};
    sac_pool_run_pieces(pool, embedding_backward_task, &a);
}

/* ---------------------------------------------------------------------------------------- */
/* LayerNorm                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct layernorm_task {
    float *out, *mean, *rstd, *dx, *dw, *db;
    const float *x, *w, *b, *dout, *cmean, *crstd;
    int64_t N, C;
    float eps;
} layernorm_task;

/* The same float arithmetic as the engine's layernorm (src/forward.c). */
static void layernorm_forward_task(void *arg, int ith, int nth) {
    const layernorm_task *a = arg;
    const int64_t C = a->C;
    int64_t n0, n1;
    sac_split(a->N, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        const float *x = a->x + n * C;
        float *o = a->out + n * C;
        float mean = 0.0f, var = 0.0f;
        for (int64_t i = 0; i < C; i++) mean += x[i];
        mean /= (float)C;
        for (int64_t i = 0; i < C; i++) var += (x[i] - mean) * (x[i] - mean);
        var /= (float)C;
        const float rstd = 1.0f / sqrtf(var + a->eps);
        for (int64_t i = 0; i < C; i++) o[i] = (x[i] - mean) * rstd * a->w[i] + a->b[i];
        a->mean[n] = mean;
        a->rstd[n] = rstd;
    }
}

void layernorm_forward(sac_pool *pool, float *out, float *mean, float *rstd, const float *x, const float *w,
                       const float *b, int64_t N, int64_t C, float eps) {
    layernorm_task a = {.out = out, .mean = mean, .rstd = rstd, .x = x, .w = w, .b = b, .N = N, .C = C, .eps = eps};
    sac_pool_run_pieces(pool, layernorm_forward_task, &a);
}

/* dx, per row: with x̂ = (x − mean)·rstd and g = w ⊙ dout,
 *   dx = rstd · (g − mean(g) − x̂ · mean(g ⊙ x̂)). */
static void layernorm_dx_task(void *arg, int ith, int nth) {
    const layernorm_task *a = arg;
    const int64_t C = a->C;
    int64_t n0, n1;
    sac_split(a->N, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        const float *x = a->x + n * C, *d = a->dout + n * C;
        const float mean = a->cmean[n], rstd = a->crstd[n];
        float g_mean = 0.0f, gx_mean = 0.0f;
        for (int64_t i = 0; i < C; i++) {
            const float g = a->w[i] * d[i];
            g_mean += g;
            gx_mean += g * (x[i] - mean) * rstd;
        }
        g_mean /= (float)C;
        gx_mean /= (float)C;
        float *dx = a->dx + n * C;
        for (int64_t i = 0; i < C; i++) {
            const float xhat = (x[i] - mean) * rstd;
            dx[i] += rstd * (a->w[i] * d[i] - g_mean - xhat * gx_mean);
        }
    }
}

/* dw = Σ_rows x̂ ⊙ dout, db = Σ_rows dout: threads split the channels. */
static void layernorm_dw_task(void *arg, int ith, int nth) {
    const layernorm_task *a = arg;
    const int64_t C = a->C;
    int64_t c0, c1;
    sac_split(C, ith, nth, &c0, &c1);
    for (int64_t n = 0; n < a->N; n++) {
        const float *x = a->x + n * C, *d = a->dout + n * C;
        const float mean = a->cmean[n], rstd = a->crstd[n];
        for (int64_t i = c0; i < c1; i++) {
            a->dw[i] += (x[i] - mean) * rstd * d[i];
            a->db[i] += d[i];
        }
    }
}

/* dx by rows and dw, db by channels in one pool run: they write different buffers. */
static void layernorm_backward_task(void *arg, int ith, int nth) {
    layernorm_dx_task(arg, ith, nth);
    layernorm_dw_task(arg, ith, nth);
}

void layernorm_backward(sac_pool *pool, float *dx, float *dw, float *db, const float *dout, const float *x,
                        const float *w, const float *mean, const float *rstd, int64_t N, int64_t C) {
    layernorm_task a = {.dx = dx, .dw = dw, .db = db, .dout = dout, .x = x, .w = w, .cmean = mean, .crstd = rstd,
                        .N = N, .C = C};
    sac_pool_run_pieces(pool, layernorm_backward_task, &a);
}

/* ---------------------------------------------------------------------------------------- */
/* Linear layer (matrix product plus bias)                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct linear_task {
    float *out, *dx, *dw, *dbias;
    const float *x, *w, *bias, *dout;
    int64_t N, C_in, C_out;
} linear_task;

static void add_bias_task(void *arg, int ith, int nth) {
    const linear_task *a = arg;
    int64_t n0, n1;
    sac_split(a->N, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++)
        for (int64_t o = 0; o < a->C_out; o++) a->out[n * a->C_out + o] += a->bias[o];
}

void linear_forward(sac_pool *pool, float *out, const float *x, const float *w, const float *bias, int64_t N,
                    int64_t C_in, int64_t C_out) {
    /* F32 weights need no workspace (sac_matmul_work_size is 0 for them) */
    const sac_matrix m = {SAC_TYPE_F32, C_in, C_out, w, 0};
    sac_matmul(pool, &m, x, N, out, NULL);
    if (bias) {
        linear_task a = {.out = out, .bias = bias, .N = N, .C_out = C_out};
        sac_pool_run_pieces(pool, add_bias_task, &a);
    }
}

/* Rows of the summed-over operand (w for dx, x for dw) that stay in cache while a thread's
 * tiles of output rows pass over them. */
#define LINEAR_CHUNK 64
/* Threads split output rows in multiples of this, the kernel's tile height. */
#define LINEAR_ROWS 4

/* Rows r0..r1 of the output, split over threads in whole tiles. */
static void linear_split(int64_t rows, int ith, int nth, int64_t *r0, int64_t *r1) {
    sac_split((rows + LINEAR_ROWS - 1) / LINEAR_ROWS, ith, nth, r0, r1);
    *r0 *= LINEAR_ROWS;
    *r1 = *r1 * LINEAR_ROWS < rows ? *r1 * LINEAR_ROWS : rows;
}

/* y rows r0..r1 += A·B over k = 0..K−1, in chunks of k (ascending, so the order of every sum
 * is that of product_acc.h whatever the chunk). */
static void product_chunked(const product_acc *p, int64_t r0, int64_t r1, int64_t K) {
    for (int64_t k0 = 0; k0 < K; k0 += LINEAR_CHUNK)
        product_acc_rows(p, r0, r1, k0, k0 + LINEAR_CHUNK < K ? k0 + LINEAR_CHUNK : K);
}

/* dx[n] += Σ_o dout[n][o] · w[o], rows of dx split over the threads. */
static void linear_dx_task(void *arg, int ith, int nth) {
    const linear_task *a = arg;
    int64_t n0, n1;
    linear_split(a->N, ith, nth, &n0, &n1);
    const product_acc p = {.y = a->dx, .ldy = a->C_in, .a = a->dout, .a_row = a->C_out, .a_k = 1, .b = a->w,
                           .ldb = a->C_in, .n_cols = a->C_in};
    product_chunked(&p, n0, n1, a->C_out);
}

/* dw[o] += Σ_n dout[n][o] · x[n] and dbias[o] += Σ_n dout[n][o], weight rows split over the
 * threads. */
static void linear_dw_task(void *arg, int ith, int nth) {
    const linear_task *a = arg;
    const int64_t C_out = a->C_out, N = a->N;
    int64_t o0, o1;
    linear_split(C_out, ith, nth, &o0, &o1);
    if (a->dbias)
        for (int64_t n = 0; n < N; n++)
            for (int64_t o = o0; o < o1; o++) a->dbias[o] += a->dout[n * C_out + o];
    const product_acc p = {.y = a->dw, .ldy = a->C_in, .a = a->dout, .a_row = 1, .a_k = C_out, .b = a->x,
                           .ldb = a->C_in, .n_cols = a->C_in};
    product_chunked(&p, o0, o1, N);
}

/* Both products in one pool run (they write different buffers): one wait for the threads
 * instead of two, which matters at the trainer's small sizes. */
static void linear_backward_task(void *arg, int ith, int nth) {
    const linear_task *a = arg;
    if (a->dx) linear_dx_task(arg, ith, nth);
    linear_dw_task(arg, ith, nth);
}

void linear_backward(sac_pool *pool, float *dx, float *dw, float *dbias, const float *dout, const float *x,
                     const float *w, int64_t N, int64_t C_in, int64_t C_out) {
    linear_task a = {.dx = dx, .dw = dw, .dbias = dbias, .dout = dout, .x = x, .w = w, .N = N, .C_in = C_in,
                     .C_out = C_out};
    sac_pool_run_pieces(pool, linear_backward_task, &a);
}

/* ---------------------------------------------------------------------------------------- */
/* GELU                                                                                      */
/* ---------------------------------------------------------------------------------------- */

#define GELU_SCALE 0.7978845608028654f /* √(2/π) */

typedef struct gelu_task {
    float *out, *th, *dx;
    const float *x, *cth, *dout;
    int64_t n;
} gelu_task;

static void gelu_forward_task(void *arg, int ith, int nth) {
    const gelu_task *a = arg;
    int64_t i0, i1;
    sac_split(a->n, ith, nth, &i0, &i1);
    int64_t i = i0;
#ifdef __wasm_simd128__
    /* four at a time, the scalar loop's operations in its order */
    for (; i + 4 <= i1; i += 4) {
        const v128_t x = wasm_v128_load(a->x + i);
        const v128_t cube = wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.044715f), x), x), x);
        const v128_t th = train_tanhf_x4(wasm_f32x4_mul(wasm_f32x4_splat(GELU_SCALE), wasm_f32x4_add(x, cube)));
        wasm_v128_store(a->th + i, th);
        wasm_v128_store(a->out + i, wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.5f), x),
                                                   wasm_f32x4_add(wasm_f32x4_splat(1.0f), th)));
    }
#endif
    for (; i < i1; i++) {
        const float x = a->x[i];
        const float th = train_tanhf(GELU_SCALE * (x + 0.044715f * x * x * x));
        a->th[i] = th;
        a->out[i] = 0.5f * x * (1.0f + th);
    }
}

/* d/dx of 0.5·x·(1 + tanh(u)), u = s·(x + 0.044715·x³):
 *   0.5·(1 + tanh u) + 0.5·x·(1 − tanh² u)·s·(1 + 3·0.044715·x²). */
static void gelu_backward_task(void *arg, int ith, int nth) {
    const gelu_task *a = arg;
    int64_t i0, i1;
    sac_split(a->n, ith, nth, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) {
        const float x = a->x[i], th = a->cth[i];
        const float du = GELU_SCALE * (1.0f + 3.0f * 0.044715f * x * x);
        a->dx[i] += a->dout[i] * (0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du);
    }
}

void gelu_forward(sac_pool *pool, float *out, float *th, const float *x, int64_t n) {
    gelu_task a = {.out = out, .th = th, .x = x, .n = n};
    sac_pool_run_pieces(pool, gelu_forward_task, &a);
}

void gelu_backward(sac_pool *pool, float *dx, const float *x, const float *th, const float *dout, int64_t n) {
    gelu_task a = {.dx = dx, .x = x, .cth = th, .dout = dout, .n = n};
    sac_pool_run_pieces(pool, gelu_backward_task, &a);
}

/* ---------------------------------------------------------------------------------------- */
/* Attention: every (sequence, head) pair is one work item, with all its query rows          */
/* ---------------------------------------------------------------------------------------- */

typedef struct attention_task {
    float *out, *probs, *dq, *dk, *dv;
    const float *cprobs, *q, *k, *v, *dout;
    const attention_dims *d;
} attention_task;

static void attention_forward_task(void *arg, int ith, int nth) {
    const attention_task *a = arg;
    const attention_dims *d = a->d;
    const int32_t H = d->n_head, hd = d->head_dim;
    const int64_t out_stride = (int64_t)H * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    int64_t i0, i1;
    sac_split((int64_t)d->B * H, ith, nth, &i0, &i1);
    for (int64_t item = i0; item < i1; item++) {
        const int64_t b = item / H, h = item % H;
        const float *k = a->k + b * d->Tk * d->kv_stride + h * hd, *v = a->v + b * d->Tk * d->kv_stride + h * hd;
        for (int32_t t = 0; t < d->Tq; t++) {
            const float *q = a->q + (b * d->Tq + t) * d->q_stride + h * hd;
            float *p = a->probs + ((b * H + h) * d->Tq + t) * d->Tk;
            const int32_t n_keys = d->causal ? t + 1 : d->Tk;

            /* softmax(q·k / √d) over the visible keys, as the engine computes it */
            float max = -INFINITY, sum = 0.0f;
            for (int32_t j = 0; j < n_keys; j++) {
                p[j] = sac_dot_f32(q, k + j * d->kv_stride, hd) * scale;
                if (p[j] > max) max = p[j];
            }
            for (int32_t j = 0; j < n_keys; j++) {
                p[j] = train_expf(p[j] - max);
                sum += p[j];
            }
            const float inv = 1.0f / sum;
            for (int32_t j = 0; j < n_keys; j++) p[j] *= inv;
            for (int32_t j = n_keys; j < d->Tk; j++) p[j] = 0.0f;

            float *o = a->out + (b * d->Tq + t) * out_stride + h * hd;
            memset(o, 0, (size_t)hd * sizeof *o);
            for (int32_t j = 0; j < n_keys; j++) sac_axpy_f32(o, p[j], v + j * d->kv_stride, hd);
        }
    }
}

void attention_forward(sac_pool *pool, float *out, float *probs, const float *q, const float *k, const float *v,
                       const attention_dims *d) {
    attention_task a = {.out = out, .probs = probs, .q = q, .k = k, .v = v, .d = d};
    sac_pool_run_pieces(pool, attention_forward_task, &a);
}

/* Per query row, with p the probabilities, o = Σ_j p_j v_j and s_j = q·k_j·scale:
 *   dv_j += p_j · do;   dp_j = do·v_j;   ds_j = p_j · (dp_j − Σ_i p_i dp_i);
 *   dq += Σ_j ds_j · scale · k_j;   dk_j += ds_j · scale · q.
 * dp_j is computed twice (once for the sum, once for ds_j) rather than stored. */
static void attention_backward_task(void *arg, int ith, int nth) {
    const attention_task *a = arg;
    const attention_dims *d = a->d;
    const int32_t H = d->n_head, hd = d->head_dim;
    const int64_t out_stride = (int64_t)H * hd;
    const float scale = 1.0f / sqrtf((float)hd);
    int64_t i0, i1;
    sac_split((int64_t)d->B * H, ith, nth, &i0, &i1);
    for (int64_t item = i0; item < i1; item++) {
        const int64_t b = item / H, h = item % H, kv0 = b * d->Tk * d->kv_stride + h * hd;
        const float *k = a->k + kv0, *v = a->v + kv0;
        float *dk = a->dk + kv0, *dv = a->dv + kv0;
        for (int32_t t = 0; t < d->Tq; t++) {
            const int64_t q_at = (b * d->Tq + t) * d->q_stride + h * hd;
            const float *q = a->q + q_at, *dout = a->dout + (b * d->Tq + t) * out_stride + h * hd;
            float *dq = a->dq + q_at;
            const float *p = a->cprobs + ((b * H + h) * d->Tq + t) * d->Tk;
            const int32_t n_keys = d->causal ? t + 1 : d->Tk;

            float pdp = 0.0f;
            for (int32_t j = 0; j < n_keys; j++) pdp += p[j] * sac_dot_f32(dout, v + j * d->kv_stride, hd);
            for (int32_t j = 0; j < n_keys; j++) {
                const float dp = sac_dot_f32(dout, v + j * d->kv_stride, hd);
                const float ds = p[j] * (dp - pdp) * scale;
                sac_axpy_f32(dq, ds, k + j * d->kv_stride, hd);
                sac_axpy_f32(dk + j * d->kv_stride, ds, q, hd);
                sac_axpy_f32(dv + j * d->kv_stride, p[j], dout, hd);
            }
        }
    }
}

void attention_backward(sac_pool *pool, float *dq, float *dk, float *dv, const float *dout, const float *probs,
                        const float *q, const float *k, const float *v, const attention_dims *d) {
    attention_task a = {.dq = dq, .dk = dk, .dv = dv, .dout = dout, .cprobs = probs, .q = q, .k = k, .v = v, .d = d};
    sac_pool_run_pieces(pool, attention_backward_task, &a);
}

/* ---------------------------------------------------------------------------------------- */
/* Softmax cross-entropy                                                                     */
/* ---------------------------------------------------------------------------------------- */

typedef struct crossentropy_task {
    float *losses, *probs, *dlogits;
    const float *logits, *cprobs, *dlosses;
    const int32_t *targets;
    int64_t N, V;
} crossentropy_task;

static void crossentropy_forward_task(void *arg, int ith, int nth) {
    const crossentropy_task *a = arg;
    int64_t n0, n1;
    sac_split(a->N, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        const float *z = a->logits + n * a->V;
        float *p = a->probs + n * a->V;
        float max = -INFINITY, sum = 0.0f;
        for (int64_t i = 0; i < a->V; i++)
            if (z[i] > max) max = z[i];
        for (int64_t i = 0; i < a->V; i++) {
            p[i] = train_expf(z[i] - max);
            sum += p[i];
        }
        for (int64_t i = 0; i < a->V; i++) p[i] /= sum;
        /* −log p[target] from the logits directly: exact even when p[target] underflows */
        a->losses[n] = train_logf(sum) - (z[a->targets[n]] - max);
    }
}

static void crossentropy_backward_task(void *arg, int ith, int nth) {
    const crossentropy_task *a = arg;
    int64_t n0, n1;
    sac_split(a->N, ith, nth, &n0, &n1);
    for (int64_t n = n0; n < n1; n++) {
        const float *p = a->cprobs + n * a->V;
        float *dz = a->dlogits + n * a->V;
        const float g = a->dlosses[n];
        for (int64_t i = 0; i < a->V; i++) dz[i] += g * p[i];
        dz[a->targets[n]] -= g;
    }
}

void crossentropy_forward(sac_pool *pool, float *losses, float *probs, const float *logits, const int32_t *targets,
                          int64_t N, int64_t V) {
    crossentropy_task a = {.losses = losses, .probs = probs, .logits = logits, .targets = targets, .N = N, .V = V};
    sac_pool_run_pieces(pool, crossentropy_forward_task, &a);
}

void crossentropy_backward(sac_pool *pool, float *dlogits, const float *probs, const int32_t *targets,
                           const float *dlosses, int64_t N, int64_t V) {
    crossentropy_task a = {.dlogits = dlogits, .cprobs = probs, .dlosses = dlosses, .targets = targets, .N = N,
                           .V = V};
    sac_pool_run_pieces(pool, crossentropy_backward_task, &a);
}

/* ---------------------------------------------------------------------------------------- */
/* Residual connection                                                                       */
/* ---------------------------------------------------------------------------------------- */

void residual_forward(float *out, const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void residual_backward(float *da, float *db, const float *dout, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        da[i] += dout[i];
        db[i] += dout[i];
    }
}
