/* gs_unit.c - helpers shared by the unit tests (see gs_unit.h). */
#include "gs_unit.h"

#include <errno.h>
#include <stdlib.h>
#ifdef _WIN32
#include <io.h>
#include <process.h>
#include <sys/stat.h>
#include <windows.h>
#else
#include <sys/wait.h>
#include <unistd.h>
#endif

void gsu_check_err(int actual, int expected, const char *expr, const char *file,
                   int line) {
  if (actual == expected) return;
  print_error("%s:%d: %s returned %d (%s), expected %d (%s)\n", file, line, expr,
                 actual, gs_strerror(actual), expected, gs_strerror(expected));
  _fail(file, line);
}

void gsu_check_name(const gs_record *rec, const char *s, const char *file, int line) {
  size_t n = strlen(s);
  if (rec->name && rec->name_len == n && memcmp(rec->name, s, n) == 0) return;
  print_error("%s:%d: record on line %llu has name \"%.*s\" (%zu bytes), expected "
                 "\"%s\"\n", file, line, (unsigned long long)rec->line,
                 rec->name ? (int)rec->name_len : 0, rec->name ? rec->name : "",
                 rec->name_len, s);
  _fail(file, line);
}

static void buf_reserve(gsu_buf *b, size_t more) {
  if (b->len + more + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->len + more + 1) cap *= 2;
  b->data = realloc(b->data, cap);
  assert_non_null(b->data);
  b->cap = cap;
}

void gsu_buf_append(gsu_buf *b, const void *data, size_t len) {
  buf_reserve(b, len);
  if (len) memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
}

void gsu_buf_printf(gsu_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  assert_true(n >= 0);
  buf_reserve(b, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void gsu_buf_free(gsu_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

int gsu_buf_write(void *ctx, const void *data, size_t len) {
  gsu_buf *b = ctx;
  b->calls++;
  if (b->fail_from > 0 && b->calls >= b->fail_from) return GS_EIO;
  gsu_buf_append(b, data, len);
  return GS_OK;
}

const char *gsu_fixture(const char *rel) {
  static char path[4096];
  int n = snprintf(path, sizeof path, "%s/%s", GS_FIXTURE_DIR, rel);
  assert_true(n > 0 && (size_t)n < sizeof path);
  return path;
}

char *gsu_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  gsu_buf b = {0};
  char chunk[65536];
  size_t got;
  if (!f) fail_msg("cannot open %s", path);
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) gsu_buf_append(&b, chunk, got);
  assert_false(ferror(f));
  fclose(f);
  if (!b.data) gsu_buf_append(&b, "", 0);
  *len = b.len;
  return b.data;
}

void gsu_diags_collect(void *ctx, const gs_diag *d) {
  gsu_diags *c = ctx;
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 16;
    c->items = realloc(c->items, c->cap * sizeof *c->items);
    assert_non_null(c->items);
  }
  c->items[c->n++] = *d;
}

void gsu_diags_free(gsu_diags *d) {
  free(d->items);
  memset(d, 0, sizeof *d);
}

int gsu_no_processes(void) {
  const char *v = getenv("GS_TEST_NO_PROCESSES");
  return v && *v && strcmp(v, "0") != 0;
}

int gsu_temp_fd(void) {
#ifdef _WIN32
  char *path = _tempnam(NULL, "gsu");   /* in %TMP% */
  int fd;
  assert_non_null(path);
  fd = _open(path, _O_CREAT | _O_EXCL | _O_RDWR | _O_BINARY | _O_TEMPORARY,
             _S_IREAD | _S_IWRITE);
  if (fd < 0) fail_msg("cannot create %s", path);
  free(path);
#else
  char path[] = "/tmp/gs_unit_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) fail_msg("cannot create %s", path);
  unlink(path);
#endif
  return fd;
}

/* ---- a pipe fed from elsewhere ---- */

/* 1 when all len bytes went into fd. */
static int feed_all(int fd, const char *data, size_t len) {
  size_t off = 0;
  while (off < len) {
    size_t chunk = len - off < 1000 ? len - off : 1000;
#ifdef _WIN32
    int w = _write(fd, data + off, (unsigned)chunk);
#else
    ssize_t w = write(fd, data + off, chunk);
    if (w < 0 && errno == EINTR) continue;
#endif
    if (w <= 0) return 0;
    off += (size_t)w;
  }
  return 1;
}

#ifdef _WIN32
static unsigned __stdcall feed_thread(void *arg) {
  gsu_feed *f = arg;
  f->ok = feed_all(f->fd, f->data, f->len);
  _close(f->fd);   /* the reader sees the end */
  return 0;
}

int gsu_feed_start(gsu_feed *f, const void *data, size_t len) {
  int fds[2];
  memset(f, 0, sizeof *f);
  f->data = data;
  f->len = len;
  assert_int_equal(_pipe(fds, 65536, _O_BINARY), 0);
  f->fd = fds[1];
  f->thread = (void *)_beginthreadex(NULL, 0, feed_thread, f, 0, NULL);
  assert_non_null(f->thread);
  return fds[0];
}

void gsu_feed_finish(gsu_feed *f) {
  assert_int_equal(WaitForSingleObject(f->thread, INFINITE), WAIT_OBJECT_0);
  CloseHandle(f->thread);
  assert_true(f->ok);
}
#else
int gsu_feed_start(gsu_feed *f, const void *data, size_t len) {
  int fds[2];
  pid_t pid;
  memset(f, 0, sizeof *f);
  f->data = data;
  f->len = len;
  assert_int_equal(pipe(fds), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    _exit(feed_all(fds[1], f->data, f->len) ? 0 : 1);
  }
  close(fds[1]);
  f->fd = -1;
  f->pid = (long)pid;
  return fds[0];
}

void gsu_feed_finish(gsu_feed *f) {
  int status;
  assert_int_equal(waitpid((pid_t)f->pid, &status, 0), (pid_t)f->pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
#endif
