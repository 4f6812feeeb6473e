/* gguf_copy.c — see gguf_copy.h. */
#include "gguf_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *test_cstr(gguf_string s) {
    char *c = malloc(s.len + 1);
    if (!c) abort();
    memcpy(c, s.data, s.len);
    c[s.len] = '\0';
    return c;
}

int test_copy_kv(gguf_writer *w, const gguf_kv *kv) {
    sac_error err = {0};
    char *key = test_cstr(kv->key);
    switch (kv->type) {
    case GGUF_TYPE_U32: sac_gguf_writer_set_u32(w, key, (uint32_t)kv->u64, &err); break;
    case GGUF_TYPE_I32: sac_gguf_writer_set_i32(w, key, (int32_t)kv->i64, &err); break;
    case GGUF_TYPE_F32: sac_gguf_writer_set_f32(w, key, (float)kv->f64, &err); break;
    case GGUF_TYPE_BOOL: sac_gguf_writer_set_bool(w, key, (int)kv->i64, &err); break;
    case GGUF_TYPE_STRING: {
        char *v = test_cstr(kv->str);
        sac_gguf_writer_set_string(w, key, v, &err);
        free(v);
        break;
    }
    case GGUF_TYPE_ARRAY:
        if (kv->arr_type == GGUF_TYPE_STRING) {
            gguf_string *strs = calloc(kv->arr_count + 1, sizeof *strs);
            char **c = calloc(kv->arr_count + 1, sizeof *c);
            if (!strs || !c) abort();
            sac_gguf_array_strings(kv, strs);
            for (uint64_t i = 0; i < kv->arr_count; i++) c[i] = test_cstr(strs[i]);
            sac_gguf_writer_set_string_array(w, key, (const char *const *)c, kv->arr_count, &err);
            for (uint64_t i = 0; i < kv->arr_count; i++) free(c[i]);
            free(c);
            free(strs);
        } else {
            sac_gguf_writer_set_array(w, key, kv->arr_type, kv->arr_count, kv->arr_data, (size_t)kv->arr_nbytes, &err);
        }
        break;
    default: snprintf(err.msg, sizeof err.msg, "cannot copy type %u", kv->type); err.status = SAC_ERR_ARG;
    }
    int ok = err.status == SAC_OK;
    if (!ok) fprintf(stderr, "test_copy_kv '%s': %s\n", key, err.msg);
    free(key);
    return ok ? 0 : -1;
}
