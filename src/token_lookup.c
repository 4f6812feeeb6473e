/* token_lookup.c — the text → id table: open addressing, slots hold id + 1 (0 = empty), at
 * most half full so that probes stay short. The hash is seeded per table (sac_table_seed:
 * 200 000 tokens of one slot took a minute to insert); which slot a text lands in never changes
 * a result, only where it is kept. */
#define _DEFAULT_SOURCE /* getentropy (glibc's unistd.h; musl's, in wasm) */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "token_lookup.h"

/* a[0..n) == b[0..n), eight bytes at a time: token texts are short, and wasm's memcmp is a
 * call and a byte loop. */
static int same_bytes(const char *a, const char *b, size_t n) {
    uint64_t x, y;
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    for (; n; n--)
        if (*a++ != *b++) return 0;
    return 1;
}

/* Texts looked up together: their misses overlap (a core has some ten outstanding); their state
 * stays in a few hundred bytes of stack. */
#define LOOKUP_BATCH 64

static uint32_t home_slot(const sac_tokenizer *tok, const char *s, size_t n) {
    return (uint32_t)sac_hash_bytes_seeded(tok->text_map_seed, s, n) & tok->text_map_mask;
}

/* The slot holding s[0..n), or the empty one where it would go: the probe from slot i on. */
static uint32_t find_slot(const sac_tokenizer *tok, const char *s, size_t n, uint32_t i) {
    for (;; i = (i + 1) & tok->text_map_mask) {
        uint32_t slot = tok->text_map[i];
        if (slot == 0) return i;
        const sac_token_entry *t = &tok->tokens[slot - 1];
        if (t->text_len == n && same_bytes(tok->text + t->text_off, s, n)) return i;
    }
}

/* The id in the probe from slot i on, or -1. */
static int32_t probe(const sac_tokenizer *tok, const char *s, size_t n, uint32_t i) {
    return (int32_t)tok->text_map[find_slot(tok, s, n, i)] - 1;
}

int32_t sac_token_lookup(const sac_tokenizer *tok, const char *s, size_t n) {
    return n > tok->max_text_len ? -1 : probe(tok, s, n, home_slot(tok, s, n));
}

/* Up to LOOKUP_BATCH texts, each step for all of them before the next. */
static void lookup_batch(const sac_tokenizer *tok, const char *const *texts, const size_t *lens, int count,
                         int32_t *ids) {
    uint32_t home[LOOKUP_BATCH], slot[LOOKUP_BATCH], off[LOOKUP_BATCH], len[LOOKUP_BATCH];
    const uint32_t none = UINT32_MAX; /* (no slot index: the table has at most 2^29 slots) */
    for (int i = 0; i < count; i++) home[i] = lens[i] > tok->max_text_len ? none : home_slot(tok, texts[i], lens[i]);
    for (int i = 0; i < count; i++) slot[i] = home[i] == none ? 0 : tok->text_map[home[i]];
    for (int i = 0; i < count; i++) {
        const sac_token_entry *t = &tok->tokens[slot[i] ? slot[i] - 1 : 0];
        off[i] = t->text_off;
        len[i] = t->text_len;
    }
    for (int i = 0; i < count; i++) {
        if (slot[i] == 0) ids[i] = -1;
        else if (len[i] == lens[i] && same_bytes(tok->text + off[i], texts[i], lens[i])) ids[i] = (int32_t)(slot[i] - 1);
        else ids[i] = probe(tok, texts[i], lens[i], (home[i] + 1) & tok->text_map_mask);
    }
}

void sac_token_lookup_many(const sac_tokenizer *tok, const char *const *texts, const size_t *lens, int count,
                           int32_t *ids) {
    for (int at = 0; at < count; at += LOOKUP_BATCH)
        lookup_batch(tok, texts + at, lens + at, count - at < LOOKUP_BATCH ? count - at : LOOKUP_BATCH, ids + at);
}

/* The later of two tokens spelled alike takes the slot, as in llama.cpp's token_to_id. */
static void insert(sac_tokenizer *tok, int32_t id) {
    const sac_token_entry *t = &tok->tokens[id];
    const char *s = tok->text + t->text_off;
    tok->text_map[find_slot(tok, s, t->text_len, home_slot(tok, s, t->text_len))] = (uint32_t)id + 1;
}

uint64_t sac_table_seed(const void *table) {
    uint64_t seed = 0;
    if (getentropy(&seed, sizeof seed) == 0) return seed;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)table) * 0x9E3779B97F4A7C15ull;
}

sac_status sac_token_lookup_build(sac_tokenizer *tok, sac_error *err) {
    uint32_t map_size = 16;
    while (map_size < 2 * (uint32_t)tok->n_vocab) map_size *= 2;
    tok->text_map = calloc(map_size, sizeof *tok->text_map);
    if (!tok->text_map) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %d tokens", tok->n_vocab);
    tok->text_map_mask = map_size - 1;
    tok->text_map_seed = sac_table_seed(tok->text_map);
    for (int32_t i = 0; i < tok->n_vocab; i++) insert(tok, i);
    return SAC_OK;
}
