/* test_gguf.c — the GGUF reader and writer: round trips, the real vocab files, and every
 * kind of malformed input the reader must reject with a status and a message.
 *
 * Malformed files are assembled byte by byte with the small builder below, which is
 * independent of both the reader and the writer. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "check.h"
#include "gguf.h"
#include "gguf_writer.h"
#include "types.h"
#include "unicode.h"

/* ------------------------------------------------------------------------------------------
 * A byte builder for hand-made files
 * ---------------------------------------------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort(); /* a test cannot continue without memory */
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_le(bytes *b, uint64_t v, unsigned n) {
    uint8_t tmp[8];
    for (unsigned i = 0; i < n; i++) tmp[i] = (uint8_t)(v >> (8 * i));
    put(b, tmp, n);
}
static void put_u32(bytes *b, uint32_t v) { put_le(b, v, 4); }
static void put_u64(bytes *b, uint64_t v) { put_le(b, v, 8); }
static void put_str(bytes *b, const char *s) {
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}
static void put_header(bytes *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    put(b, "GGUF", 4);
    put_u32(b, version);
    put_u64(b, n_tensors);
    put_u64(b, n_kv);
}
static void put_kv_u32(bytes *b, const char *key, uint32_t v) {
    put_str(b, key);
    put_u32(b, GGUF_TYPE_U32);
    put_u32(b, v);
}
static void put_kv_str(bytes *b, const char *key, const char *v) {
    put_str(b, key);
    put_u32(b, GGUF_TYPE_STRING);
    put_str(b, v);
}
static void put_zeros(bytes *b, size_t n) {
    for (size_t i = 0; i < n; i++) put_le(b, 0, 1);
}
static void put_pad(bytes *b, size_t alignment) { put_zeros(b, (alignment - b->len % alignment) % alignment); }

typedef struct tinfo {
    const char *name;
    uint32_t n_dims;
    uint64_t ne[5];
    uint32_t type;
    uint64_t offset;
} tinfo;

static void put_tensor_info(bytes *b, const tinfo *t) {
    put_str(b, t->name);
    put_u32(b, t->n_dims);
    for (uint32_t d = 0; d < t->n_dims; d++) put_u64(b, t->ne[d]);
    put_u32(b, t->type);
    put_u64(b, t->offset);
}

/* A v3 file with general.architecture, and general.alignment when `alignment` is not 0, the
 * given tensor infos, padding to the alignment (32 by default) and `data_bytes` bytes of data. */
static bytes tensor_file_aligned(const tinfo *t, int n, size_t data_bytes, uint32_t alignment) {
    bytes b = {0};
    put_header(&b, 3, (uint64_t)n, alignment ? 2 : 1);
    put_kv_str(&b, "general.architecture", "test");
    if (alignment) put_kv_u32(&b, "general.alignment", alignment);
    for (int i = 0; i < n; i++) put_tensor_info(&b, &t[i]);
    put_pad(&b, alignment ? alignment : 32);
    put_zeros(&b, data_bytes);
    return b;
}

static bytes tensor_file(const tinfo *t, int n, size_t data_bytes) { return tensor_file_aligned(t, n, data_bytes, 0); }

static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* Parses a private copy of exactly `size` bytes (so that ASan sees any over-read) and
 * checks the status and that the message contains `substr`. */
static void expect_fail_at(const void *data, size_t size, sac_status want, const char *substr,
                           const char *label, int line) {
    void *copy = malloc(size ? size : 1);
    if (size) memcpy(copy, data, size);
    gguf_file f;
    sac_error err = {0};
    sac_status st = sac_gguf_parse(&f, copy, size, &err);
    CHECK_MSG(st == want && err.status == want, "line %d, %s: status %s, want %s (msg: %s)", line,
              label, sac_status_name(st), sac_status_name(want), err.msg);
    CHECK_MSG(contains(err.msg, substr), "line %d, %s: message \"%s\" lacks \"%s\"", line, label,
              err.msg, substr);
    sac_gguf_release(&f);
    free(copy);
}
#define EXPECT_FAIL(b, want, substr, label) expect_fail_at((b).p, (b).len, want, substr, label, __LINE__)

/* Bytes per tensor, computed here from the block layouts in types.h (not via the traits). */
static uint64_t expected_n_bytes(uint32_t type, uint64_t n_elements) {
    switch (type) {
    case SAC_TYPE_F32: return n_elements * 4;
    case SAC_TYPE_F16: return n_elements * 2;
    case SAC_TYPE_Q8_0: return n_elements / 32 * 34;
    case SAC_TYPE_Q4_0: return n_elements / 32 * 18;
    }
    return 0;
}

static uint32_t rng_state = 12345u;
static uint8_t rng_byte(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (uint8_t)(rng_state >> 24);
}

/* ------------------------------------------------------------------------------------------
 * Round trip through the writer and the reader
 * ---------------------------------------------------------------------------------------- */

typedef struct test_tensor {
    const char *name;
    uint32_t type;
    uint32_t n_dims;
    int64_t ne[4];
    uint8_t *data;
    size_t n_bytes;
} test_tensor;

static test_tensor round_trip_tensors[] = {
    {"vec.f32", SAC_TYPE_F32, 1, {5, 1, 1, 1}, NULL, 0},
    {"mat.f16", SAC_TYPE_F16, 2, {7, 3, 1, 1}, NULL, 0},
    {"cube.q8_0", SAC_TYPE_Q8_0, 3, {64, 2, 3, 1}, NULL, 0},
    {"hyper.q4_0", SAC_TYPE_Q4_0, 4, {32, 1, 2, 3}, NULL, 0},
    {"hyper.f32", SAC_TYPE_F32, 4, {2, 3, 1, 2}, NULL, 0},
    {"mat.q8_0", SAC_TYPE_Q8_0, 2, {32, 1, 1, 1}, NULL, 0},
    {"vec.f16", SAC_TYPE_F16, 1, {1, 1, 1, 1}, NULL, 0},
    {"mat.q4_0", SAC_TYPE_Q4_0, 2, {96, 2, 1, 1}, NULL, 0},
};
#define N_RT_TENSORS (sizeof round_trip_tensors / sizeof round_trip_tensors[0])

static const char *const rt_strings[] = {"alpha", "", "b c", "\xc4\xa0gazed", "<|endoftext|>"};
static const uint8_t rt_u8s[] = {0, 1, 255};
static const int16_t rt_i16s[] = {-32768, -1, 0, 32767};
static const int32_t rt_i32s[] = {-2147483647 - 1, -5, 7, 2147483647};
static const uint64_t rt_u64s[] = {0, 1, UINT64_C(0xFEDCBA9876543210)};
static const float rt_f32s[] = {-1.5f, 0.0f, 3.25e-8f, 65504.0f};
static const double rt_f64s[] = {3.141592653589793, -1e300};
static const uint8_t rt_bools[] = {1, 0, 1};

/* Fills the tensors' data and writes every kind of metadata and all tensors. */
static sac_status write_round_trip(uint32_t alignment, uint8_t **out, size_t *size, sac_error *err) {
    gguf_writer *w;
    sac_status st = sac_gguf_writer_new(&w, err);
    if (st) return st;
    if (alignment != GGUF_DEFAULT_ALIGNMENT && (st = sac_gguf_writer_set_alignment(w, alignment, err))) goto done;
    if ((st = sac_gguf_writer_set_u8(w, "t.u8", 200, err)) || (st = sac_gguf_writer_set_i8(w, "t.i8", -100, err)) ||
        (st = sac_gguf_writer_set_u16(w, "t.u16", 60000, err)) ||
        (st = sac_gguf_writer_set_i16(w, "t.i16", -30000, err)) ||
        (st = sac_gguf_writer_set_u32(w, "t.u32", 4000000000u, err)) ||
        (st = sac_gguf_writer_set_i32(w, "t.i32", -2000000000, err)) ||
        (st = sac_gguf_writer_set_f32(w, "t.f32", 3.14159f, err)) ||
        (st = sac_gguf_writer_set_bool(w, "t.bool_true", 1, err)) ||
        (st = sac_gguf_writer_set_bool(w, "t.bool_false", 0, err)) ||
        (st = sac_gguf_writer_set_string(w, "t.string", "hello, gguf", err)) ||
        (st = sac_gguf_writer_set_string(w, "t.empty_string", "", err)) ||
        (st = sac_gguf_writer_set_u64(w, "t.u64", UINT64_C(0xFEDCBA9876543210), err)) ||
        (st = sac_gguf_writer_set_i64(w, "t.i64", INT64_C(-9000000000000000000), err)) ||
        (st = sac_gguf_writer_set_f64(w, "t.f64", -2.718281828459045, err)) ||
        (st = sac_gguf_writer_set_string_array(w, "t.strings", rt_strings, 5, err)) ||
        (st = sac_gguf_writer_set_string_array(w, "t.no_strings", NULL, 0, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.u8s", GGUF_TYPE_U8, 3, rt_u8s, sizeof rt_u8s, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.i16s", GGUF_TYPE_I16, 4, rt_i16s, sizeof rt_i16s, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.i32s", GGUF_TYPE_I32, 4, rt_i32s, sizeof rt_i32s, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.u64s", GGUF_TYPE_U64, 3, rt_u64s, sizeof rt_u64s, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.f32s", GGUF_TYPE_F32, 4, rt_f32s, sizeof rt_f32s, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.f64s", GGUF_TYPE_F64, 2, rt_f64s, sizeof rt_f64s, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.bools", GGUF_TYPE_BOOL, 3, rt_bools, sizeof rt_bools, err)) ||
        (st = sac_gguf_writer_set_array(w, "t.empty_u32s", GGUF_TYPE_U32, 0, NULL, 0, err)))
        goto done;
    for (size_t i = 0; i < N_RT_TENSORS; i++) {
        test_tensor *t = &round_trip_tensors[i];
        uint64_t n = 1;
        for (uint32_t d = 0; d < t->n_dims; d++) n *= (uint64_t)t->ne[d];
        t->n_bytes = (size_t)expected_n_bytes(t->type, n);
        free(t->data);
        t->data = malloc(t->n_bytes);
        for (size_t j = 0; j < t->n_bytes; j++) t->data[j] = rng_byte();
        if ((st = sac_gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->n_bytes, err)))
            goto done;
    }
    st = sac_gguf_writer_to_buffer(w, out, size, err);
done:
    sac_gguf_writer_free(w);
    return st;
}

static void free_round_trip_data(void) {
    for (size_t i = 0; i < N_RT_TENSORS; i++) {
        free(round_trip_tensors[i].data);
        round_trip_tensors[i].data = NULL;
    }
}

static const gguf_kv *kv_checked(const gguf_file *f, uint64_t index, const char *key, uint32_t type) {
    CHECK_MSG(index < f->n_kv, "kv %s at index %" PRIu64 " missing", key, index);
    if (index >= f->n_kv) return sac_gguf_find_kv(f, "no such key");
    const gguf_kv *kv = &f->kv[index];
    CHECK_MSG(sac_gguf_string_eq(kv->key, key), "kv %" PRIu64 " is '%.*s', want '%s'", index,
              (int)kv->key.len, kv->key.data, key);
    CHECK_MSG(kv->type == type, "%s: type %u, want %u", key, kv->type, type);
    CHECK(sac_gguf_find_kv(f, key) == kv);
    return kv;
}

/* Compares everything written by write_round_trip with what the reader found. */
static void check_round_trip(const gguf_file *f, uint32_t alignment) {
    const gguf_kv *kv;
    uint64_t k = alignment != GGUF_DEFAULT_ALIGNMENT ? 1 : 0; /* general.alignment comes first */
    CHECK(f->n_kv == 24 + k);
    CHECK(f->alignment == alignment);
    if (k) CHECK(kv_checked(f, 0, "general.alignment", GGUF_TYPE_U32)->u64 == alignment);
    if (f->n_kv != 24 + k) return;

    kv = kv_checked(f, k + 0, "t.u8", GGUF_TYPE_U8);
    CHECK(kv->i64 == 200 && kv->u64 == 200);
    kv = kv_checked(f, k + 1, "t.i8", GGUF_TYPE_I8);
    CHECK(kv->i64 == -100);
    kv = kv_checked(f, k + 2, "t.u16", GGUF_TYPE_U16);
    CHECK(kv->i64 == 60000);
    kv = kv_checked(f, k + 3, "t.i16", GGUF_TYPE_I16);
    CHECK(kv->i64 == -30000);
    kv = kv_checked(f, k + 4, "t.u32", GGUF_TYPE_U32);
    CHECK(kv->i64 == 4000000000 && kv->u64 == 4000000000u);
    kv = kv_checked(f, k + 5, "t.i32", GGUF_TYPE_I32);
    CHECK(kv->i64 == -2000000000);
    kv = kv_checked(f, k + 6, "t.f32", GGUF_TYPE_F32);
    CHECK(kv->f64 == (double)3.14159f);
    kv = kv_checked(f, k + 7, "t.bool_true", GGUF_TYPE_BOOL);
    CHECK(kv->i64 == 1);
    kv = kv_checked(f, k + 8, "t.bool_false", GGUF_TYPE_BOOL);
    CHECK(kv->i64 == 0);
    kv = kv_checked(f, k + 9, "t.string", GGUF_TYPE_STRING);
    CHECK(sac_gguf_string_eq(kv->str, "hello, gguf"));
    kv = kv_checked(f, k + 10, "t.empty_string", GGUF_TYPE_STRING);
    CHECK(kv->str.len == 0);
    kv = kv_checked(f, k + 11, "t.u64", GGUF_TYPE_U64);
    CHECK(kv->u64 == UINT64_C(0xFEDCBA9876543210));
    kv = kv_checked(f, k + 12, "t.i64", GGUF_TYPE_I64);
    CHECK(kv->i64 == INT64_C(-9000000000000000000));
    kv = kv_checked(f, k + 13, "t.f64", GGUF_TYPE_F64);
    CHECK(kv->f64 == -2.718281828459045);

    kv = kv_checked(f, k + 14, "t.strings", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_STRING && kv->arr_count == 5);
    if (kv->arr_count == 5) {
        gguf_string s[5];
        sac_gguf_array_strings(kv, s);
        for (int i = 0; i < 5; i++) CHECK_MSG(sac_gguf_string_eq(s[i], rt_strings[i]), "string %d", i);
    }
    kv = kv_checked(f, k + 15, "t.no_strings", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_STRING && kv->arr_count == 0 && kv->arr_nbytes == 0);

    kv = kv_checked(f, k + 16, "t.u8s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_U8 && kv->arr_count == 3 && kv->arr_nbytes == 3);
    for (uint64_t i = 0; i < 3 && i < kv->arr_count; i++) {
        CHECK(sac_gguf_array_int(kv, i) == rt_u8s[i]);
        CHECK(sac_gguf_array_float(kv, i) == rt_u8s[i]);
    }
    kv = kv_checked(f, k + 17, "t.i16s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_I16 && kv->arr_count == 4);
    for (uint64_t i = 0; i < 4 && i < kv->arr_count; i++) CHECK(sac_gguf_array_int(kv, i) == rt_i16s[i]);
    kv = kv_checked(f, k + 18, "t.i32s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_I32 && kv->arr_count == 4);
    for (uint64_t i = 0; i < 4 && i < kv->arr_count; i++) {
        CHECK(sac_gguf_array_int(kv, i) == rt_i32s[i]);
        CHECK(sac_gguf_array_float(kv, i) == rt_i32s[i]);
    }
    kv = kv_checked(f, k + 19, "t.u64s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_U64 && kv->arr_count == 3 && kv->arr_nbytes == 24);
    if (kv->arr_count == 3) {
        CHECK(sac_gguf_array_int(kv, 0) == 0 && sac_gguf_array_int(kv, 1) == 1);
        CHECK(sac_gguf_array_int(kv, 2) == INT64_MAX); /* above INT64_MAX: clamped */
        CHECK(sac_gguf_array_float(kv, 2) == (double)UINT64_C(0xFEDCBA9876543210));
    }
    kv = kv_checked(f, k + 20, "t.f32s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_F32 && kv->arr_count == 4);
    for (uint64_t i = 0; i < 4 && i < kv->arr_count; i++) CHECK(sac_gguf_array_float(kv, i) == rt_f32s[i]);
    kv = kv_checked(f, k + 21, "t.f64s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_F64 && kv->arr_count == 2);
    for (uint64_t i = 0; i < 2 && i < kv->arr_count; i++) CHECK(sac_gguf_array_float(kv, i) == rt_f64s[i]);
    kv = kv_checked(f, k + 22, "t.bools", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_BOOL && kv->arr_count == 3);
    for (uint64_t i = 0; i < 3 && i < kv->arr_count; i++) CHECK(sac_gguf_array_int(kv, i) == rt_bools[i]);
    kv = kv_checked(f, k + 23, "t.empty_u32s", GGUF_TYPE_ARRAY);
    CHECK(kv->arr_type == GGUF_TYPE_U32 && kv->arr_count == 0);

    CHECK(f->n_tensors == N_RT_TENSORS);
    for (size_t i = 0; i < N_RT_TENSORS && i < f->n_tensors; i++) {
        const test_tensor *want = &round_trip_tensors[i];
        const gguf_tensor *t = &f->tensors[i];
        CHECK_MSG(sac_gguf_string_eq(t->name, want->name), "tensor %zu name", i);
        CHECK(sac_gguf_find_tensor(f, want->name) == t);
        CHECK(t->n_dims == want->n_dims && t->type == want->type);
        uint64_t n = 1;
        for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
            uint64_t ne = d < want->n_dims ? (uint64_t)want->ne[d] : 1;
            CHECK_MSG(t->ne[d] == ne, "%s: ne[%u] = %" PRIu64 ", want %" PRIu64, want->name, d, t->ne[d], ne);
            n *= ne;
        }
        CHECK(t->n_elements == n);
        CHECK(t->n_bytes == want->n_bytes);
        CHECK_MSG(t->offset % alignment == 0, "%s: offset %" PRIu64, want->name, t->offset);
        CHECK(t->data == f->data + t->offset);
        CHECK_MSG(memcmp(t->data, want->data, want->n_bytes) == 0, "%s: data differs", want->name);
    }
    CHECK(sac_gguf_find_tensor(f, "vec") == NULL && sac_gguf_find_kv(f, "t.u") == NULL);
}

static void test_round_trip(void) {
    for (int pass = 0; pass < 2; pass++) {
        uint32_t alignment = pass == 0 ? GGUF_DEFAULT_ALIGNMENT : 128;
        uint8_t *buf = NULL;
        size_t size = 0;
        sac_error err = {0};
        CHECK_MSG(write_round_trip(alignment, &buf, &size, &err) == SAC_OK, "%s", err.msg);
        if (!buf) return;
        gguf_file f;
        CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s", err.msg);
        CHECK(f.version == 3);
        CHECK(f.data_offset % alignment == 0);
        check_round_trip(&f, alignment);
        sac_gguf_release(&f);

        /* Version 2 has the same layout. */
        buf[4] = 2;
        CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s", err.msg);
        CHECK(f.version == 2);
        check_round_trip(&f, alignment);
        sac_gguf_release(&f);
        free(buf);
    }
    free_round_trip_data();
}

/* The writer's bytes, compared with a file assembled by hand. */
static void test_writer_exact_bytes(void) {
    const float values[2] = {1.0f, -2.0f};
    const int64_t ne[1] = {2};
    gguf_writer *w;
    sac_error err = {0};
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_u32(w, "n", 7, &err) == SAC_OK);
    CHECK(sac_gguf_writer_add_tensor(w, "x", SAC_TYPE_F32, 1, ne, values, sizeof values, &err) == SAC_OK);
    CHECK(sac_gguf_writer_to_buffer(w, &buf, &size, &err) == SAC_OK);
    sac_gguf_writer_free(w);

    bytes want = {0};
    put_header(&want, 3, 1, 1);
    put_kv_u32(&want, "n", 7);
    put_tensor_info(&want, &(tinfo){"x", 1, {2}, SAC_TYPE_F32, 0});
    put_pad(&want, 32);
    put_u32(&want, 0x3f800000u); /* 1.0f */
    put_u32(&want, 0xc0000000u); /* -2.0f */
    put_pad(&want, 32);          /* llama.cpp pads every tensor, the last one too */
    CHECK_MSG(size == want.len, "size %zu, want %zu", size, want.len);
    CHECK(buf && size == want.len && memcmp(buf, want.p, size) == 0);
    free(buf);
    free(want.p);
}

static void test_writer_rejects_bad_input(void) {
    gguf_writer *w;
    sac_error err = {0};
    const int64_t ne_ok[2] = {32, 2}, ne_odd[1] = {48}, ne_zero[2] = {4, 0};
    uint8_t data[256] = {0};
    CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_u32(w, "a", 1, &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_i32(w, "a", 2, &err) == SAC_ERR_ARG && contains(err.msg, "already set"));
    CHECK(sac_gguf_writer_set_alignment(w, 48, &err) == SAC_ERR_ARG && contains(err.msg, "power of two"));
    CHECK(sac_gguf_writer_set_alignment(w, 2, &err) == SAC_ERR_ARG && contains(err.msg, "is below 4"));
    CHECK(sac_gguf_writer_set_u32(w, "general.alignment", 1, &err) == SAC_ERR_ARG && contains(err.msg, "at least 4"));
    CHECK(sac_gguf_writer_set_i32(w, "general.alignment", 64, &err) == SAC_ERR_ARG);
    CHECK(sac_gguf_writer_set_array(w, "b", GGUF_TYPE_U32, 3, data, 8, &err) == SAC_ERR_ARG &&
          contains(err.msg, "needs 12 bytes"));
    CHECK(sac_gguf_writer_set_array(w, "b", GGUF_TYPE_STRING, 1, data, 8, &err) == SAC_ERR_ARG);
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_Q8_0, 2, ne_ok, data, 67, &err) == SAC_ERR_ARG &&
          contains(err.msg, "needs 68 bytes"));
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_Q8_0, 1, ne_odd, data, 51, &err) == SAC_ERR_ARG &&
          contains(err.msg, "not a multiple of 32"));
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_F32, 2, ne_zero, data, 0, &err) == SAC_ERR_ARG);
    const int64_t ne_huge[1] = {INT64_C(1) << 62}; /* 2^64 bytes of f32 */
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_F32, 1, ne_huge, data, 8, &err) == SAC_ERR_ARG &&
          contains(err.msg, "its size in bytes overflows"));
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_F32, 5, ne_ok, data, 256, &err) == SAC_ERR_ARG);
    CHECK(sac_gguf_writer_add_tensor(w, "t", 20 /* IQ4_NL */, 2, ne_ok, data, 40, &err) == SAC_ERR_UNSUPPORTED &&
          contains(err.msg, "IQ4_NL"));
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_Q8_0, 2, ne_ok, data, 68, &err) == SAC_OK);
    CHECK(sac_gguf_writer_add_tensor(w, "t", SAC_TYPE_Q8_0, 2, ne_ok, data, 68, &err) == SAC_ERR_ARG &&
          contains(err.msg, "already added"));
    sac_gguf_writer_free(w);
}

/* ------------------------------------------------------------------------------------------
 * Typed getters
 * ---------------------------------------------------------------------------------------- */

static void test_getters(void) {
    uint8_t *buf = NULL;
    size_t size = 0;
    sac_error err = {0};
    CHECK_MSG(write_round_trip(GGUF_DEFAULT_ALIGNMENT, &buf, &size, &err) == SAC_OK, "%s", err.msg);
    free_round_trip_data();
    gguf_file f;
    CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s", err.msg);

    uint32_t u = 0;
    CHECK(sac_gguf_get_u32(&f, "t.u8", &u, &err) == SAC_OK && u == 200);
    CHECK(sac_gguf_get_u32(&f, "t.u16", &u, &err) == SAC_OK && u == 60000);
    CHECK(sac_gguf_get_u32(&f, "t.u32", &u, &err) == SAC_OK && u == 4000000000u);
    CHECK(sac_gguf_get_u32(&f, "t.i32", &u, &err) == SAC_ERR_MODEL && contains(err.msg, "'t.i32'") &&
          contains(err.msg, "out of range"));
    CHECK(sac_gguf_get_u32(&f, "t.u64", &u, &err) == SAC_ERR_MODEL && contains(err.msg, "out of range"));
    CHECK(sac_gguf_get_u32(&f, "t.string", &u, &err) == SAC_ERR_MODEL &&
          contains(err.msg, "'t.string' should be an integer (u32), but it is a string"));
    CHECK(sac_gguf_get_u32(&f, "nope", &u, &err) == SAC_ERR_MODEL &&
          strcmp(err.msg, "missing metadata key 'nope'") == 0);
    CHECK(sac_gguf_get_u32(&f, "t.f32", &u, &err) == SAC_ERR_MODEL && contains(err.msg, "but it is a f32"));

    float x = 0;
    CHECK(sac_gguf_get_f32(&f, "t.f32", &x, &err) == SAC_OK && x == 3.14159f);
    CHECK(sac_gguf_get_f32(&f, "t.f64", &x, &err) == SAC_OK && x == (float)-2.718281828459045);
    CHECK(sac_gguf_get_f32(&f, "t.u32", &x, &err) == SAC_ERR_MODEL && contains(err.msg, "but it is a u32"));

    int b = -1;
    CHECK(sac_gguf_get_bool(&f, "t.bool_true", &b, &err) == SAC_OK && b == 1);
    CHECK(sac_gguf_get_bool(&f, "t.bool_false", &b, &err) == SAC_OK && b == 0);
    CHECK(sac_gguf_get_bool(&f, "t.u8", &b, &err) == SAC_ERR_MODEL && contains(err.msg, "should be a bool"));

    gguf_string s = {0};
    CHECK(sac_gguf_get_string(&f, "t.string", &s, &err) == SAC_OK && sac_gguf_string_eq(s, "hello, gguf"));
    CHECK(sac_gguf_get_string(&f, "t.strings", &s, &err) == SAC_ERR_MODEL &&
          contains(err.msg, "but it is an array of string"));

    const gguf_kv *kv = NULL;
    CHECK(sac_gguf_get_array(&f, "t.strings", GGUF_TYPE_STRING, &kv, &err) == SAC_OK && kv &&
          kv->arr_count == 5);
    CHECK(sac_gguf_get_array(&f, "t.f32s", GGUF_TYPE_I32, &kv, &err) == SAC_ERR_MODEL &&
          contains(err.msg, "'t.f32s' should be an array of i32, but it is an array of f32"));
    CHECK(sac_gguf_get_array(&f, "t.u32", GGUF_TYPE_U32, &kv, &err) == SAC_ERR_MODEL);

    CHECK(strcmp(sac_gguf_value_type_name(GGUF_TYPE_F64), "f64") == 0);
    CHECK(strcmp(sac_gguf_value_type_name(GGUF_TYPE_STRING), "string") == 0);
    CHECK(strcmp(sac_gguf_value_type_name(99), "unknown") == 0);
    sac_gguf_release(&f);
    free(buf);
}

/* ------------------------------------------------------------------------------------------
 * The real vocab files
 * ---------------------------------------------------------------------------------------- */


static const gguf_kv *array_kv(const gguf_file *f, const char *key, uint32_t elem_type) {
    const gguf_kv *kv = NULL;
    sac_error err = {0};
    CHECK_MSG(sac_gguf_get_array(f, key, elem_type, &kv, &err) == SAC_OK, "%s", err.msg);
    return kv;
}

/* The expected values below were read once from the files with an independent Python
 * reader (struct.unpack over the header, every key and every array element):
 *   gpt-2:     v3, 0 tensors, 16 keys, 1766807 bytes (ends right after the metadata),
 *              tokens 50257 (first "!", last "<|endoftext|>"), merges 50000 (first "Ġ t"),
 *              token_type 50257 × i32, bos = eos = 50256.
 *   llama-spm: v3, 0 tensors, 22 keys, 723869 bytes, tokens 32000 (first "<unk>"),
 *              scores 32000 × f32 (last -31740.0), token_type[0] = 2, add_bos_token true. */
static void test_vocab_gpt2(void) {
    const char *path = "../shared/data/vocab/ggml-vocab-gpt-2.gguf";
    size_t size = 0;
    uint8_t *buf = test_read_file(path, &size);
    if (!buf) SKIP("../shared/data/vocab/ggml-vocab-gpt-2.gguf not found (run from the repo root)");
    gguf_file f;
    sac_error err = {0};
    CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s", err.msg);
    CHECK(size == 1766807);
    CHECK(f.version == 3 && f.n_kv == 16 && f.n_tensors == 0 && f.data_size == 0);
    gguf_string s = {0};
    CHECK(sac_gguf_get_string(&f, "tokenizer.ggml.model", &s, &err) == SAC_OK && sac_gguf_string_eq(s, "gpt2"));
    CHECK(sac_gguf_get_string(&f, "general.architecture", &s, &err) == SAC_OK && sac_gguf_string_eq(s, "gpt2"));
    const gguf_kv *tokens = array_kv(&f, "tokenizer.ggml.tokens", GGUF_TYPE_STRING);
    const gguf_kv *merges = array_kv(&f, "tokenizer.ggml.merges", GGUF_TYPE_STRING);
    const gguf_kv *types = array_kv(&f, "tokenizer.ggml.token_type", GGUF_TYPE_I32);
    if (tokens && merges && types) {
        CHECK(tokens->arr_count == 50257 && merges->arr_count == 50000 && types->arr_count == 50257);
        gguf_string *strs = malloc(sizeof *strs * 50257);
        sac_gguf_array_strings(tokens, strs);
        CHECK(sac_gguf_string_eq(strs[0], "!") && sac_gguf_string_eq(strs[50256], "<|endoftext|>"));
        sac_gguf_array_strings(merges, strs);
        CHECK(sac_gguf_string_eq(strs[0], "\xc4\xa0 t"));
        free(strs);
        CHECK(sac_gguf_array_int(types, 50256) == 3);
    }
    uint32_t bos = 0;
    CHECK(sac_gguf_get_u32(&f, "tokenizer.ggml.bos_token_id", &bos, &err) == SAC_OK && bos == 50256);
    sac_gguf_release(&f);
    free(buf);
}

static void test_vocab_llama(void) {
    const char *path = "../shared/data/vocab/ggml-vocab-llama-spm.gguf";
    size_t size = 0;
    uint8_t *buf = test_read_file(path, &size);
    if (!buf) SKIP("../shared/data/vocab/ggml-vocab-llama-spm.gguf not found (run from the repo root)");
    gguf_file f;
    sac_error err = {0};
    CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s", err.msg);
    CHECK(size == 723869);
    CHECK(f.version == 3 && f.n_kv == 22 && f.n_tensors == 0);
    gguf_string s = {0};
    CHECK(sac_gguf_get_string(&f, "tokenizer.ggml.model", &s, &err) == SAC_OK && sac_gguf_string_eq(s, "llama"));
    const gguf_kv *tokens = array_kv(&f, "tokenizer.ggml.tokens", GGUF_TYPE_STRING);
    const gguf_kv *scores = array_kv(&f, "tokenizer.ggml.scores", GGUF_TYPE_F32);
    const gguf_kv *types = array_kv(&f, "tokenizer.ggml.token_type", GGUF_TYPE_I32);
    if (tokens && scores && types) {
        CHECK(tokens->arr_count == 32000 && scores->arr_count == 32000 && types->arr_count == 32000);
        gguf_string *strs = malloc(sizeof *strs * 32000);
        sac_gguf_array_strings(tokens, strs);
        CHECK(sac_gguf_string_eq(strs[0], "<unk>") && sac_gguf_string_eq(strs[1], "<s>"));
        free(strs);
        CHECK(sac_gguf_array_float(scores, 31999) == -31740.0);
        CHECK(sac_gguf_array_int(types, 0) == 2);
    }
    CHECK(sac_gguf_find_kv(&f, "tokenizer.ggml.merges") == NULL);
    int add_bos = 0;
    CHECK(sac_gguf_get_bool(&f, "tokenizer.ggml.add_bos_token", &add_bos, &err) == SAC_OK && add_bos == 1);
    sac_gguf_release(&f);
    free(buf);
}

/* ------------------------------------------------------------------------------------------
 * Malformed input
 * ---------------------------------------------------------------------------------------- */

/* Every prefix of a small valid file shorter than its last tensor's end must fail with
 * FORMAT (and, under ASan, without reading a byte past the prefix); longer prefixes only
 * drop trailing padding and must parse. */
static void test_every_truncation(void) {
    const char *const strs[3] = {"ab", "", "xyz"};
    const int32_t ints[2] = {-1, 2};
    const int64_t ne_a[2] = {32, 2}, ne_b[1] = {3};
    uint8_t q8[68], f32[12];
    for (size_t i = 0; i < sizeof q8; i++) q8[i] = rng_byte();
    for (size_t i = 0; i < sizeof f32; i++) f32[i] = rng_byte();
    gguf_writer *w;
    sac_error err = {0};
    uint8_t *buf = NULL;
    size_t size = 0;
    CHECK(sac_gguf_writer_new(&w, &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_string(w, "general.architecture", "llama", &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_string_array(w, "s", strs, 3, &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_array(w, "i", GGUF_TYPE_I32, 2, ints, sizeof ints, &err) == SAC_OK);
    CHECK(sac_gguf_writer_set_f64(w, "d", 0.5, &err) == SAC_OK);
    CHECK(sac_gguf_writer_add_tensor(w, "a", SAC_TYPE_Q8_0, 2, ne_a, q8, sizeof q8, &err) == SAC_OK);
    CHECK(sac_gguf_writer_add_tensor(w, "b", SAC_TYPE_F32, 1, ne_b, f32, sizeof f32, &err) == SAC_OK);
    CHECK(sac_gguf_writer_to_buffer(w, &buf, &size, &err) == SAC_OK);
    sac_gguf_writer_free(w);
    if (!buf) return;

    gguf_file f;
    CHECK_MSG(sac_gguf_parse(&f, buf, size, &err) == SAC_OK, "%s", err.msg);
    const gguf_tensor *b = sac_gguf_find_tensor(&f, "b");
    size_t end = b ? (size_t)(f.data_offset + b->offset + b->n_bytes) : size;
    CHECK(end < size); /* so that some padding prefixes are tried too */
    sac_gguf_release(&f);

    int failures = 0;
    for (size_t len = 0; len <= size && failures < 5; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, buf, len);
        sac_status st = sac_gguf_parse(&f, copy, len, &err);
        if (len < end) {
            int ok = st == SAC_ERR_FORMAT &&
                     (contains(err.msg, "truncated") || contains(err.msg, "out of bounds"));
            CHECK_MSG(ok, "prefix %zu: %s: %s", len, sac_status_name(st), err.msg);
            failures += !ok;
        } else {
            CHECK_MSG(st == SAC_OK, "prefix %zu: %s", len, err.msg);
            failures += st != SAC_OK;
        }
        sac_gguf_release(&f);
        free(copy);
    }
    /* A sample of the messages, checked exactly, on a file with a single entry. */
    bytes one = {0};
    put_header(&one, 3, 0, 1);
    put_kv_str(&one, "general.architecture", "llama");
    expect_fail_at(one.p, 12, SAC_ERR_FORMAT,
                   "truncated file: tensor count in header needs 8 bytes at offset 8, file has 12 bytes",
                   "prefix 12", __LINE__);
    expect_fail_at(one.p, 50, SAC_ERR_FORMAT,
                   "truncated file: key of metadata entry #0 needs 20 bytes at offset 32, file has 50 bytes",
                   "prefix 50", __LINE__);
    expect_fail_at(one.p, 66, SAC_ERR_FORMAT,
                   "truncated file: metadata value of key 'general.architecture' needs 5 bytes at "
                   "offset 64, file has 66 bytes",
                   "prefix 66", __LINE__);
    expect_fail_at(buf, 100, SAC_ERR_FORMAT,
                   "the header claims 4 metadata entries and 2 tensors, more than the 76 bytes",
                   "prefix 100", __LINE__);
    free(one.p);
    free(buf);
}

static void test_bad_header(void) {
    bytes b = {0};
    put(&b, "GGML", 4);
    put_u32(&b, 3);
    put_u64(&b, 0);
    put_u64(&b, 0);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "not a GGUF file", "bad magic");
    b.len = 0;
    put_header(&b, 1, 0, 0);
    EXPECT_FAIL(b, SAC_ERR_UNSUPPORTED, "unsupported GGUF version 1", "version 1");
    b.len = 0;
    put_header(&b, 4, 0, 0);
    EXPECT_FAIL(b, SAC_ERR_UNSUPPORTED, "unsupported GGUF version 4", "version 4");
    b.len = 0;
    put_header(&b, 0x03000000u, 0, 0);
    EXPECT_FAIL(b, SAC_ERR_UNSUPPORTED, "big-endian", "big-endian");

    /* 40 bytes claiming 2^60 tensors or metadata entries: rejected before allocating. */
    b.len = 0;
    put_header(&b, 3, UINT64_C(1) << 60, 0);
    put_zeros(&b, 16);
    CHECK(b.len == 40);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "claims 0 metadata entries and 1152921504606846976 tensors", "huge tensor count");
    b.len = 0;
    put_header(&b, 3, 0, UINT64_C(1) << 60);
    put_zeros(&b, 16);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "more than the 16 bytes after the header", "huge kv count");
    b.len = 0;
    put_header(&b, 3, UINT64_MAX, UINT64_MAX);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "more than the 0 bytes", "max counts");

    /* An empty file with nothing after the header is valid. */
    b.len = 0;
    put_header(&b, 3, 0, 0);
    gguf_file f;
    sac_error err = {0};
    CHECK_MSG(sac_gguf_parse(&f, b.p, b.len, &err) == SAC_OK, "%s", err.msg);
    CHECK(f.n_kv == 0 && f.n_tensors == 0 && f.data_size == 0 && f.alignment == 32);
    sac_gguf_release(&f);
    CHECK(sac_gguf_parse(NULL, b.p, b.len, &err) == SAC_ERR_ARG);
    CHECK(sac_gguf_parse(&f, NULL, 10, &err) == SAC_ERR_ARG);
    sac_gguf_release(&f);
    free(b.p);
}

static void test_bad_metadata(void) {
    bytes b = {0};
    /* A key whose length runs past the end. */
    put_header(&b, 3, 0, 1);
    put_u64(&b, 1000);
    put(&b, "abcdefghijklm", 13);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "truncated file: key of metadata entry #0 needs 1000 bytes at offset 32", "long key");

    /* A string value of length 2^63. */
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "k");
    put_u32(&b, GGUF_TYPE_STRING);
    put_u64(&b, UINT64_C(1) << 63);
    put_zeros(&b, 8);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "metadata value of key 'k' needs 9223372036854775808 bytes", "huge string");

    /* A string in an array running past the end. */
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "arr");
    put_u32(&b, GGUF_TYPE_ARRAY);
    put_u32(&b, GGUF_TYPE_STRING);
    put_u64(&b, 2);
    put_str(&b, "ok");
    put_u64(&b, 50);
    put_zeros(&b, 10);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "metadata value of key 'arr' needs 50 bytes", "array string");

    /* An array count far beyond the file. */
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "arr");
    put_u32(&b, GGUF_TYPE_ARRAY);
    put_u32(&b, GGUF_TYPE_U64);
    put_u64(&b, UINT64_C(1) << 62);
    put_zeros(&b, 16);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "'arr' claims 4611686018427387904 elements of type u64", "huge array");

    /* Nested arrays. */
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "nest");
    put_u32(&b, GGUF_TYPE_ARRAY);
    put_u32(&b, GGUF_TYPE_ARRAY);
    put_u64(&b, 0);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "'nest' is an array of arrays", "nested");

    /* Unknown value types, as a value and as an array element. */
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "odd");
    put_u32(&b, 13);
    put_zeros(&b, 8);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "'odd' has unknown value type 13", "unknown type");
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "odd");
    put_u32(&b, GGUF_TYPE_ARRAY);
    put_u32(&b, 0xFFFFFFFFu);
    put_u64(&b, 0);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "'odd' has unknown array element type 4294967295", "unknown element type");

    /* Duplicate keys. */
    b.len = 0;
    put_header(&b, 3, 0, 3);
    put_kv_u32(&b, "a", 1);
    put_kv_str(&b, "b", "x");
    put_kv_u32(&b, "a", 2);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "duplicate metadata key 'a'", "duplicate key");

    /* general.alignment: not a power of two, zero, not a u32. */
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_kv_u32(&b, "general.alignment", 48);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "general.alignment must be a power of two, but it is 48", "alignment 48");
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_kv_u32(&b, "general.alignment", 0);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "power of two, but it is 0", "alignment 0");
    b.len = 0;
    put_header(&b, 3, 0, 1);
    put_str(&b, "general.alignment");
    put_u32(&b, GGUF_TYPE_U64);
    put_u64(&b, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "general.alignment must be a u32, but it is a u64", "alignment u64");

    /* A metadata-only file that ends right after its metadata (like the vocab files). */
    b.len = 0;
    put_header(&b, 3, 0, 2);
    put_kv_u32(&b, "general.alignment", 64);
    put_kv_str(&b, "general.name", "tiny");
    gguf_file f;
    sac_error err = {0};
    CHECK_MSG(sac_gguf_parse(&f, b.p, b.len, &err) == SAC_OK, "%s", err.msg);
    CHECK(f.alignment == 64 && f.data_offset == b.len && f.data_size == 0 && f.n_kv == 2);
    sac_gguf_release(&f);
    free(b.p);
}

static void test_bad_tensor_infos(void) {
    bytes b;
    b = tensor_file(&(tinfo){"w", 0, {0}, SAC_TYPE_F32, 0}, 1, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' has 0 dimensions", "n_dims 0");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 5, {1, 1, 1, 1, 1}, SAC_TYPE_F32, 0}, 1, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' has 5 dimensions", "n_dims 5");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 3, {4, 0, 2}, SAC_TYPE_F32, 0}, 1, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' has dimension 1 equal to 0", "zero dim");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 2, {UINT64_C(1) << 32, UINT64_C(1) << 32}, SAC_TYPE_F32, 0}, 1, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w': the element count of its dimensions overflows", "overflow");
    free(b.p);
    /* 2^63 elements fit a u64 but not the int64_t the engine indexes with. */
    b = tensor_file(&(tinfo){"w", 2, {UINT64_C(1) << 32, UINT64_C(1) << 31}, SAC_TYPE_F32, 0}, 1, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w': the element count of its dimensions overflows", "int64 overflow");
    free(b.p);
    /* 2^62 F32 elements are 2^64 bytes. */
    b = tensor_file(&(tinfo){"w", 2, {UINT64_C(1) << 31, UINT64_C(1) << 31}, SAC_TYPE_F32, 0}, 1, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w': its size in bytes overflows", "byte overflow");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 1, {32}, 99, 0}, 1, 128);
    EXPECT_FAIL(b, SAC_ERR_UNSUPPORTED, "tensor 'w' has unknown type 99", "type 99");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 1, {32}, 20, 0}, 1, 128);
    EXPECT_FAIL(b, SAC_ERR_UNSUPPORTED, "tensor 'w' has type IQ4_NL (20), which saccade does not support", "IQ4_NL");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 2, {48, 2}, SAC_TYPE_Q8_0, 0}, 1, 128);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' of type Q8_0 has 48 values per row, not a multiple of the block size 32", "ne0 48");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 1, {40}, SAC_TYPE_F32, 0}, 1, 128);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' data is out of bounds: 160 bytes at offset 0 of a data section of 128 bytes", "oob");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 1, {4}, SAC_TYPE_F32, UINT64_MAX - 31}, 1, 128);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' data is out of bounds", "offset overflow");
    free(b.p);
    b = tensor_file(&(tinfo){"w", 1, {4}, SAC_TYPE_F32, 8}, 1, 128);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' has offset 8, which is not a multiple of the alignment 32", "misaligned");
    free(b.p);
    /* A file whose own alignment allows any offset still places each tensor where its type's
     * values can be read (f32 at 4, f16 and blocks of f16 scales at 2). */
    b = tensor_file_aligned(&(tinfo){"w", 1, {4}, SAC_TYPE_F32, 2}, 1, 64, 2);
    EXPECT_FAIL(b, SAC_ERR_FORMAT,
                "tensor 'w' of type F32 has offset 2, which is not a multiple of 4, the alignment its values are read at "
                "(the file's general.alignment is 2)",
                "f32 at 2");
    free(b.p);
    b = tensor_file_aligned(&(tinfo){"w", 1, {32}, SAC_TYPE_Q8_0, 1}, 1, 64, 1);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensor 'w' of type Q8_0 has offset 1, which is not a multiple of 2", "q8_0 at 1");
    free(b.p);
    const tinfo at_their_alignment[2] = {{"h", 1, {4}, SAC_TYPE_F16, 2}, {"q", 1, {32}, SAC_TYPE_Q8_0, 10}};
    b = tensor_file_aligned(at_their_alignment, 2, 64, 1);
    {
        gguf_file f;
        sac_error err = {0};
        CHECK_MSG(sac_gguf_parse(&f, b.p, b.len, &err) == SAC_OK, "tensors at their types' alignment: %s", err.msg);
        for (uint64_t i = 0; i < f.n_tensors; i++)
            CHECK_MSG((uintptr_t)f.tensors[i].data % 2 == 0, "tensor %" PRIu64 " placed at an odd address", i);
        sac_gguf_release(&f);
    }
    free(b.p);

    /* Two tensors: the second overlaps the first, or has the same name. */
    const tinfo overlap[3] = {{"c", 1, {8}, SAC_TYPE_F32, 128},
                              {"a", 1, {16}, SAC_TYPE_F32, 0},
                              {"b", 1, {8}, SAC_TYPE_F32, 32}};
    b = tensor_file(overlap, 3, 256);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "tensors 'a' and 'b' overlap: 'a' occupies bytes 0..64 and 'b' starts at 32", "overlap");
    free(b.p);
    const tinfo adjacent[2] = {{"a", 1, {8}, SAC_TYPE_F32, 0}, {"b", 1, {8}, SAC_TYPE_F32, 32}};
    b = tensor_file(adjacent, 2, 64);
    gguf_file f;
    sac_error err = {0};
    CHECK_MSG(sac_gguf_parse(&f, b.p, b.len, &err) == SAC_OK, "adjacent tensors: %s", err.msg);
    sac_gguf_release(&f);
    free(b.p);
    const tinfo dup[2] = {{"same", 1, {8}, SAC_TYPE_F32, 0}, {"same", 1, {8}, SAC_TYPE_F32, 32}};
    b = tensor_file(dup, 2, 64);
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "duplicate tensor name 'same'", "duplicate tensor");
    free(b.p);

    /* Tensor infos followed by no data section at all. */
    b = tensor_file(&(tinfo){"w", 1, {8}, SAC_TYPE_F32, 0}, 1, 0);
    b.len -= b.len % 32 ? 0 : 1; /* cut into the padding */
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "truncated file: the data section of 1 tensors starts at offset", "no data");
    free(b.p);
    /* A tensor info cut short names the tensor. */
    b = tensor_file(&(tinfo){"w", 2, {8, 2}, SAC_TYPE_F32, 0}, 1, 0);
    b.len = 24 + 44 + 9 + 4 + 8 + 3; /* header, one kv, name, n_dims, ne[0], 3 bytes of ne[1] */
    EXPECT_FAIL(b, SAC_ERR_FORMAT, "truncated file: info of tensor 'w' needs 8 bytes", "short info");
    free(b.p);
}

/* Keys and tensor names are names: NUL or ill-formed UTF-8 is refused, naming the entry;
 * a clipped name in a message ends on a character boundary. */
static void test_names_are_text(void) {
    struct { const char *name; size_t len; const char *words; } bad[] = {
        {"gpt2\0evil", 9, "contains a NUL byte (at byte 4)"},
        {"\0", 1, "contains a NUL byte (at byte 0)"},
        {"a\xff" "b", 3, "is not valid UTF-8"},
        {"caf\xc3", 4, "is not valid UTF-8"},            /* a truncated character */
        {"\xed\xa0\x80", 3, "is not valid UTF-8"},       /* a UTF-16 surrogate */
        {"\xc0\xaf", 2, "is not valid UTF-8"},           /* an overlong '/' */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int tensor = 0; tensor < 2; tensor++) {
            bytes b = {0};
            put_header(&b, 3, (uint64_t)tensor, 2);
            put_kv_u32(&b, "general.alignment", 32);
            if (tensor) put_kv_u32(&b, "x", 1);
            put_u64(&b, bad[i].len);
            put(&b, bad[i].name, bad[i].len);
            if (tensor) {
                put_u32(&b, 1);
                put_u64(&b, 8);
                put_u32(&b, SAC_TYPE_F32);
                put_u64(&b, 0);
                put_pad(&b, 32);
                put_zeros(&b, 32);
            } else {
                put_u32(&b, GGUF_TYPE_U32);
                put_u32(&b, 7);
            }
            char want[96];
            snprintf(want, sizeof want, "the %s #%d %s", tensor ? "name of tensor info" : "key of metadata entry",
                     tensor ? 0 : 1, bad[i].words);
            EXPECT_FAIL(b, SAC_ERR_FORMAT, want, bad[i].name);
            free(b.p);
        }
    }
    /* a long name of two-byte characters, quoted in a message: clipped between characters */
    char name[301];
    for (int i = 0; i < 300; i += 2) memcpy(name + i, "\xc3\xa9", 2);
    name[300] = '\0';
    bytes b = {0};
    put_header(&b, 3, 0, 2);
    put_kv_u32(&b, name, 1);
    put_kv_u32(&b, name, 2);
    gguf_file f;
    sac_error err = {0};
    CHECK(sac_gguf_parse(&f, b.p, b.len, &err) == SAC_ERR_FORMAT);
    CHECK_MSG(contains(err.msg, "duplicate metadata key"), "%s", err.msg);
    CHECK_MSG(sac_utf8_valid((const uint8_t *)err.msg, strlen(err.msg)), "message is not UTF-8: %s", err.msg);
    sac_gguf_release(&f);
    free(b.p);
}

/* The same bytes at an aligned and at an odd address: in place, then copied once. */
static void test_misaligned_buffer(void) {
    uint8_t *buf = NULL;
    size_t size = 0;
    sac_error err = {0};
    CHECK_MSG(write_round_trip(GGUF_DEFAULT_ALIGNMENT, &buf, &size, &err) == SAC_OK, "%s", err.msg);
    if (!buf) return;
    size_t cap = (size + 1 + 63) / 64 * 64;
    uint8_t *mem = aligned_alloc(64, cap);
    for (int shift = 0; shift < 2; shift++) {
        uint8_t *at = mem + shift;
        memcpy(at, buf, size);
        gguf_file f;
        CHECK_MSG(sac_gguf_parse(&f, at, size, &err) == SAC_OK, "shift %d: %s", shift, err.msg);
        int in_place = f.data >= at && f.data < at + size;
        if (shift == 0) {
            CHECK(f.data_copy == NULL && in_place && f.data == at + f.data_offset);
        } else {
            CHECK(f.data_copy != NULL && !in_place && (uintptr_t)f.data % 64 == 0);
        }
        check_round_trip(&f, GGUF_DEFAULT_ALIGNMENT); /* compares every tensor's bytes */
        /* Metadata strings still point into the caller's buffer. */
        CHECK(f.n_kv > 0 && (const uint8_t *)f.kv[0].key.data >= at &&
              (const uint8_t *)f.kv[0].key.data < at + size);
        sac_gguf_release(&f);
    }
    free(mem);
    free(buf);
    free_round_trip_data();
}

int main(void) {
    RUN(test_round_trip);
    RUN(test_writer_exact_bytes);
    RUN(test_writer_rejects_bad_input);
    RUN(test_getters);
    RUN(test_vocab_gpt2);
    RUN(test_vocab_llama);
    RUN(test_every_truncation);
    RUN(test_bad_header);
    RUN(test_bad_metadata);
    RUN(test_bad_tensor_infos);
    RUN(test_names_are_text);
    RUN(test_misaligned_buffer);
    return check_summary("test_gguf");
}
