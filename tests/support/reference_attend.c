/* reference_attend.c — see reference_attend.h. */
#include "reference_attend.h"

#include <math.h>
#include <stdlib.h>

/* K(u) for u² = distance² · w², the kernel itself (the engine works with log K). */
static double kernel(int score, double u2) {
    if (score == SAC_SCORE_GAUSSIAN) return exp(-u2 / 2);
    if (score == SAC_SCORE_BOXCAR) return sqrt(u2) <= 1 ? 1 : 0;
    return u2 < 1 ? 1 - u2 : 0; /* Epanechnikov */
}

static int allowed(const sac_attend_params *p, const int32_t *lens, const uint8_t *mask, int b, int i, int j) {
    int ok = 1;
    if (p->mask & SAC_MASK_CAUSAL) ok &= (j - (p->n_k - p->n_q)) <= i;
    if (p->mask & SAC_MASK_PADDING) ok &= j < lens[b];
    if (p->mask & SAC_MASK_EXPLICIT) {
        const uint8_t *m = mask + (p->mask_per_batch ? (size_t)b * p->n_q * p->n_k : 0);
        ok &= m[(size_t)i * p->n_k + j] != 0;
    }
    return ok;
}

/* One score in double: q, k are the head's slices (d values each). */
static double score_of(const sac_attend_params *p, int h, const float *q, const float *k, int d, const float *W) {
    double qk = 0, qq = 0, kk = 0, dist2 = 0;
    for (int a = 0; a < d; a++) {
        qk += (double)q[a] * k[a];
        qq += (double)q[a] * q[a];
        kk += (double)k[a] * k[a];
        dist2 += ((double)q[a] - k[a]) * ((double)q[a] - k[a]);
    }
    switch (p->score) {
    case SAC_SCORE_DOT: return qk;
    case SAC_SCORE_SCALED_DOT: return qk / sqrt((double)d);
    case SAC_SCORE_COSINE: return qq > 0 && kk > 0 ? qk / sqrt(qq * kk) : 0;
    case SAC_SCORE_GENERAL: {
        const float *Wh = W + (size_t)h * d * d;
        double s = 0;
        for (int a = 0; a < d; a++)
            for (int c = 0; c < d; c++) s += q[a] * (double)Wh[a * d + c] * k[c];
        return s;
    }
    case SAC_SCORE_ADDITIVE: {
        const int H = p->n_heads, n = p->hidden;
        const float *Wq = W + (size_t)h * n * d, *Wk = W + (size_t)(H + h) * n * d, *v = W + (size_t)2 * H * n * d + (size_t)h * n;
        double s = 0;
        for (int a = 0; a < n; a++) {
            double z = 0;
            for (int c = 0; c < d; c++) z += (double)Wq[a * d + c] * q[c] + (double)Wk[a * d + c] * k[c];
            s += v[a] * tanh(z);
        }
        return s;
    }
    default: {
        const double K = kernel(p->score, dist2 * (double)p->width * p->width);
        return K > 0 ? log(K) : -INFINITY;
    }
    }
}

void ref_attend(const sac_attend_params *p, const float *queries, const float *keys, const float *values,
                const float *W, const int32_t *key_lengths, const uint8_t *mask, double *out, double *weights,
                double *scores) {
    const int B = p->batch, nq = p->n_q, nk = p->n_k, H = p->n_heads, d = p->d_k / H, dv = p->d_v / H;
    double *s = malloc(sizeof(double) * nk);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < nq; i++) {
                const float *q = queries + ((size_t)b * nq + i) * p->d_k + h * d;
                double best = -INFINITY;
                for (int j = 0; j < nk; j++) {
                    s[j] = allowed(p, key_lengths, mask, b, i, j)
                               ? score_of(p, h, q, keys + ((size_t)b * nk + j) * p->d_k + h * d, d, W)
                               : -INFINITY;
                    if (s[j] > best) best = s[j];
                }
                double *w = weights + (((size_t)b * H + h) * nq + i) * nk;
                if (scores)
                    for (int j = 0; j < nk; j++) scores[(((size_t)b * H + h) * nq + i) * nk + j] = s[j];
                double total = 0;
                for (int j = 0; j < nk; j++) {
                    if (s[j] == -INFINITY) w[j] = 0;
                    else if (p->temperature == 0) w[j] = s[j] == best;
                    else w[j] = exp((s[j] - best) / p->temperature);
                    total += w[j];
                }
                for (int j = 0; j < nk; j++) w[j] = total > 0 ? w[j] / total : 0;
                for (int c = 0; c < dv; c++) {
                    double o = 0;
                    for (int j = 0; j < nk; j++) o += w[j] * values[((size_t)b * nk + j) * p->d_v + h * dv + c];
                    out[((size_t)b * nq + i) * p->d_v + h * dv + c] = o;
                }
            }
    free(s);
}

double ref_kernel_loss(const sac_kernel_fit_params *p, const float *x_train, const float *y_train,
                       const float *x_heldout, const float *y_heldout, double w) {
    const int n = p->n_train, dx = p->d_x, dy = p->d_y, m = p->leave_one_out ? n : p->n_heldout;
    const float *xe = p->leave_one_out ? x_train : x_heldout, *ye = p->leave_one_out ? y_train : y_heldout;
    double loss = 0;
    for (int e = 0; e < m; e++)
        for (int c = 0; c < dy; c++) {
            double num = 0, den = 0;
            for (int i = 0; i < n; i++) {
                if (p->leave_one_out && i == e) continue;
                double dist2 = 0;
                for (int a = 0; a < dx; a++) dist2 += pow((double)xe[e * dx + a] - x_train[i * dx + a], 2);
                const double K = kernel(p->score, dist2 * w * w);
                num += K * y_train[i * dy + c];
                den += K;
            }
            const double f = den > 0 ? num / den : 0;
            loss += (f - ye[e * dy + c]) * (f - ye[e * dy + c]);
        }
    return loss / ((double)m * dy);
}
