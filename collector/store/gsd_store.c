/* gsd_store.c - the collector's store: a folder with a SQLite catalog and
 * the snapshot files.
 *
 * One connection, used from the loop thread; WAL with full sync, so that a
 * row that says "complete" is on disk once its transaction returns (the
 * file it names was synced and renamed before). Unsigned 64-bit values are
 * kept in SQLite's signed integers bit for bit. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_store.h"

struct gsd_store {
  sqlite3 *db;
  char *dir;
  char error[512];
};

/* Device keys: the verifier SHA-256(K) of each device's key K, never K
 * (gsd_auth.h). */
#define KEYS_SCHEMA \
  "CREATE TABLE IF NOT EXISTS device_keys(" \
  "  device_id TEXT PRIMARY KEY, verifier BLOB NOT NULL, created INTEGER NOT NULL);"

/* How long a statement waits for another connection's write (gcsnap keys
 * while gcsnapd runs) before it fails with "database is locked". */
#define BUSY_TIMEOUT_MS 5000

static const char schema[] =
  "PRAGMA journal_mode=WAL;"
  "PRAGMA synchronous=FULL;"
  "CREATE TABLE IF NOT EXISTS devices("
  "  device_id TEXT PRIMARY KEY,"
  "  app_name TEXT, architecture TEXT, pointer_size INTEGER, agent_version TEXT,"
  "  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL);"
  "CREATE TABLE IF NOT EXISTS sessions("
  "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  device_id TEXT NOT NULL REFERENCES devices(device_id),"
  "  address TEXT, protocol_version INTEGER, agent_version TEXT,"
  "  started INTEGER NOT NULL, ended INTEGER, end_reason TEXT);"
  "CREATE TABLE IF NOT EXISTS snapshots("
  "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  device_id TEXT NOT NULL REFERENCES devices(device_id),"
  "  session_id INTEGER REFERENCES sessions(id),"
  "  created INTEGER NOT NULL, finished INTEGER,"
  "  status TEXT NOT NULL CHECK(status IN ('receiving', 'complete', 'failed')),"
  "  reason TEXT,"
  "  request_id INTEGER, agent_snapshot_id INTEGER NOT NULL, trigger TEXT,"
  "  stable_ids INTEGER NOT NULL DEFAULT 0, clock_ms INTEGER,"
  "  objects INTEGER, bytes INTEGER, refs INTEGER, roots INTEGER, types INTEGER,"
  "  unreachable INTEGER, dangling_references INTEGER, sections INTEGER,"
  "  text_bytes INTEGER, file_bytes INTEGER, wire_bytes INTEGER, crc32 INTEGER,"
  "  errors INTEGER, warnings INTEGER, first_error TEXT,"
  "  summary TEXT);"
  "CREATE UNIQUE INDEX IF NOT EXISTS snapshots_once"
  "  ON snapshots(device_id, agent_snapshot_id) WHERE status = 'complete';"
  "CREATE INDEX IF NOT EXISTS snapshots_by_device ON snapshots(device_id, id);"
  "CREATE INDEX IF NOT EXISTS snapshots_by_request ON snapshots(request_id);"
  "CREATE TABLE IF NOT EXISTS schedules("
  "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  device TEXT NOT NULL,"
  "  every_ms INTEGER NOT NULL, jitter_ms INTEGER NOT NULL DEFAULT 0,"
  "  start_at INTEGER, end_at INTEGER, keep INTEGER, max_bytes INTEGER,"
  "  created_ms INTEGER NOT NULL);"
  "CREATE TABLE IF NOT EXISTS schedule_runs("
  "  schedule_id INTEGER NOT NULL, device_id TEXT NOT NULL, last_ms INTEGER NOT NULL,"
  "  PRIMARY KEY(schedule_id, device_id));"
  "CREATE TABLE IF NOT EXISTS removals(path TEXT PRIMARY KEY);"
  KEYS_SCHEMA;

/* Columns added to tables of an older catalog. */
static const struct { const char *table, *column, *type; } added_columns[] = {
  {"snapshots", "schedule_id", "INTEGER"},
};

static int fail(gsd_store *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->error, sizeof s->error, fmt, ap);
  va_end(ap);
  return GS_EIO;
}

static int db_fail(gsd_store *s, const char *what) {
  return fail(s, "catalog: %s: %s", what, sqlite3_errmsg(s->db));
}

const char *gsd_store_error(const gsd_store *s) { return s->error; }

static int64_t now_s(void) { return (int64_t)time(NULL); }

/* ---- paths ----------------------------------------------------------- */

char *gsd_store_escape_device(const char *id) {
  static const char hex[] = "0123456789ABCDEF";
  char *out = malloc(strlen(id) * 3 + 1), *q = out;
  const unsigned char *p;
  if (!out) return NULL;
  for (p = (const unsigned char *)id; *p; p++) {
    int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
                (*p == '.' && p != (const unsigned char *)id);
    if (plain) {
      *q++ = (char)*p;
    } else {
      *q++ = '%';
      *q++ = hex[*p >> 4];
      *q++ = hex[*p & 15];
    }
  }
  *q = '\0';
  return out;
}

static char *path_of(const gsd_store *s, const char *device_id, int64_t id, const char *suffix) {
  char *dev = gsd_store_escape_device(device_id), *path = NULL;
  size_t n;
  if (dev && (path = malloc((n = strlen(s->dir) + strlen(dev) + 64))))
    snprintf(path, n, "%s/snapshots/%s/%lld.gclog.zst%s", s->dir, dev, (long long)id, suffix);
  free(dev);
  return path;
}

char *gsd_store_snapshot_path(const gsd_store *s, const char *device_id, int64_t id) {
  return path_of(s, device_id, id, "");
}

char *gsd_store_tmp_path(const gsd_store *s, const char *device_id, int64_t id) {
  return path_of(s, device_id, id, ".tmp");
}

/* ---- free space -------------------------------------------------------- */

int gsd_store_free_bytes(gsd_store *s, uint64_t *free_bytes) {
  struct statvfs v;
  char *path = malloc(strlen(s->dir) + sizeof "/snapshots");
  int rc;
  if (!path) return fail(s, "out of memory");
  sprintf(path, "%s/snapshots", s->dir);
  rc = statvfs(path, &v);
  if (rc != 0) {
    fail(s, "cannot read the free space of '%s': %s", path, strerror(errno));
    free(path);
    return GS_EIO;
  }
  free(path);
  /* What an unprivileged writer may use: the reserve for root is no room
   * for snapshots. */
  *free_bytes = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
  return GS_OK;
}

int gsd_store_check_space(gsd_store *s, uint64_t min_free) {
  uint64_t avail = 0;
  int rc;
  if (min_free == 0) return GS_OK;
  if ((rc = gsd_store_free_bytes(s, &avail)) != GS_OK) return rc;
  if (avail >= min_free) return GS_OK;
  fail(s, "disk full: the store's filesystem has %llu bytes free, below the minimum of %llu"
       " (--min-free-bytes)", (unsigned long long)avail, (unsigned long long)min_free);
  return GS_ELIMIT;
}

static int make_dir(gsd_store *s, const char *path) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) return GS_OK;
  return fail(s, "cannot create folder '%s': %s", path, strerror(errno));
}

static int make_device_dir(gsd_store *s, const char *device_id) {
  char *dev = gsd_store_escape_device(device_id), *path;
  size_t n;
  int rc;
  if (!dev) return GS_ENOMEM;
  if (!(path = malloc((n = strlen(s->dir) + strlen(dev) + 16)))) { free(dev); return GS_ENOMEM; }
  snprintf(path, n, "%s/snapshots/%s", s->dir, dev);
  rc = make_dir(s, path);
  free(path);
  free(dev);
  return rc;
}

/* ---- statements ------------------------------------------------------ */

static sqlite3_stmt *prepare(gsd_store *s, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
    db_fail(s, "prepare");
    return NULL;
  }
  return st;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v) {
  if (v) sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) {
  sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

/* Steps a statement that returns no rows, and finalizes it. */
static int run_stmt(gsd_store *s, sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  int err = (rc == SQLITE_DONE || rc == SQLITE_ROW) ? GS_OK : db_fail(s, what);
  sqlite3_finalize(st);
  return err;
}

static int exec(gsd_store *s, const char *sql, const char *what) {
  char *msg = NULL;
  if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK) return GS_OK;
  fail(s, "catalog: %s: %s", what, msg ? msg : "unknown error");
  sqlite3_free(msg);
  return GS_EIO;
}

/* run_stmt() for a row that need not reach the disk before the next synced
 * commit: WAL without a sync, which a process crash cannot undo (only a
 * power loss can). Every sync on the loop thread costs milliseconds, and
 * syncs are what limits a fleet captured every few seconds. */
static int run_unsynced(gsd_store *s, sqlite3_stmt *st, const char *what) {
  int rc;
  exec(s, "PRAGMA synchronous=NORMAL", "sync setting");
  rc = run_stmt(s, st, what);
  exec(s, "PRAGMA synchronous=FULL", "sync setting");
  return rc;
}

/* ---- open ------------------------------------------------------------ */

/* Temporary snapshot files of a collector that stopped: none is being
 * written while the store opens. Those of rows left "receiving" are also
 * removed by recover(); this finds those whose row a power loss took (the
 * row is written unsynced, gsd_store_snapshot_begin). */
static void sweep_tmp(gsd_store *s) {
  static const char suffix[] = ".gclog.zst.tmp";
  size_t n = strlen(s->dir) + 16, len;
  char *top = malloc(n), *path;
  DIR *d, *dev;
  struct dirent *e, *f;
  if (!top) return;
  snprintf(top, n, "%s/snapshots", s->dir);
  if (!(d = opendir(top))) { free(top); return; }
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (!(path = malloc(n + strlen(e->d_name) + 2))) break;
    snprintf(path, n + strlen(e->d_name) + 2, "%s/%s", top, e->d_name);
    if ((dev = opendir(path))) {
      while ((f = readdir(dev))) {
        len = strlen(f->d_name);
        if (len > sizeof suffix - 1 && strcmp(f->d_name + len - (sizeof suffix - 1), suffix) == 0)
          unlinkat(dirfd(dev), f->d_name, 0);
      }
      closedir(dev);
    }
    free(path);
  }
  closedir(d);
  free(top);
}

/* Rows left "receiving" by a collector that stopped without ending them.
 * Their file may already have its final name: the file is renamed before
 * its summary is made and its row committed, so a crash in between leaves
 * a whole file that no complete row names. Both names go. */
static int recover(gsd_store *s) {
  sqlite3_stmt *st = prepare(s, "SELECT id, device_id FROM snapshots WHERE status = 'receiving'");
  int rc;
  if (!st) return GS_EIO;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *dev = (const char *)sqlite3_column_text(st, 1);
    int64_t id = sqlite3_column_int64(st, 0);
    char *tmp = gsd_store_tmp_path(s, dev, id), *final = gsd_store_snapshot_path(s, dev, id);
    if (tmp) unlink(tmp);
    if (final) unlink(final);
    free(tmp);
    free(final);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(s, "recover");
  sweep_tmp(s);
  return exec(s,
              "UPDATE snapshots SET status = 'failed', finished = strftime('%s','now'),"
              " reason = 'the collector stopped while receiving it' WHERE status = 'receiving';"
              "UPDATE sessions SET ended = strftime('%s','now'),"
              " end_reason = 'the collector stopped' WHERE ended IS NULL;",
              "recover");
}

static int has_column(gsd_store *s, const char *table, const char *column, int *has) {
  char sql[128];
  sqlite3_stmt *st;
  int rc;
  snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
  if (!(st = prepare(s, sql))) return GS_EIO;
  *has = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    if (strcmp((const char *)sqlite3_column_text(st, 1), column) == 0) *has = 1;
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? GS_OK : db_fail(s, "read the columns");
}

/* A catalog made by an older collector gets the columns it lacks; the
 * tables it lacks were created with the schema. */
static int migrate(gsd_store *s) {
  size_t i;
  for (i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
    char sql[192];
    int has, rc;
    if ((rc = has_column(s, added_columns[i].table, added_columns[i].column, &has)) != GS_OK)
      return rc;
    if (has) continue;
    snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", added_columns[i].table,
             added_columns[i].column, added_columns[i].type);
    if ((rc = exec(s, sql, "add a column")) != GS_OK) return rc;
  }
  return GS_OK;
}

/* Files whose rows retention removed, still there after a crash. */
static int drain_removals(gsd_store *s) {
  sqlite3_stmt *st = prepare(s, "SELECT path FROM removals");
  int rc;
  if (!st) return GS_EIO;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) unlink((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return db_fail(s, "remove files");
  return exec(s, "DELETE FROM removals", "remove files");
}

int gsd_store_open(gsd_store **out, const char *dir, char *err, size_t cap) {
  gsd_store *s = calloc(1, sizeof *s);
  size_t n = strlen(dir) + 32;
  char *path = malloc(n);
  int rc = GS_OK;
  *out = NULL;
  if (!s || !path || !(s->dir = malloc(strlen(dir) + 1))) {
    snprintf(err, cap, "out of memory");
    free(path);
    gsd_store_close(s);
    return GS_ENOMEM;
  }
  strcpy(s->dir, dir);
  if ((rc = make_dir(s, dir)) == GS_OK) {
    snprintf(path, n, "%s/snapshots", dir);
    rc = make_dir(s, path);
  }
  snprintf(path, n, "%s/catalog.db", dir);
  if (rc == GS_OK && sqlite3_open(path, &s->db) != SQLITE_OK)
    rc = db_fail(s, "open");
  if (rc == GS_OK) sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
  if (rc == GS_OK && (rc = exec(s, schema, "create tables")) == GS_OK &&
      (rc = migrate(s)) == GS_OK && (rc = recover(s)) == GS_OK)
    rc = drain_removals(s);
  free(path);
  if (rc != GS_OK) {
    snprintf(err, cap, "store '%s': %s", dir, s->error);
    gsd_store_close(s);
    return rc;
  }
  *out = s;
  return GS_OK;
}

void gsd_store_close(gsd_store *s) {
  if (!s) return;
  sqlite3_close(s->db);
  free(s->dir);
  free(s);
}

/* ---- devices and sessions -------------------------------------------- */

int gsd_store_session_begin(gsd_store *s, const gsd_device_info *d, const char *address,
                            int64_t *session_id) {
  sqlite3_stmt *st;
  int rc;
  if (!(st = prepare(s,
      "INSERT INTO devices(device_id, app_name, architecture, pointer_size, agent_version,"
      " first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
      " ON CONFLICT(device_id) DO UPDATE SET app_name = ?2, architecture = ?3,"
      " pointer_size = ?4, agent_version = ?5, last_seen = ?6")))
    return GS_EIO;
  bind_text(st, 1, d->device_id);
  bind_text(st, 2, d->app_name);
  bind_text(st, 3, d->architecture);
  sqlite3_bind_int(st, 4, (int)d->pointer_size);
  bind_text(st, 5, d->agent_version);
  sqlite3_bind_int64(st, 6, now_s());
  if ((rc = run_stmt(s, st, "record device")) != GS_OK) return rc;
  if (!(st = prepare(s,
      "INSERT INTO sessions(device_id, address, protocol_version, agent_version, started)"
      " VALUES (?, ?, ?, ?, ?)")))
    return GS_EIO;
  bind_text(st, 1, d->device_id);
  bind_text(st, 2, address);
  sqlite3_bind_int(st, 3, (int)d->protocol_version);
  bind_text(st, 4, d->agent_version);
  sqlite3_bind_int64(st, 5, now_s());
  if ((rc = run_stmt(s, st, "record session")) != GS_OK) return rc;
  *session_id = sqlite3_last_insert_rowid(s->db);
  return GS_OK;
}

int gsd_store_session_end(gsd_store *s, int64_t session_id, const char *device_id,
                          const char *reason) {
  sqlite3_stmt *st = prepare(s,
      "UPDATE sessions SET ended = ?2, end_reason = ?3 WHERE id = ?1;");
  int rc;
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, session_id);
  sqlite3_bind_int64(st, 2, now_s());
  bind_text(st, 3, reason);
  if ((rc = run_stmt(s, st, "end session")) != GS_OK) return rc;
  if (!(st = prepare(s, "UPDATE devices SET last_seen = ?2 WHERE device_id = ?1"))) return GS_EIO;
  bind_text(st, 1, device_id);
  sqlite3_bind_int64(st, 2, now_s());
  return run_stmt(s, st, "update device");
}

/* ---- snapshots ------------------------------------------------------- */

int gsd_store_find_complete(gsd_store *s, const char *device_id, uint64_t agent_snapshot_id,
                            int64_t *id) {
  sqlite3_stmt *st = prepare(s,
      "SELECT id FROM snapshots WHERE device_id = ? AND agent_snapshot_id = ?"
      " AND status = 'complete'");
  int rc;
  if (!st) return GS_EIO;
  bind_text(st, 1, device_id);
  bind_u64(st, 2, agent_snapshot_id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW) return GS_OK;
  return rc == SQLITE_DONE ? GS_EOF : db_fail(s, "find snapshot");
}

int gsd_store_snapshot_begin(gsd_store *s, const gsd_snapshot_begin *b, int64_t *id) {
  sqlite3_stmt *st;
  int rc;
  if ((rc = make_device_dir(s, b->device_id)) != GS_OK) return rc;
  if (!(st = prepare(s,
      "INSERT INTO snapshots(device_id, session_id, created, status, request_id,"
      " agent_snapshot_id, trigger, stable_ids, clock_ms, schedule_id)"
      " VALUES (?, ?, ?, 'receiving', ?, ?, ?, ?, ?, ?)")))
    return GS_EIO;
  bind_text(st, 1, b->device_id);
  sqlite3_bind_int64(st, 2, b->session_id);
  sqlite3_bind_int64(st, 3, now_s());
  if (b->request_id) bind_u64(st, 4, b->request_id);
  else sqlite3_bind_null(st, 4);
  bind_u64(st, 5, b->agent_snapshot_id);
  bind_text(st, 6, b->trigger);
  sqlite3_bind_int(st, 7, b->stable_ids != 0);
  bind_u64(st, 8, b->clock_ms);
  if (b->schedule_id) sqlite3_bind_int64(st, 9, b->schedule_id);
  else sqlite3_bind_null(st, 9);
  /* Not synced: the row matters only until the snapshot ends, and the sync
   * of that end (or of any later commit) takes it to disk too. A power loss
   * may lose the row; the open then finds its temporary file with no row
   * (sweep_tmp). */
  if ((rc = run_unsynced(s, st, "record snapshot")) != GS_OK) return rc;
  *id = sqlite3_last_insert_rowid(s->db);
  return GS_OK;
}

/* Sets the end figures of row id; summary_fields says whether the figures
 * only a summary gives are known. */
static int update_end(gsd_store *s, int64_t id, const char *status, const char *reason,
                      const gsd_snapshot_end *e, int summary_fields) {
  sqlite3_stmt *st = prepare(s,
      "UPDATE snapshots SET status = ?2, reason = ?3, finished = ?4, objects = ?5,"
      " bytes = ?6, refs = ?7, roots = ?8, types = ?9, unreachable = ?10,"
      " dangling_references = ?11, sections = ?12, text_bytes = ?13, file_bytes = ?14,"
      " wire_bytes = ?15, crc32 = ?16, errors = ?17, warnings = ?18, first_error = ?19,"
      " summary = ?20 WHERE id = ?1 AND status = 'receiving'");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  bind_text(st, 2, status);
  bind_text(st, 3, reason);
  sqlite3_bind_int64(st, 4, now_s());
  bind_u64(st, 5, e->objects);
  bind_u64(st, 6, e->bytes);
  bind_u64(st, 7, e->references);
  bind_u64(st, 8, e->roots);
  bind_u64(st, 9, e->types);
  if (summary_fields) {
    bind_u64(st, 10, e->unreachable);
    bind_u64(st, 11, e->dangling_references);
  }
  bind_u64(st, 12, e->sections);
  bind_u64(st, 13, e->text_bytes);
  bind_u64(st, 14, e->file_bytes);
  bind_u64(st, 15, e->wire_bytes);
  sqlite3_bind_int64(st, 16, (sqlite3_int64)e->crc32);
  bind_u64(st, 17, e->errors);
  bind_u64(st, 18, e->warnings);
  bind_text(st, 19, e->first_error);
  bind_text(st, 20, e->summary);
  return run_stmt(s, st, "end snapshot");
}

static int touch_device_of(gsd_store *s, int64_t id) {
  sqlite3_stmt *st = prepare(s,
      "UPDATE devices SET last_seen = ?2 WHERE device_id ="
      " (SELECT device_id FROM snapshots WHERE id = ?1)");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_int64(st, 2, now_s());
  return run_stmt(s, st, "update device");
}

/* The row, the device's last_seen: one transaction, so that a listed
 * snapshot always has its figures and summary. */
static int end_snapshot(gsd_store *s, int64_t id, const char *status, const char *reason,
                        const gsd_snapshot_end *e, int summary_fields) {
  int rc = exec(s, "BEGIN IMMEDIATE", "begin");
  if (rc != GS_OK) return rc;
  if ((rc = update_end(s, id, status, reason, e, summary_fields)) == GS_OK &&
      sqlite3_changes(s->db) != 1)
    rc = fail(s, "catalog: snapshot %lld is not being received", (long long)id);
  if (rc == GS_OK) rc = touch_device_of(s, id);
  if (rc == GS_OK) return exec(s, "COMMIT", "commit");
  exec(s, "ROLLBACK", "rollback");
  return rc;
}

int gsd_store_snapshot_complete(gsd_store *s, int64_t id, const gsd_snapshot_end *e) {
  return end_snapshot(s, id, "complete", NULL, e, 1);
}

int gsd_store_snapshot_fail(gsd_store *s, int64_t id, const char *reason,
                            const gsd_snapshot_end *e) {
  gsd_snapshot_end none;
  if (!e) {
    memset(&none, 0, sizeof none);
    e = &none;
  }
  return end_snapshot(s, id, "failed", reason, e, 0);
}

uint64_t gsd_store_max_request_id(gsd_store *s) {
  sqlite3_stmt *st = prepare(s, "SELECT max(request_id) FROM snapshots");
  uint64_t v = 0;
  if (st && sqlite3_step(st) == SQLITE_ROW) v = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* ---- schedules ------------------------------------------------------- */

static void bind_optional(sqlite3_stmt *st, int i, int64_t v) {
  if (v) sqlite3_bind_int64(st, i, v);
  else sqlite3_bind_null(st, i);
}

int gsd_store_schedule_add(gsd_store *s, gsd_schedule *sch) {
  sqlite3_stmt *st = prepare(s,
      "INSERT INTO schedules(device, every_ms, jitter_ms, start_at, end_at, keep, max_bytes,"
      " created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  int rc;
  if (!st) return GS_EIO;
  {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sch->created_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  }
  bind_text(st, 1, sch->device);
  bind_u64(st, 2, sch->every_ms);
  bind_u64(st, 3, sch->jitter_ms);
  bind_optional(st, 4, sch->start_s);
  bind_optional(st, 5, sch->end_s);
  bind_optional(st, 6, (int64_t)sch->keep);
  bind_optional(st, 7, (int64_t)sch->max_bytes);
  sqlite3_bind_int64(st, 8, sch->created_ms);
  if ((rc = run_stmt(s, st, "add schedule")) != GS_OK) return rc;
  sch->id = sqlite3_last_insert_rowid(s->db);
  return GS_OK;
}

int gsd_store_schedule_remove(gsd_store *s, int64_t id) {
  sqlite3_stmt *st;
  int rc = exec(s, "BEGIN IMMEDIATE", "begin"), changed = 0;
  if (rc != GS_OK) return rc;
  if ((st = prepare(s, "DELETE FROM schedules WHERE id = ?"))) {
    sqlite3_bind_int64(st, 1, id);
    if ((rc = run_stmt(s, st, "remove schedule")) == GS_OK) changed = sqlite3_changes(s->db);
  } else {
    rc = GS_EIO;
  }
  if (rc == GS_OK && (st = prepare(s, "DELETE FROM schedule_runs WHERE schedule_id = ?"))) {
    sqlite3_bind_int64(st, 1, id);
    rc = run_stmt(s, st, "remove schedule runs");
  } else if (rc == GS_OK) {
    rc = GS_EIO;
  }
  if (rc == GS_OK && (rc = exec(s, "COMMIT", "commit")) == GS_OK) return changed ? GS_OK : GS_EOF;
  exec(s, "ROLLBACK", "rollback");
  return rc;
}

static int64_t column_or_zero(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, i);
}

int gsd_store_schedules(gsd_store *s, gsd_schedule **out, size_t *n) {
  sqlite3_stmt *st = prepare(s,
      "SELECT id, device, every_ms, jitter_ms, start_at, end_at, keep, max_bytes, created_ms"
      " FROM schedules ORDER BY id");
  gsd_schedule *v = NULL, *grown;
  size_t len = 0, cap = 0;
  int rc;
  *out = NULL;
  *n = 0;
  if (!st) return GS_EIO;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    gsd_schedule *sch;
    if (len == cap) {
      cap = cap ? cap * 2 : 8;
      if (!(grown = realloc(v, cap * sizeof *v))) { rc = SQLITE_NOMEM; break; }
      v = grown;
    }
    sch = &v[len++];
    memset(sch, 0, sizeof *sch);
    sch->id = sqlite3_column_int64(st, 0);
    snprintf(sch->device, sizeof sch->device, "%s", (const char *)sqlite3_column_text(st, 1));
    sch->every_ms = (uint64_t)sqlite3_column_int64(st, 2);
    sch->jitter_ms = (uint64_t)sqlite3_column_int64(st, 3);
    sch->start_s = column_or_zero(st, 4);
    sch->end_s = column_or_zero(st, 5);
    sch->keep = (uint64_t)column_or_zero(st, 6);
    sch->max_bytes = (uint64_t)column_or_zero(st, 7);
    sch->created_ms = sqlite3_column_int64(st, 8);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    free(v);
    return rc == SQLITE_NOMEM ? GS_ENOMEM : db_fail(s, "list schedules");
  }
  *out = v;
  *n = len;
  return GS_OK;
}

int gsd_store_schedule_runs(gsd_store *s, gsd_schedule_run **out, size_t *n) {
  sqlite3_stmt *st = prepare(s, "SELECT schedule_id, device_id, last_ms FROM schedule_runs");
  gsd_schedule_run *v = NULL, *grown;
  size_t len = 0, cap = 0;
  int rc;
  *out = NULL;
  *n = 0;
  if (!st) return GS_EIO;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (len == cap) {
      cap = cap ? cap * 2 : 16;
      if (!(grown = realloc(v, cap * sizeof *v))) { rc = SQLITE_NOMEM; break; }
      v = grown;
    }
    v[len].schedule_id = sqlite3_column_int64(st, 0);
    snprintf(v[len].device_id, sizeof v[len].device_id, "%s",
             (const char *)sqlite3_column_text(st, 1));
    v[len].last_ms = sqlite3_column_int64(st, 2);
    len++;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    free(v);
    return rc == SQLITE_NOMEM ? GS_ENOMEM : db_fail(s, "list schedule runs");
  }
  *out = v;
  *n = len;
  return GS_OK;
}

int gsd_store_schedule_ran(gsd_store *s, int64_t schedule_id, const char *device_id,
                           int64_t ms) {
  sqlite3_stmt *st = prepare(s,
      "INSERT INTO schedule_runs(schedule_id, device_id, last_ms) VALUES (?1, ?2, ?3)"
      " ON CONFLICT(schedule_id, device_id) DO UPDATE SET last_ms = ?3");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, schedule_id);
  bind_text(st, 2, device_id);
  sqlite3_bind_int64(st, 3, ms);
  /* A run lost with a power loss is asked again, once. */
  return run_unsynced(s, st, "record schedule run");
}

/* ---- retention ------------------------------------------------------- */

/* The IDs of the device's complete snapshots the rule does not keep,
 * newest first (malloc'd). */
static int beyond_rule(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                       int64_t **ids, size_t *n) {
  sqlite3_stmt *st = prepare(s,
      "SELECT id, file_bytes FROM snapshots WHERE device_id = ? AND status = 'complete'"
      " ORDER BY id DESC");
  uint64_t total = 0, index = 0;
  size_t len = 0, cap = 0;
  int64_t *v = NULL, *grown;
  int rc, dropping = 0;
  *ids = NULL;
  *n = 0;
  if (!st) return GS_EIO;
  bind_text(st, 1, device_id);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    total += (uint64_t)sqlite3_column_int64(st, 1);
    /* Once one is dropped, every older one is too: the rule keeps the newest. */
    if (index++ > 0 && ((keep && index > keep) || (max_bytes && total > max_bytes)))
      dropping = 1;
    if (!dropping) continue;
    if (len == cap) {
      cap = cap ? cap * 2 : 16;
      if (!(grown = realloc(v, cap * sizeof *v))) { rc = SQLITE_NOMEM; break; }
      v = grown;
    }
    v[len++] = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    free(v);
    return rc == SQLITE_NOMEM ? GS_ENOMEM : db_fail(s, "apply retention");
  }
  *ids = v;
  *n = len;
  return GS_OK;
}

/* One transaction: each row goes and its file is queued for removal. */
static int unlist(gsd_store *s, const char *device_id, const int64_t *ids, size_t n) {
  size_t i;
  int rc = exec(s, "BEGIN IMMEDIATE", "begin");
  for (i = 0; rc == GS_OK && i < n; i++) {
    char *path = gsd_store_snapshot_path(s, device_id, ids[i]);
    sqlite3_stmt *st;
    if (!path) { rc = GS_ENOMEM; break; }
    if ((st = prepare(s, "INSERT OR IGNORE INTO removals(path) VALUES (?)"))) {
      bind_text(st, 1, path);
      rc = run_stmt(s, st, "queue a file for removal");
    } else {
      rc = GS_EIO;
    }
    free(path);
    if (rc == GS_OK && (st = prepare(s, "DELETE FROM snapshots WHERE id = ?"))) {
      sqlite3_bind_int64(st, 1, ids[i]);
      rc = run_stmt(s, st, "remove snapshot");
    } else if (rc == GS_OK) {
      rc = GS_EIO;
    }
  }
  if (rc == GS_OK) return exec(s, "COMMIT", "commit");
  exec(s, "ROLLBACK", "rollback");
  return rc;
}

int gsd_store_retain(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                     unsigned *removed) {
  int64_t *ids;
  size_t n, i;
  int rc;
  *removed = 0;
  if ((rc = beyond_rule(s, device_id, keep, max_bytes, &ids, &n)) != GS_OK || n == 0) {
    free(ids);
    return rc;
  }
  if ((rc = unlist(s, device_id, ids, n)) == GS_OK) {
    for (i = 0; i < n; i++) {
      char *path = gsd_store_snapshot_path(s, device_id, ids[i]);
      if (path && unlink(path) != 0 && errno != ENOENT)
        rc = fail(s, "cannot remove '%s': %s", path, strerror(errno));
      free(path);
    }
    if (rc == GS_OK) rc = drain_removals(s);
    *removed = (unsigned)n;
  }
  free(ids);
  return rc;
}

/* ---- queries --------------------------------------------------------- */

#define SNAPSHOT_COLUMNS \
  "id, device_id, created, status, reason, request_id, agent_snapshot_id, trigger," \
  " stable_ids, schedule_id, objects, bytes, refs AS \"references\", roots, types, unreachable," \
  " dangling_references, sections, text_bytes, file_bytes, wire_bytes, crc32, summary"

/* One column as a JSON value: NULL as null, numbers as unsigned, the rest
 * as strings. */
static json_t *column_json(sqlite3_stmt *st, int i) {
  const char *name = sqlite3_column_name(st, i);
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL:
    return json_null();
  case SQLITE_INTEGER:
    if (strcmp(name, "stable_ids") == 0) return json_boolean(sqlite3_column_int(st, i));
    if (strcmp(name, "crc32") == 0)
      return json_integer((json_int_t)(uint32_t)sqlite3_column_int64(st, i));
    return gs_json_u64((uint64_t)sqlite3_column_int64(st, i));
  default:
    return gs_json_string((const char *)sqlite3_column_text(st, i),
                          (size_t)sqlite3_column_bytes(st, i));
  }
}

static json_t *snapshot_json(sqlite3_stmt *st, int with_summary) {
  json_t *o = json_object();
  int i, n = sqlite3_column_count(st);
  for (i = 0; o && i < n; i++) {
    const char *name = sqlite3_column_name(st, i);
    json_t *v;
    if (strcmp(name, "summary") == 0) {
      if (!with_summary) continue;
      v = sqlite3_column_type(st, i) == SQLITE_NULL
              ? json_null()
              : json_loads((const char *)sqlite3_column_text(st, i), 0, NULL);
    } else {
      v = column_json(st, i);
    }
    if (gs_json_set(o, name, v)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

int gsd_store_list_snapshots(gsd_store *s, const char *device_id, const char *status,
                             uint64_t limit, json_t **out) {
  sqlite3_stmt *st = prepare(s,
      "SELECT " SNAPSHOT_COLUMNS " FROM snapshots"
      " WHERE status IN ('complete', 'failed') AND (?1 IS NULL OR device_id = ?1)"
      " AND (?2 IS NULL OR status = ?2) ORDER BY id DESC LIMIT ?3");
  json_t *arr = json_array(), *o = json_object();
  int rc = GS_OK, step;
  if (!st || !arr || !o) {
    sqlite3_finalize(st);
    json_decref(arr);
    json_decref(o);
    return st ? GS_ENOMEM : GS_EIO;
  }
  bind_text(st, 1, device_id);
  bind_text(st, 2, status);
  sqlite3_bind_int64(st, 3, limit && limit < INT64_MAX ? (sqlite3_int64)limit : -1);
  while (rc == GS_OK && (step = sqlite3_step(st)) == SQLITE_ROW)
    if (json_array_append_new(arr, snapshot_json(st, 0))) rc = GS_ENOMEM;
  if (rc == GS_OK && step != SQLITE_DONE) rc = db_fail(s, "list snapshots");
  sqlite3_finalize(st);
  if (rc == GS_OK && gs_json_set(o, "snapshots", arr) == 0) {
    *out = o;
    return GS_OK;
  }
  json_decref(o);
  return rc == GS_OK ? GS_ENOMEM : rc;
}

int gsd_store_get_snapshot(gsd_store *s, int64_t id, int with_summary, json_t **out,
                           char **path) {
  sqlite3_stmt *st = prepare(s,
      "SELECT " SNAPSHOT_COLUMNS " FROM snapshots"
      " WHERE id = ? AND status IN ('complete', 'failed')");
  int step, rc = GS_OK;
  *out = NULL;
  if (path) *path = NULL;
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    *out = snapshot_json(st, with_summary);
    if (!*out) rc = GS_ENOMEM;
    if (rc == GS_OK && path &&
        strcmp((const char *)sqlite3_column_text(st, 3), "complete") == 0 &&
        !(*path = gsd_store_snapshot_path(s, (const char *)sqlite3_column_text(st, 1), id)))
      rc = GS_ENOMEM;
  } else {
    rc = step == SQLITE_DONE ? GS_EOF : db_fail(s, "get snapshot");
  }
  sqlite3_finalize(st);
  if (rc != GS_OK) {
    json_decref(*out);
    *out = NULL;
  }
  return rc;
}

int gsd_store_list_devices(gsd_store *s, json_t **out) {
  sqlite3_stmt *st = prepare(s,
      "SELECT device_id, app_name, architecture, pointer_size, agent_version, last_seen,"
      " (SELECT count(*) FROM snapshots n WHERE n.device_id = d.device_id"
      "   AND n.status = 'complete') AS snapshots,"
      " (SELECT max(id) FROM snapshots n WHERE n.device_id = d.device_id"
      "   AND n.status = 'complete') AS last_snapshot_id"
      " FROM devices d ORDER BY device_id");
  json_t *arr = json_array();
  int rc = GS_OK, step;
  if (!st || !arr) {
    sqlite3_finalize(st);
    json_decref(arr);
    return st ? GS_ENOMEM : GS_EIO;
  }
  while (rc == GS_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_object();
    int i;
    for (i = 0; o && i < sqlite3_column_count(st); i++)
      if (gs_json_set(o, sqlite3_column_name(st, i), column_json(st, i))) {
        json_decref(o);
        o = NULL;
      }
    if (json_array_append_new(arr, o)) rc = GS_ENOMEM;
  }
  if (rc == GS_OK && step != SQLITE_DONE) rc = db_fail(s, "list devices");
  sqlite3_finalize(st);
  if (rc != GS_OK) {
    json_decref(arr);
    return rc;
  }
  *out = arr;
  return GS_OK;
}

int gsd_store_device_known(gsd_store *s, const char *device_id) {
  sqlite3_stmt *st = prepare(s, "SELECT 1 FROM devices WHERE device_id = ?");
  int step;
  if (!st) return GS_EIO;
  bind_text(st, 1, device_id);
  step = sqlite3_step(st);
  sqlite3_finalize(st);
  if (step == SQLITE_ROW) return GS_OK;
  return step == SQLITE_DONE ? GS_EOF : db_fail(s, "find device");
}

/* ---- device keys ----------------------------------------------------- */

int gsd_store_keys_open(gsd_store **out, const char *dir, int create, char *err, size_t cap) {
  gsd_store *s = calloc(1, sizeof *s);
  size_t n = strlen(dir) + 32;
  char *path = malloc(n);
  struct stat st;
  int rc = GS_OK;
  *out = NULL;
  if (!s || !path || !(s->dir = malloc(strlen(dir) + 1))) {
    snprintf(err, cap, "out of memory");
    free(path);
    gsd_store_close(s);
    return GS_ENOMEM;
  }
  strcpy(s->dir, dir);
  snprintf(path, n, "%s/catalog.db", dir);
  if (create) rc = make_dir(s, dir);
  else if (stat(path, &st) != 0) rc = fail(s, "no catalog at '%s'", path);
  if (rc == GS_OK && sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                     NULL) != SQLITE_OK)
    rc = db_fail(s, "open");
  if (rc == GS_OK) {
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    rc = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;" KEYS_SCHEMA, "create tables");
  }
  free(path);
  if (rc != GS_OK) {
    snprintf(err, cap, "store '%s': %s", dir, s->error);
    gsd_store_close(s);
    return rc;
  }
  *out = s;
  return GS_OK;
}

int gsd_store_key_count(gsd_store *s, uint64_t *n) {
  sqlite3_stmt *st = prepare(s, "SELECT count(*) FROM device_keys");
  int step;
  *n = 0;
  if (!st) return GS_EIO;
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) *n = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return step == SQLITE_ROW ? GS_OK : db_fail(s, "count keys");
}

int gsd_store_key_verifier(gsd_store *s, const char *device_id, uint8_t *verifier, size_t len) {
  sqlite3_stmt *st = prepare(s, "SELECT verifier FROM device_keys WHERE device_id = ?");
  int step, rc;
  if (!st) return GS_EIO;
  bind_text(st, 1, device_id);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW && (size_t)sqlite3_column_bytes(st, 0) == len) {
    memcpy(verifier, sqlite3_column_blob(st, 0), len);
    rc = GS_OK;
  } else if (step == SQLITE_ROW) {
    rc = fail(s, "catalog: the key of device '%s' is damaged", device_id);
  } else {
    rc = step == SQLITE_DONE ? GS_EOF : db_fail(s, "find key");
  }
  sqlite3_finalize(st);
  return rc;
}

int gsd_store_key_set(gsd_store *s, const char *device_id, const uint8_t *verifier, size_t len,
                      int replace) {
  sqlite3_stmt *st = prepare(s, replace
      ? "INSERT OR REPLACE INTO device_keys(device_id, verifier, created) VALUES (?, ?, ?)"
      : "INSERT OR IGNORE INTO device_keys(device_id, verifier, created) VALUES (?, ?, ?)");
  int rc;
  if (!st) return GS_EIO;
  bind_text(st, 1, device_id);
  sqlite3_bind_blob(st, 2, verifier, (int)len, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, now_s());
  if ((rc = run_stmt(s, st, "store key")) != GS_OK) return rc;
  if (sqlite3_changes(s->db) == 0) {
    fail(s, "device '%s' already has a key", device_id);
    return GS_EINVAL;
  }
  return GS_OK;
}

int gsd_store_key_remove(gsd_store *s, const char *device_id) {
  sqlite3_stmt *st = prepare(s, "DELETE FROM device_keys WHERE device_id = ?");
  int rc;
  if (!st) return GS_EIO;
  bind_text(st, 1, device_id);
  if ((rc = run_stmt(s, st, "remove key")) != GS_OK) return rc;
  return sqlite3_changes(s->db) ? GS_OK : GS_EOF;
}

int gsd_store_list_keys(gsd_store *s, json_t **out) {
  sqlite3_stmt *st = prepare(s, "SELECT device_id, created FROM device_keys ORDER BY device_id");
  json_t *arr = json_array();
  int rc = GS_OK, step;
  *out = NULL;
  if (!st || !arr) {
    sqlite3_finalize(st);
    json_decref(arr);
    return st ? GS_ENOMEM : GS_EIO;
  }
  while (rc == GS_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = json_object();
    if (!o || gs_json_set(o, "device_id", column_json(st, 0)) ||
        gs_json_set(o, "created", column_json(st, 1)) || json_array_append_new(arr, o))
      rc = GS_ENOMEM;
  }
  if (rc == GS_OK && step != SQLITE_DONE) rc = db_fail(s, "list keys");
  sqlite3_finalize(st);
  if (rc != GS_OK) {
    json_decref(arr);
    return rc;
  }
  *out = arr;
  return GS_OK;
}
