/* fuzz_gguf.c — libFuzzer target for the GGUF parser.
 *
 * Parses the input; when it is accepted, reads everything the parser vouched for — every
 * key and string, every array element, the first and last byte of every tensor — so that
 * ASan catches any pointer or length that escapes the buffer. Seeds: tests/fuzz/seeds. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "gguf.h"

/* Folds bytes into a value the compiler cannot discard. */
static uint8_t touch(const void *p, uint64_t n) {
    const uint8_t *b = p;
    return n ? (uint8_t)(b[0] ^ b[n - 1]) : 0;
}

static uint8_t walk_kv(const gguf_kv *kv) {
    uint8_t acc = touch(kv->key.data, kv->key.len);
    if (kv->type == GGUF_TYPE_STRING) acc ^= touch(kv->str.data, kv->str.len);
    if (kv->type != GGUF_TYPE_ARRAY) return acc;
    if (kv->arr_type == GGUF_TYPE_STRING) {
        gguf_string *strs = malloc(kv->arr_count ? (size_t)kv->arr_count * sizeof *strs : 1);
        if (!strs) return acc;
        sac_gguf_array_strings(kv, strs);
        for (uint64_t i = 0; i < kv->arr_count; i++) acc ^= touch(strs[i].data, strs[i].len);
        free(strs);
    } else {
        for (uint64_t i = 0; i < kv->arr_count; i++)
            acc ^= (uint8_t)(sac_gguf_array_int(kv, i) ^ (int64_t)(sac_gguf_array_float(kv, i) != 0.0));
    }
    return acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gguf_file f;
    sac_error err = {0};
    volatile uint8_t sink = 0;
    if (sac_gguf_parse(&f, data, size, &err) == SAC_OK) {
        for (uint64_t i = 0; i < f.n_kv; i++) sink ^= walk_kv(&f.kv[i]);
        for (uint64_t i = 0; i < f.n_tensors; i++) {
            const gguf_tensor *t = &f.tensors[i];
            sink ^= touch(t->name.data, t->name.len);
            sink ^= touch(t->data, t->n_bytes);
        }
        /* The typed getters on whatever keys exist must not misbehave either. */
        if (f.n_kv) {
            char key[64];
            uint64_t n = f.kv[0].key.len < sizeof key - 1 ? f.kv[0].key.len : sizeof key - 1;
            for (uint64_t i = 0; i < n; i++) key[i] = f.kv[0].key.data[i] ? f.kv[0].key.data[i] : '?';
            key[n] = '\0';
            uint32_t u;
            float x;
            int b;
            gguf_string s;
            const gguf_kv *kv;
            sac_gguf_get_u32(&f, key, &u, &err);
            sac_gguf_get_f32(&f, key, &x, &err);
            sac_gguf_get_bool(&f, key, &b, &err);
            sac_gguf_get_string(&f, key, &s, &err);
            sac_gguf_get_array(&f, key, GGUF_TYPE_STRING, &kv, &err);
        }
    }
    sac_gguf_release(&f);
    (void)sink;
    return 0;
}
