/* quantize.c — GGUF in, GGUF out: metadata copied, matrices converted, vectors kept. */
#include "quantize.h"

#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "gguf_writer.h"
#include "types.h"

/* Numeric arrays are copied byte for byte from the file (little-endian) to the writer (host
 * order): the same bytes on every host saccade targets. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "quantize.c assumes a little-endian host"
#endif

/* llama.cpp's general.file_type ("mostly" this type; Q2_K, Q3_K_S, Q4_K_S, Q5_K_S, Q6_K). */
static uint32_t file_type_of(uint32_t type) {
    switch (type) {
    case SAC_TYPE_F16: return 1;
    case SAC_TYPE_Q4_0: return 2;
    case SAC_TYPE_Q4_1: return 3;
    case SAC_TYPE_Q8_0: return 7;
    case SAC_TYPE_Q5_0: return 8;
    case SAC_TYPE_Q5_1: return 9;
    case SAC_TYPE_Q2_K: return 10;
    case SAC_TYPE_Q3_K: return 11;
    case SAC_TYPE_Q4_K: return 14;
    case SAC_TYPE_Q5_K: return 16;
    case SAC_TYPE_Q6_K: return 18;
    case SAC_TYPE_BF16: return 32;
    default: return 0;
    }
}

/* For rows that are not whole blocks of `type`: llama.cpp's choice for the K-quants (a 32-value
 * type of about their precision; for Q2_K and Q3_K it takes IQ4_NL, which saccade does not
 * have, so Q4_0 here), else F16, both when their blocks fit the row. */
static uint32_t fallback_of(uint32_t type, int64_t row) {
    uint32_t t = type == SAC_TYPE_Q2_K || type == SAC_TYPE_Q3_K ? SAC_TYPE_Q4_0
                 : type == SAC_TYPE_Q4_K ? SAC_TYPE_Q5_0
                 : type == SAC_TYPE_Q5_K ? SAC_TYPE_Q5_1
                 : type == SAC_TYPE_Q6_K ? SAC_TYPE_Q8_0
                                         : SAC_TYPE_F16;
    return row % sac_type_traits_get(t)->block_size == 0 ? t : SAC_TYPE_F16;
}

/* A GGUF string as a NUL-terminated copy in buf (cap bytes); 0 when it does not fit or holds a NUL. */
static int c_string(gguf_string s, char *buf, size_t cap) {
    if (s.len >= cap || memchr(s.data, 0, (size_t)s.len)) return 0;
    memcpy(buf, s.data, (size_t)s.len);
    buf[s.len] = '\0';
    return 1;
}

static sac_status copy_string_array(gguf_writer *w, const char *key, const gguf_kv *kv, sac_error *err) {
    const size_t n = (size_t)kv->arr_count;
    gguf_string *strings = malloc((n ? n : 1) * sizeof *strings);
    char **copies = calloc(n ? n : 1, sizeof *copies);
    sac_status st = SAC_OK;
    if (!strings || !copies) {
        st = sac_fail(err, SAC_ERR_NOMEM, "quantize: out of memory copying '%s'", key);
        goto done;
    }
    sac_gguf_array_strings(kv, strings);
    for (size_t i = 0; i < n; i++) {
        copies[i] = malloc((size_t)strings[i].len + 1);
        if (!copies[i]) {
            st = sac_fail(err, SAC_ERR_NOMEM, "quantize: out of memory copying '%s'", key);
            goto done;
        }
        if (!c_string(strings[i], copies[i], (size_t)strings[i].len + 1)) {
            st = sac_fail(err, SAC_ERR_UNSUPPORTED, "quantize: '%s'[%zu] contains a NUL byte", key, i);
            goto done;
        }
    }
    st = sac_gguf_writer_set_string_array(w, key, (const char *const *)copies, n, err);
done:
    if (copies)
        for (size_t i = 0; i < n; i++) free(copies[i]);
    free(copies);
    free(strings);
    return st;
}

static sac_status copy_kv(gguf_writer *w, const gguf_kv *kv, sac_error *err) {
    char key[256];
    if (!c_string(kv->key, key, sizeof key))
        return sac_fail(err, SAC_ERR_UNSUPPORTED, "quantize: a metadata key is too long or holds a NUL byte");
    switch (kv->type) {
    case GGUF_TYPE_U8: return sac_gguf_writer_set_u8(w, key, (uint8_t)kv->u64, err);
    case GGUF_TYPE_I8: return sac_gguf_writer_set_i8(w, key, (int8_t)kv->i64, err);
    case GGUF_TYPE_U16: return sac_gguf_writer_set_u16(w, key, (uint16_t)kv->u64, err);
    case GGUF_TYPE_I16: return sac_gguf_writer_set_i16(w, key, (int16_t)kv->i64, err);
    case GGUF_TYPE_U32: return sac_gguf_writer_set_u32(w, key, (uint32_t)kv->u64, err);
    case GGUF_TYPE_I32: return sac_gguf_writer_set_i32(w, key, (int32_t)kv->i64, err);
    case GGUF_TYPE_U64: return sac_gguf_writer_set_u64(w, key, kv->u64, err);
    case GGUF_TYPE_I64: return sac_gguf_writer_set_i64(w, key, kv->i64, err);
    case GGUF_TYPE_F32: return sac_gguf_writer_set_f32(w, key, (float)kv->f64, err);
    case GGUF_TYPE_F64: return sac_gguf_writer_set_f64(w, key, kv->f64, err);
    case GGUF_TYPE_BOOL: return sac_gguf_writer_set_bool(w, key, kv->u64 != 0, err);
    case GGUF_TYPE_STRING: {
        char *value = malloc((size_t)kv->str.len + 1);
        if (!value) return sac_fail(err, SAC_ERR_NOMEM, "quantize: out of memory copying '%s'", key);
        sac_status st = c_string(kv->str, value, (size_t)kv->str.len + 1)
                            ? sac_gguf_writer_set_string(w, key, value, err)
                            : sac_fail(err, SAC_ERR_UNSUPPORTED, "quantize: '%s' contains a NUL byte", key);
        free(value);
        return st;
    }
    case GGUF_TYPE_ARRAY:
        if (kv->arr_type == GGUF_TYPE_STRING) return copy_string_array(w, key, kv, err);
        return sac_gguf_writer_set_array(w, key, kv->arr_type, kv->arr_count, kv->arr_data, (size_t)kv->arr_nbytes, err);
    default: return sac_fail(err, SAC_ERR_UNSUPPORTED, "quantize: '%s' has value type %u", key, kv->type);
    }
}

/* Converts one tensor (or copies it when it keeps its type) and adds it to the writer. */
static sac_status add_tensor(gguf_writer *w, const gguf_tensor *t, uint32_t type, quantize_stats *stats,
                             sac_error *err) {
    char name[256];
    if (!c_string(t->name, name, sizeof name))
        return sac_fail(err, SAC_ERR_UNSUPPORTED, "quantize: a tensor name is too long or holds a NUL byte");
    int64_t ne[GGUF_MAX_DIMS];
    for (uint32_t d = 0; d < t->n_dims; d++) ne[d] = (int64_t)t->ne[d];

    uint32_t target = t->n_dims >= 2 ? type : t->type;
    const sac_type_traits *dst = sac_type_traits_get(target);
    if (target != t->type && ne[0] % dst->block_size != 0) {
        target = fallback_of(target, ne[0]); /* rows that are not whole blocks */
        dst = sac_type_traits_get(target);
        stats->n_fallback++;
    }
    stats->bytes_in += t->n_bytes;
    if (target == t->type) {
        stats->n_kept++;
        stats->bytes_out += t->n_bytes;
        return sac_gguf_writer_add_tensor(w, name, t->type, t->n_dims, ne, t->data, (size_t)t->n_bytes, err);
    }

    const int64_t n = (int64_t)t->n_elements;
    const size_t n_bytes = (size_t)(n / dst->block_size) * dst->type_size;
    float *values = malloc((size_t)(n ? n : 1) * sizeof *values);
    void *converted = malloc(n_bytes ? n_bytes : 1);
    sac_status st;
    if (!values || !converted) {
        st = sac_fail(err, SAC_ERR_NOMEM, "quantize: out of memory converting '%s'", name);
    } else {
        sac_type_traits_get(t->type)->to_float(t->data, values, n);
        dst->from_float(values, converted, n);
        st = sac_gguf_writer_add_tensor(w, name, target, t->n_dims, ne, converted, n_bytes, err);
        stats->n_converted++;
        stats->bytes_out += n_bytes;
    }
    free(values);
    free(converted);
    return st;
}

sac_status quantize_gguf(const void *in, size_t in_size, uint32_t type, uint8_t **out, size_t *out_size,
                         quantize_stats *stats, sac_error *err) {
    quantize_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (!sac_type_traits_get(type))
        return sac_fail(err, SAC_ERR_ARG, "quantize: cannot convert to %s", sac_type_name(type));
    gguf_file f;
    sac_status st = sac_gguf_parse(&f, in, in_size, err);
    if (st) {
        sac_gguf_release(&f);
        return st;
    }
    gguf_writer *w = NULL;
    if ((st = sac_gguf_writer_new(&w, err))) goto done;

    int wrote_file_type = 0;
    for (uint64_t i = 0; i < f.n_kv && !st; i++) {
        if (sac_gguf_string_eq(f.kv[i].key, "general.file_type")) {
            st = sac_gguf_writer_set_u32(w, "general.file_type", file_type_of(type), err);
            wrote_file_type = 1;
        } else {
            st = copy_kv(w, &f.kv[i], err);
        }
    }
    if (!st && !wrote_file_type) st = sac_gguf_writer_set_u32(w, "general.file_type", file_type_of(type), err);
    for (uint64_t i = 0; i < f.n_tensors && !st; i++) st = add_tensor(w, &f.tensors[i], type, stats, err);
    if (!st) st = sac_gguf_writer_to_buffer(w, out, out_size, err);
done:
    sac_gguf_writer_free(w);
    sac_gguf_release(&f);
    return st;
}
