/* gs_unit.h - helpers shared by the unit tests: fixture paths, whole-file
 * reads, a growable byte sink for the writer, a diagnostic collector for the
 * validator, and assertions that print gcsnap error names.
 *
 * cmocka needs <stdarg.h>, <stddef.h> and <setjmp.h> before <cmocka.h>; this
 * header includes them in that order so the test files need not. */
#ifndef GS_UNIT_H
#define GS_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef GS_CMOCKA_LITE
#include "gs_cmocka_lite.h"   /* a target without cmocka (gs_cmocka_lite.h) */
#else
#include <cmocka.h>
#endif

#include "gs_diag.h"
#include "gs_error.h"
#include "gs_reader.h"

/* Fails the running test when a gcsnap call does not return what was
 * expected, naming both codes. */
#define gsu_assert_err(actual, expected)                                       \
  gsu_check_err((actual), (expected), #actual, __FILE__, __LINE__)
#define gsu_assert_ok(actual) gsu_assert_err((actual), GS_OK)
void gsu_check_err(int actual, int expected, const char *expr, const char *file,
                   int line);

/* Fails unless the record's name (not NUL-terminated) equals s. */
#define gsu_assert_name(rec, s) gsu_check_name((rec), (s), __FILE__, __LINE__)
void gsu_check_name(const gs_record *rec, const char *s, const char *file, int line);

/* Growable byte buffer; usable as a gs_write_fn sink. */
typedef struct gsu_buf {
  char *data;
  size_t len, cap;
  int fail_from;   /* when > 0: this call of gsu_buf_write and later ones fail */
  int calls;
} gsu_buf;

void gsu_buf_append(gsu_buf *b, const void *data, size_t len);
void gsu_buf_printf(gsu_buf *b, const char *fmt, ...);
void gsu_buf_free(gsu_buf *b);
int gsu_buf_write(void *ctx, const void *data, size_t len);

/* 1 when GS_TEST_NO_PROCESSES is set (and not "0"): on a machine or an
 * emulator that cannot start processes or threads, the checks that need
 * them then report themselves skipped. No tree of the build sets it. */
int gsu_no_processes(void);

/* open() flag: binary mode on Windows (no CRLF or ^Z translation), 0 else. */
#ifdef _WIN32
#include <fcntl.h>
#define GSU_O_BINARY O_BINARY
#else
#define GSU_O_BINARY 0
#endif

/* A file descriptor of a new empty temporary file, open for reading and
 * writing in binary mode and removed when closed; fails the test when it
 * cannot. */
int gsu_temp_fd(void);

/* Feeds bytes into a pipe from a child process (a thread on Windows, which
 * has no fork), 1000 bytes a write, then closes the pipe. gsu_feed_start
 * returns the read end; gsu_feed_finish fails the test unless every byte
 * was written. The data must live until gsu_feed_finish. */
typedef struct gsu_feed {
  int fd;              /* write end */
  const char *data;
  size_t len;
  int ok;              /* Windows: set by the thread */
  void *thread;        /* Windows: its handle */
  long pid;            /* elsewhere: the child */
} gsu_feed;

int gsu_feed_start(gsu_feed *f, const void *data, size_t len);
void gsu_feed_finish(gsu_feed *f);

/* "<GS_FIXTURE_DIR>/<rel>" in a static buffer (valid until the next call). */
const char *gsu_fixture(const char *rel);
/* Reads a whole file; fails the test when it cannot. Caller frees. The
 * buffer is NUL-terminated one past *len for convenience. */
char *gsu_read_file(const char *path, size_t *len);

/* Every diagnostic a validator reported, in report order. */
typedef struct gsu_diags {
  gs_diag *items;
  size_t n, cap;
} gsu_diags;

void gsu_diags_collect(void *ctx, const gs_diag *d);  /* a gs_diag_fn */
void gsu_diags_free(gsu_diags *d);

#endif
