/* reference.c — the float64 reference forward pass (see reference.h). Written from the
 * format and architecture notes alone; it shares no code with src/. */
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double half_to_double(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0) v = ldexp(mant, -24);
    else if (exp == 31) v = mant ? NAN : INFINITY;
    else v = ldexp(1024 + mant, exp - 25);
    return sign ? -v : v;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

void ref_dequantize(uint32_t type, const uint8_t *b, int64_t n, double *out) {
    switch (type) {
    case 0: /* F32 */
        for (int64_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, b + 4 * i, 4);
            out[i] = f;
        }
        break;
    case 1: /* F16 */
        for (int64_t i = 0; i < n; i++) out[i] = half_to_double(le16(b + 2 * i));
        break;
    case 8: /* Q8_0: f16 scale, 32 int8 */
        for (int64_t blk = 0; blk < n / 32; blk++) {
            const uint8_t *p = b + 34 * blk;
            double d = half_to_double(le16(p));
            for (int j = 0; j < 32; j++) out[blk * 32 + j] = d * (int8_t)p[2 + j];
        }
        break;
    case 2: /* Q4_0: f16 scale, 16 bytes; low nibbles first half, high nibbles second */
        for (int64_t blk = 0; blk < n / 32; blk++) {
            const uint8_t *p = b + 18 * blk;
            double d = half_to_double(le16(p));
            for (int j = 0; j < 16; j++) {
                out[blk * 32 + j] = d * ((p[2 + j] & 0x0f) - 8);
                out[blk * 32 + j + 16] = d * ((p[2 + j] >> 4) - 8);
            }
        }
        break;
    default: fprintf(stderr, "ref_dequantize: type %u\n", type); abort();
    }
}

/* ------------------------------------------------------------------------------------------ */

static const double *W(const ref_model *m, const char *fmt, int layer) {
    char name[64];
    snprintf(name, sizeof name, fmt, layer);
    const ref_tensor *t = ref_find(m, name);
    return t ? t->v : NULL;
}

/* y[o] = sum_i w[o][i] x[i] (+ b[o]) */
static void linear(double *y, const double *w, const double *b, const double *x, int n_in, int n_out) {
    for (int o = 0; o < n_out; o++) {
        double s = b ? b[o] : 0.0;
        for (int i = 0; i < n_in; i++) s += w[(size_t)o * n_in + i] * x[i];
        y[o] = s;
    }
}

static void norm(const ref_model *m, double *out, const double *x, const double *w, const double *b) {
    int E = m->spec.n_embd;
    if (!strcmp(m->spec.arch, "gpt2")) {
        double mean = 0, var = 0;
        for (int i = 0; i < E; i++) mean += x[i];
        mean /= E;
        for (int i = 0; i < E; i++) var += (x[i] - mean) * (x[i] - mean);
        var /= E;
        for (int i = 0; i < E; i++) out[i] = (x[i] - mean) / sqrt(var + m->spec.eps) * w[i] + b[i];
    } else {
        double ss = 0;
        for (int i = 0; i < E; i++) ss += x[i] * x[i];
        for (int i = 0; i < E; i++) out[i] = x[i] / sqrt(ss / E + m->spec.eps) * w[i];
    }
}

/* Rotate consecutive pairs of the first rope_dim values of a head by pos · base^(−2i/rope_dim). */
static void rope(const ref_model *m, double *head, int pos) {
    for (int i = 0; i < m->spec.rope_dim / 2; i++) {
        double theta = pos * pow(m->spec.rope_base, -2.0 * i / m->spec.rope_dim);
        double a = head[2 * i], b = head[2 * i + 1];
        head[2 * i] = a * cos(theta) - b * sin(theta);
        head[2 * i + 1] = a * sin(theta) + b * cos(theta);
    }
}

void ref_forward(const ref_model *m, const int32_t *tokens, int n, const uint8_t *key_mask, double *logits,
                 double *probs) {
    const test_model_spec *s = &m->spec;
    const int gpt2 = !strcmp(s->arch, "gpt2");
    const int E = s->n_embd, F = s->n_ff, H = s->n_head, HKV = s->n_head_kv, hd = E / H, KV = HKV * hd;
    double *x = calloc((size_t)n * E, sizeof *x), *xn = calloc(E, sizeof *xn);
    double *q = calloc((size_t)n * E, sizeof *q), *k = calloc((size_t)n * KV, sizeof *k);
    double *v = calloc((size_t)n * KV, sizeof *v), *att = calloc((size_t)n * E, sizeof *att);
    double *tmp = calloc((size_t)3 * E + F, sizeof *tmp), *h1 = calloc(F, sizeof *h1), *h2 = calloc(F, sizeof *h2);
    double *p = calloc(n, sizeof *p);
    const double *embd = W(m, "token_embd.weight", 0);

    for (int t = 0; t < n; t++)
        for (int i = 0; i < E; i++)
            x[t * E + i] = embd[(size_t)tokens[t] * E + i] + (gpt2 ? W(m, "position_embd.weight", 0)[t * E + i] : 0);

    for (int l = 0; l < s->n_layer; l++) {
        /* projections of every position */
        for (int t = 0; t < n; t++) {
            norm(m, xn, x + t * E, W(m, "blk.%d.attn_norm.weight", l), W(m, "blk.%d.attn_norm.bias", l));
            if (gpt2) {
                linear(tmp, W(m, "blk.%d.attn_qkv.weight", l), W(m, "blk.%d.attn_qkv.bias", l), xn, E, 3 * E);
                memcpy(q + t * E, tmp, E * sizeof *tmp);
                memcpy(k + t * KV, tmp + E, E * sizeof *tmp);
                memcpy(v + t * KV, tmp + 2 * E, E * sizeof *tmp);
            } else {
                linear(q + t * E, W(m, "blk.%d.attn_q.weight", l), NULL, xn, E, E);
                linear(k + t * KV, W(m, "blk.%d.attn_k.weight", l), NULL, xn, E, KV);
                linear(v + t * KV, W(m, "blk.%d.attn_v.weight", l), NULL, xn, E, KV);
                for (int h = 0; h < H; h++) rope(m, q + t * E + h * hd, t);
                for (int h = 0; h < HKV; h++) rope(m, k + t * KV + h * hd, t);
            }
        }
        /* causal attention, with padding keys hidden */
        for (int h = 0; h < H; h++) {
            int kvh = h / (H / HKV);
            for (int t = 0; t < n; t++) {
                double max = -INFINITY, sum = 0;
                for (int j = 0; j <= t; j++) {
                    int visible = j == t || !key_mask || key_mask[j];
                    double sc = 0;
                    for (int d = 0; d < hd; d++) sc += q[t * E + h * hd + d] * k[j * KV + kvh * hd + d];
                    p[j] = visible ? sc / sqrt(hd) : -INFINITY;
                    if (p[j] > max) max = p[j];
                }
                for (int j = 0; j <= t; j++) sum += (p[j] = exp(p[j] - max));
                for (int d = 0; d < hd; d++) att[t * E + h * hd + d] = 0;
                for (int j = 0; j <= t; j++) {
                    p[j] /= sum;
                    for (int d = 0; d < hd; d++) att[t * E + h * hd + d] += p[j] * v[j * KV + kvh * hd + d];
                    if (probs) probs[(((size_t)l * H + h) * n + t) * n + j] = p[j];
                }
                if (probs)
                    for (int j = t + 1; j < n; j++) probs[(((size_t)l * H + h) * n + t) * n + j] = 0;
            }
        }
        for (int t = 0; t < n; t++) {
            linear(tmp, W(m, "blk.%d.attn_output.weight", l), gpt2 ? W(m, "blk.%d.attn_output.bias", l) : NULL,
                   att + t * E, E, E);
            for (int i = 0; i < E; i++) x[t * E + i] += tmp[i];
            norm(m, xn, x + t * E, W(m, "blk.%d.ffn_norm.weight", l), W(m, "blk.%d.ffn_norm.bias", l));
            if (gpt2) {
                linear(h1, W(m, "blk.%d.ffn_up.weight", l), W(m, "blk.%d.ffn_up.bias", l), xn, E, F);
                for (int i = 0; i < F; i++)
                    h1[i] = 0.5 * h1[i] * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (h1[i] + 0.044715 * h1[i] * h1[i] * h1[i])));
                linear(tmp, W(m, "blk.%d.ffn_down.weight", l), W(m, "blk.%d.ffn_down.bias", l), h1, F, E);
            } else {
                linear(h1, W(m, "blk.%d.ffn_gate.weight", l), NULL, xn, E, F);
                linear(h2, W(m, "blk.%d.ffn_up.weight", l), NULL, xn, E, F);
                for (int i = 0; i < F; i++) h1[i] = h1[i] / (1 + exp(-h1[i])) * h2[i];
                linear(tmp, W(m, "blk.%d.ffn_down.weight", l), NULL, h1, F, E);
            }
            for (int i = 0; i < E; i++) x[t * E + i] += tmp[i];
        }
    }
    const double *out_w = W(m, "output.weight", 0) ? W(m, "output.weight", 0) : embd;
    for (int t = 0; t < n; t++) {
        norm(m, xn, x + t * E, W(m, "output_norm.weight", 0), W(m, "output_norm.bias", 0));
        linear(logits + (size_t)t * s->n_vocab, out_w, NULL, xn, E, s->n_vocab);
    }
    free(x); free(xn); free(q); free(k); free(v); free(att); free(tmp); free(h1); free(h2); free(p);
}
