/* pretokenize_rules.c — the pre-tokenizers' regular expressions, written out by hand with
 * real Unicode classes (unicode.h). Where llama.cpp matches a regex on a copy of the text in
 * which every non-ASCII white-space character reads as \v, \s is the White_Space property
 * here, and no class range of such a regex takes a white-space character. */
#include "pretokenize_rules.h"

#include <stdint.h>

#include "unicode.h"

/* ------------------------------------------------------------------------------------------
 * Characters
 * ---------------------------------------------------------------------------------------- */

/* The code point at s[p], p < end, and its length in bytes. */
static uint32_t cp_at(const char *s, size_t end, size_t p, size_t *len) {
    uint8_t b = (uint8_t)s[p];
    if (b < 0x80) {
        *len = 1;
        return b;
    }
    uint32_t cp;
    sac_utf8_next((const uint8_t *)s + p, end - p, &cp, len);
    return cp;
}

static enum sac_char_class class_at(const char *s, size_t end, size_t p, size_t *len) {
    return sac_char_class_of(cp_at(s, end, p, len));
}

/* The end of the run of characters of class `cls` that starts at q. */
static size_t class_run(const char *s, size_t end, size_t q, enum sac_char_class cls) {
    size_t len;
    while (q < end && class_at(s, end, q, &len) == cls) q += len;
    return q;
}

static int is_newline(uint32_t cp) { return cp == '\r' || cp == '\n'; }

static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c; }

/* 's|'t|'re|'ve|'m|'ll|'d at p (case-insensitive or not): the end of the match, or p. */
static size_t contraction(const char *s, size_t end, size_t p, int fold) {
    if (s[p] != '\'' || p + 1 >= end) return p;
    char c1 = fold ? ascii_lower(s[p + 1]) : s[p + 1];
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return p + 2;
    if (p + 2 >= end) return p;
    char c2 = fold ? ascii_lower(s[p + 2]) : s[p + 2];
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return p + 3;
    return p;
}

/* A run of white space at p: its end, the start of its last character, and the end of its
 * last \r or \n (p when it has none). */
static size_t space_run(const char *s, size_t end, size_t p, size_t *last, size_t *last_newline_end, int *count) {
    size_t q = p, len;
    *last = p;
    *last_newline_end = p;
    *count = 0;
    while (q < end) {
        uint32_t cp = cp_at(s, end, q, &len);
        if (sac_char_class_of(cp) != SAC_CHAR_SPACE) break;
        *last = q;
        q += len;
        if (is_newline(cp)) *last_newline_end = q;
        (*count)++;
    }
    return q;
}

/* ------------------------------------------------------------------------------------------
 * Rules that match at every position
 * ---------------------------------------------------------------------------------------- */

size_t sac_gpt2_pretokenize_next(const char *s, size_t end, size_t p) {
    size_t q = contraction(s, end, p, 0);
    if (q > p) return q;

    /* ` ?X+` for X in letters, numbers, others: the optional space joins the run after it */
    size_t len0;
    enum sac_char_class run = class_at(s, end, p, &len0);
    q = p;
    int past_end = 0;
    if (s[p] == ' ') {
        q = p + 1;
        if (q < end) run = class_at(s, end, q, &len0);
        else past_end = 1;
    }
    if (!past_end && run != SAC_CHAR_SPACE) return class_run(s, end, q, run);

    /* \s+(?!\S) then \s+: a run of spaces leaves its last one to the word that follows
     * (" Hello"), unless the run ends the piece. */
    size_t last, last_newline_end;
    int count;
    size_t r = space_run(s, end, p, &last, &last_newline_end, &count);
    if (count > 1 && r < end) return last;
    return r > p ? r : p + len0; /* the latter unreachable: every character is in some class */
}

/* Llama 3's regex (max_digits 3) and Qwen2's (max_digits 1). */
static size_t llama3_next(const char *s, size_t end, size_t p, int max_digits) {
    size_t q = contraction(s, end, p, 1);
    if (q > p) return q;

    size_t len, len1;
    uint32_t cp = cp_at(s, end, p, &len);
    enum sac_char_class cls = sac_char_class_of(cp);
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (cls == SAC_CHAR_LETTER) return class_run(s, end, p, SAC_CHAR_LETTER);
    if (!is_newline(cp) && cls != SAC_CHAR_NUMBER && p + len < end &&
        class_at(s, end, p + len, &len1) == SAC_CHAR_LETTER)
        return class_run(s, end, p + len, SAC_CHAR_LETTER);
    /* \p{N}{1,max_digits} */
    if (cls == SAC_CHAR_NUMBER) {
        q = p;
        for (int n = 0; n < max_digits && q < end && class_at(s, end, q, &len1) == SAC_CHAR_NUMBER; n++) q += len1;
        return q;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    q = p;
    if (cp == ' ' && p + 1 < end && class_at(s, end, p + 1, &len1) == SAC_CHAR_OTHER) q = p + 1;
    if (class_at(s, end, q, &len1) == SAC_CHAR_OTHER) {
        q = class_run(s, end, q, SAC_CHAR_OTHER);
        while (q < end && is_newline((uint8_t)s[q])) q++;
        return q;
    }
    /* \s*[\r\n]+ then \s+(?!\S) then \s+ (the character at p is white space here) */
    size_t last, last_newline_end;
    int count;
    size_t r = space_run(s, end, p, &last, &last_newline_end, &count);
    if (last_newline_end > p) return last_newline_end;
    if (count > 1 && r < end) return last;
    return r > p ? r : p + len;
}

/* ------------------------------------------------------------------------------------------
 * Rules that match somewhere
 * ---------------------------------------------------------------------------------------- */

static int is_falcon_punct(uint32_t cp) {
    switch (cp) {
    case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|': case '`': return 1;
    default: return sac_char_is_punct(cp);
    }
}

static int is_cjk(uint32_t cp) {
    return ((cp >= 0x0800 && cp <= 0x9FA5) || (cp >= 0xAC00 && cp <= 0xD7FF)) &&
           sac_char_class_of(cp) != SAC_CHAR_SPACE;
}

static int is_deepseek_punct(uint32_t cp) {
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x7E) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
           (cp >= 0xFF1A && cp <= 0xFF5E) || (cp >= 0x2018 && cp <= 0x201F) || cp == 0x3001 || cp == 0x3002;
}

/* \s?[X]+ at q for the class X: the end of the match, or q. */
static size_t space_then_run(const char *s, size_t end, size_t q, int (*in_class)(uint32_t)) {
    size_t len, start = q;
    if (sac_char_class_of(cp_at(s, end, q, &len)) == SAC_CHAR_SPACE && q + len < end) {
        size_t len1;
        if (in_class(cp_at(s, end, q + len, &len1))) start = q + len;
    }
    size_t r = start;
    while (r < end && in_class(cp_at(s, end, r, &len))) r += len;
    return r > start ? r : q;
}

static int is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

/* The end of the match of `rule` at q, or q when it does not match there. */
static size_t match_at(enum sac_pretok_rule rule, const char *s, size_t end, size_t q) {
    size_t len, len1;
    uint32_t cp = cp_at(s, end, q, &len);
    enum sac_char_class cls = sac_char_class_of(cp);
    switch (rule) {
    case SAC_RULE_NUMBER: return cls == SAC_CHAR_NUMBER ? q + len : q;
    case SAC_RULE_NUMBERS: return class_run(s, end, q, SAC_CHAR_NUMBER);
    case SAC_RULE_NEWLINE: return is_newline(cp) ? q + 1 : q;
    case SAC_RULE_THREE_DIGITS:
        return end - q >= 3 && is_ascii_digit(s[q]) && is_ascii_digit(s[q + 1]) && is_ascii_digit(s[q + 2]) ? q + 3 : q;
    case SAC_RULE_FALCON_PUNCT:
        while (q < end && is_falcon_punct(cp_at(s, end, q, &len))) q += len;
        return q;
    case SAC_RULE_CJK:
        while (q < end && is_cjk(cp_at(s, end, q, &len))) q += len;
        return q;
    case SAC_RULE_SPACE_LETTERS:
        if (cls == SAC_CHAR_SPACE && q + len < end && class_at(s, end, q + len, &len1) == SAC_CHAR_LETTER) q += len;
        return class_run(s, end, q, SAC_CHAR_LETTER);
    case SAC_RULE_SPACE_PUNCT: return space_then_run(s, end, q, sac_char_is_punct);
    case SAC_RULE_DEEPSEEK_LETTERS: return space_then_run(s, end, q, sac_char_is_deepseek_llm_letter);
    case SAC_RULE_DEEPSEEK_PUNCT: return space_then_run(s, end, q, is_deepseek_punct);
    default: return q; /* the rules above that match everywhere are handled by the caller */
    }
}

int sac_pretok_rule_find(enum sac_pretok_rule rule, const char *s, size_t p, size_t end, size_t *match_start,
                         size_t *match_end) {
    *match_start = p;
    switch (rule) {
    case SAC_RULE_GPT2: *match_end = sac_gpt2_pretokenize_next(s, end, p); return 1;
    case SAC_RULE_LLAMA3: *match_end = llama3_next(s, end, p, 3); return 1;
    case SAC_RULE_QWEN2: *match_end = llama3_next(s, end, p, 1); return 1;
    case SAC_RULE_TRAILING_SPACE: { /* the white space that ends the piece, if any */
        size_t q = end;
        while (q > p) {
            size_t b = q - 1, len;
            while (b > p && ((uint8_t)s[b] & 0xC0) == 0x80) b--; /* back to the character's first byte */
            if (class_at(s, end, b, &len) != SAC_CHAR_SPACE) break;
            q = b;
        }
        *match_start = q;
        *match_end = end;
        return q < end;
    }
    default: break;
    }
    for (size_t q = p, len; q < end; q += len) {
        size_t m = match_at(rule, s, end, q);
        if (m > q) {
            *match_start = q;
            *match_end = m;
            return 1;
        }
        cp_at(s, end, q, &len);
    }
    return 0;
}
