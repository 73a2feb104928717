/* gsd_forward.c - captures forwarded between collectors on a shared
 * catalog (store/gsd_pg_forward.c). A capture asked through a collector
 * that does not hold the device's session is queued in the catalog for the
 * one that does (gsd_capture.c); every collector polls the catalog: it
 * runs the captures queued for it as if asked through its own API, and
 * ends those it forwarded once their answer is there, which answers the
 * HTTP clients waiting on them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gsd_log.h"
#include "gsd_server.h"

/* The captures queued for this collector: each is run, or answered with
 * why it cannot be. */
static void take(gsd_server *srv) {
  gsd_forward *v;
  size_t n, i;
  if (gsd_store_forward_take(srv->store, &v, &n) != GS_OK) {
    gsd_log_error("%s", gsd_store_error(srv->store));
    return;
  }
  for (i = 0; i < n; i++) {
    const char *code = "not_connected";
    char reason[160];
    gsd_capture *cap;
    /* Only a session of ours: never forwarded again. */
    if (gsd_session_find(srv, v[i].device_id) &&
        gsd_capture_start(srv, v[i].device_id, v[i].stable_ids, &cap, &code) == GS_OK) {
      cap->forward_id = v[i].id;
      continue;
    }
    snprintf(reason, sizeof reason, "the collector holding the device refused it: %s", code);
    if (gsd_store_forward_answer(srv->store, v[i].id, 0, reason) != GS_OK)
      gsd_log_error("%s", gsd_store_error(srv->store));
  }
  free(v);
}

static gsd_capture *find_forwarded(gsd_server *srv, int64_t forward_id) {
  gsd_capture *c;
  for (c = srv->captures; c; c = c->next)
    if (c->forward_asker && c->forward_id == forward_id) return c;
  return NULL;
}

/* The answers to the captures this collector forwarded. */
static void answers(gsd_server *srv) {
  gsd_forward *v;
  size_t n, i;
  if (gsd_store_forward_answers(srv->store, &v, &n) != GS_OK) {
    gsd_log_error("%s", gsd_store_error(srv->store));
    return;
  }
  for (i = 0; i < n; i++) {
    gsd_capture *cap = find_forwarded(srv, v[i].id);
    if (!cap || cap->state != GSD_CAPTURE_REQUESTED) continue;
    cap->snapshot_id = v[i].snapshot_id;
    gsd_capture_end(srv, cap, v[i].snapshot_id ? NULL : v[i].reason);
  }
  free(v);
}

void gsd_forward_poll(gsd_server *srv) {
  if (srv->stopping) return;
  take(srv);
  answers(srv);
}
