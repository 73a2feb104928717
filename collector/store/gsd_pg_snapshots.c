/* gsd_pg_snapshots.c - devices, sessions and snapshots in the PostgreSQL
 * catalog (gsd_pg.c): the statements of gsd_store_snapshots.c, plus which
 * collector holds each device and each snapshot being received. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_pg_int.h"

#define NOW "extract(epoch FROM now())::bigint"

/* ---- devices and sessions -------------------------------------------- */

int gsd_pg_session_begin(gsd_store *s, const gsd_device_info *d, const char *address,
                         int64_t *session_id) {
  gsd_pg_args a = {0};
  PGresult *r;
  gsd_pga_text(&a, d->device_id);
  gsd_pga_text(&a, d->app_name);
  gsd_pga_text(&a, d->architecture);
  gsd_pga_i64(&a, d->pointer_size);
  gsd_pga_text(&a, d->agent_version);
  gsd_pga_text(&a, s->pg->identity);
  gsd_pga_text(&a, address);
  gsd_pga_i64(&a, d->protocol_version);
  /* One statement: the device is held by this collector from its session's
   * first row on. */
  r = gsd_pg_query(s, "record session",
      "WITH d AS (INSERT INTO devices(device_id, app_name, architecture, pointer_size,"
      "   agent_version, first_seen, last_seen, collector)"
      "   VALUES ($1, $2, $3, $4, $5, " NOW ", " NOW ", $6)"
      "   ON CONFLICT(device_id) DO UPDATE SET app_name = $2, architecture = $3,"
      "   pointer_size = $4, agent_version = $5, last_seen = " NOW ", collector = $6"
      "   RETURNING device_id)"
      " INSERT INTO sessions(device_id, address, protocol_version, agent_version, started,"
      "   collector) SELECT device_id, $7, $8, $5, " NOW ", $6 FROM d RETURNING id", &a);
  if (!r) return GS_EIO;
  *session_id = gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  return GS_OK;
}

int gsd_pg_session_end(gsd_store *s, int64_t session_id, const char *device_id,
                       const char *reason) {
  gsd_pg_args a = {0};
  gsd_pga_i64(&a, session_id);
  gsd_pga_text(&a, reason);
  gsd_pga_text(&a, device_id);
  gsd_pga_text(&a, s->pg->identity);
  /* The device stays held by whichever collector it has moved to. */
  return gsd_pg_run(s, "end session",
      "WITH e AS (UPDATE sessions SET ended = " NOW ", end_reason = $2 WHERE id = $1)"
      " UPDATE devices SET last_seen = " NOW ","
      "   collector = CASE WHEN collector = $4 THEN NULL ELSE collector END"
      " WHERE device_id = $3", &a, NULL);
}

int gsd_pg_device_add(gsd_store *s, const char *device_id) {
  gsd_pg_args a = {0};
  gsd_pga_text(&a, device_id);
  return gsd_pg_run(s, "record device",
                    "INSERT INTO devices(device_id, first_seen, last_seen) VALUES ($1, " NOW ", "
                    NOW ") ON CONFLICT(device_id) DO NOTHING", &a, NULL);
}

/* ---- snapshots ------------------------------------------------------- */

int gsd_pg_find_complete(gsd_store *s, const char *device_id, uint64_t agent_id, int64_t *id) {
  gsd_pg_args a = {0};
  PGresult *r;
  int found;
  gsd_pga_text(&a, device_id);
  gsd_pga_u64(&a, agent_id);
  if (!(r = gsd_pg_query(s, "find snapshot", "SELECT id FROM snapshots WHERE device_id = $1"
                         " AND agent_snapshot_id = $2 AND status = 'complete'", &a)))
    return GS_EIO;
  if ((found = gsd_libpq.ntuples(r) > 0)) *id = gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  return found ? GS_OK : GS_EOF;
}

int gsd_pg_snapshot_begin(gsd_store *s, const gsd_snapshot_begin *b, int64_t *id) {
  gsd_pg_args a = {0};
  PGresult *r;
  int rc;
  if ((rc = gsd_st_make_device_dir(s, b->device_id)) != GS_OK) return rc;
  gsd_pga_text(&a, b->device_id);
  gsd_pga_opt(&a, b->session_id);   /* none for an upload: NULL, for the foreign key */
  gsd_pga_opt(&a, (int64_t)b->request_id);
  gsd_pga_u64(&a, b->agent_snapshot_id);
  gsd_pga_text(&a, b->trigger);
  gsd_pga_i64(&a, b->stable_ids != 0);
  gsd_pga_u64(&a, b->clock_ms);
  gsd_pga_opt(&a, b->schedule_id);
  gsd_pga_text(&a, s->pg->identity);
  gsd_pga_text(&a, b->source_format);
  gsd_pga_text(&a, b->note);
  /* Not waited for on disk, as in SQLite: the row matters only until the
   * snapshot ends, and that end is a synchronous commit. */
  if (gsd_pg_run(s, "record snapshot", "BEGIN; SET LOCAL synchronous_commit = off", NULL, NULL))
    return GS_EIO;
  r = gsd_pg_query(s, "record snapshot",
      "INSERT INTO snapshots(device_id, session_id, created, status, request_id,"
      " agent_snapshot_id, trigger, stable_ids, clock_ms, schedule_id, collector,"
      " source_format, note)"
      " VALUES ($1, $2, " NOW ", 'receiving', $3, $4, $5, $6, $7, $8, $9, $10, $11)"
      " RETURNING id", &a);
  if (r) *id = gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  return gsd_pg_finish(s, r ? GS_OK : GS_EIO);
}

int gsd_pg_snapshot_format(gsd_store *s, int64_t id, const char *format) {
  gsd_pg_args a = {0};
  gsd_pga_i64(&a, id);
  gsd_pga_text(&a, format);
  return gsd_pg_run(s, "record the source format",
                    "UPDATE snapshots SET source_format = $2 WHERE id = $1", &a, NULL);
}

/* The row and its device's last_seen in one statement, so that a listed
 * snapshot always has its figures and summary. */
int gsd_pg_snapshot_end(gsd_store *s, int64_t id, const char *status, const char *reason,
                        const gsd_snapshot_end *e, int summary_fields) {
  gsd_pg_args a = {0};
  uint64_t changed = 0;
  int rc;
  gsd_pga_i64(&a, id);
  gsd_pga_text(&a, status);
  gsd_pga_text(&a, reason);
  gsd_pga_u64(&a, e->objects);
  gsd_pga_u64(&a, e->bytes);
  gsd_pga_u64(&a, e->references);
  gsd_pga_u64(&a, e->roots);
  gsd_pga_u64(&a, e->types);
  if (summary_fields) {
    gsd_pga_u64(&a, e->unreachable);
    gsd_pga_u64(&a, e->dangling_references);
  } else {
    gsd_pga_text(&a, NULL);
    gsd_pga_text(&a, NULL);
  }
  gsd_pga_u64(&a, e->sections);
  gsd_pga_u64(&a, e->text_bytes);
  gsd_pga_u64(&a, e->file_bytes);
  gsd_pga_u64(&a, e->wire_bytes);
  gsd_pga_i64(&a, (int64_t)e->crc32);
  gsd_pga_u64(&a, e->errors);
  gsd_pga_u64(&a, e->warnings);
  gsd_pga_text(&a, e->first_error);
  gsd_pga_text(&a, e->summary);
  rc = gsd_pg_run(s, "end snapshot",
      "WITH u AS (UPDATE snapshots SET status = $2, reason = $3, finished = " NOW ","
      "   objects = $4, bytes = $5, refs = $6, roots = $7, types = $8, unreachable = $9,"
      "   dangling_references = $10, sections = $11, text_bytes = $12, file_bytes = $13,"
      "   wire_bytes = $14, crc32 = $15, errors = $16, warnings = $17, first_error = $18,"
      "   summary = $19 WHERE id = $1 AND status = 'receiving' RETURNING device_id)"
      " UPDATE devices SET last_seen = " NOW " WHERE device_id IN (SELECT device_id FROM u)",
      &a, &changed);
  if (rc == GS_OK && changed != 1)
    rc = gsd_st_fail(s, "catalog: snapshot %lld is not being received", (long long)id);
  return rc;
}

uint64_t gsd_pg_max_request_id(gsd_store *s) {
  PGresult *r = gsd_pg_query(s, "request IDs",
      "SELECT greatest((SELECT value FROM counters WHERE name = 'request_id'),"
      " (SELECT max(request_id) FROM snapshots WHERE request_id > 0), 0)", NULL);
  uint64_t v = r ? (uint64_t)gsd_pg_i64(r, 0, 0) : 0;
  gsd_libpq.clear(r);
  return v;
}

/* Collectors share the counter, so that no two of them issue one ID: the
 * ID is the counter's next value, or *id when that is higher. */
int gsd_pg_request_issued(gsd_store *s, uint64_t *id) {
  gsd_pg_args a = {0};
  PGresult *r;
  gsd_pga_u64(&a, *id);
  r = gsd_pg_query(s, "record the request ID",
      "INSERT INTO counters(name, value) VALUES ('request_id', $1)"
      " ON CONFLICT(name) DO UPDATE SET value = greatest(counters.value + 1, excluded.value)"
      " RETURNING value", &a);
  if (r) *id = (uint64_t)gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  return r ? GS_OK : GS_EIO;
}

int gsd_pg_mark_damaged(gsd_store *s, int64_t id, const char *why) {
  gsd_pg_args a = {0};
  gsd_pga_i64(&a, id);
  gsd_pga_text(&a, why);
  return gsd_pg_run(s, "mark a damaged snapshot", "UPDATE snapshots SET damaged = $2 WHERE id = $1",
                    &a, NULL);
}

/* ---- queries --------------------------------------------------------- */

int gsd_pg_list_snapshots(gsd_store *s, const char *device_id, const char *status,
                          uint64_t limit, json_t **out) {
  gsd_pg_args a = {0};
  json_t *arr, *o;
  int rc;
  *out = NULL;
  gsd_pga_text(&a, device_id);
  gsd_pga_text(&a, status);
  gsd_pga_opt(&a, limit && limit < INT64_MAX ? (int64_t)limit : 0);
  rc = gsd_pg_rows_json(s, gsd_pg_query(s, "list snapshots",
      "SELECT " SNAPSHOT_COLUMNS " FROM snapshots"
      " WHERE status IN ('complete', 'failed') AND ($1::text IS NULL OR device_id = $1)"
      " AND ($2::text IS NULL OR status = $2) ORDER BY id DESC LIMIT $3::bigint", &a), 0, &arr);
  if (rc != GS_OK) return rc;
  if (!(o = json_object()) || gs_json_set(o, "snapshots", arr)) {
    if (!o) json_decref(arr);
    json_decref(o);
    return GS_ENOMEM;
  }
  *out = o;
  return GS_OK;
}

int gsd_pg_get_snapshot(gsd_store *s, int64_t id, int with_summary, json_t **out,
                        char **path) {
  gsd_pg_args a = {0};
  PGresult *r;
  int rc = GS_OK;
  *out = NULL;
  if (path) *path = NULL;
  gsd_pga_i64(&a, id);
  if (!(r = gsd_pg_query(s, "get snapshot", "SELECT " SNAPSHOT_COLUMNS " FROM snapshots"
                         " WHERE id = $1 AND status IN ('complete', 'failed')", &a)))
    return GS_EIO;
  if (gsd_libpq.ntuples(r) == 0) rc = GS_EOF;
  else if (!(*out = gsd_pg_row_json(r, 0, with_summary)) ||
           (path && strcmp(gsd_libpq.getvalue(r, 0, 3), "complete") == 0 &&
            !(*path = gsd_store_snapshot_path(s, gsd_libpq.getvalue(r, 0, 1), id))))
    rc = GS_ENOMEM;
  gsd_libpq.clear(r);
  if (rc != GS_OK) {
    json_decref(*out);
    *out = NULL;
  }
  return rc;
}

int gsd_pg_list_devices(gsd_store *s, json_t **out) {
  return gsd_pg_rows_json(s, gsd_pg_query(s, "list devices",
      "SELECT device_id, app_name, architecture, pointer_size, agent_version, last_seen,"
      " (SELECT count(*) FROM snapshots n WHERE n.device_id = d.device_id"
      "   AND n.status = 'complete') AS snapshots,"
      " (SELECT max(id) FROM snapshots n WHERE n.device_id = d.device_id"
      "   AND n.status = 'complete') AS last_snapshot_id,"
      " collector FROM devices d ORDER BY device_id", NULL), 0, out);
}

int gsd_pg_device_known(gsd_store *s, const char *device_id) {
  gsd_pg_args a = {0};
  PGresult *r;
  int found;
  gsd_pga_text(&a, device_id);
  if (!(r = gsd_pg_query(s, "find device", "SELECT 1 FROM devices WHERE device_id = $1", &a)))
    return GS_EIO;
  found = gsd_libpq.ntuples(r) > 0;
  gsd_libpq.clear(r);
  return found ? GS_OK : GS_EOF;
}
