/* optim.h — the optimizer side of training: AdamW, the learning-rate schedule (linear warm-up,
 * then cosine decay) and gradient clipping by global norm. */
#ifndef TRAIN_OPTIM_H
#define TRAIN_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include "threadpool.h"

typedef struct adamw_config {
    float beta1, beta2, eps;
    float weight_decay; /* λ, decoupled from the gradient (Loshchilov & Hutter) */
} adamw_config;

/* One AdamW step over n parameters, t ≥ 1 the step number (for the bias correction):
 *   m = β1·m + (1 − β1)·g,   v = β2·v + (1 − β2)·g²,
 *   m̂ = m / (1 − β1^t),      v̂ = v / (1 − β2^t),
 *   θ = θ − lr · (m̂ / (√v̂ + ε) + λ·θ)      (λ = weight_decay when `decay`, else 0).
 * The same update as PyTorch's torch.optim.AdamW. */
void adamw_update(sac_pool *pool, float *params, const float *grads, float *m, float *v, size_t n, int64_t t,
                  float lr, const adamw_config *c, int decay);

typedef struct lr_schedule {
    float max_lr, min_lr;
    int64_t warmup_steps; /* steps 0 .. warmup_steps − 1 rise linearly to max_lr */
    int64_t total_steps;  /* then a half cosine from max_lr down to min_lr at total_steps */
} lr_schedule;

/* The learning rate of step `step` (counted from 0): max_lr · (step + 1) / warmup_steps during
 * the warm-up, then min_lr + (max_lr − min_lr) · ½(1 + cos(π · progress)) with progress going
 * from 0 to 1 between warmup_steps and total_steps; min_lr from total_steps on. */
float lr_at(const lr_schedule *s, int64_t step);

/* The L2 norm of the whole gradient (accumulated in double); when it exceeds max_norm > 0 the
 * gradient is scaled by max_norm / norm. Returns the norm before clipping. */
float clip_grad_norm(float *grads, size_t n, float max_norm);

#endif
