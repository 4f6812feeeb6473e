/* chat_template.c — a conversation as a chat model expects it, without a Jinja engine.
 *
 * Instruct models carry their prompt format as a Jinja template (tokenizer.chat_template).
 * C cannot run Jinja, so, as llama.cpp's llama-chat.cpp does, we recognise the well-known
 * formats by substrings of the template text and write them here. Each writer reproduces
 * what its family's published template renders (with Jinja's trim as JavaScript trims), so
 * the native CLI and the JS library (which runs the template itself) give the same prompt;
 * tests/js/chat-cli.test.mjs checks that on the real templates. A template we do not
 * recognise is refused: guessing a format would give the model a prompt it never saw.
 * A file without a template gets the plain-text fallback: the contents joined by newlines. */
#include <stdlib.h>

#include "model.h"
#include "saccade.h"
#include "tokenizer_impl.h"
#include "unicode.h"

/* ---------------------------------------------------------------------------------------- */
/* A growing text                                                                            */
/* ---------------------------------------------------------------------------------------- */

typedef struct chat_text {
    char *data;
    size_t len, cap;
    int oom;
} chat_text;

static void put_n(chat_text *t, const char *s, size_t n) {
    if (t->oom || !n) return;
    if (n > SIZE_MAX - t->len - 1) {
        t->oom = 1;
        return;
    }
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1) cap = cap > SIZE_MAX / 2 ? t->len + n + 1 : cap * 2;
        char *grown = realloc(t->data, cap);
        if (!grown) {
            t->oom = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void put(chat_text *t, const char *s) { put_n(t, s, strlen(s)); }

/* JavaScript's String.prototype.trim white space (what @huggingface/jinja's trim and strip use). */
static int is_js_space(uint32_t c) {
    return c == 0x09 || c == 0x0a || c == 0x0b || c == 0x0c || c == 0x0d || c == 0x20 || c == 0xa0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
           c == 0x3000 || c == 0xfeff;
}

/* Appends s without its leading and trailing white space. */
static void put_trimmed(chat_text *t, const char *s) {
    const uint8_t *p = (const uint8_t *)s;
    size_t n = strlen(s), start = n, end = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t clen;
        sac_utf8_next(p + i, n - i, &cp, &clen);
        if (!is_js_space(cp)) {
            if (start == n) start = i;
            end = i + clen;
        }
        i += clen;
    }
    if (start < end) put_n(t, s + start, end - start);
}

/* ---------------------------------------------------------------------------------------- */
/* Recognising a template                                                                    */
/* ---------------------------------------------------------------------------------------- */

static int contains(const char *s, size_t n, const char *needle) {
    size_t m = strlen(needle);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (s[i] == needle[0] && !memcmp(s + i, needle, m)) return 1;
    return 0;
}

const char *sac_chat_template_family(const char *tmpl, size_t len) {
    if (!tmpl || len == 0) return "plain";
#define HAS(needle) contains(tmpl, len, needle)
    if (HAS("<|im_start|>")) return HAS("<|im_sep|>") || HAS("<end_of_utterance>") ? NULL : "chatml";
    if (HAS("<|start_header_id|>") && HAS("<|end_header_id|>")) return "llama3";
    if (HAS("<start_of_turn>")) return "gemma";
    if (HAS("[INST]") && HAS("<<SYS>>") && HAS("bos_token + '[INST] '")) return "llama2";
    if (HAS("<|assistant|>") && HAS("<|end|>") && (HAS("'<|' + message['role'] + '|>'") || HAS("<|system|>")))
        return "phi3";
    if (HAS("<|user|>") && HAS("<|assistant|>") && HAS("eos_token") && !HAS("<|end|>")) return "zephyr";
#undef HAS
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* The formats                                                                               */
/* ---------------------------------------------------------------------------------------- */

typedef struct chat_input {
    const sac_chat_message *msg;
    int32_t n;
    int add_assistant;       /* add_generation_prompt */
    const char *bos, *eos;   /* bos_token and eos_token: the tokens' spellings ("" when none) */
    int uses_bos, uses_eos;  /* the template writes bos_token / eos_token */
    const char *tmpl;        /* the template's text (NULL: none) */
    size_t tmpl_len;
} chat_input;

static int is_role(const sac_chat_message *m, const char *role) { return !strcmp(m->role, role); }

/* One turn as most formats write it: before, the role, after, the content (trimmed or not), end. */
static void put_turn(chat_text *t, const char *before, const char *role, const char *after, const char *content,
                     int trim, const char *end) {
    put(t, before);
    put(t, role);
    put(t, after);
    if (trim) put_trimmed(t, content);
    else put(t, content);
    put(t, end);
}

#define REFUSED "the chat template refused the conversation: "
#define ALTERNATE "Conversation roles must alternate user/assistant/user/assistant/..."

/* The check the Llama 2 and Gemma templates make: user turns at even positions, and only there. */
static int alternates(const sac_chat_message *m, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (is_role(&m[i], "user") != (i % 2 == 0)) return 0;
    return 1;
}

/* A ChatML template's own system prompt (Qwen, SmolLM2), which it writes when the conversation
 * has none: the text of a string literal '<|im_start|>system\n...<|im_end|>' (Jinja escapes
 * read). 0 when the template has none. */
static int chatml_default_system(const char *tmpl, size_t len, chat_text *out) {
    static const char open[] = "<|im_start|>system", close[] = "<|im_end|>";
    const size_t n_open = sizeof open - 1, n_close = sizeof close - 1;
    for (size_t at = 0; tmpl && at + n_open <= len; at++) {
        if (memcmp(tmpl + at, open, n_open)) continue;
        size_t p = at + n_open;
        if (p < len && tmpl[p] == '\n') p++;
        else if (p + 1 < len && tmpl[p] == '\\' && tmpl[p + 1] == 'n') p += 2;
        else continue;
        chat_text text = {0};
        for (; p < len && tmpl[p] != '\'' && tmpl[p] != '"'; p++) {
            if (p + n_close <= len && !memcmp(tmpl + p, close, n_close)) { /* the literal's text ends here */
                *out = text;
                return 1;
            }
            char c = tmpl[p];
            if (c == '\\' && p + 1 < len) { /* an escape in a Jinja string literal */
                char e = tmpl[++p];
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            }
            put_n(&text, &c, 1);
        }
        free(text.data); /* not a literal's text (an expression follows): look further */
    }
    return 0;
}

/* OpenHermes, Qwen, SmolLM: <|im_start|>role\ncontent<|im_end|>\n, after the template's own
 * system turn when the conversation does not start with one. */
static sac_status format_chatml(const chat_input *in, chat_text *t, sac_error *err) {
    chat_text system = {0};
    if (in->n > 0 && !is_role(&in->msg[0], "system") && chatml_default_system(in->tmpl, in->tmpl_len, &system)) {
        put_turn(t, "<|im_start|>", "system", "\n", system.data ? system.data : "", 0, "<|im_end|>\n");
        if (system.oom) t->oom = 1;
        free(system.data);
    }
    for (int32_t i = 0; i < in->n; i++)
        put_turn(t, "<|im_start|>", in->msg[i].role, "\n", in->msg[i].content, 0, "<|im_end|>\n");
    if (in->add_assistant) put(t, "<|im_start|>assistant\n");
    return SAC_OK;
}

/* Meta-Llama-3-Instruct: BOS, then <|start_header_id|>role<|end_header_id|>\n\n trim(content)<|eot_id|> */
static sac_status format_llama3(const chat_input *in, chat_text *t, sac_error *err) {
    if (in->n > 0 && in->uses_bos) put(t, in->bos);
    for (int32_t i = 0; i < in->n; i++)
        put_turn(t, "<|start_header_id|>", in->msg[i].role, "<|end_header_id|>\n\n", in->msg[i].content, 1, "<|eot_id|>");
    if (in->add_assistant) put(t, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    return SAC_OK;
}

/* Gemma: no system turn, strict user/model alternation, <start_of_turn>role\ntrim(content)<end_of_turn>\n */
static sac_status format_gemma(const chat_input *in, chat_text *t, sac_error *err) {
    if (in->n > 0 && is_role(&in->msg[0], "system")) return sac_fail(err, SAC_ERR_ARG, REFUSED "System role not supported");
    if (!alternates(in->msg, in->n)) return sac_fail(err, SAC_ERR_ARG, REFUSED ALTERNATE);
    if (in->uses_bos) put(t, in->bos);
    for (int32_t i = 0; i < in->n; i++)
        put_turn(t, "<start_of_turn>", is_role(&in->msg[i], "assistant") ? "model" : in->msg[i].role, "\n",
                 in->msg[i].content, 1, "<end_of_turn>\n");
    if (in->add_assistant) put(t, "<start_of_turn>model\n");
    return SAC_OK;
}

/* Llama-2-chat: an optional leading system message goes into the first turn as <<SYS>>; each
 * user turn is BOS [INST] strip(content) [/INST], each reply " strip(content) EOS"; the
 * template has no generation prompt (the reply follows [/INST]). */
static sac_status format_llama2(const chat_input *in, chat_text *t, sac_error *err) {
    const sac_chat_message *m = in->msg;
    int32_t n = in->n;
    const char *system = NULL;
    if (n > 0 && is_role(&m[0], "system")) {
        system = m[0].content;
        m++;
        n--;
    }
    if (!alternates(m, n)) return sac_fail(err, SAC_ERR_ARG, REFUSED ALTERNATE);
    for (int32_t i = 0; i < n; i++) {
        chat_text content = {0};
        if (i == 0 && system) {
            put(&content, "<<SYS>>\n");
            put(&content, system);
            put(&content, "\n<</SYS>>\n\n");
        }
        put(&content, m[i].content);
        if (content.oom) t->oom = 1;
        const char *c = content.data ? content.data : "";
        if (is_role(&m[i], "user")) {
            put(t, in->bos);
            put(t, "[INST] ");
            put_trimmed(t, c);
            put(t, " [/INST]");
        } else if (is_role(&m[i], "assistant")) {
            put(t, " ");
            put_trimmed(t, c);
            put(t, " ");
            put(t, in->eos);
        }
        free(content.data);
    }
    return SAC_OK;
}

/* Phi-3: <|role|>\ncontent<|end|>\n; without a generation prompt the template ends with EOS. */
static sac_status format_phi3(const chat_input *in, chat_text *t, sac_error *err, int any_role) {
    if (in->uses_bos) put(t, in->bos);
    for (int32_t i = 0; i < in->n; i++) {
        const sac_chat_message *m = &in->msg[i];
        if (any_role || is_role(m, "system") || is_role(m, "user") || is_role(m, "assistant"))
            put_turn(t, "<|", m->role, "|>\n", m->content, 0, "<|end|>\n");
    }
    if (in->add_assistant) put(t, "<|assistant|>\n");
    else if (in->uses_eos) put(t, in->eos);
    return SAC_OK;
}

/* Zephyr (TinyLlama-Chat): <|role|>\ncontent EOS\n for system, user and assistant turns. */
static sac_status format_zephyr(const chat_input *in, chat_text *t, sac_error *err) {
    for (int32_t i = 0; i < in->n; i++) {
        const sac_chat_message *m = &in->msg[i];
        if (is_role(m, "system") || is_role(m, "user") || is_role(m, "assistant")) {
            put_turn(t, "<|", m->role, "|>\n", m->content, 0, in->eos);
            put(t, "\n");
        }
        if (i == in->n - 1 && in->add_assistant) put(t, "<|assistant|>\n");
    }
    return SAC_OK;
}

/* No template: the contents, one per line, as plain text. */
static sac_status format_plain(const chat_input *in, chat_text *t, sac_error *err) {
    for (int32_t i = 0; i < in->n; i++) {
        if (i) put(t, "\n");
        put(t, in->msg[i].content);
    }
    return SAC_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* The call                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* The spelling of a special token, or "" when the vocabulary has none. */
static const char *spelling(const sac_tokenizer *tok, int32_t id, chat_text *t) {
    if (!tok || id < 0) return "";
    put_n(t, sac_token_text(tok, id), tok->tokens[id].text_len);
    return t->data ? t->data : "";
}

sac_status sac_chat_apply_template(sac_model *model, const char *tmpl, size_t tmpl_len,
                                   const sac_chat_message *messages, int32_t n_messages,
                                   int32_t add_generation_prompt, char *out, size_t capacity, size_t *len) {
    if (!model) return SAC_ERR_ARG;
    sac_error *err = &model->error;
    if (!len || n_messages < 0 || (n_messages > 0 && !messages) || (capacity > 0 && !out))
        return sac_fail(err, SAC_ERR_ARG, "sac_chat_apply_template: len is NULL, n_messages < 0, or a buffer is "
                                          "NULL with a size");
    for (int32_t i = 0; i < n_messages; i++)
        if (!messages[i].role || !messages[i].content)
            return sac_fail(err, SAC_ERR_ARG, "message %d has no role or no content", i);
    if (!tmpl) { /* the file's own template, when it has one */
        const gguf_kv *kv = sac_gguf_find_kv(&model->gguf, "tokenizer.chat_template");
        if (kv && kv->type == GGUF_TYPE_STRING) {
            tmpl = kv->str.data;
            tmpl_len = (size_t)kv->str.len;
        }
    }
    const char *family = sac_chat_template_family(tmpl, tmpl_len);
    if (!family) {
        size_t shown = tmpl_len < 60 ? tmpl_len : 60;
        return sac_fail(err, SAC_ERR_UNSUPPORTED,
                        "the chat template is not one saccade can apply without a Jinja engine (it knows chatml, "
                        "llama2, llama3, zephyr, gemma and phi3); it begins '%.*s%s'",
                        (int)shown, tmpl, shown < tmpl_len ? "..." : "");
    }
    const sac_tokenizer *tok = model->tokenizer;
    chat_text bos = {0}, eos = {0}, text = {0};
    chat_input in = {
        .msg = messages, .n = n_messages, .add_assistant = add_generation_prompt != 0,
        .bos = spelling(tok, tok ? tok->bos : -1, &bos), .eos = spelling(tok, tok ? tok->eos : -1, &eos),
        .uses_bos = tmpl && contains(tmpl, tmpl_len, "bos_token"),
        .uses_eos = tmpl && contains(tmpl, tmpl_len, "eos_token"),
        .tmpl = tmpl, .tmpl_len = tmpl_len,
    };
    sac_status st = !strcmp(family, "chatml")   ? format_chatml(&in, &text, err)
                    : !strcmp(family, "llama3") ? format_llama3(&in, &text, err)
                    : !strcmp(family, "gemma")  ? format_gemma(&in, &text, err)
                    : !strcmp(family, "llama2") ? format_llama2(&in, &text, err)
                    : !strcmp(family, "phi3")   ? format_phi3(&in, &text, err,
                                                              contains(tmpl, tmpl_len, "'<|' + message['role'] + '|>'"))
                    : !strcmp(family, "zephyr") ? format_zephyr(&in, &text, err)
                                                : format_plain(&in, &text, err);
    if (st == SAC_OK && (text.oom || bos.oom || eos.oom)) st = sac_fail(err, SAC_ERR_NOMEM, "out of memory for the chat prompt");
    if (st == SAC_OK) {
        *len = text.len;
        if (capacity < text.len + 1)
            st = sac_fail(err, SAC_ERR_ARG, "the chat prompt needs %zu bytes and a NUL, the buffer holds %zu", text.len,
                          capacity);
        else {
            if (text.len) memcpy(out, text.data, text.len);
            out[text.len] = '\0';
        }
    }
    free(text.data);
    free(bos.data);
    free(eos.data);
    return st;
}
