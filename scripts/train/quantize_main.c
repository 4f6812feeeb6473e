/* quantize_main.c — the command-line quantizer.
 *
 *   build/tools/quantize IN.gguf OUT.gguf --type q8_0|q4_0|q5_0|q4_1|q5_1|q2_k|q3_k|q4_k|q5_k|q6_k|bf16|f16|f32
 *
 * Converts every weight matrix to the type, keeps biases and norms F32 (quantize.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_io.h"
#include "quantize.h"
#include "types.h"

int main(int argc, char **argv) {
    uint32_t type = argc == 5 && !strcmp(argv[3], "--type") ? sac_type_by_name(argv[4]) : SAC_TYPE_COUNT;
    if (type == SAC_TYPE_COUNT) {
        fprintf(stderr, "usage: quantize IN.gguf OUT.gguf --type q8_0|q4_0|q5_0|q4_1|q5_1|q2_k|q3_k|q4_k|q5_k|q6_k|bf16|f16|f32\n");
        return 1;
    }
    size_t size;
    uint8_t *in = read_file(argv[1], &size);
    if (!in) {
        fprintf(stderr, "quantize: cannot read '%s'\n", argv[1]);
        return 1;
    }
    uint8_t *out = NULL;
    size_t out_size = 0;
    quantize_stats stats;
    sac_error err = {0};
    sac_status st = quantize_gguf(in, size, type, &out, &out_size, &stats, &err);
    free(in);
    if (st) {
        fprintf(stderr, "quantize: %s\n", err.msg);
        return 1;
    }
    int ok = write_file(argv[2], out, out_size);
    free(out);
    if (!ok) {
        fprintf(stderr, "quantize: cannot write '%s'\n", argv[2]);
        return 1;
    }
    printf("quantize: %s → %s (%s): %lld tensors converted, %lld kept, %lld as F16 (rows not whole blocks); "
           "tensor data %.2f MB → %.2f MB, file %.2f MB\n",
           argv[1], argv[2], sac_type_name(type), (long long)stats.n_converted, (long long)stats.n_kept,
           (long long)stats.n_fallback, stats.bytes_in / 1e6, stats.bytes_out / 1e6, out_size / 1e6);
    return 0;
}
