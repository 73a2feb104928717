/* gsd_server.h - the collector daemon's state, shared by its modules.
 *
 * One libuv loop runs everything: the agent listener and its sessions
 * (gsd_session.c), the capture requests (gsd_capture.c), the schedules
 * (gsd_schedule.c), the HTTP API (gsd_http.c, gsd_api_*.c) and the catalog
 * (gsd_store.c). Only the end of a snapshot
 * (sync, rename, summary) runs on libuv's thread pool. */
#ifndef GSD_SERVER_H
#define GSD_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>
#include <uv.h>
#include "gsd_config.h"
#include "gsd_store.h"

#define GSD_VERSION_STRING GS_VERSION

typedef struct gsd_session gsd_session;
typedef struct gsd_http gsd_http;
typedef struct gsd_scheduler gsd_scheduler;

typedef enum gsd_capture_state {
  GSD_CAPTURE_REQUESTED, GSD_CAPTURE_STREAMING, GSD_CAPTURE_STORED, GSD_CAPTURE_FAILED
} gsd_capture_state;

/* A capture asked for through the API, from the request to its end. */
typedef struct gsd_capture {
  uint64_t request_id;
  char device_id[GSD_DEVICE_ID_MAX + 1];
  gsd_capture_state state;
  int64_t snapshot_id;           /* catalog ID once the stream started */
  char reason[256];              /* why it failed */
  gsd_session *session;          /* while in flight */
  uint64_t requested_ms;         /* uv_now() when asked */
  int64_t schedule_id;           /* the schedule that asked; 0 for the API */
  int64_t forward_id;            /* its row when forwarded between collectors; 0: none */
  int forward_asker;             /* forwarded to the device's collector, by us */
  int shared;                    /* its state is kept in a shared catalog */
  struct gsd_capture *next;      /* newest first */
} gsd_capture;

typedef struct gsd_server {
  uv_loop_t *loop;
  const gsd_config *cfg;
  gsd_store *store;
  gsd_http *http;
  gsd_scheduler *sched;
  uv_tcp_t listener;
  int listening;
  gsd_session *sessions;
  size_t nsessions;
  gsd_capture *captures;
  size_t ncaptures;
  uint64_t next_request_id;
  time_t started;
  int stopping;
} gsd_server;

/* ---- sessions (gsd_session.c) ---- */

/* Binds and listens for agents; the address bound (with the port chosen
 * for port 0) goes to bound. */
int gsd_sessions_listen(gsd_server *srv, const char *addr, char *bound, size_t cap);
/* Stops listening and ends every session (snapshots being received fail). */
void gsd_sessions_stop(gsd_server *srv);
gsd_session *gsd_session_find(gsd_server *srv, const char *device_id);
/* The connected session after s (the first for NULL): past Hello, not
 * closing. */
gsd_session *gsd_session_next(gsd_server *srv, gsd_session *s);
const char *gsd_session_device(const gsd_session *s);
/* Sessions past Hello and not closing. */
size_t gsd_sessions_connected(const gsd_server *srv);
/* A capture is requested, streaming or being stored. */
int gsd_session_busy(const gsd_session *s);
/* Sends CaptureRequest for cap, which the session then owns until it ends. */
int gsd_session_request(gsd_session *s, gsd_capture *cap, int stable_ids);
/* Adds the live fields of a device entry: address, connected_since. */
int gsd_session_describe(const gsd_session *s, json_t *device);

/* ---- captures (gsd_capture.c) ---- */

/* Ended captures a collector can tell about: in its list, and in a shared
 * catalog's (per collector asked). */
#define GSD_CAPTURES_KEPT 1000

/* Asks the device for a capture. Returns GS_OK with *cap, or an error with
 * *code: "not_found", "not_connected", "busy", "disk_full" (the store has
 * less free space than --min-free-bytes; gsd_store_error() says how much)
 * or "internal". */
int gsd_capture_start(gsd_server *srv, const char *device_id, int stable_ids,
                      gsd_capture **cap, const char **code);
/* Keeps cap's state in a shared catalog from now on, so that every
 * collector can tell it (a capture asked through the API). */
void gsd_capture_share(gsd_server *srv, gsd_capture *cap);
gsd_capture *gsd_capture_find(gsd_server *srv, uint64_t request_id);
/* On a shared catalog: runs the captures other collectors forwarded to
 * this one, and ends those this one forwarded that were answered
 * (gsd_forward.c). */
void gsd_forward_poll(gsd_server *srv);
/* The stream for cap started, as snapshot snapshot_id of the catalog. */
void gsd_capture_streaming(gsd_server *srv, gsd_capture *cap, int64_t snapshot_id);
/* cap ended; reason NULL when stored. Answers the HTTP waiters. */
void gsd_capture_end(gsd_server *srv, gsd_capture *cap, const char *reason);
json_t *gsd_capture_json(const gsd_capture *cap);
void gsd_captures_free(gsd_server *srv);

/* ---- schedules (gsd_schedule.c) ---- */

/* Loads the schedules and their last runs and starts the timer. */
int gsd_schedules_start(gsd_server *srv, char *err, size_t cap);
void gsd_schedules_stop(gsd_server *srv);
void gsd_schedules_free(gsd_server *srv);
/* Reads the schedules from the catalog again: on a shared catalog, other
 * collectors add and remove them too. */
int gsd_schedules_reload(gsd_server *srv);
/* Stores sch (setting its id) and runs it from now on. */
int gsd_schedules_add(gsd_server *srv, gsd_schedule *sch);
/* GS_EOF when there is no such schedule. */
int gsd_schedules_remove(gsd_server *srv, int64_t id);
const gsd_schedule *gsd_schedules_find(gsd_server *srv, int64_t id);
/* A snapshot of device_id was stored: applies the retention rules of the
 * schedules that cover it. */
void gsd_schedules_stored(gsd_server *srv, const char *device_id);
json_t *gsd_schedule_json(gsd_server *srv, const gsd_schedule *sch);
/* {"schedules": [...]}. */
json_t *gsd_schedules_json(gsd_server *srv);
/* The device's place in the interval (see gsd_schedule.c). */
uint64_t gsd_schedule_offset_ms(const gsd_schedule *sch, const char *device_id);
int64_t gsd_schedule_now_ms(void);

/* ---- HTTP API (gsd_http.c) ---- */

int gsd_http_start(gsd_server *srv, const char *addr, char *bound, size_t cap);
/* Answers the requests waiting for cap. */
void gsd_http_capture_done(gsd_http *http, const gsd_capture *cap);
/* Stops listening and answers every waiting request; once the connections
 * are closed, gsd_http_close releases the loop's handles, and gsd_http_free
 * the rest after the loop ended. */
void gsd_http_stop(gsd_http *http);
size_t gsd_http_connections(const gsd_http *http);

void gsd_http_close(gsd_http *http);
void gsd_http_free(gsd_http *http);

#endif
