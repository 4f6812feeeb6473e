/* eval_gguf.h — the validation loss of a GGUF model computed by the engine itself: what a user
 * of the shipped file gets, quantization and all. */
#ifndef TRAIN_EVAL_GGUF_H
#define TRAIN_EVAL_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "data.h"
#include "error.h"

/* Loads the model (sac_model_load), tokenizes the dataset's validation text with the model's
 * own tokenizer (sac_tokenize; the ids must be the dataset's, or SAC_ERR_MODEL), and returns in
 * *loss the mean cross entropy (nats per character) over the validation windows of T
 * characters (the same windows as trainer_evaluate; max_windows ≤ 0: all), each evaluated from
 * an empty context with sac_eval. */
sac_status eval_gguf_val_loss(const void *gguf, size_t size, const char_dataset *d, int32_t T, int32_t n_threads,
                              int64_t max_windows, double *loss, sac_error *err);

#endif
