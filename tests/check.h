/* check.h — the C tests' tiny harness.
 *
 *   static void test_something(void) { CHECK(x == 1); CHECK_MSG(ok, "got %d", v); }
 *   int main(void) { RUN(test_something); return check_summary("test_x"); }
 *
 * A test passes when none of its checks failed. check_summary prints
 * "test_x: N passed, N failed" (N counted in tests, not checks) and returns the exit code. */
#ifndef SAC_CHECK_H
#define SAC_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_tests_passed, check_tests_failed, check_tests_skipped, check_current_failures,
    check_current_skipped;
static const char *check_current_name = "";

#define CHECK_MSG(cond, ...)                                                               \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            check_current_failures++;                                                      \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed: ", __FILE__, __LINE__,           \
                    check_current_name, #cond);                                            \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

#define CHECK(cond) CHECK_MSG(cond, "%s", "")

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol)                                                              \
    do {                                                                                   \
        double check_a_ = (a), check_b_ = (b);                                             \
        CHECK_MSG(fabs(check_a_ - check_b_) <= (tol), "%s = %.9g, %s = %.9g, tol %g", #a,  \
                  check_a_, #b, check_b_, (double)(tol));                                  \
    } while (0)

#define RUN(fn)                                                                            \
    do {                                                                                   \
        check_current_name = #fn;                                                          \
        check_current_failures = 0;                                                        \
        check_current_skipped = 0;                                                         \
        fn();                                                                              \
        if (check_current_skipped && !check_current_failures) {                            \
            check_tests_skipped++;                                                         \
        } else if (check_current_failures) {                                               \
            check_tests_failed++;                                                          \
            fprintf(stderr, "FAIL %s\n", #fn);                                             \
        } else {                                                                           \
            check_tests_passed++;                                                          \
        }                                                                                  \
    } while (0)

/* For tests that need a resource that is absent: counted as neither passed nor failed. */
#define SKIP(why)                                                                          \
    do {                                                                                   \
        printf("SKIP %s: %s\n", check_current_name, why);                                  \
        check_current_skipped = 1;                                                         \
        return;                                                                            \
    } while (0)

static int check_summary(const char *name) {
    if (check_tests_skipped) printf("%s: %d skipped\n", name, check_tests_skipped);
    printf("%s: %d passed, %d failed\n", name, check_tests_passed, check_tests_failed);
    return check_tests_failed ? 1 : 0;
}

#endif
