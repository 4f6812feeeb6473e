/* session.c — a training run behind one handle: options, the four tasks' data, steps,
 * held-out evaluation, attention probes and export. The encoder–decoder tasks share one
 * model and loop (they differ in the pairs they draw); the text task is the trainer of
 * trainer.h on a char_dataset. */
#include "session.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "dates.h"
#include "encdec.h"
#include "error.h"
#include "optim.h"
#include "quantize.h"
#include "threadpool.h"
#include "trainer.h"
#include "types.h"

typedef enum task_kind { TASK_REVERSE, TASK_COPY, TASK_DATES, TASK_TEXT, N_TASKS } task_kind;
static const char *const task_names[N_TASKS] = {"reverse", "copy", "dates", "text"};

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                   */
/* ---------------------------------------------------------------------------------------- */

enum {
    O_LAYERS, O_ENC_LAYERS, O_DEC_LAYERS, O_EMBD, O_HEADS, O_FF, O_CTX,
    O_BATCH, O_STEPS, O_LR, O_MIN_LR, O_WARMUP, O_WD, O_BETA1, O_BETA2, O_CLIP,
    O_SEED, O_EVAL_SEED, O_THREADS, O_VAL_N, O_MIN_LEN, O_MAX_LEN, N_OPTIONS
};

typedef struct option_spec {
    const char *name;
    double min, max;
    int is_int;
} option_spec;

static const option_spec option_specs[N_OPTIONS] = {
    {"layers", 1, 64, 1},       {"enc_layers", 1, 64, 1},   {"dec_layers", 1, 64, 1},
    {"embd", 2, 4096, 1},       {"heads", 1, 256, 1},       {"ff", 0, 65536, 1},
    {"ctx", 2, 4096, 1},        {"batch", 1, 4096, 1},      {"steps", 1, 1e9, 1},
    {"lr", 1e-9, 1, 0},         {"min_lr", -1, 1, 0},       {"warmup", -1, 1e9, 1},
    {"wd", 0, 10, 0},           {"beta1", 0, 0.999999, 0},  {"beta2", 0, 0.999999, 0},
    {"clip", 0, 1e6, 0},        {"seed", 0, 9007199254740991.0, 1},
    {"eval_seed", 0, 9007199254740991.0, 1},                {"threads", 1, 256, 1},
    {"val_n", 1, 1e6, 1},       {"min_len", 1, 256, 1},     {"max_len", 1, 256, 1},
};

/* Presets sized for a laptop's tab: a few seconds to a few minutes. */
static void default_options(task_kind task, double o[N_OPTIONS]) {
    static const double seq2seq[N_OPTIONS] = {2, 2, 2, 64, 4, 0, 32, 32, 1500, 2e-3, -1, -1, 0.1, 0.9, 0.99, 1.0,
                                              1337, 2026, 1, 256, 4, 12};
    static const double dates[N_OPTIONS] = {2, 2, 2, 128, 4, 0, 40, 64, 3000, 1e-3, -1, -1, 0.1, 0.9, 0.99, 1.0,
                                            1337, 2026, 1, 500, 4, 12};
    static const double text[N_OPTIONS] = {2, 2, 2, 128, 4, 0, 64, 16, 2000, 1e-3, -1, -1, 0.1, 0.9, 0.99, 1.0,
                                           1337, 2026, 1, 64, 4, 12};
    memcpy(o, task == TASK_DATES ? dates : task == TASK_TEXT ? text : seq2seq, sizeof(double) * N_OPTIONS);
}

static int option_index(const char *name) {
    for (int i = 0; i < N_OPTIONS; i++)
        if (!strcmp(option_specs[i].name, name)) return i;
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* The handle                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Encoder–decoder examples, packed: sources one after the other, targets [n][T] by groups of
 * one length. */
typedef struct pair_set {
    int32_t n;
    int32_t *src, *src_off, *src_len; /* Σ src_len, [n + 1], [n] */
    int32_t *tgt_in, *tgt_out, *tgt_off, *tgt_len; /* Σ tgt_len each, [n + 1], [n] */
} pair_set;

struct sac_train {
    task_kind task;
    sac_error err;
    double opt[N_OPTIONS];
    int started;
    sac_pool *pool;
    int64_t step, tokens, step_tokens;
    float last_lr, last_grad_norm;
    float *adam_m, *adam_v;

    /* encoder–decoder tasks */
    encdec_model ed;
    train_rng batch_rng;
    int32_t max_src, max_T;
    int32_t *src, *src_len, *tgt_in, *tgt_out; /* one batch */
    pair_set held;

    /* text */
    char *text;
    size_t text_len;
    char_dataset data;
    int has_data;
    trainer tr;
    int has_trainer;

    /* the last probe */
    int32_t probe_dims[5];
    float *probe_maps;
    char *probe_output;
    char *labels[2];
    size_t labels_size[2];
};

static sac_status fail(sac_train *t, sac_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static sac_status fail(sac_train *t, sac_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err.msg, sizeof t->err.msg, fmt, ap);
    va_end(ap);
    t->err.status = st;
    return st;
}

#define MAX_TEXT_BYTES (256 << 20)
#define MAX_PROBE_BYTES (1 << 20)

static int is_seq2seq(const sac_train *t) { return t->task != TASK_TEXT; }

sac_status sac_train_new(const char *task, sac_train **out) {
    sac_train *t = calloc(1, sizeof *t);
    *out = t;
    if (!t) return SAC_ERR_NOMEM;
    t->task = TASK_REVERSE;
    default_options(TASK_REVERSE, t->opt);
    for (int i = 0; i < N_TASKS; i++)
        if (task && !strcmp(task, task_names[i])) {
            t->task = (task_kind)i;
            default_options(t->task, t->opt);
            return SAC_OK;
        }
    return fail(t, SAC_ERR_ARG, "unknown task '%s' (known: reverse, copy, dates, text)", task ? task : "(null)");
}

static void pair_set_free(pair_set *p) {
    free(p->src);
    free(p->src_off);
    free(p->src_len);
    free(p->tgt_in);
    free(p->tgt_out);
    free(p->tgt_off);
    free(p->tgt_len);
    memset(p, 0, sizeof *p);
}

void sac_train_free(sac_train *t) {
    if (!t) return;
    encdec_free(&t->ed);
    if (t->has_trainer) trainer_free(&t->tr);
    if (t->has_data) char_dataset_free(&t->data);
    pair_set_free(&t->held);
    free(t->src);
    free(t->src_len);
    free(t->tgt_in);
    free(t->tgt_out);
    free(t->adam_m);
    free(t->adam_v);
    free(t->text);
    free(t->probe_maps);
    free(t->probe_output);
    free(t->labels[0]);
    free(t->labels[1]);
    sac_pool_free(t->pool);
    free(t);
}

const char *sac_train_errmsg(const sac_train *t) { return t ? t->err.msg : "out of memory"; }

sac_status sac_train_set(sac_train *t, const char *name, double value) {
    if (t->started) return fail(t, SAC_ERR_STATE, "options are fixed once training has started");
    const int i = name ? option_index(name) : -1;
    if (i < 0) {
        char known[512] = "";
        for (int k = 0; k < N_OPTIONS; k++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", k ? ", " : "", option_specs[k].name);
        return fail(t, SAC_ERR_ARG, "unknown option '%s' (known: %s)", name ? name : "(null)", known);
    }
    const option_spec *s = &option_specs[i];
    if (!(value >= s->min && value <= s->max) || (s->is_int && value != floor(value)))
        return fail(t, SAC_ERR_ARG, "%s must be %s from %g to %g, got %g", s->name, s->is_int ? "an integer" : "a number",
                    s->min, s->max, value);
    t->opt[i] = value;
    if (i == O_LAYERS) t->opt[O_ENC_LAYERS] = t->opt[O_DEC_LAYERS] = value;
    return SAC_OK;
}

double sac_train_get(const sac_train *t, const char *name) {
    if (!t || !name) return NAN;
    const int i = option_index(name);
    if (i >= 0) return t->opt[i];
    if (!strcmp(name, "step")) return (double)t->step;
    if (!strcmp(name, "tokens")) return (double)t->tokens;
    if (!strcmp(name, "step_tokens")) return (double)t->step_tokens;
    if (!strcmp(name, "lr")) return t->last_lr;
    if (!strcmp(name, "grad_norm")) return t->last_grad_norm;
    if (!t->started) return NAN;
    if (!strcmp(name, "params")) return (double)(is_seq2seq(t) ? t->ed.n_params : t->tr.model.n_params);
    if (!strcmp(name, "vocab")) return is_seq2seq(t) ? DATES_N_VOCAB : t->tr.model.config.n_vocab;
    return NAN;
}

sac_status sac_train_set_text(sac_train *t, const char *text, size_t len) {
    if (t->started) return fail(t, SAC_ERR_STATE, "the text is fixed once training has started");
    if (t->task != TASK_TEXT) return fail(t, SAC_ERR_ARG, "only the text task takes a text");
    /* the dataset keeps 8 bytes per character: bounded, so no size wraps in wasm32's size_t */
    if (len > MAX_TEXT_BYTES)
        return fail(t, SAC_ERR_ARG, "the text is %zu bytes; at most %d MB", len, MAX_TEXT_BYTES >> 20);
    char *copy = malloc(len ? len : 1);
    if (!copy) return fail(t, SAC_ERR_NOMEM, "out of memory for a text of %zu bytes", len);
    if (len) memcpy(copy, text, len);
    free(t->text);
    t->text = copy;
    t->text_len = len;
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Encoder–decoder pairs                                                                     */
/* ---------------------------------------------------------------------------------------- */

#define DATES_TGT_LEN (DATES_ISO_LEN + 1)

/* One pair of the task: source ids, decoder inputs (<bos> + target) and outputs (target +
 * <eos>). `len` is the string length for reverse/copy (ignored for dates). Returns T. */
static int32_t draw_pair(const sac_train *t, train_rng *rng, int held_out, int32_t len, int32_t *src, int32_t *n_src,
                         int32_t *tgt_in, int32_t *tgt_out) {
    if (t->task == TASK_DATES) {
        date_pair p;
        dates_sample(rng, held_out ? DATES_TEST : DATES_TRAIN, &p);
        dates_encode_pair(&p, src, n_src, tgt_in, tgt_out);
        return DATES_TGT_LEN;
    }
    char s[257];
    for (int32_t i = 0; i < len; i++) s[i] = (char)('a' + train_rng_below(rng, 26));
    for (int32_t i = 0; i < len; i++) src[i] = dates_token(s[i]);
    *n_src = len;
    tgt_in[0] = DATES_BOS;
    for (int32_t i = 0; i < len; i++) {
        const int32_t id = dates_token(s[t->task == TASK_REVERSE ? len - 1 - i : i]);
        tgt_out[i] = id;
        tgt_in[i + 1] = id;
    }
    tgt_out[len] = DATES_EOS;
    return len + 1;
}

/* reverse/copy: the string length of this step's batch. */
static int32_t draw_len(const sac_train *t, train_rng *rng) {
    const int32_t lo = (int32_t)t->opt[O_MIN_LEN], hi = (int32_t)t->opt[O_MAX_LEN];
    return lo + (int32_t)train_rng_below(rng, hi - lo + 1);
}

/* The held-out pairs: drawn with eval_seed (dates: from the held-out days), reverse/copy
 * spread evenly over the lengths, grouped by length. */
static sac_status make_held_out(sac_train *t) {
    pair_set *p = &t->held;
    const int32_t n = (int32_t)t->opt[O_VAL_N];
    const size_t ns = (size_t)n * (size_t)t->max_src, nt = (size_t)n * (size_t)t->max_T;
    p->n = n;
    p->src = malloc(ns * sizeof(int32_t));
    p->src_off = malloc(((size_t)n + 1) * sizeof(int32_t));
    p->src_len = malloc((size_t)n * sizeof(int32_t));
    p->tgt_in = malloc(nt * sizeof(int32_t));
    p->tgt_out = malloc(nt * sizeof(int32_t));
    p->tgt_off = malloc(((size_t)n + 1) * sizeof(int32_t));
    p->tgt_len = malloc((size_t)n * sizeof(int32_t));
    if (!p->src || !p->src_off || !p->src_len || !p->tgt_in || !p->tgt_out || !p->tgt_off || !p->tgt_len)
        return fail(t, SAC_ERR_NOMEM, "out of memory for %d held-out pairs", n);
    train_rng rng = train_rng_seed((uint64_t)t->opt[O_EVAL_SEED]);
    const int32_t lo = (int32_t)t->opt[O_MIN_LEN], n_lens = (int32_t)t->opt[O_MAX_LEN] - lo + 1;
    p->src_off[0] = p->tgt_off[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        const int32_t len = lo + (int32_t)((int64_t)i * n_lens / n);
        p->tgt_len[i] = draw_pair(t, &rng, 1, len, p->src + p->src_off[i], &p->src_len[i], p->tgt_in + p->tgt_off[i],
                                  p->tgt_out + p->tgt_off[i]);
        p->src_off[i + 1] = p->src_off[i] + p->src_len[i];
        p->tgt_off[i + 1] = p->tgt_off[i] + p->tgt_len[i];
    }
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Start                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Parameters plus the activations the model keeps, in bytes (an upper estimate in double, so
 * that a configuration that cannot fit is refused before any size is computed in size_t). */
static double estimate_bytes(const sac_train *t, int64_t n_vocab) {
    const double C = t->opt[O_EMBD], F = t->opt[O_FF], H = t->opt[O_HEADS], B = t->opt[O_BATCH];
    const double V = (double)n_vocab, L = t->opt[O_ENC_LAYERS] + t->opt[O_DEC_LAYERS] + t->opt[O_LAYERS];
    const double T = is_seq2seq(t) ? (double)(t->max_src > t->max_T ? t->max_src : t->max_T) : t->opt[O_CTX];
    const double params = V * C + t->opt[O_CTX] * C + L * (8 * C * C + 2 * C * F + 16 * C);
    const double acts = B * T * (L * (30 * C + 4 * F + 3 * H * T) + 3 * V + 20 * C);
    return 4.0 * (4.0 * params + 2.0 * acts);
}

static sac_status start_seq2seq(sac_train *t, const encdec_config *c) {
    const int32_t B = (int32_t)t->opt[O_BATCH];
    sac_status st = encdec_build(&t->ed, c, B, t->max_src, t->max_T, t->pool, &t->err);
    if (st) return st;
    t->src = malloc((size_t)B * (size_t)t->max_src * sizeof(int32_t));
    t->src_len = malloc((size_t)B * sizeof(int32_t));
    t->tgt_in = malloc((size_t)B * (size_t)t->max_T * sizeof(int32_t));
    t->tgt_out = malloc((size_t)B * (size_t)t->max_T * sizeof(int32_t));
    t->adam_m = calloc(t->ed.n_params, sizeof(float));
    t->adam_v = calloc(t->ed.n_params, sizeof(float));
    if (!t->src || !t->src_len || !t->tgt_in || !t->tgt_out || !t->adam_m || !t->adam_v)
        return fail(t, SAC_ERR_NOMEM, "out of memory for the optimizer state");
    if ((st = make_held_out(t))) return st;
    /* the streams of train_dates: weights from the seed, pairs from a stream of their own */
    train_rng init = train_rng_seed((uint64_t)t->opt[O_SEED]);
    encdec_init(&t->ed, &init);
    t->batch_rng = train_rng_seed((uint64_t)t->opt[O_SEED] ^ 0xB47C4E5u);
    return SAC_OK;
}

static sac_status start_text(sac_train *t, const gpt2_config *c) {
    train_config tc = train_config_default();
    tc.model = *c;
    tc.batch_size = (int32_t)t->opt[O_BATCH];
    tc.seq_len = c->n_ctx;
    tc.max_steps = (int64_t)t->opt[O_STEPS];
    tc.schedule = (lr_schedule){(float)t->opt[O_LR], (float)t->opt[O_MIN_LR], (int64_t)t->opt[O_WARMUP],
                                (int64_t)t->opt[O_STEPS]};
    tc.adamw = (adamw_config){(float)t->opt[O_BETA1], (float)t->opt[O_BETA2], 1e-8f, (float)t->opt[O_WD]};
    tc.grad_clip = (float)t->opt[O_CLIP];
    tc.seed = (uint64_t)t->opt[O_SEED];
    sac_status st = trainer_new(&t->tr, &tc, &t->data, t->pool, &t->err);
    if (st) return st;
    t->has_trainer = 1;
    return SAC_OK;
}

sac_status sac_train_start(sac_train *t) {
    if (t->started) return fail(t, SAC_ERR_STATE, "training has already started");
    double *o = t->opt;
    if (o[O_FF] == 0) o[O_FF] = 4 * o[O_EMBD];
    if (o[O_WARMUP] < 0) o[O_WARMUP] = floor(o[O_STEPS] / 20) > 0 ? floor(o[O_STEPS] / 20) : 1;
    if (o[O_MIN_LR] < 0) o[O_MIN_LR] = o[O_LR] / 10;
    if (fmod(o[O_EMBD], o[O_HEADS]) != 0 || fmod(o[O_EMBD], 2) != 0)
        return fail(t, SAC_ERR_ARG, "embd %g must be even and a multiple of heads %g", o[O_EMBD], o[O_HEADS]);
    if (o[O_MIN_LEN] > o[O_MAX_LEN])
        return fail(t, SAC_ERR_ARG, "min_len %g is above max_len %g", o[O_MIN_LEN], o[O_MAX_LEN]);
    int64_t n_vocab = DATES_N_VOCAB;
    if (is_seq2seq(t)) {
        t->max_src = t->task == TASK_DATES ? DATES_MAX_SRC : (int32_t)o[O_MAX_LEN];
        t->max_T = t->task == TASK_DATES ? DATES_TGT_LEN : (int32_t)o[O_MAX_LEN] + 1;
        const int32_t need = t->max_src > t->max_T ? t->max_src : t->max_T;
        if (o[O_CTX] < need)
            return fail(t, SAC_ERR_ARG, "ctx %g is too short: this task needs %d positions", o[O_CTX], need);
    } else {
        if (!t->text) return fail(t, SAC_ERR_ARG, "the text task needs a text (sac_train_set_text)");
        sac_status st = char_dataset_from_text(t->text, t->text_len, 0.9, &t->data, &t->err);
        if (st) return st;
        t->has_data = 1;
        if (t->data.n_train <= (int64_t)o[O_CTX] || t->data.n_tokens - t->data.n_train < 2)
            return fail(t, SAC_ERR_ARG,
                        "the text is too short: %lld characters train, and a window is ctx + 1 = %g characters",
                        (long long)t->data.n_train, o[O_CTX] + 1);
        n_vocab = t->data.n_vocab + 1; /* + <unk> */
    }
    /* what must fit wasm32's 4 GB (and any sane laptop): refuse it with the size */
    const double bytes = estimate_bytes(t, n_vocab);
    if (bytes > 2.0e9)
        return fail(t, SAC_ERR_ARG, "this configuration needs about %.1f GB for weights, optimizer and activations "
                    "(at most 2 GB): make the model or the batch smaller", bytes / 1e9);
    sac_status st = sac_pool_new((int)o[O_THREADS], &t->pool, &t->err);
    if (st) return st;
    if (is_seq2seq(t)) {
        const encdec_config c = {DATES_N_VOCAB, (int32_t)o[O_CTX], (int32_t)o[O_EMBD], (int32_t)o[O_HEADS],
                                 (int32_t)o[O_ENC_LAYERS], (int32_t)o[O_DEC_LAYERS], (int32_t)o[O_FF], 1e-5f};
        st = start_seq2seq(t, &c);
    } else {
        const gpt2_config c = {(int32_t)n_vocab, (int32_t)o[O_CTX], (int32_t)o[O_EMBD], (int32_t)o[O_HEADS],
                               (int32_t)o[O_LAYERS], (int32_t)o[O_FF], 1e-5f};
        st = start_text(t, &c);
    }
    if (st) return st;
    t->started = 1;
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Steps and evaluation                                                                      */
/* ---------------------------------------------------------------------------------------- */

static float seq2seq_step(sac_train *t) {
    const int32_t B = (int32_t)t->opt[O_BATCH], len = t->task == TASK_DATES ? 0 : draw_len(t, &t->batch_rng);
    int32_t at = 0, T = 0;
    for (int32_t b = 0; b < B; b++) {
        T = draw_pair(t, &t->batch_rng, 0, len, t->src + at, &t->src_len[b], t->tgt_in + b * t->max_T,
                      t->tgt_out + b * t->max_T);
        at += t->src_len[b];
    }
    /* the targets of one batch share T: close up the rows */
    for (int32_t b = 1; b < B; b++) {
        memmove(t->tgt_in + b * T, t->tgt_in + b * t->max_T, (size_t)T * sizeof(int32_t));
        memmove(t->tgt_out + b * T, t->tgt_out + b * t->max_T, (size_t)T * sizeof(int32_t));
    }
    const encdec_batch batch = {B, t->src, t->src_len, T, t->tgt_in, t->tgt_out};
    encdec_model *m = &t->ed;
    const float loss = encdec_forward(m, &batch);
    encdec_zero_grad(m);
    encdec_backward(m);
    t->last_grad_norm = clip_grad_norm(m->grads_memory, m->n_params, (float)t->opt[O_CLIP]);
    const lr_schedule sched = {(float)t->opt[O_LR], (float)t->opt[O_MIN_LR], (int64_t)t->opt[O_WARMUP],
                               (int64_t)t->opt[O_STEPS]};
    t->last_lr = lr_at(&sched, t->step);
    const adamw_config ac = {(float)t->opt[O_BETA1], (float)t->opt[O_BETA2], 1e-8f, (float)t->opt[O_WD]};
    encdec_tensor tensors[ENCDEC_N_TENSORS];
    encdec_tensors(&m->config, tensors);
    size_t offset = 0;
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) { /* weight decay on matrices only */
        const size_t n = encdec_tensor_size(&m->config, &tensors[i]);
        adamw_update(m->pool, m->params_memory + offset, m->grads_memory + offset, t->adam_m + offset,
                     t->adam_v + offset, n, t->step + 1, t->last_lr, &ac, tensors[i].is_matrix);
        offset += n;
    }
    t->step_tokens = at + (int64_t)B * T;
    return loss;
}

sac_status sac_train_step(sac_train *t, float *loss) {
    if (!t->started) return fail(t, SAC_ERR_STATE, "training has not started (sac_train_start)");
    if (is_seq2seq(t)) {
        *loss = seq2seq_step(t);
    } else {
        *loss = trainer_step(&t->tr);
        t->last_lr = t->tr.last_lr;
        t->last_grad_norm = t->tr.last_grad_norm;
        t->step_tokens = (int64_t)t->tr.config.batch_size * t->tr.config.seq_len;
    }
    t->step++;
    t->tokens += t->step_tokens;
    if (!isfinite(*loss)) return fail(t, SAC_ERR_MODEL, "the loss is %g at step %lld: lower the learning rate", *loss,
                                      (long long)t->step);
    return SAC_OK;
}

static int32_t argmax(const float *row, int32_t n) {
    int32_t best = 0;
    for (int32_t v = 1; v < n; v++)
        if (row[v] > row[best]) best = v;
    return best;
}

sac_status sac_train_evaluate(sac_train *t, float *loss, float *exact) {
    if (!t->started) return fail(t, SAC_ERR_STATE, "training has not started (sac_train_start)");
    if (!is_seq2seq(t)) {
        *loss = (float)trainer_evaluate(&t->tr, (int64_t)t->opt[O_VAL_N]);
        *exact = -1.0f;
        return SAC_OK;
    }
    const pair_set *p = &t->held;
    const int32_t max_B = (int32_t)t->opt[O_BATCH];
    double sum = 0.0;
    int64_t positions = 0;
    int32_t right = 0;
    for (int32_t i = 0; i < p->n;) {
        int32_t B = 1; /* consecutive pairs of one target length */
        while (B < max_B && i + B < p->n && p->tgt_len[i + B] == p->tgt_len[i]) B++;
        const int32_t T = p->tgt_len[i];
        const encdec_batch batch = {B, p->src + p->src_off[i], p->src_len + i, T, p->tgt_in + p->tgt_off[i],
                                    p->tgt_out + p->tgt_off[i]};
        sum += (double)encdec_forward(&t->ed, &batch) * B * T;
        positions += (int64_t)B * T;
        for (int32_t b = 0; b < B; b++) {
            int ok = 1;
            for (int32_t q = 0; q < T && ok; q++)
                ok = argmax(t->ed.acts.logits + ((int64_t)b * T + q) * DATES_N_VOCAB, DATES_N_VOCAB) ==
                     batch.tgt_out[b * T + q];
            right += ok;
        }
        i += B;
    }
    *loss = (float)(sum / (double)positions);
    *exact = (float)right / (float)p->n;
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Probes                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Labels as one buffer of NUL-terminated strings. */
typedef struct label_buf {
    char *data;
    size_t size, cap;
} label_buf;

static int label_add(label_buf *b, const char *s, size_t n) {
    if (b->size + n + 1 > b->cap) {
        const size_t cap = (b->size + n + 1) * 2;
        char *grown = realloc(b->data, cap);
        if (!grown) return 0;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->size, s, n);
    b->data[b->size + n] = '\0';
    b->size += n + 1;
    return 1;
}

static const char *seq2seq_token_text(int32_t id, char buf[2]) {
    if (id == DATES_BOS) return "<bos>";
    if (id == DATES_EOS) return "<eos>";
    if (id == DATES_PAD) return "<pad>";
    if (id == DATES_UNK) return "<unk>";
    buf[0] = (char)(' ' + (id - DATES_FIRST_CHAR));
    buf[1] = '\0';
    return buf;
}

static sac_status keep_probe(sac_train *t, int32_t kind, int32_t L, int32_t H, int32_t Q, int32_t K, const float *maps,
                             int64_t layer_stride, label_buf *queries, label_buf *keys, const char *output) {
    free(t->probe_maps);
    free(t->probe_output);
    free(t->labels[0]);
    free(t->labels[1]);
    const size_t per_layer = (size_t)H * (size_t)Q * (size_t)K;
    t->probe_maps = malloc((size_t)L * per_layer * sizeof(float) + 1);
    t->probe_output = malloc(strlen(output) + 1);
    t->labels[0] = queries->data;
    t->labels[1] = keys->data;
    t->labels_size[0] = queries->size;
    t->labels_size[1] = keys->size;
    memset(t->probe_dims, 0, sizeof t->probe_dims);
    if (!t->probe_maps || !t->probe_output) return fail(t, SAC_ERR_NOMEM, "out of memory for the probe");
    for (int32_t l = 0; l < L; l++)
        memcpy(t->probe_maps + l * per_layer, maps + l * layer_stride, per_layer * sizeof(float));
    strcpy(t->probe_output, output);
    const int32_t dims[5] = {kind, L, H, Q, K};
    memcpy(t->probe_dims, dims, sizeof dims);
    return SAC_OK;
}

static sac_status probe_seq2seq(sac_train *t, const char *input, size_t len) {
    if (len > (size_t)t->max_src)
        return fail(t, SAC_ERR_ARG, "the probe input is %zu characters; this model reads at most %d", len, t->max_src);
    int32_t src[256], tgt_in[257], out[257], n_out = 0, src_len = (int32_t)len;
    label_buf keys = {0}, queries = {0};
    char one[2], text[300] = "";
    for (int32_t i = 0; i < src_len; i++) {
        src[i] = dates_token(input[i]);
        if (!label_add(&keys, seq2seq_token_text(src[i], one), strlen(seq2seq_token_text(src[i], one)))) goto nomem;
    }
    /* greedy decoding, every position recomputed (the sequences are short) */
    tgt_in[0] = DATES_BOS;
    for (int32_t T = 1; T <= t->max_T; T++) {
        const encdec_batch b = {1, src, &src_len, T, tgt_in, NULL};
        encdec_forward(&t->ed, &b);
        const int32_t next = argmax(t->ed.acts.logits + (int64_t)(T - 1) * DATES_N_VOCAB, DATES_N_VOCAB);
        out[n_out++] = next;
        if (next == DATES_EOS) break;
        tgt_in[T] = next;
    }
    for (int32_t i = 0; i < n_out; i++) {
        const char *s = seq2seq_token_text(out[i], one);
        if (!label_add(&queries, s, strlen(s))) goto nomem;
        if (out[i] >= DATES_FIRST_CHAR) strcat(text, s);
    }
    const int32_t H = t->ed.config.n_head, L = t->ed.config.n_dec_layer;
    return keep_probe(t, 1, L, H, n_out, src_len, t->ed.acts.dec.cross_probs, (int64_t)H * n_out * src_len, &queries,
                      &keys, text);
nomem:
    free(keys.data);
    free(queries.data);
    return fail(t, SAC_ERR_NOMEM, "out of memory for the probe");
}

static sac_status probe_text(sac_train *t, const char *input, size_t len) {
    gpt2_model *m = &t->tr.model;
    const int32_t T_max = m->max_T, unk = t->data.n_vocab;
    int32_t *ids = malloc((len ? len : 1) * sizeof *ids), n = 0;
    size_t *starts = malloc((len + 1) * sizeof *starts);
    label_buf labels = {0}, copy = {0};
    if (!ids || !starts) goto nomem;
    for (size_t p = 0; p < len;) { /* one id per character; a character the text lacks is <unk> */
        uint32_t cp = 0;
        size_t clen = 1;
        const unsigned char c0 = (unsigned char)input[p];
        const size_t want = c0 < 0x80 ? 1 : c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : 2;
        if (p + want <= len) {
            clen = want;
            cp = want == 1 ? c0 : c0 & (0xFF >> (want + 1));
            for (size_t k = 1; k < want; k++) cp = (cp << 6) | ((unsigned char)input[p + k] & 0x3F);
        }
        const int32_t id = char_dataset_id(&t->data, cp);
        starts[n] = p;
        ids[n++] = id < 0 ? unk : id;
        p += clen;
    }
    if (n == 0) {
        free(ids);
        free(starts);
        return fail(t, SAC_ERR_ARG, "the probe input is empty");
    }
    starts[n] = len;
    const int32_t first = n > T_max ? n - T_max : 0, T = n - first; /* the last ctx characters */
    for (int32_t i = first; i < n; i++)
        if (!label_add(&labels, input + starts[i], starts[i + 1] - starts[i]) ||
            !label_add(&copy, input + starts[i], starts[i + 1] - starts[i]))
            goto nomem;
    gpt2_forward(m, ids + first, NULL, 1, T);
    const int32_t next = argmax(m->acts.logits + (int64_t)(T - 1) * m->config.n_vocab, m->config.n_vocab);
    char next_text[8] = "";
    if (next < t->data.n_vocab) char_dataset_token_text(&t->data, next, next_text);
    free(ids);
    free(starts);
    const int32_t H = m->config.n_head;
    return keep_probe(t, 0, m->config.n_layer, H, T, T, m->acts.att_probs, (int64_t)H * T * T, &labels, &copy,
                      next_text);
nomem:
    free(ids);
    free(starts);
    free(labels.data);
    free(copy.data);
    return fail(t, SAC_ERR_NOMEM, "out of memory for the probe");
}

sac_status sac_train_probe(sac_train *t, const char *input, size_t len) {
    if (!t->started) return fail(t, SAC_ERR_STATE, "training has not started (sac_train_start)");
    if (len == 0) return fail(t, SAC_ERR_ARG, "the probe input is empty");
    if (len > MAX_PROBE_BYTES) return fail(t, SAC_ERR_ARG, "the probe input is %zu bytes; at most 1 MB", len);
    return is_seq2seq(t) ? probe_seq2seq(t, input, len) : probe_text(t, input, len);
}

int32_t sac_train_probe_dim(const sac_train *t, int32_t which) {
    return which >= 0 && which < 5 ? t->probe_dims[which] : -1;
}
const float *sac_train_probe_maps(const sac_train *t) { return t->probe_maps; }
const char *sac_train_probe_output(const sac_train *t) { return t->probe_output ? t->probe_output : ""; }
const char *sac_train_probe_labels(const sac_train *t, int32_t keys, size_t *size) {
    const int k = keys ? 1 : 0;
    *size = t->labels_size[k];
    return t->labels[k];
}

/* ---------------------------------------------------------------------------------------- */
/* Export                                                                                    */
/* ---------------------------------------------------------------------------------------- */

sac_status sac_train_export(sac_train *t, const char *type, const char *name, uint8_t **out, size_t *size) {
    *out = NULL;
    *size = 0;
    if (!t->started) return fail(t, SAC_ERR_STATE, "training has not started (sac_train_start)");
    const uint32_t ty = type ? sac_type_by_name(type) : SAC_TYPE_COUNT;
    if (ty == SAC_TYPE_COUNT) return fail(t, SAC_ERR_ARG, "unknown weight type '%s' (f32, f16, q8_0, q4_0, …)", type);
    char default_name[32];
    snprintf(default_name, sizeof default_name, "saccade %s", task_names[t->task]);
    if (!name || !*name) name = default_name;
    uint8_t *f32 = NULL;
    size_t f32_size = 0;
    sac_status st;
    if (is_seq2seq(t)) {
        char texts[DATES_N_VOCAB][8];
        const char *tokens[DATES_N_VOCAB];
        int32_t types[DATES_N_VOCAB];
        dates_vocab(texts, tokens, types);
        const encdec_vocab vocab = {tokens, types, DATES_N_VOCAB, DATES_BOS, DATES_EOS, DATES_PAD, DATES_UNK};
        st = encdec_export_gguf(&t->ed, name, &vocab, &f32, &f32_size, &t->err);
    } else {
        char_vocab v;
        if ((st = char_vocab_make(&t->data, &v, &t->err))) return st;
        const gpt2_vocab gv = {v.tokens, v.types, v.n, t->data.n_vocab};
        st = gpt2_export_gguf(&t->tr.model, name, &gv, &f32, &f32_size, &t->err);
        char_vocab_free(&v);
    }
    if (st) return st;
    if (ty == SAC_TYPE_F32) {
        *out = f32;
        *size = f32_size;
        return SAC_OK;
    }
    st = quantize_gguf(f32, f32_size, ty, out, size, NULL, &t->err);
    free(f32);
    return st;
}
