/* test_encdec.c — the encoder–decoder architecture ("encdec") against the float64 reference:
 * logits (F32 within 1e-4 relative, Q8_0 within 3e-2 as in test_model.c), the three kinds of
 * captured attention (within 1e-5), cached decoding, threads, source padding, and errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reference.h"
#include "saccade.h"
#include "types.h"

static const int32_t src[] = {12, 40, 7, 7, 81, 3, 60, 22, 95, 1, 33};
static const int32_t tgt[] = {2, 9, 14, 50, 50, 71, 6, 30};
#define N_SRC ((int)(sizeof src / sizeof *src))
#define N_TGT ((int)(sizeof tgt / sizeof *tgt))

typedef struct fixture {
    test_model tm;
    sac_model *model;
    sac_context *ctx;
} fixture;

static int setup(fixture *f, uint32_t type, int threads, int capture) {
    memset(f, 0, sizeof *f);
    test_model_spec s = test_spec("encdec", type);
    CHECK(test_model_make(&s, &f->tm) == 0);
    sac_status st = sac_model_load(f->tm.bytes, f->tm.size, 0, &f->model);
    CHECK_MSG(st == SAC_OK, "%s", sac_model_errmsg(f->model));
    sac_context_params p = sac_context_default_params();
    p.n_threads = threads;
    p.capture_attention = capture;
    if (st == SAC_OK) st = sac_context_new(f->model, &p, &f->ctx);
    CHECK_MSG(st == SAC_OK, "%s", f->ctx ? sac_context_errmsg(f->ctx) : "no context");
    return st == SAC_OK;
}

static void teardown(fixture *f) {
    sac_context_free(f->ctx);
    sac_model_free(f->model);
    test_model_free(&f->tm);
}

static void check_logits(uint32_t type, const uint8_t *mask, double tol) {
    fixture f;
    if (!setup(&f, type, 2, 0)) return teardown(&f);
    const int V = f.tm.ref.spec.n_vocab;
    CHECK(sac_encode(f.ctx, src, N_SRC, mask) == SAC_OK);
    CHECK(sac_context_n_source(f.ctx) == N_SRC);
    CHECK(sac_eval(f.ctx, tgt, N_TGT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    double *ref = malloc((size_t)N_TGT * V * sizeof *ref);
    ref_encdec_forward(&f.tm.ref, src, N_SRC, mask, tgt, N_TGT, ref, NULL, NULL, NULL);
    double err = ref_rel_error(sac_logits(f.ctx, NULL, NULL), ref, (size_t)N_TGT * V);
    CHECK_MSG(err <= tol, "%s: relative error %.3g > %g", sac_type_name(type), err, tol);
    free(ref);
    teardown(&f);
}

static void test_logits_match_reference(void) {
    uint8_t mask[N_SRC];
    for (int i = 0; i < N_SRC; i++) mask[i] = i < N_SRC - 3; /* three padding tokens at the end */
    check_logits(SAC_TYPE_F32, NULL, 1e-4);
    check_logits(SAC_TYPE_F32, mask, 1e-4);
    check_logits(SAC_TYPE_F16, mask, 1e-4);
    check_logits(SAC_TYPE_Q8_0, mask, 3e-2);
    check_logits(SAC_TYPE_Q4_0, NULL, 3e-2);
}

static void test_attention_kinds_match_reference(void) {
    fixture f;
    if (!setup(&f, SAC_TYPE_F32, 1, 1)) return teardown(&f);
    const test_model_spec *s = &f.tm.ref.spec;
    const int L = s->n_layer, LE = s->n_enc_layer, H = s->n_head, V = s->n_vocab;
    uint8_t mask[N_SRC];
    for (int i = 0; i < N_SRC; i++) mask[i] = i != 4 && i != 9;
    double *enc = malloc((size_t)LE * H * N_SRC * N_SRC * sizeof *enc);
    double *self = malloc((size_t)L * H * N_TGT * N_TGT * sizeof *self);
    double *cross = malloc((size_t)L * H * N_TGT * N_SRC * sizeof *cross);
    double *logits = malloc((size_t)N_TGT * V * sizeof *logits);
    ref_encdec_forward(&f.tm.ref, src, N_SRC, mask, tgt, N_TGT, logits, enc, self, cross);

    CHECK(sac_encode(f.ctx, src, N_SRC, mask) == SAC_OK);
    /* decode token by token, so capture happens on the cached path */
    for (int t = 0; t < N_TGT; t++) CHECK(sac_eval(f.ctx, tgt + t, 1, NULL, 0) == SAC_OK);
    float *out = malloc((size_t)N_SRC * N_SRC * sizeof *out);
    struct { sac_attention_kind kind; int layers, nq, nk; const double *ref; } kinds[] = {
        {SAC_ATTENTION_ENCODER, LE, N_SRC, N_SRC, enc},
        {SAC_ATTENTION_SELF, L, N_TGT, N_TGT, self},
        {SAC_ATTENTION_CROSS, L, N_TGT, N_SRC, cross},
    };
    for (int k = 0; k < 3; k++) {
        double worst = 0;
        for (int l = 0; l < kinds[k].layers; l++)
            for (int h = 0; h < H; h++) {
                int32_t nq = 0, nk = 0;
                CHECK(sac_attention_get(f.ctx, kinds[k].kind, l, h, out, (size_t)N_SRC * N_SRC, &nq, &nk) == SAC_OK);
                CHECK(nq == kinds[k].nq && nk == kinds[k].nk);
                const double *r = kinds[k].ref + ((size_t)l * H + h) * nq * nk;
                for (int i = 0; i < nq * nk; i++) worst = fmax(worst, fabs(out[i] - r[i]));
            }
        CHECK_MSG(worst <= 1e-5, "attention kind %d differs by %.3g", (int)kinds[k].kind, worst);
    }
    /* padding keys get no cross attention; a cross row holds layer × head × source */
    const float *row;
    int32_t nk;
    CHECK(sac_attention_cross_row(f.ctx, N_TGT - 1, &row, &nk) == SAC_OK && nk == N_SRC);
    for (int lh = 0; lh < L * H; lh++) {
        CHECK(row[lh * N_SRC + 4] == 0.0f && row[lh * N_SRC + 9] == 0.0f);
        double sum = 0;
        for (int j = 0; j < N_SRC; j++) sum += row[lh * N_SRC + j];
        CHECK_NEAR(sum, 1.0, 1e-5);
    }
    CHECK(sac_attention_cross_row(f.ctx, N_TGT, &row, &nk) == SAC_ERR_ARG);
    CHECK(sac_attention_get(f.ctx, SAC_ATTENTION_ENCODER, LE, 0, NULL, 0, NULL, NULL) == SAC_ERR_ARG);
    CHECK(sac_attention_get(f.ctx, (sac_attention_kind)7, 0, 0, NULL, 0, NULL, NULL) == SAC_ERR_ARG);
    free(out); free(enc); free(self); free(cross); free(logits);
    teardown(&f);
}

/* Decoding one token at a time equals one batch; thread counts give identical bits; a new
 * encode starts a new target. */
static void test_cached_decoding_threads_and_reencode(void) {
    float *first = NULL;
    const int threads[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        fixture f;
        if (!setup(&f, SAC_TYPE_Q8_0, threads[k], 0)) { teardown(&f); continue; }
        const int V = f.tm.ref.spec.n_vocab;
        CHECK(sac_encode(f.ctx, src, N_SRC, NULL) == SAC_OK);
        CHECK(sac_eval(f.ctx, tgt, N_TGT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
        size_t bytes = (size_t)N_TGT * V * sizeof(float);
        float *all = malloc(bytes);
        memcpy(all, sac_logits(f.ctx, NULL, NULL), bytes);
        if (!first) first = all;
        else {
            CHECK_MSG(!memcmp(first, all, bytes), "%d threads give other logits", threads[k]);
        }
        /* encode again: the decoder restarts at position 0 */
        CHECK(sac_encode(f.ctx, src, N_SRC, NULL) == SAC_OK);
        CHECK(sac_context_n_past(f.ctx) == 0);
        double worst = 0;
        for (int t = 0; t < N_TGT; t++) {
            CHECK(sac_eval(f.ctx, tgt + t, 1, NULL, 0) == SAC_OK);
            const float *lg = sac_logits(f.ctx, NULL, NULL);
            for (int v = 0; v < V; v++) worst = fmax(worst, fabs(lg[v] - all[(size_t)t * V + v]));
        }
        CHECK_MSG(worst <= 1e-4, "cached decoding differs by %.3g", worst);
        /* keeping no target token keeps the source (as keeping some does): the decoder starts over
         * against it, to the same bits; a reset forgets the source too */
        CHECK(sac_context_truncate(f.ctx, 0) == SAC_OK && sac_context_n_past(f.ctx) == 0);
        CHECK(sac_context_n_source(f.ctx) == N_SRC);
        CHECK_MSG(sac_eval(f.ctx, tgt, N_TGT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK, "%s", sac_context_errmsg(f.ctx));
        CHECK(!memcmp(sac_logits(f.ctx, NULL, NULL), all, bytes));
        sac_context_reset(f.ctx);
        CHECK(sac_context_n_source(f.ctx) == 0 && sac_eval(f.ctx, tgt, 1, NULL, 0) == SAC_ERR_STATE);
        if (all != first) free(all);
        teardown(&f);
    }
    free(first);
}

static void test_errors(void) {
    fixture f;
    if (!setup(&f, SAC_TYPE_F32, 1, 0)) return teardown(&f);
    sac_model_info in;
    sac_model_get_info(f.model, &in);
    CHECK(!strcmp(in.architecture, "encdec") && in.n_encoder_layer == 2 && in.n_layer == 2);
    CHECK(sac_eval(f.ctx, tgt, 1, NULL, 0) == SAC_ERR_STATE);
    CHECK(strstr(sac_context_errmsg(f.ctx), "sac_encode") != NULL);
    uint8_t none[N_SRC] = {0};
    CHECK(sac_encode(f.ctx, src, N_SRC, none) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(f.ctx), "padding") != NULL);
    int32_t bad[2] = {1, 97};
    CHECK(sac_encode(f.ctx, bad, 2, NULL) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(f.ctx), "out of range") != NULL);
    int32_t *long_src = calloc(49, sizeof *long_src);
    CHECK(sac_encode(f.ctx, long_src, 49, NULL) == SAC_ERR_CONTEXT);
    free(long_src);
    CHECK(sac_encode(f.ctx, src, 0, NULL) == SAC_ERR_ARG);
    CHECK(sac_attention_get(f.ctx, SAC_ATTENTION_CROSS, 0, 0, NULL, 0, NULL, NULL) == SAC_ERR_STATE);
    teardown(&f);

    /* decoder-only models have no encoder */
    test_model tm;
    test_model_spec s = test_spec("gpt2", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m;
    sac_context *ctx;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    CHECK(sac_context_new(m, NULL, &ctx) == SAC_OK);
    CHECK(sac_encode(ctx, src, N_SRC, NULL) == SAC_ERR_STATE);
    CHECK(strstr(sac_context_errmsg(ctx), "encoder-decoder") != NULL);
    CHECK(sac_attention_get(ctx, SAC_ATTENTION_CROSS, 0, 0, NULL, 0, NULL, NULL) == SAC_ERR_ARG);
    CHECK(sac_attention_cross_row(ctx, 0, NULL, NULL) == SAC_ERR_STATE);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);

    /* a decoder block without its cross-attention is a named error */
    s = test_spec("encdec", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    for (size_t i = 0; i + 30 < tm.size; i++)
        if (!memcmp(tm.bytes + i, "dec.blk.1.cross_attn_kv.weight", 30)) {
            memcpy(tm.bytes + i, "dec.blk.1.cross_attn_KV", 23);
            break;
        }
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_ERR_MODEL);
    CHECK_MSG(strstr(sac_model_errmsg(m), "missing tensor 'dec.blk.1.cross_attn_kv.weight'") != NULL, "%s",
              sac_model_errmsg(m));
    sac_model_free(m);
    test_model_free(&tm);
}

int main(void) {
    RUN(test_logits_match_reference);
    RUN(test_attention_kinds_match_reference);
    RUN(test_cached_decoding_threads_and_reencode);
    RUN(test_errors);
    return check_summary("test_encdec");
}
