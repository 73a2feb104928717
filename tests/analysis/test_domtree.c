/* test_domtree.c - the dominator tree file: written from a small dump
 * whose tree is known, read back a node and a page at a time, retained
 * bytes by type, and refused when it is stale, truncated or absent. */
#include "gs_unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gs_domtree.h"
#include "gs_error.h"

/* Big 10 (256 B) holds 20 (16 B, which holds 40, 8 B) and 30 (32 B); Big
 * 50 (64 B) is a root of its own; 60 is unreachable. */
static const char DUMP[] =
  "a 2 App 0\nt 1 Big\nt 2 Small\n"
  "o 10 1 100 20 30\no 20 2 10 40\no 30 2 20\no 40 2 8\no 50 1 40\no 60 2 10\n"
  "r 10 1 0\nr 50 1 0\nr 60 1 2\nc App 0\n";

typedef struct fx { char dir[64], dump[96], tree[96]; gs_domtree_stamp stamp; } fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  FILE *out;
  snprintf(f->dir, sizeof f->dir, "/tmp/gs-domtree-XXXXXX");
  if (!mkdtemp(f->dir)) return -1;
  snprintf(f->dump, sizeof f->dump, "%s/s.gclog", f->dir);
  snprintf(f->tree, sizeof f->tree, "%s/s.dom", f->dir);
  if (!(out = fopen(f->dump, "w")) || fputs(DUMP, out) < 0 || fclose(out)) return -1;
  if (gs_domtree_stamp_of(f->dump, &f->stamp)) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  if (system(cmd) != 0) return -1;
  free(f);
  return 0;
}

static json_t *ask(const gs_domtree *t, int root, uint64_t parent, uint64_t offset, uint64_t limit, int *err) {
  gs_domtree_query q;
  json_t *o = NULL;
  char why[128];
  memset(&q, 0, sizeof q);
  q.root = root; q.parent = parent; q.offset = offset; q.limit = limit;
  *err = gs_domtree_children(t, &q, &o, why, sizeof why);
  return o;
}

static const char *kid(json_t *o, size_t i, const char *key) {
  return json_string_value(json_object_get(json_array_get(json_object_get(o, "children"), i), key));
}

static uint64_t num(json_t *o, const char *key) { return (uint64_t)json_integer_value(json_object_get(o, key)); }

static gs_domtree *written(fx *f) {
  gs_file_fault fault;
  gs_domtree *t = NULL;
  gsu_assert_ok(gs_domtree_write(f->dump, f->tree, f->stamp, &fault));
  gsu_assert_ok(gs_domtree_open(f->tree, f->stamp, &t));
  return t;
}

static void nodes_and_pages(void **state) {
  gs_domtree *t = written(*state);
  json_t *o;
  int err;
  o = ask(t, 1, 0, 0, 10, &err);
  gsu_assert_ok(err);
  assert_int_equal(num(json_object_get(o, "node"), "retained"), 376);
  assert_int_equal(num(o, "reachable_objects"), 5);
  assert_int_equal(json_array_size(json_object_get(o, "children")), 2);
  assert_string_equal(kid(o, 0, "id"), "10");
  assert_string_equal(kid(o, 0, "type"), "Big");
  assert_string_equal(kid(o, 1, "id"), "50");
  json_decref(o);
  o = ask(t, 0, 0x10, 0, 10, &err);
  gsu_assert_ok(err);
  assert_string_equal(kid(o, 0, "id"), "30");    /* 32 B before 20's 24 */
  assert_string_equal(kid(o, 1, "id"), "20");
  assert_int_equal(num(json_array_get(json_object_get(o, "children"), 1), "retained"), 24);
  json_decref(o);
  o = ask(t, 0, 0x10, 1, 1, &err);
  assert_int_equal(json_array_size(json_object_get(o, "children")), 1);
  assert_string_equal(kid(o, 0, "id"), "20");
  json_decref(o);
  o = ask(t, 0, 0x20, 0, 10, &err);
  assert_string_equal(kid(o, 0, "id"), "40");
  assert_int_equal(json_array_size(json_object_get(o, "dominators")), 2);
  json_decref(o);
  assert_null(ask(t, 0, 0x60, 0, 10, &err));      /* unreachable */
  assert_int_equal(err, GS_EINVAL);
  assert_null(ask(t, 0, 0x70, 0, 10, &err));      /* not in the dump */
  assert_int_equal(err, GS_EINVAL);
  gs_domtree_close(t);
}

static void retained_by_type(void **state) {
  gs_domtree *t = written(*state);
  json_t *o = NULL;
  gsu_assert_ok(gs_domtree_by_type(t, &o));
  assert_int_equal(num(o, "Big"), 376);
  assert_int_equal(num(o, "Small"), 56);         /* 20 (with 40) and 30; 40 is under a Small */
  json_decref(o);
  gs_domtree_close(t);
}

static void stale_truncated_absent(void **state) {
  fx *f = *state;
  gs_domtree *t = written(f);
  gs_domtree_stamp other = f->stamp;
  long size;
  FILE *in;
  gs_domtree_close(t);
  other.mtime_ns++;
  assert_int_equal(gs_domtree_open(f->tree, other, &t), GS_EOF);
  assert_null(t);
  in = fopen(f->tree, "r+");
  assert_non_null(in);
  fseek(in, 0, SEEK_END);
  size = ftell(in);
  fclose(in);
  assert_int_equal(truncate(f->tree, size / 2), 0);
  if (gs_domtree_open(f->tree, f->stamp, &t) == GS_OK) {   /* the table is gone: refused */
    int err;
    assert_null(ask(t, 1, 0, 0, 10, &err));
    assert_int_equal(err, GS_EFORMAT);
    gs_domtree_close(t);
  }
  assert_int_equal(truncate(f->tree, 16), 0);
  assert_int_equal(gs_domtree_open(f->tree, f->stamp, &t), GS_EFORMAT);
  unlink(f->tree);
  assert_int_equal(gs_domtree_open(f->tree, f->stamp, &t), GS_EOF);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(nodes_and_pages, setup, teardown),
    cmocka_unit_test_setup_teardown(retained_by_type, setup, teardown),
    cmocka_unit_test_setup_teardown(stale_truncated_absent, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
