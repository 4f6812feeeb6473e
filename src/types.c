/* types.c — the type table: one entry per ggml type number, indexed by it. */
#include "types.h"

#include "error.h"

static const sac_type_traits type_table[SAC_TYPE_COUNT] = {
    [SAC_TYPE_F32] = {.name = "F32", .block_size = 1, .type_size = sizeof(float), .align = _Alignof(float),
                      .to_float = sac_to_float_f32, .from_float = sac_from_float_f32, .finite = sac_finite_f32,
                      .vec_dot_type = SAC_TYPE_F32, .matvec = sac_matvec_f32, .matmat = sac_matmat_f32},
    [SAC_TYPE_F16] = {.name = "F16", .block_size = 1, .type_size = sizeof(sac_f16), .align = _Alignof(sac_f16),
                      .to_float = sac_to_float_f16, .from_float = sac_from_float_f16, .finite = sac_finite_f16,
                      .vec_dot_type = SAC_TYPE_F32, .matvec = sac_matvec_f16, .matmat = sac_matmat_f16,
                      .matvec_reads_ahead = 1},
    [SAC_TYPE_BF16] = {.name = "BF16", .block_size = 1, .type_size = sizeof(sac_bf16), .align = _Alignof(sac_bf16),
                       .to_float = sac_to_float_bf16, .from_float = sac_from_float_bf16, .finite = sac_finite_bf16,
                       .vec_dot_type = SAC_TYPE_BF16, .matvec = sac_matvec_bf16, .matmat = sac_matmat_bf16,
                       .matvec_reads_ahead = 1, .activations_size = sac_activations_size_bf16,
                       .quantize_activations = sac_quantize_activations_bf16},
    [SAC_TYPE_Q4_0] = {.name = "Q4_0", .block_size = SAC_QK, .type_size = sizeof(block_q4_0),
                       .align = _Alignof(block_q4_0), .to_float = sac_to_float_q4_0,
                       .from_float = sac_from_float_q4_0, .finite = sac_finite_q4_0, .vec_dot_type = SAC_TYPE_Q8_0,
                       .matvec = sac_matvec_q4_0, .matmat = sac_matmat_q4_0},
    [SAC_TYPE_Q5_0] = {.name = "Q5_0", .block_size = SAC_QK, .type_size = sizeof(block_q5_0),
                       .align = _Alignof(block_q5_0), .to_float = sac_to_float_q5_0,
                       .from_float = sac_from_float_q5_0, .finite = sac_finite_q5_0, .vec_dot_type = SAC_TYPE_Q8_0,
                       .matvec = sac_matvec_q5_0, .matmat = sac_matmat_q5_0},
    [SAC_TYPE_Q4_1] = {.name = "Q4_1", .block_size = SAC_QK, .type_size = sizeof(block_q4_1),
                       .align = _Alignof(block_q4_1), .to_float = sac_to_float_q4_1,
                       .from_float = sac_from_float_q4_1, .finite = sac_finite_q4_1, .vec_dot_type = SAC_TYPE_Q8_1,
                       .matvec = sac_matvec_q4_1, .matmat = sac_matmat_q4_1},
    [SAC_TYPE_Q5_1] = {.name = "Q5_1", .block_size = SAC_QK, .type_size = sizeof(block_q5_1),
                       .align = _Alignof(block_q5_1), .to_float = sac_to_float_q5_1,
                       .from_float = sac_from_float_q5_1, .finite = sac_finite_q5_1, .vec_dot_type = SAC_TYPE_Q8_1,
                       .matvec = sac_matvec_q5_1, .matmat = sac_matmat_q5_1},
    [SAC_TYPE_Q8_0] = {.name = "Q8_0", .block_size = SAC_QK, .type_size = sizeof(block_q8_0),
                       .align = _Alignof(block_q8_0), .to_float = sac_to_float_q8_0,
                       .from_float = sac_from_float_q8_0, .finite = sac_finite_q8_0, .vec_dot_type = SAC_TYPE_Q8_0,
                       .matvec = sac_matvec_q8_0, .matmat = sac_matmat_q8_0,
                       .activations_size = sac_activations_size_q8_0,
                       .quantize_activations = sac_quantize_activations_q8_0},
    [SAC_TYPE_Q2_K] = {.name = "Q2_K", .block_size = SAC_QK_K, .type_size = sizeof(block_q2_K),
                       .align = _Alignof(block_q2_K), .to_float = sac_to_float_q2_K,
                       .from_float = sac_from_float_q2_K, .finite = sac_finite_q2_K, .vec_dot_type = SAC_TYPE_Q8_K,
                       .matvec = sac_matvec_q2_K, .matmat = sac_matmat_q2_K},
    [SAC_TYPE_Q3_K] = {.name = "Q3_K", .block_size = SAC_QK_K, .type_size = sizeof(block_q3_K),
                       .align = _Alignof(block_q3_K), .to_float = sac_to_float_q3_K,
                       .from_float = sac_from_float_q3_K, .finite = sac_finite_q3_K, .vec_dot_type = SAC_TYPE_Q8_K,
                       .matvec = sac_matvec_q3_K, .matmat = sac_matmat_q3_K},
    [SAC_TYPE_Q4_K] = {.name = "Q4_K", .block_size = SAC_QK_K, .type_size = sizeof(block_q4_K),
                       .align = _Alignof(block_q4_K), .to_float = sac_to_float_q4_K,
                       .from_float = sac_from_float_q4_K, .finite = sac_finite_q4_K, .vec_dot_type = SAC_TYPE_Q8_K,
                       .matvec = sac_matvec_q4_K, .matmat = sac_matmat_q4_K},
    [SAC_TYPE_Q5_K] = {.name = "Q5_K", .block_size = SAC_QK_K, .type_size = sizeof(block_q5_K),
                       .align = _Alignof(block_q5_K), .to_float = sac_to_float_q5_K,
                       .from_float = sac_from_float_q5_K, .finite = sac_finite_q5_K, .vec_dot_type = SAC_TYPE_Q8_K,
                       .matvec = sac_matvec_q5_K, .matmat = sac_matmat_q5_K},
    [SAC_TYPE_Q6_K] = {.name = "Q6_K", .block_size = SAC_QK_K, .type_size = sizeof(block_q6_K),
                       .align = _Alignof(block_q6_K), .to_float = sac_to_float_q6_K,
                       .from_float = sac_from_float_q6_K, .finite = sac_finite_q6_K, .vec_dot_type = SAC_TYPE_Q8_K,
                       .matvec = sac_matvec_q6_K, .matmat = sac_matmat_q6_K},
    /* activation types only: codecs and the conversion, no kernels of their own (ggml has no
     * such weights either), so sac_type_traits_get does not offer them */
    [SAC_TYPE_Q8_1] = {.name = "Q8_1", .block_size = SAC_QK, .type_size = sizeof(block_q8_1),
                       .align = _Alignof(block_q8_1), .to_float = sac_to_float_q8_1,
                       .from_float = sac_from_float_q8_1, .vec_dot_type = SAC_TYPE_Q8_1,
                       .activations_size = sac_activations_size_q8_1,
                       .quantize_activations = sac_quantize_activations_q8_1},
    [SAC_TYPE_Q8_K] = {.name = "Q8_K", .block_size = SAC_QK_K, .type_size = sizeof(block_q8_K),
                       .align = _Alignof(block_q8_K), .to_float = sac_to_float_q8_K,
                       .from_float = sac_from_float_q8_K, .vec_dot_type = SAC_TYPE_Q8_K,
                       .activations_size = sac_activations_size_q8_K,
                       .quantize_activations = sac_quantize_activations_q8_K},
    /* types saccade does not implement (yet): their names */
    [16] = {.name = "IQ2_XXS"},
    [17] = {.name = "IQ2_XS"}, [18] = {.name = "IQ3_XXS"}, [19] = {.name = "IQ1_S"},
    [20] = {.name = "IQ4_NL"}, [21] = {.name = "IQ3_S"}, [22] = {.name = "IQ2_S"}, [23] = {.name = "IQ4_XS"},
    [24] = {.name = "I8"}, [25] = {.name = "I16"}, [26] = {.name = "I32"}, [27] = {.name = "I64"},
    [28] = {.name = "F64"}, [29] = {.name = "IQ1_M"},
};

const sac_type_traits *sac_type_traits_get(uint32_t type) {
    if (type >= SAC_TYPE_COUNT || !type_table[type].to_float || !type_table[type].matvec) return NULL;
    return &type_table[type];
}

const sac_type_traits *sac_type_vec_dot_traits(const sac_type_traits *weight) {
    return &type_table[weight->vec_dot_type];
}

uint32_t sac_type_by_name(const char *name) {
    for (uint32_t type = 0; type < SAC_TYPE_COUNT; type++) {
        const char *n = type_table[type].name, *q = name;
        if (!sac_type_traits_get(type)) continue;
        while (*n && *q && (*n == *q || (*q >= 'a' && *q <= 'z' && *n == *q - 'a' + 'A'))) {
            n++;
            q++;
        }
        if (!*n && !*q) return type;
    }
    return SAC_TYPE_COUNT;
}

int sac_type_row_bytes(uint32_t type, int64_t n, size_t *bytes) {
    const sac_type_traits *tr = sac_type_traits_get(type);
    uint64_t b;
    if (!tr || n < 0 || n % tr->block_size != 0 ||
        !sac_mul_u64((uint64_t)(n / tr->block_size), tr->type_size, &b) || b > SIZE_MAX)
        return 0;
    *bytes = (size_t)b;
    return 1;
}

/* "type N" for the numbers ggml has not named, built by the preprocessor: a name must be a
 * constant string, since the library keeps no mutable global state. */
#define TEN(p) p "0", p "1", p "2", p "3", p "4", p "5", p "6", p "7", p "8", p "9"
#define HUNDRED(p)                                                                         \
    TEN(p "0"), TEN(p "1"), TEN(p "2"), TEN(p "3"), TEN(p "4"), TEN(p "5"), TEN(p "6"),    \
        TEN(p "7"), TEN(p "8"), TEN(p "9")
static const char numbered_type_names[256][10] = {
    TEN("type "),   TEN("type 1"),  TEN("type 2"),  TEN("type 3"),  TEN("type 4"),
    TEN("type 5"),  TEN("type 6"),  TEN("type 7"),  TEN("type 8"),  TEN("type 9"),
    HUNDRED("type 1"), TEN("type 20"), TEN("type 21"), TEN("type 22"), TEN("type 23"),
    TEN("type 24"), "type 250", "type 251", "type 252", "type 253", "type 254", "type 255",
};
#undef TEN
#undef HUNDRED

const char *sac_type_name(uint32_t type) {
    if (type < SAC_TYPE_COUNT && type_table[type].name) return type_table[type].name;
    return type < 256 ? numbered_type_names[type] : "type >255";
}
