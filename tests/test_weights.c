/* test_weights.c — models whose weights are unusual: one matrix stored in another type than
 * the rest (the matmul workspace must cover every matrix), and weights holding NaN or Inf
 * (sac_eval refuses non-finite logits instead of handing them to the sampler). Models are
 * the test models rewritten tensor by tensor with the GGUF writer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf.h"
#include "gguf_writer.h"
#include "model.h"
#include "reference.h"
#include "saccade.h"
#include "types.h"

static const int32_t src[] = {12, 40, 7, 7, 81, 3, 60, 22, 95, 1, 33};
static const int32_t prompt[] = {5, 17, 42, 3, 88, 61, 0, 96, 23, 23, 7, 50, 11, 64, 2, 39, 71, 8, 30, 45};
#define N_SRC ((int)(sizeof src / sizeof *src))
#define N_PROMPT ((int)(sizeof prompt / sizeof *prompt))

/* Copies one metadata entry (the test models hold scalars and strings only). */
static sac_status copy_kv(gguf_writer *w, const gguf_kv *kv, sac_error *err) {
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)kv->key.len, kv->key.data);
    switch (kv->type) {
    case GGUF_TYPE_U32: return sac_gguf_writer_set_u32(w, key, (uint32_t)kv->i64, err);
    case GGUF_TYPE_I32: return sac_gguf_writer_set_i32(w, key, (int32_t)kv->i64, err);
    case GGUF_TYPE_F32: return sac_gguf_writer_set_f32(w, key, (float)kv->f64, err);
    case GGUF_TYPE_BOOL: return sac_gguf_writer_set_bool(w, key, (int)kv->i64, err);
    case GGUF_TYPE_STRING: {
        char *v = malloc(kv->str.len + 1);
        memcpy(v, kv->str.data, kv->str.len);
        v[kv->str.len] = '\0';
        sac_status st = sac_gguf_writer_set_string(w, key, v, err);
        free(v);
        return st;
    }
    default: return sac_fail(err, SAC_ERR_UNSUPPORTED, "copy_kv: key '%s' of type %u", key, kv->type);
    }
}

/* A copy of an all-F32 GGUF file in which tensor `name` is stored as `type`, and value
 * `at` of that tensor is `value` (when at >= 0). 0 on success. */
static int rewrite(const test_model *tm, const char *name, uint32_t type, int64_t at, float value, uint8_t **out,
                   size_t *out_size) {
    gguf_file f;
    sac_error err = {0};
    gguf_writer *w = NULL;
    sac_status st = sac_gguf_parse(&f, tm->bytes, tm->size, &err);
    if (!st) st = sac_gguf_writer_new(&w, &err);
    for (uint64_t i = 0; !st && i < f.n_kv; i++) st = copy_kv(w, &f.kv[i], &err);
    for (uint64_t i = 0; !st && i < f.n_tensors; i++) {
        const gguf_tensor *t = &f.tensors[i];
        const int hit = sac_gguf_string_eq(t->name, name);
        const uint32_t to = hit ? type : t->type;
        const sac_type_traits *tt = sac_type_traits_get(to);
        const int64_t n = (int64_t)t->n_elements;
        float *values = malloc((size_t)n * sizeof *values);
        sac_type_traits_get(t->type)->to_float(t->data, values, n);
        if (hit && at >= 0) values[at] = value;
        const size_t bytes = (size_t)(n / tt->block_size) * tt->type_size;
        void *data = malloc(bytes);
        tt->from_float(values, data, n);
        char tname[128];
        snprintf(tname, sizeof tname, "%.*s", (int)t->name.len, t->name.data);
        int64_t ne[GGUF_MAX_DIMS];
        for (uint32_t d = 0; d < t->n_dims; d++) ne[d] = (int64_t)t->ne[d];
        st = sac_gguf_writer_add_tensor(w, tname, to, t->n_dims, ne, data, bytes, &err);
        free(data);
        free(values);
    }
    if (!st) st = sac_gguf_writer_to_buffer(w, out, out_size, &err);
    CHECK_MSG(st == SAC_OK, "rewriting %s: %s", name, err.msg);
    sac_gguf_writer_free(w);
    sac_gguf_release(&f);
    return st != SAC_OK;
}

/* Runs the model over the prompt (after encoding the source for encdec) with every logit;
 * returns the status and copies the logits into `logits` on success. */
static sac_status run(const uint8_t *bytes, size_t size, const char *arch, float *logits, int n_vocab, char *msg,
                      size_t msg_len) {
    sac_model *m = NULL;
    sac_status st = sac_model_load(bytes, size, 0, &m);
    if (st) {
        snprintf(msg, msg_len, "%s", sac_model_errmsg(m));
        sac_model_free(m);
        return st;
    }
    sac_context_params p = sac_context_default_params();
    p.n_threads = 2;
    sac_context *ctx = NULL;
    st = sac_context_new(m, &p, &ctx);
    if (!st && !strcmp(arch, "encdec")) st = sac_encode(ctx, src, N_SRC, NULL);
    if (!st) st = sac_eval(ctx, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS);
    if (!st) memcpy(logits, sac_logits(ctx, NULL, NULL), (size_t)N_PROMPT * n_vocab * sizeof *logits);
    snprintf(msg, msg_len, "%s", st ? sac_context_errmsg(ctx) : "");
    sac_context_free(ctx);
    sac_model_free(m);
    return st;
}

/* The model with matrix `t` stored as `type` runs, and its logits match the reference
 * computed with the values the file now stores. */
static void check_retyped(test_model *tm, const char *arch, ref_tensor *t, uint32_t type, double *ref, float *logits) {
    const int V = tm->ref.spec.n_vocab;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (rewrite(tm, t->name, type, -1, 0, &bytes, &size)) return;
    char msg[512];
    sac_status st = run(bytes, size, arch, logits, V, msg, sizeof msg);
    free(bytes);
    CHECK_MSG(st == SAC_OK, "%s with %s as %s: %s", arch, t->name, sac_type_name(type), msg);
    if (st != SAC_OK) return;
    const int64_t n = t->ne[0] * t->ne[1];
    const sac_type_traits *tt = sac_type_traits_get(type);
    float *f = malloc((size_t)n * sizeof *f);
    void *q = malloc((size_t)(n / tt->block_size) * tt->type_size);
    double *stored = malloc((size_t)n * sizeof *stored), *orig = t->v;
    for (int64_t j = 0; j < n; j++) f[j] = (float)orig[j];
    tt->from_float(f, q, n);
    ref_dequantize(type, q, n, stored);
    t->v = stored;
    if (!strcmp(arch, "encdec")) ref_encdec_forward(&tm->ref, src, N_SRC, NULL, prompt, N_PROMPT, ref, NULL, NULL, NULL);
    else ref_forward(&tm->ref, prompt, N_PROMPT, NULL, ref, NULL);
    t->v = orig;
    double err = ref_rel_error(logits, ref, (size_t)N_PROMPT * V);
    CHECK_MSG(err <= 3e-2, "%s with %s as %s: relative error %.3g", arch, t->name, sac_type_name(type), err);
    free(stored);
    free(q);
    free(f);
}

/* Each matrix of an F32 model in turn stored as another type, cycling through the types (the
 * others stay F32): the converted activations of that one matrix must fit the workspace (an
 * llama file with only attn_v as Q8_0 overflowed it). Then the same at width 256, where the
 * K-quants join the cycle: real files mix Q5_0, Q8_0, Q4_K and Q6_K like this. */
static void test_each_matrix_retyped(void) {
    const char *archs[] = {"gpt2", "llama", "encdec"};
    const uint32_t types[] = {SAC_TYPE_Q8_0, SAC_TYPE_Q4_0, SAC_TYPE_Q5_0, SAC_TYPE_Q4_1, SAC_TYPE_Q5_1,
                              SAC_TYPE_BF16, SAC_TYPE_Q4_K, SAC_TYPE_Q6_K, SAC_TYPE_Q2_K, SAC_TYPE_Q3_K,
                              SAC_TYPE_Q5_K};
    for (int a = 0; a < 6; a++) {
        const int wide = a >= 3, n_types = wide ? 11 : 2;
        test_model tm;
        test_model_spec s = test_spec(archs[a % 3], SAC_TYPE_F32);
        if (wide) {
            s.n_embd = 256;
            s.n_ff = 512;
        }
        CHECK(test_model_make(&s, &tm) == 0);
        double *ref = malloc((size_t)N_PROMPT * s.n_vocab * sizeof *ref);
        float *logits = malloc((size_t)N_PROMPT * s.n_vocab * sizeof *logits);
        int n_matrices = 0;
        for (int i = 0; i < tm.ref.n; i++) {
            if (tm.ref.t[i].ne[1] == 1) continue;
            n_matrices++; /* llama's blk.0.attn_v is the 4th: Q8_0 at width 64, the case */
            check_retyped(&tm, archs[a % 3], &tm.ref.t[i], types[n_matrices % n_types], ref, logits);
        }
        CHECK_MSG(n_matrices == (a % 3 == 0 ? 11 : a % 3 == 1 ? 16 : 24), "%s: %d matrices", archs[a % 3], n_matrices);
        free(logits);
        free(ref);
        test_model_free(&tm);
    }
}

/* A value of an F32 matrix of a loaded model, changed in place. The loader refuses a file with
 * NaN or Inf weights by name (tests/test_load.c), so this is how a non-finite value reaches the
 * forward pass here, as an overflow would in a real model. */
static void poke(const sac_matrix *w, int64_t at, float value) { ((float *)(uintptr_t)w->data)[at] = value; }

/* A non-finite value in the forward pass: the eval that would return a non-finite logit fails
 * with SAC_ERR_MODEL and leaves the context as it was. */
static void test_non_finite_logits_fail_the_eval(void) {
    test_model tm;
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    CHECK(test_model_make(&s, &tm) == 0);
    const float bad[] = {NAN, INFINITY};
    for (int b = 0; b < 3; b++) {
        uint8_t *bytes = malloc(tm.size);
        memcpy(bytes, tm.bytes, tm.size);
        sac_model *m = NULL;
        CHECK(sac_model_load(bytes, tm.size, SAC_LOAD_TAKE_OWNERSHIP, &m) == SAC_OK);
        if (b == 2) {
            /* one bad value in the output projection: only logit 0 is NaN, and that is enough */
            poke(&m->output, 0, NAN);
            sac_context *ctx = NULL;
            CHECK(sac_context_new(m, NULL, &ctx) == SAC_OK);
            CHECK(sac_eval(ctx, prompt, N_PROMPT, NULL, SAC_EVAL_ALL_LOGITS) == SAC_ERR_MODEL);
            CHECK_MSG(strstr(sac_context_errmsg(ctx), "non-finite logits (NaN or Inf) for token 0 (position 0)") != NULL,
                      "%s", sac_context_errmsg(ctx));
            sac_context_free(ctx);
            sac_model_free(m);
            continue;
        }
        /* token 5's embedding row holds one bad value */
        poke(&m->token_embd, 5 * (int64_t)s.n_embd + 3, bad[b]);
        sac_context *ctx = NULL;
        CHECK(sac_context_new(m, NULL, &ctx) == SAC_OK);
        const int32_t clean[] = {1, 2, 3}, dirty[] = {1, 2, 5, 3};
        CHECK(sac_eval(ctx, clean, 3, NULL, 0) == SAC_OK);
        CHECK(sac_eval(ctx, dirty, 4, NULL, SAC_EVAL_ALL_LOGITS) == SAC_ERR_MODEL);
        CHECK_MSG(strstr(sac_context_errmsg(ctx), "non-finite logits (NaN or Inf) for token 2 (position 5)") != NULL,
                  "%s", sac_context_errmsg(ctx));
        CHECK(sac_context_n_past(ctx) == 3);
        int32_t rows = -1, token;
        CHECK(sac_logits(ctx, &rows, NULL) == NULL && rows == 0);
        CHECK(sac_sample(ctx, &token) != SAC_OK);
        /* the last token alone is what is checked without SAC_EVAL_ALL_LOGITS */
        CHECK(sac_eval(ctx, dirty, 4, NULL, 0) == SAC_ERR_MODEL);
        CHECK(strstr(sac_context_errmsg(ctx), "for token 3 (position 6)") != NULL);
        /* the context is still usable for clean tokens */
        CHECK(sac_eval(ctx, clean, 3, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK && sac_context_n_past(ctx) == 6);
        const float *lg = sac_logits(ctx, &rows, NULL);
        int finite = 1;
        for (int i = 0; i < rows * s.n_vocab; i++) finite &= isfinite(lg[i]) != 0;
        CHECK(rows == 3 && finite);
        sac_context_free(ctx);
        sac_model_free(m);
    }
    test_model_free(&tm);
}

int main(void) {
    RUN(test_each_matrix_retyped);
    RUN(test_non_finite_logits_fail_the_eval);
    return check_summary("test_weights");
}
