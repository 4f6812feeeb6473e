/* suite.c — the checked wasm builds' test programs as one (scripts/wasm-tests.mk): each
 * tests/<name>.c is compiled with its main renamed <name>_main, suite_tests.h lists them as
 * SUITE(<name>), and `node suite.js <name>` runs that one. Linking a wasm program takes seconds;
 * one link per test was most of the build. */
#include <stdio.h>
#include <string.h>

#define SUITE(name) int name##_main(void);
#include "suite_tests.h"
#undef SUITE

int main(int argc, char **argv) {
#define SUITE(name)                                                                        \
    if (argc == 2 && !strcmp(argv[1], #name)) return name##_main();
#include "suite_tests.h"
#undef SUITE
    fprintf(stderr, "usage: node suite.js TEST (one of the tests it was built with), got '%s'\n",
            argc >= 2 ? argv[1] : "");
    return 2;
}
