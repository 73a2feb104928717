/* gsd_store_keys.c - device keys in the catalog: the verifier SHA-256(K)
 * of each device's key K, never K (gsd_auth.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_store_int.h"

/* ---- device keys ----------------------------------------------------- */

int gsd_store_key_count(gsd_store *s, uint64_t *n) {
  if (s->pg) return gsd_pg_key_count(s, n);
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT count(*) FROM device_keys");
  int step;
  *n = 0;
  if (!st) return GS_EIO;
  step = sqlite3_step(st);
  if (step == SQLITE_ROW) *n = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return step == SQLITE_ROW ? GS_OK : gsd_st_db_fail(s, "count keys");
}

int gsd_store_key_verifier(gsd_store *s, const char *device_id, uint8_t *verifier, size_t len) {
  if (s->pg) return gsd_pg_key_verifier(s, device_id, verifier, len);
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT verifier FROM device_keys WHERE device_id = ?");
  int step, rc;
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  step = sqlite3_step(st);
  if (step == SQLITE_ROW && (size_t)sqlite3_column_bytes(st, 0) == len) {
    memcpy(verifier, sqlite3_column_blob(st, 0), len);
    rc = GS_OK;
  } else if (step == SQLITE_ROW) {
    rc = gsd_st_fail(s, "catalog: the key of device '%s' is damaged", device_id);
  } else {
    rc = step == SQLITE_DONE ? GS_EOF : gsd_st_db_fail(s, "find key");
  }
  sqlite3_finalize(st);
  return rc;
}

int gsd_store_key_set(gsd_store *s, const char *device_id, const uint8_t *verifier, size_t len,
                      int replace) {
  if (s->pg) return gsd_pg_key_set(s, device_id, verifier, len, replace);
  sqlite3_stmt *st = gsd_st_prepare(s, replace
      ? "INSERT OR REPLACE INTO device_keys(device_id, verifier, created) VALUES (?, ?, ?)"
      : "INSERT OR IGNORE INTO device_keys(device_id, verifier, created) VALUES (?, ?, ?)");
  int rc;
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  sqlite3_bind_blob(st, 2, verifier, (int)len, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 3, gsd_st_now_s());
  if ((rc = gsd_st_run_stmt(s, st, "store key")) != GS_OK) return rc;
  if (sqlite3_changes(s->db) == 0) {
    gsd_st_fail(s, "device '%s' already has a key", device_id);
    return GS_EINVAL;
  }
  return GS_OK;
}

int gsd_store_key_remove(gsd_store *s, const char *device_id) {
  if (s->pg) return gsd_pg_key_remove(s, device_id);
  sqlite3_stmt *st = gsd_st_prepare(s, "DELETE FROM device_keys WHERE device_id = ?");
  int rc;
  if (!st) return GS_EIO;
  gsd_st_bind_text(st, 1, device_id);
  if ((rc = gsd_st_run_stmt(s, st, "remove key")) != GS_OK) return rc;
  return sqlite3_changes(s->db) ? GS_OK : GS_EOF;
}

int gsd_store_list_keys(gsd_store *s, json_t **out) {
  if (s->pg) return gsd_pg_list_keys(s, out);
  sqlite3_stmt *st = gsd_st_prepare(s, "SELECT device_id, created FROM device_keys ORDER BY device_id");
  return gsd_st_rows_json(s, st, 0, "list keys", out);
}
