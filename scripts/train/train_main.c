/* train_main.c — the command-line trainer for character-level GPT-2 models.
 *
 *   build/tools/train --data TEXT --out MODEL.gguf [options]    train, export F32 GGUF
 *   build/tools/train --data TEXT --bench N [options]           time N steps, no output
 *   build/tools/train --data TEXT --eval-model MODEL.gguf       validation loss via the engine
 *
 * The first 90% of the text trains, the last 10% validates. The vocabulary is every character
 * of the text plus "<unk>" (so the shipped model accepts any input). With --checkpoint FILE the
 * state is saved every --checkpoint-every steps, and a run that finds FILE resumes from it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_options.h"
#include "eval_gguf.h"
#include "file_io.h"
#include "progress.h"
#include "quantize.h"
#include "trainer.h"
#include "types.h"

typedef struct options {
    train_config train;
    const char *data, *out, *checkpoint, *log, *eval_model, *name;
    int32_t threads, print_every, eval_every, checkpoint_every, eval_windows;
    int64_t bench_steps;
} options;

static void usage(void) {
    fprintf(stderr,
            "usage: train --data TEXT (--out MODEL.gguf | --bench N | --eval-model MODEL.gguf) [options]\n"
            "  model:     --layers 4 --embd 256 --heads 8 --ff 4*embd --ctx 128\n"
            "  batch:     --batch 32 --seq ctx\n"
            "  optimizer: --steps 1000 --lr 1e-3 --min-lr 1e-4 --warmup 100 --wd 0.1 --beta2 0.95 --clip 1.0\n"
            "  run:       --seed 1337 --threads 2 --print-every 10 --eval-every 250\n"
            "             --eval-windows 0 (validation windows for the evaluations during training; 0: all;\n"
            "             the final evaluation always uses all)\n"
            "             --checkpoint FILE --checkpoint-every 250 --log FILE --name NAME\n");
}

static int parse(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->train = train_config_default();
    gpt2_config *m = &o->train.model;
    m->n_layer = 4;
    m->n_embd = 256;
    m->n_head = 8;
    m->n_ctx = 128;
    o->threads = 2;
    o->print_every = 10;
    o->eval_every = 250;
    o->checkpoint_every = 250;
    o->name = "saccade char model";
    int64_t warmup = -1;
    int32_t seq = 0;
    float min_lr = -1.0f;
    const cli_option table[] = {
        {"--data", CLI_STRING, &o->data, NULL, 0},
        {"--out", CLI_STRING, &o->out, NULL, 0},
        {"--checkpoint", CLI_STRING, &o->checkpoint, NULL, 0},
        {"--log", CLI_STRING, &o->log, NULL, 0},
        {"--eval-model", CLI_STRING, &o->eval_model, NULL, 0},
        {"--name", CLI_STRING, &o->name, NULL, 0},
        {"--bench", CLI_INT64, &o->bench_steps, NULL, 0},
        {"--layers", CLI_INT32, &m->n_layer, NULL, 0},
        {"--embd", CLI_INT32, &m->n_embd, NULL, 0},
        {"--heads", CLI_INT32, &m->n_head, NULL, 0},
        {"--ff", CLI_INT32, &m->n_ff, NULL, 0},
        {"--ctx", CLI_INT32, &m->n_ctx, NULL, 0},
        {"--batch", CLI_INT32, &o->train.batch_size, NULL, 0},
        {"--seq", CLI_INT32, &seq, NULL, 0},
        {"--steps", CLI_INT64, &o->train.max_steps, NULL, 0},
        {"--lr", CLI_FLOAT, &o->train.schedule.max_lr, NULL, 0},
        {"--min-lr", CLI_FLOAT, &min_lr, NULL, 0},
        {"--warmup", CLI_INT64, &warmup, NULL, 0},
        {"--wd", CLI_FLOAT, &o->train.adamw.weight_decay, NULL, 0},
        {"--beta2", CLI_FLOAT, &o->train.adamw.beta2, NULL, 0},
        {"--clip", CLI_FLOAT, &o->train.grad_clip, NULL, 0},
        {"--seed", CLI_UINT64, &o->train.seed, NULL, 0},
        {"--threads", CLI_INT32, &o->threads, NULL, 0},
        {"--print-every", CLI_INT32, &o->print_every, NULL, 0},
        {"--eval-every", CLI_INT32, &o->eval_every, NULL, 0},
        {"--eval-windows", CLI_INT32, &o->eval_windows, NULL, 0},
        {"--checkpoint-every", CLI_INT32, &o->checkpoint_every, NULL, 0},
    };
    char why[256];
    if (!cli_parse(argc, argv, table, (int)(sizeof table / sizeof table[0]), why, sizeof why))
        return fprintf(stderr, "train: %s\n", why), 0;
    if (!o->data || (!o->out && !o->bench_steps && !o->eval_model)) return 0;
    if (m->n_ff == 0) m->n_ff = 4 * m->n_embd;
    o->train.seq_len = seq ? (int32_t)seq : m->n_ctx;
    o->train.schedule.total_steps = o->train.max_steps;
    o->train.schedule.warmup_steps = warmup >= 0 ? warmup : o->train.max_steps / 20;
    if (o->train.schedule.warmup_steps < 1) o->train.schedule.warmup_steps = 1;
    o->train.schedule.min_lr = min_lr >= 0 ? min_lr : o->train.schedule.max_lr / 10;
    if (o->print_every < 1) o->print_every = 1;
    return 1;
}




static int eval_model(const options *o, const char_dataset *data) {
    size_t size;
    uint8_t *bytes = read_file(o->eval_model, &size);
    if (!bytes) return fprintf(stderr, "train: cannot read '%s'\n", o->eval_model), 1;
    double loss;
    sac_error err = {0};
    const double t0 = progress_wall_seconds();
    sac_status st = eval_gguf_val_loss(bytes, size, data, o->train.seq_len, o->threads, o->eval_windows, &loss, &err);
    free(bytes);
    if (st) return fprintf(stderr, "train: %s\n", err.msg), 1;
    printf("%s: validation loss %.4f nats/char (windows of %d, engine, %.1f s)\n", o->eval_model, loss,
           o->train.seq_len, progress_wall_seconds() - t0);
    return 0;
}

/* The trained model as F32 GGUF, plus what the engine says of it at F32 and Q8_0. */
static int export_model(const options *o, trainer *tr, const char_dataset *data, FILE *log) {
    char_vocab v;
    sac_error verr = {0};
    if (char_vocab_make(data, &v, &verr)) return fprintf(stderr, "train: %s\n", verr.msg), 1;
    const gpt2_vocab gv = {v.tokens, v.types, v.n, data->n_vocab};
    uint8_t *f32 = NULL, *q8 = NULL;
    size_t f32_size = 0, q8_size = 0;
    sac_error err = {0};
    int rc = 1;
    if (gpt2_export_gguf(&tr->model, o->name, &gv, &f32, &f32_size, &err)) {
        fprintf(stderr, "train: %s\n", err.msg);
        goto done;
    }
    if (!write_file(o->out, f32, f32_size)) {
        fprintf(stderr, "train: cannot write '%s'\n", o->out);
        goto done;
    }
    progress_say(log, "# wrote %s (%.2f MB)\n", o->out, f32_size / 1e6);
    double loss_f32, loss_q8;
    if (eval_gguf_val_loss(f32, f32_size, data, o->train.seq_len, o->threads, 0, &loss_f32, &err) ||
        quantize_gguf(f32, f32_size, SAC_TYPE_Q8_0, &q8, &q8_size, NULL, &err) ||
        eval_gguf_val_loss(q8, q8_size, data, o->train.seq_len, o->threads, 0, &loss_q8, &err)) {
        fprintf(stderr, "train: %s\n", err.msg);
        goto done;
    }
    progress_say(log, "# engine validation loss: F32 %.4f, Q8_0 %.4f (%+.4f), Q8_0 file %.2f MB\n", loss_f32, loss_q8,
        loss_q8 - loss_f32, q8_size / 1e6);
    rc = 0;
done:
    free(f32);
    free(q8);
    char_vocab_free(&v);
    return rc;
}

int main(int argc, char **argv) {
    options o;
    if (!parse(argc, argv, &o)) {
        usage();
        return 1;
    }
    sac_error err = {0};
    char_dataset data;
    if (char_dataset_load(o.data, 0.9, &data, &err)) return fprintf(stderr, "train: %s\n", err.msg), 1;
    if (o.eval_model) {
        int rc = eval_model(&o, &data);
        char_dataset_free(&data);
        return rc;
    }

    o.train.model.n_vocab = data.n_vocab + 1; /* + <unk> */
    sac_pool *pool = NULL;
    trainer tr;
    if (sac_pool_new(o.threads, &pool, &err) || trainer_new(&tr, &o.train, &data, pool, &err)) {
        fprintf(stderr, "train: %s\n", err.msg);
        return 1;
    }
    FILE *log = o.log ? fopen(o.log, "a") : NULL;
    if (o.log && !log) return fprintf(stderr, "train: cannot open the log '%s'\n", o.log), 1;
    const gpt2_config *c = &o.train.model;
    const double flops_per_token = trainer_flops_per_token(c, o.train.seq_len);
    const double tokens_per_step = (double)o.train.batch_size * o.train.seq_len;
    FILE *resume = o.checkpoint && !o.bench_steps ? fopen(o.checkpoint, "rb") : NULL;
    if (resume) {
        fclose(resume);
        if (trainer_load(&tr, o.checkpoint, &err)) return fprintf(stderr, "train: %s\n", err.msg), 1;
        progress_say(log, "# resumed from %s at step %lld\n", o.checkpoint, (long long)tr.step);
    }
    progress_say(log, "# %s: vocab %d, %d layers, embd %d, %d heads, ff %d, ctx %d; %zu parameters; batch %d × %d; "
             "%lld steps, lr %g → %g, warm-up %lld; AdamW (%g, %g) wd %g; clip %g; seed %llu; %d threads; "
             "%.1f MFLOP/token\n",
        o.data, c->n_vocab, c->n_layer, c->n_embd, c->n_head, c->n_ff, c->n_ctx, tr.model.n_params,
        o.train.batch_size, o.train.seq_len, (long long)o.train.max_steps, o.train.schedule.max_lr,
        o.train.schedule.min_lr, (long long)o.train.schedule.warmup_steps, o.train.adamw.beta1,
        o.train.adamw.beta2, o.train.adamw.weight_decay, o.train.grad_clip, (unsigned long long)o.train.seed,
        sac_pool_size(pool), flops_per_token / 1e6);

    if (o.bench_steps) { /* one warm-up step, then the timed ones */
        trainer_step(&tr);
        const double t0 = progress_wall_seconds(), c0 = progress_cpu_seconds();
        float loss = 0;
        for (int64_t i = 0; i < o.bench_steps; i++) loss = trainer_step(&tr);
        const double per_step = (progress_wall_seconds() - t0) / (double)o.bench_steps;
        const double cpu_per_step = (progress_cpu_seconds() - c0) / (double)o.bench_steps;
        progress_say(log, "bench: %lld steps of %.0f tokens: %.3f s/step, %.0f tokens/s, %.2f GFLOP/s; CPU %.3f s/step "
                 "(%.2f GFLOP per CPU-second); loss %.3f\n",
            (long long)o.bench_steps, tokens_per_step, per_step, tokens_per_step / per_step,
            tokens_per_step * flops_per_token / per_step / 1e9, cpu_per_step,
            tokens_per_step * flops_per_token / cpu_per_step / 1e9, loss);
        trainer_free(&tr);
        sac_pool_free(pool);
        char_dataset_free(&data);
        return 0;
    }

    progress_say(log, "step,train_loss,val_loss,lr,grad_norm,seconds,tokens_per_s\n");
    double interval_loss = 0.0, interval_t0 = tr.train_seconds;
    int interval_n = 0;
    while (tr.step < o.train.max_steps) {
        interval_loss += trainer_step(&tr);
        interval_n++;
        const int last = tr.step == o.train.max_steps;
        const int eval = (o.eval_every > 0 && tr.step % o.eval_every == 0) || last;
        if (tr.step % o.print_every == 0 || eval) {
            const double val = eval ? trainer_evaluate(&tr, o.eval_windows) : -1.0;
            const double rate = tokens_per_step * interval_n / (tr.train_seconds - interval_t0);
            char val_text[32] = "";
            if (eval) snprintf(val_text, sizeof val_text, "%.4f", val);
            progress_say(log, "%lld,%.4f,%s,%.3g,%.3f,%.1f,%.0f\n", (long long)tr.step, interval_loss / interval_n, val_text,
                tr.last_lr, tr.last_grad_norm, tr.train_seconds, rate);
            interval_loss = 0.0;
            interval_n = 0;
            interval_t0 = tr.train_seconds;
        }
        if (o.checkpoint && ((o.checkpoint_every > 0 && tr.step % o.checkpoint_every == 0) || last) &&
            trainer_save(&tr, o.checkpoint, &err))
            fprintf(stderr, "train: %s\n", err.msg);
    }
    progress_say(log, "# trained %lld steps (%.0f tokens) in %.1f min (%.2f GFLOP/s)\n", (long long)tr.step,
        tokens_per_step * (double)tr.step, tr.train_seconds / 60,
        tokens_per_step * (double)tr.step * flops_per_token / tr.train_seconds / 1e9);
    progress_say(log, "# validation loss (trainer, all %lld windows of %d): %.4f\n",
        (long long)char_dataset_val_windows(&data, o.train.seq_len, NULL), o.train.seq_len, trainer_evaluate(&tr, 0));
    int rc = export_model(&o, &tr, &data, log);
    if (log) fclose(log);
    trainer_free(&tr);
    sac_pool_free(pool);
    char_dataset_free(&data);
    return rc;
}
