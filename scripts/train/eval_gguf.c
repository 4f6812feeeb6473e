/* eval_gguf.c — validation loss through sac_model_load, sac_tokenize and sac_eval. */
#include "eval_gguf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "saccade.h"

/* −log softmax(z)[target], in double. */
static double cross_entropy(const float *z, int32_t V, int32_t target) {
    double max = z[0], sum = 0.0;
    for (int32_t i = 1; i < V; i++)
        if (z[i] > max) max = z[i];
    for (int32_t i = 0; i < V; i++) sum += exp((double)z[i] - max);
    return log(sum) - ((double)z[target] - max);
}

/* The validation part as UTF-8 text. */
static char *val_text(const char_dataset *d, size_t *len) {
    const int64_t n = d->n_tokens - d->n_train;
    char *text = malloc((size_t)n * 4 + 1);
    if (!text) return NULL;
    size_t at = 0;
    for (int64_t i = 0; i < n; i++) {
        char piece[5];
        char_dataset_token_text(d, d->tokens[d->n_train + i], piece);
        size_t k = strlen(piece);
        memcpy(text + at, piece, k);
        at += k;
    }
    *len = at;
    return text;
}

sac_status eval_gguf_val_loss(const void *gguf, size_t size, const char_dataset *d, int32_t T, int32_t n_threads,
                              int64_t max_windows, double *loss, sac_error *err) {
    sac_model *model = NULL;
    sac_context *ctx = NULL;
    char *text = NULL;
    int32_t *ids = NULL;
    sac_status st = sac_model_load(gguf, size, 0, &model);
    if (st) {
        sac_fail(err, st, "cannot load the model: %s", model ? sac_model_errmsg(model) : "out of memory");
        goto done;
    }

    /* the model's tokenizer must give exactly the dataset's ids */
    size_t len = 0;
    const int64_t n_val = d->n_tokens - d->n_train;
    text = val_text(d, &len);
    ids = malloc((size_t)n_val * sizeof *ids);
    if (!text || !ids) {
        st = sac_fail(err, SAC_ERR_NOMEM, "out of memory for the validation text");
        goto done;
    }
    int32_t n_ids = 0;
    if ((st = sac_tokenize(model, text, len, 0, ids, (int32_t)n_val, &n_ids))) {
        sac_fail(err, st, "cannot tokenize the validation text: %s", sac_model_errmsg(model));
        goto done;
    }
    if (n_ids != n_val) {
        st = sac_fail(err, SAC_ERR_MODEL, "the model's tokenizer gives %d ids for %lld characters", n_ids,
                      (long long)n_val);
        goto done;
    }
    for (int64_t i = 0; i < n_val; i++)
        if (ids[i] != d->tokens[d->n_train + i]) {
            st = sac_fail(err, SAC_ERR_MODEL, "the model's tokenizer gives id %d at character %lld, the dataset %d",
                          ids[i], (long long)i, d->tokens[d->n_train + i]);
            goto done;
        }

    sac_context_params params = sac_context_default_params();
    params.n_ctx = T;
    params.n_batch = T;
    params.n_threads = n_threads;
    if ((st = sac_context_new(model, &params, &ctx))) {
        sac_fail(err, st, "cannot make a context: %s", ctx ? sac_context_errmsg(ctx) : "out of memory");
        goto done;
    }

    /* windows as char_dataset_val_window cuts them: ids[w·T .. w·T + n], targets one later */
    int32_t last_len;
    int64_t n_windows = char_dataset_val_windows(d, T, &last_len);
    if (max_windows > 0 && max_windows < n_windows) n_windows = max_windows;
    double sum = 0.0;
    int64_t count = 0;
    for (int64_t w = 0; w < n_windows; w++) {
        const int32_t *in = ids + w * T;
        const int32_t n = (int32_t)(n_val - 1 - w * T < T ? n_val - 1 - w * T : T);
        sac_context_reset(ctx);
        if ((st = sac_eval(ctx, in, n, NULL, SAC_EVAL_ALL_LOGITS))) {
            sac_fail(err, st, "sac_eval failed: %s", sac_context_errmsg(ctx));
            goto done;
        }
        int32_t rows, V;
        const float *logits = sac_logits(ctx, &rows, &V);
        for (int32_t t = 0; t < n; t++) sum += cross_entropy(logits + (int64_t)t * V, V, in[t + 1]);
        count += n;
    }
    *loss = sum / (double)count;
done:
    sac_context_free(ctx);
    sac_model_free(model);
    free(text);
    free(ids);
    return st;
}
