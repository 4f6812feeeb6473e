/* data.h — a character-level dataset: a UTF-8 text, its vocabulary (every distinct character,
 * in code point order) and the text as token ids, split into a training part (the first
 * `train_fraction` of the characters) and a validation part (the rest). */
#ifndef TRAIN_DATA_H
#define TRAIN_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"

typedef struct char_dataset {
    int32_t n_vocab;
    uint32_t *codepoints; /* [n_vocab], ascending: token id → character */
    int32_t *tokens;      /* [n_tokens], the whole text */
    int64_t n_tokens;
    int64_t n_train;      /* tokens[0, n_train) train, tokens[n_train, n_tokens) validation */
} char_dataset;

/* Builds the dataset from `len` bytes of text, which must be well-formed UTF-8 with at least
 * two characters in each part. */
sac_status char_dataset_from_text(const char *text, size_t len, double train_fraction, char_dataset *out,
                                  sac_error *err);
sac_status char_dataset_load(const char *path, double train_fraction, char_dataset *out, sac_error *err);
void char_dataset_free(char_dataset *d);

/* The id of code point cp, or -1 when the vocabulary lacks it. */
int32_t char_dataset_id(const char_dataset *d, uint32_t cp);

/* The UTF-8 form of token id (1–4 bytes and a NUL) in out[5]. */
void char_dataset_token_text(const char_dataset *d, int32_t id, char out[5]);

/* B training windows of T + 1 consecutive tokens, each starting at a uniformly drawn
 * position of the training part: inputs[b][t] = window[t], targets[b][t] = window[t + 1].
 * Needs n_train > T. */
void char_dataset_train_batch(const char_dataset *d, int32_t B, int32_t T, train_rng *rng, int32_t *inputs,
                              int32_t *targets);

/* The number of validation windows of T inputs: consecutive, non-overlapping, covering the
 * validation part (the last window may be shorter; *last_len gets its length). */
int64_t char_dataset_val_windows(const char_dataset *d, int32_t T, int32_t *last_len);
/* Window w (0-based): n inputs and their targets; returns n (T, or less for the last one). */
int32_t char_dataset_val_window(const char_dataset *d, int32_t T, int64_t w, int32_t *inputs, int32_t *targets);

/* The dataset's characters plus "<unk>" (token type 2), as a GGUF "char" tokenizer lists
 * them: what the exported model reads. */
typedef struct char_vocab {
    char (*texts)[8];
    const char **tokens; /* [n] pointing into texts */
    int32_t *types;      /* [n] 1 normal, 2 unknown */
    int32_t n;           /* n_vocab + 1 */
} char_vocab;

sac_status char_vocab_make(const char_dataset *d, char_vocab *v, sac_error *err);
void char_vocab_free(char_vocab *v);

#endif
