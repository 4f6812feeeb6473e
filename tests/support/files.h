/* files.h — reading a whole file, for tests, fuzz targets and benchmarks. */
#ifndef SAC_TEST_FILES_H
#define SAC_TEST_FILES_H

#include <stddef.h>

/* The file's bytes in a malloc'd buffer with a NUL after them (the caller frees it), and
 * their count in *size; NULL when it cannot be read. */
void *test_read_file(const char *path, size_t *size);

#endif
