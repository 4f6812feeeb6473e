/* softmax.h — the exponentiation step of a masked softmax, shared by the model's attention
 * (forward.c) and the attention primitive (attend.c). Inline so that the model's hot loop
 * compiles exactly as if it were written there (with inv_temp = 1 the multiply folds away). */
#ifndef SAC_SOFTMAX_H
#define SAC_SOFTMAX_H

#include <math.h>
#include <stdint.h>

/* s[j] ← exp((s[j] − max) · inv_temp), with masked scores (−∞) giving exactly 0; returns Σ s[j].
 * `max` is the largest finite score of the row, so the largest term is 1 and the sum is >= 1
 * when any score is finite (no overflow, no division by 0 after it). */
static inline float sac_softmax_exp(float *s, int32_t n, float max, float inv_temp) {
    float sum = 0.0f;
    for (int32_t j = 0; j < n; j++) {
        s[j] = s[j] == -INFINITY ? 0.0f : expf((s[j] - max) * inv_temp);
        sum += s[j];
    }
    return sum;
}

#endif
