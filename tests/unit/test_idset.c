/* test_idset.c - the ID set behind validation and graph loading: membership,
 * duplicates, rank and member order in each of its representations (address
 * bitmaps at 8 then 4 bytes a bit, one bit per ID value, hash table), and
 * the switches between them while a set fills, the union of two sets, and
 * sets cleared and filled again. */
#include "gs_unit.h"

#include <stdlib.h>
#include "gs_idset.h"

static uint64_t next_random(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Adds n distinct ids in the given order, then every seventh again, and
 * checks the set against a sorted copy. */
static void check_set(const uint64_t *ids, size_t n, int want_hashed, unsigned want_shift) {
  gs_idset s;
  uint64_t *sorted = malloc((n ? n : 1) * sizeof *sorted), *members;
  size_t i, distinct = n;
  uint64_t probe = 12345;
  gsu_assert_ok(gs_idset_init(&s));
  memcpy(sorted, ids, n * sizeof *ids);
  qsort(sorted, n, sizeof *sorted, cmp_u64);
  for (i = 1; i < n; i++) assert_true(sorted[i] != sorted[i - 1]);
  for (i = 0; i < n; i++) assert_int_equal(gs_idset_add(&s, ids[i]), 1);
  for (i = 0; i < n; i += 7) assert_int_equal(gs_idset_add(&s, ids[i]), 0);
  assert_int_equal(s.count, distinct);
  assert_int_equal(s.hashed, want_hashed);
  if (!want_hashed) assert_int_equal(s.shift, want_shift);
  /* Membership of members and of near misses. */
  for (i = 0; i < distinct; i++) {
    uint64_t near = sorted[i] + 1 + next_random(&probe) % 3;
    assert_true(gs_idset_has(&s, sorted[i]));
    assert_int_equal(gs_idset_has(&s, near),
                     bsearch(&near, sorted, distinct, sizeof *sorted, cmp_u64) != NULL);
  }
  gsu_assert_ok(gs_idset_seal(&s));
  for (i = 0; i < distinct; i++) {
    uint32_t rank = UINT32_MAX;
    uint64_t absent = sorted[i] + 1;
    assert_true(gs_idset_rank(&s, sorted[i], &rank));
    assert_int_equal(rank, i);
    if (!bsearch(&absent, sorted, distinct, sizeof *sorted, cmp_u64))
      assert_false(gs_idset_rank(&s, absent, &rank));
  }
  members = malloc((distinct ? distinct : 1) * sizeof *members);
  gsu_assert_ok(gs_idset_members(&s, members));
  for (i = 0; i < distinct; i++) assert_int_equal(members[i], sorted[i]);
  /* Cleared, the set is empty and takes new members again. */
  gs_idset_clear(&s);
  assert_int_equal(s.count, 0);
  if (distinct) assert_false(gs_idset_has(&s, sorted[0]));
  assert_int_equal(gs_idset_add(&s, 0x1000), 1);
  assert_true(gs_idset_has(&s, 0x1000));
  gs_idset_free(&s);
  free(members);
  free(sorted);
}

/* Shuffles with a fixed seed. */
static void shuffle(uint64_t *ids, size_t n, uint64_t seed) {
  size_t i;
  for (i = n; i > 1; i--) {
    size_t j = (size_t)(next_random(&seed) % i);
    uint64_t t = ids[i - 1];
    ids[i - 1] = ids[j];
    ids[j] = t;
  }
}

/* A heap walked by address: 8-byte aligned IDs in three segments. */
static void addresses_use_bitmaps(void **state) {
  size_t n = 300000, i;
  uint64_t *ids = malloc(n * sizeof *ids);
  (void)state;
  for (i = 0; i < n; i++) {
    uint64_t segment = i % 3 == 0 ? UINT64_C(0x7ff000000000) : i % 3 == 1 ? 0x02000000 : UINT64_C(0x180000000);
    ids[i] = segment + 24 * (i / 3) + 8 * (i % 2);
  }
  check_set(ids, n, 0, 3);
  shuffle(ids, n, 5);
  check_set(ids, n, 0, 3);
  free(ids);
}

/* A 32-bit heap: 4-byte aligned IDs take a bit per 4 bytes, also when the
 * first such ID comes after many 8-byte aligned ones. */
static void four_byte_addresses(void **state) {
  size_t n = 300000, i;
  uint64_t *ids = malloc(n * sizeof *ids);
  (void)state;
  for (i = 0; i < n; i++) ids[i] = 0x02000000 + 12 * i;
  check_set(ids, n, 0, 2);
  for (i = 0; i < n; i++) ids[i] = 0x02000000 + 16 * i;
  ids[n - 1] = 0x02000000 + 16 * n + 4;
  check_set(ids, n, 0, 2);
  free(ids);
}

/* IDs that are counters or indices (odd values) take one bit per value. */
static void counters_use_one_bit_per_id(void **state) {
  size_t n = 200000, i;
  uint64_t *ids = malloc(n * sizeof *ids);
  (void)state;
  for (i = 0; i < n; i++) ids[i] = 1 + 2 * i + (i % 5 == 0);
  check_set(ids, n, 0, 0);
  /* The switch may come late: after many aligned IDs, one odd one. */
  for (i = 0; i < n; i++) ids[i] = 4 * (i + 1);
  ids[n - 1] = 3;
  check_set(ids, n, 0, 0);
  free(ids);
}

/* IDs scattered over 64 bits are too sparse for bitmaps. */
static void scattered_ids_use_a_hash_table(void **state) {
  size_t n = 50000, i;
  uint64_t *ids = malloc(n * sizeof *ids), seed = 7;
  (void)state;
  for (i = 0; i < n; i++) ids[i] = next_random(&seed) & ~UINT64_C(7);
  check_set(ids, n, 1, 0);
  free(ids);
}

static void edge_ids(void **state) {
  uint64_t ids[] = {0, 4, UINT64_MAX - 3, UINT64_C(1) << 63, 0xfffffffc};
  (void)state;
  check_set(ids, 5, 0, 2);
  check_set(ids, 0, 0, 3);
}

/* IDs of one kind: 8-byte addresses, 4-byte ones, counters, or scattered
 * (a hash table), n of them, from seed. */
static void ids_of_kind(uint64_t *ids, size_t n, int kind, uint64_t seed) {
  size_t i;
  for (i = 0; i < n; i++) {
    uint64_t r = next_random(&seed);
    if (kind == 0) ids[i] = 0x200000000u + 8 * (r % (4 * n));
    else if (kind == 1) ids[i] = 0x200000000u + 4 * (r % (4 * n));
    else if (kind == 2) ids[i] = r % (4 * n);
    else ids[i] = r & ~UINT64_C(7);
  }
}

/* Merging a set of any kind into one of any kind gives their union, and
 * gs_idset_put counts and answers as gs_idset_add does. */
static void merge_is_the_union(void **state) {
  size_t n = 30000, i, k;
  uint64_t *ids = malloc(2 * n * sizeof *ids), *members = malloc(2 * n * sizeof *members);
  int a_kind, b_kind;
  (void)state;
  for (a_kind = 0; a_kind < 4; a_kind++)
    for (b_kind = 0; b_kind < 4; b_kind++) {
      gs_idset a, b;
      gsu_assert_ok(gs_idset_init(&a));
      gsu_assert_ok(gs_idset_init(&b));
      ids_of_kind(ids, n, a_kind, 11);
      ids_of_kind(ids + n, n, b_kind, 11 + (uint64_t)b_kind);
      for (i = 0; i < n; i++) assert_int_equal(gs_idset_put(&a, ids[i]), gs_idset_add(&b, ids[i]));
      gs_idset_clear(&b);
      for (i = n; i < 2 * n; i++) assert_true(gs_idset_add(&b, ids[i]) >= 0);
      gsu_assert_ok(gs_idset_merge(&a, &b));
      qsort(ids, 2 * n, sizeof *ids, cmp_u64);
      for (i = 1, k = 1; i < 2 * n; i++)
        if (ids[i] != ids[k - 1]) ids[k++] = ids[i];
      assert_int_equal(a.count, k);
      gsu_assert_ok(gs_idset_members(&a, members));
      for (i = 0; i < k; i++) assert_int_equal(members[i], ids[i]);
      gs_idset_free(&a);
      gs_idset_free(&b);
    }
  free(ids);
  free(members);
}

/* A set cleared again and again (its bitmaps kept for reuse) holds only
 * what was added since: members, and what lies outside an empty set. */
static void cleared_sets_start_empty(void **state) {
  size_t n = 20000, i, k, round;
  uint64_t *ids = malloc(n * sizeof *ids), *out = malloc(n * sizeof *out);
  gs_idset s, none;
  (void)state;
  gsu_assert_ok(gs_idset_init(&s));
  gsu_assert_ok(gs_idset_init(&none));
  for (round = 0; round < 6; round++) {
    ids_of_kind(ids, n / (round + 1), (int)(round % 3), 40 + round);
    for (i = 0; i < n / (round + 1); i++) assert_true(gs_idset_add(&s, ids[i]) >= 0);
    qsort(ids, n / (round + 1), sizeof *ids, cmp_u64);
    for (i = 1, k = 1; i < n / (round + 1); i++)
      if (ids[i] != ids[k - 1]) ids[k++] = ids[i];
    assert_int_equal(s.count, k);
    assert_int_equal(gs_idset_outside(&s, &none, NULL), k);
    gsu_assert_ok(gs_idset_members(&s, out));
    for (i = 0; i < k; i++) assert_int_equal(out[i], ids[i]);
    gs_idset_clear(&s);
    assert_false(gs_idset_has(&s, ids[0]));
  }
  gs_idset_free(&s);
  gs_idset_free(&none);
  free(ids);
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(addresses_use_bitmaps),
    cmocka_unit_test(four_byte_addresses),
    cmocka_unit_test(counters_use_one_bit_per_id),
    cmocka_unit_test(scattered_ids_use_a_hash_table),
    cmocka_unit_test(edge_ids),
    cmocka_unit_test(merge_is_the_union),
    cmocka_unit_test(cleared_sets_start_empty),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
