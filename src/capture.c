/* capture.c — storage of captured attention: offsets, checked sizes, growth and reading.
 * The layout is described in capture.h. */
#include "capture.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void sac_capture_init(sac_capture *c, int32_t n_layer, int32_t n_encoder_layer, int32_t n_head, int32_t n_ctx,
                      int encdec) {
    memset(c, 0, sizeof *c);
    c->encdec = encdec != 0;
    c->n_layer = n_layer;
    c->n_encoder_layer = encdec ? n_encoder_layer : 0;
    c->n_head = n_head;
    c->n_ctx = n_ctx;
    c->limit = SIZE_MAX;
}

void sac_capture_free(sac_capture *c) {
    free(c->self.data);
    free(c->cross.data);
    free(c->enc.data);
    free(c->self_s.data);
    free(c->cross_s.data);
    free(c->enc_s.data);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------------------------------- */
/* Sizes, in 64 bits                                                                         */
/* ---------------------------------------------------------------------------------------- */

static int known_kind(const sac_capture *c, sac_attention_kind kind) {
    return kind == SAC_ATTENTION_SELF || (c->encdec && (kind == SAC_ATTENTION_CROSS || kind == SAC_ATTENTION_ENCODER));
}

int32_t sac_capture_n_layers(const sac_capture *c, sac_attention_kind kind) {
    return kind == SAC_ATTENTION_ENCODER ? c->n_encoder_layer : c->n_layer;
}

int32_t sac_capture_n_keys(const sac_capture *c, sac_attention_kind kind, int32_t q) {
    return kind == SAC_ATTENTION_SELF ? q + 1 : c->n_src;
}

/* L·H·q(q+1)/2 (self) or L·H·n_src·q (cross, encoder) for a source of n_src tokens. */
static uint64_t offset_for(const sac_capture *c, sac_attention_kind kind, int64_t q, int64_t n_src) {
    const uint64_t uq = q > 0 ? (uint64_t)q : 0;
    /* q < 2^31, so q(q+1)/2 < 2^61 cannot overflow */
    const uint64_t keys = kind == SAC_ATTENTION_SELF ? uq * (uq + 1) / 2 : uq;
    uint64_t lh, lhk, out;
    if (!sac_mul_u64((uint64_t)sac_capture_n_layers(c, kind), (uint64_t)c->n_head, &lh) ||
        !sac_mul_u64(lh, keys, &lhk) ||
        !sac_mul_u64(lhk, kind == SAC_ATTENTION_SELF ? 1 : (uint64_t)(n_src > 0 ? n_src : 0), &out))
        return UINT64_MAX;
    return out;
}

uint64_t sac_capture_offset(const sac_capture *c, sac_attention_kind kind, int64_t q) {
    return offset_for(c, kind, q, c->n_src);
}

/* floats → bytes, UINT64_MAX on overflow */
static uint64_t float_bytes(uint64_t floats) {
    uint64_t b;
    return sac_mul_u64(floats, sizeof(float), &b) ? b : UINT64_MAX;
}

uint64_t sac_capture_full_bytes(const sac_capture *c) {
    uint64_t floats = offset_for(c, SAC_ATTENTION_SELF, c->n_ctx, c->n_ctx);
    if (c->encdec &&
        (!sac_add_u64(floats, offset_for(c, SAC_ATTENTION_CROSS, c->n_ctx, c->n_ctx), &floats) ||
         !sac_add_u64(floats, offset_for(c, SAC_ATTENTION_ENCODER, c->n_ctx, c->n_ctx), &floats)))
        return UINT64_MAX;
    if (c->scores && !sac_mul_u64(floats, 2, &floats)) return UINT64_MAX; /* scores beside probabilities */
    return float_bytes(floats);
}

/* A size that saturated at UINT64_MAX never fits, even where SIZE_MAX is UINT64_MAX. */
static int fits(uint64_t bytes, uint64_t limit) { return bytes != UINT64_MAX && bytes <= limit; }

static double gib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0 * 1024.0); }

static sac_status check_full(const sac_capture *c, sac_error *err) {
    const uint64_t bytes = sac_capture_full_bytes(c);
    if (fits(bytes, c->limit)) return SAC_OK;
    if (bytes == UINT64_MAX)
        return sac_fail(err, SAC_ERR_NOMEM,
                        "attention capture for a context of %d tokens (%d layers x %d heads) overflows 64 bits: use a "
                        "shorter context (n_ctx)", c->n_ctx, c->n_layer, c->n_head);
    return sac_fail(err, SAC_ERR_NOMEM,
                    "attention capture for a context of %d tokens (%d layers x %d heads) needs %" PRIu64
                    " bytes (%.2f GiB), more than this build can address (%.2f GiB): use a shorter context (n_ctx)",
                    c->n_ctx, c->n_layer, c->n_head, bytes, gib(bytes), gib(c->limit));
}

/* ---------------------------------------------------------------------------------------- */
/* Growth                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static sac_capture_buffer *buffer(sac_capture *c, sac_attention_kind kind) {
    return kind == SAC_ATTENTION_SELF ? &c->self : kind == SAC_ATTENTION_CROSS ? &c->cross : &c->enc;
}

static sac_capture_buffer *score_buffer(sac_capture *c, sac_attention_kind kind) {
    return kind == SAC_ATTENTION_SELF ? &c->self_s : kind == SAC_ATTENTION_CROSS ? &c->cross_s : &c->enc_s;
}

/* Grows b to cap floats (bytes already checked against the limit); 0 or -1 when out of memory. */
static int grow(sac_capture_buffer *b, uint64_t cap, uint64_t bytes) {
    if (cap <= b->cap) return 0;
    /* bytes <= limit <= SIZE_MAX, so the size_t conversion is exact */
    float *grown = realloc(b->data, (size_t)bytes ? (size_t)bytes : 1);
    if (!grown) return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

/* Room for rows [0, n_rows) of `kind`: at least double the old capacity, at most the rows of
 * a full context (n_ctx decoder rows, n_src encoder rows). */
static sac_status reserve_kind(sac_capture *c, sac_attention_kind kind, int32_t n_rows, sac_error *err) {
    sac_capture_buffer *b = buffer(c, kind);
    const uint64_t need = sac_capture_offset(c, kind, n_rows);
    if (need <= b->cap && (!c->scores || need <= score_buffer(c, kind)->cap)) return SAC_OK;
    const int32_t max_rows = kind == SAC_ATTENTION_ENCODER ? c->n_src : c->n_ctx;
    const uint64_t full = sac_capture_offset(c, kind, max_rows);
    static const char *const names[] = {"self-attention", "cross-attention", "encoder attention"};
    if (need > full || !fits(float_bytes(need), c->limit))
        return sac_fail(err, SAC_ERR_NOMEM,
                        "%s capture of %d rows needs %" PRIu64 " bytes, more than this build can address (%" PRIu64
                        "): use a shorter context (n_ctx)", names[kind], n_rows, float_bytes(need), c->limit);
    uint64_t cap = b->cap <= UINT64_MAX / 2 && b->cap * 2 > need ? b->cap * 2 : need;
    /* Past half the full capture, take it all now: doubling would reach it at the next growth,
     * and that realloc would copy (and briefly hold twice) what may be most of a 32-bit heap. */
    if (cap > full || need > full / 2) cap = full;
    if (!fits(float_bytes(cap), c->limit)) cap = need;
    const uint64_t bytes = float_bytes(cap);
    if (grow(b, cap, bytes) || (c->scores && grow(score_buffer(c, kind), cap, bytes)))
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %s capture (%" PRIu64 " bytes for %d rows)",
                        names[kind], bytes, n_rows);
    return SAC_OK;
}

static sac_status reserve_decoder(sac_capture *c, int32_t n_rows, sac_error *err) {
    sac_status st = reserve_kind(c, SAC_ATTENTION_SELF, n_rows, err);
    if (!st && c->n_src) st = reserve_kind(c, SAC_ATTENTION_CROSS, n_rows, err);
    return st;
}

sac_status sac_capture_reserve(sac_capture *c, int32_t n_rows, sac_error *err) {
    return c->on ? reserve_decoder(c, n_rows, err) : SAC_OK;
}

/* Zeros for decoder rows [from, to) of a kind. */
static void zero_rows(sac_capture *c, sac_attention_kind kind, int32_t from, int32_t to) {
    const uint64_t a = sac_capture_offset(c, kind, from), b = sac_capture_offset(c, kind, to);
    if (b <= a) return;
    memset(buffer(c, kind)->data + (size_t)a, 0, (size_t)(b - a) * sizeof(float));
    if (c->scores) memset(score_buffer(c, kind)->data + (size_t)a, 0, (size_t)(b - a) * sizeof(float));
}

sac_status sac_capture_start(sac_capture *c, int32_t n_past, sac_error *err) {
    if (c->on) return SAC_OK;
    sac_status st = check_full(c, err);
    if (!st) st = reserve_decoder(c, n_past, err);
    if (st) return st;
    zero_rows(c, SAC_ATTENTION_SELF, c->n_rows, n_past);
    if (c->n_src) zero_rows(c, SAC_ATTENTION_CROSS, c->n_rows, n_past);
    c->n_rows = n_past;
    c->on = 1;
    return SAC_OK;
}

void sac_capture_stop(sac_capture *c) { c->on = 0; }

sac_status sac_capture_scores_start(sac_capture *c, sac_error *err) {
    if (c->scores) return SAC_OK;
    c->scores = 1;
    sac_status st = check_full(c, err);
    const sac_attention_kind kinds[] = {SAC_ATTENTION_SELF, SAC_ATTENTION_CROSS, SAC_ATTENTION_ENCODER};
    for (int i = 0; i < 3 && !st; i++) {
        const uint64_t cap = buffer(c, kinds[i])->cap;
        if (cap && grow(score_buffer(c, kinds[i]), cap, float_bytes(cap)))
            st = sac_fail(err, SAC_ERR_NOMEM, "out of memory for the attention scores (%" PRIu64 " bytes)", float_bytes(cap));
    }
    if (st) {
        c->scores = 0; /* the buffers grown so far stay for a later try */
        return st;
    }
    c->scores_stale = c->n_rows > 0 || c->n_enc_rows > 0;
    return SAC_OK;
}

void sac_capture_reset(sac_capture *c) {
    c->scores_stale = 0;
    c->n_rows = 0;
    c->n_src = 0;
    c->n_enc_rows = 0;
}

void sac_capture_truncate(sac_capture *c, int32_t n_rows) {
    if (n_rows < c->n_rows) c->n_rows = n_rows;
}

sac_status sac_capture_set_source(sac_capture *c, int32_t n_src, sac_error *err) {
    sac_capture_reset(c);
    c->n_src = n_src;
    if (!c->on) return SAC_OK;
    sac_status st = reserve_kind(c, SAC_ATTENTION_ENCODER, n_src, err);
    if (st) c->n_src = 0;
    return st;
}

void sac_capture_commit_decoder(sac_capture *c, int32_t n_rows) {
    if (c->on) c->n_rows = n_rows;
}

void sac_capture_commit_encoder(sac_capture *c) { c->n_enc_rows = c->on ? c->n_src : 0; }

float *sac_capture_slot(sac_capture *c, sac_attention_kind kind, int32_t layer, int32_t head, int32_t query) {
    if (!c->on) return NULL;
    /* within the reserved rows, so every offset fits in size_t */
    const size_t block = (size_t)sac_capture_n_keys(c, kind, query);
    const size_t lh = (size_t)layer * (size_t)c->n_head + (size_t)head;
    return buffer(c, kind)->data + (size_t)sac_capture_offset(c, kind, query) + lh * block;
}

float *sac_capture_score_slot(sac_capture *c, sac_attention_kind kind, int32_t layer, int32_t head, int32_t query) {
    if (!c->on || !c->scores) return NULL;
    const size_t block = (size_t)sac_capture_n_keys(c, kind, query);
    const size_t lh = (size_t)layer * (size_t)c->n_head + (size_t)head;
    return score_buffer(c, kind)->data + (size_t)sac_capture_offset(c, kind, query) + lh * block;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                   */
/* ---------------------------------------------------------------------------------------- */

int32_t sac_capture_n_rows(const sac_capture *c, sac_attention_kind kind) {
    if (!known_kind(c, kind)) return 0;
    switch (kind) {
    case SAC_ATTENTION_SELF: return c->n_rows;
    case SAC_ATTENTION_CROSS: return c->n_src ? c->n_rows : 0;
    case SAC_ATTENTION_ENCODER: return c->n_enc_rows;
    }
    return 0;
}

static const float *rows_base(const sac_capture *c, sac_attention_kind kind) {
    return kind == SAC_ATTENTION_SELF ? c->self.data : kind == SAC_ATTENTION_CROSS ? c->cross.data : c->enc.data;
}

static sac_status read_rows(const sac_capture *c, sac_attention_kind kind, int32_t from, int32_t to,
                            const float **data, size_t *n_floats, int scores, sac_error *err) {
    if (kind != SAC_ATTENTION_SELF && kind != SAC_ATTENTION_CROSS && kind != SAC_ATTENTION_ENCODER)
        return sac_fail(err, SAC_ERR_ARG, "unknown attention kind %d", (int)kind);
    if (!known_kind(c, kind))
        return sac_fail(err, SAC_ERR_ARG, "cross and encoder attention need an encoder-decoder model");
    const int32_t n = sac_capture_n_rows(c, kind);
    if (n == 0)
        return sac_fail(err, SAC_ERR_STATE,
                        "no captured attention of this kind (is capture on, and was anything evaluated?)");
    if (from < 0 || to < from || to > n)
        return sac_fail(err, SAC_ERR_ARG, "attention rows [%d, %d) out of range (%d rows captured)", from, to, n);
    const uint64_t a = sac_capture_offset(c, kind, from), b = sac_capture_offset(c, kind, to);
    const sac_capture_buffer *sb = kind == SAC_ATTENTION_SELF ? &c->self_s : kind == SAC_ATTENTION_CROSS ? &c->cross_s
                                                                                                          : &c->enc_s;
    if (data) *data = (scores ? sb->data : rows_base(c, kind)) + (size_t)a;
    if (n_floats) *n_floats = (size_t)(b - a);
    return SAC_OK;
}

sac_status sac_capture_rows(const sac_capture *c, sac_attention_kind kind, int32_t from, int32_t to,
                            const float **data, size_t *n_floats, sac_error *err) {
    return read_rows(c, kind, from, to, data, n_floats, 0, err);
}

sac_status sac_capture_score_rows(const sac_capture *c, sac_attention_kind kind, int32_t from, int32_t to,
                                  const float **data, size_t *n_floats, sac_error *err) {
    if (!c->scores)
        return sac_fail(err, SAC_ERR_STATE, "no captured scores: make the context with capture_scores = 1 or call "
                        "sac_attention_scores_enable(ctx, 1), then evaluate");
    if (c->scores_stale)
        return sac_fail(err, SAC_ERR_STATE, "these rows were captured before score capture began: evaluate them again");
    return read_rows(c, kind, from, to, data, n_floats, 1, err);
}

void sac_capture_copy_head(const sac_capture *c, sac_attention_kind kind, int32_t layer, int32_t head, float *out) {
    const int32_t nq = sac_capture_n_rows(c, kind);
    const int32_t nk = kind == SAC_ATTENTION_SELF ? nq : c->n_src;
    const float *base = rows_base(c, kind);
    const size_t lh = (size_t)layer * (size_t)c->n_head + (size_t)head;
    for (int32_t q = 0; q < nq; q++) {
        const int32_t keys = sac_capture_n_keys(c, kind, q);
        float *dst = out + (size_t)q * (size_t)nk;
        memcpy(dst, base + (size_t)sac_capture_offset(c, kind, q) + lh * (size_t)keys, (size_t)keys * sizeof(float));
        memset(dst + keys, 0, (size_t)(nk - keys) * sizeof(float));
    }
}
