/* cli.c — the native command line: `saccade info|logits|generate|tokenize|bench MODEL ...`.
 * Every command prints one JSON object on stdout; errors go to stderr with exit status 1.
 * src/js/cli.mjs is the same program on Node: the same options, ranges, messages and JSON. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "saccade.h"

#ifndef SAC_VERSION
#error "build with -DSAC_VERSION='\"x.y.z\"' (the Makefile reads it from package.json)"
#endif

static const char *usage =
    "usage:\n"
    "  saccade info MODEL.gguf\n"
    "  saccade logits MODEL.gguf --tokens 1,2,3 [--source 4,5,6] [--all] [--threads N] [--ctx N] [--kv-type T]\n"
    "  saccade generate MODEL.gguf (--tokens 1,2,3 | --prompt TEXT) [-n 32] [--temp T] [--top-k K]\n"
    "                   [--top-p P] [--repeat-penalty R] [--seed S] [--threads N] [--ctx N] [--kv-type T]\n"
    "                   [--ignore-eos] [--bos] [--decoder-start 1] [--ablate L:H,...]\n"
    "  saccade generate MODEL.gguf --chat [--system TEXT] [--prompt TEXT] [-n 32] [sampling options]\n"
    "  saccade tokenize MODEL.gguf --text TEXT [--bos]\n"
    "  saccade bench MODEL.gguf [--prompt-tokens 128] [--decode-tokens 32] [--threads N] [--ctx N] [--repeat 3]\n"
    "                   [--attention | --attention-cost] [--kv-type T] [--decode-depth N]\n"
    "Encoder-decoder models: generate encodes the prompt and decodes from BOS (or --decoder-start);\n"
    "logits encodes --source and decodes --tokens; bench encodes --prompt-tokens ids and decodes\n"
    "--decode-tokens ids. bench's 128 and 32 shrink to fit a shorter context: a quarter of it is\n"
    "decoded (at most 32), the prompt takes the rest (at most 128; all of it with --decode-depth).\n"
    "--attention: bench with attention capture on (every softmax probability kept), to see its cost.\n"
    "--attention-cost: decode with capture on and off by turns, token by token in one context, and\n"
    "report both speeds (decode_tokens_per_s without, decode_capture_tokens_per_s with).\n"
    "--decode-depth N: bench decodes with N tokens already in the context (default: after the\n"
    "prompt; 0 decodes from an empty context, as llama-bench's tg test does). Decoder-only models.\n"
    "--ablate L:H,...: zero these decoder self-attention heads (layer:head, from 0) in logits and generate.\n"
    "--ctx N: tokens the context holds (default: the model's training length, at most 4096).\n"
    "--kv-type f32|bf16|q8: what the KV cache holds (default f32, exact; bf16 rounds keys and values,\n"
    "halving the cache and what long-context decoding reads; q8 keeps them as 8-bit integers with a\n"
    "scale per 32, a bit over a quarter of f32, and scores keys with integer dot products).\n"
    "--chat: the prompt is a user turn of a conversation, formatted with the model's chat template\n"
    "(tokenizer.chat_template; the native CLI knows chatml, llama2, llama3, zephyr, gemma and phi3, the\n"
    "Node CLI runs any template); --system TEXT adds a system turn first (none if TEXT is empty).\n"
    "Without --prompt, every non-empty line of stdin is a user turn: each gets a reply (one JSON object per line)\n"
    "that stays in the conversation. Replies stop at the template's end-of-turn token. A model without\n"
    "a template gets the turns as plain text, one per line, and a note on stderr. When a turn's prompt\n"
    "would leave the reply less than min(-n, half the context) tokens (--ctx), the oldest exchanges\n"
    "after the system turn are left out, as few as bring it to half (or all but the last), with a note\n"
    "on stderr; a last turn too long even so fails. -n must be at least 1.\n"
    "saccade --version: the version.\n";

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                             */
/* ---------------------------------------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("saccade: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
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

/* ---------------------------------------------------------------------------------------- */
/* Options: one table says which command takes which option and what values it accepts.     */
/* ---------------------------------------------------------------------------------------- */

typedef enum { CMD_INFO, CMD_LOGITS, CMD_GENERATE, CMD_TOKENIZE, CMD_BENCH, N_COMMANDS } command;
static const char *const command_names[N_COMMANDS] = {"info", "logits", "generate", "tokenize", "bench"};
/* The commands an option belongs to, as a bit set. */
#define LOGITS (1u << CMD_LOGITS)
#define GENERATE (1u << CMD_GENERATE)
#define TOKENIZE (1u << CMD_TOKENIZE)
#define BENCH (1u << CMD_BENCH)

typedef struct options {
    const char *tokens, *source, *decoder_start, *prompt, *text, *system;
    const char *ablate; /* --ablate L:H,...: decoder self-attention heads zeroed */
    int all, bos, ignore_eos, chat, attention, attention_cost;
    int32_t n_predict, threads, n_ctx, prompt_tokens, decode_tokens, repeat, kv_type;
    int32_t decode_depth; /* -1: after the prompt */
    sac_sampling_params sampling;
} options;

typedef enum { OPT_FLAG, OPT_TEXT, OPT_IDS, OPT_INT, OPT_FLOAT, OPT_SEED, OPT_KV_TYPE } option_kind;
typedef enum { FLOAT_GE_0, FLOAT_GT_0, FLOAT_0_1 } float_range;

typedef struct option_spec {
    const char *name;
    option_kind kind;
    unsigned commands;
    size_t offset;       /* of the field in `options` */
    long long min, max;  /* OPT_INT */
    float_range range;   /* OPT_FLOAT */
    const char *accepts; /* the values it takes, for the error message */
} option_spec;

#define IDS_ACCEPTS "a comma-separated list of token ids (integers from 0 to 2147483647)"
#define AT(field) offsetof(options, field)
static const option_spec option_specs[] = {
    {"--tokens", OPT_IDS, LOGITS | GENERATE, AT(tokens), 0, 0, 0, IDS_ACCEPTS},
    {"--source", OPT_IDS, LOGITS, AT(source), 0, 0, 0, IDS_ACCEPTS},
    {"--decoder-start", OPT_IDS, GENERATE, AT(decoder_start), 0, 0, 0, IDS_ACCEPTS},
    {"--prompt", OPT_TEXT, GENERATE, AT(prompt), 0, 0, 0, NULL},
    {"--text", OPT_TEXT, TOKENIZE, AT(text), 0, 0, 0, NULL},
    {"--ablate", OPT_TEXT, LOGITS | GENERATE, AT(ablate), 0, 0, 0, NULL},
    {"--all", OPT_FLAG, LOGITS, AT(all), 0, 0, 0, NULL},
    {"--attention", OPT_FLAG, BENCH, AT(attention), 0, 0, 0, NULL},
    {"--attention-cost", OPT_FLAG, BENCH, AT(attention_cost), 0, 0, 0, NULL},
    {"--bos", OPT_FLAG, GENERATE | TOKENIZE, AT(bos), 0, 0, 0, NULL},
    {"--ignore-eos", OPT_FLAG, GENERATE, AT(ignore_eos), 0, 0, 0, NULL},
    {"--chat", OPT_FLAG, GENERATE, AT(chat), 0, 0, 0, NULL},
    {"--system", OPT_TEXT, GENERATE, AT(system), 0, 0, 0, NULL},
    {"-n", OPT_INT, GENERATE, AT(n_predict), 0, 2147483647, 0, "an integer from 0 to 2147483647"},
    {"--threads", OPT_INT, LOGITS | GENERATE | BENCH, AT(threads), 1, 256, 0,
     "an integer from 1 to 256"},
    {"--ctx", OPT_INT, LOGITS | GENERATE | BENCH, AT(n_ctx), 1, 2147483647, 0, "an integer from 1 to 2147483647"},
    {"--kv-type", OPT_KV_TYPE, LOGITS | GENERATE | BENCH, AT(kv_type), 0, 0, 0, "one of f32, bf16, q8"},
    {"--prompt-tokens", OPT_INT, BENCH, AT(prompt_tokens), 1, 2147483647, 0, "an integer from 1 to 2147483647"},
    {"--decode-tokens", OPT_INT, BENCH, AT(decode_tokens), 1, 2147483647, 0, "an integer from 1 to 2147483647"},
    {"--repeat", OPT_INT, BENCH, AT(repeat), 1, 2147483647, 0, "an integer from 1 to 2147483647"},
    {"--decode-depth", OPT_INT, BENCH, AT(decode_depth), 0, 2147483647, 0, "an integer from 0 to 2147483647"},
    {"--temp", OPT_FLOAT, GENERATE, AT(sampling.temperature), 0, 0, FLOAT_GE_0,
     "a finite float >= 0 (at most 3.4e38; 0: greedy)"},
    {"--top-k", OPT_INT, GENERATE, AT(sampling.top_k), 0, 2147483647, 0,
     "an integer from 0 to 2147483647 (0: off)"},
    {"--top-p", OPT_FLOAT, GENERATE, AT(sampling.top_p), 0, 0, FLOAT_0_1, "a number in (0, 1] (1: off)"},
    {"--repeat-penalty", OPT_FLOAT, GENERATE, AT(sampling.repeat_penalty), 0, 0, FLOAT_GT_0,
     "a finite float > 0 (at most 3.4e38; 1: off)"},
    {"--seed", OPT_SEED, GENERATE, AT(sampling.seed), 0, 0, 0, "an integer from 0 to 18446744073709551615"},
};
#undef AT

/* Numbers are plain decimal: [+-]digits, or [+-]digits[.digits][e[+-]digits] for floats. No
 * spaces, hex, "inf" or "nan": what strtod and JavaScript's Number() read the same way. */
static const char *skip_digits(const char *s) {
    while (*s >= '0' && *s <= '9') s++;
    return s;
}

static int is_integer(const char *s) {
    if (*s == '+' || *s == '-') s++;
    const char *end = skip_digits(s);
    return end > s && !*end;
}

static int is_decimal(const char *s) {
    if (*s == '+' || *s == '-') s++;
    const char *p = skip_digits(s);
    int digits = p > s;
    if (*p == '.') {
        const char *q = skip_digits(p + 1);
        digits |= q > p + 1;
        p = q;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        const char *q = skip_digits(p);
        if (q == p) return 0;
        p = q;
    }
    return !*p;
}

static int parse_int(const char *s, long long min, long long max, int32_t *out) {
    if (!is_integer(s)) return 0;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno || v < min || v > max) return 0;
    *out = (int32_t)v;
    return 1;
}

/* The value as a float (what the sampler stores), checked after rounding to float. */
static int parse_float(const char *s, float_range range, float *out) {
    if (!is_decimal(s)) return 0;
    float v = (float)strtod(s, NULL); /* overflow gives inf, underflow 0: both are then judged */
    int ok = range == FLOAT_0_1 ? v > 0.0f && v <= 1.0f : isfinite(v) && (range == FLOAT_GT_0 ? v > 0.0f : v >= 0.0f);
    if (ok) *out = v;
    return ok;
}

static int parse_seed(const char *s, uint64_t *out) {
    if (!is_integer(s)) return 0;
    const char *digits = s + (*s == '+' || *s == '-');
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, 10);
    if (errno || (*s == '-' && v != 0)) return 0;
    *out = v;
    return 1;
}

/* A KV cache type by its name (sac_kv_type_name). */
static int parse_kv_type(const char *s, int32_t *out) {
    for (int32_t t = 0; sac_kv_type_name(t); t++)
        if (!strcmp(s, sac_kv_type_name(t))) return *out = t, 1;
    return 0;
}

/* "1,2,3": one or more ids in [0, 2^31). */
static int is_id_list(const char *s) {
    for (;;) {
        const char *end = skip_digits(s);
        if (end == s) return 0;
        errno = 0;
        if (strtoll(s, NULL, 10) > 2147483647LL || errno) return 0;
        if (!*end) return 1;
        if (*end != ',') return 0;
        s = end + 1;
    }
}

static int parse_options(int argc, char **argv, command cmd, options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = 32;
    o->threads = 1;
    o->prompt_tokens = 0; /* bench_lengths fits them to the context when not given */
    o->decode_tokens = 0;
    o->repeat = 3;
    o->decode_depth = -1;
    o->sampling = sac_sampling_default_params();
    for (int i = 0; i < argc; i++) {
        const option_spec *spec = NULL;
        for (size_t k = 0; k < sizeof option_specs / sizeof *option_specs; k++)
            if (!strcmp(argv[i], option_specs[k].name)) spec = &option_specs[k];
        if (!spec) return fail("unknown option %s", argv[i]), 0;
        if (!(spec->commands & 1u << cmd)) return fail("%s does not take %s", command_names[cmd], spec->name), 0;
        char *field = (char *)o + spec->offset;
        if (spec->kind == OPT_FLAG) {
            *(int *)field = 1;
            continue;
        }
        if (i + 1 >= argc) return fail("option %s needs a value", spec->name), 0;
        const char *v = argv[++i];
        int ok = spec->kind == OPT_TEXT    ? (*(const char **)field = v, 1)
                 : spec->kind == OPT_IDS   ? is_id_list(v) && (*(const char **)field = v, 1)
                 : spec->kind == OPT_INT   ? parse_int(v, spec->min, spec->max, (int32_t *)field)
                 : spec->kind == OPT_FLOAT ? parse_float(v, spec->range, (float *)field)
                 : spec->kind == OPT_SEED  ? parse_seed(v, (uint64_t *)field)
                                           : parse_kv_type(v, (int32_t *)field);
        if (!ok) return fail("%s must be %s, got '%s'", spec->name, spec->accepts, v), 0;
    }
    return 1;
}

/* A list that is_id_list accepted → ids; returns the count, or -1 when out of memory. */
static int32_t parse_ids(const char *s, int32_t **out) {
    int32_t n = 1;
    for (const char *p = s; *p; p++) n += *p == ',';
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    if (!ids) return fail("out of memory"), -1;
    for (int32_t i = 0; i < n; i++) {
        char *end;
        ids[i] = (int32_t)strtol(s, &end, 10);
        s = end + 1;
    }
    *out = ids;
    return n;
}

/* Why a file cannot be opened, in the Node CLI's words (src/js/sources.mjs). */
static const char *open_failure(int e) {
    return e == ENOENT || e == ENOTDIR ? "no such file"
           : e == EACCES || e == EPERM ? "permission denied"
           : e == ELOOP ? "too many levels of symbolic links"
           : e == ENAMETOOLONG ? "file name too long" : strerror(e);
}

/* Reads a whole file into a malloc'd buffer (an empty file too: the loader says why it is
 * refused), to its end: stat's size is where reading starts, and files in /proc or /sys give 0
 * there yet have contents. Only a regular file: a directory or a pipe has no size to read (and
 * opening a pipe nobody writes to would wait forever). `shard` ("shard 2 of 3 (NAME): ")
 * prefixes a failure. */
static void *read_file(const char *path, const char *shard, size_t *size) {
    struct stat st;
    const char *why = stat(path, &st) ? open_failure(errno)
                      : S_ISDIR(st.st_mode) ? "it is a directory"
                      : !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
    FILE *f = why ? NULL : fopen(path, "rb");
    if (!why && !f) why = open_failure(errno);
    if (why) return fail("%scannot open '%s': %s", shard, path, why), NULL;
    size_t cap = st.st_size > 0 && (uintmax_t)st.st_size < SIZE_MAX ? (size_t)st.st_size : 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    int c;
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap || (c = fgetc(f)) == EOF) break;
        unsigned char *more = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!more) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = more;
        buf[n++] = (unsigned char)c;
        cap *= 2;
    }
    if (!buf || ferror(f)) {
        free(buf);
        buf = NULL;
        fail("%scannot read '%s'", shard, path);
    }
    fclose(f);
    *size = n;
    return buf;
}

/* A split model's shard count when `path` names one of its shards (…-0000K-of-0000N.gguf), else
 * 1; 0 (said why) when it names a shard no split model has (as src/js/shards.mjs refuses it). */
static int shard_count(const char *path) {
    static const char form[] = "-#####-of-#####.gguf";
    size_t len = strlen(path), n = sizeof form - 1;
    if (len < n) return 1;
    const char *t = path + len - n;
    for (size_t i = 0; i < n; i++)
        if (form[i] == '#' ? !isdigit((unsigned char)t[i]) : t[i] != form[i]) return 1;
    int no = atoi(t + 1), count = atoi(t + 10);
    if (count < 1 || no < 1 || no > count) return fail("'%s' names shard %d of %d, which cannot be", path, no, count), 0;
    return count;
}

/* Writes shard k's number into `name`, the path (of length len) of a split model's shard. */
static void set_shard_number(char *name, size_t len, int k) {
    char digits[6];
    snprintf(digits, sizeof digits, "%05u", (unsigned)k % 100000u);
    memcpy(name + len - 19, digits, 5); /* the 5 digits after the leading '-' */
}

/* The model at `path`; for one shard of a split model, every shard (as loadModel does), or
 * vocab-only the first. */
static sac_model *load_model(const char *path, uint32_t flags) {
    int n = shard_count(path);
    if (n == 0) return NULL;
    /* vocab-only, a split model's first shard is enough: it holds the tokenizer */
    const int n_read = (flags & SAC_LOAD_VOCAB_ONLY) ? 1 : n;
    size_t len = strlen(path);
    void **bufs = calloc((size_t)n_read, sizeof *bufs);
    size_t *sizes = calloc((size_t)n_read, sizeof *sizes);
    char *name = malloc(len + 1), *prefix = malloc(len + 64);
    sac_model *m = NULL;
    int i = 0;
    if (!bufs || !sizes || !name || !prefix) {
        fail("out of memory");
        goto done;
    }
    memcpy(name, path, len + 1);
    prefix[0] = '\0';
    for (; i < n_read; i++) {
        if (n > 1) { /* a shard's failures say which one it is, as loadModel's do (src/js/load.mjs) */
            set_shard_number(name, len, i + 1);
            snprintf(prefix, len + 64, "shard %d of %d (%s): ", i + 1, n, name);
        }
        if (!(bufs[i] = read_file(name, prefix, &sizes[i]))) goto done;
        if (n > 1 && sizes[i] == 0) {
            fail("%sthe model is empty (0 bytes)", prefix);
            i++; /* freed below */
            goto done;
        }
    }
    if (sac_model_load_split((const void *const *)bufs, sizes, n_read, SAC_LOAD_TAKE_OWNERSHIP | flags, &m) != SAC_OK) {
        const char *msg = m ? sac_model_errmsg(m) : "out of memory";
        int k, of, at = 0; /* the loader names a shard by number ("shard 2 of 3 ..."): say which file that is */
        if (n > 1 && !strncmp(msg, "shard ", 6) && isdigit((unsigned char)msg[6]) &&
            sscanf(msg, "shard %d of %d%n", &k, &of, &at) == 2 && at > 0 && k >= 1 && k <= n) {
            set_shard_number(name, len, k);
            fail("%s (shard %d is %s)", msg, k, name);
        } else
            fail("%s", msg);
        sac_model_free(m);
        m = NULL;
    }
    i = 0; /* the model owns the buffers now, loaded or not */
done:
    while (i > 0) free(bufs[--i]);
    free(bufs);
    free(sizes);
    free(name);
    free(prefix);
    return m;
}

static sac_context *new_context(sac_model *m, const options *o, int32_t batch) {
    sac_context_params cp = sac_context_default_params();
    cp.n_threads = o->threads;
    cp.n_ctx = o->n_ctx; /* 0: the library's default */
    cp.capture_attention = o->attention || o->attention_cost;
    cp.kv_type = o->kv_type;
    if (batch) cp.n_batch = batch;
    sac_context *ctx;
    if (sac_context_new(m, &cp, &ctx) != SAC_OK ||
        (o->ablate && sac_context_set_ablation_spec(ctx, SAC_ATTENTION_SELF, o->ablate) != SAC_OK)) {
        fail("%s", ctx ? sac_context_errmsg(ctx) : "out of memory");
        sac_context_free(ctx);
        return NULL;
    }
    return ctx;
}

static int is_encdec(const sac_model *m) {
    sac_model_info in;
    sac_model_get_info(m, &in);
    return !strcmp(in.architecture, "encdec");
}

static const char *architecture(const sac_model *m) {
    sac_model_info in;
    sac_model_get_info(m, &in);
    return in.architecture;
}

/* The prompt as ids: --tokens as given, or --prompt (tokenize: --text) through the model's
 * tokenizer, with BOS as the model asks or --bos says. */
static int32_t prompt_ids(sac_model *m, const options *o, int32_t **ids) {
    if (o->tokens && o->prompt) return fail("give --tokens or --prompt, not both"), -1;
    if (o->tokens && o->bos) return fail("--bos is for --prompt: --tokens are used as given"), -1;
    if (o->tokens) return parse_ids(o->tokens, ids);
    const char *text = o->prompt ? o->prompt : o->text;
    if (!text) return fail("give --tokens or --prompt"), -1;
    if (o->bos && sac_token_bos(m) < 0) return fail("--bos: the vocabulary has no BOS token"), -1;
    uint32_t flags = (o->bos || (o->prompt && sac_token_add_bos(m))) ? SAC_TOKENIZE_BOS : 0;
    int32_t n = 0;
    sac_status st = sac_tokenize(m, text, strlen(text), flags, NULL, 0, &n);
    if (st != SAC_OK && st != SAC_ERR_ARG) return fail("%s", sac_model_errmsg(m)), -1;
    *ids = malloc((size_t)(n ? n : 1) * sizeof **ids);
    if (!*ids) return fail("out of memory"), -1;
    if (sac_tokenize(m, text, strlen(text), flags, *ids, n, &n) != SAC_OK) {
        free(*ids);
        *ids = NULL;
        return fail("%s", sac_model_errmsg(m)), -1;
    }
    return n;
}

/* Appends bytes to a growing text; 0 when out of memory. */
static int append(char **text, size_t *len, const char *piece, size_t n) {
    if (!n) return 1;
    if (n > SIZE_MAX - *len) return 0;
    char *grown = realloc(*text, *len + n);
    if (!grown) return 0;
    memcpy(grown + *len, piece, n);
    *text = grown;
    *len += n;
    return 1;
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

/* Encoder-decoder models read --source; the others refuse it. */
static int check_source(const sac_model *m, const options *o) {
    if (is_encdec(m) && !o->source)
        return fail("an encoder-decoder model needs --source 1,2,3 (the ids the encoder reads)");
    if (!is_encdec(m) && o->source)
        return fail("only encoder-decoder models take --source; this model is %s", architecture(m));
    return 0;
}

static int cmd_logits(sac_model *m, const options *o) {
    if (!o->tokens) return fail("logits needs --tokens 1,2,3");
    if (check_source(m, o)) return 1;
    int32_t *ids = NULL, *src = NULL, n = parse_ids(o->tokens, &ids), n_src = 0;
    if (n < 0 || (o->source && (n_src = parse_ids(o->source, &src)) < 0)) return free(ids), 1;
    sac_context *ctx = new_context(m, o, 0);
    int rc = !ctx;
    if (ctx && ((src && sac_encode(ctx, src, n_src, NULL) != SAC_OK) ||
                sac_eval(ctx, ids, n, NULL, o->all ? SAC_EVAL_ALL_LOGITS : 0) != SAC_OK)) {
        rc = fail("%s", sac_context_errmsg(ctx));
    } else if (ctx) {
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
    free(src);
    free(ids);
    return rc;
}

/* What the decoder evaluates first: the prompt, or for an encoder-decoder model (whose prompt
 * is the source) --decoder-start or BOS. */
static int32_t decoder_start(sac_model *m, const options *o, int32_t **ids) {
    if (!is_encdec(m)) {
        if (o->decoder_start)
            return fail("only encoder-decoder models take --decoder-start; this model is %s", architecture(m)), -1;
        return 0;
    }
    if (o->decoder_start) return parse_ids(o->decoder_start, ids);
    if (sac_token_bos(m) < 0)
        return fail("the model has no BOS token to start the decoder with: give --decoder-start 1,2,3"), -1;
    if (!(*ids = malloc(sizeof **ids))) return fail("out of memory"), -1;
    **ids = sac_token_bos(m);
    return 1;
}

/* The tokens that end a generation: EOS (generate) or every end-of-turn token (chat). */
typedef struct stop_set {
    int32_t *ids;
    int32_t n;
} stop_set;

static int is_stop(const stop_set *s, int32_t tok) {
    for (int32_t i = 0; i < s->n; i++)
        if (s->ids[i] == tok) return 1;
    return 0;
}

/* The tokens a chat's context holds after a turn, for the next turn to keep (as the JS
 * library's generate does): the prompt, then the generated tokens that were evaluated. */
typedef struct held_tokens {
    int32_t *ids;
    int32_t n;
} held_tokens;

/* How many leading ids of the prompt `held` shares, leaving at least the last to evaluate. */
static int32_t shared_prefix(const held_tokens *held, const int32_t *ids, int32_t n) {
    int32_t i = 0, most = held->n < n - 1 ? held->n : n - 1;
    while (i < most && held->ids[i] == ids[i]) i++;
    return i;
}

/* From a fresh context, or (held, decoder-only) keeping the tokens of `ids` the context already
 * holds: evaluates `ids` (an encoder-decoder model encodes them and evaluates `start`), samples
 * up to -n tokens, stopping at a token of `stop` (unless --ignore-eos) or a full context, and
 * prints the JSON line. *reply, when asked for, gets the text (malloc'd); *held what the
 * context holds after it (empty after a failure). */
static int generate_from(sac_model *m, sac_context *ctx, const options *o, const int32_t *ids, int32_t n,
                         const int32_t *start, int32_t n_start, const stop_set *stop, char **reply,
                         held_tokens *held) {
    /* (a prompt the context cannot hold is refused counting all of it, not the part not held) */
    int32_t keep = held && !start && n <= sac_context_n_ctx(ctx) ? shared_prefix(held, ids, n) : 0;
    if (held) held->n = 0;
    if (keep && sac_context_truncate(ctx, keep) != SAC_OK) keep = 0; /* (held is what the context holds) */
    if (!keep) sac_context_reset(ctx);
    /* Every token but the last is evaluated, so at most n_ctx + 1 come out, whatever -n says. */
    int64_t cap = (int64_t)sac_context_n_ctx(ctx) + 1;
    if (o->n_predict < cap) cap = o->n_predict;
    int32_t *out = malloc((size_t)(cap ? cap : 1) * sizeof *out);
    char *text = NULL;
    size_t text_len = 0;
    sac_detokenizer *dt = NULL;
    int has_tokenizer = sac_detokenizer_new(m, &dt) == SAC_OK;
    int rc = 0;
    /* The generated text continues the decoder's input: without it, a llama vocabulary would
     * drop the first generated token's leading space as the start of a text. */
    for (int32_t i = 0; has_tokenizer && !rc && i < (start ? n_start : n); i++) {
        const char *piece;
        size_t len;
        if (sac_detokenizer_push(dt, start ? start[i] : ids[i], &piece, &len) != SAC_OK)
            rc = fail("%s", sac_detokenizer_errmsg(dt));
    }
    int32_t n_out = 0;
    double t0 = now_ms();
    if (!rc && !out) rc = fail("out of memory");
    if (!rc && (sac_sampler_init(ctx, &o->sampling) != SAC_OK ||
                (start ? sac_encode(ctx, ids, n, NULL) != SAC_OK || sac_eval(ctx, start, n_start, NULL, 0) != SAC_OK
                       : sac_eval(ctx, ids + keep, n - keep, NULL, 0) != SAC_OK)))
        rc = fail("%s", sac_context_errmsg(ctx)); /* one message: not after the detokenizer's */
    double t_prefill = now_ms() - t0, t1 = now_ms();
    while (!rc && n_out < o->n_predict) {
        int32_t tok;
        if (sac_sample(ctx, &tok) != SAC_OK) {
            rc = fail("%s", sac_context_errmsg(ctx));
            break;
        }
        out[n_out++] = tok;
        int stopped = !o->ignore_eos && is_stop(stop, tok);
        if (has_tokenizer && !stopped) { /* a stop token ends the text before its own piece, as generate() does */
            const char *piece;
            size_t len;
            if (sac_detokenizer_push(dt, tok, &piece, &len) != SAC_OK) rc = fail("%s", sac_detokenizer_errmsg(dt));
            else if (!append(&text, &text_len, piece, len)) rc = fail("out of memory");
        }
        if (rc || stopped || n_out == o->n_predict) break;
        if (sac_context_n_past(ctx) >= sac_context_n_ctx(ctx)) break; /* context full */
        if (sac_eval(ctx, &tok, 1, NULL, 0) != SAC_OK) rc = fail("%s", sac_context_errmsg(ctx));
    }
    double t_decode = now_ms() - t1;
    if (!rc && has_tokenizer) {
        const char *piece;
        size_t len;
        if (sac_detokenizer_flush(dt, &piece, &len) != SAC_OK) rc = fail("%s", sac_detokenizer_errmsg(dt));
        else if (!append(&text, &text_len, piece, len) || !append(&text, &text_len, "", 1)) rc = fail("out of memory");
    }
    if (!rc) {
        printf("{\"prompt_tokens\":");
        json_ids(stdout, ids, n);
        printf(",\"tokens\":");
        json_ids(stdout, out, n_out);
        if (has_tokenizer) {
            printf(",\"text\":");
            json_string(stdout, text, text_len - 1);
        }
        printf(",\"timings\":{\"prefill_ms\":%.3f,\"decode_ms\":%.3f,\"threads\":%d}}\n", t_prefill, t_decode,
               sac_context_n_threads(ctx));
        fflush(stdout);
        if (reply) {
            *reply = text;
            text = NULL;
        }
        /* the prompt, then the generated tokens evaluated: every one but the last */
        const int32_t n_held = sac_context_n_past(ctx);
        int32_t *grown = held && n_held ? realloc(held->ids, (size_t)n_held * sizeof *grown) : NULL;
        if (grown) {
            memcpy(grown, ids, (size_t)n * sizeof *grown);
            memcpy(grown + n, out, (size_t)(n_held - n) * sizeof *grown);
            held->ids = grown;
            held->n = n_held;
        }
    }
    sac_detokenizer_free(dt);
    free(text);
    free(out);
    return rc;
}

static int cmd_generate(sac_model *m, const options *o) {
    int32_t *ids = NULL, *start = NULL, n = prompt_ids(m, o, &ids), n_start = 0;
    if (n < 0) return 1;
    if (n == 0) return free(ids), fail("the prompt is empty");
    if ((n_start = decoder_start(m, o, &start)) < 0) return free(ids), 1;
    sac_context *ctx = new_context(m, o, 0);
    int32_t eos = sac_token_eos(m);
    stop_set stop = {&eos, eos >= 0};
    int rc = !ctx || generate_from(m, ctx, o, ids, n, start, n_start, &stop, NULL, NULL);
    sac_context_free(ctx);
    free(start);
    free(ids);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* Chat: generate --chat                                                                     */
/* ---------------------------------------------------------------------------------------- */

typedef struct conversation {
    sac_chat_message *msg;
    unsigned char *owned; /* owned[i]: msg[i].content was allocated here, freed with its turn */
    int32_t n, cap;
} conversation;

/* Adds a turn; `owned` content is freed with the turn. 0 when out of memory. */
static int add_turn(conversation *c, const char *role, char *content, int owned) {
    if (c->n == c->cap) {
        if (c->cap > INT32_MAX / 2 - 1) return 0;
        int32_t cap = c->cap ? 2 * c->cap : 8;
        sac_chat_message *msg = realloc(c->msg, (size_t)cap * sizeof *msg);
        if (msg) c->msg = msg;
        unsigned char *own = realloc(c->owned, (size_t)cap);
        if (own) c->owned = own;
        if (!msg || !own) return 0;
        c->cap = cap;
    }
    c->owned[c->n] = owned != 0;
    c->msg[c->n++] = (sac_chat_message){role, content};
    return 1;
}

/* Takes turns [from, from + count) out of the conversation, freeing what they own. */
static void drop_turns(conversation *c, int32_t from, int32_t count) {
    for (int32_t i = from; i < from + count; i++)
        if (c->owned[i]) free((char *)c->msg[i].content);
    memmove(c->msg + from, c->msg + from + count, (size_t)(c->n - from - count) * sizeof *c->msg);
    memmove(c->owned + from, c->owned + from + count, (size_t)(c->n - from - count));
    c->n -= count;
}

static void free_conversation(conversation *c) {
    drop_turns(c, 0, c->n);
    free(c->owned);
    free(c->msg);
}

/* Messages as prompt ids: the chat template applied, special tokens parsed, and BOS added
 * when the model asks for it and the template did not already write it. */
static int32_t chat_ids(sac_model *m, const sac_chat_message *msg, int32_t n_msg, int32_t **ids) {
    size_t len = 0;
    sac_status st = sac_chat_apply_template(m, NULL, 0, msg, n_msg, 1, NULL, 0, &len);
    if (st != SAC_OK && st != SAC_ERR_ARG) return fail("%s", sac_model_errmsg(m)), -1;
    if (len == SIZE_MAX) return fail("out of memory"), -1;
    char *text = malloc(len + 1);
    if (!text) return fail("out of memory"), -1;
    if (sac_chat_apply_template(m, NULL, 0, msg, n_msg, 1, text, len + 1, &len) != SAC_OK)
        return free(text), fail("%s", sac_model_errmsg(m)), -1;
    int32_t n = 0;
    st = sac_tokenize(m, text, len, SAC_TOKENIZE_SPECIAL, NULL, 0, &n);
    if (st != SAC_OK && st != SAC_ERR_ARG) return free(text), fail("%s", sac_model_errmsg(m)), -1;
    const int32_t bos = sac_token_bos(m);
    *ids = n < INT32_MAX ? malloc(((size_t)n + 1) * sizeof **ids) : NULL;
    if (!*ids) return free(text), fail("out of memory"), -1;
    if (sac_tokenize(m, text, len, SAC_TOKENIZE_SPECIAL, *ids + 1, n, &n) != SAC_OK)
        return free(text), free(*ids), *ids = NULL, fail("%s", sac_model_errmsg(m)), -1;
    free(text);
    if (sac_token_add_bos(m) && bos >= 0 && (n == 0 || (*ids)[1] != bos)) {
        (*ids)[0] = bos;
        return n + 1;
    }
    memmove(*ids, *ids + 1, (size_t)n * sizeof **ids);
    return n;
}

/* The prompt ids of the conversation's `head` leading messages and those from `from` on (into
 * `kept`, room for c->n messages). */
static int32_t ids_without(sac_model *m, const conversation *c, int32_t head, int32_t from, sac_chat_message *kept,
                           int32_t **ids) {
    memcpy(kept, c->msg, (size_t)head * sizeof *kept);
    memcpy(kept + head, c->msg + from, (size_t)(c->n - from) * sizeof *kept);
    return chat_ids(m, kept, head + c->n - from, ids);
}

/* The conversation's prompt ids as the model will read them, by the JS library's rule
 * (fitConversation in src/js/chat.mjs): all of it while the prompt leaves the reply room
 * (min(-n, half the context)); else without its oldest exchanges — a user message and what
 * follows it up to the next one, after the leading system messages — as few as bring the prompt
 * down to half the context (or all but the last, when none does). Those leave `c` for good (how
 * many: *dropped), so that the next turns keep what the context holds. */
static int32_t fit_conversation(sac_model *m, const options *o, int32_t n_ctx, conversation *c, int32_t **ids,
                                int32_t *dropped) {
    *dropped = 0;
    int32_t n = chat_ids(m, c->msg, c->n, ids);
    const int32_t half = n_ctx / 2, room = o->n_predict < half ? o->n_predict : half;
    if (n < 0 || (int64_t)n + room <= n_ctx) return n;
    int32_t head = 0, n_starts = 0;
    while (head < c->n && !strcmp(c->msg[head].role, "system")) head++;
    int32_t *starts = malloc((size_t)c->n * sizeof *starts); /* where each exchange begins */
    sac_chat_message *kept = malloc((size_t)c->n * sizeof *kept);
    if (!starts || !kept) return free(starts), free(kept), fail("out of memory"), -1;
    for (int32_t i = head; i < c->n; i++)
        if (!strcmp(c->msg[i].role, "user")) starts[n_starts++] = i;
    /* the fewest exchanges out (1 .. last) that bring the prompt to half, or (none does) all that
     * may go: the prompt shortens as exchanges go, so a binary search finds it */
    const int32_t last = n_starts - 1;
    int32_t lo = 1, hi = last, best = -1, best_n = 0, *best_ids = NULL;
    while (lo <= hi) {
        const int32_t j = lo + (hi - lo) / 2;
        int32_t *cand = NULL, cn = ids_without(m, c, head, starts[j], kept, &cand);
        if (cn < 0) return free(starts), free(kept), free(best_ids), -1;
        if (cn <= half || j == last) {
            free(best_ids);
            best_ids = cand, best_n = cn, best = j, hi = j - 1;
        } else {
            free(cand);
            lo = j + 1;
        }
    }
    free(kept);
    if (best < 0) return free(starts), n; /* one exchange: nothing may go */
    *dropped = starts[best] - head;
    free(starts);
    drop_turns(c, head, *dropped);
    free(*ids);
    *ids = best_ids;
    return best_n;
}

/* One line of stdin without its line ending (malloc'd), or NULL at the end or on an error. */
static char *read_line(int *oom) {
    char *line = NULL;
    size_t len = 0;
    int c;
    while ((c = getchar()) != EOF && c != '\n') {
        char ch = (char)c;
        if (!append(&line, &len, &ch, 1)) return *oom = 1, free(line), NULL;
    }
    if (c == EOF && !line) return NULL;
    if (len && line[len - 1] == '\r') len--;
    char nul = '\0';
    if (!append(&line, &len, &nul, 1)) return *oom = 1, free(line), NULL;
    return line;
}

/* Generates one reply to the conversation and adds it as the assistant's turn; the tokens
 * the last turn left in the context that the conversation starts with are kept (`held`). */
static int chat_turn(sac_model *m, sac_context *ctx, const options *o, conversation *c, const stop_set *stop,
                     held_tokens *held) {
    const int32_t n_ctx = sac_context_n_ctx(ctx);
    int32_t *ids = NULL, dropped, n = fit_conversation(m, o, n_ctx, c, &ids, &dropped);
    if (n < 0) return free(ids), 1;
    if (n == 0) return free(ids), fail("the prompt is empty");
    char *reply = NULL;
    int rc = generate_from(m, ctx, o, ids, n, NULL, 0, stop, &reply, held);
    free(ids);
    /* said once the turn went through, as the Node CLI learns it from the reply's first step */
    if (!rc && dropped == 1)
        fprintf(stderr, "saccade: the conversation outgrew the context (%d tokens): its oldest message is left out\n", n_ctx);
    else if (!rc && dropped)
        fprintf(stderr, "saccade: the conversation outgrew the context (%d tokens): its %d oldest messages are left out\n",
                n_ctx, dropped);
    if (!rc && !add_turn(c, "assistant", reply ? reply : "", reply != NULL)) rc = fail("out of memory");
    if (rc) free(reply);
    return rc;
}

static int cmd_chat(sac_model *m, const options *o) {
    if (o->tokens || o->bos || o->decoder_start) return fail("--chat does not take --tokens, --bos or --decoder-start");
    if (is_encdec(m)) return fail("--chat needs a decoder-only model; this model is encdec");
    if (o->n_predict == 0) return fail("--chat needs -n of at least 1: a turn with no reply");
    sac_model_info in;
    sac_model_get_info(m, &in);
    if (!in.has_tokenizer) return fail("chat needs a tokenizer; the file has no tokenizer.ggml.* metadata");
    int has_template = 0; /* an empty template is none, as sac_chat_apply_template takes it */
    for (int32_t i = 0; i < sac_model_n_metadata(m); i++) {
        const char *key, *value;
        sac_model_metadata(m, i, &key, &value);
        if (!strcmp(key, "tokenizer.chat_template")) has_template = value[0] != '\0';
    }
    if (!has_template)
        fprintf(stderr, "saccade: the model has no chat template (tokenizer.chat_template): the turns are plain text, "
                        "one per line\n");
    int32_t n_stop = 0;
    sac_status st = sac_token_eog(m, NULL, 0, &n_stop);
    if (st != SAC_OK && st != SAC_ERR_ARG) return fail("%s", sac_model_errmsg(m));
    stop_set stop = {malloc((size_t)(n_stop ? n_stop : 1) * sizeof(int32_t)), n_stop};
    if (!stop.ids) return fail("out of memory");
    if (sac_token_eog(m, stop.ids, n_stop, &n_stop) != SAC_OK) return free(stop.ids), fail("%s", sac_model_errmsg(m));
    sac_context *ctx = new_context(m, o, 0);
    conversation c = {0};
    held_tokens held = {0};
    int rc = !ctx;
    /* an empty --system adds no turn (templates disagree on an empty one: Python's Jinja writes
     * llama2's <<SYS>> block for it, @huggingface/jinja does not) */
    if (!rc && o->system && *o->system && !add_turn(&c, "system", (char *)o->system, 0)) rc = fail("out of memory");
    if (!rc && o->prompt) {
        rc = add_turn(&c, "user", (char *)o->prompt, 0) ? chat_turn(m, ctx, o, &c, &stop, &held) : fail("out of memory");
    } else {
        int oom = 0;
        for (char *line; !rc && (line = read_line(&oom));) {
            if (!*line) free(line); /* blank lines are no turn */
            else rc = add_turn(&c, "user", line, 1) ? chat_turn(m, ctx, o, &c, &stop, &held) : (free(line), fail("out of memory"));
        }
        if (!rc && oom) rc = fail("out of memory");
    }
    free_conversation(&c);
    free(held.ids);
    sac_context_free(ctx);
    free(stop.ids);
    return rc;
}

static int cmd_tokenize(sac_model *m, const options *o) {
    if (!o->text) return fail("tokenize needs --text TEXT");
    int32_t *ids = NULL, n = prompt_ids(m, o, &ids);
    if (n < 0) return 1;
    json_ids(stdout, ids, n);
    putchar('\n');
    free(ids);
    return 0;
}

/* An empty context for a bench round's next step; with `capture` (--attention-cost) capturing,
 * as the last round may have ended with capture off. */
static int bench_reset(sac_context *ctx, int capture) {
    sac_context_reset(ctx);
    return !capture || sac_attention_enable(ctx, 1) == SAC_OK;
}

/* One bench round: a prefill of np ids (an encoder-decoder model encodes them), then nd
 * single-token decoder evals at `depth`: after the prefill when depth is np, else in the
 * context reset and given the first `depth` ids (untimed). decode_ms[0] gets their time and
 * n[0] their count; with `alternate` (the context captures), capture is on for every other
 * token from token `first_on`, and decode_ms[1], n[1] get the captured tokens', [0] the
 * others'. Tokens side by side see the same depth and machine, so the two sums compare
 * capture's cost where separate runs, minutes apart, measured mostly the machine's drift. Any
 * failure is the command's failure. */
static int bench_round(sac_context *ctx, int encdec, const int32_t *ids, int32_t np, int32_t depth, int32_t nd,
                       int32_t n_vocab, int alternate, int32_t first_on, double *prefill_ms, double decode_ms[2],
                       int32_t n[2]) {
    if (!bench_reset(ctx, alternate)) return 0;
    double t0 = now_ms();
    if ((encdec ? sac_encode(ctx, ids, np, NULL) : sac_eval(ctx, ids, np, NULL, 0)) != SAC_OK) return 0;
    *prefill_ms = now_ms() - t0;
    if (depth != np) { /* the context at the decode's depth, untimed */
        if (!bench_reset(ctx, alternate)) return 0;
        if (depth > 0 && sac_eval(ctx, ids, depth, NULL, 0) != SAC_OK) return 0;
    }
    decode_ms[0] = decode_ms[1] = 0.0;
    n[0] = n[1] = 0;
    for (int32_t i = 0; i < nd; i++) {
        int32_t tok = (int32_t)(((uint64_t)i * 104729u + 7u) % (uint32_t)n_vocab);
        const int on = alternate && (i - first_on) % 2 == 0;
        /* outside the timing: turning capture on clears the one row the last token skipped */
        if (alternate && sac_attention_enable(ctx, on) != SAC_OK) return 0;
        const double t1 = now_ms();
        if (sac_eval(ctx, &tok, 1, NULL, 0) != SAC_OK) return 0;
        decode_ms[on] += now_ms() - t1;
        n[on]++;
    }
    return 1;
}

enum { BENCH_PROMPT_TOKENS = 128, BENCH_DECODE_TOKENS = 32 }; /* bench's lengths when the context allows */

/* bench's prompt and decode lengths, those not given (0) fitted to the context so that `bench
 * MODEL` runs on any model: a quarter of the context decoded (at most 32), the prompt the rest (at
 * most 128; all of it when the decode has its own depth or context); src/js/model.mjs's
 * benchLengths is the same rule. Given lengths stay, refused below when they do not fit. */
static int32_t bench_length_within(int64_t room, int32_t most) {
    return (int32_t)(room < 1 ? 1 : room > most ? most : room);
}

static void bench_lengths(int64_t n_ctx, int encdec, int depth_given, int32_t *np, int32_t *nd) {
    if (!*nd) *nd = bench_length_within(n_ctx / 4, BENCH_DECODE_TOKENS);
    if (!*np) *np = bench_length_within(encdec || depth_given ? n_ctx : n_ctx - *nd, BENCH_PROMPT_TOKENS);
}

/* Prefill and decode speed on synthetic ids (weights may be random): best of --repeat runs. */
static int cmd_bench(sac_model *m, const options *o) {
    sac_model_info in;
    sac_model_get_info(m, &in);
    const int encdec = is_encdec(m);
    if (encdec && o->decode_depth >= 0)
        return fail("--decode-depth: an encoder-decoder model decodes from an empty decoder context; leave it out");
    if (o->attention_cost && o->attention) return fail("--attention-cost turns capture on and off itself: leave out --attention");
    /* The context clamps its batch to its length: a huge --prompt-tokens allocates nothing. */
    sac_context *ctx = new_context(m, o, o->prompt_tokens ? o->prompt_tokens : BENCH_PROMPT_TOKENS);
    if (!ctx) return 1;
    const int64_t n_ctx = sac_context_n_ctx(ctx);
    int32_t np = o->prompt_tokens, nd = o->decode_tokens;
    bench_lengths(n_ctx, encdec, o->decode_depth >= 0, &np, &nd);
    /* an encoder-decoder model decodes from an empty decoder context after encoding the prompt */
    const int32_t depth = o->decode_depth < 0 ? np : o->decode_depth;
    if (o->attention_cost && nd < 2) {
        sac_context_free(ctx);
        return fail("--attention-cost needs --decode-tokens >= 2 (tokens with capture and without, by turns)");
    }
    const char *too_long = NULL;
    if (encdec)
        too_long = np > n_ctx || nd > n_ctx ? "--prompt-tokens and --decode-tokens must each fit in" : NULL;
    else if (o->decode_depth < 0)
        too_long = (int64_t)np + nd > n_ctx ? "--prompt-tokens + --decode-tokens exceed" : NULL;
    else if (np > n_ctx)
        too_long = "--prompt-tokens exceeds";
    else if ((int64_t)depth + nd > n_ctx)
        too_long = "--decode-depth + --decode-tokens exceed";
    if (too_long) {
        sac_context_free(ctx);
        return fail("%s the context length (%lld)", too_long, (long long)n_ctx);
    }
    const int32_t n_ids = depth > np ? depth : np;
    int32_t *ids = malloc((size_t)n_ids * sizeof *ids);
    if (!ids) return sac_context_free(ctx), fail("out of memory");
    for (int32_t i = 0; i < n_ids; i++) ids[i] = (int32_t)(((uint64_t)i * 7919u + 13u) % (uint32_t)in.n_vocab);
    /* --attention-cost: the sums of every round but the first (it pays the page faults of fresh
     * capture rows and the caches' warm-up; with --repeat 1 it is all there is), not the best
     * round, so the two halves stay paired; each round starts its turns at the other token */
    const int alternate = o->attention_cost;
    double best_prefill = INFINITY, best_decode = INFINITY, sum[2] = {0.0, 0.0};
    int64_t counted[2] = {0, 0}; /* tokens in sum[]: without capture, with */
    int rc = 0;
    for (int32_t r = 0; r < o->repeat && !rc; r++) {
        double prefill, decode[2];
        int32_t n[2];
        if (!bench_round(ctx, encdec, ids, np, depth, nd, in.n_vocab, alternate, r % 2, &prefill, decode, n))
            rc = fail("%s", sac_context_errmsg(ctx));
        else {
            if (prefill < best_prefill) best_prefill = prefill;
            if (decode[0] + decode[1] < best_decode) best_decode = decode[0] + decode[1];
            if (r > 0 || o->repeat == 1) {
                sum[0] += decode[0], sum[1] += decode[1];
                counted[0] += n[0], counted[1] += n[1];
            }
        }
    }
    if (!rc) {
        const char *type = "";
        for (int32_t i = 0; i < sac_model_n_tensors(m); i++) {
            const char *name, *t;
            sac_model_tensor(m, i, &name, &t, NULL, NULL);
            if (strstr(name, "ffn_up")) {
                type = t;
                break;
            }
        }
        printf("{\"engine\":\"saccade-native\",\"type\":\"%s\",\"threads\":%d,\"kv_type\":\"%s\",\"prompt_tokens\":%d,"
               "\"decode_tokens\":%d,\"decode_depth\":%d,\"prefill_tokens_per_s\":%.2f,",
               type, sac_context_n_threads(ctx), sac_kv_type_name(sac_context_kv_type(ctx)), np, nd, encdec ? 0 : depth,
               np / (best_prefill / 1e3));
        if (alternate) {
            printf("\"decode_tokens_per_s\":%.2f,\"decode_capture_tokens_per_s\":%.2f}\n",
                   counted[0] / (sum[0] / 1e3), counted[1] / (sum[1] / 1e3));
        } else {
            printf("\"decode_tokens_per_s\":%.2f}\n", nd / (best_decode / 1e3));
        }
    }
    free(ids);
    sac_context_free(ctx);
    return rc;
}

static int is_help(const char *arg) { return !strcmp(arg, "help") || !strcmp(arg, "--help") || !strcmp(arg, "-h"); }

int main(int argc, char **argv) {
    if (argc == 2 && !strcmp(argv[1], "--version")) return printf("saccade %s\n", SAC_VERSION), 0;
    if (argc < 2) return fputs(usage, stderr), 1;
    if (is_help(argv[1]) || (argc > 2 && argv[2][0] == '-' && is_help(argv[2]))) return fputs(usage, stdout), 0;
    if (argc < 3) return fputs(usage, stderr), 1;
    const char *cmd = argv[1];
    command c = 0;
    while (c < N_COMMANDS && strcmp(cmd, command_names[c])) c++;
    if (c == N_COMMANDS) return fail("unknown command '%s' (try: saccade help)", cmd);
    /* `saccade logits --tokens 1 m.gguf` would otherwise read "1" as an unknown option */
    struct stat st;
    if (argv[2][0] == '-' && stat(argv[2], &st) != 0)
        return fail("the model file comes before the options: saccade %s MODEL.gguf [options] ('%s' is not a file)", cmd,
                    argv[2]);
    options o;
    if (!parse_options(argc - 3, argv + 3, c, &o)) return 1;
    /* tokenize needs only the vocabulary: it also works on vocab-only GGUF files */
    sac_model *m = load_model(argv[2], c == CMD_TOKENIZE ? SAC_LOAD_VOCAB_ONLY : 0);
    if (!m) return 1;
    int rc = c == CMD_INFO       ? cmd_info(m)
             : c == CMD_LOGITS   ? cmd_logits(m, &o)
             : c == CMD_GENERATE ? (o.chat ? cmd_chat(m, &o) : o.system ? fail("--system needs --chat") : cmd_generate(m, &o))
             : c == CMD_TOKENIZE ? cmd_tokenize(m, &o)
                                 : cmd_bench(m, &o);
    sac_model_free(m);
    return rc;
}
