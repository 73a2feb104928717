/* gsd_session_int.h - what the files of an agent session share
 * (gsd_session.c: the connection, framing, timers and the state machine;
 * gsd_session_hello.c: Hello, keys and admission; gsd_session_data.c: a
 * snapshot's stream; gsd_session_finish.c: its end on the thread pool;
 * gsd_session_record.c: --record; gsd_listen.c: the listener and its
 * limits). Not for use outside these files. */
#ifndef GSD_SESSION_INT_H
#define GSD_SESSION_INT_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gcsnap.pb-c.h"
#include "gs_error.h"
#include "gs_sha256.h"
#include "gs_text.h"
#include "gs_units.h"
#include "gs_stream.h"
#include "gs_wire.h"
#include "gsd_auth.h"
#include "gsd_ingest.h"
#include "gsd_log.h"
#include "gsd_metrics.h"
#include "gsd_server.h"

#define FRAME_BUF_MIN (64u << 10)
#define FRAME_BUF_MAX (GS_WIRE_MAX_FRAME + GS_WIRE_PREFIX_MAX)
/* Before Welcome a peer has proven nothing: it may send only a frame the
 * size of a Hello or an AuthProof, so that a connection costs at most a
 * few kilobytes until then, and all of them together at most that times
 * --max-sessions. */
#define PREAUTH_FRAME_MAX 4096u
#define PREAUTH_BUF_MAX (PREAUTH_FRAME_MAX + GS_WIRE_PREFIX_MAX)
/* The session limits and timeouts are settings (gsd_config.h): sessions
 * in all and per address, Hello timeout, idle timeout. */
#define START_TIMEOUT_MS 60000     /* from CaptureRequest to SnapshotBegin */
#define MAX_REFUSED 64             /* refused connections told why at once */
#define LINGER_MS 2000             /* after our Error, for the agent to read it */
#define MAX_WRITE_QUEUE (1u << 20) /* bytes queued to an agent that does not read */

typedef enum session_state {
  ST_HELLO, ST_IDLE, ST_RECEIVING, ST_FINISHING, ST_CLOSING
} session_state;

typedef struct finish_job finish_job;

struct gsd_session {
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_shutdown_t shutdown;
  int open_handles;
  int closing_handles;
  int in_list;
  int aborting;
  gsd_server *srv;
  gsd_session *prev, *next;
  session_state state;
  char address[64];
  char ip[INET6_ADDRSTRLEN];                 /* address without the port */
  int refused;                               /* over a session limit: closing */
  uint64_t accepted_ms, last_rx_ms;          /* uv_now() at accept, at the last bytes */
  int pinged;                                /* keepalive Ping sent since last_rx_ms */
  int write_warned;                          /* the snapshot's write failure is logged */
  char device_id[GSD_DEVICE_ID_MAX + 1];    /* "" until Hello */
  time_t connected_since;
  int64_t session_id;                        /* catalog row; 0 until Hello */
  /* the handshake: the Hello frame, kept until Welcome, and the challenge */
  const uint8_t *frame;                      /* the frame being dispatched */
  size_t frame_len;
  uint8_t *hello;
  size_t hello_len;
  int challenged;                            /* AuthChallenge sent, proof awaited */
  uint8_t nonce[GS_WIRE_NONCE_BYTES];
  uint8_t verifier[GSD_AUTH_VERIFIER_BYTES];
  /* received bytes not yet taken as frames */
  uint8_t *buf;
  size_t len, cap, need;
  /* the snapshot being received */
  gsd_ingest *ingest;
  int64_t snapshot_id;                       /* its catalog row; 0 when none */
  int64_t duplicate_of;                      /* already stored as this one */
  gsd_fault deferred;                        /* a failure told at SnapshotEnd */
  uint64_t request_id, agent_snapshot_id;
  uint64_t wire_bytes;
  uint64_t begin_ns, end_ns;                 /* SnapshotBegin, SnapshotEnd */
  gsd_capture *capture;                      /* asked for and not ended */
  finish_job *job;
  int stop_after_job;
  /* --record */
  FILE *rec;
  uint64_t frame_ns;                         /* when the current frame was taken */
  uint64_t rec_start_ns;
};

struct finish_job {
  uv_work_t work;
  gsd_session *s;
  char *final_path;
  char *shown_name;
  int rc;
  char err[256];
  char *summary;
  gsd_snapshot_end end;
};

/* gsd_session.c: the connection. Messages to the agent; the one timer
 * (Hello, idle, capture start, linger), armed for the state; the end of a
 * capture or a snapshot; closing at once, or after an Error (abort, which
 * also fails a snapshot being received); the frames received so far. */
void gsd_sess_resume_reading(gsd_session *s);
void gsd_sess_send_error(gsd_session *s, unsigned code, const char *message, uint64_t request_id);
void gsd_sess_send_ack(gsd_session *s, int64_t stored_id);
void gsd_sess_send_welcome(gsd_session *s);
void gsd_sess_send_challenge(gsd_session *s);
void gsd_sess_arm_timer(gsd_session *s);
void gsd_sess_end_capture(gsd_session *s, const char *reason);
void gsd_sess_forget_snapshot(gsd_session *s);
void gsd_sess_fail_snapshot(gsd_session *s, const char *reason);
void gsd_sess_close_now(gsd_session *s);
void gsd_sess_abort_session(gsd_session *s, unsigned code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
void gsd_sess_process(gsd_session *s);

/* gsd_session_hello.c: Hello, AuthProof, and the limits of the settings. */
void gsd_sess_on_proof(gsd_session *s, const Gcsnap__AuthProof *p);
void gsd_sess_on_hello(gsd_session *s, const Gcsnap__Hello *h);
void gsd_sess_set_limits(gsd_session *s);

/* gsd_session_data.c: the messages of a snapshot's stream. */
void gsd_sess_on_begin(gsd_session *s, const Gcsnap__SnapshotBegin *b, size_t frame_bytes);
void gsd_sess_on_agent_error(gsd_session *s, const Gcsnap__Error *e);
void gsd_sess_on_data(gsd_session *s, const Gcsnap__Envelope *env);

/* gsd_session_finish.c: a whole stream's end, on the thread pool. */
void gsd_sess_start_finish(gsd_session *s);

/* gsd_session_record.c: --record (the Hello kept is the first frame). */
void gsd_sess_stop_recording(gsd_session *s);
void gsd_sess_start_recording(gsd_session *s);
void gsd_sess_record_frame(gsd_session *s, const uint8_t *frame, size_t len);

#endif
