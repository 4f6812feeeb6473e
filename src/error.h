/* error.h — the status-plus-message record every handle carries. */
#ifndef SAC_ERROR_H
#define SAC_ERROR_H

#include "saccade.h"

typedef struct sac_error {
    sac_status status;
    char msg[512];
} sac_error;

/* Records a failure and returns `status`, so callers can write `return sac_fail(err, ...)`.
 * `err` may be NULL (the message is then dropped). */
sac_status sac_fail(sac_error *err, sac_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

void sac_error_clear(sac_error *err);

/* Overflow-checked size arithmetic: return 0 and leave *out untouched on overflow. Inline, with
 * the compiler's overflow test where there is one (no 64-bit division): the kernels lay out
 * their workspace with it on every call. */
static inline int sac_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
#if defined(__GNUC__)
    uint64_t product;
    if (__builtin_mul_overflow(a, b, &product)) return 0;
    *out = product;
#else
    if (a != 0 && b > UINT64_MAX / a) return 0;
    *out = a * b;
#endif
    return 1;
}

static inline int sac_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (b > UINT64_MAX - a) return 0;
    *out = a + b;
    return 1;
}

#endif
