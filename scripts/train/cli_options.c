/* cli_options.c — see cli_options.h. */
#include "cli_options.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* strtoll/strtoull/strtof also take leading spaces, a '+' and (strtof) hexadecimal: not ours. */
static int plain_number(const char *v) {
    if (isspace((unsigned char)v[0]) || v[0] == '+') return 0;
    return strpbrk(v, "xX") == NULL;
}

static int whole_number(const char *v, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    if (!plain_number(v)) return 0;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end || errno || n < lo || n > hi) return 0;
    *out = n;
    return 1;
}

static int set_value(const cli_option *o, const char *v) {
    int64_t n;
    switch (o->kind) {
    case CLI_STRING:
        *(const char **)o->value = v;
        return 1;
    case CLI_STRINGS:
        if (*o->count >= o->capacity) return 0;
        ((const char **)o->value)[(*o->count)++] = v;
        return 1;
    case CLI_INT32:
        if (!whole_number(v, INT32_MIN, INT32_MAX, &n)) return 0;
        *(int32_t *)o->value = (int32_t)n;
        return 1;
    case CLI_INT64:
        if (!whole_number(v, INT64_MIN, INT64_MAX, &n)) return 0;
        *(int64_t *)o->value = n;
        return 1;
    case CLI_UINT64: {
        char *end;
        if (!plain_number(v) || v[0] == '-') return 0;
        errno = 0;
        unsigned long long u = strtoull(v, &end, 10);
        if (end == v || *end || errno) return 0;
        *(uint64_t *)o->value = u;
        return 1;
    }
    case CLI_FLOAT: {
        char *end;
        if (!plain_number(v)) return 0;
        float f = strtof(v, &end); /* too small for a float becomes 0 or subnormal, as atof did */
        if (end == v || *end || !isfinite(f)) return 0;
        *(float *)o->value = f;
        return 1;
    }
    }
    return 0;
}

static const char *expected(const cli_option *o) {
    switch (o->kind) {
    case CLI_INT32:
    case CLI_INT64: return "a whole number";
    case CLI_UINT64: return "a non-negative whole number";
    case CLI_FLOAT: return "a finite number";
    default: return "a value";
    }
}

int cli_parse(int argc, char **argv, const cli_option *table, int n_options, char *why, size_t why_size) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const cli_option *o = NULL;
        for (int k = 0; k < n_options && !o; k++)
            if (!strcmp(a, table[k].name)) o = &table[k];
        if (!o) return snprintf(why, why_size, "unknown option '%s'", a), 0;
        if (i + 1 >= argc) return snprintf(why, why_size, "%s needs a value", a), 0;
        const char *v = argv[++i];
        if (!set_value(o, v)) {
            if (o->kind == CLI_STRINGS) return snprintf(why, why_size, "%s may be given at most %d times", a, o->capacity), 0;
            return snprintf(why, why_size, "%s takes %s, not '%s'", a, expected(o), v), 0;
        }
    }
    return 1;
}
