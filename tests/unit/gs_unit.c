/* gs_unit.c - helpers shared by the unit tests (see gs_unit.h). */
#include "gs_unit.h"

#include <stdlib.h>

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
