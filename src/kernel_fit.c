/* kernel_fit.c — Nadaraya–Watson regression with a learnable width: the held-out loss, its
 * analytic derivative, and gradient descent on the width (sac_kernel_loss, sac_kernel_fit_width).
 *
 * With u_i² = ‖x − x_i‖² w² and D_i = ‖x − x_i‖², the prediction is f(x) = Σ α_i y_i with
 *   Gaussian:     α = softmax(s), s_i = −w² D_i / 2,   dα_i/dw = α_i (s'_i − Σ_j α_j s'_j), s'_i = −w D_i
 *   Epanechnikov: α_i = K_i / S, K_i = max(0, 1 − w² D_i), S = Σ K,
 *                 dα_i/dw = (K'_i − α_i Σ_j K'_j) / S,  K'_i = −2 w D_i where K_i > 0 (else 0)
 * and L = 1/(N d_y) Σ ‖f − y‖², dL/dw = 2/(N d_y) Σ (f − y)·df/dw. The weights are the ones
 * sac_attend computes for the same kernel (its scores are log K); everything here is in double. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attend.h"

typedef struct fit_data {
    const sac_kernel_fit_params *p;
    const float *xt, *yt; /* training [n_train][d_x], [n_train][d_y] */
    const float *xh, *yh; /* evaluation points: held-out, or the training points (leave-one-out) */
    int32_t n_eval;
} fit_data;

static sac_status check_fit(const sac_kernel_fit_params *p, const float *x_train, size_t x_train_len,
                            const float *y_train, size_t y_train_len, const float *x_heldout, size_t x_heldout_len,
                            const float *y_heldout, size_t y_heldout_len, fit_data *data, char *errmsg,
                            size_t errmsg_size) {
    if (!p) return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "params is NULL");
    if (p->score == SAC_SCORE_BOXCAR)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG,
                            "a boxcar's width cannot be fitted by gradient descent (dL/dw is 0 almost everywhere): "
                            "use the Gaussian or Epanechnikov kernel");
    if (p->score != SAC_SCORE_GAUSSIAN && p->score != SAC_SCORE_EPANECHNIKOV)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG,
                            "score %d is not a kernel with a width to fit (SAC_SCORE_GAUSSIAN or SAC_SCORE_EPANECHNIKOV)",
                            p->score);
    if (p->d_x < 1 || p->d_y < 1)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "d_x and d_y must be >= 1 (got %d, %d)", p->d_x, p->d_y);
    if (p->n_train < (p->leave_one_out ? 2 : 1))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "n_train must be >= %d%s, got %d",
                            p->leave_one_out ? 2 : 1, p->leave_one_out ? " with leave_one_out" : "", p->n_train);
    if (!p->leave_one_out && p->n_heldout < 1)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG,
                            "n_heldout must be >= 1 (or set leave_one_out), got %d", p->n_heldout);
    sac_status st;
    if ((st = sac_check_len(errmsg, errmsg_size, "x_train", x_train, x_train_len, p->n_train, p->d_x, 1)) ||
        (st = sac_check_len(errmsg, errmsg_size, "y_train", y_train, y_train_len, p->n_train, p->d_y, 1)) ||
        (st = sac_check_finite(errmsg, errmsg_size, "x_train", x_train, (uint64_t)p->n_train * p->d_x)) ||
        (st = sac_check_finite(errmsg, errmsg_size, "y_train", y_train, (uint64_t)p->n_train * p->d_y)))
        return st;
    *data = (fit_data){p, x_train, y_train, x_train, y_train, p->n_train};
    if (!p->leave_one_out) {
        if ((st = sac_check_len(errmsg, errmsg_size, "x_heldout", x_heldout, x_heldout_len, p->n_heldout, p->d_x, 1)) ||
            (st = sac_check_len(errmsg, errmsg_size, "y_heldout", y_heldout, y_heldout_len, p->n_heldout, p->d_y, 1)) ||
            (st = sac_check_finite(errmsg, errmsg_size, "x_heldout", x_heldout, (uint64_t)p->n_heldout * p->d_x)) ||
            (st = sac_check_finite(errmsg, errmsg_size, "y_heldout", y_heldout, (uint64_t)p->n_heldout * p->d_y)))
            return st;
        data->xh = x_heldout;
        data->yh = y_heldout;
        data->n_eval = p->n_heldout;
    }
    return SAC_OK;
}

/* L(w) and dL/dw; scratch holds 2·n_train + 2·d_y doubles. */
static void loss_at(const fit_data *fd, double w, double *scratch, double *loss, double *grad) {
    const sac_kernel_fit_params *p = fd->p;
    const int32_t n = p->n_train, dx = p->d_x, dy = p->d_y;
    double *alpha = scratch, *dalpha = scratch + n, *f = dalpha + n, *df = f + dy;
    double L = 0.0, G = 0.0;
    for (int32_t e = 0; e < fd->n_eval; e++) {
        const float *x = fd->xh + (int64_t)e * dx;
        /* kernel values and their w-derivatives (excluded points: α = 0, dα = 0) */
        double max = -INFINITY;
        for (int32_t i = 0; i < n; i++) {
            double D = 0.0;
            for (int32_t c = 0; c < dx; c++) {
                const double diff = (double)x[c] - fd->xt[(int64_t)i * dx + c];
                D += diff * diff;
            }
            const int self = p->leave_one_out && i == e;
            if (p->score == SAC_SCORE_GAUSSIAN) {
                alpha[i] = self ? -INFINITY : -0.5 * w * w * D; /* the score, normalised below */
                dalpha[i] = self ? 0.0 : -w * D;                /* its derivative */
                if (alpha[i] > max) max = alpha[i];
            } else {
                const double K = 1.0 - w * w * D;
                alpha[i] = self || K <= 0.0 ? 0.0 : K;
                dalpha[i] = alpha[i] > 0.0 ? -2.0 * w * D : 0.0;
            }
        }
        double S = 0.0, dS = 0.0;
        if (p->score == SAC_SCORE_GAUSSIAN && max == -INFINITY) {
            for (int32_t i = 0; i < n; i++) alpha[i] = dalpha[i] = 0.0; /* nothing in reach: predicts 0 */
        } else if (p->score == SAC_SCORE_GAUSSIAN) {
            for (int32_t i = 0; i < n; i++) {
                alpha[i] = alpha[i] == -INFINITY ? 0.0 : exp(alpha[i] - max);
                S += alpha[i];
            }
            double mean_ds = 0.0;
            for (int32_t i = 0; i < n; i++) {
                alpha[i] /= S;
                mean_ds += alpha[i] * dalpha[i];
            }
            for (int32_t i = 0; i < n; i++) dalpha[i] = alpha[i] * (dalpha[i] - mean_ds);
        } else {
            for (int32_t i = 0; i < n; i++) {
                S += alpha[i];
                dS += dalpha[i];
            }
            for (int32_t i = 0; i < n; i++) {
                alpha[i] = S > 0.0 ? alpha[i] / S : 0.0; /* no point in reach: predicts 0 */
                dalpha[i] = S > 0.0 ? (dalpha[i] - alpha[i] * dS) / S : 0.0;
            }
        }
        memset(f, 0, 2 * (size_t)dy * sizeof *f);
        for (int32_t i = 0; i < n; i++)
            for (int32_t c = 0; c < dy; c++) {
                f[c] += alpha[i] * fd->yt[(int64_t)i * dy + c];
                df[c] += dalpha[i] * fd->yt[(int64_t)i * dy + c];
            }
        for (int32_t c = 0; c < dy; c++) {
            const double r = f[c] - fd->yh[(int64_t)e * dy + c];
            L += r * r;
            G += 2.0 * r * df[c];
        }
    }
    const double N = (double)fd->n_eval * dy;
    *loss = L / N;
    *grad = G / N;
}

static double *fit_scratch(const sac_kernel_fit_params *p, char *errmsg, size_t errmsg_size, sac_status *st) {
    uint64_t n; /* n_train, d_y < 2^31: 2·(n_train + d_y) doubles fits 64 bits; check size_t */
    if (!sac_count3(2 * ((uint64_t)p->n_train + (uint64_t)p->d_y), sizeof(double), 1, &n)) {
        *st = sac_fail_msg(errmsg, errmsg_size, SAC_ERR_NOMEM, "scratch for %d training points does not fit",
                           p->n_train);
        return NULL;
    }
    double *s = malloc((size_t)n);
    if (!s) *st = sac_fail_msg(errmsg, errmsg_size, SAC_ERR_NOMEM, "out of memory for %llu bytes", (unsigned long long)n);
    return s;
}

sac_status sac_kernel_loss(const sac_kernel_fit_params *p, const float *x_train, size_t x_train_len,
                           const float *y_train, size_t y_train_len, const float *x_heldout, size_t x_heldout_len,
                           const float *y_heldout, size_t y_heldout_len, float width, double *loss, double *grad,
                           char *errmsg, size_t errmsg_size) {
    fit_data fd;
    sac_status st = check_fit(p, x_train, x_train_len, y_train, y_train_len, x_heldout, x_heldout_len, y_heldout,
                              y_heldout_len, &fd, errmsg, errmsg_size);
    if (st) return st;
    if (!(isfinite(width) && width > 0.0f))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "width must be finite and > 0, got %g", (double)width);
    if (!loss) return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "loss is NULL");
    double *scratch = fit_scratch(p, errmsg, errmsg_size, &st);
    if (!scratch) return st;
    double L, G;
    loss_at(&fd, width, scratch, &L, &G);
    free(scratch);
    *loss = L;
    if (grad) *grad = G;
    return SAC_OK;
}

sac_status sac_kernel_fit_width(const sac_kernel_fit_params *p, const float *x_train, size_t x_train_len,
                                const float *y_train, size_t y_train_len, const float *x_heldout,
                                size_t x_heldout_len, const float *y_heldout, size_t y_heldout_len, float *widths,
                                size_t widths_len, float *losses, size_t losses_len, char *errmsg,
                                size_t errmsg_size) {
    fit_data fd;
    sac_status st = check_fit(p, x_train, x_train_len, y_train, y_train_len, x_heldout, x_heldout_len, y_heldout,
                              y_heldout_len, &fd, errmsg, errmsg_size);
    if (st) return st;
    if (!(isfinite(p->width) && p->width > 0.0f))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "the initial width must be finite and > 0, got %g",
                            (double)p->width);
    if (!(isfinite(p->learning_rate) && p->learning_rate > 0.0f))
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "learning_rate must be finite and > 0, got %g",
                            (double)p->learning_rate);
    if (p->n_steps < 0)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "n_steps must be >= 0, got %d", p->n_steps);
    const uint64_t frames = (uint64_t)p->n_steps + 1;
    if ((st = sac_check_len(errmsg, errmsg_size, "widths", widths, widths_len, frames, 1, 1)) ||
        (st = sac_check_len(errmsg, errmsg_size, "losses", losses, losses_len, frames, 1, 1)))
        return st;
    double *scratch = fit_scratch(p, errmsg, errmsg_size, &st);
    if (!scratch) return st;
    double w = p->width;
    for (int32_t s = 0;; s++) {
        double L, G;
        loss_at(&fd, w, scratch, &L, &G);
        widths[s] = (float)w;
        losses[s] = (float)L;
        if (s == p->n_steps) break;
        /* w stays a positive, finite float32 width: the next step starts from what widths[]
         * reports. A step to w <= 0 halves w instead; one past FLT_MAX stops there. */
        double next = w - (double)p->learning_rate * G;
        if (!(next > 0.0) || (float)next <= 0.0f) next = w / 2;
        if (!(next <= FLT_MAX)) next = FLT_MAX;
        w = (float)next;
        if (!((float)w > 0.0f)) w = widths[s]; /* w/2 underflowed: stay */
    }
    free(scratch);
    return SAC_OK;
}
