/* optim.c — AdamW, the learning-rate schedule and gradient clipping. */
#include "optim.h"

#include <math.h>

typedef struct adamw_task {
    float *params, *m, *v;
    const float *grads;
    size_t n;
    float lr, beta1, beta2, eps, decay, m_correction, v_correction;
} adamw_task;

static void adamw_task_run(void *arg, int ith, int nth) {
    const adamw_task *a = arg;
    int64_t i0, i1;
    sac_split((int64_t)a->n, ith, nth, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) {
        const float g = a->grads[i];
        a->m[i] = a->beta1 * a->m[i] + (1.0f - a->beta1) * g;
        a->v[i] = a->beta2 * a->v[i] + (1.0f - a->beta2) * g * g;
        const float m_hat = a->m[i] / a->m_correction, v_hat = a->v[i] / a->v_correction;
        a->params[i] -= a->lr * (m_hat / (sqrtf(v_hat) + a->eps) + a->decay * a->params[i]);
    }
}

void adamw_update(sac_pool *pool, float *params, const float *grads, float *m, float *v, size_t n, int64_t t,
                  float lr, const adamw_config *c, int decay) {
    adamw_task a = {params, m, v, grads, n, lr, c->beta1, c->beta2, c->eps, decay ? c->weight_decay : 0.0f,
                    (float)(1.0 - pow(c->beta1, (double)t)), (float)(1.0 - pow(c->beta2, (double)t))};
    sac_pool_run_pieces(pool, adamw_task_run, &a);
}

float lr_at(const lr_schedule *s, int64_t step) {
    if (step < s->warmup_steps) return s->max_lr * (float)(step + 1) / (float)s->warmup_steps;
    if (step >= s->total_steps) return s->min_lr;
    const double progress = (double)(step - s->warmup_steps) / (double)(s->total_steps - s->warmup_steps);
    const double coeff = 0.5 * (1.0 + cos(3.14159265358979323846 * progress));
    return (float)(s->min_lr + coeff * (s->max_lr - s->min_lr));
}

float clip_grad_norm(float *grads, size_t n, float max_norm) {
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)grads[i] * grads[i];
    const double norm = sqrt(sum);
    if (max_norm > 0.0f && norm > max_norm) {
        const float scale = (float)(max_norm / norm);
        for (size_t i = 0; i < n; i++) grads[i] *= scale;
    }
    return (float)norm;
}
