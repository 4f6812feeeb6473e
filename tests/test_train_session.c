/* test_train_session.c — the training session the JS library's train() and the native tool
 * train_task drive (scripts/train/session.c), and the arithmetic-only exp/log/tanh that keep
 * native and wasm losses bitwise equal (scripts/train/train_math.h):
 *   - train_exp/train_log/train_tanhf against libm over their ranges (relative 4e-16 in double;
 *     the float results within one ulp of libm's double results rounded to float — glibc's own
 *     tanhf is 2 ulp off in places), and their special values;
 *   - options: unknown names, ranges and fractions refused with the reason; start refuses
 *     shapes that cannot work (embd not a multiple of heads, a context too short, no text);
 *   - reversal learns (loss and exact match), 1 and 2 threads give the same losses bit for bit;
 *   - a probe's cross-attention rows are distributions over the source, and the exported model
 *     decodes in the engine what the trainer decodes;
 *   - the text task: a causal probe, an exported model the engine tokenizes and runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "encdec.h"
#include "saccade.h"
#include "session.h"
#include "train_math.h"

/* ---------------------------------------------------------------------------------------- */
/* train_math.h                                                                              */
/* ---------------------------------------------------------------------------------------- */

static double rel_err(double a, double b) { return b == 0 ? fabs(a) : fabs(a - b) / fabs(b); }

static int within_one_ulp(float a, float b) {
    if (a == b) return 1;
    return nextafterf(b, INFINITY) == a || nextafterf(b, -INFINITY) == a;
}

static void test_math(void) {
    double worst_exp = 0, worst_log = 0;
    int bad_f = 0;
    for (int i = 0; i <= 200000; i++) {
        const double x = -700.0 + 1409.0 * i / 200000.0; /* normal results */
        worst_exp = fmax(worst_exp, rel_err(train_exp(x), exp(x)));
        const double y = exp(-700.0 + 1400.0 * i / 200000.0);
        worst_log = fmax(worst_log, rel_err(train_log(y), log(y)) * (fabs(log(y)) < 1e-3 ? 0 : 1));
        const float xf = (float)(-30.0 + 60.0 * i / 200000.0);
        bad_f += !within_one_ulp(train_expf(xf), (float)exp(xf)) + !within_one_ulp(train_tanhf(xf), (float)tanh(xf));
        const float yf = (float)(1e-30 + 1e5 * i / 200000.0);
        bad_f += !within_one_ulp(train_logf(yf), (float)log(yf));
    }
    for (int i = 1; i < 2000; i++) { /* near 1, where log is small and tanh near 0 */
        const double y = 1.0 + (i - 1000) * 1e-6;
        CHECK_MSG(fabs(train_log(y) - log(y)) < 1e-18 + 4e-16 * fabs(log(y)), "log(%.9g)", y);
        const float u = (float)((i - 1000) * 1e-6);
        bad_f += !within_one_ulp(train_tanhf(u), (float)tanh(u));
    }
    CHECK_MSG(worst_exp < 4e-16, "exp: worst relative error %.3g", worst_exp);
    CHECK_MSG(worst_log < 4e-16, "log: worst relative error %.3g", worst_log);
    CHECK_MSG(bad_f == 0, "%d float results more than one ulp from libm's", bad_f);
    CHECK(train_exp(800) == HUGE_VAL && train_exp(-800) == 0.0 && isnan(train_exp(NAN)));
    CHECK(train_log(0) == -HUGE_VAL && isnan(train_log(-1)) && train_log(1) == 0.0);
    CHECK(train_tanhf(30) == 1.0f && train_tanhf(-30) == -1.0f && train_tanhf(0) == 0.0f);
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_options(void) {
    sac_train *t;
    CHECK(sac_train_new("juggle", &t) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "unknown task 'juggle'"), "%s", sac_train_errmsg(t));
    sac_train_free(t);

    CHECK(sac_train_new("reverse", &t) == SAC_OK);
    CHECK(sac_train_set(t, "embd", 64) == SAC_OK && sac_train_get(t, "embd") == 64);
    CHECK(sac_train_set(t, "layerz", 2) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "unknown option 'layerz'"), "%s", sac_train_errmsg(t));
    CHECK(sac_train_set(t, "heads", 2.5) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "heads must be an integer"), "%s", sac_train_errmsg(t));
    CHECK(sac_train_set(t, "lr", -1) == SAC_ERR_ARG && sac_train_set(t, "lr", NAN) == SAC_ERR_ARG);
    CHECK(sac_train_set(t, "layers", 3) == SAC_OK && sac_train_get(t, "enc_layers") == 3 &&
          sac_train_get(t, "dec_layers") == 3);
    float loss;
    CHECK(sac_train_step(t, &loss) == SAC_ERR_STATE);
    CHECK(sac_train_set(t, "heads", 3) == SAC_OK && sac_train_start(t) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "multiple of heads"), "%s", sac_train_errmsg(t));
    CHECK(sac_train_set(t, "heads", 4) == SAC_OK && sac_train_set(t, "max_len", 40) == SAC_OK &&
          sac_train_start(t) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "ctx 32 is too short"), "%s", sac_train_errmsg(t));
    CHECK(sac_train_set(t, "max_len", 3) == SAC_OK && sac_train_start(t) == SAC_ERR_ARG); /* min_len 4 > 3 */
    CHECK(sac_train_set(t, "embd", 4096) == SAC_OK && sac_train_set(t, "batch", 4096) == SAC_OK &&
          sac_train_set(t, "min_len", 3) == SAC_OK && sac_train_start(t) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "GB"), "%s", sac_train_errmsg(t));
    sac_train_free(t);

    CHECK(sac_train_new("text", &t) == SAC_OK && sac_train_start(t) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "needs a text"), "%s", sac_train_errmsg(t));
    CHECK(sac_train_set_text(t, "x", ((size_t)256 << 20) + 1) == SAC_ERR_ARG);
    CHECK(sac_train_set_text(t, "a text of forty characters, no more ....", 40) == SAC_OK && sac_train_start(t) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "too short"), "%s", sac_train_errmsg(t));
    sac_train_free(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Reversal                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* A small reversal run: strings of 6 letters, one block each side. */
static sac_train *small_reverse(int threads, int steps) {
    sac_train *t;
    const char *names[] = {"layers", "embd", "heads", "batch", "min_len", "max_len", "lr", "steps", "val_n", "threads"};
    const double values[] = {1, 32, 4, 16, 6, 6, 5e-3, steps, 64, threads};
    if (sac_train_new("reverse", &t)) return t;
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (sac_train_set(t, names[i], values[i])) return t;
    sac_train_start(t);
    return t;
}

static void test_reverse_learns(void) {
    sac_train *t = small_reverse(1, 180);
    CHECK_MSG(sac_train_get(t, "params") > 0, "%s", sac_train_errmsg(t));
    float loss = 0, first = 0, last = 0, val, exact;
    CHECK(sac_train_evaluate(t, &val, &exact) == SAC_OK && exact == 0.0f);
    for (int s = 0; s < 180; s++) {
        CHECK(sac_train_step(t, &loss) == SAC_OK);
        if (s < 10) first += loss / 10;
        if (s >= 170) last += loss / 10;
    }
    CHECK(sac_train_evaluate(t, &val, &exact) == SAC_OK);
    CHECK_MSG(first > 2.5 && last < 0.3 && val < 0.3 && exact > 0.5,
              "loss %.3f → %.3f, held-out loss %.3f, exact %.2f", first, last, val, exact);
    CHECK(sac_train_get(t, "step") == 180 && sac_train_get(t, "tokens") == 180.0 * 16 * 13);

    /* the probe: greedy decoding, cross-attention rows that sum to 1 over the 6 source letters */
    CHECK(sac_train_probe(t, "abcdef", 6) == SAC_OK);
    const int32_t L = sac_train_probe_dim(t, 1), H = sac_train_probe_dim(t, 2), Q = sac_train_probe_dim(t, 3),
                  K = sac_train_probe_dim(t, 4);
    CHECK(sac_train_probe_dim(t, 0) == 1 && L == 1 && H == 4 && K == 6 && Q >= 1 && Q <= 7);
    const float *maps = sac_train_probe_maps(t);
    for (int32_t r = 0; r < L * H * Q; r++) {
        double sum = 0;
        for (int32_t k = 0; k < K; k++) sum += maps[r * K + k];
        CHECK_NEAR(sum, 1.0, 1e-5);
    }
    size_t size;
    const char *keys = sac_train_probe_labels(t, 1, &size);
    CHECK(size == 12 && !strcmp(keys, "a") && !strcmp(keys + 10, "f"));
    const char *output = sac_train_probe_output(t);
    CHECK_MSG(!strcmp(output, "fedcba"), "probe 'abcdef' → '%s'", output);

    /* the exported model decodes the same in the engine, at F32 and at Q8_0 */
    const char *types[] = {"f32", "q8_0"};
    for (int i = 0; i < 2; i++) {
        uint8_t *bytes;
        CHECK(sac_train_export(t, types[i], NULL, &bytes, &size) == SAC_OK);
        sac_model *model = NULL;
        sac_context *ctx = NULL;
        sac_context_params cp = sac_context_default_params();
        CHECK(sac_model_load(bytes, size, 0, &model) == SAC_OK && sac_context_new(model, &cp, &ctx) == SAC_OK);
        char out[32];
        sac_error err;
        CHECK(ctx && encdec_translate(model, ctx, "abcdef", out, sizeof out, &err) == SAC_OK);
        CHECK_MSG(!strcmp(out, output), "%s: the engine says '%s', the trainer '%s'", types[i], out, output);
        sac_context_free(ctx);
        sac_model_free(model);
        free(bytes);
    }
    uint8_t *none;
    CHECK(sac_train_export(t, "q9_9", NULL, &none, &size) == SAC_ERR_ARG && none == NULL);
    CHECK(sac_train_probe(t, "abcdefghijklmnop", 16) == SAC_ERR_ARG);
    /* sizes are bounded before anything is allocated (the length alone is read) */
    CHECK(sac_train_probe(t, "abc", ((size_t)1 << 20) + 1) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_train_errmsg(t), "at most 1 MB"), "%s", sac_train_errmsg(t));
    CHECK(sac_train_set(t, "lr", 1e-3) == SAC_ERR_STATE);
    sac_train_free(t);
}

static void test_threads_bitwise(void) {
    sac_train *a = small_reverse(1, 20), *b = small_reverse(2, 20);
    int same = 1;
    for (int s = 0; s < 20; s++) {
        float la, lb;
        CHECK(sac_train_step(a, &la) == SAC_OK && sac_train_step(b, &lb) == SAC_OK);
        same &= memcmp(&la, &lb, sizeof la) == 0;
    }
    CHECK_MSG(same, "1 and 2 threads give different losses");
    sac_train_free(a);
    sac_train_free(b);
}

/* ---------------------------------------------------------------------------------------- */
/* The other tasks                                                                           */
/* ---------------------------------------------------------------------------------------- */

static void test_text_task(void) {
    char text[4000];
    for (int i = 0; i < (int)sizeof text - 1; i++) text[i] = "to be or not to be, that is the question. "[i % 42];
    text[sizeof text - 1] = '\0';
    sac_train *t;
    CHECK(sac_train_new("text", &t) == SAC_OK);
    CHECK(sac_train_set(t, "layers", 1) == SAC_OK && sac_train_set(t, "embd", 32) == SAC_OK &&
          sac_train_set(t, "ctx", 16) == SAC_OK && sac_train_set(t, "batch", 8) == SAC_OK &&
          sac_train_set(t, "val_n", 8) == SAC_OK && sac_train_set(t, "lr", 3e-3) == SAC_OK);
    CHECK(sac_train_set_text(t, text, strlen(text)) == SAC_OK && sac_train_start(t) == SAC_OK);
    float loss, first = 0, val, exact;
    for (int s = 0; s < 60; s++) {
        CHECK(sac_train_step(t, &loss) == SAC_OK);
        if (s == 0) first = loss;
    }
    CHECK(sac_train_evaluate(t, &val, &exact) == SAC_OK && exact == -1.0f);
    CHECK_MSG(val < first - 1.0f, "text: loss %.3f, validation %.3f after 60 steps", first, val);

    /* a causal probe over "not é" (é is not in the text: <unk>), labels the characters */
    CHECK(sac_train_probe(t, "not \xc3\xa9", 6) == SAC_OK);
    const int32_t Q = sac_train_probe_dim(t, 3), K = sac_train_probe_dim(t, 4);
    CHECK(sac_train_probe_dim(t, 0) == 0 && Q == 5 && K == 5);
    const float *maps = sac_train_probe_maps(t);
    for (int32_t q = 0; q < Q; q++) {
        double sum = 0;
        for (int32_t k = 0; k < K; k++) {
            sum += maps[q * K + k];
            if (k > q) CHECK(maps[q * K + k] == 0.0f);
        }
        CHECK_NEAR(sum, 1.0, 1e-5);
    }
    size_t size;
    const char *labels = sac_train_probe_labels(t, 0, &size);
    CHECK(size == 11 && !strcmp(labels + 8, "\xc3\xa9"));

    uint8_t *bytes;
    CHECK(sac_train_export(t, "f16", NULL, &bytes, &size) == SAC_OK);
    sac_model *model = NULL;
    CHECK(sac_model_load(bytes, size, 0, &model) == SAC_OK);
    int32_t ids[8], n = 0;
    CHECK(sac_tokenize(model, "to be", 5, 0, ids, 8, &n) == SAC_OK && n == 5);
    sac_model_free(model);
    free(bytes);
    sac_train_free(t);
}

static void test_dates_and_copy(void) {
    const char *tasks[] = {"dates", "copy"};
    for (int i = 0; i < 2; i++) {
        sac_train *t;
        CHECK(sac_train_new(tasks[i], &t) == SAC_OK);
        CHECK(sac_train_set(t, "layers", 1) == SAC_OK && sac_train_set(t, "embd", 32) == SAC_OK &&
              sac_train_set(t, "batch", 8) == SAC_OK && sac_train_set(t, "val_n", 16) == SAC_OK &&
              sac_train_start(t) == SAC_OK);
        float loss, val, exact;
        CHECK(sac_train_step(t, &loss) == SAC_OK && loss > 3.0f && loss < 6.0f);
        CHECK(sac_train_evaluate(t, &val, &exact) == SAC_OK && exact == 0.0f);
        const char *input = i == 0 ? "sat 21 nov 2026" : "hello";
        CHECK(sac_train_probe(t, input, strlen(input)) == SAC_OK);
        CHECK(sac_train_probe_dim(t, 0) == 1 && sac_train_probe_dim(t, 4) == (int32_t)strlen(input));
        CHECK(sac_train_probe_dim(t, 3) >= 1 && sac_train_probe_dim(t, 3) <= (i == 0 ? 11 : 13));
        sac_train_free(t);
    }
}

int main(void) {
    RUN(test_math);
    RUN(test_options);
    RUN(test_reverse_learns);
    RUN(test_threads_bitwise);
    RUN(test_text_task);
    RUN(test_dates_and_copy);
    return check_summary("test_train_session");
}
