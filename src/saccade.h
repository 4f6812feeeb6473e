/* saccade.h — the public C API of the saccade inference engine.
 *
 * A reader follows one token: sac_eval() runs the transformer over a batch of token ids,
 * leaves logits in the context, and sac_sample() picks the next id from them.
 *
 * Conventions (after SQLite):
 *   - every name starts with sac_; handles are opaque;
 *   - every function that can fail returns a sac_status and leaves a readable message on
 *     its handle (sac_model_errmsg / sac_context_errmsg); a message stays until the next
 *     failing call on the same handle;
 *   - sizes are explicit; pointers returned by the library stay owned by the library and
 *     are valid until the documented event (usually the next call on the same handle);
 *   - no global state: two models or two contexts never share anything mutable.
 */
#ifndef SACCADE_H
#define SACCADE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sac_status {
    SAC_OK = 0,
    SAC_ERR_ARG = 1,         /* an argument is invalid (NULL, out of range, NaN, ...) */
    SAC_ERR_NOMEM = 2,       /* an allocation failed */
    SAC_ERR_FORMAT = 3,      /* the GGUF bytes are malformed or truncated */
    SAC_ERR_UNSUPPORTED = 4, /* well-formed, but an architecture or type saccade lacks */
    SAC_ERR_MODEL = 5,       /* a tensor or hyperparameter the architecture needs is missing or wrong */
    SAC_ERR_CONTEXT = 6,     /* the context is full (prompt longer than the context) */
    SAC_ERR_STATE = 7,       /* the call is not valid now (e.g. sampling before any eval) */
} sac_status;

/* A short constant name for a status ("SAC_ERR_FORMAT"). */
const char *sac_status_name(sac_status status);

/* ------------------------------------------------------------------------------------------
 * Models: immutable weights and hyperparameters parsed from a GGUF buffer.
 * ---------------------------------------------------------------------------------------- */
typedef struct sac_model sac_model;

enum {
    /* The model takes ownership of `data`, which must come from malloc(); it is freed by
     * sac_model_free (also when loading fails). Without this flag the caller keeps `data`
     * alive and unchanged until sac_model_free. */
    SAC_LOAD_TAKE_OWNERSHIP = 1,
    /* Reads only the metadata and the tokenizer (no architecture, no tensors): enough to
     * tokenize with a vocab-only GGUF file. Such a model cannot make contexts. */
    SAC_LOAD_VOCAB_ONLY = 2,
};

/* Parses a GGUF file held in memory. Tensor data is used in place when the buffer is
 * suitably aligned, otherwise the data section is copied once.
 * A file is refused (with a message naming the key or tensor) unless everything in it is
 * something saccade computes with as the file means it:
 *   - every hyperparameter in range: dimensions 1..2^20 (layers 1..4096), heads dividing the
 *     width, KV heads dividing the heads, the normalisation epsilon in [0, 1] (not NaN/inf),
 *     the RoPE base in [1, FLT_MAX] (so angles stay within the position), rotary dims even;
 *   - every <arch>.* key is one the architecture reads, or holds the value saccade implements
 *     (vocab_size = the embedding rows, rope.scaling.type "none" or "linear" (not "yarn" or
 *     "longrope"), expert_count 0, ...); keys outside <arch>.* (general.*, tokenizer.*) only
 *     describe;
 *   - every tensor is one the architecture binds as llama.cpp does (llama: optional Q/K/V/output
 *     biases and rope_freqs.weight, whose factors must be positive; qwen2: Q/K/V biases; gemma:
 *     no output.weight, its output is token_embd; phi3: fused attn_qkv and gate|up ffn_up, no
 *     LongRoPE factors; its attention.sliding_window is read as llama.cpp reads it: not at all);
 *   - every weight is finite, read from the bits that decide it (a float's exponent, a
 *     quantized block's scales; values are decoded only to name the first bad one): natively,
 *     GPT-2 small loads in 10 ms as Q8_0, 6 ms as Q4_0 or Q4_K, 3 ms as Q6_K, 22 ms as F16
 *     and 48 ms as F32 (a read of its 652 MB), where decoding every value took 60, 116, 68,
 *     251, 330 and 84 ms (AMD EPYC, Zen 1); the shipped models in under 1 ms;
 *   - keys and tensor names are well-formed UTF-8 without NUL, general.architecture too.
 * SAC_LOAD_VOCAB_ONLY checks only the container and the tokenizer.
 * Like sqlite3_open, *out receives a handle even when loading fails (so that
 * sac_model_errmsg can explain why); only on SAC_ERR_NOMEM may *out be NULL.
 * The handle must always be released with sac_model_free. */
sac_status sac_model_load(const void *data, size_t size, uint32_t flags, sac_model **out);
/* A model split over n files by llama.cpp's gguf-split (named <prefix>-00001-of-0000N.gguf):
 * data[i] and sizes[i] are file i + 1, in order. Each shard is parsed and checked as
 * sac_model_load checks a file; then shard i must say split.no = i and split.count = n, the
 * shards must agree on split.tensors.count and hold that many tensors between them, and no tensor
 * may be in two shards — else SAC_ERR_FORMAT with a message naming the shard and the key. The
 * metadata is the first shard's. n = 1 is sac_model_load (the same checks and messages); sac_model_load
 * refuses a file that is one shard of several (SAC_ERR_ARG), except the first shard under
 * SAC_LOAD_VOCAB_ONLY (it holds the tokenizer). With SAC_LOAD_TAKE_OWNERSHIP the
 * model owns every buffer (freed also on failure). As sac_model_load, *out receives a handle
 * even on failure, except on SAC_ERR_NOMEM. */
sac_status sac_model_load_split(const void *const *data, const size_t *sizes, int32_t n, uint32_t flags,
                                sac_model **out);
void sac_model_free(sac_model *model);
const char *sac_model_errmsg(const sac_model *model);

typedef struct sac_model_info {
    const char *architecture; /* "gpt2", "llama", "qwen2", "gemma", "phi3" or "encdec" */
    const char *name;         /* general.name, or "" */
    int32_t n_vocab;
    int32_t n_ctx;            /* context length the model was trained for */
    int32_t n_embd;
    int32_t n_ff;
    int32_t n_layer;
    int32_t n_head;
    int32_t n_head_kv;
    int32_t head_dim;
    int32_t rope_dim;         /* llama, qwen2, gemma, phi3: rotary dimensions; gpt2: 0 */
    float rope_freq_base;     /* llama, qwen2, gemma, phi3: RoPE base; gpt2: 0 */
    float norm_eps;
    int32_t tied_output;      /* 1 when the output projection reuses token_embd */
    int32_t has_tokenizer;    /* 1 when the file carries tokenizer.ggml.* metadata */
    uint64_t n_params;        /* values in all tensors */
    uint64_t n_bytes;         /* bytes of tensor data */
    uint32_t gguf_version;
    int32_t n_encoder_layer;  /* "encdec": encoder blocks (n_layer counts decoder blocks); else 0 */
    int32_t rope_neox;        /* 1: RoPE rotates pairs (i, i + rope_dim/2) (qwen2, gemma, phi3); 0: (2i, 2i+1) */
    float rope_freq_scale;    /* linear RoPE scaling: angles × this (1 / rope.scaling.factor); 1 unscaled */
    int32_t rope_freq_factors; /* 1 when rope_freqs.weight divides each pair's frequency (Llama 3.x) */
} sac_model_info;

void sac_model_get_info(const sac_model *model, sac_model_info *info);

/* Tensors, in file order: name, type name ("F32", "Q8_0", "Q4_K", ...), dims. The name
 * stays valid until the next sac_model_tensor or sac_model_metadata call on the model. */
int32_t sac_model_n_tensors(const sac_model *model);
sac_status sac_model_tensor(sac_model *model, int32_t index, const char **name,
                            const char **type_name, int32_t *n_dims, int64_t dims[4]);

/* The index of the tensor named `name` (as sac_model_tensor lists it), or -1 when there is none. */
int32_t sac_model_tensor_find(const sac_model *model, const char *name);

/* Reads rows [row_from, row_from + n_rows) of tensor `index` as float32, dequantized as the
 * engine computes with them. A row is dims[0] values; a tensor has dims[1]·dims[2]·dims[3] rows
 * (a 1-D tensor is one row). `out` holds out_len floats and needs n_rows·dims[0]. Fails with
 * SAC_ERR_ARG (message on the model) for a bad index or row range or a short `out`, SAC_ERR_STATE
 * for a vocab-only model (no tensor data). Example: learned positions of gpt2,
 * sac_model_tensor_read(m, sac_model_tensor_find(m, "position_embd.weight"), 0, n_ctx, out, len). */
sac_status sac_model_tensor_read(sac_model *model, int32_t index, int32_t row_from, int32_t n_rows, float *out,
                                 size_t out_len);

/* Metadata, in file order. The value is rendered as text: numbers in decimal, strings whole,
 * arrays as "[type; count]" (arrays are not expanded). Strings from the file (values, and
 * general.name in sac_model_info) come out as well-formed UTF-8: each ill-formed subpart
 * becomes U+FFFD as JavaScript's TextDecoder reads it, and so does a NUL byte. The returned
 * pointers stay valid until the next sac_model_metadata or sac_model_tensor call on the
 * same model. */
int32_t sac_model_n_metadata(const sac_model *model);
sac_status sac_model_metadata(sac_model *model, int32_t index, const char **key, const char **value);

/* ------------------------------------------------------------------------------------------
 * Contexts: the mutable state of one decoding stream — KV cache, scratch buffers, the
 * thread pool, logits, attention capture and the sampler. A context borrows its model,
 * which must outlive it.
 * ---------------------------------------------------------------------------------------- */
typedef struct sac_context sac_context;

/* The context length n_ctx = 0 asks for, unless the model was trained on fewer tokens: a model
 * declaring 32 768 tokens would otherwise make an 805 MB F32 KV cache by default. */
#define SAC_DEFAULT_N_CTX 4096

typedef struct sac_context_params {
    int32_t n_ctx;             /* tokens the KV cache holds; 0 → SAC_DEFAULT_N_CTX or the model's
                                  training length if shorter (ask for more explicitly) */
    int32_t n_batch;           /* most tokens evaluated in one pass; longer inputs are split; 0 → 64 */
    int32_t n_threads;         /* threads including the caller; 0 or 1 → no worker threads */
    int32_t capture_attention; /* 1 → keep every softmax probability (see sac_attention_*) */
    int32_t no_positions;      /* 1 → run the model without its position information (to show
                                  that attention alone is permutation-equivariant): gpt2's learned
                                  position embeddings are not added, encdec's sinusoids are not
                                  added, llama-like models skip RoPE; 0 → as trained */
    int32_t capture_scores;    /* 1 → while capture is on, keep the pre-softmax scores q·k/√d too
                                  (sac_attention_scores_rows); doubles the capture's memory */
    int32_t capture_qk;        /* 1 → keep every layer's query and key vectors (sac_context_qk) */
    const uint8_t *ablate_heads; /* NULL, or n_layer × n_head bytes (layer-major): 1 zeroes that
                                  decoder self-attention head's output before the output
                                  projection (copied; change it with sac_context_set_ablation) */
    int32_t kv_type;           /* element type of the self-attention KV cache (sac_kv_type); 0 → f32 */
} sac_context_params;

/* What the KV cache holds. F32 is exact. BF16 rounds each key and value to bfloat16 (nearest,
 * ties to even) as it is written, halving the cache's bytes and what attention reads per token
 * at long contexts; attention then computes in f32 on the rounded values. Q8 keeps each head's
 * key and value rows as 8-bit integers with one f32 scale per 32 values (GGML's q8_0 idea:
 * 72 bytes for a 64-value row, against bf16's 128), and scores the keys with integer dot
 * products against the query rounded the same way; its error is about 1% of a logit where
 * bf16's is 0.1%. Every type gives the same bits on every build and thread count. Q8 needs
 * head_dim <= SAC_KV_Q8_MAX_HEAD_DIM. Encoder–decoder cross-attention keys and values stay f32
 * (one source, written once per sac_encode). */
typedef enum sac_kv_type {
    SAC_KV_F32 = 0,
    SAC_KV_BF16 = 1,
    SAC_KV_Q8 = 2,
} sac_kv_type;

/* The largest head_dim a q8 cache takes (attention rounds the query into a row this long on the stack). */
#define SAC_KV_Q8_MAX_HEAD_DIM 256

/* "f32", "bf16", "q8"; NULL for a value that is not a KV cache type (so callers can list them all). */
const char *sac_kv_type_name(int32_t type);

sac_context_params sac_context_default_params(void);

/* As sac_model_load: *out receives a handle even on failure, except on SAC_ERR_NOMEM. */
sac_status sac_context_new(const sac_model *model, const sac_context_params *params, sac_context **out);
void sac_context_free(sac_context *ctx);
const char *sac_context_errmsg(const sac_context *ctx);

/* Bytes a context with these parameters allocates (KV cache, activations, logits of one
 * batch, sampler; with capture_attention, the capture of a full context too), with n_ctx = 0
 * resolved as sac_context_new resolves it. Lets a host check a memory budget before
 * sac_context_new. Returns 0 for a NULL or unloaded model and for parameters sac_context_new
 * refuses (call it to learn why), UINT64_MAX when the size does not fit in 64 bits. */
uint64_t sac_context_memory(const sac_model *model, const sac_context_params *params);

/* Forgets every token, and an encoder-decoder context its source: the next eval starts at
 * position 0. */
void sac_context_reset(sac_context *ctx);
/* Keeps the first n_keep tokens and forgets the rest: the next eval continues at position
 * n_keep, and its logits and attention are the same bits as if the kept tokens had just been
 * evaluated with it (the kernels' results do not depend on how tokens were batched). A host
 * reuses what a new prompt shares with the tokens already evaluated, as a chat's next turn
 * shares the earlier turns. Captured attention rows from n_keep on are forgotten, and with
 * capture off all of them; score and q/k capture that began after the kept tokens were
 * evaluated still lack theirs; an encoder-decoder context keeps its source, n_keep = 0 too
 * (sac_context_reset forgets the source as well). SAC_ERR_ARG unless 0 <= n_keep <=
 * sac_context_n_past. */
sac_status sac_context_truncate(sac_context *ctx, int32_t n_keep);
/* Tokens currently in the KV cache. */
int32_t sac_context_n_past(const sac_context *ctx);
/* The context's length and threads; 0 for a context that failed to initialise. */
int32_t sac_context_n_ctx(const sac_context *ctx);
int32_t sac_context_n_threads(const sac_context *ctx);
/* Replaces the context's worker threads with n_threads (counting the caller; 0 or 1 → none),
 * between calls on it, never during one. Results are the same bits on every thread count, so a
 * host may start on fewer threads while its platform's workers start (in wasm, a page's first
 * token need not wait for the thread pool) and add them later. Like sac_context_new it keeps
 * the threads it could start (sac_context_n_threads tells); out of memory, it runs on the
 * threads it had, or on one. */
sac_status sac_context_set_threads(sac_context *ctx, int32_t n_threads);
/* The KV cache's element type (sac_kv_type). */
int32_t sac_context_kv_type(const sac_context *ctx);

enum {
    SAC_EVAL_ALL_LOGITS = 1, /* keep the logits of every evaluated token, not only the last */
};

/* Appends n_tokens ids to the context and runs the model over them (causal masked
 * attention over everything before). When `key_mask` is not NULL, key_mask[i] == 0 marks
 * token i as padding: no later query attends to it (its own row still attends to itself so
 * that softmax stays defined). Fails without changing the context when an id is out of range,
 * the tokens do not fit in the context, or their attention capture cannot be allocated; fails
 * with SAC_ERR_MODEL, leaving n_past as it was and no logits, when a logit it would return is
 * NaN or Inf. */
sac_status sac_eval(sac_context *ctx, const int32_t *tokens, int32_t n_tokens,
                    const uint8_t *key_mask, uint32_t flags);

/* Encoder–decoder models ("encdec"): runs the bidirectional encoder over a source sequence
 * and keeps, for every decoder layer, the keys and values cross-attention reads. It also
 * resets the decoder (n_past = 0): sac_eval then decodes target tokens against this source.
 * key_mask as in sac_eval (0 = padding, hidden from every query). The source must fit in the
 * context (n_tokens <= n_ctx) and have at least one token that is not padding. Fails with
 * SAC_ERR_STATE on a decoder-only model. */
sac_status sac_encode(sac_context *ctx, const int32_t *tokens, int32_t n_tokens, const uint8_t *key_mask);
/* Source tokens of the last sac_encode (0 before any, and for decoder-only models). */
int32_t sac_context_n_source(const sac_context *ctx);

/* Logits of the last sac_eval: n_rows rows of n_vocab floats (n_rows is 1, or n_tokens with
 * SAC_EVAL_ALL_LOGITS). Valid until the next sac_eval or reset. NULL before any eval. */
const float *sac_logits(const sac_context *ctx, int32_t *n_rows, int32_t *n_vocab);

/* ------------------------------------------------------------------------------------------
 * Attention capture: with capture_attention set, the context keeps the softmax
 * probabilities of every layer × head × query row. Query row q has q + 1 keys (positions
 * 0..q); masked keys hold 0.
 *
 * Every kind uses one layout: query row q is a block of n_layers × n_head × n_keys(q) floats,
 * layer-major, then head, then key, and the rows of a kind are contiguous in query order:
 *   SAC_ATTENTION_SELF     n_layers = n_layer          n_keys(q) = q + 1
 *   SAC_ATTENTION_CROSS    n_layers = n_layer          n_keys    = n_source
 *   SAC_ATTENTION_ENCODER  n_layers = n_encoder_layer  n_keys    = n_source
 * A context captures the whole of itself: n_ctx self rows (L·H·n_ctx(n_ctx+1)/2 floats) and,
 * for encoder–decoder models, n_ctx cross and encoder rows against an n_ctx-token source.
 * When that cannot be addressed by the build (4 GB in wasm32), sac_context_new with
 * capture_attention and sac_attention_enable(ctx, 1) fail with SAC_ERR_NOMEM and a message
 * naming the size: use a shorter context. Sizes are computed in 64 bits, never wrapped.
 * ---------------------------------------------------------------------------------------- */

/* 1 when capture is on. */
int32_t sac_attention_enabled(const sac_context *ctx);
/* Turns capture on or off. Turning it on keeps rows only for tokens evaluated afterwards;
 * earlier rows read as 0 until the context is reset. Turning it off keeps the rows captured
 * so far readable. */
sac_status sac_attention_enable(sac_context *ctx, int32_t on);

/* The probabilities of one query row for every layer and head: a contiguous block of
 * n_layer × n_head × (query + 1) floats, layer-major, then head, then key. Valid until the
 * next eval or reset. */
sac_status sac_attention_row(sac_context *ctx, int32_t query, const float **row, int32_t *n_keys);

/* Copies the full matrix of one layer and head into `out` (n_past × n_past floats,
 * row-major by query; keys after the query are 0). `out_len` is the number of floats `out` holds. */
sac_status sac_attention_matrix(sac_context *ctx, int32_t layer, int32_t head, float *out, size_t out_len);

/* Which attention of an encoder–decoder model to read (decoder-only models have SELF only). */
typedef enum sac_attention_kind {
    SAC_ATTENTION_SELF = 0,    /* (decoder) masked self-attention: n_past × n_past */
    SAC_ATTENTION_CROSS = 1,   /* decoder → encoder: n_past queries × n_source keys */
    SAC_ATTENTION_ENCODER = 2, /* encoder self-attention: n_source × n_source */
} sac_attention_kind;

/* The matrix of one kind, layer (of that stack) and head: row-major, *n_queries × *n_keys
 * floats. With out == NULL only the sizes are returned. Encoder and cross maps are captured
 * when capture is on during sac_encode / sac_eval. */
sac_status sac_attention_get(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head, float *out,
                             size_t out_len, int32_t *n_queries, int32_t *n_keys);

/* The cross-attention of one decoder query row for every decoder layer and head: a block of
 * n_layer × n_head × n_source floats, layer-major. Valid until the next eval, encode or reset. */
sac_status sac_attention_cross_row(sac_context *ctx, int32_t query, const float **row, int32_t *n_keys);

/* Query rows captured so far for `kind`: 0 when capture was never on since the last reset
 * (or encode), nothing ran, or the model lacks the kind. Rows stay readable after capture is
 * turned off. */
int32_t sac_attention_n_rows(const sac_context *ctx, sac_attention_kind kind);

/* Rows [from, to) of `kind` as one contiguous block in the layout above: *data points into
 * the context (valid until the next eval, encode, reset or sac_attention_enable), *n_floats is
 * the block's length. Fails with SAC_ERR_ARG for a bad kind (or one the model lacks) or
 * range, SAC_ERR_STATE when nothing of that kind is captured. */
sac_status sac_attention_rows(sac_context *ctx, sac_attention_kind kind, int32_t from, int32_t to,
                              const float **data, size_t *n_floats);

/* ------------------------------------------------------------------------------------------
 * Looking inside attention: scores, queries and keys, head ablation.
 * ---------------------------------------------------------------------------------------- */

/* The pre-softmax scores s = q·k · scale of rows [from, to) of `kind`, as sac_attention_rows
 * gives the probabilities (same layout, same lengths): captured by the forward pass itself,
 * −∞ for keys a query does not see (padding). Needs capture_scores = 1 in the context
 * parameters (SAC_ERR_STATE otherwise); rows evaluated while capture was off read as 0.
 * Probabilities = sac_softmax_row(scores, n_keys, 1). */
sac_status sac_attention_scores_rows(sac_context *ctx, sac_attention_kind kind, int32_t from, int32_t to,
                                     const float **data, size_t *n_floats);

/* Turns score capture on or off after the context was made (on: room for the scores beside the
 * probabilities, SAC_ERR_NOMEM naming the size when the doubled capture cannot fit). Rows captured
 * before it was on are refused (SAC_ERR_STATE) until the context is reset and evaluated again. */
sac_status sac_attention_scores_enable(sac_context *ctx, int32_t on);

/* The scale of the scores: 1/√head_dim (0 for a NULL model). Divide by it to get the raw q·k. */
float sac_attention_scale(const sac_model *model);

/* out[j] = softmax(scores / tau)_j over n scores, −∞ giving exactly 0; computed as the forward
 * pass computes it, so tau = 1 reproduces captured probabilities bit for bit. SAC_ERR_ARG for
 * n <= 0, tau not finite and > 0 or so small that 1/tau is not finite (below about 3e-39), a
 * NaN or +∞ score, or every score −∞. */
sac_status sac_softmax_row(const float *scores, int32_t n, float tau, float *out);

/* The query and key vectors of one layer and head of `kind` (needs capture_qk = 1): q_out gets
 * *n_queries × *head_dim floats (query rows: decoder positions for self and cross, source
 * tokens for encoder), k_out *n_keys × *head_dim (self: the positions so far, after RoPE, as
 * the KV cache holds them: rounded for a bf16 or q8 cache; cross and encoder: the source; under
 * grouped-query attention the head's shared kv head). Either output may be NULL (sizes only).
 * Score = q·k · sac_attention_scale, up to float rounding; with a q8 cache the query is recorded
 * as computed, while the scores use it rounded to q8 as the keys are (SAC_KV_Q8), so q·k
 * reproduces them only to about that rounding (~0.5% of a score's scale). */
sac_status sac_context_qk(sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head, float *q_out,
                          size_t q_len, float *k_out, size_t k_len, int32_t *n_queries, int32_t *n_keys,
                          int32_t *head_dim);

/* Turns q/k capture on or off after the context was made (allocating its storage the first time:
 * SAC_ERR_NOMEM naming the size when it does not fit). Tokens already evaluated were not
 * recorded: sac_context_qk refuses until the context is reset (or re-encoded) and evaluated. */
sac_status sac_context_capture_qk(sac_context *ctx, int32_t on);

/* Head ablation for the next evals: mask holds n = n_layers(kind) × n_head bytes, layer-major;
 * a non-zero byte zeroes that head's attention output before the output projection. NULL (or
 * all zeros) removes the ablation of that kind. The context's tokens are not re-evaluated. */
sac_status sac_context_set_ablation(sac_context *ctx, sac_attention_kind kind, const uint8_t *mask, size_t n);
/* The same from text: "L:H,L:H,..." (decimal layer and head numbers, e.g. "0:1,2:3"; "" for
 * none), as the CLIs' --ablate takes it. SAC_ERR_ARG with a message for bad text or a head out
 * of range (and the ablation unchanged). */
sac_status sac_context_set_ablation_spec(sac_context *ctx, sac_attention_kind kind, const char *spec);
/* 1 when that head of `kind` is ablated. */
int32_t sac_context_ablated(const sac_context *ctx, sac_attention_kind kind, int32_t layer, int32_t head);

/* ------------------------------------------------------------------------------------------
 * Sampling: picks the next id from the last row of logits. Deterministic for a seed.
 * ---------------------------------------------------------------------------------------- */
typedef struct sac_sampling_params {
    float temperature;    /* 0 → greedy (argmax); otherwise > 0 */
    int32_t top_k;        /* 0 → off; otherwise keep the k most likely */
    float top_p;          /* in (0, 1]; 1 → off */
    float repeat_penalty; /* > 0 (1 → off); divides positive logits of recent ids, multiplies negative */
    int32_t repeat_last_n;/* how many recent ids the penalty looks at; 0 → off, -1 → whole context */
    uint64_t seed;        /* PRNG seed */
} sac_sampling_params;

/* temperature 0.8, top_k 40, top_p 0.95, repeat_penalty 1 (off), repeat_last_n 64, seed 0: what
 * sac_sample uses until sac_sampler_init is called. */
sac_sampling_params sac_sampling_default_params(void);

/* Validates the parameters and (re)seeds the context's PRNG. */
sac_status sac_sampler_init(sac_context *ctx, const sac_sampling_params *params);
/* Samples from the last logits row of the last eval into *token (-1 when it fails). Does not
 * evaluate the token. */
sac_status sac_sample(sac_context *ctx, int32_t *token);

/* ------------------------------------------------------------------------------------------
 * Tokenizers, built from the model's tokenizer.ggml.* metadata: "gpt2" (byte-level BPE),
 * "llama" (SentencePiece) and "char" (one token per Unicode character, saccade's own models).
 * A model without tokenizer metadata fails these calls with SAC_ERR_STATE "no tokenizer".
 * ---------------------------------------------------------------------------------------- */
enum {
    SAC_TOKENIZE_BOS = 1,     /* prepend BOS */
    SAC_TOKENIZE_EOS = 2,     /* append EOS */
    SAC_TOKENIZE_SPECIAL = 4, /* recognise control tokens written in the text ("<s>") */
};

/* Encodes `len` bytes of UTF-8. Invalid UTF-8 bytes are replaced by U+FFFD before encoding
 * (one per maximal ill-formed subsequence, as JavaScript's TextDecoder does).
 * Writes at most `capacity` ids to `out` and the number the text needs to *n_tokens; when
 * capacity is too small it returns SAC_ERR_ARG (call again with *n_tokens). */
sac_status sac_tokenize(sac_model *model, const char *text, size_t len, uint32_t flags,
                        int32_t *out, int32_t capacity, int32_t *n_tokens);

/* Special ids, or -1 when the vocabulary has none. */
int32_t sac_token_bos(const sac_model *model);
int32_t sac_token_eos(const sac_model *model);
/* 1 when the tokenizer metadata asks for BOS (tokenizer.ggml.add_bos_token). */
int32_t sac_token_add_bos(const sac_model *model);
/* The raw bytes a token stands for when detokenized (byte tokens decoded, ▁ → space,
 * control tokens empty). Valid as long as the model.
 * Every id the model can produce, 0 <= token < n_vocab (sac_model_info), is a token here: a
 * model whose embedding table has more rows than its tokenizer has tokens (Qwen pads its
 * table) decodes the extra ids to nothing, like control tokens, in every call below. Ids
 * outside that range are SAC_ERR_ARG. */
sac_status sac_token_bytes(sac_model *model, int32_t token, const char **bytes, size_t *len);

/* Streaming detokenization: text comes out only as complete UTF-8 characters; bytes of a
 * character split across tokens are held back until it is complete. For llama vocabularies
 * the space the encoder puts in front of a text is dropped from the first non-empty piece
 * (as llama.cpp's detokenizer does); a new or just flushed detokenizer is at the start of a
 * text, so push a prompt's ids before the generated ones to keep the first one's space. */
typedef struct sac_detokenizer sac_detokenizer;
sac_status sac_detokenizer_new(sac_model *model, sac_detokenizer **out);
void sac_detokenizer_free(sac_detokenizer *dt);
const char *sac_detokenizer_errmsg(const sac_detokenizer *dt);
/* Adds one token; *text (valid until the next call) gets the newly completed text. */
sac_status sac_detokenizer_push(sac_detokenizer *dt, int32_t token, const char **text, size_t *len);
/* Emits whatever is held back (an incomplete character becomes U+FFFD) and resets. */
sac_status sac_detokenizer_flush(sac_detokenizer *dt, const char **text, size_t *len);

/* Every token's own text in one pass, as a new detokenizer gives it: piece i is what
 * pushing ids[i] emits (the bytes of a character split over tokens come with the token
 * that completes it; llama drops the leading space of the first non-empty piece), and the
 * last piece also holds what the final flush emits. The pieces concatenated are the text.
 * Writes the pieces back to back at `text` (at most `capacity` bytes) and where piece i
 * ends at ends[i] (n_ids entries): piece i is text[ends[i - 1] .. ends[i]), piece 0 starts
 * at 0. *text_len gets the bytes all pieces need; when that exceeds capacity (text may be
 * NULL with capacity 0 to ask), it returns SAC_ERR_ARG with ends and *text_len filled in:
 * call again with *text_len bytes. */
sac_status sac_detokenize_pieces(sac_model *model, const int32_t *ids, int32_t n_ids, char *text,
                                 size_t capacity, size_t *ends, size_t *text_len);

/* ------------------------------------------------------------------------------------------
 * The attention primitive: attention pooling on caller-given arrays, without a model.
 *
 *   output[b][i] = Σ_j α_ij · values[b][j],   α_i = softmax(s_i / τ) over the admissible keys j,
 *   s_ij = score(queries[b][i], keys[b][j])
 *
 * per head: the d_k query/key features and the d_v value features are split into n_heads
 * contiguous slices (head h owns features [h·d_k/H, (h+1)·d_k/H)), each head attends on its
 * own, and the head outputs are concatenated (per-head projections are the caller's).
 * Every array is row-major float32 with the shape in its comment; every size is checked in 64
 * bits against the buffer lengths given (counts of elements, not bytes) before anything is
 * read. Needs no model, context or global state: one call, its buffers, its message.
 * ---------------------------------------------------------------------------------------- */

/* How a query is compared with a key (d = d_k / n_heads, the head's size). */
typedef enum sac_attend_score {
    SAC_SCORE_DOT = 0,          /* qᵀk */
    SAC_SCORE_SCALED_DOT = 1,   /* qᵀk / √d (Vaswani et al.) */
    SAC_SCORE_GENERAL = 2,      /* qᵀ W k, W [n_heads][d][d] (Luong's bilinear) */
    SAC_SCORE_ADDITIVE = 3,     /* vᵀ tanh(W_q q + W_k k), W_q and W_k [n_heads][hidden][d],
                                   v [n_heads][hidden] (Bahdanau) */
    SAC_SCORE_COSINE = 4,       /* qᵀk / (‖q‖ ‖k‖); 0 when q or k is the zero vector */
    /* Kernels of u = ‖q − k‖ · width (Euclidean distance; width w > 0 scales it, so a larger w
     * is a narrower, sharper kernel). The score is log K(u), so that softmax(score) is the
     * Nadaraya–Watson weight K / Σ K; where K = 0 the score is −∞ and the key gets weight 0. */
    SAC_SCORE_GAUSSIAN = 5,     /* K = exp(−u²/2): score −u²/2 */
    SAC_SCORE_BOXCAR = 6,       /* K = 1 for u ≤ 1, else 0 */
    SAC_SCORE_EPANECHNIKOV = 7, /* K = max(0, 1 − u²) */
} sac_attend_score;

/* Masks, combinable (a key is admissible when every mask given admits it). */
enum {
    SAC_MASK_NONE = 0,
    /* Query i sees keys j ≤ i + (n_k − n_q): the queries are the last n_q of the n_k positions
     * (with n_q = n_k, j ≤ i), as in a decoder or the model's KV cache. */
    SAC_MASK_CAUSAL = 1,
    /* Batch element b's keys j ≥ key_lengths[b] are padding (0 ≤ key_lengths[b] ≤ n_k). Queries
     * past the length are computed like any other (the caller ignores them). */
    SAC_MASK_PADDING = 2,
    /* mask[i][j] != 0 admits key j for query i: [n_q][n_k], or [batch][n_q][n_k] with
     * mask_per_batch = 1. */
    SAC_MASK_EXPLICIT = 4,
};

typedef struct sac_attend_params {
    int32_t batch, n_q, n_k, d_k, d_v; /* all >= 1 */
    int32_t n_heads;     /* >= 1, dividing d_k and d_v */
    int32_t score;       /* a sac_attend_score */
    float width;         /* kernels: w > 0 (finite); ignored otherwise */
    int32_t hidden;      /* additive: the size of the hidden layer (>= 1); ignored otherwise */
    uint32_t mask;       /* SAC_MASK_* flags */
    int32_t mask_per_batch; /* SAC_MASK_EXPLICIT: 1 → one [n_q][n_k] mask per batch element */
    /* τ: softmax(s / τ). τ > 0 finite; τ = 0 is the limit τ → 0 computed exactly: weight 1/m on
     * each of the m admissible keys with the largest score (ties share), 0 elsewhere. */
    float temperature;
} sac_attend_params;

/* batch = n_q = n_k = d_k = d_v = n_heads = 1, SCALED_DOT, width 1, hidden 1, no mask, τ = 1. */
sac_attend_params sac_attend_default_params(void);

/* Runs attention. Inputs (lengths in floats / ints / bytes, at least the shape's size):
 *   queries [batch][n_q][d_k], keys [batch][n_k][d_k], values [batch][n_k][d_v]: finite;
 *   W       GENERAL: [n_heads][d][d], W[h][a][c] pairs q_a with k_c;
 *           ADDITIVE: three arrays back to back, W_q [n_heads][hidden][d], then
 *           W_k [n_heads][hidden][d], then v [n_heads][hidden];
 *           NULL (W_len 0) for the other scores;
 *   key_lengths [batch] with SAC_MASK_PADDING, else NULL;
 *   mask    [n_q][n_k] or [batch][n_q][n_k] (uint8) with SAC_MASK_EXPLICIT, else NULL.
 * Outputs:
 *   out     [batch][n_q][d_v]: the heads' outputs concatenated;
 *   weights [batch][n_heads][n_q][n_k]: α, each row sums to 1 (or is all 0, below); may be NULL;
 *   scores  [batch][n_heads][n_q][n_k]: the scores s before temperature and softmax, −∞ where a
 *           mask or a kernel excludes the key; may be NULL (scores_len 0).
 * A row with no admissible key (every key masked, padding length 0, no point within a boxcar's
 * reach) has weights all 0 and output 0 — never NaN. Scores that come out non-finite (an
 * overflowing dot product) fail the call rather than give NaN (out is then all 0; weights and
 * scores partly written).
 * Returns SAC_OK, SAC_ERR_ARG (a bad size, a length too short, a non-finite input, an
 * unknown score or mask) or SAC_ERR_NOMEM (scratch for additive scores), with a readable
 * message in errmsg (errmsg_size bytes, NUL-terminated; may be NULL). Nothing is written to
 * the outputs when an argument is invalid. */
sac_status sac_attend(const sac_attend_params *p, const float *queries, size_t queries_len, const float *keys,
                      size_t keys_len, const float *values, size_t values_len, const float *W, size_t W_len,
                      const int32_t *key_lengths, size_t key_lengths_len, const uint8_t *mask, size_t mask_len,
                      float *out, size_t out_len, float *weights, size_t weights_len, float *scores,
                      size_t scores_len, char *errmsg, size_t errmsg_size);

/* Nadaraya–Watson regression with a learnable kernel width: the prediction at x is
 *   f(x) = Σ_i α(x, x_i) y_i,   α = sac_attend's kernel weights (softmax of log K(‖x − x_i‖ w)),
 * and the loss is the mean squared error over the held-out points (x'_j, y'_j) and the d_y
 * components: L(w) = 1/(n_heldout·d_y) Σ_j ‖f(x'_j) − y'_j‖². With leave_one_out the held-out
 * points are the training points themselves, each predicted from the others (which avoids the
 * trivial w → ∞ where each point predicts itself). A point with no training point in the
 * kernel's reach predicts 0 (as sac_attend). */
typedef struct sac_kernel_fit_params {
    int32_t score;        /* SAC_SCORE_GAUSSIAN or SAC_SCORE_EPANECHNIKOV (boxcar's dL/dw is 0
                             almost everywhere: refused) */
    int32_t n_train;      /* >= 1 (>= 2 with leave_one_out) */
    int32_t n_heldout;    /* >= 1; ignored with leave_one_out */
    int32_t d_x, d_y;     /* sizes of an x and a y (>= 1) */
    int32_t leave_one_out;
    float width;          /* w₀ > 0: where descent starts */
    float learning_rate;  /* η > 0: w ← w − η dL/dw; a step that would make w ≤ 0 halves w instead,
                             one past FLT_MAX stops at FLT_MAX (w stays a positive finite float) */
    int32_t n_steps;      /* >= 0 */
} sac_kernel_fit_params;

/* L(w) and dL/dw (analytic) at width `width` for the points of `p` (p->width, learning_rate
 * and n_steps unused). x_train [n_train][d_x], y_train [n_train][d_y], x_heldout
 * [n_heldout][d_x], y_heldout [n_heldout][d_y] (NULL with leave_one_out). grad may be NULL. */
sac_status sac_kernel_loss(const sac_kernel_fit_params *p, const float *x_train, size_t x_train_len,
                           const float *y_train, size_t y_train_len, const float *x_heldout, size_t x_heldout_len,
                           const float *y_heldout, size_t y_heldout_len, float width, double *loss, double *grad,
                           char *errmsg, size_t errmsg_size);

/* Gradient descent on w from p->width: widths[s] and losses[s] are w and L(w) after s steps,
 * s = 0..n_steps (so both hold n_steps + 1 floats; widths[n_steps] is the fitted w). */
sac_status sac_kernel_fit_width(const sac_kernel_fit_params *p, const float *x_train, size_t x_train_len,
                                const float *y_train, size_t y_train_len, const float *x_heldout,
                                size_t x_heldout_len, const float *y_heldout, size_t y_heldout_len, float *widths,
                                size_t widths_len, float *losses, size_t losses_len, char *errmsg,
                                size_t errmsg_size);

/* The Transformer paper's sinusoidal position table, [n_pos][d] (n_pos, d >= 1):
 *   PE[p][2i] = sin(p / 10000^(2i/d)),  PE[p][2i+1] = cos(p / 10000^(2i/d))
 * (computed in double, rounded once; with an odd d the last column is a sine). The same
 * table encdec models add to their embeddings. PE(p)·PE(p′) depends only on p − p′: the dot
 * products are sac_attend's DOT scores with the table as queries and keys. */
sac_status sac_sinusoid_positions(int32_t n_pos, int32_t d, float *out, size_t out_len, char *errmsg,
                                  size_t errmsg_size);

/* ------------------------------------------------------------------------------------------
 * Chat: special tokens and prompt formats of instruct models.
 * ---------------------------------------------------------------------------------------- */
/* The token as the vocabulary spells it ("<|im_end|>", "<s>", "\u2581the"), control tokens
 * included (sac_token_bytes gives what it decodes to); the ids sac_token_bytes takes (a padding
 * row of the embedding table is spelled ""). Valid as long as the model. */
sac_status sac_token_spelling(sac_model *model, int32_t token, const char **text, size_t *len);
/* The end-of-generation tokens, ascending: EOS, tokenizer.ggml.eot_token_id / eom_token_id,
 * and the tokens spelled as a chat format's end of turn ("<|im_end|>", "<|eot_id|>",
 * "<end_of_turn>", "<|end|>", "<|endoftext|>", ...), as llama.cpp finds them. Writes at most
 * `capacity` ids and the count to *n_tokens; SAC_ERR_ARG when capacity is too small. */
sac_status sac_token_eog(sac_model *model, int32_t *out, int32_t capacity, int32_t *n_tokens);

typedef struct sac_chat_message {
    const char *role;    /* "system", "user", "assistant", ... */
    const char *content;
} sac_chat_message;

/* The prompt format a chat template's text follows, recognised by substrings: "chatml",
 * "llama2", "llama3", "zephyr", "gemma" or "phi3"; "plain" for no template (NULL or empty); NULL
 * when saccade cannot apply it without a Jinja engine. */
const char *sac_chat_template_family(const char *tmpl, size_t len);
/* Writes a conversation as the chat template `tmpl` (NULL: the file's tokenizer.chat_template)
 * renders it for the families above, with the model's BOS/EOS spellings; no template (a file
 * without one, or an empty template) gets the contents joined by newlines. A conversation the template refuses (Gemma:
 * a system turn; Llama 2 and Gemma: roles that do not alternate) fails with SAC_ERR_ARG and
 * the template's own message; an unrecognised template with SAC_ERR_UNSUPPORTED. *len gets
 * the prompt's length; it is written with a NUL when capacity > *len, else SAC_ERR_ARG (call
 * again with *len + 1). Tokenize the prompt with SAC_TOKENIZE_SPECIAL, adding BOS only when
 * the model asks for it and the prompt does not already start with it. */
sac_status sac_chat_apply_template(sac_model *model, const char *tmpl, size_t tmpl_len,
                                   const sac_chat_message *messages, int32_t n_messages,
                                   int32_t add_generation_prompt, char *out, size_t capacity, size_t *len);

/* ------------------------------------------------------------------------------------------
 * Memory helpers for hosts that cannot call malloc themselves (JavaScript).
 * ---------------------------------------------------------------------------------------- */
void *sac_malloc(size_t size);
void sac_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif /* SACCADE_H */
