/* train_dates_main.c — Model B's command-line tool: trains the encoder–decoder date
 * translator, measures it through the engine, and shows where its cross-attention looks.
 *
 *   build/tools/train_dates --out MODEL.gguf [options]        train, export F32 GGUF
 *   build/tools/train_dates --bench N [options]               time N steps, no output
 *   build/tools/train_dates --eval-model M.gguf --n 2000      held-out exact match, engine
 *   build/tools/train_dates --align M.gguf [--text "…"]…      cross-attention alignment
 *
 * Training pairs are drawn afresh every step from the training days (dates.h); the held-out
 * set is the first --n pairs drawn from the held-out days with --eval-seed, the same set for
 * the validation during training (its first --val-n pairs) and for --eval-model. With
 * --checkpoint FILE the state is saved every --checkpoint-every steps, and a run that finds
 * FILE resumes from it bit for bit. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_options.h"
#include "dates.h"
#include "encdec.h"
#include "file_io.h"
#include "progress.h"
#include "optim.h"
#include "quantize.h"
#include "types.h"

#define TGT_LEN (DATES_ISO_LEN + 1) /* decoder positions: <bos> + ISO in, ISO + <eos> out */

typedef struct options {
    encdec_config model;
    int32_t batch;
    int64_t steps, warmup, bench_steps;
    float lr, min_lr, wd, beta2, clip;
    uint64_t seed, eval_seed;
    int32_t threads, print_every, eval_every, checkpoint_every, val_n, n;
    const char *out, *checkpoint, *log, *eval_model, *align_model, *name;
    const char *texts[32];
    int n_texts;
} options;

static void usage(void) {
    fprintf(stderr,
            "usage: train_dates (--out MODEL.gguf | --bench N | --eval-model M.gguf | --align M.gguf) [options]\n"
            "  model:     --enc-layers 2 --dec-layers 2 --embd 128 --heads 4 --ff 4*embd --ctx 40\n"
            "  optimizer: --batch 64 --steps 3000 --lr 1e-3 --min-lr lr/10 --warmup steps/20 --wd 0.1\n"
            "             --beta2 0.99 --clip 1.0\n"
            "  run:       --seed 1337 --threads 1 --print-every 10 --eval-every 250 --val-n 500\n"
            "             --checkpoint FILE --checkpoint-every 250 --log FILE --name NAME\n"
            "  held-out:  --eval-seed 2026 --n 2000 (pairs for --eval-model and the final report)\n"
            "  --align:   --text \"sat 21 nov 2026\" (repeatable; default: a few built-in inputs)\n");
}

static int parse(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->model = (encdec_config){DATES_N_VOCAB, 40, 128, 4, 2, 2, 0, 1e-5f};
    o->batch = 64;
    o->steps = 3000;
    o->warmup = -1;
    o->lr = 1e-3f;
    o->min_lr = -1.0f;
    o->wd = 0.1f;
    o->beta2 = 0.99f;
    o->clip = 1.0f;
    o->seed = 1337;
    o->eval_seed = 2026;
    o->threads = 1;
    o->print_every = 10;
    o->eval_every = 250;
    o->checkpoint_every = 250;
    o->val_n = 500;
    o->n = 2000;
    o->name = "saccade dates";
    const cli_option table[] = {
        {"--out", CLI_STRING, &o->out, NULL, 0},
        {"--checkpoint", CLI_STRING, &o->checkpoint, NULL, 0},
        {"--log", CLI_STRING, &o->log, NULL, 0},
        {"--eval-model", CLI_STRING, &o->eval_model, NULL, 0},
        {"--align", CLI_STRING, &o->align_model, NULL, 0},
        {"--text", CLI_STRINGS, (void *)o->texts, &o->n_texts, (int)(sizeof o->texts / sizeof o->texts[0])},
        {"--name", CLI_STRING, &o->name, NULL, 0},
        {"--bench", CLI_INT64, &o->bench_steps, NULL, 0},
        {"--enc-layers", CLI_INT32, &o->model.n_enc_layer, NULL, 0},
        {"--dec-layers", CLI_INT32, &o->model.n_dec_layer, NULL, 0},
        {"--embd", CLI_INT32, &o->model.n_embd, NULL, 0},
        {"--heads", CLI_INT32, &o->model.n_head, NULL, 0},
        {"--ff", CLI_INT32, &o->model.n_ff, NULL, 0},
        {"--ctx", CLI_INT32, &o->model.n_ctx, NULL, 0},
        {"--batch", CLI_INT32, &o->batch, NULL, 0},
        {"--steps", CLI_INT64, &o->steps, NULL, 0},
        {"--lr", CLI_FLOAT, &o->lr, NULL, 0},
        {"--min-lr", CLI_FLOAT, &o->min_lr, NULL, 0},
        {"--warmup", CLI_INT64, &o->warmup, NULL, 0},
        {"--wd", CLI_FLOAT, &o->wd, NULL, 0},
        {"--beta2", CLI_FLOAT, &o->beta2, NULL, 0},
        {"--clip", CLI_FLOAT, &o->clip, NULL, 0},
        {"--seed", CLI_UINT64, &o->seed, NULL, 0},
        {"--eval-seed", CLI_UINT64, &o->eval_seed, NULL, 0},
        {"--threads", CLI_INT32, &o->threads, NULL, 0},
        {"--print-every", CLI_INT32, &o->print_every, NULL, 0},
        {"--eval-every", CLI_INT32, &o->eval_every, NULL, 0},
        {"--checkpoint-every", CLI_INT32, &o->checkpoint_every, NULL, 0},
        {"--val-n", CLI_INT32, &o->val_n, NULL, 0},
        {"--n", CLI_INT32, &o->n, NULL, 0},
    };
    char why[256];
    if (!cli_parse(argc, argv, table, (int)(sizeof table / sizeof table[0]), why, sizeof why))
        return fprintf(stderr, "train_dates: %s\n", why), 0;
    if (!o->out && !o->bench_steps && !o->eval_model && !o->align_model) return 0;
    if (o->model.n_ff == 0) o->model.n_ff = 4 * o->model.n_embd;
    if (o->warmup < 0) o->warmup = o->steps / 20 > 0 ? o->steps / 20 : 1;
    if (o->min_lr < 0) o->min_lr = o->lr / 10;
    if (o->print_every < 1) o->print_every = 1;
    if (o->batch < 1 || o->steps < 1 || o->n < 1 || o->val_n < 1 || o->model.n_ctx < DATES_MAX_SRC ||
        o->model.n_ctx < TGT_LEN)
        return fprintf(stderr, "train_dates: batch, steps, --n, --val-n must be positive and --ctx at least %d\n",
                       DATES_MAX_SRC), 0;
    return 1;
}



/* The held-out pairs: the first n drawn from the held-out days with the evaluation seed. */
static date_pair *held_out_pairs(uint64_t seed, int32_t n) {
    date_pair *p = malloc((size_t)n * sizeof *p);
    if (!p) return NULL;
    train_rng rng = train_rng_seed(seed);
    for (int32_t i = 0; i < n; i++) dates_sample(&rng, DATES_TEST, &p[i]);
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Training state                                                                            */
/* ---------------------------------------------------------------------------------------- */

typedef struct run {
    encdec_model model;
    float *adam_m, *adam_v;
    train_rng batch_rng;          /* draws the training pairs */
    int64_t step;
    double seconds;               /* in steps, over every run of a resumed training */
    date_pair *pairs;             /* [batch] */
    int32_t *src, *src_len, *tgt_in, *tgt_out;
    float last_grad_norm, last_lr;
} run;

static void run_free(run *r) {
    encdec_free(&r->model);
    free(r->adam_m);
    free(r->adam_v);
    free(r->pairs);
    free(r->src);
    free(r->src_len);
    free(r->tgt_in);
    free(r->tgt_out);
    memset(r, 0, sizeof *r);
}

static int run_new(run *r, const options *o, sac_pool *pool) {
    memset(r, 0, sizeof *r);
    sac_error err;
    if (encdec_build(&r->model, &o->model, o->batch, DATES_MAX_SRC, TGT_LEN, pool, &err))
        return fprintf(stderr, "train_dates: %s\n", err.msg), 0;
    const size_t n = r->model.n_params, B = (size_t)o->batch;
    r->adam_m = calloc(n, sizeof(float));
    r->adam_v = calloc(n, sizeof(float));
    r->pairs = calloc(B, sizeof(date_pair));
    r->src = calloc(B * DATES_MAX_SRC, sizeof(int32_t));
    r->src_len = calloc(B, sizeof(int32_t));
    r->tgt_in = calloc(B * TGT_LEN, sizeof(int32_t));
    r->tgt_out = calloc(B * TGT_LEN, sizeof(int32_t));
    if (!r->adam_m || !r->adam_v || !r->pairs || !r->src || !r->src_len || !r->tgt_in || !r->tgt_out) {
        run_free(r);
        return fprintf(stderr, "train_dates: out of memory\n"), 0;
    }
    train_rng init = train_rng_seed(o->seed);
    encdec_init(&r->model, &init);
    r->batch_rng = train_rng_seed(o->seed ^ 0xB47C4E5u); /* a stream of its own */
    return 1;
}

/* Packs pairs into the run's batch buffers. */
static encdec_batch pack(run *r, const date_pair *pairs, int32_t n) {
    int32_t at = 0;
    for (int32_t b = 0; b < n; b++) {
        dates_encode_pair(&pairs[b], r->src + at, &r->src_len[b], r->tgt_in + b * TGT_LEN, r->tgt_out + b * TGT_LEN);
        at += r->src_len[b];
    }
    encdec_batch batch = {n, r->src, r->src_len, TGT_LEN, r->tgt_in, r->tgt_out};
    return batch;
}

static float step(run *r, const options *o) {
    const double t0 = progress_wall_seconds();
    for (int32_t b = 0; b < o->batch; b++) dates_sample(&r->batch_rng, DATES_TRAIN, &r->pairs[b]);
    const encdec_batch batch = pack(r, r->pairs, o->batch);
    encdec_model *m = &r->model;
    const float loss = encdec_forward(m, &batch);
    encdec_zero_grad(m);
    encdec_backward(m);
    r->last_grad_norm = clip_grad_norm(m->grads_memory, m->n_params, o->clip);
    const lr_schedule sched = {o->lr, o->min_lr, o->warmup, o->steps};
    r->last_lr = lr_at(&sched, r->step);
    const adamw_config ac = {0.9f, o->beta2, 1e-8f, o->wd};
    /* weight decay on matrices only */
    encdec_tensor t[ENCDEC_N_TENSORS];
    encdec_tensors(&m->config, t);
    size_t offset = 0;
    for (int i = 0; i < ENCDEC_N_TENSORS; i++) {
        const size_t n = encdec_tensor_size(&m->config, &t[i]);
        adamw_update(m->pool, m->params_memory + offset, m->grads_memory + offset, r->adam_m + offset,
                     r->adam_v + offset, n, r->step + 1, r->last_lr, &ac, t[i].is_matrix);
        offset += n;
    }
    r->step++;
    r->seconds += progress_wall_seconds() - t0;
    return loss;
}

/* Mean loss per target position and exact match over held-out pairs, teacher-forced: a pair
 * is exact when every position's argmax is its target, which is exactly when greedy decoding
 * writes the ISO date and then <eos>. */
static void evaluate(run *r, const options *o, const date_pair *pairs, int32_t n, double *loss, double *exact) {
    double sum = 0.0;
    int32_t right = 0;
    for (int32_t at = 0; at < n; at += o->batch) {
        const int32_t B = n - at < o->batch ? n - at : o->batch;
        const encdec_batch batch = pack(r, pairs + at, B);
        sum += (double)encdec_forward(&r->model, &batch) * B;
        for (int32_t b = 0; b < B; b++) {
            int ok = 1;
            for (int32_t t = 0; t < TGT_LEN && ok; t++) {
                const float *row = r->model.acts.logits + ((int64_t)b * TGT_LEN + t) * DATES_N_VOCAB;
                int32_t best = 0;
                for (int32_t v = 1; v < DATES_N_VOCAB; v++)
                    if (row[v] > row[best]) best = v;
                ok = best == batch.tgt_out[b * TGT_LEN + t];
            }
            right += ok;
        }
    }
    *loss = sum / n;
    *exact = (double)right / n;
}

/* ---------------------------------------------------------------------------------------- */
/* Checkpoints                                                                               */
/* ---------------------------------------------------------------------------------------- */

#define CHECKPOINT_MAGIC "SACDAT01"

/* Host-order scratch file for resuming on the same machine: magic, shape, step, random state,
 * seconds, parameters, AdamW moments. */
static int checkpoint_save(const run *r, const options *o, const char *path) {
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return 0;
    FILE *f = fopen(tmp, "wb");
    if (!f) return 0;
    const encdec_config *c = &r->model.config;
    const int32_t shape[9] = {c->n_vocab, c->n_ctx, c->n_embd, c->n_head, c->n_enc_layer, c->n_dec_layer, c->n_ff,
                              o->batch, 0};
    const size_t n = r->model.n_params;
    int ok = fwrite(CHECKPOINT_MAGIC, 1, 8, f) == 8 && fwrite(shape, sizeof shape, 1, f) == 1 &&
             fwrite(&r->step, sizeof r->step, 1, f) == 1 &&
             fwrite(&r->batch_rng.state, sizeof r->batch_rng.state, 1, f) == 1 &&
             fwrite(&r->seconds, sizeof r->seconds, 1, f) == 1 &&
             fwrite(r->model.params_memory, sizeof(float), n, f) == n && fwrite(r->adam_m, sizeof(float), n, f) == n &&
             fwrite(r->adam_v, sizeof(float), n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return 0;
    }
    return 1;
}

/* 1 resumed, 0 no file, -1 an unusable file. */
static int checkpoint_load(run *r, const options *o, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    const encdec_config *c = &r->model.config;
    const int32_t want[9] = {c->n_vocab, c->n_ctx, c->n_embd, c->n_head, c->n_enc_layer, c->n_dec_layer, c->n_ff,
                             o->batch, 0};
    int32_t shape[9];
    char magic[8];
    const size_t n = r->model.n_params;
    int ok = fread(magic, 1, 8, f) == 8 && !memcmp(magic, CHECKPOINT_MAGIC, 8) &&
             fread(shape, sizeof shape, 1, f) == 1 && !memcmp(shape, want, sizeof want) &&
             fread(&r->step, sizeof r->step, 1, f) == 1 &&
             fread(&r->batch_rng.state, sizeof r->batch_rng.state, 1, f) == 1 &&
             fread(&r->seconds, sizeof r->seconds, 1, f) == 1 &&
             fread(r->model.params_memory, sizeof(float), n, f) == n && fread(r->adam_m, sizeof(float), n, f) == n &&
             fread(r->adam_v, sizeof(float), n, f) == n;
    fclose(f);
    return ok ? 1 : -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Through the engine                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* Loads a GGUF buffer and makes a context (capture on request). */
static int engine_open(const void *bytes, size_t size, int32_t threads, int capture, sac_model **model,
                       sac_context **ctx) {
    *ctx = NULL;
    if (sac_model_load(bytes, size, 0, model))
        return fprintf(stderr, "train_dates: %s\n", sac_model_errmsg(*model)), 0;
    sac_context_params p = sac_context_default_params();
    p.n_threads = threads;
    p.capture_attention = capture;
    if (sac_context_new(*model, &p, ctx))
        return fprintf(stderr, "train_dates: %s\n", *ctx ? sac_context_errmsg(*ctx) : "out of memory"), 0;
    return 1;
}

/* Through sac_encode/sac_eval/sac_sample: the exact match of greedy translations and the mean
 * cross entropy per target position, teacher-forced (<bos> + ISO in, ISO + <eos> out). Prints
 * the first few misses. Returns 0 on an engine failure. */
static int engine_eval(const void *bytes, size_t size, const date_pair *pairs, int32_t n, int32_t threads,
                       FILE *report, double *exact, double *loss) {
    sac_model *model = NULL;
    sac_context *ctx = NULL;
    int ok = 0;
    if (!engine_open(bytes, size, threads, 0, &model, &ctx)) goto done;
    int32_t right = 0, shown = 0;
    double sum = 0.0;
    for (int32_t i = 0; i < n; i++) {
        char out[64];
        sac_error err = {0};
        if (encdec_translate(model, ctx, pairs[i].src, out, sizeof out, &err)) {
            fprintf(stderr, "train_dates: '%s': %s\n", pairs[i].src, err.msg);
            goto done;
        }
        if (!strcmp(out, pairs[i].iso)) right++;
        else if (shown++ < 8) progress_say(report, "#   miss: '%s' → '%s' (want %s)\n", pairs[i].src, out, pairs[i].iso);

        int32_t src[DATES_MAX_SRC], n_src, tgt_in[TGT_LEN], tgt_out[TGT_LEN];
        dates_encode_pair(&pairs[i], src, &n_src, tgt_in, tgt_out);
        if (sac_encode(ctx, src, n_src, NULL) || sac_eval(ctx, tgt_in, TGT_LEN, NULL, SAC_EVAL_ALL_LOGITS)) {
            fprintf(stderr, "train_dates: %s\n", sac_context_errmsg(ctx));
            goto done;
        }
        const float *logits = sac_logits(ctx, NULL, NULL);
        for (int32_t t = 0; t < TGT_LEN; t++) { /* −log softmax(row)[target], in double */
            const float *row = logits + (int64_t)t * DATES_N_VOCAB;
            double max = row[0], z = 0.0;
            for (int32_t v = 1; v < DATES_N_VOCAB; v++) max = row[v] > max ? row[v] : max;
            for (int32_t v = 0; v < DATES_N_VOCAB; v++) z += exp((double)row[v] - max);
            sum += log(z) + max - row[tgt_out[t]];
        }
    }
    *exact = (double)right / n;
    *loss = sum / ((double)n * TGT_LEN);
    ok = 1;
done:
    sac_context_free(ctx);
    sac_model_free(model);
    return ok;
}

static int eval_model(const options *o) {
    size_t size;
    uint8_t *bytes = read_file(o->eval_model, &size);
    if (!bytes) return fprintf(stderr, "train_dates: cannot read '%s'\n", o->eval_model), 1;
    date_pair *pairs = held_out_pairs(o->eval_seed, o->n);
    if (!pairs) return fprintf(stderr, "train_dates: out of memory\n"), 1;
    const double t0 = progress_wall_seconds();
    double exact, loss;
    const int ok = engine_eval(bytes, size, pairs, o->n, o->threads, NULL, &exact, &loss);
    if (ok)
        printf("%s: exact match %.2f%% on %d held-out inputs (greedy), loss %.3g per target position "
               "(engine, %.1f s)\n",
               o->eval_model, 100 * exact, o->n, loss, progress_wall_seconds() - t0);
    free(pairs);
    free(bytes);
    return !ok;
}

/* For every output character: the source position with the highest cross-attention in the
 * last decoder layer (mean over heads), and whether it lies in the field the character
 * copies or derives from (ISO positions 0–3 year, 5–6 month, 8–9 day). */
static int align(const options *o) {
    size_t size;
    uint8_t *bytes = read_file(o->align_model, &size);
    if (!bytes) return fprintf(stderr, "train_dates: cannot read '%s'\n", o->align_model), 1;
    sac_model *model = NULL;
    sac_context *ctx = NULL;
    int rc = 1;
    if (!engine_open(bytes, size, o->threads, 1, &model, &ctx)) goto done;
    sac_model_info info;
    sac_model_get_info(model, &info);
    const int32_t L = info.n_layer, H = info.n_head;

    /* the inputs to show: --text, or one held-out input of each format */
    date_pair shown[32];
    int32_t n_shown = 0;
    if (o->n_texts) {
        for (int i = 0; i < o->n_texts; i++) {
            memset(&shown[n_shown], 0, sizeof shown[0]);
            snprintf(shown[n_shown].src, sizeof shown[0].src, "%s", o->texts[i]);
            n_shown++;
        }
    } else {
        train_rng rng = train_rng_seed(o->eval_seed ^ 0xA11u);
        for (int f = 0; f < DATES_N_FORMATS; f++) {
            date_pair p;
            do dates_sample(&rng, DATES_TEST, &p);
            while ((int)p.format != f);
            shown[n_shown++] = p;
        }
    }

    /* the score over the held-out set, then the shown inputs one by one */
    date_pair *pairs = held_out_pairs(o->eval_seed, o->n);
    if (!pairs) goto done;
    int32_t hits[DATES_ISO_LEN] = {0}, counted = 0;
    for (int32_t i = 0; i < o->n + n_shown; i++) {
        const int show = i >= o->n;
        const date_pair *p = show ? &shown[i - o->n] : &pairs[i];
        char out[64];
        sac_error err = {0};
        if (encdec_translate(model, ctx, p->src, out, sizeof out, &err)) {
            fprintf(stderr, "train_dates: '%s': %s\n", p->src, err.msg);
            free(pairs);
            goto done;
        }
        const int32_t n_src = sac_context_n_source(ctx), n_out = (int32_t)strlen(out);
        if (show) printf("\n'%s' → '%s'\n", p->src, out);
        if (!show && strcmp(out, p->iso)) continue; /* score correct translations only */
        if (!show) counted++;
        for (int32_t q = 0; q < n_out && q < DATES_ISO_LEN; q++) {
            const float *row;
            int32_t n_keys;
            if (sac_attention_cross_row(ctx, q, &row, &n_keys) || n_keys != n_src) {
                fprintf(stderr, "train_dates: %s\n", sac_context_errmsg(ctx));
                free(pairs);
                goto done;
            }
            /* mean over the heads of the last decoder layer */
            int32_t best = 0;
            float best_w = -1.0f, mean[64] = {0};
            for (int32_t j = 0; j < n_src && j < 64; j++) {
                for (int32_t h = 0; h < H; h++) mean[j] += row[((int64_t)(L - 1) * H + h) * n_src + j] / (float)H;
                if (mean[j] > best_w) best_w = mean[j], best = j;
            }
            const char want = q < 4 ? 'y' : q == 5 || q == 6 ? 'm' : q >= 8 ? 'd' : 0;
            const char field = p->fields[0] ? p->fields[best] : '?';
            if (!show && want) hits[q] += field == want;
            if (show)
                printf("  out[%d] '%c' ← src[%2d] '%c' (%.2f)%s%s\n", q, out[q], best, p->src[best], best_w,
                       p->fields[0] && want ? (field == want ? "  in its field" : "  OUTSIDE its field") : "",
                       want ? "" : "  (separator)");
        }
    }
    printf("\nlast decoder layer, mean over heads: the highest cross-attention of each output character lies "
           "in its field of the input (%d correctly translated held-out inputs):\n",
           counted);
    for (int32_t q = 0; q < DATES_ISO_LEN; q++)
        if (q != 4 && q != 7)
            printf("  ISO position %d (%s digit %d): %.1f%%\n", q, q < 4 ? "year" : q < 7 ? "month" : "day",
                   q < 4 ? q + 1 : q < 7 ? q - 4 : q - 7, counted ? 100.0 * hits[q] / counted : 0.0);
    free(pairs);
    rc = 0;
done:
    sac_context_free(ctx);
    sac_model_free(model);
    free(bytes);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Training                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* The trained model as F32 GGUF, and what the engine makes of it at F32 and Q8_0. */
static int export_model(const options *o, run *r, const date_pair *held, FILE *log) {
    char texts[DATES_N_VOCAB][8];
    const char *tokens[DATES_N_VOCAB];
    int32_t types[DATES_N_VOCAB];
    dates_vocab(texts, tokens, types);
    const encdec_vocab vocab = {tokens, types, DATES_N_VOCAB, DATES_BOS, DATES_EOS, DATES_PAD, DATES_UNK};
    uint8_t *f32 = NULL, *q8 = NULL;
    size_t f32_size = 0, q8_size = 0;
    sac_error err = {0};
    int rc = 1;
    if (encdec_export_gguf(&r->model, o->name, &vocab, &f32, &f32_size, &err) ||
        quantize_gguf(f32, f32_size, SAC_TYPE_Q8_0, &q8, &q8_size, NULL, &err)) {
        fprintf(stderr, "train_dates: %s\n", err.msg);
        goto done;
    }
    if (!write_file(o->out, f32, f32_size)) {
        fprintf(stderr, "train_dates: cannot write '%s'\n", o->out);
        goto done;
    }
    progress_say(log, "# wrote %s (%.2f MB); Q8_0 would be %.2f MB\n", o->out, f32_size / 1e6, q8_size / 1e6);
    const double t0 = progress_wall_seconds();
    double exact_f32, loss_f32, exact_q8, loss_q8;
    if (!engine_eval(f32, f32_size, held, o->n, o->threads, log, &exact_f32, &loss_f32) ||
        !engine_eval(q8, q8_size, held, o->n, o->threads, log, &exact_q8, &loss_q8))
        goto done;
    progress_say(log, "# engine on %d held-out inputs: exact match F32 %.2f%%, Q8_0 %.2f%%; loss per target position F32 "
             "%.3g, Q8_0 %.3g (%.1f s)\n",
        o->n, 100 * exact_f32, 100 * exact_q8, loss_f32, loss_q8, progress_wall_seconds() - t0);
    rc = 0;
done:
    free(f32);
    free(q8);
    return rc;
}

int main(int argc, char **argv) {
    options o;
    if (!parse(argc, argv, &o)) {
        usage();
        return 1;
    }
    if (o.eval_model) return eval_model(&o);
    if (o.align_model) return align(&o);

    sac_error err = {0};
    sac_pool *pool = NULL;
    if (sac_pool_new(o.threads, &pool, &err)) return fprintf(stderr, "train_dates: %s\n", err.msg), 1;
    run r;
    if (!run_new(&r, &o, pool)) return 1;
    const int32_t n_held = o.n > o.val_n ? o.n : o.val_n;
    date_pair *held = held_out_pairs(o.eval_seed, n_held);
    FILE *log = o.log ? fopen(o.log, "a") : NULL;
    if (!held || (o.log && !log)) return fprintf(stderr, "train_dates: cannot open the log or out of memory\n"), 1;
    if (o.checkpoint && !o.bench_steps) {
        const int got = checkpoint_load(&r, &o, o.checkpoint);
        if (got < 0) return fprintf(stderr, "train_dates: '%s' is not a checkpoint of this model\n", o.checkpoint), 1;
        if (got) progress_say(log, "# resumed from %s at step %lld\n", o.checkpoint, (long long)r.step);
    }
    const encdec_config *c = &o.model;
    progress_say(log, "# dates: vocab %d, encoder %d + decoder %d blocks, embd %d, %d heads, ff %d, ctx %d; %zu parameters; "
             "batch %d; %lld steps, lr %g → %g, warm-up %lld; AdamW (0.9, %g) wd %g; clip %g; seed %llu; "
             "held-out seed %llu; %d threads\n",
        c->n_vocab, c->n_enc_layer, c->n_dec_layer, c->n_embd, c->n_head, c->n_ff, c->n_ctx, r.model.n_params, o.batch,
        (long long)o.steps, o.lr, o.min_lr, (long long)o.warmup, o.beta2, o.wd, o.clip, (unsigned long long)o.seed,
        (unsigned long long)o.eval_seed, sac_pool_size(pool));

    if (o.bench_steps) {
        step(&r, &o); /* warm-up */
        const double t0 = progress_wall_seconds();
        float loss = 0;
        for (int64_t i = 0; i < o.bench_steps; i++) loss = step(&r, &o);
        const double per_step = (progress_wall_seconds() - t0) / (double)o.bench_steps;
        progress_say(log, "bench: %lld steps of %d pairs: %.3f s/step, %.0f pairs/s; loss %.3f\n", (long long)o.bench_steps,
            o.batch, per_step, o.batch / per_step, loss);
    } else {
        progress_say(log, "step,train_loss,val_loss,val_exact,lr,grad_norm,seconds,pairs_per_s\n");
        double interval_loss = 0.0, interval_t0 = r.seconds;
        int interval_n = 0;
        while (r.step < o.steps) {
            interval_loss += step(&r, &o);
            interval_n++;
            const int last = r.step == o.steps;
            const int eval = (o.eval_every > 0 && r.step % o.eval_every == 0) || last;
            if (r.step % o.print_every == 0 || eval) {
                char val[64] = ",";
                if (eval) {
                    double loss, exact;
                    evaluate(&r, &o, held, o.val_n, &loss, &exact);
                    snprintf(val, sizeof val, "%.4g,%.4f", loss, exact);
                }
                progress_say(log, "%lld,%.4g,%s,%.3g,%.3g,%.1f,%.0f\n", (long long)r.step, interval_loss / interval_n, val,
                    r.last_lr, r.last_grad_norm, r.seconds,
                    o.batch * interval_n / (r.seconds - interval_t0));
                interval_loss = 0.0;
                interval_n = 0;
                interval_t0 = r.seconds;
            }
            if (o.checkpoint && ((o.checkpoint_every > 0 && r.step % o.checkpoint_every == 0) || last) &&
                !checkpoint_save(&r, &o, o.checkpoint))
                fprintf(stderr, "train_dates: cannot write the checkpoint '%s'\n", o.checkpoint);
        }
        double loss, exact;
        evaluate(&r, &o, held, o.n, &loss, &exact);
        progress_say(log, "# trained %lld steps (%lld pairs) in %.1f min\n", (long long)r.step, (long long)r.step * o.batch,
            r.seconds / 60);
        progress_say(log, "# held-out (%d inputs, trainer, teacher-forced): loss %.4g per position, exact match %.2f%%\n", o.n,
            loss, 100 * exact);
    }
    int rc = o.out && !o.bench_steps ? export_model(&o, &r, held, log) : 0;
    if (log) fclose(log);
    free(held);
    run_free(&r);
    sac_pool_free(pool);
    return rc;
}
