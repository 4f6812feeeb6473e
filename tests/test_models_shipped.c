/* test_models_shipped.c — the model files in models/ (run from the repository root):
 *
 *   models/dates-q8_0.gguf             loads as "encdec" and translates a fixed list of dates,
 *                                      in every format the generator writes, to ISO 8601;
 *   models/shakespeare-char-q8_0.gguf  loads as "gpt2" and its loss through the engine on the
 *                                      test slice of ../shared/data/tinyshakespeare.txt (the
 *                                      first 16 validation windows of 128 characters) is the
 *                                      one its card in models/README.md states, within 0.05,
 *                                      and below 1.8 nats (a uniform guess over its 66 tokens
 *                                      is 4.19; character bigrams alone give ~2.5).
 *
 * A test whose file is absent is skipped, with the reason. The card's number is read from the
 * "## Model A" section of models/README.md: the first number after "test-slice loss:" (the
 * lead writes it from `build/tools/train --data ../shared/data/tinyshakespeare.txt
 * --eval-model models/shakespeare-char-q8_0.gguf --ctx 128 --eval-windows 16`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data.h"
#include "encdec.h"
#include "eval_gguf.h"
#include "files.h"
#include "saccade.h"

#define DATES_MODEL "models/dates-q8_0.gguf"
#define SHAKESPEARE_MODEL "models/shakespeare-char-q8_0.gguf"
#define SHAKESPEARE_TEXT "../shared/data/tinyshakespeare.txt"
#define CARDS "models/README.md"
#define SLICE_WINDOWS 16
#define SLICE_LEN 128

static void test_dates_model_translates(void) {
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"sat 21 nov 2026", "2026-11-21"},         {"November 21st, 2026", "2026-11-21"},
        {"21/11/26", "2026-11-21"},                {"11/21/2026", "2026-11-21"},
        {"Sunday, 20 July 1969", "1969-07-20"},    {"20th of July '69", "1969-07-20"},
        {"SAT 1 JAN 2000", "2000-01-01"},          {"01.01.2000", "2000-01-01"},
        {"Dec 31, 1999", "1999-12-31"},            {"31-Dec-99", "1999-12-31"},
        {"thursday, feb 29th, 2024", "2024-02-29"}, {"2024/2/29", "2024-02-29"},
        {"1 January 1950", "1950-01-01"},          {"Friday 31 December 2049", "2049-12-31"},
        {"14/03/85", "1985-03-14"},                {"3-14-1985", "1985-03-14"},
        {"Fri, Oct. 5, 2012", "2012-10-05"},       {"the 5th of october 2012", "2012-10-05"},
        {"16 august 1977", "1977-08-16"},          {"9.6.31", "2031-06-09"},
        {"April 30 1964", "1964-04-30"},           {"2049-12-31", "2049-12-31"},
    };
    size_t size;
    void *bytes = test_read_file(DATES_MODEL, &size);
    if (!bytes) SKIP(DATES_MODEL " is absent (make models writes it)");
    sac_model *model = NULL;
    sac_context *ctx = NULL;
    sac_status st = sac_model_load(bytes, size, SAC_LOAD_TAKE_OWNERSHIP, &model);
    CHECK_MSG(st == SAC_OK, "%s", sac_model_errmsg(model));
    sac_context_params p = sac_context_default_params();
    if (st == SAC_OK) {
        sac_model_info info;
        sac_model_get_info(model, &info);
        CHECK(!strcmp(info.architecture, "encdec") && info.n_encoder_layer > 0 && info.has_tokenizer);
        st = sac_context_new(model, &p, &ctx);
        CHECK(st == SAC_OK);
    }
    int wrong = 0;
    for (size_t i = 0; st == SAC_OK && i < sizeof cases / sizeof cases[0]; i++) {
        char out[64];
        sac_error err = {0};
        CHECK_MSG(encdec_translate(model, ctx, cases[i].in, out, sizeof out, &err) == SAC_OK, "%s", err.msg);
        if (strcmp(out, cases[i].want)) {
            wrong++;
            CHECK_MSG(0, "'%s' → '%s', want %s", cases[i].in, out, cases[i].want);
        }
    }
    CHECK(wrong == 0);
    sac_context_free(ctx);
    sac_model_free(model);
}

/* The first number after "test-slice loss:" in the "## Model A" section of the cards; -1 when
 * there is none. */
static double card_slice_loss(const char *cards) {
    const char *section = strstr(cards, "## Model A");
    if (!section) return -1.0;
    const char *next = strstr(section + 1, "\n## ");
    const char *at = strstr(section, "test-slice loss:");
    if (!at || (next && at > next)) return -1.0;
    at += strlen("test-slice loss:");
    while (*at && *at != '\n' && !(*at >= '0' && *at <= '9')) at++;
    char *end;
    const double v = strtod(at, &end);
    return end == at ? -1.0 : v;
}

static void test_shakespeare_model_loss(void) {
    size_t size, cards_size;
    void *bytes = test_read_file(SHAKESPEARE_MODEL, &size);
    if (!bytes) SKIP(SHAKESPEARE_MODEL " is absent (make models writes it)");
    char_dataset d;
    sac_error err = {0};
    if (char_dataset_load(SHAKESPEARE_TEXT, 0.9, &d, &err) != SAC_OK) {
        free(bytes);
        SKIP(SHAKESPEARE_TEXT " is absent");
    }
    char *cards = test_read_file(CARDS, &cards_size);
    const double stated = cards ? card_slice_loss(cards) : -1.0;
    CHECK_MSG(stated > 0, "%s has no \"test-slice loss: <number>\" line in its \"## Model A\" section", CARDS);
    double loss = 0.0;
    CHECK_MSG(eval_gguf_val_loss(bytes, size, &d, SLICE_LEN, 2, SLICE_WINDOWS, &loss, &err) == SAC_OK, "%s", err.msg);
    CHECK_MSG(loss < 1.8, "test-slice loss %.4f: the model has not learned the text", loss);
    if (stated > 0)
        CHECK_MSG(loss > stated - 0.05 && loss < stated + 0.05, "test-slice loss %.4f, the card says %.4f", loss,
                  stated);
    free(cards);
    free(bytes);
    char_dataset_free(&d);
}

int main(void) {
    RUN(test_dates_model_translates);
    RUN(test_shakespeare_model_loss);
    return check_summary("test_models_shipped");
}
