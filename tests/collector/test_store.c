/* test_store.c - the collector's catalog: devices, sessions, snapshots
 * complete and failed, listing, dedupe, recovery after a crash, schedules,
 * retention, the migration of a catalog made by an older collector, and
 * the binding of a client library at run time (gs_dl.h).
 *
 * With a PostgreSQL URL as its argument (pg_test.sh starts a server), the
 * same tests run on that catalog, emptied before each, and so do those of
 * several collectors on one catalog: identities, and the recovery of a
 * stopped collector's snapshots only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <libpq-fe.h>
#include "gs_dl.h"
#include "gs_error.h"
#include "gsd_store.h"
#include "gst_util.h"

typedef struct fixture {
  char *dir;
  gsd_store *store;
  int64_t session;
} fixture;

static const gsd_device_info dev_a = {"dev/a", "app.exe", "x86_64", "1.0", 8, 1};
/* The PostgreSQL catalog under test; NULL for SQLite. */
static const char *pg_url;

/* Runs sql on the PostgreSQL catalog, with up to two text parameters. */
static int pg_exec(const char *sql, const char *p1, const char *p2) {
  const char *params[2] = {p1, p2};
  PGconn *c = PQconnectdb(pg_url);
  PGresult *r = p1 ? PQexecParams(c, sql, p2 ? 2 : 1, NULL, params, NULL, NULL, 0)
                  : PQexec(c, sql);
  int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
  if (!ok) fprintf(stderr, "pg_exec: %s", PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
  return ok ? 0 : -1;
}

static int open_as(gsd_store **st, const char *dir, const char *identity) {
  char err[300];
  int rc = gsd_store_open_catalog(st, dir, pg_url, identity, err, sizeof err);
  if (rc != GS_OK) fprintf(stderr, "open: %s\n", err);
  return rc;
}

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = gst_tempdir("store");
  *state = fx;
  if (pg_url && pg_exec("SET client_min_messages = warning; DROP SCHEMA public CASCADE;"
                        " CREATE SCHEMA public", NULL, NULL)) return -1;
  if (!fx->dir || open_as(&fx->store, fx->dir, "test") != GS_OK) return -1;
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
  gsd_snapshot_begin b = {"dev/a", 0, 0, 0, "request", 1, 99, 0, NULL, NULL};
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

/* Makes an empty file at path. */
static void touch(const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
}

/* A row left "receiving" (the collector died) fails on the next open, and
 * its files go: the temporary one, the final one if it was placed, its side
 * file and the side file's temporaries, whoever wrote them; not the files
 * beside them. */
static void test_recovery(void **state) {
  fixture *fx = *state;
  int64_t id = begin(fx, 3, 0);
  char *tmp = gsd_store_tmp_path(fx->store, "dev/a", id);
  char *final = gsd_store_snapshot_path(fx->store, "dev/a", id), side[600], other[600];
  json_t *o, *s;
  snprintf(side, sizeof side, "%s.gens.json.tmp.99999", final);
  snprintf(other, sizeof other, "%s.kept.gens.json", final);
  touch(tmp);
  touch(final);
  touch(side);
  touch(other);
  gsd_store_close(fx->store);
  assert_int_equal(open_as(&fx->store, fx->dir, "test"), GS_OK);
  assert_false(gst_exists(tmp));
  assert_false(gst_exists(final));
  assert_false(gst_exists(side));
  assert_true(gst_exists(other));
  free(final);
  o = list(fx, NULL, "failed", 0);
  s = json_array_get(json_object_get(o, "snapshots"), 0);
  assert_int_equal(json_integer_value(json_object_get(s, "id")), id);
  assert_non_null(strstr(json_string_value(json_object_get(s, "reason")), "stopped"));
  json_decref(o);
  free(tmp);
  assert_int_equal(gsd_store_max_request_id(fx->store), 0);
}

/* A complete snapshot with a file of file_bytes; returns its ID. */
static int64_t stored(fixture *fx, uint64_t agent_id, uint64_t file_bytes) {
  int64_t id = begin(fx, agent_id, 0);
  gsd_snapshot_end e = figures();
  char *path = gsd_store_snapshot_path(fx->store, "dev/a", id);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
  free(path);
  e.file_bytes = file_bytes;
  assert_int_equal(gsd_store_snapshot_complete(fx->store, id, &e), GS_OK);
  return id;
}

static int listed(fixture *fx, int64_t id) {
  json_t *o = NULL;
  int rc = gsd_store_get_snapshot(fx->store, id, 0, &o, NULL);
  json_decref(o);
  return rc == GS_OK;
}

static int has_file(fixture *fx, int64_t id) {
  char *path = gsd_store_snapshot_path(fx->store, "dev/a", id);
  int yes = gst_exists(path);
  free(path);
  return yes;
}

/* Keep the last N, then the newest that fit in B bytes (the newest one
 * always); failed rows are not touched. */
static void test_retain(void **state) {
  fixture *fx = *state;
  int64_t ids[6], failed;
  unsigned removed, i;
  for (i = 0; i < 5; i++) ids[i] = stored(fx, 10 + i, 300);
  failed = begin(fx, 20, 0);
  assert_int_equal(gsd_store_snapshot_fail(fx->store, failed, "cut", NULL), GS_OK);
  ids[5] = stored(fx, 30, 300);
  assert_int_equal(gsd_store_retain(fx->store, "dev/a", 4, 0, &removed), GS_OK);
  assert_int_equal(removed, 2);
  for (i = 0; i < 6; i++) {
    assert_int_equal(listed(fx, ids[i]), i >= 2);
    assert_int_equal(has_file(fx, ids[i]), i >= 2);
  }
  assert_true(listed(fx, failed));
  assert_int_equal(gsd_store_retain(fx->store, "dev/a", 4, 0, &removed), GS_OK);
  assert_int_equal(removed, 0);
  assert_int_equal(gsd_store_retain(fx->store, "dev/a", 0, 650, &removed), GS_OK);
  assert_int_equal(removed, 2);
  assert_true(listed(fx, ids[4]) && listed(fx, ids[5]) && !listed(fx, ids[3]));
  assert_int_equal(gsd_store_retain(fx->store, "dev/a", 0, 100, &removed), GS_OK);
  assert_int_equal(removed, 1);
  assert_true(listed(fx, ids[5]) && has_file(fx, ids[5]) && !has_file(fx, ids[4]));
}

/* A file queued for removal when the collector died goes on the next open. */
static void test_removal_after_crash(void **state) {
  fixture *fx = *state;
  int64_t id = stored(fx, 1, 300);
  char *path = gsd_store_snapshot_path(fx->store, "dev/a", id), *db, num[24];
  sqlite3 *h;
  char *sql;
  size_t n = strlen(fx->dir) + 16;
  gsd_store_close(fx->store);
  fx->store = NULL;
  db = malloc(n);
  snprintf(db, n, "%s/catalog.db", fx->dir);
  snprintf(num, sizeof num, "%lld", (long long)id);
  if (pg_url) {
    assert_int_equal(pg_exec("WITH q AS (INSERT INTO removals(path) VALUES ($1))"
                             " DELETE FROM snapshots WHERE id = $2::bigint", path, num), 0);
  } else {
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    sql = sqlite3_mprintf("INSERT INTO removals(path) VALUES (%Q);"
                          "DELETE FROM snapshots WHERE id = %lld", path, (long long)id);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_free(sql);
    sqlite3_close(h);
  }
  assert_true(gst_exists(path));
  assert_int_equal(open_as(&fx->store, fx->dir, "test"), GS_OK);
  assert_false(gst_exists(path));
  free(path);
  free(db);
}

static void test_schedules(void **state) {
  fixture *fx = *state;
  gsd_schedule a, b, *list;
  gsd_schedule_run *runs;
  size_t n;
  memset(&a, 0, sizeof a);
  strcpy(a.device, "pos-*");
  a.every_ms = 300000;
  a.jitter_ms = 30000;
  a.keep = 50;
  b = a;
  b.max_bytes = 1u << 30;
  b.keep = 0;
  b.end_s = 2000000000;
  assert_int_equal(gsd_store_schedule_add(fx->store, &a), GS_OK);
  assert_int_equal(gsd_store_schedule_add(fx->store, &b), GS_OK);
  assert_true(a.id > 0 && b.id > a.id && a.created_ms > 0);
  assert_int_equal(gsd_store_schedule_ran(fx->store, a.id, "pos-1", 1234), GS_OK);
  assert_int_equal(gsd_store_schedule_ran(fx->store, a.id, "pos-1", 5678), GS_OK);
  assert_int_equal(gsd_store_schedule_ran(fx->store, b.id, "pos-2", 99), GS_OK);
  assert_int_equal(gsd_store_schedules(fx->store, &list, &n), GS_OK);
  assert_int_equal(n, 2);
  assert_int_equal(list[0].id, a.id);
  assert_string_equal(list[0].device, "pos-*");
  assert_int_equal(list[0].every_ms, 300000);
  assert_int_equal(list[0].jitter_ms, 30000);
  assert_int_equal(list[0].keep, 50);
  assert_int_equal(list[0].max_bytes, 0);
  assert_int_equal(list[0].start_s, 0);
  assert_int_equal(list[0].created_ms, a.created_ms);
  assert_int_equal(list[1].max_bytes, 1u << 30);
  assert_int_equal(list[1].keep, 0);
  assert_int_equal(list[1].end_s, 2000000000);
  free(list);
  assert_int_equal(gsd_store_schedule_remove(fx->store, b.id), GS_OK);
  assert_int_equal(gsd_store_schedule_remove(fx->store, b.id), GS_EOF);
  assert_int_equal(gsd_store_schedule_runs(fx->store, &runs, &n), GS_OK);
  assert_int_equal(n, 1);
  assert_string_equal(runs[0].device_id, "pos-1");
  assert_int_equal(runs[0].last_ms, 5678);
  free(runs);
}

/* A catalog of the first collector (no schedules, no schedule_id column)
 * opens and takes scheduled snapshots. */
static void test_migrate(void **state) {
  char *dir = gst_tempdir("old-store"), *db, err[300];
  gsd_store *st;
  sqlite3 *h;
  gsd_schedule sch;
  gsd_snapshot_begin b = {"old", 0, 0, 1, "schedule", 0, 0, 0, NULL, NULL};
  gsd_device_info d = {"old", "app", "x86_64", "1.0", 8, 1};
  int64_t id, session;
  json_t *o = NULL;
  size_t n;
  (void)state;
  assert_non_null(dir);
  n = strlen(dir) + 16;
  db = malloc(n);
  snprintf(db, n, "%s/catalog.db", dir);
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h,
      "CREATE TABLE devices(device_id TEXT PRIMARY KEY, app_name TEXT, architecture TEXT,"
      " pointer_size INTEGER, agent_version TEXT, first_seen INTEGER NOT NULL,"
      " last_seen INTEGER NOT NULL);"
      "CREATE TABLE sessions(id INTEGER PRIMARY KEY AUTOINCREMENT, device_id TEXT NOT NULL,"
      " address TEXT, protocol_version INTEGER, agent_version TEXT, started INTEGER NOT NULL,"
      " ended INTEGER, end_reason TEXT);"
      "CREATE TABLE snapshots(id INTEGER PRIMARY KEY AUTOINCREMENT, device_id TEXT NOT NULL,"
      " session_id INTEGER, created INTEGER NOT NULL, finished INTEGER,"
      " status TEXT NOT NULL CHECK(status IN ('receiving', 'complete', 'failed')), reason TEXT,"
      " request_id INTEGER, agent_snapshot_id INTEGER NOT NULL, trigger TEXT,"
      " stable_ids INTEGER NOT NULL DEFAULT 0, clock_ms INTEGER, objects INTEGER, bytes INTEGER,"
      " refs INTEGER, roots INTEGER, types INTEGER, unreachable INTEGER,"
      " dangling_references INTEGER, sections INTEGER, text_bytes INTEGER, file_bytes INTEGER,"
      " wire_bytes INTEGER, crc32 INTEGER, errors INTEGER, warnings INTEGER, first_error TEXT,"
      " summary TEXT);", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  assert_int_equal(gsd_store_open(&st, dir, err, sizeof err), GS_OK);
  memset(&sch, 0, sizeof sch);
  strcpy(sch.device, "old");
  sch.every_ms = 1000;
  assert_int_equal(gsd_store_schedule_add(st, &sch), GS_OK);
  assert_int_equal(gsd_store_session_begin(st, &d, "127.0.0.1:1", &session), GS_OK);
  b.session_id = session;
  b.schedule_id = sch.id;
  assert_int_equal(gsd_store_snapshot_begin(st, &b, &id), GS_OK);
  assert_int_equal(gsd_store_snapshot_fail(st, id, "cut", NULL), GS_OK);
  assert_int_equal(gsd_store_get_snapshot(st, id, 0, &o, NULL), GS_OK);
  assert_int_equal(json_integer_value(json_object_get(o, "schedule_id")), sch.id);
  json_decref(o);
  gsd_store_close(st);
  gst_rmtree(dir);
  free(dir);
  free(db);
}

static void test_escape(void **state) {
  char *e = gsd_store_escape_device(".hidden/dev 1_ok-A.b");
  (void)state;
  assert_string_equal(e, "%2Ehidden%2Fdev%201_ok-A.b");
  free(e);
}

/* The PostgreSQL catalog binds libpq when a store is first opened on it
 * (gs_dl.h): a library that is not there, or that lacks a function, is an
 * error that names it, and leaves the table as it was. */
typedef struct libc_api {
  size_t (*strlen)(const char *s);
  int (*absent)(void);
} libc_api;

static void test_library_binding(void **state) {
  static const gs_dl_sym good[] = {{"strlen", offsetof(libc_api, strlen)}};
  static const gs_dl_sym bad[] = {{"strlen", offsetof(libc_api, strlen)},
                                  {"gcsnap_absent", offsetof(libc_api, absent)}};
  libc_api libc = {NULL, NULL};
  char err[256];
  (void)state;
  assert_int_equal(gs_dl_bind("libgcsnap-absent.so.1", good, 1, &libc, err, sizeof err), GS_EIO);
  assert_non_null(strstr(err, "libgcsnap-absent.so.1"));
  assert_int_equal(gs_dl_bind("libc.so.6", bad, 2, &libc, err, sizeof err), GS_EIO);
  assert_non_null(strstr(err, "libc.so.6 lacks gcsnap_absent"));
  assert_null(libc.strlen);
  assert_int_equal(gs_dl_bind("libc.so.6", good, 1, &libc, err, sizeof err), GS_OK);
  assert_int_equal(libc.strlen("gcsnap"), 6);
}

/* ---- PostgreSQL: several collectors on one catalog ---------------------- */

/* A second collector with a running one's identity is refused; another
 * identity is not, and the first's identity is free once it stops. */
static void test_pg_identity(void **state) {
  fixture *fx = *state;
  gsd_store *st = NULL;
  char err[300];
  assert_int_equal(gsd_store_open_catalog(&st, fx->dir, pg_url, "test", err, sizeof err),
                   GS_EINVAL);
  assert_non_null(strstr(err, "already running"));
  assert_int_equal(open_as(&st, fx->dir, "other"), GS_OK);
  gsd_store_close(st);
  gsd_store_close(fx->store);
  assert_int_equal(open_as(&fx->store, fx->dir, "test"), GS_OK);
}

/* A connection the server dropped is made again, with the identity. */
static void test_pg_reconnect(void **state) {
  fixture *fx = *state;
  gsd_store *st = NULL;
  char err[300];
  assert_int_equal(pg_exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                           " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'",
                           NULL, NULL), 0);
  /* The first statement finds the connection gone; the next one works. */
  assert_int_equal(gsd_store_device_known(fx->store, "dev/a"), GS_EIO);
  assert_int_equal(gsd_store_device_known(fx->store, "dev/a"), GS_OK);
  assert_int_equal(gsd_store_open_catalog(&st, fx->dir, pg_url, "test", err, sizeof err),
                   GS_EINVAL);
}

/* A stopped collector's snapshot being received is failed and its file
 * removed by another collector, never while it runs, and never that
 * other's own. */
static void test_pg_stopped(void **state) {
  fixture *fx = *state;
  static const gsd_device_info dev_b = {"dev/b", "app.exe", "x86_64", "1.0", 8, 1};
  gsd_snapshot_begin b = {"dev/b", 0, 0, 7, "request", 0, 1, 0, NULL, NULL};
  gsd_snapshot_end e = figures();
  gsd_store *other;
  int64_t mine = begin(fx, 5, 0), theirs;
  char *my_tmp = gsd_store_tmp_path(fx->store, "dev/a", mine), *their_tmp;
  json_t *o;
  int tries;
  assert_int_equal(open_as(&other, fx->dir, "other"), GS_OK);
  assert_int_equal(gsd_store_session_begin(other, &dev_b, "127.0.0.1:5001", &b.session_id), GS_OK);
  assert_int_equal(gsd_store_snapshot_begin(other, &b, &theirs), GS_OK);
  their_tmp = gsd_store_tmp_path(other, "dev/b", theirs);
  touch(my_tmp);
  touch(their_tmp);
  assert_int_equal(gsd_store_recover_stopped(fx->store), GS_OK);
  assert_true(gst_exists(their_tmp) && gst_exists(my_tmp));
  gsd_store_close(other);
  /* Its server process lets go of the lock shortly after it hangs up. */
  for (tries = 0; tries < 100 && gst_exists(their_tmp); tries++) {
    assert_int_equal(gsd_store_recover_stopped(fx->store), GS_OK);
    if (gst_exists(their_tmp)) usleep(50000);
  }
  assert_false(gst_exists(their_tmp));
  assert_true(gst_exists(my_tmp));
  assert_int_equal(gsd_store_get_snapshot(fx->store, theirs, 0, &o, NULL), GS_OK);
  assert_string_equal(json_string_value(json_object_get(o, "status")), "failed");
  assert_non_null(strstr(json_string_value(json_object_get(o, "reason")), "stopped"));
  json_decref(o);
  assert_int_equal(gsd_store_snapshot_complete(fx->store, mine, &e), GS_OK);
  free(my_tmp);
  free(their_tmp);
}

/* A schedule's period is run by one collector: the first to claim it. */
static void test_pg_schedule_claim(void **state) {
  fixture *fx = *state;
  gsd_store *other;
  gsd_schedule_run *runs;
  size_t n;
  assert_int_equal(open_as(&other, fx->dir, "other"), GS_OK);
  assert_int_equal(gsd_store_schedule_claim(fx->store, 1, "dev/a", 1000, 1010), GS_OK);
  assert_int_equal(gsd_store_schedule_claim(other, 1, "dev/a", 1000, 1020), GS_EOF);
  assert_int_equal(gsd_store_schedule_claim(other, 1, "dev/b", 1000, 1020), GS_OK);
  assert_int_equal(gsd_store_schedule_claim(other, 1, "dev/a", 2000, 2005), GS_OK);
  assert_int_equal(gsd_store_schedule_claim(fx->store, 1, "dev/a", 2000, 2010), GS_EOF);
  assert_int_equal(gsd_store_schedule_runs(fx->store, &runs, &n), GS_OK);
  assert_int_equal(n, 2);
  assert_int_equal(strcmp(runs[0].device_id, "dev/a") == 0 ? runs[0].last_ms : runs[1].last_ms,
                   2005);
  free(runs);
  gsd_store_close(other);
}

/* The state of capture id as another collector reads it: state, and the
 * snapshot_id or reason (NULL when the entry has none). */
static void assert_capture(gsd_store *st, uint64_t id, const char *state, int64_t snapshot_id,
                           const char *reason) {
  json_t *o;
  assert_int_equal(gsd_store_capture_get(st, id, &o), GS_OK);
  assert_int_equal(json_integer_value(json_object_get(o, "request_id")), id);
  assert_string_equal(json_string_value(json_object_get(o, "device_id")), "dev/a");
  assert_string_equal(json_string_value(json_object_get(o, "state")), state);
  if (snapshot_id)
    assert_int_equal(json_integer_value(json_object_get(o, "snapshot_id")), snapshot_id);
  else
    assert_true(json_is_null(json_object_get(o, "snapshot_id")));
  if (reason)
    assert_string_equal(json_string_value(json_object_get(o, "reason")), reason);
  else
    assert_true(json_is_null(json_object_get(o, "reason")));
  json_decref(o);
}

/* A capture's state is read by any collector; the oldest ended ones are
 * forgotten; those in flight on a collector that stopped are failed. */
static void test_pg_captures(void **state) {
  fixture *fx = *state;
  gsd_store *other;
  json_t *o;
  int tries;
  assert_int_equal(open_as(&other, fx->dir, "other"), GS_OK);
  assert_int_equal(gsd_store_capture_state(fx->store, 10, "dev/a", "requested", 0, NULL), GS_OK);
  assert_capture(other, 10, "requested", 0, NULL);
  assert_int_equal(gsd_store_capture_state(fx->store, 10, "dev/a", "streaming", 5, NULL), GS_OK);
  assert_capture(other, 10, "streaming", 0, NULL);
  assert_int_equal(gsd_store_capture_state(fx->store, 10, "dev/a", "stored", 5, NULL), GS_OK);
  assert_capture(other, 10, "stored", 5, NULL);
  assert_int_equal(gsd_store_capture_state(fx->store, 11, "dev/a", "failed", 0, "cut"), GS_OK);
  assert_capture(other, 11, "failed", 0, "cut");
  assert_int_equal(gsd_store_capture_state(fx->store, 12, "dev/a", "requested", 0, NULL), GS_OK);
  assert_int_equal(gsd_store_capture_get(other, 99, &o), GS_EOF);
  /* Another collector's prune keeps this one's; this one's keeps the
   * newest ended and those in flight. */
  assert_int_equal(gsd_store_captures_prune(other, 1), GS_OK);
  assert_capture(other, 10, "stored", 5, NULL);
  assert_int_equal(gsd_store_captures_prune(fx->store, 1), GS_OK);
  assert_int_equal(gsd_store_capture_get(other, 10, &o), GS_EOF);
  assert_capture(other, 11, "failed", 0, "cut");
  assert_capture(other, 12, "requested", 0, NULL);
  assert_int_equal(gsd_store_capture_state(other, 20, "dev/a", "requested", 0, NULL), GS_OK);
  gsd_store_close(other);
  for (tries = 0; tries < 100; tries++) {
    assert_int_equal(gsd_store_recover_stopped(fx->store), GS_OK);
    assert_int_equal(gsd_store_capture_get(fx->store, 20, &o), GS_OK);
    if (strcmp(json_string_value(json_object_get(o, "state")), "failed") == 0) break;
    json_decref(o);
    usleep(50000);
  }
  assert_true(tries < 100);
  json_decref(o);
  assert_capture(fx->store, 20, "failed", 0, "the collector asked stopped");
  assert_capture(fx->store, 12, "requested", 0, NULL);
}

/* The schema's version is recorded; a newer one is refused. */
static void test_pg_schema_version(void **state) {
  fixture *fx = *state;
  gsd_store *st = NULL;
  char err[300];
  /* A division by zero unless every version up to 4 is there. */
  assert_int_equal(pg_exec("SELECT 1 / (max(version) = 4 AND count(*) = 4)::int"
                           " FROM schema_version", NULL, NULL), 0);
  assert_int_equal(pg_exec("INSERT INTO schema_version VALUES (99)", NULL, NULL), 0);
  assert_int_equal(gsd_store_open_catalog(&st, fx->dir, pg_url, "new", err, sizeof err), GS_EIO);
  assert_non_null(strstr(err, "version 99, newer"));
}

/* Device keys through the opening gcsnap keys uses. */
static void test_pg_keys(void **state) {
  gsd_store *k;
  uint8_t v[32], back[32];
  uint64_t n;
  char err[300];
  json_t *list;
  (void)state;
  memset(v, 0xa5, sizeof v);
  v[0] = 0;
  assert_int_equal(gsd_store_keys_open_pg(&k, pg_url, err, sizeof err), GS_OK);
  assert_int_equal(gsd_store_key_set(k, "dev/a", v, sizeof v, 0), GS_OK);
  assert_int_equal(gsd_store_key_set(k, "dev/a", v, sizeof v, 0), GS_EINVAL);
  v[1] = 7;
  assert_int_equal(gsd_store_key_set(k, "dev/a", v, sizeof v, 1), GS_OK);
  assert_int_equal(gsd_store_key_verifier(k, "dev/a", back, sizeof back), GS_OK);
  assert_memory_equal(v, back, sizeof v);
  assert_int_equal(gsd_store_key_verifier(k, "dev/b", back, sizeof back), GS_EOF);
  assert_int_equal(gsd_store_key_count(k, &n), GS_OK);
  assert_int_equal(n, 1);
  assert_int_equal(gsd_store_list_keys(k, &list), GS_OK);
  assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "device_id")),
                      "dev/a");
  json_decref(list);
  assert_int_equal(gsd_store_key_remove(k, "dev/a"), GS_OK);
  assert_int_equal(gsd_store_key_remove(k, "dev/a"), GS_EOF);
  gsd_store_close(k);
}

#define WITH_STORE(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int main(int argc, char **argv) {
  const struct CMUnitTest both[] = {
    WITH_STORE(test_complete_listed),
    WITH_STORE(test_failed_row),
    WITH_STORE(test_dedupe),
    WITH_STORE(test_newest_first_and_limit),
    WITH_STORE(test_devices),
    WITH_STORE(test_recovery),
    WITH_STORE(test_retain),
    WITH_STORE(test_removal_after_crash),
    WITH_STORE(test_schedules),
    cmocka_unit_test(test_escape),
  };
  const struct CMUnitTest sqlite_only[] = {
    cmocka_unit_test(test_migrate),
    cmocka_unit_test(test_library_binding),
  };
  const struct CMUnitTest pg_only[] = {
    WITH_STORE(test_pg_identity),
    WITH_STORE(test_pg_reconnect),
    WITH_STORE(test_pg_stopped),
    WITH_STORE(test_pg_schedule_claim),
    WITH_STORE(test_pg_captures),
    WITH_STORE(test_pg_schema_version),
    WITH_STORE(test_pg_keys),
  };
  int failed;
  if (argc > 1) pg_url = argv[1];
  failed = cmocka_run_group_tests_name(pg_url ? "store on PostgreSQL" : "store on SQLite",
                                       both, NULL, NULL);
  if (pg_url) return failed + cmocka_run_group_tests_name("several collectors", pg_only, NULL, NULL);
  return failed + cmocka_run_group_tests(sqlite_only, NULL, NULL);
}
