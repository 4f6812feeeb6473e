/* gguf_writer.c — serialises metadata and tensors into a GGUF version 3 file.
 *
 * Each metadata value is encoded to its file bytes when it is set, so writing the file is
 * a matter of laying out the header, the entries, the tensor infos and the padded data. */
#include "gguf_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

typedef struct writer_kv {
    char *key;
    size_t key_len;
    uint32_t type;     /* enum gguf_value_type */
    uint8_t *value;    /* the value's bytes as they appear in the file, after the type */
    size_t value_len;
} writer_kv;

typedef struct writer_tensor {
    char *name;
    size_t name_len;
    uint32_t n_dims;
    uint64_t ne[GGUF_MAX_DIMS];
    uint32_t type;
    uint8_t *data;     /* a copy of the caller's data */
    size_t n_bytes;
} writer_tensor;

struct gguf_writer {
    writer_kv *kv;
    size_t n_kv, cap_kv;
    writer_tensor *tensors;
    size_t n_tensors, cap_tensors;
    uint32_t alignment;
};

/* ------------------------------------------------------------------------------------------
 * Little-endian encoding
 * ---------------------------------------------------------------------------------------- */

static uint8_t *put_le(uint8_t *p, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
    return p + n;
}

static uint8_t *put_string(uint8_t *p, const char *s, size_t len) {
    p = put_le(p, len, 8);
    if (len) memcpy(p, s, len);
    return p + len;
}


/* A host-order value of n bytes at p, as its bit pattern. */
static uint64_t load_host(const void *p, unsigned n) {
    switch (n) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return v; }
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static int is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* ------------------------------------------------------------------------------------------
 * Building
 * ---------------------------------------------------------------------------------------- */

sac_status sac_gguf_writer_new(gguf_writer **out, sac_error *err) {
    if (!out) return sac_fail(err, SAC_ERR_ARG, "sac_gguf_writer_new: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for a gguf_writer");
    (*out)->alignment = GGUF_DEFAULT_ALIGNMENT;
    return SAC_OK;
}

void sac_gguf_writer_free(gguf_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    for (size_t i = 0; i < w->n_tensors; i++) {
        free(w->tensors[i].name);
        free(w->tensors[i].data);
    }
    free(w->kv);
    free(w->tensors);
    free(w);
}

/* Makes room for one more element in a growable array. */
static sac_status grow(void **items, size_t *cap, size_t n, size_t item_size, sac_error *err) {
    if (n < *cap) return SAC_OK;
    size_t new_cap = *cap ? *cap * 2 : 16;
    void *p = new_cap <= SIZE_MAX / item_size ? realloc(*items, new_cap * item_size) : NULL;
    if (!p) return sac_fail(err, SAC_ERR_NOMEM, "out of memory growing the gguf_writer");
    *items = p;
    *cap = new_cap;
    return SAC_OK;
}

static char *copy_string(const char *s, size_t len) {
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

static int has_key(const gguf_writer *w, const char *key) {
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].key, key) == 0) return 1;
    return 0;
}

/* Tensors are packed at the alignment, so below 4 (an f32 value's) one could start where its
 * values cannot be read, which gguf.c refuses. */
#define MIN_ALIGNMENT 4

/* Appends an entry, taking ownership of `value` (freed here on failure). */
static sac_status add_kv(gguf_writer *w, const char *key, uint32_t type, uint8_t *value,
                         size_t value_len, sac_error *err) {
    sac_status st = SAC_OK;
    if (!w || !key) st = sac_fail(err, SAC_ERR_ARG, "gguf_writer: NULL writer or key");
    else if (has_key(w, key)) st = sac_fail(err, SAC_ERR_ARG, "gguf_writer: metadata key '%s' is already set", key);
    else if (strcmp(key, "general.alignment") == 0) {
        uint64_t a = type == GGUF_TYPE_U32 ? value[0] | (uint64_t)value[1] << 8 |
                                                 (uint64_t)value[2] << 16 | (uint64_t)value[3] << 24
                                           : 0;
        if (type != GGUF_TYPE_U32 || !is_power_of_two(a) || a < MIN_ALIGNMENT)
            st = sac_fail(err, SAC_ERR_ARG, "gguf_writer: general.alignment must be a u32 power of two, at least %d",
                          MIN_ALIGNMENT);
        else
            w->alignment = (uint32_t)a;
    }
    if (!st) st = grow((void **)&w->kv, &w->cap_kv, w->n_kv, sizeof *w->kv, err);
    char *key_copy = st ? NULL : copy_string(key, strlen(key));
    if (!st && !key_copy) st = sac_fail(err, SAC_ERR_NOMEM, "out of memory for metadata key '%s'", key);
    if (st) {
        free(value);
        return st;
    }
    w->kv[w->n_kv++] = (writer_kv){key_copy, strlen(key), type, value, value_len};
    return SAC_OK;
}

static sac_status set_scalar(gguf_writer *w, const char *key, uint32_t type, uint64_t bits, sac_error *err) {
    unsigned n = sac_gguf_value_size(type);
    uint8_t *value = malloc(n);
    if (!value) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for metadata value");
    put_le(value, bits, n);
    return add_kv(w, key, type, value, n, err);
}

sac_status sac_gguf_writer_set_u8(gguf_writer *w, const char *key, uint8_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_U8, v, err);
}
sac_status sac_gguf_writer_set_i8(gguf_writer *w, const char *key, int8_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_I8, (uint64_t)(int64_t)v, err);
}
sac_status sac_gguf_writer_set_u16(gguf_writer *w, const char *key, uint16_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_U16, v, err);
}
sac_status sac_gguf_writer_set_i16(gguf_writer *w, const char *key, int16_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_I16, (uint64_t)(int64_t)v, err);
}
sac_status sac_gguf_writer_set_u32(gguf_writer *w, const char *key, uint32_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_U32, v, err);
}
sac_status sac_gguf_writer_set_i32(gguf_writer *w, const char *key, int32_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_I32, (uint64_t)(int64_t)v, err);
}
sac_status sac_gguf_writer_set_u64(gguf_writer *w, const char *key, uint64_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_U64, v, err);
}
sac_status sac_gguf_writer_set_i64(gguf_writer *w, const char *key, int64_t v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_I64, (uint64_t)v, err);
}
sac_status sac_gguf_writer_set_f32(gguf_writer *w, const char *key, float v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_F32, load_host(&v, 4), err);
}
sac_status sac_gguf_writer_set_f64(gguf_writer *w, const char *key, double v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_F64, load_host(&v, 8), err);
}
sac_status sac_gguf_writer_set_bool(gguf_writer *w, const char *key, int v, sac_error *err) {
    return set_scalar(w, key, GGUF_TYPE_BOOL, v != 0, err);
}

sac_status sac_gguf_writer_set_string(gguf_writer *w, const char *key, const char *v, sac_error *err) {
    if (!v) return sac_fail(err, SAC_ERR_ARG, "gguf_writer: NULL string for key '%s'", key ? key : "(null)");
    size_t len = strlen(v);
    uint8_t *value = len <= SIZE_MAX - 8 ? malloc(8 + len) : NULL;
    if (!value) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for a string of %zu bytes", len);
    put_string(value, v, len);
    return add_kv(w, key, GGUF_TYPE_STRING, value, 8 + len, err);
}

/* An array value starts with its element type and count. */
#define ARRAY_HEADER_BYTES 12u

sac_status sac_gguf_writer_set_array(gguf_writer *w, const char *key, uint32_t elem_type,
                                 uint64_t count, const void *elems, size_t n_bytes,
                                 sac_error *err) {
    unsigned n = sac_gguf_value_size(elem_type);
    uint64_t expected;
    if (n == 0)
        return sac_fail(err, SAC_ERR_ARG,
                        "gguf_writer: array '%s' has element type %" PRIu32
                        " (%s); use a numeric type, or sac_gguf_writer_set_string_array",
                        key ? key : "(null)", elem_type, sac_gguf_value_type_name(elem_type));
    if (!sac_mul_u64(count, n, &expected) || expected != n_bytes || (n_bytes && !elems))
        return sac_fail(err, SAC_ERR_ARG,
                        "gguf_writer: array '%s' of %" PRIu64 " %s values needs %" PRIu64
                        " bytes of elements, got %zu",
                        key ? key : "(null)", count, sac_gguf_value_type_name(elem_type),
                        count <= UINT64_MAX / n ? count * n : UINT64_MAX, n_bytes);
    uint8_t *value = n_bytes <= SIZE_MAX - ARRAY_HEADER_BYTES ? malloc(ARRAY_HEADER_BYTES + n_bytes) : NULL;
    if (!value) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for array '%s'", key ? key : "(null)");
    uint8_t *p = put_le(put_le(value, elem_type, 4), count, 8);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t bits = load_host((const uint8_t *)elems + i * n, n);
        if (elem_type == GGUF_TYPE_BOOL) bits = bits != 0;
        p = put_le(p, bits, n);
    }
    return add_kv(w, key, GGUF_TYPE_ARRAY, value, ARRAY_HEADER_BYTES + n_bytes, err);
}

sac_status sac_gguf_writer_set_string_array(gguf_writer *w, const char *key,
                                        const char *const *strings, uint64_t count,
                                        sac_error *err) {
    uint64_t total = ARRAY_HEADER_BYTES;
    if (count && !strings) return sac_fail(err, SAC_ERR_ARG, "gguf_writer: NULL strings for '%s'", key ? key : "(null)");
    for (uint64_t i = 0; i < count; i++) {
        if (!strings[i])
            return sac_fail(err, SAC_ERR_ARG, "gguf_writer: string %" PRIu64 " of '%s' is NULL", i,
                            key ? key : "(null)");
        if (!sac_add_u64(total, 8 + (uint64_t)strlen(strings[i]), &total) || total > SIZE_MAX)
            return sac_fail(err, SAC_ERR_NOMEM, "gguf_writer: array '%s' is too large", key ? key : "(null)");
    }
    uint8_t *value = malloc((size_t)total);
    if (!value) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for array '%s'", key ? key : "(null)");
    uint8_t *p = put_le(put_le(value, GGUF_TYPE_STRING, 4), count, 8);
    for (uint64_t i = 0; i < count; i++) p = put_string(p, strings[i], strlen(strings[i]));
    return add_kv(w, key, GGUF_TYPE_ARRAY, value, (size_t)total, err);
}

sac_status sac_gguf_writer_set_alignment(gguf_writer *w, uint32_t alignment, sac_error *err) {
    if (!is_power_of_two(alignment))
        return sac_fail(err, SAC_ERR_ARG, "gguf_writer: alignment %" PRIu32 " is not a power of two",
                        alignment);
    if (alignment < MIN_ALIGNMENT)
        return sac_fail(err, SAC_ERR_ARG,
                        "gguf_writer: alignment %" PRIu32 " is below %d: packed at it, an f32 tensor could "
                        "start where it cannot be read (the reader refuses that)",
                        alignment, MIN_ALIGNMENT);
    return sac_gguf_writer_set_u32(w, "general.alignment", alignment, err);
}

sac_status sac_gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                  const int64_t *ne, const void *data, size_t n_bytes,
                                  sac_error *err) {
    if (!w || !name || !ne || (!data && n_bytes))
        return sac_fail(err, SAC_ERR_ARG, "sac_gguf_writer_add_tensor: NULL writer, name, dims or data");
    for (size_t i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return sac_fail(err, SAC_ERR_ARG, "gguf_writer: tensor '%s' is already added", name);
    if (n_dims < 1 || n_dims > GGUF_MAX_DIMS)
        return sac_fail(err, SAC_ERR_ARG, "gguf_writer: tensor '%s' has %" PRIu32 " dims, not 1..%d",
                        name, n_dims, GGUF_MAX_DIMS);
    const sac_type_traits *tr = sac_type_traits_get(type);
    if (!tr)
        return sac_fail(err, SAC_ERR_UNSUPPORTED, "gguf_writer: tensor '%s' has type %s (%" PRIu32
                        "), which saccade does not support", name, sac_type_name(type), type);
    writer_tensor t = {.n_dims = n_dims, .type = type, .n_bytes = n_bytes};
    uint64_t n_elements = 1;
    for (uint32_t d = 0; d < GGUF_MAX_DIMS; d++) {
        t.ne[d] = d < n_dims ? (uint64_t)ne[d] : 1;
        if (d < n_dims && ne[d] < 1)
            return sac_fail(err, SAC_ERR_ARG, "gguf_writer: tensor '%s' dim %" PRIu32 " is %" PRId64,
                            name, d, ne[d]);
        if (!sac_mul_u64(n_elements, t.ne[d], &n_elements) || n_elements > (uint64_t)INT64_MAX)
            return sac_fail(err, SAC_ERR_ARG, "gguf_writer: tensor '%s' has too many elements", name);
    }
    uint64_t expected;
    if (t.ne[0] % (uint64_t)tr->block_size != 0)
        return sac_fail(err, SAC_ERR_ARG,
                        "gguf_writer: tensor '%s' of type %s has rows of %" PRIu64
                        " values, not a multiple of %" PRId64,
                        name, tr->name, t.ne[0], tr->block_size);
    if (!sac_mul_u64(n_elements / (uint64_t)tr->block_size, tr->type_size, &expected))
        return sac_fail(err, SAC_ERR_ARG, "gguf_writer: tensor '%s': its size in bytes overflows", name);
    if (expected != n_bytes)
        return sac_fail(err, SAC_ERR_ARG,
                        "gguf_writer: tensor '%s' of type %s and %" PRIu64
                        " elements needs %" PRIu64 " bytes, got %zu",
                        name, tr->name, n_elements, expected, n_bytes);

    sac_status st = grow((void **)&w->tensors, &w->cap_tensors, w->n_tensors, sizeof *w->tensors, err);
    if (st) return st;
    t.name_len = strlen(name);
    t.name = copy_string(name, t.name_len);
    t.data = malloc(n_bytes ? n_bytes : 1);
    if (!t.name || !t.data) {
        free(t.name);
        free(t.data);
        return sac_fail(err, SAC_ERR_NOMEM, "out of memory copying tensor '%s' (%zu bytes)", name, n_bytes);
    }
    memcpy(t.data, data, n_bytes);
    w->tensors[w->n_tensors++] = t;
    return SAC_OK;
}

/* ------------------------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------------------------- */

static uint64_t pad_to(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

sac_status sac_gguf_writer_to_buffer(const gguf_writer *w, uint8_t **out, size_t *size, sac_error *err) {
    if (!w || !out || !size) return sac_fail(err, SAC_ERR_ARG, "sac_gguf_writer_to_buffer: NULL argument");
    *out = NULL;
    *size = 0;

    /* Sizes first: every part is already in memory, so only the sum can overflow (wasm's
     * 32-bit size_t). */
    uint64_t total = 4 + 4 + 8 + 8;
    int ok = 1;
    for (size_t i = 0; i < w->n_kv; i++)
        ok = ok && sac_add_u64(total, 8 + (uint64_t)w->kv[i].key_len + 4 + w->kv[i].value_len, &total);
    for (size_t i = 0; i < w->n_tensors; i++)
        ok = ok && sac_add_u64(total, 8 + (uint64_t)w->tensors[i].name_len + 4 + 8 * w->tensors[i].n_dims + 4 + 8,
                               &total);
    uint64_t data_start = pad_to(total, w->alignment);
    total = data_start;
    for (size_t i = 0; i < w->n_tensors; i++)
        ok = ok && sac_add_u64(total, pad_to(w->tensors[i].n_bytes, w->alignment), &total);
    if (!ok || total > SIZE_MAX)
        return sac_fail(err, SAC_ERR_NOMEM, "gguf_writer: the file is too large for this machine");
    uint8_t *buf = calloc(1, (size_t)total); /* zeroed: the padding */
    if (!buf) return sac_fail(err, SAC_ERR_NOMEM, "out of memory for a %" PRIu64 "-byte GGUF file", total);

    uint8_t *p = buf;
    memcpy(p, "GGUF", 4);
    p = put_le(p + 4, 3, 4);
    p = put_le(p, w->n_tensors, 8);
    p = put_le(p, w->n_kv, 8);
    for (size_t i = 0; i < w->n_kv; i++) {
        const writer_kv *kv = &w->kv[i];
        p = put_le(put_string(p, kv->key, kv->key_len), kv->type, 4);
        memcpy(p, kv->value, kv->value_len);
        p += kv->value_len;
    }
    uint64_t offset = 0; /* relative to the data section */
    for (size_t i = 0; i < w->n_tensors; i++) {
        const writer_tensor *t = &w->tensors[i];
        p = put_le(put_string(p, t->name, t->name_len), t->n_dims, 4);
        for (uint32_t d = 0; d < t->n_dims; d++) p = put_le(p, t->ne[d], 8);
        p = put_le(put_le(p, t->type, 4), offset, 8);
        memcpy(buf + data_start + offset, t->data, t->n_bytes);
        offset += pad_to(t->n_bytes, w->alignment);
    }
    *out = buf;
    *size = (size_t)total;
    return SAC_OK;
}

sac_status sac_gguf_writer_write_file(const gguf_writer *w, const char *path, sac_error *err) {
    if (!path) return sac_fail(err, SAC_ERR_ARG, "sac_gguf_writer_write_file: NULL path");
    uint8_t *buf;
    size_t size;
    sac_status st = sac_gguf_writer_to_buffer(w, &buf, &size, err);
    if (st) return st;
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        st = sac_fail(err, SAC_ERR_ARG, "cannot open '%s' for writing: %s", path, strerror(errno));
    } else {
        size_t written = fwrite(buf, 1, size, fp);
        int close_failed = fclose(fp) != 0;
        if (written != size || close_failed)
            st = sac_fail(err, SAC_ERR_ARG, "cannot write '%s': %s", path, strerror(errno));
    }
    free(buf);
    return st;
}
