/* train_math.h — exp, log and tanh from +, −, ×, ÷ and exact libm calls (floor, frexp).
 *
 * The native and the wasm trainers must give the same losses bit for bit. The matrix kernels
 * already do; libm's expf, logf and tanhf do not: glibc picks FMA variants at run time and
 * musl (Emscripten's libc) has its own tanhf. These take their only roundings from IEEE
 * arithmetic, in double, so every compiler that does not contract or reorder (ISO C mode in
 * gcc, no FMA in wasm) gives the same bits. Accuracy: ~1e-16 relative in double, so the float
 * results are correctly rounded but for ties within that margin. */
#ifndef TRAIN_MATH_H
#define TRAIN_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define TRAIN_LN2_HI 6.93147180369123816490e-01 /* ln 2 with trailing zero bits: k·LN2_HI is exact */
#define TRAIN_LN2_LO 1.90821492927058770002e-10

/* 2^k for −1022 ≤ k ≤ 1023, from its bits (libm's ldexp is a call that wasm cannot inline). */
static inline double train_pow2(int k) {
    const uint64_t bits = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* e^x: x = k·ln2 + r, |r| ≤ ln2/2, e^r by its Taylor series to r^13 (error < 2e-17), times
 * 2^k in two exact steps (the last one rounds once when the result is subnormal, as ldexp). */
static inline double train_exp(double x) {
    if (x != x) return x;
    if (x > 709.7) return HUGE_VAL;
    if (x < -745.2) return 0.0;
    const double k = floor(x * 1.44269504088896338700 + 0.5);
    const double r = (x - k * TRAIN_LN2_HI) - k * TRAIN_LN2_LO;
    double p = 1.0 / 6227020800.0;                    /* 1/13! */
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const int ki = (int)k, half = ki / 2;
    return p * train_pow2(half) * train_pow2(ki - half);
}

/* ln x for x > 0: x = 2^e·m, √½ ≤ m < √2, ln m = 2·atanh(s), s = (m − 1)/(m + 1), |s| < 0.172,
 * by its series to s^23 (error < 1e-18). */
static inline double train_log(double x) {
    if (!(x > 0.0)) return x == 0.0 ? -HUGE_VAL : NAN;
    if (x == HUGE_VAL) return x;
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e -= 1;
    }
    const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
    double p = 1.0 / 23.0;
    for (int i = 21; i >= 1; i -= 2) p = p * s2 + 1.0 / (double)i;
    return (double)e * TRAIN_LN2_HI + ((double)e * TRAIN_LN2_LO + 2.0 * s * p);
}

static inline float train_expf(float x) { return (float)train_exp((double)x); }
static inline float train_logf(float x) { return (float)train_log((double)x); }

/* tanh u = (e^{2u} − 1)/(e^{2u} + 1); near 0, where that cancels, its series. */
static inline float train_tanhf(float u) {
    const double x = (double)u;
    if (fabs(x) < 1e-3) {
        const double x2 = x * x;
        return (float)(x * (1.0 - x2 * (1.0 / 3.0 - x2 * (2.0 / 15.0))));
    }
    if (fabs(x) > 20.0) return x > 0 ? 1.0f : -1.0f;
    const double t = train_exp(2.0 * x);
    return (float)((t - 1.0) / (t + 1.0));
}

#endif
