/* kernels.c — the matrix kernels of each weight type (F32, F16, BF16, the 32-value quantized
 * formats and the K-quants), the activation converters (Q8_0, Q8_1, Q8_K, BF16), and the f32
 * primitives attention uses.
 *
 * Every kernel computes each output with the same sequence of float operations, whatever the
 * path (SIMD128, see simd.h, or plain C), the tile it falls in, or the thread that runs it:
 *   - quantized: per 32-value block an exact int32 dot of int8 weights with int8 activations
 *     (held as int16, so wasm can feed i32x4.dot_i16x8 without re-extending them for every
 *     weight row), then  acc = acc + (float)isum * (d_w * d_x), block after block, and for
 *     Q4_1/Q5_1  acc = acc + m_w * s_x  (their minimum times Q8_1's block sum);
 *   - K-quants: per 256-value block, see the K-quant section below;
 *   - F32/F16/BF16: eight running sums (lane l takes the elements i with i % 8 == l), each
 *     acc[l] = acc[l] + w*x, folded as ((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7)), then the
 *     n % 8 leftover products summed in order and added.
 * So the result never depends on the thread count, matvec equals a one-row matmat bitwise,
 * and the SIMD path equals the scalar one. The SIMD code only reorders *which* outputs are
 * computed together (4 weight rows per step for the quantized matvec, 1 for some K-quants (their
 * *_WALK) and for the float one; for the quantized matmat with SIMD128, panels of 8 weight rows
 * against 4 or 6 activation rows at a time (the K-quants 4), and in plain C 8, then 4 activation
 * rows per weight row; for the float matmat 4 activation rows per weight row, with SIMD128 2
 * f32 weight rows at a time), never the arithmetic of one output. (The SIMD F16 matvec moves a
 * power-of-two scale from the weights to the activations, which leaves every product exactly
 * as it was: see f16_matvec_scaled; the SIMD Q4_0/Q4_1 matvec forms the same exact integer sums
 * from whole bytes: see nibble_activations. The quantized matvec steps store each row's sums
 * before the next row's loads, schedule_point, which orders V8's code and not the arithmetic.)
 *
 * Each family has one generic body, and a type's kernels are that body specialized by the
 * type's format: its block size and a block decoder (quantized), or its element loaders
 * (float). The format is a constant at each specialization, so its functions are inlined
 * into the loops: a type costs no indirect call per block, only one per range of rows.
 *
 * f16 values (F16 weights, block scales) are converted on the SIMD path by a short sequence
 * that is exact for finite halves; it notes whether an inf or NaN went through, and then the
 * step is redone with the full conversion (malformed or extreme files only). A matrix known
 * finite (sac_matrix.finite: every loaded model's) is converted without that watch.
 *
 * With relaxed SIMD (the relaxed builds, -mrelaxed-simd) some kernels compute the same int32
 * dots with i32x4.relaxed_dot_i8x16_i7x16_add_s, which is exact when every lane of its second
 * operand is in [0, 127] (no engine may saturate then), taking unsigned levels as that operand
 * (their offsets come off with the activation sums): the K-quants' matvec, the matmat panel of
 * the K-quants and of the 4- and 5-bit formats (kpanel_step_levels, panel_step's `levels`), and
 * the 4-bit formats' matvec (Q4_0, Q4_1: nibble_dot). The float steps are untouched, so the
 * results keep their bits. See RELAXED below. Chromium 156 on an AMD EPYC (Zen 5), which has
 * AVX-VNNI, compiles the dot to one vpdpbusd: the panels gained (Q4_0 matmat +50-55%, Q4_K
 * +20-25%), and so did the Q4_0 matvec (bench-wasm, GPT-2-small, 2 threads, two alternated
 * pairs: decode 279 -> 318 and 234 -> 301 tokens/s). Without AVX-VNNI V8 expands the op into
 * pmaddubsw, pmaddwd and paddd (measured on the same machine with --js-flags=
 * --no-enable-avx-vnni, which the tests run too): the K-quants' matvec still gains
 * (GPT-2-small decode, 2 threads, against the SIMD128 build: Q2_K 278 / 232, Q3_K 210 / 191,
 * Q5_K 193 / 185 tokens/s), the 4-bit formats' panels too (prefill Q4_0 652 / 518), but the
 * K-quants' panels lose (69-72 against 77-91 GFLOP/s) and so does the 4-bit matvec (Q4_0
 * decode 273 / 284-286), so those two ask relaxed_dot_saturating and take their int16 paths
 * then (TWO_PATHS). Q8_0's values + 128 fill 8 bits: its matmat takes them as the unsigned
 * operand only where the engine's dot is vpdpbusd, whose unsigned operand has all 8 bits
 * (relaxed_dot_unsigned8: Chromium prefill Q8_0 +22-32%); its matvec keeps int16 dots. */
#include "kernels.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "error.h"
#include "quants.h"

#include "simd.h"

#ifdef __wasm_relaxed_simd__
/* clang 14 has no builtin for i32x4.relaxed_dot_i8x16_i7x16_add_s (a: i8x16, b7: i7x16, acc:
 * i32x4 -> acc + the sums of four adjacent products), so the kernels write f32x4.relaxed_fma,
 * which has the same operands and result (v128 v128 v128 -> v128) and an opcode of the same
 * length, and scripts/relaxed-patch.mjs rewrites every one in the linked module to the dot.
 * Nothing else may use the fma: the script refuses a module without one, and one in a function
 * that is not a kernel listed there. */
#define RELAXED 1
#define SAC_RELAXED_DOT_ADD(a, b7, acc) \
    ((v128_t)__builtin_wasm_fma_f32x4((__f32x4)(a), (__f32x4)(b7), (__f32x4)(acc)))

/* Whether the engine computes the relaxed dot the way V8 does on x86 without AVX-VNNI:
 * pmaddubsw, pmaddwd and paddd, where the K-quants' matmat and the 4-bit formats' matvec run
 * faster on the SIMD128 build's int16 dots (Chromium 156 with --js-flags=--no-enable-avx-vnni;
 * see kquant_matmat, TWO_PATHS), which these builds keep for that case. The lowerings differ
 * on operands past 7 bits, which the kernels give the dot only under vpdpbusd
 * (relaxed_dot_unsigned8): four products 127 * 200 sum to 101600 in AVX-VNNI's vpdpbusd
 * (unsigned 200), to -28448 in AVX-VNNI-INT8's vpdpbssd and on ARM (signed: -56), while
 * pmaddubsw saturates each pair's 50800 to 32767: 65534. Every way gives the same integer sums
 * for 7-bit operands, so the choice changes no result. A few instructions, asked once per
 * range of rows (V8's two compilers share one lowering of the op, so the probe's answer is the
 * kernel's). SAC_RELAXED_PATH (tests only) fixes the answer: 1 for the 7-bit relaxed paths
 * everywhere, 0 for the int16 ones. */
static inline __attribute__((always_inline)) int32_t relaxed_dot_probe(void) {
    volatile int8_t a = 127, b = (int8_t)200; /* volatile: nothing folded at compile time */
    const v128_t dot = SAC_RELAXED_DOT_ADD(wasm_i8x16_splat(a), wasm_i8x16_splat(b), wasm_i32x4_splat(0));
    return wasm_i32x4_extract_lane(dot, 0);
}

static inline __attribute__((always_inline)) int relaxed_dot_saturating(void) {
#ifdef SAC_RELAXED_PATH
    return !SAC_RELAXED_PATH;
#else
    return relaxed_dot_probe() == 2 * 32767;
#endif
}

/* Whether the engine computes the relaxed dot as AVX-VNNI's vpdpbusd, which takes its second
 * operand as unsigned bytes, all 8 bits of them, and sums without saturating: then Q8_0's
 * matmat takes its weights + 128 (0..255) as that operand (FORMAT_Q8_0_U8), where no other
 * lowering may. SAC_RELAXED_PATH=0 (tests) answers no; =1 leaves the probe to answer, as
 * forcing this path where the dot saturates or is signed would give wrong sums. */
static inline __attribute__((always_inline)) int relaxed_dot_unsigned8(void) {
#if defined(SAC_RELAXED_PATH) && !SAC_RELAXED_PATH
    return 0;
#else
    return relaxed_dot_probe() == 4 * 127 * 200;
#endif
}
#endif

/* Fused multiply-add would change rounding between paths; keep mul and add separate.
 * (gcc in ISO C mode never contracts; clang does unless told.) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* The generic bodies must be inlined into each type's kernels for the format's functions to
 * be inlined in turn (clang would otherwise keep one shared copy calling them per block). */
#if defined(__GNUC__)
#define KERNEL static inline __attribute__((always_inline))
#else
#define KERNEL static inline
#endif

#define ROW_TILE SAC_ROW_TILE
#define BATCH_TILE 4 /* activation rows per matmat step */
#define FLOAT_LANES 8
#define CACHE_LINE 64 /* bytes; the quantized matvec's read-ahead loads are this far apart */
#define FLOAT_AHEAD_ROWS 8 /* how far ahead the 2-byte float matvecs read (float_matvec) */

static const char *weight_row(const sac_kernel_task *t, int64_t o) {
    return t->w + (size_t)o * t->row_bytes;
}

#ifdef SAC_SIMD128
/* Where a matvec step on `count` rows from o reads ahead: the rows `skip` further on, or, when
 * those would run past the matrix, the step's own rows again (never past the end). */
static inline const char *ahead_rows(const sac_kernel_task *t, int64_t o, int64_t skip, int64_t count) {
    return weight_row(t, o + skip + count <= t->n_out ? o + skip : o);
}
#endif

/* Inline binary16 → binary32 (exact): shift exponent+mantissa into place and rescale by
 * 2^112 (which also normalizes subnormals), rebuild inf/NaN, put the sign back. */
static inline float f16_to_f32_inline(uint16_t h) {
    uint32_t em = (uint32_t)(h & 0x7FFF) << 13, bits;
    float f;
    memcpy(&f, &em, sizeof f);
    f *= 0x1p112f;
    memcpy(&bits, &f, sizeof bits);
    uint32_t special = 0u - (uint32_t)(em >= 0x0F800000u); /* exponent 31: inf or NaN */
    bits = (bits & ~special) | ((em | 0x70000000u) & special);
    bits |= (uint32_t)(h & 0x8000) << 16;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* ------------------------------------------------------------------------------------------
 * Q8_0 activations: x → int8 per 32-value block (as int16), with d as ggml rounds it
 * ---------------------------------------------------------------------------------------- */

/* Layout: the block scales (float, [block][batch]) first, for Q8_1 the block sums s likewise,
 * then the int16-widened int8 values ([batch][n_in]); each part keeps 16-byte alignment. */
static int q8_scales_bytes(int64_t n_in, int64_t n_batch, size_t *bytes) {
    uint64_t n;
    if (n_in < 0 || n_batch < 0 || !sac_mul_u64((uint64_t)(n_in / SAC_QK), (uint64_t)n_batch, &n) ||
        !sac_mul_u64(n, sizeof(float), &n) || n > SIZE_MAX - 15)
        return 0;
    *bytes = ((size_t)n + 15) & ~(size_t)15;
    return 1;
}

/* The bytes before the values: the scales, and for Q8_1 the sums as many again. */
static int q8_head_bytes(int64_t n_in, int64_t n_batch, int with_sums, size_t *bytes) {
    size_t scales;
    if (!q8_scales_bytes(n_in, n_batch, &scales) || (with_sums && scales > SIZE_MAX / 2)) return 0;
    *bytes = with_sums ? 2 * scales : scales;
    return 1;
}

/* The bytes up to the end of the int16 values (rounded up to 16). */
static int q8_values_end(int64_t n_in, int64_t n_batch, int with_sums, size_t *bytes) {
    size_t head;
    uint64_t values;
    if (!q8_head_bytes(n_in, n_batch, with_sums, &head) || !sac_mul_u64((uint64_t)n_batch, (uint64_t)n_in, &values) ||
        !sac_mul_u64(values, sizeof(int16_t), &values) || values > SIZE_MAX - head - 15)
        return 0;
    *bytes = (head + (size_t)values + 15) & ~(size_t)15;
    return 1;
}

#ifdef SAC_SIMD128
/* sum(x) per block as int32 ([block][batch]) follows the int16 values: a format whose decode
 * leaves its offset in q subtracts offset · sum(x) from each integer dot (quant_format). */
static int xsum_bytes(int64_t n_in, int64_t n_batch, size_t *bytes) {
    uint64_t n;
    if (!sac_mul_u64((uint64_t)(n_in / SAC_QK), (uint64_t)n_batch, &n) || !sac_mul_u64(n, sizeof(int32_t), &n) ||
        n > SIZE_MAX / 2)
        return 0;
    *bytes = (size_t)n;
    return 1;
}
#endif

#ifdef SAC_SIMD128
/* Activation rows per step of the matmat's panel (below). The relaxed builds run where the
 * loader's probe of the relaxed dot passes, so far only in browsers (Node 20 gets it wrong), and
 * Chromium 156's V8 keeps the 12 sums of six rows in registers: +10-20% over four
 * (bench_kernels, 1 thread). Node 20's V8 spills them (-20%), so the SIMD128 builds, which Node
 * runs, take four. (A Node whose relaxed dot passes would run six unmeasured.) The bits are the
 * same either way. */
#ifdef __wasm_relaxed_simd__
#define PANEL_ACTS 6
#else
#define PANEL_ACTS 4
#endif
/* Bytes of the grouped copies (below) per activation value: the int16 pairs, and in the
 * relaxed builds the int8 quads as well. */
#ifdef RELAXED
#define GROUPED_VALUE_BYTES 3
#else
#define GROUPED_VALUE_BYTES 2
#endif

/* For the matmat's panel (n_batch > 1), the values again in groups of PANEL_ACTS rows, after the
 * sums: per group, per pair of values, the group's rows side by side (int32 pairs,
 * [group][pair][row]; the last group keeps the stride, its missing rows unwritten). The panel
 * step then reads every row's pair at a constant offset from one address, where from the
 * row-major values V8 computed each row's address anew at every pair: Chromium 156's matmat
 * Q8_0/Q4_0 +3-8% (bench_kernels, 1 thread); Node 20's unchanged. The relaxed builds add the
 * int8 values grouped the same way by fours ([group][quad][row], four bytes each) for the
 * panel of the 4- and 5-bit formats (panel_step's `levels`). */
static uint64_t grouped_rows(int64_t n_batch) {
    return n_batch > 1 ? ((uint64_t)n_batch + PANEL_ACTS - 1) / PANEL_ACTS * PANEL_ACTS : 0;
}

static int grouped_bytes(int64_t n_in, int64_t n_batch, size_t *bytes) {
    uint64_t n;
    if (!sac_mul_u64(grouped_rows(n_batch), (uint64_t)n_in, &n) || !sac_mul_u64(n, GROUPED_VALUE_BYTES, &n) ||
        n > SIZE_MAX / 2)
        return 0;
    *bytes = (size_t)n;
    return 1;
}

/* Where the grouped values start: after the sums, rounded up to 16. */
static int grouped_offset(int64_t n_in, int64_t n_batch, int with_sums, size_t *offset) {
    size_t end, sums;
    if (!q8_values_end(n_in, n_batch, with_sums, &end) || !xsum_bytes(n_in, n_batch, &sums) ||
        sums > SIZE_MAX - end - 15)
        return 0;
    *offset = (end + sums + 15) & ~(size_t)15;
    return 1;
}
#endif

static int q8_size(int64_t n_in, int64_t n_batch, int with_sums, size_t *bytes) {
    size_t end;
#ifdef SAC_SIMD128
    size_t grouped;
    if (!grouped_offset(n_in, n_batch, with_sums, &end) || !grouped_bytes(n_in, n_batch, &grouped) ||
        grouped > SIZE_MAX - end)
        return 0;
    end += grouped;
#else
    if (!q8_values_end(n_in, n_batch, with_sums, &end)) return 0;
#endif
    *bytes = end;
    return 1;
}

int sac_activations_size_q8_0(int64_t n_in, int64_t n_batch, size_t *bytes) { return q8_size(n_in, n_batch, 0, bytes); }
int sac_activations_size_q8_1(int64_t n_in, int64_t n_batch, size_t *bytes) { return q8_size(n_in, n_batch, 1, bytes); }

typedef struct q8_activations {
    const int16_t *q; /* [batch][n_in] */
    const float *d;   /* [block][batch] */
    const float *s;   /* [block][batch], Q8_1 only */
#ifdef SAC_SIMD128
    const int32_t *xsum;    /* [block][batch] */
    const int32_t *grouped; /* [group][pair][row], n_batch > 1 only (grouped_bytes) */
#ifdef RELAXED
    const int32_t *grouped8; /* [group][quad][row], after them */
    const int8_t *x8;        /* the 4-bit matvec's activations as int8 (quant_matvec), else NULL */
#endif
    const v128_t *offsets; /* the 4-bit matvec's -offset * sum(x) per block, splatted (quant_matvec) */
#endif
} q8_activations;

static q8_activations q8_view(const sac_kernel_task *t, int with_sums) {
    size_t scales = 0, head = 0;
    q8_scales_bytes(t->n_in, t->n_batch, &scales); /* sac_matmul sized the workspace with these */
    q8_head_bytes(t->n_in, t->n_batch, with_sums, &head);
    const char *base = t->act;
    q8_activations a = {.q = (const int16_t *)(base + head), .d = (const float *)base,
                        .s = with_sums ? (const float *)(base + scales) : NULL};
#ifdef SAC_SIMD128
    size_t end = 0, grouped = 0;
    q8_values_end(t->n_in, t->n_batch, with_sums, &end);
    grouped_offset(t->n_in, t->n_batch, with_sums, &grouped);
    a.xsum = (const int32_t *)(base + end);
    a.grouped = (const int32_t *)(base + grouped);
#ifdef RELAXED
    /* within the workspace: grouped_bytes checked the product with the larger factor */
    a.grouped8 = a.grouped + grouped_rows(t->n_batch) * (uint64_t)t->n_in / 2;
#endif
#endif
    return a;
}

/* ggml's quantize_row_q8_0 rules as its x86 and Arm builds apply them to activations:
 * d = amax/127, q = round(x * (1/d)) to nearest, ties to even (_mm256_round_ps, vcvtnq; the
 * scalar reference, which quantizes weights, rounds ties away from zero), and the scale used
 * afterwards is d rounded to f16. With s_out (Q8_1), also s = f16(sum(q) * d), with the f32
 * d. */
static void quantize_block(const float *x, int16_t *q, float *d_out, float *s_out) {
#ifdef SAC_SIMD128
    v128_t v[8], amax4 = wasm_f32x4_splat(0.0f);
    for (int k = 0; k < 8; k++) {
        v[k] = wasm_v128_load(x + 4 * k);
        amax4 = wasm_f32x4_max(amax4, wasm_f32x4_abs(v[k]));
    }
    amax4 = wasm_f32x4_max(amax4, wasm_i32x4_shuffle(amax4, amax4, 2, 3, 0, 1));
    amax4 = wasm_f32x4_max(amax4, wasm_i32x4_shuffle(amax4, amax4, 1, 0, 3, 2));
    float amax = wasm_f32x4_extract_lane(amax4, 0);
#else
    /* a NaN makes amax NaN, as f32x4.max does in wasm (fmaxf skips a NaN: the result lost it) */
    float amax = 0.0f;
    int nan = 0;
    for (int j = 0; j < SAC_QK; j++) {
        amax = fmaxf(amax, fabsf(x[j]));
        nan |= isnan(x[j]);
    }
    if (nan) amax = NAN;
#endif
    float d = amax / 127.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    *d_out = sac_f16_to_f32(sac_f32_to_f16(d));
#ifdef SAC_SIMD128
    const v128_t idv = wasm_f32x4_splat(id);
    v128_t qi[8];
    if (amax <= FLT_MAX && id <= FLT_MAX) {
        /* |x·id| <= ~127: adding 1.5·2^23 rounds it to an integer, to nearest even, in the low
         * bits; one add and one integer subtract, where V8 makes the saturating conversion
         * about seven instructions (quantize_rows, 128 rows of 768 in Node: 1.74 -> 1.28 ns a
         * value) */
        const v128_t magic = wasm_f32x4_splat(12582912.0f);
        for (int k = 0; k < 8; k++)
            qi[k] = wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_mul(v[k], idv), magic), magic);
    } else {
        /* NaN (inf · 0 among them) → 0; ±inf (a finite x over a d whose 1/d overflowed)
         * saturates where sac_nearest_int gives 0, but that d is an f16 0 and every sum it
         * enters starts at +0, so no result differs */
        for (int k = 0; k < 8; k++)
            qi[k] = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest(wasm_f32x4_mul(v[k], idv)));
    }
    for (int k = 0; k < 4; k++) wasm_v128_store(q + 8 * k, wasm_i16x8_narrow_i32x4(qi[2 * k], qi[2 * k + 1]));
#else
    for (int j = 0; j < SAC_QK; j++) q[j] = (int16_t)sac_nearest_int(x[j] * id); /* NaN → 0 */
#endif
    if (s_out) {
        int32_t sum = 0;
        for (int j = 0; j < SAC_QK; j++) sum += q[j];
        *s_out = sac_f16_to_f32(sac_f32_to_f16((float)sum * d));
    }
}

#ifdef SAC_SIMD128
/* sum(x) of a block's 32 values (see xsum_bytes). */
static int32_t block_sum(const int16_t *q) {
    v128_t total = wasm_i32x4_splat(0);
    for (int k = 0; k < 4; k++) total = wasm_i32x4_add(total, wasm_i32x4_extadd_pairwise_i16x8(wasm_v128_load(q + 8 * k)));
    total = wasm_i32x4_add(total, wasm_i32x4_shuffle(total, total, 2, 3, 0, 1));
    total = wasm_i32x4_add(total, wasm_i32x4_shuffle(total, total, 1, 0, 3, 2));
    return wasm_i32x4_extract_lane(total, 0);
}
#endif

static void quantize_rows(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1, void *act,
                          int with_sums) {
    size_t scales = 0, head = 0;
    q8_scales_bytes(n_in, n_batch, &scales);
    q8_head_bytes(n_in, n_batch, with_sums, &head);
    float *xd = act, *xs = (float *)((char *)act + scales);
    int16_t *xq = (int16_t *)((char *)act + head);
    int64_t nb = n_in / SAC_QK;
    for (int64_t b = b0; b < b1; b++)
        for (int64_t blk = 0; blk < nb; blk++)
            quantize_block(x + b * n_in + blk * SAC_QK, xq + b * n_in + blk * SAC_QK, xd + blk * n_batch + b,
                           with_sums ? xs + blk * n_batch + b : NULL);
#ifdef SAC_SIMD128
    size_t end = 0;
    q8_values_end(n_in, n_batch, with_sums, &end);
    int32_t *xsum = (int32_t *)((char *)act + end);
    for (int64_t b = b0; b < b1; b++)
        for (int64_t blk = 0; blk < nb; blk++) xsum[blk * n_batch + b] = block_sum(xq + b * n_in + blk * SAC_QK);
    if (n_batch > 1) {
        size_t offset = 0;
        grouped_offset(n_in, n_batch, with_sums, &offset);
        int32_t *grouped = (int32_t *)((char *)act + offset);
        const int64_t pairs = n_in / 2;
        for (int64_t b = b0; b < b1; b++) {
            int32_t *to = grouped + (b / PANEL_ACTS) * pairs * PANEL_ACTS + b % PANEL_ACTS;
            const int16_t *from = xq + b * n_in;
            for (int64_t p = 0; p < pairs; p++) memcpy(to + p * PANEL_ACTS, from + 2 * p, sizeof(int32_t));
        }
#ifdef RELAXED
        int32_t *grouped8 = grouped + grouped_rows(n_batch) * (uint64_t)n_in / 2;
        for (int64_t b = b0; b < b1; b++) {
            int32_t *to = grouped8 + (b / PANEL_ACTS) * (n_in / 4) * PANEL_ACTS + b % PANEL_ACTS;
            const int16_t *from = xq + b * n_in;
            for (int64_t i = 0; i < n_in; i += 16, to += 4 * PANEL_ACTS) {
                v128_t bytes = wasm_i8x16_narrow_i16x8(wasm_v128_load(from + i), wasm_v128_load(from + i + 8));
                wasm_v128_store32_lane(to, bytes, 0);
                wasm_v128_store32_lane(to + PANEL_ACTS, bytes, 1);
                wasm_v128_store32_lane(to + 2 * PANEL_ACTS, bytes, 2);
                wasm_v128_store32_lane(to + 3 * PANEL_ACTS, bytes, 3);
            }
        }
#endif
    }
#endif
}

void sac_quantize_activations_q8_0(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act) {
    quantize_rows(x, n_in, n_batch, b0, b1, act, 0);
}

void sac_quantize_activations_q8_1(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act) {
    quantize_rows(x, n_in, n_batch, b0, b1, act, 1);
}

/* ------------------------------------------------------------------------------------------
 * Quantized kernels: formats of 32-value blocks that open with an f16 scale d, value
 * j = d * q[j], multiplied with Q8_0 activations
 * ---------------------------------------------------------------------------------------- */

#ifdef SAC_SIMD128

/* A block's 32 integers q as four i16x8 vectors (values 0-7, 8-15, 16-23, 24-31). */
typedef void (*decode_fn)(const char *block, v128_t q[4]);

/* Two whole loads, extended in registers: V8 hoists loads (schedule_point), and two raw
 * vectors wait there more cheaply than four extended ones. */
static inline void decode_q8_0(const char *block, v128_t q[4]) {
    const int8_t *qs = ((const block_q8_0 *)block)->qs;
    v128_t lo = wasm_v128_load(qs), hi = wasm_v128_load(qs + 16);
    q[0] = wasm_i16x8_extend_low_i8x16(lo);
    q[1] = wasm_i16x8_extend_high_i8x16(lo);
    q[2] = wasm_i16x8_extend_low_i8x16(hi);
    q[3] = wasm_i16x8_extend_high_i8x16(hi);
}

#ifdef RELAXED
/* Q8_0's values + 128 (0..255: the offset is left to the dot, as Q4_0's 8), for the matmat of
 * the relaxed builds where the relaxed dot takes unsigned bytes whole (FORMAT_Q8_0_U8). */
static inline void decode_q8_0_u8(const char *block, v128_t q[4]) {
    const int8_t *qs = ((const block_q8_0 *)block)->qs;
    const v128_t sign = wasm_i8x16_splat((int8_t)0x80);
    v128_t lo = wasm_v128_xor(wasm_v128_load(qs), sign), hi = wasm_v128_xor(wasm_v128_load(qs + 16), sign);
    q[0] = wasm_u16x8_extend_low_u8x16(lo);
    q[1] = wasm_u16x8_extend_high_u8x16(lo);
    q[2] = wasm_u16x8_extend_low_u8x16(hi);
    q[3] = wasm_u16x8_extend_high_u8x16(hi);
}
#endif

/* 16 bytes of nibbles (low ones values 0-15, high ones 16-31) as they are, 0 to 15, taken apart
 * in 16-bit lanes: there a shift is one instruction (an 8-bit lane shift is several on x86), and
 * the format's offset is left to the dot (quant_format). */
static inline void decode_nibbles(const uint8_t *qs, v128_t q[4]) {
    v128_t packed = wasm_v128_load(qs), low4 = wasm_i16x8_splat(0x0F);
    v128_t first = wasm_u16x8_extend_low_u8x16(packed), second = wasm_u16x8_extend_high_u8x16(packed);
    q[0] = wasm_v128_and(first, low4);
    q[1] = wasm_v128_and(second, low4);
    q[2] = wasm_u16x8_shr(first, 4);
    q[3] = wasm_u16x8_shr(second, 4);
}

static inline void decode_q4_0(const char *block, v128_t q[4]) { decode_nibbles(((const block_q4_0 *)block)->qs, q); }

static inline void decode_q4_1(const char *block, v128_t q[4]) { decode_nibbles(((const block_q4_1 *)block)->qs, q); }

/* Q5_0, Q5_1: levels 0..31 (Q5_0's offset is left to the dot, as Q4_0's); the fifth bits come
 * from qh, bit j for value j: each qh byte is spread over eight lanes and tested against that
 * lane's bit. */
static inline void decode_five_bits(const uint8_t *qh_bytes, const uint8_t *qs, v128_t q[4]) {
    uint32_t qh;
    memcpy(&qh, qh_bytes, sizeof qh);
    v128_t h = wasm_i32x4_splat((int32_t)qh), packed = wasm_v128_load(qs);
    const v128_t bit = wasm_i8x16_make(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const v128_t five = wasm_i8x16_splat(0x10);
    v128_t h_lo = wasm_i8x16_shuffle(h, h, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    v128_t h_hi = wasm_i8x16_shuffle(h, h, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    h_lo = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(h_lo, bit), bit), five);
    h_hi = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(h_hi, bit), bit), five);
    v128_t lo = wasm_v128_or(wasm_v128_and(packed, wasm_i8x16_splat(0x0F)), h_lo);
    v128_t hi = wasm_v128_or(wasm_u8x16_shr(packed, 4), h_hi);
    q[0] = wasm_i16x8_extend_low_i8x16(lo);
    q[1] = wasm_i16x8_extend_high_i8x16(lo);
    q[2] = wasm_i16x8_extend_low_i8x16(hi);
    q[3] = wasm_i16x8_extend_high_i8x16(hi);
}

static inline void decode_q5_0(const char *block, v128_t q[4]) {
    const block_q5_0 *b = (const block_q5_0 *)block;
    decode_five_bits(b->qh, b->qs, q);
}

static inline void decode_q5_1(const char *block, v128_t q[4]) {
    const block_q5_1 *b = (const block_q5_1 *)block;
    decode_five_bits(b->qh, b->qs, q);
}

/* V8 (TurboFan) keeps a wasm function's loads in their order but places arithmetic as late as
 * it can: in a step over four weight rows, all four rows' loads came first, and the sixteen
 * vectors they made outlived the sixteen SIMD registers of x86-64, so V8 spilled them to the
 * stack and reloaded them every block. A volatile store of one row's sums in between makes V8
 * finish that row before it loads the next: the store is a side effect, ordered with the loads.
 * The stored value is not read. bench_kernels (Node, AMD EPYC Zen 5, 1 thread, in cache), matvec
 * GFLOP/s: Q8_0 31.5-33 -> 37.2-37.8, Q4_0 37.4-38.8 -> 40.5-42.4. */
static inline void schedule_point(volatile v128_t *slot, v128_t v) { *slot = v; }

/* Four int32 partial sums of the block dot product. */
static inline v128_t block_dot(const v128_t w[4], const int16_t *x) {
    v128_t s0 = wasm_i32x4_dot_i16x8(w[0], wasm_v128_load(x));
    v128_t s1 = wasm_i32x4_dot_i16x8(w[1], wasm_v128_load(x + 8));
    v128_t s2 = wasm_i32x4_dot_i16x8(w[2], wasm_v128_load(x + 16));
    v128_t s3 = wasm_i32x4_dot_i16x8(w[3], wasm_v128_load(x + 24));
    return wasm_i32x4_add(wasm_i32x4_add(s0, s1), wasm_i32x4_add(s2, s3));
}

/* [sum(a), sum(b), sum(c), sum(d)]: integer sums, so the order is irrelevant. */
static inline v128_t sum4_i32(v128_t a, v128_t b, v128_t c, v128_t d) {
    v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
    v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
    return wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
}

static inline int32_t hsum_i32(v128_t v) {
    v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_i32x4_extract_lane(v, 0);
}

/* Four halves held in the high 16 bits of u32 lanes (v = h << 16) → f32, as
 * f16_to_f32_inline does it. */
static inline v128_t f16_high_to_f32(v128_t v) {
    v128_t em = wasm_u32x4_shr(wasm_i32x4_shl(v, 1), 4); /* (h & 0x7FFF) << 13 */
    v128_t f = wasm_f32x4_mul(em, wasm_f32x4_splat(0x1p112f));
    v128_t exp_mask = wasm_i32x4_splat(0x7C000000);
    v128_t special = wasm_i32x4_eq(wasm_v128_and(v, exp_mask), exp_mask); /* inf or NaN */
    f = wasm_v128_bitselect(wasm_v128_or(em, wasm_i32x4_splat(0x70000000)), f, special);
    return wasm_v128_or(f, wasm_v128_and(v, wasm_i32x4_splat((int32_t)0x80000000u)));
}

/* The same for finite halves, in fewer steps: the arithmetic shift puts exponent and
 * mantissa in place with copies of the sign above them, the mask keeps one sign bit, and
 * 2^112 rebiases the exponent (which also normalizes subnormals). */
static inline v128_t f16_high_finite_to_f32(v128_t v) {
    v128_t bits = wasm_v128_and(wasm_i32x4_shr(v, 3), wasm_i32x4_splat((int32_t)0x8FFFE000u));
    return wasm_f32x4_mul(bits, wasm_f32x4_splat(0x1p112f));
}

/* The fast conversions collect the exponent fields of what they convert in `seen` (an
 * unsigned max per 16-bit lane): did an inf or NaN (exponent 0x7C00) pass through them? */
static inline int seen_special(v128_t seen) {
    return wasm_v128_any_true(wasm_i16x8_eq(seen, wasm_i16x8_splat(0x7C00)));
}

#else

/* A block's 32 integers q as int16: int16 × int16 → int32 sums is the pattern gcc vectorizes
 * as a multiply-add of pairs (pmaddwd), which int8 × int16 is not. */
typedef void (*decode_fn)(const char *block, int16_t q[SAC_QK]);

static inline void decode_q8_0(const char *block, int16_t q[SAC_QK]) {
    const int8_t *qs = ((const block_q8_0 *)block)->qs;
    for (int j = 0; j < SAC_QK; j++) q[j] = qs[j];
}

static inline void decode_nibbles(const uint8_t *qs, int offset, int16_t q[SAC_QK]) {
    for (int j = 0; j < SAC_QK / 2; j++) {
        q[j] = (int16_t)((qs[j] & 0x0F) - offset);
        q[j + SAC_QK / 2] = (int16_t)((qs[j] >> 4) - offset);
    }
}

static inline void decode_q4_0(const char *block, int16_t q[SAC_QK]) {
    decode_nibbles(((const block_q4_0 *)block)->qs, 8, q);
}

static inline void decode_q4_1(const char *block, int16_t q[SAC_QK]) {
    decode_nibbles(((const block_q4_1 *)block)->qs, 0, q);
}

static inline void decode_five_bits(const uint8_t *qh_bytes, const uint8_t *qs, int offset, int16_t q[SAC_QK]) {
    uint32_t qh = (uint32_t)qh_bytes[0] | (uint32_t)qh_bytes[1] << 8 | (uint32_t)qh_bytes[2] << 16 |
                  (uint32_t)qh_bytes[3] << 24;
    for (int j = 0; j < SAC_QK / 2; j++) {
        q[j] = (int16_t)(((qs[j] & 0x0F) | (int)((qh >> j) & 1) << 4) - offset);
        q[j + SAC_QK / 2] = (int16_t)(((qs[j] >> 4) | (int)((qh >> (j + SAC_QK / 2)) & 1) << 4) - offset);
    }
}

static inline void decode_q5_0(const char *block, int16_t q[SAC_QK]) {
    const block_q5_0 *b = (const block_q5_0 *)block;
    decode_five_bits(b->qh, b->qs, 16, q);
}

static inline void decode_q5_1(const char *block, int16_t q[SAC_QK]) {
    const block_q5_1 *b = (const block_q5_1 *)block;
    decode_five_bits(b->qh, b->qs, 0, q);
}

static inline int32_t block_dot(const int16_t *restrict w, const int16_t *restrict x) {
    int32_t s = 0;
    for (int j = 0; j < SAC_QK; j++) s += (int32_t)w[j] * (int32_t)x[j];
    return s;
}

#endif

/* A quantized format, as the generic bodies take it: bytes per block, the block decoder, and
 * whether an f16 minimum m follows d (Q4_1, Q5_1: value = d q + m, with Q8_1 activations,
 * whose block sums s make the m term m * s). */
typedef struct quant_format {
    size_t block_bytes;
    decode_fn decode;
    int has_min;
    /* The SIMD kernels' decode gives each q plus this (Q4_0's nibbles as they are,
     * 8 more than its values): their integer dots subtract offset · sum(x), an exact integer.
     * The plain C decode subtracts it itself. */
    int offset;
#ifdef SAC_SIMD128
    /* Q4_0, Q4_1: the matvec's decoder of whole bytes (nibble_activations); NULL elsewhere */
    decode_fn decode_bytes;
    /* the decode gives unsigned levels that the relaxed builds' panel takes as the relaxed
     * dot's second operand (panel_step's `levels`): 0..31 (7 bits, any engine), or Q8_0's
     * 0..255 where the dot is vpdpbusd (FORMAT_Q8_0_U8, relaxed_dot_unsigned8) */
    int small_levels;
#endif
} quant_format;

static inline float block_scale(quant_format f, const char *row, int64_t blk) {
    uint16_t d;
    memcpy(&d, row + (size_t)blk * f.block_bytes, sizeof d); /* d opens the block */
    return f16_to_f32_inline(d);
}

static inline float block_min(quant_format f, const char *row, int64_t blk) {
    uint16_t m;
    memcpy(&m, row + (size_t)blk * f.block_bytes + sizeof m, sizeof m); /* m follows d */
    return f16_to_f32_inline(m);
}

/* One output: weight row o against activation row b (matvec in plain C, and leftovers). */
KERNEL float quant_dot(const sac_kernel_task *t, const q8_activations *a, quant_format f, int64_t o, int64_t b) {
    const char *row = weight_row(t, o);
    const int16_t *x = a->q + b * t->n_in;
    int64_t nb = t->n_in / SAC_QK;
    float acc = 0.0f;
#ifdef SAC_SIMD128

    for (int64_t blk = 0; blk < nb; blk++) {
        v128_t w[4];
        f.decode(row + (size_t)blk * f.block_bytes, w);
        int32_t isum = hsum_i32(block_dot(w, x + blk * SAC_QK)) - f.offset * a->xsum[blk * t->n_batch + b];
        float scale = block_scale(f, row, blk) * a->d[blk * t->n_batch + b];
        acc = acc + (float)isum * scale;
        if (f.has_min) acc = acc + block_min(f, row, blk) * a->s[blk * t->n_batch + b];
    }
#else
    /* integer dots for a run of blocks first (vectorized), then the serial float sums */
    enum { RUN = 64 };
    int32_t isum[RUN];
    for (int64_t b0 = 0; b0 < nb; b0 += RUN) {
        int64_t m = nb - b0 < RUN ? nb - b0 : RUN;
        for (int64_t k = 0; k < m; k++) {
            int16_t w[SAC_QK];
            f.decode(row + (size_t)(b0 + k) * f.block_bytes, w);
            isum[k] = block_dot(w, x + (b0 + k) * SAC_QK);
        }
        for (int64_t k = 0; k < m; k++) {
            float scale = block_scale(f, row, b0 + k) * a->d[(b0 + k) * t->n_batch + b];
            acc = acc + (float)isum[k] * scale;
            if (f.has_min) acc = acc + block_min(f, row, b0 + k) * a->s[(b0 + k) * t->n_batch + b];
        }
    }
#endif
    return acc;
}

/* The activations quant_rows4 reads (a constant where it is inlined): as quantized (ACTS_PLAIN),
 * prepared for the 4-bit formats' bytes (ACTS_NIBBLES, nibble_activations), or as int8 for
 * nibble_dot (ACTS_NIBBLES_RELAXED). */
enum { ACTS_PLAIN, ACTS_NIBBLES, ACTS_NIBBLES_RELAXED };

#ifdef SAC_SIMD128
/* quant_matvec's step: rows o..o+3 against the activations, as one vector whose lanes are the
 * four rows. Four weight rows share each load of the activation block. The weight scales are
 * converted as load8_f16 converts F16 weights: `exact`, or fast while *seen collects exponents.
 *
 * The step also reads ahead, in `ahead`: the next four rows (the bytes that follow these), or
 * these rows again at the end of the matrix. Four rows read side by side are four short
 * streams (a 768-wide Q8_0 row is 13 cache lines), too short for the hardware prefetcher to
 * lock on to, and wasm has no prefetch instruction. So each block also loads two bytes a cache
 * line apart from its share of the next rows' bytes (4 blocks: 136 bytes for Q8_0, 72 for
 * Q4_0), in order: one sequential stream, which the prefetcher follows. The values are not
 * used. Measured on the GPT-2-small Q8_0 model, 1 thread in Node: 33-40 → 48-52 tokens/s. */
/* How a step converts the f16 scales of its blocks: exactly; fast while *seen collects the
 * exponents (an inf or NaN among them redoes the step exactly); or fast for a matrix known
 * finite (sac_matrix.finite: then no scale is inf or NaN, as every value would be). */
enum { SCALES_EXACT, SCALES_WATCHED, SCALES_FINITE };

/* The f16 at byte `at` of four rows, as f32 lanes, converted as `scales` says. */
static inline v128_t f16_of_rows4(const char *r0, const char *r1, const char *r2, const char *r3, size_t at,
                                  int scales, v128_t *seen) {
    v128_t h = wasm_v128_load16_lane(r0 + at, wasm_i32x4_splat(0), 1);
    h = wasm_v128_load16_lane(r1 + at, h, 3);
    h = wasm_v128_load16_lane(r2 + at, h, 5);
    h = wasm_v128_load16_lane(r3 + at, h, 7);
    if (scales == SCALES_EXACT) return f16_high_to_f32(h);
    if (scales == SCALES_WATCHED) *seen = wasm_u16x8_max(*seen, wasm_v128_and(h, wasm_i16x8_splat(0x7C00)));
    return f16_high_finite_to_f32(h);
}

#ifdef RELAXED
/* A 4-bit block's integer dot in the relaxed builds: its low nibbles against x[0..15] and its
 * high ones against x[16..31], one relaxed dot each with the nibbles (0..15) as the 7-bit
 * operand; the lanes' sum is the int16 dots' (the offset comes off as before). */
static inline v128_t nibble_dot(const char *qs, const int8_t *x) {
    const v128_t b = wasm_v128_load(qs), low4 = wasm_i8x16_splat(0x0F);
    const v128_t lo = wasm_v128_and(b, low4), hi = wasm_v128_and(wasm_u16x8_shr(b, 4), low4);
    return SAC_RELAXED_DOT_ADD(wasm_v128_load(x + 16), hi, SAC_RELAXED_DOT_ADD(wasm_v128_load(x), lo, wasm_i32x4_splat(0)));
}
#endif

/* Row r's block dot in quant_rows4: decoded and against the int16 activations, or nibble_dot. */
KERNEL v128_t row_block_dot(quant_format f, const char *block, const q8_activations *a, int64_t blk, int prepared) {
#ifdef RELAXED
    /* the nibbles are a block's last 16 bytes (Q4_0: after d; Q4_1: after d and m) */
    if (prepared == ACTS_NIBBLES_RELAXED) return nibble_dot(block + f.block_bytes - 16, a->x8 + blk * SAC_QK);
#endif
    (void)prepared;
    v128_t w[4];
    f.decode(block, w);
    return block_dot(w, a->q + blk * SAC_QK);
}

KERNEL v128_t quant_rows4(const sac_kernel_task *t, const q8_activations *a, quant_format f, int scales, int64_t o,
                          const char *ahead, v128_t *seen, int prepared) {
    int64_t nb = t->n_in / SAC_QK;
    const char *r0 = weight_row(t, o), *r1 = weight_row(t, o + 1);
    const char *r2 = weight_row(t, o + 2), *r3 = weight_row(t, o + 3);
    v128_t acc = wasm_f32x4_splat(0.0f), slot[1];
    for (int64_t blk = 0; blk < nb; blk++) {
        const volatile char *next = (const volatile char *)(ahead + (size_t)blk * ROW_TILE * f.block_bytes);
        (void)next[0];
        (void)next[CACHE_LINE];
        size_t at = (size_t)blk * f.block_bytes;
        v128_t s0, s1, s2, s3;
        s0 = row_block_dot(f, r0 + at, a, blk, prepared);
        schedule_point(slot, s0);
        s1 = row_block_dot(f, r1 + at, a, blk, prepared);
        schedule_point(slot, s1);
        s2 = row_block_dot(f, r2 + at, a, blk, prepared);
        schedule_point(slot, s2);
        s3 = row_block_dot(f, r3 + at, a, blk, prepared);
        v128_t isum = sum4_i32(s0, s1, s2, s3);
        if (f.offset)
            isum = prepared ? wasm_i32x4_add(isum, a->offsets[blk])
                            : wasm_i32x4_sub(isum, wasm_i32x4_splat(f.offset * a->xsum[blk]));
        /* the f16 scale opens each block; the minimum, where there is one, follows it */
        v128_t dw = f16_of_rows4(r0, r1, r2, r3, at, scales, seen);
        v128_t scale = wasm_f32x4_mul(dw, wasm_f32x4_splat(a->d[blk]));
        isum = wasm_f32x4_convert_i32x4(isum);
        acc = wasm_f32x4_add(acc, wasm_f32x4_mul(isum, scale));
        if (f.has_min) {
            v128_t mw = f16_of_rows4(r0, r1, r2, r3, at + sizeof(sac_f16), scales, seen);
            acc = wasm_f32x4_add(acc, wasm_f32x4_mul(mw, wasm_f32x4_splat(a->s[blk])));
        }
    }
    return acc;
}
#endif

#ifdef SAC_SIMD128
/* The matvec of the 4-bit formats, one decode step shorter. With b = a block's bytes, whose
 * low nibbles l take activations x[0..15] and high ones h x[16..31]:
 *   Σ l_j x_j + Σ h_j x_{16+j} = Σ b_j x_j + Σ h_j (x_{16+j} - 16 x_j),   as b_j = l_j + 16 h_j,
 * so the bytes go into the dot whole (no mask) against x[0..15], and the high nibbles against
 * x[16..31] - 16 x[0..15], prepared once per range of rows (|x| <= 127: within ±2159). The
 * integer sums are the same, so the results are too. bench_decode (Node, AMD EPYC Zen 5), Q4_0
 * matvecs of a GPT-2-small token: 1 thread 156-158 -> 166-170, 2 threads 280-284 -> 307-308
 * tokens/s. */
#define NIBBLE_PREPARED_MAX 16384 /* activation values prepared on the stack (32 KB; 8 KB of offsets) */

/* 16 bytes of nibbles as they are (against x[0..15]) and their high nibbles (against the
 * prepared x[16..31]), in 16-bit lanes. */
static inline void decode_bytes_and_high(const uint8_t *qs, v128_t q[4]) {
    v128_t packed = wasm_v128_load(qs);
    q[0] = wasm_u16x8_extend_low_u8x16(packed);
    q[1] = wasm_u16x8_extend_high_u8x16(packed);
    q[2] = wasm_u16x8_shr(q[0], 4);
    q[3] = wasm_u16x8_shr(q[1], 4);
}

static inline void decode_q4_0_bytes(const char *block, v128_t q[4]) {
    decode_bytes_and_high(((const block_q4_0 *)block)->qs, q);
}

static inline void decode_q4_1_bytes(const char *block, v128_t q[4]) {
    decode_bytes_and_high(((const block_q4_1 *)block)->qs, q);
}

/* The activations in that form: values 16..31 of each block become x[16..31] - 16 x[0..15]. */
static inline void nibble_activations(const int16_t *q, int64_t n_in, int16_t *prepared) {
    for (int64_t i = 0; i < n_in; i += SAC_QK) {
        v128_t x0 = wasm_v128_load(q + i), x1 = wasm_v128_load(q + i + 8);
        wasm_v128_store(prepared + i, x0);
        wasm_v128_store(prepared + i + 8, x1);
        wasm_v128_store(prepared + i + 16, wasm_i16x8_sub(wasm_v128_load(q + i + 16), wasm_i16x8_shl(x0, 4)));
        wasm_v128_store(prepared + i + 24, wasm_i16x8_sub(wasm_v128_load(q + i + 24), wasm_i16x8_shl(x1, 4)));
    }
}
#endif

KERNEL void quant_matvec_rows(const sac_kernel_task *t, const q8_activations *a, quant_format f, int64_t o0,
                              int64_t o1, int prepared) {
    int64_t o = o0;
#ifdef SAC_SIMD128
    /* each loop its own copy of the step, with `scales` a constant in it (one loop choosing the
     * copy per step ran Q8_0 2-3% slower: bench_kernels, Node, 1 thread, in cache) */
    if (t->finite)
        for (; o + ROW_TILE <= o1; o += ROW_TILE) {
            /* the next four rows, or these again at the end of the matrix: nothing past it */
            const char *ahead = ahead_rows(t, o, ROW_TILE, ROW_TILE);
            wasm_v128_store(t->y + o, quant_rows4(t, a, f, SCALES_FINITE, o, ahead, NULL, prepared));
        }
    for (; o + ROW_TILE <= o1; o += ROW_TILE) {
        const char *ahead = ahead_rows(t, o, ROW_TILE, ROW_TILE);
        v128_t seen = wasm_i32x4_splat(0), acc = quant_rows4(t, a, f, SCALES_WATCHED, o, ahead, &seen, prepared);
        if (seen_special(seen)) acc = quant_rows4(t, a, f, SCALES_EXACT, o, ahead, &seen, prepared); /* an inf or NaN scale */
        wasm_v128_store(t->y + o, acc);
    }
#endif
    for (; o < o1; o++) t->y[o] = quant_dot(t, a, f, o, 0);
}

/* `relaxed` (a constant where it is inlined; 1 only in the relaxed builds): the 4-bit formats
 * take nibble_dot, else their prepared int16 dots. */
KERNEL void quant_matvec(const sac_kernel_task *t, quant_format f, int64_t o0, int64_t o1, int relaxed) {
    q8_activations a = q8_view(t, f.has_min);
#ifdef SAC_SIMD128
    if (f.decode_bytes && t->n_in <= NIBBLE_PREPARED_MAX) {
        /* the offset's correction per block as a vector: the step adds it where it would splat it */
        v128_t offsets[NIBBLE_PREPARED_MAX / SAC_QK];
        if (f.offset) {
            for (int64_t blk = 0; blk < t->n_in / SAC_QK; blk++) offsets[blk] = wasm_i32x4_splat(-f.offset * a.xsum[blk]);
            a.offsets = offsets;
        }
#ifdef RELAXED
        if (relaxed) {
            int8_t x8[NIBBLE_PREPARED_MAX]; /* Q8_0 activations are within ±127 */
            for (int64_t i = 0; i < t->n_in; i += 16)
                wasm_v128_store(x8 + i, wasm_i8x16_narrow_i16x8(wasm_v128_load(a.q + i), wasm_v128_load(a.q + i + 8)));
            a.x8 = x8;
            quant_matvec_rows(t, &a, f, o0, o1, ACTS_NIBBLES_RELAXED);
            return;
        }
#endif
        int16_t prepared[NIBBLE_PREPARED_MAX];
        nibble_activations(a.q, t->n_in, prepared);
        a.q = prepared;
        f.decode = f.decode_bytes;
        /* a call of its own: one call after the branch would make f.decode a choice of two
         * decoders, called indirectly per block (4x slower) instead of inlined */
        quant_matvec_rows(t, &a, f, o0, o1, ACTS_NIBBLES);
        return;
    }
#endif
    (void)relaxed;
    quant_matvec_rows(t, &a, f, o0, o1, ACTS_PLAIN);
}

#ifdef SAC_SIMD128
/* matmat (prefill). Per block, i32x4.dot_i16x8 (pmaddwd) is the work; what costs besides is
 * reducing its four lanes to one sum per output (sum4_i32's shuffles) and decoding. So a panel
 * of weight rows is decoded once, for the whole batch, into pairs interleaved across four rows:
 * lane i of w[k][p][q] holds values 2p, 2p+1 of block k of row 4q + i. A dot of that with
 * activation values 2p, 2p+1 splatted over the lanes gives four rows' partial sums in their own
 * lanes, which add up to each row's block sum with no reduction.
 * The integer sums are exact, and the float steps per output are the same, in the same order,
 * as everywhere else (acc = acc + (float)isum * (d_w * d_x), then + m_w * s_x). */
#define PANEL_QUADS (SAC_PANEL_ROWS / 4) /* weight rows in a panel, in fours */
#define PANEL_BLOCKS 8 /* blocks of each row in a panel: 4.5 KB on the stack */
/* The step's loop over a block's pairs, two pairs an iteration in the relaxed builds: Chromium
 * 156's V8 spends ~10 scalar operations an iteration on addresses and the loop, beside 12 dots
 * (bench_kernels in Chromium, 1 thread, Q8_0 and Q4_0 matmat +3-8%). Node 20's V8 then spills
 * the four-row sums (-25%), and both lose on the K-quant panel, so the others keep one. */
#ifdef __wasm_relaxed_simd__
#define PANEL_PAIRS_LOOP _Pragma("clang loop unroll_count(2)")
#else
#define PANEL_PAIRS_LOOP
#endif
/* The K-quant panel (kpanel_step, kpanel_step_levels) takes four in every build: with six,
 * Chromium 156 on an AMD EPYC (Zen 5) ran Q6_K prefill at 696 against 843 tokens/s for four
 * (bench-wasm --simd both, 2 threads), where an Intel Xeon had gained 5%. Its arrays keep
 * PANEL_ACTS columns (the sums' helpers take that shape) and use the first four. */
#define KPANEL_ACTS 4
typedef struct quant_panel {
    /* pairs of int16 values, offsets removed; or with small levels in the relaxed builds, in
     * w[k][0..7]: quads of byte levels, offsets kept (lane i of w[k][c][q]: levels 4c..4c+3 of
     * block k of row 4q + i) */
    v128_t w[PANEL_BLOCKS][SAC_QK / 2][PANEL_QUADS];
    v128_t d[PANEL_BLOCKS][PANEL_QUADS];             /* f32 scales of four rows */
    v128_t m[PANEL_BLOCKS][PANEL_QUADS];             /* f32 minimums (Q4_1, Q5_1) */
} quant_panel;

/* Four rows' vectors of four int16 pairs each (pairs c0..c0+3 of rows a, b, c, d), as four
 * vectors of one pair from each row (out[c]: pair c0 + c of a, b, c, d): a 4×4 transpose of
 * 32-bit lanes. */
static inline void interleave_pairs4(v128_t a, v128_t b, v128_t c, v128_t d, v128_t out[4]) {
    v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
    v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
    out[0] = wasm_i64x2_shuffle(ab_lo, cd_lo, 0, 2);
    out[1] = wasm_i64x2_shuffle(ab_lo, cd_lo, 1, 3);
    out[2] = wasm_i64x2_shuffle(ab_hi, cd_hi, 0, 2);
    out[3] = wasm_i64x2_shuffle(ab_hi, cd_hi, 1, 3);
}

/* Rows o..o+4*quads-1, blocks blk0..blk0+nblk-1 into the panel. */
KERNEL void fill_panel(const sac_kernel_task *t, quant_format f, int64_t o, int quads, int64_t blk0, int nblk,
                       quant_panel *p) {
    for (int q = 0; q < quads; q++) {
        const char *row[4];
        for (int i = 0; i < 4; i++) row[i] = weight_row(t, o + 4 * q + i);
        for (int k = 0; k < nblk; k++) {
            const int64_t blk = blk0 + k;
            v128_t v[4][4];
            float d[4], m[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int i = 0; i < 4; i++) {
                f.decode(row[i] + (size_t)blk * f.block_bytes, v[i]);
                d[i] = block_scale(f, row[i], blk);
                if (f.has_min) m[i] = block_min(f, row[i], blk);
            }
#ifdef RELAXED
            if (f.small_levels) {
                /* row i's levels as bytes: 0-15 in v[i][0], 16-31 in v[i][1], quads in 32-bit lanes */
                for (int i = 0; i < 4; i++) {
                    v[i][0] = wasm_u8x16_narrow_i16x8(v[i][0], v[i][1]);
                    v[i][1] = wasm_u8x16_narrow_i16x8(v[i][2], v[i][3]);
                }
                for (int h = 0; h < 2; h++) {
                    v128_t quads4[4];
                    interleave_pairs4(v[0][h], v[1][h], v[2][h], v[3][h], quads4);
                    for (int c = 0; c < 4; c++) p->w[k][4 * h + c][q] = quads4[c];
                }
            } else
#endif
            {
                for (int i = 0; i < 4; i++)
                    if (f.offset)
                        for (int j = 0; j < 4; j++) v[i][j] = wasm_i16x8_sub(v[i][j], wasm_i16x8_splat((int16_t)f.offset));
                /* v[i][j] holds pairs 4j..4j+3 of row i */
                for (int j = 0; j < 4; j++) {
                    v128_t pairs[4];
                    interleave_pairs4(v[0][j], v[1][j], v[2][j], v[3][j], pairs);
                    for (int c = 0; c < 4; c++) p->w[k][4 * j + c][q] = pairs[c];
                }
            }
            p->d[k][q] = wasm_v128_load(d);
            p->m[k][q] = wasm_v128_load(m);
        }
    }
}

/* A panel step's sums of activation rows b..b+acts-1 with weight rows o..o+4*quads-1: kept in y
 * between the panels of a row's blocks (zero before the first). */
KERNEL void panel_sums_load(const sac_kernel_task *t, int64_t o, int quads, int64_t b, int acts, int first,
                            v128_t acc[PANEL_QUADS][PANEL_ACTS]) {
    for (int q = 0; q < quads; q++)
        for (int r = 0; r < acts; r++)
            acc[q][r] = first ? wasm_f32x4_splat(0.0f) : wasm_v128_load(t->y + (b + r) * t->n_out + o + 4 * q);
}

KERNEL void panel_sums_store(const sac_kernel_task *t, int64_t o, int quads, int64_t b, int acts,
                             v128_t acc[PANEL_QUADS][PANEL_ACTS]) {
    for (int q = 0; q < quads; q++)
        for (int r = 0; r < acts; r++) wasm_v128_store(t->y + (b + r) * t->n_out + o + 4 * q, acc[q][r]);
}

/* One block's integer sums into the float sums: the same steps, in the same order, as every
 * other path (acc + (float)isum * (d_w * d_x), then + m_w * s_x). */
KERNEL void panel_block_sums(const sac_kernel_task *t, const q8_activations *a, quant_format f,
                             const quant_panel *p, int quads, int k, int64_t blk, int64_t b, int acts,
                             v128_t isum[PANEL_QUADS][PANEL_ACTS], v128_t acc[PANEL_QUADS][PANEL_ACTS]) {
    const int64_t n_batch = t->n_batch;
    for (int r = 0; r < acts; r++) {
        const v128_t dx = wasm_f32x4_splat(a->d[blk * n_batch + b + r]);
        for (int q = 0; q < quads; q++) {
            v128_t scale = wasm_f32x4_mul(p->d[k][q], dx);
            acc[q][r] = wasm_f32x4_add(acc[q][r], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(isum[q][r]), scale));
            if (f.has_min)
                acc[q][r] = wasm_f32x4_add(acc[q][r],
                                           wasm_f32x4_mul(p->m[k][q], wasm_f32x4_splat(a->s[blk * n_batch + b + r])));
        }
    }
}

/* The panel against activation rows b..b+acts-1 (panel_sums_load). `levels` (a constant where
 * it is inlined; the relaxed builds, formats of small levels): the panel holds quads of byte
 * levels, taken with the relaxed int8 dot (AVX-VNNI's vpdpbusd in Chromium 156 on x86 that has
 * it) four values of four rows against four activation values a dot, where the int16 dot and
 * its add take two; the levels' offset comes off with sum(x) at each block's start. The integer
 * sums are the same, and so are the results. bench_kernels in Chromium, 1 thread, AMD EPYC
 * (Zen 5): matmat Q4_0 64-69 -> 91-113 GFLOP/s, Q5_0 and Q4_1 +40-50%. Q8_0's values + 128
 * fill all 8 bits, which only vpdpbusd takes exactly (FORMAT_Q8_0_U8, relaxed_dot_unsigned8):
 * 75-79 -> 104-122 GFLOP/s; elsewhere Q8_0 keeps the int16 panel (as two 7-bit dots a quad it
 * had gained 0-7%: as many multiplies as pmaddwd). */
KERNEL void panel_step(const sac_kernel_task *t, const q8_activations *a, quant_format f, const quant_panel *p,
                       int64_t o, int quads, int64_t blk0, int nblk, int64_t b, int acts, int first, int levels) {
    const int64_t n_batch = t->n_batch;
    const int per_slot = levels ? 4 : 2; /* values in each int32 of the grouped copy: a quad, a pair */
    v128_t acc[PANEL_QUADS][PANEL_ACTS];
    panel_sums_load(t, o, quads, b, acts, first, acc);
    /* row b's slots in the grouped values: slot c at x[c * PANEL_ACTS], the next rows' beside it */
#ifdef RELAXED
    const int32_t *grouped = levels ? a->grouped8 : a->grouped;
#else
    const int32_t *grouped = a->grouped;
#endif
    const int32_t *x = grouped + (b / PANEL_ACTS) * (t->n_in / per_slot) * PANEL_ACTS + b % PANEL_ACTS;
    for (int k = 0; k < nblk; k++) {
        const int64_t blk = blk0 + k;
        const int32_t *xb = x + blk * (SAC_QK / per_slot) * PANEL_ACTS;
        v128_t isum[PANEL_QUADS][PANEL_ACTS];
        for (int r = 0; r < acts; r++) {
            const v128_t start = wasm_i32x4_splat(levels ? -f.offset * a->xsum[blk * n_batch + b + r] : 0);
            for (int q = 0; q < quads; q++) isum[q][r] = start;
        }
        PANEL_PAIRS_LOOP
        for (int c = 0; c < SAC_QK / per_slot; c++)
            for (int r = 0; r < acts; r++) {
                v128_t xs = wasm_v128_load32_splat(xb + c * PANEL_ACTS + r);
                for (int q = 0; q < quads; q++)
#ifdef RELAXED
                    isum[q][r] = levels ? SAC_RELAXED_DOT_ADD(xs, p->w[k][c][q], isum[q][r])
                                        : wasm_i32x4_add(isum[q][r], wasm_i32x4_dot_i16x8(p->w[k][c][q], xs));
#else
                    isum[q][r] = wasm_i32x4_add(isum[q][r], wasm_i32x4_dot_i16x8(p->w[k][c][q], xs));
#endif
            }
        panel_block_sums(t, a, f, p, quads, k, blk, b, acts, isum, acc);
    }
    panel_sums_store(t, o, quads, b, acts, acc);
}

/* The panel against every activation row, PANEL_ACTS at a time. */
KERNEL void panel_pass(const sac_kernel_task *t, const q8_activations *a, quant_format f, const quant_panel *p,
                       int64_t o, int quads, int64_t blk0, int nblk) {
    int64_t b = 0;
#ifdef RELAXED
    if (f.small_levels) {
        for (; b + PANEL_ACTS <= t->n_batch; b += PANEL_ACTS)
            panel_step(t, a, f, p, o, quads, blk0, nblk, b, PANEL_ACTS, blk0 == 0, 1);
        for (; b < t->n_batch; b++) panel_step(t, a, f, p, o, quads, blk0, nblk, b, 1, blk0 == 0, 1);
        return;
    }
#endif
    for (; b + PANEL_ACTS <= t->n_batch; b += PANEL_ACTS)
        panel_step(t, a, f, p, o, quads, blk0, nblk, b, PANEL_ACTS, blk0 == 0, 0);
    for (; b < t->n_batch; b++) panel_step(t, a, f, p, o, quads, blk0, nblk, b, 1, blk0 == 0, 0);
}

/* Weight rows o..o+4*quads-1 against every activation row, a panel of blocks at a time. */
KERNEL void panel_rows(const sac_kernel_task *t, const q8_activations *a, quant_format f, int64_t o, int quads) {
    const int64_t nb = t->n_in / SAC_QK;
    quant_panel p;
    for (int64_t blk0 = 0; blk0 < nb; blk0 += PANEL_BLOCKS) {
        const int nblk = nb - blk0 < PANEL_BLOCKS ? (int)(nb - blk0) : PANEL_BLOCKS;
        fill_panel(t, f, o, quads, blk0, nblk, &p);
        /* constant quads in each copy: the step's loops unroll */
        if (quads == PANEL_QUADS)
            panel_pass(t, a, f, &p, o, PANEL_QUADS, blk0, nblk);
        else
            panel_pass(t, a, f, &p, o, 1, blk0, nblk);
    }
}

/* Rows [o0, o1) are sac_matmul's unit: whole panels, then fours, then single rows. Filling a
 * panel costs less than decoding each block per group of activation rows from two rows of
 * batch on (bench_kernels, 768x3072 Q8_0 and Q4_0, 1 thread in Node: batch 2 +24%, 8 +14%,
 * 32 +40%, 128 +50%). */
KERNEL void quant_matmat(const sac_kernel_task *t, quant_format f, int64_t o0, int64_t o1) {
    q8_activations a = q8_view(t, f.has_min);
    if (t->n_batch < 2) { /* no grouped values (sac_matmul gives one row to the matvec) */
        for (int64_t r = o0; r < o1; r++) t->y[r] = quant_dot(t, &a, f, r, 0);
        return;
    }
    int64_t o = o0;
    for (; o + 4 * PANEL_QUADS <= o1; o += 4 * PANEL_QUADS) panel_rows(t, &a, f, o, PANEL_QUADS);
    for (; o + 4 <= o1; o += 4) panel_rows(t, &a, f, o, 1);
    for (int64_t b = 0; b < t->n_batch; b++)
        for (int64_t r = o; r < o1; r++) t->y[b * t->n_out + r] = quant_dot(t, &a, f, r, b);
}

#else

/* Activation rows [b, b + rows) (rows 4 or 8) against weight rows [o0, o1): one decoded weight
 * block serves them all, four rows at a time. */
KERNEL void quant_matmat_rows(const sac_kernel_task *t, const q8_activations *a, quant_format f, int64_t o0,
                              int64_t o1, int64_t b, int rows) {
    int64_t n_in = t->n_in, n_out = t->n_out, nb = n_in / SAC_QK, n_batch = t->n_batch;
    for (int64_t o = o0; o < o1; o++) {
        const char *row = weight_row(t, o);
        for (int64_t g = b; g < b + rows; g += 4) {
            const int16_t *x0 = a->q + g * n_in, *x1 = x0 + n_in, *x2 = x1 + n_in, *x3 = x2 + n_in;
            float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
            for (int64_t blk = 0; blk < nb; blk++) {
                int16_t w[SAC_QK];
                f.decode(row + (size_t)blk * f.block_bytes, w);
                int64_t at = blk * SAC_QK;
                float dw = block_scale(f, row, blk);
                const float *xd = a->d + blk * n_batch + g;
                acc0 = acc0 + (float)block_dot(w, x0 + at) * (dw * xd[0]);
                acc1 = acc1 + (float)block_dot(w, x1 + at) * (dw * xd[1]);
                acc2 = acc2 + (float)block_dot(w, x2 + at) * (dw * xd[2]);
                acc3 = acc3 + (float)block_dot(w, x3 + at) * (dw * xd[3]);
                if (f.has_min) {
                    float mw = block_min(f, row, blk);
                    const float *xs = a->s + blk * n_batch + g;
                    acc0 = acc0 + mw * xs[0];
                    acc1 = acc1 + mw * xs[1];
                    acc2 = acc2 + mw * xs[2];
                    acc3 = acc3 + mw * xs[3];
                }
            }
            t->y[(g + 0) * n_out + o] = acc0;
            t->y[(g + 1) * n_out + o] = acc1;
            t->y[(g + 2) * n_out + o] = acc2;
            t->y[(g + 3) * n_out + o] = acc3;
        }
    }
}

/* Rows [o0, o1) are one L1 block (sac_matmul's unit of rows): they stay in cache while every
 * group of activation rows passes over them, eight rows to a group (then four, then one). */
KERNEL void quant_matmat(const sac_kernel_task *t, quant_format f, int64_t o0, int64_t o1) {
    q8_activations a = q8_view(t, f.has_min);
    int64_t b = 0;
    for (; b + 2 * BATCH_TILE <= t->n_batch; b += 2 * BATCH_TILE) quant_matmat_rows(t, &a, f, o0, o1, b, 2 * BATCH_TILE);
    for (; b + BATCH_TILE <= t->n_batch; b += BATCH_TILE) quant_matmat_rows(t, &a, f, o0, o1, b, BATCH_TILE);
    for (; b < t->n_batch; b++)
        for (int64_t o = o0; o < o1; o++) t->y[b * t->n_out + o] = quant_dot(t, &a, f, o, b);
}
#endif

/* ------------------------------------------------------------------------------------------
 * Q8_K activations: x → int8 per 256-value super-block (as int16), f32 d, and the sums of
 * each 16 values (bsums), by ggml's quantize_row_q8_K rules
 * ---------------------------------------------------------------------------------------- */

/* Layout: the scales (float, [block][batch]), the int16-widened values ([batch][n_in]), then
 * the bsums (int16, [batch][n_in / 16]); each part keeps 16-byte alignment. */
typedef struct q8k_layout {
    size_t scales, values, bsums; /* bytes of each part */
} q8k_layout;

static int q8k_layout_of(int64_t n_in, int64_t n_batch, q8k_layout *l) {
    uint64_t s, v, b;
    if (n_in < 0 || n_batch < 0 || !sac_mul_u64((uint64_t)(n_in / SAC_QK_K), (uint64_t)n_batch, &s) ||
        !sac_mul_u64(s, sizeof(float), &s) || !sac_mul_u64((uint64_t)n_batch, (uint64_t)n_in, &v) ||
        !sac_mul_u64(v, sizeof(int16_t), &v) || !sac_mul_u64((uint64_t)(n_in / 16), (uint64_t)n_batch, &b) ||
        !sac_mul_u64(b, sizeof(int16_t), &b) || s > SIZE_MAX - 15 || v > SIZE_MAX - 15 || b > SIZE_MAX - 15)
        return 0;
    l->scales = ((size_t)s + 15) & ~(size_t)15;
    l->values = ((size_t)v + 15) & ~(size_t)15;
    l->bsums = ((size_t)b + 15) & ~(size_t)15;
    return 1;
}

int sac_activations_size_q8_K(int64_t n_in, int64_t n_batch, size_t *bytes) {
    q8k_layout l;
    if (!q8k_layout_of(n_in, n_batch, &l) || l.values > SIZE_MAX - l.scales || l.bsums > SIZE_MAX - l.scales - l.values)
        return 0;
    *bytes = l.scales + l.values + l.bsums;
#ifdef RELAXED
    /* the int8 copy of the values (half their int16 bytes) */
    if (l.values / 2 > SIZE_MAX - *bytes) return 0;
    *bytes += l.values / 2;
#endif
    return 1;
}

typedef struct q8k_activations {
    const int16_t *q;     /* [batch][n_in] */
    const int16_t *bsums; /* [batch][n_in / 16] */
    const float *d;       /* [block][batch] */
#ifdef RELAXED
    const int8_t *q8;     /* [batch][n_in]: q as int8, for the relaxed kernels */
#endif
} q8k_activations;

static q8k_activations q8k_view(const sac_kernel_task *t) {
    q8k_layout l = {0, 0, 0};
    q8k_layout_of(t->n_in, t->n_batch, &l); /* sac_matmul sized the workspace with it */
    const char *base = t->act;
    q8k_activations a = {.q = (const int16_t *)(base + l.scales), .bsums = (const int16_t *)(base + l.scales + l.values),
                         .d = (const float *)base};
#ifdef RELAXED
    a.q8 = (const int8_t *)(base + l.scales + l.values + l.bsums);
#endif
    return a;
}

/* The codec's quantizer, widened: a handful of operations per value, next to the hundreds of
 * weight rows each activation meets, so it is shared plain C on every path. */
void sac_quantize_activations_q8_K(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act) {
    q8k_layout l = {0, 0, 0};
    q8k_layout_of(n_in, n_batch, &l);
    float *xd = act;
    int16_t *xq = (int16_t *)((char *)act + l.scales), *xs = (int16_t *)((char *)act + l.scales + l.values);
    int64_t nb = n_in / SAC_QK_K;
    for (int64_t b = b0; b < b1; b++)
        for (int64_t blk = 0; blk < nb; blk++) {
            block_q8_K q;
            sac_from_float_q8_K(x + b * n_in + blk * SAC_QK_K, &q, SAC_QK_K);
            xd[blk * n_batch + b] = q.d;
            for (int j = 0; j < SAC_QK_K; j++) xq[b * n_in + blk * SAC_QK_K + j] = q.qs[j];
            for (int j = 0; j < SAC_QK_K / 16; j++) xs[b * (n_in / 16) + blk * (SAC_QK_K / 16) + j] = q.bsums[j];
#ifdef RELAXED
            memcpy((char *)act + l.scales + l.values + l.bsums + b * n_in + blk * SAC_QK_K, q.qs, SAC_QK_K);
#endif
        }
}

/* ------------------------------------------------------------------------------------------
 * K-quant kernels: 256-value super-blocks of 16-value groups, value = d * sc * q - dmin * m
 * (sc, m the group's integer scale and min), multiplied with Q8_K activations:
 *   isum = sum over groups of sc * (exact int dot of q with the int8 activations),
 *   msum = sum over groups of m * bsum (the group's activation sum),
 *   acc = (acc + (float)isum * (d * d_x)) - (float)msum * (dmin * d_x), block after block
 * (without the second step for formats with no min). The integer sums are exact, so the
 * SIMD path, which only forms them differently, gives the plain-C bits.
 * ---------------------------------------------------------------------------------------- */

/* What the decoders subtract from the unsigned levels: Q3_K 4 where a value's high bit is
 * clear, Q6_K 32 from every 6-bit level. The wasm dots take the unsigned levels and subtract
 * these times the activations' group sums instead (minus_offset, kquant_format.level_offset). */
#define Q3_K_LEVEL_OFFSET 4
#define Q6_K_LEVEL_OFFSET 32

#ifdef SAC_SIMD128
/* The matvec's dot of one super-block with the activations, in registers: each 16 or 32
 * levels are decoded into vectors and multiplied with their activations at once, and the
 * group scales are applied to the int32 dots of whole groups. A decoded block never goes to
 * memory, as kdecode's does for matmat, where one decoded block serves the whole batch.
 * The levels are decoded unsigned (0..63); Q6_K's -32 and Q3_K's -4 come back as
 * off * sum(sc * bsum), the same integer. Each returns four int32 lanes whose sum is isum, and
 * for formats with a min, in *msum, four whose sum is msum. */
/* Loops whose counter sets shift distances: unrolled, every distance is a constant (left
 * rolled, clang computes them, and both directions of move_bit, at run time). Mostly the
 * innermost: V8 spills a long straight run of vector code, and unrolling the outer loops too
 * made the step 1.5-2.3x slower (Q3_K's middle loop is the exception, measured faster). */
#if defined(__clang__)
#define UNROLLED _Pragma("clang loop unroll(full)")
#else
#define UNROLLED _Pragma("GCC unroll 16")
#endif

/* The activations the matvec's dots read: Q8_K's int16 values, or with relaxed SIMD its int8
 * copy (the levels, unsigned and below 128, are the dot product's 7-bit operand). */
#ifdef RELAXED
typedef int8_t kx_t;
#define KX(a) ((a)->q8)
#else
typedef int16_t kx_t;
#define KX(a) ((a)->q)
#endif

typedef v128_t (*kdot_fn)(const char *block, const kx_t *x, const int16_t *bsums, v128_t *msum);

/* 16 unsigned levels (bytes, < 128) times their activations: four int32 lanes of four
 * products each (which four differs between the paths; the lanes' sum does not). Every format's lanes stay within int16 (|x| <= 128, levels <= 63: 32256),
 * which scale8 relies on, as it does on a 32-level group's two of them summed (Q4_K, Q5_K:
 * levels <= 31, 31744). */
static inline v128_t dot16_u8(v128_t q, const kx_t *x) {
#ifdef RELAXED
    return SAC_RELAXED_DOT_ADD(wasm_v128_load(x), q, wasm_i32x4_splat(0));
#else
    return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_extend_low_u8x16(q), wasm_v128_load(x)),
                          wasm_i32x4_dot_i16x8(wasm_u16x8_extend_high_u8x16(q), wasm_v128_load(x + 8)));
#endif
}

/* Eight groups' dots p[g] times their scales (the int16 lanes of sc), as int32 lanes: the
 * dots are narrowed to int16 in pairs, and one i32x4.dot multiplies a pair by its scales. */
static inline v128_t scale8(const v128_t p[8], v128_t sc) {
    /* [s0 s0 s1 s1 s2 s2 s3 s3] and [s4 s4 ... s7 s7] (one unpack each in V8), then each pair
     * of scales four times by a 32-bit lane shuffle (one instruction, where a 16-bit lane
     * shuffle is a pshufb with a mask built in place every time) */
    const v128_t lo = wasm_i16x8_shuffle(sc, sc, 0, 0, 1, 1, 2, 2, 3, 3), hi = wasm_i16x8_shuffle(sc, sc, 4, 4, 5, 5, 6, 6, 7, 7);
    v128_t s = wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(p[0], p[1]), wasm_i32x4_shuffle(lo, lo, 0, 0, 1, 1));
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(p[2], p[3]), wasm_i32x4_shuffle(lo, lo, 2, 2, 3, 3)));
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(p[4], p[5]), wasm_i32x4_shuffle(hi, hi, 0, 0, 1, 1)));
    return wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_narrow_i32x4(p[6], p[7]), wasm_i32x4_shuffle(hi, hi, 2, 2, 3, 3)));
}

/* Bit b of each byte moved to bit `to` (b, to < 8), the other bits cleared. 16-bit shifts
 * (one instruction, where V8 spends three on an 8-bit one) never carry a byte's bits into
 * the kept bit of its neighbour for these distances. */
static inline v128_t move_bit(v128_t v, int b, int to) {
    v = b >= to ? wasm_u16x8_shr(v, (uint32_t)(b - to)) : wasm_i16x8_shl(v, (uint32_t)(to - b));
    return wasm_v128_and(v, wasm_i8x16_splat((int8_t)(1 << to)));
}

/* isum -= offset * sum(sc * bsum): the levels' offset (a power of two: the multiply is a shift). */
static inline v128_t minus_offset(v128_t isum, v128_t sc_lo, v128_t sc_hi, const int16_t *bsums, int offset) {
    v128_t t = wasm_i32x4_add(wasm_i32x4_dot_i16x8(sc_lo, wasm_v128_load(bsums)),
                              wasm_i32x4_dot_i16x8(sc_hi, wasm_v128_load(bsums + 8)));
    return wasm_i32x4_sub(isum, wasm_i32x4_mul(t, wasm_i32x4_splat(offset)));
}

static inline v128_t kdot_q2_K(const char *block, const kx_t *x, const int16_t *bsums, v128_t *msum) {
    const block_q2_K *b = (const block_q2_K *)block;
    const v128_t three = wasm_i8x16_splat(3), low4 = wasm_i16x8_splat(0x0F);
    v128_t isum = wasm_i32x4_splat(0), m[2];
    for (int h = 0; h < 2; h++) { /* value 128 h + 32 k + l: bits 2k of qs[32 h + l] */
        v128_t p[8], s = wasm_u16x8_load8x8(b->scales + 8 * h);
        for (int kk = 0; kk < 2; kk++) {
            v128_t packed = wasm_v128_load(b->qs + 32 * h + 16 * kk);
            UNROLLED for (int k = 0; k < 4; k++)
                p[2 * k + kk] = dot16_u8(wasm_v128_and(wasm_u16x8_shr(packed, (uint32_t)(2 * k)), three),
                                         x + 128 * h + 32 * k + 16 * kk);
        }
        isum = wasm_i32x4_add(isum, scale8(p, wasm_v128_and(s, low4)));
        m[h] = wasm_u16x8_shr(s, 4);
    }
    *msum = wasm_i32x4_add(wasm_i32x4_dot_i16x8(m[0], wasm_v128_load(bsums)),
                           wasm_i32x4_dot_i16x8(m[1], wasm_v128_load(bsums + 8)));
    return isum;
}

/* Q3_K's 16 6-bit scales as int8 (minus 32), unpacked four at a time in 32-bit words. */
static inline v128_t q3_K_scales(const uint8_t scales[12]) {
    uint32_t a[3];
    memcpy(a, scales, sizeof a);
    const uint32_t low4 = 0x0F0F0F0Fu, two = 0x03030303u;
    v128_t v = wasm_u32x4_make((a[0] & low4) | (a[2] & two) << 4, (a[1] & low4) | (a[2] >> 2 & two) << 4,
                               (a[0] >> 4 & low4) | (a[2] >> 4 & two) << 4, (a[1] >> 4 & low4) | (a[2] >> 6 & two) << 4);
    return wasm_i8x16_sub(v, wasm_i8x16_splat(32));
}

static inline v128_t kdot_q3_K(const char *block, const kx_t *x, const int16_t *bsums, v128_t *msum) {
    (void)msum;
    const block_q3_K *b = (const block_q3_K *)block;
    const v128_t three = wasm_i8x16_splat(3), s8 = q3_K_scales(b->scales);
    const v128_t sc[2] = {wasm_i16x8_extend_low_i8x16(s8), wasm_i16x8_extend_high_i8x16(s8)};
    v128_t isum = wasm_i32x4_splat(0);
    for (int h = 0; h < 2; h++) { /* as Q2_K, plus 4 where bit 4h + k of hmask[l] is set */
        v128_t p[8];
        UNROLLED for (int kk = 0; kk < 2; kk++) { /* (unrolled here too: 39 → 48-54 tokens/s in bench-decode) */
            v128_t packed = wasm_v128_load(b->qs + 32 * h + 16 * kk);
            v128_t hm = wasm_u16x8_shr(wasm_v128_load(b->hmask + 16 * kk), (uint32_t)(4 * h)); /* bit k: value's */
            UNROLLED for (int k = 0; k < 4; k++) {
                v128_t q = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(packed, (uint32_t)(2 * k)), three),
                                        move_bit(hm, k, 2));
                p[2 * k + kk] = dot16_u8(q, x + 128 * h + 32 * k + 16 * kk);
            }
        }
        isum = wasm_i32x4_add(isum, scale8(p, sc[h]));
    }
    return minus_offset(isum, sc[0], sc[1], bsums, Q3_K_LEVEL_OFFSET);
}

/* Q4_K's and Q5_K's eight 6-bit scales (low half) and mins (high half) as bytes, unpacked
 * four at a time in 32-bit words. */
static inline v128_t q4_K_scales_mins(const uint8_t scales[12]) {
    uint32_t a[3];
    memcpy(a, scales, sizeof a);
    const uint32_t low6 = 0x3F3F3F3Fu, low4 = 0x0F0F0F0Fu, two = 0x03030303u;
    return wasm_u32x4_make(a[0] & low6, (a[2] & low4) | (a[0] >> 6 & two) << 4, a[1] & low6,
                           (a[2] >> 4 & low4) | (a[1] >> 6 & two) << 4);
}

/* msum for sub-block mins m (int16 lanes 0-7): each min meets two bsums. */
static inline v128_t mins_of_pairs(v128_t m, const int16_t *bsums) {
    v128_t lo = wasm_i16x8_shuffle(m, m, 0, 0, 1, 1, 2, 2, 3, 3), hi = wasm_i16x8_shuffle(m, m, 4, 4, 5, 5, 6, 6, 7, 7);
    return wasm_i32x4_add(wasm_i32x4_dot_i16x8(lo, wasm_v128_load(bsums)),
                          wasm_i32x4_dot_i16x8(hi, wasm_v128_load(bsums + 8)));
}

#ifndef RELAXED
/* Q4_K's 16 bytes of nibbles against their activations, added to *lo (low nibbles, xl[0..15])
 * and *hi (high ones, xh[0..15]): the bytes widened first, as a 16-bit lane's high nibble
 * needs no mask after its shift (six operations where masking the bytes and widening each
 * half took seven; bench_kernels, Node, 1 thread: Q4_K matvec 39.5-41 -> 43-45 GFLOP/s). */
static inline void nibbles_dot_wide(v128_t packed, const int16_t *xl, const int16_t *xh, v128_t *lo, v128_t *hi) {
    const v128_t low4 = wasm_i16x8_splat(0x0F);
    const v128_t e0 = wasm_u16x8_extend_low_u8x16(packed), e1 = wasm_u16x8_extend_high_u8x16(packed);
    *lo = wasm_i32x4_add(*lo, wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_v128_and(e0, low4), wasm_v128_load(xl)),
                                             wasm_i32x4_dot_i16x8(wasm_v128_and(e1, low4), wasm_v128_load(xl + 8))));
    *hi = wasm_i32x4_add(*hi, wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_u16x8_shr(e0, 4), wasm_v128_load(xh)),
                                             wasm_i32x4_dot_i16x8(wasm_u16x8_shr(e1, 4), wasm_v128_load(xh + 8))));
}
#endif

/* Q4_K (qh NULL) and Q5_K: sub-blocks 2c and 2c + 1 are the low and high nibbles of 32 bytes
 * of qs; Q5_K's fifth bits are bits 2c and 2c + 1 of qh[l]. Each sub-block's two dots of 16
 * (dot16_u8, or for Q4_K in the SIMD128 builds nibbles_dot_wide) are summed before scale8. */
static inline v128_t kdot_nibbles(const uint8_t *scales, const uint8_t *qs, const uint8_t *qh, const kx_t *x,
                                  const int16_t *bsums, v128_t *msum) {
    const v128_t low4 = wasm_i8x16_splat(0x0F), sm = q4_K_scales_mins(scales);
    v128_t p[8];
    for (int c = 0; c < 4; c++) {
        p[2 * c] = p[2 * c + 1] = wasm_i32x4_splat(0);
        for (int kk = 0; kk < 2; kk++) {
            v128_t packed = wasm_v128_load(qs + 32 * c + 16 * kk);
#ifndef RELAXED
            if (!qh) {
                nibbles_dot_wide(packed, x + 64 * c + 16 * kk, x + 64 * c + 32 + 16 * kk, &p[2 * c], &p[2 * c + 1]);
                continue;
            }
#endif
            v128_t lo = wasm_v128_and(packed, low4), hi = wasm_v128_and(wasm_u16x8_shr(packed, 4), low4);
            if (qh) { /* bits 2c and 2c + 1 shifted down to 0 and 1, then each to 4 */
                v128_t hb = wasm_u16x8_shr(wasm_v128_load(qh + 16 * kk), (uint32_t)(2 * c));
                lo = wasm_v128_or(lo, move_bit(hb, 0, 4));
                hi = wasm_v128_or(hi, move_bit(hb, 1, 4));
            }
            p[2 * c] = wasm_i32x4_add(p[2 * c], dot16_u8(lo, x + 64 * c + 16 * kk));
            p[2 * c + 1] = wasm_i32x4_add(p[2 * c + 1], dot16_u8(hi, x + 64 * c + 32 + 16 * kk));
        }
    }
    *msum = mins_of_pairs(wasm_u16x8_extend_high_u8x16(sm), bsums);
    return scale8(p, wasm_u16x8_extend_low_u8x16(sm));
}

static inline v128_t kdot_q4_K(const char *block, const kx_t *x, const int16_t *bsums, v128_t *msum) {
    const block_q4_K *b = (const block_q4_K *)block;
    return kdot_nibbles(b->scales, b->qs, NULL, x, bsums, msum);
}

static inline v128_t kdot_q5_K(const char *block, const kx_t *x, const int16_t *bsums, v128_t *msum) {
    const block_q5_K *b = (const block_q5_K *)block;
    return kdot_nibbles(b->scales, b->qs, b->qh, x, bsums, msum);
}

/* Q6_K's unsigned levels (0..63) of one half (ql, qh its 64 and 32 bytes) for l in
 * [16 kk, 16 kk + 16): q[k] holds values 32k + l, from a nibble of ql and bits 2k of qh[l]. */
static inline void q6_K_levels(const uint8_t *ql, const uint8_t *qh, int kk, v128_t q[4]) {
    const v128_t low4 = wasm_i8x16_splat(0x0F), two = wasm_i8x16_splat(0x30);
    v128_t l0 = wasm_v128_load(ql + 16 * kk), l1 = wasm_v128_load(ql + 32 + 16 * kk);
    v128_t hb = wasm_v128_load(qh + 16 * kk);
    q[0] = wasm_v128_or(wasm_v128_and(l0, low4), wasm_v128_and(wasm_i16x8_shl(hb, 4), two));
    q[1] = wasm_v128_or(wasm_v128_and(l1, low4), wasm_v128_and(wasm_i16x8_shl(hb, 2), two));
    q[2] = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(l0, 4), low4), wasm_v128_and(hb, two));
    q[3] = wasm_v128_or(wasm_v128_and(wasm_u16x8_shr(l1, 4), low4), wasm_v128_and(wasm_u16x8_shr(hb, 2), two));
}

static inline v128_t kdot_q6_K(const char *block, const kx_t *x, const int16_t *bsums, v128_t *msum) {
    (void)msum;
    const block_q6_K *b = (const block_q6_K *)block;
    v128_t isum = wasm_i32x4_splat(0), sc[2];
    for (int h = 0; h < 2; h++) {
        v128_t p[8];
        for (int kk = 0; kk < 2; kk++) {
            v128_t q[4];
            q6_K_levels(b->ql + 64 * h, b->qh + 32 * h, kk, q);
            UNROLLED for (int k = 0; k < 4; k++) p[2 * k + kk] = dot16_u8(q[k], x + 128 * h + 32 * k + 16 * kk);
        }
        /* The scales close the block (bytes 192-207 of 210): a half's are read after its
         * levels, so that a block's first read is at its start, not at its end. Read first,
         * as before, they cost decode a quarter to 30% of its speed (bench_decode,
         * GPT-2-small's matvecs, Node, 2 threads: 148-168 -> 196-212 tokens/s, 1 thread
         * 74-75 -> 107-108; the model's decode in bench-wasm 127-132 -> 184; the bits
         * alike), though not in cache (bench_kernels 29.4-31.1 -> 31.0-31.6 GFLOP/s). So the
         * hardware prefetcher is the likely cause (no counters here to tell). */
        sc[h] = wasm_i16x8_load8x8(b->scales + 8 * h);
        isum = wasm_i32x4_add(isum, scale8(p, sc[h]));
    }
    return minus_offset(isum, sc[0], sc[1], bsums, Q6_K_LEVEL_OFFSET);
}
#endif

/* A decoded super-block. */
typedef struct kblock {
    _Alignas(16) int16_t q[SAC_QK_K];
    int32_t sc[16], m[16];
    float d, dmin;
} kblock;

typedef void (*kdecode_fn)(const char *block, kblock *out);

/* A K-quant format: bytes per block, the byte offsets of d and dmin in a block, its decoder
 * (and with SIMD128 its register dot), and whether it has mins. */
typedef struct kquant_format {
    size_t block_bytes, d_at, dmin_at;
    kdecode_fn decode;
#ifdef SAC_SIMD128
    kdot_fn dot;
#endif
    int has_min;
    int level_offset; /* what the decoder subtracts from the unsigned levels (Q3_K_LEVEL_OFFSET, ...) */
} kquant_format;

/* Q2_K's and Q3_K's 2-bit levels into q: value 128 h + 32 k + l from bits 2k of qs[32 h + l];
 * Q3_K (hmask not NULL) subtracts 4 where the value's bit (bit 4h + k of hmask[l]) is clear. */
static inline void decode_two_bits(const uint8_t *qs, const uint8_t *hmask, int16_t *q) {
#ifdef SAC_SIMD128
    const v128_t three = wasm_i8x16_splat(3), offset = wasm_i8x16_splat(Q3_K_LEVEL_OFFSET);
    for (int half = 0; half < 2; half++) { /* l in [16 half, 16 half + 16) */
        v128_t hm = hmask ? wasm_v128_load(hmask + 16 * half) : wasm_i32x4_splat(-1);
        for (int h = 0; h < 2; h++) {
            v128_t packed = wasm_v128_load(qs + 32 * h + 16 * half);
            for (int k = 0; k < 4; k++) {
                v128_t v = wasm_v128_and(wasm_u8x16_shr(packed, 2 * k), three);
                v128_t bit = wasm_i8x16_splat((int8_t)(1 << (4 * h + k)));
                v = wasm_i8x16_sub(v, wasm_v128_andnot(offset, wasm_i8x16_eq(wasm_v128_and(hm, bit), bit)));
                int16_t *out = q + 128 * h + 32 * k + 16 * half;
                wasm_v128_store(out, wasm_i16x8_extend_low_i8x16(v));
                wasm_v128_store(out + 8, wasm_i16x8_extend_high_i8x16(v));
            }
        }
    }
#else
    for (int h = 0; h < 2; h++)
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 32; l++) {
                int v = (qs[32 * h + l] >> (2 * k)) & 3;
                if (hmask && !((hmask[l] >> (4 * h + k)) & 1)) v -= Q3_K_LEVEL_OFFSET;
                q[128 * h + 32 * k + l] = (int16_t)v;
            }
#endif
}

static inline void kdecode_q2_K(const char *block, kblock *out) {
    const block_q2_K *b = (const block_q2_K *)block;
    out->d = f16_to_f32_inline(b->d);
    out->dmin = f16_to_f32_inline(b->dmin);
    for (int g = 0; g < 16; g++) {
        out->sc[g] = b->scales[g] & 0x0F;
        out->m[g] = b->scales[g] >> 4;
    }
    decode_two_bits(b->qs, NULL, out->q);
}

static inline void kdecode_q3_K(const char *block, kblock *out) {
    const block_q3_K *b = (const block_q3_K *)block;
    out->d = f16_to_f32_inline(b->d);
    out->dmin = 0.0f;
    for (int g = 0; g < 16; g++) {
        out->sc[g] = sac_q3_K_scale(b->scales, g);
        out->m[g] = 0;
    }
    decode_two_bits(b->qs, b->hmask, out->q);
}

static inline void kdecode_q4_K(const char *block, kblock *out) {
    const block_q4_K *b = (const block_q4_K *)block;
    out->d = f16_to_f32_inline(b->d);
    out->dmin = f16_to_f32_inline(b->dmin);
    for (int j = 0; j < 8; j++) {
        int sc, m;
        sac_q4_K_scale_min(b->scales, j, &sc, &m);
        out->sc[2 * j] = out->sc[2 * j + 1] = sc;
        out->m[2 * j] = out->m[2 * j + 1] = m;
    }
    for (int c = 0; c < 4; c++) { /* 32 bytes: 32 low nibbles, then the 32 high ones */
        const uint8_t *qs = b->qs + 32 * c;
        int16_t *q = out->q + 64 * c;
#ifdef SAC_SIMD128
        for (int k = 0; k < 2; k++) {
            v128_t packed = wasm_v128_load(qs + 16 * k);
            v128_t lo = wasm_v128_and(packed, wasm_i8x16_splat(0x0F)), hi = wasm_u8x16_shr(packed, 4);
            wasm_v128_store(q + 16 * k, wasm_u16x8_extend_low_u8x16(lo));
            wasm_v128_store(q + 16 * k + 8, wasm_u16x8_extend_high_u8x16(lo));
            wasm_v128_store(q + 32 + 16 * k, wasm_u16x8_extend_low_u8x16(hi));
            wasm_v128_store(q + 32 + 16 * k + 8, wasm_u16x8_extend_high_u8x16(hi));
        }
#else
        for (int l = 0; l < 32; l++) {
            q[l] = (int16_t)(qs[l] & 0x0F);
            q[l + 32] = (int16_t)(qs[l] >> 4);
        }
#endif
    }
}

static inline void kdecode_q5_K(const char *block, kblock *out) {
    const block_q5_K *b = (const block_q5_K *)block;
    out->d = f16_to_f32_inline(b->d);
    out->dmin = f16_to_f32_inline(b->dmin);
    for (int j = 0; j < 8; j++) {
        int sc, m;
        sac_q4_K_scale_min(b->scales, j, &sc, &m);
        out->sc[2 * j] = out->sc[2 * j + 1] = sc;
        out->m[2 * j] = out->m[2 * j + 1] = m;
    }
    for (int c = 0; c < 4; c++) { /* as Q4_K, plus bit 2c (low nibbles) or 2c + 1 (high) of qh */
        const uint8_t *qs = b->qs + 32 * c;
        int16_t *q = out->q + 64 * c;
#ifdef SAC_SIMD128
        const v128_t bit_lo = wasm_i8x16_splat((int8_t)(1 << (2 * c))), bit_hi = wasm_i8x16_splat((int8_t)(2 << (2 * c)));
        const v128_t sixteen = wasm_i8x16_splat(16);
        for (int k = 0; k < 2; k++) {
            v128_t packed = wasm_v128_load(qs + 16 * k), hb = wasm_v128_load(b->qh + 16 * k);
            v128_t h_lo = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(hb, bit_lo), bit_lo), sixteen);
            v128_t h_hi = wasm_v128_and(wasm_i8x16_eq(wasm_v128_and(hb, bit_hi), bit_hi), sixteen);
            v128_t lo = wasm_v128_or(wasm_v128_and(packed, wasm_i8x16_splat(0x0F)), h_lo);
            v128_t hi = wasm_v128_or(wasm_u8x16_shr(packed, 4), h_hi);
            wasm_v128_store(q + 16 * k, wasm_u16x8_extend_low_u8x16(lo));
            wasm_v128_store(q + 16 * k + 8, wasm_u16x8_extend_high_u8x16(lo));
            wasm_v128_store(q + 32 + 16 * k, wasm_u16x8_extend_low_u8x16(hi));
            wasm_v128_store(q + 32 + 16 * k + 8, wasm_u16x8_extend_high_u8x16(hi));
        }
#else
        for (int l = 0; l < 32; l++) {
            q[l] = (int16_t)((qs[l] & 0x0F) | ((b->qh[l] >> (2 * c)) & 1) << 4);
            q[l + 32] = (int16_t)((qs[l] >> 4) | ((b->qh[l] >> (2 * c + 1)) & 1) << 4);
        }
#endif
    }
}

static inline void kdecode_q6_K(const char *block, kblock *out) {
    const block_q6_K *b = (const block_q6_K *)block;
    out->d = f16_to_f32_inline(b->d);
    out->dmin = 0.0f;
    for (int g = 0; g < 16; g++) {
        out->sc[g] = b->scales[g];
        out->m[g] = 0;
    }
    for (int h = 0; h < 2; h++) { /* 128 values: ql 64 bytes of nibbles, qh 32 bytes of 2-bit fields */
        const uint8_t *ql = b->ql + 64 * h, *qh = b->qh + 32 * h;
        int16_t *q = out->q + 128 * h;
#ifdef SAC_SIMD128
        const v128_t off = wasm_i8x16_splat(Q6_K_LEVEL_OFFSET);
        for (int k = 0; k < 2; k++) {
            v128_t v[4];
            q6_K_levels(ql, qh, k, v);
            for (int r = 0; r < 4; r++) {
                v128_t s8 = wasm_i8x16_sub(v[r], off);
                wasm_v128_store(q + 32 * r + 16 * k, wasm_i16x8_extend_low_i8x16(s8));
                wasm_v128_store(q + 32 * r + 16 * k + 8, wasm_i16x8_extend_high_i8x16(s8));
            }
        }
#else
        for (int l = 0; l < 32; l++) {
            q[l] = (int16_t)(((ql[l] & 0x0F) | (qh[l] & 3) << 4) - Q6_K_LEVEL_OFFSET);
            q[l + 32] = (int16_t)(((ql[l + 32] & 0x0F) | ((qh[l] >> 2) & 3) << 4) - Q6_K_LEVEL_OFFSET);
            q[l + 64] = (int16_t)(((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - Q6_K_LEVEL_OFFSET);
            q[l + 96] = (int16_t)(((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - Q6_K_LEVEL_OFFSET);
        }
#endif
    }
}

/* A block decoded, its levels multiplied by their group's scale in place: sc q fits int16
 * (at most 128 · 32 in magnitude, Q6_K's), so isum becomes one plain dot, and the same
 * integer as the sum over groups of sc · dot. Done once per decoded block, it serves every
 * activation row of a matmat step. */
KERNEL void kdecode(kquant_format f, const char *block, kblock *w) {
    f.decode(block, w);
    for (int g = 0; g < 16; g++) {
#ifdef SAC_SIMD128
        v128_t sc = wasm_i16x8_splat((int16_t)w->sc[g]);
        wasm_v128_store(w->q + 16 * g, wasm_i16x8_mul(wasm_v128_load(w->q + 16 * g), sc));
        wasm_v128_store(w->q + 16 * g + 8, wasm_i16x8_mul(wasm_v128_load(w->q + 16 * g + 8), sc));
#else
#if defined(__GNUC__)
        /* one group as one generic vector: left to itself, gcc vectorizes across the 16
         * groups with a transpose of the block (vpermt2w), 3x slower than this */
        typedef int16_t group16 __attribute__((vector_size(32)));
        group16 v;
        memcpy(&v, w->q + 16 * g, sizeof v);
        v = v * (int16_t)w->sc[g];
        memcpy(w->q + 16 * g, &v, sizeof v);
#else
        for (int j = 0; j < 16; j++) w->q[16 * g + j] = (int16_t)(w->q[16 * g + j] * w->sc[g]);
#endif
#endif
    }
}

#ifndef SAC_SIMD128
/* isum: the integer dot of a decoded, scaled block with 256 activations (the plain-C
 * matvec; the SIMD128 one never decodes to memory). */
static inline int32_t kblock_dot(const kblock *w, const int16_t *x) {
    int32_t acc = 0;
    for (int j = 0; j < SAC_QK_K; j++) acc += (int32_t)w->q[j] * (int32_t)x[j];
    return acc;
}

/* The isums of a decoded block with `rows` (4 or 8) activation rows, x and x + n_in, ... (a
 * matmat step; the SIMD128 one uses the panel). */
KERNEL void kblock_dots(const kblock *w, const int16_t *x, int64_t n_in, int rows, int32_t *isum) {
    int32_t s[8] = {0};
    for (int j = 0; j < SAC_QK_K; j++) {
        int32_t q = w->q[j];
        for (int r = 0; r < rows; r++) s[r] += q * x[r * n_in + j];
    }
    for (int r = 0; r < rows; r++) isum[r] = s[r];
}

static inline int32_t kblock_mins(const kblock *w, const int16_t *bsums) {
    int32_t s = 0;
    for (int g = 0; g < 16; g++) s += w->m[g] * (int32_t)bsums[g];
    return s;
}

/* acc after one block, given its isum: the float steps every path takes. */
KERNEL float kblock_add(kquant_format f, float acc, const kblock *w, int32_t isum, const int16_t *bsums, float dx) {
    acc = acc + (float)isum * (w->d * dx);
    if (f.has_min) acc = acc - (float)kblock_mins(w, bsums) * (w->dmin * dx);
    return acc;
}
#endif

#ifdef SAC_SIMD128
static inline float kblock_f16(const char *block, size_t at) {
    uint16_t h;
    memcpy(&h, block + at, sizeof h);
    return f16_to_f32_inline(h);
}
#endif

/* One output: weight row o against activation row b. */
KERNEL float kquant_dot(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, int64_t o, int64_t b) {
    const char *row = weight_row(t, o);
    int64_t nb = t->n_in / SAC_QK_K;
    const int16_t *bs = a->bsums + b * (t->n_in / 16);
    float acc = 0.0f;
#ifdef SAC_SIMD128
    const kx_t *x = KX(a) + b * t->n_in;
    for (int64_t blk = 0; blk < nb; blk++) { /* kblock_add's steps, with the sums of f.dot */
        const char *block = row + (size_t)blk * f.block_bytes;
        v128_t m = wasm_i32x4_splat(0);
        int32_t isum = hsum_i32(f.dot(block, x + blk * SAC_QK_K, bs + blk * 16, &m));
        float dx = a->d[blk * t->n_batch + b];
        acc = acc + (float)isum * (kblock_f16(block, f.d_at) * dx);
        if (f.has_min) acc = acc - (float)hsum_i32(m) * (kblock_f16(block, f.dmin_at) * dx);
    }
#else
    const int16_t *x = a->q + b * t->n_in;
    kblock w;
    for (int64_t blk = 0; blk < nb; blk++) {
        kdecode(f, row + (size_t)blk * f.block_bytes, &w);
        acc = kblock_add(f, acc, &w, kblock_dot(&w, x + blk * SAC_QK_K), bs + blk * 16, a->d[blk * t->n_batch + b]);
    }
#endif
    return acc;
}

/* How a K-quant matvec walks its rows in the SIMD128 builds. In decode the weights come from
 * memory, and which walk keeps the core fed depends on the format's work per byte and on the
 * engine's code for it, so each build takes each type's fastest, as measured (bench_decode, AMD
 * EPYC (Zen 5), GPT-2-small's matvecs, tokens/s, alternated runs):
 *   KQ_IN_ORDER  four rows, each row's blocks in address order (kquant_rows4_in_order);
 *   KQ_IN_TURN   four rows' blocks in turn, with a read-ahead of the next four rows (the
 *                32-value formats' way; kquant_rows4_in_turn);
 *   KQ_BY_ROW    one row at a time, its blocks in order, no read-ahead (kquant_dot).
 * The SIMD128 build (Node, 2 threads; in turn or by row -> in order): Q2_K 238-252 -> 250-263,
 * Q4_K (by row) 258-265 -> 265-292, Q5_K 121-125 -> 166-167, Q6_K 118-121 -> 124-135 (since
 * kdot_q6_K reads its scales after its levels: in turn 114-117, by row 106-109, in order
 * 195-201); Q3_K 189-195 by row, 131-185 in order (and 106-156 in turn against 149-185 by
 * row). The relaxed build (Chromium 156, 1 thread; its dot is one instruction per 16 values):
 * in order is slower for Q2_K (219-239 -> 198-216), Q4_K (by row 205-211 -> 165-186) and Q6_K
 * (95-96 -> 66-88), faster for Q5_K (85-87 -> 113-115); its GPT-2-small decode in Chromium, 2
 * threads: Q4_K 308-336 by row, 276-281 in order; Q6_K (scales read last; bench-wasm) 162-167
 * in turn, 157-161 in order. All three give the same bits. */
enum { KQ_IN_ORDER, KQ_IN_TURN, KQ_BY_ROW };
#ifdef RELAXED
#define Q2_K_WALK KQ_IN_TURN
#define Q4_K_WALK KQ_BY_ROW
#define Q6_K_WALK KQ_IN_TURN
#else
#define Q2_K_WALK KQ_IN_ORDER
#define Q4_K_WALK KQ_IN_ORDER
#define Q6_K_WALK KQ_IN_ORDER
#endif
#define Q3_K_WALK KQ_BY_ROW
#define Q5_K_WALK KQ_IN_ORDER

#ifdef SAC_SIMD128
/* acc after the block at byte `at` of rows r[0..3], given their isums and msums as lanes:
 * kblock_add's float steps for four rows at once (the scales converted exactly: a few per 256
 * values). */
KERNEL v128_t kblock_add4(kquant_format f, v128_t acc, const char *const r[ROW_TILE], size_t at, v128_t isum,
                          v128_t msum, float d_x) {
    v128_t unused;
    const v128_t dx = wasm_f32x4_splat(d_x);
    const v128_t dw = f16_of_rows4(r[0], r[1], r[2], r[3], at + f.d_at, SCALES_EXACT, &unused);
    acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(isum), wasm_f32x4_mul(dw, dx)));
    if (f.has_min) {
        const v128_t dmin = f16_of_rows4(r[0], r[1], r[2], r[3], at + f.dmin_at, SCALES_EXACT, &unused);
        acc = wasm_f32x4_sub(acc, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(msum), wasm_f32x4_mul(dmin, dx)));
    }
    return acc;
}

/* Rows o..o+3 as the lanes of one vector: each row's blocks dotted in address order, a chunk of
 * KQ_CHUNK blocks of one row after the other's, their int32 sums kept; then the float steps for
 * the four rows at once, block by block. A thread's reads then go forward through each row,
 * which the hardware prefetcher follows, with no read-ahead. */
#define KQ_CHUNK 16 /* blocks of a row per chunk: 4096 values */
KERNEL v128_t kquant_rows4_in_order(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, int64_t o) {
    const int64_t nb = t->n_in / SAC_QK_K;
    const char *r[ROW_TILE];
    for (int i = 0; i < ROW_TILE; i++) r[i] = weight_row(t, o + i);
    v128_t acc = wasm_f32x4_splat(0.0f);
    for (int64_t c0 = 0; c0 < nb; c0 += KQ_CHUNK) {
        const int64_t n = nb - c0 < KQ_CHUNK ? nb - c0 : KQ_CHUNK;
        v128_t s[ROW_TILE][KQ_CHUNK], m[ROW_TILE][KQ_CHUNK]; /* isum and msum lanes of row i, block c0 + k */
        for (int i = 0; i < ROW_TILE; i++)
            for (int64_t k = 0; k < n; k++) {
                const int64_t blk = c0 + k;
                m[i][k] = wasm_i32x4_splat(0);
                s[i][k] = f.dot(r[i] + (size_t)blk * f.block_bytes, KX(a) + blk * SAC_QK_K, a->bsums + blk * 16, &m[i][k]);
            }
        for (int64_t k = 0; k < n; k++)
            acc = kblock_add4(f, acc, r, (size_t)(c0 + k) * f.block_bytes, sum4_i32(s[0][k], s[1][k], s[2][k], s[3][k]),
                              sum4_i32(m[0][k], m[1][k], m[2][k], m[3][k]), a->d[c0 + k]);
    }
    return acc;
}

/* Rows o..o+3 as the lanes of one vector, as quant_rows4 for the 32-value formats: block by
 * block, the four rows' in turn, with the same read-ahead of the next four rows (every cache
 * line of their share of each block, in order). */
KERNEL v128_t kquant_rows4_in_turn(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, int64_t o,
                                   const char *ahead) {
    int64_t nb = t->n_in / SAC_QK_K;
    const char *r[ROW_TILE];
    for (int i = 0; i < ROW_TILE; i++) r[i] = weight_row(t, o + i);
    v128_t acc = wasm_f32x4_splat(0.0f), slot[1];
    for (int64_t blk = 0; blk < nb; blk++) {
        const volatile char *next = (const volatile char *)(ahead + (size_t)blk * ROW_TILE * f.block_bytes);
        for (size_t k = 0; k < ROW_TILE * f.block_bytes; k += CACHE_LINE) (void)next[k];
        size_t at = (size_t)blk * f.block_bytes;
        const kx_t *x = KX(a) + blk * SAC_QK_K;
        const int16_t *bs = a->bsums + blk * 16;
        v128_t m0 = wasm_i32x4_splat(0), m1 = m0, m2 = m0, m3 = m0;
        v128_t s0 = f.dot(r[0] + at, x, bs, &m0);
        schedule_point(slot, s0);
        v128_t s1 = f.dot(r[1] + at, x, bs, &m1);
        schedule_point(slot, s1);
        v128_t s2 = f.dot(r[2] + at, x, bs, &m2);
        schedule_point(slot, s2);
        v128_t s3 = f.dot(r[3] + at, x, bs, &m3);
        acc = kblock_add4(f, acc, r, at, sum4_i32(s0, s1, s2, s3), sum4_i32(m0, m1, m2, m3), a->d[blk]);
    }
    return acc;
}
#endif

/* `walk` is a constant where this is inlined (one of the *_WALK above). */
KERNEL void kquant_matvec(const sac_kernel_task *t, kquant_format f, int walk, int64_t o0, int64_t o1) {
    q8k_activations a = q8k_view(t);
    int64_t o = o0;
#ifdef SAC_SIMD128
    if (walk == KQ_IN_ORDER)
        for (; o + ROW_TILE <= o1; o += ROW_TILE) wasm_v128_store(t->y + o, kquant_rows4_in_order(t, &a, f, o));
    else if (walk == KQ_IN_TURN)
        for (; o + ROW_TILE <= o1; o += ROW_TILE)
            wasm_v128_store(t->y + o, kquant_rows4_in_turn(t, &a, f, o, ahead_rows(t, o, ROW_TILE, ROW_TILE)));
#else
    (void)walk;
#endif
    for (; o < o1; o++) t->y[o] = kquant_dot(t, &a, f, o, 0);
}

#ifdef SAC_SIMD128
/* matmat, as the 32-value formats' panel does it: four rows' blocks decoded once (kdecode: the
 * levels times their group's scale), as int16 pairs interleaved across the four rows, and the
 * group mins likewise, so one i32x4.dot_i16x8 with a splatted activation pair gives four rows'
 * partial isums (msums with a pair of bsums). The float steps are kblock_add's. */
#define KPANEL_BLOCKS 2 /* super-blocks of each row in a panel: 8.6 KB on the stack (10 relaxed) */
typedef struct kquant_panel {
    /* pairs of scaled levels (kpanel_step), or in w[k][0..63] quads of unsigned levels
     * (kpanel_step_levels; lane i of w[k][c][q]: levels 4c..4c+3 of block k of row 4q + i) */
    v128_t w[KPANEL_BLOCKS][SAC_QK_K / 2][PANEL_QUADS];
    v128_t m[KPANEL_BLOCKS][8][PANEL_QUADS]; /* pairs of group mins */
    v128_t d[KPANEL_BLOCKS][PANEL_QUADS], dmin[KPANEL_BLOCKS][PANEL_QUADS];
#ifdef RELAXED /* kpanel_step_levels' */
    v128_t sc[KPANEL_BLOCKS][16][PANEL_QUADS]; /* group scales of four rows (int32) */
    v128_t scp[KPANEL_BLOCKS][8][PANEL_QUADS]; /* pairs of them (int16), as m: for the levels' offset */
#endif
} kquant_panel;

/* Four rows' decoded block k (kdecode: scaled levels) into quad q of the panel, as kpanel_step
 * takes them: pairs of levels. */
KERNEL void kpanel_put_pairs(const kblock w[4], int k, int q, kquant_panel *p) {
    for (int j = 0; j < SAC_QK_K / 8; j++) { /* eight levels: pairs 4j..4j+3 */
        v128_t pairs[4];
        interleave_pairs4(wasm_v128_load(w[0].q + 8 * j), wasm_v128_load(w[1].q + 8 * j),
                          wasm_v128_load(w[2].q + 8 * j), wasm_v128_load(w[3].q + 8 * j), pairs);
        for (int c = 0; c < 4; c++) p->w[k][4 * j + c][q] = pairs[c];
    }
}

#ifdef RELAXED
/* The same for kpanel_step_levels: the unsigned levels (f.decode, unscaled) as quads of bytes,
 * and the group scales beside them. */
KERNEL void kpanel_put_levels(kquant_format f, const kblock w[4], int k, int q, kquant_panel *p) {
    const v128_t offset = wasm_i16x8_splat((int16_t)f.level_offset);
    _Alignas(16) int16_t sc_pairs[8][4][2]; /* as kfill_panel's m */
    for (int g = 0; g < 16; g++) { /* a group's 16 levels of each row, as bytes: four quads */
        v128_t rows[4], quads4[4];
        for (int i = 0; i < 4; i++)
            rows[i] = wasm_u8x16_narrow_i16x8(wasm_i16x8_add(wasm_v128_load(w[i].q + 16 * g), offset),
                                              wasm_i16x8_add(wasm_v128_load(w[i].q + 16 * g + 8), offset));
        interleave_pairs4(rows[0], rows[1], rows[2], rows[3], quads4);
        for (int c = 0; c < 4; c++) p->w[k][4 * g + c][q] = quads4[c];
        p->sc[k][g][q] = wasm_i32x4_make(w[0].sc[g], w[1].sc[g], w[2].sc[g], w[3].sc[g]);
        for (int i = 0; i < 4; i++) sc_pairs[g / 2][i][g % 2] = (int16_t)w[i].sc[g];
    }
    for (int g = 0; g < 8; g++) p->scp[k][g][q] = wasm_v128_load(sc_pairs[g]);
}
#endif

/* `levels` (a constant where it is inlined; 1 only in the relaxed builds): the panel of
 * kpanel_step_levels, else kpanel_step's. */
KERNEL void kfill_panel(const sac_kernel_task *t, kquant_format f, int64_t o, int quads, int64_t blk0, int nblk,
                        int levels, kquant_panel *p) {
    for (int q = 0; q < quads; q++)
        for (int k = 0; k < nblk; k++) {
            kblock w[4];
            _Alignas(16) int16_t m[8][4][2]; /* [pair of groups][row][group] */
            _Alignas(16) float d[4], dmin[4];
            for (int i = 0; i < 4; i++) {
                const char *block = weight_row(t, o + 4 * q + i) + (size_t)(blk0 + k) * f.block_bytes;
                if (levels)
                    f.decode(block, &w[i]); /* unscaled: kpanel_step_levels scales each group's sum */
                else
                    kdecode(f, block, &w[i]);
                d[i] = w[i].d;
                dmin[i] = w[i].dmin;
                for (int g = 0; g < 16; g++) m[g / 2][i][g % 2] = (int16_t)w[i].m[g];
            }
            for (int g = 0; g < 8; g++) p->m[k][g][q] = wasm_v128_load(m[g]);
            p->d[k][q] = wasm_v128_load(d);
            p->dmin[k][q] = wasm_v128_load(dmin);
#ifdef RELAXED
            if (levels) {
                kpanel_put_levels(f, w, k, q, p);
                continue;
            }
#endif
            kpanel_put_pairs(w, k, q, p);
        }
}

/* out[q] = Σ_g pairs[g][q] · (group sums 2g, 2g + 1 of one activation row, splatted): a block's
 * eight pairs of groups of four rows (the mins; in the relaxed builds also the scales, for the
 * levels' offset) against the activations' group sums. */
KERNEL void pairs_dot_bsums(const v128_t pairs[8][PANEL_QUADS], const int16_t *bs, int quads,
                            v128_t out[PANEL_QUADS]) {
    for (int q = 0; q < quads; q++) out[q] = wasm_i32x4_splat(0);
    for (int g = 0; g < 8; g++) {
        const v128_t bsum = wasm_v128_load32_splat(bs + 2 * g);
        for (int q = 0; q < quads; q++) out[q] = wasm_i32x4_add(out[q], wasm_i32x4_dot_i16x8(pairs[g][q], bsum));
    }
}

/* One block's integer sums (and the mins' sums) into the float sums, as kblock_add. */
KERNEL void kpanel_block_sums(const sac_kernel_task *t, const q8k_activations *a, kquant_format f,
                              const kquant_panel *p, int quads, int k, int64_t blk, int64_t b, int acts,
                              v128_t isum[PANEL_QUADS][PANEL_ACTS], v128_t acc[PANEL_QUADS][PANEL_ACTS]) {
    const int64_t n_batch = t->n_batch, ng = t->n_in / 16;
    for (int r = 0; r < acts; r++) {
        const v128_t dx = wasm_f32x4_splat(a->d[blk * n_batch + b + r]);
        for (int q = 0; q < quads; q++)
            acc[q][r] = wasm_f32x4_add(acc[q][r], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(isum[q][r]),
                                                                 wasm_f32x4_mul(p->d[k][q], dx)));
    }
    if (!f.has_min) return;
    for (int r = 0; r < acts; r++) {
        v128_t msum[PANEL_QUADS];
        pairs_dot_bsums(p->m[k], a->bsums + (b + r) * ng + blk * 16, quads, msum);
        const v128_t dx = wasm_f32x4_splat(a->d[blk * n_batch + b + r]);
        for (int q = 0; q < quads; q++)
            acc[q][r] = wasm_f32x4_sub(acc[q][r], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(msum[q]),
                                                                 wasm_f32x4_mul(p->dmin[k][q], dx)));
    }
}

/* The panel against activation rows b..b+acts-1 (panel_sums_load). */
KERNEL void kpanel_step(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, const kquant_panel *p,
                        int64_t o, int quads, int64_t blk0, int nblk, int64_t b, int acts, int first) {
    const int64_t n_in = t->n_in;
    v128_t acc[PANEL_QUADS][PANEL_ACTS];
    panel_sums_load(t, o, quads, b, acts, first, acc);
    for (int k = 0; k < nblk; k++) {
        const int64_t blk = blk0 + k;
        const int16_t *x = a->q + b * n_in + blk * SAC_QK_K;
        v128_t isum[PANEL_QUADS][PANEL_ACTS];
        for (int q = 0; q < quads; q++)
            for (int r = 0; r < acts; r++) isum[q][r] = wasm_i32x4_splat(0);
        for (int j = 0; j < SAC_QK_K / 2; j++)
            for (int r = 0; r < acts; r++) {
                v128_t xs = wasm_v128_load32_splat(x + r * n_in + 2 * j);
                for (int q = 0; q < quads; q++)
                    isum[q][r] = wasm_i32x4_add(isum[q][r], wasm_i32x4_dot_i16x8(p->w[k][j][q], xs));
            }
        kpanel_block_sums(t, a, f, p, quads, k, blk, b, acts, isum, acc);
    }
    panel_sums_store(t, o, quads, b, acts, acc);
}

#ifdef RELAXED
/* kpanel_step in the relaxed builds: the unsigned levels against the int8 activations, one
 * relaxed dot per four values of four rows, each group's sum times its scale, and the levels'
 * offset off with the group sums of x (bsums), as the register dots do (minus_offset): the
 * same integer sums. bench_kernels in Chromium, 1 thread, AMD EPYC (Zen 5), best windows:
 * matmat Q4_K 66-69 -> 80-86 GFLOP/s, Q6_K 73-77 -> 82-86, Q2_K, Q3_K, Q5_K +10-20% (two
 * activation rows a step instead of four measured alike, within the noise). */
KERNEL void kpanel_step_levels(const sac_kernel_task *t, const q8k_activations *a, kquant_format f,
                               const kquant_panel *p, int64_t o, int quads, int64_t blk0, int nblk, int64_t b,
                               int acts, int first) {
    const int64_t n_in = t->n_in, ng = n_in / 16;
    v128_t acc[PANEL_QUADS][PANEL_ACTS];
    panel_sums_load(t, o, quads, b, acts, first, acc);
    for (int k = 0; k < nblk; k++) {
        const int64_t blk = blk0 + k;
        const int8_t *x = a->q8 + b * n_in + blk * SAC_QK_K;
        v128_t isum[PANEL_QUADS][PANEL_ACTS];
        for (int q = 0; q < quads; q++)
            for (int r = 0; r < acts; r++) isum[q][r] = wasm_i32x4_splat(0);
        for (int g = 0; g < 16; g++) {
            v128_t gsum[PANEL_QUADS][PANEL_ACTS];
            for (int q = 0; q < quads; q++)
                for (int r = 0; r < acts; r++) gsum[q][r] = wasm_i32x4_splat(0);
            for (int c = 0; c < 4; c++)
                for (int r = 0; r < acts; r++) {
                    v128_t xs = wasm_v128_load32_splat(x + r * n_in + 16 * g + 4 * c);
                    for (int q = 0; q < quads; q++)
                        gsum[q][r] = SAC_RELAXED_DOT_ADD(xs, p->w[k][4 * g + c][q], gsum[q][r]);
                }
            for (int q = 0; q < quads; q++)
                for (int r = 0; r < acts; r++) isum[q][r] = wasm_i32x4_add(isum[q][r], wasm_i32x4_mul(gsum[q][r], p->sc[k][g][q]));
        }
        if (f.level_offset)
            for (int r = 0; r < acts; r++) {
                v128_t off[PANEL_QUADS];
                pairs_dot_bsums(p->scp[k], a->bsums + (b + r) * ng + blk * 16, quads, off);
                for (int q = 0; q < quads; q++)
                    isum[q][r] = wasm_i32x4_sub(isum[q][r], wasm_i32x4_mul(off[q], wasm_i32x4_splat(f.level_offset)));
            }
        kpanel_block_sums(t, a, f, p, quads, k, blk, b, acts, isum, acc);
    }
    panel_sums_store(t, o, quads, b, acts, acc);
}
#endif

/* The step of a panel filled with `levels`. */
KERNEL void kpanel_step_of(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, const kquant_panel *p,
                           int64_t o, int quads, int64_t blk0, int nblk, int64_t b, int acts, int levels) {
#ifdef RELAXED
    if (levels) {
        kpanel_step_levels(t, a, f, p, o, quads, blk0, nblk, b, acts, blk0 == 0);
        return;
    }
#endif
    (void)levels;
    kpanel_step(t, a, f, p, o, quads, blk0, nblk, b, acts, blk0 == 0);
}

KERNEL void kpanel_pass(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, const kquant_panel *p,
                        int64_t o, int quads, int64_t blk0, int nblk, int levels) {
    int64_t b = 0;
    for (; b + KPANEL_ACTS <= t->n_batch; b += KPANEL_ACTS) kpanel_step_of(t, a, f, p, o, quads, blk0, nblk, b, KPANEL_ACTS, levels);
    for (; b < t->n_batch; b++) kpanel_step_of(t, a, f, p, o, quads, blk0, nblk, b, 1, levels);
}

KERNEL void kpanel_rows(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, int64_t o, int quads,
                        int levels) {
    const int64_t nb = t->n_in / SAC_QK_K;
    kquant_panel p;
    for (int64_t blk0 = 0; blk0 < nb; blk0 += KPANEL_BLOCKS) {
        const int nblk = nb - blk0 < KPANEL_BLOCKS ? (int)(nb - blk0) : KPANEL_BLOCKS;
        kfill_panel(t, f, o, quads, blk0, nblk, levels, &p);
        if (quads == PANEL_QUADS)
            kpanel_pass(t, a, f, &p, o, PANEL_QUADS, blk0, nblk, levels);
        else
            kpanel_pass(t, a, f, &p, o, 1, blk0, nblk, levels);
    }
}

/* Rows [o0, o1), sac_matmul's unit, as quant_matmat takes them. Below four rows of batch the
 * matvec's register dot per row is quicker than filling a panel (bench_kernels, 768x3072, 1
 * thread in Node: batch 2 -25 to -32%, 4 +16% but Q6_K -9%, 8 +40%, 128 +65 to +140%).
 * `levels` (a constant where it is inlined; 1 only in the relaxed builds): the panels of
 * kpanel_step_levels, else kpanel_step's. Without AVX-VNNI the latter are faster in the relaxed
 * builds too (see relaxed_dot_saturating): Chromium 156, --no-enable-avx-vnni, GPT-2-small
 * prefill of 128 tokens, 2 threads, relaxed build against SIMD128, two runs (tokens/s): Q2_K
 * 594 / 605 and 559 / 615, Q3_K 584 / 693 and 575 / 685, Q4_K 591 / 652 and 595 / 595, Q5_K
 * 589 / 622 and 564 / 612, Q6_K 551 / 643 and 587 / 638. */
KERNEL void kquant_matmat(const sac_kernel_task *t, kquant_format f, int64_t o0, int64_t o1, int levels) {
    q8k_activations a = q8k_view(t);
    int64_t o = o0;
    if (t->n_batch >= 4) {
        for (; o + 4 * PANEL_QUADS <= o1; o += 4 * PANEL_QUADS) kpanel_rows(t, &a, f, o, PANEL_QUADS, levels);
        for (; o + 4 <= o1; o += 4) kpanel_rows(t, &a, f, o, 1, levels);
    }
    for (int64_t b = 0; b < t->n_batch; b++)
        for (int64_t r = o; r < o1; r++) t->y[b * t->n_out + r] = kquant_dot(t, &a, f, r, b);
}

#else

/* Activation rows [b, b + rows) of rows [o0, o1): each decoded weight block serves them all. */
KERNEL void kquant_matmat_rows(const sac_kernel_task *t, const q8k_activations *a, kquant_format f, int64_t o0,
                               int64_t o1, int64_t b, int rows) {
    int64_t n_in = t->n_in, n_out = t->n_out, nb = n_in / SAC_QK_K, n_batch = t->n_batch, ng = n_in / 16;
    for (int64_t o = o0; o < o1; o++) {
        const char *row = weight_row(t, o);
        float acc[8] = {0};
        kblock w;
        for (int64_t blk = 0; blk < nb; blk++) {
            kdecode(f, row + (size_t)blk * f.block_bytes, &w);
            _Alignas(16) int32_t isum[8];
            kblock_dots(&w, a->q + b * n_in + blk * SAC_QK_K, n_in, rows, isum);
            for (int r = 0; r < rows; r++)
                acc[r] = kblock_add(f, acc[r], &w, isum[r], a->bsums + (b + r) * ng + blk * 16, a->d[blk * n_batch + b + r]);
        }
        for (int r = 0; r < rows; r++) t->y[(b + r) * n_out + o] = acc[r];
    }
}

/* Each decoded weight block serves eight activation rows, or four. */
KERNEL void kquant_matmat(const sac_kernel_task *t, kquant_format f, int64_t o0, int64_t o1, int levels) {
    (void)levels;
    q8k_activations a = q8k_view(t);
    int64_t b = 0;
    for (; b + 2 * BATCH_TILE <= t->n_batch; b += 2 * BATCH_TILE) kquant_matmat_rows(t, &a, f, o0, o1, b, 2 * BATCH_TILE);
    for (; b + BATCH_TILE <= t->n_batch; b += BATCH_TILE) kquant_matmat_rows(t, &a, f, o0, o1, b, BATCH_TILE);
    for (; b < t->n_batch; b++)
        for (int64_t o = o0; o < o1; o++) t->y[b * t->n_out + o] = kquant_dot(t, &a, f, o, b);
}
#endif

/* ------------------------------------------------------------------------------------------
 * Float kernels: formats of one value per element, multiplied with f32 activations
 * ---------------------------------------------------------------------------------------- */

/* Weight i of a row as f32 (leftovers, and the plain-C path). */
typedef float (*value_fn)(const char *row, int64_t i);

static inline float value_f32(const char *row, int64_t i) {
    float f;
    memcpy(&f, row + (size_t)i * 4, sizeof f);
    return f;
}

/* bfloat16: the high half of an f32, so the conversion is a shift (exact, inf and NaN too). */
static inline float value_bf16(const char *row, int64_t i) {
    uint16_t h;
    memcpy(&h, row + (size_t)i * 2, sizeof h);
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float value_f16(const char *row, int64_t i) {
    uint16_t h;
    memcpy(&h, row + (size_t)i * 2, sizeof h);
    return f16_to_f32_inline(h);
}

#ifdef SAC_SIMD128

/* Eight weights from element i on, as two f32x4. `exact` converts inf and NaN too; otherwise
 * a format may use a cheaper conversion and collect in *seen what tells that the caller must
 * redo the work exactly (seen_special). */
typedef void (*load8_fn)(const char *row, int64_t i, int exact, v128_t *lo, v128_t *hi, v128_t *seen);

static inline void load8_f32(const char *row, int64_t i, int exact, v128_t *lo, v128_t *hi, v128_t *seen) {
    (void)exact;
    (void)seen;
    *lo = wasm_v128_load(row + (size_t)i * 4);
    *hi = wasm_v128_load(row + (size_t)i * 4 + 16);
}

/* F16: the fast conversion collects the exponent bits of the halves (an exponent of all
 * ones, 0x7C00, means some half was inf or NaN: one max per 8 halves instead of a test and a
 * branch). */
static inline void load8_f16(const char *row, int64_t i, int exact, v128_t *lo, v128_t *hi, v128_t *seen) {
    v128_t h = wasm_v128_load(row + (size_t)i * 2), zero = wasm_i32x4_splat(0);
    v128_t h_lo = wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11); /* h << 16 per lane */
    v128_t h_hi = wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15);
    if (exact) {
        *lo = f16_high_to_f32(h_lo);
        *hi = f16_high_to_f32(h_hi);
    } else {
        *seen = wasm_u16x8_max(*seen, wasm_v128_and(h, wasm_i16x8_splat(0x7C00)));
        *lo = f16_high_finite_to_f32(h_lo);
        *hi = f16_high_finite_to_f32(h_hi);
    }
}

typedef struct float_format {
    size_t elem_bytes;
    value_fn value;
    load8_fn load8;
    int inexact_specials; /* load8's fast conversion may miss inf/NaN: redo when seen_special */
} float_format;

#define FORMAT_F32 ((float_format){4, value_f32, load8_f32, 0})
static inline void load8_bf16(const char *row, int64_t i, int exact, v128_t *lo, v128_t *hi, v128_t *seen) {
    (void)exact;
    (void)seen;
    v128_t h = wasm_v128_load(row + (size_t)i * 2), zero = wasm_i32x4_splat(0);
    *lo = wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11); /* h << 16 per lane: the f32 */
    *hi = wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15);
}

#define FORMAT_F16 ((float_format){2, value_f16, load8_f16, 1})
#define FORMAT_BF16 ((float_format){2, value_bf16, load8_bf16, 0})

#else

/* Weights [i, i + m) of a row as f32: in place, or converted into buf (a plain loop over an
 * array, which gcc vectorizes; converting inside the dot loop it does not). */
typedef const float *(*convert_fn)(const char *row, int64_t i, int64_t m, float *buf);

static inline const float *convert_f32(const char *row, int64_t i, int64_t m, float *buf) {
    (void)m;
    (void)buf;
    return (const float *)row + i;
}

static inline const float *convert_f16(const char *row, int64_t i, int64_t m, float *buf) {
    const uint16_t *h = (const uint16_t *)row + i;
    for (int64_t k = 0; k < m; k++) buf[k] = f16_to_f32_inline(h[k]);
    return buf;
}

typedef struct float_format {
    size_t elem_bytes;
    value_fn value;
    convert_fn convert;
} float_format;

#define FORMAT_F32 ((float_format){4, value_f32, convert_f32})
static inline const float *convert_bf16(const char *row, int64_t i, int64_t m, float *buf) {
    const uint16_t *h = (const uint16_t *)row + i;
    for (int64_t k = 0; k < m; k++) {
        uint32_t bits = (uint32_t)h[k] << 16;
        memcpy(&buf[k], &bits, sizeof bits);
    }
    return buf;
}

#define FORMAT_F16 ((float_format){2, value_f16, convert_f16})
#define FORMAT_BF16 ((float_format){2, value_bf16, convert_bf16})

#endif

KERNEL float add_leftover(float sum, float_format f, const char *row, const float *x, int64_t n) {
    int64_t n8 = n - n % FLOAT_LANES;
    if (n8 == n) return sum;
    float tail = 0.0f;
    for (int64_t i = n8; i < n; i++) tail = tail + f.value(row, i) * x[i];
    return sum + tail;
}

#ifdef SAC_SIMD128

static inline float fold_v(v128_t lo, v128_t hi) {
    v128_t s = wasm_f32x4_add(lo, hi); /* [a0+a4, a1+a5, a2+a6, a3+a7] */
    s = wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1);
}

/* Four dot products at once, of one weight row with activation rows x[k] over the first n8
 * values, each with float_dot's two running f32x4 sums: eight weights are loaded (and
 * converted) once for the four. */
KERNEL void float_dot4_pass(float_format f, int exact, const char *row, const float *const x[4], int64_t n8,
                            float sum[4], v128_t *seen) {
    v128_t a0l = wasm_f32x4_splat(0.0f), a0h = a0l, a1l = a0l, a1h = a0l;
    v128_t a2l = a0l, a2h = a0l, a3l = a0l, a3h = a0l;
    for (int64_t i = 0; i < n8; i += FLOAT_LANES) {
        v128_t lo, hi;
        f.load8(row, i, exact, &lo, &hi, seen);
        a0l = wasm_f32x4_add(a0l, wasm_f32x4_mul(lo, wasm_v128_load(x[0] + i)));
        a0h = wasm_f32x4_add(a0h, wasm_f32x4_mul(hi, wasm_v128_load(x[0] + i + 4)));
        a1l = wasm_f32x4_add(a1l, wasm_f32x4_mul(lo, wasm_v128_load(x[1] + i)));
        a1h = wasm_f32x4_add(a1h, wasm_f32x4_mul(hi, wasm_v128_load(x[1] + i + 4)));
        a2l = wasm_f32x4_add(a2l, wasm_f32x4_mul(lo, wasm_v128_load(x[2] + i)));
        a2h = wasm_f32x4_add(a2h, wasm_f32x4_mul(hi, wasm_v128_load(x[2] + i + 4)));
        a3l = wasm_f32x4_add(a3l, wasm_f32x4_mul(lo, wasm_v128_load(x[3] + i)));
        a3h = wasm_f32x4_add(a3h, wasm_f32x4_mul(hi, wasm_v128_load(x[3] + i + 4)));
    }
    sum[0] = fold_v(a0l, a0h);
    sum[1] = fold_v(a1l, a1h);
    sum[2] = fold_v(a2l, a2h);
    sum[3] = fold_v(a3l, a3h);
}

/* One half of the running sums of two f32 rows w0, w1 with four activation rows, over values
 * [i0, i1): lanes 0-3 of each run of eight when w and x start at the run, 4-7 when they start
 * four values on. The eight sums (s[r * 4 + k] for row r, activation k) are float_dot's acc0
 * or acc1 for each product, in its order; eight fit in registers where the sixteen of both
 * halves would not. */
KERNEL void f32_dot2x4_half(const float *w0, const float *w1, const float *const x[4], int64_t i0, int64_t i1,
                            v128_t s[8]) {
    v128_t s0[4], s1[4]; /* a local copy, which the compiler keeps in registers */
    for (int k = 0; k < 4; k++) s0[k] = s[k], s1[k] = s[4 + k];
    for (int64_t i = i0; i < i1; i += FLOAT_LANES) {
        v128_t a = wasm_v128_load(w0 + i), b = wasm_v128_load(w1 + i);
        for (int k = 0; k < 4; k++) {
            v128_t v = wasm_v128_load(x[k] + i);
            s0[k] = wasm_f32x4_add(s0[k], wasm_f32x4_mul(a, v));
            s1[k] = wasm_f32x4_add(s1[k], wasm_f32x4_mul(b, v));
        }
    }
    for (int k = 0; k < 4; k++) s[k] = s0[k], s[4 + k] = s1[k];
}

/* Values per half pass, so that the second half finds the first's lines in L1 (six rows of
 * 2 KB). */
#define HALF_RUN 512

/* Dots of two f32 rows with four activation rows over the first n8 values: sum[r * 4 + k]. */
KERNEL void f32_dot2x4(const float *w0, const float *w1, const float *const x[4], int64_t n8, float sum[8]) {
    const float *xh[4] = {x[0] + 4, x[1] + 4, x[2] + 4, x[3] + 4};
    v128_t lo[8], hi[8];
    for (int k = 0; k < 8; k++) lo[k] = hi[k] = wasm_f32x4_splat(0.0f);
    for (int64_t i0 = 0; i0 < n8; i0 += HALF_RUN) {
        int64_t i1 = n8 - i0 < HALF_RUN ? n8 : i0 + HALF_RUN;
        f32_dot2x4_half(w0, w1, x, i0, i1, lo);
        f32_dot2x4_half(w0 + 4, w1 + 4, xh, i0, i1, hi);
    }
    for (int k = 0; k < 8; k++) sum[k] = fold_v(lo[k], hi[k]);
}

KERNEL void float_dot4(float_format f, const char *row, const float *const x[4], int64_t n8, float sum[4]) {
    v128_t seen = wasm_i32x4_splat(0);
    float_dot4_pass(f, 0, row, x, n8, sum, &seen);
    if (f.inexact_specials && seen_special(seen)) float_dot4_pass(f, 1, row, x, n8, sum, &seen);
}

#else

/* The lane fold, as fold_v does it with vectors. */
static inline float fold_lanes(const float acc[FLOAT_LANES]) {
    float s0 = acc[0] + acc[4], s1 = acc[1] + acc[5], s2 = acc[2] + acc[6], s3 = acc[3] + acc[7];
    return (s0 + s2) + (s1 + s3);
}

static inline void lanes_dot(float acc[FLOAT_LANES], const float *restrict w,
                             const float *restrict x, int64_t m) {
    float a[FLOAT_LANES]; /* a local copy, so the compiler keeps it in one vector register */
    memcpy(a, acc, sizeof a);
    for (int64_t i = 0; i < m; i += FLOAT_LANES)
        for (int l = 0; l < FLOAT_LANES; l++) a[l] = a[l] + w[i + l] * x[i + l];
    memcpy(acc, a, sizeof a);
}

#endif

/* Values per conversion run on the plain-C path; f32 rows are read in place, whole. */
#define CONVERT_RUN 256

/* One output: dot of a weight row with one activation row. */
/* `ahead`: where the wasm loop of a 2-byte format also reads one byte per sixteen values (the
 * matvec's read-ahead, float_matvec), or row itself. */
KERNEL float float_dot(float_format f, const char *row, const char *ahead, const float *x, int64_t n) {
    int64_t n8 = n - n % FLOAT_LANES;
#ifdef SAC_SIMD128
    float sum = 0.0f;
    v128_t seen = wasm_i32x4_splat(0);
    for (int exact = 0; exact <= 1; exact++) { /* the exact pass only after an inf or NaN */
        v128_t acc0 = wasm_f32x4_splat(0.0f), acc1 = acc0;
        int64_t i = 0;
        /* sixteen values a step, in the same order: BF16 reads 13.6 → 18.6 GB/s (bench_decode, 1 thread) */
        for (; i + 2 * FLOAT_LANES <= n8; i += 2 * FLOAT_LANES) {
            v128_t lo, hi, lo2, hi2;
            if (f.elem_bytes < sizeof(float)) (void)((const volatile char *)ahead)[(size_t)i * f.elem_bytes];
            f.load8(row, i, exact, &lo, &hi, &seen);
            f.load8(row, i + FLOAT_LANES, exact, &lo2, &hi2, &seen);
            acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(lo, wasm_v128_load(x + i)));
            acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(hi, wasm_v128_load(x + i + 4)));
            acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(lo2, wasm_v128_load(x + i + 8)));
            acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(hi2, wasm_v128_load(x + i + 12)));
        }
        for (; i < n8; i += FLOAT_LANES) {
            v128_t lo, hi;
            f.load8(row, i, exact, &lo, &hi, &seen);
            acc0 = wasm_f32x4_add(acc0, wasm_f32x4_mul(lo, wasm_v128_load(x + i)));
            acc1 = wasm_f32x4_add(acc1, wasm_f32x4_mul(hi, wasm_v128_load(x + i + 4)));
        }
        sum = fold_v(acc0, acc1);
        if (!f.inexact_specials || !seen_special(seen)) break;
    }
#else
    float acc[FLOAT_LANES] = {0}, buf[CONVERT_RUN];
    int64_t run = f.elem_bytes == sizeof(float) ? n8 : CONVERT_RUN;
    for (int64_t c = 0; c < n8; c += run) { /* runs of a multiple of 8: lanes stay i % 8 */
        int64_t m = n8 - c < run ? n8 - c : run;
        lanes_dot(acc, f.convert(row, c, m, buf), x + c, m);
    }
    float sum = fold_lanes(acc);
    (void)ahead;
#endif
    return add_leftover(sum, f, row, x, n);
}

#ifdef SAC_SIMD128

/* The lane sums of a row held as even lanes e = [a0, a2, a4, a6] and odd ones
 * o = [a1, a3, a5, a7], folded as fold_v folds [a0..a3], [a4..a7]. */
static inline float fold_eo(v128_t e, v128_t o) {
    return fold_v(wasm_i32x4_shuffle(e, o, 0, 4, 1, 5), wasm_i32x4_shuffle(e, o, 2, 6, 3, 7));
}

/* F16 matvec with activations prepared once per range of rows: each run of eight values as
 * its even elements then its odd ones, times 2^112. Then a 32-bit lane of the weights holds
 * an even half (low) and an odd one (high), and each converts in place with 2-3 steps and no
 * shuffle; the 2^112 that rebiases the exponent moves to the activations. The products are
 * unchanged: w = bits * 2^112 and x * 2^112 are exact (while |x| < 2^16), so
 * bits * (x * 2^112) is the real product w * x, rounded once, as w * x is. */
#define F16_SCALED_MAX 8192 /* activation values prepared on the stack (32 KB) */

static int f16_scale_activations(const float *x, int64_t n8, float *xs) {
    /* the largest |x| as bits without the sign (an integer max: f32x4.max is slow in wasm) */
    v128_t amax = wasm_i32x4_splat(0), scale = wasm_f32x4_splat(0x1p112f);
    for (int64_t i = 0; i < n8; i += FLOAT_LANES) {
        v128_t lo = wasm_v128_load(x + i), hi = wasm_v128_load(x + i + 4);
        amax = wasm_u32x4_max(amax, wasm_u32x4_max(wasm_i32x4_shl(lo, 1), wasm_i32x4_shl(hi, 1)));
        wasm_v128_store(xs + i, wasm_f32x4_mul(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), scale));
        wasm_v128_store(xs + i + 4, wasm_f32x4_mul(wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7), scale));
    }
    /* |x| >= 2^16 would overflow once scaled (inf and NaN are larger still) */
    return !wasm_v128_any_true(wasm_u32x4_ge(amax, wasm_i32x4_splat((int32_t)(0x47800000u << 1))));
}

/* Eight halves as f32 bit patterns without the 2^112 (finite halves only, as
 * f16_high_finite_to_f32): even elements from the low 16 bits of each lane, odd ones from the
 * high. */
static inline void f16_bits_eo(v128_t h, int watch, v128_t *even, v128_t *odd, v128_t *seen) {
    v128_t mask = wasm_i32x4_splat((int32_t)0x8FFFE000u);
    if (watch) *seen = wasm_u16x8_max(*seen, wasm_v128_and(h, wasm_i16x8_splat(0x7C00)));
    *even = wasm_v128_and(wasm_i32x4_shr(wasm_i32x4_shl(h, 16), 3), mask);
    *odd = wasm_v128_and(wasm_i32x4_shr(h, 3), mask);
}

/* One row against the prepared activations; *seen as load8_f16 collects it, if `watch`
 * (weights not known finite: sac_matrix.finite). One byte of each cache line at `ahead` is
 * read too (float_matvec). */
KERNEL float f16_dot_scaled(const char *row, const char *ahead, const float *xs, int64_t n8, int watch,
                            v128_t *seen) {
    v128_t even = wasm_f32x4_splat(0.0f), odd = even;
    for (int64_t i = 0; i < n8; i += FLOAT_LANES) {
        if (i % (CACHE_LINE / 2) == 0) (void)((const volatile char *)ahead)[i * 2];
        v128_t we, wo;
        f16_bits_eo(wasm_v128_load(row + (size_t)i * 2), watch, &we, &wo, seen);
        even = wasm_f32x4_add(even, wasm_f32x4_mul(we, wasm_v128_load(xs + i)));
        odd = wasm_f32x4_add(odd, wasm_f32x4_mul(wo, wasm_v128_load(xs + i + 4)));
    }
    return fold_eo(even, odd);
}

KERNEL void f16_rows_scaled(const sac_kernel_task *t, const float *xs, int watch, int64_t o0, int64_t o1) {
    int64_t n = t->n_in, n8 = n - n % FLOAT_LANES;
    for (int64_t o = o0; o < o1; o++) {
        const char *row = weight_row(t, o);
        v128_t seen = wasm_i32x4_splat(0);
        const char *ahead = t->read_ahead ? ahead_rows(t, o, FLOAT_AHEAD_ROWS, 1) : row;
        float sum = f16_dot_scaled(row, ahead, xs, n8, watch, &seen);
        /* an inf or NaN weight: the exact conversion */
        t->y[o] = watch && seen_special(seen) ? float_dot(FORMAT_F16, row, row, t->x, n)
                                              : add_leftover(sum, FORMAT_F16, row, t->x, n);
    }
}

/* Returns 0 (nothing done) when the activations do not allow the prepared form. Weights known
 * finite skip the watch for inf and NaN (2 of ~12 operations per eight halves): bench_kernels
 * (Node, AMD EPYC Zen 5, 1 thread, in cache) F16 matvec 16.3-16.7 -> 18.2-18.5 GB/s. */
static int f16_matvec_scaled(const sac_kernel_task *t, int64_t o0, int64_t o1) {
    int64_t n8 = t->n_in - t->n_in % FLOAT_LANES;
    float xs[F16_SCALED_MAX];
    if (n8 > F16_SCALED_MAX || !f16_scale_activations(t->x, n8, xs)) return 0;
    /* each branch its own copy, with `watch` a constant in it */
    if (t->finite)
        f16_rows_scaled(t, xs, 0, o0, o1);
    else
        f16_rows_scaled(t, xs, 1, o0, o1);
    return 1;
}

#endif

/* Matvecs take one row at a time, each with float_dot's two running sums: the weights are then
 * read as one sequential stream, which the hardware prefetcher follows best. Measured with
 * scripts/bench_decode.c (the matvecs of a GPT-2-small token, Node, AMD EPYC): F32 at 1 thread
 * 17.4 → 27.3 GB/s (56% → 88% of a plain streaming read of the same bytes), 2 threads 25 → 31.5
 * GB/s. Rows taken in pairs, with a load from the rows further on to draw the
 * prefetcher (as quant_rows4 does), reached 17-20 GB/s there (86-90% of the stream on an
 * Intel Xeon, where it was first measured). Two chains of adds per row are enough for these
 * rates: 32 bytes per add latency. The 2-byte formats, which use more operations per byte,
 * also read one byte per sixteen values (F16's scaled path: per cache line) from eight rows
 * further on: on an Intel Xeon VM (bench_decode,
 * Node, 2 threads) F16 29 → 42 and BF16 50 → 58 tokens/s; F32, which did not gain (-6%), does
 * without. On an AMD EPYC (Zen 5) the read-ahead costs instead: F16 111-113 → 97-105, BF16
 * 172-186 → 152 (any distance from 1 to 64 rows lost there). So it is chosen at run time
 * (t->read_ahead: sac_matmul times the first matvecs both ways). */
KERNEL void float_matvec(const sac_kernel_task *t, float_format f, int64_t o0, int64_t o1) {
#ifdef SAC_SIMD128
    if (f.inexact_specials && f16_matvec_scaled(t, o0, o1)) return;
#endif
    for (int64_t o = o0; o < o1; o++) {
        const char *row = weight_row(t, o), *ahead = row;
#ifdef SAC_SIMD128
        if (f.elem_bytes < sizeof(float) && t->read_ahead) ahead = ahead_rows(t, o, FLOAT_AHEAD_ROWS, 1);
#endif
        t->y[o] = float_dot(f, row, ahead, t->x, t->n_in);
    }
}

/* y[b][o] for every b and the weight rows o in [c0, c1), whose data starts at `rows` with
 * `row_bytes` between rows. In the SIMD128 builds f32 rows (F16 and BF16 ones once converted)
 * go two at a time against four activation rows (f32_dot2x4): each load then serves four or
 * two products, not one. bench_kernels 768x3072, batch 128, 1 thread, Node, AMD EPYC (Zen 5):
 * F32 32 -> 53-57 GFLOP/s, F16 28 -> 54-57. */
KERNEL void float_matmat_rows(const sac_kernel_task *t, float_format f, const char *rows, size_t row_bytes,
                              int64_t c0, int64_t c1) {
    int64_t n = t->n_in, n_out = t->n_out, n_batch = t->n_batch;
    int64_t n8 = n - n % FLOAT_LANES, b = 0;
    for (; b + BATCH_TILE <= n_batch; b += BATCH_TILE) {
        const float *x[BATCH_TILE];
        for (int r = 0; r < BATCH_TILE; r++) x[r] = t->x + (b + r) * n;
        int64_t o = c0;
#ifdef SAC_SIMD128
        for (; f.elem_bytes == sizeof(float) && o + 2 <= c1; o += 2) {
            const char *row = rows + (size_t)(o - c0) * row_bytes;
            float sum[2 * BATCH_TILE];
            f32_dot2x4((const float *)row, (const float *)(row + row_bytes), x, n8, sum);
            for (int r = 0; r < BATCH_TILE; r++) {
                t->y[(b + r) * n_out + o] = add_leftover(sum[r], f, row, x[r], n);
                t->y[(b + r) * n_out + o + 1] = add_leftover(sum[BATCH_TILE + r], f, row + row_bytes, x[r], n);
            }
        }
#endif
        for (; o < c1; o++) {
            /* eight weights, loaded (and converted) once, serve four activation rows */
            const char *row = rows + (size_t)(o - c0) * row_bytes;
            float sum[BATCH_TILE];
#ifdef SAC_SIMD128
            float_dot4(f, row, x, n8, sum);
#else
            float a0[FLOAT_LANES] = {0}, a1[FLOAT_LANES] = {0}, a2[FLOAT_LANES] = {0};
            float a3[FLOAT_LANES] = {0}, buf[CONVERT_RUN];
            int64_t run = f.elem_bytes == sizeof(float) ? n8 : CONVERT_RUN;
            for (int64_t c = 0; c < n8; c += run) {
                int64_t m = n8 - c < run ? n8 - c : run;
                const float *w = f.convert(row, c, m, buf);
                lanes_dot(a0, w, x[0] + c, m);
                lanes_dot(a1, w, x[1] + c, m);
                lanes_dot(a2, w, x[2] + c, m);
                lanes_dot(a3, w, x[3] + c, m);
            }
            sum[0] = fold_lanes(a0);
            sum[1] = fold_lanes(a1);
            sum[2] = fold_lanes(a2);
            sum[3] = fold_lanes(a3);
#endif
            for (int r = 0; r < BATCH_TILE; r++)
                t->y[(b + r) * n_out + o] = add_leftover(sum[r], f, row, x[r], n);
        }
    }
    for (; b < n_batch; b++)
        for (int64_t o = c0; o < c1; o++) {
            const char *row = rows + (size_t)(o - c0) * row_bytes;
            t->y[b * n_out + o] = float_dot(f, row, row, t->x + b * n, n);
        }
}

/* Rows narrower than f32 are converted to f32 once per chunk of rows (exactly, so the sums
 * are those of the format's own kernels), rather than once for every group of four
 * activation rows. */
#define CONVERTED_FLOATS 8192

KERNEL void float_matmat(const sac_kernel_task *t, float_format f, int64_t o0, int64_t o1) {
    int64_t n = t->n_in;
    if (f.elem_bytes < sizeof(float) && n <= CONVERTED_FLOATS) {
        float converted[CONVERTED_FLOATS];
        int64_t chunk = CONVERTED_FLOATS / n;
        for (int64_t c0 = o0; c0 < o1; c0 += chunk) {
            int64_t c1 = c0 + chunk < o1 ? c0 + chunk : o1;
            for (int64_t o = c0; o < c1; o++) {
                const char *row = weight_row(t, o);
                float *dst = converted + (o - c0) * n;
                int64_t i = 0;
#ifdef SAC_SIMD128
                for (; i + FLOAT_LANES <= n; i += FLOAT_LANES) {
                    v128_t lo, hi, seen = wasm_i32x4_splat(0);
                    f.load8(row, i, 0, &lo, &hi, &seen);
                    if (seen_special(seen)) f.load8(row, i, 1, &lo, &hi, &seen);
                    wasm_v128_store(dst + i, lo);
                    wasm_v128_store(dst + i + 4, hi);
                }
#else
                for (; i + CONVERT_RUN <= n; i += CONVERT_RUN) f.convert(row, i, CONVERT_RUN, dst + i);
#endif
                for (; i < n; i++) dst[i] = f.value(row, i);
            }
            float_matmat_rows(t, FORMAT_F32, (const char *)converted, (size_t)n * sizeof(float), c0, c1);
        }
        return;
    }
    float_matmat_rows(t, f, weight_row(t, o0), t->row_bytes, o0, o1); /* one L1 block */
}

/* ------------------------------------------------------------------------------------------
 * Each type's kernels: the generic bodies specialized by its format
 * ---------------------------------------------------------------------------------------- */

void sac_matvec_f32(const sac_kernel_task *t, int64_t o0, int64_t o1) { float_matvec(t, FORMAT_F32, o0, o1); }
void sac_matmat_f32(const sac_kernel_task *t, int64_t o0, int64_t o1) { float_matmat(t, FORMAT_F32, o0, o1); }
void sac_matvec_f16(const sac_kernel_task *t, int64_t o0, int64_t o1) { float_matvec(t, FORMAT_F16, o0, o1); }
void sac_matmat_f16(const sac_kernel_task *t, int64_t o0, int64_t o1) { float_matmat(t, FORMAT_F16, o0, o1); }

/* BF16 weights multiply the activations rounded to bf16 (their vec_dot_type, as in ggml),
 * which sac_quantize_activations_bf16 wrote as f32 values into act. */
static sac_kernel_task with_bf16_activations(const sac_kernel_task *t) {
    sac_kernel_task u = *t;
    u.x = t->act;
    return u;
}

void sac_matvec_bf16(const sac_kernel_task *t, int64_t o0, int64_t o1) {
    sac_kernel_task u = with_bf16_activations(t);
    float_matvec(&u, FORMAT_BF16, o0, o1);
}

void sac_matmat_bf16(const sac_kernel_task *t, int64_t o0, int64_t o1) {
    sac_kernel_task u = with_bf16_activations(t);
    float_matmat(&u, FORMAT_BF16, o0, o1);
}

int sac_activations_size_bf16(int64_t n_in, int64_t n_batch, size_t *bytes) {
    uint64_t n;
    if (n_in < 0 || n_batch < 0 || !sac_mul_u64((uint64_t)n_in, (uint64_t)n_batch, &n) ||
        !sac_mul_u64(n, sizeof(float), &n) || n > SIZE_MAX)
        return 0;
    *bytes = (size_t)n;
    return 1;
}

void sac_quantize_activations_bf16(const float *x, int64_t n_in, int64_t n_batch, int64_t b0, int64_t b1,
                                   void *act) {
    (void)n_batch;
    float *out = act;
    for (int64_t i = b0 * n_in; i < b1 * n_in; i++) {
        uint32_t bits = (uint32_t)sac_f32_to_bf16(x[i]) << 16;
        memcpy(&out[i], &bits, sizeof bits);
    }
}

/* Kernels with two paths in the relaxed builds (see relaxed_dot_saturating): TWO_PATHS(name,
 * relaxed, int16) defines kernel `name` to run `relaxed` unless the engine's relaxed dot
 * saturates, then `int16`; outside the relaxed builds, always `int16`. Each path is a function
 * of its own, called through a pointer: binaryen inlines a function into its only caller
 * whatever clang was told, and the 4-bit matvec's relaxed path inlined beside its int16 one ran
 * 5-10% slower (Chromium, with AVX-VNNI). */
#ifdef RELAXED
static void run_by_lowering(const sac_kernel_task *t, int64_t o0, int64_t o1, int relaxed_ok, sac_rows_fn relaxed,
                            sac_rows_fn int16) {
    volatile sac_rows_fn fn = relaxed_ok ? relaxed : int16; /* volatile: a call through the pointer */
    fn(t, o0, o1);
}
/* TWO_PATHS_IF(ok, ...): `relaxed` where `ok` holds (relaxed_dot_unsigned8: Q8_0's matmat). */
#define TWO_PATHS_IF(ok, name, relaxed, int16)                                                         \
    static void name##_relaxed(const sac_kernel_task *t, int64_t o0, int64_t o1) { relaxed; }         \
    static void name##_int16(const sac_kernel_task *t, int64_t o0, int64_t o1) { int16; }             \
    void name(const sac_kernel_task *t, int64_t o0, int64_t o1) {                                    \
        run_by_lowering(t, o0, o1, ok, name##_relaxed, name##_int16);                                \
    }
#else
#define TWO_PATHS_IF(ok, name, relaxed, int16) \
    void name(const sac_kernel_task *t, int64_t o0, int64_t o1) { int16; }
#endif
#define TWO_PATHS(name, relaxed, int16) TWO_PATHS_IF(!relaxed_dot_saturating(), name, relaxed, int16)

#ifdef SAC_SIMD128
#define SIMD_ONLY(bytes, small_levels) , bytes, small_levels
#else
#define SIMD_ONLY(bytes, small_levels)
#endif
#define FORMAT_Q8_0 ((quant_format){sizeof(block_q8_0), decode_q8_0, 0, 0 SIMD_ONLY(NULL, 0)})
#define FORMAT_Q4_0 ((quant_format){sizeof(block_q4_0), decode_q4_0, 0, 8 SIMD_ONLY(decode_q4_0_bytes, 1)})
#define FORMAT_Q5_0 ((quant_format){sizeof(block_q5_0), decode_q5_0, 0, 16 SIMD_ONLY(NULL, 1)})
#define FORMAT_Q4_1 ((quant_format){sizeof(block_q4_1), decode_q4_1, 1, 0 SIMD_ONLY(decode_q4_1_bytes, 1)})
#define FORMAT_Q5_1 ((quant_format){sizeof(block_q5_1), decode_q5_1, 1, 0 SIMD_ONLY(NULL, 1)})

void sac_matvec_q8_0(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matvec(t, FORMAT_Q8_0, o0, o1, 0); }
/* (expanded only in the relaxed builds, where decode_q8_0_u8 is) */
#define FORMAT_Q8_0_U8 ((quant_format){sizeof(block_q8_0), decode_q8_0_u8, 0, 128, NULL, 1})
TWO_PATHS_IF(relaxed_dot_unsigned8(), sac_matmat_q8_0, quant_matmat(t, FORMAT_Q8_0_U8, o0, o1),
             quant_matmat(t, FORMAT_Q8_0, o0, o1))
TWO_PATHS(sac_matvec_q4_0, quant_matvec(t, FORMAT_Q4_0, o0, o1, 1), quant_matvec(t, FORMAT_Q4_0, o0, o1, 0))
void sac_matmat_q4_0(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matmat(t, FORMAT_Q4_0, o0, o1); }
void sac_matvec_q5_0(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matvec(t, FORMAT_Q5_0, o0, o1, 0); }
void sac_matmat_q5_0(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matmat(t, FORMAT_Q5_0, o0, o1); }
TWO_PATHS(sac_matvec_q4_1, quant_matvec(t, FORMAT_Q4_1, o0, o1, 1), quant_matvec(t, FORMAT_Q4_1, o0, o1, 0))
void sac_matmat_q4_1(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matmat(t, FORMAT_Q4_1, o0, o1); }
void sac_matvec_q5_1(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matvec(t, FORMAT_Q5_1, o0, o1, 0); }
void sac_matmat_q5_1(const sac_kernel_task *t, int64_t o0, int64_t o1) { quant_matmat(t, FORMAT_Q5_1, o0, o1); }

#ifdef SAC_SIMD128
#define KDOT(name) name,
#else
#define KDOT(name)
#endif
#define FORMAT_Q2_K \
    ((kquant_format){sizeof(block_q2_K), offsetof(block_q2_K, d), offsetof(block_q2_K, dmin), kdecode_q2_K, KDOT(kdot_q2_K) 1, 0})
#define FORMAT_Q3_K \
    ((kquant_format){sizeof(block_q3_K), offsetof(block_q3_K, d), 0, kdecode_q3_K, KDOT(kdot_q3_K) 0, Q3_K_LEVEL_OFFSET})
#define FORMAT_Q4_K \
    ((kquant_format){sizeof(block_q4_K), offsetof(block_q4_K, d), offsetof(block_q4_K, dmin), kdecode_q4_K, KDOT(kdot_q4_K) 1, 0})
#define FORMAT_Q5_K \
    ((kquant_format){sizeof(block_q5_K), offsetof(block_q5_K, d), offsetof(block_q5_K, dmin), kdecode_q5_K, KDOT(kdot_q5_K) 1, 0})
#define FORMAT_Q6_K \
    ((kquant_format){sizeof(block_q6_K), offsetof(block_q6_K, d), 0, kdecode_q6_K, KDOT(kdot_q6_K) 0, Q6_K_LEVEL_OFFSET})

void sac_matvec_q2_K(const sac_kernel_task *t, int64_t o0, int64_t o1) { kquant_matvec(t, FORMAT_Q2_K, Q2_K_WALK, o0, o1); }
TWO_PATHS(sac_matmat_q2_K, kquant_matmat(t, FORMAT_Q2_K, o0, o1, 1), kquant_matmat(t, FORMAT_Q2_K, o0, o1, 0))
void sac_matvec_q3_K(const sac_kernel_task *t, int64_t o0, int64_t o1) { kquant_matvec(t, FORMAT_Q3_K, Q3_K_WALK, o0, o1); }
TWO_PATHS(sac_matmat_q3_K, kquant_matmat(t, FORMAT_Q3_K, o0, o1, 1), kquant_matmat(t, FORMAT_Q3_K, o0, o1, 0))
void sac_matvec_q4_K(const sac_kernel_task *t, int64_t o0, int64_t o1) { kquant_matvec(t, FORMAT_Q4_K, Q4_K_WALK, o0, o1); }
TWO_PATHS(sac_matmat_q4_K, kquant_matmat(t, FORMAT_Q4_K, o0, o1, 1), kquant_matmat(t, FORMAT_Q4_K, o0, o1, 0))
void sac_matvec_q5_K(const sac_kernel_task *t, int64_t o0, int64_t o1) { kquant_matvec(t, FORMAT_Q5_K, Q5_K_WALK, o0, o1); }
TWO_PATHS(sac_matmat_q5_K, kquant_matmat(t, FORMAT_Q5_K, o0, o1, 1), kquant_matmat(t, FORMAT_Q5_K, o0, o1, 0))
void sac_matvec_q6_K(const sac_kernel_task *t, int64_t o0, int64_t o1) { kquant_matvec(t, FORMAT_Q6_K, Q6_K_WALK, o0, o1); }
TWO_PATHS(sac_matmat_q6_K, kquant_matmat(t, FORMAT_Q6_K, o0, o1, 1), kquant_matmat(t, FORMAT_Q6_K, o0, o1, 0))

/* ------------------------------------------------------------------------------------------
 * f32 primitives for attention
 * ---------------------------------------------------------------------------------------- */

float sac_dot_f32(const float *a, const float *b, int64_t n) {
    return float_dot(FORMAT_F32, (const char *)a, (const char *)a, b, n);
}

void sac_axpy_f32(float *y, float a, const float *x, int64_t n) {
    int64_t i = 0;
#ifdef SAC_SIMD128
    v128_t av = wasm_f32x4_splat(a);
    for (; i + 4 <= n; i += 4)
        wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(y + i), wasm_f32x4_mul(av, wasm_v128_load(x + i))));
#endif
    for (; i < n; i++) y[i] = y[i] + a * x[i];
}
