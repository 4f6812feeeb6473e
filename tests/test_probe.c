/* test_probe.c — looking inside attention: the captured pre-softmax scores equal the float64
 * reference's, their softmax is the captured probabilities bit for bit, the captured q and k
 * give the scores back, threads do not change any of it, and ablating a head equals the
 * reference with that head's output zeroed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reference.h"
#include "saccade.h"
#include "types.h"

static const int32_t prompt[] = {5, 17, 42, 3, 88, 61, 0, 96, 23, 23, 7, 50, 11, 64, 2, 39, 71, 8};
#define N ((int)(sizeof prompt / sizeof *prompt))
static const uint8_t pad[N] = {1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

typedef struct fixture {
    test_model tm;
    sac_model *model;
    sac_context *ctx;
} fixture;

static int setup(fixture *f, const char *arch, int threads, const uint8_t *ablate) {
    memset(f, 0, sizeof *f);
    test_model_spec s = test_spec(arch, SAC_TYPE_F32);
    sac_context_params p = sac_context_default_params();
    p.n_threads = threads;
    p.n_batch = 7;
    p.capture_attention = 1;
    p.capture_scores = 1;
    p.capture_qk = 1;
    p.ablate_heads = ablate;
    const int ok = !test_model_make(&s, &f->tm) && !sac_model_load(f->tm.bytes, f->tm.size, 0, &f->model) &&
                   !sac_context_new(f->model, &p, &f->ctx);
    CHECK_MSG(ok, "setup %s: %s", arch, f->ctx ? sac_context_errmsg(f->ctx) : "model");
    return ok;
}

static void teardown(fixture *f) {
    sac_context_free(f->ctx);
    sac_model_free(f->model);
    test_model_free(&f->tm);
}

/* The prompt in two evals (so the batches split and the KV cache is read). */
static int eval_prompt(sac_context *ctx, const uint8_t *mask) {
    return sac_eval(ctx, prompt, 11, mask, SAC_EVAL_ALL_LOGITS) == SAC_OK &&
           sac_eval(ctx, prompt + 11, N - 11, mask ? mask + 11 : NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK;
}

static void check_scores(const char *arch) {
    fixture f;
    if (!setup(&f, arch, 2, NULL)) return teardown(&f);
    const test_model_spec *s = &f.tm.ref.spec;
    const int L = s->n_layer, H = s->n_head;
    CHECK(eval_prompt(f.ctx, pad));
    double *ref = malloc((size_t)L * H * N * N * sizeof *ref), *logits = malloc((size_t)N * s->n_vocab * sizeof *logits);
    ref_probe_opts.scores = ref;
    ref_forward(&f.tm.ref, prompt, N, pad, logits, NULL);
    ref_probe_opts.scores = NULL;

    const float *scores, *probs;
    size_t n_s = 0, n_p = 0;
    CHECK(sac_attention_scores_rows(f.ctx, SAC_ATTENTION_SELF, 0, N, &scores, &n_s) == SAC_OK);
    CHECK(sac_attention_rows(f.ctx, SAC_ATTENTION_SELF, 0, N, &probs, &n_p) == SAC_OK);
    CHECK_MSG(n_s == n_p && n_s == (size_t)L * H * N * (N + 1) / 2, "%s: %zu score floats, %zu probabilities", arch, n_s, n_p);
    double worst = 0, biggest = 0;
    int masked_ok = 1, softmax_same = 1;
    float out[N];
    size_t at = 0;
    for (int q = 0; q < N; q++)
        for (int lh = 0; lh < L * H; lh++, at += (size_t)q + 1) {
            for (int j = 0; j <= q; j++) {
                const double r = ref[((size_t)lh * N + q) * N + j];
                if (isinf(r)) masked_ok &= scores[at + j] == -INFINITY;
                else worst = fmax(worst, fabs(scores[at + j] - r)), biggest = fmax(biggest, fabs(r));
            }
            CHECK(sac_softmax_row(scores + at, q + 1, 1.0f, out) == SAC_OK);
            softmax_same &= !memcmp(out, probs + at, (size_t)(q + 1) * sizeof *out);
        }
    CHECK_MSG(masked_ok, "%s: a padding key's score is not -inf", arch);
    CHECK_MSG(biggest > 0.1 && worst <= 1e-5 * biggest + 1e-6, "%s: scores differ from the reference by %.3g (scale %.3g)",
              arch, worst, biggest);
    CHECK_MSG(softmax_same, "%s: softmax of the captured scores is not the captured probabilities", arch);

    /* the same scores with one thread, bit for bit */
    fixture g;
    if (setup(&g, arch, 1, NULL) && eval_prompt(g.ctx, pad)) {
        const float *scores1;
        CHECK(sac_attention_scores_rows(g.ctx, SAC_ATTENTION_SELF, 0, N, &scores1, NULL) == SAC_OK);
        CHECK_MSG(!memcmp(scores, scores1, n_s * sizeof *scores), "%s: scores depend on the thread count", arch);
    }
    teardown(&g);

    /* q·k · scale gives each score back (masked keys aside) */
    static float qv[N * 64], kv[N * 64]; /* static: the wasm test builds have a small stack */
    int32_t nq, nk, hd;
    const float scale = sac_attention_scale(f.model);
    CHECK(scale > 0 && fabsf(scale - 1.0f / sqrtf((float)(s->n_embd / H))) < 1e-7f);
    worst = 0;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            CHECK(sac_context_qk(f.ctx, SAC_ATTENTION_SELF, l, h, qv, sizeof qv / sizeof *qv, kv, sizeof kv / sizeof *kv,
                                 &nq, &nk, &hd) == SAC_OK);
            CHECK(nq == N && nk == N && hd == s->n_embd / H);
            for (int q = 0; q < N; q++)
                for (int j = 0; j <= q; j++) {
                    const float sc = scores[(size_t)L * H * q * (q + 1) / 2 + (size_t)(l * H + h) * (q + 1) + j];
                    if (sc == -INFINITY) continue;
                    double dot = 0;
                    for (int d = 0; d < hd; d++) dot += (double)qv[q * hd + d] * kv[j * hd + d];
                    worst = fmax(worst, fabs(dot * scale - sc));
                }
        }
    CHECK_MSG(worst <= 1e-4, "%s: q.k * scale differs from the captured score by %.3g", arch, worst);
    free(ref);
    free(logits);
    teardown(&f);
}

static void test_scores_match_reference(void) {
    check_scores("gpt2");
    check_scores("llama"); /* grouped-query: 4 heads over 2 kv heads */
    check_scores("qwen2");
}

/* Logits of the prompt with `ablate` in the parameters against the reference with the same
 * heads zeroed, and against the unablated logits (which must differ). */
static void test_ablation_matches_reference(void) {
    const char *archs[] = {"gpt2", "llama"};
    for (int a = 0; a < 2; a++) {
        uint8_t mask[2 * 4] = {0, 1, 0, 0, 1, 0, 0, 1}; /* [layer][head] */
        fixture f;
        if (!setup(&f, archs[a], 2, mask)) {
            teardown(&f);
            continue;
        }
        const test_model_spec *s = &f.tm.ref.spec;
        CHECK(s->n_layer * s->n_head == 8);
        CHECK(sac_context_ablated(f.ctx, SAC_ATTENTION_SELF, 0, 1) == 1 && sac_context_ablated(f.ctx, SAC_ATTENTION_SELF, 0, 0) == 0);
        CHECK(eval_prompt(f.ctx, NULL));
        const size_t V = (size_t)s->n_vocab;
        double *ref = malloc(N * V * sizeof *ref), *plain = malloc(N * V * sizeof *plain);
        ref_probe_opts.ablate = mask;
        ref_forward(&f.tm.ref, prompt, N, NULL, ref, NULL);
        ref_probe_opts.ablate = NULL;
        ref_forward(&f.tm.ref, prompt, N, NULL, plain, NULL);
        const float *logits = sac_logits(f.ctx, NULL, NULL);
        const size_t tail = (size_t)(N - 11) * V;
        CHECK_MSG(ref_rel_error(logits, ref + 11 * V, tail) <= 1e-4, "%s: ablated logits differ from the reference (%.3g)",
                  archs[a], ref_rel_error(logits, ref + 11 * V, tail));
        CHECK_MSG(ref_rel_error(logits, plain + 11 * V, tail) > 1e-3, "%s: ablation changed nothing", archs[a]);

        /* the setter: clearing gives the plain model, setting again the ablated one, bit for bit */
        float *ablated = malloc(tail * sizeof *ablated);
        memcpy(ablated, logits, tail * sizeof *ablated);
        CHECK(sac_context_set_ablation(f.ctx, SAC_ATTENTION_SELF, NULL, 0) == SAC_OK);
        CHECK(sac_context_ablated(f.ctx, SAC_ATTENTION_SELF, 0, 1) == 0);
        sac_context_reset(f.ctx);
        CHECK(eval_prompt(f.ctx, NULL));
        CHECK(ref_rel_error(sac_logits(f.ctx, NULL, NULL), plain + 11 * V, tail) <= 1e-4);
        CHECK(sac_context_set_ablation(f.ctx, SAC_ATTENTION_SELF, mask, 8) == SAC_OK);
        sac_context_reset(f.ctx);
        CHECK(eval_prompt(f.ctx, NULL));
        CHECK(!memcmp(sac_logits(f.ctx, NULL, NULL), ablated, tail * sizeof *ablated));
        /* refusals */
        CHECK(sac_context_set_ablation(f.ctx, SAC_ATTENTION_SELF, mask, 7) == SAC_ERR_ARG);
        CHECK(strstr(sac_context_errmsg(f.ctx), "2 layers x 4 heads") != NULL);
        CHECK(sac_context_set_ablation(f.ctx, SAC_ATTENTION_CROSS, mask, 8) == SAC_ERR_ARG);
        CHECK(sac_context_set_ablation(f.ctx, (sac_attention_kind)7, NULL, 0) == SAC_ERR_ARG);
        /* the CLIs' text form: the same mask, and readable refusals that change nothing */
        CHECK(sac_context_set_ablation(f.ctx, SAC_ATTENTION_SELF, NULL, 0) == SAC_OK);
        CHECK(sac_context_set_ablation_spec(f.ctx, SAC_ATTENTION_SELF, "0:1,1:0,1:3") == SAC_OK);
        for (int lh = 0; lh < 8; lh++) CHECK(sac_context_ablated(f.ctx, SAC_ATTENTION_SELF, lh / 4, lh % 4) == mask[lh]);
        const char *bad[] = {"0:4", "2:0", "0:1,", "0-1", ":1", "0:1,,1:0", "01:1x", "99999999999:0"};
        for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
            CHECK_MSG(sac_context_set_ablation_spec(f.ctx, SAC_ATTENTION_SELF, bad[b]) == SAC_ERR_ARG, "'%s' accepted", bad[b]);
            CHECK(sac_context_ablated(f.ctx, SAC_ATTENTION_SELF, 0, 1) == 1);
        }
        CHECK(strstr(sac_context_errmsg(f.ctx), "layer:head") != NULL || strstr(sac_context_errmsg(f.ctx), "out of range"));
        CHECK(sac_context_set_ablation_spec(f.ctx, SAC_ATTENTION_SELF, "") == SAC_OK);
        CHECK(sac_context_ablated(f.ctx, SAC_ATTENTION_SELF, 0, 1) == 0);
        free(ablated);
        free(ref);
        free(plain);
        teardown(&f);
    }
}

/* Encoder–decoder: cross and encoder scores and q/k, and cross-attention ablation. */
static void test_encdec_kinds(void) {
    static const int32_t src[] = {12, 40, 7, 7, 81, 3, 60, 22};
    const int n_src = (int)(sizeof src / sizeof *src);
    fixture f;
    if (!setup(&f, "encdec", 2, NULL)) return teardown(&f);
    const test_model_spec *s = &f.tm.ref.spec;
    const int H = s->n_head, hd = s->n_embd / H;
    CHECK(sac_encode(f.ctx, src, n_src, NULL) == SAC_OK);
    CHECK(sac_eval(f.ctx, prompt, 6, NULL, 0) == SAC_OK);
    const sac_attention_kind kinds[] = {SAC_ATTENTION_CROSS, SAC_ATTENTION_ENCODER};
    const int rows[] = {6, n_src}, layers[] = {s->n_layer, s->n_enc_layer};
    static float qv[64 * 64], kv[64 * 64], out[64];
    const float scale = sac_attention_scale(f.model);
    for (int k = 0; k < 2; k++) {
        const float *scores, *probs;
        size_t n_s, n_p;
        CHECK(sac_attention_scores_rows(f.ctx, kinds[k], 0, rows[k], &scores, &n_s) == SAC_OK);
        CHECK(sac_attention_rows(f.ctx, kinds[k], 0, rows[k], &probs, &n_p) == SAC_OK);
        CHECK(n_s == n_p && n_s == (size_t)rows[k] * layers[k] * H * n_src);
        double worst = 0;
        int same = 1;
        for (int l = 0; l < layers[k]; l++)
            for (int h = 0; h < H; h++) {
                int32_t nq, nk, d;
                CHECK(sac_context_qk(f.ctx, kinds[k], l, h, qv, sizeof qv / 4, kv, sizeof kv / 4, &nq, &nk, &d) == SAC_OK);
                CHECK(nq == rows[k] && nk == n_src && d == hd);
                for (int q = 0; q < nq; q++) {
                    const size_t at = ((size_t)q * layers[k] * H + (size_t)l * H + h) * n_src;
                    CHECK(sac_softmax_row(scores + at, n_src, 1.0f, out) == SAC_OK);
                    same &= !memcmp(out, probs + at, (size_t)n_src * sizeof *out);
                    for (int j = 0; j < nk; j++) {
                        double dot = 0;
                        for (int e = 0; e < d; e++) dot += (double)qv[q * d + e] * kv[j * d + e];
                        worst = fmax(worst, fabs(dot * scale - scores[at + j]));
                    }
                }
            }
        CHECK_MSG(worst <= 1e-4 && same, "kind %d: q.k differs by %.3g, softmax same %d", (int)kinds[k], worst, same);
    }
    /* ablating every cross-attention head changes the logits */
    const float *l0 = sac_logits(f.ctx, NULL, NULL);
    float before[128];
    CHECK(s->n_vocab <= 128);
    memcpy(before, l0, (size_t)s->n_vocab * sizeof *before);
    uint8_t all[64];
    memset(all, 1, sizeof all);
    CHECK(sac_context_set_ablation(f.ctx, SAC_ATTENTION_CROSS, all, (size_t)s->n_layer * H) == SAC_OK);
    CHECK(sac_encode(f.ctx, src, n_src, NULL) == SAC_OK);
    CHECK(sac_eval(f.ctx, prompt, 6, NULL, 0) == SAC_OK);
    CHECK(memcmp(before, sac_logits(f.ctx, NULL, NULL), (size_t)s->n_vocab * sizeof *before) != 0);
    teardown(&f);
}

static void test_refusals_and_sizes(void) {
    test_model tm;
    test_model_spec s = test_spec("gpt2", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    sac_context_params p = sac_context_default_params();
    p.capture_attention = 1;
    const uint64_t base = sac_context_memory(m, &p);
    p.capture_scores = 1;
    const uint64_t with_scores = sac_context_memory(m, &p);
    p.capture_qk = 1;
    const uint64_t with_qk = sac_context_memory(m, &p);
    const uint64_t capture = (uint64_t)s.n_layer * s.n_head * s.n_ctx * (s.n_ctx + 1) / 2 * 4;
    CHECK_MSG(with_scores - base == capture, "scores add %llu bytes, the capture is %llu",
              (unsigned long long)(with_scores - base), (unsigned long long)capture);
    CHECK(with_qk - with_scores == (uint64_t)s.n_layer * s.n_ctx * s.n_embd * 2 * 4);

    /* without the parameters: a readable refusal */
    p = sac_context_default_params();
    p.capture_attention = 1;
    sac_context *ctx = NULL;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    CHECK(sac_eval(ctx, prompt, 4, NULL, 0) == SAC_OK);
    CHECK(sac_attention_scores_rows(ctx, SAC_ATTENTION_SELF, 0, 4, NULL, NULL) == SAC_ERR_STATE);
    CHECK(strstr(sac_context_errmsg(ctx), "capture_scores") != NULL);
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, 0, 0, NULL, 0, NULL, 0, NULL, NULL, NULL) == SAC_ERR_STATE);
    CHECK(strstr(sac_context_errmsg(ctx), "capture_qk") != NULL);
    /* score capture turned on later: refused for the rows before, then the softmax of the scores */
    CHECK(sac_attention_scores_enable(ctx, 1) == SAC_OK);
    CHECK(sac_attention_scores_rows(ctx, SAC_ATTENTION_SELF, 0, 4, NULL, NULL) == SAC_ERR_STATE);
    CHECK(strstr(sac_context_errmsg(ctx), "before score capture began") != NULL);
    sac_context_reset(ctx);
    CHECK(sac_eval(ctx, prompt, 3, NULL, 0) == SAC_OK && sac_eval(ctx, prompt + 3, 3, NULL, 0) == SAC_OK);
    const float *lsc, *pr;
    size_t n_sc = 0, n_pr = 0;
    CHECK(sac_attention_scores_rows(ctx, SAC_ATTENTION_SELF, 0, 6, &lsc, &n_sc) == SAC_OK);
    CHECK(sac_attention_rows(ctx, SAC_ATTENTION_SELF, 0, 6, &pr, &n_pr) == SAC_OK);
    CHECK(n_sc == n_pr && n_sc == (size_t)s.n_layer * s.n_head * 21);
    float row6[6];
    const size_t last = n_sc - (size_t)s.n_layer * s.n_head * 6;
    CHECK(sac_softmax_row(lsc + last, 6, 1.0f, row6) == SAC_OK && !memcmp(row6, pr + last, sizeof row6));
    CHECK(sac_attention_scores_enable(ctx, 0) == SAC_OK);
    CHECK(sac_attention_scores_rows(ctx, SAC_ATTENTION_SELF, 0, 6, NULL, NULL) == SAC_ERR_STATE);
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, s.n_layer, 0, NULL, 0, NULL, 0, NULL, NULL, NULL) == SAC_ERR_ARG);
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_CROSS, 0, 0, NULL, 0, NULL, 0, NULL, NULL, NULL) == SAC_ERR_ARG);
    sac_context_free(ctx);
    p.capture_qk = 1;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, 0, 0, NULL, 0, NULL, 0, NULL, NULL, NULL) == SAC_ERR_STATE);
    CHECK(sac_eval(ctx, prompt, 4, NULL, 0) == SAC_OK);
    float small[16];
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, 0, 0, small, 16, NULL, 0, NULL, NULL, NULL) == SAC_ERR_ARG);
    sac_context_free(ctx);

    /* q/k capture turned on later: refused until the tokens are evaluated again, then the same
     * vectors as a context made with it */
    p.capture_qk = 0;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    CHECK(sac_eval(ctx, prompt, 6, NULL, 0) == SAC_OK);
    CHECK(sac_context_capture_qk(ctx, 1) == SAC_OK);
    CHECK(sac_eval(ctx, prompt + 6, 2, NULL, 0) == SAC_OK);
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, 0, 0, NULL, 0, NULL, 0, NULL, NULL, NULL) == SAC_ERR_STATE);
    CHECK(strstr(sac_context_errmsg(ctx), "before q/k capture began") != NULL);
    sac_context_reset(ctx);
    CHECK(sac_eval(ctx, prompt, 8, NULL, 0) == SAC_OK);
    static float late[8 * 16], early[8 * 16];
    int32_t nq = 0, hd = 0;
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, 1, 2, late, 8 * 16, NULL, 0, &nq, NULL, &hd) == SAC_OK);
    CHECK(nq == 8 && hd == 16);
    sac_context *made = NULL;
    p.capture_qk = 1;
    CHECK(sac_context_new(m, &p, &made) == SAC_OK);
    CHECK(sac_eval(made, prompt, 8, NULL, 0) == SAC_OK);
    CHECK(sac_context_qk(made, SAC_ATTENTION_SELF, 1, 2, early, 8 * 16, NULL, 0, NULL, NULL, NULL) == SAC_OK);
    CHECK(!memcmp(late, early, sizeof late));
    CHECK(sac_context_capture_qk(ctx, 0) == SAC_OK);
    CHECK(sac_context_qk(ctx, SAC_ATTENTION_SELF, 0, 0, NULL, 0, NULL, 0, NULL, NULL, NULL) == SAC_ERR_STATE);
    sac_context_free(made);
    sac_context_free(ctx);

    /* the row softmax: temperature, masks and refusals */
    const float sc[4] = {1.0f, -INFINITY, 3.0f, 2.0f};
    float out[4], hot[4];
    CHECK(sac_softmax_row(sc, 4, 1.0f, out) == SAC_OK);
    CHECK(out[1] == 0.0f);
    CHECK_NEAR(out[0] + out[1] + out[2] + out[3], 1.0, 1e-6);
    CHECK_NEAR(out[2] / out[3], exp(1.0), 1e-5);
    CHECK(sac_softmax_row(sc, 4, 2.0f, hot) == SAC_OK);
    CHECK_NEAR(hot[2] / hot[3], exp(0.5), 1e-5);
    const float none[2] = {-INFINITY, -INFINITY}, nan2[2] = {0.0f, NAN};
    CHECK(sac_softmax_row(none, 2, 1.0f, out) == SAC_ERR_ARG);
    CHECK(sac_softmax_row(nan2, 2, 1.0f, out) == SAC_ERR_ARG);
    CHECK(sac_softmax_row(sc, 4, 0.0f, out) == SAC_ERR_ARG);
    CHECK(sac_softmax_row(sc, 4, 1e-40f, out) == SAC_ERR_ARG); /* 1/τ = ∞: it gave NaN and SAC_OK */
    CHECK(sac_softmax_row(sc, 4, 1e-37f, hot) == SAC_OK && hot[2] == 1.0f && hot[0] == 0.0f && hot[3] == 0.0f);
    CHECK(sac_softmax_row(sc, 0, 1.0f, out) == SAC_ERR_ARG);
    CHECK(sac_attention_scale(NULL) == 0.0f);
    sac_model_free(m);
    test_model_free(&tm);
}

int main(void) {
    RUN(test_scores_match_reference);
    RUN(test_ablation_matches_reference);
    RUN(test_encdec_kinds);
    RUN(test_refusals_and_sizes);
    return check_summary("test_probe");
}
