/* gsd_http.c - the HTTP API of the collector (JSON), on h2o over the
 * daemon's libuv loop.
 *
 * h2o is the HTTP library: it parses requests, keeps connections alive,
 * speaks HTTP/1.1 and HTTP/2, serves files, and does TLS with OpenSSL;
 * Debian builds it on libuv, so it shares the loop of the agent sessions.
 * One handler on "/" routes the API's few paths itself.
 *
 * A capture request with wait=1 is answered later: the request is parked
 * as a waiter (allocated in the request's pool, so that it is unlinked if
 * the connection goes away first) until the capture ends or its deadline
 * passes.
 *
 * Access: with a token configured, every /api request must carry
 * "Authorization: Bearer TOKEN" or is answered 401. The token is compared
 * by its SHA-256 digest with CRYPTO_memcmp, so neither its bytes nor its
 * length show in the time an answer takes. With --http-tls-cert and
 * --http-tls-key the listener speaks TLS (1.2 or later) through h2o's
 * OpenSSL support, HTTP/2 or HTTP/1.1 as ALPN agrees. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_json.h"
#include "gs_units.h"
#include "gsd_console.h"
#include "gsd_log.h"
#include "gsd_server.h"
#include "gsd_types.h"
#include "gsd_request.h"

#define DEFAULT_WAIT_S 120
#define MAX_WAIT_S 3600
#define TICK_MS 100
#define DOWNLOAD_CHUNK (64u << 10)

typedef struct waiter {
  h2o_req_t *req;
  gsd_http *http;
  uint64_t request_id;
  uint64_t deadline_ms;
  struct waiter *prev, *next;
  int linked;
} waiter;

typedef struct api_handler {
  h2o_handler_t super;
  gsd_http *http;
} api_handler;

struct gsd_http {
  gsd_server *srv;
  h2o_globalconf_t config;
  h2o_context_t ctx;
  h2o_accept_ctx_t accept_ctx;
  uv_tcp_t listener;
  uv_timer_t tick;
  int listening, ticking, ctx_ready;
  waiter *waiters;
  size_t connections;
  SSL_CTX *ssl_ctx;                       /* NULL for plain HTTP */
  int has_token;
  unsigned char token_digest[SHA256_DIGEST_LENGTH];
};

/* ---- responses ------------------------------------------------------------ */

static const char *reason_of(int status) {
  switch (status) {
  case 200: return "OK";
  case 201: return "Created";
  case 202: return "Accepted";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 409: return "Conflict";
  case 422: return "Unprocessable Entity";
  case 502: return "Bad Gateway";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  case 507: return "Insufficient Storage";
  default: return "Internal Server Error";
  }
}

/* Sends body (taking the reference); always returns 0 (handled). */
static int respond_json(h2o_req_t *req, int status, json_t *body) {
  char *text = body ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
  static const char oom[] = "{\"error\":\"internal\",\"message\":\"out of memory\"}";
  json_decref(body);
  if (!text) status = 500;
  req->res.status = status;
  req->res.reason = reason_of(status);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("application/json"));
  req->res.content_length = text ? strlen(text) : sizeof oom - 1;
  h2o_send_inline(req, text ? text : oom, req->res.content_length);
  free(text);
  return 0;
}

int gsd_http_respond_text(h2o_req_t *req, int status, const char *json, size_t len) {
  req->res.status = status;
  req->res.reason = reason_of(status);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("application/json"));
  req->res.content_length = len;
  h2o_send_inline(req, json, len);
  return 0;
}

static json_t *error_body(const char *code, const char *message) {
  json_t *o = json_object();
  if (!o || gs_json_set(o, "error", json_string(code)) ||
      gs_json_set(o, "message", gs_json_cstring(message))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int gsd_http_respond_error(h2o_req_t *req, int status, const char *code, const char *fmt, ...) {
  char message[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return respond_json(req, status, error_body(code, message));
}

/* ---- request parsing (gsd_request.c) ------------------------------------------- */

/* The value of key in the query string; 1 when found, 0 when absent, -1
 * when malformed. */
static int query_get(const h2o_req_t *req, const char *key, char *out, size_t cap) {
  return gsd_request_query(req->path.base, req->path.len, req->query_at, key, out, cap);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *v) { return gsd_request_u64(s, max, v); }

/* A flag in the query: "1", "true" or "yes" (or no value) sets it. */
static int query_flag(const h2o_req_t *req, const char *key, int *on) {
  return gsd_request_flag(req->path.base, req->path.len, req->query_at, key, on);
}

#define MAX_SEGMENTS GSD_REQUEST_MAX_SEGMENTS

/* Splits the path (without the query) into percent-decoded segments. */
static int split_path(const h2o_req_t *req, char seg[][GSD_REQUEST_SEGMENT_MAX], int *nseg) {
  return gsd_request_split(req->path.base, req->path.len, req->query_at, seg, nseg);
}

/* ---- routes ------------------------------------------------------------------ */

static int get_health(gsd_http *http, h2o_req_t *req) {
  gsd_server *srv = http->srv;
  json_t *o = json_object();
  if (o && (gs_json_set(o, "version", json_string(GSD_VERSION_STRING)) ||
            gs_json_set(o, "devices_connected", gs_json_u64(gsd_sessions_connected(srv))) ||
            gs_json_set(o, "uptime_s", json_integer((json_int_t)(time(NULL) - srv->started))))) {
    json_decref(o);
    o = NULL;
  }
  return respond_json(req, 200, o);
}

static int get_devices(gsd_http *http, h2o_req_t *req) {
  json_t *arr = NULL, *o, *d;
  size_t i;
  int bad = 0;
  if (gsd_store_list_devices(http->srv->store, &arr) != GS_OK)
    return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  json_array_foreach(arr, i, d) {
    const char *id = json_string_value(json_object_get(d, "device_id"));
    gsd_session *s = id ? gsd_session_find(http->srv, id) : NULL;
    bad |= gs_json_set(d, "connected", json_boolean(s != NULL));
    bad |= gs_json_set(d, "busy", json_boolean(s && gsd_session_busy(s)));
    if (s) {
      bad |= gsd_session_describe(s, d) != GS_OK;
      bad |= gs_json_set(d, "last_seen", json_integer((json_int_t)time(NULL)));
    } else {
      bad |= gs_json_set(d, "address", json_null());
      bad |= gs_json_set(d, "connected_since", json_null());
    }
  }
  o = json_object();
  if (bad || !o || gs_json_set(o, "devices", arr)) {
    if (!o) json_decref(arr);
    json_decref(o);
    o = NULL;
  }
  return respond_json(req, 200, o);
}

static int get_snapshots(gsd_http *http, h2o_req_t *req) {
  char device[256], status[32], limit_text[32];
  int has_device = query_get(req, "device", device, sizeof device);
  int has_status = query_get(req, "status", status, sizeof status);
  int has_limit = query_get(req, "limit", limit_text, sizeof limit_text);
  uint64_t limit = 0;
  json_t *o = NULL;
  if (has_device < 0) return gsd_http_respond_error(req, 400, "bad_request", "bad device parameter");
  if (has_status < 0 || (has_status && strcmp(status, "complete") && strcmp(status, "failed")))
    return gsd_http_respond_error(req, 400, "bad_request", "status must be complete or failed");
  if (has_limit < 0 || (has_limit && parse_u64(limit_text, INT64_MAX, &limit)))
    return gsd_http_respond_error(req, 400, "bad_request", "limit must be a number");
  if (gsd_store_list_snapshots(http->srv->store, has_device ? device : NULL,
                               has_status ? status : NULL, limit, &o) != GS_OK)
    return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  return respond_json(req, 200, o);
}

static int parse_id(const char *text, int64_t *id) { return gsd_request_id(text, id); }

static int get_snapshot(gsd_http *http, h2o_req_t *req, const char *id_text) {
  json_t *o;
  int64_t id;
  int rc;
  if (parse_id(id_text, &id)) return gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(http->srv->store, id, 1, &o, NULL);
  if (rc == GS_EOF) return gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  return respond_json(req, 200, o);
}

/* ---- download ------------------------------------------------------------------ */

/* A .gclog download: the stored file decompressed a chunk at a time, each
 * when h2o asks for more, so memory stays one chunk per download. */
typedef struct download {
  h2o_generator_t super;
  h2o_req_t *req;
  gs_file *file;
  char buf[DOWNLOAD_CHUNK];
} download;

static void download_close(download *d) {
  gs_file_close(d->file);
  d->file = NULL;
}

static void download_send(download *d) {
  size_t got = 0;
  h2o_iovec_t v;
  if (!d->file || gs_file_read(d->file, d->buf, sizeof d->buf, &got) != GS_OK) {
    if (d->file) gsd_log_warn("download: %s", gs_file_error(d->file));
    download_close(d);
    h2o_send(d->req, NULL, 0, H2O_SEND_STATE_ERROR);
    return;
  }
  v = h2o_iovec_init(d->buf, got);
  if (got == 0) download_close(d);
  h2o_send(d->req, &v, got ? 1 : 0, got ? H2O_SEND_STATE_IN_PROGRESS : H2O_SEND_STATE_FINAL);
}

static void download_proceed(h2o_generator_t *g, h2o_req_t *req) {
  (void)req;
  download_send((download *)g);
}

static void download_stop(h2o_generator_t *g, h2o_req_t *req) {
  (void)req;
  download_close((download *)g);
}

static void download_dispose(void *p) { download_close(p); }

static int send_plain(h2o_req_t *req, const char *path) {
  download *d = h2o_mem_alloc_shared(&req->pool, sizeof *d, download_dispose);
  char err[300];
  d->super.proceed = download_proceed;
  d->super.stop = download_stop;
  d->req = req;
  d->file = NULL;
  if (gs_file_open(&d->file, path, err, sizeof err) != GS_OK)
    return gsd_http_respond_error(req, 500, "internal", "%s", err);
  req->res.status = 200;
  req->res.reason = "OK";
  h2o_start_response(req, &d->super);
  download_send(d);
  return 0;
}

static int get_download(gsd_http *http, h2o_req_t *req, const char *id_text) {
  char format[16] = "zst", disposition[400], *path = NULL, *dev;
  const char *device;
  int has_format = query_get(req, "format", format, sizeof format), plain, rc;
  json_t *o;
  int64_t id;
  if (has_format < 0 || (strcmp(format, "zst") && strcmp(format, "gclog")))
    return gsd_http_respond_error(req, 400, "bad_request", "format must be gclog or zst");
  plain = strcmp(format, "gclog") == 0;
  if (parse_id(id_text, &id)) return gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(http->srv->store, id, 0, &o, &path);
  if (rc == GS_EOF) return gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  if (!path) {
    json_decref(o);
    return gsd_http_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
  }
  device = json_string_value(json_object_get(o, "device_id"));
  dev = gsd_store_escape_device(device ? device : "");
  snprintf(disposition, sizeof disposition, "attachment; filename=\"%s-%lld.gclog%s\"",
           dev ? dev : "snapshot", (long long)id, plain ? "" : ".zst");
  free(dev);
  json_decref(o);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_DISPOSITION, NULL,
                 disposition, strlen(disposition));
  if (plain) {
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                   H2O_STRLIT("application/octet-stream"));
    rc = send_plain(req, path);
  } else if (h2o_file_send(req, 200, "OK", path, h2o_iovec_init(H2O_STRLIT("application/octet-stream")),
                           0) != 0) {
    rc = gsd_http_respond_error(req, 500, "internal", "cannot read the file of snapshot %s", id_text);
  } else {
    rc = 0;
  }
  free(path);
  return rc;
}

/* ---- captures ------------------------------------------------------------------ */

static void unlink_waiter(waiter *w) {
  gsd_http *http = w->http;
  if (!w->linked) return;
  if (w->prev) w->prev->next = w->next;
  else http->waiters = w->next;
  if (w->next) w->next->prev = w->prev;
  w->linked = 0;
  if (!http->waiters && http->ticking) {
    uv_timer_stop(&http->tick);
  }
}

static void waiter_dispose(void *p) { unlink_waiter(p); }

static json_t *request_body(uint64_t request_id, const char *key, json_t *value) {
  json_t *o = json_object();
  if (!o || gs_json_set(o, "request_id", gs_json_u64(request_id)) || gs_json_set(o, key, value)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static void answer_waiter(waiter *w, const gsd_capture *cap) {
  h2o_req_t *req = w->req;
  json_t *o;
  unlink_waiter(w);
  if (cap->state == GSD_CAPTURE_STORED) {
    respond_json(req, 200, request_body(cap->request_id, "snapshot_id",
                                        json_integer(cap->snapshot_id)));
    return;
  }
  o = error_body("capture_failed", cap->reason);
  if (o && (gs_json_set(o, "reason", gs_json_cstring(cap->reason)) ||
            gs_json_set(o, "request_id", gs_json_u64(cap->request_id)))) {
    json_decref(o);
    o = NULL;
  }
  respond_json(req, 502, o);
}

void gsd_http_capture_done(gsd_http *http, const gsd_capture *cap) {
  waiter *w = http->waiters, *next;
  for (; w; w = next) {
    next = w->next;
    if (w->request_id == cap->request_id) answer_waiter(w, cap);
  }
}

static void on_tick(uv_timer_t *t) {
  gsd_http *http = t->data;
  uint64_t now = uv_now(http->srv->loop);
  waiter *w = http->waiters, *next;
  for (; w; w = next) {
    next = w->next;
    if (now < w->deadline_ms) continue;
    unlink_waiter(w);
    respond_json(w->req, 504, request_body(w->request_id, "error", json_string("timeout")));
  }
}

static int wait_for(gsd_http *http, h2o_req_t *req, const gsd_capture *cap, uint64_t secs) {
  waiter *w = h2o_mem_alloc_shared(&req->pool, sizeof *w, waiter_dispose);
  w->req = req;
  w->http = http;
  w->request_id = cap->request_id;
  w->deadline_ms = uv_now(http->srv->loop) + secs * 1000;
  w->prev = NULL;
  w->next = http->waiters;
  if (http->waiters) http->waiters->prev = w;
  http->waiters = w;
  w->linked = 1;
  uv_timer_start(&http->tick, on_tick, TICK_MS, TICK_MS);
  http->ticking = 1;
  return 0;
}

static int post_capture(gsd_http *http, h2o_req_t *req, const char *device_id) {
  char timeout_text[32];
  int wait, stable_ids, has_timeout;
  uint64_t secs = DEFAULT_WAIT_S;
  const char *code = "internal";
  gsd_capture *cap;
  json_t *o;
  if (query_flag(req, "wait", &wait) || query_flag(req, "stable_ids", &stable_ids))
    return gsd_http_respond_error(req, 400, "bad_request", "wait and stable_ids take 1 or 0");
  has_timeout = query_get(req, "timeout", timeout_text, sizeof timeout_text);
  if (has_timeout < 0 ||
      (has_timeout && (parse_u64(timeout_text, MAX_WAIT_S, &secs) || secs == 0)))
    return gsd_http_respond_error(req, 400, "bad_request", "timeout must be 1 to %d seconds", MAX_WAIT_S);
  if (http->srv->stopping)
    return gsd_http_respond_error(req, 503, "internal", "the collector is stopping");
  if (gsd_capture_start(http->srv, device_id, stable_ids, &cap, &code) != GS_OK) {
    if (!strcmp(code, "not_found"))
      return gsd_http_respond_error(req, 404, "not_found", "no device %s", device_id);
    if (!strcmp(code, "not_connected"))
      return gsd_http_respond_error(req, 409, "not_connected", "device %s is not connected", device_id);
    if (!strcmp(code, "busy"))
      return gsd_http_respond_error(req, 409, "busy", "device %s is already capturing", device_id);
    if (!strcmp(code, "disk_full"))
      return gsd_http_respond_error(req, 507, "disk_full", "%s", gsd_store_error(http->srv->store));
    return gsd_http_respond_error(req, 500, "internal", "cannot send the capture request");
  }
  if (wait) return wait_for(http, req, cap, secs);
  o = request_body(cap->request_id, "device_id", gs_json_cstring(device_id));
  return respond_json(req, 202, o);
}

static int get_capture(gsd_http *http, h2o_req_t *req, const char *id_text) {
  uint64_t id;
  gsd_capture *cap;
  if (parse_u64(id_text, UINT64_MAX, &id) || !(cap = gsd_capture_find(http->srv, id)))
    return gsd_http_respond_error(req, 404, "not_found", "no capture request %s", id_text);
  return respond_json(req, 200, gsd_capture_json(cap));
}

/* ---- analyses ------------------------------------------------------------------ */

/* The stored file of a complete snapshot, or NULL after answering req. */
static char *snapshot_file(gsd_http *http, h2o_req_t *req, const char *id_text) {
  json_t *o = NULL;
  char *path = NULL;
  int64_t id;
  int rc;
  if (parse_id(id_text, &id)) { gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text); return NULL; }
  rc = gsd_store_get_snapshot(http->srv->store, id, 0, &o, &path);
  json_decref(o);
  if (rc == GS_EOF) gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  else if (rc != GS_OK) gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  else if (!path) gsd_http_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
  return rc == GS_OK ? path : NULL;
}

/* A count from the query into buf, or def when absent; -1 when malformed. */
static int query_count(const h2o_req_t *req, const char *key, const char *def, char *buf, size_t cap) {
  uint64_t v;
  int rc = query_get(req, key, buf, cap);
  if (rc == 0) snprintf(buf, cap, "%s", def);
  return rc < 0 || parse_u64(buf, UINT32_MAX, &v) ? -1 : 0;
}

static int get_dominators(gsd_http *http, h2o_req_t *req, const char *id_text) {
  char top[16], *path;
  int by_type, rc;
  const char *args[8] = {"dominators", "--json", "--top", top};
  if (query_count(req, "top", "20", top, sizeof top) || query_flag(req, "by_type", &by_type))
    return gsd_http_respond_error(req, 400, "bad_request", "top takes a count, by_type 1 or 0");
  if (!(path = snapshot_file(http, req, id_text))) return 0;
  args[4] = by_type ? "--by-type" : path;
  args[5] = by_type ? path : NULL;
  rc = gsd_analysis_run(http->srv, req, args);
  free(path);
  return rc;
}

static int get_paths(gsd_http *http, h2o_req_t *req, const char *id_text) {
  char max[16], what[1024], *path;
  int rc, object = query_get(req, "object", what, sizeof what), type = 0;
  const char *args[8] = {"paths", "--json", "--max", max, "--object", what};
  if (object == 0) type = query_get(req, "type", what, sizeof what);
  if (query_count(req, "max", "5", max, sizeof max) || object < 0 || type < 0 || (!object && !type))
    return gsd_http_respond_error(req, 400, "bad_request", "give object=ID (hex) or type=NAME, and max a count");
  if (type) args[4] = "--type";
  else if (strspn(what, "0123456789abcdefABCDEFx") != strlen(what))
    return gsd_http_respond_error(req, 400, "bad_request", "object takes a hex object ID");
  if (!(path = snapshot_file(http, req, id_text))) return 0;
  args[6] = path;
  rc = gsd_analysis_run(http->srv, req, args);
  free(path);
  return rc;
}

static int get_diff(gsd_http *http, h2o_req_t *req) {
  char old_id[32], new_id[32], top[16], *old_path = NULL, *new_path = NULL;
  const char *args[8] = {"diff", "--json", "--top", top};
  int rc = 0;
  if (query_get(req, "old", old_id, sizeof old_id) != 1 || query_get(req, "new", new_id, sizeof new_id) != 1 ||
      query_count(req, "top", "30", top, sizeof top))
    return gsd_http_respond_error(req, 400, "bad_request", "give old=ID and new=ID (and top a count)");
  if ((old_path = snapshot_file(http, req, old_id)) && (new_path = snapshot_file(http, req, new_id))) {
    args[4] = old_path;
    args[5] = new_path;
    rc = gsd_analysis_run(http->srv, req, args);
  }
  free(old_path);
  free(new_path);
  return rc;
}

/* The last N complete snapshots of a device, oldest first. */
static int get_trend(gsd_http *http, h2o_req_t *req, const char *device_id) {
  char last[16], top[16], threshold[16];
  const char *args[16] = {"trend", "--json", "--top", top, "--threshold", threshold};
  char *paths[10] = {NULL};
  json_t *list = NULL, *rows;
  uint64_t n;
  size_t i, count;
  int rc = 0;
  if (query_count(req, "last", "10", last, sizeof last) || query_count(req, "top", "10", top, sizeof top) ||
      query_count(req, "threshold", "20", threshold, sizeof threshold) || parse_u64(last, 10, &n) || n < 2)
    return gsd_http_respond_error(req, 400, "bad_request", "last takes 2 to 10 snapshots; top and threshold counts");
  if (gsd_store_list_snapshots(http->srv->store, device_id, "complete", n, &list) != GS_OK)
    return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  rows = json_object_get(list, "snapshots");
  count = json_array_size(rows);
  if (count < 2) {
    json_decref(list);
    return gsd_http_respond_error(req, 404, "not_found", "device %s has %zu complete snapshots; a trend needs 2",
                         device_id, count);
  }
  for (i = 0; i < count; i++) {
    json_t *row = json_array_get(rows, count - 1 - i);
    paths[i] = gsd_store_snapshot_path(http->srv->store, device_id,
                                       (int64_t)json_integer_value(json_object_get(row, "id")));
    args[6 + i] = paths[i];
  }
  rc = gsd_analysis_run(http->srv, req, args);
  for (i = 0; i < count; i++) free(paths[i]);
  json_decref(list);
  return rc;
}

/* GET /api/snapshots/ID/types: the whole histogram a page at a time
 * (gsd_types.c). */
static int get_types(gsd_http *http, h2o_req_t *req, const char *id_text) {
  char offset[32], limit[32], sort[16] = "bytes", order[8] = "", *path;
  gsd_types_query q;
  json_t *o = NULL;
  int rc, has_filter;
  memset(&q, 0, sizeof q);
  has_filter = query_get(req, "filter", q.filter, sizeof q.filter);
  if (query_count(req, "offset", "0", offset, sizeof offset) || query_count(req, "limit", "100", limit, sizeof limit) ||
      has_filter < 0 || query_get(req, "sort", sort, sizeof sort) < 0 || query_get(req, "order", order, sizeof order) < 0 ||
      (strcmp(sort, "bytes") && strcmp(sort, "count") && strcmp(sort, "name")) ||
      (order[0] && strcmp(order, "asc") && strcmp(order, "desc")))
    return gsd_http_respond_error(req, 400, "bad_request", "offset and limit take counts, sort bytes, count "
                                  "or name, order asc or desc, filter up to 255 bytes");
  parse_u64(offset, UINT32_MAX, &q.offset);
  parse_u64(limit, UINT32_MAX, &q.limit);
  q.sort = !strcmp(sort, "name") ? GSD_TYPES_BY_NAME : !strcmp(sort, "count") ? GSD_TYPES_BY_COUNT : GSD_TYPES_BY_BYTES;
  q.descending = order[0] ? !strcmp(order, "desc") : q.sort != GSD_TYPES_BY_NAME;
  if (parse_id(id_text, &q.snapshot_id)) return gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(http->srv->store, q.snapshot_id, 0, &o, &path);
  if (rc == GS_EOF) return gsd_http_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  q.crc32 = (uint32_t)json_integer_value(json_object_get(o, "crc32"));
  json_decref(o);
  if (!path) return gsd_http_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
  rc = gsd_types_answer(http->srv, req, path, &q);
  free(path);
  return rc;
}

/* ---- schedules ------------------------------------------------------------------ */

/* A parameter of POST /api/schedules: from the JSON body when it has it
 * (a string, or an integer written in decimal), else from the query. 1
 * when found, 0 when absent, -1 when malformed. */
static int param(const h2o_req_t *req, const json_t *body, const char *key, char *out, size_t cap) {
  json_t *v = body ? json_object_get(body, key) : NULL;
  if (!v || json_is_null(v)) return query_get(req, key, out, cap);
  if (json_is_string(v) && json_string_length(v) < cap) {
    snprintf(out, cap, "%s", json_string_value(v));
    return 1;
  }
  if (json_is_integer(v) && json_integer_value(v) >= 0) {
    snprintf(out, cap, "%lld", (long long)json_integer_value(v));
    return 1;
  }
  return -1;
}

static int is_device_text(const char *s) {
  size_t n = strlen(s), i;
  if (n == 0 || n > GSD_DEVICE_ID_MAX) return 0;
  for (i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 0;
  return 1;
}

/* Fills sch from the request; on failure answers 400 and returns -1. */
static int read_schedule(h2o_req_t *req, const json_t *body, gsd_schedule *sch) {
  char v[256];
  int rc;
  memset(sch, 0, sizeof *sch);
  if (param(req, body, "device", v, sizeof v) != 1 || !is_device_text(v))
    return gsd_http_respond_error(req, 400, "bad_request", "device must be a device ID or a "
                                  "pattern of 1 to %d bytes", GSD_DEVICE_ID_MAX), -1;
  snprintf(sch->device, sizeof sch->device, "%s", v);
  if (param(req, body, "every", v, sizeof v) != 1 || gs_units_duration_ms(v, &sch->every_ms) ||
      sch->every_ms < 1000)
    return gsd_http_respond_error(req, 400, "bad_request", "every must be a duration of at least "
                                  "1s (500ms, 30s, 5m, 2h, 1d)"), -1;
  if ((rc = param(req, body, "jitter", v, sizeof v)) < 0 ||
      (rc && (gs_units_duration_ms(v, &sch->jitter_ms) || sch->jitter_ms > sch->every_ms)))
    return gsd_http_respond_error(req, 400, "bad_request", "jitter must be a duration no longer "
                                  "than every"), -1;
  if ((rc = param(req, body, "keep", v, sizeof v)) < 0 ||
      (rc && (parse_u64(v, INT64_MAX, &sch->keep) || sch->keep == 0)))
    return gsd_http_respond_error(req, 400, "bad_request", "keep must be a count of at least 1"), -1;
  if ((rc = param(req, body, "max_bytes", v, sizeof v)) < 0 ||
      (rc && (gs_units_bytes(v, &sch->max_bytes) || sch->max_bytes == 0 ||
              sch->max_bytes > INT64_MAX)))
    return gsd_http_respond_error(req, 400, "bad_request", "max_bytes must be a size above 0 "
                                  "(1048576, 500M, 1G)"), -1;
  if ((rc = param(req, body, "start", v, sizeof v)) < 0 || (rc && gs_units_time(v, &sch->start_s)) ||
      (rc = param(req, body, "end", v, sizeof v)) < 0 || (rc && gs_units_time(v, &sch->end_s)))
    return gsd_http_respond_error(req, 400, "bad_request", "start and end must be Unix seconds "
                                  "or UTC times as 2026-11-21T08:00:00Z"), -1;
  if (sch->end_s && sch->end_s <= sch->start_s)
    return gsd_http_respond_error(req, 400, "bad_request", "end must come after start"), -1;
  return 0;
}

static int post_schedule(gsd_http *http, h2o_req_t *req) {
  json_t *body = NULL;
  gsd_schedule sch;
  int rc;
  if (req->entity.len > 0) {
    body = json_loadb(req->entity.base, req->entity.len, 0, NULL);
    if (!json_is_object(body)) {
      json_decref(body);
      return gsd_http_respond_error(req, 400, "bad_request", "the body must be a JSON object");
    }
  }
  rc = read_schedule(req, body, &sch);
  json_decref(body);
  if (rc) return 0;
  if (gsd_schedules_add(http->srv, &sch) != GS_OK)
    return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  return respond_json(req, 201, gsd_schedule_json(http->srv, &sch));
}

static int get_schedule(gsd_http *http, h2o_req_t *req, const char *id_text) {
  const gsd_schedule *sch;
  int64_t id;
  if (parse_id(id_text, &id) || !(sch = gsd_schedules_find(http->srv, id)))
    return gsd_http_respond_error(req, 404, "not_found", "no schedule %s", id_text);
  return respond_json(req, 200, gsd_schedule_json(http->srv, sch));
}

static int delete_schedule(gsd_http *http, h2o_req_t *req, const char *id_text) {
  int64_t id;
  int rc;
  if (parse_id(id_text, &id))
    return gsd_http_respond_error(req, 404, "not_found", "no schedule %s", id_text);
  rc = gsd_schedules_remove(http->srv, id);
  if (rc == GS_EOF) return gsd_http_respond_error(req, 404, "not_found", "no schedule %s", id_text);
  if (rc != GS_OK)
    return gsd_http_respond_error(req, 500, "internal", "%s", gsd_store_error(http->srv->store));
  return respond_json(req, 200, json_pack("{sI}", "deleted", (json_int_t)id));
}

/* ---- routing ---------------------------------------------------------------------- */

static int is_method(const h2o_req_t *req, const char *m) {
  return req->method.len == strlen(m) && memcmp(req->method.base, m, req->method.len) == 0;
}

/* Everything outside /api is the web console's (gsd_console.c). */
static int is_api_path(const h2o_req_t *req) {
  size_t len = req->query_at == SIZE_MAX ? req->path.len : req->query_at;
  return len >= 4 && !memcmp(req->path.base, "/api", 4) && (len == 4 || req->path.base[4] == '/');
}

/* ---- access ------------------------------------------------------------------------ */

/* Whether the request carries the token: "Bearer" (any case), blanks, the
 * token. Digests of equal length are compared, in constant time. */
static int has_token(const gsd_http *http, const h2o_req_t *req) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
  const char *token;
  size_t len;
  if (i < 0 || !gsd_request_bearer(req->headers.entries[i].value.base,
                                   req->headers.entries[i].value.len, &token, &len))
    return 0;
  SHA256((const unsigned char *)token, len, digest);
  return CRYPTO_memcmp(digest, http->token_digest, sizeof digest) == 0;
}

/* 0 when the request may go on; else it is answered 401 and 1 returned. */
static int refuse_unauthorized(const gsd_http *http, h2o_req_t *req) {
  if (!http->has_token || has_token(http, req)) return 0;
  gsd_log_info("http: %.*s %.*s refused: no valid bearer token", (int)req->method.len,
               req->method.base, (int)req->path.len, req->path.base);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_WWW_AUTHENTICATE, NULL,
                 H2O_STRLIT("Bearer realm=\"gcsnapd\""));
  gsd_http_respond_error(req, 401, "unauthorized", "this collector needs 'Authorization: "
                         "Bearer TOKEN' (gcsnap --token-file FILE or $GCSNAP_TOKEN)");
  return 1;
}

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
  gsd_http *http = ((api_handler *)self)->http;
  char seg[MAX_SEGMENTS][GSD_REQUEST_SEGMENT_MAX];
  int n = 0, get = is_method(req, "GET"), post = is_method(req, "POST");
  if (!is_api_path(req)) return gsd_console_serve(req);
  if (refuse_unauthorized(http, req)) return 0;
  if (split_path(req, seg, &n) || n < 2 || strcmp(seg[0], "api"))
    return gsd_http_respond_error(req, 404, "not_found", "no such resource");
  gsd_log_debug("http: %.*s %.*s", (int)req->method.len, req->method.base, (int)req->path.len,
                req->path.base);
  if (n == 2 && !strcmp(seg[1], "health") && get) return get_health(http, req);
  if (n == 2 && !strcmp(seg[1], "devices") && get) return get_devices(http, req);
  if (n == 2 && !strcmp(seg[1], "snapshots") && get) return get_snapshots(http, req);
  if (n == 3 && !strcmp(seg[1], "snapshots") && get) return get_snapshot(http, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "download") && get)
    return get_download(http, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "capture") && post)
    return post_capture(http, req, seg[2]);
  if (n == 3 && !strcmp(seg[1], "captures") && get) return get_capture(http, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "dominators") && get)
    return get_dominators(http, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "paths") && get)
    return get_paths(http, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "types") && get)
    return get_types(http, req, seg[2]);
  if (n == 2 && !strcmp(seg[1], "diff") && get) return get_diff(http, req);
  if (n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "trend") && get)
    return get_trend(http, req, seg[2]);
  if (n == 2 && !strcmp(seg[1], "schedules") && post) return post_schedule(http, req);
  if (n == 2 && !strcmp(seg[1], "schedules") && get)
    return respond_json(req, 200, gsd_schedules_json(http->srv));
  if (n == 3 && !strcmp(seg[1], "schedules") && get) return get_schedule(http, req, seg[2]);
  if (n == 3 && !strcmp(seg[1], "schedules") && is_method(req, "DELETE"))
    return delete_schedule(http, req, seg[2]);
  if ((n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "capture")) ||
      (n <= 3 && !strcmp(seg[1], "schedules")) ||
      (n >= 2 && n <= 4 && (!strcmp(seg[1], "health") || !strcmp(seg[1], "devices") ||
                            !strcmp(seg[1], "snapshots") || !strcmp(seg[1], "captures"))))
    return gsd_http_respond_error(req, 405, "bad_request", "method %.*s is not allowed here",
                         (int)req->method.len, req->method.base);
  return gsd_http_respond_error(req, 404, "not_found", "no such resource");
}

/* ---- server ------------------------------------------------------------------------ */

/* h2o takes the handle's data field for itself: the connection finds its
 * server through the struct around the handle. */
typedef struct http_conn {
  uv_tcp_t tcp;
  gsd_http *http;
} http_conn;

static void on_conn_closed(uv_handle_t *h) {
  http_conn *c = (http_conn *)h;
  c->http->connections--;
  free(c);
}

static void on_accept(uv_stream_t *listener, int status) {
  gsd_http *http = listener->data;
  http_conn *c;
  if (status != 0 || !(c = malloc(sizeof *c))) return;
  uv_tcp_init(listener->loop, &c->tcp);
  c->http = http;
  http->connections++;
  if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    return;
  }
  h2o_accept(&http->accept_ctx, h2o_uv_socket_create((uv_stream_t *)&c->tcp, on_conn_closed));
}

static int listen_on(gsd_http *http, const char *addr, char *bound, size_t cap) {
  http->listener.data = http;
  http->listening = 1;
  return gsd_listen(http->srv->loop, &http->listener, addr, on_accept, bound, cap);
}

/* The OpenSSL errors queued by a failed call, after what; the queue is
 * emptied. */
static int tls_fail(char *err, size_t cap, const char *what, const char *file) {
  char detail[256] = "";
  unsigned long e, last = 0;
  while ((e = ERR_get_error()) != 0) last = e;
  if (last) ERR_error_string_n(last, detail, sizeof detail);
  snprintf(err, cap, "%s '%s'%s%s", what, file, detail[0] ? ": " : "", detail);
  return GS_EINVAL;
}

/* The listener's TLS: the certificate chain and key of the settings,
 * TLS 1.2 or later, and ALPN offering h2 and http/1.1. */
static int tls_setup(gsd_http *http, const gsd_config *cfg, char *err, size_t cap) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return tls_fail(err, cap, "cannot set up TLS for", cfg->http_tls_cert);
  http->ssl_ctx = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_use_certificate_chain_file(ctx, cfg->http_tls_cert) != 1)
    return tls_fail(err, cap, "cannot load the TLS certificate", cfg->http_tls_cert);
  if (SSL_CTX_use_PrivateKey_file(ctx, cfg->http_tls_key, SSL_FILETYPE_PEM) != 1)
    return tls_fail(err, cap, "cannot load the TLS private key", cfg->http_tls_key);
  if (SSL_CTX_check_private_key(ctx) != 1)
    return tls_fail(err, cap, "the TLS private key does not match the certificate",
                    cfg->http_tls_cert);
  h2o_ssl_register_alpn_protocols(ctx, h2o_alpn_protocols);
  http->accept_ctx.ssl_ctx = ctx;
  return GS_OK;
}

int gsd_http_start(gsd_server *srv, const char *addr, char *bound, size_t cap) {
  gsd_http *http = calloc(1, sizeof *http);
  h2o_hostconf_t *host;
  h2o_pathconf_t *path;
  api_handler *h;
  if (!http) {
    snprintf(bound, cap, "out of memory");
    return GS_ENOMEM;
  }
  http->srv = srv;
  srv->http = http;
  h2o_config_init(&http->config);
  host = h2o_config_register_host(&http->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  path = h2o_config_register_path(host, "/", 0);
  h = (api_handler *)h2o_create_handler(path, sizeof *h);
  h->super.on_req = on_req;
  h->http = http;
  h2o_context_init(&http->ctx, srv->loop, &http->config);
  http->ctx_ready = 1;
  http->accept_ctx.ctx = &http->ctx;
  http->accept_ctx.hosts = http->config.hosts;
  uv_timer_init(srv->loop, &http->tick);
  http->tick.data = http;
  if (srv->cfg->http_token[0]) {
    SHA256((const unsigned char *)srv->cfg->http_token, strlen(srv->cfg->http_token),
           http->token_digest);
    http->has_token = 1;
  }
  if (srv->cfg->http_tls_cert[0] && tls_setup(http, srv->cfg, bound, cap) != GS_OK)
    return GS_EINVAL;
  return listen_on(http, addr, bound, cap);
}

void gsd_http_stop(gsd_http *http) {
  waiter *w;
  if (http->listening) {
    uv_close((uv_handle_t *)&http->listener, NULL);
    http->listening = 0;
  }
  while ((w = http->waiters) != NULL) {
    unlink_waiter(w);
    gsd_http_respond_error(w->req, 503, "internal", "the collector is stopping");
  }
  if (!uv_is_closing((uv_handle_t *)&http->tick)) uv_close((uv_handle_t *)&http->tick, NULL);
}

size_t gsd_http_connections(const gsd_http *http) { return http->connections; }

void gsd_http_close(gsd_http *http) {
  if (!http->ctx_ready) return;
  h2o_context_dispose(&http->ctx);
  http->ctx_ready = 0;
}

void gsd_http_free(gsd_http *http) {
  if (!http) return;
  /* With connections still open the context cannot be disposed of; the
   * process is ending anyway. */
  if (http->ctx_ready) return;
  h2o_config_dispose(&http->config);
  SSL_CTX_free(http->ssl_ctx);
  OPENSSL_cleanse(http->token_digest, sizeof http->token_digest);
  free(http);
}
