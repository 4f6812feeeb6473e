/* pretokenize.c — the pre-tokenizers by name, and splitting a text with one. The names are
 * llama.cpp's; names whose models also need something this project does not do (a
 * separator token, per-token attributes, another default BOS) are left out, so that they
 * are refused rather than tokenized differently. */
#include "pretokenize.h"

#include <string.h>

/* ------------------------------------------------------------------------------------------
 * The table
 * ---------------------------------------------------------------------------------------- */

static const sac_pretokenizer pretokenizers[] = {
    /* GPT-2's regex alone */
    {"gpt-2 mpt olmo jais trillion granite-docling phi-2 jina-es jina-de gigachat a.x-4.0 mellum modern-bert exaone4",
     1, {SAC_RULE_GPT2}, 0, 0},
    /* StarCoder: every digit a word of its own, then GPT-2's regex */
    {"starcoder refact smollm command-r codeshell exaone minerva-7b mellum2",
     2, {SAC_RULE_NUMBER, SAC_RULE_GPT2}, 0, 0},
    /* Llama 3: numbers in groups of up to three digits; a word that is a token is that token */
    {"llama-bpe llama3 llama-v3 falcon3 falcon-h1 pixtral midm-2.0 lfm2", 1, {SAC_RULE_LLAMA3}, 1, 1},
    /* Llama 3's regex with merges always applied */
    {"dbrx smaug-bpe", 1, {SAC_RULE_LLAMA3}, 0, 0},
    /* Qwen2: Llama 3's regex with one digit at a time */
    {"qwen2 deepseek-r1-qwen megrez stablelm2", 1, {SAC_RULE_QWEN2}, 0, 0},
    {"falcon", 3, {SAC_RULE_FALCON_PUNCT, SAC_RULE_GPT2, SAC_RULE_THREE_DIGITS}, 0, 0},
    {"deepseek-llm", 6,
     {SAC_RULE_NEWLINE, SAC_RULE_DEEPSEEK_LETTERS, SAC_RULE_DEEPSEEK_PUNCT, SAC_RULE_TRAILING_SPACE, SAC_RULE_CJK,
      SAC_RULE_NUMBERS}, 0, 0},
    {"deepseek-coder", 5,
     {SAC_RULE_NEWLINE, SAC_RULE_SPACE_LETTERS, SAC_RULE_SPACE_PUNCT, SAC_RULE_CJK, SAC_RULE_NUMBER}, 0, 0},
};

const sac_pretokenizer *sac_pretokenizer_find(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof pretokenizers / sizeof pretokenizers[0]; i++) {
        for (const char *n = pretokenizers[i].names; *n;) {
            size_t n_len = strcspn(n, " ");
            if (n_len == len && memcmp(n, name, len) == 0) return &pretokenizers[i];
            n += n_len;
            n += *n == ' ';
        }
    }
    return NULL;
}

const char *sac_pretokenizer_names(void) {
    return "gpt-2 and the names sharing its rules (mpt, olmo, jais, ...), starcoder, refact, smollm, command-r, "
           "llama-bpe, qwen2, falcon, deepseek-llm, deepseek-coder";
}

/* ------------------------------------------------------------------------------------------
 * Splitting
 * ---------------------------------------------------------------------------------------- */

void sac_pretok_begin(sac_pretok_iter *it, const sac_pretokenizer *pt, const char *text, size_t len) {
    memset(it, 0, sizeof *it);
    it->pt = pt;
    it->text = text;
    it->len = len;
}

/* The next piece rule k leaves: a match of its regex, or the text between two. */
static int next_piece(sac_pretok_iter *it, int k, size_t *start, size_t *end) {
    while (it->pos[k] >= it->end[k]) { /* this piece is done: take the next one to split */
        size_t a, b;
        if (k == 0) {
            if (it->text_taken) return 0;
            it->text_taken = 1;
            a = 0;
            b = it->len;
        } else if (!next_piece(it, k - 1, &a, &b)) {
            return 0;
        }
        it->pos[k] = a;
        it->end[k] = b;
        it->has_match[k] = 0;
    }
    size_t p = it->pos[k];
    if (!it->has_match[k]) {
        if (!sac_pretok_rule_find((enum sac_pretok_rule)it->pt->rules[k], it->text, p, it->end[k], &it->match_start[k],
                                  &it->match_end[k])) {
            *start = p;
            *end = it->pos[k] = it->end[k];
            return 1;
        }
        it->has_match[k] = 1;
    }
    if (it->match_start[k] > p) { /* the text before the match */
        *start = p;
        *end = it->pos[k] = it->match_start[k];
        return 1;
    }
    *start = p;
    *end = it->pos[k] = it->match_end[k];
    it->has_match[k] = 0;
    return 1;
}

int sac_pretok_next(sac_pretok_iter *it, size_t *start, size_t *end) {
    return next_piece(it, it->pt->n_rules - 1, start, end);
}
