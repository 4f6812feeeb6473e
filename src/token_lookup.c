/* token_lookup.c — the text → id table: open addressing, slots hold id + 1 (0 = empty), at
 * most half full so that probes stay short. */
#include <stdlib.h>

#include "token_lookup.h"

int32_t sac_token_lookup(const sac_tokenizer *tok, const char *s, size_t n) {
    if (n > tok->max_text_len) return -1;
    for (uint32_t i = (uint32_t)sac_hash_bytes(s, n) & tok->text_map_mask;; i = (i + 1) & tok->text_map_mask) {
        uint32_t slot = tok->text_map[i];
        if (slot == 0) return -1;
        const sac_token_entry *t = &tok->tokens[slot - 1];
        if (t->text_len == n && memcmp(tok->text + t->text_off, s, n) == 0) return (int32_t)(slot - 1);
    }
}

static void insert(sac_tokenizer *tok, int32_t id) {
    const sac_token_entry *t = &tok->tokens[id];
    const char *s = tok->text + t->text_off;
    for (uint32_t i = (uint32_t)sac_hash_bytes(s, t->text_len) & tok->text_map_mask;; i = (i + 1) & tok->text_map_mask) {
        uint32_t slot = tok->text_map[i];
        if (slot == 0 || (tok->tokens[slot - 1].text_len == t->text_len &&
                          memcmp(tok->text + tok->tokens[slot - 1].text_off, s, t->text_len) == 0)) {
            tok->text_map[i] = (uint32_t)id + 1;
            return;
        }
    }
}

sac_status sac_token_lookup_build(sac_tokenizer *tok, sac_error *err) {
    uint32_t map_size = 16;
    while (map_size < 2 * (uint32_t)tok->n_vocab) map_size *= 2;
    tok->text_map = calloc(map_size, sizeof *tok->text_map);
    if (!tok->text_map) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %d tokens", tok->n_vocab);
    tok->text_map_mask = map_size - 1;
    for (int32_t i = 0; i < tok->n_vocab; i++) insert(tok, i);
    return SAC_OK;
}
