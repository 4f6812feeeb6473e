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

#endif
