/* test_attend.c — the attention primitive against its float64 reference (every score and mask,
 * temperatures, heads), its refusals, the kernel width fit's gradient, the sinusoid table, and
 * the model calls it comes with (tensor reading, no_positions). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reference.h"
#include "reference_attend.h"
#include "saccade.h"
#include "test_models.h"
#include "types.h"

/* ---------------------------------------------------------------------------------------- */
/* Inputs                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double uniform(void) { /* [0, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static float *random_floats(size_t n, double lo, double hi) {
    float *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = (float)(lo + (hi - lo) * uniform());
    return x;
}

/* A batch of inputs for the shape in p, with the W its score needs and masks for every kind. */
typedef struct inputs {
    float *q, *k, *v, *W;
    size_t nq, nk, nv, nW;
    int32_t lengths[4];
    uint8_t *mask;
    size_t nmask;
} inputs;

static inputs make_inputs(const sac_attend_params *p) {
    inputs in = {0};
    const int d = p->d_k / p->n_heads;
    in.nq = (size_t)p->batch * p->n_q * p->d_k;
    in.nk = (size_t)p->batch * p->n_k * p->d_k;
    in.nv = (size_t)p->batch * p->n_k * p->d_v;
    in.q = random_floats(in.nq, -1.5, 1.5);
    in.k = random_floats(in.nk, -1.5, 1.5);
    in.v = random_floats(in.nv, -2, 2);
    in.nW = p->score == SAC_SCORE_GENERAL    ? (size_t)p->n_heads * d * d
            : p->score == SAC_SCORE_ADDITIVE ? (size_t)p->n_heads * p->hidden * (2 * d + 1)
                                             : 0;
    in.W = random_floats(in.nW, -0.8, 0.8);
    for (int b = 0; b < p->batch && b < 4; b++) in.lengths[b] = (int32_t)((b * 3 + 2) % (p->n_k + 1));
    in.nmask = (size_t)p->batch * p->n_q * p->n_k;
    in.mask = malloc(in.nmask);
    for (size_t i = 0; i < in.nmask; i++) in.mask[i] = uniform() < 0.6;
    return in;
}

static void free_inputs(inputs *in) {
    free(in->q);
    free(in->k);
    free(in->v);
    free(in->W);
    free(in->mask);
}

static sac_status run(const sac_attend_params *p, const inputs *in, float *out, float *weights, float *scores,
                      char *msg) {
    const size_t n_out = (size_t)p->batch * p->n_q * p->d_v, n_w = (size_t)p->batch * p->n_heads * p->n_q * p->n_k;
    return sac_attend(p, in->q, in->nq, in->k, in->nk, in->v, in->nv, in->W, in->nW, in->lengths, 4, in->mask,
                      in->nmask, out, n_out, weights, weights ? n_w : 0, scores, scores ? n_w : 0, msg, 256);
}

static const char *score_names[] = {"dot", "scaled_dot", "general", "additive", "cosine", "gaussian", "boxcar",
                                    "epanechnikov"};

/* ---------------------------------------------------------------------------------------- */
/* Against the reference                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Weights within 2e-6 absolute (float32 softmax of float32 scores), outputs within 1e-5 of
 * the value scale, scores within 2e-6 relative; −∞ exactly where the reference has it. */
static void compare(const sac_attend_params *p, const inputs *in, const char *what) {
    const size_t n_out = (size_t)p->batch * p->n_q * p->d_v, n_w = (size_t)p->batch * p->n_heads * p->n_q * p->n_k;
    float *out = malloc(n_out * sizeof *out), *w = malloc(n_w * sizeof *w), *s = malloc(n_w * sizeof *s);
    double *rout = malloc(n_out * sizeof *rout), *rw = malloc(n_w * sizeof *rw), *rs = malloc(n_w * sizeof *rs);
    char msg[256];
    sac_status st = run(p, in, out, w, s, msg);
    CHECK_MSG(st == SAC_OK, "%s: %s", what, msg);
    if (st == SAC_OK) {
        ref_attend(p, in->q, in->k, in->v, in->W, in->lengths, in->mask, rout, rw, rs);
        double ew = 0, eo = 0, es = 0;
        int inf_ok = 1;
        for (size_t i = 0; i < n_w; i++) {
            ew = fmax(ew, fabs(w[i] - rw[i]));
            if (isinf(rs[i]) || isinf(s[i])) inf_ok &= isinf(rs[i]) && isinf(s[i]) && s[i] < 0 && rs[i] < 0;
            else es = fmax(es, fabs(s[i] - rs[i]) / fmax(1.0, fabs(rs[i])));
        }
        for (size_t i = 0; i < n_out; i++) eo = fmax(eo, fabs(out[i] - rout[i]));
        CHECK_MSG(ew <= 2e-6, "%s: weights differ by %g", what, ew);
        CHECK_MSG(eo <= 2e-5, "%s: outputs differ by %g", what, eo);
        CHECK_MSG(es <= 2e-6, "%s: scores differ by %g", what, es);
        CHECK_MSG(inf_ok, "%s: masked scores differ", what);
        for (size_t i = 0; i < n_out; i++) CHECK_MSG(isfinite(out[i]), "%s: out[%zu] = %g", what, i, out[i]);
    }
    free(out), free(w), free(s), free(rout), free(rw), free(rs);
}

static void test_every_score_and_mask_matches_reference(void) {
    const uint32_t masks[] = {SAC_MASK_NONE, SAC_MASK_CAUSAL, SAC_MASK_PADDING, SAC_MASK_EXPLICIT,
                              SAC_MASK_CAUSAL | SAC_MASK_PADDING, SAC_MASK_CAUSAL | SAC_MASK_EXPLICIT};
    for (int score = SAC_SCORE_DOT; score <= SAC_SCORE_EPANECHNIKOV; score++)
        for (int m = 0; m < 6; m++)
            for (int per_batch = 0; per_batch < 2; per_batch++) {
                if (per_batch && !(masks[m] & SAC_MASK_EXPLICIT)) continue;
                sac_attend_params p = sac_attend_default_params();
                p.batch = 3, p.n_q = 5, p.n_k = 7, p.d_k = 8, p.d_v = 6, p.n_heads = 2;
                p.score = score, p.width = 0.7f, p.hidden = 5, p.mask = masks[m], p.mask_per_batch = per_batch;
                inputs in = make_inputs(&p);
                char what[96];
                snprintf(what, sizeof what, "%s, mask %u%s", score_names[score], masks[m], per_batch ? " per batch" : "");
                compare(&p, &in, what);
                free_inputs(&in);
            }
}

static void test_temperatures_heads_and_shapes(void) {
    const float temps[] = {1.0f, 0.25f, 4.0f, 0.0f, 1e-30f};
    for (int t = 0; t < 5; t++)
        for (int heads = 1; heads <= 4; heads *= 2) {
            sac_attend_params p = sac_attend_default_params();
            p.batch = 2, p.n_q = 4, p.n_k = 9, p.d_k = 8, p.d_v = 4, p.n_heads = heads, p.temperature = temps[t];
            inputs in = make_inputs(&p);
            /* ties for the argmax limit: key 6 repeats key 2 in every batch element */
            for (int b = 0; b < p.batch; b++)
                memcpy(in.k + ((size_t)b * p.n_k + 6) * p.d_k, in.k + ((size_t)b * p.n_k + 2) * p.d_k,
                       (size_t)p.d_k * sizeof(float));
            char what[64];
            snprintf(what, sizeof what, "temperature %g, %d heads", temps[t], heads);
            compare(&p, &in, what);
            free_inputs(&in);
        }
    /* more queries than keys under a causal mask: the first queries see nothing */
    sac_attend_params p = sac_attend_default_params();
    p.n_q = 6, p.n_k = 3, p.d_k = 4, p.d_v = 2, p.mask = SAC_MASK_CAUSAL;
    inputs in = make_inputs(&p);
    compare(&p, &in, "n_q > n_k causal");
    free_inputs(&in);
}

/* The argmax limit shares the weight among tied keys; τ → 0 approaches it. */
static void test_argmax_limit_shares_ties(void) {
    sac_attend_params p = sac_attend_default_params();
    p.n_q = 1, p.n_k = 4, p.d_k = 1, p.d_v = 1, p.score = SAC_SCORE_DOT, p.temperature = 0;
    const float q[] = {1}, k[] = {2, 5, 5, 1}, v[] = {10, 20, 40, 80};
    float out[1], w[4];
    CHECK(sac_attend(&p, q, 1, k, 4, v, 4, NULL, 0, NULL, 0, NULL, 0, out, 1, w, 4, NULL, 0, NULL, 0) == SAC_OK);
    CHECK(w[0] == 0 && w[1] == 0.5f && w[2] == 0.5f && w[3] == 0);
    CHECK_NEAR(out[0], 30, 1e-6);
    p.temperature = 0.01f;
    CHECK(sac_attend(&p, q, 1, k, 4, v, 4, NULL, 0, NULL, 0, NULL, 0, out, 1, w, 4, NULL, 0, NULL, 0) == SAC_OK);
    CHECK_NEAR(w[1], 0.5, 1e-6);
    CHECK(w[0] < 1e-30);
}

/* Rows with nothing admissible: weights 0 and output 0, never NaN. */
static void test_empty_rows_are_zero(void) {
    sac_attend_params p = sac_attend_default_params();
    p.batch = 2, p.n_q = 2, p.n_k = 3, p.d_k = 1, p.d_v = 1, p.mask = SAC_MASK_PADDING;
    const float q[] = {0, 1, 2, 3}, k[] = {0, 1, 2, 0, 1, 2}, v[] = {1, 2, 3, 4, 5, 6};
    const int32_t lengths[] = {0, 3};
    float out[4], w[12], s[12];
    CHECK(sac_attend(&p, q, 4, k, 6, v, 6, NULL, 0, lengths, 2, NULL, 0, out, 4, w, 12, s, 12, NULL, 0) == SAC_OK);
    for (int i = 0; i < 6; i++) CHECK(w[i] == 0 && isinf(s[i]) && s[i] < 0);
    CHECK(out[0] == 0 && out[1] == 0 && out[2] != 0);
    /* a boxcar narrower than the distance to every key */
    p.mask = SAC_MASK_NONE, p.score = SAC_SCORE_BOXCAR, p.width = 10, p.batch = 1, p.n_q = 1, p.n_k = 3;
    const float far[] = {0.5f};
    CHECK(sac_attend(&p, far, 1, k, 3, v, 3, NULL, 0, NULL, 0, NULL, 0, out, 1, w, 3, NULL, 0, NULL, 0) == SAC_OK);
    CHECK(out[0] == 0 && w[0] == 0 && w[1] == 0 && w[2] == 0);
    /* the flat kernel (width → 0) is the average of the values: average pooling */
    p.width = 1e-6f;
    CHECK(sac_attend(&p, far, 1, k, 3, v, 3, NULL, 0, NULL, 0, NULL, 0, out, 1, w, 3, NULL, 0, NULL, 0) == SAC_OK);
    CHECK_NEAR(out[0], 2, 1e-6);
}

/* Without positions attention is permutation-equivariant: permuting the queries permutes the
 * outputs; permuting the keys with their values changes nothing. */
static void test_permutation_equivariance(void) {
    sac_attend_params p = sac_attend_default_params();
    p.n_q = 5, p.n_k = 5, p.d_k = 4, p.d_v = 3, p.n_heads = 2, p.n_heads = 1;
    inputs in = make_inputs(&p);
    const int perm[] = {3, 0, 4, 1, 2};
    float *q2 = malloc(in.nq * sizeof *q2), *k2 = malloc(in.nk * sizeof *k2), *v2 = malloc(in.nv * sizeof *v2);
    for (int i = 0; i < 5; i++) {
        memcpy(q2 + i * 4, in.q + perm[i] * 4, 4 * sizeof(float));
        memcpy(k2 + i * 4, in.k + perm[i] * 4, 4 * sizeof(float));
        memcpy(v2 + i * 3, in.v + perm[i] * 3, 3 * sizeof(float));
    }
    float out[15], out2[15];
    CHECK(sac_attend(&p, in.q, in.nq, in.k, in.nk, in.v, in.nv, NULL, 0, NULL, 0, NULL, 0, out, 15, NULL, 0, NULL, 0,
                     NULL, 0) == SAC_OK);
    CHECK(sac_attend(&p, q2, in.nq, k2, in.nk, v2, in.nv, NULL, 0, NULL, 0, NULL, 0, out2, 15, NULL, 0, NULL, 0,
                     NULL, 0) == SAC_OK);
    double e = 0;
    for (int i = 0; i < 5; i++)
        for (int c = 0; c < 3; c++) e = fmax(e, fabs(out2[i * 3 + c] - out[perm[i] * 3 + c]));
    CHECK_MSG(e <= 1e-6, "permuted outputs differ by %g", e);
    free(q2), free(k2), free(v2);
    free_inputs(&in);
}

/* ---------------------------------------------------------------------------------------- */
/* Refusals                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void expect_refusal(const sac_attend_params *p, const inputs *in, const char *needle, const char *what) {
    float out[4096], w[4096];
    char msg[256] = "";
    const sac_status st = sac_attend(p, in->q, in->nq, in->k, in->nk, in->v, in->nv, in->W, in->nW, in->lengths, 4,
                                     in->mask, in->nmask, out, 4096, w, 4096, NULL, 0, msg, sizeof msg);
    CHECK_MSG(st == SAC_ERR_ARG, "%s: status %s", what, sac_status_name(st));
    CHECK_MSG(strstr(msg, needle) != NULL, "%s: message '%s' lacks '%s'", what, msg, needle);
}

static void test_bad_arguments_are_refused(void) {
    sac_attend_params base = sac_attend_default_params();
    base.batch = 2, base.n_q = 3, base.n_k = 4, base.d_k = 4, base.d_v = 2, base.n_heads = 2;
    inputs in = make_inputs(&base);
    sac_attend_params p = base;
    p.n_heads = 3;
    expect_refusal(&p, &in, "must divide", "heads not dividing");
    p = base, p.n_k = 0;
    expect_refusal(&p, &in, ">= 1", "n_k 0");
    p = base, p.score = 99;
    expect_refusal(&p, &in, "unknown score", "score 99");
    p = base, p.score = SAC_SCORE_GAUSSIAN, p.width = 0;
    expect_refusal(&p, &in, "width", "width 0");
    p = base, p.score = SAC_SCORE_BOXCAR, p.width = NAN;
    expect_refusal(&p, &in, "width", "width NaN");
    p = base, p.temperature = -1;
    expect_refusal(&p, &in, "temperature", "negative temperature");
    p = base, p.temperature = INFINITY;
    expect_refusal(&p, &in, "temperature", "infinite temperature");
    p = base, p.mask = 64;
    expect_refusal(&p, &in, "mask flags", "unknown mask");
    p = base, p.score = SAC_SCORE_GENERAL;
    expect_refusal(&p, &in, "W (general", "general without W");
    p = base, p.score = SAC_SCORE_ADDITIVE, p.hidden = 0;
    expect_refusal(&p, &in, "hidden", "additive hidden 0");
    p = base, p.n_q = 4; /* queries hold 2·3·4 */
    expect_refusal(&p, &in, "queries holds 24 elements but needs 32", "short queries");
    p = base, p.mask = SAC_MASK_EXPLICIT, p.mask_per_batch = 1, p.n_k = 5;
    inputs small = make_inputs(&base); /* keys for n_k = 4 */
    expect_refusal(&p, &small, "keys holds", "short keys");
    free_inputs(&small);
    in.lengths[1] = 9;
    p = base, p.mask = SAC_MASK_PADDING;
    expect_refusal(&p, &in, "key_lengths[1] is 9", "length past n_k");
    in.lengths[1] = 1;
    in.q[5] = NAN;
    expect_refusal(&base, &in, "queries[5]", "NaN query");
    in.q[5] = 0;
    in.v[3] = INFINITY;
    expect_refusal(&base, &in, "values[3]", "infinite value");
    in.v[3] = 0;
    /* a dot product that overflows float32 */
    for (size_t i = 0; i < in.nq; i++) in.q[i] = 3e19f;
    for (size_t i = 0; i < in.nk; i++) in.k[i] = 3e19f;
    p = base, p.score = SAC_SCORE_DOT;
    expect_refusal(&p, &in, "not finite", "overflowing score");
    /* sizes whose products overflow 64 bits (and wasm32's size_t): refused, never wrapped */
    p = base, p.batch = INT32_MAX, p.n_q = INT32_MAX, p.d_k = INT32_MAX - 1, p.n_heads = 1;
    expect_refusal(&p, &in, "more than this build can address", "overflowing queries");
    /* 2^60 queries: past wasm32's size_t ("address"), natively more than the buffer holds */
    p = base, p.batch = 1 << 20, p.n_q = 1 << 20, p.n_k = 1 << 20, p.n_heads = 1 << 20, p.d_k = 1 << 20,
    p.d_v = 1 << 20;
    expect_refusal(&p, &in, sizeof(size_t) < 8 ? "more than this build can address" : "queries holds 24 elements",
                   "2^60 queries");
    /* NULL buffers and a NULL message buffer */
    CHECK(sac_attend(&base, NULL, 0, in.k, in.nk, in.v, in.nv, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0,
                     NULL, 0) == SAC_ERR_ARG);
    CHECK(sac_attend(NULL, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0) ==
          SAC_ERR_ARG);
    free_inputs(&in);
}

/* ---------------------------------------------------------------------------------------- */
/* Nadaraya–Watson width fit                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* d2l's example: y = 2 sin(x) + x^0.8 + noise, x uniform in [0, 5]; held-out x = 0, 0.1, … */
typedef struct nw_data {
    float xt[50], yt[50], xh[50], yh[50];
} nw_data;

static nw_data nw_make(void) {
    nw_data d;
    for (int i = 0; i < 50; i++) {
        d.xt[i] = (float)(5 * uniform());
        const double noise = sqrt(-2 * log(1 - uniform())) * cos(6.283185307179586 * uniform()) * 0.5;
        d.yt[i] = (float)(2 * sin(d.xt[i]) + pow(d.xt[i], 0.8) + noise);
        d.xh[i] = 0.1f * (float)i;
        d.yh[i] = (float)(2 * sin(d.xh[i]) + pow(d.xh[i], 0.8));
    }
    return d;
}

static void test_kernel_gradient_matches_finite_differences(void) {
    nw_data d = nw_make();
    const int kernels[] = {SAC_SCORE_GAUSSIAN, SAC_SCORE_EPANECHNIKOV};
    const double widths[] = {0.3, 1.0, 2.5, 7.0};
    for (int k = 0; k < 2; k++)
        for (int loo = 0; loo < 2; loo++)
            for (int wi = 0; wi < 4; wi++) {
                sac_kernel_fit_params p = {kernels[k], 50, 50, 1, 1, loo, 1, 0.1f, 10};
                const float w = (float)widths[wi];
                const float h = 1e-3f * w;
                double L, G, Lp, Lm, ignored;
                char msg[256];
                sac_status st = sac_kernel_loss(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, w, &L, &G, msg, 256);
                CHECK_MSG(st == SAC_OK, "%s", msg);
                CHECK(sac_kernel_loss(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, w + h, &Lp, &ignored, msg, 256) == SAC_OK);
                CHECK(sac_kernel_loss(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, w - h, &Lm, &ignored, msg, 256) == SAC_OK);
                const double fd = (Lp - Lm) / ((double)(w + h) - (double)(w - h));
                /* the Epanechnikov loss has kinks where a point enters the support: a looser bound */
                const double tol = (k ? 2e-2 : 1e-4) * fmax(fabs(G), 1e-3);
                CHECK_MSG(fabs(G - fd) <= tol, "%s loo %d w %g: dL/dw %.8g, finite differences %.8g",
                          score_names[kernels[k]], loo, w, G, fd);
                const double ref = ref_kernel_loss(&p, d.xt, d.yt, d.xh, d.yh, w);
                CHECK_MSG(fabs(L - ref) <= 1e-9 * fmax(1, ref), "%s loo %d w %g: L %.12g, reference %.12g",
                          score_names[kernels[k]], loo, w, L, ref);
            }
}

/* The fit lowers the loss, its frames are consistent, and its prediction is sac_attend's. */
static void test_kernel_fit_descends(void) {
    nw_data d = nw_make();
    for (int loo = 0; loo < 2; loo++) {
        sac_kernel_fit_params p = {SAC_SCORE_GAUSSIAN, 50, 50, 1, 1, loo, 1.0f, 0.5f, 40};
        float widths[41], losses[41];
        char msg[256];
        sac_status st = sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 41, losses, 41, msg, 256);
        CHECK_MSG(st == SAC_OK, "%s", msg);
        CHECK_MSG(losses[40] < 0.8 * losses[0], "loo %d: loss %g → %g", loo, losses[0], losses[40]);
        CHECK_MSG(widths[40] > widths[0], "loo %d: the width should grow (sharper weights), %g → %g", loo, widths[0],
                  widths[40]);
        for (int s = 0; s <= 40; s++) {
            CHECK(widths[s] > 0 && isfinite(losses[s]));
            CHECK_NEAR(losses[s], ref_kernel_loss(&p, d.xt, d.yt, d.xh, d.yh, widths[s]), 1e-5 * fmax(1, losses[s]));
        }
        if (!loo) {
            /* the held-out prediction of the fitted w through sac_attend gives the same loss */
            sac_attend_params a = sac_attend_default_params();
            a.n_q = 50, a.n_k = 50, a.score = SAC_SCORE_GAUSSIAN, a.width = widths[40];
            float out[50];
            CHECK(sac_attend(&a, d.xh, 50, d.xt, 50, d.yt, 50, NULL, 0, NULL, 0, NULL, 0, out, 50, NULL, 0, NULL, 0,
                             NULL, 0) == SAC_OK);
            double mse = 0;
            for (int i = 0; i < 50; i++) mse += (out[i] - d.yh[i]) * (out[i] - d.yh[i]) / 50;
            CHECK_NEAR(mse, losses[40], 1e-4 * losses[40]);
        }
    }
    /* a learning rate that overshoots below 0 halves w instead */
    sac_kernel_fit_params p = {SAC_SCORE_GAUSSIAN, 50, 50, 1, 1, 0, 30.0f, 1e6f, 3};
    float widths[4], losses[4];
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 4, losses, 4, NULL, 0) == SAC_OK);
    for (int s = 0; s < 4; s++) CHECK(widths[s] > 0 && isfinite(losses[s]));
    /* one that overshoots past FLT_MAX stops there (it gave w = inf, found by fuzz_attend) */
    for (int i = 0; i < 50; i++) d.yt[i] *= 1e6f, d.yh[i] *= 1e6f;
    p.width = 1, p.learning_rate = 1e30f;
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 4, losses, 4, NULL, 0) == SAC_OK);
    CHECK_MSG(widths[1] == FLT_MAX, "width after the overshoot: %g", widths[1]);
    for (int s = 0; s < 4; s++) CHECK_MSG(widths[s] > 0 && isfinite(widths[s]), "widths[%d] = %g", s, widths[s]);
}

static void test_kernel_fit_refusals(void) {
    nw_data d = nw_make();
    float widths[11], losses[11];
    char msg[256] = "";
    sac_kernel_fit_params p = {SAC_SCORE_BOXCAR, 50, 50, 1, 1, 0, 1, 0.1f, 10};
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 11, losses, 11, msg, 256) == SAC_ERR_ARG);
    CHECK(strstr(msg, "boxcar") != NULL);
    p.score = SAC_SCORE_GAUSSIAN;
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 10, losses, 11, msg, 256) == SAC_ERR_ARG);
    CHECK(strstr(msg, "widths holds 10 elements but needs 11") != NULL);
    p.learning_rate = 0;
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 11, losses, 11, msg, 256) == SAC_ERR_ARG);
    CHECK(strstr(msg, "learning_rate") != NULL);
    p.learning_rate = 0.1f, p.n_heldout = 60;
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, d.xh, 50, d.yh, 50, widths, 11, losses, 11, msg, 256) == SAC_ERR_ARG);
    CHECK(strstr(msg, "x_heldout holds 50") != NULL);
    p.n_heldout = 50, p.leave_one_out = 1, p.n_train = 1;
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, NULL, 0, NULL, 0, widths, 11, losses, 11, msg, 256) == SAC_ERR_ARG);
    p.n_train = 50;
    d.yt[7] = NAN;
    CHECK(sac_kernel_fit_width(&p, d.xt, 50, d.yt, 50, NULL, 0, NULL, 0, widths, 11, losses, 11, msg, 256) == SAC_ERR_ARG);
    CHECK(strstr(msg, "y_train[7]") != NULL);
}

/* ---------------------------------------------------------------------------------------- */
/* Sinusoids                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void test_sinusoid_table(void) {
    enum { N = 40, D = 16 };
    float pe[N * D];
    CHECK(sac_sinusoid_positions(N, D, pe, N * D, NULL, 0) == SAC_OK);
    for (int p = 0; p < N; p++)
        for (int i = 0; i < D / 2; i++) {
            const double angle = p / pow(10000.0, 2.0 * i / D);
            CHECK_NEAR(pe[p * D + 2 * i], sin(angle), 1e-7);
            CHECK_NEAR(pe[p * D + 2 * i + 1], cos(angle), 1e-7);
        }
    /* PE(i)·PE(j) depends only on i − j: the DOT scores of the table against itself */
    sac_attend_params a = sac_attend_default_params();
    a.n_q = N, a.n_k = N, a.d_k = D, a.d_v = D, a.score = SAC_SCORE_DOT;
    float out[N * D], scores[N * N];
    CHECK(sac_attend(&a, pe, N * D, pe, N * D, pe, N * D, NULL, 0, NULL, 0, NULL, 0, out, N * D, NULL, 0, scores,
                     N * N, NULL, 0) == SAC_OK);
    double e = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            if (i + 1 < N && j + 1 < N) e = fmax(e, fabs(scores[i * N + j] - scores[(i + 1) * N + j + 1]));
            CHECK_NEAR(scores[i * N + j], scores[j * N + i], 1e-5);
        }
    CHECK_MSG(e <= 1e-5, "PE(i)·PE(j) varies along a diagonal by %g", e);
    CHECK_NEAR(scores[0], D / 2, 1e-5);
    /* odd d: the last column is a sine */
    float odd[3 * 5];
    CHECK(sac_sinusoid_positions(3, 5, odd, 15, NULL, 0) == SAC_OK);
    CHECK_NEAR(odd[2 * 5 + 4], sin(2 / pow(10000.0, 4.0 / 5)), 1e-7);
    char msg[256];
    CHECK(sac_sinusoid_positions(3, 5, odd, 14, msg, 256) == SAC_ERR_ARG && strstr(msg, "needs 15"));
    CHECK(sac_sinusoid_positions(0, 5, odd, 15, msg, 256) == SAC_ERR_ARG);
    CHECK(sac_sinusoid_positions(INT32_MAX, INT32_MAX, odd, 15, msg, 256) == SAC_ERR_ARG);
}

/* ---------------------------------------------------------------------------------------- */
/* The model calls: tensor rows, no_positions                                                */
/* ---------------------------------------------------------------------------------------- */

/* A random test model of this shape, loaded (NULL and a failed check when it does not load). */
static sac_model *make_and_load(test_model_spec spec, test_model *tm) {
    sac_model *m = NULL;
    CHECK(test_model_make(&spec, tm) == 0);
    if (sac_model_load(tm->bytes, tm->size, 0, &m) == SAC_OK) return m;
    CHECK_MSG(0, "load failed: %s", sac_model_errmsg(m));
    sac_model_free(m);
    return NULL;
}

static void test_tensor_read(void) {
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_Q8_0};
    for (int t = 0; t < 2; t++) {
        test_model tm;
        sac_model *m = make_and_load(test_spec("gpt2", types[t]), &tm);
        if (!m) continue;
        const int32_t index = sac_model_tensor_find(m, "position_embd.weight");
        CHECK(index >= 0);
        CHECK(sac_model_tensor_find(m, "no.such.tensor") == -1);
        CHECK(sac_model_tensor_find(NULL, "position_embd.weight") == -1);
        const ref_tensor *ref = ref_find(&tm.ref, "position_embd.weight");
        const int64_t E = ref->ne[0], rows = ref->ne[1];
        float *out = malloc((size_t)E * rows * sizeof *out);
        CHECK(sac_model_tensor_read(m, index, 0, (int32_t)rows, out, (size_t)E * rows) == SAC_OK);
        double e = 0;
        for (int64_t i = 0; i < E * rows; i++) e = fmax(e, fabs(out[i] - ref->v[i]));
        CHECK_MSG(e <= 1e-6, "type %u: rows differ from the reference's by %g", types[t], e);
        /* a middle range lands at the start of out */
        CHECK(sac_model_tensor_read(m, index, 5, 2, out, (size_t)2 * E) == SAC_OK);
        CHECK_NEAR(out[E + 3], ref->v[6 * E + 3], 1e-6);
        CHECK(sac_model_tensor_read(m, index, (int32_t)rows - 1, 2, out, (size_t)2 * E) == SAC_ERR_ARG);
        CHECK(strstr(sac_model_errmsg(m), "outside") != NULL);
        CHECK(sac_model_tensor_read(m, index, 0, 2, out, (size_t)2 * E - 1) == SAC_ERR_ARG);
        CHECK(sac_model_tensor_read(m, index, -1, 1, out, (size_t)E) == SAC_ERR_ARG);
        CHECK(sac_model_tensor_read(m, sac_model_n_tensors(m), 0, 1, out, (size_t)E) == SAC_ERR_ARG);
        CHECK(sac_model_tensor_read(m, index, 0, 0, NULL, 0) == SAC_OK);
        free(out);
        sac_model_free(m);
        test_model_free(&tm);
    }
    /* a model that failed to load says so on its handle (its load's message was left standing) */
    static const uint8_t junk[64] = {'G', 'G', 'U', 'F', 3};
    sac_model *bad = NULL;
    CHECK(sac_model_load(junk, sizeof junk, 0, &bad) != SAC_OK && bad);
    const char *key, *value;
    float one;
    CHECK(sac_model_metadata(bad, 0, &key, &value) == SAC_ERR_STATE && strstr(sac_model_errmsg(bad), "failed to load"));
    sac_model_free(bad);
    CHECK(sac_model_load(junk, sizeof junk, 0, &bad) != SAC_OK && bad);
    CHECK(sac_model_tensor(bad, 0, NULL, NULL, NULL, NULL) == SAC_ERR_STATE && strstr(sac_model_errmsg(bad), "failed to load"));
    sac_model_free(bad);
    CHECK(sac_model_load(junk, sizeof junk, 0, &bad) != SAC_OK && bad);
    CHECK(sac_model_tensor_read(bad, 0, 0, 1, &one, 1) == SAC_ERR_STATE && strstr(sac_model_errmsg(bad), "failed to load"));
    sac_model_free(bad);
    CHECK(sac_model_metadata(NULL, 0, &key, &value) == SAC_ERR_ARG && sac_model_tensor_read(NULL, 0, 0, 1, &one, 1) == SAC_ERR_ARG);
}

static const int32_t prompt[] = {5, 17, 42, 3, 88, 61, 0, 96, 23, 11};
#define N_PROMPT 10

static float *logits_of(sac_model *m, const int32_t *ids, int n, int no_positions) {
    sac_context_params p = sac_context_default_params();
    p.no_positions = no_positions;
    sac_context *ctx = NULL;
    sac_status st = sac_context_new(m, &p, &ctx);
    CHECK_MSG(st == SAC_OK, "%s", sac_context_errmsg(ctx));
    float *copy = NULL;
    if (st == SAC_OK && sac_eval(ctx, ids, n, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK) {
        int32_t rows, V;
        const float *l = sac_logits(ctx, &rows, &V);
        copy = malloc((size_t)rows * V * sizeof *copy);
        memcpy(copy, l, (size_t)rows * V * sizeof *copy);
    }
    sac_context_free(ctx);
    return copy;
}

/* no_positions on gpt2 is the reference with its position embeddings zeroed. */
static void test_no_positions_gpt2_matches_reference(void) {
    test_model tm;
    const test_model_spec s = test_spec("gpt2", SAC_TYPE_F32);
    sac_model *m = make_and_load(s, &tm);
    if (m) {
        float *without = logits_of(m, prompt, N_PROMPT, 1), *with = logits_of(m, prompt, N_PROMPT, 0);
        const ref_tensor *pos = ref_find(&tm.ref, "position_embd.weight");
        double *ref = malloc((size_t)N_PROMPT * s.n_vocab * sizeof *ref);
        ref_forward(&tm.ref, prompt, N_PROMPT, NULL, ref, NULL);
        const double err_with = ref_rel_error(with, ref, (size_t)N_PROMPT * s.n_vocab);
        memset(pos->v, 0, (size_t)pos->ne[0] * pos->ne[1] * sizeof *pos->v);
        ref_forward(&tm.ref, prompt, N_PROMPT, NULL, ref, NULL);
        const double err_without = ref_rel_error(without, ref, (size_t)N_PROMPT * s.n_vocab);
        const double err_mixed = ref_rel_error(with, ref, (size_t)N_PROMPT * s.n_vocab);
        CHECK_MSG(err_with <= 1e-4 && err_without <= 1e-4, "errors %g (positions), %g (none)", err_with, err_without);
        CHECK_MSG(err_mixed > 1e-2, "positions change nothing? %g", err_mixed);
        free(ref), free(without), free(with);
        sac_model_free(m);
    }
    test_model_free(&tm);
}

/* A one-layer causal model without positions: the last token attends to every token as a set,
 * so permuting the tokens before it leaves its logits unchanged; with positions it does not. */
static void test_no_positions_permutation_invariance(void) {
    const char *archs[] = {"gpt2", "llama"};
    const int32_t permuted[] = {96, 3, 42, 0, 61, 5, 88, 23, 17, 11}; /* the last token kept */
    for (int a = 0; a < 2; a++) {
        test_model tm;
        test_model_spec s = test_spec(archs[a], SAC_TYPE_F32);
        s.n_layer = 1;
        sac_model *m = make_and_load(s, &tm);
        if (!m) continue;
        double diff[2];
        for (int np = 0; np < 2; np++) {
            float *x = logits_of(m, prompt, N_PROMPT, np), *y = logits_of(m, permuted, N_PROMPT, np);
            diff[np] = 0;
            for (int v = 0; v < s.n_vocab && x && y; v++) {
                const size_t i = (size_t)(N_PROMPT - 1) * s.n_vocab + v;
                diff[np] = fmax(diff[np], fabs(x[i] - y[i]));
            }
            free(x), free(y);
        }
        CHECK_MSG(diff[1] <= 1e-4, "%s without positions: the last logits move by %g", archs[a], diff[1]);
        CHECK_MSG(diff[0] > 1e-3, "%s with positions: the last logits move by only %g", archs[a], diff[0]);
        sac_model_free(m);
        test_model_free(&tm);
    }
}

/* Encoder–decoder without positions: the encoder is bidirectional and cross-attention sums
 * over the source, so permuting the source leaves every decoder logit unchanged (all layers). */
static void test_no_positions_encdec_source_as_a_set(void) {
    test_model tm;
    const test_model_spec s = test_spec("encdec", SAC_TYPE_F32);
    sac_model *m = make_and_load(s, &tm);
    if (m) {
        const int32_t src[] = {5, 17, 42, 3, 88, 61}, shuffled[] = {61, 3, 5, 88, 42, 17}, tgt[] = {1, 9, 23, 40};
        double diff[2];
        for (int np = 0; np < 2; np++) {
            float *logits[2] = {NULL, NULL};
            for (int v = 0; v < 2; v++) {
                sac_context_params p = sac_context_default_params();
                p.no_positions = np;
                sac_context *ctx = NULL;
                CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
                CHECK(sac_encode(ctx, v ? shuffled : src, 6, NULL) == SAC_OK);
                CHECK(sac_eval(ctx, tgt, 4, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
                const float *l = sac_logits(ctx, NULL, NULL);
                logits[v] = malloc((size_t)4 * s.n_vocab * sizeof(float));
                if (l) memcpy(logits[v], l, (size_t)4 * s.n_vocab * sizeof(float));
                sac_context_free(ctx);
            }
            diff[np] = 0;
            for (int i = 0; i < 4 * s.n_vocab; i++) diff[np] = fmax(diff[np], fabs(logits[0][i] - logits[1][i]));
            free(logits[0]), free(logits[1]);
        }
        CHECK_MSG(diff[1] <= 1e-4, "without positions a permuted source moves the logits by %g", diff[1]);
        CHECK_MSG(diff[0] > 1e-3, "with positions a permuted source moves the logits by only %g", diff[0]);
        sac_model_free(m);
    }
    test_model_free(&tm);
}

int main(void) {
    RUN(test_every_score_and_mask_matches_reference);
    RUN(test_temperatures_heads_and_shapes);
    RUN(test_argmax_limit_shares_ties);
    RUN(test_empty_rows_are_zero);
    RUN(test_permutation_equivariance);
    RUN(test_bad_arguments_are_refused);
    RUN(test_kernel_gradient_matches_finite_differences);
    RUN(test_kernel_fit_descends);
    RUN(test_kernel_fit_refusals);
    RUN(test_sinusoid_table);
    RUN(test_tensor_read);
    RUN(test_no_positions_gpt2_matches_reference);
    RUN(test_no_positions_permutation_invariance);
    RUN(test_no_positions_encdec_source_as_a_set);
    return check_summary("test_attend");
}
