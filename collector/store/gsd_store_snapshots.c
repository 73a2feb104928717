/* gsd_store_snapshots.c - the catalog's devices, sessions and snapshots:
 * rows written as agents come and go and snapshots arrive, and the listings
 * the API shows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_store_int.h"

/* ---- devices and sessions -------------------------------------------- */

int gsd_store_session_begin(gsd_store *s, const gsd_device_info *d, const char *address,
                            int64_t *session_id) {
  if (s->pg) return gsd_pg_session_begin(s, d, address, session_id);
  sqlite3_stmt *st;
  int rc;
  if (!(st = gsd_st_prepare(s,
      "INSERT INTO devices(device_id, app_name, architecture, pointer_size, agent_version,"
      " first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
      " ON CONFLICT(device_id) DO UPDATE SET app_name = ?2, architecture = ?3,"
      " pointer_size = ?4, agent_version = ?5, last_seen = ?6")))
    return GS_EIO;
  gsd_st_bind_text(st, 1, d->device_id);
  gsd_st_bind_text(st, 2, d->app_name);
  gsd_st_bind_text(st, 3, d->architecture);
  sqlite3_bind_int(st, 4, (int)d->pointer_size);
  gsd_st_bind_text(st, 5, d->agent_version);
  sqlite3_bind_int64(st, 6, gsd_st_now_s());
  if ((rc = gsd_st_run_stmt(s, st, "record device")) != GS_OK) return rc;
  if (!(st = gsd_st_prepare(s,
      "INSERT INTO sessions(device_id, address, protocol_version, agent_version, started)"
      " VALUES (?, ?, ?, ?, ?)")))
    return GS_EIO;
  gsd_st_bind_text(st, 1, d->device_id);
  gsd_st_bind_text(st, 2, address);
  sqlite3_bind_int(st, 3, (int)d->protocol_version);
  gsd_st_bind_text(st, 4, d->agent_version);
  sqlite3_bind_int64(st, 5, gsd_st_now_s());
  if ((rc = gsd_st_run_stmt(s, st, "record session")) != GS_OK) return rc;
  *session_id = sqlite3_last_insert_rowid(s->db);
  return GS_OK;
}

int gsd_store_session_end(gsd_store *s, int64_t session_id, const char *device_id,
                          const char *reason) {
  if (s->pg) return gsd_pg_session_end(s, session_id, device_id, reason);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "UPDATE sessions SET ended = ?2, end_reason = ?3 WHERE id = ?1;");
  int rc;
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, session_id);
  sqlite3_bind_int64(st, 2, gsd_st_now_s());
  gsd_st_bind_text(st, 3, reason);
  if ((rc = gsd_st_run_stmt(s, st, "end session")) != GS_OK) return rc;
  if (!(st = gsd_st_prepare(s, "UPDATE devices SET last_seen = ?2 WHERE device_id = ?1"))) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  sqlite3_bind_int64(st, 2, gsd_st_now_s());
  return gsd_st_run_stmt(s, st, "update device");
}

int gsd_store_device_add(gsd_store *s, const char *device_id) {
  if (s->pg) return gsd_pg_device_add(s, device_id);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "INSERT INTO devices(device_id, first_seen, last_seen) VALUES (?1, ?2, ?2)"
      " ON CONFLICT(device_id) DO NOTHING");
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  sqlite3_bind_int64(st, 2, gsd_st_now_s());
  return gsd_st_run_stmt(s, st, "record device");
}

/* ---- snapshots ------------------------------------------------------- */

int gsd_store_find_complete(gsd_store *s, const char *device_id, uint64_t agent_snapshot_id,
                            int64_t *id) {
  if (s->pg) return gsd_pg_find_complete(s, device_id, agent_snapshot_id, id);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "SELECT id FROM snapshots WHERE device_id = ? AND agent_snapshot_id = ?"
      " AND status = 'complete'");
  int rc;
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  gsd_st_bind_u64(st, 2, agent_snapshot_id);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW) return GS_OK;
  return rc == SQLITE_DONE ? GS_EOF : gsd_st_db_fail(s, "find snapshot");
}

int gsd_store_snapshot_begin(gsd_store *s, const gsd_snapshot_begin *b, int64_t *id) {
  if (s->pg) return gsd_pg_snapshot_begin(s, b, id);
  sqlite3_stmt *st;
  int rc;
  if ((rc = gsd_st_check_catalog(s)) != GS_OK || (rc = gsd_st_make_device_dir(s, b->device_id)) != GS_OK)
    return rc;
  if (!(st = gsd_st_prepare(s,
      "INSERT INTO snapshots(device_id, session_id, created, status, request_id,"
      " agent_snapshot_id, trigger, stable_ids, clock_ms, schedule_id, source_format, note)"
      " VALUES (?, ?, ?, 'receiving', ?, ?, ?, ?, ?, ?, ?, ?)")))
    return GS_EIO;
  gsd_st_bind_text(st, 1, b->device_id);
  sqlite3_bind_int64(st, 2, b->session_id);
  sqlite3_bind_int64(st, 3, gsd_st_now_s());
  if (b->request_id) gsd_st_bind_u64(st, 4, b->request_id);
  else sqlite3_bind_null(st, 4);
  gsd_st_bind_u64(st, 5, b->agent_snapshot_id);
  gsd_st_bind_text(st, 6, b->trigger);
  sqlite3_bind_int(st, 7, b->stable_ids != 0);
  gsd_st_bind_u64(st, 8, b->clock_ms);
  if (b->schedule_id) sqlite3_bind_int64(st, 9, b->schedule_id);
  else sqlite3_bind_null(st, 9);
  gsd_st_bind_text(st, 10, b->source_format);
  gsd_st_bind_text(st, 11, b->note);
  /* Not synced: the row matters only until the snapshot ends, and the sync
   * of that end (or of any later commit) takes it to disk too. A power loss
   * may lose the row; the open then finds its temporary file with no row
   * (sweep_tmp). */
  if ((rc = gsd_st_run_unsynced(s, st, "record snapshot")) != GS_OK) return rc;
  *id = sqlite3_last_insert_rowid(s->db);
  return GS_OK;
}

int gsd_store_snapshot_format(gsd_store *s, int64_t id, const char *format) {
  if (s->pg) return gsd_pg_snapshot_format(s, id, format);
  sqlite3_stmt *st = gsd_st_prepare(s, "UPDATE snapshots SET source_format = ?2 WHERE id = ?1");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  gsd_st_bind_text(st, 2, format);
  return gsd_st_run_unsynced(s, st, "record the source format");
}

/* Sets the end figures of row id; summary_fields says whether the figures
 * only a summary gives are known. */
static int update_end(gsd_store *s, int64_t id, const char *status, const char *reason,
                      const gsd_snapshot_end *e, int summary_fields) {
  sqlite3_stmt *st = gsd_st_prepare(s,
      "UPDATE snapshots SET status = ?2, reason = ?3, finished = ?4, objects = ?5,"
      " bytes = ?6, refs = ?7, roots = ?8, types = ?9, unreachable = ?10,"
      " dangling_references = ?11, sections = ?12, text_bytes = ?13, file_bytes = ?14,"
      " wire_bytes = ?15, crc32 = ?16, errors = ?17, warnings = ?18, first_error = ?19,"
      " summary = ?20 WHERE id = ?1 AND status = 'receiving'");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  gsd_st_bind_text(st, 2, status);
  gsd_st_bind_text(st, 3, reason);
  sqlite3_bind_int64(st, 4, gsd_st_now_s());
  gsd_st_bind_u64(st, 5, e->objects);
  gsd_st_bind_u64(st, 6, e->bytes);
  gsd_st_bind_u64(st, 7, e->references);
  gsd_st_bind_u64(st, 8, e->roots);
  gsd_st_bind_u64(st, 9, e->types);
  if (summary_fields) {
    gsd_st_bind_u64(st, 10, e->unreachable);
    gsd_st_bind_u64(st, 11, e->dangling_references);
  }
  gsd_st_bind_u64(st, 12, e->sections);
  gsd_st_bind_u64(st, 13, e->text_bytes);
  gsd_st_bind_u64(st, 14, e->file_bytes);
  gsd_st_bind_u64(st, 15, e->wire_bytes);
  sqlite3_bind_int64(st, 16, (sqlite3_int64)e->crc32);
  gsd_st_bind_u64(st, 17, e->errors);
  gsd_st_bind_u64(st, 18, e->warnings);
  gsd_st_bind_text(st, 19, e->first_error);
  gsd_st_bind_text(st, 20, e->summary);
  return gsd_st_run_stmt(s, st, "end snapshot");
}

static int touch_device_of(gsd_store *s, int64_t id) {
  sqlite3_stmt *st = gsd_st_prepare(s,
      "UPDATE devices SET last_seen = ?2 WHERE device_id ="
      " (SELECT device_id FROM snapshots WHERE id = ?1)");
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_int64(st, 2, gsd_st_now_s());
  return gsd_st_run_stmt(s, st, "update device");
}

/* The row, the device's last_seen: one transaction, so that a listed
 * snapshot always has its figures and summary. */
static int end_snapshot(gsd_store *s, int64_t id, const char *status, const char *reason,
                        const gsd_snapshot_end *e, int summary_fields) {
  if (s->pg) return gsd_pg_snapshot_end(s, id, status, reason, e, summary_fields);
  int rc = gsd_st_exec(s, "BEGIN IMMEDIATE", "begin");
  if (rc != GS_OK) return rc;
  if ((rc = update_end(s, id, status, reason, e, summary_fields)) == GS_OK &&
      sqlite3_changes(s->db) != 1)
    rc = gsd_st_fail(s, "catalog: snapshot %lld is not being received", (long long)id);
  if (rc == GS_OK) rc = touch_device_of(s, id);
  if (rc == GS_OK) return gsd_st_exec(s, "COMMIT", "commit");
  gsd_st_exec(s, "ROLLBACK", "rollback");
  return rc;
}

int gsd_store_snapshot_complete(gsd_store *s, int64_t id, const gsd_snapshot_end *e) {
  int rc = gsd_st_check_catalog(s);
  return rc != GS_OK ? rc : end_snapshot(s, id, "complete", NULL, e, 1);
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

int gsd_store_mark_damaged(gsd_store *s, int64_t id, const char *why) {
  if (s->pg) return gsd_pg_mark_damaged(s, id, why);
  sqlite3_stmt *st = gsd_st_prepare(s, "UPDATE snapshots SET damaged = ? WHERE id = ?");
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, why);
  sqlite3_bind_int64(st, 2, id);
  return gsd_st_run_stmt(s, st, "mark a damaged snapshot");
}

/* The highest request ID issued: the counter, or (in a catalog older than
 * it) the highest recorded; IDs outside 1 to 2^63-1 were an agent's. */
uint64_t gsd_store_max_request_id(gsd_store *s) {
  if (s->pg) return gsd_pg_max_request_id(s);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "SELECT max(coalesce((SELECT value FROM counters WHERE name = 'request_id'), 0),"
      " coalesce((SELECT max(request_id) FROM snapshots WHERE request_id > 0), 0))");
  uint64_t v = 0;
  if (st && sqlite3_step(st) == SQLITE_ROW) v = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

int gsd_store_request_issued(gsd_store *s, uint64_t *id) {
  if (s->pg) return gsd_pg_request_issued(s, id);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "INSERT INTO counters(name, value) VALUES ('request_id', ?)"
      " ON CONFLICT(name) DO UPDATE SET value = max(value, excluded.value)");
  if (!st) return GS_EIO;
  gsd_st_bind_u64(st, 1, *id);
  /* Unsynced like a receiving row: a power loss may lose the last IDs,
   * a crash does not. */
  return gsd_st_run_unsynced(s, st, "record the request ID");
}

/* ---- queries --------------------------------------------------------- */

int gsd_store_list_snapshots(gsd_store *s, const char *device_id, const char *status,
                             uint64_t limit, json_t **out) {
  if (s->pg) return gsd_pg_list_snapshots(s, device_id, status, limit, out);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "SELECT " SNAPSHOT_COLUMNS " FROM snapshots"
      " WHERE status IN ('complete', 'failed') AND (?1 IS NULL OR device_id = ?1)"
      " AND (?2 IS NULL OR status = ?2) ORDER BY id DESC LIMIT ?3");
  json_t *arr, *o;
  int rc;
  *out = NULL;
  if (st) {
    gsd_st_bind_text(st, 1, device_id);
    gsd_st_bind_text(st, 2, status);
    sqlite3_bind_int64(st, 3, limit && limit < INT64_MAX ? (sqlite3_int64)limit : -1);
  }
  if ((rc = gsd_st_rows_json(s, st, 0, "list snapshots", &arr)) != GS_OK) return rc;
  if (!(o = json_object()) || gs_json_set(o, "snapshots", arr)) {
    if (!o) json_decref(arr);
    json_decref(o);
    return GS_ENOMEM;
  }
  *out = o;
  return GS_OK;
}

int gsd_store_get_snapshot(gsd_store *s, int64_t id, int with_summary, json_t **out,
                           char **path) {
  if (s->pg) return gsd_pg_get_snapshot(s, id, with_summary, out, path);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "SELECT " SNAPSHOT_COLUMNS " FROM snapshots"
      " WHERE id = ? AND status IN ('complete', 'failed')");
  int step, rc = GS_OK;
  *out = NULL;
  if (path) *path = NULL;
  if (!st) return GS_EIO;
  sqlite3_bind_int64(st, 1, id);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    *out = gsd_st_snapshot_json(st, with_summary);
    if (!*out) rc = GS_ENOMEM;
    if (rc == GS_OK && path &&
        strcmp((const char *)sqlite3_column_text(st, 3), "complete") == 0 &&
        !(*path = gsd_store_snapshot_path(s, (const char *)sqlite3_column_text(st, 1), id)))
      rc = GS_ENOMEM;
  } else {
    rc = step == SQLITE_DONE ? GS_EOF : gsd_st_db_fail(s, "get snapshot");
  }
  sqlite3_finalize(st);
  if (rc != GS_OK) {
    json_decref(*out);
    *out = NULL;
  }
  return rc;
}

int gsd_store_list_devices(gsd_store *s, json_t **out) {
  if (s->pg) return gsd_pg_list_devices(s, out);
  sqlite3_stmt *st = gsd_st_prepare(s,
      "SELECT device_id, app_name, architecture, pointer_size, agent_version, last_seen,"
      " (SELECT count(*) FROM snapshots n WHERE n.device_id = d.device_id"
      "   AND n.status = 'complete') AS snapshots,"
      " (SELECT max(id) FROM snapshots n WHERE n.device_id = d.device_id"
      "   AND n.status = 'complete') AS last_snapshot_id"
      " FROM devices d ORDER BY device_id");
  return gsd_st_rows_json(s, st, 0, "list devices", out);
}

int gsd_store_device_known(gsd_store *s, const char *device_id) {
  if (s->pg) return gsd_pg_device_known(s, device_id);
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT 1 FROM devices WHERE device_id = ?");
  int step;
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  step = sqlite3_step(st);
  sqlite3_finalize(st);
  if (step == SQLITE_ROW) return GS_OK;
  return step == SQLITE_DONE ? GS_EOF : gsd_st_db_fail(s, "find device");
}
