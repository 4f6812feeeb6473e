/* token_special.c — the vocabulary's special tokens as chat needs them: each token's spelling
 * (what a chat template writes as bos_token or eos_token), and the tokens that end a generation.
 *
 * End-of-generation (EOG) tokens: EOS, the ids tokenizer.ggml.eot_token_id and
 * tokenizer.ggml.eom_token_id name, and every token spelled as an end-of-turn marker of a
 * common chat format ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", ...). Converters rarely
 * write eot_token_id, so llama.cpp finds end-of-turn tokens by these spellings, and so do we:
 * an instruct model ends its reply with one of them, not with EOS. */
#include "model.h"
#include "saccade.h"
#include "tokenizer_impl.h"

static const char *const eog_spellings[] = {
    "<|eot_id|>",    "<|im_end|>", "<|end|>",       "<|return|>",      "<|call|>",
    "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>",           "_<EOT>",
    "<|end_of_text|>", "<end_of_utterance>",
};

static sac_status no_tokenizer(sac_model *model) {
    return sac_fail(&model->error, SAC_ERR_STATE, "no tokenizer: the model has no tokenizer.ggml.* metadata");
}

sac_status sac_token_spelling(sac_model *model, int32_t token, const char **text, size_t *len) {
    if (!model) return SAC_ERR_ARG;
    if (!model->tokenizer) return no_tokenizer(model);
    if (!text || !len) return sac_fail(&model->error, SAC_ERR_ARG, "sac_token_spelling: text or len is NULL");
    const sac_tokenizer *tok = model->tokenizer;
    int padding = 0;
    sac_status st = sac_tokenizer_check_id(model, token, &padding, &model->error);
    if (st != SAC_OK) return st;
    *text = padding ? "" : sac_token_text(tok, token); /* (a padding id is spelled as nothing) */
    *len = padding ? 0 : tok->tokens[token].text_len;
    return SAC_OK;
}

/* The id an optional metadata key names, or -1 (absent, not an integer, or out of range). */
static int32_t id_key(const sac_model *model, const char *key) {
    const gguf_kv *kv = sac_gguf_find_kv(&model->gguf, key);
    if (!kv || kv->type == GGUF_TYPE_F32 || kv->type == GGUF_TYPE_BOOL || kv->type == GGUF_TYPE_STRING ||
        kv->type == GGUF_TYPE_ARRAY || kv->type == GGUF_TYPE_F64)
        return -1;
    return kv->i64 >= 0 && kv->i64 < model->tokenizer->n_vocab ? (int32_t)kv->i64 : -1;
}

static int is_eog(const sac_model *model, int32_t id, int32_t eot, int32_t eom) {
    const sac_tokenizer *tok = model->tokenizer;
    if (id == tok->eos || id == eot || id == eom) return 1;
    const char *text = sac_token_text(tok, id);
    size_t len = tok->tokens[id].text_len;
    for (size_t i = 0; i < sizeof eog_spellings / sizeof *eog_spellings; i++)
        if (strlen(eog_spellings[i]) == len && !memcmp(eog_spellings[i], text, len)) return 1;
    return 0;
}

sac_status sac_token_eog(sac_model *model, int32_t *out, int32_t capacity, int32_t *n_tokens) {
    if (!model) return SAC_ERR_ARG;
    if (!model->tokenizer) return no_tokenizer(model);
    if (!n_tokens || capacity < 0 || (capacity > 0 && !out))
        return sac_fail(&model->error, SAC_ERR_ARG, "sac_token_eog: n_tokens is NULL, or out is NULL with capacity > 0");
    const int32_t eot = id_key(model, "tokenizer.ggml.eot_token_id"), eom = id_key(model, "tokenizer.ggml.eom_token_id");
    int32_t n = 0;
    for (int32_t id = 0; id < model->tokenizer->n_vocab; id++) {
        if (!is_eog(model, id, eot, eom)) continue;
        if (n < capacity) out[n] = id;
        n++;
    }
    *n_tokens = n;
    return n > capacity ? sac_fail(&model->error, SAC_ERR_ARG, "sac_token_eog: %d ids need room, capacity is %d", n,
                                   capacity)
                        : SAC_OK;
}
