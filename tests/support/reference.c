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
    case 30: /* BF16: the high half of an f32 */
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)le16(b + 2 * i) << 16;
            float f;
            memcpy(&f, &u, 4);
            out[i] = f;
        }
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
    case 6: /* Q5_0: f16 scale, 32 fifth bits, 16 bytes of nibbles as Q4_0; levels - 16 */
        for (int64_t blk = 0; blk < n / 32; blk++) {
            const uint8_t *p = b + 22 * blk;
            double d = half_to_double(le16(p));
            uint32_t qh = (uint32_t)p[2] | (uint32_t)p[3] << 8 | (uint32_t)p[4] << 16 | (uint32_t)p[5] << 24;
            for (int j = 0; j < 16; j++) {
                int q0 = (p[6 + j] & 0x0f) | (int)((qh >> j) & 1) << 4;
                int q1 = (p[6 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
                out[blk * 32 + j] = d * (q0 - 16);
                out[blk * 32 + j + 16] = d * (q1 - 16);
            }
        }
        break;
    case 3: /* Q4_1: f16 d, f16 m, 16 bytes of nibbles; q d + m */
    case 7: /* Q5_1: f16 d, f16 m, 32 fifth bits, 16 bytes of nibbles */
        for (int64_t blk = 0; blk < n / 32; blk++) {
            const uint8_t *p = b + (type == 3 ? 20 : 24) * blk, *qs = p + (type == 3 ? 4 : 8);
            double d = half_to_double(le16(p)), m = half_to_double(le16(p + 2));
            uint32_t qh = type == 3 ? 0 : (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
            for (int j = 0; j < 16; j++) {
                int q0 = (qs[j] & 0x0f) | (int)((qh >> j) & 1) << 4;
                int q1 = (qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
                out[blk * 32 + j] = d * q0 + m;
                out[blk * 32 + j + 16] = d * q1 + m;
            }
        }
        break;
    case 12: /* Q4_K: f16 d, dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles */
    case 13: /* Q5_K: the same with 32 bytes of fifth bits (value l of sub-block s: bit s of byte l) before the nibbles */
        for (int64_t blk = 0; blk < n / 256; blk++) {
            const uint8_t *p = b + (type == 12 ? 144 : 176) * blk, *sm = p + 4, *qs = p + (type == 12 ? 16 : 48);
            double d = half_to_double(le16(p)), dmin = half_to_double(le16(p + 2));
            for (int sub = 0; sub < 8; sub++) {
                int sc = sub < 4 ? sm[sub] & 63 : (sm[sub + 4] & 15) | (sm[sub - 4] >> 6) << 4;
                int m = sub < 4 ? sm[sub + 4] & 63 : (sm[sub + 4] >> 4) | (sm[sub] >> 6) << 4;
                for (int l = 0; l < 32; l++) {
                    int byte = qs[32 * (sub / 2) + l], q = sub % 2 ? byte >> 4 : byte & 15;
                    if (type == 13) q |= ((p[16 + l] >> sub) & 1) << 4;
                    out[blk * 256 + 32 * sub + l] = d * sc * q - dmin * m;
                }
            }
        }
        break;
    case 10: /* Q2_K: 16 scale/min nibble pairs, 64 bytes of 2-bit levels, f16 d, dmin */
    case 11: /* Q3_K: 32 bytes of third bits, 64 of 2-bit levels, 12 of 6-bit scales, f16 d */
        for (int64_t blk = 0; blk < n / 256; blk++) {
            const uint8_t *p = b + (type == 10 ? 84 : 110) * blk;
            const uint8_t *qs = p + (type == 10 ? 16 : 32), *sc = p + (type == 10 ? 0 : 96);
            double d = half_to_double(le16(p + (type == 10 ? 80 : 108))), dmin = type == 10 ? half_to_double(le16(p + 82)) : 0;
            for (int j = 0; j < 256; j++) {
                int q = (qs[32 * (j / 128) + j % 32] >> (2 * ((j % 128) / 32))) & 3, g = j / 16;
                if (type == 10) {
                    out[blk * 256 + j] = d * (sc[g] & 15) * q - dmin * (sc[g] >> 4);
                } else {
                    int s6 = ((g < 8 ? sc[g] & 15 : sc[g - 8] >> 4) | ((sc[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
                    out[blk * 256 + j] = d * s6 * (q - ((p[j % 32] >> (j / 32)) & 1 ? 0 : 4));
                }
            }
        }
        break;
    case 14: /* Q6_K: 128 bytes of low nibbles, 64 of 2-bit highs, 16 int8 scales, f16 d */
        for (int64_t blk = 0; blk < n / 256; blk++) {
            const uint8_t *p = b + 210 * blk;
            double d = half_to_double(le16(p + 208));
            for (int j = 0; j < 256; j++) {
                int h = j / 128, k = (j % 128) / 32, l = j % 32;
                int ql = p[64 * h + l + (k % 2) * 32], qh = p[128 + 32 * h + l];
                int q = ((k < 2 ? ql & 15 : ql >> 4) | ((qh >> (2 * k)) & 3) << 4) - 32;
                out[blk * 256 + j] = d * (int8_t)p[192 + j / 16] * q;
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
    if (!strcmp(m->spec.arch, "gpt2") || !strcmp(m->spec.arch, "encdec")) { /* LayerNorm */
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

/* GELU, tanh approximation (GPT-2, gemma) */
static double gelu_tanh(double x) {
    return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

/* Rotate pairs of the first rope_dim values of a head by angle_i(pos): pair i is (2i, 2i+1),
 * or (i, i + rope_dim/2) for qwen2, gemma and phi3 (GPT-NeoX's layout). The frequency base^(−2i/rope_dim) is
 * divided by rope_freqs.weight[i] when the file has it, and linear scaling divides the
 * position by the factor. */
static void rope(const ref_model *m, double *head, int pos) {
    const char *arch = m->spec.arch;
    const int half = m->spec.rope_dim / 2;
    const int neox = !strcmp(arch, "qwen2") || !strcmp(arch, "gemma") || !strcmp(arch, "phi3");
    const double *factors = W(m, "rope_freqs.weight", 0);
    const double p = m->spec.rope_scale > 0 ? pos / (double)m->spec.rope_scale : pos;
    for (int i = 0; i < half; i++) {
        double freq = 1.0 / pow(m->spec.rope_base, (2.0 * i) / m->spec.rope_dim);
        if (factors) freq /= factors[i];
        const double theta = p * freq;
        const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
        double a = head[i0], b = head[i1];
        head[i0] = a * cos(theta) - b * sin(theta);
        head[i1] = a * sin(theta) + b * cos(theta);
    }
}

/* Multi-head attention of nq queries over nk keys (rows of width E = H × hd for q and out,
 * KV = HKV × hd for k and v). causal: query t sees keys 0..t. A key j is hidden when
 * mask[j] == 0, except the query's own position (j == t) when own_visible. probs, when not
 * NULL, receives [H][nq][nk] (0 for keys a query does not see). */
ref_probe ref_probe_opts;
static double *ref_scores_now; /* the layer's slice of ref_probe_opts.scores while ref_forward runs */

/* out (hd values) = Σ_j p_j v_j over keys [0, n) (rows `stride` apart), with the weights a q8
 * cache's value pass uses: for each block of 32 values and group of 8 keys from key 0, each key's
 * c = p × (its block's scale: the block's largest |value| / 127) to the nearest multiple of M /
 * 32767, M the group's largest |c|. */
static void mix_q8_weights(const double *p, const double *v, int stride, int n, int hd, double *out) {
    for (int i0 = 0; i0 < hd; i0 += 32)
        for (int g0 = 0; g0 < n; g0 += 8) {
            const int bn = hd - i0 < 32 ? hd - i0 : 32, g1 = g0 + 8 < n ? g0 + 8 : n;
            double c[8], scale[8], m = 0;
            for (int j = g0; j < g1; j++) {
                scale[j - g0] = 0;
                for (int i = i0; i < i0 + bn; i++) scale[j - g0] = fmax(scale[j - g0], fabs(v[(size_t)j * stride + i]) / 127);
                c[j - g0] = p[j] * scale[j - g0];
                m = fmax(m, fabs(c[j - g0]));
            }
            for (int j = g0; j < g1; j++) {
                if (scale[j - g0] == 0 || m == 0) continue;
                const double w = nearbyint(c[j - g0] / (m / 32767)) * (m / 32767) / scale[j - g0];
                for (int i = i0; i < i0 + bn; i++) out[i] += w * v[(size_t)j * stride + i];
            }
        }
}

static void attention(const double *q, const double *k, const double *v, int nq, int nk, int H, int HKV, int hd,
                      int causal, const uint8_t *mask, int own_visible, int q8_weights, double *out, double *probs) {
    const int E = H * hd, KV = HKV * hd;
    double *p = calloc((size_t)nk, sizeof *p);
    for (int h = 0; h < H; h++) {
        int kvh = h / (H / HKV);
        for (int t = 0; t < nq; t++) {
            int last = causal ? t : nk - 1;
            double max = -INFINITY, sum = 0;
            for (int j = 0; j <= last; j++) {
                int visible = !mask || mask[j] || (own_visible && j == t);
                double sc = 0;
                for (int d = 0; d < hd; d++) sc += q[t * E + h * hd + d] * k[j * KV + kvh * hd + d];
                p[j] = visible ? sc / sqrt(hd) : -INFINITY;
                if (p[j] > max) max = p[j];
            }
            for (int j = 0; ref_scores_now && j < nk; j++)
                ref_scores_now[((size_t)h * nq + t) * nk + j] = j <= last ? p[j] : -INFINITY;
            for (int j = 0; j <= last; j++) sum += (p[j] = exp(p[j] - max));
            for (int d = 0; d < hd; d++) out[t * E + h * hd + d] = 0;
            for (int j = 0; j < nk; j++) {
                double pj = j <= last ? p[j] / sum : 0;
                for (int d = 0; d < hd && j <= last && !q8_weights; d++) out[t * E + h * hd + d] += pj * v[j * KV + kvh * hd + d];
                if (probs) probs[((size_t)h * nq + t) * nk + j] = pj;
                p[j] = pj;
            }
            if (q8_weights) mix_q8_weights(p, v + kvh * hd, KV, last + 1, hd, out + t * E + h * hd);
        }
    }
    free(p);
}

/* x to the nearest bfloat16 (8 significant bits), ties to even: nearbyint's default mode. */
static double round_bf16(double x) {
    if (x == 0 || !isfinite(x)) return x;
    int e;
    const double f = frexp(x, &e); /* x = f · 2^e, 0.5 <= |f| < 1 */
    return ldexp(nearbyint(ldexp(f, 8)), e - 8);
}

/* Rows of hd values, each rounded as a q8 KV cache rounds a head's row: blocks of 32 values,
 * each to multiples of its largest |value| / 127, to the nearest (ties to even). */
static void round_q8_rows(double *x, int rows, int hd) {
    for (int r = 0; r < rows; r++)
        for (int i0 = 0; i0 < hd; i0 += 32) {
            double *b = x + (size_t)r * hd + i0, amax = 0;
            const int n = hd - i0 < 32 ? hd - i0 : 32;
            for (int i = 0; i < n; i++) amax = fmax(amax, fabs(b[i]));
            for (int i = 0; amax > 0 && i < n; i++) b[i] = amax / 127 * nearbyint(b[i] / (amax / 127));
        }
}

void ref_forward(const ref_model *m, const int32_t *tokens, int n, const uint8_t *key_mask, double *logits,
                 double *probs) {
    const test_model_spec *s = &m->spec;
    const int gpt2 = !strcmp(s->arch, "gpt2"), gemma = !strcmp(s->arch, "gemma"), phi3 = !strcmp(s->arch, "phi3");
    const int E = s->n_embd, F = s->n_ff, H = s->n_head, HKV = s->n_head_kv, hd = E / H, KV = HKV * hd;
    double *x = calloc((size_t)n * E, sizeof *x), *xn = calloc(E, sizeof *xn);
    double *q = calloc((size_t)n * E, sizeof *q), *k = calloc((size_t)n * KV, sizeof *k);
    double *v = calloc((size_t)n * KV, sizeof *v), *att = calloc((size_t)n * E, sizeof *att);
    double *tmp = calloc((size_t)3 * E + 2 * F, sizeof *tmp), *h1 = calloc(F, sizeof *h1), *h2 = calloc(F, sizeof *h2);
    const double *embd = W(m, "token_embd.weight", 0);

    for (int t = 0; t < n; t++)
        for (int i = 0; i < E; i++)
            x[t * E + i] = embd[(size_t)tokens[t] * E + i] * (gemma ? sqrt(E) : 1) +
                           (gpt2 ? W(m, "position_embd.weight", 0)[t * E + i] : 0);

    for (int l = 0; l < s->n_layer; l++) {
        /* projections of every position */
        for (int t = 0; t < n; t++) {
            norm(m, xn, x + t * E, W(m, "blk.%d.attn_norm.weight", l), W(m, "blk.%d.attn_norm.bias", l));
            if (gpt2) {
                linear(tmp, W(m, "blk.%d.attn_qkv.weight", l), W(m, "blk.%d.attn_qkv.bias", l), xn, E, 3 * E);
                memcpy(q + t * E, tmp, E * sizeof *tmp);
                memcpy(k + t * KV, tmp + E, E * sizeof *tmp);
                memcpy(v + t * KV, tmp + 2 * E, E * sizeof *tmp);
            } else if (phi3) { /* fused Q|K|V rows */
                linear(tmp, W(m, "blk.%d.attn_qkv.weight", l), NULL, xn, E, E + 2 * KV);
                memcpy(q + t * E, tmp, E * sizeof *tmp);
                memcpy(k + t * KV, tmp + E, KV * sizeof *tmp);
                memcpy(v + t * KV, tmp + E + KV, KV * sizeof *tmp);
            } else {
                /* biases: qwen2's, or a llama file's optional ones (NULL when absent) */
                linear(q + t * E, W(m, "blk.%d.attn_q.weight", l), W(m, "blk.%d.attn_q.bias", l), xn, E, E);
                linear(k + t * KV, W(m, "blk.%d.attn_k.weight", l), W(m, "blk.%d.attn_k.bias", l), xn, E, KV);
                linear(v + t * KV, W(m, "blk.%d.attn_v.weight", l), W(m, "blk.%d.attn_v.bias", l), xn, E, KV);
            }
            if (!gpt2) {
                for (int h = 0; h < H; h++) rope(m, q + t * E + h * hd, t);
                for (int h = 0; h < HKV; h++) rope(m, k + t * KV + h * hd, t);
            }
        }
        for (int i = 0; ref_probe_opts.kv_bf16 && i < n * KV; i++) k[i] = round_bf16(k[i]), v[i] = round_bf16(v[i]);
        if (ref_probe_opts.kv_q8) { /* the query too: a q8 cache's scores are integer dots */
            round_q8_rows(q, n * H, hd);
            round_q8_rows(k, n * HKV, hd);
            round_q8_rows(v, n * HKV, hd);
        }
        /* causal attention, with padding keys hidden */
        ref_scores_now = ref_probe_opts.scores ? ref_probe_opts.scores + (size_t)l * H * n * n : NULL;
        attention(q, k, v, n, n, H, HKV, hd, 1, key_mask, 1, ref_probe_opts.kv_q8, att,
                  probs ? probs + (size_t)l * H * n * n : NULL);
        ref_scores_now = NULL;
        for (int t = 0; ref_probe_opts.ablate && t < n; t++)
            for (int h = 0; h < H; h++)
                if (ref_probe_opts.ablate[l * H + h]) memset(att + t * E + h * hd, 0, hd * sizeof *att);
        for (int t = 0; t < n; t++) {
            linear(tmp, W(m, "blk.%d.attn_output.weight", l), W(m, "blk.%d.attn_output.bias", l),
                   att + t * E, E, E);
            for (int i = 0; i < E; i++) x[t * E + i] += tmp[i];
            norm(m, xn, x + t * E, W(m, "blk.%d.ffn_norm.weight", l), W(m, "blk.%d.ffn_norm.bias", l));
            if (gpt2) {
                linear(h1, W(m, "blk.%d.ffn_up.weight", l), W(m, "blk.%d.ffn_up.bias", l), xn, E, F);
                for (int i = 0; i < F; i++) h1[i] = gelu_tanh(h1[i]);
                linear(tmp, W(m, "blk.%d.ffn_down.weight", l), W(m, "blk.%d.ffn_down.bias", l), h1, F, E);
            } else if (phi3) { /* fused: silu(first F outputs) ⊙ last F outputs */
                linear(tmp, W(m, "blk.%d.ffn_up.weight", l), NULL, xn, E, 2 * F);
                for (int i = 0; i < F; i++) h1[i] = tmp[i] / (1 + exp(-tmp[i])) * tmp[F + i];
                linear(tmp, W(m, "blk.%d.ffn_down.weight", l), NULL, h1, F, E);
            } else {
                linear(h1, W(m, "blk.%d.ffn_gate.weight", l), NULL, xn, E, F);
                linear(h2, W(m, "blk.%d.ffn_up.weight", l), NULL, xn, E, F);
                /* SwiGLU; gemma gates with GELU */
                for (int i = 0; i < F; i++) h1[i] = (gemma ? gelu_tanh(h1[i]) : h1[i] / (1 + exp(-h1[i]))) * h2[i];
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
    free(x); free(xn); free(q); free(k); free(v); free(att); free(tmp); free(h1); free(h2);
}

/* ------------------------------------------------------------------------------------------ */
/* Encoder–decoder ("encdec")                                                                  */
/* ------------------------------------------------------------------------------------------ */

static void layernorm_named(const ref_model *m, double *out, const double *x, const char *w, const char *b, int l) {
    norm(m, out, x, W(m, w, l), W(m, b, l));
}

/* x (n rows) + sinusoid positions from 0 */
static void embed_sinusoid(const ref_model *m, const int32_t *tokens, int n, double *x) {
    const int E = m->spec.n_embd;
    const double *embd = W(m, "token_embd.weight", 0);
    for (int t = 0; t < n; t++)
        for (int i = 0; i < E / 2; i++) {
            double angle = t / pow(10000.0, 2.0 * i / E);
            x[t * E + 2 * i] = embd[(size_t)tokens[t] * E + 2 * i] + sin(angle);
            x[t * E + 2 * i + 1] = embd[(size_t)tokens[t] * E + 2 * i + 1] + cos(angle);
        }
}

/* One GPT-2-style block named "<stack>.blk.<l>." over n rows of x. Decoder blocks (mem != NULL)
 * add cross-attention to n_mem rows of encoder output between self-attention and the MLP. */
static void encdec_block(const ref_model *m, const char *stack, int l, double *x, int n, int causal,
                         const uint8_t *mask, const double *mem, int n_mem, const uint8_t *mem_mask,
                         double *self_probs, double *cross_probs) {
    const int E = m->spec.n_embd, F = m->spec.n_ff, H = m->spec.n_head, hd = E / H;
    char w[96], b[96];
    double *xn = calloc((size_t)n * E, sizeof *xn), *qkv = calloc(3 * (size_t)E, sizeof *qkv);
    double *q = calloc((size_t)n * E, sizeof *q), *k = calloc((size_t)(n > n_mem ? n : n_mem) * E, sizeof *k);
    double *v = calloc((size_t)(n > n_mem ? n : n_mem) * E, sizeof *v), *att = calloc((size_t)n * E, sizeof *att);
    double *tmp = calloc((size_t)E + F, sizeof *tmp), *h1 = calloc((size_t)F, sizeof *h1);
#define NAMES(s) (snprintf(w, sizeof w, "%s.blk.%%d." s ".weight", stack), snprintf(b, sizeof b, "%s.blk.%%d." s ".bias", stack))
    NAMES("attn_norm");
    for (int t = 0; t < n; t++) layernorm_named(m, xn + t * E, x + t * E, w, b, l);
    NAMES("attn_qkv");
    for (int t = 0; t < n; t++) {
        linear(qkv, W(m, w, l), W(m, b, l), xn + t * E, E, 3 * E);
        memcpy(q + t * E, qkv, E * sizeof *qkv);
        memcpy(k + t * E, qkv + E, E * sizeof *qkv);
        memcpy(v + t * E, qkv + 2 * E, E * sizeof *qkv);
    }
    attention(q, k, v, n, n, H, H, hd, causal, mask, 1, 0, att, self_probs);
    NAMES("attn_output");
    for (int t = 0; t < n; t++) {
        linear(tmp, W(m, w, l), W(m, b, l), att + t * E, E, E);
        for (int i = 0; i < E; i++) x[t * E + i] += tmp[i];
    }
    if (mem) {
        NAMES("cross_attn_norm");
        for (int t = 0; t < n; t++) layernorm_named(m, xn + t * E, x + t * E, w, b, l);
        NAMES("cross_attn_q");
        for (int t = 0; t < n; t++) linear(q + t * E, W(m, w, l), W(m, b, l), xn + t * E, E, E);
        NAMES("cross_attn_kv");
        for (int j = 0; j < n_mem; j++) {
            linear(qkv, W(m, w, l), W(m, b, l), mem + j * E, E, 2 * E);
            memcpy(k + j * E, qkv, E * sizeof *qkv);
            memcpy(v + j * E, qkv + E, E * sizeof *qkv);
        }
        attention(q, k, v, n, n_mem, H, H, hd, 0, mem_mask, 0, 0, att, cross_probs);
        NAMES("cross_attn_output");
        for (int t = 0; t < n; t++) {
            linear(tmp, W(m, w, l), W(m, b, l), att + t * E, E, E);
            for (int i = 0; i < E; i++) x[t * E + i] += tmp[i];
        }
    }
    for (int t = 0; t < n; t++) {
        NAMES("ffn_norm");
        layernorm_named(m, xn, x + t * E, w, b, l);
        NAMES("ffn_up");
        linear(h1, W(m, w, l), W(m, b, l), xn, E, F);
        for (int i = 0; i < F; i++)
            h1[i] = gelu_tanh(h1[i]);
        NAMES("ffn_down");
        linear(tmp, W(m, w, l), W(m, b, l), h1, F, E);
        for (int i = 0; i < E; i++) x[t * E + i] += tmp[i];
    }
#undef NAMES
    free(xn); free(qkv); free(q); free(k); free(v); free(att); free(tmp); free(h1);
}

void ref_encdec_forward(const ref_model *m, const int32_t *src, int n_src, const uint8_t *src_mask,
                        const int32_t *tgt, int n_tgt, double *logits, double *enc_probs, double *self_probs,
                        double *cross_probs) {
    const test_model_spec *s = &m->spec;
    const int E = s->n_embd, H = s->n_head;
    double *mem = calloc((size_t)n_src * E, sizeof *mem), *x = calloc((size_t)n_tgt * E, sizeof *x);
    double *xn = calloc((size_t)E, sizeof *xn);
    embed_sinusoid(m, src, n_src, mem);
    for (int l = 0; l < s->n_enc_layer; l++)
        encdec_block(m, "enc", l, mem, n_src, 0, src_mask, NULL, 0, NULL,
                     enc_probs ? enc_probs + (size_t)l * H * n_src * n_src : NULL, NULL);
    for (int j = 0; j < n_src; j++) {
        layernorm_named(m, xn, mem + j * E, "enc.output_norm.weight", "enc.output_norm.bias", 0);
        memcpy(mem + j * E, xn, E * sizeof *xn);
    }
    embed_sinusoid(m, tgt, n_tgt, x);
    for (int l = 0; l < s->n_layer; l++)
        encdec_block(m, "dec", l, x, n_tgt, 1, NULL, mem, n_src, src_mask,
                     self_probs ? self_probs + (size_t)l * H * n_tgt * n_tgt : NULL,
                     cross_probs ? cross_probs + (size_t)l * H * n_tgt * n_src : NULL);
    const double *out_w = W(m, "output.weight", 0) ? W(m, "output.weight", 0) : W(m, "token_embd.weight", 0);
    for (int t = 0; t < n_tgt; t++) {
        norm(m, xn, x + t * E, W(m, "output_norm.weight", 0), W(m, "output_norm.bias", 0));
        linear(logits + (size_t)t * s->n_vocab, out_w, NULL, xn, E, s->n_vocab);
    }
    free(mem); free(x); free(xn);
}

double ref_rel_error(const float *a, const double *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = fabs(a[i] - b[i]);
        if (!(d <= num)) num = d; /* a NaN makes the error NaN, which no tolerance accepts */
        den = fmax(den, fabs(b[i]));
    }
    return num / den;
}
