/* asan_canary.c — shows that the wasm AddressSanitizer build checks memory accesses: a store one
 * byte past a 16-byte allocation must be reported as a heap-buffer-overflow, so
 * `make test-wasm-safe` fails if the sanitizer is ever lost. Passing means crashing. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    volatile char *p = malloc(16);
    p[16] = 1; /* inside the heap, where only the sanitizer can see it */
    puts("asan_canary: a store past a 16-byte allocation was not caught");
    free((void *)p);
    return 0;
}
