/* pretokenize_rules.h — the splitting rules of the BPE pre-tokenizers, one regular expression
 * each, written by hand (no regex library). A pre-tokenizer (pretokenize.h) applies a list
 * of them in turn, each to every piece the one before left.
 *
 * A rule answers one question: where, at or after position p of a piece that ends at `end`,
 * does its regex match first, and where does that match end (leftmost match, alternatives
 * tried in order, as a backtracking regex engine does; a piece's end is the end of the
 * input, which is what lookaheads such as \s+(?!\S) see). Pieces are well-formed UTF-8. */
#ifndef SAC_PRETOKENIZE_RULES_H
#define SAC_PRETOKENIZE_RULES_H

#include <stddef.h>

enum sac_pretok_rule {
    /* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
    SAC_RULE_GPT2,
    /* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
     * \s*[\r\n]+|\s+(?!\S)|\s+   (Llama 3; the case-insensitive letters are ASCII) */
    SAC_RULE_LLAMA3,
    /* the same with \p{N} in place of \p{N}{1,3}: one digit at a time (Qwen2) */
    SAC_RULE_QWEN2,
    SAC_RULE_NUMBER,       /* \p{N} */
    SAC_RULE_NUMBERS,      /* \p{N}+ */
    SAC_RULE_THREE_DIGITS, /* [0-9][0-9][0-9] */
    SAC_RULE_FALCON_PUNCT, /* [\p{P}\$\+<=>\^~\|`]+ */
    SAC_RULE_NEWLINE,      /* [\r\n] */
    SAC_RULE_SPACE_LETTERS, /* \s?\p{L}+ */
    SAC_RULE_SPACE_PUNCT,  /* \s?\p{P}+ */
    SAC_RULE_CJK,          /* [一-龥ࠀ-一가-퟿]+: U+0800..U+9FA5 and U+AC00..U+D7FF, white space aside */
    SAC_RULE_DEEPSEEK_LETTERS, /* \s?[A-Za-zµÀ-Ö...]+: DeepSeek LLM's letters (unicode.h) */
    SAC_RULE_DEEPSEEK_PUNCT,   /* \s?[!-/:-~！-／：-～‘-‟　-。]+ (ASCII letters included: :-~) */
    SAC_RULE_TRAILING_SPACE,   /* \s+$ */
};

/* The first match of `rule` in s[p..end), p < end: 1 and [*match_start, *match_end) (never
 * empty), or 0 when there is none. */
int sac_pretok_rule_find(enum sac_pretok_rule rule, const char *s, size_t p, size_t end, size_t *match_start,
                         size_t *match_end);

/* GPT-2's rule alone: the end of the word that starts at s[p], p < end. */
size_t sac_gpt2_pretokenize_next(const char *s, size_t end, size_t p);

#endif
