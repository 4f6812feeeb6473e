/* test_split.c — models split over several GGUF files (llama.cpp's gguf-split layout): the
 * shards load into one model that computes exactly what the whole file computes, and shards
 * that do not belong together are refused by shard and key.
 *
 * Shards are made here from a small random test model: every metadata entry goes to the first,
 * the tensors are dealt out in order, and every shard gets split.no / split.count /
 * split.tensors.count (u16, u16, i32, as gguf-split writes them). */
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf.h"
#include "gguf_copy.h"
#include "gguf_writer.h"
#include "saccade.h"
#include "test_models.h"

typedef struct shard {
    uint8_t *bytes;
    size_t size;
} shard;


typedef struct split_spec {
    int n;               /* shards */
    const int *first;    /* shard i holds tensors [first[i], first[i + 1]); first[n] = all of them */
    int no_delta;        /* added to every shard's split.no (out of order when not 0) */
    int count_delta;     /* added to every shard's split.count */
    int tensors_delta;   /* added to the last shard's split.tensors.count */
    int repeat;          /* 1: the last shard also holds the first tensor again */
    int tokenizer;       /* 1: the first shard also holds a char tokenizer of CHARS */
} split_spec;

static const char *const CHARS[] = {"a", "b", "c", " "};

/* Splits `tm` as `s` says into out[0..s->n). */
static void split(const test_model *tm, const split_spec *s, shard *out) {
    gguf_file f;
    sac_error err = {0};
    CHECK(sac_gguf_parse(&f, tm->bytes, tm->size, &err) == SAC_OK);
    for (int i = 0; i < s->n; i++) {
        gguf_writer *w;
        CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
        if (i == 0)
            for (uint64_t k = 0; k < f.n_kv; k++) CHECK(test_copy_kv(w, &f.kv[k]) == 0);
        if (i == 0 && s->tokenizer) {
            sac_gguf_writer_set_string(w, "tokenizer.ggml.model", "char", &err);
            sac_gguf_writer_set_string_array(w, "tokenizer.ggml.tokens", CHARS, 4, &err);
        }
        sac_gguf_writer_set_u16(w, "split.no", (uint16_t)(i + s->no_delta), &err);
        sac_gguf_writer_set_u16(w, "split.count", (uint16_t)(s->n + s->count_delta), &err);
        sac_gguf_writer_set_i32(w, "split.tensors.count",
                                (int32_t)f.n_tensors + (i == s->n - 1 ? s->tensors_delta : 0), &err);
        int end = s->first[i + 1] < 0 ? (int)f.n_tensors : s->first[i + 1];
        for (int t = s->first[i]; t < end; t++) {
            const gguf_tensor *g = &f.tensors[t];
            char *name = test_cstr(g->name);
            int64_t ne[4];
            for (int d = 0; d < 4; d++) ne[d] = (int64_t)g->ne[d];
            CHECK(sac_gguf_writer_add_tensor(w, name, g->type, g->n_dims, ne, g->data, (size_t)g->n_bytes, &err) == SAC_OK);
            free(name);
        }
        if (s->repeat && i == s->n - 1) {
            const gguf_tensor *g = &f.tensors[0];
            char *name = test_cstr(g->name);
            int64_t ne[4];
            for (int d = 0; d < 4; d++) ne[d] = (int64_t)g->ne[d];
            CHECK(sac_gguf_writer_add_tensor(w, name, g->type, g->n_dims, ne, g->data, (size_t)g->n_bytes, &err) == SAC_OK);
            free(name);
        }
        CHECK_MSG(err.status == SAC_OK, "%s", err.msg);
        CHECK(sac_gguf_writer_to_buffer(w, &out[i].bytes, &out[i].size, &err) == SAC_OK);
        sac_gguf_writer_free(w);
    }
    sac_gguf_release(&f);
}

static void free_shards(shard *s, int n) {
    for (int i = 0; i < n; i++) free(s[i].bytes);
}

static sac_status load_shards(const shard *s, int n, sac_model **m) {
    const void *data[8];
    size_t sizes[8];
    for (int i = 0; i < n; i++) {
        data[i] = s[i].bytes;
        sizes[i] = s[i].size;
    }
    return sac_model_load_split(data, sizes, n, 0, m);
}

/* The logits of every position of a few ids. */
static float *logits_of(const sac_model *m, int32_t *n_out) {
    sac_context_params p = sac_context_default_params();
    p.n_threads = 1;
    sac_context *ctx = NULL;
    CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
    const int32_t ids[] = {1, 5, 9, 2, 7};
    CHECK(sac_eval(ctx, ids, 5, NULL, SAC_EVAL_ALL_LOGITS) == SAC_OK);
    int32_t rows, vocab;
    const float *l = sac_logits(ctx, &rows, &vocab);
    *n_out = rows * vocab;
    float *copy = malloc((size_t)*n_out * sizeof *copy);
    memcpy(copy, l, (size_t)*n_out * sizeof *copy);
    sac_context_free(ctx);
    return copy;
}

static void test_shards_load_as_the_whole_file(void) {
    const char *archs[] = {"gpt2", "llama", "encdec"};
    for (int a = 0; a < 3; a++) {
        test_model tm;
        test_model_spec spec = test_spec(archs[a], 8 /* Q8_0 */);
        CHECK(test_model_make(&spec, &tm) == 0);
        sac_model *whole = NULL;
        CHECK(sac_model_load(tm.bytes, tm.size, 0, &whole) == SAC_OK);
        if (strcmp(archs[a], "encdec") == 0) {
            /* the encoder–decoder model: 3 shards, loaded and described like the whole file */
            const int first[] = {0, 5, 11, -1};
            shard s[3];
            split(&tm, &(split_spec){.n = 3, .first = first}, s);
            sac_model *m = NULL;
            CHECK_MSG(load_shards(s, 3, &m) == SAC_OK, "%s", sac_model_errmsg(m));
            CHECK(sac_model_n_tensors(m) == sac_model_n_tensors(whole));
            sac_model_info x, y;
            sac_model_get_info(m, &x);
            sac_model_get_info(whole, &y);
            CHECK(x.n_params == y.n_params && x.n_bytes == y.n_bytes && x.n_layer == y.n_layer);
            sac_model_free(m);
            free_shards(s, 3);
        } else {
            int32_t n_ref, n;
            float *ref = logits_of(whole, &n_ref);
            /* 2 shards; 3 with the first holding no tensors (gguf-split --no-tensor-first-split) */
            const int two[] = {0, 4, -1}, empty_first[] = {0, 0, 7, -1};
            const split_spec specs[] = {{.n = 2, .first = two}, {.n = 3, .first = empty_first}};
            for (int k = 0; k < 2; k++) {
                shard s[3];
                split(&tm, &specs[k], s);
                sac_model *m = NULL;
                CHECK_MSG(load_shards(s, specs[k].n, &m) == SAC_OK, "%s: %s", archs[a], sac_model_errmsg(m));
                float *got = logits_of(m, &n);
                CHECK(n == n_ref && memcmp(got, ref, (size_t)n * sizeof *got) == 0);
                /* metadata: the first shard's, split keys included */
                int found = 0;
                for (int32_t i = 0; i < sac_model_n_metadata(m); i++) {
                    const char *key, *value;
                    CHECK(sac_model_metadata(m, i, &key, &value) == SAC_OK);
                    if (!strcmp(key, "split.count")) found = atoi(value);
                }
                CHECK(found == specs[k].n);
                free(got);
                sac_model_free(m);
                free_shards(s, specs[k].n);
            }
            free(ref);
        }
        sac_model_free(whole);
        test_model_free(&tm);
    }
}

static void test_ownership(void) {
    test_model tm;
    test_model_spec spec = test_spec("gpt2", 0);
    CHECK(test_model_make(&spec, &tm) == 0);
    const int first[] = {0, 6, -1};
    for (int bad = 0; bad < 2; bad++) {
        shard s[2];
        split(&tm, &(split_spec){.n = 2, .first = first, .no_delta = bad}, s);
        /* the model frees the buffers, loaded or not (ASan reports a leak or a double free) */
        const void *data[2] = {s[0].bytes, s[1].bytes};
        size_t sizes[2] = {s[0].size, s[1].size};
        sac_model *m = NULL;
        sac_status st = sac_model_load_split(data, sizes, 2, SAC_LOAD_TAKE_OWNERSHIP, &m);
        CHECK_MSG(st == (bad ? SAC_ERR_FORMAT : SAC_OK), "%s", sac_model_errmsg(m));
        sac_model_free(m);
    }
    test_model_free(&tm);
}

/* Loading `s` fails with `want` and a message containing `words`. */
static void expect_refused(const shard *s, int n, sac_status want, const char *words) {
    sac_model *m = NULL;
    sac_status st = load_shards(s, n, &m);
    CHECK_MSG(st == want, "status %s, want %s: %s", sac_status_name(st), sac_status_name(want), sac_model_errmsg(m));
    CHECK_MSG(strstr(sac_model_errmsg(m), words), "message '%s' lacks '%s'", sac_model_errmsg(m), words);
    sac_model_free(m);
}

static void test_inconsistent_shards_are_refused(void) {
    test_model tm;
    test_model_spec spec = test_spec("llama", 0);
    CHECK(test_model_make(&spec, &tm) == 0);
    const int first[] = {0, 3, 8, -1};
    shard s[3], t[3];
    split(&tm, &(split_spec){.n = 3, .first = first}, s);

    /* one shard alone: not a model */
    sac_model *m = NULL;
    CHECK(sac_model_load(s[0].bytes, s[0].size, 0, &m) == SAC_ERR_ARG);
    CHECK_MSG(strstr(sac_model_errmsg(m), "the file is shard 1 of a model split in 3 files ('split.count'); load every shard "
                                          "together (the first one's name ends in -00001-of-00003.gguf)"),
              "%s", sac_model_errmsg(m));
    sac_model_free(m);
    expect_refused(&s[1], 1, SAC_ERR_ARG, "the file is shard 2 of a model split in 3 files");
    /* a shard missing, or one too many */
    expect_refused(s, 2, SAC_ERR_FORMAT, "shard 1 of 2 has 'split.count' = 3: it belongs to a model in 3 files");
    /* out of order */
    shard swapped[3] = {s[0], s[2], s[1]};
    expect_refused(swapped, 3, SAC_ERR_FORMAT, "shard 2 of 3 has 'split.no' = 2 (it is shard 3): the shards are out of order");
    /* a whole file among shards */
    const int halves[] = {0, 5, -1};
    shard h[2];
    split(&tm, &(split_spec){.n = 2, .first = halves}, h);
    shard mixed[2] = {h[0], {tm.bytes, tm.size}};
    expect_refused(mixed, 2, SAC_ERR_FORMAT, "shard 2 of 2 is not part of a split model (no 'split.count')");
    free_shards(h, 2);
    /* shards of another split of a different model: the tensor counts disagree */
    split(&tm, &(split_spec){.n = 3, .first = first, .tensors_delta = 1}, t);
    shard other[3] = {s[0], s[1], t[2]};
    expect_refused(other, 3, SAC_ERR_FORMAT, "shard 3 of 3 has 'split.tensors.count' = ");
    free_shards(t, 3);
    /* every shard agrees on a count the tensors do not add up to */
    shard u[3];
    split(&tm, &(split_spec){.n = 3, .first = first, .repeat = 1}, u);
    expect_refused(u, 3, SAC_ERR_FORMAT, "the 3 shards hold");
    free_shards(u, 3);
    /* a tensor in two shards (with the counts adjusted so that only the names tell) */
    gguf_file f;
    sac_error err = {0};
    CHECK(sac_gguf_parse(&f, tm.bytes, tm.size, &err) == SAC_OK);
    char *name0 = test_cstr(f.tensors[0].name);
    sac_gguf_release(&f);
    shard d[3];
    split(&tm, &(split_spec){.n = 3, .first = first, .repeat = 1}, d);
    for (int i = 0; i < 3; i++) { /* every shard's split.tensors.count one more */
        gguf_file g;
        CHECK(sac_gguf_parse(&g, d[i].bytes, d[i].size, &err) == SAC_OK);
        const gguf_kv *kv = sac_gguf_find_kv(&g, "split.tensors.count");
        /* the i32 value sits right after its type tag: patch it in place */
        uint8_t *at = (uint8_t *)kv->key.data + kv->key.len + 4;
        int32_t v;
        memcpy(&v, at, 4);
        v += 1;
        memcpy(at, &v, 4);
        sac_gguf_release(&g);
    }
    char want[160];
    snprintf(want, sizeof want, "tensor '%s' is in shard 1 and in shard 3", name0);
    expect_refused(d, 3, SAC_ERR_FORMAT, want);
    free_shards(d, 3);
    free(name0);
    /* a shard that is not a GGUF file says which */
    shard bad[3] = {s[0], s[1], {(uint8_t *)"GGUX-not-a-file", 15}};
    expect_refused(bad, 3, SAC_ERR_FORMAT, "shard 3 of 3: ");
    /* arguments */
    expect_refused(s, 0, SAC_ERR_ARG, "0 shards: a model has 1 to 65535");
    CHECK(sac_model_load_split(NULL, NULL, 2, 0, NULL) == SAC_ERR_ARG);
    m = NULL;
    CHECK(sac_model_load_split(NULL, NULL, 2, 0, &m) == SAC_ERR_ARG);
    CHECK(strstr(sac_model_errmsg(m), "data or sizes is NULL"));
    sac_model_free(m);
    const void *data[2] = {s[0].bytes, NULL};
    size_t sizes[2] = {s[0].size, 0};
    m = NULL;
    CHECK(sac_model_load_split(data, sizes, 2, 0, &m) == SAC_ERR_FORMAT);
    CHECK(strstr(sac_model_errmsg(m), "shard 2 of 2 is empty (0 bytes)"));
    sac_model_free(m);
    free_shards(s, 3);
    test_model_free(&tm);
}

/* n = 1 is sac_model_load: every verdict in the same words, so callers need not choose. */
static void test_one_buffer_is_load(void) {
    test_model tm;
    test_model_spec spec = test_spec("llama", 0);
    CHECK(test_model_make(&spec, &tm) == 0);
    const uint8_t junk[] = "GGUX-not-a-file";
    const struct {
        const void *data;
        size_t size;
        uint32_t flags;
    } cases[] = {{tm.bytes, tm.size, 0}, {junk, 0, 0}, {NULL, 5, 0}, {junk, sizeof junk, 0}, {tm.bytes, tm.size, 0x40000000u},
                 {junk, 0, 0x40000000u}, {tm.bytes, 40, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sac_model *a = NULL, *b = NULL;
        sac_status sa = sac_model_load(cases[i].data, cases[i].size, cases[i].flags, &a);
        sac_status sb = sac_model_load_split(&cases[i].data, &cases[i].size, 1, cases[i].flags, &b);
        CHECK_MSG(sa == sb, "case %zu: %d vs %d", i, (int)sa, (int)sb);
        CHECK_MSG(strcmp(sac_model_errmsg(a), sac_model_errmsg(b)) == 0, "case %zu: '%s' vs '%s'", i, sac_model_errmsg(a),
                  sac_model_errmsg(b));
        sac_model_free(a);
        sac_model_free(b);
    }
    test_model_free(&tm);
}

/* Vocab-only, the first shard loads alone (it holds every metadata key, the tokenizer's among
 * them), through sac_model_load and sac_model_load_split alike; a later shard is refused, saying
 * where the tokenizer is. */
static void test_first_shard_loads_vocab_only(void) {
    test_model tm;
    test_model_spec spec = test_spec("llama", 0);
    CHECK(test_model_make(&spec, &tm) == 0);
    const int first[] = {0, 3, 8, -1};
    shard s[3];
    split(&tm, &(split_spec){.n = 3, .first = first, .tokenizer = 1}, s);
    for (int via_split = 0; via_split < 2; via_split++) {
        sac_model *m = NULL;
        const void *data = s[0].bytes;
        sac_status st = via_split ? sac_model_load_split(&data, &s[0].size, 1, SAC_LOAD_VOCAB_ONLY, &m)
                                  : sac_model_load(s[0].bytes, s[0].size, SAC_LOAD_VOCAB_ONLY, &m);
        CHECK_MSG(st == SAC_OK, "%s", sac_model_errmsg(m));
        int32_t ids[8], n = 0;
        CHECK(sac_tokenize(m, "cab a", 5, 0, ids, 8, &n) == SAC_OK);
        const int32_t want[] = {2, 0, 1, 3, 0};
        CHECK(n == 5 && memcmp(ids, want, sizeof want) == 0);
        sac_model_info info;
        sac_model_get_info(m, &info);
        CHECK(info.n_vocab == 4);
        sac_model_free(m);
    }
    for (int k = 1; k < 3; k++) {
        sac_model *m = NULL;
        CHECK(sac_model_load(s[k].bytes, s[k].size, SAC_LOAD_VOCAB_ONLY, &m) == SAC_ERR_ARG);
        char want[160];
        snprintf(want, sizeof want, "the file is shard %d of a model split in 3 files ('split.count'); the tokenizer is in "
                 "the first shard, whose name ends in -00001-of-00003.gguf", k + 1);
        CHECK_MSG(strcmp(sac_model_errmsg(m), want) == 0, "%s", sac_model_errmsg(m));
        sac_model_free(m);
    }
    /* every shard vocab-only loads as before */
    sac_model *m = NULL;
    const void *data[3] = {s[0].bytes, s[1].bytes, s[2].bytes};
    const size_t sizes[3] = {s[0].size, s[1].size, s[2].size};
    CHECK(sac_model_load_split(data, sizes, 3, SAC_LOAD_VOCAB_ONLY, &m) == SAC_OK);
    sac_model_free(m);
    free_shards(s, 3);
    test_model_free(&tm);
}

int main(void) {
    RUN(test_shards_load_as_the_whole_file);
    RUN(test_first_shard_loads_vocab_only);
    RUN(test_ownership);
    RUN(test_inconsistent_shards_are_refused);
    RUN(test_one_buffer_is_load);
    return check_summary("test_split");
}
