/* capture.h — the attention a context keeps: the softmax probabilities of every layer and
 * head, for the three kinds (decoder self-attention, decoder → encoder cross-attention,
 * encoder self-attention), all in one layout.
 *
 * Query row q of a kind is a block of n_layers × n_head × n_keys(q) floats, layer-major, then
 * head, then key; the rows of a kind are contiguous in query order:
 *   SELF     n_layers = n_layer          n_keys(q) = q + 1   row q starts at L·H·q(q+1)/2
 *   CROSS    n_layers = n_layer          n_keys    = n_src   row q starts at L·H·n_src·q
 *   ENCODER  n_layers = n_encoder_layer  n_keys    = n_src   row q starts at LE·H·n_src·q
 *
 * Every size is computed in 64 bits and checked against `limit` (the bytes this build can
 * address: SIZE_MAX, 4 GB in wasm32), so a capture that does not fit is refused with a
 * message, never wrapped. The forward pass writes through sac_capture_slot; the context owns
 * the capture and exposes it through the sac_attention_* calls. */
#ifndef SAC_CAPTURE_H
#define SAC_CAPTURE_H

#include "error.h"

typedef struct sac_capture_buffer {
    float *data;
    uint64_t cap;            /* floats allocated */
} sac_capture_buffer;

typedef struct sac_capture {
    int on;                  /* 1: the forward pass records probabilities */
    int encdec;              /* 1: cross and encoder kinds exist */
    int32_t n_layer, n_encoder_layer, n_head, n_ctx;
    uint64_t limit;          /* most bytes the full capture of the context may take */
    int32_t n_rows;          /* decoder rows captured or zero-filled (self; cross when n_src) */
    int32_t n_src;           /* keys of cross and encoder rows: the encoded source, 0 before any */
    int32_t n_enc_rows;      /* encoder rows: n_src when the last encode ran with capture on */
    sac_capture_buffer self, cross, enc;
    int scores;              /* 1: the pre-softmax scores are kept too, in the same layout */
    int scores_stale;        /* 1: rows were captured before scores were: unreadable until a reset */
    sac_capture_buffer self_s, cross_s, enc_s;
} sac_capture;

/* An empty capture (off, nothing allocated) for a model's shape and a context of n_ctx
 * tokens; limit = SIZE_MAX. */
void sac_capture_init(sac_capture *c, int32_t n_layer, int32_t n_encoder_layer, int32_t n_head, int32_t n_ctx,
                      int encdec);
void sac_capture_free(sac_capture *c);

/* Floats before query row q of `kind` with the current source: exact in 64 bits, UINT64_MAX
 * when even that overflows. */
uint64_t sac_capture_offset(const sac_capture *c, sac_attention_kind kind, int64_t q);
/* Bytes of the full capture of the context: n_ctx self rows, plus for encdec n_ctx cross rows
 * and n_ctx encoder rows against an n_ctx-token source. UINT64_MAX on overflow. */
uint64_t sac_capture_full_bytes(const sac_capture *c);

/* Turns capture on: refuses (SAC_ERR_NOMEM, naming the size) a full capture above `limit`;
 * rows of the n_past tokens evaluated while it was off read as zeros. */
sac_status sac_capture_start(sac_capture *c, int32_t n_past, sac_error *err);
void sac_capture_stop(sac_capture *c);
/* Forgets every row (the buffers stay for reuse). */
void sac_capture_reset(sac_capture *c);
/* Forgets the decoder rows from n_rows on (sac_context_truncate); the encoder's stay. */
void sac_capture_truncate(sac_capture *c, int32_t n_rows);

/* A new source of n_src tokens (after sac_capture_reset): makes room for its encoder rows
 * when capture is on. */
sac_status sac_capture_set_source(sac_capture *c, int32_t n_src, sac_error *err);
/* When capture is on, makes room for decoder rows [0, n_rows) of self and (with a source)
 * cross attention before the forward pass writes them; grows geometrically up to the full
 * context. Fails (and changes nothing) when the rows cannot fit. */
sac_status sac_capture_reserve(sac_capture *c, int32_t n_rows, sac_error *err);
/* Marks the rows the forward pass has written as captured. */
void sac_capture_commit_decoder(sac_capture *c, int32_t n_rows);
void sac_capture_commit_encoder(sac_capture *c);

/* Where the n_keys(query) probabilities of (kind, layer, head, query) go, or NULL when capture
 * is off. The row must have been reserved. */
float *sac_capture_slot(sac_capture *c, sac_attention_kind kind, int32_t layer, int32_t head, int32_t query);

/* Turns score capture on after the context was made: room for the scores of the rows already
 * reserved (SAC_ERR_NOMEM when the doubled full capture cannot fit, and nothing changes). Rows
 * captured before read as refused until the next reset. */
sac_status sac_capture_scores_start(sac_capture *c, sac_error *err);

/* Where the n_keys(query) scaled scores q·k/√d (−∞ for hidden keys) of (kind, layer, head,
 * query) go, or NULL when capture or score capture is off. */
float *sac_capture_score_slot(sac_capture *c, sac_attention_kind kind, int32_t layer, int32_t head, int32_t query);

/* Reading: rows captured of a kind (0 for an unknown kind). */
int32_t sac_capture_n_rows(const sac_capture *c, sac_attention_kind kind);
/* Layers of a kind's stack and keys of its query row q. */
int32_t sac_capture_n_layers(const sac_capture *c, sac_attention_kind kind);
int32_t sac_capture_n_keys(const sac_capture *c, sac_attention_kind kind, int32_t q);
/* Rows [from, to) of `kind` as one block. SAC_ERR_ARG for a bad kind (or a kind the model
 * lacks) or range, SAC_ERR_STATE when nothing of that kind is captured. */
sac_status sac_capture_rows(const sac_capture *c, sac_attention_kind kind, int32_t from, int32_t to,
                            const float **data, size_t *n_floats, sac_error *err);
/* As sac_capture_rows, for the scores (SAC_ERR_STATE when score capture is off). */
sac_status sac_capture_score_rows(const sac_capture *c, sac_attention_kind kind, int32_t from, int32_t to,
                                  const float **data, size_t *n_floats, sac_error *err);
/* Copies one layer and head of `kind` as an n_rows × n_keys matrix (keys a self row lacks
 * are 0); `out` holds n_rows × max n_keys floats, checked by the caller. */
void sac_capture_copy_head(const sac_capture *c, sac_attention_kind kind, int32_t layer, int32_t head, float *out);

#endif
