/* forward.h — the transformer's passes over a context's buffers (forward.c). */
#ifndef SAC_FORWARD_H
#define SAC_FORWARD_H

#include "context.h"

/* Runs n tokens (n <= n_batch) at positions n_past.., writes logits for the last token (or
 * every token with all_logits) starting at row `logits_row`, or no logits when
 * logits_row < 0 (an early chunk of a long prompt). Captured rows must be reserved. */
void sac_forward(sac_context *ctx, const int32_t *tokens, int32_t n, const uint8_t *key_mask,
                 int all_logits, int32_t logits_row);

/* The encoder over n source tokens (n <= n_batch; ctx->src_mask and n_src already set):
 * fills cross_k/cross_v (and the encoder rows of the capture when it is on). */
void sac_encoder_forward(sac_context *ctx, const int32_t *tokens, int32_t n);

#endif
