/* test_refcodes.c - the references a graph load keeps until a section ends:
 * every ID reads back exactly whatever its shape (addresses, counters, IDs
 * that escape the codes, enough escapes to widen every entry), across
 * blocks, read with a cursor and block by block, and the node numbers
 * written in their place come out in the order of the runs asked for;
 * resolution against a set of objects, on one thread or two, stops where an
 * ID is not one and says what it left. */
#include "gs_unit.h"

#include <stdlib.h>
#include "gs_error.h"
#include "gs_refcodes.h"
#include "gs_thread.h"

#define BLOCK_ENTRIES GS_REFCODES_BLOCK

enum shape { ADDRESSES, COUNTERS, SOME_FAR, UNALIGNED_LATER };

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= UINT64_C(0xff51afd7ed558ccd);
  return k ^ (k >> 29);
}

/* Entry k's ID. UNALIGNED_LATER: 8-byte addresses until `turn`, odd IDs after. */
static uint64_t id_of(enum shape s, size_t k, size_t turn) {
  uint64_t near = UINT64_C(0x7f0000000000) + (mix(k) % (UINT64_C(1) << 30)) * 8;
  switch (s) {
  case ADDRESSES: return k == 0 ? UINT64_C(0x7f0000000000) : near - (UINT64_C(1) << 32);
  case COUNTERS: return 2 * (mix(k) % 50000000) + 1;
  case SOME_FAR: return k % 97 == 5 ? mix(k) | 1 : near;
  default: return k < turn ? near : near + 1;
  }
}

static uint32_t node_of(size_t k) {
  return (uint32_t)mix(k + 7);
}

/* Appends n IDs in pieces of 1 to 1000 entries. */
static void fill(gs_refcodes *c, enum shape s, size_t n, size_t turn) {
  uint64_t piece[1000];
  size_t k = 0;
  gs_refcodes_init(c);
  while (k < n) {
    size_t len = 1 + mix(k) % 1000, i;
    if (len > n - k) len = n - k;
    for (i = 0; i < len; i++) piece[i] = id_of(s, k + i, turn);
    gsu_assert_ok(gs_refcodes_append(c, piece, len));
    k += len;
  }
  assert_int_equal(c->count, n);
}

/* Reads every ID back with a cursor, then again as the graph loader does
 * (block by block while they are codes), writing each one's node number. */
static void resolve(gs_refcodes *c, enum shape s, size_t turn) {
  gs_refcodes_cursor cur = {0, 0};
  size_t k = 0, b, j, n, esc = 0;
  while (cur.at < c->count) assert_true(gs_refcodes_next(c, &cur) == id_of(s, k++, turn));
  assert_int_equal(cur.esc, c->nesc);
  for (b = 0; !c->wide && b < c->nblocks; b++) {
    uint32_t *e = gs_refcodes_codes(c, b, &n);
    for (j = 0; j < n; j++) {
      size_t at = b * BLOCK_ENTRIES + j;
      uint64_t id = e[j] == GS_REFCODES_ESCAPE ? c->esc[esc++].id : gs_refcodes_decode(c, e[j]);
      assert_true(id == id_of(s, at, turn));
      e[j] = node_of(at);
    }
  }
  cur.at = cur.esc = 0;
  for (k = 0; c->wide && k < c->count; k++) {
    assert_true(gs_refcodes_next(c, &cur) == id_of(s, k, turn));
    gs_refcodes_set(c, k, node_of(k));
  }
}

/* Runs of 0 to 5 entries (objects without references too), taken last
 * first. */
static void take_reversed(gs_refcodes *c) {
  size_t n = c->count, nruns = 0, r, at = 0, k, most = 2 * n + 2;
  uint32_t *start = calloc(most, sizeof *start), *begin = calloc(most, sizeof *begin);
  uint32_t *offsets = calloc(most, sizeof *offsets), *out;
  for (k = 0; k < n; nruns++) {
    assert_true(nruns + 1 < most);
    start[nruns] = (uint32_t)k;
    k += mix(nruns) % 6;
    if (k > n) k = n;
  }
  start[nruns] = (uint32_t)n;
  for (r = 0; r < nruns; r++) {
    begin[r] = start[nruns - 1 - r];
    offsets[r + 1] = offsets[r] + start[nruns - r] - start[nruns - 1 - r];
  }
  out = gs_refcodes_take_nodes(c, begin, offsets, (uint32_t)nruns);
  assert_non_null(out);
  assert_int_equal(c->count, 0);
  for (r = nruns; r-- > 0;)
    for (k = start[r]; k < start[r + 1]; k++) assert_int_equal(out[at++], node_of(k));
  assert_int_equal(at, n);
  free(out);
  free(start);
  free(begin);
  free(offsets);
}

static void take_as_is(gs_refcodes *c) {
  size_t n = c->count, k;
  uint32_t *out = gs_refcodes_take_nodes(c, NULL, NULL, 0);
  assert_non_null(out);
  for (k = 0; k < n; k++) assert_int_equal(out[k], node_of(k));
  free(out);
}

/* Fills, resolves and takes twice: as is, and run by run. */
static void check(enum shape s, size_t n, size_t turn, int want_wide, int want_escapes) {
  gs_refcodes c;
  int pass;
  for (pass = 0; pass < 2; pass++) {
    fill(&c, s, n, turn);
    assert_int_equal(c.wide, want_wide);
    if (!want_wide) assert_int_equal(c.nesc > 0, want_escapes);
    resolve(&c, s, turn);
    if (pass) take_reversed(&c);
    else take_as_is(&c);
    gs_refcodes_free(&c);
  }
}

static void addresses_fit(void **state) {
  (void)state;
  check(ADDRESSES, 200000, 0, 0, 0);
}

static void counters_fit(void **state) {
  (void)state;
  check(COUNTERS, 200000, 0, 0, 0);
}

static void far_ids_escape(void **state) {
  (void)state;
  check(SOME_FAR, 200000, 0, 0, 1);
}

static void many_escapes_widen(void **state) {
  (void)state;
  check(UNALIGNED_LATER, 200000, 1000, 1, 1);
}

/* Past one block: codes, then the widening of several blocks. */
static void blocks(void **state) {
  (void)state;
  check(ADDRESSES, BLOCK_ENTRIES + 12345, 0, 0, 0);
  check(UNALIGNED_LATER, BLOCK_ENTRIES + 800000, BLOCK_ENTRIES + 1000, 1, 1);
}

/* ---- resolution against the set of objects ------------------------------ */

enum { MEMBERS = 3999990 };

/* Entry k's ID: one of MEMBERS objects, except at p1 and p2, not in the set. */
static uint64_t object_id(size_t k, size_t p1, size_t p2) {
  uint64_t v = k == p1 ? MEMBERS + 5 : k == p2 ? MEMBERS + 7 : mix(k) % MEMBERS;
  return 0x10000 + 8 * v;
}

/* Checks entries [from, to): ranks (the value v of object_id) when
 * resolved, else the IDs, with a cursor. */
static void check_stretch(gs_refcodes *c, size_t from, size_t to, int resolved, size_t p1, size_t p2) {
  size_t k;
  gs_refcodes_cursor cur;
  if (resolved) {
    for (k = from; k < to; k++) {
      uint32_t node;
      memcpy(&node, c->blocks[k / BLOCK_ENTRIES] + 4 * (k % BLOCK_ENTRIES), 4);
      assert_int_equal(node, (object_id(k, p1, p2) - 0x10000) / 8);
    }
    return;
  }
  cur.at = from;
  cur.esc = 0;
  for (k = from; k < to; k++) assert_true(gs_refcodes_next(c, &cur) == object_id(k, p1, p2));
}

/* Two blocks on two threads when there are two processors: each stops at
 * its first ID that is not an object, and leaves the rest of its half. */
static void resolution_stops_at_missing(void **state) {
  size_t n = BLOCK_ENTRIES + 100000, p1 = 5000, p2 = BLOCK_ENTRIES + 50000, k, nrest;
  int two = gs_thread_cpus() > 1;
  gs_refcodes c;
  gs_refcodes_range rest[2];
  gs_idset objects;
  (void)state;
  gs_refcodes_init(&c);
  gsu_assert_ok(gs_idset_init(&objects));
  for (k = 0; k < MEMBERS; k++) assert_int_equal(gs_idset_add(&objects, 0x10000 + 8 * (uint64_t)k), 1);
  gsu_assert_ok(gs_idset_seal(&objects));
  for (k = 0; k < n; k++) {
    uint64_t id = object_id(k, p1, p2);
    gsu_assert_ok(gs_refcodes_append(&c, &id, 1));
  }
  nrest = gs_refcodes_resolve(&c, &objects, rest);
  assert_int_equal(nrest, two ? 2 : 1);
  assert_int_equal(rest[0].from.at, p1);
  assert_int_equal(rest[0].end, two ? BLOCK_ENTRIES : n);
  check_stretch(&c, 0, p1, 1, p1, p2);
  check_stretch(&c, p1, rest[0].end, 0, p1, p2);
  if (two) {
    assert_int_equal(rest[1].from.at, p2);
    assert_int_equal(rest[1].end, n);
    check_stretch(&c, BLOCK_ENTRIES, p2, 1, p1, p2);
    check_stretch(&c, p2, n, 0, p1, p2);
  }
  gs_refcodes_free(&c);
  gs_idset_free(&objects);
}

/* Once wide, one pass through a cursor, stopping likewise. */
static void wide_resolution_stops_at_missing(void **state) {
  size_t n = 20000, k;
  gs_refcodes c;
  gs_refcodes_range rest[2];
  gs_idset objects;
  (void)state;
  gs_refcodes_init(&c);
  gsu_assert_ok(gs_idset_init(&objects));
  for (k = 0; k < n; k++) {
    uint64_t id = 0x10000 + 8 * (uint64_t)k + (k >= 10);
    gsu_assert_ok(gs_refcodes_append(&c, &id, 1));
    if (k != 15000) assert_int_equal(gs_idset_add(&objects, id), 1);
  }
  assert_true(c.wide);
  gsu_assert_ok(gs_idset_seal(&objects));
  assert_int_equal(gs_refcodes_resolve(&c, &objects, rest), 1);
  assert_int_equal(rest[0].from.at, 15000);
  assert_int_equal(rest[0].end, n);
  for (k = 0; k < 15000; k++) {
    uint32_t node;
    memcpy(&node, c.blocks[0] + 4 * k, 4);
    assert_int_equal(node, k);
  }
  gs_refcodes_free(&c);
  gs_idset_free(&objects);
}

static void empty(void **state) {
  gs_refcodes c;
  uint32_t *out;
  (void)state;
  gs_refcodes_init(&c);
  gsu_assert_ok(gs_refcodes_append(&c, NULL, 0));
  out = gs_refcodes_take_nodes(&c, NULL, NULL, 0);
  assert_non_null(out);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(addresses_fit),
    cmocka_unit_test(counters_fit),
    cmocka_unit_test(far_ids_escape),
    cmocka_unit_test(many_escapes_widen),
    cmocka_unit_test(blocks),
    cmocka_unit_test(resolution_stops_at_missing),
    cmocka_unit_test(wide_resolution_stops_at_missing),
    cmocka_unit_test(empty),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
