/* detokenizer.c — streaming detokenization: ids in, text out as complete UTF-8 characters.
 *
 * A token's bytes (sac_token_bytes) need not end on a character boundary: GPT-2 splits
 * emoji into byte tokens and llama falls back to <0xNN> tokens. The detokenizer holds back
 * the bytes of a character that is not complete yet (at most 3) and emits everything
 * before them. Ill-formed bytes come out as U+FFFD, one per maximal subpart (unicode.h), so
 * every chunk is well-formed UTF-8 and the concatenation of all chunks plus the final flush
 * equals the replacement-decoded concatenation of the tokens' bytes.
 *
 * For llama vocabularies with add_space_prefix, the encoder put a ▁ in front of the text;
 * the detokenizer drops one leading space from the first non-empty piece of a text (as
 * llama.cpp's llama_detokenize), so text → ids → text gives the text back. A fresh
 * detokenizer, and one just flushed, is at the start of a text: to continue a prompt
 * without losing the space of the first new token, push the prompt's ids first. */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "tokenizer_impl.h"
#include "unicode.h"

struct sac_detokenizer {
    sac_model *model;
    sac_error error;
    uint8_t pending[4]; /* the start of a character that is not complete yet */
    size_t n_pending;
    int at_start;       /* nothing decoded yet since creation or the last flush */
    char *out;          /* the last chunk handed out */
    size_t out_cap;
};

sac_status sac_detokenizer_new(sac_model *model, sac_detokenizer **out) {
    if (!out) return model ? sac_fail(&model->error, SAC_ERR_ARG, "sac_detokenizer_new: out is NULL") : SAC_ERR_ARG;
    *out = NULL;
    if (!model) return SAC_ERR_ARG;
    if (!model->tokenizer)
        return sac_fail(&model->error, SAC_ERR_STATE, "no tokenizer: the model has no tokenizer.ggml.* metadata");
    sac_detokenizer *dt = calloc(1, sizeof *dt);
    if (!dt) return sac_fail(&model->error, SAC_ERR_NOMEM, "out of memory for a detokenizer");
    dt->model = model;
    dt->at_start = 1;
    *out = dt;
    return SAC_OK;
}

void sac_detokenizer_free(sac_detokenizer *dt) {
    if (!dt) return;
    free(dt->out);
    free(dt);
}

const char *sac_detokenizer_errmsg(const sac_detokenizer *dt) {
    if (!dt) return "no detokenizer (NULL)";
    return dt->error.msg;
}

static int reserve(sac_detokenizer *dt, size_t n) {
    if (n <= dt->out_cap) return 1;
    size_t cap = dt->out_cap ? dt->out_cap : 64;
    while (cap < n) cap = cap > SIZE_MAX / 2 ? n : 2 * cap;
    char *p = realloc(dt->out, cap);
    if (!p) return 0;
    dt->out = p;
    dt->out_cap = cap;
    return 1;
}

/* Appends the well-formed characters of s[0..n) to out (ill-formed subparts as U+FFFD) and
 * keeps a truncated last character in pending. Returns the bytes written. */
static size_t emit(sac_detokenizer *dt, const uint8_t *s, size_t n, char *out) {
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) { /* ASCII, the common case */
            out[w++] = (char)s[i++];
            continue;
        }
        uint32_t cp;
        size_t len;
        sac_utf8_result r = sac_utf8_next(s + i, n - i, &cp, &len);
        if (r == SAC_UTF8_TRUNCATED) { /* len = n - i < 4 */
            memcpy(dt->pending, s + i, len);
            dt->n_pending = len;
            break;
        }
        if (r == SAC_UTF8_OK) {
            memcpy(out + w, s + i, len);
            w += len;
        } else {
            memcpy(out + w, SAC_REPLACEMENT_UTF8, 3);
            w += 3;
        }
        i += len;
    }
    return w;
}

sac_status sac_detokenizer_push(sac_detokenizer *dt, int32_t token, const char **text, size_t *len) {
    if (!dt) return SAC_ERR_ARG;
    if (!text || !len) return sac_fail(&dt->error, SAC_ERR_ARG, "sac_detokenizer_push: text or len is NULL");
    *text = "";
    *len = 0;
    const sac_tokenizer *tok = dt->model->tokenizer;
    if (!tok) return sac_fail(&dt->error, SAC_ERR_STATE, "no tokenizer: the model has no tokenizer.ggml.* metadata");
    const char *bytes;
    size_t n;
    sac_status st = sac_tokenizer_piece(dt->model, token, &bytes, &n, &dt->error);
    if (st) return st;
    const uint8_t *piece = (const uint8_t *)bytes;
    if (n > 0 && dt->at_start) {
        if (tok->add_space_prefix && piece[0] == ' ') {
            piece++;
            n--;
        }
        dt->at_start = 0;
    }
    /* pending + piece; every input byte yields at most 3 output bytes (a lone byte → U+FFFD),
     * and 4 bytes per input byte must fit in size_t, 32 bits in wasm32 */
    size_t n_in = dt->n_pending + n;
    if (n_in > (SIZE_MAX - 4) / 4 || !reserve(dt, 4 * n_in + 4))
        return sac_fail(&dt->error, SAC_ERR_NOMEM, "out of memory for %zu bytes of text", n_in);
    uint8_t *in = (uint8_t *)dt->out + 3 * n_in + 3; /* the input sits behind room for the output */
    memcpy(in, dt->pending, dt->n_pending);
    if (n) memcpy(in + dt->n_pending, piece, n);
    dt->n_pending = 0;
    *len = emit(dt, in, n_in, dt->out);
    *text = dt->out;
    return SAC_OK;
}

sac_status sac_detokenizer_flush(sac_detokenizer *dt, const char **text, size_t *len) {
    if (!dt) return SAC_ERR_ARG;
    if (!text || !len) return sac_fail(&dt->error, SAC_ERR_ARG, "sac_detokenizer_flush: text or len is NULL");
    *text = "";
    *len = 0;
    if (dt->n_pending > 0) { /* an incomplete character is one maximal subpart: one U+FFFD */
        if (!reserve(dt, 4)) return sac_fail(&dt->error, SAC_ERR_NOMEM, "out of memory for 3 bytes of text");
        memcpy(dt->out, SAC_REPLACEMENT_UTF8, 3);
        *text = dt->out;
        *len = 3;
    }
    dt->n_pending = 0;
    dt->at_start = 1;
    return SAC_OK;
}

/* One detokenizer pushed every id, then flushed: the same rule as streaming, by construction. */
sac_status sac_detokenize_pieces(sac_model *model, const int32_t *ids, int32_t n_ids, char *text,
                                 size_t capacity, size_t *ends, size_t *text_len) {
    if (!model) return SAC_ERR_ARG;
    if (text_len) *text_len = 0;
    if (!model->tokenizer)
        return sac_fail(&model->error, SAC_ERR_STATE, "no tokenizer: the model has no tokenizer.ggml.* metadata");
    if (!text_len) return sac_fail(&model->error, SAC_ERR_ARG, "sac_detokenize_pieces: text_len is NULL");
    if (n_ids < 0 || (n_ids > 0 && (!ids || !ends)))
        return sac_fail(&model->error, SAC_ERR_ARG, "sac_detokenize_pieces: no room for %d ids or their ends", n_ids);
    if (!text && capacity > 0)
        return sac_fail(&model->error, SAC_ERR_ARG, "sac_detokenize_pieces: text is NULL with capacity %zu", capacity);
    sac_detokenizer *dt;
    sac_status st = sac_detokenizer_new(model, &dt);
    if (st) return st;
    size_t used = 0;
    for (int32_t i = 0; i <= n_ids && !st; i++) { /* i == n_ids: the flush, part of the last piece */
        const char *chunk;
        size_t len;
        st = i < n_ids ? sac_detokenizer_push(dt, ids[i], &chunk, &len) : sac_detokenizer_flush(dt, &chunk, &len);
        if (st) {
            sac_fail(&model->error, st, "%s", dt->error.msg);
            break;
        }
        if (len > SIZE_MAX - used) {
            st = sac_fail(&model->error, SAC_ERR_ARG, "the pieces of %d tokens need more than %zu bytes", n_ids,
                          (size_t)SIZE_MAX);
            break;
        }
        /* once a chunk does not fit, used passes capacity and no later one is written */
        if (len > 0 && used <= capacity && len <= capacity - used) memcpy(text + used, chunk, len);
        used += len;
        if (i < n_ids) ends[i] = used;
        else if (n_ids > 0) ends[n_ids - 1] = used;
    }
    sac_detokenizer_free(dt);
    if (st) return st;
    *text_len = used;
    if (used > capacity)
        return sac_fail(&model->error, SAC_ERR_ARG, "capacity %zu is too small: the pieces need %zu bytes", capacity,
                        used);
    return SAC_OK;
}
