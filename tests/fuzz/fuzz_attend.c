/* fuzz_attend.c — libFuzzer target for the attention primitive's size and argument checks
 * (sac_attend), the kernel width fit (sac_kernel_fit_width) and the sinusoid table.
 *
 * Each input is:
 *   bytes 0..47   sac_attend_params as int32/uint32/float, little-endian, in this order: batch,
 *                 n_q, n_k, d_k, d_v, n_heads, score, hidden, mask, mask_per_batch, width,
 *                 temperature — any values, hostile ones included (negative, 2^31 − 1, NaN);
 *   bytes 48..65  nine uint16 buffer lengths (queries, keys, values, W, key_lengths, mask, out,
 *                 weights, scores), capped so that a run stays short;
 *   byte 66       flags: bit 0 weights NULL, bit 1 scores NULL, bit 2 raw float32 data (NaN and
 *                 infinities included) instead of small finite values;
 *   the rest      the data every buffer is filled from, cyclically.
 * Each buffer is allocated with exactly the length the input claims, so a read or write past a
 * length that the checks let through is caught by ASan. Checked beyond ASan/UBSan: a call that
 * succeeds leaves only finite outputs, and every row of weights sums to 1 or is all 0. The same
 * header drives sac_kernel_fit_width (n_q training points, n_k held-out, d_k, d_v) and
 * sac_sinusoid_positions (n_q × d_k). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "saccade.h"

#define HEADER 67
#define FIT_WORK_MAX 5e6 /* the largest kernel fit an input runs: ~0.1 s under ASan */

/* A count as the work it stands for: a negative one none. */
static double at_least_0(int32_t n) { return n > 0 ? (double)n : 0.0; }

static int32_t i32_at(const uint8_t *p) {
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

static float f32_at(const uint8_t *p) {
    int32_t v = i32_at(p);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

static void fill(float *x, size_t n, const uint8_t *data, size_t size, int raw) {
    for (size_t i = 0; i < n; i++) {
        if (!size) x[i] = 0.5f;
        else if (raw && size >= 4) x[i] = f32_at(data + (4 * i) % (size - 3));
        else x[i] = (float)(int8_t)data[i % size] * 0.25f;
    }
}

static void *alloc(size_t n, size_t each) { return malloc(n ? n * each : 1); }

static void check_finite(const float *x, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) {
            fprintf(stderr, "%s[%zu] = %g after SAC_OK\n", what, i, (double)x[i]);
            abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size) {
    if (size < HEADER) return 0;
    sac_attend_params p;
    p.batch = i32_at(in), p.n_q = i32_at(in + 4), p.n_k = i32_at(in + 8), p.d_k = i32_at(in + 12);
    p.d_v = i32_at(in + 16), p.n_heads = i32_at(in + 20), p.score = i32_at(in + 24), p.hidden = i32_at(in + 28);
    p.mask = (uint32_t)i32_at(in + 32), p.mask_per_batch = i32_at(in + 36);
    p.width = f32_at(in + 40), p.temperature = f32_at(in + 44);
    size_t len[9];
    for (int i = 0; i < 9; i++) {
        len[i] = (size_t)(in[48 + 2 * i] | in[49 + 2 * i] << 8) & 0x3fff;
        if (i == 3) len[i] &= 0x3ff; /* W: additive scores cost n_q·n_k·hidden tanh */
    }
    const uint8_t flags = in[66];
    const uint8_t *data = in + HEADER;
    const size_t n_data = size - HEADER;
    const int raw = flags & 4;

    float *q = alloc(len[0], 4), *k = alloc(len[1], 4), *v = alloc(len[2], 4), *W = alloc(len[3], 4);
    int32_t *lengths = alloc(len[4], 4);
    uint8_t *mask = alloc(len[5], 1);
    float *out = alloc(len[6], 4), *weights = flags & 1 ? NULL : alloc(len[7], 4), *scores = flags & 2 ? NULL : alloc(len[8], 4);
    fill(q, len[0], data, n_data, raw);
    fill(k, len[1], data, n_data, raw);
    fill(v, len[2], data, n_data, raw);
    fill(W, len[3], data, n_data, raw);
    for (size_t i = 0; i < len[4]; i++) lengths[i] = n_data ? (int32_t)(int8_t)data[i % n_data] : 0;
    for (size_t i = 0; i < len[5]; i++) mask[i] = n_data ? data[i % n_data] & 1 : 1;

    char msg[256];
    sac_status st = sac_attend(&p, q, len[0], k, len[1], v, len[2], W, len[3], lengths, len[4], mask, len[5], out,
                               len[6], weights, weights ? len[7] : 0, scores, scores ? len[8] : 0, msg, sizeof msg);
    if (st == SAC_OK) {
        const size_t n_out = (size_t)p.batch * p.n_q * p.d_v, rows = (size_t)p.batch * p.n_heads * p.n_q;
        check_finite(out, n_out, "out");
        if (weights) {
            check_finite(weights, rows * p.n_k, "weights");
            for (size_t r = 0; r < rows; r++) {
                double sum = 0;
                for (int32_t j = 0; j < p.n_k; j++) sum += weights[r * p.n_k + j];
                if (sum != 0 && fabs(sum - 1) > 1e-4) {
                    fprintf(stderr, "weights row %zu sums to %g\n", r, sum);
                    abort();
                }
            }
        }
    } else if (msg[0] == '\0') {
        fprintf(stderr, "status %s without a message\n", sac_status_name(st));
        abort();
    }

    /* the kernel fit on the same buffers: n_q training points, n_k held-out */
    sac_kernel_fit_params f = {p.score, p.n_q, p.n_k, p.d_k, p.d_v, p.mask_per_batch & 1, p.width, p.temperature,
                               p.hidden & 15};
    float widths[16], losses[16];
    /* a fit costs steps x training points x points scored x (d_x + d_y): larger fits are left out
     * (one of 15 000 x 16 000 points held the fuzzer for minutes under ASan); inputs with a
     * negative or zero count still reach the parameter checks, as their work is 0 */
    const double fit_work = (f.n_steps + 1.0) * at_least_0(f.n_train) *
                            at_least_0(f.leave_one_out ? f.n_train : f.n_heldout) *
                            (at_least_0(f.d_x) + at_least_0(f.d_y));
    st = fit_work > FIT_WORK_MAX ? SAC_ERR_ARG
                                 : sac_kernel_fit_width(&f, q, len[0], v, len[2], k, len[1], W, len[3], widths,
                                                        (size_t)(flags >> 4), losses, 16, msg, sizeof msg);
    if (st == SAC_OK) {
        check_finite(widths, (size_t)f.n_steps + 1, "widths");
        for (int32_t s = 0; s <= f.n_steps; s++)
            if (!(widths[s] > 0) || !(losses[s] >= 0)) {
                fprintf(stderr, "step %d: width %g, loss %g\n", s, (double)widths[s], (double)losses[s]);
                abort();
            }
    }

    st = sac_sinusoid_positions(p.n_q, p.d_k, out, len[6], msg, sizeof msg);
    if (st == SAC_OK) check_finite(out, (size_t)p.n_q * p.d_k, "sinusoids");

    free(q), free(k), free(v), free(W), free(lengths), free(mask), free(out), free(weights), free(scores);
    return 0;
}
