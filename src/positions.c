/* positions.c — the Transformer paper's sinusoidal position table (sac_sinusoid_positions). */
#include <math.h>

#include "attend.h"

sac_status sac_sinusoid_positions(int32_t n_pos, int32_t d, float *out, size_t out_len, char *errmsg,
                                  size_t errmsg_size) {
    if (n_pos < 1 || d < 1)
        return sac_fail_msg(errmsg, errmsg_size, SAC_ERR_ARG, "n_pos and d must be >= 1 (got %d, %d)", n_pos, d);
    sac_status st = sac_check_len(errmsg, errmsg_size, "out", out, out_len, (uint64_t)n_pos, (uint64_t)d, 1);
    if (st) return st;
    for (int32_t p = 0; p < n_pos; p++)
        for (int32_t c = 0; c < d; c++) {
            /* columns 2i and 2i+1 share the frequency 10000^(−2i/d) */
            const double angle = p * pow(10000.0, -(double)(c - c % 2) / (double)d);
            out[(int64_t)p * d + c] = (float)(c % 2 ? cos(angle) : sin(angle));
        }
    return SAC_OK;
}
