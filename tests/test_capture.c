/* test_capture.c — captured attention in its one layout: every kind read in bulk through
 * sac_attention_rows equals the per-head matrices of sac_attention_get, rows sum to one, bad
 * ranges are refused, and sizes are 64-bit and checked (a capture the build cannot address
 * is refused on every path, never wrapped). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "context.h"
#include "saccade.h"
#include "test_models.h"
#include "types.h"

static const int32_t src[] = {12, 40, 7, 7, 81, 3, 60, 22, 95, 1, 33};
static const int32_t tgt[] = {2, 9, 14, 50, 50, 71, 6, 30, 5, 17, 42, 3, 88};
#define N_SRC ((int)(sizeof src / sizeof *src))
#define N_TGT ((int)(sizeof tgt / sizeof *tgt))

typedef struct fixture {
    test_model tm;
    sac_model *model;
    sac_context *ctx;
} fixture;

/* The model of `s` and a context of 2 threads whose batches of 5 split every eval. */
static int setup(fixture *f, const test_model_spec *s, int capture) {
    memset(f, 0, sizeof *f);
    sac_context_params p = sac_context_default_params();
    p.n_threads = 2;
    p.n_batch = 5;
    p.capture_attention = capture;
    const int ok = !test_model_make(s, &f->tm) && !sac_model_load(f->tm.bytes, f->tm.size, 0, &f->model) &&
                   !sac_context_new(f->model, &p, &f->ctx);
    CHECK_MSG(ok, "setup: %s", f->ctx ? sac_context_errmsg(f->ctx) : sac_model_errmsg(f->model));
    return ok;
}

static void teardown(fixture *f) {
    sac_context_free(f->ctx);
    sac_model_free(f->model);
    test_model_free(&f->tm);
}

/* Reads every row of `kind` in one block and checks it against sac_attention_get's matrices
 * of every layer and head, its length against the layout's formula, and that each
 * (layer, head) row sums to one (rows before `n_zero`, evaluated while capture was off, to 0). */
static void check_rows(sac_context *ctx, sac_attention_kind kind, int n_layers, int H, int nq, int n_src, int n_zero) {
    CHECK_MSG(sac_attention_n_rows(ctx, kind) == nq, "kind %d: %d rows, expected %d", (int)kind,
              sac_attention_n_rows(ctx, kind), nq);
    const float *block = NULL;
    size_t n_floats = 0;
    CHECK(sac_attention_rows(ctx, kind, 0, nq, &block, &n_floats) == SAC_OK);
    size_t expect = 0;
    for (int q = 0; q < nq; q++) expect += (size_t)n_layers * H * (kind == SAC_ATTENTION_SELF ? q + 1 : n_src);
    CHECK_MSG(n_floats == expect, "kind %d: %zu floats, the layout has %zu", (int)kind, n_floats, expect);
    if (!block || n_floats != expect) return;

    const int nk = kind == SAC_ATTENTION_SELF ? nq : n_src;
    float *mat = malloc((size_t)nq * nk * sizeof *mat);
    int mismatches = 0;
    double worst_sum = 0;
    for (int l = 0; l < n_layers; l++)
        for (int h = 0; h < H; h++) {
            int32_t gq = 0, gk = 0;
            CHECK(sac_attention_get(ctx, kind, l, h, mat, (size_t)nq * nk, &gq, &gk) == SAC_OK);
            CHECK(gq == nq && gk == nk);
            const float *row = block;
            for (int q = 0; q < nq; q++) {
                const int keys = kind == SAC_ATTENTION_SELF ? q + 1 : n_src;
                const float *head = row + ((size_t)l * H + h) * keys;
                double sum = 0;
                for (int j = 0; j < nk; j++) {
                    const float want = j < keys ? head[j] : 0.0f;
                    mismatches += memcmp(&mat[(size_t)q * nk + j], &want, sizeof want) != 0;
                    if (j < keys) sum += head[j];
                }
                worst_sum = fmax(worst_sum, fabs(sum - (q < n_zero ? 0.0 : 1.0)));
                row += (size_t)n_layers * H * keys;
            }
        }
    CHECK_MSG(mismatches == 0, "kind %d: %d values of the rows differ from sac_attention_get", (int)kind, mismatches);
    CHECK_MSG(worst_sum <= 1e-5, "kind %d: a row sums to 1 +- %.3g", (int)kind, worst_sum);

    /* a sub-range is the same memory as the matching part of the whole */
    if (nq >= 3) {
        const float *part;
        size_t n_part;
        CHECK(sac_attention_rows(ctx, kind, 1, 3, &part, &n_part) == SAC_OK);
        const size_t first = (size_t)n_layers * H * (kind == SAC_ATTENTION_SELF ? 1 : n_src);
        const size_t two = (size_t)n_layers * H * (kind == SAC_ATTENTION_SELF ? 2 + 3 : 2 * n_src);
        CHECK(part == block + first && n_part == two);
    }
    /* the old per-row readers point at the same rows */
    if (kind != SAC_ATTENTION_ENCODER) {
        const float *one, *row;
        size_t n_one;
        int32_t keys;
        CHECK(sac_attention_rows(ctx, kind, nq - 1, nq, &one, &n_one) == SAC_OK);
        sac_status st = kind == SAC_ATTENTION_SELF ? sac_attention_row(ctx, nq - 1, &row, &keys)
                                                   : sac_attention_cross_row(ctx, nq - 1, &row, &keys);
        CHECK(st == SAC_OK && row == one && n_one == (size_t)n_layers * H * keys);
    }
    /* bad ranges */
    CHECK(sac_attention_rows(ctx, kind, -1, 1, &block, &n_floats) == SAC_ERR_ARG);
    CHECK(sac_attention_rows(ctx, kind, 0, nq + 1, &block, &n_floats) == SAC_ERR_ARG);
    CHECK(strstr(sac_context_errmsg(ctx), "out of range") != NULL);
    CHECK(sac_attention_rows(ctx, kind, 2, 1, &block, &n_floats) == SAC_ERR_ARG);
    CHECK(sac_attention_rows(ctx, kind, nq, nq, &block, &n_floats) == SAC_OK && n_floats == 0);
    free(mat);
}

static void check_kind(sac_context *ctx, sac_attention_kind kind, int n_layers, int H, int nq, int n_src) {
    check_rows(ctx, kind, n_layers, H, nq, n_src, 0);
}

static void test_decoder_only_rows_match_matrices(void) {
    const char *archs[] = {"gpt2", "llama"};
    for (int a = 0; a < 2; a++) {
        fixture f;
        test_model_spec s = test_spec(archs[a], SAC_TYPE_F32);
        if (!setup(&f, &s, 1)) { teardown(&f); continue; }
        uint8_t mask[N_TGT];
        for (int i = 0; i < N_TGT; i++) mask[i] = i % 4 != 2;
        CHECK(sac_eval(f.ctx, tgt, 7, mask, 0) == SAC_OK);
        for (int i = 7; i < N_TGT; i++) CHECK(sac_eval(f.ctx, tgt + i, 1, mask + i, 0) == SAC_OK);
        check_kind(f.ctx, SAC_ATTENTION_SELF, s.n_layer, s.n_head, N_TGT, 0);
        /* kinds a decoder-only model lacks, and kinds that do not exist */
        const float *d;
        size_t n;
        CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_CROSS) == 0);
        CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_ENCODER) == 0);
        CHECK(sac_attention_n_rows(f.ctx, (sac_attention_kind)7) == 0);
        CHECK(sac_attention_rows(f.ctx, SAC_ATTENTION_CROSS, 0, 1, &d, &n) == SAC_ERR_ARG);
        CHECK(sac_attention_rows(f.ctx, (sac_attention_kind)7, 0, 1, &d, &n) == SAC_ERR_ARG);
        CHECK(sac_attention_rows(f.ctx, (sac_attention_kind)-1, 0, 1, &d, &n) == SAC_ERR_ARG);
        /* nothing captured after a reset */
        sac_context_reset(f.ctx);
        CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_SELF) == 0);
        CHECK(sac_attention_rows(f.ctx, SAC_ATTENTION_SELF, 0, 0, &d, &n) == SAC_ERR_STATE);
        teardown(&f);
    }
}

static void test_encdec_rows_match_matrices(void) {
    fixture f;
    test_model_spec s = test_spec("encdec", SAC_TYPE_F32);
    if (!setup(&f, &s, 1)) return teardown(&f);
    uint8_t mask[N_SRC];
    for (int i = 0; i < N_SRC; i++) mask[i] = i != 4 && i != 9;
    CHECK(sac_encode(f.ctx, src, N_SRC, mask) == SAC_OK);
    CHECK(sac_eval(f.ctx, tgt, 6, NULL, 0) == SAC_OK);
    for (int i = 6; i < N_TGT; i++) CHECK(sac_eval(f.ctx, tgt + i, 1, NULL, 0) == SAC_OK);
    check_kind(f.ctx, SAC_ATTENTION_SELF, s.n_layer, s.n_head, N_TGT, N_SRC);
    check_kind(f.ctx, SAC_ATTENTION_CROSS, s.n_layer, s.n_head, N_TGT, N_SRC);
    check_kind(f.ctx, SAC_ATTENTION_ENCODER, s.n_enc_layer, s.n_head, N_SRC, N_SRC);
    /* padding source tokens get no encoder attention from any query */
    const float *enc;
    CHECK(sac_attention_rows(f.ctx, SAC_ATTENTION_ENCODER, 0, N_SRC, &enc, NULL) == SAC_OK);
    for (int q = 0; q < N_SRC; q++)
        for (int lh = 0; lh < s.n_enc_layer * s.n_head; lh++) {
            const float *r = enc + ((size_t)q * s.n_enc_layer * s.n_head + lh) * N_SRC;
            if (q != 4) CHECK(r[4] == 0.0f);
            if (q != 9) CHECK(r[9] == 0.0f);
        }
    /* a new encode with capture off: no encoder rows, and no cross rows until capture is on */
    CHECK(sac_attention_enable(f.ctx, 0) == SAC_OK);
    CHECK(sac_encode(f.ctx, src, 5, NULL) == SAC_OK);
    CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_ENCODER) == 0);
    CHECK(sac_eval(f.ctx, tgt, 2, NULL, 0) == SAC_OK);
    CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_CROSS) == 0);
    CHECK(sac_attention_enable(f.ctx, 1) == SAC_OK);
    CHECK(sac_eval(f.ctx, tgt + 2, 1, NULL, 0) == SAC_OK);
    CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_CROSS) == 3);
    const float *cross;
    size_t n;
    CHECK(sac_attention_rows(f.ctx, SAC_ATTENTION_CROSS, 0, 3, &cross, &n) == SAC_OK);
    CHECK(n == (size_t)3 * s.n_layer * s.n_head * 5);
    for (size_t i = 0; i < n; i++)
        if (i < (size_t)2 * s.n_layer * s.n_head * 5) CHECK(cross[i] == 0.0f); /* rows from before capture */
    teardown(&f);
}

/* ------------------------------------------------------------------------------------------ */
/* Sizes                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* The wasm32 case: 2 layers, 64 heads, 8192 tokens. The full self capture is
 * 2·64·8192·8193/2 floats = 17 181 966 336 bytes; in 32-bit size_t that wraps to 2 MB. The
 * capture computes it exactly and refuses it against a 32-bit build's limit. */
static void test_wasm32_sized_capture_is_refused_not_wrapped(void) {
    sac_capture c;
    sac_capture_init(&c, 2, 0, 64, 8192, 0);
    CHECK(c.limit == SIZE_MAX);
    const uint64_t full = 4ull * 2 * 64 * (8192ull * 8193 / 2);
    CHECK(full == 17181966336ull);
    CHECK_MSG(sac_capture_full_bytes(&c) == full, "%llu", (unsigned long long)sac_capture_full_bytes(&c));
    CHECK((uint32_t)full == 2u * 1024 * 1024); /* what 32-bit arithmetic made of it */
    CHECK(sac_capture_offset(&c, SAC_ATTENTION_SELF, 8192) == full / 4);
    CHECK(sac_capture_offset(&c, SAC_ATTENTION_SELF, 8192) > UINT32_MAX); /* even in floats */
    if (SIZE_MAX > UINT32_MAX) c.limit = UINT32_MAX; /* what wasm32 addresses (its own SIZE_MAX) */
    sac_error err = {0};
    CHECK(sac_capture_start(&c, 0, &err) == SAC_ERR_NOMEM);
    CHECK_MSG(strstr(err.msg, "17181966336 bytes") && strstr(err.msg, "shorter context"), "%s", err.msg);
    CHECK(!c.on && !c.self.data);
    /* 2 layers × 64 heads × 4000 tokens (4.1e9 bytes) fits in 4 GB */
    sac_capture_init(&c, 2, 0, 64, 4000, 0);
    c.limit = UINT32_MAX;
    CHECK(sac_capture_start(&c, 0, &err) == SAC_OK && c.on);
    sac_capture_free(&c);

    /* encdec counts cross and encoder rows too: alone the self rows would fit */
    sac_capture_init(&c, 2, 2, 64, 2048, 1);
    c.limit = UINT32_MAX;
    CHECK(sac_capture_full_bytes(&c) == 4ull * 64 * (2 * (2048ull * 2049 / 2) + 2 * 2048ull * 2048 + 2 * 2048ull * 2048));
    CHECK(sac_capture_start(&c, 0, &err) == SAC_ERR_NOMEM);
    /* sizes beyond 64 bits saturate rather than wrap */
    sac_capture_init(&c, INT32_MAX, 0, INT32_MAX, INT32_MAX, 0);
    CHECK(sac_capture_full_bytes(&c) == UINT64_MAX);
    CHECK(sac_capture_start(&c, 0, &err) == SAC_ERR_NOMEM && strstr(err.msg, "overflows 64 bits"));
}

/* A context whose capture cannot be addressed is refused at creation, before its KV cache
 * is allocated: a llama context of 2^30 tokens needs 2^64 bytes of capture. */
static void test_context_new_refuses_capture_that_cannot_fit(void) {
    test_model tm;
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    sac_context_params p = sac_context_default_params();
    p.n_ctx = 1 << 30;
    p.capture_attention = 1;
    sac_context *ctx = NULL;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_ERR_NOMEM);
    CHECK_MSG(strstr(sac_context_errmsg(ctx), "attention capture") && strstr(sac_context_errmsg(ctx), "shorter context"),
              "%s", sac_context_errmsg(ctx));
    /* the failed handle says so to every call, and reports no length or threads it does not have */
    int32_t tok = 7;
    CHECK(sac_sample(ctx, &tok) == SAC_ERR_STATE && tok == -1);
    CHECK_MSG(!strcmp(sac_context_errmsg(ctx), "the context failed to initialise"), "%s", sac_context_errmsg(ctx));
    CHECK(sac_context_n_ctx(ctx) == 0 && sac_context_n_threads(ctx) == 0);
    sac_context_free(ctx);
    CHECK(sac_context_memory(m, &p) == UINT64_MAX);
    sac_model_free(m);
    test_model_free(&tm);
}

/* sac_attention_enable and the growth inside sac_eval and sac_encode check the same limit
 * (lowered here through the context's capture, as a 32-bit build's would be). */
static void test_enable_eval_and_encode_respect_the_limit(void) {
    fixture f;
    test_model_spec s = test_spec("gpt2", SAC_TYPE_Q8_0);
    if (!setup(&f, &s, 0)) return teardown(&f);
    sac_capture *c = &f.ctx->capture;
    const uint64_t full = sac_capture_full_bytes(c);
    CHECK(full == 4ull * s.n_layer * s.n_head * (48 * 49 / 2));
    CHECK(sac_eval(f.ctx, tgt, 4, NULL, 0) == SAC_OK);
    c->limit = full - 1;
    CHECK(sac_attention_enable(f.ctx, 1) == SAC_ERR_NOMEM);
    CHECK(strstr(sac_context_errmsg(f.ctx), "shorter context") != NULL);
    CHECK(sac_attention_enabled(f.ctx) == 0);
    c->limit = full;
    CHECK(sac_attention_enable(f.ctx, 1) == SAC_OK && sac_attention_enabled(f.ctx) == 1);
    CHECK(sac_eval(f.ctx, tgt + 4, 4, NULL, 0) == SAC_OK);
    CHECK(sac_attention_n_rows(f.ctx, SAC_ATTENTION_SELF) == 8);

    /* growth past the limit fails the eval and changes nothing */
    c->limit = 4 * sac_capture_offset(c, SAC_ATTENTION_SELF, 10);
    CHECK(sac_eval(f.ctx, tgt, 3, NULL, 0) == SAC_ERR_NOMEM);
    CHECK(strstr(sac_context_errmsg(f.ctx), "self-attention capture of 11 rows") != NULL);
    CHECK(sac_context_n_past(f.ctx) == 8 && sac_attention_n_rows(f.ctx, SAC_ATTENTION_SELF) == 8);
    CHECK(sac_eval(f.ctx, tgt, 2, NULL, 0) == SAC_OK);
    c->limit = SIZE_MAX;
    CHECK(sac_eval(f.ctx, tgt, 3, NULL, 0) == SAC_OK);
    check_rows(f.ctx, SAC_ATTENTION_SELF, s.n_layer, s.n_head, 13, 0, 4);
    teardown(&f);

    /* the encoder rows of a new source */
    s = test_spec("encdec", SAC_TYPE_F32);
    if (!setup(&f, &s, 1)) return teardown(&f);
    c = &f.ctx->capture;
    c->limit = 4 * (uint64_t)s.n_enc_layer * s.n_head * N_SRC * N_SRC - 4;
    CHECK(sac_encode(f.ctx, src, N_SRC, NULL) == SAC_ERR_NOMEM);
    CHECK(strstr(sac_context_errmsg(f.ctx), "encoder attention capture") != NULL);
    CHECK(sac_context_n_source(f.ctx) == 0);
    CHECK(sac_eval(f.ctx, tgt, 1, NULL, 0) == SAC_ERR_STATE);
    c->limit = SIZE_MAX;
    CHECK(sac_encode(f.ctx, src, N_SRC, NULL) == SAC_OK);
    CHECK(sac_eval(f.ctx, tgt, 3, NULL, 0) == SAC_OK);
    check_kind(f.ctx, SAC_ATTENTION_ENCODER, s.n_enc_layer, s.n_head, N_SRC, N_SRC);
    check_kind(f.ctx, SAC_ATTENTION_CROSS, s.n_layer, s.n_head, 3, N_SRC);
    teardown(&f);
}

/* A prefill that needs over half the full capture reserves all of it at once: the decode steps
 * after it never copy it again (at depth 2048 the first generation with capture ran 4x slower). */
static void test_growth_past_half_takes_the_full_context(void) {
    fixture f;
    test_model_spec s = test_spec("gpt2", SAC_TYPE_F32);
    if (!setup(&f, &s, 1)) return teardown(&f);
    sac_capture *c = &f.ctx->capture;
    const int32_t n_ctx = sac_context_n_ctx(f.ctx);
    const uint64_t full = sac_capture_offset(c, SAC_ATTENTION_SELF, n_ctx);
    CHECK(sac_eval(f.ctx, tgt, 4, NULL, 0) == SAC_OK);
    CHECK(c->self.cap < full); /* a short prompt stays small */
    int32_t ids[48];
    for (int i = 0; i < 48; i++) ids[i] = tgt[i % 4];
    int32_t rows = 4; /* the first row count whose capture is over half the full one */
    while (2 * sac_capture_offset(c, SAC_ATTENTION_SELF, rows) <= full) rows++;
    const int32_t more = rows - 4;
    CHECK(more > 0 && rows < n_ctx && more <= 48);
    CHECK(sac_eval(f.ctx, ids, more, NULL, 0) == SAC_OK);
    CHECK_MSG(c->self.cap == full, "cap %llu of %llu", (unsigned long long)c->self.cap, (unsigned long long)full);
    const float *data = c->self.data;
    CHECK(sac_eval(f.ctx, ids, 1, NULL, 0) == SAC_OK);
    CHECK(c->self.data == data);
    teardown(&f);
}

/* sac_context_memory counts the capture exactly as the capture does. */
static void test_memory_counts_the_capture(void) {
    const char *archs[] = {"gpt2", "encdec"};
    for (int a = 0; a < 2; a++) {
        test_model tm;
        test_model_spec s = test_spec(archs[a], SAC_TYPE_F32);
        CHECK(test_model_make(&s, &tm) == 0);
        sac_model *m = NULL;
        CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
        sac_context_params p = sac_context_default_params();
        const uint64_t without = sac_context_memory(m, &p);
        p.capture_attention = 1;
        const uint64_t with = sac_context_memory(m, &p);
        sac_capture c;
        sac_capture_init(&c, s.n_layer, s.n_enc_layer, s.n_head, s.n_ctx, a == 1);
        CHECK_MSG(with - without == sac_capture_full_bytes(&c), "%s: %llu", archs[a],
                  (unsigned long long)(with - without));
        sac_model_free(m);
        test_model_free(&tm);
    }
}

int main(void) {
    RUN(test_decoder_only_rows_match_matrices);
    RUN(test_encdec_rows_match_matrices);
    RUN(test_wasm32_sized_capture_is_refused_not_wrapped);
    RUN(test_context_new_refuses_capture_that_cannot_fit);
    RUN(test_enable_eval_and_encode_respect_the_limit);
    RUN(test_growth_past_half_takes_the_full_context);
    RUN(test_memory_counts_the_capture);
    return check_summary("test_capture");
}
