/* error.c — status names and the formatted message kept on each handle. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sac_status_name(sac_status status) {
    switch (status) {
    case SAC_OK: return "SAC_OK";
    case SAC_ERR_ARG: return "SAC_ERR_ARG";
    case SAC_ERR_NOMEM: return "SAC_ERR_NOMEM";
    case SAC_ERR_FORMAT: return "SAC_ERR_FORMAT";
    case SAC_ERR_UNSUPPORTED: return "SAC_ERR_UNSUPPORTED";
    case SAC_ERR_MODEL: return "SAC_ERR_MODEL";
    case SAC_ERR_CONTEXT: return "SAC_ERR_CONTEXT";
    case SAC_ERR_STATE: return "SAC_ERR_STATE";
    }
    return "SAC_ERR_UNKNOWN";
}

sac_status sac_fail(sac_error *err, sac_status status, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

void sac_error_clear(sac_error *err) {
    if (err) {
        err->status = SAC_OK;
        err->msg[0] = '\0';
    }
}

void *sac_malloc(size_t size) { return malloc(size); }
void sac_free(void *ptr) { free(ptr); }
