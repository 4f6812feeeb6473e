/* trainer.h — the training loop's state and its steps: sample a batch, forward, backward, clip,
 * AdamW at the scheduled learning rate; evaluate on the validation split; save and resume
 * checkpoints. Everything random comes from the seed, and a checkpoint holds the random state,
 * so a resumed run continues bit for bit as if it had never stopped. */
#ifndef TRAIN_TRAINER_H
#define TRAIN_TRAINER_H

#include <stdint.h>

#include "data.h"
#include "gpt2.h"
#include "optim.h"

typedef struct train_config {
    gpt2_config model;
    int32_t batch_size, seq_len; /* B sequences of T tokens per step (T ≤ model.n_ctx) */
    int64_t max_steps;
    lr_schedule schedule;        /* its total_steps is normally max_steps */
    adamw_config adamw;
    float grad_clip;             /* max global gradient norm; 0 → no clipping */
    uint64_t seed;
} train_config;

/* GPT-2-like defaults for a model of this shape: AdamW (0.9, 0.95, 1e-8, λ 0.1), lr 1e-3
 * warming up over 100 steps and decaying to 1e-4, clipping at 1.0, seed 1337. */
train_config train_config_default(void);

typedef struct trainer {
    train_config config;
    const char_dataset *data;     /* borrowed */
    gpt2_model model;
    float *adam_m, *adam_v;       /* AdamW moments, n_params each */
    train_rng batch_rng;          /* draws the batches */
    int64_t step;                 /* steps done */
    int32_t *inputs, *targets;    /* [B][T] */
    double train_seconds;         /* time spent in trainer_step, over every run of a resumed training */
    float last_grad_norm, last_lr;
} trainer;

/* Builds the model, initialises it from config.seed (gpt2_init) and zeroes the optimizer. The
 * model's n_vocab must cover the dataset's characters. */
sac_status trainer_new(trainer *tr, const train_config *config, const char_dataset *data, sac_pool *pool,
                       sac_error *err);
void trainer_free(trainer *tr);

/* One optimization step; returns the training loss of its batch (before the update). */
float trainer_step(trainer *tr);

/* Mean cross entropy (nats per character) over the first `max_windows` validation windows of
 * seq_len characters (≤ 0: all of them), evaluated B at a time. */
double trainer_evaluate(trainer *tr, int64_t max_windows);

/* Training FLOPs per token of the model at sequence length T: 6 per weight of every matrix
 * product plus the attention scores and mixing (3× the forward's 4·C·(T+1)/2 per layer). */
double trainer_flops_per_token(const gpt2_config *c, int32_t T);

/* Checkpoints: the configuration, step, random state, time, parameters and AdamW moments.
 * Loading requires the same model shape and batch shape; it replaces the trainer's state. */
sac_status trainer_save(const trainer *tr, const char *path, sac_error *err);
sac_status trainer_load(trainer *tr, const char *path, sac_error *err);

#endif
