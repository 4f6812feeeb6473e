/* kv_attention.h — the two passes of attention over the keys and values of one query row (or
 * a tile of consecutive rows), for a block of heads at once: scores (q·k) and the weighted sum
 * of values.
 *
 * Two layouts of the rows: by head (each kv head's rows one after another, as the model's KV
 * cache keeps them: every head's pass is one sequential stream of memory), or interleaved
 * (a row holds every head, as the encoder's batch and the cross-attention keys do: the passes
 * then walk the rows in runs, the block's heads in turn over a run that stays cached).
 * Every score and every output value gets the same float operations, in the same
 * order, as one head at a time with sac_dot_f32 and sac_axpy_f32 would give: results do not
 * depend on the block, the thread, or the path (SIMD128, see simd.h, or plain C). A bf16 cache is
 * read as the f32 values it stands for, with the same operations as an f32 cache. A q8 cache
 * (by head only) is scored with integer dots against the query rounded to q8 the same way,
 * and its values mixed as scale × int8 (kv_attention.c says in which order). */
#ifndef SAC_KV_ATTENTION_H
#define SAC_KV_ATTENTION_H

#include <stdint.h>

/* Most heads one pass covers; the per-thread score scratch holds this many rows. */
#define SAC_KV_HEAD_BLOCK 16

/* Score rows per thread for a model of n_head heads. */
static inline int32_t sac_kv_block(int32_t n_head) { return n_head < SAC_KV_HEAD_BLOCK ? n_head : SAC_KV_HEAD_BLOCK; }

/* One query row's heads [h0, h1) over n_keys keys. */
typedef struct sac_kv_heads {
    const float *q;           /* the query row: head h at q + h × head_dim */
    const void *k, *v;        /* key j of kv head g at g × head_stride + j × kv_stride values
                                 (q8: row g × head_stride / head_dim + j of sac_kv_row_bytes) */
    int32_t kv_type;          /* what k and v hold: SAC_KV_F32, SAC_KV_BF16 or SAC_KV_Q8 (kv_cache.h) */
    int64_t kv_stride;        /* head_dim: by head; a row of every head: interleaved */
    int64_t head_stride;      /* by head: the rows a head has room for × head_dim; interleaved: head_dim */
    int32_t head_dim, group;  /* query heads per kv head */
    int32_t h0, h1;
    int32_t n_keys;
    int32_t own;              /* a key that stays visible even when masked (−1: none) */
    const uint8_t *key_mask;  /* 0 = hidden */
    float scale;
    float *const *rows;       /* rows[h − h0]: n_keys floats each */
} sac_kv_heads;

/* rows[h][j] ← q_h·k_j × scale, −∞ for hidden keys; max[h − h0] ← the largest (−∞ if none). */
void sac_kv_scores(const sac_kv_heads *a, float *max);

/* out_h ← Σ_j rows[h][j] · v_j, in key order, skipping zero weights; head h at out + h × head_dim. */
void sac_kv_mix(const sac_kv_heads *a, float *out);

/* The same passes for a tile of n query rows over the same keys (a prefill's consecutive
 * tokens): a[r] as the calls above take it for row r, all with the same cache, heads, key mask
 * and scale (they differ in q, n_keys, own and rows). Each run of keys comes from memory once
 * for up to SAC_KV_HEAD_BLOCK rows (more go in pieces that many), where row after row each read
 * every key; every score and value has the bits row by row gives. max: n × (h1 − h0), row r's
 * from r × (h1 − h0); out[r]: row r's output row. */
void sac_kv_scores_tile(const sac_kv_heads *a, int32_t n, float *max);
void sac_kv_mix_tile(const sac_kv_heads *a, int32_t n, float *const *out);

#endif
