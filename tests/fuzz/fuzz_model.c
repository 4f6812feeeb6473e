/* fuzz_model.c — libFuzzer over the whole model loader: GGUF parsing, architecture and
 * hyperparameters, tensor binding and shape checks, tokenizer metadata; when a model loads,
 * a small context evaluates (and encodes) a few tokens. Seeds: small random models of each
 * architecture, written by build/tools/make_model (see the Makefile's fuzz target). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "saccade.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sac_model *m = NULL;
    if (sac_model_load(data, size, 0, &m) == SAC_OK) {
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
    return 0;
}
