/* gsd_api_analyses.c - the analyses of stored snapshots through the API:
 * GET /api/snapshots/ID/dominators and .../paths, GET /api/diff and GET
 * /api/devices/ID/trend. Each checks its parameters, finds the files and
 * hands them to the analysis runner (gsd_analysis.c). And what the runner
 * is doing with a snapshot: GET /api/snapshots/ID/progress. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "h2o.h"
#include "gs_error.h"
#include "gsd_analysis.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

/* A count of the query (at most 2^32 - 1), def when absent; -1 when bad. */
static int count(const h2o_req_t *req, const char *key, const char *def, uint64_t *v) {
  char text[16];
  if (gsd_query_count(req, key, def, text, sizeof text)) return -1;
  return gsd_request_u64(text, UINT32_MAX, v) ? -1 : 0;
}

/* Adds the file of snapshot id_text to a; 0 once req is answered. */
static int add_snapshot(gsd_server *srv, h2o_req_t *req, gsd_analysis *a, const char *id_text) {
  char *path = gsd_api_snapshot_file(srv, req, id_text);
  if (!path) return 0;
  a->files[a->nfiles++] = path;
  return 1;
}

/* Runs a once it has its files; else it is dropped (req was answered). */
static int run(gsd_server *srv, h2o_req_t *req, gsd_analysis *a, int ready) {
  if (ready) return gsd_analysis_run(srv, req, a);
  gsd_analysis_free(a);
  return 0;
}

static int out_of_memory(h2o_req_t *req) {
  return gsd_respond_error(req, 500, "internal", "out of memory");
}

int gsd_api_dominators(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  gsd_analysis *a;
  uint64_t top;
  int by_type;
  char parent[2];
  if (gsd_query_get(req, "parent", parent, sizeof parent)) return gsd_api_domtree(srv, req, id_text);
  if (count(req, "top", "20", &top) || gsd_query_flag(req, "by_type", &by_type))
    return gsd_respond_error(req, 400, "bad_request", "top takes a count, by_type 1 or 0");
  if (!(a = gsd_analysis_new(GSD_ANALYSIS_DOMINATORS))) return out_of_memory(req);
  a->top = top;
  a->by_type = by_type;
  return run(srv, req, a, add_snapshot(srv, req, a, id_text));
}

int gsd_api_paths(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char what[1024];
  gsd_analysis *a;
  uint64_t max, object_id = 0;
  int object = gsd_query_get(req, "object", what, sizeof what), type = 0;
  if (object == 0) type = gsd_query_get(req, "type", what, sizeof what);
  if (count(req, "max", "5", &max) || object < 0 || type < 0 || (!object && !type))
    return gsd_respond_error(req, 400, "bad_request", "give object=ID (hex) or type=NAME, and max a count");
  if (object && gsd_request_object_id(what, &object_id))
    return gsd_respond_error(req, 400, "bad_request", "object takes a hex object ID of at most "
                             "64 bits");
  if (!(a = gsd_analysis_new(GSD_ANALYSIS_PATHS))) return out_of_memory(req);
  a->paths.has_object = object;
  a->paths.object = object_id;
  a->paths.max = (size_t)max;
  snprintf(a->type_name, sizeof a->type_name, "%s", type ? what : "");
  a->paths.type = a->type_name;
  return run(srv, req, a, add_snapshot(srv, req, a, id_text));
}

static int without_ranges(const gsd_analysis *a);

int gsd_api_diff(gsd_server *srv, h2o_req_t *req) {
  char old_id[32], new_id[32];
  gsd_analysis *a;
  uint64_t top;
  int old_only = 0, ready, missing;
  if (gsd_query_get(req, "old", old_id, sizeof old_id) != 1 ||
      gsd_query_get(req, "new", new_id, sizeof new_id) != 1 || count(req, "top", "30", &top) ||
      gsd_query_flag(req, "long_lived", &old_only))
    return gsd_respond_error(req, 400, "bad_request", "give old=ID and new=ID (and top a count, long_lived 1 or 0)");
  if (!(a = gsd_analysis_new(GSD_ANALYSIS_DIFF))) return out_of_memory(req);
  a->top = top;
  a->old_only = old_only;
  ready = add_snapshot(srv, req, a, old_id) && add_snapshot(srv, req, a, new_id);
  if (ready && old_only && (missing = without_ranges(a)) >= 0) {
    gsd_analysis_free(a);
    return gsd_respond_error(req, 422, "bad_request", "snapshot %s has no generation ranges; long_lived=1 "
                             "needs them", missing == 0 ? old_id : new_id);
  }
  return run(srv, req, a, ready);
}

/* The files of the rows of a listing, oldest (the last row) first;
 * GS_EFORMAT once req is answered for a damaged one. */
static int add_series(gsd_server *srv, h2o_req_t *req, gsd_analysis *a, const char *device_id,
                      json_t *rows) {
  size_t i, count = json_array_size(rows);
  for (i = 0; i < count && i < GSD_ANALYSIS_MAX_FILES; i++) {
    json_t *row = json_array_get(rows, count - 1 - i);
    int64_t id = (int64_t)json_integer_value(json_object_get(row, "id"));
    char *path = gsd_store_snapshot_path(srv->store, device_id, id);
    if (!path) return GS_ENOMEM;
    a->files[a->nfiles++] = path;
    if (gsd_api_check_size(srv, req, id, row, path)) return GS_EFORMAT;
  }
  return GS_OK;
}

/* The first file of a without generation ranges beside it, or -1. */
static int without_ranges(const gsd_analysis *a) {
  char path[4096];
  int i;
  for (i = 0; i < a->nfiles; i++) {
    snprintf(path, sizeof path, "%s.gens.json", a->files[i]);
    if (access(path, F_OK) != 0) return i;
  }
  return -1;
}

/* The last N complete snapshots of a device, oldest first. */
int gsd_api_trend(gsd_server *srv, h2o_req_t *req, const char *device_id) {
  gsd_analysis *a;
  json_t *list = NULL, *rows;
  uint64_t n, top, threshold;
  size_t found;
  int rc;
  int old = 0;
  if (count(req, "last", "10", &n) || n < 2 || n > GSD_ANALYSIS_MAX_FILES ||
      count(req, "top", "10", &top) || count(req, "threshold", "20", &threshold) ||
      gsd_query_flag(req, "long_lived", &old))
    return gsd_respond_error(req, 400, "bad_request", "last takes 2 to 10 snapshots; top and threshold counts; long_lived 1 or 0");
  if (gsd_store_list_snapshots(srv->store, device_id, "complete", n, &list) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  rows = json_object_get(list, "snapshots");
  if ((found = json_array_size(rows)) < 2) {
    json_decref(list);
    return gsd_respond_error(req, 404, "not_found", "device %s has %zu complete snapshots; a trend needs 2",
                             device_id, found);
  }
  if (!(a = gsd_analysis_new(GSD_ANALYSIS_TREND))) {
    json_decref(list);
    return out_of_memory(req);
  }
  a->top = top;
  a->threshold = threshold;
  a->old_only = old;
  rc = add_series(srv, req, a, device_id, rows);
  json_decref(list);
  if (rc != GS_OK) {
    gsd_analysis_free(a);
    return rc == GS_EFORMAT ? 0 : out_of_memory(req);
  }
  if (old && (rc = without_ranges(a)) >= 0) {
    gsd_analysis_free(a);
    return gsd_respond_error(req, 422, "bad_request", "snapshot %d of the %d has no generation ranges; "
                             "long_lived=1 needs them for every snapshot", rc + 1, (int)found);
  }
  return gsd_analysis_run(srv, req, a);
}

int gsd_api_progress(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char *path = gsd_api_snapshot_file(srv, req, id_text);
  json_t *o, *a;
  if (!path) return 0;
  a = gsd_analysis_progress(path);
  free(path);
  o = a ? json_pack("{s:o}", "analyses", a) : NULL;
  return gsd_respond_json(req, 200, o);
}
