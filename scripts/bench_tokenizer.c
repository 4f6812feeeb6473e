/* bench_tokenizer.c — encoding throughput of the tokenizers on a text file.
 *
 *   make build/tools/bench_tokenizer
 *   build/tools/bench_tokenizer [vocab.gguf] [text] [repeats]
 *
 * Defaults: ../shared/data/vocab/ggml-vocab-gpt-2.gguf, ../shared/data/tinyshakespeare.txt, 5.
 * Tokenizes the whole file in one sac_tokenize call per repeat and prints the best run in
 * MB/s (10^6 bytes of input per second), plus a detokenizer pass for comparison and the
 * time sac_detokenize_pieces takes for the first 2000 tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "files.h"
#include "model.h"


static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    const char *vocab_path = argc > 1 ? argv[1] : "../shared/data/vocab/ggml-vocab-gpt-2.gguf";
    const char *text_path = argc > 2 ? argv[2] : "../shared/data/tinyshakespeare.txt";
    int repeats = argc > 3 ? atoi(argv[3]) : 5;
    if (repeats < 1) repeats = 1;

    size_t vocab_size = 0, text_size = 0;
    void *vocab = test_read_file(vocab_path, &vocab_size);
    char *text = test_read_file(text_path, &text_size);
    if (!vocab || !text) {
        fprintf(stderr, "bench_tokenizer: cannot read %s\n", vocab ? text_path : vocab_path);
        return 1;
    }
    /* a vocab-only file is no model: build the model's tokenizer by hand */
    struct sac_model model;
    memset(&model, 0, sizeof model);
    double t0 = now_seconds();
    if (sac_gguf_parse(&model.gguf, vocab, vocab_size, &model.error) ||
        sac_tokenizer_load(&model.gguf, &model.tokenizer, &model.error) || !model.tokenizer) {
        fprintf(stderr, "bench_tokenizer: %s: %s\n", vocab_path, model.error.msg[0] ? model.error.msg : "no tokenizer");
        return 1;
    }
    double load_s = now_seconds() - t0;

    int32_t n_tokens = 0;
    sac_tokenize(&model, text, text_size, 0, NULL, 0, &n_tokens); /* learn the size */
    int32_t *ids = malloc(((size_t)n_tokens + 1) * sizeof *ids);
    double best = 1e30;
    for (int r = 0; r < repeats; r++) {
        t0 = now_seconds();
        if (sac_tokenize(&model, text, text_size, 0, ids, n_tokens, &n_tokens) != SAC_OK) {
            fprintf(stderr, "bench_tokenizer: %s\n", model.error.msg);
            return 1;
        }
        double s = now_seconds() - t0;
        if (s < best) best = s;
    }

    sac_detokenizer *dt;
    sac_detokenizer_new(&model, &dt);
    size_t out_bytes = 0;
    t0 = now_seconds();
    for (int32_t i = 0; i < n_tokens; i++) {
        const char *piece;
        size_t len;
        sac_detokenizer_push(dt, ids[i], &piece, &len);
        out_bytes += len;
    }
    double detok_s = now_seconds() - t0;
    sac_detokenizer_free(dt);

    /* per-token pieces of the first 2000 tokens (a long prompt) in one call, as the page asks */
    int32_t n_pieces = n_tokens < 2000 ? n_tokens : 2000;
    size_t *ends = malloc(((size_t)n_pieces + 1) * sizeof *ends), pieces_len = 0;
    sac_detokenize_pieces(&model, ids, n_pieces, NULL, 0, ends, &pieces_len); /* learn the size */
    char *pieces = malloc(pieces_len + 1);
    double pieces_best = 1e30;
    for (int r = 0; r < repeats; r++) {
        t0 = now_seconds();
        if (sac_detokenize_pieces(&model, ids, n_pieces, pieces, pieces_len, ends, &pieces_len) != SAC_OK) {
            fprintf(stderr, "bench_tokenizer: %s\n", model.error.msg);
            return 1;
        }
        double s = now_seconds() - t0;
        if (s < pieces_best) pieces_best = s;
    }
    free(ends);
    free(pieces);

    printf("vocab %s: %d tokens, loaded in %.1f ms\n", vocab_path, sac_tokenizer_n_vocab(model.tokenizer),
           1e3 * load_s);
    printf("encode %s: %zu bytes -> %d tokens, best of %d: %.1f ms, %.2f MB/s\n", text_path, text_size, n_tokens,
           repeats, 1e3 * best, (double)text_size / best / 1e6);
    printf("detokenize: %zu bytes in %.1f ms, %.2f MB/s\n", out_bytes, 1e3 * detok_s,
           (double)out_bytes / detok_s / 1e6);
    printf("pieces: %d tokens -> %zu bytes in one sac_detokenize_pieces call, best of %d: %.3f ms\n", n_pieces,
           pieces_len, repeats, 1e3 * pieces_best);
    free(ids);
    sac_tokenizer_free(model.tokenizer);
    sac_gguf_release(&model.gguf);
    free(vocab);
    free(text);
    return 0;
}
