/* test_train.c — the trainer (scripts/train/): gradients of every op and of a whole tiny model
 * against finite differences, AdamW and the learning-rate schedule against hand-computed
 * numbers, clipping, that training drives the loss down, that checkpoints resume bit for bit,
 * that the thread count changes nothing, that an exported model gives the trainer's logits
 * through sac_eval, and the quantizer.
 *
 * Finite differences: every op computes in float32; the check perturbs one input by ±h and
 * takes (L(+h) − L(−h)) / 2h, with L = Σ R ⊙ out summed in double (R a fixed random tensor, so
 * the analytic side runs the backward with dout = R). An entry passes when
 *     |analytic − numeric| ≤ atol + rtol · |numeric|.
 * and the relative error over all the checked entries, ‖a − n‖ / ‖n‖, stays below max_rel:
 *                                                      atol   rtol   max_rel   (h = 1e-2)
 *     linear ops (embedding, matmul + bias)            1e-4   1e-3   2e-4
 *     nonlinear ops (layernorm, GELU, attention, CE)   2e-4   1e-2   1e-3
 *     whole model (mean cross entropy)                 2e-4   5e-2   3e-3
 * (measured: ~1e-5 relative for the ops, ~2e-4 for the model; float rounding of L dominates).
 * TEST_TRAIN_VERBOSE=1 prints the errors of every check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli_options.h"
#include "data.h"
#include "eval_gguf.h"
#include "gguf.h"
#include "gguf_writer.h"
#include "gpt2.h"
#include "ops.h"
#include "optim.h"
#include "quantize.h"
#include "reference.h"
#include "saccade.h"
#include "test_models.h"
#include "trainer.h"
#include "types.h"

/* ---------------------------------------------------------------------------------------- */
/* Finite-difference harness                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void fill_uniform(float *x, int64_t n, train_rng *rng, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * (float)train_rng_uniform(rng);
}

static float *alloc_floats(int64_t n) { return calloc((size_t)(n ? n : 1), sizeof(float)); }

/* Σ r ⊙ out in double. */
static double weighted_sum(const float *out, const float *r, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += (double)r[i] * out[i];
    return s;
}

typedef double (*loss_fn)(void *ctx);

typedef struct grad_tolerance {
    float h;
    double atol, rtol; /* per entry */
    double max_rel;    /* over all checked entries */
} grad_tolerance;

static const grad_tolerance linear_tol = {1e-2f, 1e-4, 1e-3, 2e-4};
static const grad_tolerance nonlinear_tol = {1e-2f, 2e-4, 1e-2, 1e-3};
static const grad_tolerance model_tol = {1e-2f, 2e-4, 5e-2, 3e-3};

/* Checks `count` entries of p (spread over all n) against central differences of fn. */
static void check_grad(const char *what, loss_fn fn, void *ctx, float *p, const float *analytic, int64_t n,
                       int64_t count, const grad_tolerance *tol) {
    double diff2 = 0.0, ref2 = 0.0, worst = 0.0;
    int64_t worst_at = -1, failures = 0;
    if (count > n) count = n;
    for (int64_t k = 0; k < count; k++) {
        const int64_t i = count == n ? k : (k * 7919) % n; /* a spread of entries */
        const float saved = p[i];
        p[i] = saved + tol->h;
        const double up = fn(ctx);
        p[i] = saved - tol->h;
        const double down = fn(ctx);
        p[i] = saved;
        const double numeric = (up - down) / (2.0 * tol->h), a = analytic[i];
        const double excess = fabs(a - numeric) - (tol->atol + tol->rtol * fabs(numeric));
        if (excess > 0) failures++;
        if (excess > worst || worst_at < 0) {
            worst = excess;
            worst_at = i;
        }
        diff2 += (a - numeric) * (a - numeric);
        ref2 += numeric * numeric;
    }
    const double rel = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    if (getenv("TEST_TRAIN_VERBOSE"))
        printf("  %-32s %4lld entries, relative error %.2e, worst margin %.2e\n", what, (long long)count, rel, -worst);
    CHECK_MSG(failures == 0, "%s: %lld of %lld entries outside tolerance (worst at %lld by %.3g)", what,
              (long long)failures, (long long)count, (long long)worst_at, worst);
    CHECK_MSG(rel < tol->max_rel, "%s: relative error %.3g (at most %.3g)", what, rel, tol->max_rel);
    CHECK_MSG(ref2 > 0, "%s: the gradient is zero everywhere checked, a vacuous check", what);
}

/* ---------------------------------------------------------------------------------------- */
/* Op gradients                                                                              */
/* ---------------------------------------------------------------------------------------- */

typedef struct embedding_case {
    int32_t tokens[6];
    float *wte, *wpe, *out, *r;
} embedding_case;

static double embedding_loss(void *p) {
    embedding_case *c = p;
    embedding_forward(NULL, c->out, c->tokens, c->wte, c->wpe, 2, 3, 5);
    return weighted_sum(c->out, c->r, 2 * 3 * 5);
}

static void test_embedding_grad(void) {
    train_rng rng = train_rng_seed(1);
    embedding_case c = {{3, 1, 3, 0, 6, 3}, alloc_floats(7 * 5), alloc_floats(3 * 5), alloc_floats(30),
                        alloc_floats(30)};
    fill_uniform(c.wte, 35, &rng, -1, 1);
    fill_uniform(c.wpe, 15, &rng, -1, 1);
    fill_uniform(c.r, 30, &rng, -1, 1);
    float *dwte = alloc_floats(35), *dwpe = alloc_floats(15);
    embedding_backward(NULL, dwte, dwpe, c.r, c.tokens, 2, 3, 5);
    check_grad("embedding dwte", embedding_loss, &c, c.wte, dwte, 35, 35, &linear_tol);
    check_grad("embedding dwpe", embedding_loss, &c, c.wpe, dwpe, 15, 15, &linear_tol);
    /* token 3 appears three times: its gradient row is the sum of three rows of dout */
    CHECK_NEAR(dwte[3 * 5 + 2], c.r[0 * 5 + 2] + c.r[2 * 5 + 2] + c.r[5 * 5 + 2], 1e-6);
    free(c.wte), free(c.wpe), free(c.out), free(c.r), free(dwte), free(dwpe);
}

typedef struct layernorm_case {
    int64_t N, C;
    float *x, *w, *b, *out, *mean, *rstd, *r;
} layernorm_case;

static double layernorm_loss(void *p) {
    layernorm_case *c = p;
    layernorm_forward(NULL, c->out, c->mean, c->rstd, c->x, c->w, c->b, c->N, c->C, 1e-5f);
    return weighted_sum(c->out, c->r, c->N * c->C);
}

static void test_layernorm_grad(void) {
    train_rng rng = train_rng_seed(2);
    layernorm_case c = {4, 19, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    const int64_t NC = c.N * c.C;
    c.x = alloc_floats(NC), c.w = alloc_floats(c.C), c.b = alloc_floats(c.C), c.out = alloc_floats(NC);
    c.mean = alloc_floats(c.N), c.rstd = alloc_floats(c.N), c.r = alloc_floats(NC);
    fill_uniform(c.x, NC, &rng, -2, 2);
    fill_uniform(c.w, c.C, &rng, 0.5f, 1.5f);
    fill_uniform(c.b, c.C, &rng, -0.5f, 0.5f);
    fill_uniform(c.r, NC, &rng, -1, 1);
    float *dx = alloc_floats(NC), *dw = alloc_floats(c.C), *db = alloc_floats(c.C);
    layernorm_loss(&c);
    layernorm_backward(NULL, dx, dw, db, c.r, c.x, c.w, c.mean, c.rstd, c.N, c.C);
    check_grad("layernorm dx", layernorm_loss, &c, c.x, dx, NC, NC, &nonlinear_tol);
    check_grad("layernorm dw", layernorm_loss, &c, c.w, dw, c.C, c.C, &nonlinear_tol);
    check_grad("layernorm db", layernorm_loss, &c, c.b, db, c.C, c.C, &nonlinear_tol);
    free(c.x), free(c.w), free(c.b), free(c.out), free(c.mean), free(c.rstd), free(c.r), free(dx), free(dw), free(db);
}

typedef struct linear_case {
    int64_t N, C_in, C_out;
    float *x, *w, *bias, *out, *r;
} linear_case;

static double linear_loss(void *p) {
    linear_case *c = p;
    linear_forward(NULL, c->out, c->x, c->w, c->bias, c->N, c->C_in, c->C_out);
    return weighted_sum(c->out, c->r, c->N * c->C_out);
}

/* Shapes that leave remainders in every tile of the backward loops (rows of 4, pairs, chunks). */
static void linear_grad_case(int64_t N, int64_t C_in, int64_t C_out, uint64_t seed) {
    train_rng rng = train_rng_seed(seed);
    linear_case c = {N, C_in, C_out, alloc_floats(N * C_in), alloc_floats(C_out * C_in), alloc_floats(C_out),
                     alloc_floats(N * C_out), alloc_floats(N * C_out)};
    fill_uniform(c.x, N * C_in, &rng, -1, 1);
    fill_uniform(c.w, C_out * C_in, &rng, -1, 1);
    fill_uniform(c.bias, C_out, &rng, -1, 1);
    fill_uniform(c.r, N * C_out, &rng, -1, 1);
    float *dx = alloc_floats(N * C_in), *dw = alloc_floats(C_out * C_in), *db = alloc_floats(C_out);
    linear_backward(NULL, dx, dw, db, c.r, c.x, c.w, N, C_in, C_out);
    char what[64];
    snprintf(what, sizeof what, "linear %lldx%lld→%lld dx", (long long)N, (long long)C_in, (long long)C_out);
    check_grad(what, linear_loss, &c, c.x, dx, N * C_in, 200, &linear_tol);
    snprintf(what, sizeof what, "linear %lldx%lld→%lld dw", (long long)N, (long long)C_in, (long long)C_out);
    check_grad(what, linear_loss, &c, c.w, dw, C_out * C_in, 200, &linear_tol);
    snprintf(what, sizeof what, "linear %lldx%lld→%lld dbias", (long long)N, (long long)C_in, (long long)C_out);
    check_grad(what, linear_loss, &c, c.bias, db, C_out, C_out, &linear_tol);

    /* the backward products against plain double sums, on every entry */
    double worst = 0.0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < C_in; i++) {
            double s = 0.0;
            for (int64_t o = 0; o < C_out; o++) s += (double)c.r[n * C_out + o] * c.w[o * C_in + i];
            worst = fmax(worst, fabs(s - dx[n * C_in + i]));
        }
    for (int64_t o = 0; o < C_out; o++)
        for (int64_t i = 0; i < C_in; i++) {
            double s = 0.0;
            for (int64_t n = 0; n < N; n++) s += (double)c.r[n * C_out + o] * c.x[n * C_in + i];
            worst = fmax(worst, fabs(s - dw[o * C_in + i]));
        }
    CHECK_MSG(worst < 1e-4, "linear %lldx%lld→%lld: backward products off by %.3g", (long long)N, (long long)C_in,
              (long long)C_out, worst);
    free(c.x), free(c.w), free(c.bias), free(c.out), free(c.r), free(dx), free(dw), free(db);
}

static void test_linear_grad(void) {
    linear_grad_case(5, 12, 7, 3);
    linear_grad_case(9, 40, 10, 4);
    linear_grad_case(131, 33, 6, 5); /* more rows than one cache chunk of the dw loop */
}

typedef struct gelu_case {
    float *x, *out, *th, *r;
    int64_t n;
} gelu_case;

static double gelu_loss(void *p) {
    gelu_case *c = p;
    gelu_forward(NULL, c->out, c->th, c->x, c->n);
    return weighted_sum(c->out, c->r, c->n);
}

static void test_gelu_grad(void) {
    train_rng rng = train_rng_seed(6);
    gelu_case c = {alloc_floats(64), alloc_floats(64), alloc_floats(64), alloc_floats(64), 64};
    fill_uniform(c.x, 64, &rng, -4, 4);
    fill_uniform(c.r, 64, &rng, -1, 1);
    float *dx = alloc_floats(64);
    gelu_loss(&c);
    gelu_backward(NULL, dx, c.x, c.th, c.r, 64);
    check_grad("gelu dx", gelu_loss, &c, c.x, dx, 64, 64, &nonlinear_tol);
    /* against the formula in double */
    gelu_loss(&c);
    for (int i = 0; i < 64; i++) {
        const double x = c.x[i], u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
        CHECK_NEAR(c.out[i], 0.5 * x * (1 + tanh(u)), 1e-6);
    }
    free(c.x), free(c.out), free(c.th), free(c.r), free(dx);
}

typedef struct attention_case {
    attention_dims d;
    float *q, *k, *v, *out, *probs, *r;
    int64_t n_out;
} attention_case;

static double attention_loss(void *p) {
    attention_case *c = p;
    attention_forward(NULL, c->out, c->probs, c->q, c->k, c->v, &c->d);
    return weighted_sum(c->out, c->r, c->n_out);
}

/* Causal self-attention over fused Q|K|V rows: the gpt2 layout. */
static void test_attention_grad(void) {
    train_rng rng = train_rng_seed(7);
    const int32_t B = 2, T = 5, H = 2, hd = 4, C = H * hd;
    float *qkv = alloc_floats(B * T * 3 * C), *dqkv = alloc_floats(B * T * 3 * C);
    attention_case c = {{B, T, T, H, hd, 3 * C, 3 * C, 1}, qkv, qkv + C, qkv + 2 * C, alloc_floats(B * T * C),
                        alloc_floats(B * H * T * T), alloc_floats(B * T * C), B * T * C};
    fill_uniform(qkv, B * T * 3 * C, &rng, -1.5f, 1.5f);
    fill_uniform(c.r, c.n_out, &rng, -1, 1);
    attention_loss(&c);

    /* rows of probabilities sum to 1, keys after the query get 0 */
    double worst_sum = 0.0, masked = 0.0;
    for (int32_t row = 0; row < B * H * T; row++) {
        const int32_t t = row % T;
        double s = 0.0;
        for (int32_t j = 0; j < T; j++) {
            s += c.probs[row * T + j];
            if (j > t) masked += fabs(c.probs[row * T + j]);
        }
        worst_sum = fmax(worst_sum, fabs(s - 1.0));
    }
    CHECK_NEAR(worst_sum, 0.0, 1e-6);
    CHECK(masked == 0.0);

    attention_backward(NULL, dqkv, dqkv + C, dqkv + 2 * C, c.r, c.probs, c.q, c.k, c.v, &c.d);
    check_grad("causal attention d(qkv)", attention_loss, &c, qkv, dqkv, B * T * 3 * C, B * T * 3 * C, &nonlinear_tol);
    /* the first position sees only itself: its query cannot matter */
    for (int32_t i = 0; i < C; i++) CHECK(dqkv[i] == 0.0f);
    free(qkv), free(dqkv), free(c.out), free(c.probs), free(c.r);
}

/* Cross-attention: queries of a 3-token decoder over 6 encoder positions, no mask; keys and
 * values fused in rows of 2C, queries in rows of C. */
static void test_cross_attention_grad(void) {
    train_rng rng = train_rng_seed(8);
    const int32_t B = 2, Tq = 3, Tk = 6, H = 2, hd = 4, C = H * hd;
    float *q = alloc_floats(B * Tq * C), *kv = alloc_floats(B * Tk * 2 * C);
    float *dq = alloc_floats(B * Tq * C), *dkv = alloc_floats(B * Tk * 2 * C);
    attention_case c = {{B, Tq, Tk, H, hd, C, 2 * C, 0}, q, kv, kv + C, alloc_floats(B * Tq * C),
                        alloc_floats(B * H * Tq * Tk), alloc_floats(B * Tq * C), B * Tq * C};
    fill_uniform(q, B * Tq * C, &rng, -1.5f, 1.5f);
    fill_uniform(kv, B * Tk * 2 * C, &rng, -1.5f, 1.5f);
    fill_uniform(c.r, c.n_out, &rng, -1, 1);
    attention_loss(&c);
    /* every key is visible: the last key of every row has probability > 0 */
    for (int32_t row = 0; row < B * H * Tq; row++) CHECK(c.probs[row * Tk + Tk - 1] > 0.0f);
    attention_backward(NULL, dq, dkv, dkv + C, c.r, c.probs, c.q, c.k, c.v, &c.d);
    check_grad("cross-attention dq", attention_loss, &c, q, dq, B * Tq * C, B * Tq * C, &nonlinear_tol);
    check_grad("cross-attention d(kv)", attention_loss, &c, kv, dkv, B * Tk * 2 * C, B * Tk * 2 * C, &nonlinear_tol);
    free(q), free(kv), free(dq), free(dkv), free(c.out), free(c.probs), free(c.r);
}

typedef struct crossentropy_case {
    int32_t targets[4];
    float *logits, *probs, *losses, *r;
} crossentropy_case;

static double crossentropy_loss(void *p) {
    crossentropy_case *c = p;
    crossentropy_forward(NULL, c->losses, c->probs, c->logits, c->targets, 4, 9);
    return weighted_sum(c->losses, c->r, 4);
}

static void test_crossentropy_grad(void) {
    train_rng rng = train_rng_seed(9);
    crossentropy_case c = {{0, 8, 3, 3}, alloc_floats(36), alloc_floats(36), alloc_floats(4), alloc_floats(4)};
    fill_uniform(c.logits, 36, &rng, -3, 3);
    fill_uniform(c.r, 4, &rng, 0.1f, 1);
    crossentropy_loss(&c);
    /* the loss against log-softmax in double */
    for (int n = 0; n < 4; n++) {
        double m = -INFINITY, s = 0.0;
        for (int i = 0; i < 9; i++) m = fmax(m, c.logits[n * 9 + i]);
        for (int i = 0; i < 9; i++) s += exp(c.logits[n * 9 + i] - m);
        CHECK_NEAR(c.losses[n], log(s) + m - c.logits[n * 9 + c.targets[n]], 1e-5);
    }
    float *dlogits = alloc_floats(36);
    crossentropy_backward(NULL, dlogits, c.probs, c.targets, c.r, 4, 9);
    check_grad("cross-entropy dlogits", crossentropy_loss, &c, c.logits, dlogits, 36, 36, &nonlinear_tol);
    free(c.logits), free(c.probs), free(c.losses), free(c.r), free(dlogits);
}

/* ---------------------------------------------------------------------------------------- */
/* The whole model                                                                           */
/* ---------------------------------------------------------------------------------------- */

static gpt2_config tiny_config(void) {
    gpt2_config c = {11, 8, 16, 2, 2, 32, 1e-5f};
    return c;
}

typedef struct model_case {
    gpt2_model *m;
    const int32_t *inputs, *targets;
    int32_t B, T;
} model_case;

static double model_loss(void *p) {
    model_case *c = p;
    gpt2_forward(c->m, c->inputs, c->targets, c->B, c->T);
    double s = 0.0;
    for (int64_t n = 0; n < (int64_t)c->B * c->T; n++) s += c->m->acts.losses[n];
    return s / ((double)c->B * c->T);
}

static void test_model_grad(void) {
    const gpt2_config cfg = tiny_config();
    gpt2_model m;
    sac_error err;
    CHECK(gpt2_build(&m, &cfg, 2, 8, NULL, &err) == SAC_OK);
    train_rng rng = train_rng_seed(10);
    gpt2_init(&m, &rng);
    /* larger weights than GPT-2's 0.02, so that every path carries a gradient worth checking */
    for (size_t i = 0; i < m.n_params; i++) m.params_memory[i] += (float)(0.3 * train_rng_normal(&rng));
    int32_t inputs[16], targets[16];
    for (int i = 0; i < 16; i++) {
        inputs[i] = (int32_t)train_rng_below(&rng, cfg.n_vocab);
        targets[i] = (int32_t)train_rng_below(&rng, cfg.n_vocab);
    }
    const float loss = gpt2_forward(&m, inputs, targets, 2, 8);
    gpt2_zero_grad(&m);
    gpt2_backward(&m);
    CHECK(isfinite(loss) && loss > 0.0f);

    model_case c = {&m, inputs, targets, 2, 8};
    gpt2_tensor t[GPT2_N_TENSORS];
    gpt2_tensors(&cfg, t);
    size_t offset = 0;
    for (int i = 0; i < GPT2_N_TENSORS; i++) {
        const int64_t n = (t[i].per_layer ? cfg.n_layer : 1) * t[i].rows * t[i].cols;
        char what[64];
        snprintf(what, sizeof what, "model d(%s)", t[i].name);
        check_grad(what, model_loss, &c, m.params_memory + offset, m.grads_memory + offset, n, 24, &model_tol);
        offset += (size_t)n;
    }
    gpt2_free(&m);
}

/* Two threads compute the same bits as one: every value has one owner and a fixed order. */
static void test_threads_change_nothing(void) {
    const gpt2_config cfg = tiny_config();
    gpt2_model one, two;
    sac_pool *pool = NULL;
    sac_error err;
    CHECK(sac_pool_new(2, &pool, &err) == SAC_OK);
    CHECK(gpt2_build(&one, &cfg, 3, 8, NULL, &err) == SAC_OK);
    CHECK(gpt2_build(&two, &cfg, 3, 8, pool, &err) == SAC_OK);
    train_rng r1 = train_rng_seed(11), r2 = train_rng_seed(11);
    gpt2_init(&one, &r1);
    gpt2_init(&two, &r2);
    int32_t inputs[24], targets[24];
    for (int i = 0; i < 24; i++) inputs[i] = (i * 5) % 11, targets[i] = (i * 3 + 1) % 11;
    const float l1 = gpt2_forward(&one, inputs, targets, 3, 8), l2 = gpt2_forward(&two, inputs, targets, 3, 8);
    gpt2_zero_grad(&one);
    gpt2_zero_grad(&two);
    gpt2_backward(&one);
    gpt2_backward(&two);
    CHECK(l1 == l2);
    CHECK(memcmp(one.grads_memory, two.grads_memory, one.n_params * sizeof(float)) == 0);
    gpt2_free(&one);
    gpt2_free(&two);
    sac_pool_free(pool);
}

/* ---------------------------------------------------------------------------------------- */
/* Optimizer                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void test_adamw_step(void) {
    /* θ = 0.5, g = 0.2, then g = −0.1; lr 0.1, β1 0.9, β2 0.95, ε 1e-8, λ 0.1.
     * step 1: m = 0.02, v = 0.002, m̂ = 0.2, v̂ = 0.04, m̂/√v̂ = 1
     *         θ = 0.5 − 0.1·(1 + 0.1·0.5) = 0.395
     * step 2: m = 0.018 − 0.01 = 0.008, v = 0.0019 + 0.0005 = 0.0024,
     *         m̂ = 0.008/0.19 = 0.0421053, v̂ = 0.0024/0.0975 = 0.0246154,
     *         m̂/√v̂ = 0.0421053/0.1568929 = 0.268370
     *         θ = 0.395 − 0.1·(0.268370 + 0.0395) = 0.3642130
     * Without decay the same steps give 0.4 and 0.3731630. */
    const adamw_config c = {0.9f, 0.95f, 1e-8f, 0.1f};
    for (int decay = 0; decay <= 1; decay++) {
        float theta = 0.5f, m = 0.0f, v = 0.0f, g = 0.2f;
        adamw_update(NULL, &theta, &g, &m, &v, 1, 1, 0.1f, &c, decay);
        CHECK_NEAR(m, 0.02, 1e-7);
        CHECK_NEAR(v, 0.002, 1e-8);
        CHECK_NEAR(theta, decay ? 0.395 : 0.4, 1e-6);
        g = -0.1f;
        adamw_update(NULL, &theta, &g, &m, &v, 1, 2, 0.1f, &c, decay);
        CHECK_NEAR(m, 0.008, 1e-7);
        CHECK_NEAR(v, 0.0024, 1e-8);
        CHECK_NEAR(theta, decay ? 0.3642130 : 0.3731630, 2e-6);
    }
}

static void test_lr_schedule(void) {
    const lr_schedule s = {1e-3f, 1e-4f, 10, 110};
    CHECK_NEAR(lr_at(&s, 0), 1e-4, 1e-9);   /* (0 + 1) / 10 of the peak */
    CHECK_NEAR(lr_at(&s, 4), 5e-4, 1e-9);
    CHECK_NEAR(lr_at(&s, 9), 1e-3, 1e-9);   /* the warm-up ends at the peak */
    CHECK_NEAR(lr_at(&s, 10), 1e-3, 1e-9);  /* the cosine starts at the peak */
    CHECK_NEAR(lr_at(&s, 60), 5.5e-4, 1e-9); /* halfway: the mean of peak and floor */
    CHECK_NEAR(lr_at(&s, 35), 1e-4 + 9e-4 * 0.5 * (1 + cos(3.14159265358979323846 * 0.25)), 1e-9);
    CHECK_NEAR(lr_at(&s, 110), 1e-4, 1e-9);
    CHECK_NEAR(lr_at(&s, 500), 1e-4, 1e-9);
    for (int64_t i = 10; i < 110; i++) CHECK(lr_at(&s, i + 1) <= lr_at(&s, i)); /* decays monotonically */
}

static void test_clip_grad_norm(void) {
    float g[2] = {3.0f, 4.0f};
    CHECK_NEAR(clip_grad_norm(g, 2, 10.0f), 5.0, 1e-6); /* below the limit: unchanged */
    CHECK(g[0] == 3.0f && g[1] == 4.0f);
    CHECK_NEAR(clip_grad_norm(g, 2, 1.0f), 5.0, 1e-6);
    CHECK_NEAR(g[0], 0.6, 1e-6);
    CHECK_NEAR(g[1], 0.8, 1e-6);
    CHECK_NEAR(clip_grad_norm(g, 2, 0.0f), 1.0, 1e-6); /* 0: no clipping */
}

/* ---------------------------------------------------------------------------------------- */
/* Data                                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void test_char_dataset(void) {
    const char *text = "héllo wörld\nhello world\n"; /* é and ö are two bytes each */
    char_dataset d;
    sac_error err;
    CHECK(char_dataset_from_text(text, strlen(text), 0.75, &d, &err) == SAC_OK);
    CHECK(d.n_tokens == 24);
    CHECK(d.n_train == 18);
    CHECK(d.n_vocab == 11); /* \n, space, d, e, h, l, o, r, w, é, ö */
    CHECK(d.codepoints[0] == '\n' && d.codepoints[1] == ' ' && d.codepoints[9] == 0xE9 && d.codepoints[10] == 0xF6);
    CHECK(d.tokens[1] == char_dataset_id(&d, 0xE9));
    char piece[5];
    char_dataset_token_text(&d, d.tokens[7], piece);
    CHECK(!strcmp(piece, "ö"));
    CHECK(char_dataset_id(&d, 'z') == -1);

    /* batches: targets are the inputs shifted by one, all inside the training part */
    train_rng rng = train_rng_seed(12);
    int32_t in[3 * 4], tg[3 * 4];
    char_dataset_train_batch(&d, 3, 4, &rng, in, tg);
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 3; t++) CHECK(tg[b * 4 + t] == in[b * 4 + t + 1]);

    /* validation: 6 characters, 5 predicted positions, windows of 2 → 2, 2, 1 */
    int32_t last;
    CHECK(char_dataset_val_windows(&d, 2, &last) == 3);
    CHECK(last == 1);
    CHECK(char_dataset_val_window(&d, 2, 2, in, tg) == 1);
    CHECK(in[0] == d.tokens[22] && tg[0] == d.tokens[23]);
    char_dataset_free(&d);

    CHECK(char_dataset_from_text("ab\xff", 3, 0.5, &d, &err) == SAC_ERR_ARG); /* not UTF-8 */
}

/* ---------------------------------------------------------------------------------------- */
/* Training end to end                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* A text with little entropy: two sentences in a random order. A working trainer learns it. */
static char *synthetic_text(size_t *len) {
    static const char *const sentences[] = {"the cat sat. ", "a dog ran! "};
    train_rng rng = train_rng_seed(13);
    char *text = malloc(20000);
    size_t n = 0;
    while (n < 19000) {
        const char *s = sentences[train_rng_below(&rng, 2)];
        memcpy(text + n, s, strlen(s));
        n += strlen(s);
    }
    *len = n;
    return text;
}

static train_config tiny_train_config(int32_t n_vocab, int64_t steps) {
    train_config c = train_config_default();
    c.model = (gpt2_config){n_vocab, 16, 32, 2, 1, 64, 1e-5f};
    c.batch_size = 8;
    c.seq_len = 16;
    c.max_steps = steps;
    c.schedule = (lr_schedule){1e-2f, 1e-3f, 10, steps};
    c.seed = 7;
    return c;
}

static void test_training_reduces_loss(void) {
    size_t len;
    char *text = synthetic_text(&len);
    char_dataset d;
    sac_error err;
    trainer tr;
    CHECK(char_dataset_from_text(text, len, 0.9, &d, &err) == SAC_OK);
    const train_config c = tiny_train_config(d.n_vocab, 300);
    CHECK(trainer_new(&tr, &c, &d, NULL, &err) == SAC_OK);
    const double val_before = trainer_evaluate(&tr, 0);
    float first = 0, last = 0;
    for (int s = 0; s < 300; s++) {
        const float loss = trainer_step(&tr);
        if (s < 10) first += loss / 10;
        if (s >= 290) last += loss / 10;
    }
    const double val_after = trainer_evaluate(&tr, 0);
    if (getenv("TEST_TRAIN_VERBOSE"))
        printf("  synthetic task: validation %.3f → %.3f, training %.3f → %.3f\n", val_before, val_after, first, last);
    /* log(14 characters) ≈ 2.64 at the start; the two sentences leave ~0.1 nat/char */
    CHECK_MSG(val_before > 2.0, "val before %.3f", val_before);
    CHECK_MSG(last < 0.35 * first, "train loss %.3f → %.3f", first, last);
    CHECK_MSG(val_after < 0.4, "val after %.3f (before %.3f)", val_after, val_before);
    trainer_free(&tr);
    char_dataset_free(&d);
    free(text);
}

/* Ten steps, save, ten more; versus loading the checkpoint into a fresh trainer and running the
 * last ten there: the same bits. */
static void test_checkpoint_resumes_exactly(void) {
    size_t len;
    char *text = synthetic_text(&len);
    char_dataset d;
    sac_error err;
    CHECK(char_dataset_from_text(text, len, 0.9, &d, &err) == SAC_OK);
    const train_config c = tiny_train_config(d.n_vocab, 40);
    char path[64];
    snprintf(path, sizeof path, "/tmp/saccade_test_train_%d.ckpt", (int)getpid());
    trainer a, b;
    CHECK(trainer_new(&a, &c, &d, NULL, &err) == SAC_OK);
    for (int s = 0; s < 10; s++) trainer_step(&a);
    CHECK(trainer_save(&a, path, &err) == SAC_OK);
    for (int s = 0; s < 10; s++) trainer_step(&a);

    train_config other = c;
    other.seed = 99; /* a different initialisation, overwritten by the checkpoint */
    CHECK(trainer_new(&b, &other, &d, NULL, &err) == SAC_OK);
    CHECK(trainer_load(&b, path, &err) == SAC_OK);
    CHECK(b.step == 10);
    for (int s = 0; s < 10; s++) trainer_step(&b);
    CHECK(memcmp(a.model.params_memory, b.model.params_memory, a.model.n_params * sizeof(float)) == 0);
    CHECK(memcmp(a.adam_v, b.adam_v, a.model.n_params * sizeof(float)) == 0);
    trainer_free(&b);

    /* a checkpoint of another shape is refused */
    train_config wider = c;
    wider.model.n_embd = 64;
    CHECK(trainer_new(&b, &wider, &d, NULL, &err) == SAC_OK);
    CHECK(trainer_load(&b, path, &err) == SAC_ERR_ARG);
    trainer_free(&b);
    trainer_free(&a);
    remove(path);
    char_dataset_free(&d);
    free(text);
}

/* The vocabulary of a dataset as gpt2_export_gguf wants it, plus <unk>. */
typedef struct test_vocab {
    char texts[64][8];
    const char *tokens[64];
    int32_t types[64];
} test_vocab;

static gpt2_vocab make_vocab(const char_dataset *d, test_vocab *v) {
    for (int32_t i = 0; i < d->n_vocab; i++) {
        char_dataset_token_text(d, i, v->texts[i]);
        v->tokens[i] = v->texts[i];
        v->types[i] = 1;
    }
    snprintf(v->texts[d->n_vocab], 8, "<unk>");
    v->tokens[d->n_vocab] = v->texts[d->n_vocab];
    v->types[d->n_vocab] = 2;
    gpt2_vocab g = {v->tokens, v->types, d->n_vocab + 1, d->n_vocab};
    return g;
}

/* A trained model, exported: the engine gives the trainer's logits, tokenizes the text into the
 * dataset's ids, and its validation loss equals the trainer's. */
static void test_export_matches_engine(void) {
    size_t len;
    char *text = synthetic_text(&len);
    char_dataset d;
    sac_error err;
    CHECK(char_dataset_from_text(text, len, 0.9, &d, &err) == SAC_OK);
    const train_config c = tiny_train_config(d.n_vocab + 1, 60);
    trainer tr;
    CHECK(trainer_new(&tr, &c, &d, NULL, &err) == SAC_OK);
    for (int s = 0; s < 60; s++) trainer_step(&tr);

    test_vocab tv;
    const gpt2_vocab vocab = make_vocab(&d, &tv);
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK(gpt2_export_gguf(&tr.model, "test char model", &vocab, &bytes, &size, &err) == SAC_OK);
    sac_model *model = NULL;
    CHECK_MSG(sac_model_load(bytes, size, 0, &model) == SAC_OK, "%s", sac_model_errmsg(model));
    sac_model_info info;
    sac_model_get_info(model, &info);
    CHECK(!strcmp(info.architecture, "gpt2") && info.n_vocab == d.n_vocab + 1 && info.n_layer == 1 &&
          info.n_embd == 32 && info.n_ctx == 16 && info.tied_output == 1 && info.has_tokenizer == 1);
    CHECK(info.n_params == tr.model.n_params);

    /* logits of a 16-character window, trainer vs engine */
    const char *window = "the cat sat. a d";
    int32_t ids[16], n_ids = 0;
    CHECK(sac_tokenize(model, window, 16, 0, ids, 16, &n_ids) == SAC_OK && n_ids == 16);
    for (int i = 0; i < 16; i++) CHECK(ids[i] == char_dataset_id(&d, (uint32_t)(unsigned char)window[i]));
    gpt2_forward(&tr.model, ids, NULL, 1, 16);
    sac_context *ctx = NULL;
    sac_context_params p = sac_context_default_params();
    CHECK(sac_context_new(model, &p, &ctx) == SAC_OK);
    CHECK(sac_eval(ctx, ids, 16, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    int32_t rows = 0, V = 0;
    const float *logits = sac_logits(ctx, &rows, &V);
    CHECK(rows == 16 && V == d.n_vocab + 1);
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < (int64_t)rows * V; i++) {
        diff = fmax(diff, fabs(logits[i] - tr.model.acts.logits[i]));
        scale = fmax(scale, fabs(tr.model.acts.logits[i]));
    }
    CHECK_MSG(diff <= 1e-4 * scale, "engine vs trainer logits: max diff %.3g, max logit %.3g", diff, scale);

    /* a character the text lacks becomes <unk>; detokenizing gives the characters back */
    CHECK(sac_tokenize(model, "cat§", strlen("cat§"), 0, ids, 16, &n_ids) == SAC_OK && n_ids == 4);
    CHECK(ids[3] == d.n_vocab);
    const char *piece;
    size_t piece_len;
    CHECK(sac_token_bytes(model, ids[0], &piece, &piece_len) == SAC_OK && piece_len == 1 && piece[0] == 'c');

    /* the validation loss through the engine is the trainer's */
    double engine_loss = 0.0;
    const double trainer_loss = trainer_evaluate(&tr, 0);
    CHECK_MSG(eval_gguf_val_loss(bytes, size, &d, 16, 1, 0, &engine_loss, &err) == SAC_OK, "%s", err.msg);
    CHECK_NEAR(engine_loss, trainer_loss, 1e-4 * trainer_loss);

    sac_context_free(ctx);
    sac_model_free(model);
    free(bytes);
    trainer_free(&tr);
    char_dataset_free(&d);
    free(text);
}

/* ---------------------------------------------------------------------------------------- */
/* Quantizer                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static const gguf_tensor *tensor_named(const gguf_file *f, const char *name) { return sac_gguf_find_tensor(f, name); }

/* F32 → type: matrices equal, byte for byte, the test model maker's own quantization of the
 * same values; vectors stay F32; metadata is kept; the engine's logits are those of the model
 * made directly in the type, within logit_tol (relative to the largest) of the F32 ones. The
 * random test weights are uniform, the worst case for 4-bit blocks: Q4_0 moves them ~20%. */
static void quantize_case(uint32_t type, double logit_tol) {
    test_model_spec spec = test_spec("gpt2", SAC_TYPE_F32);
    test_model f32, direct;
    CHECK(test_model_make(&spec, &f32) == 0);
    spec.type = type;
    CHECK(test_model_make(&spec, &direct) == 0);
    uint8_t *out = NULL;
    size_t size = 0;
    quantize_stats stats;
    sac_error err;
    CHECK_MSG(quantize_gguf(f32.bytes, f32.size, type, &out, &size, &stats, &err) == SAC_OK, "%s", err.msg);

    gguf_file a, b, q;
    CHECK(sac_gguf_parse(&a, f32.bytes, f32.size, &err) == SAC_OK);
    CHECK(sac_gguf_parse(&b, direct.bytes, direct.size, &err) == SAC_OK);
    CHECK(sac_gguf_parse(&q, out, size, &err) == SAC_OK);
    CHECK(q.n_tensors == a.n_tensors);
    CHECK(stats.n_converted + stats.n_kept == (int64_t)a.n_tensors && stats.n_fallback == 0);
    int64_t matrices = 0;
    for (uint64_t i = 0; i < a.n_tensors; i++) {
        const gguf_tensor *ta = &a.tensors[i], *tq = &q.tensors[i];
        char name[96];
        snprintf(name, sizeof name, "%.*s", (int)ta->name.len, ta->name.data);
        const gguf_tensor *tb = tensor_named(&b, name);
        CHECK(sac_gguf_string_eq(tq->name, name) && tb);
        if (!tb) continue;
        CHECK(tq->type == (ta->n_dims >= 2 ? type : SAC_TYPE_F32));
        CHECK_MSG(tq->n_bytes == tb->n_bytes && memcmp(tq->data, tb->data, tq->n_bytes) == 0, "%s differs", name);
        matrices += ta->n_dims >= 2;
    }
    CHECK(stats.n_converted == (type == SAC_TYPE_F32 ? 0 : matrices));
    /* metadata: every key kept, general.file_type added */
    CHECK(q.n_kv == a.n_kv + (sac_gguf_find_kv(&a, "general.file_type") ? 0 : 1));
    uint32_t file_type = 99, ctx_len = 0;
    CHECK(sac_gguf_get_u32(&q, "general.file_type", &file_type, &err) == SAC_OK);
    CHECK(file_type == (type == SAC_TYPE_Q8_0   ? 7u
                        : type == SAC_TYPE_Q4_0 ? 2u
                        : type == SAC_TYPE_Q5_0 ? 8u
                        : type == SAC_TYPE_Q4_1 ? 3u
                        : type == SAC_TYPE_Q5_1 ? 9u
                        : type == SAC_TYPE_F16  ? 1u
                                                : 0u));
    CHECK(sac_gguf_get_u32(&q, "gpt2.context_length", &ctx_len, &err) == SAC_OK && ctx_len == (uint32_t)spec.n_ctx);

    /* the engine runs it: the same logits as the model made directly in this type (same
     * tensor bytes), and close to the F32 model */
    sac_model *mf = NULL, *mq = NULL, *md = NULL;
    CHECK(sac_model_load(f32.bytes, f32.size, 0, &mf) == SAC_OK);
    CHECK(sac_model_load(out, size, 0, &mq) == SAC_OK);
    CHECK(sac_model_load(direct.bytes, direct.size, 0, &md) == SAC_OK);
    sac_context *cf = NULL, *cq = NULL, *cd = NULL;
    sac_context_params p = sac_context_default_params();
    CHECK(sac_context_new(mf, &p, &cf) == SAC_OK && sac_context_new(mq, &p, &cq) == SAC_OK &&
          sac_context_new(md, &p, &cd) == SAC_OK);
    const int32_t prompt[8] = {5, 17, 42, 3, 88, 61, 0, 96};
    CHECK(sac_eval(cf, prompt, 8, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    CHECK(sac_eval(cq, prompt, 8, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    CHECK(sac_eval(cd, prompt, 8, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    int32_t rows, V;
    const float *lf = sac_logits(cf, &rows, &V), *lq = sac_logits(cq, &rows, &V), *ld = sac_logits(cd, &rows, &V);
    CHECK(memcmp(lq, ld, (size_t)rows * (size_t)V * sizeof *lq) == 0);
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < (int64_t)rows * V; i++) {
        diff = fmax(diff, fabs(lf[i] - lq[i]));
        scale = fmax(scale, fabs(lf[i]));
    }
    CHECK_MSG(diff <= logit_tol * scale, "%s logits differ by %.3g (scale %.3g)", sac_type_name(type), diff, scale);
    sac_context_free(cf);
    sac_context_free(cq);
    sac_context_free(cd);
    sac_model_free(mf);
    sac_model_free(mq);
    sac_model_free(md);

    /* quantizing is idempotent for Q8_0: dequantized back to F32 and quantized again, the same bytes */
    if (type == SAC_TYPE_Q8_0) {
        uint8_t *back = NULL, *again = NULL;
        size_t back_size = 0, again_size = 0;
        CHECK(quantize_gguf(out, size, SAC_TYPE_F32, &back, &back_size, NULL, &err) == SAC_OK);
        CHECK(quantize_gguf(back, back_size, SAC_TYPE_Q8_0, &again, &again_size, NULL, &err) == SAC_OK);
        CHECK(again_size == size && memcmp(again, out, size) == 0);
        free(back);
        free(again);
    }
    sac_gguf_release(&a);
    sac_gguf_release(&b);
    sac_gguf_release(&q);
    free(out);
    test_model_free(&f32);
    test_model_free(&direct);
}

static void test_quantize_roundtrip(void) {
    quantize_case(SAC_TYPE_Q8_0, 3e-2);
    quantize_case(SAC_TYPE_Q4_0, 3e-1);
    quantize_case(SAC_TYPE_Q5_0, 2e-1);
    quantize_case(SAC_TYPE_Q4_1, 3e-1);
    quantize_case(SAC_TYPE_Q5_1, 2e-1);
    quantize_case(SAC_TYPE_F16, 1e-3);
    quantize_case(SAC_TYPE_F32, 0.0);
}

/* Rows that are not whole 32-value blocks cannot be Q8_0: such a matrix becomes F16. */
static void test_quantize_fallback(void) {
    gguf_writer *w;
    sac_error err;
    CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
    float m[20 * 3], v[20];
    for (int i = 0; i < 60; i++) m[i] = (float)i / 7.0f;
    for (int i = 0; i < 20; i++) v[i] = (float)i;
    const int64_t ne_m[2] = {20, 3}, ne_v[1] = {20};
    CHECK(sac_gguf_writer_set_string(w, "general.name", "odd", &err) == SAC_OK);
    CHECK(sac_gguf_writer_add_tensor(w, "m", SAC_TYPE_F32, 2, ne_m, m, sizeof m, &err) == SAC_OK);
    CHECK(sac_gguf_writer_add_tensor(w, "v", SAC_TYPE_F32, 1, ne_v, v, sizeof v, &err) == SAC_OK);
    uint8_t *in = NULL, *out = NULL;
    size_t in_size = 0, out_size = 0;
    CHECK(sac_gguf_writer_to_buffer(w, &in, &in_size, &err) == SAC_OK);
    sac_gguf_writer_free(w);
    quantize_stats stats;
    CHECK(quantize_gguf(in, in_size, SAC_TYPE_Q8_0, &out, &out_size, &stats, &err) == SAC_OK);
    CHECK(stats.n_fallback == 1 && stats.n_converted == 1 && stats.n_kept == 1);
    gguf_file f;
    CHECK(sac_gguf_parse(&f, out, out_size, &err) == SAC_OK);
    CHECK(sac_gguf_find_tensor(&f, "m")->type == SAC_TYPE_F16 && sac_gguf_find_tensor(&f, "v")->type == SAC_TYPE_F32);
    sac_gguf_release(&f);
    CHECK(quantize_gguf(in, in_size, 20 /* IQ4_NL */, &out, &out_size, &stats, &err) == SAC_ERR_ARG);
    free(in);
    free(out);
}

/* Rows that are not whole 256-value blocks cannot be K-quants: as llama.cpp does, Q4_K falls
 * back to Q5_0, Q5_K to Q5_1 and Q6_K to Q8_0 (rows of 64), and to F16 when 32 does not
 * divide the row either (rows of 20); rows of 256 take the K-quant. */
static void test_quantize_k_fallback(void) {
    const uint32_t types[] = {SAC_TYPE_Q4_K, SAC_TYPE_Q5_K, SAC_TYPE_Q6_K};
    const uint32_t fallbacks[] = {SAC_TYPE_Q5_0, SAC_TYPE_Q5_1, SAC_TYPE_Q8_0}, file_types[] = {14, 16, 18};
    for (int t = 0; t < 3; t++) {
        gguf_writer *w;
        sac_error err;
        CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
        static float m[256 * 2];
        for (int i = 0; i < 512; i++) m[i] = (float)(i % 41) / 7.0f - 2.0f;
        const int64_t ne_k[2] = {256, 2}, ne_64[2] = {64, 8}, ne_20[2] = {20, 3};
        CHECK(sac_gguf_writer_add_tensor(w, "k", SAC_TYPE_F32, 2, ne_k, m, sizeof m, &err) == SAC_OK);
        CHECK(sac_gguf_writer_add_tensor(w, "r64", SAC_TYPE_F32, 2, ne_64, m, sizeof m, &err) == SAC_OK);
        CHECK(sac_gguf_writer_add_tensor(w, "r20", SAC_TYPE_F32, 2, ne_20, m, 60 * sizeof(float), &err) == SAC_OK);
        uint8_t *in = NULL, *out = NULL;
        size_t in_size = 0, out_size = 0;
        CHECK(sac_gguf_writer_to_buffer(w, &in, &in_size, &err) == SAC_OK);
        sac_gguf_writer_free(w);
        quantize_stats stats;
        CHECK(quantize_gguf(in, in_size, types[t], &out, &out_size, &stats, &err) == SAC_OK);
        CHECK(stats.n_fallback == 2 && stats.n_converted == 3);
        gguf_file f;
        CHECK(sac_gguf_parse(&f, out, out_size, &err) == SAC_OK);
        CHECK(sac_gguf_find_tensor(&f, "k")->type == types[t]);
        CHECK(sac_gguf_find_tensor(&f, "r64")->type == fallbacks[t]);
        CHECK(sac_gguf_find_tensor(&f, "r20")->type == SAC_TYPE_F16);
        uint32_t file_type = 0;
        CHECK(sac_gguf_get_u32(&f, "general.file_type", &file_type, &err) == SAC_OK);
        CHECK(file_type == file_types[t]); /* llama.cpp's Q4_K_S, Q5_K_S, Q6_K */
        sac_gguf_release(&f);
        free(in);
        free(out);
    }
}

/* The tools' option parser: values land typed, and bad ones are refused with the reason. */
static void test_cli_options(void) {
    const char *name = NULL, *texts[2];
    int32_t layers = 0;
    int64_t steps = 0;
    uint64_t seed = 0;
    float lr = 0.0f;
    int n_texts = 0;
    const cli_option table[] = {
        {"--name", CLI_STRING, &name, NULL, 0},    {"--layers", CLI_INT32, &layers, NULL, 0},
        {"--steps", CLI_INT64, &steps, NULL, 0},   {"--seed", CLI_UINT64, &seed, NULL, 0},
        {"--lr", CLI_FLOAT, &lr, NULL, 0},         {"--text", CLI_STRINGS, (void *)texts, &n_texts, 2},
    };
    const int n = (int)(sizeof table / sizeof table[0]);
    char why[128];
    char *good[] = {"tool", "--name", "A", "--layers", "4", "--steps", "5000000000", "--seed", "18446744073709551615",
                    "--lr", "1e-3", "--text", "x", "--text", "y"};
    CHECK(cli_parse((int)(sizeof good / sizeof good[0]), good, table, n, why, sizeof why));
    CHECK(name && !strcmp(name, "A") && layers == 4 && steps == 5000000000LL && seed == UINT64_MAX);
    CHECK(lr == 1e-3f && n_texts == 2 && !strcmp(texts[1], "y"));
    static const struct {
        const char *option, *value, *why;
    } bad[] = {
        {"--layers", "4k", "--layers takes a whole number, not '4k'"},
        {"--layers", "3000000000", "--layers takes a whole number, not '3000000000'"},
        {"--steps", "", "--steps takes a whole number, not ''"},
        {"--seed", "-1", "--seed takes a non-negative whole number, not '-1'"},
        {"--lr", "nan", "--lr takes a finite number, not 'nan'"},
        {"--lr", "1e-3x", "--lr takes a finite number, not '1e-3x'"},
        {"--lr", "1e39", "--lr takes a finite number, not '1e39'"},
        {"--lr", "0x1p-3", "--lr takes a finite number, not '0x1p-3'"},
        {"--seed", " -1", "--seed takes a non-negative whole number, not ' -1'"},
        {"--layers", "+4", "--layers takes a whole number, not '+4'"},
        {"--text", "z", "--text may be given at most 2 times"},
        {"--colour", "red", "unknown option '--colour'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *argv[] = {"tool", (char *)bad[k].option, (char *)bad[k].value};
        n_texts = 2; /* --text is full */
        CHECK_MSG(!cli_parse(3, argv, table, n, why, sizeof why) && !strcmp(why, bad[k].why), "%s %s: '%s'",
                  bad[k].option, bad[k].value, why);
    }
    char *tiny[] = {"tool", "--lr", "1e-40"}; /* underflows to a subnormal: still a number */
    CHECK(cli_parse(3, tiny, table, n, why, sizeof why) && lr > 0.0f && lr < 1e-38f);
    char *missing[] = {"tool", "--steps"};
    CHECK(!cli_parse(2, missing, table, n, why, sizeof why) && !strcmp(why, "--steps needs a value"));
}

int main(void) {
    RUN(test_embedding_grad);
    RUN(test_layernorm_grad);
    RUN(test_linear_grad);
    RUN(test_gelu_grad);
    RUN(test_attention_grad);
    RUN(test_cross_attention_grad);
    RUN(test_crossentropy_grad);
    RUN(test_model_grad);
    RUN(test_threads_change_nothing);
    RUN(test_adamw_step);
    RUN(test_lr_schedule);
    RUN(test_clip_grad_norm);
    RUN(test_char_dataset);
    RUN(test_training_reduces_loss);
    RUN(test_checkpoint_resumes_exactly);
    RUN(test_export_matches_engine);
    RUN(test_quantize_roundtrip);
    RUN(test_quantize_fallback);
    RUN(test_quantize_k_fallback);
    RUN(test_cli_options);
    return check_summary("test_train");
}
