/* file_io.h — whole-file reads and writes for the command-line tools. */
#ifndef TRAIN_FILE_IO_H
#define TRAIN_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* The whole file in one malloc'd buffer (the caller frees it), or NULL. */
uint8_t *read_file(const char *path, size_t *size);
/* 1 on success. */
int write_file(const char *path, const void *data, size_t size);

#endif
