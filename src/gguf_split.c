/* gguf_split.c — joining the shards of a split GGUF model into one gguf_file (see gguf_split.h). */
#include "gguf_split.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static sac_status split_key(const gguf_file *f, const char *key, uint32_t max, uint32_t *out, sac_error *err) {
    sac_status st = sac_gguf_get_u32(f, key, out, err);
    if (st) return st;
    if (*out > max) return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' = %" PRIu32 " is above %" PRIu32, key, *out, max);
    return SAC_OK;
}

sac_status sac_gguf_shard_fail(sac_error *err, sac_status status, uint32_t i, uint32_t n) {
    if (!err) return status;
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    return sac_fail(err, status, "shard %" PRIu32 " of %" PRIu32 ": %s", i + 1, n, msg);
}

sac_status sac_gguf_split_place(const gguf_file *f, uint32_t *no, uint32_t *count, sac_error *err) {
    *no = 0;
    *count = 1;
    if (!sac_gguf_find_kv(f, "split.count")) return SAC_OK;
    sac_status st = split_key(f, "split.count", SAC_SPLIT_MAX, count, err);
    if (st) return st;
    if (*count == 0) return sac_fail(err, SAC_ERR_MODEL, "metadata key 'split.count' is 0");
    if (*count == 1 && !sac_gguf_find_kv(f, "split.no")) return SAC_OK; /* one file: split.no says nothing */
    if ((st = split_key(f, "split.no", SAC_SPLIT_MAX, no, err))) return st;
    if (*no >= *count)
        return sac_fail(err, SAC_ERR_MODEL, "metadata key 'split.no' = %" PRIu32 " is not below 'split.count' = %" PRIu32,
                        *no, *count);
    return SAC_OK;
}

/* Which shard merged tensor `index` came from (1-based, as the file names count). */
static uint32_t shard_of(const gguf_file *shards, uint64_t index) {
    uint32_t i = 0;
    while (index >= shards[i].n_tensors) index -= shards[i++].n_tensors;
    return i + 1;
}

static sac_status check_unique_names(gguf_file *out, const gguf_file *shards, sac_error *err) {
    sac_status st = sac_gguf_index_tensors(out, err);
    const gguf_tensor **p = out->by_name;
    if (st || !p) return st;
    for (uint64_t i = 1; i < out->n_tensors && !st; i++)
        if (p[i - 1]->name.len == p[i]->name.len && !memcmp(p[i - 1]->name.data, p[i]->name.data, (size_t)p[i]->name.len)) {
            uint32_t a = shard_of(shards, (uint64_t)(p[i - 1] - out->tensors));
            uint32_t b = shard_of(shards, (uint64_t)(p[i] - out->tensors));
            st = sac_fail(err, SAC_ERR_FORMAT, "tensor '%.*s' is in shard %" PRIu32 " and in shard %" PRIu32,
                          sac_gguf_clip(p[i]->name, 96), p[i]->name.data, a < b ? a : b, a < b ? b : a);
        }
    return st;
}

sac_status sac_gguf_join_split(gguf_file *out, gguf_file *shards, uint32_t n, sac_error *err) {
    memset(out, 0, sizeof *out);
    if (n < 1 || n > SAC_SPLIT_MAX) return sac_fail(err, SAC_ERR_ARG, "%" PRIu32 " shards (1 to %d)", n, SAC_SPLIT_MAX);
    uint32_t total_count = 0;
    uint64_t total = 0;
    sac_status st;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t no, count, tensors;
        if ((st = sac_gguf_split_place(&shards[i], &no, &count, err)))
            return sac_gguf_shard_fail(err, st, i, n);
        if (!sac_gguf_find_kv(&shards[i], "split.count"))
            return sac_fail(err, SAC_ERR_FORMAT, "shard %" PRIu32 " of %" PRIu32 " is not part of a split model (no 'split.count')",
                            i + 1, n);
        if (count != n)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "shard %" PRIu32 " of %" PRIu32 " has 'split.count' = %" PRIu32 ": it belongs to a model in %" PRIu32 " files",
                            i + 1, n, count, count);
        if (no != i)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "shard %" PRIu32 " of %" PRIu32 " has 'split.no' = %" PRIu32 " (it is shard %" PRIu32 "): the shards are out of order",
                            i + 1, n, no, no + 1);
        if ((st = split_key(&shards[i], "split.tensors.count", INT32_MAX, &tensors, err)))
            return sac_gguf_shard_fail(err, st, i, n);
        if (i == 0) total_count = tensors;
        else if (tensors != total_count)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "shard %" PRIu32 " of %" PRIu32 " has 'split.tensors.count' = %" PRIu32 ", shard 1 has %" PRIu32
                            ": the shards come from different models",
                            i + 1, n, tensors, total_count);
        if (!sac_add_u64(total, shards[i].n_tensors, &total))
            return sac_fail(err, SAC_ERR_FORMAT, "the shards' tensor counts overflow");
    }
    if (total != total_count)
        return sac_fail(err, SAC_ERR_FORMAT,
                        "the %" PRIu32 " shards hold %" PRIu64 " tensors but 'split.tensors.count' is %" PRIu32
                        ": a shard is missing or from another model",
                        n, total, total_count);

    *out = shards[0];
    out->kv = shards[0].kv; /* moved: shards[0] no longer frees it */
    shards[0].kv = NULL;
    shards[0].n_kv = 0;
    out->data_copy = NULL;
    out->by_name = NULL; /* (shards[0]'s, which indexes its own tensors) */
    out->tensors = NULL;
    out->n_tensors = 0;
    if (total > 0) {
        if (total > SIZE_MAX / sizeof *out->tensors || !(out->tensors = malloc((size_t)total * sizeof *out->tensors)))
            return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %" PRIu64 " tensors", total);
        for (uint32_t i = 0; i < n; i++) {
            if (shards[i].n_tensors)
                memcpy(out->tensors + out->n_tensors, shards[i].tensors, (size_t)shards[i].n_tensors * sizeof *out->tensors);
            out->n_tensors += shards[i].n_tensors;
        }
    }
    return check_unique_names(out, shards, err);
}
