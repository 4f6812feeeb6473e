/* cli.c — the native command line: `saccade info|logits|generate|tokenize|bench MODEL ...`.
 * Every command prints one JSON object on stdout; errors go to stderr with exit status 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "saccade.h"

static const char *usage =
    "usage:\n"
    "  saccade info MODEL.gguf\n"
    "  saccade logits MODEL.gguf --tokens 1,2,3 [--all] [--threads N]\n"
    "  saccade generate MODEL.gguf (--tokens 1,2,3 | --prompt TEXT) [-n 32] [--temp T] [--top-k K]\n"
    "                   [--top-p P] [--repeat-penalty R] [--seed S] [--threads N] [--ignore-eos]\n"
    "  saccade tokenize MODEL.gguf --text TEXT [--bos]\n"
    "  saccade bench MODEL.gguf [--prompt-tokens 128] [--decode-tokens 32] [--threads N] [--repeat 3]\n";

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                             */
/* ---------------------------------------------------------------------------------------- */

static int fail(const char *fmt, const char *detail) {
    fprintf(stderr, "saccade: ");
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
    return 1;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void json_string(FILE *out, const char *s, size_t len) {
    fputc('"', out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c == '\r') fputs("\\r", out);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

static void json_ids(FILE *out, const int32_t *ids, int32_t n) {
    fputc('[', out);
    for (int32_t i = 0; i < n; i++) fprintf(out, "%s%d", i ? "," : "", ids[i]);
    fputc(']', out);
}

/* Command-line options after MODEL. */
typedef struct options {
    const char *tokens, *prompt, *text;
    int all, bos, ignore_eos;
    int n_predict, threads, prompt_tokens, decode_tokens, repeat;
    sac_sampling_params sampling;
} options;

static int parse_int(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < -2147483647L || v > 2147483647L) return 0;
    *out = (int)v;
    return 1;
}

static int parse_float(const char *s, float *out) {
    char *end;
    errno = 0;
    *out = strtof(s, &end);
    return !errno && !*end && end != s;
}

static int parse_options(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = 32;
    o->threads = 1;
    o->prompt_tokens = 128;
    o->decode_tokens = 32;
    o->repeat = 3;
    o->sampling = sac_sampling_default_params();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, takes_value = 1;
        unsigned long long seed;
        if (!strcmp(a, "--all")) o->all = 1, takes_value = 0;
        else if (!strcmp(a, "--bos")) o->bos = 1, takes_value = 0;
        else if (!strcmp(a, "--ignore-eos")) o->ignore_eos = 1, takes_value = 0;
        else if (!v) return fail("option %s needs a value", a), 0;
        else if (!strcmp(a, "--tokens")) o->tokens = v;
        else if (!strcmp(a, "--prompt")) o->prompt = v;
        else if (!strcmp(a, "--text")) o->text = v;
        else if (!strcmp(a, "-n")) ok = parse_int(v, &o->n_predict) && o->n_predict >= 0;
        else if (!strcmp(a, "--threads")) ok = parse_int(v, &o->threads) && o->threads >= 1;
        else if (!strcmp(a, "--prompt-tokens")) ok = parse_int(v, &o->prompt_tokens) && o->prompt_tokens >= 1;
        else if (!strcmp(a, "--decode-tokens")) ok = parse_int(v, &o->decode_tokens) && o->decode_tokens >= 1;
        else if (!strcmp(a, "--repeat")) ok = parse_int(v, &o->repeat) && o->repeat >= 1;
        else if (!strcmp(a, "--temp")) ok = parse_float(v, &o->sampling.temperature);
        else if (!strcmp(a, "--top-k")) ok = parse_int(v, &o->sampling.top_k);
        else if (!strcmp(a, "--top-p")) ok = parse_float(v, &o->sampling.top_p);
        else if (!strcmp(a, "--repeat-penalty")) ok = parse_float(v, &o->sampling.repeat_penalty);
        else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            seed = strtoull(v, &end, 10);
            ok = !errno && !*end && end != v;
            o->sampling.seed = seed;
        } else return fail("unknown option %s", a), 0;
        if (!ok) return fail("invalid value for %s", a), 0;
        i += takes_value;
    }
    return 1;
}

/* "1,2,3" → ids; returns the count or -1. */
static int32_t parse_ids(const char *s, int32_t **out) {
    int32_t n = 1, cap;
    for (const char *p = s; *p; p++) n += *p == ',';
    cap = n;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    if (!ids) return -1;
    const char *p = s;
    for (int32_t i = 0; i < n; i++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || (*end && *end != ',') || v < -2147483647L || v > 2147483647L) {
            free(ids);
            return -1;
        }
        ids[i] = (int32_t)v;
        p = end + (*end == ',');
    }
    *out = ids;
    return n;
}

static sac_model *load_model(const char *path, uint32_t flags) {
    FILE *f = fopen(path, "rb");
    if (!f) return fail("cannot open '%s'", path), NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = size > 0 ? malloc((size_t)size) : NULL;
    if (size <= 0 || !buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        return fail("cannot read '%s'", path), NULL;
    }
    fclose(f);
    sac_model *m;
    if (sac_model_load(buf, (size_t)size, SAC_LOAD_TAKE_OWNERSHIP | flags, &m) != SAC_OK) {
        fail("%s", m ? sac_model_errmsg(m) : "out of memory");
        sac_model_free(m);
        return NULL;
    }
    return m;
}

static sac_context *new_context(sac_model *m, int threads) {
    sac_context_params cp = sac_context_default_params();
    cp.n_threads = threads;
    sac_context *ctx;
    if (sac_context_new(m, &cp, &ctx) != SAC_OK) {
        fail("%s", ctx ? sac_context_errmsg(ctx) : "out of memory");
        sac_context_free(ctx);
        return NULL;
    }
    return ctx;
}

/* The prompt as ids: --tokens, or --prompt through the model's tokenizer (BOS as the model asks). */
static int32_t prompt_ids(sac_model *m, const options *o, int32_t **ids) {
    if (o->tokens) {
        int32_t n = parse_ids(o->tokens, ids);
        if (n < 0) fail("--tokens must be a comma-separated list of integers, got '%s'", o->tokens);
        return n;
    }
    const char *text = o->prompt ? o->prompt : o->text;
    if (!text) return fail("%s", "give --tokens or --prompt"), -1;
    uint32_t flags = (o->bos || (o->prompt && sac_token_add_bos(m))) ? SAC_TOKENIZE_BOS : 0;
    int32_t n = 0;
    sac_status st = sac_tokenize(m, text, strlen(text), flags, NULL, 0, &n);
    if (st != SAC_OK && st != SAC_ERR_ARG) return fail("%s", sac_model_errmsg(m)), -1;
    *ids = malloc((size_t)(n ? n : 1) * sizeof **ids);
    if (!*ids || sac_tokenize(m, text, strlen(text), flags, *ids, n, &n) != SAC_OK)
        return fail("%s", sac_model_errmsg(m)), -1;
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* Commands                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int cmd_info(sac_model *m) {
    sac_model_info in;
    sac_model_get_info(m, &in);
    printf("{\"architecture\":");
    json_string(stdout, in.architecture, strlen(in.architecture));
    printf(",\"name\":");
    json_string(stdout, in.name, strlen(in.name));
    printf(",\"gguf_version\":%u,\"n_vocab\":%d,\"n_ctx\":%d,\"n_embd\":%d,\"n_ff\":%d,\"n_layer\":%d,"
           "\"n_head\":%d,\"n_head_kv\":%d,\"head_dim\":%d,\"rope_dim\":%d,\"rope_freq_base\":%g,"
           "\"norm_eps\":%g,\"n_encoder_layer\":%d,\"tied_output\":%s,\"n_params\":%llu,\"n_bytes\":%llu,\"has_tokenizer\":%s",
           in.gguf_version, in.n_vocab, in.n_ctx, in.n_embd, in.n_ff, in.n_layer, in.n_head, in.n_head_kv,
           in.head_dim, in.rope_dim, (double)in.rope_freq_base, (double)in.norm_eps, in.n_encoder_layer,
           in.tied_output ? "true" : "false", (unsigned long long)in.n_params, (unsigned long long)in.n_bytes,
           in.has_tokenizer ? "true" : "false");

    /* tensor types: name → count */
    printf(",\"tensor_types\":{");
    const char *seen[16];
    int n_seen = 0;
    for (int32_t i = 0; i < sac_model_n_tensors(m); i++) {
        const char *type;
        sac_model_tensor(m, i, NULL, &type, NULL, NULL);
        int known = 0;
        for (int j = 0; j < n_seen; j++) known |= !strcmp(seen[j], type);
        if (known || n_seen == 16) continue;
        seen[n_seen++] = type;
        int count = 0;
        for (int32_t k = 0; k < sac_model_n_tensors(m); k++) {
            const char *t2;
            sac_model_tensor(m, k, NULL, &t2, NULL, NULL);
            count += !strcmp(t2, type);
        }
        printf("%s\"%s\":%d", n_seen > 1 ? "," : "", type, count);
    }
    printf("},\"metadata\":{");
    for (int32_t i = 0; i < sac_model_n_metadata(m); i++) {
        const char *key, *value;
        sac_model_metadata(m, i, &key, &value);
        printf("%s", i ? "," : "");
        json_string(stdout, key, strlen(key));
        putchar(':');
        json_string(stdout, value, strlen(value));
    }
    printf("}}\n");
    return 0;
}

static int cmd_logits(sac_model *m, const options *o) {
    int32_t *ids = NULL, n = o->tokens ? parse_ids(o->tokens, &ids) : -1;
    if (n < 0) return fail("%s", "logits needs --tokens 1,2,3");
    sac_context *ctx = new_context(m, o->threads);
    if (!ctx) return free(ids), 1;
    int rc = 0;
    if (sac_eval(ctx, ids, n, NULL, o->all ? SAC_EVAL_ALL_LOGITS : 0) != SAC_OK) {
        rc = fail("%s", sac_context_errmsg(ctx));
    } else {
        int32_t rows, V;
        const float *logits = sac_logits(ctx, &rows, &V);
        printf("{\"logits\":[");
        for (int32_t r = 0; r < rows; r++) {
            printf("%s[", r ? "," : "");
            for (int32_t i = 0; i < V; i++) printf("%s%.9g", i ? "," : "", (double)logits[(size_t)r * V + i]);
            printf("]");
        }
        printf("]}\n");
    }
    sac_context_free(ctx);
    free(ids);
    return rc;
}

static int cmd_generate(sac_model *m, const options *o) {
    int32_t *ids = NULL, n = prompt_ids(m, o, &ids);
    if (n < 0) return 1;
    if (n == 0) return free(ids), fail("%s", "the prompt is empty");
    sac_context *ctx = new_context(m, o->threads);
    if (!ctx) return free(ids), 1;
    int32_t *out = malloc((size_t)(o->n_predict + 1) * sizeof *out);
    char *text = NULL;
    size_t text_len = 0;
    sac_detokenizer *dt = NULL;
    int has_tokenizer = sac_detokenizer_new(m, &dt) == SAC_OK;
    int rc = 0;
    int32_t n_out = 0;
    double t0 = now_ms(), t_prefill = 0;
    if (!out) rc = fail("%s", "out of memory");
    else if (sac_sampler_init(ctx, &o->sampling) != SAC_OK || sac_eval(ctx, ids, n, NULL, 0) != SAC_OK)
        rc = fail("%s", sac_context_errmsg(ctx));
    t_prefill = now_ms() - t0;
    double t1 = now_ms();
    while (!rc && n_out < o->n_predict) {
        int32_t tok;
        if (sac_sample(ctx, &tok) != SAC_OK) { rc = fail("%s", sac_context_errmsg(ctx)); break; }
        out[n_out++] = tok;
        if (has_tokenizer) {
            const char *piece;
            size_t len;
            if (sac_detokenizer_push(dt, tok, &piece, &len) == SAC_OK && len) {
                char *grown = realloc(text, text_len + len);
                if (grown) memcpy((text = grown) + text_len, piece, len), text_len += len;
            }
        }
        if (!o->ignore_eos && tok == sac_token_eos(m)) break;
        if (n_out == o->n_predict) break;
        if (sac_context_n_past(ctx) >= sac_context_n_ctx(ctx)) break; /* context full */
        if (sac_eval(ctx, &tok, 1, NULL, 0) != SAC_OK) rc = fail("%s", sac_context_errmsg(ctx));
    }
    double t_decode = now_ms() - t1;
    if (!rc) {
        if (has_tokenizer) {
            const char *piece;
            size_t len;
            if (sac_detokenizer_flush(dt, &piece, &len) == SAC_OK && len) {
                char *grown = realloc(text, text_len + len);
                if (grown) memcpy((text = grown) + text_len, piece, len), text_len += len;
            }
        }
        printf("{\"prompt_tokens\":");
        json_ids(stdout, ids, n);
        printf(",\"tokens\":");
        json_ids(stdout, out, n_out);
        if (has_tokenizer) {
            printf(",\"text\":");
            json_string(stdout, text ? text : "", text_len);
        }
        printf(",\"timings\":{\"prefill_ms\":%.3f,\"decode_ms\":%.3f,\"threads\":%d}}\n", t_prefill, t_decode,
               sac_context_n_threads(ctx));
    }
    sac_detokenizer_free(dt);
    free(text);
    free(out);
    sac_context_free(ctx);
    free(ids);
    return rc;
}

static int cmd_tokenize(sac_model *m, const options *o) {
    if (!o->text) return fail("%s", "tokenize needs --text TEXT");
    options t = *o;
    t.prompt = NULL;
    int32_t *ids = NULL, n = prompt_ids(m, &t, &ids);
    if (n < 0) return 1;
    json_ids(stdout, ids, n);
    putchar('\n');
    free(ids);
    return 0;
}

/* Prefill and decode speed on synthetic ids (weights may be random): best of --repeat runs. */
static int cmd_bench(sac_model *m, const options *o) {
    sac_model_info in;
    sac_model_get_info(m, &in);
    int32_t np = o->prompt_tokens, nd = o->decode_tokens;
    if (np + nd > in.n_ctx) return fail("%s", "--prompt-tokens + --decode-tokens exceed the context length");
    sac_context_params cp = sac_context_default_params();
    cp.n_threads = o->threads;
    cp.n_batch = np;
    sac_context *ctx;
    if (sac_context_new(m, &cp, &ctx) != SAC_OK) {
        fail("%s", ctx ? sac_context_errmsg(ctx) : "out of memory");
        sac_context_free(ctx);
        return 1;
    }
    int32_t *ids = malloc((size_t)np * sizeof *ids);
    if (!ids) return sac_context_free(ctx), fail("%s", "out of memory");
    for (int32_t i = 0; i < np; i++) ids[i] = (int32_t)((i * 7919u + 13u) % (uint32_t)in.n_vocab);
    double best_prefill = 1e300, best_decode = 1e300;
    for (int r = 0; r < o->repeat; r++) {
        sac_context_reset(ctx);
        double t0 = now_ms();
        if (sac_eval(ctx, ids, np, NULL, 0) != SAC_OK) break;
        double t1 = now_ms();
        for (int32_t i = 0; i < nd; i++) {
            int32_t tok = (int32_t)((i * 104729u + 7u) % (uint32_t)in.n_vocab);
            if (sac_eval(ctx, &tok, 1, NULL, 0) != SAC_OK) break;
        }
        double t2 = now_ms();
        if (t1 - t0 < best_prefill) best_prefill = t1 - t0;
        if (t2 - t1 < best_decode) best_decode = t2 - t1;
    }
    int32_t type_n = sac_model_n_tensors(m);
    const char *type = "";
    for (int32_t i = 0; i < type_n; i++) {
        const char *name, *t;
        sac_model_tensor(m, i, &name, &t, NULL, NULL);
        if (strstr(name, "ffn_up")) { type = t; break; }
    }
    printf("{\"engine\":\"saccade-native\",\"type\":\"%s\",\"threads\":%d,\"prompt_tokens\":%d,"
           "\"decode_tokens\":%d,\"prefill_tokens_per_s\":%.2f,\"decode_tokens_per_s\":%.2f}\n",
           type, sac_context_n_threads(ctx), np, nd, np / (best_prefill / 1e3), nd / (best_decode / 1e3));
    free(ids);
    sac_context_free(ctx);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : (strcmp(argv[1], "help") && strcmp(argv[1], "--help"));
    }
    const char *cmd = argv[1];
    options o;
    if (!parse_options(argc - 3, argv + 3, &o)) return 1;
    if (strcmp(cmd, "info") && strcmp(cmd, "logits") && strcmp(cmd, "generate") && strcmp(cmd, "tokenize") &&
        strcmp(cmd, "bench"))
        return fail("unknown command '%s' (try: saccade help)", cmd);
    /* tokenize needs only the vocabulary: it also works on vocab-only GGUF files */
    sac_model *m = load_model(argv[2], strcmp(cmd, "tokenize") ? 0 : SAC_LOAD_VOCAB_ONLY);
    if (!m) return 1;
    int rc = !strcmp(cmd, "info")       ? cmd_info(m)
             : !strcmp(cmd, "logits")   ? cmd_logits(m, &o)
             : !strcmp(cmd, "generate") ? cmd_generate(m, &o)
             : !strcmp(cmd, "tokenize") ? cmd_tokenize(m, &o)
                                        : cmd_bench(m, &o);
    sac_model_free(m);
    return rc;
}
