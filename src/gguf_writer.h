/* gguf_writer.h — builds a GGUF version 3 file in memory: metadata and tensors in the order
 * they are added, tensor data padded to the alignment (as llama.cpp writes it).
 *
 *   gguf_writer *w;
 *   sac_gguf_writer_new(&w, &err);
 *   sac_gguf_writer_set_string(w, "general.architecture", "gpt2", &err);
 *   sac_gguf_writer_add_tensor(w, "output_norm.weight", SAC_TYPE_F32, 1, ne, data, n_bytes, &err);
 *   sac_gguf_writer_to_buffer(w, &bytes, &size, &err);   // or sac_gguf_writer_write_file
 *   sac_gguf_writer_free(w);
 *
 * Values and tensor data are copied when added, so the caller's memory can be reused
 * right away. Numeric values are given in host byte order and written little-endian.
 * Independent of the reader: nothing here calls sac_gguf_parse. */
#ifndef SAC_GGUF_WRITER_H
#define SAC_GGUF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gguf.h"

typedef struct gguf_writer gguf_writer;

sac_status sac_gguf_writer_new(gguf_writer **out, sac_error *err);
void sac_gguf_writer_free(gguf_writer *w);

/* Metadata setters. A key may be set only once (a second set is SAC_ERR_ARG).
 * "general.alignment" must be a u32 power of two; it also sets the data alignment. */
sac_status sac_gguf_writer_set_u8(gguf_writer *w, const char *key, uint8_t v, sac_error *err);
sac_status sac_gguf_writer_set_i8(gguf_writer *w, const char *key, int8_t v, sac_error *err);
sac_status sac_gguf_writer_set_u16(gguf_writer *w, const char *key, uint16_t v, sac_error *err);
sac_status sac_gguf_writer_set_i16(gguf_writer *w, const char *key, int16_t v, sac_error *err);
sac_status sac_gguf_writer_set_u32(gguf_writer *w, const char *key, uint32_t v, sac_error *err);
sac_status sac_gguf_writer_set_i32(gguf_writer *w, const char *key, int32_t v, sac_error *err);
sac_status sac_gguf_writer_set_u64(gguf_writer *w, const char *key, uint64_t v, sac_error *err);
sac_status sac_gguf_writer_set_i64(gguf_writer *w, const char *key, int64_t v, sac_error *err);
sac_status sac_gguf_writer_set_f32(gguf_writer *w, const char *key, float v, sac_error *err);
sac_status sac_gguf_writer_set_f64(gguf_writer *w, const char *key, double v, sac_error *err);
sac_status sac_gguf_writer_set_bool(gguf_writer *w, const char *key, int v, sac_error *err);
/* A NUL-terminated string. */
sac_status sac_gguf_writer_set_string(gguf_writer *w, const char *key, const char *v, sac_error *err);
/* An array of `count` numeric elements of `elem_type` (any gguf_value_type except string
 * and array; bool elements are bytes 0/1), `n_bytes` = count × the element size. */
sac_status sac_gguf_writer_set_array(gguf_writer *w, const char *key, uint32_t elem_type,
                                 uint64_t count, const void *elems, size_t n_bytes,
                                 sac_error *err);
/* An array of `count` NUL-terminated strings. */
sac_status sac_gguf_writer_set_string_array(gguf_writer *w, const char *key,
                                        const char *const *strings, uint64_t count,
                                        sac_error *err);

/* Sets the data alignment (a power of two, at least 4; default 32) and records it as the
 * general.alignment key, which can then not be set again. */
sac_status sac_gguf_writer_set_alignment(gguf_writer *w, uint32_t alignment, sac_error *err);

/* Adds a tensor of ggml type `type` (one saccade supports) with dims ne[0..n_dims),
 * ne[0] innermost. `n_bytes` must be exactly the size the type and shape imply. The data
 * is copied. Names must be unique. */
sac_status sac_gguf_writer_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                  const int64_t *ne, const void *data, size_t n_bytes,
                                  sac_error *err);

/* The whole file in one malloc'd buffer (the caller frees it), *size its length. */
sac_status sac_gguf_writer_to_buffer(const gguf_writer *w, uint8_t **out, size_t *size, sac_error *err);
sac_status sac_gguf_writer_write_file(const gguf_writer *w, const char *path, sac_error *err);

#endif
