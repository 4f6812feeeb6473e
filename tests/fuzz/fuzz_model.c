/* fuzz_model.c — libFuzzer over the whole model loader: GGUF parsing, architecture and
 * hyperparameters, tensor binding, shape and finiteness checks, tokenizer metadata, the text
 * the API renders from the file (metadata, tensor names); when a model loads, a small context
 * evaluates (and encodes) a few tokens and samples one. Every input is also loaded vocab-only.
 * Corpus: tests/fuzz/corpus/fuzz_model (tiny models of each architecture and the hostile corpus,
 * written by tests/hostile/corpus.mjs --fuzz-seeds). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "saccade.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every string the API hands out, so ASan sees any that is not terminated in bounds. */
static size_t walk_text(sac_model *m) {
    size_t total = 0;
    for (int32_t i = 0; i < sac_model_n_metadata(m); i++) {
        const char *key = NULL, *value = NULL;
        if (sac_model_metadata(m, i, &key, &value) == SAC_OK) total += strlen(key) + strlen(value);
    }
    for (int32_t i = 0; i < sac_model_n_tensors(m); i++) {
        const char *name = NULL, *type = NULL;
        int32_t n_dims;
        int64_t dims[4];
        if (sac_model_tensor(m, i, &name, &type, &n_dims, dims) == SAC_OK) total += strlen(name) + strlen(type);
    }
    sac_model_info in;
    sac_model_get_info(m, &in);
    return total + strlen(in.name) + strlen(in.architecture);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    volatile size_t sink = 0;
    sac_model *m = NULL;
    if (sac_model_load(data, size, SAC_LOAD_VOCAB_ONLY, &m) == SAC_OK) sink += walk_text(m);
    sac_model_free(m);
    m = NULL;
    if (sac_model_load(data, size, 0, &m) == SAC_OK) {
        sink += walk_text(m);
        sac_model_info in;
        sac_model_get_info(m, &in);
        sac_context_params p = sac_context_default_params();
        p.n_ctx = in.n_ctx < 8 ? in.n_ctx : 8;
        p.capture_attention = 1;
        sac_context *ctx = NULL;
        /* keep each input cheap: skip models whose context would be large */
        if (sac_context_memory(m, &p) < (64u << 20) && sac_context_new(m, &p, &ctx) == SAC_OK) {
            int32_t ids[3] = {0, in.n_vocab - 1, in.n_vocab / 2};
            int n = p.n_ctx < 3 ? p.n_ctx : 3;
            if (in.n_encoder_layer) sac_encode(ctx, ids, n, NULL);
            if (sac_eval(ctx, ids, n, NULL, 0) == SAC_OK) {
                int32_t next;
                sac_sample(ctx, &next);
            }
        }
        sac_context_free(ctx);
    }
    sac_model_free(m);
    (void)sink;
    return 0;
}
