/* test_reader_nomem.c - running out of memory while a dump is validated on
 * the reader's workers. Each allocation fails in turn (gs_unit_nomem), on
 * whichever thread makes it: the run must end with GS_ENOMEM, never hang or crash, or do
 * without (a thread, giving back slack) and say what a run with memory to
 * spare says (the sanitizers check that nothing leaks or is used once
 * freed). */
#include "gs_unit.h"

#include <stdio.h>
#include <stdlib.h>
#include "gs_error.h"
#include "gs_reader.h"
#include "gs_unit_nomem.h"
#include "gs_validate.h"

/* What a run says, in a buffer of its own: the diagnostics may not
 * allocate. */
typedef struct transcript { char text[1 << 16]; size_t len; } transcript;

static void note(void *ctx, const gs_diag *d) {
  transcript *t = ctx;
  int n = snprintf(t->text + t->len, sizeof t->text - t->len, "%llu %s %s\n",
                   (unsigned long long)d->line, gs_diag_name(d->code), d->message);
  if (n > 0 && (size_t)n < sizeof t->text - t->len) t->len += (size_t)n;
}

/* Validates data on the workers with allocation k failing (0: none): the
 * first error, or GS_OK with the transcript in t. *met says whether
 * allocation k came. */
static int run(const gsu_buf *data, long k, transcript *t, int *met) {
  gs_validate_counts counts;
  gs_reader *r = NULL;
  int err;
  t->len = 0;
  gsu_nomem_arm(k);
  if (!(err = gs_reader_new_buffer(&r, data->data, data->len))) {
    gs_reader_start_thread(r);   /* GS_ENOMEM: it goes on without threads */
    err = gs_validate_reader(r, note, t, &counts);
  }
  gs_reader_free(r);
  *met = gsu_nomem_disarm();
  if (!err)
    t->len += (size_t)snprintf(t->text + t->len, sizeof t->text - t->len, "%llu %llu %llu\n",
                               (unsigned long long)counts.errors,
                               (unsigned long long)counts.warnings,
                               (unsigned long long)counts.records);
  return err;
}

/* Blocks of lines on both workers, an object line long enough to be
 * parsed as it is read, references to objects not in the dump (read again
 * for their lines) and a bad line. */
static void make_dump(gsu_buf *b) {
  uint32_t i, k;
  gsu_buf_printf(b, "a 2 Low 0\nt 1 A\n");
  for (i = 0; i < 30000; i++) {
    gsu_buf_printf(b, "o %x 1 20", 0x1000 + 0x20 * i);
    for (k = 0; k < i % 4; k++) gsu_buf_printf(b, " %x", 0x1000 + 0x20 * ((i * 7 + k * 13) % 30000));
    if (i % 9000 == 5) gsu_buf_printf(b, " %x", 0x900000 + i);
    gsu_buf_printf(b, i == 12345 ? " zz\n" : "\n");
  }
  gsu_buf_printf(b, "o 800000 1 20");
  for (i = 0; i < 120000; i++) gsu_buf_printf(b, " %x", 0x1000 + 0x20 * (i % 30000));
  gsu_buf_printf(b, "\nr 1000 1 0\nc Low 0\n");
}

static void every_allocation_fails(void **state) {
  static transcript want, got;
  gsu_buf b = {0};
  long k, refused = 0;
  int met;
  (void)state;
  make_dump(&b);
  gsu_assert_ok(run(&b, 0, &want, &met));
  assert_true(strstr(want.text, "dangling") != NULL);
  for (k = 1, met = 1; met; k++) {
    int err = run(&b, k, &got, &met);
    if (err) {
      assert_int_equal(err, GS_ENOMEM);
      refused++;
      continue;
    }
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.text, want.text, want.len);
  }
  assert_true(refused > 10);
  gsu_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_allocation_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
