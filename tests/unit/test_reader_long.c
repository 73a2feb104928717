/* test_reader_long.c - object lines longer than the reader's window: an
 * array of millions of elements is one line, read as it arrives, with no
 * byte limit but one on its references, on one thread or on the parsing
 * workers (which cut it into blocks); a failure anywhere in it names its
 * line and reading goes on; the parts a consumer saw on the workers can be
 * left out of the record. */
#include "gs_unit.h"

#include <stdlib.h>

static void long_object_input(gsu_buf *b, size_t nrefs, const char *middle) {
  size_t i;
  gsu_buf_printf(b, "a 2 x 0\no 10 2 8");
  for (i = 0; i < nrefs; i++) {
    gsu_buf_printf(b, " %llx", (unsigned long long)(UINT64_C(0x200000000) + 8 * (uint64_t)i));
    if (i == nrefs / 2 && middle) gsu_buf_printf(b, "%s", middle);
  }
  gsu_buf_printf(b, "\r\no 77 1 8\nc x 0\n");
}

/* Reads the input on the calling thread, then with the parsing workers
 * (where threads run), with a line limit of 1024 bytes and the given
 * reference limit; calls check on each reader. */
static void read_both_ways(const gsu_buf *b, size_t max_refs, void (*check)(gs_reader *, size_t),
                           size_t arg) {
  int threads;
  for (threads = 0; threads < 2; threads++) {
    gs_reader *r = NULL;
    if (threads && gsu_no_processes()) break;
    gsu_assert_ok(gs_reader_new_buffer(&r, b->data, b->len));
    gs_reader_set_max_line(r, 1024);
    if (max_refs) gs_reader_set_max_refs(r, max_refs);
    if (threads) gsu_assert_ok(gs_reader_start_thread(r));
    check(r, arg);
    assert_int_equal(gs_reader_offset(r), b->len);
    gs_reader_free(r);
  }
}

/* The records after the long line: the short object and the end. */
static void check_rest(gs_reader *r) {
  gs_record rec;
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'o');
  assert_int_equal(rec.line, 3);
  assert_int_equal(rec.id, 0x77);
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'c');
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
}

static void check_long_object(gs_reader *r, size_t nrefs) {
  gs_record rec;
  size_t i;
  gsu_assert_ok(gs_reader_next(r, &rec));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'o');
  assert_int_equal(rec.line, 2);
  assert_int_equal(rec.id, 0x10);
  assert_int_equal(rec.size, 8);
  assert_int_equal(rec.nrefs, nrefs);
  for (i = 0; i < nrefs; i++)
    if (rec.refs[i] != UINT64_C(0x200000000) + 8 * (uint64_t)i) fail_msg("reference %zu is %llx", i, (unsigned long long)rec.refs[i]);
  check_rest(r);
}

/* A failure in the long line names it, and reading goes on after it. */
static void check_long_object_fails(gs_reader *r, size_t code) {
  gs_record rec;
  gsu_assert_ok(gs_reader_next(r, &rec));
  gsu_assert_err(gs_reader_next(r, &rec), GS_EFORMAT);
  assert_int_equal(gs_reader_diag(r)->code, code);
  assert_int_equal(gs_reader_diag(r)->line, 2);
  check_rest(r);
}

static void test_long_object_line(void **state) {
  (void)state;
  gsu_buf b = {0};
  long_object_input(&b, 400000, NULL);          /* 4.4 MB */
  read_both_ways(&b, 0, check_long_object, 400000);
  read_both_ways(&b, 400000, check_long_object, 400000);
  read_both_ways(&b, 399999, check_long_object_fails, GS_D_TOO_MANY_REFS);
  gsu_buf_free(&b);
  long_object_input(&b, 400000, " 12x4");
  read_both_ways(&b, 0, check_long_object_fails, GS_D_NOT_HEX);
  gsu_buf_free(&b);
  long_object_input(&b, 400000, " 123456789abcdef012");
  read_both_ways(&b, 0, check_long_object_fails, GS_D_OVERFLOW);
  gsu_buf_free(&b);
  /* One number longer than the line limit, even of leading zeros; then
   * one longer than the workers' blocks, whose bytes are dropped as they
   * come but still counted. */
  char *zeros = malloc(600002);
  assert_non_null(zeros);
  memset(zeros, '0', 600002);
  zeros[0] = ' ';
  zeros[3000] = '1';
  zeros[3001] = 0;
  long_object_input(&b, 400000, zeros);
  read_both_ways(&b, 0, check_long_object_fails, GS_D_LINE_TOO_LONG);
  gsu_buf_free(&b);
  zeros[3000] = zeros[3001] = '0';
  zeros[600000] = '1';
  zeros[600001] = 0;
  long_object_input(&b, 400000, zeros);
  read_both_ways(&b, 0, check_long_object_fails, GS_D_LINE_TOO_LONG);
  gsu_buf_free(&b);
  free(zeros);
  /* A short line over the reference limit too. */
  long_object_input(&b, 20, NULL);
  read_both_ways(&b, 19, check_long_object_fails, GS_D_TOO_MANY_REFS);
  gsu_buf_free(&b);
}

/* Tags the blocks whose first reference has an even index, counting the
 * references it tagged per worker (each worker's calls come one at a time). */
static int tag_even(void *ctx, unsigned worker, const gs_refs_block *block, const uint64_t *refs, size_t n) {
  size_t *tagged = ctx;
  (void)block;
  if ((refs[0] - UINT64_C(0x200000000)) / 8 % 2) return 0;
  tagged[worker] += n;
  return 1;
}

/* With tagged parts skipped, the long line's record holds the references
 * of the other parts only, in order, and its tag is 0. */
static void test_tagged_parts_skipped(void **state) {
  gsu_buf b = {0};
  gs_reader *r = NULL;
  gs_record rec;
  size_t tagged[GS_READER_WORKERS] = {0}, i, total = 0;
  (void)state;
  if (gsu_no_processes()) skip();
  long_object_input(&b, 400000, NULL);
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gsu_assert_ok(gs_reader_start_thread(r));
  gsu_assert_ok(gs_reader_on_refs(r, tag_even, tagged));
  gsu_assert_ok(gs_reader_skip_tagged(r, 1));
  gsu_assert_ok(gs_reader_next(r, &rec));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.id, 0x10);
  for (i = 0; i < GS_READER_WORKERS; i++) total += tagged[i];
  assert_true(total > 0 && rec.nrefs > 0);
  assert_int_equal(rec.nrefs + total, 400000);
  assert_int_equal(gs_reader_tag(r), 0);
  for (i = 1; i < rec.nrefs; i++)
    if (rec.refs[i] <= rec.refs[i - 1] || (rec.refs[i] - rec.refs[0]) % 8) fail_msg("reference %zu is %llx", i, (unsigned long long)rec.refs[i]);
  check_rest(r);
  gs_reader_on_refs(r, NULL, NULL);
  gs_reader_free(r);
  gsu_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_long_object_line),
    cmocka_unit_test(test_tagged_parts_skipped),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
