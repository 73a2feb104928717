/* gsd_pg_schedules.c - schedules, their runs, retention and device keys in
 * the PostgreSQL catalog (gsd_pg.c): the statements of
 * gsd_store_schedules.c and gsd_store_keys.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_pg_int.h"

/* ---- schedules ------------------------------------------------------- */

int gsd_pg_schedule_add(gsd_store *s, gsd_schedule *sch) {
  gsd_pg_args a = {0};
  struct timespec ts;
  PGresult *r;
  clock_gettime(CLOCK_REALTIME, &ts);
  sch->created_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  gsd_pga_text(&a, sch->device);
  gsd_pga_u64(&a, sch->every_ms);
  gsd_pga_u64(&a, sch->jitter_ms);
  gsd_pga_opt(&a, sch->start_s);
  gsd_pga_opt(&a, sch->end_s);
  gsd_pga_opt(&a, (int64_t)sch->keep);
  gsd_pga_opt(&a, (int64_t)sch->max_bytes);
  gsd_pga_i64(&a, sch->created_ms);
  if (!(r = gsd_pg_query(s, "add schedule",
      "INSERT INTO schedules(device, every_ms, jitter_ms, start_at, end_at, keep, max_bytes,"
      " created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id", &a)))
    return GS_EIO;
  sch->id = gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  return GS_OK;
}

int gsd_pg_schedule_remove(gsd_store *s, int64_t id) {
  gsd_pg_args a = {0};
  uint64_t changed = 0;
  gsd_pga_i64(&a, id);
  if (gsd_pg_run(s, "remove schedule",
                 "WITH r AS (DELETE FROM schedule_runs WHERE schedule_id = $1)"
                 " DELETE FROM schedules WHERE id = $1", &a, &changed) != GS_OK)
    return GS_EIO;
  return changed ? GS_OK : GS_EOF;
}

int gsd_pg_schedules(gsd_store *s, gsd_schedule **out, size_t *n) {
  PGresult *r = gsd_pg_query(s, "list schedules",
      "SELECT id, device, every_ms, jitter_ms, start_at, end_at, keep, max_bytes, created_ms"
      " FROM schedules ORDER BY id", NULL);
  gsd_schedule *v;
  int i, rc;
  *out = NULL;
  *n = 0;
  if (!(v = gsd_pg_array(r, sizeof *v, &rc))) return rc;
  for (i = 0; i < gsd_libpq.ntuples(r); i++) {
    v[i].id = gsd_pg_i64(r, i, 0);
    snprintf(v[i].device, sizeof v[i].device, "%s", gsd_libpq.getvalue(r, i, 1));
    v[i].every_ms = (uint64_t)gsd_pg_i64(r, i, 2);
    v[i].jitter_ms = (uint64_t)gsd_pg_i64(r, i, 3);
    v[i].start_s = gsd_pg_i64(r, i, 4);
    v[i].end_s = gsd_pg_i64(r, i, 5);
    v[i].keep = (uint64_t)gsd_pg_i64(r, i, 6);
    v[i].max_bytes = (uint64_t)gsd_pg_i64(r, i, 7);
    v[i].created_ms = gsd_pg_i64(r, i, 8);
  }
  *n = (size_t)gsd_libpq.ntuples(r);
  *out = v;
  gsd_libpq.clear(r);
  return GS_OK;
}

int gsd_pg_schedule_runs(gsd_store *s, gsd_schedule_run **out, size_t *n) {
  PGresult *r = gsd_pg_query(s, "list schedule runs",
                             "SELECT schedule_id, device_id, last_ms FROM schedule_runs", NULL);
  gsd_schedule_run *v;
  int i, rc;
  *out = NULL;
  *n = 0;
  if (!(v = gsd_pg_array(r, sizeof *v, &rc))) return rc;
  for (i = 0; i < gsd_libpq.ntuples(r); i++) {
    v[i].schedule_id = gsd_pg_i64(r, i, 0);
    snprintf(v[i].device_id, sizeof v[i].device_id, "%s", gsd_libpq.getvalue(r, i, 1));
    v[i].last_ms = gsd_pg_i64(r, i, 2);
  }
  *n = (size_t)gsd_libpq.ntuples(r);
  *out = v;
  gsd_libpq.clear(r);
  return GS_OK;
}

int gsd_pg_schedule_ran(gsd_store *s, int64_t schedule_id, const char *device_id, int64_t ms) {
  gsd_pg_args a = {0};
  gsd_pga_i64(&a, schedule_id);
  gsd_pga_text(&a, device_id);
  gsd_pga_i64(&a, ms);
  return gsd_pg_run(s, "record schedule run",
      "INSERT INTO schedule_runs(schedule_id, device_id, last_ms) VALUES ($1, $2, $3)"
      " ON CONFLICT(schedule_id, device_id) DO UPDATE SET last_ms = $3", &a, NULL);
}

/* The run's row is locked by the upsert, so of collectors claiming the
 * same period at once the first one's row wins and the others see its
 * last_ms, already in the period. */
int gsd_pg_schedule_claim(gsd_store *s, int64_t schedule_id, const char *device_id,
                          int64_t due_ms, int64_t ms) {
  gsd_pg_args a = {0};
  uint64_t changed = 0;
  gsd_pga_i64(&a, schedule_id);
  gsd_pga_text(&a, device_id);
  gsd_pga_i64(&a, ms);
  gsd_pga_i64(&a, due_ms);
  if (gsd_pg_run(s, "claim a schedule run",
      "INSERT INTO schedule_runs(schedule_id, device_id, last_ms) VALUES ($1, $2, $3)"
      " ON CONFLICT(schedule_id, device_id) DO UPDATE SET last_ms = $3"
      " WHERE schedule_runs.last_ms < $4", &a, &changed) != GS_OK)
    return GS_EIO;
  return changed ? GS_OK : GS_EOF;
}

/* ---- retention ------------------------------------------------------- */

/* One transaction, under the device's rows locked: the rows beyond the rule
 * go and their files are queued for removal, so two collectors applying
 * the same rule remove each snapshot once. Returns the files' paths. */
static PGresult *unlist(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes) {
  gsd_pg_args a = {0};
  gsd_pga_text(&a, device_id);
  gsd_pga_opt(&a, (int64_t)keep);
  gsd_pga_opt(&a, (int64_t)max_bytes);
  /* Once one is dropped, every older one is too: the rule keeps the newest. */
  return gsd_pg_query(s, "apply retention",
      "WITH c AS (SELECT id, row_number() OVER w AS n, sum(file_bytes) OVER w AS total"
      "   FROM (SELECT id, file_bytes FROM snapshots WHERE device_id = $1"
      "     AND status = 'complete' ORDER BY id DESC FOR UPDATE) k"
      "   WINDOW w AS (ORDER BY id DESC)),"
      " first AS (SELECT min(n) AS n FROM c WHERE n > 1 AND"
      "   (($2::bigint IS NOT NULL AND n > $2) OR ($3::bigint IS NOT NULL AND total > $3))),"
      " gone AS (DELETE FROM snapshots WHERE id IN"
      "   (SELECT c.id FROM c, first WHERE c.n >= first.n) RETURNING id)"
      " SELECT id FROM gone", &a);
}

/* Queues each removed file, then removes it. */
static int remove_files(gsd_store *s, const char *device_id, PGresult *r) {
  int i, rc = GS_OK;
  for (i = 0; rc == GS_OK && i < gsd_libpq.ntuples(r); i++) {
    gsd_pg_args a = {0};
    char *path = gsd_store_snapshot_path(s, device_id, gsd_pg_i64(r, i, 0));
    if (!path) return GS_ENOMEM;
    gsd_pga_text(&a, path);
    rc = gsd_pg_run(s, "queue a file for removal",
                    "INSERT INTO removals(path) VALUES ($1) ON CONFLICT DO NOTHING", &a, NULL);
    free(path);
  }
  return rc;
}

int gsd_pg_retain(gsd_store *s, const char *device_id, uint64_t keep, uint64_t max_bytes,
                  unsigned *removed) {
  PGresult *r;
  int rc, i;
  *removed = 0;
  if (gsd_pg_run(s, "begin", "BEGIN", NULL, NULL) != GS_OK) return GS_EIO;
  if (!(r = unlist(s, device_id, keep, max_bytes))) return gsd_pg_finish(s, GS_EIO);
  if ((rc = gsd_pg_finish(s, remove_files(s, device_id, r))) == GS_OK) {
    for (i = 0; i < gsd_libpq.ntuples(r); i++) {
      char *path = gsd_store_snapshot_path(s, device_id, gsd_pg_i64(r, i, 0));
      gsd_pg_args a = {0};
      if (path && gsd_st_unlink_snapshot(path) != 0 && errno != ENOENT)
        rc = gsd_st_fail(s, "cannot remove '%s': %s", path, strerror(errno));
      gsd_pga_text(&a, path);
      if (path && rc == GS_OK)
        rc = gsd_pg_run(s, "remove files", "DELETE FROM removals WHERE path = $1", &a, NULL);
      free(path);
    }
    *removed = (unsigned)gsd_libpq.ntuples(r);
  }
  gsd_libpq.clear(r);
  return rc;
}

/* ---- device keys ----------------------------------------------------- */

int gsd_pg_key_count(gsd_store *s, uint64_t *n) {
  PGresult *r = gsd_pg_query(s, "count keys", "SELECT count(*) FROM device_keys", NULL);
  *n = r ? (uint64_t)gsd_pg_i64(r, 0, 0) : 0;
  gsd_libpq.clear(r);
  return r ? GS_OK : GS_EIO;
}

int gsd_pg_key_verifier(gsd_store *s, const char *device_id, uint8_t *verifier, size_t len) {
  gsd_pg_args a = {0};
  PGresult *r;
  unsigned char *bin = NULL;
  size_t n = 0;
  int rc;
  gsd_pga_text(&a, device_id);
  if (!(r = gsd_pg_query(s, "find key", "SELECT verifier FROM device_keys WHERE device_id = $1",
                         &a)))
    return GS_EIO;
  if (gsd_libpq.ntuples(r) == 0) rc = GS_EOF;
  else if (!(bin = gsd_libpq.unescapeBytea((const unsigned char *)gsd_libpq.getvalue(r, 0, 0),
                                           &n)) || n != len)
    rc = gsd_st_fail(s, "catalog: the key of device '%s' is damaged", device_id);
  else {
    memcpy(verifier, bin, len);
    rc = GS_OK;
  }
  gsd_libpq.freemem(bin);
  gsd_libpq.clear(r);
  return rc;
}

int gsd_pg_key_set(gsd_store *s, const char *device_id, const uint8_t *verifier, size_t len,
                   int replace) {
  static const char digits[] = "0123456789abcdef";
  gsd_pg_args a = {0};
  char *hex = malloc(len * 2 + 3);
  uint64_t changed = 0;
  size_t i;
  int rc;
  if (!hex) return GS_ENOMEM;
  memcpy(hex, "\\x", 2);
  for (i = 0; i < len; i++) {
    hex[2 + 2 * i] = digits[verifier[i] >> 4];
    hex[3 + 2 * i] = digits[verifier[i] & 15];
  }
  hex[2 + 2 * len] = '\0';
  gsd_pga_text(&a, device_id);
  gsd_pga_text(&a, hex);
  rc = gsd_pg_run(s, "store key", replace
      ? "INSERT INTO device_keys(device_id, verifier, created) VALUES ($1, $2::bytea,"
        " extract(epoch FROM now())::bigint) ON CONFLICT(device_id) DO UPDATE"
        " SET verifier = $2::bytea, created = extract(epoch FROM now())::bigint"
      : "INSERT INTO device_keys(device_id, verifier, created) VALUES ($1, $2::bytea,"
        " extract(epoch FROM now())::bigint) ON CONFLICT DO NOTHING", &a, &changed);
  free(hex);
  if (rc == GS_OK && changed == 0) {
    gsd_st_fail(s, "device '%s' already has a key", device_id);
    return GS_EINVAL;
  }
  return rc;
}

int gsd_pg_key_remove(gsd_store *s, const char *device_id) {
  gsd_pg_args a = {0};
  uint64_t changed = 0;
  gsd_pga_text(&a, device_id);
  if (gsd_pg_run(s, "remove key", "DELETE FROM device_keys WHERE device_id = $1", &a, &changed))
    return GS_EIO;
  return changed ? GS_OK : GS_EOF;
}

int gsd_pg_list_keys(gsd_store *s, json_t **out) {
  return gsd_pg_rows_json(s, gsd_pg_query(s, "list keys",
      "SELECT device_id, created FROM device_keys ORDER BY device_id", NULL), 0, out);
}
