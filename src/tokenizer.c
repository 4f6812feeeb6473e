/* tokenizer.c — builds a tokenizer from tokenizer.ggml.* metadata and implements the public
 * tokenizer calls of saccade.h (sac_tokenize, sac_token_*). The kinds of vocabulary encode in
 * their own files (tokenizer_encoders.h: tokenizer_bpe.c for gpt2, tokenizer_spm.c for llama,
 * tokenizer_char.c for char), which share the text → id table (token_lookup.c) and the merge
 * queue (merge_queue.c); calls go one way, from here down. Streaming decoding is in
 * detokenizer.c.
 *
 * Keys read, as llama.cpp's converters write them:
 *   tokenizer.ggml.model              "gpt2" | "llama" | "char" (absent, "none" or
 *                                     "no_vocab": no tokenizer)
 *   tokenizer.ggml.pre                gpt2 only: absent ("gpt-2") or a name pretokenize.c knows
 *                                     (others are SAC_ERR_UNSUPPORTED)
 *   tokenizer.ggml.tokens             [string], required
 *   tokenizer.ggml.scores             [f32], optional (0): llama's merge priorities
 *   tokenizer.ggml.token_type         [i32], optional (1, normal): see enum sac_token_type
 *   tokenizer.ggml.merges             [string] "left right", gpt2, rank = index
 *   tokenizer.ggml.bos_token_id, .eos_token_id, .unknown_token_id     optional (none; the
 *                                     unknown token defaults to the first of type unknown)
 *   tokenizer.ggml.add_bos_token      optional: llama and Llama 3's pre-tokenizer true, others false
 *   tokenizer.ggml.add_eos_token      optional: false
 *   tokenizer.ggml.add_space_prefix   optional, llama: true
 *   general.name                      optional: llama.cpp keys per-token strip attributes on
 *                                     it (Phi-3, ModernBERT; see set_strip_attributes)
 *
 * Decoding (sac_token_bytes): gpt2 tokens map each character back to its byte; llama tokens
 * turn ▁ into a space and <0xNN> into the byte; control, unknown and unused tokens decode
 * to nothing; user-defined tokens to their text as is. Ids past the tokenizer's tokens but
 * inside the model's embedding table (padding rows) decode to nothing too. sac_token_bytes
 * keeps llama's leading space; the streaming detokenizer drops it from the first piece of a
 * text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "pretokenize.h"
#include "token_lookup.h"
#include "tokenizer_encoders.h"
#include "unicode.h"

/* ------------------------------------------------------------------------------------------
 * Loading
 * ---------------------------------------------------------------------------------------- */

void sac_tokenizer_free(sac_tokenizer *tok) {
    if (!tok) return;
    free(tok->tokens);
    free(tok->text);
    free(tok->pieces);
    free(tok->text_map);
    free(tok->merges);
    free(tok->specials);
    free(tok);
}

int32_t sac_tokenizer_n_vocab(const sac_tokenizer *tok) { return tok ? tok->n_vocab : 0; }

/* An optional token id key: absent → -1. */
static sac_status optional_id(const gguf_file *f, const char *key, int32_t n_vocab, int32_t *out, sac_error *err) {
    *out = -1;
    if (!sac_gguf_find_kv(f, key)) return SAC_OK;
    uint32_t v;
    sac_status st = sac_gguf_get_u32(f, key, &v, err);
    if (st) return st;
    if (v >= (uint32_t)n_vocab)
        return sac_fail(err, SAC_ERR_MODEL, "%s = %u is not a token id (the vocabulary has %d)", key, v, n_vocab);
    *out = (int32_t)v;
    return SAC_OK;
}

static sac_status optional_bool(const gguf_file *f, const char *key, int fallback, int *out, sac_error *err) {
    *out = fallback;
    if (!sac_gguf_find_kv(f, key)) return SAC_OK;
    return sac_gguf_get_bool(f, key, out, err);
}

/* An optional numeric array with one element per token. */
static sac_status optional_per_token(const gguf_file *f, const char *key, int32_t n_vocab, const gguf_kv **out,
                                     sac_error *err) {
    const gguf_kv *kv = sac_gguf_find_kv(f, key);
    *out = NULL;
    if (!kv) return SAC_OK;
    if (kv->type != GGUF_TYPE_ARRAY || kv->arr_type == GGUF_TYPE_STRING || kv->arr_type == GGUF_TYPE_ARRAY)
        return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' should be an array of numbers", key);
    if (kv->arr_count != (uint64_t)n_vocab)
        return sac_fail(err, SAC_ERR_MODEL, "%s has %llu entries but there are %d tokens", key,
                        (unsigned long long)kv->arr_count, n_vocab);
    *out = kv;
    return SAC_OK;
}

static int parse_byte_token(const char *s, size_t n, uint8_t *byte) { /* "<0xNN>" */
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return 0;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        v = v * 16 + d;
    }
    *byte = (uint8_t)v;
    return 1;
}

/* Writes the bytes token `id` decodes to at `out` (never more than its text) and returns the count. */
static size_t decode_piece(const sac_tokenizer *tok, int32_t id, char *out) {
    const sac_token_entry *t = &tok->tokens[id];
    const char *s = tok->text + t->text_off;
    size_t n = t->text_len, w = 0;
    uint8_t byte;
    switch (t->type) {
    case SAC_TOKEN_CONTROL:
    case SAC_TOKEN_UNKNOWN:
    case SAC_TOKEN_UNUSED:
        return 0;
    case SAC_TOKEN_USER_DEFINED:
        memcpy(out, s, n);
        return n;
    case SAC_TOKEN_BYTE:
        if (tok->kind != SAC_TOKENIZER_GPT2 && parse_byte_token(s, n, &byte)) {
            out[0] = (char)byte;
            return 1;
        }
        break;
    default:
        break;
    }
    if (tok->kind == SAC_TOKENIZER_GPT2) {
        for (size_t p = 0; p < n;) {
            if (s[p] >= '!' && s[p] <= '~') { /* printable ASCII stands for itself (most of a vocabulary) */
                out[w++] = s[p++];
                continue;
            }
            uint32_t cp;
            size_t len;
            int b = sac_utf8_next((const uint8_t *)s + p, n - p, &cp, &len) == SAC_UTF8_OK ? sac_gpt2_cp_to_byte(cp) : -1;
            if (b >= 0) {
                out[w++] = (char)b;
            } else { /* not a byte's stand-in: keep it as written */
                memcpy(out + w, s + p, len);
                w += len;
            }
            p += len;
        }
        return w;
    }
    if (tok->kind == SAC_TOKENIZER_LLAMA) {
        for (size_t p = 0; p < n;) {
            if (n - p >= 3 && memcmp(s + p, "\xE2\x96\x81", 3) == 0) {
                out[w++] = ' ';
                p += 3;
            } else {
                out[w++] = s[p++];
            }
        }
        return w;
    }
    memcpy(out, s, n);
    return n;
}

typedef struct special_order {
    uint32_t len;
    int32_t id;
} special_order;

static int special_longest_first(const void *a, const void *b) {
    const special_order *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static sac_status build_specials(sac_tokenizer *tok, sac_error *err) {
    int32_t n = 0;
    for (int32_t id = 0; id < tok->n_vocab; id++) {
        uint8_t type = tok->tokens[id].type;
        n += (type == SAC_TOKEN_CONTROL || type == SAC_TOKEN_UNKNOWN || type == SAC_TOKEN_USER_DEFINED) &&
             tok->tokens[id].text_len > 0;
    }
    if (n == 0) return SAC_OK;
    special_order *order = malloc((size_t)n * sizeof *order);
    tok->specials = malloc((size_t)n * sizeof *tok->specials);
    if (!order || !tok->specials) {
        free(order);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %d special tokens", n);
    }
    int32_t k = 0;
    for (int32_t id = 0; id < tok->n_vocab; id++) {
        uint8_t type = tok->tokens[id].type;
        if ((type == SAC_TOKEN_CONTROL || type == SAC_TOKEN_UNKNOWN || type == SAC_TOKEN_USER_DEFINED) &&
            tok->tokens[id].text_len > 0)
            order[k++] = (special_order){tok->tokens[id].text_len, id};
    }
    qsort(order, (size_t)n, sizeof *order, special_longest_first);
    for (int32_t i = 0; i < n; i++) tok->specials[i] = order[i].id;
    tok->n_specials = n;
    free(order);
    return SAC_OK;
}

/* 1 when s holds `needle` (lowercase ASCII) in any case. */
static int name_contains(gguf_string s, const char *needle) {
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= s.len; i++) {
        size_t j = 0;
        while (j < m && ((s.data[i + j] >= 'A' && s.data[i + j] <= 'Z') ? s.data[i + j] + 32 : s.data[i + j]) == needle[j]) j++;
        if (j == m) return 1;
    }
    return 0;
}

static void set_strip(sac_tokenizer *tok, const char *text, uint8_t bit, int on) {
    int32_t id = sac_token_lookup(tok, text, strlen(text));
    if (id < 0) return; /* llama.cpp refuses such a file; here the token simply has no attribute */
    tok->tokens[id].strip = (uint8_t)(on ? tok->tokens[id].strip | bit : tok->tokens[id].strip & ~bit);
}

/* The per-token attributes llama.cpp sets from the model's name (GGUF has no key for them):
 * in a model named like Phi-3, special tokens drop the white space after them, except <unk>,
 * <s> and <|endoftext|>; in a ModernBERT, [MASK] drops the white space before it. */
static void set_strip_attributes(sac_tokenizer *tok, const gguf_file *f) {
    const gguf_kv *name = sac_gguf_find_kv(f, "general.name");
    if (!name || name->type != GGUF_TYPE_STRING) return;
    if (name_contains(name->str, "phi-3") || name_contains(name->str, "phi3")) {
        for (int32_t k = 0; k < tok->n_specials; k++) tok->tokens[tok->specials[k]].strip |= SAC_STRIP_RIGHT;
        set_strip(tok, "</s>", SAC_STRIP_RIGHT, 1);
        set_strip(tok, "<unk>", SAC_STRIP_RIGHT, 0);
        set_strip(tok, "<s>", SAC_STRIP_RIGHT, 0);
        set_strip(tok, "<|endoftext|>", SAC_STRIP_RIGHT, 0);
    } else if (name_contains(name->str, "modern-bert")) {
        set_strip(tok, "[MASK]", SAC_STRIP_LEFT, 1);
    }
}

static sac_status load_tokens(sac_tokenizer *tok, const gguf_file *f, sac_error *err) {
    const gguf_kv *tokens_kv, *scores_kv, *types_kv;
    sac_status st = sac_gguf_get_array(f, "tokenizer.ggml.tokens", GGUF_TYPE_STRING, &tokens_kv, err);
    if (st) return st;
    /* (2^28 tokens keep every table's size within 32 bits, for wasm32) */
    if (tokens_kv->arr_count == 0 || tokens_kv->arr_count > (uint64_t)1 << 28)
        return sac_fail(err, SAC_ERR_MODEL, "tokenizer.ggml.tokens has %llu entries",
                        (unsigned long long)tokens_kv->arr_count);
    int32_t n = (int32_t)tokens_kv->arr_count;
    tok->n_vocab = n;
    if ((st = optional_per_token(f, "tokenizer.ggml.scores", n, &scores_kv, err))) return st;
    if ((st = optional_per_token(f, "tokenizer.ggml.token_type", n, &types_kv, err))) return st;

    gguf_string *strings = calloc((size_t)n, sizeof *strings);
    tok->tokens = calloc((size_t)n, sizeof *tok->tokens);
    if (!strings || !tok->tokens) {
        free(strings);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %d tokens", n);
    }
    sac_gguf_array_strings(tokens_kv, strings);
    uint64_t total = 0;
    for (int32_t i = 0; i < n; i++) total += strings[i].len;
    if (total > UINT32_MAX - 1) {
        free(strings);
        return sac_fail(err, SAC_ERR_MODEL, "tokenizer.ggml.tokens holds %llu bytes of text, too many",
                        (unsigned long long)total);
    }
    tok->text = malloc(total + 1);
    tok->pieces = malloc(total + 1);
    if (!tok->text || !tok->pieces) {
        free(strings);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %d tokens", n);
    }

    uint32_t off = 0;
    for (int32_t i = 0; i < n; i++) {
        sac_token_entry *t = &tok->tokens[i];
        if (strings[i].len) memcpy(tok->text + off, strings[i].data, strings[i].len);
        t->text_off = off;
        t->text_len = (uint32_t)strings[i].len;
        off += t->text_len;
        if (t->text_len > tok->max_text_len) tok->max_text_len = t->text_len;
        t->score = scores_kv ? (float)sac_gguf_array_float(scores_kv, (uint64_t)i) : 0.0f;
        int64_t type = types_kv ? sac_gguf_array_int(types_kv, (uint64_t)i) : SAC_TOKEN_NORMAL;
        if (type < SAC_TOKEN_NORMAL || type > SAC_TOKEN_BYTE) {
            free(strings);
            return sac_fail(err, SAC_ERR_MODEL, "tokenizer.ggml.token_type[%d] = %lld is not a token type (1..6)", i,
                            (long long)type);
        }
        t->type = (uint8_t)type;
    }
    free(strings);
    return sac_token_lookup_build(tok, err);
}

static sac_status check_char_vocab(const sac_tokenizer *tok, sac_error *err) {
    for (int32_t i = 0; i < tok->n_vocab; i++) {
        const sac_token_entry *t = &tok->tokens[i];
        if (t->type != SAC_TOKEN_NORMAL) continue;
        const uint8_t *s = (const uint8_t *)tok->text + t->text_off;
        uint32_t cp;
        size_t len;
        if (t->text_len == 0 || sac_utf8_next(s, t->text_len, &cp, &len) != SAC_UTF8_OK || len != t->text_len)
            return sac_fail(err, SAC_ERR_MODEL, "char vocabulary: token %d ('%.*s') is not one UTF-8 character", i,
                            (int)(t->text_len > 32 ? 32 : t->text_len), (const char *)s);
        if (sac_token_lookup(tok, (const char *)s, len) != i)
            return sac_fail(err, SAC_ERR_MODEL, "char vocabulary: character U+%04X appears twice", (unsigned)cp);
    }
    return SAC_OK;
}

/* 1 when every token has the form ▁*[^▁]*: then no token spans a ▁ that follows another character. */
static int space_mark_only_leads(const sac_tokenizer *tok) {
    for (int32_t i = 0; i < tok->n_vocab; i++) {
        const char *s = sac_token_text(tok, i);
        uint32_t n = tok->tokens[i].text_len, p = 0;
        while (n - p >= 3 && memcmp(s + p, "\xE2\x96\x81", 3) == 0) p += 3;
        for (; p + 3 <= n; p++)
            if (memcmp(s + p, "\xE2\x96\x81", 3) == 0) return 0;
    }
    return 1;
}

/* "gpt2\0x" must not pass for (or be reported as) "gpt2": a name never holds NUL. */
static sac_status check_name(gguf_string name, const char *key, sac_error *err) {
    if (name.len && memchr(name.data, 0, (size_t)name.len))
        return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' contains a NUL byte; a name cannot", key);
    return SAC_OK;
}

static sac_status load(sac_tokenizer *tok, const gguf_file *f, gguf_string model, sac_error *err) {
    sac_status st;
    if ((st = check_name(model, "tokenizer.ggml.model", err))) return st;
    if (sac_gguf_string_eq(model, "gpt2")) {
        tok->kind = SAC_TOKENIZER_GPT2;
        const gguf_kv *pre = sac_gguf_find_kv(f, "tokenizer.ggml.pre");
        if (pre && pre->type != GGUF_TYPE_STRING)
            return sac_fail(err, SAC_ERR_MODEL, "metadata key 'tokenizer.ggml.pre' should be a string");
        if (pre && (st = check_name(pre->str, "tokenizer.ggml.pre", err))) return st;
        tok->pretok = sac_pretokenizer_find(pre ? pre->str.data : "gpt-2", pre ? (size_t)pre->str.len : 5);
        if (!tok->pretok)
            return sac_fail(err, SAC_ERR_UNSUPPORTED, "pre-tokenizer '%.*s' is not supported (supported: %s)",
                            (int)(pre->str.len > 64 ? 64 : pre->str.len), pre->str.data, sac_pretokenizer_names());
        tok->ignore_merges = tok->pretok->ignore_merges;
    } else if (sac_gguf_string_eq(model, "llama")) {
        tok->kind = SAC_TOKENIZER_LLAMA;
    } else if (sac_gguf_string_eq(model, "char")) {
        tok->kind = SAC_TOKENIZER_CHAR;
    } else {
        return sac_fail(err, SAC_ERR_UNSUPPORTED, "tokenizer model '%.*s' is not supported (gpt2, llama, char)",
                        (int)(model.len > 64 ? 64 : model.len), model.data);
    }

    if ((st = load_tokens(tok, f, err))) return st;
    int32_t n = tok->n_vocab;
    if ((st = optional_id(f, "tokenizer.ggml.bos_token_id", n, &tok->bos, err))) return st;
    if ((st = optional_id(f, "tokenizer.ggml.eos_token_id", n, &tok->eos, err))) return st;
    if ((st = optional_id(f, "tokenizer.ggml.unknown_token_id", n, &tok->unk, err))) return st;
    for (int32_t i = 0; i < n && tok->unk < 0; i++)
        if (tok->tokens[i].type == SAC_TOKEN_UNKNOWN) tok->unk = i;
    int is_llama = tok->kind == SAC_TOKENIZER_LLAMA;
    /* a SentencePiece vocabulary without the keys: llama.cpp's defaults, BOS 1 and EOS 2 */
    if (is_llama && !sac_gguf_find_kv(f, "tokenizer.ggml.bos_token_id") && n > 1) tok->bos = 1;
    if (is_llama && !sac_gguf_find_kv(f, "tokenizer.ggml.eos_token_id") && n > 2) tok->eos = 2;
    /* a vocabulary without BOS asks for none unless it says so; saying so is a contradiction */
    int bos_default = (is_llama || (tok->pretok && tok->pretok->add_bos)) && tok->bos >= 0;
    if ((st = optional_bool(f, "tokenizer.ggml.add_bos_token", bos_default, &tok->add_bos, err))) return st;
    if (tok->add_bos && tok->bos < 0)
        return sac_fail(err, SAC_ERR_MODEL,
                        "tokenizer.ggml.add_bos_token is true, but the vocabulary has no BOS token "
                        "(no tokenizer.ggml.bos_token_id)");
    if ((st = optional_bool(f, "tokenizer.ggml.add_eos_token", 0, &tok->add_eos, err))) return st;
    if ((st = optional_bool(f, "tokenizer.ggml.add_space_prefix", is_llama, &tok->add_space_prefix, err))) return st;
    if (!is_llama) tok->add_space_prefix = 0;

    for (int b = 0; b < 256; b++) {
        char buf[8];
        size_t len;
        if (tok->kind == SAC_TOKENIZER_GPT2) {
            len = sac_utf8_encode(sac_gpt2_byte_to_cp((uint8_t)b), buf);
        } else {
            static const char hex[] = "0123456789ABCDEF";
            memcpy(buf, "<0x", 3);
            buf[3] = hex[b >> 4];
            buf[4] = hex[b & 15];
            buf[5] = '>';
            len = 6;
        }
        tok->byte_token[b] = tok->kind == SAC_TOKENIZER_CHAR ? -1 : sac_token_lookup(tok, buf, len);
    }
    if (tok->kind == SAC_TOKENIZER_GPT2 && (st = sac_bpe_load_merges(tok, f, err))) return st;
    if (tok->kind == SAC_TOKENIZER_LLAMA) tok->spm_split_at_space = space_mark_only_leads(tok);
    if (tok->kind == SAC_TOKENIZER_CHAR && (st = check_char_vocab(tok, err))) return st;

    uint32_t off = 0;
    for (int32_t i = 0; i < n; i++) {
        size_t len = decode_piece(tok, i, tok->pieces + off);
        tok->tokens[i].piece_off = off;
        tok->tokens[i].piece_len = (uint32_t)len;
        off += (uint32_t)len;
    }
    if ((st = build_specials(tok, err))) return st;
    set_strip_attributes(tok, f);
    return SAC_OK;
}

sac_status sac_tokenizer_load(const gguf_file *f, sac_tokenizer **out, sac_error *err) {
    if (!out) return sac_fail(err, SAC_ERR_ARG, "sac_tokenizer_load: out is NULL");
    *out = NULL;
    if (!f) return sac_fail(err, SAC_ERR_ARG, "sac_tokenizer_load: no GGUF file");
    const gguf_kv *model_kv = sac_gguf_find_kv(f, "tokenizer.ggml.model");
    if (!model_kv) {
        /* A vocabulary without its kind would be read as none at all; llama.cpp refuses it too. */
        if (sac_gguf_find_kv(f, "tokenizer.ggml.tokens"))
            return sac_fail(err, SAC_ERR_MODEL, "missing metadata key 'tokenizer.ggml.model' (the file has "
                                                "tokenizer.ggml.tokens but does not say which tokenizer they are for)");
        return SAC_OK; /* a model without tokenizer */
    }
    gguf_string model;
    sac_status st = sac_gguf_get_string(f, "tokenizer.ggml.model", &model, err);
    if (st) return st;
    if (sac_gguf_string_eq(model, "none") || sac_gguf_string_eq(model, "no_vocab")) return SAC_OK; /* llama.cpp's "no vocabulary" */
    sac_tokenizer *tok = calloc(1, sizeof *tok);
    if (!tok) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for the tokenizer");
    tok->bos = tok->eos = tok->unk = -1;
    if ((st = load(tok, f, model, err))) {
        sac_tokenizer_free(tok);
        return st;
    }
    *out = tok;
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Encoding
 * ---------------------------------------------------------------------------------------- */

/* A piece of the text: raw text to encode (token < 0) or a special token spelled out in it. */
typedef struct fragment {
    size_t start, len;
    int32_t token;
} fragment;

typedef struct fragment_list {
    fragment *items;
    size_t n, cap;
} fragment_list;

static int fragments_add(fragment_list *l, size_t start, size_t len, int32_t token) {
    if (token < 0 && len == 0) return 1;
    if (l->n == l->cap) {
        if (l->cap > SIZE_MAX / 2 / sizeof *l->items) return 0; /* size_t is 32 bits in wasm32 */
        size_t cap = l->cap ? 2 * l->cap : 16;
        fragment *items = realloc(l->items, cap * sizeof *items);
        if (!items) return 0;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = (fragment){start, len, token};
    return 1;
}

static const char *find_bytes(const char *hay, size_t n, const char *needle, size_t m) {
    if (m == 0 || m > n) return NULL;
    const char *end = hay + (n - m) + 1; /* last possible start + 1 */
    for (const char *p = hay; p < end;) {
        p = memchr(p, needle[0], (size_t)(end - p));
        if (!p) return NULL;
        if (memcmp(p, needle, m) == 0) return p;
        p++;
    }
    return NULL;
}

static int is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Splits the text around special tokens, longest first, as llama.cpp's
 * tokenizer_st_partition: user-defined tokens always, control and unknown tokens only when
 * `parse_control`; a token's lstrip / rstrip attribute drops the white space beside it. On
 * success *out holds the fragments in text order. */
static sac_status partition(const sac_tokenizer *tok, const char *text, size_t len, int parse_control,
                            fragment_list *out, sac_error *err) {
    fragment_list cur = {0}, next = {0};
    if (!fragments_add(&cur, 0, len, -1)) goto nomem;
    for (int32_t k = 0; k < tok->n_specials; k++) {
        int32_t id = tok->specials[k];
        const sac_token_entry *t = &tok->tokens[id];
        if (t->type != SAC_TOKEN_USER_DEFINED && !parse_control) continue;
        const char *needle = tok->text + t->text_off;
        next.n = 0;
        for (size_t i = 0; i < cur.n; i++) {
            fragment fr = cur.items[i];
            if (fr.token >= 0) {
                if (!fragments_add(&next, fr.start, fr.len, fr.token)) goto nomem;
                continue;
            }
            size_t p = fr.start, end = fr.start + fr.len;
            const char *hit;
            while ((hit = find_bytes(text + p, end - p, needle, t->text_len))) {
                size_t at = (size_t)(hit - text), left_end = at;
                if (t->strip & SAC_STRIP_LEFT)
                    while (left_end > p && is_ascii_space(text[left_end - 1])) left_end--;
                if (!fragments_add(&next, p, left_end - p, -1) || !fragments_add(&next, at, t->text_len, id)) goto nomem;
                p = at + t->text_len;
                if (t->strip & SAC_STRIP_RIGHT)
                    while (p < end && is_ascii_space(text[p])) p++;
            }
            if (!fragments_add(&next, p, end - p, -1)) goto nomem;
        }
        fragment_list swap = cur;
        cur = next;
        next = swap;
    }
    free(next.items);
    *out = cur;
    return SAC_OK;
nomem:
    free(cur.items);
    free(next.items);
    return sac_fail(err, SAC_ERR_NOMEM, "out of memory while splitting %zu bytes around special tokens", len);
}

static sac_status encode(const sac_tokenizer *tok, const char *text, size_t len, uint32_t flags,
                         int sanitized, sac_token_sink *sink, sac_error *err) {
    if ((flags & SAC_TOKENIZE_BOS) && tok->bos < 0)
        return sac_fail(err, SAC_ERR_ARG, "SAC_TOKENIZE_BOS: the vocabulary has no BOS token");
    if ((flags & SAC_TOKENIZE_EOS) && tok->eos < 0)
        return sac_fail(err, SAC_ERR_ARG, "SAC_TOKENIZE_EOS: the vocabulary has no EOS token");
    if (flags & SAC_TOKENIZE_BOS) sac_sink_push(sink, tok->bos);

    fragment_list frags = {0};
    sac_status st = partition(tok, text, len, (flags & SAC_TOKENIZE_SPECIAL) != 0, &frags, err);
    if (st) return st;
    int after_special = 1; /* llama: ▁ goes in front of the text and after each special token */
    for (size_t i = 0; i < frags.n && !st; i++) {
        const fragment *fr = &frags.items[i];
        if (fr->token >= 0) {
            sac_sink_push(sink, fr->token);
            after_special = 1;
            continue;
        }
        switch (tok->kind) {
        case SAC_TOKENIZER_GPT2: st = sac_bpe_encode(tok, text + fr->start, fr->len, sink, err); break;
        case SAC_TOKENIZER_LLAMA:
            st = sac_spm_encode(tok, text + fr->start, fr->len, after_special, sink, err);
            break;
        case SAC_TOKENIZER_CHAR:
            st = sac_char_encode(tok, text + fr->start, fr->len, fr->start, sink, err);
            if (st && sanitized) {
                size_t used = strlen(err->msg);
                if (used < sizeof err->msg)
                    snprintf(err->msg + used, sizeof err->msg - used, " (offset after replacing invalid UTF-8)");
            }
            break;
        }
        after_special = 0;
    }
    free(frags.items);
    if (st) return st;
    if (flags & SAC_TOKENIZE_EOS) sac_sink_push(sink, tok->eos);
    return SAC_OK;
}

static sac_status no_tokenizer(sac_model *model) {
    return sac_fail(&model->error, SAC_ERR_STATE, "no tokenizer: the model has no tokenizer.ggml.* metadata");
}

sac_status sac_tokenize(sac_model *model, const char *text, size_t len, uint32_t flags, int32_t *out,
                        int32_t capacity, int32_t *n_tokens) {
    if (!model) return SAC_ERR_ARG;
    if (n_tokens) *n_tokens = 0;
    if (!model->tokenizer) return no_tokenizer(model);
    if (!n_tokens) return sac_fail(&model->error, SAC_ERR_ARG, "sac_tokenize: n_tokens is NULL");
    if (!text && len > 0) return sac_fail(&model->error, SAC_ERR_ARG, "sac_tokenize: text is NULL");
    if (capacity < 0 || (!out && capacity > 0))
        return sac_fail(&model->error, SAC_ERR_ARG, "sac_tokenize: no room for %d tokens at out", capacity);
    if (flags & ~(uint32_t)(SAC_TOKENIZE_BOS | SAC_TOKENIZE_EOS | SAC_TOKENIZE_SPECIAL))
        return sac_fail(&model->error, SAC_ERR_ARG, "sac_tokenize: unknown flags 0x%x", flags);

    if (len > SIZE_MAX / 4)
        return sac_fail(&model->error, SAC_ERR_ARG, "sac_tokenize: a text of %zu bytes is too long", len);
    /* Invalid UTF-8 becomes U+FFFD first, so every encoder sees well-formed text. */
    char *clean = NULL;
    if (len > 0 && !sac_utf8_valid((const uint8_t *)text, len)) {
        size_t clean_len = sac_utf8_sanitized_len((const uint8_t *)text, len);
        clean = malloc(clean_len);
        if (!clean) return sac_fail(&model->error, SAC_ERR_NOMEM, "out of memory for %zu bytes of text", clean_len);
        sac_utf8_sanitize((const uint8_t *)text, len, clean);
        text = clean;
        len = clean_len;
    }
    sac_token_sink sink = {out, capacity, 0};
    sac_status st = encode(model->tokenizer, text ? text : "", len, flags, clean != NULL, &sink, &model->error);
    free(clean);
    if (st) return st;
    if (sink.count > INT32_MAX)
        return sac_fail(&model->error, SAC_ERR_ARG, "the text needs %lld tokens, more than an int32_t counts",
                        (long long)sink.count);
    *n_tokens = (int32_t)sink.count;
    if (sink.count > capacity)
        return sac_fail(&model->error, SAC_ERR_ARG, "capacity %d is too small: the text needs %lld tokens", capacity,
                        (long long)sink.count);
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Special ids and decoding single tokens
 * ---------------------------------------------------------------------------------------- */

int32_t sac_token_bos(const sac_model *model) {
    return model && model->tokenizer ? model->tokenizer->bos : -1;
}

int32_t sac_token_eos(const sac_model *model) {
    return model && model->tokenizer ? model->tokenizer->eos : -1;
}

int32_t sac_token_add_bos(const sac_model *model) {
    return model && model->tokenizer ? model->tokenizer->add_bos : 0;
}

int32_t sac_tokenizer_n_ids(const sac_model *model) {
    /* the loader refuses a tokenizer larger than the table, so this is the table's rows
     * whenever there is a table */
    int32_t n_tokens = model->tokenizer->n_vocab;
    return model->info.n_vocab > n_tokens ? model->info.n_vocab : n_tokens;
}

sac_status sac_tokenizer_check_id(const sac_model *model, int32_t id, int *padding, sac_error *err) {
    int32_t n_ids = sac_tokenizer_n_ids(model);
    if (id < 0 || id >= n_ids) return sac_fail(err, SAC_ERR_ARG, "token %d is out of range (vocabulary size %d)", id, n_ids);
    *padding = id >= model->tokenizer->n_vocab;
    return SAC_OK;
}

sac_status sac_tokenizer_piece(const sac_model *model, int32_t id, const char **bytes, size_t *len, sac_error *err) {
    const sac_tokenizer *tok = model->tokenizer;
    int padding = 0;
    sac_status st = sac_tokenizer_check_id(model, id, &padding, err);
    if (st != SAC_OK) return st;
    if (padding) { /* no text */
        *bytes = tok->pieces;
        *len = 0;
        return SAC_OK;
    }
    *bytes = tok->pieces + tok->tokens[id].piece_off;
    *len = tok->tokens[id].piece_len;
    return SAC_OK;
}

sac_status sac_token_bytes(sac_model *model, int32_t token, const char **bytes, size_t *len) {
    if (!model) return SAC_ERR_ARG;
    if (!model->tokenizer) return no_tokenizer(model);
    if (!bytes || !len) return sac_fail(&model->error, SAC_ERR_ARG, "sac_token_bytes: bytes or len is NULL");
    return sac_tokenizer_piece(model, token, bytes, len, &model->error);
}
