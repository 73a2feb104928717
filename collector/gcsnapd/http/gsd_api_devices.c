/* gsd_api_devices.c - GET /api/health (the collector's version, devices
 * connected, uptime), GET /api/devices (the catalog's devices with what
 * their live sessions add: connected, busy, address), and GET /metrics
 * (the same figures and the counters of gsd_metrics, for Prometheus). */
#include <time.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_metrics.h"
#include "gsd_request.h"
#include "gsd_respond.h"

int gsd_api_health(gsd_server *srv, h2o_req_t *req) {
  json_t *o = json_object();
  if (o && (gs_json_set(o, "version", json_string(GSD_VERSION_STRING)) ||
            gs_json_set(o, "devices_connected", gs_json_u64(gsd_sessions_connected(srv))) ||
            gs_json_set(o, "uptime_s", json_integer((json_int_t)(time(NULL) - srv->started))))) {
    json_decref(o);
    o = NULL;
  }
  return gsd_respond_json(req, 200, o);
}

int gsd_api_devices(gsd_server *srv, h2o_req_t *req) {
  json_t *arr = NULL, *o, *d;
  size_t i;
  int bad = 0;
  if (gsd_store_list_devices(srv->store, &arr) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  json_array_foreach(arr, i, d) {
    const char *id = json_string_value(json_object_get(d, "device_id"));
    gsd_session *s = id ? gsd_session_find(srv, id) : NULL;
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
  return gsd_respond_json(req, 200, o);
}

static size_t captures_pending(const gsd_server *srv) {
  const gsd_capture *c;
  size_t n = 0;
  for (c = srv->captures; c; c = c->next)
    n += c->state == GSD_CAPTURE_REQUESTED || c->state == GSD_CAPTURE_STREAMING;
  return n;
}

int gsd_api_metrics(gsd_server *srv, h2o_req_t *req) {
  static char page[GSD_METRICS_PAGE_MAX];     /* not on the loop's stack */
  gsd_metrics_gauges g;
  uint64_t free_bytes;
  size_t len;
  if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")))
    return gsd_respond_error(req, 405, "bad_request", "method %.*s is not allowed here",
                             (int)req->method.len, req->method.base);
  g.agents_connected = (double)gsd_sessions_connected(srv);
  g.sessions_open = (double)srv->nsessions;
  g.captures_pending = (double)captures_pending(srv);
  g.http_connections = srv->http ? (double)gsd_http_connections(srv->http) : 0;
  g.store_free_bytes = gsd_store_free_bytes(srv->store, &free_bytes) == GS_OK ? (double)free_bytes : -1;
  g.start_time = (double)srv->started;
  len = gsd_metrics_page(page, GSD_VERSION_STRING, &g);
  req->res.status = 200;
  req->res.reason = "OK";
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("text/plain; version=0.0.4; charset=utf-8"));
  req->res.content_length = len;
  h2o_send_inline(req, page, len);
  return 0;
}
