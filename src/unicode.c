/* unicode.c — UTF-8 decoding with replacement, character classes, GPT-2's byte↔unicode map. */
#include "unicode.h"

#include <string.h>

#include "unicode_tables.h"

/* ------------------------------------------------------------------------------------------
 * UTF-8
 * ---------------------------------------------------------------------------------------- */

sac_utf8_result sac_utf8_next(const uint8_t *s, size_t n, uint32_t *cp, size_t *len) {
    uint8_t b0 = s[0];
    if (b0 < 0x80) {
        *cp = b0;
        *len = 1;
        return SAC_UTF8_OK;
    }
    /* Length and the allowed range of the second byte (table 3-7: the narrowed ranges
     * after E0, ED, F0 and F4 exclude overlong forms, surrogates and > U+10FFFF). */
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;
    uint32_t v;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 2; v = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 3; v = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 4; v = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        /* a stray continuation byte, C0/C1 (always overlong) or F5..FF */
        *cp = SAC_REPLACEMENT_CHAR;
        *len = 1;
        return SAC_UTF8_INVALID;
    }
    for (size_t i = 1; i < need; i++) {
        if (i >= n) {
            *cp = SAC_REPLACEMENT_CHAR;
            *len = n;
            return SAC_UTF8_TRUNCATED;
        }
        uint8_t b = s[i];
        if (b < lo || b > hi) {
            *cp = SAC_REPLACEMENT_CHAR;
            *len = i; /* the maximal subpart ends before the byte that breaks it */
            return SAC_UTF8_INVALID;
        }
        lo = 0x80;
        hi = 0xBF;
        v = (v << 6) | (b & 0x3F);
    }
    *cp = v;
    *len = need;
    return SAC_UTF8_OK;
}

size_t sac_utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int sac_utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t len;
        if (sac_utf8_next(s + i, n - i, &cp, &len) != SAC_UTF8_OK) return 0;
        i += len;
    }
    return 1;
}

size_t sac_utf8_sanitized_len(const uint8_t *s, size_t n) {
    size_t total = 0, i = 0;
    while (i < n) {
        if (s[i] < 0x80) { /* ASCII runs are the common case */
            i++;
            total++;
            continue;
        }
        uint32_t cp;
        size_t len;
        total += sac_utf8_next(s + i, n - i, &cp, &len) == SAC_UTF8_OK ? len : 3;
        i += len;
    }
    return total;
}

void sac_utf8_sanitize(const uint8_t *s, size_t n, char *out) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t len;
        if (sac_utf8_next(s + i, n - i, &cp, &len) == SAC_UTF8_OK) {
            memcpy(out, s + i, len);
            out += len;
        } else {
            memcpy(out, SAC_REPLACEMENT_UTF8, 3);
            out += 3;
        }
        i += len;
    }
}

/* ------------------------------------------------------------------------------------------
 * Character classes
 * ---------------------------------------------------------------------------------------- */

enum sac_char_class sac_char_class_of(uint32_t cp) {
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return SAC_CHAR_LETTER;
        if (cp >= '0' && cp <= '9') return SAC_CHAR_NUMBER;
        if (cp == ' ' || (cp >= 0x09 && cp <= 0x0D)) return SAC_CHAR_SPACE;
        return SAC_CHAR_OTHER;
    }
    if (cp > 0x10FFFF) return SAC_CHAR_OTHER;
    /* The last run that starts at or before cp. */
    uint32_t key = (cp << 2) | 3;
    size_t lo = 0, hi = SAC_UNICODE_N_RUNS; /* invariant: runs[lo] <= key < runs[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (sac_unicode_runs[mid] <= key) lo = mid;
        else hi = mid;
    }
    return (enum sac_char_class)(sac_unicode_runs[lo] & 3);
}

int sac_char_is_punct(uint32_t cp) {
    if (cp < 0x80) /* !"#%&'()*,-./:;?@[\]_{} */
        return (int)((cp < 64 ? 0x8C00F7EE00000000ull >> cp : 0x28000000B8000001ull >> (cp - 64)) & 1);
    /* entries at or below cp: odd means inside a run of punctuation */
    size_t lo = 0, hi = SAC_UNICODE_N_PUNCT_FLIPS; /* first entry > cp lies in [lo, hi] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sac_unicode_punct_flips[mid] <= cp) lo = mid + 1;
        else hi = mid;
    }
    return (int)(lo & 1);
}

int sac_char_is_deepseek_llm_letter(uint32_t cp) {
    size_t lo = 0, hi = SAC_DEEPSEEK_LLM_N_LETTER_RANGES; /* the first range that ends at or after cp */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sac_deepseek_llm_letters[mid][1] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < SAC_DEEPSEEK_LLM_N_LETTER_RANGES && sac_deepseek_llm_letters[lo][0] <= cp;
}

/* ------------------------------------------------------------------------------------------
 * GPT-2's byte↔unicode map
 * ---------------------------------------------------------------------------------------- */

/* The bytes GPT-2 spells as themselves are the printable ones; the others (0x00-0x20, 0x7F-0xA0,
 * 0xAD: 68 in all) are spelled U+0100 + n, the n-th of them in byte order. */
static int gpt2_byte_is_printable(unsigned b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

uint32_t sac_gpt2_byte_to_cp(uint8_t byte) {
    if (gpt2_byte_is_printable(byte)) return byte;
    if (byte <= 0x20) return 0x100 + byte;
    if (byte <= 0xA0) return 0x100 + 33 + (byte - 0x7Fu);
    return 0x100 + 67; /* 0xAD */
}

int sac_gpt2_cp_to_byte(uint32_t cp) {
    if (cp < 0x100) return gpt2_byte_is_printable(cp) ? (int)cp : -1;
    uint32_t n = cp - 0x100;
    if (n < 33) return (int)n;
    if (n < 67) return (int)(0x7F + n - 33);
    return n == 67 ? 0xAD : -1;
}
