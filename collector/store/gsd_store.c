/* gsd_store.c - the collector's store: a folder with a SQLite catalog and
 * the snapshot files. This file opens it (schema, migration, recovery),
 * names its files and holds the helpers of the other gsd_store_*.c files
 * (gsd_store_int.h): snapshots, schedules, device keys.
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
#include "gsd_lock.h"
#include "gsd_store_int.h"

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
  "  summary TEXT, source_format TEXT, note TEXT);"
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
  "CREATE TABLE IF NOT EXISTS counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL);"
  KEYS_SCHEMA;

/* Columns added to tables of an older catalog. */
static const struct { const char *table, *column, *type; } added_columns[] = {
  {"snapshots", "schedule_id", "INTEGER"},
  {"snapshots", "source_format", "TEXT"},
  {"snapshots", "note", "TEXT"},
  {"snapshots", "damaged", "TEXT"},
};

int gsd_st_fail(gsd_store *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->error, sizeof s->error, fmt, ap);
  va_end(ap);
  return GS_EIO;
}

int gsd_st_db_fail(gsd_store *s, const char *what) {
  return gsd_st_fail(s, "catalog: %s: %s", what, sqlite3_errmsg(s->db));
}

const char *gsd_store_error(const gsd_store *s) { return s->error; }

int64_t gsd_st_now_s(void) { return (int64_t)time(NULL); }

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
  if (!path) return gsd_st_fail(s, "out of memory");
  sprintf(path, "%s/snapshots", s->dir);
  rc = statvfs(path, &v);
  if (rc != 0) {
    gsd_st_fail(s, "cannot read the free space of '%s': %s", path, strerror(errno));
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
  gsd_st_fail(s, "disk full: the store's filesystem has %llu bytes free, below the minimum of %llu"
       " (--min-free-bytes)", (unsigned long long)avail, (unsigned long long)min_free);
  return GS_ELIMIT;
}

int gsd_st_make_dir(gsd_store *s, const char *path) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) return GS_OK;
  return gsd_st_fail(s, "cannot create folder '%s': %s", path, strerror(errno));
}

int gsd_st_make_device_dir(gsd_store *s, const char *device_id) {
  char *dev = gsd_store_escape_device(device_id), *path;
  size_t n;
  int rc;
  if (!dev) return GS_ENOMEM;
  if (!(path = malloc((n = strlen(s->dir) + strlen(dev) + 16)))) { free(dev); return GS_ENOMEM; }
  snprintf(path, n, "%s/snapshots/%s", s->dir, dev);
  rc = gsd_st_make_dir(s, path);
  free(path);
  free(dev);
  return rc;
}

/* ---- statements ------------------------------------------------------ */

sqlite3_stmt *gsd_st_prepare(gsd_store *s, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
    gsd_st_db_fail(s, "prepare");
    return NULL;
  }
  return st;
}

void gsd_st_bind_text(sqlite3_stmt *st, int i, const char *v) {
  if (v) sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, i);
}

void gsd_st_bind_u64(sqlite3_stmt *st, int i, uint64_t v) {
  sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

/* Steps a statement that returns no rows, and finalizes it. */
int gsd_st_run_stmt(gsd_store *s, sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  int err = (rc == SQLITE_DONE || rc == SQLITE_ROW) ? GS_OK : gsd_st_db_fail(s, what);
  sqlite3_finalize(st);
  return err;
}

int gsd_st_exec(gsd_store *s, const char *sql, const char *what) {
  char *msg = NULL;
  if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK) return GS_OK;
  gsd_st_fail(s, "catalog: %s: %s", what, msg ? msg : "unknown error");
  sqlite3_free(msg);
  return GS_EIO;
}

/* gsd_st_run_stmt() for a row that need not reach the disk before the next synced
 * commit: WAL without a sync, which a process crash cannot undo (only a
 * power loss can). Every sync on the loop thread costs milliseconds, and
 * syncs are what limits a fleet captured every few seconds. */
int gsd_st_run_unsynced(gsd_store *s, sqlite3_stmt *st, const char *what) {
  int rc;
  gsd_st_exec(s, "PRAGMA synchronous=NORMAL", "sync setting");
  rc = gsd_st_run_stmt(s, st, what);
  gsd_st_exec(s, "PRAGMA synchronous=FULL", "sync setting");
  return rc;
}

/* One column as a JSON value: NULL as null, numbers as unsigned, the rest
 * as strings. */
json_t *gsd_st_column_json(sqlite3_stmt *st, int i) {
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

json_t *gsd_st_snapshot_json(sqlite3_stmt *st, int with_summary) {
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
      v = gsd_st_column_json(st, i);
    }
    if (gs_json_set(o, name, v)) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

/* Every row of st (finalized here) as an object of its columns
 * (gsd_st_snapshot_json), into *out: GS_OK, GS_ENOMEM or GS_EIO. */
int gsd_st_rows_json(gsd_store *s, sqlite3_stmt *st, int with_summary, const char *what,
                     json_t **out) {
  json_t *arr = json_array();
  int rc = GS_OK, step;
  *out = NULL;
  if (!st || !arr) {
    sqlite3_finalize(st);
    json_decref(arr);
    return st ? GS_ENOMEM : GS_EIO;
  }
  while (rc == GS_OK && (step = sqlite3_step(st)) == SQLITE_ROW)
    if (json_array_append_new(arr, gsd_st_snapshot_json(st, with_summary))) rc = GS_ENOMEM;
  if (rc == GS_OK && step != SQLITE_DONE) rc = gsd_st_db_fail(s, what);
  sqlite3_finalize(st);
  if (rc != GS_OK) {
    json_decref(arr);
    return rc;
  }
  *out = arr;
  return GS_OK;
}

/* ---- open ------------------------------------------------------------ */

/* Temporary snapshot and side files of a collector that stopped: none is being
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
        if ((len > sizeof suffix - 1 && strcmp(f->d_name + len - (sizeof suffix - 1), suffix) == 0) ||
            strstr(f->d_name, ".gens.json.tmp."))
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
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT id, device_id FROM snapshots WHERE status = 'receiving'");
  int rc;
  if (!st) return GS_EIO;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    gsd_st_unlink_inflight(s, (const char *)sqlite3_column_text(st, 1), sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return gsd_st_db_fail(s, "recover");
  sweep_tmp(s);
  return gsd_st_exec(s,
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
  if (!(st = gsd_st_prepare(s, sql))) return GS_EIO;
  *has = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    if (strcmp((const char *)sqlite3_column_text(st, 1), column) == 0) *has = 1;
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? GS_OK : gsd_st_db_fail(s, "read the columns");
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
    if ((rc = gsd_st_exec(s, sql, "add a column")) != GS_OK) return rc;
  }
  return GS_OK;
}

/* The temporaries of a side file (gs_genfile.h) beside path, whichever
 * process wrote them: a collector killed while writing one leaves it. */
static void unlink_side_temps(const char *path) {
  const char *base = strrchr(path, '/');
  size_t dirlen = base ? (size_t)(base - path) : 1, n;
  char *dir = strdup(base ? path : "."), prefix[300];
  DIR *d;
  struct dirent *e;
  if (!dir) return;
  dir[dirlen] = '\0';
  n = (size_t)snprintf(prefix, sizeof prefix, "%s.gens.json.tmp.", base ? base + 1 : path);
  if (n < sizeof prefix && (d = opendir(dir))) {
    while ((e = readdir(d)))
      if (strncmp(e->d_name, prefix, n) == 0) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
  }
  free(dir);
}

void gsd_st_unlink_inflight(gsd_store *s, const char *device_id, int64_t id) {
  char *tmp = gsd_store_tmp_path(s, device_id, id), *final = gsd_store_snapshot_path(s, device_id, id);
  if (tmp) unlink(tmp);
  if (final) {
    gsd_st_unlink_snapshot(final);
    unlink_side_temps(final);
  }
  free(tmp);
  free(final);
}

int gsd_st_unlink_snapshot(const char *path) {
  size_t n = strlen(path) + sizeof ".gens.json";
  char *side = malloc(n);
  int rc = unlink(path), saved = errno;
  if (side) {
    snprintf(side, n, "%s.gens.json", path);
    unlink(side);
    free(side);
  }
  errno = saved;
  return rc;
}

/* Files whose rows retention removed, still there after a crash. */
int gsd_st_drain_removals(gsd_store *s) {
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT path FROM removals");
  int rc;
  if (!st) return GS_EIO;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) gsd_st_unlink_snapshot((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) return gsd_st_db_fail(s, "remove files");
  return gsd_st_exec(s, "DELETE FROM removals", "remove files");
}

/* A handle on dir without a connection yet; NULL when out of memory. */
static gsd_store *store_new(const char *dir) {
  gsd_store *s = calloc(1, sizeof *s);
  if (s) s->lock = -1;
  if (s && !(s->dir = strdup(dir))) {
    free(s);
    s = NULL;
  }
  return s;
}

/* DIR/name, malloc'd; NULL with the error set when out of memory. */
static char *sub_path(gsd_store *s, const char *name) {
  size_t n = strlen(s->dir) + strlen(name) + 2;
  char *path = malloc(n);
  if (path) snprintf(path, n, "%s/%s", s->dir, name);
  else gsd_st_fail(s, "out of memory");
  return path;
}

/* Opens the catalog of s, with its busy timeout, and runs sql on it. */
static int open_catalog(gsd_store *s, int flags, const char *sql) {
  char *path = sub_path(s, "catalog.db");
  struct stat st;
  int rc = path ? GS_OK : GS_ENOMEM;
  if (rc == GS_OK && sqlite3_open_v2(path, &s->db, flags, NULL) != SQLITE_OK)
    rc = gsd_st_db_fail(s, "open");
  if (rc == GS_OK && stat(path, &st) == 0) {
    s->catalog_dev = st.st_dev;
    s->catalog_ino = st.st_ino;
  }
  free(path);
  if (rc != GS_OK) return rc;
  sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
  return gsd_st_exec(s, sql, "create tables");
}

/* SQLite writes on through its open descriptor into a catalog file that was
 * deleted or replaced: what it acknowledges then is lost at the next start. */
int gsd_st_check_catalog(gsd_store *s) {
  char *path;
  struct stat st;
  int gone;
  if (s->pg) return GS_OK;      /* a server's catalog, not a file of ours */
  if (!(path = sub_path(s, "catalog.db"))) return GS_ENOMEM;
  gone = stat(path, &st) != 0;
  if (gone || st.st_dev != s->catalog_dev || st.st_ino != s->catalog_ino) {
    gsd_st_fail(s, "the catalog %s was %s while gcsnapd ran: nothing more is stored; restart gcsnapd",
                path, gone ? "removed" : "replaced");
    free(path);
    return GS_EIO;
  }
  free(path);
  return GS_OK;
}

/* ---- files without a row --------------------------------------------- */

/* Whether folder/ID.gclog.zst is the file of a complete row. */
static int has_row(gsd_store *s, const char *folder, int64_t id) {
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT device_id FROM snapshots WHERE id = ? AND status = 'complete'");
  int found = 0;
  if (!st) return 1;      /* unknown: never call it an orphan */
  sqlite3_bind_int64(st, 1, id);
  if (sqlite3_step(st) == SQLITE_ROW) {
    char *dev = gsd_store_escape_device((const char *)sqlite3_column_text(st, 0));
    found = !dev || strcmp(dev, folder) == 0;
    free(dev);
  }
  sqlite3_finalize(st);
  return found;
}

/* The ID of a final snapshot file's name, or 0. */
static int64_t id_of_name(const char *name) {
  char *end;
  long long id = strtoll(name, &end, 10);
  return id > 0 && name[0] != '0' && strcmp(end, ".gclog.zst") == 0 ? (int64_t)id : 0;
}

int gsd_store_orphans(gsd_store *s, gsd_store_orphan_fn fn, void *ctx, unsigned *count) {
  char *top = sub_path(s, "snapshots"), *path, sql[320];
  DIR *d, *dev;
  struct dirent *e, *f;
  int64_t highest = 0, id;
  *count = 0;
  /* A shared folder holds other collectors' files in flight. */
  if (s->pg) {
    free(top);
    return GS_OK;
  }
  if (!top) return GS_ENOMEM;
  if (!(d = opendir(top))) { free(top); return GS_OK; }
  while ((e = readdir(d))) {
    size_t n = strlen(top) + strlen(e->d_name) + 2;
    if (e->d_name[0] == '.' || !(path = malloc(n))) continue;
    snprintf(path, n, "%s/%s", top, e->d_name);
    if ((dev = opendir(path))) {
      while ((f = readdir(dev)))
        if ((id = id_of_name(f->d_name)) && !has_row(s, e->d_name, id)) {
          ++*count;
          if (id > highest) highest = id;
          fn(ctx, e->d_name, f->d_name);
        }
      closedir(dev);
    }
    free(path);
  }
  closedir(d);
  free(top);
  if (!highest) return GS_OK;
  /* New rows must not take those IDs: their files would meet the orphans'. */
  snprintf(sql, sizeof sql, "UPDATE sqlite_sequence SET seq = max(seq, %lld) WHERE name = 'snapshots';"
           "INSERT INTO sqlite_sequence(name, seq) SELECT 'snapshots', %lld"
           " WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'snapshots');",
           (long long)highest, (long long)highest);
  return gsd_st_exec(s, sql, "keep snapshot IDs past files without a row");
}

/* The end of an open: *out, or the reason in err and s freed. */
static int store_opened(gsd_store *s, int rc, gsd_store **out, char *err, size_t cap) {
  if (rc == GS_OK) {
    *out = s;
    return GS_OK;
  }
  if (*s->dir) snprintf(err, cap, "store '%s': %s", s->dir, s->error);
  else snprintf(err, cap, "%s", s->error);
  gsd_store_close(s);
  return rc;
}

int gsd_store_open(gsd_store **out, const char *dir, char *err, size_t cap) {
  gsd_store *s = store_new(dir);
  char *snapshots;
  int rc;
  *out = NULL;
  if (!s) {
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  snapshots = sub_path(s, "snapshots");
  rc = snapshots ? gsd_st_make_dir(s, dir) : GS_ENOMEM;
  if (rc == GS_OK) rc = gsd_st_make_dir(s, snapshots);
  free(snapshots);
  /* Before recovery, which removes temporary files: they may be another
   * collector's. */
  if (rc == GS_OK) rc = gsd_lock_take(dir, &s->lock, s->error, sizeof s->error);
  if (rc == GS_OK &&
      (rc = open_catalog(s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, schema)) == GS_OK &&
      (rc = migrate(s)) == GS_OK && (rc = recover(s)) == GS_OK)
    rc = gsd_st_drain_removals(s);
  return store_opened(s, rc, out, err, cap);
}

int gsd_store_is_pg_url(const char *catalog) {
  return catalog && (strncmp(catalog, "postgresql://", 13) == 0 ||
                     strncmp(catalog, "postgres://", 11) == 0);
}

int gsd_store_open_catalog(gsd_store **out, const char *dir, const char *catalog,
                           const char *identity, char *err, size_t cap) {
  gsd_store *s;
  char host[128] = "";
  int rc;
  if (!catalog || !*catalog) return gsd_store_open(out, dir, err, cap);
  *out = NULL;
  if (!gsd_store_is_pg_url(catalog)) {
    snprintf(err, cap, "catalog '%s': not a postgresql:// URL", catalog);
    return GS_EINVAL;
  }
  if (!(s = store_new(dir))) {
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  if (!identity || !*identity) identity = gethostname(host, sizeof host - 1) == 0 ? host : "gcsnapd";
  rc = gsd_st_make_dir(s, dir);
  if (rc == GS_OK) {
    char *snapshots = sub_path(s, "snapshots");
    rc = snapshots ? gsd_st_make_dir(s, snapshots) : GS_ENOMEM;
    free(snapshots);
  }
  if (rc == GS_OK) rc = gsd_pg_open(s, catalog, identity);
  return store_opened(s, rc, out, err, cap);
}

int gsd_store_keys_open_pg(gsd_store **out, const char *url, char *err, size_t cap) {
  gsd_store *s = store_new("");
  *out = NULL;
  if (!s) {
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  return store_opened(s, gsd_pg_open(s, url, NULL), out, err, cap);
}

int gsd_store_recover_stopped(gsd_store *s) {
  return s->pg ? gsd_pg_recover_stopped(s) : GS_OK;
}

void gsd_store_close(gsd_store *s) {
  if (!s) return;
  gsd_pg_close(s);
  sqlite3_close(s->db);
  gsd_lock_release(s->lock);
  free(s->dir);
  free(s);
}

int gsd_store_keys_open(gsd_store **out, const char *dir, int create, char *err, size_t cap) {
  gsd_store *s = store_new(dir);
  char *path;
  struct stat st;
  int rc = GS_OK;
  *out = NULL;
  if (!s) {
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  if (create) rc = gsd_st_make_dir(s, dir);
  else if (!(path = sub_path(s, "catalog.db"))) rc = GS_ENOMEM;
  else {
    if (stat(path, &st) != 0) rc = gsd_st_fail(s, "no catalog at '%s'", path);
    free(path);
  }
  if (rc == GS_OK)
    rc = open_catalog(s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;" KEYS_SCHEMA);
  return store_opened(s, rc, out, err, cap);
}
