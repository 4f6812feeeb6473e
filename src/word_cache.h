/* word_cache.h — the BPE encoder's memo of one text's words (tokenizer_bpe.c): text repeats its
 * words, and a word always encodes the same way, so a word seen before takes its tokens from
 * here instead of being merged again. An open-addressing table over a keyed hash: the words
 * come from whoever wrote the text, and with a known hash a text could choose thousands of
 * words that land in one run of slots, which every later word would then probe through. */
#ifndef SAC_WORD_CACHE_H
#define SAC_WORD_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SAC_WORD_CACHE_MAX_WORD 64 /* longer words are rare: not worth a slot */
#define SAC_WORD_CACHE_MAX_SLOTS (1u << 16)

typedef struct sac_cached_word {
    const char *word;           /* NULL: empty slot; else the caller's text, which outlives the cache */
    uint32_t len, first, count; /* its tokens are ids[first .. first + count) */
    uint32_t tag;               /* 32 bits of its hash: most mismatches fail here, not in memcmp */
} sac_cached_word;

typedef struct sac_word_cache {
    uint64_t seed; /* the hash's key: secret (sac_table_seed) */
    sac_cached_word *slots;
    size_t mask, used;
    int32_t *ids;
    size_t n_ids, cap_ids;
} sac_word_cache;

/* An empty cache keyed by `seed`; it allocates nothing until the first word is added. */
void sac_word_cache_init(sac_word_cache *c, uint64_t seed);

/* The word's tokens, or NULL when it is not in the cache. */
const sac_cached_word *sac_word_cache_find(const sac_word_cache *c, const char *word, size_t len);

/* Remembers a word's tokens (the word's bytes are not copied); silently does nothing for a word
 * longer than SAC_WORD_CACHE_MAX_WORD, or when memory or the bound on slots runs out: the cache
 * only saves work. */
void sac_word_cache_add(sac_word_cache *c, const char *word, size_t len, const int32_t *ids, size_t n_ids);

void sac_word_cache_free(sac_word_cache *c);

#endif
