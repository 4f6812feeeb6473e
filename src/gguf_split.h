/* gguf_split.h — models split over several GGUF files, as llama.cpp's gguf-split writes them.
 *
 * Each shard is a complete GGUF file holding some of the tensors; every shard carries
 * split.no (its 0-based index), split.count (the number of shards) and split.tensors.count
 * (the tensors of all shards together); only the first carries the rest of the model's
 * metadata. The files are named <prefix>-00001-of-0000N.gguf, numbered from 1. */
#ifndef SAC_GGUF_SPLIT_H
#define SAC_GGUF_SPLIT_H

#include <stdint.h>

#include "error.h"
#include "gguf.h"

/* The most shards a model has: split.count is a u16. */
#define SAC_SPLIT_MAX 65535

/* A parsed file's place in a split: *no = split.no, *count = split.count, both 0 and 1 when the
 * file is not split (no split.count key). A malformed value is SAC_ERR_MODEL naming the key. */
sac_status sac_gguf_split_place(const gguf_file *f, uint32_t *no, uint32_t *count, sac_error *err);

/* Prefixes err's message with "shard i+1 of n: " and returns `status`. */
sac_status sac_gguf_shard_fail(sac_error *err, sac_status status, uint32_t i, uint32_t n);

/* Joins `n` parsed shards, in order, into `out`: the first shard's metadata and every shard's
 * tensors, shard by shard. Refused (SAC_ERR_FORMAT, naming the shard and the key) unless shard i
 * says split.no = i and split.count = n, the shards agree on split.tensors.count and hold that
 * many tensors, and no tensor name is in two shards. The metadata array moves from shards[0]
 * into `out`; the tensors keep pointing into the shards' buffers, which must outlive `out`.
 * `out` is zeroed first and released with sac_gguf_release either way (before the shards). */
sac_status sac_gguf_join_split(gguf_file *out, gguf_file *shards, uint32_t n, sac_error *err);

#endif
