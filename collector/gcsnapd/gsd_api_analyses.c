/* gsd_api_analyses.c - the analyses of a stored snapshot through the API:
 * GET /api/snapshots/ID/dominators and .../paths, GET /api/diff and GET
 * /api/devices/ID/trend. Each checks its parameters, finds the files and
 * hands them to the analysis runner (gsd_analysis.c). */
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

int gsd_api_dominators(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char top[16], *path;
  int by_type, rc;
  const char *args[8] = {"dominators", "--json", "--top", top};
  if (gsd_query_count(req, "top", "20", top, sizeof top) || gsd_query_flag(req, "by_type", &by_type))
    return gsd_respond_error(req, 400, "bad_request", "top takes a count, by_type 1 or 0");
  if (!(path = gsd_api_snapshot_file(srv, req, id_text))) return 0;
  args[4] = by_type ? "--by-type" : path;
  args[5] = by_type ? path : NULL;
  rc = gsd_analysis_run(srv, req, args);
  free(path);
  return rc;
}

int gsd_api_paths(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char max[16], what[1024], *path;
  int rc, object = gsd_query_get(req, "object", what, sizeof what), type = 0;
  const char *args[8] = {"paths", "--json", "--max", max, "--object", what};
  if (object == 0) type = gsd_query_get(req, "type", what, sizeof what);
  if (gsd_query_count(req, "max", "5", max, sizeof max) || object < 0 || type < 0 || (!object && !type))
    return gsd_respond_error(req, 400, "bad_request", "give object=ID (hex) or type=NAME, and max a count");
  if (type) args[4] = "--type";
  else if (strspn(what, "0123456789abcdefABCDEFx") != strlen(what))
    return gsd_respond_error(req, 400, "bad_request", "object takes a hex object ID");
  if (!(path = gsd_api_snapshot_file(srv, req, id_text))) return 0;
  args[6] = path;
  rc = gsd_analysis_run(srv, req, args);
  free(path);
  return rc;
}

int gsd_api_diff(gsd_server *srv, h2o_req_t *req) {
  char old_id[32], new_id[32], top[16], *old_path = NULL, *new_path = NULL;
  const char *args[8] = {"diff", "--json", "--top", top};
  int rc = 0;
  if (gsd_query_get(req, "old", old_id, sizeof old_id) != 1 || gsd_query_get(req, "new", new_id, sizeof new_id) != 1 ||
      gsd_query_count(req, "top", "30", top, sizeof top))
    return gsd_respond_error(req, 400, "bad_request", "give old=ID and new=ID (and top a count)");
  if ((old_path = gsd_api_snapshot_file(srv, req, old_id)) && (new_path = gsd_api_snapshot_file(srv, req, new_id))) {
    args[4] = old_path;
    args[5] = new_path;
    rc = gsd_analysis_run(srv, req, args);
  }
  free(old_path);
  free(new_path);
  return rc;
}

/* The last N complete snapshots of a device, oldest first. */
int gsd_api_trend(gsd_server *srv, h2o_req_t *req, const char *device_id) {
  char last[16], top[16], threshold[16];
  const char *args[16] = {"trend", "--json", "--top", top, "--threshold", threshold};
  char *paths[10] = {NULL};
  json_t *list = NULL, *rows;
  uint64_t n;
  size_t i, count;
  int rc = 0;
  if (gsd_query_count(req, "last", "10", last, sizeof last) || gsd_query_count(req, "top", "10", top, sizeof top) ||
      gsd_query_count(req, "threshold", "20", threshold, sizeof threshold) || gsd_request_u64(last, 10, &n) || n < 2)
    return gsd_respond_error(req, 400, "bad_request", "last takes 2 to 10 snapshots; top and threshold counts");
  if (gsd_store_list_snapshots(srv->store, device_id, "complete", n, &list) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  rows = json_object_get(list, "snapshots");
  count = json_array_size(rows);
  if (count < 2) {
    json_decref(list);
    return gsd_respond_error(req, 404, "not_found", "device %s has %zu complete snapshots; a trend needs 2",
                         device_id, count);
  }
  for (i = 0; i < count; i++) {
    json_t *row = json_array_get(rows, count - 1 - i);
    paths[i] = gsd_store_snapshot_path(srv->store, device_id,
                                       (int64_t)json_integer_value(json_object_get(row, "id")));
    args[6 + i] = paths[i];
  }
  rc = gsd_analysis_run(srv, req, args);
  for (i = 0; i < count; i++) free(paths[i]);
  json_decref(list);
  return rc;
}
