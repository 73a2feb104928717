/* test_source.c - the dispatcher of collector/formats: what a foreign file
 * reads as through gsf_source (the converter's thread and its buffers), a
 * .gclog passing through, a cut file's diagnostic, and a reader that stops
 * early while the converter is blocked on full buffers. */
#include <stdlib.h>
#include "gs_unit.h"
#include "gs_writer.h"
#include "gsf_hprof.h"
#include "gsf_source.h"

#define ARRAYS 200000   /* about 3 MB of records: more than the pipe holds */

typedef struct mem { const char *data; size_t len, pos; } mem;

static int mem_read(void *ctx, void *buf, size_t cap, size_t *got) {
  mem *m = ctx;
  *got = m->len - m->pos < cap ? m->len - m->pos : cap;
  memcpy(buf, m->data + m->pos, *got);
  m->pos += *got;
  return GS_OK;
}

static void put_be(gsu_buf *b, uint64_t v, int n) {
  unsigned char x[8];
  int i;
  for (i = 0; i < n; i++) x[i] = (unsigned char)(v >> (8 * (n - 1 - i)));
  gsu_buf_append(b, x, (size_t)n);
}

/* The header of an HPROF dump with 8-byte IDs, and of its one segment. */
static void hprof_head(gsu_buf *b, uint64_t segment_len) {
  gsu_buf_append(b, "JAVA PROFILE 1.0.2", 19);
  put_be(b, 8, 4);
  put_be(b, 0, 8);
  put_be(b, 0x1c, 1);
  put_be(b, 0, 4);
  put_be(b, segment_len, 4);
}

/* An HPROF dump holding ARRAYS int[2]. */
static void make_hprof(gsu_buf *b) {
  uint32_t i;
  hprof_head(b, (uint64_t)ARRAYS * (1 + 8 + 4 + 4 + 1 + 8));
  for (i = 0; i < ARRAYS; i++) {
    put_be(b, 0x23, 1);
    put_be(b, 0x1000 + 16 * (uint64_t)i, 8);
    put_be(b, 0, 4);
    put_be(b, 2, 4);
    put_be(b, 10, 1);
    put_be(b, 0, 8);
  }
  put_be(b, 0x2c, 1);
  put_be(b, 0, 4);
  put_be(b, 0, 4);
}

/* An HPROF dump holding one Object[n] whose elements are all set. */
static void make_object_array(gsu_buf *b, uint32_t n) {
  uint32_t i;
  hprof_head(b, 1 + 8 + 4 + 4 + 8 + 8 * (uint64_t)n);
  put_be(b, 0x22, 1);
  put_be(b, 0x800, 8);
  put_be(b, 0, 4);
  put_be(b, n, 4);
  put_be(b, 0x900, 8);
  for (i = 0; i < n; i++) put_be(b, 0x1000 + 16 * (uint64_t)i, 8);
  put_be(b, 0x2c, 1);
  put_be(b, 0, 4);
  put_be(b, 0, 4);
}

/* The fields of the line at p. */
static size_t count_words(const char *p) {
  size_t n = 1;
  for (; *p && *p != '\n'; p++) n += *p == ' ';
  return n;
}

/* Everything the source gives, into out; returns the last read's result. */
static int read_all(gsf_source *s, gsu_buf *out) {
  char buf[10000];
  size_t got;
  int rc;
  while ((rc = gsf_source_read(s, buf, sizeof buf, &got)) == GS_OK && got) gsu_buf_append(out, buf, got);
  return rc;
}

static void test_converted_as_direct(void **state) {
  gsu_buf file = {0}, direct = {0}, piped = {0};
  mem m;
  gs_writer *w;
  gsf_source *s;
  char err[200];
  (void)state;
  make_hprof(&file);
  m = (mem){file.data, file.len, 0};
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, &direct));
  gsu_assert_ok(gsf_hprof_convert(mem_read, &m, w, err, sizeof err));
  gsu_assert_ok(gs_writer_free(w));
  m.pos = 0;
  gsu_assert_ok(gsf_source_open(&s, mem_read, &m));
  assert_int_equal(gsf_source_format(s), GSF_HPROF);
  gsu_assert_ok(read_all(s, &piped));
  assert_null(gsf_source_diag(s));
  gsf_source_close(s);
  assert_true(direct.len > 4 * (256u << 10));
  assert_int_equal(piped.len, direct.len);
  assert_memory_equal(piped.data, direct.data, direct.len);
  gsu_buf_free(&file);
  gsu_buf_free(&direct);
  gsu_buf_free(&piped);
}

/* The converter is blocked on full buffers when the reader stops: closing
 * must stop it and return. */
static void test_close_early(void **state) {
  gsu_buf file = {0};
  char buf[1000];
  size_t got;
  mem m;
  gsf_source *s;
  (void)state;
  make_hprof(&file);
  m = (mem){file.data, file.len, 0};
  gsu_assert_ok(gsf_source_open(&s, mem_read, &m));
  gsu_assert_ok(gsf_source_read(s, buf, sizeof buf, &got));
  assert_int_equal(got, sizeof buf);
  gsf_source_close(s);
  assert_true(m.pos < m.len);   /* stopped before the end of the input */
  gsu_buf_free(&file);
}

static void test_records_pass_through(void **state) {
  static const char text[] = "a 2 x 0\nt 1 T\no 5 1 8\nr 5 1 0\nc x 0\n";
  gsu_buf out = {0};
  mem m = {text, sizeof text - 1, 0};
  gsf_source *s;
  (void)state;
  gsu_assert_ok(gsf_source_open(&s, mem_read, &m));
  assert_int_equal(gsf_source_format(s), GSF_RECORDS);
  gsu_assert_ok(read_all(s, &out));
  assert_int_equal(out.len, sizeof text - 1);
  assert_memory_equal(out.data, text, out.len);
  gsf_source_close(s);
  gsu_buf_free(&out);
}

static void test_cut_file(void **state) {
  gsu_buf file = {0}, out = {0};
  mem m;
  gsf_source *s;
  const gs_diag *d;
  (void)state;
  make_hprof(&file);
  m = (mem){file.data, 100000, 0};
  gsu_assert_ok(gsf_source_open(&s, mem_read, &m));
  gsu_assert_err(read_all(s, &out), GS_EIO);
  assert_non_null(d = gsf_source_diag(s));
  assert_int_equal(d->code, GS_D_TRUNCATED_HEAP_FILE);
  assert_int_equal(d->line, 0);
  assert_string_equal(d->message, "HPROF: the file ends at byte 100000 inside a primitive array "
                                  "(truncated file?)");
  gsf_source_close(s);
  gsu_buf_free(&file);
  gsu_buf_free(&out);
}

/* An array of more references than the source's limit fails the read with
 * that code, wherever its parts end; at the limit it is read whole. */
static void test_object_limit(void **state) {
  static const uint32_t sizes[] = {3, 70000};
  gsu_buf file = {0}, out = {0};
  const gs_diag *d;
  gsf_source *s;
  size_t k;
  mem m;
  (void)state;
  for (k = 0; k < 2; k++) {
    make_object_array(&file, sizes[k]);
    m = (mem){file.data, file.len, 0};
    gsu_assert_ok(gsf_source_open(&s, mem_read, &m));
    gsf_source_set_max_refs(s, sizes[k] - 1);
    gsu_assert_err(read_all(s, &out), GS_EIO);
    assert_non_null(d = gsf_source_diag(s));
    assert_int_equal(d->code, GS_D_TOO_MANY_REFS);
    assert_non_null(strstr(d->message, "object array 0x800 has more than"));
    gsf_source_close(s);
    out.len = 0;
    m.pos = 0;
    gsu_assert_ok(gsf_source_open(&s, mem_read, &m));
    gsf_source_set_max_refs(s, sizes[k]);
    gsu_assert_ok(read_all(s, &out));
    assert_null(gsf_source_diag(s));
    gsf_source_close(s);
    gsu_buf_append(&out, "", 1);
    assert_non_null(strstr(out.data, "\no 800 900 "));
    assert_int_equal(count_words(strstr(out.data, "\no 800 900 ") + 1), 4 + sizes[k]);
    gsu_buf_free(&file);
    gsu_buf_free(&out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_converted_as_direct),
    cmocka_unit_test(test_close_early),
    cmocka_unit_test(test_records_pass_through),
    cmocka_unit_test(test_cut_file),
    cmocka_unit_test(test_object_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
