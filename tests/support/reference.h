/* reference.h — an independent forward pass for checking the engine: float64, plain loops,
 * no SIMD, no threads, no KV cache (every call recomputes the whole sequence). */
#ifndef SAC_REFERENCE_H
#define SAC_REFERENCE_H

#include "test_models.h"

/* Logits of every position into logits[n][n_vocab]. When probs is not NULL it receives the
 * attention probabilities [n_layer][n_head][n][n] (row = query, 0 above the diagonal).
 * key_mask (may be NULL): key_mask[j] == 0 hides position j from every later query. */
void ref_forward(const ref_model *m, const int32_t *tokens, int n, const uint8_t *key_mask, double *logits,
                 double *probs);

/* Dequantizes n values of ggml type `type` from raw bytes (F32, F16, Q8_0, Q4_0). */
void ref_dequantize(uint32_t type, const uint8_t *bytes, int64_t n, double *out);

#endif
