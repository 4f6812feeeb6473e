/* make_model.c — writes a random-weight gpt2, llama, qwen2, gemma, phi3 or encdec GGUF file
 * (tests/support/test_models.c) for benchmarks and the JS tests.
 *
 *   build/tools/make_model OUT.gguf [--arch gpt2|llama|qwen2|gemma|phi3|encdec] [--type TYPE]
 *                          [--gpt2-small] [--tied] [--seed N]
 *                          [--rope-freqs] [--rope-scale F] [--attn-bias] [--vocab] [--ctx N]
 *                          [--n-vocab N] [--n-head-kv N]
 *
 * --rope-freqs adds rope_freqs.weight (Llama 3.x frequency factors; llama only), --rope-scale
 * writes linear RoPE scaling by F (llama, qwen2, gemma, phi3), --attn-bias llama's optional attention biases.
 * --gpt2-small gives any architecture GPT-2 small's sizes (llama-like ones: 12 KV heads, RoPE on
 * all 64 head dims), --ctx N sets the context length (the long-context benchmark's models),
 * --n-vocab N the vocabulary size, --n-head-kv N the KV heads of a llama-like architecture
 * (grouped-query attention: N must divide the query heads).
 * --vocab adds a synthetic GPT-2-style tokenizer (vocabularies of 257 tokens or more), so that
 * llama.cpp's llama-bench and wllama load the file (scripts/bench-wasm.mjs).
 *
 * TYPE is any weight type saccade implements, by name (f32, f16, bf16, q8_0, q4_0, q5_0,
 * q4_1, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k). Without --gpt2-small the model is the tests'
 * small shape (vocab 97, width 64, 2 layers), widened to 256 (feed-forward 512) for types of
 * 256-value blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "test_models.h"
#include "types.h"

/* --vocab: the file again with a synthetic byte-level BPE ("gpt2") tokenizer of exactly n_vocab
 * tokens, which llama.cpp and wllama need to load it (they refuse a file without
 * tokenizer.ggml.model): the 256 byte tokens (id = byte value, as GPT-2's byte-to-character
 * map spells them), then two-byte tokens made by one merge each, then <|endoftext|> (BOS and
 * EOS). The keys go after the model's own; tensor infos and data are kept, the data section
 * moved to the next alignment boundary (tensor offsets are relative to it). */
typedef struct buf {
    uint8_t *p;
    size_t n, cap;
    int failed;
} buf;

static void put(buf *b, const void *src, size_t n) {
    if (b->failed) return;
    if (n > SIZE_MAX - b->n) { b->failed = 1; return; }
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) {
            if (cap > SIZE_MAX / 2) { b->failed = 1; return; }
            cap *= 2;
        }
        uint8_t *p = realloc(b->p, cap);
        if (!p) { b->failed = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(buf *b, uint32_t v) { put(b, &v, 4); } /* GGUF is little-endian, as are x86 and wasm */
static void put_u64(buf *b, uint64_t v) { put(b, &v, 8); }
static void put_str(buf *b, const char *s, size_t n) { put_u64(b, n); put(b, s, n); }
static void put_key(buf *b, const char *key, uint32_t type) { put_str(b, key, strlen(key)); put_u32(b, type); }

/* UTF-8 of GPT-2's character for byte `byte` (printable Latin-1 as itself, the rest from U+0100). */
static size_t byte_char(int byte, char out[2]) {
    int printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174, cp = byte;
    if (!printable) {
        cp = 256;
        for (int b = 0; b < byte; b++) cp += !((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174);
    }
    if (cp < 0x80) return out[0] = (char)cp, 1;
    out[0] = (char)(0xC0 | cp >> 6);
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
}

static int with_vocab(const uint8_t *in, size_t size, int32_t n_vocab, buf *out) {
    gguf_file f;
    sac_error err = {0};
    if (sac_gguf_parse(&f, in, size, &err) != SAC_OK || f.n_tensors == 0) {
        fprintf(stderr, "make_model: cannot re-read the model: %s\n", err.msg);
        sac_gguf_release(&f);
        return 1;
    }
    /* [24, kv_end): the model's keys; [kv_end, info_end): the tensor infos */
    const gguf_tensor *last = &f.tensors[f.n_tensors - 1];
    size_t kv_end = (size_t)((const uint8_t *)f.tensors[0].name.data - in) - 8;
    size_t info_end = (size_t)((const uint8_t *)last->name.data - in) + (size_t)last->name.len + 4 +
                      8 * (size_t)last->n_dims + 4 + 8;
    put(out, in, 16); /* magic, version, tensor count */
    put_u64(out, f.n_kv + 7);
    put(out, in + 24, kv_end - 24);
    put_key(out, "tokenizer.ggml.model", GGUF_TYPE_STRING);
    put_str(out, "gpt2", 4);
    put_key(out, "tokenizer.ggml.pre", GGUF_TYPE_STRING);
    put_str(out, "gpt-2", 5);
    char chars[256][2];
    size_t lens[256];
    for (int b = 0; b < 256; b++) lens[b] = byte_char(b, chars[b]);
    const int32_t n_pairs = n_vocab - 257;
    put_key(out, "tokenizer.ggml.tokens", GGUF_TYPE_ARRAY);
    put_u32(out, GGUF_TYPE_STRING);
    put_u64(out, (uint64_t)n_vocab);
    for (int b = 0; b < 256; b++) put_str(out, chars[b], lens[b]);
    for (int32_t k = 0; k < n_pairs; k++) {
        int a = (k >> 8) & 255, c = k & 255;
        char s[4];
        memcpy(s, chars[a], lens[a]);
        memcpy(s + lens[a], chars[c], lens[c]);
        put_str(out, s, lens[a] + lens[c]);
    }
    put_str(out, "<|endoftext|>", 13);
    put_key(out, "tokenizer.ggml.token_type", GGUF_TYPE_ARRAY);
    put_u32(out, GGUF_TYPE_I32);
    put_u64(out, (uint64_t)n_vocab);
    for (int32_t i = 0; i < n_vocab; i++) put_u32(out, i == n_vocab - 1 ? 3 : 1); /* 3: control */
    put_key(out, "tokenizer.ggml.merges", GGUF_TYPE_ARRAY);
    put_u32(out, GGUF_TYPE_STRING);
    put_u64(out, (uint64_t)n_pairs);
    for (int32_t k = 0; k < n_pairs; k++) {
        int a = (k >> 8) & 255, c = k & 255;
        char s[5];
        memcpy(s, chars[a], lens[a]);
        s[lens[a]] = ' ';
        memcpy(s + lens[a] + 1, chars[c], lens[c]);
        put_str(out, s, lens[a] + 1 + lens[c]);
    }
    put_key(out, "tokenizer.ggml.bos_token_id", GGUF_TYPE_U32);
    put_u32(out, (uint32_t)n_vocab - 1);
    put_key(out, "tokenizer.ggml.eos_token_id", GGUF_TYPE_U32);
    put_u32(out, (uint32_t)n_vocab - 1);
    put(out, in + kv_end, info_end - kv_end);
    static const uint8_t zeros[256];
    size_t pad = (f.alignment - out->n % f.alignment) % f.alignment; /* alignment: a power of two, checked */
    while (pad > 0) {
        size_t k = pad < sizeof zeros ? pad : sizeof zeros;
        put(out, zeros, k);
        pad -= k;
    }
    put(out, in + f.data_offset, size - (size_t)f.data_offset);
    sac_gguf_release(&f);
    if (out->failed) return fprintf(stderr, "make_model: out of memory\n"), 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: make_model OUT.gguf [--arch gpt2|llama|qwen2|gemma|phi3|encdec] [--type TYPE] "
                        "[--gpt2-small] [--tied] [--seed N] [--rope-freqs] [--rope-scale F] [--attn-bias] [--vocab] [--ctx N] [--n-vocab N] [--n-head-kv N]\n"
                        "  TYPE: f32 f16 bf16 q8_0 q4_0 q5_0 q4_1 q5_1 q2_k q3_k q4_k q5_k q6_k\n");
        return 1;
    }
    const char *arch = "gpt2";
    uint32_t type = SAC_TYPE_F32;
    int small = 0, tied = 0, rope_freqs = 0, attn_bias = 0, vocab = 0;
    float rope_scale = 0;
    long ctx = 0, n_vocab = 0, n_head_kv = 0;
    unsigned long long seed = 1234;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--gpt2-small")) small = 1;
        else if (!strcmp(a, "--tied")) tied = 1;
        else if (!strcmp(a, "--arch") && (!strcmp(v, "gpt2") || !strcmp(v, "llama") || !strcmp(v, "qwen2") || !strcmp(v, "gemma") || !strcmp(v, "phi3") ||
                                          !strcmp(v, "encdec")))
            arch = argv[++i];
        else if (!strcmp(a, "--rope-freqs")) rope_freqs = 1;
        else if (!strcmp(a, "--attn-bias")) attn_bias = 1;
        else if (!strcmp(a, "--vocab")) vocab = 1;
        else if (!strcmp(a, "--n-vocab") && i + 1 < argc) {
            n_vocab = strtol(argv[++i], NULL, 10);
            if (n_vocab < 1 || n_vocab > 1 << 20) return fprintf(stderr, "make_model: --n-vocab must be 1 to 1048576\n"), 1;
        } else if (!strcmp(a, "--n-head-kv") && i + 1 < argc) {
            n_head_kv = strtol(argv[++i], NULL, 10);
            if (n_head_kv < 1 || n_head_kv > 1024) return fprintf(stderr, "make_model: --n-head-kv must be 1 to 1024\n"), 1;
        } else if (!strcmp(a, "--ctx") && i + 1 < argc) {
            ctx = strtol(argv[++i], NULL, 10);
            if (ctx < 1 || ctx > 1 << 20) return fprintf(stderr, "make_model: --ctx must be 1 to 1048576\n"), 1;
        }
        else if (!strcmp(a, "--rope-scale") && i + 1 < argc) rope_scale = strtof(argv[++i], NULL);
        else if (!strcmp(a, "--seed")) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--type")) {
            i++;
            type = sac_type_by_name(v);
            if (type == SAC_TYPE_COUNT) return fprintf(stderr, "make_model: unknown type '%s'\n", v), 1;
        } else return fprintf(stderr, "make_model: bad option '%s'\n", a), 1;
    }
    test_model_spec s = test_spec(arch, type);
    if (small) { /* GPT-2 small's sizes in this architecture's shape */
        test_model_spec g = test_spec_gpt2_small(type);
        g.arch = s.arch;
        g.n_enc_layer = s.n_enc_layer ? g.n_layer : 0;
        g.rope_dim = g.n_embd / g.n_head;
        s = g;
    }
    if (ctx) s.n_ctx = (int32_t)ctx;
    if (n_vocab) s.n_vocab = (int32_t)n_vocab;
    if (n_head_kv) {
        if (!strcmp(arch, "gpt2") || !strcmp(arch, "encdec") || s.n_head % n_head_kv)
            return fprintf(stderr, "make_model: --n-head-kv needs a llama-like --arch and must divide its %d heads\n",
                           (int)s.n_head), 1;
        s.n_head_kv = (int32_t)n_head_kv;
    }
    const int64_t block = sac_type_traits_get(type)->block_size;
    if (s.n_embd % block || s.n_ff % block) { /* the small shape, for 256-value blocks */
        s.n_embd = 256;
        s.n_ff = 512;
    }
    if ((rope_freqs || attn_bias) && strcmp(arch, "llama"))
        return fprintf(stderr, "make_model: --rope-freqs and --attn-bias need --arch llama\n"), 1;
    if (rope_scale != 0 && (!strcmp(arch, "gpt2") || !strcmp(arch, "encdec")))
        return fprintf(stderr, "make_model: --rope-scale needs --arch llama, qwen2, gemma or phi3\n"), 1;
    if (!(rope_scale >= 0)) return fprintf(stderr, "make_model: --rope-scale must be positive\n"), 1;
    if (vocab && s.n_vocab < 257)
        return fprintf(stderr, "make_model: --vocab needs a vocabulary of 257 tokens or more (--gpt2-small)\n"), 1;
    s.tied = tied;
    s.rope_freqs = rope_freqs;
    s.attn_bias = attn_bias;
    s.rope_scale = rope_scale;
    s.seed = seed;
    s.no_reference = 1;
    test_model m;
    if (test_model_make(&s, &m)) return fprintf(stderr, "make_model: could not build the model\n"), 1;
    buf tok = {0};
    if (vocab && with_vocab(m.bytes, m.size, s.n_vocab, &tok)) {
        free(tok.p);
        test_model_free(&m);
        return 1;
    }
    const uint8_t *bytes = vocab ? tok.p : m.bytes;
    const size_t size = vocab ? tok.n : m.size;
    FILE *f = fopen(argv[1], "wb");
    int ok = f && fwrite(bytes, 1, size, f) == size;
    if (f) ok &= fclose(f) == 0;
    free(tok.p);
    test_model_free(&m);
    if (!ok) return fprintf(stderr, "make_model: cannot write '%s'\n", argv[1]), 1;
    return 0;
}
