/* test_refs.c - the parsing workers' notes of referenced IDs find again the
 * blocks where sought IDs may be first mentioned: a block of short lines
 * where one is; the blocks a long array is cut into where one is, but not
 * those of one that mentions none, however the workers shared them; and a
 * long array of short numbers, whose blocks hold more references than are
 * hashed, by the set of what it mentions, even later than first. */
#include "gs_unit.h"

#include <stdlib.h>
#include "gs_error.h"
#include "gs_refs.h"
#include "gs_thread.h"

#define OBJECTS 150000u
#define LONG_REFS 400000u
#define BASE UINT64_C(0x7f0000000000)

enum { CLEAN, FIRST, SHORT, NLONG };

static uint64_t object(size_t i) { return BASE + 8 * (uint64_t)i; }
static uint64_t dangling(int k) { return object(OBJECTS + 10 + (size_t)k); }

/* An array of LONG_REFS references: to objects, with dangling(0) at
 * 150000 (FIRST); SHORT to IDs of one or two digits, with dangling(1) at
 * 5000. */
static void long_line(gsu_buf *b, int kind, size_t id) {
  size_t i;
  gsu_buf_printf(b, "o %llx 1 8", (unsigned long long)object(id));
  for (i = 0; i < LONG_REFS; i++) {
    uint64_t t = kind == SHORT ? 8 * (i % 32) : object((i * 7) % OBJECTS);
    if (kind == FIRST && i == 150000) t = dangling(0);
    if (kind == SHORT && i == 5000) t = dangling(1);
    gsu_buf_printf(b, " %llx", (unsigned long long)t);
  }
  gsu_buf_printf(b, "\n");
}

/* One section: objects, then the long arrays, with dangling(1) first
 * mentioned on a short line between FIRST and LATER. Sets the lines. */
static void heap(gsu_buf *b, uint64_t line_of[NLONG], uint64_t *short_line) {
  uint64_t line = 3;
  size_t i;
  int k;
  gsu_buf_printf(b, "a 2 Refs 0\nt 1 A\n");
  for (i = 0; i < OBJECTS; i++, line++) gsu_buf_printf(b, "o %llx 1 8\n", (unsigned long long)object(i));
  for (k = 0; k < NLONG; k++) {
    long_line(b, k, OBJECTS + (size_t)k);
    line_of[k] = line++;
    if (k != FIRST) continue;
    for (i = 0; i < 3000; i++, line++) {
      uint64_t t = i == 1500 ? dangling(1) : object(i);
      if (i == 1500) *short_line = line;
      gsu_buf_printf(b, "o %llx 1 8 %llx\n", (unsigned long long)object(OBJECTS + 100 + i),
                     (unsigned long long)t);
    }
  }
  /* The section's end comes blocks later: a block that holds it is left
   * to the calling thread. */
  for (i = 0; i < 20000; i++) gsu_buf_printf(b, "o %llx 1 8\n", (unsigned long long)object(OBJECTS + 5000 + i));
  gsu_buf_printf(b, "r %llx 1 0\nc Refs 0\n", (unsigned long long)object(0));
}

/* A block's line is the number of lines before it. */
static int holds(const gs_refs_block *b, uint64_t line) {
  return line > b->line && line <= b->line + b->lines;
}

static void long_arrays_found_by_their_mentions(void **state) {
  uint64_t line_of[NLONG], short_line = 0, sought[2];
  gsu_buf in = {0};
  gs_reader *r;
  gs_refs_ahead *a;
  gs_refs_block *blocks = NULL;
  gs_idset noted;
  gs_record rec;
  size_t n = 0, cap = 0, i;
  int found[NLONG] = {0}, found_short = 0, overflow = 0, err, k;
  (void)state;
  if (gsu_no_processes() || gs_thread_cpus() < 2) skip();
  heap(&in, line_of, &short_line);
  gsu_assert_ok(gs_reader_new_buffer(&r, in.data, in.len));
  gsu_assert_ok(gs_reader_start_thread(r));
  assert_non_null(a = gs_refs_ahead_start(r, 64));
  while ((err = gs_reader_next(r, &rec)) == GS_OK) continue;
  assert_int_equal(err, GS_EOF);
  gsu_assert_ok(gs_idset_init(&noted));
  gsu_assert_ok(gs_refs_ahead_gather(a, 1, &noted, &overflow));
  assert_false(overflow);
  sought[0] = dangling(0);
  sought[1] = dangling(1);
  gsu_assert_ok(gs_refs_ahead_find(a, 1, sought, 2, &blocks, &n, &cap));
  for (i = 0; i < n; i++) {
    for (k = 0; k < NLONG; k++) found[k] |= holds(&blocks[i], line_of[k]);
    found_short |= holds(&blocks[i], short_line);
  }
  assert_false(found[CLEAN]);
  assert_true(found[FIRST]);
  assert_true(found[SHORT]);
  assert_true(found_short);
  free(blocks);
  gs_idset_free(&noted);
  gs_refs_ahead_stop(a, r);
  gs_reader_free(r);
  gsu_buf_free(&in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(long_arrays_found_by_their_mentions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
