/* fuzz_util.h - what the fuzz targets share: a check that aborts (which
 * libFuzzer reports as a crash), a private temporary folder, and reading a
 * file whole. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

#define FUZZ_PATH_MAX 512

/* out = a path named name in a folder of this process's own, made on the
 * first call (under TMPDIR, else /dev/shm when writable, else /tmp) and removed with what is left in it
 * when the process exits. */
void fuzz_temp_path(char *out, size_t cap, const char *name);

/* The file's bytes (malloc'd), or NULL. */
uint8_t *fuzz_read_file(const char *path, size_t *len);

#endif
