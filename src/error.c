/* error.c — status names and the formatted message kept on each handle. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unicode.h"

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

/* A message quotes the file's text (names, tokens), cut to a length: ill-formed UTF-8 in it
 * becomes U+FFFD here, as a browser's or Node's decoder shows it, so every surface prints the
 * same bytes. What does not fit is cut at a character. */
static void well_formed(char *msg, size_t cap) {
    size_t n = strlen(msg);
    if (sac_utf8_valid((const uint8_t *)msg, n)) return;
    char wide[3 * sizeof ((sac_error *)0)->msg]; /* each byte becomes at most 3 */
    sac_utf8_sanitize((const uint8_t *)msg, n, wide);
    size_t m = sac_utf8_sanitized_len((const uint8_t *)msg, n);
    while (m > cap - 1) /* back to the start of the last character */
        while ((wide[--m] & 0xC0) == 0x80) {}
    memcpy(msg, wide, m);
    msg[m] = '\0';
}

sac_status sac_fail(sac_error *err, sac_status status, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        well_formed(err->msg, sizeof err->msg);
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
