/* tensor_read.c — a loaded model's tensors as float32 rows, by name or index
 * (sac_model_tensor_find, sac_model_tensor_read): what a host reads to show learned weights,
 * e.g. gpt2's position embeddings. */
#include <inttypes.h>

#include "model.h"
#include "types.h"

int32_t sac_model_tensor_find(const sac_model *m, const char *name) {
    if (!m || !m->loaded || !name) return -1;
    const gguf_tensor *t = sac_gguf_find_tensor(&m->gguf, name);
    return t ? (int32_t)(t - m->gguf.tensors) : -1;
}

sac_status sac_model_tensor_read(sac_model *m, int32_t index, int32_t row_from, int32_t n_rows, float *out,
                                 size_t out_len) {
    sac_status loaded = sac_model_require_loaded(m);
    if (loaded) return loaded;
    if (m->vocab_only)
        return sac_fail(&m->error, SAC_ERR_STATE, "a vocab-only model has no tensor data to read");
    if (index < 0 || (uint64_t)index >= m->gguf.n_tensors)
        return sac_fail(&m->error, SAC_ERR_ARG, "tensor index %d out of range (0..%" PRIu64 ")", index,
                        m->gguf.n_tensors);
    const gguf_tensor *t = &m->gguf.tensors[index];
    const uint64_t cols = t->ne[0], rows = t->n_elements / (cols ? cols : 1);
    if (row_from < 0 || n_rows < 0 || (uint64_t)row_from + (uint64_t)n_rows > rows)
        return sac_fail(&m->error, SAC_ERR_ARG, "%d rows from row %d are outside the tensor's %" PRIu64 " rows", n_rows,
                        row_from, rows);
    uint64_t need;
    if (!sac_mul_u64((uint64_t)n_rows, cols, &need) || (uint64_t)out_len < need || (n_rows && !out))
        return sac_fail(&m->error, SAC_ERR_ARG, "out holds %zu floats but %d rows of %" PRIu64 " need more", out_len,
                        n_rows, cols);
    const sac_type_traits *tt = sac_type_traits_get(t->type);
    size_t row_bytes;
    if (!tt || !sac_type_row_bytes(t->type, (int64_t)cols, &row_bytes))
        return sac_fail(&m->error, SAC_ERR_UNSUPPORTED, "tensor %d's type %s cannot be read as rows", index,
                        sac_type_name(t->type));
    for (int32_t r = 0; r < n_rows; r++)
        tt->to_float((const uint8_t *)t->data + ((uint64_t)row_from + r) * row_bytes, out + (uint64_t)r * cols,
                     (int64_t)cols);
    return SAC_OK;
}
