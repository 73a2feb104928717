/* gs_session_int.h - what the two files of the agent's session share
 * (gs_session.c: the link to a collector and --once; gs_session_loop.c:
 * the long-running session). Not for use outside these files. */
#ifndef GS_SESSION_INT_H
#define GS_SESSION_INT_H

#include <stdint.h>
#include "gs_link.h"
#include "gs_session.h"
#include "gs_source.h"
#include "gs_wire_decode.h"
#include "gs_wire_writer.h"

#define AGENT_NAME "gcsnap-agent"

/* How a step ended: the link is still fine, or it is gone. */
enum { STEP_OK = 0, STEP_LINK = 1, STEP_REFUSED = 2 };

typedef struct gs_sess {
  gs_source *src;
  const gs_session_options *opt;
  gs_link *link;
  uint64_t last_snapshot_id;
  uint64_t rng;
  /* the long-running session's clocks, in gs_port_time_us() */
  unsigned backoff;
  uint64_t next_connect, next_ping, next_every, next_check, cooldown_until;
  uint64_t next_gone;           /* when to ask the source whether its program exited */
  uint64_t upload_after;        /* uploads wait until then */
  /* heap bytes after the last capture: what growth is measured from */
  uint64_t baseline;
  int have_baseline;
  /* the spooled snapshot sent and waiting for its Ack */
  uint64_t inflight, inflight_deadline;
  uint64_t failing;             /* the snapshot whose uploads broke the link */
  unsigned failures;
  int refused;                  /* the last handshake failed on the key */
  unsigned addr;                /* the collector tried (opt->hosts) */
  unsigned tried;               /* collectors that failed since the last Welcome */
} gs_sess;

/* gs_session.c: logging, IDs, the link's messages, connecting, a capture
 * streamed over the link. */
void gs_sess_log(const char *fmt, const char *a, const char *b);
void gs_sess_log_error(const gs_wire_control *m);
void gs_sess_log_ack(const gs_wire_control *m);
uint64_t gs_sess_snapshot_id(gs_sess *s);
int gs_sess_send_ping(gs_sess *s, uint64_t nonce, int reply);
int gs_sess_send_error(gs_sess *s, unsigned code, const char *message, uint64_t request_id);
int gs_sess_recv(gs_sess *s, gs_wire_control *m, int timeout_ms);
int gs_sess_unexpected(gs_sess *s, const gs_wire_control *m, const char *when);
int gs_sess_connect(gs_sess *s);
void gs_sess_print_json(gs_sess *s, const gs_wire_snapshot *snap, const gs_wire_counts *c,
                        uint64_t us);
int gs_sess_capture(gs_sess *s, uint64_t request_id, int stable_ids, const char *trigger,
                    uint64_t *snapshot_id, int *sent);

/* gs_session_loop.c: runs until the agent is stopped. */
/* Runs until the agent is stopped, or until the source's program is gone
 * (then returns). */
void gs_sess_loop(gs_sess *s);

#endif
