/* gsd_api.h - the resources of the HTTP API, one file each, as the router
 * (gsd_http.c) calls them.
 *
 * Each handler answers req (gsd_respond.h) and returns 0; ID and device
 * arguments are path segments, already percent-decoded. */
#ifndef GSD_API_H
#define GSD_API_H

#include <stdint.h>
#include "h2o.h"
#include "gsd_server.h"

/* GET /api/health and GET /api/devices (gsd_api_devices.c). */
int gsd_api_health(gsd_server *srv, h2o_req_t *req);
int gsd_api_devices(gsd_server *srv, h2o_req_t *req);
/* GET /metrics (gsd_api_devices.c): the Prometheus page of gsd_metrics. */
int gsd_api_metrics(gsd_server *srv, h2o_req_t *req);

/* GET /api/snapshots[?device=&status=&limit=] and /api/snapshots/ID
 * (gsd_api_snapshots.c). */
int gsd_api_snapshots(gsd_server *srv, h2o_req_t *req);
int gsd_api_snapshot(gsd_server *srv, h2o_req_t *req, const char *id_text);
/* The stored file of a complete snapshot (free it), or NULL once req is
 * answered 404 or 500. */
char *gsd_api_snapshot_file(gsd_server *srv, h2o_req_t *req, const char *id_text);

/* GET /api/snapshots/ID/download?format=zst|gclog|gens (gsd_api_download.c). */
int gsd_api_download(gsd_server *srv, h2o_req_t *req, const char *id_text);
/* Before a stored file is served or analysed: its size is the catalog
 * row's. Else the file is logged and marked damaged, req is answered 500
 * corrupt, and -1 is returned (gsd_api_download.c). */
int gsd_api_check_size(gsd_server *srv, h2o_req_t *req, int64_t id, const json_t *row,
                       const char *path);

/* POST /api/devices/ID/capture[?wait=1&timeout=S] and GET /api/captures/ID
 * (gsd_api_captures.c). Requests that wait are parked in a gsd_waiters
 * until their capture ends or their time runs out. */
typedef struct gsd_waiter gsd_waiter;
typedef struct gsd_waiters {
  gsd_server *srv;
  gsd_waiter *head;
  uv_timer_t tick;
  int ticking;
} gsd_waiters;
void gsd_waiters_init(gsd_waiters *ws, gsd_server *srv);
/* Answers the requests waiting for cap. */
void gsd_waiters_answer(gsd_waiters *ws, const gsd_capture *cap);
/* Answers every waiting request 503 and closes the timer. */
void gsd_waiters_stop(gsd_waiters *ws);
int gsd_api_capture(gsd_server *srv, gsd_waiters *ws, h2o_req_t *req, const char *device_id);
int gsd_api_capture_status(gsd_server *srv, h2o_req_t *req, const char *id_text);

/* POST /api/devices/ID/snapshots[?note=TEXT]: the body, a heap file of any
 * format, stored as a snapshot of the device; 202 with its ID
 * (gsd_api_upload.c). */
int gsd_api_upload(gsd_server *srv, h2o_req_t *req, const char *device_id);

/* GET /api/snapshots/ID/dominators, .../paths, /api/diff, and
 * /api/devices/ID/trend (gsd_api_analyses.c, run by gsd_analysis.c). */
int gsd_api_dominators(gsd_server *srv, h2o_req_t *req, const char *id_text);
int gsd_api_paths(gsd_server *srv, h2o_req_t *req, const char *id_text);
int gsd_api_diff(gsd_server *srv, h2o_req_t *req);
int gsd_api_trend(gsd_server *srv, h2o_req_t *req, const char *device_id);

/* GET /api/snapshots/ID/dominators?parent=OBJ|root[&section=&offset=&limit=]:
 * one node of the cached dominator tree and a page of its children
 * (gsd_api_domtree.c). */
int gsd_api_domtree(gsd_server *srv, h2o_req_t *req, const char *id_text);

/* GET /api/fleet[?last=N&offset=&limit=&sort=&order=&filter=&threshold=]:
 * devices with their growth and suspects (gsd_api_fleet.c). */
int gsd_api_fleet(gsd_server *srv, h2o_req_t *req);

/* GET /api/snapshots/ID/generations[?top=N]: objects, bytes and top types
 * by generation, from the ranges kept beside the snapshot (gs_genfile.h). */
int gsd_api_generations(gsd_server *srv, h2o_req_t *req, const char *id_text);
/* GET /api/snapshots/ID/progress: the analyses running or waiting on the
 * snapshot, with how much of its file each has read (gsd_api_analyses.c). */
int gsd_api_progress(gsd_server *srv, h2o_req_t *req, const char *id_text);

/* GET /api/snapshots/ID/types (gsd_types.c). */
int gsd_api_types(gsd_server *srv, h2o_req_t *req, const char *id_text);

/* POST, GET and DELETE of /api/schedules[/ID] (gsd_api_schedules.c). */
int gsd_api_schedule_add(gsd_server *srv, h2o_req_t *req);
int gsd_api_schedules(gsd_server *srv, h2o_req_t *req);
int gsd_api_schedule(gsd_server *srv, h2o_req_t *req, const char *id_text);
int gsd_api_schedule_remove(gsd_server *srv, h2o_req_t *req, const char *id_text);

#endif
