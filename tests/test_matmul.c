/* test_matmul.c — every weight type's matvec and matmat kernels against float64 references
 * written here, over awkward shapes and 1-4 threads; results must not depend on the thread
 * count, and a batch row must come out exactly as the same row multiplied alone.
 *
 * Tolerances (u = 2^-24, the f32 unit roundoff):
 *   - quantized types vs a reference that quantizes the activations the same way (int8 per
 *     32-value block, ggml's rounding) in float64: the per-block integer dots are exact, so
 *     only the f32 scaling and block-by-block summation round: |y - ref| <= (nb + 3) u S,
 *     S = sum over blocks of |d_w d_x isum|;
 *   - quantized types vs the dequantized weights times the unquantized activations: the
 *     above plus the quantization error bound sum_i |w_i| (d/2 + 127 |d - d16|) (d = the
 *     block's amax/127, d16 = d rounded to f16);
 *   - F32/F16: eight lane sums of n/8 terms, folded, plus the leftovers:
 *     |y - ref| <= (n/8 + n%8 + 8) u sum_i |w_i x_i|. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "check.h"
#include "matmul.h"
#include "quants.h"
#include "simd.h"
#include "types.h"

#define U 0x1p-24

static uint32_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)(*s >> 16);
}

static float rng_float(uint64_t *s, float scale) {
    return scale * ((float)(rng_next(s) & 0xFFFFFF) / 8388608.0f - 1.0f);
}

/* ------------------------------------------------------------------------------------------
 * float64 references
 * ---------------------------------------------------------------------------------------- */

static double half_value(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v;
    if (exp == 31) v = mant ? NAN : INFINITY;
    else if (exp == 0) v = ldexp(mant, -24);
    else v = ldexp(1024 + mant, exp - 25);
    return sign ? -v : v;
}

static uint16_t half_of(double x) { /* nearest, ties to even; finite x below 65520 */
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (a < ldexp(1, -14)) return sign | (uint16_t)nearbyint(a * ldexp(1, 24));
    int e;
    frexp(a, &e);
    e -= 1;
    double m = nearbyint(a * ldexp(1, 10 - e));
    if (m == 2048) {
        m = 1024;
        e++;
    }
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(m - 1024);
}

/* Weight (o, i) of a quantized type as ggml's formula has it, d * sc * q - dmin * m + add:
 * the integers q, sc, m and the scales d, dmin, add of the block (sc = 1 and m = 0 for the
 * 32-value formats, whose scale is d; add is Q4_1's and Q5_1's minimum, else 0). */
typedef struct weight_parts {
    int q, sc, m;
    double d, dmin, add;
} weight_parts;

static int has_add(uint32_t type) { return type == SAC_TYPE_Q4_1 || type == SAC_TYPE_Q5_1; }

static int is_k_quant(uint32_t type) {
    return type == SAC_TYPE_Q2_K || type == SAC_TYPE_Q3_K || type == SAC_TYPE_Q4_K || type == SAC_TYPE_Q5_K ||
           type == SAC_TYPE_Q6_K;
}

static int is_quantized(uint32_t type) {
    return type != SAC_TYPE_F32 && type != SAC_TYPE_F16 && type != SAC_TYPE_BF16;
}

/* bfloat16 bits → value, and the nearest bfloat16 (ties to even) of a finite float. */
static double bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double bf16_round(double x) {
    if (x == 0 || isnan(x) || isinf(x)) return x;
    int e;
    frexp(x, &e); /* |x| in [2^(e-1), 2^e): 8 significant bits */
    return ldexp(nearbyint(ldexp(x, 8 - e)), e - 8);
}

/* Values per activation block: Q8_0's 32, or Q8_K's 256 for the K-quants. */
static int64_t act_block(uint32_t type) { return is_k_quant(type) ? 256 : 32; }

static weight_parts parts_of(const sac_matrix *w, int64_t o, int64_t i) {
    weight_parts p = {0, 1, 0, 0, 0, 0};
    int64_t bs = act_block(w->type), nb = w->n_in / bs, blk = o * nb + i / bs;
    int j = (int)(i % bs);
    switch (w->type) {
    case SAC_TYPE_Q8_0: {
        const block_q8_0 *b = (const block_q8_0 *)w->data + blk;
        p.q = b->qs[j];
        p.d = half_value(b->d);
        break;
    }
    case SAC_TYPE_Q4_0: {
        const block_q4_0 *b = (const block_q4_0 *)w->data + blk;
        p.q = (j < 16 ? (b->qs[j] & 15) : (b->qs[j - 16] >> 4)) - 8;
        p.d = half_value(b->d);
        break;
    }
    case SAC_TYPE_Q5_0: {
        const block_q5_0 *b = (const block_q5_0 *)w->data + blk;
        int high = (b->qh[j / 8] >> (j % 8)) & 1;
        p.q = ((j < 16 ? (b->qs[j] & 15) : (b->qs[j - 16] >> 4)) | high << 4) - 16;
        p.d = half_value(b->d);
        break;
    }
    case SAC_TYPE_Q4_1: {
        const block_q4_1 *b = (const block_q4_1 *)w->data + blk;
        p.q = j < 16 ? (b->qs[j] & 15) : (b->qs[j - 16] >> 4);
        p.d = half_value(b->d);
        p.add = half_value(b->m);
        break;
    }
    case SAC_TYPE_Q5_1: {
        const block_q5_1 *b = (const block_q5_1 *)w->data + blk;
        int high = (b->qh[j / 8] >> (j % 8)) & 1;
        p.q = (j < 16 ? (b->qs[j] & 15) : (b->qs[j - 16] >> 4)) | high << 4;
        p.d = half_value(b->d);
        p.add = half_value(b->m);
        break;
    }
    case SAC_TYPE_Q2_K: { /* value 128 h + 32 k + l: bits 2k of qs[32 h + l]; group j/16 */
        const block_q2_K *b = (const block_q2_K *)w->data + blk;
        p.q = (b->qs[32 * (j / 128) + j % 32] >> (2 * ((j % 128) / 32))) & 3;
        p.sc = b->scales[j / 16] & 15;
        p.m = b->scales[j / 16] >> 4;
        p.d = half_value(b->d);
        p.dmin = half_value(b->dmin);
        break;
    }
    case SAC_TYPE_Q3_K: { /* as Q2_K, minus 4 unless bit j/32 of hmask[j % 32]; 6-bit scales - 32 */
        const block_q3_K *b = (const block_q3_K *)w->data + blk;
        int low = (b->qs[32 * (j / 128) + j % 32] >> (2 * ((j % 128) / 32))) & 3;
        p.q = low - ((b->hmask[j % 32] >> (j / 32)) & 1 ? 0 : 4);
        int g = j / 16, lo4 = g < 8 ? b->scales[g] & 15 : b->scales[g - 8] >> 4;
        p.sc = (lo4 | ((b->scales[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
        p.d = half_value(b->d);
        break;
    }
    case SAC_TYPE_Q4_K: /* sub-block j/32; byte 32 * (j / 64) + j % 32, low nibble for the first 32 */
    case SAC_TYPE_Q5_K: { /* the same, and the fifth bit: bit j/32 of qh[j % 32] */
        const block_q4_K *b = (const block_q4_K *)w->data + blk;
        const block_q5_K *b5 = (const block_q5_K *)w->data + blk;
        int sub = j / 32;
        if (w->type == SAC_TYPE_Q5_K) {
            int byte = b5->qs[32 * (j / 64) + j % 32];
            p.q = (sub % 2 ? byte >> 4 : byte & 15) | ((b5->qh[j % 32] >> sub) & 1) << 4;
            p.d = half_value(b5->d);
            p.dmin = half_value(b5->dmin);
        } else {
            int byte = b->qs[32 * (j / 64) + j % 32];
            p.q = sub % 2 ? byte >> 4 : byte & 15;
            p.d = half_value(b->d);
            p.dmin = half_value(b->dmin);
        }
        const uint8_t *sc = w->type == SAC_TYPE_Q5_K ? b5->scales : b->scales;
        if (sub < 4) {
            p.sc = sc[sub] & 63;
            p.m = sc[sub + 4] & 63;
        } else {
            p.sc = (sc[sub + 4] & 15) | (sc[sub - 4] >> 6) << 4;
            p.m = (sc[sub + 4] >> 4) | (sc[sub] >> 6) << 4;
        }
        break;
    }
    case SAC_TYPE_Q6_K: { /* half h = j/128; within it, quarter k = (j % 128) / 32 and l = j % 32 */
        const block_q6_K *b = (const block_q6_K *)w->data + blk;
        int h = j / 128, k = (j % 128) / 32, l = j % 32;
        int ql = b->ql[64 * h + l + (k % 2) * 32];
        int low = k < 2 ? ql & 15 : ql >> 4;
        int high = (b->qh[32 * h + l] >> (2 * k)) & 3;
        p.q = (low | high << 4) - 32;
        p.sc = b->scales[j / 16];
        p.d = half_value(b->d);
        break;
    }
    }
    return p;
}

/* Weight (o, i) as the format defines it. */
static double weight_ref(const sac_matrix *w, int64_t o, int64_t i) {
    switch (w->type) {
    case SAC_TYPE_F32: return ((const float *)w->data)[o * w->n_in + i];
    case SAC_TYPE_F16: return half_value(((const uint16_t *)w->data)[o * w->n_in + i]);
    case SAC_TYPE_BF16: return bf16_value(((const uint16_t *)w->data)[o * w->n_in + i]);
    }
    weight_parts p = parts_of(w, o, i);
    return p.d * p.sc * p.q - p.dmin * p.m + p.add;
}

/* ggml's activation quantization (d = amax/127 in f32, q = round(x * f32(1/d)) to nearest,
 * ties to even as its x86 and Arm builds round, scale d rounded to f16), each f32 operation
 * done in double and rounded; for Q8_1 (s16 not NULL) also s = f16(f32(sum(q) d)). */
static void quantize_ref(const float *x, int64_t n, int *q, double *d16, double *s16) {
    for (int64_t blk = 0; blk < n / 32; blk++) {
        double amax = 0;
        for (int j = 0; j < 32; j++) amax = fmax(amax, fabs(x[blk * 32 + j]));
        float d = (float)(amax / 127.0);
        float id = d != 0 ? (float)(1.0 / d) : 0.0f;
        d16[blk] = half_value(half_of(d));
        for (int j = 0; j < 32; j++) {
            q[blk * 32 + j] = (int)nearbyint((float)((double)x[blk * 32 + j] * id));
        }
        if (s16) {
            long sum = 0;
            for (int j = 0; j < 32; j++) sum += q[blk * 32 + j];
            s16[blk] = half_value(half_of((float)((double)sum * d)));
        }
    }
}

/* ggml's Q8_K activations: the value of largest magnitude (the first) maps to -127,
 * iscale = f32(-127/max), q = min(127, round(f32(iscale x))) ties to even, d = f32(1/iscale). */
static void quantize_ref_k(const float *x, int64_t n, int *q, double *d) {
    for (int64_t blk = 0; blk < n / 256; blk++) {
        double amax = 0, max = 0;
        for (int j = 0; j < 256; j++)
            if (fabs(x[blk * 256 + j]) > amax) {
                amax = fabs(x[blk * 256 + j]);
                max = x[blk * 256 + j];
            }
        if (amax == 0) {
            d[blk] = 0;
            for (int j = 0; j < 256; j++) q[blk * 256 + j] = 0;
            continue;
        }
        float iscale = (float)(-127.0 / max);
        d[blk] = (float)(1.0 / iscale);
        for (int j = 0; j < 256; j++) {
            double r = nearbyint((float)((double)iscale * x[blk * 256 + j]));
            q[blk * 256 + j] = r > 127 ? 127 : (int)r;
        }
    }
}

typedef struct expected {
    double value;
    double tol;       /* against the reference computed the way the kernel is specified */
    double value_fp;  /* quantized types: with unquantized activations */
    double tol_fp;
} expected;

/* y[b][o] references, see the tolerances at the top. */
static void reference(const sac_matrix *w, const float *x, int64_t n_batch, expected *out) {
    int64_t n = w->n_in, bs = act_block(w->type), nb = n / bs;
    int quantized = is_quantized(w->type);
    int *q = malloc(sizeof(int) * (size_t)(n ? n : 1));
    double *dx = malloc(sizeof(double) * (size_t)(nb + 1)), *sx = malloc(sizeof(double) * (size_t)(nb + 1));
    double *wrow = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t b = 0; b < n_batch; b++) {
        const float *xb = x + b * n;
        if (quantized && is_k_quant(w->type)) quantize_ref_k(xb, n, q, dx);
        else if (quantized) quantize_ref(xb, n, q, dx, has_add(w->type) ? sx : NULL);
        for (int64_t o = 0; o < w->n_out; o++) {
            expected *e = &out[b * w->n_out + o];
            for (int64_t i = 0; i < n; i++) wrow[i] = weight_ref(w, o, i);
            double fp = 0, fp_abs = 0;
            for (int64_t i = 0; i < n; i++) {
                fp += wrow[i] * xb[i];
                fp_abs += fabs(wrow[i] * xb[i]);
            }
            if (!quantized && w->type == SAC_TYPE_BF16) { /* activations rounded to bf16 */
                double v = 0, v_abs = 0, rerr = 0;
                for (int64_t i = 0; i < n; i++) {
                    double xr = bf16_round(xb[i]);
                    v += wrow[i] * xr;
                    v_abs += fabs(wrow[i] * xr);
                    rerr += fabs(wrow[i]) * fabs(xb[i] - xr);
                }
                e->value = v;
                e->tol = (double)(n / 8 + n % 8 + 8) * U * v_abs + 1e-30;
                e->value_fp = fp;
                e->tol_fp = e->tol + rerr * (1 + 1e-9);
                continue;
            }
            if (!quantized) {
                e->value = e->value_fp = fp;
                e->tol = e->tol_fp = (double)(n / 8 + n % 8 + 8) * U * fp_abs + 1e-30;
                continue;
            }
            /* per activation block: dx (d isum - dmin msum) + add s, isum = sum sc q qx,
             * msum = sum m qx, s the Q8_1 block sum */
            double sum = 0, sum_abs = 0, qerr = 0;
            for (int64_t blk = 0; blk < nb; blk++) {
                long long isum = 0, msum = 0;
                double xsum = 0;
                weight_parts p = parts_of(w, o, blk * bs);
                for (int64_t j = 0; j < bs; j++) {
                    weight_parts pj = parts_of(w, o, blk * bs + j);
                    isum += (long long)pj.sc * pj.q * q[blk * bs + j];
                    msum += (long long)pj.m * q[blk * bs + j];
                    xsum += xb[blk * bs + j];
                    /* the activation's quantization error, weighted: bounds the fp difference */
                    qerr += fabs(wrow[blk * bs + j] - p.add) * fabs((double)xb[blk * bs + j] - dx[blk] * q[blk * bs + j]);
                }
                double t1 = dx[blk] * p.d * (double)isum, t2 = dx[blk] * p.dmin * (double)msum, t3 = 0;
                if (has_add(w->type)) {
                    t3 = p.add * sx[blk];
                    qerr += fabs(p.add) * fabs(xsum - sx[blk]);
                }
                sum += t1 - t2 + t3;
                sum_abs += fabs(t1) + fabs(t2) + fabs(t3);
            }
            e->value = sum;
            /* per block: the int → f32 conversions, the scale products and the sums */
            e->tol = (double)(is_k_quant(w->type) || has_add(w->type) ? 2 * nb + 6 : nb + 3) * U * sum_abs + 1e-30;
            e->value_fp = fp;
            e->tol_fp = e->tol + qerr * (1 + 1e-9) + 1e-30;
        }
    }
    free(q);
    free(dx);
    free(sx);
    free(wrow);
}

/* ------------------------------------------------------------------------------------------
 * Test data
 * ---------------------------------------------------------------------------------------- */

/* The bytes of an n_out × n_in matrix of the given type. */
static size_t weight_bytes(uint32_t type, int64_t n_in, int64_t n_out) {
    size_t row_bytes = 0;
    CHECK(sac_type_row_bytes(type, n_in, &row_bytes));
    return row_bytes * (size_t)n_out;
}

/* When set, Q8_0 weights get any byte as a value, -128 (which no quantizer writes, but a file
 * may hold) and 127 in every block: the relaxed builds' matmat takes them + 128 as unsigned
 * bytes (kernels.c's FORMAT_Q8_0_U8). */
static int q8_0_any_byte;

/* Random weights in the given type (quantized via the library's own quantizer, whose bytes
 * test_types checks against ggml's rules). */
static void *make_weights(uint32_t type, int64_t n_in, int64_t n_out, uint64_t *s) {
    const sac_type_traits *tr = sac_type_traits_get(type);
    float *f = malloc(sizeof(float) * (size_t)(n_in * n_out));
    void *data = malloc(weight_bytes(type, n_in, n_out));
    for (int64_t i = 0; i < n_in * n_out; i++) {
        f[i] = rng_float(s, 1.0f);
        if (rng_next(s) % 97 == 0) f[i] *= 8; /* some outliers, to vary block scales */
    }
    tr->from_float(f, data, n_in * n_out);
    free(f);
    if (q8_0_any_byte && type == SAC_TYPE_Q8_0)
        for (int64_t k = 0; k < n_in * n_out / SAC_QK; k++) {
            block_q8_0 *b = (block_q8_0 *)data + k;
            for (int j = 0; j < SAC_QK; j++) b->qs[j] = (int8_t)(uint8_t)rng_next(s);
            b->qs[k % SAC_QK] = -128;
            b->qs[(k + 7) % SAC_QK] = 127;
        }
    return data;
}

static float *make_activations(int64_t n, uint64_t *s) {
    float *x = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) x[i] = rng_float(s, 2.0f);
    /* a zero block and a tiny one, where present */
    if (n >= 96) {
        for (int j = 32; j < 64; j++) x[j] = 0.0f;
        for (int j = 64; j < 96; j++) x[j] *= 1e-5f;
    }
    return x;
}

/* FNV-1a over the bytes of every result: the same in every build whose kernels compute the
 * same bits (the plain-C and SIMD128 paths are designed to), printed for comparison. */
static uint64_t results_hash = 0xCBF29CE484222325ull;

static void hash_results(const float *y, int64_t n) {
    const unsigned char *p = (const unsigned char *)y;
    for (size_t i = 0; i < (size_t)n * sizeof(float); i++) results_hash = (results_hash ^ p[i]) * 0x100000001B3ull;
}

static sac_pool *pools[5]; /* pools[k] has k threads; pools[0] is NULL (run inline) */

static float *run_matmul(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch) {
    size_t work_size = sac_matmul_work_size(w, n_batch);
    void *work = work_size ? malloc(work_size) : NULL;
    float *y = malloc(sizeof(float) * (size_t)(n_batch * w->n_out));
    for (int64_t i = 0; i < n_batch * w->n_out; i++) y[i] = NAN; /* every value must be written */
    sac_matmul(pool, w, x, n_batch, y, work);
    free(work);
    return y;
}

/* One shape: all thread counts and both references, plus matvec row by row. With big != 0,
 * two activations of each row are ±big and big/2. */
/* y = w's matvec (with `read_ahead`) or, with `matmat`, its matmat kernel, called directly on
 * the one activation row x for every output row, as sac_matmul would hand them to one thread.
 * 0 when the shape has no row size (nothing run). */
static int run_one_row_kernel(const sac_matrix *w, const float *x, int matmat, int read_ahead, float *y) {
    const sac_type_traits *tr = sac_type_traits_get(w->type), *act = sac_type_vec_dot_traits(tr);
    size_t row_bytes = 0;
    if (!sac_type_row_bytes(w->type, w->n_in, &row_bytes)) return 0;
    void *work = malloc(sac_matmul_work_size(w, 1) + 1);
    if (act->quantize_activations) act->quantize_activations(x, w->n_in, 1, 0, 1, work);
    sac_kernel_task t = {.w = w->data, .row_bytes = row_bytes, .n_in = w->n_in, .n_out = w->n_out, .n_batch = 1,
                         .x = x, .act = act->quantize_activations ? work : NULL, .y = y, .finite = w->finite,
                         .read_ahead = read_ahead};
    (matmat ? tr->matmat : tr->matvec)(&t, 0, w->n_out);
    free(work);
    return 1;
}

/* The matvec kernel itself with the read-ahead on and off (sac_matmul picks one by timing both
 * ways, sac_kernel_task.read_ahead): both give sac_matmul's bits, `want`. */
static void check_read_ahead_ways(const sac_matrix *w, const float *x, const float *want) {
    if (!sac_type_traits_get(w->type)->matvec_reads_ahead || w->n_in <= 0) return;
    float *y = malloc(sizeof(float) * (size_t)w->n_out);
    for (int way = 0; way <= 1; way++)
        if (run_one_row_kernel(w, x, 0, way, y))
            CHECK_MSG(!memcmp(y, want, sizeof(float) * (size_t)w->n_out), "%s n_in=%lld n_out=%lld: read-ahead %s differs",
                      sac_type_name(w->type), (long long)w->n_in, (long long)w->n_out, way ? "on" : "off");
    free(y);
}

/* The type's matmat kernel given one row gives the matvec's bits, as kernels.c promises
 * (sac_matmul itself gives one row to the matvec; the wasm quantized matmat then has no grouped
 * activations and takes a path of its own). */
static void check_one_row_matmat(const sac_matrix *w, const float *x, const float *want) {
    if (w->n_in <= 0 || w->n_out <= 0) return;
    float *y = malloc(sizeof(float) * (size_t)w->n_out);
    if (run_one_row_kernel(w, x, 1, 0, y))
        CHECK_MSG(!memcmp(y, want, sizeof(float) * (size_t)w->n_out), "%s n_in=%lld n_out=%lld: a one-row matmat differs from the matvec",
                  sac_type_name(w->type), (long long)w->n_in, (long long)w->n_out);
    free(y);
}

static void check_shape_big(uint32_t type, int64_t n_in, int64_t n_out, int64_t n_batch, uint64_t seed, float big) {
    uint64_t s = seed;
    sac_matrix w = {type, n_in, n_out, make_weights(type, n_in, n_out, &s), 0};
    float *x = make_activations(n_in * n_batch, &s);
    for (int64_t b = 0; big != 0 && n_in > 0 && b < n_batch; b++) {
        x[b * n_in + (7 * b + 3) % n_in] = b % 2 ? -big : big;
        x[b * n_in + (5 * b + 11) % n_in] = big / 2;
    }
    expected *e = malloc(sizeof(expected) * (size_t)(n_batch * n_out));
    reference(&w, x, n_batch, e);

    float *y1 = run_matmul(pools[1], &w, x, n_batch);
    int bad = 0, bad_fp = 0;
    for (int64_t k = 0; k < n_batch * n_out; k++) {
        if (!(fabs(y1[k] - e[k].value) <= e[k].tol) && bad++ < 3)
            CHECK_MSG(0, "%s n_in=%lld n_out=%lld n_batch=%lld y[%lld] = %.9g, ref %.9g, tol %.3g",
                      sac_type_name(type), (long long)n_in, (long long)n_out, (long long)n_batch,
                      (long long)k, y1[k], e[k].value, e[k].tol);
        if (!(fabs(y1[k] - e[k].value_fp) <= e[k].tol_fp) && bad_fp++ < 3)
            CHECK_MSG(0, "%s n_in=%lld: y[%lld] = %.9g, unquantized ref %.9g, tol %.3g",
                      sac_type_name(type), (long long)n_in, (long long)k, y1[k], e[k].value_fp, e[k].tol_fp);
    }
    CHECK(bad == 0 && bad_fp == 0);
    hash_results(y1, n_batch * n_out);
    if (n_batch == 1) {
        check_read_ahead_ways(&w, x, y1);
        check_one_row_matmat(&w, x, y1);
    }

    /* bitwise the same for any thread count (and with no pool) */
    for (int nt = 0; nt <= 4; nt++) {
        if (nt == 1) continue;
        float *yt = run_matmul(pools[nt], &w, x, n_batch);
        CHECK_MSG(!memcmp(yt, y1, sizeof(float) * (size_t)(n_batch * n_out)),
                  "%s n_in=%lld n_out=%lld n_batch=%lld: %d threads differ from 1", sac_type_name(type),
                  (long long)n_in, (long long)n_out, (long long)n_batch, nt);
        free(yt);
    }

    /* weights declared finite (as a loaded model's are) take the kernels' unwatched
     * conversions (make_weights writes no inf or NaN): the same bits */
    w.finite = 1;
    float *yf = run_matmul(pools[2], &w, x, n_batch);
    CHECK_MSG(!memcmp(yf, y1, sizeof(float) * (size_t)(n_batch * n_out)),
              "%s n_in=%lld n_out=%lld n_batch=%lld: finite weights differ", sac_type_name(type), (long long)n_in,
              (long long)n_out, (long long)n_batch);
    free(yf);
    w.finite = 0;

    /* each batch row alone (the matvec kernel) gives the same bits as within the batch */
    if (n_batch > 1) {
        int differ = 0;
        for (int64_t b = 0; b < n_batch; b++) {
            float *yb = run_matmul(pools[2], &w, x + b * n_in, 1);
            differ += memcmp(yb, y1 + b * n_out, sizeof(float) * (size_t)n_out) != 0;
            free(yb);
        }
        CHECK_MSG(differ == 0, "%s n_in=%lld n_out=%lld n_batch=%lld: %d rows differ from matvec",
                  sac_type_name(type), (long long)n_in, (long long)n_out, (long long)n_batch, differ);
    }
    free(y1);
    free(e);
    free(x);
    free((void *)w.data);
}

static void check_shape(uint32_t type, int64_t n_in, int64_t n_out, int64_t n_batch, uint64_t seed) {
    check_shape_big(type, n_in, n_out, n_batch, seed, 0.0f);
}

static void check_type(uint32_t type) {
    int64_t k = is_k_quant(type) ? 8 : 1; /* K-quant rows are whole 256-value blocks */
    const int64_t n_ins[] = {32 * k, 64 * k, 96 * k, 4096};
    const int64_t n_outs[] = {1, 5, 13, 67};
    const int64_t n_batches[] = {1, 2, 3, 4, 5, 7, 8, 17};
    uint64_t seed = 1;
    for (size_t a = 0; a < 4; a++)
        for (size_t c = 0; c < 4; c++)
            for (size_t d = 0; d < 8; d++) {
                if (n_ins[a] == 4096 && (n_outs[c] == 67 || n_batches[d] == 7)) continue; /* time */
                check_shape(type, n_ins[a], n_outs[c], n_batches[d], seed++ * 0x9E3779B97F4A7C15ull);
            }
    if (is_k_quant(type)) /* rows of 19 blocks: the wasm matvec dots 16 of a row's blocks at a time */
        for (int64_t n_batch = 1; n_batch <= 2; n_batch++) check_shape(type, 19 * 256, 13, n_batch, seed++ * 0x9E3779B97F4A7C15ull);
}

static void test_f32(void) { check_type(SAC_TYPE_F32); }
static void test_f16(void) { check_type(SAC_TYPE_F16); }
static void test_q8_0(void) {
    check_type(SAC_TYPE_Q8_0);
    q8_0_any_byte = 1;
    const int64_t n_batches[] = {1, 2, 7, 17};
    for (int d = 0; d < 4; d++) {
        check_shape(SAC_TYPE_Q8_0, 96, 67, n_batches[d], 501 + d);
        check_shape(SAC_TYPE_Q8_0, 4096, 13, n_batches[d], 601 + d);
    }
    q8_0_any_byte = 0;
}
static void test_q4_0(void) { check_type(SAC_TYPE_Q4_0); }
static void test_q5_0(void) { check_type(SAC_TYPE_Q5_0); }
static void test_bf16(void) { check_type(SAC_TYPE_BF16); }
static void test_q4_1(void) { check_type(SAC_TYPE_Q4_1); }
static void test_q5_1(void) { check_type(SAC_TYPE_Q5_1); }
static void test_q2_K(void) { check_type(SAC_TYPE_Q2_K); }
static void test_q3_K(void) { check_type(SAC_TYPE_Q3_K); }
static void test_q4_K(void) { check_type(SAC_TYPE_Q4_K); }
static void test_q5_K(void) { check_type(SAC_TYPE_Q5_K); }
static void test_q6_K(void) { check_type(SAC_TYPE_Q6_K); }

/* Float weights allow any row length: leftovers after the last group of eight. */
static void test_float_odd_lengths(void) {
    const int64_t n_ins[] = {0, 1, 7, 13, 100, 257, 8203}; /* 8203: F16 rows too long to convert whole */
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_F16, SAC_TYPE_BF16};
    for (int t = 0; t < 3; t++)
        for (size_t a = 0; a < sizeof n_ins / sizeof n_ins[0]; a++)
            for (int64_t n_batch = 1; n_batch <= 6; n_batch += 5)
                check_shape(types[t], n_ins[a], 9, n_batch, 77 + a);
}

/* Large activations: the wasm F16 matvec scales the activations by 2^112 (and the weights'
 * conversion drops that factor) while every |x| < 2^16, and below it uses the plain
 * conversion; either way the same bits. 65535.996 is the largest float below 2^16. */
static void test_float_large_activations(void) {
    const float bigs[] = {65535.996f, 65536.0f, 1e30f};
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_F16, SAC_TYPE_BF16};
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 3; k++)
            for (int64_t n_batch = 1; n_batch <= 5; n_batch += 4) check_shape_big(types[t], 100, 13, n_batch, 91 + k, bigs[k]);
}

/* For the every-half tests: w has 65536 rows and x makes y[b][o] exactly factor × half o
 * (inf and NaN included; 0 in a matrix declared finite, whose rows for them hold zeros),
 * through matvec (1 row of x) and matmat (4 rows). */
static void check_every_half(const sac_matrix *w, const float *x, double factor) {
    for (int64_t n_batch = 1; n_batch <= 4; n_batch += 3) {
        float *y = run_matmul(pools[2], w, x, n_batch);
        int bad = 0;
        for (int64_t b = 0; b < n_batch; b++)
            for (int64_t o = 0; o < w->n_out; o++) {
                double want = w->finite && (o & 0x7C00) == 0x7C00 ? 0.0 : factor * half_value((uint16_t)o);
                double got = y[b * w->n_out + o];
                int ok = isnan(want) ? isnan(got) : got == want;
                if (!ok && bad++ < 3)
                    CHECK_MSG(0, "%s n_batch=%lld half 0x%04x: got %.9g want %.9g", sac_type_name(w->type),
                              (long long)n_batch, (unsigned)o, got, want);
            }
        CHECK(bad == 0);
        free(y);
    }
}

/* Every half through the F16 kernels: row o holds half o at column o % 16 and zeros
 * elsewhere, x = 1, so y[o] is exactly the value of half o (inf and NaN included). In a
 * matrix declared finite (the wasm matvec then skips its watch for inf and NaN) the rows of
 * inf and NaN hold zeros. */
static void check_f16_every_half(int finite) {
    const int64_t n_in = 16, n_out = 65536;
    uint16_t *h = calloc((size_t)(n_in * n_out), sizeof *h);
    float x[4 * 16];
    for (int i = 0; i < 4 * 16; i++) x[i] = 1.0f;
    for (int64_t o = 0; o < n_out; o++)
        if (!finite || (o & 0x7C00) != 0x7C00) h[o * n_in + o % n_in] = (uint16_t)o;
    sac_matrix w = {SAC_TYPE_F16, n_in, n_out, h, finite};
    check_every_half(&w, x, 1.0);
    free(h);
}

static void test_f16_every_half(void) { check_f16_every_half(0); }
static void test_f16_every_finite_half(void) { check_f16_every_half(1); }

/* Every bfloat16 through the BF16 kernels, as test_f16_every_half does it (x = 1 is exact
 * in bf16). */
static void test_bf16_every_value(void) {
    const int64_t n_in = 16, n_out = 65536;
    uint16_t *h = calloc((size_t)(n_in * n_out), sizeof *h);
    float x[4 * 16];
    for (int i = 0; i < 4 * 16; i++) x[i] = 1.0f;
    for (int64_t o = 0; o < n_out; o++) h[o * n_in + o % n_in] = (uint16_t)o;
    sac_matrix w = {SAC_TYPE_BF16, n_in, n_out, h, 0};
    for (int64_t n_batch = 1; n_batch <= 4; n_batch += 3) {
        float *y = run_matmul(pools[2], &w, x, n_batch);
        int bad = 0;
        for (int64_t b = 0; b < n_batch; b++)
            for (int64_t o = 0; o < n_out; o++) {
                double want = bf16_value((uint16_t)o), got = y[b * n_out + o];
                if (!(isnan(want) ? isnan(got) : got == want) && bad++ < 3)
                    CHECK_MSG(0, "n_batch=%lld bf16 0x%04x: got %.9g want %.9g", (long long)n_batch, (unsigned)o, got, want);
            }
        CHECK(bad == 0);
        free(y);
    }
    free(h);
}

/* inf and NaN in F16 rows longer than the matmat kernel converts ahead (8192): those rows go
 * through the SIMD matmat's own conversion, which must also redo a step exactly. Rows of ones
 * with one special value; x = 1. */
static void test_f16_specials_long_rows(void) {
    const int64_t n_in = 8200, n_out = 8;
    const uint16_t special[8] = {0x3C00, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x7C01, 0x3C00, 0xFE00};
    uint16_t *h = malloc(sizeof *h * (size_t)(n_in * n_out));
    float *x = malloc(sizeof *x * (size_t)(n_in * 4));
    for (int64_t i = 0; i < n_in * n_out; i++) h[i] = 0x3C00;
    for (int64_t o = 0; o < n_out; o++) h[o * n_in + 37 * o + 5] = special[o];
    for (int64_t i = 0; i < n_in * 4; i++) x[i] = 1.0f;
    sac_matrix w = {SAC_TYPE_F16, n_in, n_out, h, 0};
    for (int64_t n_batch = 1; n_batch <= 4; n_batch += 3) {
        float *y = run_matmul(pools[2], &w, x, n_batch);
        for (int64_t b = 0; b < n_batch; b++)
            for (int64_t o = 0; o < n_out; o++) {
                double want = (double)(n_in - 1) + half_value(special[o]), got = y[b * n_out + o];
                CHECK_MSG(isnan(want) ? isnan(got) : got == want, "n_batch=%lld row %lld: got %.9g want %.9g",
                          (long long)n_batch, (long long)o, got, want);
            }
        free(y);
    }
    free(x);
    free(h);
}

/* Every half as a quantized block scale: row o has weight 1 at column 0 under scale half o
 * (the row's other blocks are zero), and x = 127 quantizes to q = 127 with d = 1, so y[o] is
 * exactly 127 × half o — inf and NaN included, which the kernels' fast scale conversion
 * hands over to the exact one. Four rows share each matvec step, so a special scale sits
 * beside ordinary ones. */
static void test_quant_every_scale(void) {
    const int64_t n_in = 64, n_out = 65536, nb = n_in / 32;
    float x[4 * 64];
    for (int i = 0; i < 4 * 64; i++) x[i] = 127.0f;
    /* Q4_1 and Q5_1 twice: d every half (m 0), then m every half (d 1, levels 0), where
     * y = m × s = m × 32 × 127 (Q8_1's block sum) */
    const uint32_t types[] = {SAC_TYPE_Q8_0, SAC_TYPE_Q4_0, SAC_TYPE_Q5_0, SAC_TYPE_Q4_1,
                              SAC_TYPE_Q5_1, SAC_TYPE_Q4_1, SAC_TYPE_Q5_1};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        uint32_t type = types[t];
        int min_pass = t >= 5;
        void *data = NULL;
        if (type == SAC_TYPE_Q4_1) {
            block_q4_1 *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    b[o * nb + k].d = k == 0 && !min_pass ? (uint16_t)o : 0x3C00;
                    b[o * nb + k].m = k == 0 && min_pass ? (uint16_t)o : 0;
                    if (k == 0 && !min_pass) b[o * nb].qs[0] = 0x01; /* level 1 at column 0 */
                }
            data = b;
        } else if (type == SAC_TYPE_Q5_1) {
            block_q5_1 *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    b[o * nb + k].d = k == 0 && !min_pass ? (uint16_t)o : 0x3C00;
                    b[o * nb + k].m = k == 0 && min_pass ? (uint16_t)o : 0;
                    if (k == 0 && !min_pass) b[o * nb].qh[0] = 0x01; /* level 16 at column 0 */
                }
            data = b;
        } else if (type == SAC_TYPE_Q4_0) {
            block_q4_0 *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    b[o * nb + k].d = k == 0 ? (uint16_t)o : 0x3C00;
                    memset(b[o * nb + k].qs, 0x88, sizeof b[0].qs); /* nibbles of 8: weight 0 */
                    if (k == 0) b[o * nb].qs[0] = 0x89;             /* weight 1 at column 0 */
                }
            data = b;
        } else if (type == SAC_TYPE_Q5_0) {
            block_q5_0 *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    b[o * nb + k].d = k == 0 ? (uint16_t)o : 0x3C00;
                    memset(b[o * nb + k].qh, 0xFF, sizeof b[0].qh); /* levels of 16: weight 0 */
                    if (k == 0) b[o * nb].qs[0] = 0x01;             /* 17: weight 1 at column 0 */
                }
            data = b;
        } else {
            block_q8_0 *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++) {
                for (int64_t k = 0; k < nb; k++) b[o * nb + k].d = k == 0 ? (uint16_t)o : 0x3C00;
                b[o * nb].qs[0] = 1;
            }
            data = b;
        }
        sac_matrix w = {type, n_in, n_out, data, 0};
        check_every_half(&w, x, min_pass ? 32.0 * 127.0 : type == SAC_TYPE_Q5_1 ? 16.0 * 127.0 : 127.0);
        free(data);
    }
}

/* Every half as a K-quant super-block scale d, and as Q4_K's dmin: x = 127 quantizes (Q8_K)
 * to q = -127 with d_x = -1. Q6_K and Q4_K rows hold weight d (sc 1, level 1) at column 0,
 * so y = 127 d; the Q4_K rows with dmin = half o, m = 1 on sub-block 0 and every level and
 * scale 0 hold -dmin at columns 0-31, so y = -32 · 127 · dmin; the Q5_K rows hold level 16
 * (its fifth bit) at column 0, so y = 16 · 127 d; Q3_K and Q2_K hold d (scale 1, level 1) at
 * column 0, and Q2_K's dmin pass -dmin on group 0 (16 values). The row's other block is
 * ordinary (d = 1, scales 0). */
static void test_k_quant_every_scale(void) {
    const int64_t n_in = 512, n_out = 65536, nb = n_in / 256;
    float *x = malloc(sizeof(float) * 4 * (size_t)n_in);
    for (int i = 0; i < 4 * n_in; i++) x[i] = 127.0f;
    for (int pass = 0; pass < 7; pass++) {
        const uint32_t pass_types[] = {SAC_TYPE_Q6_K, SAC_TYPE_Q4_K, SAC_TYPE_Q4_K, SAC_TYPE_Q5_K,
                                       SAC_TYPE_Q3_K, SAC_TYPE_Q2_K, SAC_TYPE_Q2_K};
        uint32_t type = pass_types[pass];
        void *data;
        if (type == SAC_TYPE_Q6_K) {
            block_q6_K *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    block_q6_K *blk = &b[o * nb + k];
                    blk->d = k == 0 ? (uint16_t)o : 0x3C00;
                    memset(blk->qh, 0xAA, sizeof blk->qh); /* high bits 2: level 32, weight 0 */
                    if (k == 0) {
                        blk->ql[0] = 1; /* level 33 at column 0 */
                        blk->scales[0] = 1;
                    }
                }
            data = b;
        } else if (type == SAC_TYPE_Q3_K) { /* group 0's scale 33 - 32 = 1, the others 0; level 1 at column 0 */
            block_q3_K *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    block_q3_K *blk = &b[o * nb + k];
                    blk->d = k == 0 ? (uint16_t)o : 0x3C00;
                    memset(blk->hmask, 0xFF, sizeof blk->hmask); /* no -4: levels 0 */
                    memset(blk->scales + 8, 0xAA, 4);           /* high bits 2: scales 32 */
                    if (k == 0) {
                        blk->scales[0] = 1;
                        blk->qs[0] = 1;
                    }
                }
            data = b;
        } else if (type == SAC_TYPE_Q2_K) { /* pass 5: d, sc 1 and level 1 at column 0; pass 6: dmin, m 1 on group 0 */
            block_q2_K *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    block_q2_K *blk = &b[o * nb + k];
                    blk->d = pass == 5 && k == 0 ? (uint16_t)o : 0x3C00;
                    blk->dmin = pass == 6 && k == 0 ? (uint16_t)o : 0x3C00;
                    if (k == 0) blk->scales[0] = pass == 5 ? 0x01 : 0x10;
                    if (k == 0 && pass == 5) blk->qs[0] = 1;
                }
            data = b;
        } else if (type == SAC_TYPE_Q5_K) { /* d every half: level 16 (the fifth bit) at column 0, sc 1 */
            block_q5_K *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    block_q5_K *blk = &b[o * nb + k];
                    blk->d = k == 0 ? (uint16_t)o : 0x3C00;
                    blk->dmin = 0x3C00;
                    if (k == 0) {
                        blk->scales[0] = 1;
                        blk->qh[0] = 1;
                    }
                }
            data = b;
        } else {
            block_q4_K *b = calloc((size_t)(n_out * nb), sizeof *b);
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t k = 0; k < nb; k++) {
                    block_q4_K *blk = &b[o * nb + k];
                    blk->d = pass == 1 && k == 0 ? (uint16_t)o : 0x3C00;
                    blk->dmin = pass == 2 && k == 0 ? (uint16_t)o : 0x3C00;
                    if (k == 0 && pass == 1) {
                        blk->scales[0] = 1; /* sub-block 0: sc 1, m 0 */
                        blk->qs[0] = 1;     /* level 1 at column 0 */
                    }
                    if (k == 0 && pass == 2) blk->scales[4] = 1; /* sub-block 0: sc 0, m 1 */
                }
            data = b;
        }
        sac_matrix w = {type, n_in, n_out, data, 0};
        const double factors[] = {127.0, 127.0, -32.0 * 127.0, 16.0 * 127.0, 127.0, 127.0, -16.0 * 127.0};
        check_every_half(&w, x, factors[pass]);
        free(data);
    }
    free(x);
}

/* The K-quants at their largest levels and scales (every bit set, d = dmin = 1) against
 * activations at the extreme of Q8_K (x = 127: q = -127): the wasm matvec narrows dots of
 * 16 or 32 levels to int16 before scaling them, so these must fit exactly (Q5_K: 8 products
 * of 31 · 127 per lane, Q6_K: 4 of 63 · 127). The sums are integers below 2^24, so y is
 * exactly the dequantized row's sum times 127, through the four-row step (rows 0-3), the
 * one-row path (row 4) and matmat. */
static void test_k_quant_extreme_levels(void) {
    const int64_t n_in = 512, n_out = 5, nb = n_in / 256;
    const uint32_t types[] = {SAC_TYPE_Q2_K, SAC_TYPE_Q3_K, SAC_TYPE_Q4_K, SAC_TYPE_Q5_K, SAC_TYPE_Q6_K};
    float *x = malloc(sizeof(float) * 5 * (size_t)n_in), *row = malloc(sizeof(float) * (size_t)n_in);
    for (int i = 0; i < 5 * n_in; i++) x[i] = 127.0f;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        uint32_t type = types[t];
        size_t bytes = weight_bytes(type, n_in, n_out);
        char *data = malloc(bytes);
        memset(data, 0xFF, bytes);
        for (int64_t k = 0; k < n_out * nb; k++) {
            if (type == SAC_TYPE_Q2_K) ((block_q2_K *)data)[k].d = ((block_q2_K *)data)[k].dmin = 0x3C00;
            if (type == SAC_TYPE_Q3_K) ((block_q3_K *)data)[k].d = 0x3C00;
            if (type == SAC_TYPE_Q4_K) ((block_q4_K *)data)[k].d = ((block_q4_K *)data)[k].dmin = 0x3C00;
            if (type == SAC_TYPE_Q5_K) ((block_q5_K *)data)[k].d = ((block_q5_K *)data)[k].dmin = 0x3C00;
            if (type == SAC_TYPE_Q6_K) ((block_q6_K *)data)[k].d = 0x3C00;
        }
        sac_matrix w = {type, n_in, n_out, data, 0};
        sac_type_traits_get(type)->to_float(data, row, n_in); /* every row is the same */
        double want = 0;
        for (int64_t i = 0; i < n_in; i++) want += (double)row[i] * 127.0;
        for (int64_t n_batch = 1; n_batch <= 5; n_batch += n_batch == 1 ? 3 : 1) {
            float *y = run_matmul(pools[2], &w, x, n_batch);
            for (int64_t i = 0; i < n_batch * n_out; i++)
                CHECK_MSG(y[i] == (float)want, "%s n_batch=%lld y[%lld] = %.9g, want %.9g", sac_type_name(type),
                          (long long)n_batch, (long long)i, y[i], want);
            hash_results(y, n_batch * n_out);
            free(y);
        }
        free(data);
    }
    free(row);
    free(x);
}

/* The Q8_K activation quantizer, observed exactly: Q6_K rows that pick one input each (d 1,
 * sc 1, level 1) make y[o] = f32(d_x q_x[o]); ties go to even (ggml's nearest_int), unlike
 * Q8_0's. */
static void test_activation_quantization_exact_k(void) {
    const int64_t n_in = 512, n_batch_max = 5, nb = n_in / 256;
    block_q6_K *blocks = calloc((size_t)(n_in * nb), sizeof *blocks);
    for (int64_t o = 0; o < n_in; o++) {
        for (int64_t k = 0; k < nb; k++) {
            block_q6_K *blk = &blocks[o * nb + k];
            blk->d = 0x3C00;
            memset(blk->qh, 0xAA, sizeof blk->qh);
        }
        block_q6_K *blk = &blocks[o * nb + o / 256];
        int j = (int)(o % 256), h = j / 128, q = (j % 128) / 32, l = j % 32;
        blk->ql[64 * h + l + (q % 2) * 32] |= (uint8_t)(q < 2 ? 1 : 0x10); /* level 33 */
        blk->scales[j / 16] = 1;
    }
    sac_matrix w = {SAC_TYPE_Q6_K, n_in, n_in, blocks, 0};
    uint64_t s = 98;
    float *x = make_activations(n_in * n_batch_max, &s);
    /* block 0 of row 0: max -127 → iscale 1, d 1, so x = k + 0.5 are exact ties */
    const float ties[] = {-127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 126.5f, -126.5f, 3.5f, 1.5f};
    for (int j = 0; j < 256; j++) x[j] = j < 9 ? ties[j] : (float)(j % 32 - 16) * 0.25f;
    for (int64_t n_batch = 1; n_batch <= n_batch_max; n_batch += 4) {
        float *y = run_matmul(pools[3], &w, x, n_batch);
        int q[512];
        double d[2];
        int bad = 0;
        for (int64_t b = 0; b < n_batch; b++) {
            quantize_ref_k(x + b * n_in, n_in, q, d);
            for (int64_t o = 0; o < n_in; o++) {
                double want = (float)(d[o / 256] * q[o]);
                if (y[b * n_in + o] != want && bad++ < 3)
                    CHECK_MSG(0, "n_batch=%lld b=%lld x[%lld]=%.9g: got %.9g want %.9g", (long long)n_batch,
                              (long long)b, (long long)o, x[b * n_in + o], y[b * n_in + o], want);
            }
        }
        CHECK(bad == 0);
        CHECK(y[0] == -127.0f && y[1] == 2.0f && y[2] == -2.0f && y[3] == 0.0f && y[4] == 0.0f);
        CHECK(y[5] == 126.0f && y[6] == -126.0f && y[7] == 4.0f && y[8] == 2.0f);
        free(y);
    }
    free(x);
    free(blocks);
}

/* The activation quantizer, observed exactly: Q8_0 weight rows that pick one input each
 * (q = 1, d = 1) make y[o] = d_x * q_x[o] with no rounding, to compare with the reference
 * bit for bit — including the ties, which go to even as in ggml's x86 and Arm builds. */
static void test_activation_quantization_exact(void) {
    const int64_t n_in = 128, n_batch_max = 5;
    block_q8_0 *blocks = calloc((size_t)(n_in * n_in / 32), sizeof *blocks);
    for (int64_t o = 0; o < n_in; o++) {
        for (int64_t blk = 0; blk < n_in / 32; blk++) blocks[o * (n_in / 32) + blk].d = 0x3C00;
        blocks[o * (n_in / 32) + o / 32].qs[o % 32] = 1;
    }
    sac_matrix w = {SAC_TYPE_Q8_0, n_in, n_in, blocks, 0};
    uint64_t s = 99;
    float *x = make_activations(n_in * n_batch_max, &s);
    /* block 0 of row 0: amax 127 → d = 1, so x = k + 0.5 are exact ties */
    const float ties[] = {127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 126.5f, -126.5f, 3.4999998f, -0.49999997f};
    for (int j = 0; j < 32; j++) x[j] = j < 9 ? ties[j] : (float)(j - 16) * 0.25f;
    /* block 1: the same ties at d = 1024 (x · 1/d exact), and −0; block 2: amax 1e-36, whose d
     * is subnormal but 1/d finite (the wasm quantizer's rounding by an added 1.5 · 2^23 takes
     * it; d rounds to an f16 0) */
    for (int j = 0; j < 32; j++) x[32 + j] = j < 9 ? ties[j] * 1024.0f : j == 9 ? -0.0f : (float)(j - 16) * 300.0f;
    for (int j = 0; j < 32; j++) x[64 + j] = (float)(j - 15) * (1e-36f / 16.0f);
    for (int64_t n_batch = 1; n_batch <= n_batch_max; n_batch += 4) {
        float *y = run_matmul(pools[3], &w, x, n_batch);
        int q[128];
        double d16[4];
        int bad = 0;
        for (int64_t b = 0; b < n_batch; b++) {
            quantize_ref(x + b * n_in, n_in, q, d16, NULL);
            for (int64_t o = 0; o < n_in; o++) {
                double want = d16[o / 32] * q[o];
                if (y[b * n_in + o] != want && bad++ < 3)
                    CHECK_MSG(0, "n_batch=%lld b=%lld x[%lld]=%.9g: got %.9g want %.9g", (long long)n_batch,
                              (long long)b, (long long)o, x[b * n_in + o], y[b * n_in + o], want);
            }
        }
        CHECK(bad == 0);
        CHECK(y[1] == 2.0f && y[2] == -2.0f && y[3] == 0.0f && y[4] == 0.0f && y[5] == 126.0f && y[6] == -126.0f);
        CHECK(y[33] == 2048.0f && y[34] == -2048.0f && y[35] == 0.0f && y[36] == 0.0f && y[37] == 126.0f * 1024.0f);
        CHECK(y[41] == 0.0f && y[64] == 0.0f && y[95] == 0.0f);
        free(y);
    }
    free(x);
    free(blocks);
}

/* The int8 extremes, with results known exactly: Q8_0 weights of -128 (no quantizer writes it,
 * a hostile file can) and 127, Q4_0 levels 0 and 15 (q - 8 = -8, 7), against activations of
 * exactly ±127 (amax 127: d = 1, q = x) and of ±1e-38 (127 / amax overflows: d = 0). Every
 * block has d_w = 1, so y is the integer dot itself. The relaxed-SIMD kernels take Q4_0's
 * levels unsigned (minus 8 sum(x)), and under vpdpbusd Q8_0's matmat its values + 128 (minus
 * 128 sum(x)): every sign pattern, each thread count, matvec and matmat tiles with leftovers. */
static void test_int8_extremes(void) {
    const int64_t n_in = 96, nb = n_in / 32, n_batch_max = 6;
    const int64_t n_outs[] = {4, 5};
    for (int type_k = 0; type_k < 2; type_k++)
        for (size_t c = 0; c < 2; c++) {
            int64_t n_out = n_outs[c];
            uint32_t type = type_k ? SAC_TYPE_Q4_0 : SAC_TYPE_Q8_0;
            int8_t wq[5][96]; /* the weights' integer values */
            void *data;
            if (type == SAC_TYPE_Q8_0) {
                block_q8_0 *b = calloc((size_t)(n_out * nb), sizeof *b);
                for (int64_t o = 0; o < n_out; o++)
                    for (int64_t i = 0; i < n_in; i++) {
                        int v = o == 0 ? -128 : o == 1 ? 127 : o == 2 ? (i % 2 ? -128 : 127) : (int)((i * 37 + o) % 256) - 128;
                        wq[o][i] = (int8_t)v;
                        b[o * nb + i / 32].d = 0x3C00;
                        b[o * nb + i / 32].qs[i % 32] = (int8_t)v;
                    }
                data = b;
            } else {
                block_q4_0 *b = calloc((size_t)(n_out * nb), sizeof *b);
                for (int64_t o = 0; o < n_out; o++)
                    for (int64_t i = 0; i < n_in; i++) {
                        int level = o == 0 ? 0 : o == 1 ? 15 : o == 2 ? (i % 2 ? 0 : 15) : (int)((i * 7 + o) % 16);
                        wq[o][i] = (int8_t)(level - 8);
                        int j = (int)(i % 32);
                        b[o * nb + i / 32].d = 0x3C00;
                        b[o * nb + i / 32].qs[j % 16] |= (uint8_t)(j < 16 ? level : level << 4);
                    }
                data = b;
            }
            sac_matrix w = {type, n_in, n_out, data, 0};
            float x[6 * 96];
            for (int64_t b = 0; b < n_batch_max; b++)
                for (int64_t i = 0; i < n_in; i++) {
                    float v = b == 0 ? 127.0f : b == 1 ? -127.0f : (i + b) % 3 ? 127.0f : -127.0f;
                    /* row 2: its last block is ±1e-38, which adds nothing */
                    x[b * n_in + i] = b == 2 && i >= 64 ? (i % 2 ? 1e-38f : -1e-38f) : v;
                }
            for (int64_t n_batch = 1; n_batch <= n_batch_max; n_batch++) {
                float *y1 = run_matmul(pools[1], &w, x, n_batch);
                int bad = 0;
                for (int64_t b = 0; b < n_batch; b++)
                    for (int64_t o = 0; o < n_out; o++) {
                        int32_t want = 0;
                        for (int64_t i = 0; i < (b == 2 ? 64 : n_in); i++)
                            want += wq[o][i] * (int32_t)x[b * n_in + i];
                        if (y1[b * n_out + o] != (float)want && bad++ < 3)
                            CHECK_MSG(0, "%s n_out=%lld n_batch=%lld y[%lld][%lld] = %.9g, want %d", sac_type_name(type),
                                      (long long)n_out, (long long)n_batch, (long long)b, (long long)o,
                                      y1[b * n_out + o], want);
                    }
                CHECK(bad == 0);
                for (int nt = 2; nt <= 4; nt++) {
                    float *yt = run_matmul(pools[nt], &w, x, n_batch);
                    CHECK_MSG(!memcmp(yt, y1, sizeof(float) * (size_t)(n_batch * n_out)), "%s n_batch=%lld: %d threads differ",
                              sac_type_name(type), (long long)n_batch, nt);
                    free(yt);
                }
                hash_results(y1, n_batch * n_out);
                /* each row alone (matvec) as within the batch */
                for (int64_t b = 0; b < n_batch; b++) {
                    float *yb = run_matmul(pools[2], &w, x + b * n_in, 1);
                    CHECK_MSG(!memcmp(yb, y1 + b * n_out, sizeof(float) * (size_t)n_out),
                              "%s n_batch=%lld: row %lld alone differs", sac_type_name(type), (long long)n_batch, (long long)b);
                    free(yb);
                }
                free(y1);
            }
            free(data);
        }
}

/* Activation blocks a model should not produce but a hostile file can make it: every build
 * gives the same results, to the bit. A block whose 1/d overflows (values near 1e-38) gives
 * y = +0, never -0; a NaN in a block makes its d NaN and y NaN (the plain C quantizer once
 * dropped it, as fmaxf ignores a NaN, where wasm's f32x4.max keeps it); an infinity makes d
 * infinite (y NaN, as inf x 0); an all -0 block gives +0. Q8_0 weights take Q8_0 activations and
 * Q4_1 weights take Q8_1 ones (whose block sum s enters y), in matvec and matmat. */
static void test_activation_quantization_hostile(void) {
    enum { N_IN = 32, ROWS = 5 };
    float x[ROWS * N_IN];
    for (int j = 0; j < N_IN; j++) {
        x[0 * N_IN + j] = -1e-38f;
        x[1 * N_IN + j] = j % 3 ? -1e-38f : 1e-38f;
        x[2 * N_IN + j] = j == 7 ? NAN : 1.0f;
        x[3 * N_IN + j] = -0.0f;
        x[4 * N_IN + j] = j == 3 ? INFINITY : 1.0f;
    }
    const int want_nan[ROWS] = {0, 0, 1, 0, 1};
    for (int type_k = 0; type_k < 2; type_k++)
        for (int64_t n_out = 4; n_out <= 5; n_out++) {
            uint32_t type = type_k ? SAC_TYPE_Q4_1 : SAC_TYPE_Q8_0;
            void *data;
            if (type == SAC_TYPE_Q8_0) {
                block_q8_0 *b = calloc((size_t)n_out, sizeof *b);
                for (int64_t o = 0; o < n_out; o++) {
                    b[o].d = 0x3C00;
                    memset(b[o].qs, o % 2 ? -3 : 2, sizeof b[o].qs);
                }
                data = b;
            } else {
                block_q4_1 *b = calloc((size_t)n_out, sizeof *b);
                for (int64_t o = 0; o < n_out; o++) {
                    b[o].d = 0x3C00;
                    b[o].m = o % 2 ? 0xBC00 : 0x3C00; /* ±1 */
                    memset(b[o].qs, 0x35, sizeof b[o].qs);
                }
                data = b;
            }
            sac_matrix w = {type, N_IN, n_out, data, 1};
            for (int64_t n_batch = 1; n_batch <= ROWS; n_batch += ROWS - 1) {
                float *y = run_matmul(pools[2], &w, x, n_batch);
                for (int64_t b = 0; b < n_batch; b++)
                    for (int64_t o = 0; o < n_out; o++) {
                        float v = y[b * n_out + o];
                        CHECK_MSG(want_nan[b] ? isnan(v) : (v == 0.0f && !signbit(v)),
                                  "%s n_out=%lld n_batch=%lld y[%lld][%lld] = %g, want %s", sac_type_name(type),
                                  (long long)n_out, (long long)n_batch, (long long)b, (long long)o, v,
                                  want_nan[b] ? "NaN" : "+0");
                        if (isnan(v)) y[b * n_out + o] = 1.0f; /* NaN payloads differ between CPUs */
                    }
                hash_results(y, n_batch * n_out);
                free(y);
            }
            free(data);
        }
}

static void test_work_size(void) {
    sac_matrix q8 = {SAC_TYPE_Q8_0, 4096, 10, NULL, 0}, f32 = {SAC_TYPE_F32, 4096, 10, NULL, 0};
    sac_matrix f16 = {SAC_TYPE_F16, 4096, 10, NULL, 0};
    CHECK(sac_matmul_work_size(&f32, 7) == 0);
    CHECK(sac_matmul_work_size(&f16, 7) == 0);
    /* at least the int8 copy of x; the kernels use int16 values plus a float scale per block */
    CHECK(sac_matmul_work_size(&q8, 7) >= 7 * 4096 * 34 / 32);
#ifdef __wasm_relaxed_simd__
    /* the values again for the matmat's panel, grouped by six rows (7 rows take 12), as int16
     * pairs and as int8 quads */
    CHECK(sac_matmul_work_size(&q8, 7) <= 7 * 4096 * 8);
#elif defined(SAC_SIMD128)
    /* the values again for the matmat's panel, grouped by four rows (7 rows take 8) */
    CHECK(sac_matmul_work_size(&q8, 7) <= 7 * 4096 * 5);
#else
    CHECK(sac_matmul_work_size(&q8, 7) <= 7 * 4096 * 3);
#endif
}

/* A workspace too large for a size_t (wasm32's 4 GB, or 2^64) is SIZE_MAX, which no
 * allocation satisfies, never a size that wrapped around to a small one. */
static void test_work_size_overflow(void) {
    const int64_t n_ins[] = {4096, (int64_t)1 << 40}, n_batches[] = {(int64_t)1 << 20, (int64_t)1 << 30};
    for (int k = 0; k < 2; k++) {
        sac_matrix w = {SAC_TYPE_Q8_0, n_ins[k], 10, NULL, 0};
        /* the scales (a float per block and row) and the int16 values, without rounding up */
        double need = (double)(n_ins[k] / 32) * (double)n_batches[k] * 4 + (double)n_ins[k] * (double)n_batches[k] * 2;
        size_t got = sac_matmul_work_size(&w, n_batches[k]);
        if (need > (double)SIZE_MAX) CHECK_MSG(got == SIZE_MAX, "n_in=%lld: %zu bytes", (long long)n_ins[k], got);
        else CHECK_MSG(got != SIZE_MAX && (double)got >= need, "n_in=%lld: %zu bytes", (long long)n_ins[k], got);
    }
}

/* The same for every activation layout: Q8_1 (scales, sums, values), Q8_K (scales, values,
 * bsums) and BF16 (f32 values), each at least its parts' bytes, or SIZE_MAX. */
static void test_work_size_overflow_all_layouts(void) {
    const uint32_t types[] = {SAC_TYPE_Q4_1, SAC_TYPE_Q4_K, SAC_TYPE_BF16};
    const int64_t n_ins[] = {4096, (int64_t)1 << 40}, n_batches[] = {(int64_t)1 << 20, (int64_t)1 << 30};
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < 2; k++) {
            sac_matrix w = {types[t], n_ins[k], 10, NULL, 0};
            double n = (double)n_ins[k] * (double)n_batches[k], need;
            if (types[t] == SAC_TYPE_Q4_1) need = n / 32 * 8 + n * 2;
            else if (types[t] == SAC_TYPE_Q4_K) need = n / 256 * 4 + n * 2 + n / 16 * 2;
            else need = n * 4;
            size_t got = sac_matmul_work_size(&w, n_batches[k]);
            if (need > (double)SIZE_MAX)
                CHECK_MSG(got == SIZE_MAX, "%s n_in=%lld: %zu bytes", sac_type_name(types[t]), (long long)n_ins[k], got);
            else
                CHECK_MSG(got != SIZE_MAX && (double)got >= need, "%s n_in=%lld: %zu bytes", sac_type_name(types[t]),
                          (long long)n_ins[k], got);
        }
}

static void test_dot_and_axpy(void) {
    uint64_t s = 5;
    for (int64_t n = 0; n <= 300; n += (n < 20 ? 1 : 37)) {
        float *a = make_activations(n, &s), *b = make_activations(n, &s);
        double ref = 0, ref_abs = 0;
        for (int64_t i = 0; i < n; i++) {
            ref += (double)a[i] * b[i];
            ref_abs += fabs((double)a[i] * b[i]);
        }
        float got = sac_dot_f32(a, b, n);
        CHECK_NEAR(got, ref, (double)(n / 8 + n % 8 + 8) * U * ref_abs);
        /* the same sums as an F32 matvec of that row */
        if (n > 0) {
            sac_matrix w = {SAC_TYPE_F32, n, 1, a, 0};
            float y;
            sac_matmul(NULL, &w, b, 1, &y, NULL);
            CHECK(memcmp(&y, &got, sizeof y) == 0);
        }
        float *y = make_activations(n, &s);
        double *want = malloc(sizeof(double) * (size_t)(n + 1));
        for (int64_t i = 0; i < n; i++) want[i] = (double)y[i] + 0.75 * (double)a[i];
        sac_axpy_f32(y, 0.75f, a, n);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) /* one rounding of the product, one of the sum */
            bad += !(fabs(y[i] - want[i]) <= 2 * U * (fabs(want[i]) + fabs(0.75 * a[i])));
        CHECK_MSG(bad == 0, "axpy n=%lld: %d values off", (long long)n, bad);
        free(a);
        free(b);
        free(y);
        free(want);
    }
}

/* The matvec reads ahead of the rows it computes (quant_rows4 in src/kernels.c) and must never
 * read past the matrix. Each matrix here is copied so that its last byte is the last byte
 * there is: of the wasm memory, where a read past it traps, or natively of a block of exactly
 * its size, where AddressSanitizer stops it. The results must be those of the same matrix
 * elsewhere, bit for bit. */
#ifdef __wasm__
#include <emscripten/heap.h>
extern void *sbrk(intptr_t increment);
#endif

typedef struct end_copy {
    char *data;
    char *brk; /* wasm: the program break before the copy claimed the memory above it */
} end_copy;

static end_copy copy_to_end(const void *data, size_t bytes) {
    end_copy c = {NULL, NULL};
#ifdef __wasm__
    /* Claim everything up to the top of memory (nothing may be allocated until release_end
     * gives it back) and put the matrix at the very top. */
    char *brk = sbrk(0);
    uint64_t top = (uint64_t)__builtin_wasm_memory_size(0) * 65536u; /* 2^32 with 4 GB */
    if (top > UINTPTR_MAX) return c; /* no last byte to reach; the test fails with "no room" */
    intptr_t room = (intptr_t)(top - (uintptr_t)brk);
    if (room < (intptr_t)bytes || sbrk(room) != brk) return c;
    c.brk = brk;
    c.data = (char *)(uintptr_t)top - bytes;
#else
    c.data = malloc(bytes);
    if (!c.data) return c;
#endif
    memcpy(c.data, data, bytes);
    return c;
}

static void release_end(end_copy c, size_t bytes) {
#ifdef __wasm__
    /* Emscripten's sbrk cannot shrink (a negative increment is refused), so the break is put
     * back directly, as its pthread build moves it: atomically, and only if it is still at the
     * top (nothing else may have moved it meanwhile). */
    uintptr_t top = (uintptr_t)(c.data + bytes), brk = (uintptr_t)c.brk;
    CHECK_MSG(__atomic_compare_exchange_n(emscripten_get_sbrk_ptr(), &top, brk, 0, __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST),
              "the program break moved while the test held the top of memory");
#else
    (void)bytes;
    free(c.data);
#endif
}

static void test_matvec_reads_stay_inside(void) {
    const uint32_t types[] = {SAC_TYPE_Q8_0, SAC_TYPE_Q4_0, SAC_TYPE_Q5_0, SAC_TYPE_Q4_1, SAC_TYPE_Q5_1,
                              SAC_TYPE_Q2_K, SAC_TYPE_Q3_K, SAC_TYPE_Q4_K, SAC_TYPE_Q5_K, SAC_TYPE_Q6_K,
                              SAC_TYPE_F16, SAC_TYPE_BF16, SAC_TYPE_F32};
    const int64_t n_ins[] = {256, 768}, n_outs[] = {1, 3, 4, 5, 7, 8, 9, 12, 13, 17, 100};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t a = 0; a < sizeof n_ins / sizeof n_ins[0]; a++)
            for (size_t b = 0; b < sizeof n_outs / sizeof n_outs[0]; b++) {
                uint64_t s = 4242 + 100 * t + 10 * a + b;
                int64_t n_in = n_ins[a], n_out = n_outs[b];
                const sac_type_traits *tr = sac_type_traits_get(types[t]);
                size_t bytes = weight_bytes(types[t], n_in, n_out);
                void *data = make_weights(types[t], n_in, n_out, &s);
                if (tr->block_size == 32 && b % 2) { /* an inf scale in the last block: the exact redo */
                    const uint16_t inf = 0x7C00;
                    memcpy((char *)data + bytes - tr->type_size, &inf, sizeof inf);
                }
                sac_matrix w = {types[t], n_in, n_out, data, 0};
                float *x = make_activations(n_in, &s);
                size_t work_size = sac_matmul_work_size(&w, 1);
                void *work = work_size ? malloc(work_size) : NULL;
                float *want = run_matmul(pools[1], &w, x, 1);
                float *y[2] = {malloc(sizeof(float) * (size_t)n_out), malloc(sizeof(float) * (size_t)n_out)};
                end_copy end = copy_to_end(data, bytes);
                CHECK_MSG(end.data != NULL, "no room for %zu bytes at the end of memory", bytes);
                if (end.data) {
                    sac_matrix at_end = w;
                    at_end.data = end.data;
                    for (int k = 0; k < 2; k++) sac_matmul(pools[k + 1], &at_end, x, 1, y[k], work);
                    release_end(end, bytes);
                    for (int k = 0; k < 2; k++)
                        CHECK_MSG(memcmp(y[k], want, sizeof(float) * (size_t)n_out) == 0,
                                  "%s %lld x %lld at the end of memory, %d thread(s): results differ",
                                  sac_type_name(types[t]), (long long)n_out, (long long)n_in, k + 1);
                }
                free(y[0]);
                free(y[1]);
                free(want);
                free(work);
                free(x);
                free(data);
            }
}

/* sac_matmul_then: bias, activation (alone or gated) and residual applied by the threads that
 * computed each output give the bits of sac_matmul followed by the separate passes, for every
 * thread count, batch size and a row count that is no multiple of a unit or of four. */
static void test_epilogue(void) {
    const uint32_t types[] = {SAC_TYPE_F32, SAC_TYPE_Q8_0, SAC_TYPE_Q4_K};
    const int64_t batches[] = {1, 5, 9};
    const enum sac_activation acts[] = {SAC_ACT_NONE, SAC_ACT_GELU, SAC_ACT_SILU};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
        for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++)
            for (size_t ai = 0; ai < sizeof acts / sizeof *acts; ai++) {
                const int64_t n_in = 256, n_out = 301, n_batch = batches[bi], n = n_batch * n_out;
                uint64_t s = 1000 + ti * 100 + bi * 10 + ai;
                sac_matrix w = {types[ti], n_in, n_out, make_weights(types[ti], n_in, n_out, &s), 0};
                float *x = make_activations(n_in * n_batch, &s), *bias = make_activations(n_out, &s);
                float *mul = make_activations(n, &s), *res0 = make_activations(n, &s);
                /* the separate passes, as forward.c did them */
                float *want = run_matmul(NULL, &w, x, n_batch), *want_res = malloc(sizeof(float) * (size_t)n);
                for (int64_t b = 0; b < n_batch; b++)
                    for (int64_t o = 0; o < n_out; o++) want[b * n_out + o] += bias[o];
                if (acts[ai] != SAC_ACT_NONE) sac_activation_rows(acts[ai], want, ai == 2 ? mul : NULL, n);
                for (int64_t i = 0; i < n; i++) want_res[i] = res0[i] + want[i];
                size_t work_size = sac_matmul_work_size(&w, n_batch);
                void *work = work_size ? malloc(work_size) : NULL;
                float *y = malloc(sizeof(float) * (size_t)n), *res = malloc(sizeof(float) * (size_t)n);
                for (int k = 0; k <= 4; k++) {
                    memcpy(res, res0, sizeof(float) * (size_t)n);
                    const sac_epilogue e = {.bias = bias, .activation = acts[ai], .mul = ai == 2 ? mul : NULL,
                                            .residual = res};
                    sac_matmul_then(pools[k], &w, x, n_batch, y, work, &e);
                    CHECK_MSG(memcmp(y, want, sizeof(float) * (size_t)n) == 0 &&
                                  memcmp(res, want_res, sizeof(float) * (size_t)n) == 0,
                              "%s batch %lld act %d, %d threads: not the separate passes' bits",
                              sac_type_traits_get(types[ti])->name, (long long)n_batch, (int)acts[ai], k);
                }
                free(work);
                free(y);
                free(res);
                free(want);
                free(want_res);
                free(x);
                free(bias);
                free(mul);
                free(res0);
                free((void *)w.data);
            }
}

int main(void) {
#ifdef __wasm_relaxed_simd__
    printf("test_matmul: kernels compiled with wasm relaxed SIMD\n");
#endif
#if defined(__wasm_simd128__)
    printf("test_matmul: kernels compiled with wasm SIMD128\n");
#elif defined(SAC_SIMD128)
    printf("test_matmul: kernels compiled with SIMD128 from SIMDe\n");
#else
    printf("test_matmul: kernels compiled as plain C\n");
#endif
    for (int k = 1; k <= 4; k++) {
        if (sac_pool_new(k, &pools[k], NULL) != SAC_OK) {
            printf("test_matmul: cannot make a pool of %d threads\n", k);
            return 1;
        }
    }
    printf("test_matmul: pools of 1-4 threads have %d %d %d %d\n", sac_pool_size(pools[1]),
           sac_pool_size(pools[2]), sac_pool_size(pools[3]), sac_pool_size(pools[4]));
    RUN(test_work_size);
    RUN(test_work_size_overflow);
    RUN(test_epilogue);
    RUN(test_work_size_overflow_all_layouts);
    RUN(test_activation_quantization_exact);
    RUN(test_int8_extremes);
    RUN(test_activation_quantization_hostile);
    RUN(test_f16_every_half);
    RUN(test_f16_every_finite_half);
    RUN(test_quant_every_scale);
    RUN(test_k_quant_every_scale);
    RUN(test_k_quant_extreme_levels);
    RUN(test_activation_quantization_exact_k);
    RUN(test_f16_specials_long_rows);
    RUN(test_bf16_every_value);
    RUN(test_f32);
    RUN(test_f16);
    RUN(test_q8_0);
    RUN(test_q4_0);
    RUN(test_q5_0);
    RUN(test_bf16);
    RUN(test_q4_1);
    RUN(test_q5_1);
    RUN(test_q2_K);
    RUN(test_q3_K);
    RUN(test_q4_K);
    RUN(test_q5_K);
    RUN(test_q6_K);
    RUN(test_float_odd_lengths);
    RUN(test_float_large_activations);
    RUN(test_dot_and_axpy);
    RUN(test_matvec_reads_stay_inside);
    for (int k = 1; k <= 4; k++) sac_pool_free(pools[k]);
    printf("test_matmul: results hash %016llx\n", (unsigned long long)results_hash);
    return check_summary("test_matmul");
}
