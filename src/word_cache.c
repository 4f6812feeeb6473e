/* word_cache.c — the BPE encoder's memo of one text's words (see word_cache.h). */
#include "word_cache.h"

#include <stdlib.h>
#include <string.h>

#include "token_lookup.h"

void sac_word_cache_init(sac_word_cache *c, uint64_t seed) { *c = (sac_word_cache){.seed = seed}; }

/* The word's slot, or the empty slot where it would go. */
static sac_cached_word *slot_of(const sac_word_cache *c, const char *word, size_t len, uint64_t hash) {
    for (size_t i = (size_t)hash & c->mask;; i = (i + 1) & c->mask) {
        sac_cached_word *e = &c->slots[i];
        if (!e->word || (e->tag == (uint32_t)(hash >> 32) && e->len == len && memcmp(e->word, word, len) == 0))
            return e;
    }
}

const sac_cached_word *sac_word_cache_find(const sac_word_cache *c, const char *word, size_t len) {
    if (!c->used || len > SAC_WORD_CACHE_MAX_WORD) return NULL;
    const sac_cached_word *e = slot_of(c, word, len, sac_hash_bytes_seeded(c->seed, word, len));
    return e->word ? e : NULL;
}

/* Twice the slots (256 at first), the words moved over; 0 when the bound or memory runs out. */
static int grow(sac_word_cache *c) {
    size_t size = c->slots ? 2 * (c->mask + 1) : 256;
    if (size > SAC_WORD_CACHE_MAX_SLOTS) return 0;
    sac_cached_word *slots = calloc(size, sizeof *slots);
    if (!slots) return 0;
    sac_word_cache bigger = *c;
    bigger.slots = slots;
    bigger.mask = size - 1;
    for (size_t i = 0; c->slots && i <= c->mask; i++) {
        const sac_cached_word *old = &c->slots[i];
        if (old->word) *slot_of(&bigger, old->word, old->len, sac_hash_bytes_seeded(c->seed, old->word, old->len)) = *old;
    }
    free(c->slots);
    c->slots = slots;
    c->mask = size - 1;
    return 1;
}

void sac_word_cache_add(sac_word_cache *c, const char *word, size_t len, const int32_t *ids, size_t n_ids) {
    if (len > SAC_WORD_CACHE_MAX_WORD) return;
    if ((!c->slots || c->used + 1 > (c->mask + 1) / 2) && !grow(c)) return; /* at most half full */
    if (c->n_ids + n_ids > c->cap_ids) {
        size_t cap = c->cap_ids ? 2 * c->cap_ids : 1024;
        while (cap < c->n_ids + n_ids) cap *= 2;
        int32_t *grown = realloc(c->ids, cap * sizeof *grown);
        if (!grown) return;
        c->ids = grown;
        c->cap_ids = cap;
    }
    uint64_t hash = sac_hash_bytes_seeded(c->seed, word, len);
    sac_cached_word *e = slot_of(c, word, len, hash);
    memcpy(c->ids + c->n_ids, ids, n_ids * sizeof *ids);
    *e = (sac_cached_word){word, (uint32_t)len, (uint32_t)c->n_ids, (uint32_t)n_ids, (uint32_t)(hash >> 32)};
    c->n_ids += n_ids;
    c->used++;
}

void sac_word_cache_free(sac_word_cache *c) {
    free(c->slots);
    free(c->ids);
    *c = (sac_word_cache){.seed = c->seed};
}
