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

/* Encoder–decoder: encodes src (src_mask may be NULL; 0 = padding) and decodes tgt with
 * teacher forcing: logits[n_tgt][n_vocab]. Optional probabilities: enc_probs
 * [n_enc_layer][n_head][n_src][n_src], self_probs [n_layer][n_head][n_tgt][n_tgt],
 * cross_probs [n_layer][n_head][n_tgt][n_src]. */
void ref_encdec_forward(const ref_model *m, const int32_t *src, int n_src, const uint8_t *src_mask,
                        const int32_t *tgt, int n_tgt, double *logits, double *enc_probs, double *self_probs,
                        double *cross_probs);

/* Extras of ref_forward (NULL when unused), for the probe tests: scores receives the scaled
 * pre-softmax scores [n_layer][n_head][n][n] (−∞ for hidden keys and above the diagonal);
 * ablate ([n_layer][n_head], 1 = ablated) zeroes a head's output before the output projection.
 * kv_bf16 (the bf16 KV cache's test): keys and values rounded to bfloat16 before attention;
 * kv_q8 (the q8 cache's): queries, keys and values rounded to q8, head row by head row. */
typedef struct ref_probe {
    double *scores;
    const uint8_t *ablate;
    int kv_bf16, kv_q8;
} ref_probe;
extern ref_probe ref_probe_opts;

/* max |a − b| / max |b| over n values: the engine's error relative to the reference's scale. */
double ref_rel_error(const float *a, const double *b, size_t n);

/* Dequantizes n values of ggml type `type` from raw bytes (F32, F16, Q8_0, Q4_0). */
void ref_dequantize(uint32_t type, const uint8_t *bytes, int64_t n, double *out);

#endif
