/* gs_session.h - the agent's session with a collector.
 *
 * Connects, says Hello, waits for Welcome, then answers each CaptureRequest
 * with a snapshot streamed through the stream sink, answers Ping, and logs
 * Ack and Error lines on standard error. When the link drops it reconnects
 * after a delay that doubles from GS_SESSION_BACKOFF_MS up to retry_max_ms,
 * with jitter so that many devices cut off at once do not come back at
 * once. With once set, it sends one snapshot unasked and waits for its Ack
 * instead. */
#ifndef GS_SESSION_H
#define GS_SESSION_H

#include <stdint.h>
#include "gs_source.h"
#include "gs_walk.h"

#define GS_SESSION_BACKOFF_MS 500u
/* How long --once waits for the collector's verdict on its snapshot. */
#define GS_SESSION_ACK_MS 120000u
/* Idle this long, the agent pings the collector, which keeps a dead link
 * from going unnoticed for ever. */
#define GS_SESSION_IDLE_MS 30000u

typedef struct gs_session_options {
  const char *host, *port;
  const char *device_id;
  const char *app_name;
  unsigned connect_timeout_ms;
  unsigned retry_max_ms;
  int once;
  int json;                     /* one line of statistics per snapshot on stdout */
  gs_walk_options walk;         /* stable_ids here applies to every capture */
} gs_session_options;

/* The outcome of --once (a session without it ends only on a fatal error). */
typedef enum gs_session_result {
  GS_SESSION_STORED = 0,        /* the collector acknowledged the snapshot */
  GS_SESSION_FAILED = 1,        /* refused, the capture failed or the link dropped */
  GS_SESSION_UNREACHABLE = 3    /* could not connect */
} gs_session_result;

gs_session_result gs_session_run(gs_source *src, const gs_session_options *opt);

/* What Hello says of this build: "x86_64", "armv5te", ... */
const char *gs_session_architecture(void);

#endif
