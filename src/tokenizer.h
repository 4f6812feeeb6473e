/* tokenizer.h — building a tokenizer from GGUF metadata (the public calls are in saccade.h). */
#ifndef SAC_TOKENIZER_H
#define SAC_TOKENIZER_H

#include "gguf.h"

typedef struct sac_tokenizer sac_tokenizer;

/* Builds the tokenizer the file's tokenizer.ggml.* keys describe. A file without
 * tokenizer.ggml.model yields SAC_OK and *out == NULL (the model then has no tokenizer).
 * Unknown tokenizer models are SAC_ERR_UNSUPPORTED; inconsistent metadata SAC_ERR_MODEL. */
sac_status sac_tokenizer_load(const gguf_file *f, sac_tokenizer **out, sac_error *err);
void sac_tokenizer_free(sac_tokenizer *tok);
int32_t sac_tokenizer_n_vocab(const sac_tokenizer *tok);

/* The ids a model can produce: the rows of its embedding table, which may be more than the
 * tokenizer's tokens (Qwen pads its table to a round size); for a model put together from
 * a tokenizer alone, the tokenizer's tokens. The model must have a tokenizer. */
int32_t sac_tokenizer_n_ids(const sac_model *model);

/* Whether `id` is one the model can produce, 0 <= id < sac_tokenizer_n_ids (SAC_ERR_ARG with a
 * message in err if not); *padding is 1 for an id past the tokenizer's tokens (a padding row of
 * the embedding table: no token, no text). */
sac_status sac_tokenizer_check_id(const sac_model *model, int32_t id, int *padding, sac_error *err);

/* The bytes token `id` decodes to (valid as long as the model). Padding ids, past the
 * tokenizer's tokens but below sac_tokenizer_n_ids, decode to nothing, as control tokens
 * do; ids outside [0, n_ids) are SAC_ERR_ARG with a message in err. */
sac_status sac_tokenizer_piece(const sac_model *model, int32_t id, const char **bytes, size_t *len, sac_error *err);

#endif
