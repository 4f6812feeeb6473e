/* tokenizer_bpe.c — byte-level BPE ("gpt2" vocabularies).
 *
 * A text goes through two steps, as in llama.cpp's llm_tokenizer_bpe:
 *  1. The vocabulary's pre-tokenizer (pretokenize.h; GPT-2's regex
 *       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *     when the file names none) splits it into words.
 *  2. A word that is a token as a whole is that token when the pre-tokenizer says so
 *     (Llama 3's "ignore merges"). Otherwise it starts as one symbol per byte (the token of the byte's printable stand-in,
 *     'Ġ' for a space) and the adjacent pair with the lowest merge rank is merged, leftmost
 *     first on ties, until no pair has a merge. A priority queue keeps this O(n log n).
 * Merges are looked up by pair of token ids, built once from tokenizer.ggml.merges, so
 * merging never concatenates or hashes strings; a per-call cache of words already seen
 * skips merging for repeated words. */
#include <stdlib.h>
#include <string.h>

#include "merge_queue.h"
#include "pretokenize.h"
#include "token_lookup.h"
#include "tokenizer_encoders.h"
#include "unicode.h"
#include "word_cache.h"

/* ------------------------------------------------------------------------------------------
 * Merge table
 * ---------------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser: spreads ids over the table */
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

static uint64_t merge_pair(int32_t left, int32_t right) {
    return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

static const sac_merge *find_merge(const sac_tokenizer *tok, int32_t left, int32_t right) {
    uint64_t pair = merge_pair(left, right);
    for (uint64_t i = mix64(pair ^ tok->merges_seed) & tok->merges_mask;; i = (i + 1) & tok->merges_mask) {
        const sac_merge *m = &tok->merges[i];
        if (m->result < 0) return NULL;
        if (m->pair == pair) return m;
    }
}

/* Adds merge `rank` of left and right into result, unless the pair has one already (a repeated
 * pair keeps its first rank). */
static void add_merge(sac_tokenizer *tok, int32_t left, int32_t right, int32_t result, int32_t rank) {
    uint64_t pair = merge_pair(left, right);
    uint64_t i = mix64(pair ^ tok->merges_seed) & tok->merges_mask;
    while (tok->merges[i].result >= 0 && tok->merges[i].pair != pair) i = (i + 1) & tok->merges_mask;
    if (tok->merges[i].result >= 0) return;
    tok->merges[i].pair = pair;
    tok->merges[i].rank = rank;
    tok->merges[i].result = result;
}

/* Merges are looked up a batch at a time (sac_token_lookup_many: a large vocabulary's
 * lookups miss the cache, and a batch's misses overlap): both sides of each merge, then what
 * the pairs join into. */
#define MERGE_BATCH 32

sac_status sac_bpe_load_merges(sac_tokenizer *tok, const gguf_file *f, sac_error *err) {
    const gguf_kv *kv;
    sac_status st = sac_gguf_get_array(f, "tokenizer.ggml.merges", GGUF_TYPE_STRING, &kv, err);
    if (st) return st;
    if (kv->arr_count > (uint64_t)1 << 28 || kv->arr_count > SIZE_MAX / 4 / sizeof *tok->merges)
        return sac_fail(err, SAC_ERR_MODEL, "tokenizer.ggml.merges has %llu entries, too many",
                        (unsigned long long)kv->arr_count);
    uint64_t n = kv->arr_count, size = 16;
    while (size < 2 * n) size *= 2;
    gguf_string *merges = calloc(n ? n : 1, sizeof *merges);
    tok->merges = calloc(size, sizeof *tok->merges);
    if (!merges || !tok->merges) {
        free(merges);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %llu BPE merges", (unsigned long long)n);
    }
    tok->merges_mask = size - 1;
    tok->merges_seed = sac_table_seed(tok->merges);
    for (uint64_t i = 0; i < size; i++) tok->merges[i].result = -1;
    sac_gguf_array_strings(kv, merges);

    char *joined = NULL; /* a batch's joined pairs, back to back */
    size_t joined_capacity = 0;
    for (uint64_t first = 0; first < n; first += MERGE_BATCH) {
        const int count = n - first < MERGE_BATCH ? (int)(n - first) : MERGE_BATCH;
        const char *sides[2 * MERGE_BATCH];
        size_t side_lens[2 * MERGE_BATCH], joined_size = 0;
        int32_t side_ids[2 * MERGE_BATCH];
        for (int k = 0; k < count; k++) {
            /* "left right": split at the first space after the first byte (a space is never a
             * token character here: GPT-2 spells it 'Ġ'). */
            const char *s = merges[first + k].data;
            uint64_t len = merges[first + k].len;
            const char *space = len > 1 ? memchr(s + 1, ' ', len - 1) : NULL;
            if (!space) {
                free(merges);
                free(joined);
                return sac_fail(err, SAC_ERR_MODEL, "tokenizer.ggml.merges[%llu] has no space between two tokens",
                                (unsigned long long)(first + k));
            }
            sides[2 * k] = s;
            side_lens[2 * k] = (size_t)(space - s);
            sides[2 * k + 1] = space + 1;
            side_lens[2 * k + 1] = (size_t)(len - side_lens[2 * k] - 1);
            if (len - 1 <= tok->max_text_len) joined_size += (size_t)len - 1; /* (longer joins are skipped) */
        }
        if (joined_size > joined_capacity) {
            char *grown = realloc(joined, joined_size);
            if (!grown) {
                free(merges);
                free(joined);
                return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %llu BPE merges", (unsigned long long)n);
            }
            joined = grown;
            joined_capacity = joined_size;
        }
        sac_token_lookup_many(tok, sides, side_lens, 2 * count, side_ids);

        /* A merge of or into a string that is no token could never apply to symbols that are
         * all tokens: skipped. */
        const char *texts[MERGE_BATCH];
        size_t lens[MERGE_BATCH], at = 0;
        int32_t results[MERGE_BATCH], which[MERGE_BATCH]; /* which[j]: the merge (k) of joined text j */
        int n_joined = 0;
        for (int k = 0; k < count; k++) {
            size_t n_left = side_lens[2 * k], n_right = side_lens[2 * k + 1];
            if (side_ids[2 * k] < 0 || side_ids[2 * k + 1] < 0 || n_left + n_right > tok->max_text_len) continue;
            memcpy(joined + at, sides[2 * k], n_left);
            memcpy(joined + at + n_left, sides[2 * k + 1], n_right);
            texts[n_joined] = joined + at;
            lens[n_joined] = n_left + n_right;
            which[n_joined++] = k;
            at += n_left + n_right;
        }
        sac_token_lookup_many(tok, texts, lens, n_joined, results);
        for (int j = 0; j < n_joined; j++) {
            const int k = which[j];
            if (results[j] >= 0)
                add_merge(tok, side_ids[2 * k], side_ids[2 * k + 1], results[j], (int32_t)(first + (uint64_t)k));
        }
    }
    free(merges);
    free(joined);
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Merging one word
 * ---------------------------------------------------------------------------------------- */

typedef struct bpe_scratch {
    int32_t *id, *prev, *next; /* symbols; a merged-away symbol has id -2 */
    sac_merge_candidate *heap; /* a, b: the ids of left and right when queued */
    size_t n_heap;
    int32_t *word_ids; /* the tokens of the word just encoded */
    size_t n_word_ids;
    char *spelled;     /* the word as the vocabulary spells it (2 bytes per byte at most) */
    size_t capacity;   /* symbols the arrays hold */
} bpe_scratch;

static void queue_pair(const sac_tokenizer *tok, bpe_scratch *w, int32_t left, int32_t right) {
    if (left < 0 || right < 0 || w->id[left] < 0 || w->id[right] < 0) return;
    const sac_merge *m = find_merge(tok, w->id[left], w->id[right]);
    if (!m) return;
    sac_merge_candidate c = {m->rank, left, right, w->id[left], w->id[right]};
    sac_merge_queue_push(w->heap, &w->n_heap, c);
}

static sac_status reserve(bpe_scratch *w, size_t n, sac_error *err) {
    if (n <= w->capacity) return SAC_OK;
    /* symbols are int32 indices, and 3 candidates per symbol must fit in size_t (wasm32) */
    if (n > (size_t)INT32_MAX / 2 || n > SIZE_MAX / 2 / (3 * sizeof(sac_merge_candidate)))
        return sac_fail(err, SAC_ERR_ARG, "a word of %zu bytes is too long to tokenize", n);
    size_t cap = w->capacity ? w->capacity : 64;
    while (cap < n) cap *= 2;
    /* a word of n symbols queues at most n - 1 pairs, then 2 per merge */
    int32_t *id = realloc(w->id, cap * sizeof *id);
    if (id) w->id = id;
    int32_t *prev = realloc(w->prev, cap * sizeof *prev);
    if (prev) w->prev = prev;
    int32_t *next = realloc(w->next, cap * sizeof *next);
    if (next) w->next = next;
    sac_merge_candidate *heap = realloc(w->heap, 3 * cap * sizeof *heap);
    if (heap) w->heap = heap;
    int32_t *word_ids = realloc(w->word_ids, cap * sizeof *word_ids);
    if (word_ids) w->word_ids = word_ids;
    char *spelled = realloc(w->spelled, 2 * cap);
    if (spelled) w->spelled = spelled;
    if (!id || !prev || !next || !heap || !word_ids || !spelled)
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for a word of %zu bytes", n);
    w->capacity = cap;
    return SAC_OK;
}

static sac_status add_byte_token(const sac_tokenizer *tok, bpe_scratch *w, uint8_t byte, sac_error *err) {
    int32_t id = tok->byte_token[byte];
    if (id < 0) id = tok->unk;
    if (id < 0)
        return sac_fail(err, SAC_ERR_ARG, "byte 0x%02X has no token in the vocabulary (and there is no unknown token)",
                        byte);
    w->word_ids[w->n_word_ids++] = id;
    return SAC_OK;
}

/* The token whose text is the whole word spelled in byte stand-ins ('Ġ' for a space), or -1. */
static int32_t whole_word_token(const sac_tokenizer *tok, bpe_scratch *w, const uint8_t *s, size_t n) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t b = tok->byte_token[s[i]];
        if (b < 0 || tok->tokens[b].text_len > 2) return -1; /* a stand-in is one or two bytes */
        memcpy(w->spelled + len, sac_token_text(tok, b), tok->tokens[b].text_len);
        len += tok->tokens[b].text_len;
    }
    return sac_token_lookup(tok, w->spelled, len);
}

/* Leaves the word's tokens in w->word_ids. */
static sac_status encode_word(const sac_tokenizer *tok, bpe_scratch *w, const uint8_t *s, size_t n, sac_error *err) {
    sac_status st = reserve(w, n, err);
    if (st) return st;
    w->n_word_ids = 0;
    if (tok->ignore_merges) {
        int32_t whole = whole_word_token(tok, w, s, n);
        if (whole >= 0) {
            w->word_ids[w->n_word_ids++] = whole;
            return SAC_OK;
        }
    }
    for (size_t i = 0; i < n; i++) {
        w->id[i] = tok->byte_token[s[i]];
        w->prev[i] = (int32_t)i - 1;
        w->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    w->n_heap = 0;
    for (size_t i = 1; i < n; i++) queue_pair(tok, w, (int32_t)i - 1, (int32_t)i);

    while (w->n_heap > 0) {
        sac_merge_candidate c = sac_merge_queue_pop(w->heap, &w->n_heap);
        /* stale: one side has merged since (its id changed) or was merged away */
        if (w->id[c.left] != c.a || w->id[c.right] != c.b || w->next[c.left] != c.right) continue;
        w->id[c.left] = find_merge(tok, c.a, c.b)->result;
        w->id[c.right] = -2;
        w->next[c.left] = w->next[c.right];
        if (w->next[c.right] >= 0) w->prev[w->next[c.right]] = c.left;
        queue_pair(tok, w, w->prev[c.left], c.left);
        queue_pair(tok, w, c.left, w->next[c.left]);
    }

    for (int32_t i = 0; i >= 0; i = w->next[i]) {
        if (w->id[i] >= 0) w->word_ids[w->n_word_ids++] = w->id[i];
        else if ((st = add_byte_token(tok, w, s[i], err))) return st; /* a byte without token */
    }
    return SAC_OK;
}

sac_status sac_bpe_encode(const sac_tokenizer *tok, const char *text, size_t len, sac_token_sink *sink,
                          sac_error *err) {
    bpe_scratch w = {0};
    sac_word_cache cache;
    sac_word_cache_init(&cache, tok->merges_seed);
    sac_status st = SAC_OK;
    sac_pretok_iter words;
    sac_pretok_begin(&words, tok->pretok, text, len);
    for (size_t start, end; !st && sac_pretok_next(&words, &start, &end);) {
        size_t n = end - start;
        const char *word = text + start;
        if (n == 1) { /* one byte is one token */
            int32_t id = tok->byte_token[(uint8_t)word[0]];
            if (id < 0) id = tok->unk;
            if (id < 0) {
                st = sac_fail(err, SAC_ERR_ARG, "byte 0x%02X has no token in the vocabulary (and there is no unknown token)",
                              (uint8_t)word[0]);
                break;
            }
            sac_sink_push(sink, id);
            continue;
        }
        const sac_cached_word *e = sac_word_cache_find(&cache, word, n);
        if (e) {
            for (uint32_t i = 0; i < e->count; i++) sac_sink_push(sink, cache.ids[e->first + i]);
            continue;
        }
        if ((st = encode_word(tok, &w, (const uint8_t *)word, n, err))) break;
        for (size_t i = 0; i < w.n_word_ids; i++) sac_sink_push(sink, w.word_ids[i]);
        sac_word_cache_add(&cache, word, n, w.word_ids, w.n_word_ids);
    }
    sac_word_cache_free(&cache);
    free(w.id);
    free(w.prev);
    free(w.next);
    free(w.heap);
    free(w.word_ids);
    free(w.spelled);
    return st;
}
