/* gsd_api_snapshots.c - GET /api/snapshots (the catalog's snapshots,
 * filtered by device and status) and GET /api/snapshots/ID (one row). */
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

int gsd_api_snapshots(gsd_server *srv, h2o_req_t *req) {
  char device[256], status[32], limit_text[32];
  int has_device = gsd_query_get(req, "device", device, sizeof device);
  int has_status = gsd_query_get(req, "status", status, sizeof status);
  int has_limit = gsd_query_get(req, "limit", limit_text, sizeof limit_text);
  uint64_t limit = 0;
  json_t *o = NULL;
  if (has_device < 0) return gsd_respond_error(req, 400, "bad_request", "bad device parameter");
  if (has_status < 0 || (has_status && strcmp(status, "complete") && strcmp(status, "failed")))
    return gsd_respond_error(req, 400, "bad_request", "status must be complete or failed");
  if (has_limit < 0 || (has_limit && gsd_request_u64(limit_text, INT64_MAX, &limit)))
    return gsd_respond_error(req, 400, "bad_request", "limit must be a number");
  if (gsd_store_list_snapshots(srv->store, has_device ? device : NULL,
                               has_status ? status : NULL, limit, &o) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  return gsd_respond_json(req, 200, o);
}

int gsd_api_snapshot(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  json_t *o;
  int64_t id;
  int rc;
  if (gsd_request_id(id_text, &id)) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(srv->store, id, 1, &o, NULL);
  if (rc == GS_EOF) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  return gsd_respond_json(req, 200, o);
}

/* The stored file of a complete snapshot, or NULL after answering req. */
char *gsd_api_snapshot_file(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  json_t *o = NULL;
  char *path = NULL;
  int64_t id;
  int rc;
  if (gsd_request_id(id_text, &id)) { gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text); return NULL; }
  rc = gsd_store_get_snapshot(srv->store, id, 0, &o, &path);
  if (rc == GS_EOF) gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  else if (rc != GS_OK) gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  else if (!path) gsd_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
  else if (gsd_api_check_size(srv, req, id, o, path)) rc = GS_EFORMAT;
  json_decref(o);
  if (rc != GS_OK) free(path);
  return rc == GS_OK ? path : NULL;
}
