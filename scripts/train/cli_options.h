/* cli_options.h — the command-line options of the training tools: each tool lists its options
 * in a table, and one parser reads "--name value" pairs into it, checking every value (a
 * number must be a whole number, or a finite decimal, and nothing else) and saying what is
 * wrong. */
#ifndef TRAIN_CLI_OPTIONS_H
#define TRAIN_CLI_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

typedef enum cli_kind {
    CLI_STRING,  /* const char *: the argument itself */
    CLI_STRINGS, /* const char *[capacity], *count of them: the option may repeat */
    CLI_INT32,   /* int32_t */
    CLI_INT64,   /* int64_t */
    CLI_UINT64,  /* uint64_t */
    CLI_FLOAT,   /* float, finite */
} cli_kind;

typedef struct cli_option {
    const char *name; /* "--steps" */
    cli_kind kind;
    void *value;
    int *count;       /* CLI_STRINGS only */
    int capacity;     /* CLI_STRINGS only */
} cli_option;

/* Reads argv[1 .. argc-1] into the options of the table. Returns 1, or 0 with what is wrong
 * (an unknown option, a missing or malformed value) in why[why_size]. */
int cli_parse(int argc, char **argv, const cli_option *table, int n_options, char *why, size_t why_size);

#endif
