/* tokenizer_encoders.h — the encoders of one kind of vocabulary each, called by tokenizer.c
 * after it has split a text around its special tokens: tokenizer_bpe.c (gpt2),
 * tokenizer_spm.c (llama) and tokenizer_char.c (char). They sit below tokenizer.c and use
 * only the tables (tokenizer_impl.h), the text → id table (token_lookup.h), the merge
 * queue (merge_queue.h) and, for BPE, the pre-tokenizers (pretokenize.h). */
#ifndef SAC_TOKENIZER_ENCODERS_H
#define SAC_TOKENIZER_ENCODERS_H

#include "tokenizer_impl.h"

/* Encoders of one fragment of well-formed UTF-8 text that holds no special token.
 * Scratch memory is allocated per call; failures are reported through err. */
sac_status sac_bpe_encode(const sac_tokenizer *tok, const char *text, size_t len,
                          sac_token_sink *sink, sac_error *err);
/* `prefix_space`: prepend ▁ (llama.cpp does at the start of the text and after a special token). */
sac_status sac_spm_encode(const sac_tokenizer *tok, const char *text, size_t len, int prefix_space,
                          sac_token_sink *sink, sac_error *err);
/* `offset`: where the fragment starts in the text the caller gave, for messages. */
sac_status sac_char_encode(const sac_tokenizer *tok, const char *text, size_t len, size_t offset,
                           sac_token_sink *sink, sac_error *err);

/* Builds tok->merges from tokenizer.ggml.merges (gpt2); needs the text → id table. */
sac_status sac_bpe_load_merges(sac_tokenizer *tok, const gguf_file *f, sac_error *err);

#endif
