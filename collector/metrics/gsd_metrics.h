/* gsd_metrics.h - the collector's Prometheus metrics, served by gcsnapd at
 * GET /metrics in the text exposition format (version 0.0.4).
 *
 * The counters live in this module and are moved by the daemon's loop
 * thread only, at the few places where a session, a capture or a snapshot
 * changes state; the gauges are the daemon's, read when the page is asked
 * for. */
#ifndef GSD_METRICS_H
#define GSD_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* A device passed Hello (and its key) and is connected. */
void gsd_metrics_session_opened(void);
/* A connection was closed before it became a session, with that wire
 * error code (GS_WIRE_E_*): the refusal's reason. */
void gsd_metrics_session_refused(unsigned wire_code);
/* A capture ended. trigger: "api", "schedule", "agent" (a snapshot the
 * agent sent on its own) or "upload" (a heap file sent to the API);
 * stored: 1, else it failed. */
void gsd_metrics_capture(const char *trigger, int stored);
/* Bytes read from agents' connections. */
void gsd_metrics_received(size_t bytes);
/* A snapshot was stored: its file's bytes and the time from its
 * SnapshotBegin (or upload) to its catalog row, in nanoseconds. */
void gsd_metrics_stored(uint64_t file_bytes, uint64_t ingest_ns);
/* A schedule asked for a capture lag_ms after its run was due. */
void gsd_metrics_schedule_lag(int64_t lag_ms);

/* What the daemon knows now; a negative store_free_bytes is unknown. */
typedef struct gsd_metrics_gauges {
  double agents_connected, sessions_open, captures_pending, http_connections;
  double store_free_bytes, start_time;
} gsd_metrics_gauges;

/* Longest page: its series are a fixed set. */
#define GSD_METRICS_PAGE_MAX 16384

/* Whether the len bytes at path (without the query) are "/metrics". */
int gsd_metrics_path(const char *path, size_t len);
/* Writes the page into out (GSD_METRICS_PAGE_MAX bytes); returns its
 * length. version goes into gcsnapd_build_info. */
size_t gsd_metrics_page(char *out, const char *version, const gsd_metrics_gauges *g);

#endif
