/* test_train_encdec.c — Model B's trainer (scripts/train/encdec.c, dates.c): the gradient of
 * the whole tiny encoder–decoder against finite differences (every tensor), ragged batches
 * against one sequence at a time and threads against none, the exported model against the
 * engine (tokenizer ids, logits through sac_encode/sac_eval within 1e-4 relative at F32 and
 * 3e-2 at Q8_0, greedy decoding token by token), a short training run on a toy task (reversing
 * words) that the engine then solves, and the date generator: the calendar, valid dates,
 * correct weekdays, inputs that an independent parser reads back as the same date, field
 * labels that spell the date, the held-out split, determinism, and the formats it covers.
 *
 * Finite differences as in test_train.c: central differences of the mean cross entropy (summed
 * in double) with h = 2e-2 (the float rounding of the loss is ~1e-7, so the numeric gradient
 * carries ~5e-6 of noise at h = 1e-2; 2e-2 halves it, and the truncation error stays below it);
 * an entry passes when |analytic − numeric| ≤ 2e-4 + 5e-2·|numeric| and each tensor's relative
 * error ‖a − n‖/‖n‖ stays below 3e-3 (measured: at most 6e-4, the cross-attention queries;
 * ~1e-4 for the rest; TEST_TRAIN_VERBOSE=1 prints them). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dates.h"
#include "encdec.h"
#include "optim.h"
#include "quantize.h"
#include "saccade.h"
#include "types.h"

/* ---------------------------------------------------------------------------------------- */
/* The whole model against finite differences                                                */
/* ---------------------------------------------------------------------------------------- */

static encdec_config tiny_config(void) {
    encdec_config c = {11, 8, 16, 2, 2, 2, 32, 1e-5f};
    return c;
}

/* Three sources of different lengths (so that every attention call has its own shape). */
static const int32_t tiny_src[] = {3, 1, 4, 1, 5, /**/ 9, 2, /**/ 6, 5, 3, 5, 8, 9, 7};
static const int32_t tiny_src_len[] = {5, 2, 7};
static const int32_t tiny_tgt_in[] = {0, 2, 7, 1, /**/ 0, 8, 8, 3, /**/ 0, 4, 10, 6};
static const int32_t tiny_tgt_out[] = {2, 7, 1, 10, /**/ 8, 8, 3, 10, /**/ 4, 10, 6, 10};

static encdec_batch tiny_batch(void) {
    encdec_batch b = {3, tiny_src, tiny_src_len, 4, tiny_tgt_in, tiny_tgt_out};
    return b;
}

/* A model whose weights are far from GPT-2's 0.02, so that every path carries a gradient:
 * N(0, 0.3) added to every parameter, N(0, 1) to cross_attn_kv.weight — with keys and values
 * that differ little between source positions, the gradient of the cross-attention queries
 * would be ~15× smaller than the others and drown in float rounding. */
static int tiny_model(encdec_model *m, const encdec_config *c, sac_pool *pool, uint64_t seed) {
    sac_error err;
    if (encdec_build(m, c, 3, 8, 4, pool, &err) != SAC_OK) return 0;
    train_rng rng = train_rng_seed(seed);
    encdec_init(m, &rng);
    encdec_tensor t[ENCDEC_N_TENSORS];
    encdec_tensors(c, t);
    float *p = m->params_memory;
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) {
        const size_t n = encdec_tensor_size(c, &t[i]);
        const double std = strcmp(t[i].name, "cross_attn_kv.weight") ? 0.3 : 1.0;
        for (size_t j = 0; j < n; j++) p[j] += (float)(std * train_rng_normal(&rng));
        p += n;
    }
    return 1;
}

static double model_loss(encdec_model *m) {
    const encdec_batch b = tiny_batch();
    encdec_forward(m, &b);
    double s = 0.0;
    const int64_t n = (int64_t)b.B * b.T;
    for (int64_t i = 0; i < n; i++) s += m->acts.losses[i];
    return s / (double)n;
}

static void test_model_grad(void) {
    const encdec_config cfg = tiny_config();
    encdec_model m;
    CHECK(tiny_model(&m, &cfg, NULL, 10));
    const encdec_batch b = tiny_batch();
    const float loss = encdec_forward(&m, &b);
    encdec_zero_grad(&m);
    encdec_backward(&m);
    CHECK(isfinite(loss) && loss > 0.0f);

    const float h = 2e-2f;
    const double atol = 2e-4, rtol = 5e-2, max_rel = 3e-3;
    encdec_tensor t[ENCDEC_N_TENSORS];
    encdec_tensors(&cfg, t);
    size_t offset = 0;
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) {
        const int64_t n = (int64_t)encdec_tensor_size(&cfg, &t[i]), count = n < 24 ? n : 24;
        float *p = m.params_memory + offset;
        const float *analytic = m.grads_memory + offset;
        double diff2 = 0.0, ref2 = 0.0;
        int64_t failures = 0;
        for (int64_t k = 0; k < count; k++) {
            const int64_t j = count == n ? k : (k * 7919) % n; /* spread over the blocks */
            const float saved = p[j];
            p[j] = saved + h;
            const double up = model_loss(&m);
            p[j] = saved - h;
            const double down = model_loss(&m);
            p[j] = saved;
            const double numeric = (up - down) / (2.0 * h), a = analytic[j];
            if (fabs(a - numeric) > atol + rtol * fabs(numeric)) failures++;
            diff2 += (a - numeric) * (a - numeric);
            ref2 += numeric * numeric;
        }
        const double rel = ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
        const char *stack = t[i].stack == ENCDEC_ENCODER ? "enc." : t[i].stack == ENCDEC_DECODER ? "dec." : "";
        if (getenv("TEST_TRAIN_VERBOSE"))
            printf("  d(%s%s) %lld entries, relative error %.2e\n", stack, t[i].name, (long long)count, rel);
        CHECK_MSG(failures == 0, "d(%s%s): %lld of %lld entries outside tolerance", stack, t[i].name,
                  (long long)failures, (long long)count);
        CHECK_MSG(rel < max_rel, "d(%s%s): relative error %.3g", stack, t[i].name, rel);
        CHECK_MSG(ref2 > 0, "d(%s%s): zero gradient everywhere checked, a vacuous check", stack, t[i].name);
        offset += (size_t)n;
    }
    CHECK(offset == m.n_params);
    encdec_free(&m);
}

/* A packed batch computes what each sequence computes alone, and threads change no bit. */
static void test_ragged_batch_and_threads(void) {
    const encdec_config cfg = tiny_config();
    sac_pool *pool = NULL;
    sac_error err;
    CHECK(sac_pool_new(2, &pool, &err) == SAC_OK);
    encdec_model one, two;
    CHECK(tiny_model(&one, &cfg, NULL, 11) && tiny_model(&two, &cfg, pool, 11));
    const encdec_batch b = tiny_batch();
    const float l1 = encdec_forward(&one, &b), l2 = encdec_forward(&two, &b);
    encdec_zero_grad(&one);
    encdec_zero_grad(&two);
    encdec_backward(&one);
    encdec_backward(&two);
    CHECK(l1 == l2);
    CHECK(memcmp(one.grads_memory, two.grads_memory, one.n_params * sizeof(float)) == 0);

    const int64_t V = cfg.n_vocab, T = b.T;
    float *packed = malloc((size_t)(b.B * T * V) * sizeof(float));
    memcpy(packed, one.acts.logits, (size_t)(b.B * T * V) * sizeof(float));
    int32_t off = 0;
    double worst = 0.0;
    for (int32_t s = 0; s < b.B; s++) {
        const encdec_batch single = {1, tiny_src + off, tiny_src_len + s, (int32_t)T, tiny_tgt_in + s * T, NULL};
        encdec_forward(&one, &single);
        for (int64_t i = 0; i < T * V; i++) worst = fmax(worst, fabs(one.acts.logits[i] - packed[s * T * V + i]));
        off += tiny_src_len[s];
    }
    CHECK_MSG(worst < 1e-5, "a sequence alone differs from the packed batch by %.3g", worst);
    free(packed);
    encdec_free(&one);
    encdec_free(&two);
    sac_pool_free(pool);
}

/* ---------------------------------------------------------------------------------------- */
/* Export: the engine computes what the trainer computes                                     */
/* ---------------------------------------------------------------------------------------- */

typedef struct vocab_store {
    char texts[DATES_N_VOCAB][8];
    const char *tokens[DATES_N_VOCAB];
    int32_t types[DATES_N_VOCAB];
} vocab_store;

static encdec_vocab dates_encdec_vocab(vocab_store *v) {
    dates_vocab(v->texts, v->tokens, v->types);
    encdec_vocab ev = {v->tokens, v->types, DATES_N_VOCAB, DATES_BOS, DATES_EOS, DATES_PAD, DATES_UNK};
    return ev;
}

static double max_rel_diff(const float *a, const float *ref, int64_t n) {
    double diff = 0.0, scale = 0.0;
    for (int64_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - ref[i]));
        scale = fmax(scale, fabs(ref[i]));
    }
    return diff / scale;
}

static void test_export_matches_engine(void) {
    const encdec_config cfg = {DATES_N_VOCAB, 40, 32, 4, 2, 2, 64, 1e-5f};
    encdec_model m;
    sac_error err;
    CHECK(encdec_build(&m, &cfg, 1, DATES_MAX_SRC, DATES_ISO_LEN + 1, NULL, &err) == SAC_OK);
    train_rng rng = train_rng_seed(12);
    encdec_init(&m, &rng);
    for (size_t i = 0; i < m.n_params; i++) m.params_memory[i] += (float)(0.1 * train_rng_normal(&rng));

    date_pair pair;
    dates_render(&rng, (date_ymd){2026, 11, 21}, DATES_NAME_DMY, &pair);
    int32_t src[DATES_MAX_SRC], n_src, tgt_in[DATES_ISO_LEN + 1], tgt_out[DATES_ISO_LEN + 1];
    dates_encode_pair(&pair, src, &n_src, tgt_in, tgt_out);
    const encdec_batch b = {1, src, &n_src, DATES_ISO_LEN + 1, tgt_in, tgt_out};
    encdec_forward(&m, &b);

    vocab_store vs;
    const encdec_vocab vocab = dates_encdec_vocab(&vs);
    uint8_t *bytes = NULL, *q8 = NULL;
    size_t size = 0, q8_size = 0;
    CHECK(encdec_export_gguf(&m, "test encdec", &vocab, &bytes, &size, &err) == SAC_OK);
    sac_model *model = NULL;
    CHECK_MSG(sac_model_load(bytes, size, 0, &model) == SAC_OK, "%s", sac_model_errmsg(model));
    sac_model_info info;
    sac_model_get_info(model, &info);
    CHECK(!strcmp(info.architecture, "encdec") && info.n_vocab == DATES_N_VOCAB && info.n_layer == 2 &&
          info.n_encoder_layer == 2 && info.n_embd == 32 && info.n_head == 4 && info.n_ff == 64 && info.n_ctx == 40 &&
          info.tied_output == 1 && info.has_tokenizer == 1);
    CHECK(info.n_params == m.n_params);
    CHECK(sac_token_bos(model) == DATES_BOS && sac_token_eos(model) == DATES_EOS && !sac_token_add_bos(model));

    /* the engine's tokenizer gives the generator's ids; control tokens decode to nothing */
    int32_t ids[64], n_ids = 0;
    CHECK(sac_tokenize(model, pair.src, strlen(pair.src), 0, ids, 64, &n_ids) == SAC_OK && n_ids == n_src);
    CHECK(memcmp(ids, src, (size_t)n_src * sizeof *ids) == 0);
    CHECK(sac_tokenize(model, "1é", strlen("1é"), 0, ids, 64, &n_ids) == SAC_OK && n_ids == 2 && ids[1] == DATES_UNK);
    const char *piece;
    size_t piece_len;
    CHECK(sac_token_bytes(model, DATES_EOS, &piece, &piece_len) == SAC_OK && piece_len == 0);
    CHECK(sac_token_bytes(model, dates_token('7'), &piece, &piece_len) == SAC_OK && piece_len == 1 && *piece == '7');

    /* teacher-forced logits: trainer vs engine, F32 and Q8_0 */
    sac_context *ctx = NULL;
    sac_context_params cp = sac_context_default_params();
    CHECK(sac_context_new(model, &cp, &ctx) == SAC_OK);
    CHECK(sac_encode(ctx, src, n_src, NULL) == SAC_OK);
    CHECK(sac_eval(ctx, tgt_in, DATES_ISO_LEN + 1, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    int32_t rows = 0, V = 0;
    const float *logits = sac_logits(ctx, &rows, &V);
    CHECK(rows == DATES_ISO_LEN + 1 && V == DATES_N_VOCAB);
    const int64_t n_logits = (int64_t)(DATES_ISO_LEN + 1) * DATES_N_VOCAB;
    double rel = max_rel_diff(logits, m.acts.logits, n_logits);
    CHECK_MSG(rel <= 1e-4, "engine vs trainer logits (F32): relative difference %.3g", rel);

    CHECK(quantize_gguf(bytes, size, SAC_TYPE_Q8_0, &q8, &q8_size, NULL, &err) == SAC_OK);
    sac_model *qmodel = NULL;
    sac_context *qctx = NULL;
    CHECK(sac_model_load(q8, q8_size, 0, &qmodel) == SAC_OK && sac_context_new(qmodel, &cp, &qctx) == SAC_OK);
    CHECK(sac_encode(qctx, src, n_src, NULL) == SAC_OK);
    CHECK(sac_eval(qctx, tgt_in, DATES_ISO_LEN + 1, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    rel = max_rel_diff(sac_logits(qctx, NULL, NULL), m.acts.logits, n_logits);
    CHECK_MSG(rel <= 3e-2 && rel > 0, "engine vs trainer logits (Q8_0): relative difference %.3g", rel);

    /* greedy decoding through the engine, token by token: each token is the trainer's argmax
     * given the ones before (either of the top two when they are within 1e-3 of each other),
     * and encdec_translate writes the characters of the same tokens */
    int32_t dec[41] = {DATES_BOS}, n_dec = 1;
    sac_sampling_params sp = sac_sampling_default_params();
    sp.temperature = 0.0f;
    CHECK(sac_encode(ctx, src, n_src, NULL) == SAC_OK && sac_sampler_init(ctx, &sp) == SAC_OK);
    while (n_dec <= 40 && dec[n_dec - 1] != DATES_EOS && sac_context_n_past(ctx) < 40) {
        CHECK(sac_eval(ctx, &dec[n_dec - 1], 1, NULL, 0) == SAC_OK && sac_sample(ctx, &dec[n_dec]) == SAC_OK);
        n_dec++;
    }
    char want[48] = "";
    for (int32_t t = 1, k = 0; t < n_dec && dec[t] != DATES_EOS; t++)
        if (dec[t] >= DATES_FIRST_CHAR) want[k++] = (char)(0x20 + dec[t] - DATES_FIRST_CHAR);
    char out[64];
    CHECK_MSG(encdec_translate(model, ctx, pair.src, out, sizeof out, &err) == SAC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(out, want), "encdec_translate wrote '%s', the tokens spell '%s'", out, want);
    CHECK(n_dec > 5); /* a random model rarely stops early: there is something to compare */
    encdec_model m2;
    CHECK(encdec_build(&m2, &cfg, 1, DATES_MAX_SRC, 40, NULL, &err) == SAC_OK);
    memcpy(m2.params_memory, m.params_memory, m.n_params * sizeof(float));
    const int32_t n_in = n_dec - 1 < 40 ? n_dec - 1 : 40; /* positions that emitted a token */
    const encdec_batch gb = {1, src, &n_src, n_in, dec, NULL};
    encdec_forward(&m2, &gb);
    for (int32_t t = 0; t < n_in; t++) {
        const float *row = m2.acts.logits + (int64_t)t * DATES_N_VOCAB;
        int32_t best = 0, second = 1;
        if (row[1] > row[0]) best = 1, second = 0;
        for (int32_t v = 2; v < DATES_N_VOCAB; v++) {
            if (row[v] > row[best]) second = best, best = v;
            else if (row[v] > row[second]) second = v;
        }
        const int close = row[best] - row[second] < 1e-3f * fabsf(row[best]);
        CHECK_MSG(dec[t + 1] == best || (close && dec[t + 1] == second),
                  "decoder position %d: the engine chose %d, the trainer's argmax is %d", t, dec[t + 1], best);
    }
    encdec_free(&m2);

    sac_context_free(qctx);
    sac_model_free(qmodel);
    sac_context_free(ctx);
    sac_model_free(model);
    free(bytes);
    free(q8);
    encdec_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
/* Training: a toy task the engine then solves                                               */
/* ---------------------------------------------------------------------------------------- */

/* Reverse a word of 3–6 letters from "abcdef": a task that needs cross-attention to find the
 * right source position for every output character. */
static void toy_batch(train_rng *rng, int32_t B, int32_t *src, int32_t *src_len, int32_t *tgt_in, int32_t *tgt_out,
                      int32_t *T, char words[][8]) {
    const int32_t len = 3 + (int32_t)train_rng_below(rng, 4);
    *T = len + 1;
    for (int32_t b = 0; b < B; b++) {
        src_len[b] = len;
        tgt_in[b * *T] = DATES_BOS;
        for (int32_t i = 0; i < len; i++) {
            const char c = (char)('a' + train_rng_below(rng, 6));
            if (words) words[b][i] = c;
            src[b * len + i] = dates_token(c);
        }
        if (words) words[b][len] = '\0';
        for (int32_t i = 0; i < len; i++) {
            tgt_out[b * *T + i] = src[b * len + len - 1 - i];
            tgt_in[b * *T + i + 1] = tgt_out[b * *T + i];
        }
        tgt_out[b * *T + len] = DATES_EOS;
    }
}

static void test_training_then_engine(void) {
    const encdec_config cfg = {DATES_N_VOCAB, 8, 32, 4, 1, 1, 64, 1e-5f};
    const int32_t B = 16, steps = 500;
    encdec_model m;
    sac_error err;
    CHECK(encdec_build(&m, &cfg, B, 6, 7, NULL, &err) == SAC_OK);
    train_rng rng = train_rng_seed(13);
    encdec_init(&m, &rng);
    float *adam_m = calloc(m.n_params, sizeof(float)), *adam_v = calloc(m.n_params, sizeof(float));
    const adamw_config ac = {0.9f, 0.98f, 1e-8f, 0.0f};
    const lr_schedule sched = {3e-3f, 3e-4f, 20, steps};
    int32_t src[16 * 6], src_len[16], tgt_in[16 * 7], tgt_out[16 * 7], T;
    double first = 0.0, last = 0.0;
    for (int32_t step = 0; step < steps; step++) {
        toy_batch(&rng, B, src, src_len, tgt_in, tgt_out, &T, NULL);
        const encdec_batch b = {B, src, src_len, T, tgt_in, tgt_out};
        const float loss = encdec_forward(&m, &b);
        if (step < 10) first += loss / 10.0;
        if (step >= steps - 10) last += loss / 10.0;
        encdec_zero_grad(&m);
        encdec_backward(&m);
        clip_grad_norm(m.grads_memory, m.n_params, 1.0f);
        adamw_update(NULL, m.params_memory, m.grads_memory, adam_m, adam_v, m.n_params, step + 1, lr_at(&sched, step),
                     &ac, 0);
    }
    if (getenv("TEST_TRAIN_VERBOSE")) printf("  toy task: loss %.3f → %.3f\n", first, last);
    CHECK_MSG(first > 1.5 && last < 0.05, "toy training: loss %.3f → %.3f (wants < 0.05)", first, last);

    /* through the engine: greedy translation of fresh words */
    vocab_store vs;
    const encdec_vocab vocab = dates_encdec_vocab(&vs);
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK(encdec_export_gguf(&m, "toy", &vocab, &bytes, &size, &err) == SAC_OK);
    sac_model *model = NULL;
    sac_context *ctx = NULL;
    sac_context_params cp = sac_context_default_params();
    CHECK(sac_model_load(bytes, size, 0, &model) == SAC_OK && sac_context_new(model, &cp, &ctx) == SAC_OK);
    char words[16][8];
    int correct = 0, total = 0;
    for (int round = 0; round < 4; round++) {
        toy_batch(&rng, B, src, src_len, tgt_in, tgt_out, &T, words);
        for (int32_t b = 0; b < B; b++) {
            char out[16], want[8];
            const size_t len = strlen(words[b]);
            for (size_t i = 0; i < len; i++) want[i] = words[b][len - 1 - i];
            want[len] = '\0';
            CHECK(encdec_translate(model, ctx, words[b], out, sizeof out, &err) == SAC_OK);
            correct += !strcmp(out, want);
            total++;
        }
    }
    CHECK_MSG(correct >= total * 19 / 20, "the engine reverses %d of %d words", correct, total);
    sac_context_free(ctx);
    sac_model_free(model);
    free(bytes);
    free(adam_m);
    free(adam_v);
    encdec_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
/* The date generator                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* An independent calendar: walk day by day from 1950-01-01, a Sunday (6 with Monday = 0). */
typedef struct calendar {
    date_ymd days[40000];
    int weekday[40000];
    int n;
} calendar;

static int month_length(int y, int m) {
    if (m == 2) return (y % 400 == 0 || (y % 4 == 0 && y % 100 != 0)) ? 29 : 28;
    return (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
}

static void calendar_make(calendar *c) {
    c->n = 0;
    for (int y = DATES_YEAR_MIN; y <= DATES_YEAR_MAX; y++)
        for (int m = 1; m <= 12; m++)
            for (int d = 1; d <= month_length(y, m); d++) {
                c->days[c->n] = (date_ymd){y, m, d};
                c->weekday[c->n] = (6 + c->n) % 7;
                c->n++;
            }
}

/* Index of a date in the calendar, or -1. */
static int calendar_index(date_ymd d) {
    if (d.year < DATES_YEAR_MIN || d.year > DATES_YEAR_MAX || d.month < 1 || d.month > 12 || d.day < 1 ||
        d.day > month_length(d.year, d.month))
        return -1;
    int n = 0;
    for (int y = DATES_YEAR_MIN; y < d.year; y++) n += 365 + (month_length(y, 2) == 29);
    for (int m = 1; m < d.month; m++) n += month_length(d.year, m);
    return n + d.day - 1;
}

static void test_calendar(void) {
    static calendar cal;
    calendar_make(&cal);
    CHECK(cal.n == 36525);
    int bad = 0;
    for (int i = 0; i < cal.n; i++) {
        const date_ymd d = cal.days[i];
        bad += !dates_is_valid(d) || dates_weekday(d) != cal.weekday[i] ||
               dates_days_from_civil(d) - dates_days_from_civil(cal.days[0]) != i;
        const date_ymd back = dates_civil_from_days(dates_days_from_civil(d));
        bad += back.year != d.year || back.month != d.month || back.day != d.day;
    }
    CHECK_MSG(bad == 0, "%d calendar disagreements", bad);
    /* known days: 1969-07-20 was a Sunday, 2000-01-01 a Saturday, 2026-11-21 a Saturday */
    CHECK(dates_weekday((date_ymd){1969, 7, 20}) == 6 && dates_weekday((date_ymd){2000, 1, 1}) == 5 &&
          dates_weekday((date_ymd){2026, 11, 21}) == 5);
    CHECK(!dates_is_valid((date_ymd){2023, 2, 29}) && dates_is_valid((date_ymd){2024, 2, 29}) &&
          !dates_is_valid((date_ymd){2000, 4, 31}) && dates_is_valid((date_ymd){2000, 2, 29}) &&
          !dates_is_valid((date_ymd){1949, 12, 31}) && !dates_is_valid((date_ymd){2050, 1, 1}));
}

/* An independent reader of the inputs, following the conventions of dates.h: names and
 * ordinals in any case, numbers day-first unless the year is first or the first number cannot
 * be a month, two-digit years 50–99 → 19xx. Returns 0 when the text is not one date. */
typedef struct parsed {
    date_ymd date;
    int weekday; /* -1 when none is written */
} parsed;

static int name_index(const char *w, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(w, names[i]) || (strlen(w) == 3 && !strncmp(w, names[i], 3))) return i;
    return -1;
}

static int parse_date(const char *text, parsed *out) {
    char s[64];
    size_t n = strlen(text);
    if (n >= sizeof s) return 0;
    for (size_t i = 0; i <= n; i++) s[i] = (char)tolower((unsigned char)text[i]);
    int month = -1, weekday = -1, n_num = 0, nums[3] = {0}, digits[3] = {0};
    char *save = NULL;
    for (char *w = strtok_r(s, " ,/-.'", &save); w; w = strtok_r(NULL, " ,/-.'", &save)) {
        if (isalpha((unsigned char)w[0])) {
            int i;
            if (!strcmp(w, "the") || !strcmp(w, "of")) continue;
            if (!strcmp(w, "sept")) w[3] = '\0';
            if ((i = name_index(w, dates_month_names, 12)) >= 0 && month < 0) month = i + 1;
            else if ((i = name_index(w, dates_weekday_names, 7)) >= 0 && weekday < 0) weekday = i;
            else return 0;
            continue;
        }
        char *end;
        const long v = strtol(w, &end, 10);
        if (end == w || n_num == 3) return 0;
        if (*end) { /* an ordinal: the right suffix, on a day */
            const long r = v % 100 >= 11 && v % 100 <= 13 ? 0 : v % 10;
            const char *want = r == 1 ? "st" : r == 2 ? "nd" : r == 3 ? "rd" : "th";
            if (strcmp(end, want)) return 0;
        }
        nums[n_num] = (int)v;
        digits[n_num++] = (int)(end - w);
    }
    date_ymd d;
    int year_digits;
    if (month > 0) {
        if (n_num != 2) return 0;
        d = (date_ymd){nums[1], month, nums[0]};
        year_digits = digits[1];
    } else {
        if (n_num != 3) return 0;
        if (digits[0] == 4) d = (date_ymd){nums[0], nums[1], nums[2]};
        else if (nums[0] <= 12 && nums[1] > 12) d = (date_ymd){nums[2], nums[0], nums[1]};
        else d = (date_ymd){nums[2], nums[1], nums[0]};
        year_digits = digits[0] == 4 ? 4 : digits[2];
    }
    if (year_digits == 2) d.year += d.year >= 50 ? 1900 : 2000;
    else if (year_digits != 4) return 0;
    out->date = d;
    out->weekday = weekday;
    return calendar_index(d) >= 0;
}

static int contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

static int contains_nocase(const char *s, const char *what) {
    char low[64];
    size_t i = 0;
    for (; s[i] && i + 1 < sizeof low; i++) low[i] = (char)tolower((unsigned char)s[i]);
    low[i] = '\0';
    return strstr(low, what) != NULL;
}

/* The bytes labelled 'd', 'm', 'y', 'w' spell the day, the month (number or name), the year
 * (four digits or the last two) and the weekday's name, each in one piece. */
static int fields_agree(const date_pair *p) {
    char part[4][DATES_MAX_SRC + 1] = {{0}};
    const char labels[4] = {'d', 'm', 'y', 'w'};
    for (int f = 0; f < 4; f++) {
        size_t n = 0, first = 0, last = 0;
        for (size_t i = 0; p->src[i]; i++)
            if (p->fields[i] == labels[f]) {
                if (!n) first = i;
                last = i;
                part[f][n++] = (char)tolower((unsigned char)p->src[i]);
            }
        if (n && last - first + 1 != n) return 0; /* not contiguous */
        if (strlen(p->fields) != strlen(p->src)) return 0;
    }
    if (atoi(part[0]) != p->date.day || !isdigit((unsigned char)part[0][0])) return 0;
    if (isdigit((unsigned char)part[1][0]) ? atoi(part[1]) != p->date.month
                                           : strncmp(part[1], dates_month_names[p->date.month - 1], 3))
        return 0;
    if (atoi(part[2]) != (strlen(part[2]) == 4 ? p->date.year : p->date.year % 100)) return 0;
    return !part[3][0] || !strncmp(part[3], dates_weekday_names[dates_weekday(p->date)], 3);
}

/* Every input reads back as its date, with its real weekday; within the limits of dates.h. */
static void test_generator_inputs(void) {
    static calendar cal;
    calendar_make(&cal);
    train_rng rng = train_rng_seed(14);
    int bad_read = 0, bad_weekday = 0, bad_text = 0, bad_fields = 0, with_weekday = 0, month_first = 0;
    for (int i = 0; i < 40000; i++) {
        date_pair p;
        dates_sample(&rng, i % 2 ? DATES_TEST : DATES_TRAIN, &p);
        char iso[16];
        snprintf(iso, sizeof iso, "%04d-%02d-%02d", p.date.year, p.date.month, p.date.day);
        const size_t len = strlen(p.src);
        int printable = len >= 6 && len <= DATES_MAX_SRC;
        for (size_t k = 0; k < len; k++) printable &= p.src[k] >= 0x20 && p.src[k] <= 0x7E;
        bad_text += !printable || strcmp(iso, p.iso) != 0 || calendar_index(p.date) < 0;
        parsed r;
        if (!parse_date(p.src, &r) || r.date.year != p.date.year || r.date.month != p.date.month ||
            r.date.day != p.date.day) {
            if (bad_read++ < 5) fprintf(stderr, "  '%s' does not read as %s\n", p.src, p.iso);
            continue;
        }
        if (r.weekday >= 0) {
            with_weekday++;
            bad_weekday += r.weekday != cal.weekday[calendar_index(p.date)];
        }
        month_first += p.format == DATES_NUM_MDY;
        bad_fields += !fields_agree(&p);
    }
    CHECK_MSG(bad_text == 0, "%d pairs with a bad text, ISO form or date", bad_text);
    CHECK_MSG(bad_read == 0, "%d of 40000 inputs do not read back as their date", bad_read);
    CHECK_MSG(bad_weekday == 0, "%d of %d weekdays are wrong", bad_weekday, with_weekday);
    CHECK_MSG(bad_fields == 0, "%d inputs whose field labels do not spell their date", bad_fields);
    CHECK(with_weekday > 3000 && month_first > 2000);

    /* the reader itself tells day-first from month-first and rejects wrong weekdays' company */
    parsed r;
    CHECK(parse_date("11/21/2026", &r) && r.date.month == 11 && r.date.day == 21);
    CHECK(parse_date("05/06/26", &r) && r.date.month == 6 && r.date.day == 5 && r.date.year == 2026);
    CHECK(parse_date("Sat, 21st of Nov. '26", &r) && r.date.day == 21 && r.weekday == 5);
    CHECK(!parse_date("21th nov 2026", &r) && !parse_date("31/11/2026", &r));
}

/* Held-out days never reach training; a seed gives the same pairs every time. */
static void test_generator_split(void) {
    static unsigned char seen[36525];
    memset(seen, 0, sizeof seen);
    train_rng rng = train_rng_seed(15);
    for (int i = 0; i < 100000; i++) {
        date_pair p;
        dates_sample(&rng, DATES_TRAIN, &p);
        seen[calendar_index(p.date)] |= 1;
    }
    for (int i = 0; i < 20000; i++) {
        date_pair p;
        dates_sample(&rng, DATES_TEST, &p);
        seen[calendar_index(p.date)] |= 2;
    }
    int both = 0, test_days = 0, train_days = 0, held_out = 0;
    for (int i = 0; i < 36525; i++) {
        both += seen[i] == 3;
        test_days += (seen[i] & 2) != 0;
        train_days += (seen[i] & 1) != 0;
    }
    static calendar cal;
    calendar_make(&cal);
    for (int i = 0; i < cal.n; i++) held_out += dates_is_held_out(cal.days[i]);
    CHECK_MSG(both == 0, "%d days drawn for both splits", both);
    CHECK_MSG(held_out > 3300 && held_out < 4000, "%d held-out days of 36525 (want ~10%%)", held_out);
    CHECK_MSG(test_days > 3000 && train_days > 30000, "days drawn: %d test, %d train", test_days, train_days);

    train_rng a = train_rng_seed(16), b = train_rng_seed(16), c = train_rng_seed(17);
    int same = 1, differs = 0;
    for (int i = 0; i < 200; i++) {
        date_pair pa, pb, pc;
        dates_sample(&a, DATES_TEST, &pa);
        dates_sample(&b, DATES_TEST, &pb);
        dates_sample(&c, DATES_TEST, &pc);
        same &= !strcmp(pa.src, pb.src) && !strcmp(pa.iso, pb.iso);
        differs += strcmp(pa.src, pc.src) != 0;
    }
    CHECK(same && differs > 150);
}

/* The inputs cover what people write: every format, every month and weekday name, full and
 * abbreviated, ordinals, separators, two- and four-digit years, three letter cases, extra
 * spaces. */
static void test_generator_coverage(void) {
    int formats[DATES_N_FORMATS] = {0}, months_full[12] = {0}, months_abbr[12] = {0}, days_full[7] = {0},
        days_abbr[7] = {0};
    int features[20] = {0};
    const char *ordinals[] = {"1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"};
    int ordinal_seen[11] = {0};
    train_rng rng = train_rng_seed(18);
    for (int i = 0; i < 30000; i++) {
        date_pair p;
        dates_sample(&rng, DATES_TRAIN, &p);
        formats[p.format]++;
        const char *s = p.src;
        for (int m = 0; m < 12; m++) {
            char abbr[5] = {0};
            memcpy(abbr, dates_month_names[m], 3);
            if (contains_nocase(s, dates_month_names[m])) months_full[m]++;
            if (!contains_nocase(s, dates_month_names[m]) || m == 4) months_abbr[m] += contains_nocase(s, abbr);
        }
        for (int d = 0; d < 7; d++) {
            char abbr[5] = {0};
            memcpy(abbr, dates_weekday_names[d], 3);
            if (contains_nocase(s, dates_weekday_names[d])) days_full[d]++;
            else if (contains_nocase(s, abbr)) days_abbr[d]++;
        }
        for (int k = 0; k < 11; k++) {
            char with_space[8];
            snprintf(with_space, sizeof with_space, " %s", ordinals[k]);
            ordinal_seen[k] += contains_nocase(s, with_space) || !strncmp(s, ordinals[k], strlen(ordinals[k]));
        }
        int upper = 0, lower = 0, title = 0;
        for (size_t k = 0; s[k]; k++) {
            if (isupper((unsigned char)s[k])) {
                if (k == 0 || s[k - 1] == ' ') title++;
                else upper++;
            }
            if (islower((unsigned char)s[k])) lower++;
        }
        const size_t len = strlen(s);
        features[0] += lower > 0 && upper == 0 && title == 0;          /* lower case */
        features[1] += title > 0 && upper == 0;                        /* Title Case */
        features[2] += upper > 0 && lower == 0;                        /* UPPER CASE */
        features[3] += contains(s, "  ");                              /* double space */
        features[4] += s[0] == ' ' || s[len - 1] == ' ';               /* leading/trailing space */
        features[5] += contains(s, "'");                               /* '26 */
        features[6] += contains_nocase(s, "sept");
        features[7] += contains_nocase(s, " of ");
        features[8] += contains_nocase(s, "the ");
        features[9] += p.format == DATES_NUM_DMY && contains(s, "/");
        features[10] += p.format == DATES_NUM_DMY && contains(s, "-");
        features[11] += p.format == DATES_NUM_DMY && contains(s, ".");
        features[12] += p.format == DATES_NUM_MDY && contains(s, "/");
        features[13] += p.format == DATES_NUM_MDY && contains(s, ".");
        features[14] += p.format == DATES_NUM_YMD && contains(s, "-");
        features[15] += p.format != DATES_NUM_YMD && len >= 2 && isdigit((unsigned char)s[len - 1]) &&
                        isdigit((unsigned char)s[len - 2]) && (len < 3 || !isdigit((unsigned char)s[len - 3]));
        features[16] += len >= 4 && isdigit((unsigned char)s[len - 4]) && isdigit((unsigned char)s[len - 1]) &&
                        isdigit((unsigned char)s[len - 3]) && isdigit((unsigned char)s[len - 2]);
        features[17] += contains(s, ",");
        features[18] += contains_nocase(s, ".") && !isdigit((unsigned char)s[0]); /* "Nov." */
        features[19] += p.format == DATES_NUM_DMY && (s[0] == '0' || s[1] == '0');
    }
    for (int f = 0; f < DATES_N_FORMATS; f++) CHECK_MSG(formats[f] > 1000, "format %d: %d inputs", f, formats[f]);
    for (int m = 0; m < 12; m++)
        CHECK_MSG(months_full[m] > 100 && months_abbr[m] > 100, "%s: %d full, %d abbreviated", dates_month_names[m],
                  months_full[m], months_abbr[m]);
    for (int d = 0; d < 7; d++)
        CHECK_MSG(days_full[d] > 100 && days_abbr[d] > 100, "%s: %d full, %d abbreviated", dates_weekday_names[d],
                  days_full[d], days_abbr[d]);
    for (int k = 0; k < 11; k++) CHECK_MSG(ordinal_seen[k] > 10, "ordinal %s: %d", ordinals[k], ordinal_seen[k]);
    for (int f = 0; f < 20; f++) CHECK_MSG(features[f] > 50, "feature %d: %d inputs", f, features[f]);
}

int main(void) {
    RUN(test_model_grad);
    RUN(test_ragged_batch_and_threads);
    RUN(test_export_matches_engine);
    RUN(test_training_then_engine);
    RUN(test_calendar);
    RUN(test_generator_inputs);
    RUN(test_generator_split);
    RUN(test_generator_coverage);
    return check_summary("test_train_encdec");
}
