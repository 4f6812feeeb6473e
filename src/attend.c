/* attend.c — the attention primitive: scores, masks, a tempered softmax and the weighted sum of
 * values, on caller-given arrays (sac_attend in saccade.h).
 *
 * Read sac_attend top to bottom: check every size and input → for each batch element and head
 * (additive scores first project the keys once) → for each query: score every admissible key,
 * softmax, sum the values. The model's attention (forward.c) shares the softmax step
 * (softmax.h) and the f32 dot/axpy kernels; it keeps its own loop because it reads keys from the
 * KV cache with grouped heads and a per-thread row, which this general routine's checks and
 * per-score dispatch would slow down. */
#include "attend.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kernels.h"
#include "softmax.h"

/* ---------------------------------------------------------------------------------------- */
/* Messages and sizes of the model-free calls                                                */
/* ---------------------------------------------------------------------------------------- */

sac_status sac_fail_msg(char *errmsg, size_t errmsg_size, sac_status status, const char *fmt, ...) {
    if (errmsg && errmsg_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errmsg, errmsg_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

int sac_count3(uint64_t a, uint64_t b, uint64_t c, uint64_t *count) {
    uint64_t ab, abc;
    if (!sac_mul_u64(a, b, &ab) || !sac_mul_u64(ab, c, &abc) || abc > SIZE_MAX) return 0;
    *count = abc;
    return 1;
}

sac_status sac_check_len(char *errmsg, size_t errmsg_size, const char *name, const void *ptr, size_t len,
                         uint64_t a, uint64_t b, uint64_t c) {
    uint64_t need;
    if (!sac_count3(a, b, c, &need))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG,
                            "%s would need %llu × %llu × %llu elements, more than this build can address", name,
                            (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
    if (!ptr) return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "%s is NULL", name);
    if ((uint64_t)len < need)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "%s holds %llu elements but needs %llu", name,
                            (unsigned long long)len, (unsigned long long)need);
    return SAC_OK;
}

sac_status sac_check_finite(char *errmsg, size_t errmsg_size, const char *name, const float *x, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "%s[%llu] is %g, not a finite number", name,
                                (unsigned long long)i, (double)x[i]);
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Kernels                                                                                   */
/* ---------------------------------------------------------------------------------------- */

int sac_score_is_kernel(int32_t score) {
    return score == SAC_SCORE_GAUSSIAN || score == SAC_SCORE_BOXCAR || score == SAC_SCORE_EPANECHNIKOV;
}

double sac_kernel_log(int32_t score, double u2) {
    switch (score) {
    case SAC_SCORE_GAUSSIAN: return -0.5 * u2;
    case SAC_SCORE_BOXCAR: return u2 <= 1.0 ? 0.0 : -INFINITY;
    case SAC_SCORE_EPANECHNIKOV: return u2 < 1.0 ? log(1.0 - u2) : -INFINITY;
    }
    return -INFINITY;
}

static double squared_distance(const float *a, const float *b, int32_t n) {
    double s = 0.0;
    for (int32_t i = 0; i < n; i++) {
        const double d = (double)a[i] - (double)b[i];
        s += d * d;
    }
    return s;
}

/* ---------------------------------------------------------------------------------------- */
/* The call                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sac_attend_params sac_attend_default_params(void) {
    sac_attend_params p = {0};
    p.batch = p.n_q = p.n_k = p.d_k = p.d_v = p.n_heads = 1;
    p.score = SAC_SCORE_SCALED_DOT;
    p.width = 1.0f;
    p.hidden = 1;
    p.mask = SAC_MASK_NONE;
    p.temperature = 1.0f;
    return p;
}

/* What one head's scores read, fixed for the call. */
typedef struct score_setup {
    const sac_attend_params *p;
    int32_t dh;          /* the head's query/key size */
    float scale;         /* SCALED_DOT: 1/√dh */
    const float *W;      /* GENERAL: this head's [dh][dh]; ADDITIVE: W_q [hidden][dh] */
    const float *W_k;    /* ADDITIVE: this head's [hidden][dh] */
    const float *v;      /* ADDITIVE: this head's [hidden] */
    const float *kproj;  /* ADDITIVE: W_k k for every key, [n_k][hidden] */
    float *qproj;        /* ADDITIVE: W_q q, [hidden] */
} score_setup;

/* y[a] = Σ_c M[a][c] x[c] for a < rows. */
static void matvec(float *y, const float *M, const float *x, int32_t rows, int32_t cols) {
    for (int32_t a = 0; a < rows; a++) y[a] = sac_dot_f32(M + (int64_t)a * cols, x, cols);
}

/* The score of query q against key j (k its features); additive needs prepare_query first. */
static float score(const score_setup *s, const float *q, const float *k, int32_t j) {
    const int32_t d = s->dh;
    switch (s->p->score) {
    case SAC_SCORE_DOT: return sac_dot_f32(q, k, d);
    case SAC_SCORE_SCALED_DOT: return sac_dot_f32(q, k, d) * s->scale;
    case SAC_SCORE_GENERAL: {
        double sum = 0.0; /* qᵀ(W k): W's rows against k, then q */
        for (int32_t a = 0; a < d; a++) sum += (double)q[a] * sac_dot_f32(s->W + (int64_t)a * d, k, d);
        return (float)sum;
    }
    case SAC_SCORE_ADDITIVE: {
        const int32_t hidden = s->p->hidden;
        const float *kp = s->kproj + (int64_t)j * hidden;
        double sum = 0.0;
        for (int32_t a = 0; a < hidden; a++) sum += (double)s->v[a] * tanh((double)s->qproj[a] + kp[a]);
        return (float)sum;
    }
    case SAC_SCORE_COSINE: {
        const double qq = sac_dot_f32(q, q, d), kk = sac_dot_f32(k, k, d);
        if (qq == 0.0 || kk == 0.0) return 0.0f;
        return (float)(sac_dot_f32(q, k, d) / (sqrt(qq) * sqrt(kk)));
    }
    default: {
        const double w = s->p->width;
        return (float)sac_kernel_log(s->p->score, squared_distance(q, k, d) * w * w);
    }
    }
}

static int admissible(const sac_attend_params *p, const int32_t *key_lengths, const uint8_t *mask, int32_t b,
                      int32_t i, int32_t j) {
    if ((p->mask & SAC_MASK_CAUSAL) && (int64_t)j > (int64_t)i + p->n_k - p->n_q) return 0;
    if ((p->mask & SAC_MASK_PADDING) && j >= key_lengths[b]) return 0;
    if (p->mask & SAC_MASK_EXPLICIT) {
        const int64_t plane = (int64_t)p->n_q * p->n_k;
        if (!mask[(p->mask_per_batch ? b * plane : 0) + (int64_t)i * p->n_k + j]) return 0;
    }
    return 1;
}

/* Turns one row of scores (−∞ = excluded) into weights in place: softmax(s/τ), or the argmax
 * limit when τ = 0 or 1/τ overflows; all 0 when no key is admissible. */
static void weights_of_row(float *w, int32_t n, float temperature) {
    float max = -INFINITY;
    for (int32_t j = 0; j < n; j++)
        if (w[j] > max) max = w[j];
    if (max == -INFINITY) {
        memset(w, 0, (size_t)n * sizeof *w);
        return;
    }
    const float inv_temp = temperature > 0.0f ? 1.0f / temperature : INFINITY;
    if (isinf(inv_temp)) {
        int32_t ties = 0;
        for (int32_t j = 0; j < n; j++) ties += w[j] == max;
        for (int32_t j = 0; j < n; j++) w[j] = w[j] == max ? 1.0f / (float)ties : 0.0f;
        return;
    }
    const float inv = 1.0f / sac_softmax_exp(w, n, max, inv_temp);
    for (int32_t j = 0; j < n; j++) w[j] *= inv;
}

static sac_status check_params(const sac_attend_params *p, char *errmsg, size_t errmsg_size) {
    if (!p) return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "params is NULL");
    if (p->batch < 1 || p->n_q < 1 || p->n_k < 1 || p->d_k < 1 || p->d_v < 1 || p->n_heads < 1)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG,
                            "batch, n_q, n_k, d_k, d_v and n_heads must be >= 1 (got %d, %d, %d, %d, %d, %d)",
                            p->batch, p->n_q, p->n_k, p->d_k, p->d_v, p->n_heads);
    if (p->d_k % p->n_heads || p->d_v % p->n_heads)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "n_heads %d must divide d_k %d and d_v %d",
                            p->n_heads, p->d_k, p->d_v);
    if (p->score < SAC_SCORE_DOT || p->score > SAC_SCORE_EPANECHNIKOV)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "unknown score %d (0..%d)", p->score,
                            SAC_SCORE_EPANECHNIKOV);
    if (sac_score_is_kernel(p->score) && !(isfinite(p->width) && p->width > 0.0f))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "a kernel's width must be finite and > 0, got %g",
                            (double)p->width);
    if (p->score == SAC_SCORE_ADDITIVE && p->hidden < 1)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "additive scores need hidden >= 1, got %d",
                            p->hidden);
    if (p->mask & ~(uint32_t)(SAC_MASK_CAUSAL | SAC_MASK_PADDING | SAC_MASK_EXPLICIT))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "unknown mask flags 0x%x", (unsigned)p->mask);
    if (!(isfinite(p->temperature) && p->temperature >= 0.0f))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "temperature must be finite and >= 0, got %g",
                            (double)p->temperature);
    return SAC_OK;
}

sac_status sac_attend(const sac_attend_params *p, const float *queries, size_t queries_len, const float *keys,
                      size_t keys_len, const float *values, size_t values_len, const float *W, size_t W_len,
                      const int32_t *key_lengths, size_t key_lengths_len, const uint8_t *mask, size_t mask_len,
                      float *out, size_t out_len, float *weights, size_t weights_len, float *scores,
                      size_t scores_len, char *errmsg, size_t errmsg_size) {
    sac_status st = check_params(p, errmsg, errmsg_size);
    if (st) return st;
    if (errmsg && errmsg_size) errmsg[0] = '\0';
    const int32_t B = p->batch, nq = p->n_q, nk = p->n_k, H = p->n_heads;
    const int32_t dh = p->d_k / H, dvh = p->d_v / H;
    const uint64_t rows = (uint64_t)B * (uint64_t)H; /* both < 2^31: no overflow */

    /* Every buffer against its shape, sizes in 64 bits. */
#define CHECK(name, ptr, len, a, b, c) \
    if ((st = sac_check_len(errmsg, errmsg_size, name, ptr, len, a, b, c))) return st
    CHECK("queries", queries, queries_len, B, nq, p->d_k);
    CHECK("keys", keys, keys_len, B, nk, p->d_k);
    CHECK("values", values, values_len, B, nk, p->d_v);
    CHECK("out", out, out_len, B, nq, p->d_v);
    if (weights) CHECK("weights", weights, weights_len, rows, nq, nk);
    if (scores) CHECK("scores", scores, scores_len, rows, nq, nk);
    uint64_t n_W = 0;
    if (p->score == SAC_SCORE_GENERAL) {
        CHECK("W (general: [n_heads][d][d])", W, W_len, H, dh, dh);
        n_W = (uint64_t)H * dh * dh;
    } else if (p->score == SAC_SCORE_ADDITIVE) {
        /* W_q and W_k [H][hidden][dh], then v [H][hidden]: H·hidden·(2·dh + 1) */
        CHECK("W (additive: W_q, W_k [n_heads][hidden][d], v [n_heads][hidden])", W, W_len, H, p->hidden,
              2 * (uint64_t)dh + 1);
        n_W = (uint64_t)H * p->hidden * (2 * (uint64_t)dh + 1);
    }
    if (p->mask & SAC_MASK_PADDING) {
        CHECK("key_lengths", key_lengths, key_lengths_len, B, 1, 1);
        for (int32_t b = 0; b < B; b++)
            if (key_lengths[b] < 0 || key_lengths[b] > nk)
                return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "key_lengths[%d] is %d, outside 0..n_k (%d)", b,
                                    key_lengths[b], nk);
    }
    if (p->mask & SAC_MASK_EXPLICIT) CHECK("mask", mask, mask_len, p->mask_per_batch ? B : 1, nq, nk);
#undef CHECK
    if ((st = sac_check_finite(errmsg, errmsg_size, "queries", queries, (uint64_t)B * nq * p->d_k)) ||
        (st = sac_check_finite(errmsg, errmsg_size, "keys", keys, (uint64_t)B * nk * p->d_k)) ||
        (st = sac_check_finite(errmsg, errmsg_size, "values", values, (uint64_t)B * nk * p->d_v)) ||
        (st = sac_check_finite(errmsg, errmsg_size, "W", W, n_W)))
        return st;

    /* Scratch: one row of weights, and for additive scores W_q q and every key's W_k k. */
    const int32_t hidden = p->score == SAC_SCORE_ADDITIVE ? p->hidden : 0;
    uint64_t n_scratch;
    if (!sac_count3((uint64_t)nk, (uint64_t)hidden + 1, 1, &n_scratch) ||
        !sac_count3(n_scratch + (uint64_t)hidden, sizeof(float), 1, &n_scratch))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_NOMEM, "the scratch for %d keys × %d hidden does not fit",
                            nk, hidden);
    float *scratch = malloc((size_t)n_scratch);
    if (!scratch)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_NOMEM, "out of memory for %llu bytes of scratch",
                            (unsigned long long)n_scratch);
    float *kproj = scratch + nk, *qproj = kproj + (int64_t)nk * hidden;

    memset(out, 0, (size_t)B * nq * p->d_v * sizeof *out);
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++) {
            score_setup s = {p, dh, 1.0f / sqrtf((float)dh), NULL, NULL, NULL, kproj, qproj};
            const float *kb = keys + (int64_t)b * nk * p->d_k + (int64_t)h * dh;
            if (p->score == SAC_SCORE_GENERAL) s.W = W + (int64_t)h * dh * dh;
            if (p->score == SAC_SCORE_ADDITIVE) {
                const int64_t block = (int64_t)hidden * dh;
                s.W = W + h * block;
                s.W_k = W + H * block + h * block;
                s.v = W + 2 * H * block + (int64_t)h * hidden;
                for (int32_t j = 0; j < nk; j++) matvec(kproj + (int64_t)j * hidden, s.W_k, kb + (int64_t)j * p->d_k, hidden, dh);
            }
            for (int32_t i = 0; i < nq; i++) {
                const float *q = queries + ((int64_t)b * nq + i) * p->d_k + (int64_t)h * dh;
                const int64_t row = (((int64_t)b * H + h) * nq + i) * nk;
                float *w = weights ? weights + row : scratch;
                if (p->score == SAC_SCORE_ADDITIVE) matvec(qproj, s.W, q, hidden, dh);
                for (int32_t j = 0; j < nk; j++) {
                    if (!admissible(p, key_lengths, mask, b, i, j)) {
                        w[j] = -INFINITY;
                        continue;
                    }
                    w[j] = score(&s, q, kb + (int64_t)j * p->d_k, j);
                    if (isnan(w[j]) || w[j] == INFINITY) {
                        free(scratch);
                        memset(out, 0, (size_t)B * nq * p->d_v * sizeof *out);
                        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG,
                                            "the score of batch %d, head %d, query %d, key %d is not finite "
                                            "(the inputs are too large for float32)",
                                            b, h, i, j);
                    }
                }
                if (scores) memcpy(scores + row, w, (size_t)nk * sizeof *w);
                weights_of_row(w, nk, p->temperature);
                /* out = Σ_j w_j v_j over this head's value features */
                float *o = out + ((int64_t)b * nq + i) * p->d_v + (int64_t)h * dvh;
                const float *vb = values + (int64_t)b * nk * p->d_v + (int64_t)h * dvh;
                for (int32_t j = 0; j < nk; j++)
                    if (w[j] != 0.0f) sac_axpy_f32(o, w[j], vb + (int64_t)j * p->d_v, dvh);
            }
        }
    free(scratch);
    return SAC_OK;
}
