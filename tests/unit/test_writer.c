/* test_writer.c - the writer: canonical output of each record, round trips
 * of canonical files, normalization of the seeds' looser forms, and write
 * errors. */
#include "gs_unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_writer.h"

static gs_writer *open_writer(gsu_buf *out) {
  gs_writer *w = NULL;
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, out));
  assert_non_null(w);
  return w;
}

/* Frees the writer and checks everything it wrote. */
static void close_and_check(gs_writer *w, gsu_buf *out, const char *expected) {
  gsu_assert_ok(gs_writer_free(w));
  assert_non_null(out->data);
  assert_string_equal(out->data, expected);
  assert_int_equal(out->len, strlen(expected));
  gsu_buf_free(out);
}

/* ---- canonical form of each record ------------------------------------ */

static void test_section(void **state) {
  (void)state;
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  gsu_assert_ok(gs_writer_section(w, 2, "bubblecs.exe", 12, 0x763f9d2));
  gsu_assert_ok(gs_writer_section(w, 2, "My Game Domain.exe", 18, 0));
  gsu_assert_ok(gs_writer_section(w, 0x1a, "x", 1, UINT64_MAX));
  close_and_check(w, &out,
                  "a 2 bubblecs.exe 763f9d2\n"
                  "a 2 My Game Domain.exe 0\n"
                  "a 1a x ffffffffffffffff\n");
}

static void test_type(void **state) {
  (void)state;
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  const char *dict = "System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
                     "[System.Int32, mscorlib]]";
  gsu_assert_ok(gs_writer_type(w, 0xa1, "Western.Pacific.SanJoseSharks", 29));
  gsu_assert_ok(gs_writer_type(w, 5, dict, strlen(dict)));
  gsu_assert_ok(gs_writer_type(w, 0, "ABCDEF", 3));  /* only name_len bytes */
  close_and_check(w, &out,
                  "t a1 Western.Pacific.SanJoseSharks\n"
                  "t 5 System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
                  "[System.Int32, mscorlib]]\n"
                  "t 0 ABC\n");
}

static void test_object(void **state) {
  (void)state;
  static const uint64_t refs[] = {0x1ce11f, 0x1ce14c, 0x1ce079, 0x1ce113,
                                  0x1ce116, 0x1ce267, 0x1ce26a, 0x1ce26d};
  static const uint64_t extremes[] = {0, UINT64_MAX};
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  gsu_assert_ok(gs_writer_object(w, 0x7c79f, 2, 0x64, NULL, 0));
  gsu_assert_ok(gs_writer_object(w, 0x1ce056, 0x1d, 0x118, refs, 8));
  gsu_assert_ok(gs_writer_object(w, 0, 0, 0, extremes, 2));
  gsu_assert_ok(gs_writer_object(w, UINT64_MAX, UINT64_MAX, UINT64_MAX, NULL, 0));
  close_and_check(w, &out,
                  "o 7c79f 2 64\n"
                  "o 1ce056 1d 118 1ce11f 1ce14c 1ce079 1ce113 1ce116 1ce267 1ce26a 1ce26d\n"
                  "o 0 0 0 0 ffffffffffffffff\n"
                  "o ffffffffffffffff ffffffffffffffff ffffffffffffffff\n");
}

/* An object up to the limit is written, whole or in parts; one reference
 * more stops the output before that object, and every write after. */
static void test_object_limit(void **state) {
  static const uint64_t refs[] = {1, 2, 3};
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  (void)state;
  assert_int_equal(gs_writer_max_refs(w), GS_READER_DEFAULT_MAX_REFS);
  gs_writer_set_max_refs(w, 3);
  assert_int_equal(gs_writer_max_refs(w), 3);
  gsu_assert_ok(gs_writer_object(w, 0x10, 1, 8, refs, 3));
  gsu_assert_ok(gs_writer_object_begin(w, 0x20, 1, 8));
  gsu_assert_ok(gs_writer_refs(w, refs, 2));
  gsu_assert_ok(gs_writer_refs(w, refs, 1));
  gsu_assert_ok(gs_writer_object_end(w));
  gsu_assert_ok(gs_writer_flush(w));
  gsu_assert_ok(gs_writer_object_begin(w, 0x30, 1, 8));
  gsu_assert_ok(gs_writer_refs(w, refs, 3));
  gsu_assert_err(gs_writer_refs(w, refs, 1), GS_ELIMIT);
  gsu_assert_err(gs_writer_object_end(w), GS_ELIMIT);
  gsu_assert_err(gs_writer_object(w, 0x40, 1, 8, NULL, 0), GS_ELIMIT);
  gsu_assert_err(gs_writer_free(w), GS_ELIMIT);
  assert_int_equal(out.len, strlen("o 10 1 8 1 2 3\no 20 1 8 1 2 1\n"));
  assert_memory_equal(out.data, "o 10 1 8 1 2 3\no 20 1 8 1 2 1\n", out.len);
  gsu_buf_free(&out);
}

/* Every count of digits, odd and even, against printf; and an object in
 * parts is the object whole. */
static void test_hex_widths(void **state) {
  (void)state;
  uint64_t refs[2 * 16];
  char expected[64 * 18], *e = expected;
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  int n;
  e += snprintf(e, sizeof expected, "o 0 1 10");
  for (n = 1; n <= 16; n++) {
    uint64_t top = n == 16 ? UINT64_MAX : (UINT64_C(1) << (4 * n)) - 1;
    refs[2 * n - 2] = UINT64_C(0x123456789abcdef1) & top;
    refs[2 * n - 1] = (top >> 1) + 1;  /* a 1 and n - 1 zeros */
    e += snprintf(e, sizeof expected - (size_t)(e - expected), " %llx %llx",
                  (unsigned long long)refs[2 * n - 2], (unsigned long long)refs[2 * n - 1]);
  }
  snprintf(e, sizeof expected - (size_t)(e - expected), "\n");
  gsu_assert_ok(gs_writer_object_begin(w, 0, 1, 0x10));
  gsu_assert_ok(gs_writer_refs(w, refs, 5));
  gsu_assert_ok(gs_writer_refs(w, refs + 5, 0));
  gsu_assert_ok(gs_writer_refs(w, refs + 5, 2 * 16 - 5));
  gsu_assert_ok(gs_writer_object_end(w));
  close_and_check(w, &out, expected);
}

static void test_root(void **state) {
  (void)state;
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  gsu_assert_ok(gs_writer_root(w, 0x22c81b, GS_ROOT_RUNTIME, 0, 0));
  gsu_assert_ok(gs_writer_root(w, 0xb2753, GS_ROOT_STATIC, 0, 0x13c));
  gsu_assert_ok(gs_writer_root(w, 0xb2753, GS_ROOT_STATIC, 0, 0));  /* container 0 is a value */
  /* The container is written only for static roots. */
  gsu_assert_ok(gs_writer_root(w, 0x10, GS_ROOT_LOCAL, GS_FLAG_PINNED, 0x99));
  gsu_assert_ok(gs_writer_root(w, 0x11, GS_ROOT_HANDLE, GS_FLAG_WEAK, 0));
  gsu_assert_ok(gs_writer_root(w, 0x12, GS_ROOT_INTERNAL,
                               GS_FLAG_PINNED | GS_FLAG_WEAK | GS_FLAG_INTERIOR, 0));
  gsu_assert_ok(gs_writer_root(w, 0x13, GS_ROOT_FINALIZER, 0, 0));
  close_and_check(w, &out,
                  "r 22c81b 5 0\n"
                  "r b2753 4 0 13c\n"
                  "r b2753 4 0 0\n"
                  "r 10 1 1\n"
                  "r 11 3 2\n"
                  "r 12 0 7\n"
                  "r 13 2 0\n");
}

static void test_end(void **state) {
  (void)state;
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  gsu_assert_ok(gs_writer_end(w, "bubblecs.exe", 12, 0x763fbef));
  gsu_assert_ok(gs_writer_end(w, "My Game Domain.exe", 18, 0));
  close_and_check(w, &out, "c bubblecs.exe 763fbef\nc My Game Domain.exe 0\n");
}

/* gs_writer_record writes what the reader produces; a and c without their
 * timestamp get 0. */
static void test_record(void **state) {
  (void)state;
  static const uint64_t refs[] = {0xa, 0xb};
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  gs_record a = {.kind = GS_REC_SECTION, .id = 2, .name = "app one", .name_len = 7,
                 .has_timestamp = 0, .timestamp = 0x55};
  gs_record a2 = {.kind = GS_REC_SECTION, .id = 2, .name = "app", .name_len = 3,
                  .has_timestamp = 1, .timestamp = 0x55};
  gs_record t = {.kind = GS_REC_TYPE, .id = 0xc, .name = "Type Name!", .name_len = 9};
  gs_record o = {.kind = GS_REC_OBJECT, .id = 0x1, .type = 0xc, .size = 0x20,
                 .refs = refs, .nrefs = 2};
  gs_record o0 = {.kind = GS_REC_OBJECT, .id = 0x2, .type = 0xc, .size = 0x8};
  gs_record r = {.kind = GS_REC_ROOT, .id = 0x1, .root_kind = 4, .root_flags = 1,
                 .has_container = 1, .type = 0xc};
  gs_record r1 = {.kind = GS_REC_ROOT, .id = 0x2, .root_kind = 3, .root_flags = 2};
  gs_record c = {.kind = GS_REC_END, .name = "app one", .name_len = 7, .has_timestamp = 0,
                 .timestamp = 0x66};
  gs_record c2 = {.kind = GS_REC_END, .name = "app", .name_len = 3, .has_timestamp = 1,
                  .timestamp = 0x66};
  gsu_assert_ok(gs_writer_record(w, &a));
  gsu_assert_ok(gs_writer_record(w, &t));
  gsu_assert_ok(gs_writer_record(w, &o));
  gsu_assert_ok(gs_writer_record(w, &o0));
  gsu_assert_ok(gs_writer_record(w, &r));
  gsu_assert_ok(gs_writer_record(w, &r1));
  gsu_assert_ok(gs_writer_record(w, &c));
  gsu_assert_ok(gs_writer_record(w, &a2));
  gsu_assert_ok(gs_writer_record(w, &c2));
  close_and_check(w, &out,
                  "a 2 app one 0\n"
                  "t c Type Name\n"
                  "o 1 c 20 a b\n"
                  "o 2 c 8\n"
                  "r 1 4 1 c\n"
                  "r 2 3 2\n"
                  "c app one 0\n"
                  "a 2 app 55\n"
                  "c app 66\n");
}

/* ---- round trips and normalization -------------------------------------- */

/* Reads every record of text and writes it back through gs_writer_record. */
static void rewrite(const char *text, size_t len, gsu_buf *out) {
  gs_reader *r = NULL;
  gs_writer *w = NULL;
  gs_record rec;
  int err;
  gsu_assert_ok(gs_reader_new_buffer(&r, text, len));
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, out));
  while ((err = gs_reader_next(r, &rec)) == GS_OK) gsu_assert_ok(gs_writer_record(w, &rec));
  gsu_assert_err(err, GS_EOF);
  gsu_assert_ok(gs_writer_free(w));
  gs_reader_free(r);
}

static void check_round_trip(const char *rel) {
  size_t len;
  char *text = gsu_read_file(gsu_fixture(rel), &len);
  gsu_buf out = {0};
  rewrite(text, len, &out);
  if (out.len != len || memcmp(out.data, text, len) != 0)
    fail_msg("%s did not round-trip: wrote %zu bytes, read %zu:\n%s", rel, out.len, len,
             out.data ? out.data : "");
  gsu_buf_free(&out);
  free(text);
}

static void test_round_trip_seed001(void **state) {
  (void)state;
  check_round_trip("seeds/seed001-example.gclog");
}

static void test_round_trip_seed000_canonical(void **state) {
  (void)state;
  check_round_trip("canonical/seed000-canonical.gclog");
}

static void test_round_trip_generated(void **state) {
  (void)state;
  check_round_trip("canonical/generated.gclog");
}

/* Seed 000 as printed (blank lines, no timestamps) becomes its canonical form. */
static void test_normalize_seed000(void **state) {
  (void)state;
  size_t len, want_len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed000-example.gclog"), &len);
  char *want = gsu_read_file(gsu_fixture("canonical/seed000-canonical.gclog"), &want_len);
  gsu_buf out = {0};
  rewrite(text, len, &out);
  assert_string_equal(out.data, want);
  assert_int_equal(out.len, want_len);
  gsu_buf_free(&out);
  free(want);
  free(text);
}

static void test_normalize_loose_input(void **state) {
  (void)state;
  const char *loose =
    "\r\n"
    "a 2 My App\r\n"
    "\r\n"
    "t A1 Foo Bar\r\n"
    "o 07C79F 0A1 064 1CE11F 00\r\n"
    "r 7C79F 4 0 0A1\r\n"
    "r 7c79f 1 1\r\n"
    "\n"
    "c My App\r\n"
    "a 2 Other 3E8\n"
    "c Other 3E9";
  const char *canonical =
    "a 2 My App 0\n"
    "t a1 Foo Bar\n"
    "o 7c79f a1 64 1ce11f 0\n"
    "r 7c79f 4 0 a1\n"
    "r 7c79f 1 1\n"
    "c My App 0\n"
    "a 2 Other 3e8\n"
    "c Other 3e9\n";
  gsu_buf out = {0}, again = {0};
  rewrite(loose, strlen(loose), &out);
  assert_string_equal(out.data, canonical);
  /* The normalized output is a fixed point. */
  rewrite(out.data, out.len, &again);
  assert_string_equal(again.data, canonical);
  gsu_buf_free(&again);
  gsu_buf_free(&out);
}

/* ---- volume, files, errors ----------------------------------------------- */

/* Far more output than any sensible buffer, and one record with a million
 * references: the bytes must match a reference rendering exactly. */
static void test_large_output(void **state) {
  (void)state;
  enum { OBJECTS = 200000, REFS = 1000000 };
  gsu_buf out = {0}, want = {0};
  gs_writer *w = open_writer(&out);
  uint64_t *refs = malloc(REFS * sizeof *refs);
  size_t i;
  assert_non_null(refs);
  gsu_assert_ok(gs_writer_section(w, 2, "big", 3, 1));
  gsu_buf_printf(&want, "a 2 big 1\n");
  for (i = 0; i < OBJECTS; i++) {
    uint64_t ref = (uint64_t)i * 0x10;
    gsu_assert_ok(gs_writer_object(w, 0x100000 + i, i % 7, i * 3, &ref, 1));
    gsu_buf_printf(&want, "o %zx %zx %zx %llx\n", (size_t)0x100000 + i, i % 7, i * 3,
                   (unsigned long long)ref);
  }
  gsu_buf_printf(&want, "o 1 2 3");
  for (i = 0; i < REFS; i++) {
    refs[i] = 0xfedcba9876543210ull - i;
    gsu_buf_printf(&want, " %llx", (unsigned long long)refs[i]);
  }
  gsu_buf_printf(&want, "\nc big 2\n");
  gsu_assert_ok(gs_writer_object(w, 1, 2, 3, refs, REFS));
  gsu_assert_ok(gs_writer_end(w, "big", 3, 2));
  gsu_assert_ok(gs_writer_free(w));
  assert_int_equal(out.len, want.len);
  assert_memory_equal(out.data, want.data, want.len);
  free(refs);
  gsu_buf_free(&want);
  gsu_buf_free(&out);
}

static void test_flush(void **state) {
  (void)state;
  gsu_buf out = {0};
  gs_writer *w = open_writer(&out);
  gsu_assert_ok(gs_writer_type(w, 1, "T", 1));
  gsu_assert_ok(gs_writer_flush(w));
  assert_int_equal(out.len, 6);
  assert_memory_equal(out.data, "t 1 T\n", 6);
  gsu_assert_ok(gs_writer_type(w, 2, "U", 1));
  gsu_assert_ok(gs_writer_flush(w));
  assert_string_equal(out.data, "t 1 T\nt 2 U\n");
  close_and_check(w, &out, "t 1 T\nt 2 U\n");
}

static void test_writer_file(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed001-example.gclog"), &len);
  FILE *f = tmpfile();
  gs_reader *r = NULL;
  gs_writer *w = NULL;
  gs_record rec;
  char *back;
  int err;
  assert_non_null(f);
  gsu_assert_ok(gs_reader_new_buffer(&r, text, len));
  gsu_assert_ok(gs_writer_new_file(&w, f));
  while ((err = gs_reader_next(r, &rec)) == GS_OK) gsu_assert_ok(gs_writer_record(w, &rec));
  gsu_assert_err(err, GS_EOF);
  gsu_assert_ok(gs_writer_free(w));
  gs_reader_free(r);
  assert_int_equal(ftell(f), (long)len);
  rewind(f);
  back = malloc(len + 1);
  assert_non_null(back);
  assert_int_equal(fread(back, 1, len + 1, f), len);
  assert_memory_equal(back, text, len);
  free(back);
  fclose(f);
  free(text);
}

/* The first write error is returned by flush and again by free. */
static void test_write_error(void **state) {
  (void)state;
  gsu_buf out = {.fail_from = 1};
  gs_writer *w = open_writer(&out);
  gsu_assert_ok(gs_writer_type(w, 1, "T", 1));
  gsu_assert_err(gs_writer_flush(w), GS_EIO);
  gsu_assert_err(gs_writer_free(w), GS_EIO);
  assert_int_equal(out.len, 0);
  gsu_buf_free(&out);
}

/* A sink that fails part way through a long output: some call reports the
 * error, and free still returns it. */
static void test_write_error_midway(void **state) {
  (void)state;
  gsu_buf out = {.fail_from = 2};
  gs_writer *w = open_writer(&out);
  int first = GS_OK;
  size_t i;
  for (i = 0; i < 500000 && first == GS_OK; i++) first = gs_writer_object(w, i, 1, 2, NULL, 0);
  /* A writer whose buffer held all of that has made at most one call so far;
   * two more flushes of fresh data reach the failing call either way. */
  for (i = 0; i < 2 && first == GS_OK; i++) {
    gsu_assert_ok(gs_writer_object(w, i, 1, 2, NULL, 0));
    first = gs_writer_flush(w);
  }
  gsu_assert_err(first, GS_EIO);
  assert_true(out.calls >= 2);
  gsu_assert_err(gs_writer_free(w), GS_EIO);
  gsu_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_section),
    cmocka_unit_test(test_type),
    cmocka_unit_test(test_object),
    cmocka_unit_test(test_object_limit),
    cmocka_unit_test(test_hex_widths),
    cmocka_unit_test(test_root),
    cmocka_unit_test(test_end),
    cmocka_unit_test(test_record),
    cmocka_unit_test(test_round_trip_seed001),
    cmocka_unit_test(test_round_trip_seed000_canonical),
    cmocka_unit_test(test_round_trip_generated),
    cmocka_unit_test(test_normalize_seed000),
    cmocka_unit_test(test_normalize_loose_input),
    cmocka_unit_test(test_large_output),
    cmocka_unit_test(test_flush),
    cmocka_unit_test(test_writer_file),
    cmocka_unit_test(test_write_error),
    cmocka_unit_test(test_write_error_midway),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
