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

/* Overflow-checked size arithmetic: return 0 and leave *out untouched on overflow. */
int sac_mul_u64(uint64_t a, uint64_t b, uint64_t *out);
int sac_add_u64(uint64_t a, uint64_t b, uint64_t *out);

#endif
