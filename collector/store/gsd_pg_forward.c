/* gsd_pg_forward.c - captures forwarded between collectors on a shared
 * PostgreSQL catalog (gsd_store.h): a capture asked through a collector
 * that does not hold the device's session becomes a capture_requests row
 * for the holder, which claims it (FOR UPDATE SKIP LOCKED, so a row is
 * run once), captures, and answers in the row; the asker takes the answer
 * and deletes the row. Both sides poll (gcsnapd/gsd_forward.c). The
 * state of each capture asked through a collector's API is kept in the
 * captures table, so that any collector can tell it. On a SQLite catalog no other collector holds or
 * asks anything: these find nothing and keep nothing. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gsd_pg_int.h"

int gsd_store_device_holder(gsd_store *s, const char *device_id, char *holder, size_t cap) {
  gsd_pg_args a = {0};
  PGresult *r;
  int found;
  if (!s->pg) return GS_EOF;
  gsd_pga_text(&a, device_id);
  gsd_pga_text(&a, s->pg->identity);
  if (!(r = gsd_pg_query(s, "find the device's collector", "SELECT collector FROM devices"
                         " WHERE device_id = $1 AND collector IS NOT NULL AND collector <> $2",
                         &a)))
    return GS_EIO;
  if ((found = gsd_libpq.ntuples(r) > 0)) snprintf(holder, cap, "%s", gsd_libpq.getvalue(r, 0, 0));
  gsd_libpq.clear(r);
  return found ? GS_OK : GS_EOF;
}

int gsd_store_forward_ask(gsd_store *s, const char *device_id, const char *holder,
                          int stable_ids, int64_t *id) {
  gsd_pg_args a = {0};
  PGresult *r;
  if (!s->pg) return gsd_st_fail(s, "no other collector shares this catalog");
  gsd_pga_text(&a, device_id);
  gsd_pga_i64(&a, stable_ids != 0);
  gsd_pga_text(&a, holder);
  gsd_pga_text(&a, s->pg->identity);
  if (!(r = gsd_pg_query(s, "forward a capture",
      "INSERT INTO capture_requests(device_id, stable_ids, holder, asked_by, created, status)"
      " VALUES ($1, $2, $3, $4, extract(epoch FROM now())::bigint, 'queued') RETURNING id", &a)))
    return GS_EIO;
  *id = gsd_pg_i64(r, 0, 0);
  gsd_libpq.clear(r);
  return GS_OK;
}

/* The rows of r (id, device_id, stable_ids, snapshot_id, reason) as a
 * malloc'd array; r is cleared. */
static int forwards_of(PGresult *r, gsd_forward **out, size_t *n) {
  gsd_forward *v;
  int i, rc;
  *out = NULL;
  *n = 0;
  if (!(v = gsd_pg_array(r, sizeof *v, &rc))) return rc;
  for (i = 0; i < gsd_libpq.ntuples(r); i++) {
    v[i].id = gsd_pg_i64(r, i, 0);
    snprintf(v[i].device_id, sizeof v[i].device_id, "%s", gsd_libpq.getvalue(r, i, 1));
    v[i].stable_ids = (int)gsd_pg_i64(r, i, 2);
    v[i].snapshot_id = gsd_pg_i64(r, i, 3);
    snprintf(v[i].reason, sizeof v[i].reason, "%s", gsd_libpq.getvalue(r, i, 4));
  }
  *n = (size_t)gsd_libpq.ntuples(r);
  *out = v;
  gsd_libpq.clear(r);
  return GS_OK;
}

int gsd_store_forward_take(gsd_store *s, gsd_forward **out, size_t *n) {
  gsd_pg_args a = {0};
  *out = NULL;
  *n = 0;
  if (!s->pg) return GS_OK;
  gsd_pga_text(&a, s->pg->identity);
  return forwards_of(gsd_pg_query(s, "take forwarded captures",
      "UPDATE capture_requests SET status = 'taken' WHERE id IN (SELECT id FROM"
      "   capture_requests WHERE holder = $1 AND status = 'queued' FOR UPDATE SKIP LOCKED)"
      " RETURNING id, device_id, stable_ids, snapshot_id, reason", &a), out, n);
}

int gsd_store_forward_answer(gsd_store *s, int64_t id, int64_t snapshot_id, const char *reason) {
  gsd_pg_args a = {0};
  if (!s->pg) return GS_OK;
  gsd_pga_i64(&a, id);
  gsd_pga_opt(&a, snapshot_id);
  gsd_pga_text(&a, reason);
  return gsd_pg_run(s, "answer a forwarded capture",
                    "UPDATE capture_requests SET status = 'answered', snapshot_id = $2,"
                    " reason = $3 WHERE id = $1 AND status = 'taken'", &a, NULL);
}

int gsd_store_forward_answers(gsd_store *s, gsd_forward **out, size_t *n) {
  gsd_pg_args a = {0};
  *out = NULL;
  *n = 0;
  if (!s->pg) return GS_OK;
  gsd_pga_text(&a, s->pg->identity);
  return forwards_of(gsd_pg_query(s, "read forwarded answers",
      "DELETE FROM capture_requests WHERE asked_by = $1 AND status = 'answered'"
      " RETURNING id, device_id, stable_ids, snapshot_id, coalesce(reason, '')", &a), out, n);
}

int gsd_store_capture_state(gsd_store *s, uint64_t request_id, const char *device_id,
                            const char *state, int64_t snapshot_id, const char *reason) {
  gsd_pg_args a = {0};
  if (!s->pg) return GS_OK;
  gsd_pga_u64(&a, request_id);
  gsd_pga_text(&a, device_id);
  gsd_pga_text(&a, s->pg->identity);
  gsd_pga_text(&a, state);
  gsd_pga_opt(&a, snapshot_id);
  gsd_pga_text(&a, reason);
  return gsd_pg_run(s, "record a capture's state",
      "INSERT INTO captures(request_id, device_id, collector, state, snapshot_id, reason, updated)"
      " VALUES ($1, $2, $3, $4, $5, $6, extract(epoch FROM now())::bigint)"
      " ON CONFLICT(request_id) DO UPDATE SET state = excluded.state,"
      " snapshot_id = excluded.snapshot_id, reason = excluded.reason, updated = excluded.updated",
      &a, NULL);
}

int gsd_store_capture_get(gsd_store *s, uint64_t request_id, json_t **out) {
  gsd_pg_args a = {0};
  PGresult *r;
  *out = NULL;
  if (!s->pg) return GS_EOF;
  gsd_pga_u64(&a, request_id);
  if (!(r = gsd_pg_query(s, "read a capture's state",
      "SELECT request_id, device_id, state,"
      " CASE WHEN state = 'stored' THEN snapshot_id END AS snapshot_id,"
      " CASE WHEN state = 'failed' THEN reason END AS reason"
      " FROM captures WHERE request_id = $1", &a)))
    return GS_EIO;
  if (gsd_libpq.ntuples(r) == 1 && !(*out = gsd_pg_row_json(r, 0, 0))) {
    gsd_libpq.clear(r);
    return gsd_st_fail(s, "out of memory");
  }
  gsd_libpq.clear(r);
  return *out ? GS_OK : GS_EOF;
}

int gsd_store_captures_prune(gsd_store *s, unsigned keep) {
  gsd_pg_args a = {0};
  assert(keep >= 1);
  if (!s->pg) return GS_OK;
  gsd_pga_text(&a, s->pg->identity);
  gsd_pga_i64(&a, (int64_t)keep - 1);
  return gsd_pg_run(s, "forget old captures",
      "DELETE FROM captures WHERE collector = $1 AND state IN ('stored', 'failed')"
      " AND request_id < (SELECT request_id FROM captures WHERE collector = $1"
      "   AND state IN ('stored', 'failed') ORDER BY request_id DESC OFFSET $2 LIMIT 1)",
      &a, NULL);
}
