/* make_model.c — writes a random-weight gpt2 or llama GGUF file (tests/support/test_models.c)
 * for benchmarks and the JS tests.
 *
 *   build/tools/make_model OUT.gguf [--arch gpt2|llama|encdec] [--type TYPE] [--gpt2-small]
 *                          [--tied] [--seed N]
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
        fprintf(stderr, "usage: make_model OUT.gguf [--arch gpt2|llama|encdec] [--type TYPE] [--gpt2-small] [--tied] "
                        "[--seed N]\n  TYPE: f32 f16 bf16 q8_0 q4_0 q5_0 q4_1 q5_1 q2_k q3_k q4_k q5_k q6_k\n");
        return 1;
    }
    const char *arch = "gpt2";
    uint32_t type = SAC_TYPE_F32;
    int small = 0, tied = 0;
    unsigned long long seed = 1234;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--gpt2-small")) small = 1;
        else if (!strcmp(a, "--tied")) tied = 1;
        else if (!strcmp(a, "--arch") && (!strcmp(v, "gpt2") || !strcmp(v, "llama") || !strcmp(v, "encdec"))) arch = argv[++i];
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
    s.tied = tied;
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
