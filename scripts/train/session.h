/* session.h — one training run of a task, behind one handle: what the JS library (through the
 * training wasm module) and the native tool train_task drive, step by step.
 *
 * Tasks:
 *   "reverse"  encoder–decoder: a string of lower-case letters → the same letters reversed
 *   "copy"     encoder–decoder: a string of lower-case letters → the same string
 *   "dates"    encoder–decoder: Model B's task, a date as people write it → ISO 8601 (dates.h)
 *   "text"     decoder-only character GPT-2 on a text given with sac_train_set_text
 * The encoder–decoder tasks draw fresh pairs every step and measure a held-out set (val_n pairs
 * drawn with eval_seed; dates from the held-out days) by loss and exact match; the text task
 * measures the validation loss over the last 10% of the text.
 *
 * Life of a run: sac_train_new(task) → sac_train_set(name, value)… (→ sac_train_set_text) →
 * sac_train_start → sac_train_step… / sac_train_evaluate / sac_train_probe / sac_train_export →
 * sac_train_free. Every call that can fail returns a status and leaves a message for
 * sac_train_errmsg. Everything random comes from `seed`, and the results do not depend on the
 * thread count; the native and the wasm builds give the same losses bit for bit. */
#ifndef TRAIN_SESSION_H
#define TRAIN_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "saccade.h"

typedef struct sac_train sac_train;

/* A run of `task` with its default options. *out is set even on failure (for the message),
 * except when memory runs out; free it with sac_train_free. */
sac_status sac_train_new(const char *task, sac_train **out);
void sac_train_free(sac_train *t);
const char *sac_train_errmsg(const sac_train *t);

/* Options, before sac_train_start (numbers; integers must be whole):
 *   model:     layers (both stacks of an encoder–decoder), enc_layers, dec_layers, embd, heads,
 *              ff (0: 4·embd), ctx
 *   optimizer: batch, steps (the schedule's length), lr, min_lr (<0: lr/10), warmup (<0: steps/20),
 *              wd, beta1, beta2, clip
 *   run:       seed, eval_seed, threads, val_n (held-out pairs / validation windows)
 *   reverse, copy: min_len, max_len (letters per string)
 * An unknown name, a value out of range or a fractional count is refused with the reason. */
sac_status sac_train_set(sac_train *t, const char *name, double value);
/* An option's value (after sac_train_start, the one in use), or one of: params, step, tokens
 * (trained so far), step_tokens, lr and grad_norm (of the last step), vocab. NaN: unknown. */
double sac_train_get(const sac_train *t, const char *name);
/* The text task's text (UTF-8, at most 256 MB, copied): the first 90% trains, the rest validates. */
sac_status sac_train_set_text(sac_train *t, const char *text, size_t len);

/* Checks the options, builds the model and initialises it from the seed. */
sac_status sac_train_start(sac_train *t);
/* One optimization step (fresh batch, forward, backward, clip, AdamW); *loss its training loss. */
sac_status sac_train_step(sac_train *t, float *loss);
/* Mean loss over the held-out set, and (encoder–decoder tasks) its exact match in [0, 1]
 * (teacher-forced argmax: exactly when greedy decoding writes the target; −1 for text). */
sac_status sac_train_evaluate(sac_train *t, float *loss, float *exact);

/* Runs `input` through the current weights and keeps the attention maps: encoder–decoder
 * tasks decode greedily and keep the cross-attention of the decoded positions (queries: the
 * output tokens, <eos> included; keys: the source characters); the text task keeps the
 * self-attention over the input's last ctx characters (queries = keys). At most 1 MB. */
sac_status sac_train_probe(sac_train *t, const char *input, size_t len);
/* Of the last probe: 0 kind (0 self, 1 cross), 1 layers, 2 heads, 3 queries, 4 keys. */
int32_t sac_train_probe_dim(const sac_train *t, int32_t which);
/* [layers][heads][queries][keys] probabilities (0 above the diagonal of self-attention). */
const float *sac_train_probe_maps(const sac_train *t);
/* The decoded output (text: the most likely next character), NUL-terminated. */
const char *sac_train_probe_output(const sac_train *t);
/* The labels of the queries (keys = 0) or keys (keys = 1): one NUL-terminated string per
 * token, one after the other; *size their total bytes. */
const char *sac_train_probe_labels(const sac_train *t, int32_t keys, size_t *size);

/* The current weights as a GGUF file the engine loads: type "f32", "f16", "q8_0" or "q4_0"
 * (matrices; vectors stay F32). *out is malloc'ed; the caller frees it. */
sac_status sac_train_export(sac_train *t, const char *type, const char *name, uint8_t **out, size_t *size);

#endif
