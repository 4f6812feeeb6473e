/* test_exp — exp.h's exponential against float64 exp (within 1 ulp on the range it is used on:
 * every float of [-87, 0], checked once, was within 0.98; here a sample), 0 below it and for
 * −∞, 1 at 0; sac_softmax_exp's rows (every length around the SIMD width, masked keys,
 * temperatures): each term the bits of the scalar exponential, the sum the four-part sum
 * softmax.h describes, the probabilities within 1e-6 of float64; and the activations' rows
 * (activation.h): the bits of the scalar forms, which are within 2e-7 (relative to the larger
 * of 1 and the value) of float64 GELU and SiLU. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "activation.h"
#include "softmax.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static double uniform(void) { /* [0, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Distance in units in the last place of the float nearest to `want` (a normal float). */
static double ulps(float got, double want) {
    int e;
    frexp(want, &e);
    return fabs((double)got - want) / ldexp(1.0, e - 24);
}

static void test_exp_against_float64(void) {
    double worst = 0.0, at = 0.0;
    /* every float of [-1, 0] at a stride, then the whole range */
    for (uint32_t i = 0; i < 1u << 20; i++) {
        const float x = i < (1u << 19) ? -(float)i / (float)(1u << 19) : (float)(SAC_EXP_MIN * uniform());
        const double u = ulps(sac_exp_nonpos(x), exp((double)x));
        if (u > worst) worst = u, at = x;
    }
    CHECK_MSG(worst <= 1.0, "sac_exp_nonpos is %.2f ulp from exp at %.9g", worst, at);
    CHECK(sac_exp_nonpos(0.0f) == 1.0f);
    CHECK(sac_exp_nonpos(-0.0f) == 1.0f);
    CHECK(sac_exp_nonpos(SAC_EXP_MIN) > 0.0f && sac_exp_nonpos(SAC_EXP_MIN) >= FLT_MIN);
    CHECK(sac_exp_nonpos(nextafterf(SAC_EXP_MIN, -INFINITY)) == 0.0f);
    CHECK(sac_exp_nonpos(-1000.0f) == 0.0f);
    CHECK(sac_exp_nonpos(-INFINITY) == 0.0f);
    CHECK(isnan(sac_exp_nonpos(NAN)));
}

static void test_rows_match_scalar(void) {
    enum { MAX_N = 41 };
    const float temps[] = {1.0f, 0.25f, 3.0f};
    int mismatches = 0;
    double worst = 0.0;
    for (int32_t n = 1; n <= MAX_N; n++)
        for (size_t ti = 0; ti < sizeof temps / sizeof *temps; ti++) {
            float s[MAX_N], row[MAX_N], max = -INFINITY;
            for (int32_t j = 0; j < n; j++) {
                s[j] = j % 7 == 3 && j != n - 1 ? -INFINITY : (float)(40.0 * uniform() - 20.0);
                if (s[j] > max) max = s[j];
            }
            memcpy(row, s, sizeof s);
            const float inv_temp = 1.0f / temps[ti];
            const float sum = sac_softmax_exp(row, n, max, inv_temp);
            float e[MAX_N], parts[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            double sum64 = 0.0;
            for (int32_t j = 0; j < n; j++) {
                e[j] = sac_exp_nonpos((s[j] - max) * inv_temp);
                mismatches += memcmp(&e[j], &row[j], sizeof e[j]) != 0;
                if (s[j] != -INFINITY) sum64 += exp(((double)s[j] - max) * inv_temp);
            }
            const int32_t n4 = n - n % 4;
            for (int32_t j = 0; j < n4; j++) parts[j % 4] += e[j];
            float want_sum = (parts[0] + parts[1]) + (parts[2] + parts[3]);
            for (int32_t j = n4; j < n; j++) want_sum += e[j];
            mismatches += memcmp(&want_sum, &sum, sizeof sum) != 0;
            for (int32_t j = 0; j < n; j++) {
                const double p64 = s[j] == -INFINITY ? 0.0 : exp(((double)s[j] - max) * inv_temp) / sum64;
                worst = fmax(worst, fabs((double)(row[j] / sum) - p64));
            }
        }
    CHECK_MSG(mismatches == 0, "%d terms or sums differ from the scalar exponential added in order", mismatches);
    CHECK_MSG(worst < 1e-6, "probabilities %.3g from float64", worst);
}

/* Values over GELU's and SiLU's whole shape: around 0, the bends, saturation, and beyond. */
static float activation_input(int32_t i) {
    const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 30.0f, -30.0f, 100.0f, -100.0f, 1e30f, -1e30f};
    const int32_t n_special = (int32_t)(sizeof special / sizeof *special);
    if (i < n_special) return special[i];
    return (float)((uniform() < 0.5 ? 8.0 : 0.5) * (2.0 * uniform() - 1.0));
}

static void test_activations(void) {
    enum { N = 4099 }; /* not a multiple of 4: the rows end in scalar leftovers */
    float *x = malloc(sizeof(float) * N), *mul = malloc(sizeof(float) * N), *row = malloc(sizeof(float) * N);
    int mismatches = 0;
    double worst_gelu = 0.0, worst_silu = 0.0;
    for (int32_t i = 0; i < N; i++) x[i] = activation_input(i), mul[i] = (float)(2.0 * uniform() - 1.0);
    for (int gated = 0; gated <= 1; gated++)
        for (int which = 0; which <= 1; which++) {
            memcpy(row, x, sizeof(float) * N);
            sac_activation_rows(which == 0 ? SAC_ACT_GELU : SAC_ACT_SILU, row, gated ? mul : NULL, N);
            for (int32_t i = 0; i < N; i++) {
                const float a = which == 0 ? sac_gelu(x[i]) : sac_silu(x[i]), want = gated ? a * mul[i] : a;
                mismatches += memcmp(&want, &row[i], sizeof want) != 0;
                if (gated) continue;
                const double v = x[i];
                if (which == 0) {
                    const double g = 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
                    if (fabs(v) < 1e6) worst_gelu = fmax(worst_gelu, fabs(row[i] - g) / fmax(1.0, fabs(g)));
                } else {
                    const double s = v / (1.0 + exp(-v));
                    worst_silu = fmax(worst_silu, fabs(row[i] - s) / fmax(1.0, fabs(s)));
                }
            }
        }
    CHECK_MSG(mismatches == 0, "%d activations differ from the scalar forms", mismatches);
    CHECK_MSG(worst_gelu < 2e-7 && worst_silu < 2e-7, "GELU %.3g, SiLU %.3g from float64", worst_gelu, worst_silu);
    free(x), free(mul), free(row);
}

int main(void) {
    RUN(test_exp_against_float64);
    RUN(test_rows_match_scalar);
    RUN(test_activations);
    return check_summary("test_exp");
}
