/* unicode.h — UTF-8 decoding with replacement, character classes, GPT-2's byte↔unicode map.
 *
 * Ill-formed UTF-8 is handled one way everywhere (encoder input, detokenizer output): each
 * maximal subpart of an ill-formed sequence becomes one U+FFFD, as the Unicode standard
 * recommends and as JavaScript's TextDecoder and Python's errors="replace" do. Well-formed
 * means Unicode's table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF. */
#ifndef SAC_UNICODE_H
#define SAC_UNICODE_H

#include <stddef.h>
#include <stdint.h>

#define SAC_REPLACEMENT_CHAR 0xFFFDu
#define SAC_REPLACEMENT_UTF8 "\xEF\xBF\xBD"

typedef enum sac_utf8_result {
    SAC_UTF8_OK,        /* a well-formed character */
    SAC_UTF8_INVALID,   /* an ill-formed maximal subpart (read it as U+FFFD) */
    SAC_UTF8_TRUNCATED, /* the bytes end inside a character that could still be well-formed */
} sac_utf8_result;

/* Reads one character from s[0..n), n > 0. *len gets the bytes it spans (for INVALID the
 * maximal subpart, for TRUNCATED all n bytes); *cp the code point, or U+FFFD when not OK. */
sac_utf8_result sac_utf8_next(const uint8_t *s, size_t n, uint32_t *cp, size_t *len);

/* Writes the UTF-8 form of cp (≤ U+10FFFF, not a surrogate) to out; returns its length (1–4). */
size_t sac_utf8_encode(uint32_t cp, char *out);

/* 1 when s[0..n) is well-formed UTF-8. */
int sac_utf8_valid(const uint8_t *s, size_t n);
/* Bytes of s[0..n) once each ill-formed subpart (including a truncated tail) becomes U+FFFD. */
size_t sac_utf8_sanitized_len(const uint8_t *s, size_t n);
/* Copies s[0..n) to out (sac_utf8_sanitized_len bytes) with the replacements made. */
void sac_utf8_sanitize(const uint8_t *s, size_t n, char *out);

/* The classes GPT-2's pre-tokenizer regex distinguishes. */
enum sac_char_class {
    SAC_CHAR_OTHER = 0,  /* none of the below: punctuation, symbols, marks, controls, ... */
    SAC_CHAR_LETTER = 1, /* \p{L} */
    SAC_CHAR_NUMBER = 2, /* \p{N} */
    SAC_CHAR_SPACE = 3,  /* \s: the White_Space property */
};
enum sac_char_class sac_char_class_of(uint32_t cp);
/* 1 when cp is punctuation (\p{P}: general category P*), as some pre-tokenizers ask. */
int sac_char_is_punct(uint32_t cp);
/* 1 when cp is in the letter class of DeepSeek LLM's pre-tokenizer (a fixed list of cased
 * letters of some scripts, not a Unicode property). */
int sac_char_is_deepseek_llm_letter(uint32_t cp);

/* GPT-2's byte-level BPE writes every byte as a printable character: bytes that are
 * printable Latin-1 ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves, the other 68 take
 * U+0100.. in byte order (space is U+0120 'Ġ', newline U+010A 'Ċ'). */
uint32_t sac_gpt2_byte_to_cp(uint8_t byte);
/* The inverse: the byte a code point stands for, or -1 when it stands for none. */
int sac_gpt2_cp_to_byte(uint32_t cp);

#endif
