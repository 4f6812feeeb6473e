/* data.c — the character dataset: decode the text once, collect its characters, map the
 * text to ids, and cut windows out of it for training and validation. */
#include "data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_io.h"
#include "unicode.h"

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int32_t char_dataset_id(const char_dataset *d, uint32_t cp) {
    const uint32_t *hit = bsearch(&cp, d->codepoints, (size_t)d->n_vocab, sizeof cp, compare_u32);
    return hit ? (int32_t)(hit - d->codepoints) : -1;
}

void char_dataset_token_text(const char_dataset *d, int32_t id, char out[5]) {
    size_t n = sac_utf8_encode(d->codepoints[id], out);
    out[n] = '\0';
}

sac_status char_dataset_from_text(const char *text, size_t len, double train_fraction, char_dataset *out,
                                  sac_error *err) {
    memset(out, 0, sizeof *out);
    if (!(train_fraction > 0.0 && train_fraction < 1.0))
        return sac_fail(err, SAC_ERR_ARG, "train fraction %g is not in (0, 1)", train_fraction);
    if (!sac_utf8_valid((const uint8_t *)text, len))
        return sac_fail(err, SAC_ERR_ARG, "the text is not well-formed UTF-8");

    /* Pass 1: decode every character (at most one per byte). */
    uint32_t *cps = malloc((len ? len : 1) * sizeof *cps);
    if (!cps) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %zu characters", len);
    int64_t n = 0;
    for (size_t p = 0; p < len;) {
        size_t clen;
        sac_utf8_next((const uint8_t *)text + p, len - p, &cps[n++], &clen);
        p += clen;
    }

    /* The vocabulary: the distinct code points, sorted. */
    uint32_t *sorted = malloc((size_t)(n ? n : 1) * sizeof *sorted);
    if (!sorted) {
        free(cps);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for the vocabulary");
    }
    memcpy(sorted, cps, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_u32);
    int64_t n_vocab = 0;
    for (int64_t i = 0; i < n; i++)
        if (n_vocab == 0 || sorted[n_vocab - 1] != sorted[i]) sorted[n_vocab++] = sorted[i];
    out->codepoints = sorted;
    out->n_vocab = (int32_t)n_vocab;

    /* Pass 2: the text as ids, in place of the code points. */
    out->tokens = (int32_t *)cps;
    for (int64_t i = 0; i < n; i++) out->tokens[i] = char_dataset_id(out, cps[i]);
    out->n_tokens = n;
    out->n_train = (int64_t)((double)n * train_fraction);
    if (out->n_train < 2 || n - out->n_train < 2) {
        char_dataset_free(out);
        return sac_fail(err, SAC_ERR_ARG, "%lld characters are too few to split at %g", (long long)n,
                        train_fraction);
    }
    return SAC_OK;
}

sac_status char_dataset_load(const char *path, double train_fraction, char_dataset *out, sac_error *err) {
    memset(out, 0, sizeof *out);
    size_t len;
    uint8_t *text = read_file(path, &len);
    if (!text) return sac_fail(err, SAC_ERR_ARG, "cannot read '%s': %s", path, strerror(errno));
    sac_status st = char_dataset_from_text((const char *)text, len, train_fraction, out, err);
    free(text);
    return st;
}

void char_dataset_free(char_dataset *d) {
    free(d->codepoints);
    free(d->tokens);
    memset(d, 0, sizeof *d);
}

void char_dataset_train_batch(const char_dataset *d, int32_t B, int32_t T, train_rng *rng, int32_t *inputs,
                              int32_t *targets) {
    for (int32_t b = 0; b < B; b++) {
        /* the window [start, start + T] must lie in the training part */
        int64_t start = train_rng_below(rng, d->n_train - T);
        for (int32_t t = 0; t < T; t++) {
            inputs[(int64_t)b * T + t] = d->tokens[start + t];
            targets[(int64_t)b * T + t] = d->tokens[start + t + 1];
        }
    }
}

int64_t char_dataset_val_windows(const char_dataset *d, int32_t T, int32_t *last_len) {
    /* the last validation token has no target, so n_val - 1 positions are predicted */
    int64_t n_pred = d->n_tokens - d->n_train - 1;
    int64_t n = (n_pred + T - 1) / T;
    if (last_len) *last_len = (int32_t)(n_pred - (n - 1) * T);
    return n;
}

int32_t char_dataset_val_window(const char_dataset *d, int32_t T, int64_t w, int32_t *inputs, int32_t *targets) {
    int64_t n_pred = d->n_tokens - d->n_train - 1, start = d->n_train + w * T;
    int32_t n = (int32_t)(n_pred - w * T < T ? n_pred - w * T : T);
    for (int32_t t = 0; t < n; t++) {
        inputs[t] = d->tokens[start + t];
        targets[t] = d->tokens[start + t + 1];
    }
    return n;
}

sac_status char_vocab_make(const char_dataset *d, char_vocab *v, sac_error *err) {
    v->n = d->n_vocab + 1;
    v->texts = calloc((size_t)v->n, sizeof *v->texts);
    v->tokens = calloc((size_t)v->n, sizeof *v->tokens);
    v->types = calloc((size_t)v->n, sizeof *v->types);
    if (!v->texts || !v->tokens || !v->types) {
        char_vocab_free(v);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for the vocabulary");
    }
    for (int32_t i = 0; i < d->n_vocab; i++) {
        char_dataset_token_text(d, i, v->texts[i]);
        v->tokens[i] = v->texts[i];
        v->types[i] = 1; /* normal */
    }
    snprintf(v->texts[d->n_vocab], sizeof v->texts[0], "<unk>");
    v->tokens[d->n_vocab] = v->texts[d->n_vocab];
    v->types[d->n_vocab] = 2; /* unknown */
    return SAC_OK;
}

void char_vocab_free(char_vocab *v) {
    free(v->texts);
    free(v->tokens);
    free(v->types);
    memset(v, 0, sizeof *v);
}
