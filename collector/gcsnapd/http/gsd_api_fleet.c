/* gsd_api_fleet.c - GET /api/fleet: every device with its latest heap, its
 * growth in bytes per hour (least-squares slope over its last N complete
 * snapshots), the series for a sparkline, and, for the page asked for, its
 * leak suspects by "gcsnap trend"'s rule over those snapshots' stored
 * summaries (gs_fleet.h). Filtered by device ID, sorted and paged here,
 * so the console draws thousands of devices a page at a time. Everything
 * comes from the catalog: no heap is read. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_fleet.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

#define MAX_LAST 50
#define MAX_LIMIT 500

typedef struct fleet_query {
  uint64_t last, offset, limit, threshold;
  char sort[16], order[8], filter[256];
} fleet_query;

typedef struct fleet_row {
  json_t *o;                  /* the row's JSON */
  const char *id;
  double growth;              /* bytes per hour, when has_growth */
  int has_growth;
  uint64_t bytes, snapshots;
} fleet_row;

static const fleet_query *sort_q;

static int cmp_rows(const void *a, const void *b) {
  const fleet_row *x = a, *y = b;
  int c = 0, desc = !strcmp(sort_q->order, "desc");
  if (!strcmp(sort_q->sort, "growth")) {
    if (x->has_growth != y->has_growth) c = x->has_growth - y->has_growth;
    else c = x->growth < y->growth ? -1 : x->growth > y->growth;
  } else if (!strcmp(sort_q->sort, "bytes")) c = x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
  else if (!strcmp(sort_q->sort, "snapshots")) c = x->snapshots < y->snapshots ? -1 : x->snapshots > y->snapshots;
  if (!c) c = strcmp(x->id, y->id);
  return desc ? -c : c;
}

static int count_of(h2o_req_t *req, const char *key, const char *def, uint64_t max, uint64_t *v) {
  char text[16];
  return gsd_query_count(req, key, def, text, sizeof text) || gsd_request_u64(text, max, v) ? -1 : 0;
}

static int query_of(h2o_req_t *req, fleet_query *q) {
  memset(q, 0, sizeof *q);
  if (count_of(req, "last", "10", MAX_LAST, &q->last) || q->last < 2 ||
      count_of(req, "offset", "0", UINT32_MAX, &q->offset) ||
      count_of(req, "limit", "50", MAX_LIMIT, &q->limit) || q->limit == 0 ||
      count_of(req, "threshold", "20", UINT32_MAX, &q->threshold) ||
      gsd_query_get(req, "sort", q->sort, sizeof q->sort) < 0 ||
      gsd_query_get(req, "order", q->order, sizeof q->order) < 0 ||
      gsd_query_get(req, "filter", q->filter, sizeof q->filter) < 0)
    return -1;
  if (!q->sort[0]) strcpy(q->sort, "growth");
  if (!q->order[0]) strcpy(q->order, strcmp(q->sort, "device") ? "desc" : "asc");
  if (strcmp(q->sort, "growth") && strcmp(q->sort, "bytes") && strcmp(q->sort, "device") &&
      strcmp(q->sort, "snapshots"))
    return -1;
  return strcmp(q->order, "asc") && strcmp(q->order, "desc") ? -1 : 0;
}

/* Whether id holds filter, ASCII letters in any case. */
static int matches(const char *id, const char *filter) {
  size_t n = strlen(filter), i, j;
  for (i = 0; n && id[i]; i++) {
    for (j = 0; j < n && id[i + j] && tolower((unsigned char)id[i + j]) == tolower((unsigned char)filter[j]); j++) {}
    if (j == n) return 1;
  }
  return n == 0;
}

/* Row r's figures from its series (oldest first). */
static void fit(fleet_row *r) {
  json_t *points = json_object_get(r->o, "series"), *p;
  double x[MAX_LAST], y[MAX_LAST], slope;
  size_t i, n = json_array_size(points);
  json_array_foreach(points, i, p) {
    x[i] = (double)json_integer_value(json_object_get(p, "created"));
    y[i] = (double)json_integer_value(json_object_get(p, "bytes"));
  }
  r->bytes = n ? (uint64_t)y[n - 1] : 0;
  r->has_growth = gs_fleet_slope(x, y, n, &slope) == GS_OK;
  r->growth = r->has_growth ? slope * 3600.0 : 0;
  gs_json_set(r->o, "latest_bytes", n ? gs_json_u64(r->bytes) : json_null());
  gs_json_set(r->o, "growth_bytes_per_hour", r->has_growth ? json_real(r->growth) : json_null());
}

/* Every row's series: the last q->last complete snapshots of its device,
 * oldest first, from one listing of the catalog (newest first), so the
 * cost is one scan, not one query a device. index maps device IDs to rows. */
static int add_series(gsd_server *srv, const fleet_query *q, fleet_row *rows, size_t n, json_t *index) {
  json_t *list = NULL, *s;
  size_t i;
  if (gsd_store_list_snapshots(srv->store, NULL, "complete", 0, &list) != GS_OK) return GS_EIO;
  json_array_foreach(json_object_get(list, "snapshots"), i, s) {
    const char *device = json_string_value(json_object_get(s, "device_id"));
    json_t *at = device ? json_object_get(index, device) : NULL, *points;
    if (!at) continue;
    points = json_object_get(rows[json_integer_value(at)].o, "series");
    if (json_array_size(points) < q->last &&
        json_array_insert_new(points, 0, json_pack("{s:O,s:O,s:O}", "id", json_object_get(s, "id"), "created",
                                                   json_object_get(s, "created"), "bytes", json_object_get(s, "bytes")))) {
      json_decref(list);
      return GS_ENOMEM;
    }
  }
  json_decref(list);
  for (i = 0; i < n; i++) fit(&rows[i]);
  return GS_OK;
}

/* The suspects of a row of the page, from its series' summaries. */
static int add_suspects(gsd_server *srv, const fleet_query *q, fleet_row *r) {
  json_t *points = json_object_get(r->o, "series"), *p, *sums[MAX_LAST], *names = NULL;
  size_t i, n = json_array_size(points);
  int err = GS_OK;
  for (i = 0; i < n; i++) sums[i] = NULL;
  json_array_foreach(points, i, p) {
    json_t *snap = NULL;
    if (gsd_store_get_snapshot(srv->store, json_integer_value(json_object_get(p, "id")), 1, &snap, NULL) == GS_OK)
      sums[i] = json_incref(json_object_get(snap, "summary"));
    json_decref(snap);
  }
  if (n >= 2) err = gs_fleet_suspects(sums, (int)n, q->threshold, &names);
  for (i = 0; i < n; i++) json_decref(sums[i]);
  if (err == GS_ENOMEM) return err;
  gs_json_set(r->o, "suspects", names ? names : json_array());
  gs_json_set(r->o, "suspect", json_boolean(names && json_array_size(names) > 0));
  return GS_OK;
}

static json_t *answer(const fleet_query *q, fleet_row *rows, size_t n, size_t total) {
  json_t *o = json_object(), *page = json_array();
  size_t i;
  if (!o || !page) { json_decref(o); json_decref(page); return NULL; }
  for (i = q->offset; i < n && i < q->offset + q->limit; i++) json_array_append(page, rows[i].o);
  gs_json_set(o, "devices", gs_json_u64(total));
  gs_json_set(o, "matched", gs_json_u64(n));
  gs_json_set(o, "last", gs_json_u64(q->last));
  gs_json_set(o, "sort", json_string(q->sort));
  gs_json_set(o, "order", json_string(q->order));
  gs_json_set(o, "filter", gs_json_cstring(q->filter));
  gs_json_set(o, "offset", gs_json_u64(q->offset));
  gs_json_set(o, "limit", gs_json_u64(q->limit));
  gs_json_set(o, "rows", page);
  return o;
}

int gsd_api_fleet(gsd_server *srv, h2o_req_t *req) {
  fleet_query q;
  json_t *devices = NULL, *d, *o = NULL, *index = NULL;
  fleet_row *rows;
  size_t i, n = 0;
  int err = GS_OK;
  if (query_of(req, &q))
    return gsd_respond_error(req, 400, "bad_request", "last takes 2 to %d, limit 1 to %d; sort growth, "
                             "bytes, device or snapshots; order asc or desc; filter up to 255 bytes",
                             MAX_LAST, MAX_LIMIT);
  if (gsd_store_list_devices(srv->store, &devices) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  if (!(rows = calloc(json_array_size(devices) + 1, sizeof *rows))) err = GS_ENOMEM;
  if (!(index = json_object())) err = GS_ENOMEM;
  json_array_foreach(devices, i, d) {
    const char *id = json_string_value(json_object_get(d, "device_id"));
    if (err || !id || !matches(id, q.filter)) continue;
    rows[n].o = d;
    rows[n].id = id;
    rows[n].snapshots = (uint64_t)json_integer_value(json_object_get(d, "snapshots"));
    gs_json_set(d, "connected", json_boolean(gsd_session_find(srv, id) != NULL));
    if (gs_json_set(d, "series", json_array()) || json_object_set_new(index, id, json_integer((json_int_t)n)))
      err = GS_ENOMEM;
    n++;
  }
  if (!err) err = add_series(srv, &q, rows, n, index);
  json_decref(index);
  sort_q = &q;
  if (!err) qsort(rows, n, sizeof *rows, cmp_rows);
  for (i = q.offset; !err && i < n && i < q.offset + q.limit; i++) err = add_suspects(srv, &q, &rows[i]);
  if (!err) o = answer(&q, rows, n, json_array_size(devices));
  free(rows);
  json_decref(devices);
  if (err == GS_EIO) return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  return gsd_respond_json(req, 200, o);
}
