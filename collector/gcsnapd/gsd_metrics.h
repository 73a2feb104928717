/* gsd_metrics.h - the collector's Prometheus metrics, served at GET /metrics
 * in the text exposition format (version 0.0.4).
 *
 * The counters live in this module and are moved by the loop thread only,
 * at the few places where a session, a capture or a snapshot changes state;
 * the gauges are read when the page is asked for. The page is behind the
 * same bearer token as the API. */
#ifndef GSD_METRICS_H
#define GSD_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include "gsd_server.h"

struct st_h2o_req_t;                    /* h2o_req_t, for the HTTP side only */

/* A device passed Hello (and its key) and is connected. */
void gsd_metrics_session_opened(void);
/* A connection was closed before it became a session, with that wire
 * error code (GS_WIRE_E_*): the refusal's reason. */
void gsd_metrics_session_refused(unsigned wire_code);
/* A capture ended. trigger: "api", "schedule" or "agent" (a snapshot the
 * agent sent on its own); stored: 1, else it failed. */
void gsd_metrics_capture(const char *trigger, int stored);
/* Bytes read from agents' connections. */
void gsd_metrics_received(size_t bytes);
/* A snapshot was stored: its file's bytes and the time from its
 * SnapshotBegin to its catalog row, in nanoseconds. */
void gsd_metrics_stored(uint64_t file_bytes, uint64_t ingest_ns);
/* A schedule asked for a capture lag_ms after its run was due. */
void gsd_metrics_schedule_lag(int64_t lag_ms);

/* Whether req is for /metrics (any query). */
int gsd_metrics_path(const struct st_h2o_req_t *req);
/* Answers GET /metrics; other methods get 405. */
int gsd_api_metrics(gsd_server *srv, struct st_h2o_req_t *req);

#endif
