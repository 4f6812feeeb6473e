/* test_cli.c — the native CLI from the inside: its option table's ranges, and that a failing
 * sac_eval or sac_encode at any step of bench, generate or logits is the command's failure
 * (its message on stderr, exit status 1, no JSON). The library calls are wrapped so that the
 * n-th one fails the way the library fails (a status and a message on the context). */
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "saccade.h"
#include "test_models.h"
#include "types.h"

static int32_t evals_until_failure = -1; /* -1: never fail */
static sac_status failing_eval(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask,
                               uint32_t flags);
static sac_status failing_encode(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask);

#define SAC_VERSION "test"
#define main saccade_main
#define sac_eval failing_eval
#define sac_encode failing_encode
#include "cli.c"
#undef main
#undef sac_eval
#undef sac_encode

/* Counts both calls; the one that reaches 0 fails (an empty eval: the library's own error). */
static int injected(void) {
    return evals_until_failure >= 0 && evals_until_failure-- == 0;
}
static sac_status failing_eval(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask,
                               uint32_t flags) {
    return injected() ? sac_eval(ctx, tokens, 0, NULL, 0) : sac_eval(ctx, tokens, n_tokens, key_mask, flags);
}
static sac_status failing_encode(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask) {
    return injected() ? sac_encode(ctx, tokens, 0, NULL) : sac_encode(ctx, tokens, n_tokens, key_mask);
}

/* ---------------------------------------------------------------------------------------- */

typedef struct cli_run {
    int status;
    char out[4096], err[1024];
} cli_run;

static void slurp(FILE *f, char *buf, size_t size) {
    fflush(f);
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = 0;
}

/* Runs `saccade ARGS...` in this process with stdout and stderr captured. */
static cli_run run(int argc, const char **argv) {
    cli_run r;
    FILE *out = tmpfile(), *err = tmpfile();
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    dup2(fileno(out), 1);
    dup2(fileno(err), 2);
    char *args[16] = {"saccade"};
    for (int i = 0; i < argc && i < 15; i++) args[i + 1] = (char *)argv[i];
    r.status = saccade_main(argc + 1, args);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    slurp(out, r.out, sizeof r.out);
    slurp(err, r.err, sizeof r.err);
    fclose(out);
    fclose(err);
    return r;
}

#define RUN_CLI(...) run(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *), (const char *[]){__VA_ARGS__})

static char gpt2_path[64], encdec_path[64];

static int write_model(const char *arch, char *path, size_t size) {
    test_model_spec s = test_spec(arch, SAC_TYPE_F32);
    test_model m;
    if (test_model_make(&s, &m)) return 0;
    snprintf(path, size, "/tmp/saccade_test_cli_%s_%d.gguf", arch, (int)getpid());
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(m.bytes, 1, m.size, f) == m.size;
    if (f) fclose(f);
    test_model_free(&m);
    return ok;
}

/* ---------------------------------------------------------------------------------------- */

/* parse_options with its message out of the way */
static int parses(command cmd, int argc, const char **argv, options *o) {
    fflush(stderr);
    int saved = dup(2);
    FILE *null = fopen("/dev/null", "w");
    dup2(fileno(null), 2);
    int ok = parse_options(argc, (char **)argv, cmd, o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(null);
    return ok;
}

static void test_option_ranges(void) {
    options o;
    struct {
        const char *name, *value;
        int ok;
    } cases[] = {
        {"-n", "0", 1}, {"-n", "2147483647", 1}, {"-n", "2147483648", 0}, {"-n", "-1", 0}, {"-n", " 3", 0},
        {"-n", "+3", 1}, {"-n", "0x10", 0}, {"-n", "", 0}, {"--threads", "256", 1}, {"--threads", "257", 0},
        {"--threads", "0", 0}, {"--seed", "-1", 0}, {"--seed", "-0", 1}, {"--seed", "18446744073709551615", 1},
        {"--seed", "18446744073709551616", 0}, {"--seed", " 1", 0}, {"--temp", "nan", 0}, {"--temp", "inf", 0},
        {"--temp", "1e40", 0}, {"--temp", "0x1p3", 0}, {"--temp", "-0.5", 0}, {"--temp", "5.", 1},
        {"--temp", ".5", 1}, {"--temp", ".", 0}, {"--temp", "1e", 0}, {"--top-p", "1", 1}, {"--top-p", "0", 0},
        {"--top-p", "1.00000005", 1}, {"--top-p", "1.0000001", 0}, {"--top-p", "1.0001", 0}, {"--top-k", "-1", 0},
        {"--repeat-penalty", "0", 0},
        {"--tokens", "1,2", 1}, {"--tokens", "1,", 0}, {"--tokens", "-1", 0}, {"--tokens", "2147483648", 0},
        {"--tokens", "1, 2", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[] = {cases[i].name, cases[i].value};
        CHECK_MSG(parses(CMD_GENERATE, 2, argv, &o) == cases[i].ok, "%s '%s'", cases[i].name, cases[i].value);
    }
    const char *seed[] = {"--seed", "18446744073709551615", "--temp", "1e-50", "--top-p", "1.00000005"};
    CHECK(parses(CMD_GENERATE, 6, seed, &o) && o.sampling.seed == UINT64_MAX && o.sampling.temperature == 0.0f &&
          o.sampling.top_p == 1.0f);
    const char *huge[] = {"--prompt-tokens", "2147483647", "--decode-tokens", "2147483647"};
    CHECK(parses(CMD_BENCH, 4, huge, &o) && o.prompt_tokens == INT32_MAX && o.decode_tokens == INT32_MAX);
    const char *not_taken[] = {"--all"}, *missing[] = {"--seed"}, *unknown[] = {"--bogus"};
    CHECK(!parses(CMD_GENERATE, 1, not_taken, &o) && !parses(CMD_GENERATE, 1, missing, &o) &&
          !parses(CMD_GENERATE, 1, unknown, &o));
}

static void test_bench_sums_in_64_bits(void) {
    cli_run r = RUN_CLI("bench", gpt2_path, "--prompt-tokens", "2147483647", "--decode-tokens", "2147483647");
    CHECK_MSG(r.status == 1 && !*r.out, "status %d, stdout %s", r.status, r.out);
    CHECK_MSG(strstr(r.err, "exceed the context length (48)"), "%s", r.err);
}

/* Every eval (and encode) of a command, failed in turn: the command fails with the message. */
static void fail_each_call(const char *what, int n_calls, cli_run (*invoke)(void)) {
    for (int k = 0; k < n_calls; k++) {
        evals_until_failure = k;
        cli_run r = invoke();
        evals_until_failure = -1;
        CHECK_MSG(r.status == 1, "%s: call %d failed but the status is %d", what, k, r.status);
        CHECK_MSG(!*r.out, "%s: call %d failed but stdout has %s", what, k, r.out);
        CHECK_MSG(strstr(r.err, "no ") && strstr(r.err, "n_tokens = 0"), "%s: call %d: stderr %s", what, k, r.err);
    }
    cli_run r = invoke();
    CHECK_MSG(r.status == 0 && *r.out == '{', "%s without a failure: %d %s", what, r.status, r.err);
}

/* 2 rounds of 1 prefill + 3 decode steps = 8 calls */
static cli_run bench_gpt2(void) {
    return RUN_CLI("bench", gpt2_path, "--prompt-tokens", "4", "--decode-tokens", "3", "--repeat", "2");
}
/* 2 rounds of 1 prefill + the context at depth 2 + 3 decode steps = 10 calls */
static cli_run bench_gpt2_depth(void) {
    return RUN_CLI("bench", gpt2_path, "--prompt-tokens", "4", "--decode-tokens", "3", "--repeat", "2",
                   "--decode-depth", "2");
}
static cli_run bench_encdec(void) {
    return RUN_CLI("bench", encdec_path, "--prompt-tokens", "4", "--decode-tokens", "3", "--repeat", "2");
}
/* 1 prefill + 4 steps (the 5th token is not evaluated) */
static cli_run generate_gpt2(void) {
    return RUN_CLI("generate", gpt2_path, "--tokens", "1,2,3", "-n", "5", "--temp", "0", "--ignore-eos");
}
/* encode + decoder start + 4 steps */
static cli_run generate_encdec(void) {
    return RUN_CLI("generate", encdec_path, "--tokens", "5,6,7", "--decoder-start", "1", "-n", "5", "--temp", "0",
                   "--ignore-eos");
}
static cli_run logits_encdec(void) {
    return RUN_CLI("logits", encdec_path, "--tokens", "1,2", "--source", "5,6,7", "--all");
}

static void test_every_eval_failure_is_an_error(void) {
    fail_each_call("bench gpt2", 8, bench_gpt2);
    fail_each_call("bench gpt2 --decode-depth 2", 10, bench_gpt2_depth);
    fail_each_call("bench encdec", 8, bench_encdec);
    fail_each_call("generate gpt2", 5, generate_gpt2);
    fail_each_call("generate encdec", 6, generate_encdec);
    fail_each_call("logits encdec", 2, logits_encdec);
}

/* --attention-cost: both speeds, from decode tokens taken by turns; misuse refused. */
static void test_bench_attention_cost(void) {
    const char *models[] = {gpt2_path, encdec_path};
    for (int i = 0; i < 2; i++) {
        cli_run r = RUN_CLI("bench", models[i], "--prompt-tokens", "4", "--decode-tokens", "3", "--repeat", "3",
                            "--attention-cost");
        CHECK_MSG(r.status == 0 && strstr(r.out, "\"decode_tokens_per_s\":") &&
                      strstr(r.out, ",\"decode_capture_tokens_per_s\":") && !strstr(r.out, ":0.00") &&
                      !strstr(r.out, "inf") && !strstr(r.out, "nan"),
                  "%s: %s %s", models[i], r.out, r.err);
    }
    cli_run r = RUN_CLI("bench", gpt2_path, "--prompt-tokens", "4", "--decode-tokens", "2", "--repeat", "1");
    CHECK_MSG(r.status == 0 && !strstr(r.out, "capture"), "%s", r.out);
    r = RUN_CLI("bench", gpt2_path, "--decode-tokens", "1", "--attention-cost");
    CHECK_MSG(r.status == 1 && strstr(r.err, "--attention-cost needs --decode-tokens >= 2"), "%s", r.err);
    r = RUN_CLI("bench", gpt2_path, "--attention-cost", "--attention");
    CHECK_MSG(r.status == 1 && strstr(r.err, "leave out --attention"), "%s", r.err);
}

static void test_encdec_commands(void) {
    cli_run r = RUN_CLI("generate", encdec_path, "--tokens", "5,6,7");
    CHECK_MSG(r.status == 1 && strstr(r.err, "no BOS token to start the decoder with: give --decoder-start"), "%s",
              r.err);
    r = RUN_CLI("logits", encdec_path, "--tokens", "1");
    CHECK_MSG(r.status == 1 && strstr(r.err, "needs --source"), "%s", r.err);
    r = RUN_CLI("bench", encdec_path, "--prompt-tokens", "48", "--decode-tokens", "48", "--repeat", "1");
    CHECK_MSG(r.status == 0 && strstr(r.out, "\"prompt_tokens\":48,\"decode_tokens\":48"), "%s", r.err);
    CHECK_MSG(!strstr(r.out, ":0.00"), "%s", r.out);
    r = RUN_CLI("bench", encdec_path, "--prompt-tokens", "49", "--decode-tokens", "1");
    CHECK_MSG(r.status == 1 && strstr(r.err, "must each fit in the context length (48)"), "%s", r.err);
}

static void test_chat_and_version(void) {
    cli_run r = RUN_CLI("generate", gpt2_path, "--chat", "--prompt", "hi");
    CHECK_MSG(r.status == 1 && !*r.out && !strcmp(r.err, "saccade: chat needs a tokenizer; the file has no tokenizer.ggml.* metadata\n"),
              "%d %s", r.status, r.err);
    r = RUN_CLI("generate", encdec_path, "--chat", "--prompt", "hi");
    CHECK_MSG(r.status == 1 && strstr(r.err, "--chat needs a decoder-only model; this model is encdec"), "%s", r.err);
    r = RUN_CLI("generate", gpt2_path, "--system", "x", "--tokens", "1");
    CHECK_MSG(r.status == 1 && !strcmp(r.err, "saccade: --system needs --chat\n"), "%s", r.err);
    r = RUN_CLI("--version");
    CHECK_MSG(r.status == 0 && !strcmp(r.out, "saccade test\n"), "%d %s", r.status, r.out);
}

int main(void) {
    if (!write_model("gpt2", gpt2_path, sizeof gpt2_path) || !write_model("encdec", encdec_path, sizeof encdec_path)) {
        fprintf(stderr, "cannot write the test models\n");
        return 1;
    }
    RUN(test_option_ranges);
    RUN(test_bench_sums_in_64_bits);
    RUN(test_every_eval_failure_is_an_error);
    RUN(test_bench_attention_cost);
    RUN(test_encdec_commands);
    RUN(test_chat_and_version);
    remove(gpt2_path);
    remove(encdec_path);
    return check_summary("test_cli");
}
