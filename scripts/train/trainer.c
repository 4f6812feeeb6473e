/* trainer.c — one training step after another, validation, and checkpoints. */
#include "trainer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

train_config train_config_default(void) {
    train_config c;
    memset(&c, 0, sizeof c);
    c.model.norm_eps = 1e-5f;
    c.batch_size = 32;
    c.seq_len = 128;
    c.max_steps = 1000;
    c.schedule = (lr_schedule){1e-3f, 1e-4f, 100, 1000};
    c.adamw = (adamw_config){0.9f, 0.95f, 1e-8f, 0.1f};
    c.grad_clip = 1.0f;
    c.seed = 1337;
    return c;
}

/* Separate streams for the weights and the batches, both from the one seed. */
static train_rng batch_stream(uint64_t seed) { return train_rng_seed(seed ^ 0xB47C4E5u); }

sac_status trainer_new(trainer *tr, const train_config *config, const char_dataset *data, sac_pool *pool,
                       sac_error *err) {
    memset(tr, 0, sizeof *tr);
    if (config->model.n_vocab < data->n_vocab)
        return sac_fail(err, SAC_ERR_ARG, "the model has %d tokens, the text %d characters", config->model.n_vocab,
                        data->n_vocab);
    if (data->n_train <= config->seq_len)
        return sac_fail(err, SAC_ERR_ARG, "the training text (%lld characters) is shorter than one window",
                        (long long)data->n_train);
    sac_status st = gpt2_build(&tr->model, &config->model, config->batch_size, config->seq_len, pool, err);
    if (st) return st;
    const size_t n = tr->model.n_params, n_batch = (size_t)config->batch_size * (size_t)config->seq_len;
    tr->adam_m = calloc(n, sizeof(float));
    tr->adam_v = calloc(n, sizeof(float));
    tr->inputs = calloc(n_batch, sizeof(int32_t));
    tr->targets = calloc(n_batch, sizeof(int32_t));
    if (!tr->adam_m || !tr->adam_v || !tr->inputs || !tr->targets) {
        trainer_free(tr);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for the optimizer state");
    }
    tr->config = *config;
    tr->data = data;
    train_rng init_rng = train_rng_seed(config->seed);
    gpt2_init(&tr->model, &init_rng);
    tr->batch_rng = batch_stream(config->seed);
    return SAC_OK;
}

void trainer_free(trainer *tr) {
    gpt2_free(&tr->model);
    free(tr->adam_m);
    free(tr->adam_v);
    free(tr->inputs);
    free(tr->targets);
    memset(tr, 0, sizeof *tr);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

float trainer_step(trainer *tr) {
    const double t0 = now_seconds();
    const train_config *c = &tr->config;
    gpt2_model *m = &tr->model;
    char_dataset_train_batch(tr->data, c->batch_size, c->seq_len, &tr->batch_rng, tr->inputs, tr->targets);
    const float loss = gpt2_forward(m, tr->inputs, tr->targets, c->batch_size, c->seq_len);
    gpt2_zero_grad(m);
    gpt2_backward(m);
    tr->last_grad_norm = clip_grad_norm(m->grads_memory, m->n_params, c->grad_clip);
    tr->last_lr = lr_at(&c->schedule, tr->step);

    /* AdamW tensor by tensor: weight decay on matrices only, not on biases and norms */
    gpt2_tensor t[GPT2_N_TENSORS];
    gpt2_tensors(&c->model, t);
    size_t offset = 0;
    for (int i = 0; i < GPT2_N_TENSORS; i++) {
        const size_t n = (size_t)(t[i].per_layer ? c->model.n_layer : 1) * (size_t)(t[i].rows * t[i].cols);
        adamw_update(m->pool, m->params_memory + offset, m->grads_memory + offset, tr->adam_m + offset,
                     tr->adam_v + offset, n, tr->step + 1, tr->last_lr, &c->adamw, t[i].is_matrix);
        offset += n;
    }
    tr->step++;
    tr->train_seconds += now_seconds() - t0;
    return loss;
}

double trainer_evaluate(trainer *tr, int64_t max_windows) {
    const int32_t B = tr->config.batch_size, T = tr->config.seq_len;
    int32_t last_len;
    int64_t n_windows = char_dataset_val_windows(tr->data, T, &last_len);
    if (max_windows > 0 && max_windows < n_windows) {
        n_windows = max_windows;
        last_len = T;
    }
    double sum = 0.0;
    int64_t count = 0;
    for (int64_t w = 0; w < n_windows;) {
        /* up to B consecutive windows of one length (only the very last may be shorter) */
        const int32_t len = w == n_windows - 1 ? last_len : T;
        int32_t rows = 0;
        while (rows < B && w + rows < n_windows && (w + rows == n_windows - 1 ? last_len : T) == len) {
            char_dataset_val_window(tr->data, T, w + rows, tr->inputs + (int64_t)rows * len,
                                    tr->targets + (int64_t)rows * len);
            rows++;
        }
        gpt2_forward(&tr->model, tr->inputs, tr->targets, rows, len);
        for (int64_t n = 0; n < (int64_t)rows * len; n++) sum += tr->model.acts.losses[n];
        count += (int64_t)rows * len;
        w += rows;
    }
    return sum / (double)count;
}

double trainer_flops_per_token(const gpt2_config *c, int32_t T) {
    const double C = c->n_embd, F = c->n_ff, L = c->n_layer, V = c->n_vocab;
    const double matmul_weights = L * (3 * C * C + C * C + 2 * C * F) + V * C;
    const double attention_fwd = L * 4.0 * C * (T + 1) / 2.0;
    return 6.0 * matmul_weights + 3.0 * attention_fwd;
}

/* ---------------------------------------------------------------------------------------- */
/* Checkpoints                                                                               */
/* ---------------------------------------------------------------------------------------- */

#define CHECKPOINT_MAGIC "SACTRN01"

/* The fixed-size header, written field by field in host order (the file is a scratch file
 * for resuming on the same machine, not an interchange format). */
typedef struct checkpoint_header {
    int32_t shape[8]; /* n_vocab, n_ctx, n_embd, n_head, n_layer, n_ff, batch_size, seq_len */
    float norm_eps;
    int64_t step;
    uint64_t rng_state;
    double train_seconds;
    uint64_t n_params;
} checkpoint_header;

static checkpoint_header header_of(const trainer *tr) {
    const gpt2_config *c = &tr->config.model;
    checkpoint_header h;
    memset(&h, 0, sizeof h);
    const int32_t shape[8] = {c->n_vocab, c->n_ctx, c->n_embd, c->n_head, c->n_layer, c->n_ff,
                              tr->config.batch_size, tr->config.seq_len};
    memcpy(h.shape, shape, sizeof shape);
    h.norm_eps = c->norm_eps;
    h.step = tr->step;
    h.rng_state = tr->batch_rng.state;
    h.train_seconds = tr->train_seconds;
    h.n_params = tr->model.n_params;
    return h;
}

static int write_all(FILE *f, const void *p, size_t size, size_t n) { return fwrite(p, size, n, f) == n; }
static int read_all(FILE *f, void *p, size_t size, size_t n) { return fread(p, size, n, f) == n; }

sac_status trainer_save(const trainer *tr, const char *path, sac_error *err) {
    /* write beside the target and rename, so an interrupted save never leaves half a file */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return sac_fail(err, SAC_ERR_ARG, "checkpoint path too long");
    FILE *f = fopen(tmp, "wb");
    if (!f) return sac_fail(err, SAC_ERR_ARG, "cannot write '%s'", tmp);
    const checkpoint_header h = header_of(tr);
    const size_t n = tr->model.n_params;
    int ok = write_all(f, CHECKPOINT_MAGIC, 1, 8) && write_all(f, h.shape, sizeof h.shape[0], 8) &&
             write_all(f, &h.norm_eps, sizeof h.norm_eps, 1) && write_all(f, &h.step, sizeof h.step, 1) &&
             write_all(f, &h.rng_state, sizeof h.rng_state, 1) &&
             write_all(f, &h.train_seconds, sizeof h.train_seconds, 1) &&
             write_all(f, &h.n_params, sizeof h.n_params, 1) &&
             write_all(f, tr->model.params_memory, sizeof(float), n) && write_all(f, tr->adam_m, sizeof(float), n) &&
             write_all(f, tr->adam_v, sizeof(float), n);
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        return sac_fail(err, SAC_ERR_ARG, "cannot write the checkpoint '%s'", path);
    }
    return SAC_OK;
}

sac_status trainer_load(trainer *tr, const char *path, sac_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return sac_fail(err, SAC_ERR_ARG, "cannot open the checkpoint '%s'", path);
    char magic[8];
    checkpoint_header h;
    memset(&h, 0, sizeof h);
    int ok = read_all(f, magic, 1, 8) && memcmp(magic, CHECKPOINT_MAGIC, 8) == 0 &&
             read_all(f, h.shape, sizeof h.shape[0], 8) && read_all(f, &h.norm_eps, sizeof h.norm_eps, 1) &&
             read_all(f, &h.step, sizeof h.step, 1) && read_all(f, &h.rng_state, sizeof h.rng_state, 1) &&
             read_all(f, &h.train_seconds, sizeof h.train_seconds, 1) &&
             read_all(f, &h.n_params, sizeof h.n_params, 1);
    if (!ok) {
        fclose(f);
        return sac_fail(err, SAC_ERR_FORMAT, "'%s' is not a saccade training checkpoint", path);
    }
    const checkpoint_header mine = header_of(tr);
    if (memcmp(h.shape, mine.shape, sizeof h.shape) != 0 || h.norm_eps != mine.norm_eps ||
        h.n_params != mine.n_params) {
        fclose(f);
        return sac_fail(err, SAC_ERR_ARG,
                        "checkpoint '%s' has another shape (vocab %d, ctx %d, embd %d, heads %d, layers %d, ff %d, "
                        "batch %d × %d)",
                        path, h.shape[0], h.shape[1], h.shape[2], h.shape[3], h.shape[4], h.shape[5], h.shape[6],
                        h.shape[7]);
    }
    const size_t n = tr->model.n_params;
    ok = read_all(f, tr->model.params_memory, sizeof(float), n) && read_all(f, tr->adam_m, sizeof(float), n) &&
         read_all(f, tr->adam_v, sizeof(float), n);
    fclose(f);
    if (!ok) return sac_fail(err, SAC_ERR_FORMAT, "checkpoint '%s' is truncated", path);
    tr->step = h.step;
    tr->batch_rng.state = h.rng_state;
    tr->train_seconds = h.train_seconds;
    return SAC_OK;
}
