/* token_lookup.h — text → token id, for the loader (tokenizer.c) and the encoders
 * (tokenizer_bpe.c, tokenizer_spm.c, tokenizer_char.c). An open-addressing table over the
 * token texts, built once at load and read-only afterwards. */
#ifndef SAC_TOKEN_LOOKUP_H
#define SAC_TOKEN_LOOKUP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tokenizer_impl.h"

/* A hash of s[0..n), 8 bytes at a time (token strings are short). */
static inline uint64_t sac_hash_bytes(const char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        s += 8;
        n -= 8;
    }
    uint64_t w = 0;
    if (n) memcpy(&w, s, n);
    h = (h ^ w) * 0x94D049BB133111EBull;
    h ^= h >> 32;
    return h;
}

/* Builds tok->text_map from tok->tokens[0..n_vocab) and their text. When two tokens have the
 * same text the later one wins, as in llama.cpp's token_to_id. */
sac_status sac_token_lookup_build(sac_tokenizer *tok, sac_error *err);

/* The id whose text is exactly s[0..n), or -1. */
int32_t sac_token_lookup(const sac_tokenizer *tok, const char *s, size_t n);

#endif
