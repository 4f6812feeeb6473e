/* gguf.h — a bounds-checked reader of GGUF files held in memory (versions 2 and 3).
 *
 * sac_gguf_parse() validates everything up front — every length, count, offset and size is
 * checked against the buffer with overflow-safe arithmetic — so that the accessors below
 * can trust the parsed structure. Strings and tensor data point into the caller's buffer
 * (or into one aligned copy of the data section when the buffer is misaligned). */
#ifndef SAC_GGUF_H
#define SAC_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum gguf_value_type {
    GGUF_TYPE_U8 = 0, GGUF_TYPE_I8 = 1, GGUF_TYPE_U16 = 2, GGUF_TYPE_I16 = 3,
    GGUF_TYPE_U32 = 4, GGUF_TYPE_I32 = 5, GGUF_TYPE_F32 = 6, GGUF_TYPE_BOOL = 7,
    GGUF_TYPE_STRING = 8, GGUF_TYPE_ARRAY = 9, GGUF_TYPE_U64 = 10, GGUF_TYPE_I64 = 11,
    GGUF_TYPE_F64 = 12,
    GGUF_TYPE_COUNT
};

#define GGUF_MAX_DIMS 4
#define GGUF_DEFAULT_ALIGNMENT 32

/* Not NUL-terminated. */
typedef struct gguf_string {
    const char *data;
    uint64_t len;
} gguf_string;

typedef struct gguf_kv {
    gguf_string key;
    uint32_t type; /* enum gguf_value_type */
    /* Scalars, widened: integers and bool in i64 (u64 values above INT64_MAX in u64),
     * floats in f64, strings in str. */
    int64_t i64;
    uint64_t u64;
    double f64;
    gguf_string str;
    /* Arrays (type == GGUF_TYPE_ARRAY): element type, count and the raw, validated bytes
     * of the elements (strings keep their u64 length prefixes). Nested arrays are rejected. */
    uint32_t arr_type;
    uint64_t arr_count;
    const uint8_t *arr_data;
    uint64_t arr_nbytes;
} gguf_kv;

typedef struct gguf_tensor {
    gguf_string name;
    uint32_t n_dims;
    uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the innermost (contiguous) length; unused dims are 1 */
    uint32_t type;              /* ggml type number, one that types.h supports */
    uint64_t offset;            /* relative to the data section */
    uint64_t n_elements;
    uint64_t n_bytes;
    const void *data;
} gguf_tensor;

typedef struct gguf_file {
    uint32_t version;
    uint64_t n_kv;
    gguf_kv *kv;
    uint64_t n_tensors;
    gguf_tensor *tensors;
    uint32_t alignment;
    uint64_t data_offset;      /* where the data section starts in the buffer */
    const uint8_t *data;       /* start of the data section (in the buffer or in data_copy) */
    uint64_t data_size;        /* bytes from data to the end of the buffer */
    void *data_copy;           /* aligned copy of the data section, or NULL when used in place */
    const struct gguf_tensor **by_name; /* the tensors sorted by name (NULL below two): find_tensor's index */
} gguf_file;

/* Parses and validates `buf`. On failure returns FORMAT (malformed or truncated),
 * UNSUPPORTED (a tensor type saccade does not implement) or NOMEM, with a message that
 * names the problem (and the key or tensor involved). `f` is zeroed first and must be
 * released with sac_gguf_release either way. */
sac_status sac_gguf_parse(gguf_file *f, const void *buf, size_t size, sac_error *err);
void sac_gguf_release(gguf_file *f);

const gguf_kv *sac_gguf_find_kv(const gguf_file *f, const char *key);
/* By binary search over f->by_name: a model binds every tensor by name, and a file may hold
 * hundreds of thousands (one scan each made that their count squared). */
const gguf_tensor *sac_gguf_find_tensor(const gguf_file *f, const char *name);
/* Sorts f->by_name (after parsing, or joining a split model's tensors). */
sac_status sac_gguf_index_tensors(gguf_file *f, sac_error *err);
int sac_gguf_string_eq(gguf_string s, const char *cstr);
/* Bytes of `s` to quote in a message ("%.*s"): at most `max`, ending on a character boundary
 * when s is well-formed UTF-8 (every key and tensor name is: the parser checks them). */
int sac_gguf_clip(gguf_string s, uint64_t max);

/* Typed getters. A missing key is SAC_ERR_MODEL "missing metadata key 'x'"; a value of the
 * wrong type or out of range is SAC_ERR_MODEL naming the key. Integer getters accept any
 * integer type whose value fits; sac_gguf_get_f32 accepts F32 and F64. */
sac_status sac_gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out, sac_error *err);
sac_status sac_gguf_get_f32(const gguf_file *f, const char *key, float *out, sac_error *err);
sac_status sac_gguf_get_bool(const gguf_file *f, const char *key, int *out, sac_error *err);
sac_status sac_gguf_get_string(const gguf_file *f, const char *key, gguf_string *out, sac_error *err);
/* An array with elements of `elem_type`; *kv points at the entry. */
sac_status sac_gguf_get_array(const gguf_file *f, const char *key, uint32_t elem_type,
                          const gguf_kv **kv, sac_error *err);
/* Walks a validated array of strings once, filling out[0..arr_count). */
void sac_gguf_array_strings(const gguf_kv *kv, gguf_string *out);
/* Element i of a validated numeric array, widened. */
int64_t sac_gguf_array_int(const gguf_kv *kv, uint64_t i);
double sac_gguf_array_float(const gguf_kv *kv, uint64_t i);

const char *sac_gguf_value_type_name(uint32_t type);
/* Bytes of a fixed-size value type; 0 for strings, arrays and unknown types. */
unsigned sac_gguf_value_size(uint32_t type);

#endif
