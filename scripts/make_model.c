/* make_model.c — writes a random-weight gpt2, llama, qwen2, gemma, phi3 or encdec GGUF file
 * (tests/support/test_models.c) for benchmarks and the JS tests.
 *
 *   build/tools/make_model OUT.gguf [--arch gpt2|llama|qwen2|gemma|phi3|encdec] [--type TYPE]
 *                          [--gpt2-small] [--tied] [--seed N]
 *                          [--rope-freqs] [--rope-scale F] [--attn-bias]
 *
 * --rope-freqs adds rope_freqs.weight (Llama 3.x frequency factors; llama only), --rope-scale
 * writes linear RoPE scaling by F (llama, qwen2, gemma, phi3), --attn-bias llama's optional attention biases.
 *
 * TYPE is any weight type saccade implements, by name (f32, f16, bf16, q8_0, q4_0, q5_0,
 * q4_1, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k). Without --gpt2-small the model is the tests'
 * small shape (vocab 97, width 64, 2 layers), widened to 256 (feed-forward 512) for types of
 * 256-value blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_models.h"
#include "types.h"

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: make_model OUT.gguf [--arch gpt2|llama|qwen2|gemma|phi3|encdec] [--type TYPE] "
                        "[--gpt2-small] [--tied] [--seed N] [--rope-freqs] [--rope-scale F] [--attn-bias]\n"
                        "  TYPE: f32 f16 bf16 q8_0 q4_0 q5_0 q4_1 q5_1 q2_k q3_k q4_k q5_k q6_k\n");
        return 1;
    }
    const char *arch = "gpt2";
    uint32_t type = SAC_TYPE_F32;
    int small = 0, tied = 0, rope_freqs = 0, attn_bias = 0;
    float rope_scale = 0;
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
        else if (!strcmp(a, "--rope-scale") && i + 1 < argc) rope_scale = strtof(argv[++i], NULL);
        else if (!strcmp(a, "--seed")) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--type")) {
            i++;
            type = sac_type_by_name(v);
            if (type == SAC_TYPE_COUNT) return fprintf(stderr, "make_model: unknown type '%s'\n", v), 1;
        } else return fprintf(stderr, "make_model: bad option '%s'\n", a), 1;
    }
    test_model_spec s = small ? test_spec_gpt2_small(type) : test_spec(arch, type);
    if (small && strcmp(arch, "gpt2")) return fprintf(stderr, "make_model: --gpt2-small needs --arch gpt2\n"), 1;
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
    s.tied = tied;
    s.rope_freqs = rope_freqs;
    s.attn_bias = attn_bias;
    s.rope_scale = rope_scale;
    s.seed = seed;
    s.no_reference = 1;
    test_model m;
    if (test_model_make(&s, &m)) return fprintf(stderr, "make_model: could not build the model\n"), 1;
    FILE *f = fopen(argv[1], "wb");
    int ok = f && fwrite(m.bytes, 1, m.size, f) == m.size;
    if (f) ok &= fclose(f) == 0;
    test_model_free(&m);
    if (!ok) return fprintf(stderr, "make_model: cannot write '%s'\n", argv[1]), 1;
    return 0;
}
