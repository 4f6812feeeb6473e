/* gguf_copy.h — copying parsed GGUF metadata into a GGUF writer, for tests that rewrite or
 * split the test models. */
#ifndef SAC_TEST_GGUF_COPY_H
#define SAC_TEST_GGUF_COPY_H

#include "gguf.h"
#include "gguf_writer.h"

/* A NUL-terminated, malloc'd copy of `s` (aborts when out of memory). */
char *test_cstr(gguf_string s);

/* Sets the entry `kv` in `w` (u32, i32, f32, bool, string and array values); 0 on success,
 * else -1 with the reason printed. */
int test_copy_kv(gguf_writer *w, const gguf_kv *kv);

#endif
