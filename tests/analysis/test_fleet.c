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
  /* 1000 and 1010 in gen 0, 2000 in gen 2, 9000 in the LOH, 50 in none */
  fputs("a 2 app 0\nt 1 A\no 1000 1 10\no 1010 1 20\no 2000 1 30\no 9000 1 1000\no 50 1 8\nr 1000 1 0\nc app 0\n", f);
  fclose(f);
  f = fopen(gens, "w");
  fputs("{\"format\":\"gcsnap-generations/1\",\"dropped\":0,\"ranges\":["
        "{\"section\":0,\"generation\":0,\"start\":\"1000\",\"used\":256,\"reserved\":4096},"
        "{\"section\":0,\"generation\":2,\"start\":\"2000\",\"used\":64,\"reserved\":64},"
        "{\"section\":0,\"generation\":3,\"start\":\"9000\",\"used\":4096,\"reserved\":4096}]}", f);
  fclose(f);
  gsu_assert_ok(gs_gens_json(dump, gens, 0, &o, &fault));
  g = json_object_get(o, "generations");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 0), "objects")), 2);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 0), "bytes")), 0x30);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 1), "objects")), 0);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 2), "bytes")), 0x30);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 3), "bytes")), 0x1000);
  assert_string_equal(json_string_value(json_object_get(json_array_get(g, 4), "generation")), "unknown");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(g, 4), "objects")), 1);
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
    cmocka_unit_test(generations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
