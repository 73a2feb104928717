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
#include <assert.h>
#include "gsd_session_int.h"

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *b);
static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *b);

void gsd_sess_resume_reading(gsd_session *s) {
  uv_read_start((uv_stream_t *)&s->tcp, on_alloc, on_read);
}

void gsd_sess_abort_session(gsd_session *s, unsigned code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;
void gsd_sess_process(gsd_session *s);

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
    gsd_sess_abort_session(s, GS_WIRE_E_PROTOCOL, "the agent does not read what the collector sends");
  return GS_OK;
}

void gsd_sess_send_error(gsd_session *s, unsigned code, const char *message, uint64_t request_id) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Error e = GCSNAP__ERROR__INIT;
  e.code = code;
  e.message = (char *)message;
  e.request_id = request_id;
  env.body_case = GCSNAP__ENVELOPE__BODY_ERROR;
  env.error = &e;
  send_env(s, &env);
}

void gsd_sess_send_ack(gsd_session *s, int64_t stored_id) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Ack a = GCSNAP__ACK__INIT;
  a.request_id = s->request_id;
  a.snapshot_id = s->agent_snapshot_id;
  a.stored_id = (uint64_t)stored_id;
  env.body_case = GCSNAP__ENVELOPE__BODY_ACK;
  env.ack = &a;
  send_env(s, &env);
}

void gsd_sess_send_welcome(gsd_session *s) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Welcome w = GCSNAP__WELCOME__INIT;
  w.protocol_version = GS_WIRE_PROTOCOL_VERSION;
  w.collector_version = (char *)GSD_VERSION_STRING;
  w.max_frame = GS_WIRE_MAX_FRAME;
  env.body_case = GCSNAP__ENVELOPE__BODY_WELCOME;
  env.welcome = &w;
  send_env(s, &env);
}

void gsd_sess_send_challenge(gsd_session *s) {
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

void gsd_sess_end_capture(gsd_session *s, const char *reason);
void gsd_sess_close_now(gsd_session *s);
void gsd_sess_arm_timer(gsd_session *s);

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

static void timer_fired(gsd_session *s);

/* Log lines from here on name the session's device and snapshot. */
static void on_timer(uv_timer_t *t) {
  gsd_session *s = t->data;
  gsd_log_scope(s->device_id, &s->snapshot_id);
  timer_fired(s);
  gsd_log_scope(NULL, NULL);
}

static void timer_fired(gsd_session *s) {
  const gsd_config *cfg = s->srv->cfg;
  uint64_t now = uv_now(s->srv->loop), silent = now - s->last_rx_ms;
  char d[32];
  switch (s->state) {
  case ST_HELLO:
    gsd_sess_abort_session(s, GS_WIRE_E_TIMEOUT, "timeout: no Hello within %s",
                  duration(d, sizeof d, cfg->hello_timeout_ms));
    return;
  case ST_IDLE:
    if (s->capture && s->capture->state == GSD_CAPTURE_REQUESTED &&
        now - s->capture->requested_ms >= START_TIMEOUT_MS) {
      gsd_log_warn("device %s: no SnapshotBegin within %d s of the capture request",
                   s->device_id, START_TIMEOUT_MS / 1000);
      gsd_sess_end_capture(s, "the agent did not start the snapshot in time");
    }
    if (silent >= cfg->idle_timeout_ms) {
      gsd_sess_abort_session(s, GS_WIRE_E_TIMEOUT, "timeout: nothing received for %s, Ping unanswered",
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
      gsd_sess_abort_session(s, GS_WIRE_E_TIMEOUT, "timeout: no data for %s during a snapshot",
                    duration(d, sizeof d, cfg->idle_timeout_ms));
      return;
    }
    break;
  case ST_CLOSING:
    gsd_sess_close_now(s);
    return;
  case ST_FINISHING:
    return;
  }
  if (s->state == ST_IDLE || s->state == ST_RECEIVING) gsd_sess_arm_timer(s);
}

/* What the session waits for decides its deadline. Bytes received do not
 * re-arm the timer: it fires at the deadline reckoned from the last bytes
 * then, and is set again for what is left. */
void gsd_sess_arm_timer(gsd_session *s) {
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

void gsd_sess_end_capture(gsd_session *s, const char *reason) {
  gsd_capture *cap = s->capture;
  if (!cap) return;
  s->capture = NULL;
  cap->session = NULL;
  gsd_capture_end(s->srv, cap, reason);
  if (s->state == ST_IDLE) gsd_sess_arm_timer(s);
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

void gsd_sess_forget_snapshot(gsd_session *s) {
  gsd_ingest_free(s->ingest);   /* removes the temporary file */
  s->ingest = NULL;
  s->snapshot_id = 0;
  s->duplicate_of = 0;
  s->deferred.code = 0;
  s->write_warned = 0;
}

/* The snapshot being received will not be stored: its row says why. */
void gsd_sess_fail_snapshot(gsd_session *s, const char *reason) {
  gsd_store *store = s->srv->store;
  if (s->snapshot_id) {
    gsd_snapshot_end e;
    memset(&e, 0, sizeof e);
    if (s->ingest) end_figures(s, &e);
    e.file_bytes = 0;
    if (!s->capture) gsd_metrics_capture("agent", 0);
    gsd_log_warn("device %s: snapshot %lld (agent snapshot %llu) failed: %s", s->device_id,
                 (long long)s->snapshot_id, (unsigned long long)s->agent_snapshot_id, reason);
    if (gsd_store_snapshot_fail(store, s->snapshot_id, reason, &e) != GS_OK)
      gsd_log_error("%s", gsd_store_error(store));
  }
  gsd_sess_forget_snapshot(s);
  gsd_sess_end_capture(s, reason);
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

static void on_handle_closed(uv_handle_t *h) {
  gsd_session *s = h->data;
  if (--s->open_handles > 0) return;
  gsd_sess_stop_recording(s);
  unlink_session(s);
  free(s->hello);
  gs_sha256_wipe(s->verifier, sizeof s->verifier);
  free(s->buf);
  free(s);
}

void gsd_sess_close_now(gsd_session *s) {
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
  gsd_sess_end_capture(s, reason);
  s->state = ST_CLOSING;
  s->len = 0;
}

static void on_shutdown(uv_shutdown_t *req, int status) {
  gsd_session *s = req->data;
  (void)status;
  if (s->srv->stopping) gsd_sess_close_now(s);
}

void gsd_sess_abort_session(gsd_session *s, unsigned code, const char *fmt, ...) {
  char reason[300];
  va_list ap;
  if (s->state == ST_CLOSING || s->aborting) return;
  s->aborting = 1;
  if (s->state == ST_HELLO) gsd_metrics_session_refused(code);
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (code == GS_WIRE_E_SHUTDOWN)
    gsd_log_info("device %s (%s): closing the session: %s", name_of(s), s->address, reason);
  else
    gsd_log_warn("device %s (%s): closing the session: %s", name_of(s), s->address, reason);
  if (s->state == ST_RECEIVING) gsd_sess_fail_snapshot(s, reason);
  gsd_sess_send_error(s, code, reason, s->request_id);
  leave(s, reason);
  /* Half-close after the Error is written, then read until the agent
   * closes too (or the linger ends), so that it gets the Error rather than
   * a reset. */
  s->shutdown.data = s;
  if (uv_shutdown(&s->shutdown, (uv_stream_t *)&s->tcp, on_shutdown) != 0) gsd_sess_close_now(s);
  else gsd_sess_arm_timer(s);
}

/* The connection is gone: nothing can be said to the agent any more. */
static void lost(gsd_session *s, const char *why) {
  char reason[200];
  if (s->state == ST_CLOSING) {
    gsd_sess_close_now(s);
    return;
  }
  snprintf(reason, sizeof reason, "the agent disconnected%s (%s)",
           s->state == ST_RECEIVING ? " during a snapshot" : "", why);
  if (s->state == ST_RECEIVING) {
    gsd_log_warn("device %s (%s): %s", name_of(s), s->address, reason);
    gsd_sess_fail_snapshot(s, reason);
  } else {
    gsd_log_info("device %s (%s): %s", name_of(s), s->address, reason);
  }
  leave(s, reason);
  gsd_sess_close_now(s);
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
    if (body == GCSNAP__ENVELOPE__BODY_HELLO && !s->challenged) gsd_sess_on_hello(s, env->hello);
    else if (body == GCSNAP__ENVELOPE__BODY_AUTH_PROOF && s->challenged)
      gsd_sess_on_proof(s, env->auth_proof);
    else gsd_sess_abort_session(s, GS_WIRE_E_PROTOCOL, "expected %s, got %s",
                       s->challenged ? "AuthProof" : "Hello", body_name(body));
    return;
  case ST_IDLE:
    if (body == GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN) gsd_sess_on_begin(s, env->snapshot_begin, frame_bytes);
    else if (body == GCSNAP__ENVELOPE__BODY_PING) { if (!env->ping->reply) send_pong(s, env->ping->nonce); }
    else if (body == GCSNAP__ENVELOPE__BODY_ERROR) gsd_sess_on_agent_error(s, env->error);
    else gsd_sess_abort_session(s, GS_WIRE_E_PROTOCOL, "unexpected %s between snapshots", body_name(body));
    return;
  case ST_RECEIVING:
    s->wire_bytes += frame_bytes;
    if (body == GCSNAP__ENVELOPE__BODY_ERROR) gsd_sess_on_agent_error(s, env->error);
    else gsd_sess_on_data(s, env);
    return;
  case ST_FINISHING:
  case ST_CLOSING:
    return;
  }
}

/* ---- frames -------------------------------------------------------------- */

/* The frame at p (gs_wire_frame_peek): GS_OK when it is whole, GS_EOF
 * when more bytes are needed (*flen set once the prefix is whole),
 * GS_EFORMAT for a garbled prefix, GS_ELIMIT for a frame above max. */
static int frame_peek(const uint8_t *p, size_t avail, size_t max, size_t *plen, size_t *flen) {
  int rc = gs_wire_frame_peek(p, avail, max, plen, flen);
  if (rc == GS_OK && avail - *plen < *flen) return GS_EOF;
  return rc;
}

static void on_frame(gsd_session *s, const uint8_t *data, size_t len, size_t frame_bytes) {
  Gcsnap__Envelope *env = gcsnap__envelope__unpack(NULL, len, data);
  int recording = s->rec != NULL;
  s->frame_ns = uv_hrtime();
  if (recording) gsd_sess_record_frame(s, data, len);
  if (!env) {
    gsd_sess_abort_session(s, GS_WIRE_E_PROTOCOL, "undecodable frame of %zu bytes", len);
    return;
  }
  s->frame = data;
  s->frame_len = len;
  dispatch(s, env, frame_bytes);
  s->frame = NULL;
  gcsnap__envelope__free_unpacked(env, NULL);
}

void gsd_sess_process(gsd_session *s) {
  size_t off = 0;
  s->need = 0;
  while (s->state != ST_CLOSING && s->state != ST_FINISHING) {
    size_t plen = 0, flen = 0, max = s->state == ST_HELLO ? PREAUTH_FRAME_MAX : GS_WIRE_MAX_FRAME;
    int rc = frame_peek(s->buf + off, s->len - off, max, &plen, &flen);
    if (rc == GS_EOF) {
      if (flen) s->need = plen + flen;
      break;
    }
    if (rc == GS_EFORMAT) {
      gsd_sess_abort_session(s, GS_WIRE_E_PROTOCOL, "bad frame length prefix");
      break;
    }
    if (rc == GS_ELIMIT) {
      gsd_sess_abort_session(s, GS_WIRE_E_FRAME_SIZE, "frame of %zu bytes is above the maximum of %zu%s",
                             flen, max, s->state == ST_HELLO ? " before Welcome" : "");
      break;
    }
    on_frame(s, s->buf + off + plen, flen, plen + flen);
    off += plen + flen;
  }
  if (s->state == ST_CLOSING) {
    s->len = 0;
    return;
  }
  assert(off <= s->len);
  memmove(s->buf, s->buf + off, s->len - off);
  s->len -= off;
}

static int grow(gsd_session *s, size_t want) {
  size_t limit = s->state == ST_HELLO ? PREAUTH_BUF_MAX : FRAME_BUF_MAX;
  size_t cap = s->cap ? s->cap : FRAME_BUF_MIN < limit ? FRAME_BUF_MIN : limit;
  uint8_t *b;
  while (cap < want) cap *= 2;
  if (cap > limit) cap = limit;
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

static void read_in(gsd_session *s, ssize_t nread);

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *b) {
  gsd_session *s = st->data;
  (void)b;
  gsd_log_scope(s->device_id, &s->snapshot_id);
  read_in(s, nread);
  gsd_log_scope(NULL, NULL);
}

static void read_in(gsd_session *s, ssize_t nread) {
  if (nread < 0) {
    lost(s, nread == UV_EOF ? "end of stream" : uv_strerror((int)nread));
    return;
  }
  if (s->state == ST_CLOSING) return;
  s->len += (size_t)nread;
  if (nread > 0) gsd_metrics_received((size_t)nread);
  if (nread > 0) {
    s->last_rx_ms = uv_now(s->srv->loop);
    s->pinged = 0;
  }
  gsd_sess_process(s);
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
  gsd_sess_arm_timer(s);
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
