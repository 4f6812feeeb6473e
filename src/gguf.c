/* gguf.c — parses and validates a GGUF file (versions 2 and 3) held in memory.
 *
 * Reading order: a bounds-checked cursor → header → metadata (key, type, value) → tensor
 * infos → the data section and per-tensor checks → lookups and typed getters.
 *
 * Every length and count read from the file is checked against the bytes that remain
 * before anything proportional to it is allocated, with overflow-checked arithmetic, so a
 * hostile file fails with a message instead of exhausting memory. Values are decoded
 * byte by byte (little-endian), which is correct on any host and any alignment. */
#include "gguf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"
#include "unicode.h"

/* Smallest encodings, used to bound counts before allocating: a metadata entry is a key
 * length (8) + value type (4) + a 1-byte value; a tensor info is a name length (8) +
 * n_dims (4) + one dim (8) + type (4) + offset (8). */
#define MIN_KV_BYTES 13u
#define MIN_TENSOR_INFO_BYTES 32u

/* Names in messages are clipped: they come from the file and may be arbitrarily long. Names
 * are checked to be UTF-8 before any message quotes them, and the clip ends on a character
 * boundary, so every message is well-formed UTF-8. */
#define NAME_FMT "%.*s"
#define NAME_ARG(s) sac_gguf_clip(s, 96), (s).data

/* ------------------------------------------------------------------------------------------
 * The cursor: every read checks the remaining bytes and explains a shortfall.
 * ---------------------------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *buf;
    uint64_t size;
    uint64_t pos;
    sac_error *err;
    /* What is being read, for the truncation message: "<what> '<name>'" when name is set,
     * otherwise "<what> #<index>" (or just "<what>" when index is UINT64_MAX). Kept as
     * parts so that nothing is formatted unless there is an error. */
    const char *what;
    gguf_string name;
    uint64_t index;
} reader;

static void set_context(reader *r, const char *what, gguf_string name, uint64_t index) {
    r->what = what;
    r->name = name;
    r->index = index;
}

static sac_status truncated(reader *r, uint64_t n) {
    char subject[160];
    if (r->name.data)
        snprintf(subject, sizeof subject, "%s '" NAME_FMT "'", r->what, NAME_ARG(r->name));
    else if (r->index != UINT64_MAX)
        snprintf(subject, sizeof subject, "%s #%" PRIu64, r->what, r->index);
    else
        snprintf(subject, sizeof subject, "%s", r->what);
    return sac_fail(r->err, SAC_ERR_FORMAT,
                    "truncated file: %s needs %" PRIu64 " bytes at offset %" PRIu64
                    ", file has %" PRIu64 " bytes",
                    subject, n, r->pos, r->size);
}

static uint64_t remaining(const reader *r) { return r->size - r->pos; }

/* Checks that n bytes follow the cursor. */
static sac_status need(reader *r, uint64_t n) {
    return n <= remaining(r) ? SAC_OK : truncated(r, n);
}

static uint64_t load_le(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Reads an n-byte (1, 2, 4 or 8) little-endian unsigned integer. */
static sac_status read_le(reader *r, unsigned n, uint64_t *out) {
    sac_status st = need(r, n);
    if (st) return st;
    *out = load_le(r->buf + r->pos, n);
    r->pos += n;
    return SAC_OK;
}

static sac_status read_u32(reader *r, uint32_t *out) {
    uint64_t v = 0;
    sac_status st = read_le(r, 4, &v);
    *out = (uint32_t)v;
    return st;
}

static sac_status read_u64(reader *r, uint64_t *out) { return read_le(r, 8, out); }

/* A u64 length followed by that many bytes; the string points into the buffer. */
static sac_status read_string(reader *r, gguf_string *out) {
    uint64_t len;
    sac_status st = read_u64(r, &len);
    if (st) return st;
    if ((st = need(r, len))) return st;
    out->data = (const char *)(r->buf + r->pos);
    out->len = len;
    r->pos += len;
    return SAC_OK;
}

/* Keys and tensor names are names: well-formed UTF-8 without NUL, so that every surface
 * shows, compares and quotes the same name (a C string would end at a NUL, and ill-formed
 * bytes would print differently in C and in JavaScript). */
static sac_status check_name(reader *r, gguf_string name, const char *what, uint64_t index) {
    const uint8_t *p = (const uint8_t *)name.data;
    const uint8_t *nul = name.len ? memchr(p, 0, (size_t)name.len) : NULL;
    if (nul)
        return sac_fail(r->err, SAC_ERR_FORMAT, "the %s #%" PRIu64 " contains a NUL byte (at byte %td)", what,
                        index, nul - p);
    if (!sac_utf8_valid(p, (size_t)name.len))
        return sac_fail(r->err, SAC_ERR_FORMAT, "the %s #%" PRIu64 " is not valid UTF-8", what, index);
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Value types
 * ---------------------------------------------------------------------------------------- */

const char *sac_gguf_value_type_name(uint32_t type) {
    static const char *const names[GGUF_TYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
    };
    return type < GGUF_TYPE_COUNT ? names[type] : "unknown";
}

unsigned sac_gguf_value_size(uint32_t type) {
    switch (type) {
    case GGUF_TYPE_U8: case GGUF_TYPE_I8: case GGUF_TYPE_BOOL: return 1;
    case GGUF_TYPE_U16: case GGUF_TYPE_I16: return 2;
    case GGUF_TYPE_U32: case GGUF_TYPE_I32: case GGUF_TYPE_F32: return 4;
    case GGUF_TYPE_U64: case GGUF_TYPE_I64: case GGUF_TYPE_F64: return 8;
    }
    return 0;
}

static int is_signed_int(uint32_t type) {
    return type == GGUF_TYPE_I8 || type == GGUF_TYPE_I16 || type == GGUF_TYPE_I32 ||
           type == GGUF_TYPE_I64;
}

static int is_unsigned_int(uint32_t type) {
    return type == GGUF_TYPE_U8 || type == GGUF_TYPE_U16 || type == GGUF_TYPE_U32 ||
           type == GGUF_TYPE_U64;
}

static int is_float(uint32_t type) { return type == GGUF_TYPE_F32 || type == GGUF_TYPE_F64; }

/* Sign-extends the low `bytes` bytes of v. */
static int64_t sign_extend(uint64_t v, unsigned bytes) {
    if (bytes == 8) return v > (uint64_t)INT64_MAX ? -(int64_t)(~v) - 1 : (int64_t)v;
    uint64_t sign = (uint64_t)1 << (8 * bytes - 1);
    v &= (sign << 1) - 1;
    return (int64_t)(v ^ sign) - (int64_t)sign;
}

static double bits_to_double(uint64_t bits, unsigned bytes) {
    if (bytes == 4) {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Decodes a fixed-size value of `type` from raw little-endian bits into the widened
 * fields: integers and bool in i64 (unsigned values above INT64_MAX only in u64; every
 * non-negative integer also in u64), floats in f64. */
static void widen_scalar(uint32_t type, uint64_t bits, gguf_kv *kv) {
    unsigned n = sac_gguf_value_size(type);
    if (is_float(type)) {
        kv->f64 = bits_to_double(bits, n);
    } else if (is_signed_int(type)) {
        kv->i64 = sign_extend(bits, n);
        kv->u64 = kv->i64 >= 0 ? (uint64_t)kv->i64 : 0;
    } else { /* unsigned integers and bool */
        kv->u64 = bits;
        kv->i64 = bits <= (uint64_t)INT64_MAX ? (int64_t)bits : INT64_MAX;
    }
}

/* ------------------------------------------------------------------------------------------
 * Metadata
 * ---------------------------------------------------------------------------------------- */

static sac_status unknown_value_type(reader *r, const gguf_kv *kv, uint32_t type, const char *role) {
    return sac_fail(r->err, SAC_ERR_FORMAT,
                    "metadata key '" NAME_FMT "' has unknown %s type %" PRIu32
                    " at offset %" PRIu64 " (known types are 0..%d)",
                    NAME_ARG(kv->key), role, type, r->pos - 4, GGUF_TYPE_COUNT - 1);
}

/* Array header (element type, count) and elements: validated, not copied. */
static sac_status read_array(reader *r, gguf_kv *kv) {
    sac_status st;
    if ((st = read_u32(r, &kv->arr_type))) return st;
    if (kv->arr_type == GGUF_TYPE_ARRAY)
        return sac_fail(r->err, SAC_ERR_FORMAT,
                        "metadata key '" NAME_FMT "' is an array of arrays; nested arrays are "
                        "not supported",
                        NAME_ARG(kv->key));
    if (kv->arr_type >= GGUF_TYPE_COUNT) return unknown_value_type(r, kv, kv->arr_type, "array element");
    if ((st = read_u64(r, &kv->arr_count))) return st;

    uint64_t start = r->pos;
    /* A string element is at least its 8-byte length. */
    uint64_t elem_min = kv->arr_type == GGUF_TYPE_STRING ? 8 : sac_gguf_value_size(kv->arr_type);
    uint64_t min_bytes;
    if (!sac_mul_u64(kv->arr_count, elem_min, &min_bytes) || min_bytes > remaining(r))
        return sac_fail(r->err, SAC_ERR_FORMAT,
                        "truncated file: metadata key '" NAME_FMT "' claims %" PRIu64
                        " elements of type %s at offset %" PRIu64
                        ", more than the %" PRIu64 " bytes left in the file",
                        NAME_ARG(kv->key), kv->arr_count, sac_gguf_value_type_name(kv->arr_type),
                        r->pos, remaining(r));
    if (kv->arr_type == GGUF_TYPE_STRING) {
        for (uint64_t i = 0; i < kv->arr_count; i++) {
            gguf_string s;
            if ((st = read_string(r, &s))) return st;
        }
    } else {
        r->pos += min_bytes;
    }
    kv->arr_data = r->buf + start;
    kv->arr_nbytes = r->pos - start;
    return SAC_OK;
}

static sac_status read_kv(reader *r, uint64_t index, gguf_kv *kv) {
    sac_status st;
    set_context(r, "key of metadata entry", (gguf_string){NULL, 0}, index);
    if ((st = read_string(r, &kv->key))) return st;
    if ((st = check_name(r, kv->key, "key of metadata entry", index))) return st;
    set_context(r, "metadata value of key", kv->key, UINT64_MAX);
    if ((st = read_u32(r, &kv->type))) return st;
    if (kv->type == GGUF_TYPE_STRING) return read_string(r, &kv->str);
    if (kv->type == GGUF_TYPE_ARRAY) return read_array(r, kv);
    unsigned n = sac_gguf_value_size(kv->type);
    if (n == 0) return unknown_value_type(r, kv, kv->type, "value");
    uint64_t bits;
    if ((st = read_le(r, n, &bits))) return st;
    widen_scalar(kv->type, bits, kv);
    return SAC_OK;
}

static int string_cmp(gguf_string a, gguf_string b) {
    uint64_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.data, b.data, (size_t)n) : 0;
    if (c) return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

static int cmp_kv_by_key(const void *a, const void *b) {
    return string_cmp((*(const gguf_kv *const *)a)->key, (*(const gguf_kv *const *)b)->key);
}

static int cmp_tensor_by_name(const void *a, const void *b) {
    return string_cmp((*(const gguf_tensor *const *)a)->name, (*(const gguf_tensor *const *)b)->name);
}

static int cmp_tensor_by_offset(const void *a, const void *b) {
    const gguf_tensor *x = *(const gguf_tensor *const *)a, *y = *(const gguf_tensor *const *)b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x < y ? -1 : x > y; /* ties in file order, so the message is deterministic */
}

/* An array of n pointers to the elements of `items`, sorted with `cmp`. Duplicates are
 * found by sorting rather than comparing all pairs, since n can be large in a hostile file. */
static sac_status sorted_pointers(const void *items, size_t item_size, uint64_t n,
                                  int (*cmp)(const void *, const void *), const void ***out,
                                  sac_error *err) {
    *out = NULL;
    if (n < 2) return SAC_OK;
    const void **p = malloc((size_t)n * sizeof *p); /* n fits: it already has an array */
    if (!p) return sac_fail(err, SAC_ERR_NOMEM, "out of memory sorting %" PRIu64 " entries", n);
    for (uint64_t i = 0; i < n; i++) p[i] = (const char *)items + i * item_size;
    qsort(p, (size_t)n, sizeof *p, cmp);
    *out = p;
    return SAC_OK;
}

static sac_status check_unique_keys(const gguf_file *f, sac_error *err) {
    const void **p;
    sac_status st = sorted_pointers(f->kv, sizeof *f->kv, f->n_kv, cmp_kv_by_key, &p, err);
    if (st || !p) return st;
    for (uint64_t i = 1; i < f->n_kv && !st; i++) {
        if (cmp_kv_by_key(&p[i - 1], &p[i]) == 0)
            st = sac_fail(err, SAC_ERR_FORMAT, "duplicate metadata key '" NAME_FMT "'",
                          NAME_ARG(((const gguf_kv *)p[i])->key));
    }
    free(p);
    return st;
}

/* general.alignment, when present, must be a u32 power of two. */
static sac_status read_alignment(gguf_file *f, sac_error *err) {
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    const gguf_kv *kv = sac_gguf_find_kv(f, "general.alignment");
    if (!kv) return SAC_OK;
    if (kv->type != GGUF_TYPE_U32)
        return sac_fail(err, SAC_ERR_FORMAT, "general.alignment must be a u32, but it is a %s",
                        sac_gguf_value_type_name(kv->type));
    if (kv->u64 == 0 || (kv->u64 & (kv->u64 - 1)) != 0)
        return sac_fail(err, SAC_ERR_FORMAT,
                        "general.alignment must be a power of two, but it is %" PRIu64, kv->u64);
    f->alignment = (uint32_t)kv->u64;
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Tensor infos
 * ---------------------------------------------------------------------------------------- */

static sac_status read_tensor_info(reader *r, uint64_t index, gguf_tensor *t) {
    sac_status st;
    set_context(r, "name of tensor info", (gguf_string){NULL, 0}, index);
    if ((st = read_string(r, &t->name))) return st;
    if ((st = check_name(r, t->name, "name of tensor info", index))) return st;
    set_context(r, "info of tensor", t->name, UINT64_MAX);
    if ((st = read_u32(r, &t->n_dims))) return st;
    if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
        return sac_fail(r->err, SAC_ERR_FORMAT,
                        "tensor '" NAME_FMT "' has %" PRIu32 " dimensions; saccade supports 1 to %d",
                        NAME_ARG(t->name), t->n_dims, GGUF_MAX_DIMS);
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
        t->ne[d] = 1;
        if (d >= t->n_dims) continue;
        if ((st = read_u64(r, &t->ne[d]))) return st;
        if (t->ne[d] == 0)
            return sac_fail(r->err, SAC_ERR_FORMAT,
                            "tensor '" NAME_FMT "' has dimension %" PRIu32 " equal to 0",
                            NAME_ARG(t->name), d);
        /* The engine indexes with int64_t, so the count must fit there too. */
        if (!sac_mul_u64(n_elements, t->ne[d], &n_elements) || n_elements > (uint64_t)INT64_MAX)
            return sac_fail(r->err, SAC_ERR_FORMAT,
                            "tensor '" NAME_FMT "': the element count of its dimensions overflows",
                            NAME_ARG(t->name));
    }
    t->n_elements = n_elements;
    if ((st = read_u32(r, &t->type))) return st;
    if ((st = read_u64(r, &t->offset))) return st;

    const sac_type_traits *tr = sac_type_traits_get(t->type);
    if (!tr) {
        const char *name = sac_type_name(t->type);
        if (strncmp(name, "type ", 5) == 0)
            return sac_fail(r->err, SAC_ERR_UNSUPPORTED,
                            "tensor '" NAME_FMT "' has unknown type %" PRIu32
                            ", which saccade does not support",
                            NAME_ARG(t->name), t->type);
        return sac_fail(r->err, SAC_ERR_UNSUPPORTED,
                        "tensor '" NAME_FMT "' has type %s (%" PRIu32
                        "), which saccade does not support",
                        NAME_ARG(t->name), name, t->type);
    }
    if (t->ne[0] % (uint64_t)tr->block_size != 0)
        return sac_fail(r->err, SAC_ERR_FORMAT,
                        "tensor '" NAME_FMT "' of type %s has %" PRIu64
                        " values per row, not a multiple of the block size %" PRId64,
                        NAME_ARG(t->name), tr->name, t->ne[0], tr->block_size);
    if (!sac_mul_u64(n_elements / (uint64_t)tr->block_size, tr->type_size, &t->n_bytes))
        return sac_fail(r->err, SAC_ERR_FORMAT, "tensor '" NAME_FMT "': its size in bytes overflows",
                        NAME_ARG(t->name));
    return SAC_OK;
}

sac_status sac_gguf_index_tensors(gguf_file *f, sac_error *err) {
    free(f->by_name);
    const void **p;
    sac_status st = sorted_pointers(f->tensors, sizeof *f->tensors, f->n_tensors, cmp_tensor_by_name, &p, err);
    f->by_name = (const gguf_tensor **)p;
    return st;
}

static sac_status check_unique_tensor_names(gguf_file *f, sac_error *err) {
    sac_status st = sac_gguf_index_tensors(f, err);
    const gguf_tensor **p = f->by_name;
    if (st || !p) return st;
    for (uint64_t i = 1; i < f->n_tensors && !st; i++) {
        if (string_cmp(p[i - 1]->name, p[i]->name) == 0)
            st = sac_fail(err, SAC_ERR_FORMAT, "duplicate tensor name '" NAME_FMT "'", NAME_ARG(p[i]->name));
    }
    return st;
}

/* Each tensor's bytes lie inside the data section at an aligned offset, and no two
 * tensors share a byte. */
static sac_status check_tensor_placement(const gguf_file *f, sac_error *err) {
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const gguf_tensor *t = &f->tensors[i];
        uint64_t end;
        if (t->offset % f->alignment != 0)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "tensor '" NAME_FMT "' has offset %" PRIu64
                            ", which is not a multiple of the alignment %" PRIu32,
                            NAME_ARG(t->name), t->offset, f->alignment);
        /* (the data section itself starts at 16: place_data) */
        const sac_type_traits *tr = sac_type_traits_get(t->type); /* read_tensor_info took only these */
        if (t->offset % tr->align != 0)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "tensor '" NAME_FMT "' of type %s has offset %" PRIu64
                            ", which is not a multiple of %zu, the alignment its values are read at"
                            " (the file's general.alignment is %" PRIu32 ")",
                            NAME_ARG(t->name), tr->name, t->offset, tr->align, f->alignment);
        if (!sac_add_u64(t->offset, t->n_bytes, &end) || end > f->data_size)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "tensor '" NAME_FMT "' data is out of bounds: %" PRIu64
                            " bytes at offset %" PRIu64 " of a data section of %" PRIu64
                            " bytes (truncated file?)",
                            NAME_ARG(t->name), t->n_bytes, t->offset, f->data_size);
    }
    const void **p;
    sac_status st = sorted_pointers(f->tensors, sizeof *f->tensors, f->n_tensors,
                                    cmp_tensor_by_offset, &p, err);
    if (st || !p) return st;
    for (uint64_t i = 1; i < f->n_tensors && !st; i++) {
        const gguf_tensor *a = p[i - 1], *b = p[i];
        if (a->offset + a->n_bytes > b->offset) /* no overflow: checked above */
            st = sac_fail(err, SAC_ERR_FORMAT,
                          "tensors '" NAME_FMT "' and '" NAME_FMT "' overlap: '" NAME_FMT
                          "' occupies bytes %" PRIu64 "..%" PRIu64 " and '" NAME_FMT
                          "' starts at %" PRIu64,
                          NAME_ARG(a->name), NAME_ARG(b->name), NAME_ARG(a->name), a->offset,
                          a->offset + a->n_bytes, NAME_ARG(b->name), b->offset);
    }
    free(p);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * The whole file
 * ---------------------------------------------------------------------------------------- */

static sac_status read_header(reader *r, gguf_file *f) {
    static const uint8_t magic[4] = {'G', 'G', 'U', 'F'};
    sac_status st;
    set_context(r, "header", (gguf_string){NULL, 0}, UINT64_MAX);
    if (r->size >= 4 && memcmp(r->buf, magic, 4) != 0)
        return sac_fail(r->err, SAC_ERR_FORMAT,
                        "not a GGUF file: it starts with bytes %02x %02x %02x %02x, not 'GGUF'",
                        r->buf[0], r->buf[1], r->buf[2], r->buf[3]);
    if ((st = need(r, 4))) return st;
    r->pos = 4;
    set_context(r, "version in header", (gguf_string){NULL, 0}, UINT64_MAX);
    if ((st = read_u32(r, &f->version))) return st;
    if (f->version == 1)
        return sac_fail(r->err, SAC_ERR_UNSUPPORTED,
                        "unsupported GGUF version 1 (an obsolete layout); versions 2 and 3 are "
                        "supported");
    if (f->version == 0x02000000u || f->version == 0x03000000u)
        return sac_fail(r->err, SAC_ERR_UNSUPPORTED,
                        "unsupported GGUF version %" PRIu32 " (a big-endian file?); only "
                        "little-endian versions 2 and 3 are supported",
                        f->version);
    if (f->version != 2 && f->version != 3)
        return sac_fail(r->err, SAC_ERR_UNSUPPORTED,
                        "unsupported GGUF version %" PRIu32 "; versions 2 and 3 are supported",
                        f->version);
    set_context(r, "tensor count in header", (gguf_string){NULL, 0}, UINT64_MAX);
    if ((st = read_u64(r, &f->n_tensors))) return st;
    set_context(r, "metadata count in header", (gguf_string){NULL, 0}, UINT64_MAX);
    if ((st = read_u64(r, &f->n_kv))) return st;

    /* Bound both counts by the bytes left before allocating anything for them. */
    uint64_t kv_bytes, tensor_bytes, min_bytes;
    if (!sac_mul_u64(f->n_kv, MIN_KV_BYTES, &kv_bytes) ||
        !sac_mul_u64(f->n_tensors, MIN_TENSOR_INFO_BYTES, &tensor_bytes) ||
        !sac_add_u64(kv_bytes, tensor_bytes, &min_bytes) || min_bytes > remaining(r))
        return sac_fail(r->err, SAC_ERR_FORMAT,
                        "truncated or corrupt file: the header claims %" PRIu64
                        " metadata entries and %" PRIu64 " tensors, more than the %" PRIu64
                        " bytes after the header can hold",
                        f->n_kv, f->n_tensors, remaining(r));
    return SAC_OK;
}

/* calloc(n, size) with the product checked against size_t (32 bits in wasm). */
static sac_status alloc_array(uint64_t n, size_t size, void **out, const char *what, sac_error *err) {
    uint64_t bytes;
    *out = NULL;
    if (n == 0) return SAC_OK;
    if (!sac_mul_u64(n, size, &bytes) || bytes > SIZE_MAX ||
        !(*out = calloc((size_t)n, size)))
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory for %" PRIu64 " %s", n, what);
    return SAC_OK;
}

/* Points the tensors at their data. Weights are used in place when the data section
 * starts 16-byte aligned in memory (enough for the F32 and SIMD kernels to read them
 * directly); otherwise — e.g. a buffer at an odd address — the data section is copied
 * once into a 64-byte-aligned allocation (data_copy) and the tensors point there. */
static sac_status place_data(gguf_file *f, const uint8_t *buf, sac_error *err) {
    f->data = buf + f->data_offset;
    if (f->n_tensors > 0 && f->data_size > 0 && ((uintptr_t)f->data % 16) != 0) {
        uint64_t rounded = (f->data_size + 63) & ~(uint64_t)63; /* aligned_alloc wants a multiple */
        if (rounded < f->data_size || rounded > SIZE_MAX ||
            !(f->data_copy = aligned_alloc(64, (size_t)rounded)))
            return sac_fail(err, SAC_ERR_NOMEM,
                            "out of memory copying %" PRIu64 " bytes of misaligned tensor data",
                            f->data_size);
        memcpy(f->data_copy, f->data, (size_t)f->data_size);
        f->data = f->data_copy;
    }
    for (uint64_t i = 0; i < f->n_tensors; i++) f->tensors[i].data = f->data + f->tensors[i].offset;
    return SAC_OK;
}

sac_status sac_gguf_parse(gguf_file *f, const void *buf, size_t size, sac_error *err) {
    if (!f) return sac_fail(err, SAC_ERR_ARG, "sac_gguf_parse: no gguf_file given");
    memset(f, 0, sizeof *f);
    if (!buf && size > 0) return sac_fail(err, SAC_ERR_ARG, "sac_gguf_parse: NULL buffer of %zu bytes", size);

    reader r = {buf, size, 0, err, "", {NULL, 0}, UINT64_MAX};
    sac_status st;
    if ((st = read_header(&r, f))) return st;

    if ((st = alloc_array(f->n_kv, sizeof *f->kv, (void **)&f->kv, "metadata entries", err))) return st;
    for (uint64_t i = 0; i < f->n_kv; i++)
        if ((st = read_kv(&r, i, &f->kv[i]))) return st;
    if ((st = check_unique_keys(f, err))) return st;
    if ((st = read_alignment(f, err))) return st;

    if ((st = alloc_array(f->n_tensors, sizeof *f->tensors, (void **)&f->tensors, "tensors", err)))
        return st;
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if ((st = read_tensor_info(&r, i, &f->tensors[i]))) return st;
    if ((st = check_unique_tensor_names(f, err))) return st;

    /* The data section starts at the next multiple of the alignment. A file without
     * tensors may end right after its metadata, padding and all (as the vocab-only files
     * llama.cpp ships do); its (empty) data section is then the end of the file. */
    uint64_t data_offset;
    if (!sac_add_u64(r.pos, f->alignment - 1, &data_offset))
        return sac_fail(err, SAC_ERR_FORMAT, "data section offset overflows");
    data_offset -= data_offset % f->alignment;
    if (data_offset > r.size) {
        /* (an alignment that alone puts the data past the end is the key's fault, not a cut file) */
        if (f->n_tensors > 0 && f->alignment > GGUF_DEFAULT_ALIGNMENT && r.pos + GGUF_DEFAULT_ALIGNMENT <= r.size)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "general.alignment = %" PRIu32 " puts the data section of %" PRIu64
                            " tensors at offset %" PRIu64 ", past the end of the file (%" PRIu64 " bytes)",
                            f->alignment, f->n_tensors, data_offset, r.size);
        if (f->n_tensors > 0)
            return sac_fail(err, SAC_ERR_FORMAT,
                            "truncated file: the data section of %" PRIu64
                            " tensors starts at offset %" PRIu64 ", file has %" PRIu64 " bytes",
                            f->n_tensors, data_offset, r.size);
        data_offset = r.size;
    }
    f->data_offset = data_offset;
    f->data_size = r.size - data_offset;
    if ((st = check_tensor_placement(f, err))) return st;
    return place_data(f, buf, err);
}

void sac_gguf_release(gguf_file *f) {
    if (!f) return;
    free(f->kv);
    free(f->tensors);
    free(f->data_copy);
    free(f->by_name);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------------------------------------
 * Lookups
 * ---------------------------------------------------------------------------------------- */

int sac_gguf_clip(gguf_string s, uint64_t max) {
    uint64_t n = s.len > max ? max : s.len;
    if (n < s.len)
        while (n > 0 && (s.data[n] & 0xC0) == 0x80) n--; /* s.data[n] continues a character */
    return (int)n;
}

int sac_gguf_string_eq(gguf_string s, const char *cstr) {
    if (!cstr) return 0;
    size_t n = strlen(cstr);
    return s.len == n && (n == 0 || memcmp(s.data, cstr, n) == 0);
}

const gguf_kv *sac_gguf_find_kv(const gguf_file *f, const char *key) {
    if (!f || !key) return NULL;
    for (uint64_t i = 0; i < f->n_kv; i++)
        if (sac_gguf_string_eq(f->kv[i].key, key)) return &f->kv[i];
    return NULL;
}

const gguf_tensor *sac_gguf_find_tensor(const gguf_file *f, const char *name) {
    if (!f || !name) return NULL;
    if (!f->by_name) { /* (fewer than two) */
        for (uint64_t i = 0; i < f->n_tensors; i++)
            if (sac_gguf_string_eq(f->tensors[i].name, name)) return &f->tensors[i];
        return NULL;
    }
    const gguf_string key = {name, strlen(name)};
    uint64_t lo = 0, hi = f->n_tensors; /* the first name >= key is in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (string_cmp(f->by_name[mid]->name, key) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < f->n_tensors && string_cmp(f->by_name[lo]->name, key) == 0 ? f->by_name[lo] : NULL;
}

/* ------------------------------------------------------------------------------------------
 * Typed getters
 * ---------------------------------------------------------------------------------------- */

static sac_status find_required(const gguf_file *f, const char *key, const gguf_kv **kv,
                                sac_error *err) {
    *kv = sac_gguf_find_kv(f, key);
    if (!*kv) return sac_fail(err, SAC_ERR_MODEL, "missing metadata key '%s'", key ? key : "(null)");
    return SAC_OK;
}

static sac_status wrong_type(const gguf_kv *kv, const char *key, const char *expected, sac_error *err) {
    if (kv->type == GGUF_TYPE_ARRAY)
        return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' should be %s, but it is an array of %s",
                        key, expected, sac_gguf_value_type_name(kv->arr_type));
    return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' should be %s, but it is a %s", key,
                    expected, sac_gguf_value_type_name(kv->type));
}

sac_status sac_gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out, sac_error *err) {
    const gguf_kv *kv;
    sac_status st = find_required(f, key, &kv, err);
    if (st) return st;
    if (!is_signed_int(kv->type) && !is_unsigned_int(kv->type))
        return wrong_type(kv, key, "an integer (u32)", err);
    if ((is_signed_int(kv->type) && kv->i64 < 0) || kv->u64 > UINT32_MAX) {
        if (is_signed_int(kv->type))
            return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' = %" PRId64 " is out of range for a u32",
                            key, kv->i64);
        return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' = %" PRIu64 " is out of range for a u32",
                        key, kv->u64);
    }
    *out = (uint32_t)kv->u64;
    return SAC_OK;
}

sac_status sac_gguf_get_f32(const gguf_file *f, const char *key, float *out, sac_error *err) {
    const gguf_kv *kv;
    sac_status st = find_required(f, key, &kv, err);
    if (st) return st;
    if (!is_float(kv->type)) return wrong_type(kv, key, "a float (f32 or f64)", err);
    /* An f64 beyond float's range would silently become infinity. */
    if (kv->type == GGUF_TYPE_F64 && (kv->f64 > 3.4028234663852886e38 || kv->f64 < -3.4028234663852886e38))
        return sac_fail(err, SAC_ERR_MODEL, "metadata key '%s' = %g is out of range for an f32", key, kv->f64);
    *out = (float)kv->f64;
    return SAC_OK;
}

sac_status sac_gguf_get_bool(const gguf_file *f, const char *key, int *out, sac_error *err) {
    const gguf_kv *kv;
    sac_status st = find_required(f, key, &kv, err);
    if (st) return st;
    if (kv->type != GGUF_TYPE_BOOL) return wrong_type(kv, key, "a bool", err);
    *out = kv->u64 != 0;
    return SAC_OK;
}

sac_status sac_gguf_get_string(const gguf_file *f, const char *key, gguf_string *out, sac_error *err) {
    const gguf_kv *kv;
    sac_status st = find_required(f, key, &kv, err);
    if (st) return st;
    if (kv->type != GGUF_TYPE_STRING) return wrong_type(kv, key, "a string", err);
    *out = kv->str;
    return SAC_OK;
}

sac_status sac_gguf_get_array(const gguf_file *f, const char *key, uint32_t elem_type,
                          const gguf_kv **kv, sac_error *err) {
    const gguf_kv *found;
    sac_status st = find_required(f, key, &found, err);
    if (st) return st;
    if (found->type != GGUF_TYPE_ARRAY || found->arr_type != elem_type) {
        char expected[40];
        snprintf(expected, sizeof expected, "an array of %s", sac_gguf_value_type_name(elem_type));
        return wrong_type(found, key, expected, err);
    }
    *kv = found;
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Array elements (the array was validated by sac_gguf_parse, so no bounds checks here)
 * ---------------------------------------------------------------------------------------- */

void sac_gguf_array_strings(const gguf_kv *kv, gguf_string *out) {
    const uint8_t *p = kv->arr_data;
    for (uint64_t i = 0; i < kv->arr_count; i++) {
        out[i].len = load_le(p, 8);
        out[i].data = (const char *)(p + 8);
        p += 8 + out[i].len;
    }
}

/* Integers (and bool) exactly; floats truncated toward zero and clamped; u64 values above
 * INT64_MAX clamp to INT64_MAX; strings give 0. */
int64_t sac_gguf_array_int(const gguf_kv *kv, uint64_t i) {
    unsigned n = sac_gguf_value_size(kv->arr_type);
    if (n == 0 || i >= kv->arr_count) return 0;
    uint64_t bits = load_le(kv->arr_data + i * n, n);
    if (is_signed_int(kv->arr_type)) return sign_extend(bits, n);
    if (is_float(kv->arr_type)) {
        double d = bits_to_double(bits, n);
        if (d != d) return 0;
        if (d >= 9223372036854775807.0) return INT64_MAX;
        if (d <= -9223372036854775808.0) return INT64_MIN;
        return (int64_t)d;
    }
    return bits > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)bits;
}

/* Any numeric element as a double; strings give 0. */
double sac_gguf_array_float(const gguf_kv *kv, uint64_t i) {
    unsigned n = sac_gguf_value_size(kv->arr_type);
    if (n == 0 || i >= kv->arr_count) return 0;
    uint64_t bits = load_le(kv->arr_data + i * n, n);
    if (is_float(kv->arr_type)) return bits_to_double(bits, n);
    if (is_signed_int(kv->arr_type)) return (double)sign_extend(bits, n);
    return (double)bits;
}
