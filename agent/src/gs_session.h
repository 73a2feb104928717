/* gs_session.h - the agent's session with a collector.
 *
 * Connects, says Hello, waits for Welcome, then answers each CaptureRequest
 * with a snapshot streamed through the stream sink, answers Ping, and logs
 * Ack and Error lines on standard error. When the link drops it reconnects
 * after a delay that doubles from GS_SESSION_BACKOFF_MS up to retry_max_ms,
 * with jitter so that many devices cut off at once do not come back at
 * once. With once set, it sends one snapshot unasked and waits for its Ack
 * instead.
 *
 * Without once, the agent may also capture on its own, connected or not: on
 * a local schedule (every_ms) and when the heap grows (triggers, checked
 * every check_ms from the source's heap_bytes). Such a snapshot is sent
 * unasked (request 0, tagged with what made it) or, with a spool, written
 * to the spool first and sent from there, oldest first, one at a time: a
 * spooled snapshot leaves the spool only when the collector acknowledged
 * it, so a collector that is down or a link that drops loses nothing.
 *
 * When the collector answers Hello with AuthChallenge, the agent proves it
 * holds the device key (proto/README.md); a collector that refuses the key
 * (Error auth) is tried again only after GS_SESSION_REFUSED_MS. */
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
/* A spooled snapshot the collector could not store for now (disk, busy,
 * stopping) is offered again after this long. */
#define GS_SESSION_RETRY_MS 5000u
/* After the collector refused the device's key (or asked for one the
 * agent lacks), the next attempt waits this long, plus up to a quarter
 * more: a wrong key does not fix itself, so retrying fast only fills the
 * collector's log. */
#define GS_SESSION_REFUSED_MS 60000u
/* A spooled snapshot whose upload broke the link this many times running
 * is taken for damaged and dropped, so that it cannot block the spool. */
#define GS_SESSION_UPLOAD_TRIES 5u
/* How often a session asks the source whether its program still runs. */
#define GS_SESSION_GONE_MS 1000u

struct gs_spool;

typedef struct gs_session_options {
  /* The collectors, tried in turn: when one cannot be reached (or the link
   * to it drops) the next one at once, and the first again after the
   * reconnection delay once all have failed. */
  const char *const *hosts, *const *ports;
  unsigned naddrs;              /* at least 1 */
  const char *device_id;
  const char *app_name;
  const uint8_t *key;           /* the device key (GS_WIRE_KEY_BYTES), or NULL */
  unsigned connect_timeout_ms;
  unsigned retry_max_ms;
  int once;
  int json;                     /* one line of statistics per snapshot on stdout */
  gs_walk_options walk;         /* stable_ids here applies to every capture */
  /* captures on the agent's own (not with once) */
  unsigned every_ms;            /* a local schedule, trigger "every"; 0: none */
  const char *growth_trigger;   /* "heap-growth=25%" as given, or NULL */
  uint32_t growth_bp;           /* its threshold in hundredths of a percent */
  const char *bytes_trigger;    /* "heap-bytes=64M" as given, or NULL */
  uint64_t heap_limit;          /* its threshold in bytes */
  unsigned cooldown_ms;         /* at least this long between two trigger captures */
  unsigned check_ms;            /* how often the heap size is read */
  struct gs_spool *spool;       /* store-and-forward; NULL: a snapshot the collector
                                   cannot take now is dropped (and logged) */
} gs_session_options;

/* The outcome of --once (a session without it ends only on a fatal error). */
typedef enum gs_session_result {
  GS_SESSION_STORED = 0,        /* the collector acknowledged the snapshot */
  GS_SESSION_FAILED = 1,        /* refused, the capture failed or the link dropped */
  GS_SESSION_UNREACHABLE = 3,   /* could not connect */
  GS_SESSION_REFUSED = 4,       /* the collector refused the device's key, or wants one */
  GS_SESSION_GONE = 5           /* the program behind the source exited */
} gs_session_result;

gs_session_result gs_session_run(gs_source *src, const gs_session_options *opt);

#endif
