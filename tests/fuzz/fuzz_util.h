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

/* An input handed to a reader (gs_read_fn) in pieces of at most piece
 * bytes (0: as much as asked), so that a target can check that a reader
 * gives the same result however its input is cut. */
typedef struct fuzz_src {
  const uint8_t *p;
  size_t len, pos, piece;
} fuzz_src;
int fuzz_src_read(void *ctx, void *buf, size_t cap, size_t *got);

/* The file's bytes (malloc'd), or NULL. */
uint8_t *fuzz_read_file(const char *path, size_t *len);

#endif
