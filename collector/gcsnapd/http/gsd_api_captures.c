/* gsd_api_captures.c - POST /api/devices/ID/capture asks a device for a
 * snapshot (gsd_capture.c), GET /api/captures/ID tells how it went: from
 * this collector's list, else from a shared catalog, which knows the
 * captures asked through the other collectors.
 *
 * A capture request with wait=1 is answered later: the request is parked
 * as a waiter (allocated in the request's pool, so that it is unlinked if
 * the connection goes away first) until the capture ends or its deadline
 * passes; a timer checks the deadlines while anyone waits. */
#include <assert.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

#define DEFAULT_WAIT_S 120
#define MAX_WAIT_S 3600
#define TICK_MS 100

struct gsd_waiter {
  h2o_req_t *req;
  gsd_waiters *ws;
  uint64_t request_id;
  uint64_t deadline_ms;
  gsd_waiter *prev, *next;
  int linked;
};

void gsd_waiters_init(gsd_waiters *ws, gsd_server *srv) {
  ws->srv = srv;
  ws->head = NULL;
  ws->ticking = 0;
  uv_timer_init(srv->loop, &ws->tick);
  ws->tick.data = ws;
}

static void unlink_waiter(gsd_waiter *w) {
  gsd_waiters *ws = w->ws;
  if (!w->linked) return;
  assert(w->prev ? w->prev->next == w : ws->head == w);
  if (w->prev) w->prev->next = w->next;
  else ws->head = w->next;
  if (w->next) w->next->prev = w->prev;
  w->linked = 0;
  if (!ws->head && ws->ticking) uv_timer_stop(&ws->tick);
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

static void answer_waiter(gsd_waiter *w, const gsd_capture *cap) {
  h2o_req_t *req = w->req;
  json_t *o;
  unlink_waiter(w);
  if (cap->state == GSD_CAPTURE_STORED) {
    gsd_respond_json(req, 200, request_body(cap->request_id, "snapshot_id",
                                            json_integer(cap->snapshot_id)));
    return;
  }
  o = gsd_respond_error_body("capture_failed", cap->reason);
  if (o && (gs_json_set(o, "reason", gs_json_cstring(cap->reason)) ||
            gs_json_set(o, "request_id", gs_json_u64(cap->request_id)))) {
    json_decref(o);
    o = NULL;
  }
  gsd_respond_json(req, 502, o);
}

void gsd_waiters_answer(gsd_waiters *ws, const gsd_capture *cap) {
  gsd_waiter *w = ws->head, *next;
  for (; w; w = next) {
    next = w->next;
    if (w->request_id == cap->request_id) answer_waiter(w, cap);
  }
}

void gsd_waiters_stop(gsd_waiters *ws) {
  gsd_waiter *w;
  while ((w = ws->head) != NULL) {
    unlink_waiter(w);
    gsd_respond_error(w->req, 503, "internal", "the collector is stopping");
  }
  if (!uv_is_closing((uv_handle_t *)&ws->tick)) uv_close((uv_handle_t *)&ws->tick, NULL);
}

static void on_tick(uv_timer_t *t) {
  gsd_waiters *ws = t->data;
  uint64_t now = uv_now(ws->srv->loop);
  gsd_waiter *w = ws->head, *next;
  for (; w; w = next) {
    next = w->next;
    if (now < w->deadline_ms) continue;
    unlink_waiter(w);
    gsd_respond_json(w->req, 504, request_body(w->request_id, "error", json_string("timeout")));
  }
}

static int wait_for(gsd_waiters *ws, h2o_req_t *req, const gsd_capture *cap, uint64_t secs) {
  gsd_waiter *w = h2o_mem_alloc_shared(&req->pool, sizeof *w, waiter_dispose);
  w->req = req;
  w->ws = ws;
  w->request_id = cap->request_id;
  w->deadline_ms = uv_now(ws->srv->loop) + secs * 1000;
  w->prev = NULL;
  w->next = ws->head;
  if (ws->head) ws->head->prev = w;
  ws->head = w;
  w->linked = 1;
  uv_timer_start(&ws->tick, on_tick, TICK_MS, TICK_MS);
  ws->ticking = 1;
  return 0;
}

int gsd_api_capture(gsd_server *srv, gsd_waiters *ws, h2o_req_t *req, const char *device_id) {
  char timeout_text[32];
  int wait, stable_ids, has_timeout;
  uint64_t secs = DEFAULT_WAIT_S;
  const char *code = "internal";
  gsd_capture *cap;
  json_t *o;
  if (gsd_query_flag(req, "wait", &wait) || gsd_query_flag(req, "stable_ids", &stable_ids))
    return gsd_respond_error(req, 400, "bad_request", "wait and stable_ids take 1 or 0");
  has_timeout = gsd_query_get(req, "timeout", timeout_text, sizeof timeout_text);
  if (has_timeout < 0 ||
      (has_timeout && (gsd_request_u64(timeout_text, MAX_WAIT_S, &secs) || secs == 0)))
    return gsd_respond_error(req, 400, "bad_request", "timeout must be 1 to %d seconds", MAX_WAIT_S);
  if (srv->stopping)
    return gsd_respond_error(req, 503, "internal", "the collector is stopping");
  if (gsd_capture_start(srv, device_id, stable_ids, &cap, &code) != GS_OK) {
    if (!strcmp(code, "not_found"))
      return gsd_respond_error(req, 404, "not_found", "no device %s", device_id);
    if (!strcmp(code, "not_connected"))
      return gsd_respond_error(req, 409, "not_connected", "device %s is not connected", device_id);
    if (!strcmp(code, "busy"))
      return gsd_respond_error(req, 409, "busy", "device %s is already capturing", device_id);
    if (!strcmp(code, "disk_full"))
      return gsd_respond_error(req, 507, "disk_full", "%s", gsd_store_error(srv->store));
    return gsd_respond_error(req, 500, "internal", "cannot send the capture request");
  }
  gsd_capture_share(srv, cap);
  if (wait) return wait_for(ws, req, cap, secs);
  o = request_body(cap->request_id, "device_id", gs_json_cstring(device_id));
  return gsd_respond_json(req, 202, o);
}

int gsd_api_capture_status(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  uint64_t id;
  gsd_capture *cap;
  json_t *o;
  int rc;
  if (gsd_request_u64(id_text, UINT64_MAX, &id))
    return gsd_respond_error(req, 404, "not_found", "no capture request %s", id_text);
  if ((cap = gsd_capture_find(srv, id)) != NULL)
    return gsd_respond_json(req, 200, gsd_capture_json(cap));
  rc = gsd_store_capture_get(srv->store, id, &o);
  if (rc == GS_OK) return gsd_respond_json(req, 200, o);
  if (rc != GS_EOF)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  return gsd_respond_error(req, 404, "not_found", "no capture request %s", id_text);
}

