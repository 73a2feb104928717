/* gsd_capture.c - captures asked for through the HTTP API.
 *
 * A capture lives from the request to its end (stored or failed) in the
 * server's list, newest first, so that GET /api/captures/ID can say what
 * became of it. A device has at most one capture in flight: a second
 * request is refused (409 busy), not queued, so that nobody waits behind a
 * capture they did not see start. The list keeps the last MAX_KEPT ended
 * captures. On a shared catalog the state of each capture asked through
 * the API is kept in the catalog too, so that any collector can answer
 * GET /api/captures/ID; those of schedules and of captures run for
 * another collector are not (nobody holds their IDs but the log), which
 * spares the catalog three writes a capture under a fleet's schedules. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_log.h"
#include "gsd_metrics.h"
#include "gsd_server.h"

static const char *const state_names[] = {"requested", "streaming", "stored", "failed"};

/* The catalog's copy of a shared capture's state; without it, only this
 * collector can tell it, which is logged, not fatal. */
static void record(gsd_server *srv, const gsd_capture *cap) {
  const char *reason = cap->state == GSD_CAPTURE_FAILED ? cap->reason : NULL;
  if (!cap->shared) return;
  if (gsd_store_capture_state(srv->store, cap->request_id, cap->device_id,
                              state_names[cap->state], cap->snapshot_id, reason) != GS_OK)
    gsd_log_warn("capture request %llu: %s", (unsigned long long)cap->request_id,
                 gsd_store_error(srv->store));
}

/* Drops the oldest ended captures beyond MAX_KEPT. */
static void prune(gsd_server *srv) {
  gsd_capture **p = &srv->captures;
  size_t kept = 0;
  while (*p) {
    gsd_capture *c = *p;
    int ended = c->state == GSD_CAPTURE_STORED || c->state == GSD_CAPTURE_FAILED;
    if (ended && kept >= GSD_CAPTURES_KEPT) {
      *p = c->next;
      free(c);
      srv->ncaptures--;
      continue;
    }
    kept++;
    p = &c->next;
  }
}

static gsd_capture *new_capture(gsd_server *srv, const char *device_id) {
  gsd_capture *cap = calloc(1, sizeof *cap);
  if (!cap) return NULL;
  cap->request_id = srv->next_request_id;
  if (gsd_store_request_issued(srv->store, &cap->request_id) != GS_OK)
    gsd_log_warn("capture of %s: %s", device_id, gsd_store_error(srv->store));
  srv->next_request_id = cap->request_id + 1;
  strcpy(cap->device_id, device_id);
  cap->state = GSD_CAPTURE_REQUESTED;
  cap->requested_ms = uv_now(srv->loop);
  return cap;
}

static void keep_capture(gsd_server *srv, gsd_capture *cap) {
  cap->next = srv->captures;
  srv->captures = cap;
  srv->ncaptures++;
  prune(srv);
}

/* A device whose session another collector on the catalog holds: the
 * capture is forwarded to it, and ends when its answer comes back. */
static int forward(gsd_server *srv, const char *device_id, int stable_ids, gsd_capture **out) {
  char holder[128];
  gsd_capture *cap;
  if (gsd_store_device_holder(srv->store, device_id, holder, sizeof holder) != GS_OK)
    return GS_EOF;
  if (!(cap = new_capture(srv, device_id))) return GS_ENOMEM;
  if (gsd_store_forward_ask(srv->store, device_id, holder, stable_ids, &cap->forward_id) != GS_OK) {
    gsd_log_error("%s", gsd_store_error(srv->store));
    free(cap);
    return GS_EIO;
  }
  cap->forward_asker = 1;
  gsd_log_info("capture request %llu for %s forwarded to collector %s",
               (unsigned long long)cap->request_id, device_id, holder);
  keep_capture(srv, cap);
  *out = cap;
  return GS_OK;
}

int gsd_capture_start(gsd_server *srv, const char *device_id, int stable_ids,
                      gsd_capture **out, const char **code) {
  gsd_session *s = gsd_session_find(srv, device_id);
  gsd_capture *cap;
  *out = NULL;
  if (!s) {
    int known = strlen(device_id) <= GSD_DEVICE_ID_MAX &&
                gsd_store_device_known(srv->store, device_id) == GS_OK;
    if (known && forward(srv, device_id, stable_ids, out) == GS_OK) return GS_OK;
    *code = known ? "not_connected" : "not_found";
    return GS_EINVAL;
  }
  if (gsd_session_busy(s)) {
    *code = "busy";
    return GS_EINVAL;
  }
  /* No capture the store has no room for: refused before the agent walks
   * its heap (the message is gsd_store_error()). */
  if (gsd_store_check_space(srv->store, srv->cfg->min_free_bytes) != GS_OK) {
    gsd_log_warn("capture of %s refused: %s", device_id, gsd_store_error(srv->store));
    *code = "disk_full";
    return GS_ELIMIT;
  }
  if (!(cap = new_capture(srv, device_id))) {
    *code = "internal";
    return GS_ENOMEM;
  }
  if (gsd_session_request(s, cap, stable_ids) != GS_OK) {
    free(cap);
    *code = "internal";
    return GS_EIO;
  }
  keep_capture(srv, cap);
  *out = cap;
  return GS_OK;
}

void gsd_capture_share(gsd_server *srv, gsd_capture *cap) {
  cap->shared = 1;
  record(srv, cap);
}

gsd_capture *gsd_capture_find(gsd_server *srv, uint64_t request_id) {
  gsd_capture *c;
  for (c = srv->captures; c; c = c->next)
    if (c->request_id == request_id) return c;
  return NULL;
}

void gsd_capture_streaming(gsd_server *srv, gsd_capture *cap, int64_t snapshot_id) {
  int started = cap->state == GSD_CAPTURE_REQUESTED;
  cap->state = GSD_CAPTURE_STREAMING;
  cap->snapshot_id = snapshot_id;
  if (started) record(srv, cap);
}

void gsd_capture_end(gsd_server *srv, gsd_capture *cap, const char *reason) {
  /* A capture ends once: stored or failed is final. */
  assert(cap->state == GSD_CAPTURE_REQUESTED || cap->state == GSD_CAPTURE_STREAMING);
  cap->session = NULL;
  gsd_metrics_capture(cap->schedule_id ? "schedule" : "api", reason == NULL);
  if (reason) {
    cap->state = GSD_CAPTURE_FAILED;
    strncpy(cap->reason, reason, sizeof cap->reason - 1);
    gsd_log_info("capture request %llu for %s failed: %s", (unsigned long long)cap->request_id,
                 cap->device_id, reason);
  } else {
    cap->state = GSD_CAPTURE_STORED;
  }
  record(srv, cap);
  /* Asked through another collector: the answer goes back through the catalog. */
  if (cap->forward_id && !cap->forward_asker &&
      gsd_store_forward_answer(srv->store, cap->forward_id, reason ? 0 : cap->snapshot_id,
                               reason) != GS_OK)
    gsd_log_error("%s", gsd_store_error(srv->store));
  if (srv->http) gsd_http_capture_done(srv->http, cap);
}

json_t *gsd_capture_json(const gsd_capture *cap) {
  json_t *o = json_object();
  int stored = cap->state == GSD_CAPTURE_STORED;
  if (!o || gs_json_set(o, "request_id", gs_json_u64(cap->request_id)) ||
      gs_json_set(o, "device_id", gs_json_cstring(cap->device_id)) ||
      gs_json_set(o, "state", json_string(state_names[cap->state])) ||
      gs_json_set(o, "snapshot_id", stored ? json_integer(cap->snapshot_id) : json_null()) ||
      gs_json_set(o, "reason", cap->state == GSD_CAPTURE_FAILED ? gs_json_cstring(cap->reason)
                                                                : json_null())) {
    json_decref(o);
    return NULL;
  }
  return o;
}

void gsd_captures_free(gsd_server *srv) {
  while (srv->captures) {
    gsd_capture *c = srv->captures;
    srv->captures = c->next;
    free(c);
  }
  srv->ncaptures = 0;
}
