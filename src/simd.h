/* simd.h — the 128-bit vector operations the kernels are written in, and where they come from.
 *
 * The kernels use WebAssembly SIMD128's operations (wasm_simd128.h). In the wasm builds the
 * compiler emits them; natively SIMDe (libsimde-dev: simde/wasm/simd128.h) gives the same
 * operations with the same results, each made of the CPU's own instructions. Either way
 * SAC_SIMD128 is defined and the kernels take their vector paths, whose results are the plain C
 * paths' to the bit. Defining SAC_PLAIN_C (the sanitizer and fuzz builds) keeps a native build
 * on the plain C paths, so that those stay tested; a wasm build without -msimd128 has only those.
 *
 * Natively GPT-2-small's matvecs ran 1.4-2x faster on the vector paths than on gcc's
 * vectorization of the plain C ones (scripts/bench_decode.c, AMD EPYC Zen 1, 2 threads: Q8_0
 * 73 -> 98-123, Q4_0 78 -> 144-150, Q4_K 79 -> 140, Q6_K 50 -> 101-104 tokens/s). */
#ifndef SAC_SIMD_H
#define SAC_SIMD_H

/* Fast math would let SIMDe (and the compiler) change results: the paths must agree to the bit. */
#if defined(__FAST_MATH__)
#error "saccade's kernels need IEEE float semantics: build without -ffast-math"
#endif

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define SAC_SIMD128 1
#elif !defined(__wasm__) && !defined(SAC_PLAIN_C) && defined(__has_include)
/* (a build without SIMDe's headers runs the plain C paths: the same results, slower; the tests'
 * test_matmul says which it ran, and make test-wasm-kernels requires SIMDe's natively) */
#if __has_include(<simde/wasm/simd128.h>)
#define SIMDE_WASM_SIMD128_ENABLE_NATIVE_ALIASES /* the wasm_* names */
#include <simde/wasm/simd128.h>
/* wasm_simd128.h's one convenience the kernels use that SIMDe 0.7.4 lacks */
#ifndef wasm_u32x4_make
#define wasm_u32x4_make(a, b, c, d) wasm_i32x4_make((int32_t)(a), (int32_t)(b), (int32_t)(c), (int32_t)(d))
#endif
#define SAC_SIMD128 1
#endif
#endif

#endif
