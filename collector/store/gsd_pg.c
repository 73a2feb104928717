/* gsd_pg.c - the store's catalog in PostgreSQL, for several collectors
 * sharing one catalog and one store folder: the connection, the versioned
 * schema, the collector's identity, recovery, and the helpers of
 * gsd_pg_snapshots.c and gsd_pg_schedules.c (gsd_pg_int.h).
 *
 * Tables and columns are those of the SQLite catalog, with BIGINT for its
 * integers, plus the collector that holds each device, session and
 * snapshot being received. A collector's identity is a session-level
 * advisory lock held by its connection: a second collector cannot take
 * it while the first runs, and anyone can take it once the first is gone,
 * which is how the in-flight snapshots of a dead collector are found and
 * failed by the others. One connection, used from the loop thread; every
 * commit is synchronous, so a "complete" row is durable once it returns. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_dl.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_pg_int.h"

/* Advisory lock keys (first of two int4): the schema while it migrates,
 * and collector identities (second key: hashtext(identity)). */
#define LOCK_SCHEMA "1734570753"
#define LOCK_IDENTITY "1734570754"

/* The schema, one entry per version: a catalog at version N gets entries
 * N+1... in one transaction. Never edit an entry; add one. */
static const char *const migrations[] = {
  /* 1: the SQLite catalog's tables, and who holds what */
  "CREATE TABLE devices("
  "  device_id TEXT PRIMARY KEY,"
  "  app_name TEXT, architecture TEXT, pointer_size INTEGER, agent_version TEXT,"
  "  first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL, collector TEXT);"
  "CREATE TABLE sessions("
  "  id BIGSERIAL PRIMARY KEY,"
  "  device_id TEXT NOT NULL REFERENCES devices(device_id),"
  "  address TEXT, protocol_version INTEGER, agent_version TEXT,"
  "  started BIGINT NOT NULL, ended BIGINT, end_reason TEXT, collector TEXT NOT NULL);"
  "CREATE INDEX sessions_open ON sessions(collector) WHERE ended IS NULL;"
  "CREATE TABLE snapshots("
  "  id BIGSERIAL PRIMARY KEY,"
  "  device_id TEXT NOT NULL REFERENCES devices(device_id),"
  "  session_id BIGINT REFERENCES sessions(id),"
  "  created BIGINT NOT NULL, finished BIGINT,"
  "  status TEXT NOT NULL CHECK(status IN ('receiving', 'complete', 'failed')),"
  "  reason TEXT,"
  "  request_id BIGINT, agent_snapshot_id BIGINT NOT NULL, trigger TEXT,"
  "  stable_ids INTEGER NOT NULL DEFAULT 0, clock_ms BIGINT,"
  "  objects BIGINT, bytes BIGINT, refs BIGINT, roots BIGINT, types BIGINT,"
  "  unreachable BIGINT, dangling_references BIGINT, sections BIGINT,"
  "  text_bytes BIGINT, file_bytes BIGINT, wire_bytes BIGINT, crc32 BIGINT,"
  "  errors BIGINT, warnings BIGINT, first_error TEXT,"
  "  summary TEXT, schedule_id BIGINT, source_format TEXT, note TEXT,"
  "  collector TEXT NOT NULL);"
  "CREATE UNIQUE INDEX snapshots_once"
  "  ON snapshots(device_id, agent_snapshot_id) WHERE status = 'complete';"
  "CREATE INDEX snapshots_by_device ON snapshots(device_id, id);"
  "CREATE INDEX snapshots_by_request ON snapshots(request_id);"
  "CREATE INDEX snapshots_receiving ON snapshots(collector) WHERE status = 'receiving';"
  "CREATE TABLE schedules("
  "  id BIGSERIAL PRIMARY KEY,"
  "  device TEXT NOT NULL,"
  "  every_ms BIGINT NOT NULL, jitter_ms BIGINT NOT NULL DEFAULT 0,"
  "  start_at BIGINT, end_at BIGINT, keep BIGINT, max_bytes BIGINT,"
  "  created_ms BIGINT NOT NULL);"
  "CREATE TABLE schedule_runs("
  "  schedule_id BIGINT NOT NULL, device_id TEXT NOT NULL, last_ms BIGINT NOT NULL,"
  "  PRIMARY KEY(schedule_id, device_id));"
  "CREATE TABLE removals(path TEXT PRIMARY KEY);"
  "CREATE TABLE device_keys("
  "  device_id TEXT PRIMARY KEY, verifier BYTEA NOT NULL, created BIGINT NOT NULL);",
  /* 2: captures asked through one collector of a device another holds */
  "CREATE TABLE capture_requests("
  "  id BIGSERIAL PRIMARY KEY, device_id TEXT NOT NULL, stable_ids INTEGER NOT NULL,"
  "  holder TEXT NOT NULL, asked_by TEXT NOT NULL, created BIGINT NOT NULL,"
  "  status TEXT NOT NULL CHECK(status IN ('queued', 'taken', 'answered')),"
  "  snapshot_id BIGINT, reason TEXT);"
  "CREATE INDEX capture_requests_holder ON capture_requests(holder) WHERE status = 'queued';"
  "CREATE INDEX capture_requests_asker ON capture_requests(asked_by) WHERE status = 'answered';",
  /* 3: files found not to match their row; the last request ID issued */
  ("ALTER TABLE snapshots ADD COLUMN damaged TEXT;"
   "CREATE TABLE counters(name TEXT PRIMARY KEY, value BIGINT NOT NULL);"),
  /* 4: the state of each capture, for whichever collector is asked about it */
  "CREATE TABLE captures("
  "  request_id BIGINT PRIMARY KEY, device_id TEXT NOT NULL, collector TEXT NOT NULL,"
  "  state TEXT NOT NULL CHECK(state IN ('requested', 'streaming', 'stored', 'failed')),"
  "  snapshot_id BIGINT, reason TEXT, updated BIGINT NOT NULL);"
  "CREATE INDEX captures_by_collector ON captures(collector, request_id);"
  "CREATE INDEX captures_in_flight ON captures(collector)"
  "  WHERE state IN ('requested', 'streaming');",
};
#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

/* ---- parameters and results ----------------------------------------- */

void gsd_pga_text(gsd_pg_args *a, const char *v) {
  assert(a->n < GSD_PG_MAX_ARGS);
  a->v[a->n++] = v;
}

void gsd_pga_i64(gsd_pg_args *a, int64_t v) {
  assert(a->n < GSD_PG_MAX_ARGS);
  snprintf(a->num[a->n], sizeof a->num[a->n], "%" PRId64, v);
  a->v[a->n] = a->num[a->n];
  a->n++;
}

void gsd_pga_u64(gsd_pg_args *a, uint64_t v) { gsd_pga_i64(a, (int64_t)v); }

void gsd_pga_opt(gsd_pg_args *a, int64_t v) {
  if (v) gsd_pga_i64(a, v);
  else gsd_pga_text(a, NULL);
}

static int lock_identity(gsd_store *s, const char *identity);

/* A connection the server or the network dropped is made again before the
 * next statement, and the identity taken again: one statement fails, not
 * every one after it. If another collector took the identity meanwhile
 * (it took this one for stopped and recovered it), that statement fails
 * saying so, and the collector goes on. */
static int reconnect(gsd_store *s) {
  if (gsd_libpq.status(s->pg->conn) != CONNECTION_BAD) return GS_OK;
  gsd_libpq.reset(s->pg->conn);
  if (gsd_libpq.status(s->pg->conn) != CONNECTION_OK || !s->pg->identity[0]) return GS_OK;
  if (lock_identity(s, s->pg->identity) == 1) return GS_OK;
  return gsd_st_fail(s, "catalog: reconnected, but another collector holds the identity '%s'",
                     s->pg->identity);
}

PGresult *gsd_pg_query(gsd_store *s, const char *what, const char *sql, const gsd_pg_args *a) {
  PGresult *r;
  ExecStatusType st;
  if (reconnect(s) != GS_OK) return NULL;
  r = a ? gsd_libpq.execParams(s->pg->conn, sql, a->n, NULL, a->v, NULL, NULL, 0)
        : gsd_libpq.exec(s->pg->conn, sql);
  st = gsd_libpq.resultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
  gsd_st_fail(s, "catalog: %s: %s", what,
              r ? gsd_libpq.resultErrorMessage(r) : gsd_libpq.errorMessage(s->pg->conn));
  /* libpq's messages end with a newline; log lines do not. */
  s->error[strcspn(s->error, "\n")] = '\0';
  gsd_libpq.clear(r);
  return NULL;
}

int gsd_pg_run(gsd_store *s, const char *what, const char *sql, const gsd_pg_args *a,
               uint64_t *changed) {
  PGresult *r = gsd_pg_query(s, what, sql, a);
  if (!r) return GS_EIO;
  if (changed) *changed = strtoull(gsd_libpq.cmdTuples(r), NULL, 10);
  gsd_libpq.clear(r);
  return GS_OK;
}

int64_t gsd_pg_i64(const PGresult *r, int row, int col) {
  if (gsd_libpq.getisnull(r, row, col)) return 0;
  return (int64_t)strtoll(gsd_libpq.getvalue(r, row, col), NULL, 10);
}

void *gsd_pg_array(PGresult *r, size_t size, int *rc) {
  void *v;
  *rc = r ? GS_OK : GS_EIO;
  if (!r) return NULL;
  /* One more, so that an empty listing is not calloc(0). */
  if (!(v = calloc((size_t)gsd_libpq.ntuples(r) + 1, size))) {
    gsd_libpq.clear(r);
    *rc = GS_ENOMEM;
  }
  return v;
}

int gsd_pg_finish(gsd_store *s, int rc) {
  if (rc == GS_OK) return gsd_pg_run(s, "commit", "COMMIT", NULL, NULL);
  gsd_pg_run(s, "rollback", "ROLLBACK", NULL, NULL);
  return rc;
}

/* OIDs of the integer types (pg_type.h is a server header). */
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23

/* One value as the SQLite catalog's gsd_st_column_json gives it. */
static json_t *value_json(const PGresult *r, int row, int col) {
  const char *name = gsd_libpq.fname(r, col), *v = gsd_libpq.getvalue(r, row, col);
  Oid type = gsd_libpq.ftype(r, col);
  if (gsd_libpq.getisnull(r, row, col)) return json_null();
  if (type != OID_INT8 && type != OID_INT4 && type != OID_INT2)
    return gs_json_string(v, (size_t)gsd_libpq.getlength(r, row, col));
  if (strcmp(name, "stable_ids") == 0) return json_boolean(atoi(v));
  if (strcmp(name, "crc32") == 0) return json_integer((json_int_t)(uint32_t)strtoll(v, NULL, 10));
  return gs_json_u64((uint64_t)strtoll(v, NULL, 10));
}

json_t *gsd_pg_row_json(const PGresult *r, int row, int with_summary) {
  json_t *o = json_object(), *v;
  int i;
  for (i = 0; o && i < gsd_libpq.nfields(r); i++) {
    const char *name = gsd_libpq.fname(r, i);
    if (strcmp(name, "summary") != 0) v = value_json(r, row, i);
    else if (!with_summary) continue;
    else if (gsd_libpq.getisnull(r, row, i)) v = json_null();
    else v = json_loads(gsd_libpq.getvalue(r, row, i), 0, NULL);
    if (gs_json_set(o, name, v)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

int gsd_pg_rows_json(gsd_store *s, PGresult *r, int with_summary, json_t **out) {
  json_t *arr = r ? json_array() : NULL;
  int i;
  *out = NULL;
  (void)s;
  if (!r) return GS_EIO;
  for (i = 0; arr && i < gsd_libpq.ntuples(r); i++)
    if (json_array_append_new(arr, gsd_pg_row_json(r, i, with_summary))) {
      json_decref(arr);
      arr = NULL;
    }
  gsd_libpq.clear(r);
  if (!arr) return GS_ENOMEM;
  *out = arr;
  return GS_OK;
}

/* ---- schema ------------------------------------------------------------ */

/* Brings the schema to SCHEMA_VERSION, under a lock so that collectors
 * started together migrate it once. A newer schema than this collector
 * knows is refused: its rules may not be ours. */
static int migrate(gsd_store *s) {
  PGresult *r;
  int rc, version = 0, i;
  rc = gsd_pg_run(s, "migrate",
                  "BEGIN; SELECT pg_advisory_xact_lock(" LOCK_SCHEMA ", 0);"
                  "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL);",
                  NULL, NULL);
  if (rc != GS_OK) return rc;
  if (!(r = gsd_pg_query(s, "migrate", "SELECT coalesce(max(version), 0) FROM schema_version",
                         NULL)))
    return gsd_pg_finish(s, GS_EIO);
  version = (int)gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  if (version > SCHEMA_VERSION)
    return gsd_pg_finish(s, gsd_st_fail(s, "catalog: its schema is version %d, newer than this"
                                        " collector's %d", version, SCHEMA_VERSION));
  for (i = version; rc == GS_OK && i < SCHEMA_VERSION; i++) {
    gsd_pg_args a = {0};
    gsd_pga_i64(&a, i + 1);
    rc = gsd_pg_run(s, "migrate", migrations[i], NULL, NULL);
    if (rc == GS_OK)
      rc = gsd_pg_run(s, "migrate", "INSERT INTO schema_version(version) VALUES ($1)", &a, NULL);
  }
  return gsd_pg_finish(s, rc);
}

/* ---- identity and recovery ---------------------------------------------- */

/* Takes identity's lock: 1 taken, 0 held by a running collector, -1 on
 * error. */
static int lock_identity(gsd_store *s, const char *identity) {
  gsd_pg_args a = {0};
  PGresult *r;
  int got;
  gsd_pga_text(&a, identity);
  if (!(r = gsd_pg_query(s, "take the identity",
                         "SELECT pg_try_advisory_lock(" LOCK_IDENTITY ", hashtext($1))", &a)))
    return -1;
  got = strcmp(gsd_libpq.getvalue(r, 0, 0), "t") == 0;
  gsd_libpq.clear(r);
  return got;
}

static void unlock_identity(gsd_store *s, const char *identity) {
  gsd_pg_args a = {0};
  gsd_pga_text(&a, identity);
  gsd_pg_run(s, "release an identity", "SELECT pg_advisory_unlock(" LOCK_IDENTITY ", hashtext($1))",
             &a, NULL);
}

/* The in-flight snapshots of a collector that stopped (identity, whose
 * lock the caller holds): their files go, under both names (the file is
 * renamed before its row is committed), their rows fail, its sessions end,
 * the captures asked through it fail and its devices are no longer held.
 * Nobody else's file is touched. */
static int recover(gsd_store *s, const char *identity) {
  gsd_pg_args a = {0};
  PGresult *r;
  int i;
  gsd_pga_text(&a, identity);
  if (!(r = gsd_pg_query(s, "recover", "SELECT id, device_id FROM snapshots"
                         " WHERE status = 'receiving' AND collector = $1", &a)))
    return GS_EIO;
  for (i = 0; i < gsd_libpq.ntuples(r); i++)
    gsd_st_unlink_inflight(s, gsd_libpq.getvalue(r, i, 1), gsd_pg_i64(r, i, 0));
  gsd_libpq.clear(r);
  return gsd_pg_run(s, "recover",
      "WITH f AS (UPDATE snapshots SET status = 'failed',"
      "   finished = extract(epoch FROM now())::bigint,"
      "   reason = 'the collector stopped while receiving it'"
      "   WHERE status = 'receiving' AND collector = $1),"
      " e AS (UPDATE sessions SET ended = extract(epoch FROM now())::bigint,"
      "   end_reason = 'the collector stopped' WHERE ended IS NULL AND collector = $1),"
      " q AS (UPDATE capture_requests SET status = 'answered',"
      "   reason = 'the collector holding the device stopped'"
      "   WHERE holder = $1 AND status IN ('queued', 'taken')),"
      " a AS (DELETE FROM capture_requests WHERE asked_by = $1),"
      " c AS (UPDATE captures SET state = 'failed', updated = extract(epoch FROM now())::bigint,"
      "   reason = 'the collector asked stopped' WHERE collector = $1"
      "   AND state IN ('requested', 'streaming'))"
      " UPDATE devices SET collector = NULL WHERE collector = $1", &a, NULL);
}

/* Files whose rows retention removed, still there after a crash. */
static int drain_removals(gsd_store *s) {
  PGresult *r = gsd_pg_query(s, "remove files", "DELETE FROM removals RETURNING path", NULL);
  int i;
  if (!r) return GS_EIO;
  for (i = 0; i < gsd_libpq.ntuples(r); i++) gsd_st_unlink_snapshot(gsd_libpq.getvalue(r, i, 0));
  gsd_libpq.clear(r);
  return GS_OK;
}

int gsd_pg_recover_stopped(gsd_store *s) {
  gsd_pg_args a = {0};
  PGresult *r;
  int i, got, rc = GS_OK;
  gsd_pga_text(&a, s->pg->identity);
  if (!(r = gsd_pg_query(s, "find stopped collectors",
      "SELECT collector FROM snapshots WHERE status = 'receiving' AND collector <> $1"
      " UNION SELECT collector FROM sessions WHERE ended IS NULL AND collector <> $1"
      " UNION SELECT collector FROM captures WHERE state IN ('requested', 'streaming')"
      "   AND collector <> $1", &a)))
    return GS_EIO;
  for (i = 0; rc == GS_OK && i < gsd_libpq.ntuples(r); i++) {
    const char *identity = gsd_libpq.getvalue(r, i, 0);
    if ((got = lock_identity(s, identity)) < 0) rc = GS_EIO;
    if (got <= 0) continue;
    rc = recover(s, identity);
    unlock_identity(s, identity);
  }
  gsd_libpq.clear(r);
  return rc;
}

/* ---- open and close ---------------------------------------------------- */

static int take_identity(gsd_store *s, const char *identity) {
  int got;
  if (snprintf(s->pg->identity, sizeof s->pg->identity, "%s", identity) >=
      (int)sizeof s->pg->identity)
    return gsd_st_fail(s, "collector identity '%s' is too long", identity);
  if ((got = lock_identity(s, identity)) < 0) return GS_EIO;
  if (!got) {
    gsd_st_fail(s, "a collector with identity '%s' is already running on this catalog"
                " (give each one its own --identity)", identity);
    return GS_EINVAL;
  }
  return GS_OK;
}

gsd_libpq_api gsd_libpq;

#define LIBPQ_SONAME "libpq.so.5"    /* Debian package libpq5 */
#define SYM(f) {"PQ" #f, offsetof(gsd_libpq_api, f)}
static const gs_dl_sym libpq_syms[] = {
  SYM(connectdb), SYM(status), SYM(errorMessage), SYM(reset), SYM(finish), SYM(exec),
  SYM(execParams), SYM(resultStatus), SYM(resultErrorMessage), SYM(cmdTuples), SYM(ntuples),
  SYM(nfields), SYM(fname), SYM(ftype), SYM(getvalue), SYM(getlength), SYM(getisnull),
  SYM(unescapeBytea), SYM(freemem), SYM(clear),
};

static int bind_libpq(gsd_store *s) {
  char err[256];
  if (gsd_libpq.connectdb) return GS_OK;
  if (gs_dl_bind(LIBPQ_SONAME, libpq_syms, sizeof libpq_syms / sizeof libpq_syms[0], &gsd_libpq,
                 err, sizeof err) == GS_OK)
    return GS_OK;
  return gsd_st_fail(s, "catalog: PostgreSQL's client library: %s (install libpq5)", err);
}

int gsd_pg_open(gsd_store *s, const char *url, const char *identity) {
  int rc;
  if (!(s->pg = calloc(1, sizeof *s->pg))) return gsd_st_fail(s, "out of memory");
  if ((rc = bind_libpq(s)) != GS_OK) return rc;
  s->pg->conn = gsd_libpq.connectdb(url);
  if (gsd_libpq.status(s->pg->conn) != CONNECTION_OK) {
    gsd_st_fail(s, "catalog: cannot connect: %s", gsd_libpq.errorMessage(s->pg->conn));
    s->error[strcspn(s->error, "\n")] = '\0';
    return GS_EIO;
  }
  rc = gsd_pg_run(s, "settings", "SET synchronous_commit = on; SET client_min_messages = warning",
                  NULL, NULL);
  if (rc == GS_OK) rc = migrate(s);
  if (rc != GS_OK || !identity) return rc;
  if ((rc = take_identity(s, identity)) == GS_OK && (rc = recover(s, identity)) == GS_OK)
    rc = drain_removals(s);
  return rc;
}

void gsd_pg_close(gsd_store *s) {
  if (!s->pg) return;
  if (s->pg->conn) gsd_libpq.finish(s->pg->conn);
  free(s->pg);
  s->pg = NULL;
}
