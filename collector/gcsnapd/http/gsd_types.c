/* gsd_types.c - the whole type histogram of a stored snapshot, for
 * GET /api/snapshots/ID/types.
 *
 * The catalog keeps only the top rows of each summary; a heap can have
 * tens of thousands of types, too many to send for every page a console
 * shows. So the collector makes the whole summary (as "gcsnap summary
 * --json --top 0") of the file once, in a child process (gsd_child.c) from
 * libuv's thread pool, since the child reads the whole heap,
 * keeps the rows of the last CACHE_SIZE snapshots asked for, and answers
 * each request with the rows that match its filter, in its order, from
 * its offset: with 10,000 types a page is a few kilobytes and a
 * millisecond. Stored snapshots never change; the cache key is the
 * catalog ID with the file's CRC, so a reused ID is not mistaken. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_child.h"
#include "gsd_log.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"
#include "gsd_types.h"

#define CACHE_SIZE 8
#define MAX_OUTPUT (512u << 20)

typedef struct type_row {
  char *name;
  uint64_t count, bytes;
} type_row;

typedef struct histogram {
  int64_t snapshot_id;
  uint32_t crc32;
  type_row *rows;
  size_t n;
  uint64_t objects, bytes;
  uint64_t used;                 /* for least-recently-used eviction */
} histogram;

/* Loaded on the loop thread only. */
static histogram cache[CACHE_SIZE];
static uint64_t use_clock;

typedef struct load load;
typedef struct load_ref { load *l; } load_ref;

struct load {
  uv_work_t work;
  h2o_req_t *req;                /* NULL once the client is gone */
  load_ref *ref;
  gsd_types_query q;
  char *path;
  histogram h;                   /* the result */
  char err[300];
  int status;                    /* 0, or the HTTP status of the failure */
};

static void histogram_free(histogram *h) {
  size_t i;
  for (i = 0; h->rows && i < h->n; i++) free(h->rows[i].name);
  free(h->rows);
  memset(h, 0, sizeof *h);
}

/* ---- loading (thread pool) --------------------------------------------- */

static int rows_of(const json_t *summary, histogram *h) {
  const json_t *arr = json_object_get(summary, "by_type"), *row;
  size_t i;
  h->objects = (uint64_t)json_integer_value(json_object_get(summary, "objects"));
  h->bytes = (uint64_t)json_integer_value(json_object_get(summary, "bytes"));
  h->n = 0;
  if (!json_is_array(arr)) return GS_EINVAL;
  if (json_array_size(arr) && !(h->rows = calloc(json_array_size(arr), sizeof *h->rows)))
    return GS_ENOMEM;
  json_array_foreach(arr, i, row) {
    const char *name = json_string_value(json_object_get(row, "type"));
    if (!name || !(h->rows[i].name = strdup(name))) return name ? GS_ENOMEM : GS_EINVAL;
    h->rows[i].count = (uint64_t)json_integer_value(json_object_get(row, "count"));
    h->rows[i].bytes = (uint64_t)json_integer_value(json_object_get(row, "bytes"));
    h->n = i + 1;
  }
  return GS_OK;
}

static void load_work(uv_work_t *w) {
  load *l = w->data;
  gsd_child_summary job = {l->path, 0};
  char *out = NULL;
  size_t len;
  int status, rc = gsd_child_run(gsd_child_summary_fn, &job, MAX_OUTPUT, &out, &len, &status);
  json_t *o = NULL;
  if (rc != GS_OK) {
    snprintf(l->err, sizeof l->err, "cannot start the summary: %s",
             rc == GS_ENOMEM ? "out of memory" : strerror(errno));
    l->status = 500;
  } else if (status != GSD_CHILD_OK) {
    snprintf(l->err, sizeof l->err, "the summary failed (status %d): %.200s", status, out);
    l->status = 500;
  } else if (!(o = json_loadb(out, len, 0, NULL))) {
    snprintf(l->err, sizeof l->err, "the summary gave no JSON");
    l->status = 500;
  } else if ((rc = rows_of(o, &l->h)) != GS_OK) {
    snprintf(l->err, sizeof l->err, "%s", rc == GS_ENOMEM ? "out of memory" : "the summary has no by_type");
    l->status = 500;
    histogram_free(&l->h);
  }
  json_decref(o);
  free(out);
}

/* ---- answering (loop thread) ------------------------------------------- */

static gsd_types_sort sort_key;
static int sort_desc;
static const type_row *sort_rows;

/* Ties go by name, then by the summary's order, so pages never overlap. */
static int compare(const void *pa, const void *pb) {
  const type_row *a = &sort_rows[*(const size_t *)pa], *b = &sort_rows[*(const size_t *)pb];
  int c = 0;
  if (sort_key == GSD_TYPES_BY_BYTES && a->bytes != b->bytes) c = a->bytes < b->bytes ? -1 : 1;
  else if (sort_key == GSD_TYPES_BY_COUNT && a->count != b->count) c = a->count < b->count ? -1 : 1;
  if (c) return sort_desc ? -c : c;
  c = strcmp(a->name, b->name);
  if (sort_key == GSD_TYPES_BY_NAME && sort_desc) c = -c;
  if (c) return c;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* Case-insensitive (ASCII) substring test. */
static int matches(const char *name, const char *filter) {
  size_t n = strlen(filter);
  if (!n) return 1;
  for (; *name; name++) {
    size_t i = 0;
    while (i < n && name[i]) {
      int x = (unsigned char)name[i], y = (unsigned char)filter[i];
      if (x >= 'A' && x <= 'Z') x += 32;
      if (y >= 'A' && y <= 'Z') y += 32;
      if (x != y) break;
      i++;
    }
    if (i == n) return 1;
  }
  return 0;
}

static const char *sort_name(gsd_types_sort s) {
  return s == GSD_TYPES_BY_NAME ? "name" : s == GSD_TYPES_BY_COUNT ? "count" : "bytes";
}

static json_t *row_json(const type_row *r, uint64_t total) {
  json_t *o = json_object();
  double pct = total ? (double)(uint64_t)((double)r->bytes * 10000.0 / (double)total + 0.5) / 100.0 : 0.0;
  if (!o || gs_json_set(o, "type", gs_json_cstring(r->name)) || gs_json_set(o, "count", gs_json_u64(r->count)) ||
      gs_json_set(o, "bytes", gs_json_u64(r->bytes)) || gs_json_set(o, "percent", json_real(pct))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static int answer(h2o_req_t *req, const histogram *h, const gsd_types_query *q) {
  size_t *idx = malloc((h->n ? h->n : 1) * sizeof *idx), m = 0, i, end;
  uint64_t mcount = 0, mbytes = 0;
  json_t *o = json_object(), *rows = json_array();
  char *text;
  int bad = !idx || !o || !rows;
  for (i = 0; !bad && i < h->n; i++) {
    if (!matches(h->rows[i].name, q->filter)) continue;
    idx[m++] = i;
    mcount += h->rows[i].count;
    mbytes += h->rows[i].bytes;
  }
  if (!bad) {
    sort_key = q->sort;
    sort_desc = q->descending;
    sort_rows = h->rows;
    qsort(idx, m, sizeof *idx, compare);
  }
  end = q->limit && q->offset + q->limit < m ? (size_t)(q->offset + q->limit) : m;
  for (i = (size_t)q->offset; !bad && i < end; i++)
    bad = json_array_append_new(rows, row_json(&h->rows[idx[i]], h->bytes)) != 0;
  free(idx);
  bad = bad || gs_json_set(o, "snapshot_id", json_integer(q->snapshot_id)) ||
        gs_json_set(o, "types", gs_json_u64(h->n)) || gs_json_set(o, "objects", gs_json_u64(h->objects)) ||
        gs_json_set(o, "bytes", gs_json_u64(h->bytes)) || gs_json_set(o, "filter", gs_json_cstring(q->filter)) ||
        gs_json_set(o, "matched", gs_json_u64(m)) || gs_json_set(o, "matched_objects", gs_json_u64(mcount)) ||
        gs_json_set(o, "matched_bytes", gs_json_u64(mbytes)) ||
        gs_json_set(o, "sort", json_string(sort_name(q->sort))) ||
        gs_json_set(o, "order", json_string(q->descending ? "desc" : "asc")) ||
        gs_json_set(o, "offset", gs_json_u64(q->offset)) || gs_json_set(o, "limit", gs_json_u64(q->limit)) ||
        gs_json_set(o, "rows", json_incref(rows));
  json_decref(rows);
  text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
  json_decref(o);
  if (!text) return gsd_respond_error(req, 500, "internal", "out of memory");
  gsd_respond_text(req, 200, text, strlen(text));
  free(text);
  return 0;
}

static histogram *cached(const gsd_types_query *q) {
  size_t i;
  for (i = 0; i < CACHE_SIZE; i++)
    if (cache[i].rows && cache[i].snapshot_id == q->snapshot_id && cache[i].crc32 == q->crc32) {
      cache[i].used = ++use_clock;
      return &cache[i];
    }
  return NULL;
}

/* Caches h (taking its rows), unless a request that raced this one
 * already did. */
static void keep(histogram *h) {
  size_t i, victim = 0;
  gsd_types_query key;
  key.snapshot_id = h->snapshot_id;
  key.crc32 = h->crc32;
  if (cached(&key)) {
    histogram_free(h);
    return;
  }
  for (i = 0; i < CACHE_SIZE; i++) {
    if (!cache[i].rows) { victim = i; break; }
    if (cache[i].used < cache[victim].used) victim = i;
  }
  histogram_free(&cache[victim]);
  cache[victim] = *h;
  cache[victim].used = ++use_clock;
  memset(h, 0, sizeof *h);
}

static void load_done(uv_work_t *w, int status) {
  load *l = w->data;
  h2o_req_t *req = l->req;
  if (l->ref) l->ref->l = NULL;
  if (status != 0 && !l->status) {
    snprintf(l->err, sizeof l->err, "the histogram could not be loaded");
    l->status = 500;
  }
  if (!l->status) {
    /* An empty heap has no rows but is still a histogram. */
    if (!l->h.rows && !(l->h.rows = calloc(1, sizeof *l->h.rows))) {
      snprintf(l->err, sizeof l->err, "out of memory");
      l->status = 500;
    } else {
      l->h.snapshot_id = l->q.snapshot_id;
      l->h.crc32 = l->q.crc32;
      keep(&l->h);
    }
  }
  if (req) {
    const histogram *h = cached(&l->q);
    if (l->status || !h) {
      gsd_log_warn("types of snapshot %lld: %s", (long long)l->q.snapshot_id, l->err);
      gsd_respond_error(req, l->status ? l->status : 500, "internal", "%s", l->err);
    } else {
      answer(req, h, &l->q);
    }
  }
  histogram_free(&l->h);
  free(l->path);
  free(l);
}

static void on_req_gone(void *p) {
  load_ref *ref = p;
  if (ref->l) {
    ref->l->req = NULL;
    ref->l->ref = NULL;
  }
}

int gsd_types_answer(gsd_server *srv, h2o_req_t *req, const char *path, const gsd_types_query *q) {
  const histogram *h = cached(q);
  load *l;
  if (h) return answer(req, h, q);
  if (!(l = calloc(1, sizeof *l)) || !(l->path = strdup(path))) {
    free(l);
    return gsd_respond_error(req, 500, "internal", "out of memory");
  }
  l->q = *q;
  l->req = req;
  l->work.data = l;
  if (uv_queue_work(srv->loop, &l->work, load_work, load_done) != 0) {
    free(l->path);
    free(l);
    return gsd_respond_error(req, 500, "internal", "cannot start loading the histogram");
  }
  l->ref = h2o_mem_alloc_shared(&req->pool, sizeof *l->ref, on_req_gone);
  l->ref->l = l;
  return 0;
}

/* GET /api/snapshots/ID/types: the whole histogram a page at a time
 * (gsd_types.c). */
int gsd_api_types(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char offset[32], limit[32], sort[16] = "bytes", order[8] = "", *path;
  gsd_types_query q;
  json_t *o = NULL;
  int rc, has_filter;
  memset(&q, 0, sizeof q);
  has_filter = gsd_query_get(req, "filter", q.filter, sizeof q.filter);
  if (gsd_query_count(req, "offset", "0", offset, sizeof offset) || gsd_query_count(req, "limit", "100", limit, sizeof limit) ||
      has_filter < 0 || gsd_query_get(req, "sort", sort, sizeof sort) < 0 || gsd_query_get(req, "order", order, sizeof order) < 0 ||
      (strcmp(sort, "bytes") && strcmp(sort, "count") && strcmp(sort, "name")) ||
      (order[0] && strcmp(order, "asc") && strcmp(order, "desc")))
    return gsd_respond_error(req, 400, "bad_request", "offset and limit take counts, sort bytes, count "
                                  "or name, order asc or desc, filter up to 255 bytes");
  gsd_request_u64(offset, UINT32_MAX, &q.offset);
  gsd_request_u64(limit, UINT32_MAX, &q.limit);
  q.sort = !strcmp(sort, "name") ? GSD_TYPES_BY_NAME : !strcmp(sort, "count") ? GSD_TYPES_BY_COUNT : GSD_TYPES_BY_BYTES;
  q.descending = order[0] ? !strcmp(order, "desc") : q.sort != GSD_TYPES_BY_NAME;
  if (gsd_request_id(id_text, &q.snapshot_id)) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(srv->store, q.snapshot_id, 0, &o, &path);
  if (rc == GS_EOF) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  q.crc32 = (uint32_t)json_integer_value(json_object_get(o, "crc32"));
  if (!path) {
    json_decref(o);
    return gsd_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
  }
  rc = gsd_api_check_size(srv, req, q.snapshot_id, o, path) ? 0 : gsd_types_answer(srv, req, path, &q);
  json_decref(o);
  free(path);
  return rc;
}
