/* test_fleet.c - the fleet overview's figures (the least-squares growth
 * and the suspects of stored summaries) and a dump broken down by its
 * generation ranges. */
#include "gs_unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_fleet.h"
#include "gs_gens.h"

static void slope(void **state) {
  double x[] = {0, 1, 2, 3}, y[] = {10, 12, 14, 16}, noisy[] = {10, 30, 14, 16}, same[] = {5, 5, 5, 5}, s;
  (void)state;
  gsu_assert_ok(gs_fleet_slope(x, y, 4, &s));
  assert_true(s > 1.999 && s < 2.001);
  gsu_assert_ok(gs_fleet_slope(x, noisy, 4, &s));   /* one odd point does not make it 20 a step */
  assert_true(s > -0.1 && s < 4);
  assert_int_equal(gs_fleet_slope(x, y, 1, &s), GS_EINVAL);
  assert_int_equal(gs_fleet_slope(same, y, 4, &s), GS_EINVAL);
}

static json_t *summary(unsigned leak_count, unsigned leak_bytes, unsigned steady_bytes) {
  return json_pack("{s:[{s:s,s:i,s:i},{s:s,s:i,s:i}]}", "by_type", "type", "Leak", "count", leak_count, "bytes",
                   leak_bytes, "type", "Steady", "count", 4, "bytes", steady_bytes);
}

static void suspects(void **state) {
  json_t *sums[3] = {summary(1, 32, 400), summary(2, 64, 400), summary(3, 96, 410)}, *out = NULL;
  int i;
  (void)state;
  gsu_assert_ok(gs_fleet_suspects(sums, 3, 20, &out));
  assert_int_equal(json_array_size(out), 1);
  assert_string_equal(json_string_value(json_array_get(out, 0)), "Leak");
  json_decref(out);
  assert_int_equal(gs_fleet_suspects(sums, 1, 20, &out), GS_EINVAL);
  for (i = 0; i < 3; i++) json_decref(sums[i]);
}

/* A summary's rows as stored: the largest types only. */
static json_t *rows(const char *a, int ac, int ab, const char *b, int bc, int bb) {
  return b ? json_pack("{s:[{s:s,s:i,s:i},{s:s,s:i,s:i}]}", "by_type", "type", a, "count", ac, "bytes", ab,
                       "type", b, "count", bc, "bytes", bb)
           : json_pack("{s:[{s:s,s:i,s:i}]}", "by_type", "type", a, "count", ac, "bytes", ab);
}

/* Where the stored rows decide as gcsnap trend does, and the two ways they
 * can differ from it (gs_fleet.h). */
static void suspects_as_trend(void **state) {
  json_t *agree[3] = {rows("Big", 5, 500, "Leak", 1, 100), rows("Big", 5, 500, "Leak", 2, 200),
                      rows("Big", 5, 500, "Leak", 3, 300)};
  /* Small grows in every interval, but is never among the stored rows. */
  json_t *unseen[2] = {rows("Big", 5, 500, NULL, 0, 0), rows("Big", 5, 500, NULL, 0, 0)};
  /* Late was left out of the first snapshot's rows: it counts 0 there. */
  json_t *late[2] = {rows("Big", 5, 500, NULL, 0, 0), rows("Big", 5, 500, "Late", 10, 100)};
  /* Gap grows in every interval, but was left out of the middle rows. */
  json_t *gap[3] = {rows("Gap", 1, 100, NULL, 0, 0), rows("Big", 5, 500, NULL, 0, 0), rows("Gap", 3, 110, NULL, 0, 0)};
  json_t *out;
  int i;
  (void)state;
  gsu_assert_ok(gs_fleet_suspects(agree, 3, 20, &out));
  assert_int_equal(json_array_size(out), 1);
  assert_string_equal(json_string_value(json_array_get(out, 0)), "Leak");
  json_decref(out);
  gsu_assert_ok(gs_fleet_suspects(unseen, 2, 20, &out));
  assert_int_equal(json_array_size(out), 0);          /* trend would find Small */
  json_decref(out);
  gsu_assert_ok(gs_fleet_suspects(late, 2, 20, &out));
  assert_int_equal(json_array_size(out), 1);          /* from 0: a suspect whatever it really had */
  assert_string_equal(json_string_value(json_array_get(out, 0)), "Late");
  json_decref(out);
  gsu_assert_ok(gs_fleet_suspects(gap, 3, 20, &out));
  assert_int_equal(json_array_size(out), 0);          /* 1 -> 0 -> 3: not every interval; +10% only */
  json_decref(out);
  for (i = 0; i < 3; i++) json_decref(agree[i]);
  for (i = 0; i < 2; i++) { json_decref(unseen[i]); json_decref(late[i]); }
  for (i = 0; i < 3; i++) json_decref(gap[i]);
}

static void generations(void **state) {
  char dir[] = "/tmp/gs-gens-XXXXXX", dump[64], gens[64];
  json_t *o = NULL, *g;
  gs_file_fault fault;
  FILE *f;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(dump, sizeof dump, "%s/d.gclog", dir);
  snprintf(gens, sizeof gens, "%s/d.gclog.gens.json", dir);
  f = fopen(dump, "w");
  /* 1000 and 1010 in gen 0, 2000 in gen 2, 9000 in the LOH, 20000 in the
   * pinned object heap, 50 in none */
  fputs("a 2 app 0\nt 1 A\no 1000 1 10\no 1010 1 20\no 2000 1 30\no 9000 1 1000\no 20000 1 18\n"
        "o 50 1 8\nr 1000 1 0\nc app 0\n", f);
  fclose(f);
  f = fopen(gens, "w");
  fputs("{\"format\":\"gcsnap-generations/1\",\"dropped\":0,\"ranges\":["
        "{\"section\":0,\"generation\":0,\"start\":\"1000\",\"used\":256,\"reserved\":4096},"
        "{\"section\":0,\"generation\":2,\"start\":\"2000\",\"used\":64,\"reserved\":64},"
        "{\"section\":0,\"generation\":3,\"start\":\"9000\",\"used\":4096,\"reserved\":4096},"
        "{\"section\":0,\"generation\":4,\"start\":\"20000\",\"used\":4096,\"reserved\":4096}]}", f);
  fclose(f);
  gsu_assert_ok(gs_gens_json(dump, gens, 0, &o, &fault));
  g = json_object_get(o, "generations");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 0), "objects")), 2);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 0), "bytes")), 0x30);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 1), "objects")), 0);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 2), "bytes")), 0x30);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 3), "bytes")), 0x1000);
  assert_string_equal(json_string_value(json_object_get(json_array_get(g, 4), "generation")), "poh");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 4), "bytes")), 0x18);
  assert_string_equal(json_string_value(json_object_get(json_array_get(g, 5), "generation")), "unknown");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 5), "objects")), 1);
  json_decref(o);
  f = fopen(gens, "w");
  fputs("{\"format\":\"something else\"}", f);
  fclose(f);
  assert_int_equal(gs_gens_json(dump, gens, 0, &o, &fault), GS_EFORMAT);
  unlink(gens);
  unlink(dump);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(slope),
    cmocka_unit_test(suspects),
    cmocka_unit_test(suspects_as_trend),
    cmocka_unit_test(generations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
