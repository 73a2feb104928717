/* gsd_store_schedules.c - the catalog's schedules, their last runs, and
 * retention: the snapshots beyond a schedule's rule are unlisted and their
 * files queued for removal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_store_int.h"

/* ---- schedules ------------------------------------------------------- */

static void bind_optional(sqlite3_stmt *st, int i, int64_t v) {
  if (v) sqlite3_bind_int64(st, i, v);
  else sqlite3_bind_null(st, i);
}

int gsd_store_schedule_add(gsd_store *s, gsd_schedule *sch) {
  if (s->pg) return gsd_pg_schedule_add(s, sch);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "INSERT INTO schedules(device, every_ms, jitter_ms, start_at, end_at, keep, max_bytes,"
      " created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  int rc;
  if (!st) return GS_EIO;
  {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sch->created_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  }
  gsd_st_bind_text(st, 1, sch->device);
  gsd_st_bind_u64(st, 2, sch->every_ms);
  gsd_st_bind_u64(st, 3, sch->jitter_ms);
  bind_optional(st, 4, sch->start_s);
  bind_optional(st, 5, sch->end_s);
  bind_optional(st, 6, (int64_t)sch->keep);
  bind_optional(st, 7, (int64_t)sch->max_bytes);
  sqlite3_bind_int64(st, 8, sch->created_ms);
  if ((rc = gsd_st_run_stmt(s, st, "add schedule")) != GS_OK) return rc;
  sch->id = sqlite3_last_insert_rowid(s->db);
  return GS_OK;
}

int gsd_store_schedule_remove(gsd_store *s, int64_t id) {
  if (s->pg) return gsd_pg_schedule_remove(s, id);
  sqlite3_stmt *st;
  int rc = gsd_st_exec(s, "BEGIN IMMEDIATE", "begin"), changed = 0;
  if (rc != GS_OK) return rc;
  if ((st = gsd_st_prepare(s, "DELETE FROM schedules WHERE id = ?"))) {
    sqlite3_bind_int64(st, 1, id);
    if ((rc = gsd_st_run_stmt(s, st, "remove schedule")) == GS_OK) changed = sqlite3_changes(s->db);
  } else {
    rc = GS_EIO;
  }
  if (rc == GS_OK && (st = gsd_st_prepare(s, "DELETE FROM schedule_runs WHERE schedule_id = ?"))) {
    sqlite3_bind_int64(st, 1, id);
    rc = gsd_st_run_stmt(s, st, "remove schedule runs");
  } else if (rc == GS_OK) {
    rc = GS_EIO;
  }
  if (rc == GS_OK && (rc = gsd_st_exec(s, "COMMIT", "commit")) == GS_OK) return changed ? GS_OK : GS_EOF;
  gsd_st_exec(s, "ROLLBACK", "rollback");
  return rc;
}

static int64_t column_or_zero(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, i);
}

int gsd_store_schedules(gsd_store *s, gsd_schedule **out, size_t *n) {
  if (s->pg) return gsd_pg_schedules(s, out, n);
  sqlite3_stmt *st = gsd_st_prepare(s,
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
    return rc == SQLITE_NOMEM ? GS_ENOMEM : gsd_st_db_fail(s, "list schedules");
  }
  *out = v;
  *n = len;
  return GS_OK;
}

int gsd_store_schedule_runs(gsd_store *s, gsd_schedule_run **out, size_t *n) {
  if (s->pg) return gsd_pg_schedule_runs(s, out, n);
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT schedule_id, device_id, last_ms FROM schedule_runs");
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
    return rc == SQLITE_NOMEM ? GS_ENOMEM : gsd_st_db_fail(s, "list schedule runs");
  }
  *out = v;
  *n = len;
  return GS_OK;
}

int gsd_store_schedule_ran(gsd_store *s, int64_t schedule_id, const char *device_id,
                           int64_t ms) {
  if (s->pg) return gsd_pg_schedule_ran(s, schedule_id, device_id, ms);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "INSERT INTO schedule_runs(schedule_id, device_id, last_ms) VALUES (?1, ?2, ?3)"
      " ON CONFLICT(schedule_id, device_id) DO UPDATE SET last_ms = ?3");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, schedule_id);
  gsd_st_bind_text(st, 2, device_id);
  sqlite3_bind_int64(st, 3, ms);
  /* A run lost with a power loss is asked again, once. */
  return gsd_st_run_unsynced(s, st, "record schedule run");
}

int gsd_store_schedule_claim(gsd_store *s, int64_t schedule_id, const char *device_id,
                             int64_t due_ms, int64_t ms) {
  if (s->pg) return gsd_pg_schedule_claim(s, schedule_id, device_id, due_ms, ms);
  /* One collector on this catalog: its own runs are all there are. */
  return gsd_store_schedule_ran(s, schedule_id, device_id, ms);
}

/* ---- retention ------------------------------------------------------- */

/* The IDs of the device's complete snapshots the rule does not keep,
 * newest first (malloc'd). */
static int beyond_rule(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                       int64_t **ids, size_t *n) {
  sqlite3_stmt *st = gsd_st_prepare(s,
      "SELECT id, file_bytes FROM snapshots WHERE device_id = ? AND status = 'complete'"
      " ORDER BY id DESC");
  uint64_t total = 0, index = 0;
  size_t len = 0, cap = 0;
  int64_t *v = NULL, *grown;
  int rc, dropping = 0;
  *ids = NULL;
  *n = 0;
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
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
    return rc == SQLITE_NOMEM ? GS_ENOMEM : gsd_st_db_fail(s, "apply retention");
  }
  *ids = v;
  *n = len;
  return GS_OK;
}

/* One transaction: each row goes and its file is queued for removal. */
static int unlist(gsd_store *s, const char *device_id, const int64_t *ids, size_t n) {
  size_t i;
  int rc = gsd_st_exec(s, "BEGIN IMMEDIATE", "begin");
  for (i = 0; rc == GS_OK && i < n; i++) {
    char *path = gsd_store_snapshot_path(s, device_id, ids[i]);
    sqlite3_stmt *st;
    if (!path) { rc = GS_ENOMEM; break; }
    if ((st = gsd_st_prepare(s, "INSERT OR IGNORE INTO removals(path) VALUES (?)"))) {
      gsd_st_bind_text(st, 1, path);
      rc = gsd_st_run_stmt(s, st, "queue a file for removal");
    } else {
      rc = GS_EIO;
    }
    free(path);
    if (rc == GS_OK && (st = gsd_st_prepare(s, "DELETE FROM snapshots WHERE id = ?"))) {
      sqlite3_bind_int64(st, 1, ids[i]);
      rc = gsd_st_run_stmt(s, st, "remove snapshot");
    } else if (rc == GS_OK) {
      rc = GS_EIO;
    }
  }
  if (rc == GS_OK) return gsd_st_exec(s, "COMMIT", "commit");
  gsd_st_exec(s, "ROLLBACK", "rollback");
  return rc;
}

int gsd_store_retain(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                     unsigned *removed) {
  if (s->pg) return gsd_pg_retain(s, device_id, keep, max_bytes, removed);
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
      if (path && gsd_st_unlink_snapshot(path) != 0 && errno != ENOENT)
        rc = gsd_st_fail(s, "cannot remove '%s': %s", path, strerror(errno));
      free(path);
    }
    if (rc == GS_OK) rc = gsd_st_drain_removals(s);
    *removed = (unsigned)n;
  }
  free(ids);
  return rc;
}
