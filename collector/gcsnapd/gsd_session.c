/* gsd_session.c - one agent connection: framing and the session's state
 * machine.
 *
 *   HELLO --Hello--> IDLE --SnapshotBegin--> RECEIVING --SnapshotEnd--> FINISHING
 *                     ^                          |                        |
 *                     +-----(failed: Error)------+----(stored: Ack)-------+
 *
 * Any state can go to CLOSING: a frame that breaks the protocol (bad length
 * prefix, frame above GS_WIRE_MAX_FRAME, undecodable, unexpected for the
 * state, seq gap or repeat, counts or CRC mismatch) is answered with Error,
 * logged with the device and the reason, and ends this session only; a
 * snapshot it cuts short is recorded as failed and its temporary file goes.
 * So do the limits: a Hello later than --hello-timeout, silence longer
 * than --idle-timeout (idle agents are pinged first, so only one that
 * answers nothing is cut), a snapshot over --max-objects or
 * --max-references (gsd_ingest.c), and a connection over --max-sessions or
 * --max-sessions-per-address, which is told why (Error 9) and closed.
 *
 * Frames are read into one buffer per session that grows to the largest
 * frame seen (at most the maximum frame plus its prefix). While a stored
 * snapshot is synced and summarized on the thread pool (FINISHING) the
 * session stops reading, so whatever the agent sends next waits in the
 * socket: the loop never buffers more than one frame per session.
 *
 * A device with a key proves it before Welcome (proto/README.md): Hello
 * is answered with AuthChallenge, whose AuthProof must come within the
 * Hello timeout; until then the session stays in HELLO, unnamed to the
 * rest of the server. Once one device has a key (or with --require-keys),
 * a device without one is refused.
 *
 * With --record, every frame a session takes from its Hello on is also
 * written to DIR/<device>-<session>.gcstream with the time it was taken
 * (gs_stream.h), for gcsnap replay. */
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
#include "gsd_server.h"

#define FRAME_BUF_MIN (64u << 10)
#define FRAME_BUF_MAX (GS_WIRE_MAX_FRAME + GS_WIRE_PREFIX_MAX)
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

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b);
static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *b);

static void resume_reading(gsd_session *s) {
  uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read);
}

static void abort_session(gsd_session *s, unsigned code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
static void process(gsd_session *s);

static const char *name_of(const gsd_session *s) {
  return s->device_id[0] ? s->device_id : "(no Hello yet)";
}

/* ---- sending ------------------------------------------------------------ */

typedef struct out_frame {
  uv_write_t req;
  uint8_t data[];
} out_frame;

static void on_written(uv_write_t *req, int status) {
  (void)status;   /* a failed write shows up as a read error too */
  free((out_frame *)req);
}

static int send_env(gsd_session *s, const Gcsnap__Envelope *env) {
  size_t n = gcsnap__envelope__get_packed_size(env), p;
  out_frame *o = malloc(sizeof *o + GS_WIRE_PREFIX_MAX + n);
  uv_buf_t b;
  if (!o) return GS_ENOMEM;
  p = gs_wire_prefix(o->data, n);
  gcsnap__envelope__pack(env, o->data + p);
  b = uv_buf_init((char *)o->data, (unsigned)(p + n));
  if (uv_write(&o->req, (uv_stream_t *)&s->tcp, &b, 1, on_written) != 0) {
    free(o);
    return GS_EIO;
  }
  if (s->tcp.write_queue_size > MAX_WRITE_QUEUE && s->state != ST_CLOSING)
    abort_session(s, GS_WIRE_E_PROTOCOL, "the agent does not read what the collector sends");
  return GS_OK;
}

static void send_error(gsd_session *s, unsigned code, const char *message, uint64_t request_id) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Error e = GCSNAP__ERROR__INIT;
  e.code = code;
  e.message = (char *)message;
  e.request_id = request_id;
  env.body_case = GCSNAP__ENVELOPE__BODY_ERROR;
  env.error = &e;
  send_env(s, &env);
}

static void send_ack(gsd_session *s, int64_t stored_id) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Ack a = GCSNAP__ACK__INIT;
  a.request_id = s->request_id;
  a.snapshot_id = s->agent_snapshot_id;
  a.stored_id = (uint64_t)stored_id;
  env.body_case = GCSNAP__ENVELOPE__BODY_ACK;
  env.ack = &a;
  send_env(s, &env);
}

static void send_welcome(gsd_session *s) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Welcome w = GCSNAP__WELCOME__INIT;
  w.protocol_version = GS_WIRE_PROTOCOL_VERSION;
  w.collector_version = (char *)GSD_VERSION_STRING;
  w.max_frame = GS_WIRE_MAX_FRAME;
  env.body_case = GCSNAP__ENVELOPE__BODY_WELCOME;
  env.welcome = &w;
  send_env(s, &env);
}

static void send_challenge(gsd_session *s) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__AuthChallenge c = GCSNAP__AUTH_CHALLENGE__INIT;
  c.nonce.data = s->nonce;
  c.nonce.len = sizeof s->nonce;
  c.scheme = (char *)GS_WIRE_AUTH_SCHEME;
  env.body_case = GCSNAP__ENVELOPE__BODY_AUTH_CHALLENGE;
  env.auth_challenge = &c;
  send_env(s, &env);
}

static void send_pong(gsd_session *s, uint64_t nonce) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Ping p = GCSNAP__PING__INIT;
  p.nonce = nonce;
  p.reply = 1;
  env.body_case = GCSNAP__ENVELOPE__BODY_PING;
  env.ping = &p;
  send_env(s, &env);
}

static void send_ping(gsd_session *s) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Ping p = GCSNAP__PING__INIT;
  p.nonce = s->last_rx_ms;
  env.body_case = GCSNAP__ENVELOPE__BODY_PING;
  env.ping = &p;
  send_env(s, &env);
}

/* ---- timer ------------------------------------------------------------- */

static void end_capture(gsd_session *s, const char *reason);
static void close_now(gsd_session *s);
static void arm_timer(gsd_session *s);

/* Between snapshots a silent agent is pinged after a third of the idle
 * timeout: one that answers (every gcsnap agent does, and pings on its
 * own after 30 s) is never cut for waiting for a capture request. */
static uint64_t keepalive_ms(const gsd_session *s) {
  return s->srv->cfg->idle_timeout_ms / 3;
}

static const char *duration(char *buf, size_t cap, uint64_t ms) {
  gs_units_format_duration(buf, cap, ms);
  return buf;
}

static void on_timer(uv_timer_t *t) {
  gsd_session *s = t->data;
  const gsd_config *cfg = s->srv->cfg;
  uint64_t now = uv_now(s->srv->loop), silent = now - s->last_rx_ms;
  char d[32];
  switch (s->state) {
  case ST_HELLO:
    abort_session(s, GS_WIRE_E_TIMEOUT, "timeout: no Hello within %s",
                  duration(d, sizeof d, cfg->hello_timeout_ms));
    return;
  case ST_IDLE:
    if (s->capture && s->capture->state == GSD_CAPTURE_REQUESTED &&
        now - s->capture->requested_ms >= START_TIMEOUT_MS) {
      gsd_log_warn("device %s: no SnapshotBegin within %d s of the capture request",
                   s->device_id, START_TIMEOUT_MS / 1000);
      end_capture(s, "the agent did not start the snapshot in time");
    }
    if (silent >= cfg->idle_timeout_ms) {
      abort_session(s, GS_WIRE_E_TIMEOUT, "timeout: nothing received for %s, Ping unanswered",
                    duration(d, sizeof d, cfg->idle_timeout_ms));
      return;
    }
    if (!s->pinged && silent >= keepalive_ms(s)) {
      s->pinged = 1;
      send_ping(s);
    }
    break;
  case ST_RECEIVING:
    if (silent >= cfg->idle_timeout_ms) {
      abort_session(s, GS_WIRE_E_TIMEOUT, "timeout: no data for %s during a snapshot",
                    duration(d, sizeof d, cfg->idle_timeout_ms));
      return;
    }
    break;
  case ST_CLOSING:
    close_now(s);
    return;
  case ST_FINISHING:
    return;
  }
  if (s->state == ST_IDLE || s->state == ST_RECEIVING) arm_timer(s);
}

/* What the session waits for decides its deadline. Bytes received do not
 * re-arm the timer: it fires at the deadline reckoned from the last bytes
 * then, and is set again for what is left. */
static void arm_timer(gsd_session *s) {
  const gsd_config *cfg = s->srv->cfg;
  uint64_t now = uv_now(s->srv->loop), due = 0, ms = 0;
  switch (s->state) {
  case ST_HELLO: due = s->accepted_ms + cfg->hello_timeout_ms; break;
  case ST_IDLE:
    due = s->last_rx_ms + (s->pinged ? cfg->idle_timeout_ms : keepalive_ms(s));
    if (s->capture && s->capture->state == GSD_CAPTURE_REQUESTED &&
        s->capture->requested_ms + START_TIMEOUT_MS < due)
      due = s->capture->requested_ms + START_TIMEOUT_MS;
    break;
  case ST_RECEIVING: due = s->last_rx_ms + cfg->idle_timeout_ms; break;
  case ST_CLOSING: due = now + (s->srv->stopping ? 1 : LINGER_MS); break;
  case ST_FINISHING: break;
  }
  if (due) ms = due > now ? due - now : 1;
  if (ms) uv_timer_start(&s->timer, on_timer, ms, 0);
  else uv_timer_stop(&s->timer);
}

/* ---- ending things ------------------------------------------------------- */

static void end_capture(gsd_session *s, const char *reason) {
  gsd_capture *cap = s->capture;
  if (!cap) return;
  s->capture = NULL;
  cap->session = NULL;
  gsd_capture_end(s->srv, cap, reason);
  if (s->state == ST_IDLE) arm_timer(s);
}

static void end_figures(const gsd_session *s, gsd_snapshot_end *e) {
  const gsd_ingest_counts *c = gsd_ingest_stats(s->ingest);
  e->objects = c->objects;
  e->bytes = c->bytes;
  e->references = c->references;
  e->roots = c->roots;
  e->types = c->types;
  e->sections = c->sections;
  e->text_bytes = c->text_bytes;
  e->wire_bytes = s->wire_bytes;
  e->crc32 = c->crc32;
  e->errors = c->errors;
  e->warnings = c->warnings;
  e->first_error = c->errors ? gsd_ingest_first_error(s->ingest) : NULL;
}

static void forget_snapshot(gsd_session *s) {
  gsd_ingest_free(s->ingest);   /* removes the temporary file */
  s->ingest = NULL;
  s->snapshot_id = 0;
  s->duplicate_of = 0;
  s->deferred.code = 0;
  s->write_warned = 0;
}

/* The snapshot being received will not be stored: its row says why. */
static void fail_snapshot(gsd_session *s, const char *reason) {
  gsd_store *store = s->srv->store;
  if (s->snapshot_id) {
    gsd_snapshot_end e;
    memset(&e, 0, sizeof e);
    if (s->ingest) end_figures(s, &e);
    e.file_bytes = 0;
    gsd_log_warn("device %s: snapshot %lld (agent snapshot %llu) failed: %s", s->device_id,
                 (long long)s->snapshot_id, (unsigned long long)s->agent_snapshot_id, reason);
    if (gsd_store_snapshot_fail(store, s->snapshot_id, reason, &e) != GS_OK)
      gsd_log_error("%s", gsd_store_error(store));
  }
  forget_snapshot(s);
  end_capture(s, reason);
}

static void unlink_session(gsd_session *s) {
  gsd_server *srv = s->srv;
  if (!s->in_list) return;
  if (s->prev) s->prev->next = s->next;
  else srv->sessions = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
  s->in_list = 0;
  srv->nsessions--;
}

/* ---- recording (--record) ------------------------------------------------ */

static void stop_recording(gsd_session *s) {
  if (s->rec && fclose(s->rec) != 0)
    gsd_log_warn("device %s: the recording of session %lld is incomplete: %s", s->device_id,
                 (long long)s->session_id, strerror(errno));
  s->rec = NULL;
}

static void record_frame(gsd_session *s, const uint8_t *frame, size_t len);

/* Opens DIR/<device>-<session>.gcstream; the Hello kept from the
 * handshake is its first frame. A recording that cannot be written is given up, not the
 * session. */
static void start_recording(gsd_session *s) {
  const char *dir = s->srv->cfg->record;
  gs_stream_header h;
  char *dev, *path;
  size_t n;
  if (!dir[0] || !(dev = gsd_store_escape_device(s->device_id))) return;
  n = strlen(dir) + strlen(dev) + 48;
  if ((path = malloc(n)) != NULL) {
    snprintf(path, n, "%s/%s-%lld.gcstream", dir, dev, (long long)s->session_id);
    memset(&h, 0, sizeof h);
    h.version = GS_STREAM_VERSION;
    h.protocol_version = GS_WIRE_PROTOCOL_VERSION;
    snprintf(h.device_id, sizeof h.device_id, "%s", s->device_id);
    h.start_us = (uint64_t)gsd_schedule_now_ms() * 1000;
    s->rec_start_ns = s->frame_ns;
    if (!(s->rec = fopen(path, "wb")) || gs_stream_write_header(s->rec, &h) != GS_OK) {
      gsd_log_warn("device %s: cannot record the session into %s: %s", s->device_id, path,
                   strerror(errno));
      stop_recording(s);
    } else {
      /* The Hello is the first frame; an AuthProof is never recorded. */
      record_frame(s, s->hello, s->hello_len);
    }
    free(path);
  }
  free(dev);
}

static void record_frame(gsd_session *s, const uint8_t *frame, size_t len) {
  uint64_t us = (s->frame_ns - s->rec_start_ns) / 1000;
  if (gs_stream_write_frame(s->rec, us, frame, len) != GS_OK) {
    gsd_log_warn("device %s: recording stopped: %s", s->device_id, strerror(errno));
    stop_recording(s);
  }
}

static void on_handle_closed(uv_handle_t *h) {
  gsd_session *s = h->data;
  if (--s->open_handles > 0) return;
  stop_recording(s);
  unlink_session(s);
  free(s->hello);
  gs_sha256_wipe(s->verifier, sizeof s->verifier);
  free(s->buf);
  free(s);
}

static void close_now(gsd_session *s) {
  if (s->closing_handles) return;
  s->closing_handles = 1;
  uv_timer_stop(&s->timer);
  uv_close((uv_handle_t *)&s->timer, on_handle_closed);
  uv_close((uv_handle_t *)&s->tcp, on_handle_closed);
}

/* Leaves the server's view: the device is no longer connected. */
static void leave(gsd_session *s, const char *reason) {
  if (s->session_id &&
      gsd_store_session_end(s->srv->store, s->session_id, s->device_id, reason) != GS_OK)
    gsd_log_error("%s", gsd_store_error(s->srv->store));
  s->session_id = 0;
  end_capture(s, reason);
  s->state = ST_CLOSING;
  s->len = 0;
}

static void on_shutdown(uv_shutdown_t *req, int status) {
  gsd_session *s = req->data;
  (void)status;
  if (s->srv->stopping) close_now(s);
}

static void abort_session(gsd_session *s, unsigned code, const char *fmt, ...) {
  char reason[300];
  va_list ap;
  if (s->state == ST_CLOSING || s->aborting) return;
  s->aborting = 1;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (code == GS_WIRE_E_SHUTDOWN)
    gsd_log_info("device %s (%s): closing the session: %s", name_of(s), s->address, reason);
  else
    gsd_log_warn("device %s (%s): closing the session: %s", name_of(s), s->address, reason);
  if (s->state == ST_RECEIVING) fail_snapshot(s, reason);
  send_error(s, code, reason, s->request_id);
  leave(s, reason);
  /* Half-close after the Error is written, then read until the agent
   * closes too (or the linger ends), so that it gets the Error rather than
   * a reset. */
  s->shutdown.data = s;
  if (uv_shutdown(&s->shutdown, (uv_stream_t *)&s->tcp, on_shutdown) != 0) close_now(s);
  else arm_timer(s);
}

/* The connection is gone: nothing can be said to the agent any more. */
static void lost(gsd_session *s, const char *why) {
  char reason[200];
  if (s->state == ST_CLOSING) {
    close_now(s);
    return;
  }
  snprintf(reason, sizeof reason, "the agent disconnected%s (%s)",
           s->state == ST_RECEIVING ? " during a snapshot" : "", why);
  if (s->state == ST_RECEIVING) {
    gsd_log_warn("device %s (%s): %s", name_of(s), s->address, reason);
    fail_snapshot(s, reason);
  } else {
    gsd_log_info("device %s (%s): %s", name_of(s), s->address, reason);
  }
  leave(s, reason);
  close_now(s);
}

/* ---- the end of a stored snapshot, on the thread pool --------------------- */

static void finish_work(uv_work_t *w) {
  finish_job *job = w->data;
  gsd_session *s = job->s;
  job->rc = gsd_ingest_commit(s->ingest, job->final_path, job->err, sizeof job->err);
  if (job->rc == GS_OK)
    job->rc = gsd_ingest_summarize(job->final_path, job->shown_name, &job->summary, &job->end,
                                   job->err, sizeof job->err);
}

static void free_job(finish_job *job) {
  free(job->final_path);
  free(job->shown_name);
  free(job->summary);
  free(job);
}

/* Receiving is what the stream costs; storing is the sync, the summary
 * and the catalog. */
static void log_stored(gsd_session *s, const gsd_snapshot_end *e) {
  double recv = (double)(s->end_ns - s->begin_ns) / 1e9;
  double store = (double)(uv_hrtime() - s->end_ns) / 1e9;
  if (recv <= 0) recv = 1e-9;
  gsd_log_info("device %s: stored snapshot %lld (agent snapshot %llu): %llu objects, "
               "%.1f MB of text, %.1f MB on the wire; received in %.2f s (%.1f MB/s of "
               "text, %.0f objects/s), stored in %.2f s",
               s->device_id, (long long)s->snapshot_id,
               (unsigned long long)s->agent_snapshot_id, (unsigned long long)e->objects,
               (double)e->text_bytes / 1e6, (double)e->wire_bytes / 1e6, recv,
               (double)e->text_bytes / 1e6 / recv, (double)e->objects / recv, store);
}

static void finish_done(uv_work_t *w, int status) {
  finish_job *job = w->data;
  gsd_session *s = job->s;
  gsd_store *store = s->srv->store;
  char reason[300];
  s->job = NULL;
  if (status == UV_ECANCELED) {
    job->rc = GS_EIO;
    snprintf(job->err, sizeof job->err, "the collector stopped");
  }
  if (job->rc == GS_OK) {
    gsd_snapshot_end *e = &job->end;
    const gsd_ingest_counts *c = gsd_ingest_stats(s->ingest);
    e->text_bytes = c->text_bytes;
    e->file_bytes = c->file_bytes;
    e->wire_bytes = s->wire_bytes;
    e->crc32 = c->crc32;
    e->warnings = c->warnings;
    e->summary = job->summary;
    if (gsd_store_snapshot_complete(store, s->snapshot_id, e) != GS_OK) {
      job->rc = GS_EIO;
      snprintf(job->err, sizeof job->err, "%s", gsd_store_error(store));
      gsd_log_error("%s", job->err);
    }
  }
  s->state = ST_IDLE;
  if (job->rc == GS_OK) {
    log_stored(s, &job->end);
    send_ack(s, s->snapshot_id);
    if (s->capture) gsd_capture_streaming(s->capture, s->snapshot_id);
    forget_snapshot(s);
    end_capture(s, NULL);
    gsd_schedules_stored(s->srv, s->device_id);
  } else {
    unlink(job->final_path);
    snprintf(reason, sizeof reason, "could not store the snapshot: %s", job->err);
    send_error(s, GS_WIRE_E_STORAGE, reason, s->request_id);
    fail_snapshot(s, reason);
  }
  free_job(job);
  /* The agent waited for us: its silence meanwhile does not count. */
  s->last_rx_ms = uv_now(s->srv->loop);
  s->pinged = 0;
  arm_timer(s);
  if (s->stop_after_job || s->srv->stopping) {
    abort_session(s, GS_WIRE_E_SHUTDOWN, "the collector is stopping");
    return;
  }
  process(s);
  if (s->state != ST_CLOSING && s->state != ST_FINISHING) resume_reading(s);
}

static void start_finish(gsd_session *s) {
  finish_job *job = calloc(1, sizeof *job);
  char *dev = gsd_store_escape_device(s->device_id);
  size_t n = (dev ? strlen(dev) : 0) + 64;
  if (job && dev && (job->shown_name = malloc(n)))
    snprintf(job->shown_name, n, "snapshots/%s/%lld.gclog.zst", dev, (long long)s->snapshot_id);
  free(dev);
  if (!job || !job->shown_name ||
      !(job->final_path = gsd_store_snapshot_path(s->srv->store, s->device_id, s->snapshot_id))) {
    if (job) free_job(job);
    send_error(s, GS_WIRE_E_STORAGE, "out of memory", s->request_id);
    fail_snapshot(s, "out of memory");
    return;
  }
  job->s = s;
  job->work.data = job;
  s->end_ns = uv_hrtime();
  s->job = job;
  s->state = ST_FINISHING;
  arm_timer(s);
  uv_read_stop((uv_stream_t *)&s->tcp);
  uv_queue_work(s->srv->loop, &job->work, finish_work, finish_done);
}

/* ---- messages ------------------------------------------------------------ */

static int is_text(const char *p, size_t len) {
  const unsigned char *u = (const unsigned char *)p, *e = u + len;
  while (u < e) {
    size_t n = 1;
    if (*u < 0x20 || *u == 0x7f) return 0;
    if (*u >= 0x80 && !(n = gs_utf8_len(u, e))) return 0;
    u += n;
  }
  return 1;
}

/* Whether the device must prove its key: GS_OK when it need not (no
 * key anywhere and keys not required), GS_EOF when AuthChallenge went out,
 * an error when the session was refused. */
static int challenge(gsd_session *s) {
  gsd_store *store = s->srv->store;
  uint64_t keys = 0;
  int rc = gsd_store_key_verifier(store, s->device_id, s->verifier, sizeof s->verifier);
  if (rc == GS_EOF && (rc = gsd_store_key_count(store, &keys)) == GS_OK) {
    if (keys == 0 && !s->srv->cfg->require_keys) return GS_OK;
    abort_session(s, GS_WIRE_E_AUTH, "device '%s' has no key at this collector (add one with"
                  " 'gcsnap keys add' on the collector's host)", s->device_id);
    return GS_EINVAL;
  }
  if (rc == GS_OK && (rc = gsd_auth_nonce(s->nonce)) != GS_OK)
    gsd_log_error("device %s: no random bytes for the challenge", s->device_id);
  else if (rc != GS_OK)
    gsd_log_error("%s", gsd_store_error(store));
  if (rc != GS_OK) {
    abort_session(s, GS_WIRE_E_STORAGE, "the collector cannot check the device's key");
    return rc;
  }
  s->challenged = 1;
  send_challenge(s);
  gsd_log_debug("device %s (%s): challenge sent", s->device_id, s->address);
  return GS_EOF;
}

static void admit(gsd_session *s, const Gcsnap__Hello *h);

/* The answer to the challenge, checked against the Hello it followed. */
static void on_proof(gsd_session *s, const Gcsnap__AuthProof *p) {
  Gcsnap__Hello *h;
  Gcsnap__Envelope *env = gcsnap__envelope__unpack(NULL, s->hello_len, s->hello);
  int ok;
  if (!env || env->body_case != GCSNAP__ENVELOPE__BODY_HELLO) {
    if (env) gcsnap__envelope__free_unpacked(env, NULL);
    abort_session(s, GS_WIRE_E_STORAGE, "out of memory");
    return;
  }
  h = env->hello;
  ok = gsd_auth_check(s->verifier, s->nonce, h->protocol_version, s->device_id,
                      p->proof.data, p->proof.len);
  /* One proof per nonce: whatever it was, this one is spent. */
  gs_sha256_wipe(s->nonce, sizeof s->nonce);
  gs_sha256_wipe(s->verifier, sizeof s->verifier);
  s->challenged = 0;
  if (ok) admit(s, h);
  else abort_session(s, GS_WIRE_E_AUTH, "wrong key for device '%s'", s->device_id);
  gcsnap__envelope__free_unpacked(env, NULL);
}

static void on_hello(gsd_session *s, const Gcsnap__Hello *h) {
  const char *id = h->device_id ? h->device_id : "";
  size_t len = strlen(id);
  if (h->protocol_version != GS_WIRE_PROTOCOL_VERSION) {
    abort_session(s, GS_WIRE_E_VERSION, "protocol version %u is not supported (this collector "
                  "speaks %u)", h->protocol_version, GS_WIRE_PROTOCOL_VERSION);
    return;
  }
  if (len == 0) {
    abort_session(s, GS_WIRE_E_DEVICE, "Hello without a device ID");
    return;
  }
  if (len > GSD_DEVICE_ID_MAX || !is_text(id, len)) {
    abort_session(s, GS_WIRE_E_DEVICE, "the device ID is not text of at most %d bytes",
                  GSD_DEVICE_ID_MAX);
    return;
  }
  /* Named from here on in the log; gsd_session_find() skips this state. */
  memcpy(s->device_id, id, len + 1);
  if (!(s->hello = malloc(s->frame_len ? s->frame_len : 1))) {
    abort_session(s, GS_WIRE_E_STORAGE, "out of memory");
    return;
  }
  memcpy(s->hello, s->frame, s->frame_len);
  s->hello_len = s->frame_len;
  if (challenge(s) == GS_OK) admit(s, h);
}

/* The device passed (or needs no key): it is connected. */
static void admit(gsd_session *s, const Gcsnap__Hello *h) {
  const char *id = s->device_id;
  gsd_device_info d;
  if (gsd_session_find(s->srv, id)) {
    abort_session(s, GS_WIRE_E_DEVICE, "device %s is already connected", id);
    return;
  }
  d.device_id = id;
  d.app_name = h->app_name;
  d.architecture = h->architecture;
  d.agent_version = h->agent_version;
  d.pointer_size = h->pointer_size;
  d.protocol_version = h->protocol_version;
  if (gsd_store_session_begin(s->srv->store, &d, s->address, &s->session_id) != GS_OK) {
    gsd_log_error("%s", gsd_store_error(s->srv->store));
    abort_session(s, GS_WIRE_E_STORAGE, "the collector cannot record the session");
    return;
  }
  s->connected_since = time(NULL);
  s->state = ST_IDLE;
  arm_timer(s);
  send_welcome(s);
  start_recording(s);
  free(s->hello);
  s->hello = NULL;
  gsd_log_info("device %s connected from %s (agent %s, %s, %s)", s->device_id, s->address,
               h->agent_version, h->app_name, h->architecture);
}

static void set_limits(gsd_session *s) {
  const gsd_config *cfg = s->srv->cfg;
  gsd_ingest_limits lim;
  lim.max_objects = cfg->max_objects;
  lim.max_references = cfg->max_references;
  lim.min_free_bytes = cfg->min_free_bytes;
  gsd_ingest_set_limits(s->ingest, &lim);
}

/* Starts receiving; a snapshot stored before is only checked, and one that
 * cannot be written is received and failed at its end. */
static void on_begin(gsd_session *s, const Gcsnap__SnapshotBegin *b, size_t frame_bytes) {
  gsd_server *srv = s->srv;
  gsd_snapshot_begin row;
  char *tmp = NULL, err[300];
  int rc;
  s->request_id = b->request_id;
  s->agent_snapshot_id = b->snapshot_id;
  s->wire_bytes = frame_bytes;
  s->begin_ns = uv_hrtime();
  s->state = ST_RECEIVING;
  arm_timer(s);
  if (b->request_id && (!s->capture || s->capture->request_id != b->request_id))
    gsd_log_warn("device %s: SnapshotBegin names request %llu, which is not in flight",
                 s->device_id, (unsigned long long)b->request_id);
  rc = gsd_store_find_complete(srv->store, s->device_id, b->snapshot_id, &s->duplicate_of);
  if (rc == GS_OK) {
    gsd_log_info("device %s: agent snapshot %llu is already stored as %lld; checking the "
                 "stream without storing it", s->device_id, (unsigned long long)b->snapshot_id,
                 (long long)s->duplicate_of);
  } else {
    s->duplicate_of = 0;
    row.device_id = s->device_id;
    row.session_id = s->session_id;
    row.request_id = b->request_id;
    row.agent_snapshot_id = b->snapshot_id;
    row.trigger = b->trigger;
    row.stable_ids = b->stable_ids;
    row.clock_ms = b->clock_ms;
    row.schedule_id = 0;
    if (s->capture && s->capture->request_id == b->request_id && s->capture->schedule_id) {
      row.trigger = "schedule";
      row.schedule_id = s->capture->schedule_id;
    }
    if (rc != GS_EOF || gsd_store_snapshot_begin(srv->store, &row, &s->snapshot_id) != GS_OK) {
      snprintf(err, sizeof err, "%s", gsd_store_error(srv->store));
      gsd_log_error("%s", err);
      s->snapshot_id = 0;
    } else if (gsd_store_check_space(srv->store, srv->cfg->min_free_bytes) != GS_OK) {
      /* Received and checked, not written: failed at its end. */
      snprintf(err, sizeof err, "%s", gsd_store_error(srv->store));
      gsd_log_warn("device %s: snapshot %lld will not be stored: %s", s->device_id,
                   (long long)s->snapshot_id, err);
    } else if (!(tmp = gsd_store_tmp_path(srv->store, s->device_id, s->snapshot_id))) {
      snprintf(err, sizeof err, "out of memory");
    } else if (gsd_ingest_new(&s->ingest, tmp, err, sizeof err) == GS_OK) {
      free(tmp);
      set_limits(s);
      gsd_log_debug("device %s: receiving snapshot %lld (agent snapshot %llu, request %llu)",
                    s->device_id, (long long)s->snapshot_id,
                    (unsigned long long)b->snapshot_id, (unsigned long long)b->request_id);
      if (s->capture && s->capture->request_id == b->request_id)
        gsd_capture_streaming(s->capture, s->snapshot_id);
      return;
    }
    free(tmp);
    /* Told at SnapshotEnd, in place of the Ack. */
    s->deferred.code = GS_WIRE_E_STORAGE;
    snprintf(s->deferred.reason, sizeof s->deferred.reason, "cannot store the snapshot: %.200s",
             err);
  }
  if (s->capture && s->capture->request_id == b->request_id)
    gsd_capture_streaming(s->capture, s->duplicate_of);
  if (gsd_ingest_new(&s->ingest, NULL, err, sizeof err) != GS_OK)
    abort_session(s, GS_WIRE_E_STORAGE, "out of memory");
  else
    set_limits(s);
}

static void on_agent_error(gsd_session *s, const Gcsnap__Error *e) {
  char reason[300];
  snprintf(reason, sizeof reason, "the agent reported error %u: %s", e->code,
           e->message ? e->message : "");
  if (s->state == ST_RECEIVING) {
    fail_snapshot(s, reason);
    s->state = ST_IDLE;
    arm_timer(s);
    return;
  }
  gsd_log_warn("device %s: %s", s->device_id, reason);
  if (s->capture && (e->request_id == 0 || e->request_id == s->capture->request_id))
    end_capture(s, reason);
}

/* A data message (or SnapshotEnd) of the snapshot being received. */
static void on_data(gsd_session *s, const Gcsnap__Envelope *env) {
  gsd_fault f;
  if (gsd_ingest_message(s->ingest, env, &f) != GS_OK) {
    if (f.fatal) {
      abort_session(s, f.code, "%s", f.reason);
      return;
    }
    send_error(s, f.code, f.reason, s->request_id);
    fail_snapshot(s, f.reason);
    s->state = ST_IDLE;
    arm_timer(s);
    return;
  }
  if (!s->write_warned && gsd_ingest_write_error(s->ingest)) {
    /* Told now, when the space goes back; the agent hears it at SnapshotEnd. */
    s->write_warned = 1;
    gsd_log_warn("device %s: snapshot %lld is no longer written (its file is removed): %s",
                 s->device_id, (long long)s->snapshot_id, gsd_ingest_write_error(s->ingest));
  }
  if (!gsd_ingest_ended(s->ingest)) return;
  if (s->deferred.code) {
    gsd_fault d = s->deferred;
    send_error(s, d.code, d.reason, s->request_id);
    fail_snapshot(s, d.reason);
    s->state = ST_IDLE;
    arm_timer(s);
  } else if (s->duplicate_of) {
    send_ack(s, s->duplicate_of);
    forget_snapshot(s);
    end_capture(s, NULL);
    s->state = ST_IDLE;
    arm_timer(s);
  } else {
    start_finish(s);
  }
}

static const char *body_name(unsigned body) {
  static const char *const names[] = {
    "an empty frame", "Hello", "Welcome", "CaptureRequest", "SnapshotBegin", "SectionBegin",
    "TypeBatch", "ObjectBatch", "RootBatch", "GenerationRanges", "SectionEnd", "SnapshotEnd",
    "Ack", "Error", "Ping", "AuthChallenge", "AuthProof",
  };
  return body < sizeof names / sizeof names[0] ? names[body] : "an unknown message";
}

static void dispatch(gsd_session *s, const Gcsnap__Envelope *env, size_t frame_bytes) {
  unsigned body = env->body_case;
  switch (s->state) {
  case ST_HELLO:
    if (body == GCSNAP__ENVELOPE__BODY_HELLO && !s->challenged) on_hello(s, env->hello);
    else if (body == GCSNAP__ENVELOPE__BODY_AUTH_PROOF && s->challenged)
      on_proof(s, env->auth_proof);
    else abort_session(s, GS_WIRE_E_PROTOCOL, "expected %s, got %s",
                       s->challenged ? "AuthProof" : "Hello", body_name(body));
    return;
  case ST_IDLE:
    if (body == GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN) on_begin(s, env->snapshot_begin, frame_bytes);
    else if (body == GCSNAP__ENVELOPE__BODY_PING) { if (!env->ping->reply) send_pong(s, env->ping->nonce); }
    else if (body == GCSNAP__ENVELOPE__BODY_ERROR) on_agent_error(s, env->error);
    else abort_session(s, GS_WIRE_E_PROTOCOL, "unexpected %s between snapshots", body_name(body));
    return;
  case ST_RECEIVING:
    s->wire_bytes += frame_bytes;
    if (body == GCSNAP__ENVELOPE__BODY_ERROR) on_agent_error(s, env->error);
    else on_data(s, env);
    return;
  case ST_FINISHING:
  case ST_CLOSING:
    return;
  }
}

/* ---- frames -------------------------------------------------------------- */

/* The frame at p (gs_wire_frame_peek): GS_OK when it is whole, GS_EOF
 * when more bytes are needed (*flen set once the prefix is whole),
 * GS_EFORMAT for a garbled prefix, GS_ELIMIT for a frame above the
 * maximum. */
static int frame_peek(const uint8_t *p, size_t avail, size_t *plen, size_t *flen) {
  int rc = gs_wire_frame_peek(p, avail, GS_WIRE_MAX_FRAME, plen, flen);
  if (rc == GS_OK && avail - *plen < *flen) return GS_EOF;
  return rc;
}

static void on_frame(gsd_session *s, const uint8_t *data, size_t len, size_t frame_bytes) {
  Gcsnap__Envelope *env = gcsnap__envelope__unpack(NULL, len, data);
  int recording = s->rec != NULL;
  s->frame_ns = uv_hrtime();
  if (recording) record_frame(s, data, len);
  if (!env) {
    abort_session(s, GS_WIRE_E_PROTOCOL, "undecodable frame of %zu bytes", len);
    return;
  }
  s->frame = data;
  s->frame_len = len;
  dispatch(s, env, frame_bytes);
  s->frame = NULL;
  gcsnap__envelope__free_unpacked(env, NULL);
}

static void process(gsd_session *s) {
  size_t off = 0;
  s->need = 0;
  while (s->state != ST_CLOSING && s->state != ST_FINISHING) {
    size_t plen = 0, flen = 0;
    int rc = frame_peek(s->buf + off, s->len - off, &plen, &flen);
    if (rc == GS_EOF) {
      if (flen) s->need = plen + flen;
      break;
    }
    if (rc == GS_EFORMAT) {
      abort_session(s, GS_WIRE_E_PROTOCOL, "bad frame length prefix");
      break;
    }
    if (rc == GS_ELIMIT) {
      abort_session(s, GS_WIRE_E_FRAME_SIZE, "frame of %zu bytes is above the maximum of %u",
                    flen, GS_WIRE_MAX_FRAME);
      break;
    }
    on_frame(s, s->buf + off + plen, flen, plen + flen);
    off += plen + flen;
  }
  if (s->state == ST_CLOSING) {
    s->len = 0;
    return;
  }
  memmove(s->buf, s->buf + off, s->len - off);
  s->len -= off;
}

static int grow(gsd_session *s, size_t want) {
  size_t cap = s->cap ? s->cap : FRAME_BUF_MIN;
  uint8_t *b;
  while (cap < want) cap *= 2;
  if (cap > FRAME_BUF_MAX) cap = FRAME_BUF_MAX;
  if (cap <= s->cap) return s->cap > s->len ? GS_OK : GS_ELIMIT;
  if (!(b = realloc(s->buf, cap))) return GS_ENOMEM;
  s->buf = b;
  s->cap = cap;
  return GS_OK;
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  gsd_session *s = h->data;
  (void)suggested;
  /* Back to a small buffer once a large frame is done with. */
  if (s->len == 0 && s->cap > 4 * FRAME_BUF_MIN) {
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
  }
  if (grow(s, s->need > s->len + 1 ? s->need : s->len + 1) != GS_OK) {
    *b = uv_buf_init(NULL, 0);
    return;
  }
  *b = uv_buf_init((char *)s->buf + s->len, (unsigned)(s->cap - s->len));
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *b) {
  gsd_session *s = st->data;
  (void)b;
  if (nread < 0) {
    lost(s, nread == UV_EOF ? "end of stream" : uv_strerror((int)nread));
    return;
  }
  if (s->state == ST_CLOSING) return;
  s->len += (size_t)nread;
  if (nread > 0) {
    s->last_rx_ms = uv_now(s->srv->loop);
    s->pinged = 0;
  }
  process(s);
}

/* ---- listener ------------------------------------------------------------ */

static void peer_address(gsd_session *s) {
  struct sockaddr_storage ss;
  int n = sizeof ss;
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (uv_tcp_getpeername(&s->tcp, (struct sockaddr *)&ss, &n) == 0) {
    if (ss.ss_family == AF_INET6) {
      uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
      port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
      snprintf(s->ip, sizeof s->ip, "%s", ip);
      snprintf(s->address, sizeof s->address, "[%s]:%d", ip, port);
      return;
    }
    uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
    port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  }
  snprintf(s->ip, sizeof s->ip, "%s", ip);
  snprintf(s->address, sizeof s->address, "%s:%d", ip, port);
}

/* Why a new connection from s->ip is over a session limit, or NULL. Refused
 * connections on their way out do not count. */
static const char *over_limit(gsd_session *s, char *why, size_t cap, size_t *refused) {
  const gsd_config *cfg = s->srv->cfg;
  const gsd_session *o;
  uint64_t all = 0, same = 0;
  *refused = 0;
  for (o = s->srv->sessions; o; o = o->next) {
    if (o->refused) { ++*refused; continue; }
    all++;
    same += strcmp(o->ip, s->ip) == 0;
  }
  if (all >= cfg->max_sessions)
    snprintf(why, cap, "the collector has %llu sessions, its limit (--max-sessions)",
             (unsigned long long)all);
  else if (same >= cfg->max_sessions_per_address)
    snprintf(why, cap, "%llu sessions from %s already, the limit per address"
             " (--max-sessions-per-address)", (unsigned long long)same, s->ip);
  else
    return NULL;
  return why;
}

static void on_connection(uv_stream_t *listener, int status) {
  gsd_server *srv = listener->data;
  gsd_session *s;
  char why[200];
  size_t refused;
  if (status < 0) {
    gsd_log_warn("agent listener: %s", uv_strerror(status));
    return;
  }
  if (!(s = calloc(1, sizeof *s))) return;
  s->srv = srv;
  uv_tcp_init(srv->loop, &s->tcp);
  uv_timer_init(srv->loop, &s->timer);
  s->tcp.data = s->timer.data = s;
  s->open_handles = 2;
  if (uv_accept(listener, (uv_stream_t *)&s->tcp) != 0 || srv->stopping) {
    close_now(s);
    return;
  }
  peer_address(s);
  s->accepted_ms = s->last_rx_ms = uv_now(srv->loop);
  if (over_limit(s, why, sizeof why, &refused)) {
    /* Told with Error 9 (busy), so that the agent logs why and retries
     * later; past MAX_REFUSED being told, closed without a word. */
    if (refused >= MAX_REFUSED) {
      gsd_log_warn("refusing the connection from %s: %s", s->address, why);
      close_now(s);
      return;
    }
    s->refused = 1;
  }
  uv_tcp_nodelay(&s->tcp, 1);
  uv_tcp_keepalive(&s->tcp, 1, 30);
  s->next = srv->sessions;
  if (srv->sessions) srv->sessions->prev = s;
  srv->sessions = s;
  s->in_list = 1;
  srv->nsessions++;
  gsd_log_debug("connection from %s", s->address);
  arm_timer(s);
  resume_reading(s);
  if (s->refused) abort_session(s, GS_WIRE_E_BUSY, "connection refused: %s", why);
}

int gsd_sessions_listen(gsd_server *srv, const char *addr, char *bound, size_t cap) {
  srv->listener.data = srv;
  srv->listening = 1;
  return gsd_listen(srv->loop, &srv->listener, addr, on_connection, bound, cap);
}

void gsd_sessions_stop(gsd_server *srv) {
  gsd_session *s, *next;
  if (srv->listening) {
    uv_close((uv_handle_t *)&srv->listener, NULL);
    srv->listening = 0;
  }
  for (s = srv->sessions; s; s = next) {
    next = s->next;
    if (s->state == ST_FINISHING) s->stop_after_job = 1;
    else if (s->state == ST_CLOSING) arm_timer(s);
    else abort_session(s, GS_WIRE_E_SHUTDOWN, "the collector is stopping");
  }
}

/* ---- queries ------------------------------------------------------------- */

gsd_session *gsd_session_find(gsd_server *srv, const char *device_id) {
  gsd_session *s;
  for (s = srv->sessions; s; s = s->next)
    if (s->state != ST_CLOSING && s->state != ST_HELLO && strcmp(s->device_id, device_id) == 0)
      return s;
  return NULL;
}

gsd_session *gsd_session_next(gsd_server *srv, gsd_session *s) {
  for (s = s ? s->next : srv->sessions; s; s = s->next)
    if (s->state != ST_CLOSING && s->state != ST_HELLO) return s;
  return NULL;
}

const char *gsd_session_device(const gsd_session *s) { return s->device_id; }

int gsd_session_busy(const gsd_session *s) {
  return s->capture != NULL || s->state == ST_RECEIVING || s->state == ST_FINISHING;
}

int gsd_session_request(gsd_session *s, gsd_capture *cap, int stable_ids) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__CaptureRequest r = GCSNAP__CAPTURE_REQUEST__INIT;
  Gcsnap__CaptureOptions o = GCSNAP__CAPTURE_OPTIONS__INIT;
  int rc;
  o.stable_ids = stable_ids != 0;
  r.request_id = cap->request_id;
  r.options = &o;
  env.body_case = GCSNAP__ENVELOPE__BODY_CAPTURE_REQUEST;
  env.capture_request = &r;
  if ((rc = send_env(s, &env)) != GS_OK) return rc;
  s->capture = cap;
  cap->session = s;
  arm_timer(s);
  gsd_log_info("device %s: capture request %llu sent", s->device_id,
               (unsigned long long)cap->request_id);
  return GS_OK;
}

int gsd_session_describe(const gsd_session *s, json_t *device) {
  if (json_object_set_new(device, "address", json_string(s->address)) ||
      json_object_set_new(device, "connected_since", json_integer((json_int_t)s->connected_since)))
    return GS_ENOMEM;
  return GS_OK;
}

size_t gsd_sessions_connected(const gsd_server *srv) {
  const gsd_session *s;
  size_t n = 0;
  for (s = srv->sessions; s; s = s->next) n += s->state != ST_HELLO && s->state != ST_CLOSING;
  return n;
}
