/* tokenizer_spm.c — SentencePiece BPE ("llama" vocabularies), as llama.cpp's llm_tokenizer_spm.
 *
 * Spaces become '▁' (U+2581) and, with add_space_prefix, one '▁' goes in front of the text
 * (llama.cpp does this at the start and after each special token). The text starts as one
 * symbol per character; the adjacent pair whose concatenation is the token with the highest
 * score merges first (leftmost on ties), until no concatenation is a token. Symbols that
 * end up as no token are written as their bytes' <0xNN> tokens (byte fallback), or as the
 * unknown token when the vocabulary has no byte tokens. */
#include <stdlib.h>
#include <string.h>

#include "merge_queue.h"
#include "token_lookup.h"
#include "tokenizer_encoders.h"

#define SPACE_MARK "\xE2\x96\x81" /* ▁ */

typedef struct spm_symbol {
    uint32_t start, n; /* bytes of the escaped text; n == 0 once merged into its left neighbour */
    int32_t prev, next;
} spm_symbol;


typedef struct spm_work {
    const sac_tokenizer *tok;
    const char *text;
    spm_symbol *sym;
    sac_merge_candidate *heap; /* a: bytes of left + right when queued (a change shows as a mismatch) */
    size_t n_heap;
    size_t capacity; /* symbols sym holds */
} spm_work;

static void queue_pair(spm_work *w, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    uint32_t n = w->sym[left].n + w->sym[right].n;
    if (n > w->tok->max_text_len) return; /* no token is that long */
    int32_t id = sac_token_lookup(w->tok, w->text + w->sym[left].start, n);
    if (id < 0) return;
    sac_merge_candidate c = {-(double)w->tok->tokens[id].score, left, right, (int32_t)n, 0};
    sac_merge_queue_push(w->heap, &w->n_heap, c);
}

static sac_status reserve(spm_work *w, size_t n, sac_error *err) {
    if (n <= w->capacity) return SAC_OK;
    /* symbols are int32 indices, and 3 candidates per symbol must fit in size_t (wasm32) */
    if (n > (size_t)INT32_MAX / 2 || n > SIZE_MAX / 2 / (3 * sizeof(sac_merge_candidate)))
        return sac_fail(err, SAC_ERR_ARG, "a text of %zu characters without spaces is too long to tokenize", n);
    size_t cap = w->capacity ? w->capacity : 64;
    while (cap < n) cap *= 2;
    spm_symbol *sym = realloc(w->sym, cap * sizeof *sym);
    if (sym) w->sym = sym;
    /* n symbols queue at most n - 1 pairs, then 2 per merge */
    sac_merge_candidate *heap = realloc(w->heap, 3 * cap * sizeof *heap);
    if (heap) w->heap = heap;
    if (!sym || !heap) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %zu characters", n);
    w->capacity = cap;
    return SAC_OK;
}

/* Merges the characters of w->text[start..end) and writes their tokens. */
static sac_status encode_span(spm_work *w, size_t start, size_t end, sac_token_sink *sink, sac_error *err) {
    const sac_tokenizer *tok = w->tok;
    const char *text = w->text;
    sac_status st = reserve(w, end - start, err);
    if (st) return st;
    spm_symbol *sym = w->sym;
    /* One symbol per character (the text is well-formed UTF-8: the lead byte says the length). */
    int32_t n_sym = 0;
    for (size_t p = start; p < end; n_sym++) {
        uint8_t b = (uint8_t)text[p];
        size_t clen = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
        if (clen > end - p) clen = end - p;
        sym[n_sym].start = (uint32_t)p;
        sym[n_sym].n = (uint32_t)clen;
        sym[n_sym].prev = n_sym - 1;
        p += clen;
        sym[n_sym].next = p < end ? n_sym + 1 : -1;
    }
    w->n_heap = 0;
    for (int32_t i = 1; i < n_sym; i++) queue_pair(w, i - 1, i);

    while (w->n_heap > 0) {
        sac_merge_candidate c = sac_merge_queue_pop(w->heap, &w->n_heap);
        spm_symbol *left = &sym[c.left], *right = &sym[c.right];
        if (left->n == 0 || right->n == 0 || left->n + right->n != (uint32_t)c.a) continue; /* stale */
        left->n += right->n;
        right->n = 0;
        left->next = right->next;
        if (right->next >= 0) sym[right->next].prev = c.left;
        queue_pair(w, left->prev, c.left);
        queue_pair(w, c.left, left->next);
    }

    for (int32_t i = n_sym > 0 ? 0 : -1; i >= 0; i = sym[i].next) {
        const char *s = text + sym[i].start;
        int32_t id = sac_token_lookup(tok, s, sym[i].n);
        if (id >= 0) {
            sac_sink_push(sink, id);
            continue;
        }
        /* byte fallback: every byte as its <0xNN> token, or the whole character as unknown */
        int all_bytes = 1;
        for (uint32_t j = 0; j < sym[i].n; j++) all_bytes &= tok->byte_token[(uint8_t)s[j]] >= 0;
        if (all_bytes) {
            for (uint32_t j = 0; j < sym[i].n; j++) sac_sink_push(sink, tok->byte_token[(uint8_t)s[j]]);
        } else if (tok->unk >= 0) {
            sac_sink_push(sink, tok->unk);
        } else {
            return sac_fail(err, SAC_ERR_ARG,
                            "'%.*s' is no token and the vocabulary has neither <0xNN> byte tokens nor an unknown token",
                            (int)sym[i].n, s);
        }
    }
    return SAC_OK;
}

static int is_space_mark(const char *s, size_t i, size_t n) {
    return n - i >= 3 && memcmp(s + i, SPACE_MARK, 3) == 0;
}

sac_status sac_spm_encode(const sac_tokenizer *tok, const char *text, size_t len, int prefix_space,
                          sac_token_sink *sink, sac_error *err) {
    /* Escape: ' ' → ▁ (3 bytes), so the text can grow threefold. */
    if (len > (UINT32_MAX - 3) / 3)
        return sac_fail(err, SAC_ERR_ARG, "text of %zu bytes is too long to tokenize in one piece", len);
    char *escaped = malloc(3 * len + 3);
    if (!escaped) return sac_fail(err, SAC_ERR_NOMEM, "out of memory to tokenize %zu bytes", len);
    size_t n = 0;
    if (prefix_space && tok->add_space_prefix) {
        memcpy(escaped, SPACE_MARK, 3);
        n = 3;
    }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') {
            memcpy(escaped + n, SPACE_MARK, 3);
            n += 3;
        } else {
            escaped[n++] = text[i];
        }
    }

    /* When ▁ only ever starts a token, no token spans the point where a ▁ follows another
     * character, so the spans between such points merge independently: the same result as
     * one long queue, but small and fast. */
    spm_work w = {tok, escaped, NULL, NULL, 0, 0};
    sac_status st = SAC_OK;
    size_t start = 0;
    for (size_t i = 0; i < n && !st; i++) {
        if (tok->spm_split_at_space && i > start && is_space_mark(escaped, i, n) &&
            (i < 3 || !is_space_mark(escaped, i - 3, n))) {
            st = encode_span(&w, start, i, sink, err);
            start = i;
        }
    }
    if (!st && start < n) st = encode_span(&w, start, n, sink, err);
    free(escaped);
    free(w.sym);
    free(w.heap);
    return st;
}
