/* token_lookup.h — text → token id, for the loader (tokenizer.c) and the encoders
 * (tokenizer_bpe.c, tokenizer_spm.c, tokenizer_char.c). An open-addressing table over the
 * token texts, built once at load and read-only afterwards. */
#ifndef SAC_TOKEN_LOOKUP_H
#define SAC_TOKEN_LOOKUP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tokenizer_impl.h"

/* The 128-bit product of a and b, its halves folded (wyhash's "mum"): with b secret, how a
 * difference in a spreads depends on b, so no texts collide for every seed. (A multiply by a
 * constant does not: a difference in a word's top bit stays in the top bit, whatever came
 * before, and texts built from such pairs collided under every seed.) */
static inline uint64_t sac_mix(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* A hash of s[0..n), 8 bytes at a time (token strings are short), keyed by `seed`. */
static inline uint64_t sac_hash_bytes_seeded(uint64_t seed, const char *s, size_t n) {
    const uint64_t key = seed ^ 0x589965CC75374CC3ull; /* every round multiplies by it */
    uint64_t h = sac_mix(seed ^ 0xA0761D6478BD642Full, n ^ 0xE7037ED1A0B428DBull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = sac_mix(h ^ w ^ 0x8EBC6AF09C88C6E3ull, key);
        s += 8;
        n -= 8;
    }
    /* the last 0-7 bytes in one word, without a byte loop: two 4-byte loads that overlap
     * (together every byte), or the first, middle and last byte */
    uint64_t w = 0;
    if (n >= 4) {
        uint32_t head, tail;
        memcpy(&head, s, 4);
        memcpy(&tail, s + n - 4, 4);
        w = (uint64_t)head << 32 | tail;
    } else if (n) {
        w = (uint64_t)(uint8_t)s[0] << 16 | (uint64_t)(uint8_t)s[n / 2] << 8 | (uint8_t)s[n - 1];
    }
    return sac_mix(h ^ w ^ 0x1D8E4E27C47D124Full, key);
}

static inline uint64_t sac_hash_bytes(const char *s, size_t n) { return sac_hash_bytes_seeded(0, s, n); }

/* A secret seed for a hash table a file fills (the token texts, the BPE merges): the system's
 * randomness (getentropy; in wasm, crypto.getRandomValues), or else the clock and the table's
 * address. With a known hash, a file could choose thousands of keys that all land in one slot,
 * and filling the table would take their count squared. */
uint64_t sac_table_seed(const void *table);

/* Builds tok->text_map from tok->tokens[0..n_vocab) and their text. When two tokens have the
 * same text the later one wins, as in llama.cpp's token_to_id. */
sac_status sac_token_lookup_build(sac_tokenizer *tok, sac_error *err);

/* The id whose text is exactly s[0..n), or -1. */
int32_t sac_token_lookup(const sac_tokenizer *tok, const char *s, size_t n);

/* ids[i] = sac_token_lookup(tok, texts[i], lens[i]) for i < count: the same answers, sooner for
 * many texts over a large vocabulary. Each step's loads (the table's slot, the token's text) are
 * made for a batch of texts before any is used, so that their cache misses overlap instead of
 * following one another. */
void sac_token_lookup_many(const sac_tokenizer *tok, const char *const *texts, const size_t *lens, int count,
                           int32_t *ids);

#endif
