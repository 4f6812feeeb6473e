/* reference_attend.h — the attention primitive computed independently of src/attend.c, for the
 * tests: float64 throughout, one (batch, head, query) at a time, straight from the formulas. */
#ifndef SAC_REFERENCE_ATTEND_H
#define SAC_REFERENCE_ATTEND_H

#include <stdint.h>

#include "saccade.h"

/* Same arguments as sac_attend (the shapes in saccade.h), outputs in double: out
 * [batch][n_q][d_v], weights and scores [batch][n_heads][n_q][n_k] (scores may be NULL). */
void ref_attend(const sac_attend_params *p, const float *queries, const float *keys, const float *values,
                const float *W, const int32_t *key_lengths, const uint8_t *mask, double *out, double *weights,
                double *scores);

/* Nadaraya–Watson's mean squared error at width w, by brute force from kernel values K(u)
 * (not log K): the evaluation points are the held-out ones, or with leave_one_out the training
 * points, each without itself. */
double ref_kernel_loss(const sac_kernel_fit_params *p, const float *x_train, const float *y_train,
                       const float *x_heldout, const float *y_heldout, double w);

#endif
