/* test_chat.c — chat without Jinja: which family a template text belongs to, the prompt each
 * family's writer makes (the same text @huggingface/jinja renders from the published template,
 * pasted here as the expected output), refusals, the buffer protocol, and the vocabulary's
 * special tokens (spellings, end-of-generation ids). tests/js/chat-cli.test.mjs checks the same
 * formats against Jinja itself, through both CLIs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf.h"
#include "gguf_writer.h"
#include "saccade.h"

/* The published templates, verbatim from each model's tokenizer_config.json. */
typedef struct family_case {
    const char *family, *source, *tmpl, *expected; /* expected: rendered with bos_token "<s>", eos_token "</s>" */
} family_case;

static const family_case cases[] = {
    {"chatml", "teknium/OpenHermes-2.5-Mistral-7B (plain ChatML)",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
     "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi\xc2\xa0<|im_end|>\n<|im_start|>assistant\n Hello. <|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n"},
    {"llama2", "meta-llama/Llama-2-7b-chat-hf",
     "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
     "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\n Hi [/INST] Hello. </s><s>[INST] Again [/INST]"},
    {"llama3", "meta-llama/Meta-Llama-3-8B-Instruct",
     "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}",
     "<s><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAgain<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"zephyr", "HuggingFaceH4/zephyr-7b-beta, TinyLlama/TinyLlama-1.1B-Chat-v1.0",
     "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
     "<|system|>\nBe brief.</s>\n<|user|>\n Hi\xc2\xa0</s>\n<|assistant|>\n Hello. </s>\n<|user|>\nAgain</s>\n<|assistant|>\n"},
    {"gemma", "google/gemma-7b-it, gemma-2b-it",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}",
     "<s><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>user\nAgain<end_of_turn>\n<start_of_turn>model\n"},
    {"phi3", "microsoft/Phi-3-small-8k-instruct",
     "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
     "<s><|system|>\nBe brief.<|end|>\n<|user|>\n Hi\xc2\xa0<|end|>\n<|assistant|>\n Hello. <|end|>\n<|user|>\nAgain<|end|>\n<|assistant|>\n"},
};

/* The conversation the expected texts render (gemma's starts at the user turn: it refuses a
 * system turn). The user's " Hi\u00a0" and the reply's spaces show which templates trim,
 * and that they trim as JavaScript does (U+00A0 is white space there). */
static const sac_chat_message conversation[] = {
    {"system", "Be brief."}, {"user", " Hi\xc2\xa0"}, {"assistant", " Hello. "}, {"user", "Again"},
};

/* A vocabulary-only model: a character vocabulary with <s>, </s> and some end-of-turn
 * spellings as control tokens; `chat_template` NULL for none, `eot` < 0 for no eot_token_id. */
static sac_model *vocab_model(const char *chat_template, int32_t eot) {
    static const char *const specials[] = {"<unk>", "<s>", "</s>", "<|im_end|>", "<end_of_turn>", "<|eot_id|>"};
    enum { N_SPECIAL = 6, N = N_SPECIAL + 95 + 1 };
    const char *tokens[N];
    char chars[96][2];
    int32_t types[N];
    for (int i = 0; i < N_SPECIAL; i++) tokens[i] = specials[i], types[i] = i ? 3 : 2;
    for (int c = 0; c < 96; c++) {
        chars[c][0] = c < 95 ? (char)(0x20 + c) : '\n';
        chars[c][1] = '\0';
        tokens[N_SPECIAL + c] = chars[c];
        types[N_SPECIAL + c] = 1;
    }
    sac_error err = {0};
    gguf_writer *w;
    if (sac_gguf_writer_new(&w, &err) != SAC_OK) return NULL;
    sac_gguf_writer_set_string(w, "general.architecture", "llama", &err);
    sac_gguf_writer_set_string(w, "tokenizer.ggml.model", "char", &err);
    sac_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", tokens, N, &err);
    sac_gguf_writer_set_array(w, "tokenizer.ggml.token_type", GGUF_TYPE_I32, N, types, sizeof types, &err);
    sac_gguf_writer_set_u32(w, "tokenizer.ggml.unknown_token_id", 0, &err);
    sac_gguf_writer_set_u32(w, "tokenizer.ggml.bos_token_id", 1, &err);
    sac_gguf_writer_set_u32(w, "tokenizer.ggml.eos_token_id", 2, &err);
    if (eot >= 0) sac_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", (uint32_t)eot, &err);
    if (chat_template) sac_gguf_writer_set_string(w, "tokenizer.chat_template", chat_template, &err);
    uint8_t *buf = NULL;
    size_t size = 0;
    sac_status st = sac_gguf_writer_to_buffer(w, &buf, &size, &err);
    sac_gguf_writer_free(w);
    if (st != SAC_OK) return NULL;
    sac_model *m;
    if (sac_model_load(buf, size, SAC_LOAD_VOCAB_ONLY | SAC_LOAD_TAKE_OWNERSHIP, &m) != SAC_OK) {
        fprintf(stderr, "vocab_model: %s\n", sac_model_errmsg(m));
        sac_model_free(m);
        return NULL;
    }
    return m;
}

/* The prompt for `tmpl` (NULL: the model's own), malloc'd; NULL when the call failed (*st says why). */
static char *apply(sac_model *m, const char *tmpl, const sac_chat_message *msg, int32_t n, int add, sac_status *st) {
    size_t len = 0;
    *st = sac_chat_apply_template(m, tmpl, tmpl ? strlen(tmpl) : 0, msg, n, add, NULL, 0, &len);
    if (*st != SAC_ERR_ARG || !strstr(sac_model_errmsg(m), "bytes and a NUL")) return NULL;
    char *out = malloc(len + 1);
    *st = sac_chat_apply_template(m, tmpl, tmpl ? strlen(tmpl) : 0, msg, n, add, out, len + 1, &len);
    if (*st != SAC_OK) return free(out), NULL;
    CHECK(strlen(out) == len);
    return out;
}

static void test_families(void) {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *family = sac_chat_template_family(cases[i].tmpl, strlen(cases[i].tmpl));
        CHECK_MSG(family && !strcmp(family, cases[i].family), "%s: %s", cases[i].source, family ? family : "(null)");
    }
    CHECK(!strcmp(sac_chat_template_family(NULL, 0), "plain"));
    CHECK(!strcmp(sac_chat_template_family("", 0), "plain")); /* an empty template is none */
    /* mistralai/Mistral-7B-Instruct-v0.1: [INST] without <<SYS>>, a format saccade does not write */
    const char *mistral = "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
                          "message['content'] + ' [/INST]' }}{% else %}{{ message['content'] + eos_token}}{% endif %}{% endfor %}";
    CHECK(sac_chat_template_family(mistral, strlen(mistral)) == NULL);
    /* phi-4: ChatML's markers with <|im_sep|> */
    const char *phi4 = "{% for m in messages %}<|im_start|>{{ m.role }}<|im_sep|>{{ m.content }}<|im_end|>{% endfor %}";
    CHECK(sac_chat_template_family(phi4, strlen(phi4)) == NULL);
}

static void test_formats(void) {
    sac_model *m = vocab_model(NULL, -1);
    CHECK(m != NULL);
    if (!m) return;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int gemma = !strcmp(cases[i].family, "gemma");
        sac_status st;
        char *out = apply(m, cases[i].tmpl, conversation + gemma, 4 - gemma, 1, &st);
        CHECK_MSG(out && !strcmp(out, cases[i].expected), "%s: %s\n got      '%s'\n expected '%s'", cases[i].family,
                  out ? "" : sac_model_errmsg(m), out ? out : "", cases[i].expected);
        free(out);
    }
    sac_model_free(m);
}

static void test_without_generation_prompt(void) {
    sac_model *m = vocab_model(NULL, -1);
    CHECK(m != NULL);
    if (!m) return;
    sac_status st;
    char *out = apply(m, cases[5].tmpl, conversation, 2, 0, &st); /* phi3: ends with EOS instead */
    CHECK_MSG(out && !strcmp(out, "<s><|system|>\nBe brief.<|end|>\n<|user|>\n Hi\xc2\xa0<|end|>\n</s>"), "%s", out ? out : "");
    free(out);
    out = apply(m, cases[0].tmpl, conversation, 2, 0, &st); /* chatml: no open assistant turn */
    CHECK_MSG(out && !strcmp(out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n Hi\xc2\xa0<|im_end|>\n"), "%s",
              out ? out : "");
    free(out);
    sac_model_free(m);
}

static void test_refusals(void) {
    sac_model *m = vocab_model(NULL, -1);
    CHECK(m != NULL);
    if (!m) return;
    sac_status st;
    char *out = apply(m, cases[4].tmpl, conversation, 4, 1, &st); /* gemma: a system turn */
    CHECK(!out && st == SAC_ERR_ARG);
    CHECK(!strcmp(sac_model_errmsg(m), "the chat template refused the conversation: System role not supported"));
    out = apply(m, cases[1].tmpl, conversation + 2, 2, 1, &st); /* llama2: assistant first */
    CHECK(!out && st == SAC_ERR_ARG);
    CHECK(!strcmp(sac_model_errmsg(m),
                  "the chat template refused the conversation: Conversation roles must alternate user/assistant/user/assistant/..."));
    const char *unknown = "{% for m in messages %}### {{ m.role }}: {{ m.content }}{% endfor %}";
    out = apply(m, unknown, conversation, 4, 1, &st);
    CHECK(!out && st == SAC_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(sac_model_errmsg(m), "it begins '{% for m in messages %}### {{ m.role }}: {{ m.content }}{% e...'"),
              "%s", sac_model_errmsg(m));
    sac_chat_message bad = {"user", NULL};
    size_t len;
    CHECK(sac_chat_apply_template(m, NULL, 0, &bad, 1, 1, NULL, 0, &len) == SAC_ERR_ARG);
    CHECK(!strcmp(sac_model_errmsg(m), "message 0 has no role or no content"));
    sac_model_free(m);
}

static void test_buffer(void) {
    sac_model *m = vocab_model(NULL, -1);
    CHECK(m != NULL);
    if (!m) return;
    size_t len = 0;
    char small[8];
    CHECK(sac_chat_apply_template(m, cases[0].tmpl, strlen(cases[0].tmpl), conversation, 4, 1, small, sizeof small, &len) ==
          SAC_ERR_ARG);
    CHECK(len == strlen(cases[0].expected));
    char *exact = malloc(len + 1);
    CHECK(sac_chat_apply_template(m, cases[0].tmpl, strlen(cases[0].tmpl), conversation, 4, 1, exact, len, &len) ==
          SAC_ERR_ARG); /* no room for the NUL */
    CHECK(sac_chat_apply_template(m, cases[0].tmpl, strlen(cases[0].tmpl), conversation, 4, 1, exact, len + 1, &len) ==
          SAC_OK);
    CHECK(!strcmp(exact, cases[0].expected));
    free(exact);
    sac_model_free(m);
}

static void test_own_template_and_plain(void) {
    sac_model *m = vocab_model(cases[2].tmpl, -1);
    CHECK(m != NULL);
    if (!m) return;
    sac_status st;
    char *out = apply(m, NULL, conversation, 4, 1, &st); /* the file's llama3 template */
    CHECK(out && !strcmp(out, cases[2].expected));
    free(out);
    sac_model_free(m);
    m = vocab_model(NULL, -1);
    CHECK(m != NULL);
    if (!m) return;
    out = apply(m, NULL, conversation, 4, 1, &st); /* no template: the contents, a line each */
    CHECK_MSG(out && !strcmp(out, "Be brief.\n Hi\xc2\xa0\n Hello. \nAgain"), "%s", out ? out : "");
    free(out);
    out = apply(m, "", conversation, 4, 1, &st); /* an empty template: the same */
    CHECK_MSG(out && !strcmp(out, "Be brief.\n Hi\xc2\xa0\n Hello. \nAgain"), "%s", out ? out : sac_model_errmsg(m));
    free(out);
    sac_model_free(m);
    m = vocab_model("", -1); /* and a file's empty template */
    CHECK(m != NULL);
    if (!m) return;
    out = apply(m, NULL, conversation, 4, 1, &st);
    CHECK_MSG(out && !strcmp(out, "Be brief.\n Hi\xc2\xa0\n Hello. \nAgain"), "%s", out ? out : sac_model_errmsg(m));
    free(out);
    sac_model_free(m);
}

static void test_chatml_own_system_prompt(void) {
    sac_model *m = vocab_model(NULL, -1);
    CHECK(m != NULL);
    if (!m) return;
    /* Qwen/Qwen1.5-72B-Chat (SmolLM2-Instruct's has the same shape) */
    const char *qwen = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ "
                       "'<|im_start|>system\\nYou are a \\'helpful\\' assistant.<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + "
                       "message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if "
                       "add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    sac_status st;
    char *out = apply(m, qwen, conversation + 1, 1, 1, &st);
    CHECK_MSG(out && !strcmp(out, "<|im_start|>system\nYou are a 'helpful' assistant.<|im_end|>\n<|im_start|>user\n Hi\xc2\xa0"
                                  "<|im_end|>\n<|im_start|>assistant\n"), "%s", out ? out : sac_model_errmsg(m));
    free(out);
    out = apply(m, qwen, conversation, 2, 1, &st); /* a system turn of the conversation replaces it */
    CHECK(out && !strncmp(out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user", 50));
    free(out);
    sac_model_free(m);
}

static void test_special_tokens(void) {
    sac_model *m = vocab_model(NULL, 7 /* "!" named the end of turn */);
    CHECK(m != NULL);
    if (!m) return;
    const char *text;
    size_t len;
    CHECK(sac_token_spelling(m, 3, &text, &len) == SAC_OK && len == 10 && !memcmp(text, "<|im_end|>", 10));
    CHECK(sac_token_spelling(m, 1, &text, &len) == SAC_OK && len == 3 && !memcmp(text, "<s>", 3));
    CHECK(sac_token_spelling(m, 102, &text, &len) == SAC_ERR_ARG);
    int32_t n = 0, ids[8];
    CHECK(sac_token_eog(m, NULL, 0, &n) == SAC_ERR_ARG && n == 5);
    CHECK(sac_token_eog(m, ids, 8, &n) == SAC_OK && n == 5);
    /* EOS, the three end-of-turn spellings, and eot_token_id; not BOS or <unk> */
    const int32_t want[] = {2, 3, 4, 5, 7};
    CHECK(!memcmp(ids, want, sizeof want));
    sac_model_free(m);
}

int main(void) {
    RUN(test_families);
    RUN(test_formats);
    RUN(test_without_generation_prompt);
    RUN(test_refusals);
    RUN(test_buffer);
    RUN(test_own_template_and_plain);
    RUN(test_chatml_own_system_prompt);
    RUN(test_special_tokens);
    return check_summary("test_chat");
}
