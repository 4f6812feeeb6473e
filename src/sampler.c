/* sampler.c — from a row of logits to the next token id.
 *
 * Order: repetition penalty → temperature → softmax → top-k → top-p → draw. Everything after
 * the logits is done in double precision with a seeded splitmix64 generator, and ties are
 * broken by the lower id, so the same seed and logits give the same token everywhere. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"

sac_sampling_params sac_sampling_default_params(void) {
    sac_sampling_params p;
    p.temperature = 0.8f;
    p.top_k = 40;
    p.top_p = 0.95f;
    p.repeat_penalty = 1.0f;
    p.repeat_last_n = 64;
    p.seed = 0;
    return p;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static double uniform(uint64_t *state) { return (double)(splitmix64(state) >> 11) * 0x1.0p-53; }

sac_status sac_sampler_init(sac_context *ctx, const sac_sampling_params *p) {
    if (!ctx) return SAC_ERR_ARG;
    if (!p) return sac_fail(&ctx->error, SAC_ERR_ARG, "sampling parameters are NULL");
    if (!isfinite(p->temperature) || p->temperature < 0.0f)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "temperature must be a finite number >= 0, got %g",
                        (double)p->temperature);
    if (p->top_k < 0) return sac_fail(&ctx->error, SAC_ERR_ARG, "top_k must be >= 0, got %d", p->top_k);
    if (!(p->top_p > 0.0f && p->top_p <= 1.0f))
        return sac_fail(&ctx->error, SAC_ERR_ARG, "top_p must be in (0, 1], got %g", (double)p->top_p);
    if (!isfinite(p->repeat_penalty) || p->repeat_penalty <= 0.0f)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "repeat_penalty must be a finite number > 0, got %g",
                        (double)p->repeat_penalty);
    if (p->repeat_last_n < -1)
        return sac_fail(&ctx->error, SAC_ERR_ARG, "repeat_last_n must be >= -1, got %d", p->repeat_last_n);
    ctx->sampler.params = *p;
    ctx->sampler.rng = p->seed;
    ctx->sampler.ready = 1;
    return SAC_OK;
}

/* "a ranks before b": higher probability, then lower id. */
static int ranks_before(const double *prob, int32_t a, int32_t b) {
    return prob[a] > prob[b] || (prob[a] == prob[b] && a < b);
}

static void sift_down(int32_t *heap, int32_t n, int32_t i, const double *prob) {
    /* min-heap by rank: the root is the candidate that ranks last */
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, worst = i;
        if (l < n && ranks_before(prob, heap[worst], heap[l])) worst = l;
        if (r < n && ranks_before(prob, heap[worst], heap[r])) worst = r;
        if (worst == i) return;
        int32_t t = heap[i]; heap[i] = heap[worst]; heap[worst] = t;
        i = worst;
    }
}

/* Bottom-up merge sort: O(n log n) for any candidate count, deterministic order. */
static void sort_by_rank(int32_t *ids, int32_t n, const double *prob, int32_t *tmp) {
    for (int32_t width = 1; width < n; width *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * width) {
            int32_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = ranks_before(prob, ids[j], ids[i]) ? ids[j++] : ids[i++];
            while (i < mid) tmp[k++] = ids[i++];
            while (j < hi) tmp[k++] = ids[j++];
        }
        memcpy(ids, tmp, (size_t)n * sizeof *ids);
    }
}

sac_status sac_sample(sac_context *ctx, int32_t *token) {
    if (!ctx || !token) return ctx ? sac_fail(&ctx->error, SAC_ERR_ARG, "token is NULL") : SAC_ERR_ARG;
    *token = -1; /* a caller that ignores the status evaluates an invalid id, refused, not garbage */
    if (!sac_context_usable(ctx)) return sac_fail(&ctx->error, SAC_ERR_STATE, "the context failed to initialise");
    if (!ctx->logits_rows) return sac_fail(&ctx->error, SAC_ERR_STATE, "no logits to sample from: evaluate tokens first");
    sac_sampler_state *s = &ctx->sampler;
    if (!s->ready) {
        sac_sampling_params defaults = sac_sampling_default_params();
        sac_sampler_init(ctx, &defaults);
    }
    const sac_sampling_params *p = &s->params;
    const int32_t V = ctx->model->info.n_vocab;
    const float *logits = ctx->logits + (size_t)(ctx->logits_rows - 1) * V;
    double *prob = s->prob;
    for (int32_t i = 0; i < V; i++) prob[i] = logits[i];

    /* Repetition penalty over the distinct ids among the last repeat_last_n tokens. */
    if (p->repeat_penalty != 1.0f && p->repeat_last_n != 0) {
        int32_t n = p->repeat_last_n < 0 || p->repeat_last_n > ctx->n_past ? ctx->n_past : p->repeat_last_n;
        const int32_t *recent = ctx->tokens + ctx->n_past - n;
        memset(s->index, 0, (size_t)V * sizeof *s->index);
        for (int32_t i = 0; i < n; i++) {
            int32_t id = recent[i];
            if (s->index[id]) continue;
            s->index[id] = 1;
            prob[id] = prob[id] > 0 ? prob[id] / p->repeat_penalty : prob[id] * p->repeat_penalty;
        }
    }

    if (p->temperature == 0.0f) {
        int32_t best = 0;
        for (int32_t i = 1; i < V; i++)
            if (prob[i] > prob[best]) best = i;
        *token = best;
        return SAC_OK;
    }

    /* Softmax of logits / temperature. */
    double max = -INFINITY, sum = 0.0;
    for (int32_t i = 0; i < V; i++) {
        prob[i] /= p->temperature;
        if (prob[i] > max) max = prob[i];
    }
    for (int32_t i = 0; i < V; i++) sum += (prob[i] = exp(prob[i] - max));
    for (int32_t i = 0; i < V; i++) prob[i] /= sum;

    /* Candidates, best first. */
    int32_t *ids = s->index, n = 0;
    if (p->top_k > 0 && p->top_k < V) {
        n = p->top_k;
        for (int32_t i = 0; i < n; i++) ids[i] = i;
        for (int32_t i = n / 2 - 1; i >= 0; i--) sift_down(ids, n, i, prob);
        for (int32_t i = n; i < V; i++)
            if (ranks_before(prob, i, ids[0])) {
                ids[0] = i;
                sift_down(ids, n, 0, prob);
            }
    } else if (p->top_p < 1.0f) {
        /* An id whose probability is below (1 - top_p) / (V - 1) can never be in the nucleus:
         * dropping them first keeps the sort short. */
        const double cutoff = V > 1 ? (1.0 - p->top_p) / (V - 1) : 0.0;
        for (int32_t i = 0; i < V; i++)
            if (prob[i] >= cutoff) ids[n++] = i;
        if (n == 0) /* a nearly flat distribution with a tiny top_p: keep everything */
            for (int32_t i = 0; i < V; i++) ids[n++] = i;
    } else {
        for (int32_t i = 0; i < V; i++) ids[n++] = i;
    }
    if (p->top_k > 0 || p->top_p < 1.0f) {
        sort_by_rank(ids, n, prob, ids + V); /* index holds 2 × V ids: the second half is scratch */
    }

    /* Nucleus: the fewest best candidates whose mass (within the candidates) reaches top_p. */
    double mass = 0.0;
    for (int32_t i = 0; i < n; i++) mass += prob[ids[i]];
    if (p->top_p < 1.0f) {
        double acc = 0.0;
        for (int32_t i = 0; i < n; i++) {
            acc += prob[ids[i]];
            if (acc >= p->top_p * mass) {
                n = i + 1;
                mass = acc;
                break;
            }
        }
    }

    double r = uniform(&s->rng) * mass, acc = 0.0;
    for (int32_t i = 0; i < n; i++) {
        acc += prob[ids[i]];
        if (r < acc) {
            *token = ids[i];
            return SAC_OK;
        }
    }
    *token = ids[n - 1]; /* rounding left r at the very top */
    return SAC_OK;
}
