/* probe.h — looking inside a context's attention beyond its probabilities: the query and key
 * vectors of every layer (for a neuron view) and the head-ablation mask. Both cost nothing
 * when off: the forward pass calls sac_probe_attended once per attention call, which returns
 * at once unless q/k capture is on or a head of that kind is ablated. Score capture lives in
 * capture.c beside the probabilities, in their layout. */
#ifndef SAC_PROBE_H
#define SAC_PROBE_H

#include "error.h"

struct sac_context;
struct sac_model;

typedef struct sac_probe {
    int qk;               /* 1: record queries and keys */
    int32_t q_dim[3];     /* floats per query row of a kind (n_embd), 0 when the kind is absent */
    int32_t k_dim[3];     /* floats per key row (kv_dim for self, n_embd for cross and encoder) */
    float *q[3], *k[3];   /* per kind: [layers][n_ctx][q_dim], [layers][n_ctx][k_dim] */
    uint8_t *ablate[3];   /* per kind: [layers][n_head], 1 = the head's output is zeroed; NULL = none */
    int32_t qk_from;      /* first decoder position recorded since q/k capture began (0: all) */
    int enc_qk;           /* 1: the last encode ran with q/k capture on */
} sac_probe;

/* Bytes q/k capture takes for a model and context length (0 when off), UINT64_MAX on overflow. */
uint64_t sac_probe_bytes(const struct sac_model *m, int32_t n_ctx, int qk);
/* Sets up the probe of a new context: q/k storage when `qk`, the self-attention ablation mask
 * when `ablate` is not NULL (n_layer × n_head bytes). */
sac_status sac_probe_init(struct sac_context *ctx, int qk, const uint8_t *ablate);
void sac_probe_free(sac_probe *p);

/* Called by the forward pass after each attention call wrote its heads into act.att: records
 * q and k (keys `k` as f32, kv_stride floats apart: the batch's n new keys for self-attention,
 * n_keys of them for cross and encoder) and zeroes ablated heads. */
void sac_probe_attended(struct sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t n, const float *k,
                        int64_t kv_stride, int32_t n_keys);

#endif
