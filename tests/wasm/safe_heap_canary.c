/* safe_heap_canary.c — shows that the SAFE_HEAP build checks memory accesses: a store past the
 * top of the heap must abort with "segmentation fault", so `make test-wasm-safe` fails if the
 * setting is ever lost. Not a tests/test_*.c program: passing means crashing. */
#include <stdint.h>
#include <stdio.h>

#include <emscripten/heap.h>

int main(void) {
    /* a page above the heap's top: inside the wasm memory, so only SAFE_HEAP can catch it */
    volatile uint8_t *past_top = (volatile uint8_t *)*emscripten_get_sbrk_ptr() + 4096;
    *past_top = 1;
    puts("safe_heap_canary: a store past the heap top was not caught");
    return 0;
}
