/* attend.h — what the attention primitive (attend.c) shares with the kernel regression fit
 * (kernel_fit.c): the kernels and the caller-buffer error messages of the model-free calls. */
#ifndef SAC_ATTEND_H
#define SAC_ATTEND_H

#include <stddef.h>
#include <stdint.h>

#include "saccade.h"

/* 1 for the kernel scores (GAUSSIAN, BOXCAR, EPANECHNIKOV). */
int sac_score_is_kernel(int32_t score);

/* A kernel's score at squared scaled distance u² = ‖q − k‖² w²: log K(u), −∞ where K = 0. */
double sac_kernel_log(int32_t score, double u2);

/* The model-free calls have no handle: their message goes to the caller's buffer (NULL or size
 * 0: dropped). Returns `status`, like sac_fail. */
sac_status sac_fail_msg(char *errmsg, size_t errmsg_size, sac_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* 1 when count = a·b·c fits in 64 bits and in a size_t (wasm32: 32 bits), with *count set. */
int sac_count3(uint64_t a, uint64_t b, uint64_t c, uint64_t *count);

/* Checks that buffer `name` is non-NULL and holds at least a·b·c elements (`len` given);
 * otherwise a message naming the buffer and both sizes. */
sac_status sac_check_len(char *errmsg, size_t errmsg_size, const char *name, const void *ptr, size_t len,
                         uint64_t a, uint64_t b, uint64_t c);

/* Checks that n floats are finite; otherwise a message naming the buffer and the index. */
sac_status sac_check_finite(char *errmsg, size_t errmsg_size, const char *name, const float *x, uint64_t n);

#endif
