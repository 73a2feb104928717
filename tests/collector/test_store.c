/* test_store.c - the collector's catalog: devices, sessions, snapshots
 * complete and failed, listing, dedupe, and recovery after a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "gs_error.h"
#include "gsd_store.h"
#include "gst_util.h"

typedef struct fixture {
  char *dir;
  gsd_store *store;
  int64_t session;
} fixture;

static const gsd_device_info dev_a = {"dev/a", "app.exe", "x86_64", "1.0", 8, 1};

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  char err[300];
  fx->dir = gst_tempdir("store");
  *state = fx;
  if (!fx->dir || gsd_store_open(&fx->store, fx->dir, err, sizeof err) != GS_OK) return -1;
  return gsd_store_session_begin(fx->store, &dev_a, "127.0.0.1:5000", &fx->session);
}

static int teardown(void **state) {
  fixture *fx = *state;
  gsd_store_close(fx->store);
  gst_rmtree(fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

static int64_t begin(fixture *fx, uint64_t agent_id, uint64_t request_id) {
  gsd_snapshot_begin b = {"dev/a", 0, 0, 0, "request", 1, 99};
  int64_t id = 0;
  b.session_id = fx->session;
  b.agent_snapshot_id = agent_id;
  b.request_id = request_id;
  assert_int_equal(gsd_store_snapshot_begin(fx->store, &b, &id), GS_OK);
  assert_true(id > 0);
  return id;
}

static gsd_snapshot_end figures(void) {
  gsd_snapshot_end e;
  memset(&e, 0, sizeof e);
  e.objects = 10;
  e.bytes = 400;
  e.references = 9;
  e.roots = 3;
  e.types = 2;
  e.sections = 1;
  e.unreachable = 4;
  e.dangling_references = 1;
  e.text_bytes = 1000;
  e.file_bytes = 300;
  e.wire_bytes = 350;
  e.crc32 = 0xdeadbeef;
  e.summary = "{\"objects\":10}";
  return e;
}

static json_t *list(fixture *fx, const char *device, const char *status, uint64_t limit) {
  json_t *o = NULL;
  assert_int_equal(gsd_store_list_snapshots(fx->store, device, status, limit, &o), GS_OK);
  return json_object_get(o, "snapshots") ? o : NULL;
}

static void test_complete_listed(void **state) {
  fixture *fx = *state;
  gsd_snapshot_end e = figures();
  int64_t id = begin(fx, 5, 1);
  json_t *o = list(fx, NULL, NULL, 0), *s, *sum;
  char *path;
  /* Being received: not listed. */
  assert_int_equal(json_array_size(json_object_get(o, "snapshots")), 0);
  json_decref(o);
  assert_int_equal(gsd_store_snapshot_complete(fx->store, id, &e), GS_OK);
  o = list(fx, "dev/a", "complete", 0);
  assert_int_equal(json_array_size(json_object_get(o, "snapshots")), 1);
  s = json_array_get(json_object_get(o, "snapshots"), 0);
  assert_int_equal(json_integer_value(json_object_get(s, "id")), id);
  assert_string_equal(json_string_value(json_object_get(s, "status")), "complete");
  assert_true(json_is_null(json_object_get(s, "reason")));
  assert_int_equal(json_integer_value(json_object_get(s, "objects")), 10);
  assert_int_equal(json_integer_value(json_object_get(s, "references")), 9);
  assert_int_equal(json_integer_value(json_object_get(s, "unreachable")), 4);
  assert_int_equal(json_integer_value(json_object_get(s, "crc32")), 0xdeadbeef);
  assert_int_equal(json_integer_value(json_object_get(s, "agent_snapshot_id")), 5);
  assert_true(json_is_true(json_object_get(s, "stable_ids")));
  assert_null(json_object_get(s, "summary"));
  json_decref(o);
  assert_int_equal(gsd_store_get_snapshot(fx->store, id, 1, &o, &path), GS_OK);
  sum = json_object_get(o, "summary");
  assert_int_equal(json_integer_value(json_object_get(sum, "objects")), 10);
  assert_non_null(strstr(path, "/snapshots/dev%2Fa/"));
  free(path);
  json_decref(o);
}

static void test_failed_row(void **state) {
  fixture *fx = *state;
  gsd_snapshot_end e = figures();
  int64_t id = begin(fx, 6, 2);
  json_t *o, *s;
  char *path;
  e.summary = NULL;
  assert_int_equal(gsd_store_snapshot_fail(fx->store, id, "CRC-32 mismatch", &e), GS_OK);
  /* A failed row cannot be completed later. */
  assert_int_not_equal(gsd_store_snapshot_complete(fx->store, id, &e), GS_OK);
  o = list(fx, NULL, "failed", 0);
  s = json_array_get(json_object_get(o, "snapshots"), 0);
  assert_string_equal(json_string_value(json_object_get(s, "status")), "failed");
  assert_string_equal(json_string_value(json_object_get(s, "reason")), "CRC-32 mismatch");
  assert_true(json_is_null(json_object_get(s, "unreachable")));
  json_decref(o);
  o = list(fx, NULL, "complete", 0);
  assert_int_equal(json_array_size(json_object_get(o, "snapshots")), 0);
  json_decref(o);
  /* A failed snapshot has no file. */
  assert_int_equal(gsd_store_get_snapshot(fx->store, id, 0, &o, &path), GS_OK);
  assert_null(path);
  json_decref(o);
  assert_int_equal(gsd_store_get_snapshot(fx->store, id + 100, 0, &o, &path), GS_EOF);
}

static void test_dedupe(void **state) {
  fixture *fx = *state;
  gsd_snapshot_end e = figures();
  int64_t id = begin(fx, 7, 0), found = 0, second;
  assert_int_equal(gsd_store_find_complete(fx->store, "dev/a", 7, &found), GS_EOF);
  assert_int_equal(gsd_store_snapshot_complete(fx->store, id, &e), GS_OK);
  assert_int_equal(gsd_store_find_complete(fx->store, "dev/a", 7, &found), GS_OK);
  assert_int_equal(found, id);
  /* The catalog itself refuses a second complete row for the pair. */
  second = begin(fx, 7, 0);
  assert_int_not_equal(gsd_store_snapshot_complete(fx->store, second, &e), GS_OK);
  assert_int_equal(gsd_store_find_complete(fx->store, "dev/a", 8, &found), GS_EOF);
}

static void test_newest_first_and_limit(void **state) {
  fixture *fx = *state;
  gsd_snapshot_end e = figures();
  int64_t a = begin(fx, 1, 0), b = begin(fx, 2, 0);
  json_t *o, *arr;
  assert_int_equal(gsd_store_snapshot_complete(fx->store, a, &e), GS_OK);
  assert_int_equal(gsd_store_snapshot_complete(fx->store, b, &e), GS_OK);
  o = list(fx, NULL, NULL, 0);
  arr = json_object_get(o, "snapshots");
  assert_int_equal(json_array_size(arr), 2);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(arr, 0), "id")), b);
  json_decref(o);
  o = list(fx, NULL, NULL, 1);
  assert_int_equal(json_array_size(json_object_get(o, "snapshots")), 1);
  json_decref(o);
  o = list(fx, "other", NULL, 0);
  assert_int_equal(json_array_size(json_object_get(o, "snapshots")), 0);
  json_decref(o);
}

static void test_devices(void **state) {
  fixture *fx = *state;
  gsd_snapshot_end e = figures();
  int64_t id = begin(fx, 1, 0);
  json_t *arr, *d;
  assert_int_equal(gsd_store_snapshot_complete(fx->store, id, &e), GS_OK);
  assert_int_equal(gsd_store_list_devices(fx->store, &arr), GS_OK);
  assert_int_equal(json_array_size(arr), 1);
  d = json_array_get(arr, 0);
  assert_string_equal(json_string_value(json_object_get(d, "device_id")), "dev/a");
  assert_string_equal(json_string_value(json_object_get(d, "architecture")), "x86_64");
  assert_int_equal(json_integer_value(json_object_get(d, "snapshots")), 1);
  assert_int_equal(json_integer_value(json_object_get(d, "last_snapshot_id")), id);
  json_decref(arr);
  assert_int_equal(gsd_store_device_known(fx->store, "dev/a"), GS_OK);
  assert_int_equal(gsd_store_device_known(fx->store, "dev/b"), GS_EOF);
  assert_int_equal(gsd_store_session_end(fx->store, fx->session, "dev/a", "bye"), GS_OK);
}

/* A row left "receiving" (the collector died) fails on the next open, and
 * its temporary file goes. */
static void test_recovery(void **state) {
  fixture *fx = *state;
  int64_t id = begin(fx, 3, 0);
  char *tmp = gsd_store_tmp_path(fx->store, "dev/a", id), err[300];
  FILE *f = fopen(tmp, "w");
  json_t *o, *s;
  assert_non_null(f);
  fclose(f);
  gsd_store_close(fx->store);
  assert_int_equal(gsd_store_open(&fx->store, fx->dir, err, sizeof err), GS_OK);
  assert_false(gst_exists(tmp));
  o = list(fx, NULL, "failed", 0);
  s = json_array_get(json_object_get(o, "snapshots"), 0);
  assert_int_equal(json_integer_value(json_object_get(s, "id")), id);
  assert_non_null(strstr(json_string_value(json_object_get(s, "reason")), "stopped"));
  json_decref(o);
  free(tmp);
  assert_int_equal(gsd_store_max_request_id(fx->store), 0);
}

static void test_escape(void **state) {
  char *e = gsd_store_escape_device(".hidden/dev 1_ok-A.b");
  (void)state;
  assert_string_equal(e, "%2Ehidden%2Fdev%201_ok-A.b");
  free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_complete_listed, setup, teardown),
    cmocka_unit_test_setup_teardown(test_failed_row, setup, teardown),
    cmocka_unit_test_setup_teardown(test_dedupe, setup, teardown),
    cmocka_unit_test_setup_teardown(test_newest_first_and_limit, setup, teardown),
    cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
    cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
    cmocka_unit_test(test_escape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
