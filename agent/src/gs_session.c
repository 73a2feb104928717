/* gs_session.c - the agent's session with a collector (see gs_session.h).
 *
 * One thread, one connection, blocking calls with timeouts: the agent only
 * ever waits for one thing at a time, which keeps the state machine a few
 * plain loops. */
#include <stdio.h>
#include <string.h>
#include "gs_error.h"
#include "gs_link.h"
#include "gs_port.h"
#include "gs_session.h"
#include "gs_sha256.h"
#include "gs_sink.h"
#include "gs_spool.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"

#define AGENT_NAME "gcsnap-agent"
#ifndef GS_VERSION
#define GS_VERSION "0"
#endif

/* How a step ended: the link is still fine, or it is gone. */
enum { STEP_OK = 0, STEP_LINK = 1, STEP_REFUSED = 2 };

typedef struct session {
  gs_source *src;
  const gs_session_options *opt;
  gs_link *link;
  uint64_t last_snapshot_id;
  uint64_t rng;
  /* the long-running session's clocks, in gs_port_time_us() */
  unsigned backoff;
  uint64_t next_connect, next_ping, next_every, next_check, cooldown_until;
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
} session;

static void session_log(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, AGENT_NAME ": ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  fflush(stderr);
}

/* Text from the collector goes to stderr as printable ASCII: other bytes as
 * \xNN and '\' doubled, as the collector's own log writes them, so that a
 * collector cannot end a line, forge one or send terminal escapes. */
static void session_put_escaped(const char *s, size_t len) {
  size_t i;
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\\') fputs("\\\\", stderr);
    else if (c >= 0x20 && c < 0x7f) fputc(c, stderr);
    else fprintf(stderr, "\\x%02x", c);
  }
}

/* ---- ids and jitter ---- */

/* xorshift64*: good enough to spread reconnections. */
static uint64_t session_random(session *s) {
  s->rng ^= s->rng >> 12;
  s->rng ^= s->rng << 25;
  s->rng ^= s->rng >> 27;
  return s->rng * 0x2545F4914F6CDD1Dull;
}

/* Wall-clock ms times 1000, plus one for each snapshot of the same ms: never
 * repeats on a device whose clock does not run backwards. */
static uint64_t session_snapshot_id(session *s) {
  uint64_t id = gs_port_wall_ms() * 1000u;
  if (id <= s->last_snapshot_id) id = s->last_snapshot_id + 1;
  return s->last_snapshot_id = id;
}

/* ---- sending ---- */

static int session_send_ping(session *s, uint64_t nonce, int reply) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len;
  int err;
  if ((err = gs_wire_write_ping(buf, sizeof buf, nonce, reply, &frame, &len))) return err;
  if ((err = gs_link_send(s->link, frame, len))) return err;
  return gs_link_flush(s->link);
}

static int session_send_error(session *s, unsigned code, const char *message,
                              uint64_t request_id) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  char text[512];
  const uint8_t *frame;
  size_t len;
  int err;
  snprintf(text, sizeof text, "%s", message);   /* bounded to fit the buffer */
  if ((err = gs_wire_write_error(buf, sizeof buf, code, text, request_id, &frame, &len)))
    return err;
  if ((err = gs_link_send(s->link, frame, len))) return err;
  return gs_link_flush(s->link);
}

static int session_send_hello(session *s) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len;
  gs_wire_hello h;
  int err;
  memset(&h, 0, sizeof h);
  h.protocol_version = GS_WIRE_PROTOCOL_VERSION;
  h.agent_version = GS_VERSION;
  h.device_id = s->opt->device_id;
  h.app_name = s->opt->app_name;
  h.architecture = gs_port_architecture();
  h.pointer_size = (uint32_t)sizeof(void *);
  h.clock_ms = gs_port_clock_ms();
  if ((err = gs_wire_write_hello(buf, sizeof buf, &h, &frame, &len))) return err;
  if ((err = gs_link_send(s->link, frame, len))) return err;
  return gs_link_flush(s->link);
}

/* proof = K XOR HMAC-SHA-256(SHA-256(K), M), M binding the nonce, the
 * protocol version and the device ID (proto/gcsnap.proto, AuthProof). */
static void session_proof(session *s, const uint8_t *nonce, uint8_t proof[GS_WIRE_PROOF_BYTES]) {
  static const char scheme[] = GS_WIRE_AUTH_SCHEME;   /* its NUL is part of M */
  const uint8_t *key = s->opt->key;
  uint8_t verifier[GS_SHA256_BYTES], mac[GS_SHA256_BYTES], version[4];
  gs_hmac_sha256_ctx h;
  unsigned i;
  version[0] = (uint8_t)(GS_WIRE_PROTOCOL_VERSION >> 24);
  version[1] = (uint8_t)(GS_WIRE_PROTOCOL_VERSION >> 16);
  version[2] = (uint8_t)(GS_WIRE_PROTOCOL_VERSION >> 8);
  version[3] = (uint8_t)GS_WIRE_PROTOCOL_VERSION;
  gs_sha256(key, GS_WIRE_KEY_BYTES, verifier);
  gs_hmac_sha256_init(&h, verifier, sizeof verifier);
  gs_hmac_sha256_update(&h, scheme, sizeof scheme);
  gs_hmac_sha256_update(&h, nonce, GS_WIRE_NONCE_BYTES);
  gs_hmac_sha256_update(&h, version, sizeof version);
  gs_hmac_sha256_update(&h, s->opt->device_id, strlen(s->opt->device_id));
  gs_hmac_sha256_final(&h, mac);
  for (i = 0; i < GS_WIRE_PROOF_BYTES; i++) proof[i] = (uint8_t)(key[i] ^ mac[i]);
  gs_sha256_wipe(verifier, sizeof verifier);
  gs_sha256_wipe(mac, sizeof mac);
}

/* Answers AuthChallenge. STEP_OK when the proof went out, STEP_REFUSED
 * when the agent cannot answer, STEP_LINK when the link failed. */
static int session_answer_challenge(session *s, const gs_wire_control *m) {
  /* Small: this is inlined into session_connect, and a stack frame above
   * 4 KiB needs the stack probe (__chkstk) that CE builds do not link. */
  uint8_t buf[GS_WIRE_PROOF_BYTES + 32], proof[GS_WIRE_PROOF_BYTES];
  const uint8_t *frame;
  size_t len;
  int err;
  if (!s->opt->key) {
    fprintf(stderr, AGENT_NAME ": the collector requires a key for device %s: give"
            " --key-file (made with 'gcsnap keys add %s' on the collector's host)\n",
            s->opt->device_id, s->opt->device_id);
    fflush(stderr);
    s->refused = 1;
    return STEP_REFUSED;
  }
  if (m->challenge.nonce_len != GS_WIRE_NONCE_BYTES ||
      m->challenge.scheme_len != sizeof GS_WIRE_AUTH_SCHEME - 1 ||
      memcmp(m->challenge.scheme, GS_WIRE_AUTH_SCHEME, m->challenge.scheme_len) != 0) {
    session_send_error(s, GS_WIRE_E_UNSUPPORTED, "unknown key proof scheme", 0);
    session_log("the collector asks for a key proof this agent does not know (%s)%s",
                GS_WIRE_AUTH_SCHEME " expected", "");
    s->refused = 1;
    return STEP_REFUSED;
  }
  session_proof(s, m->challenge.nonce, proof);
  err = gs_wire_write_auth_proof(buf, sizeof buf, proof, &frame, &len);
  gs_sha256_wipe(proof, sizeof proof);
  if (!err) err = gs_link_send(s->link, frame, len);
  gs_sha256_wipe(buf, sizeof buf);
  if (!err) err = gs_link_flush(s->link);
  if (err) {
    session_log("%s%s", gs_link_error(s->link), "");
    return STEP_LINK;
  }
  return STEP_OK;
}

/* ---- messages ---- */

static void session_log_error(const gs_wire_control *m) {
  fprintf(stderr, AGENT_NAME ": collector error %u (%s): ", (unsigned)m->error.code,
          gs_wire_error_name(m->error.code));
  if (m->error.message) session_put_escaped(m->error.message, m->error.message_len);
  if (m->error.request_id)
    fprintf(stderr, " (request %llu)", (unsigned long long)m->error.request_id);
  fputc('\n', stderr);
  fflush(stderr);
}

static void session_log_ack(const gs_wire_control *m) {
  fprintf(stderr, AGENT_NAME ": snapshot %llu stored as %llu",
          (unsigned long long)m->ack.snapshot_id, (unsigned long long)m->ack.stored_id);
  if (m->ack.request_id)
    fprintf(stderr, " (request %llu)", (unsigned long long)m->ack.request_id);
  fputc('\n', stderr);
  fflush(stderr);
}

/* Receives the next message; STEP_LINK, logged, when the link is gone or
 * broke the protocol. m->body is GS_WIRE_NONE when the time ran out. */
static int session_recv(session *s, gs_wire_control *m, int timeout_ms) {
  int err = gs_link_recv(s->link, m, timeout_ms);
  if (err) {
    session_log("%s%s", gs_link_error(s->link), "");
    if (err == GS_EFORMAT || err == GS_ELIMIT)
      session_send_error(s, GS_WIRE_E_PROTOCOL, gs_link_error(s->link), 0);
    return STEP_LINK;
  }
  if (m->body == GS_WIRE_PING && !m->ping.reply &&
      session_send_ping(s, m->ping.nonce, 1))
    return STEP_LINK;
  return STEP_OK;
}

/* An unexpected message: say so to the collector and drop the link. */
static int session_unexpected(session *s, const gs_wire_control *m, const char *when) {
  char msg[128];
  snprintf(msg, sizeof msg, "unexpected message %u %s", (unsigned)m->body, when);
  session_send_error(s, GS_WIRE_E_PROTOCOL, msg, 0);
  session_log("from the collector: %s%s", msg, "");
  return STEP_LINK;
}

/* ---- connecting ---- */

/* Connects, says Hello and waits for Welcome. STEP_LINK when the collector
 * cannot be reached or does not answer, STEP_REFUSED when it answers Error. */
static int session_connect(session *s) {
  const gs_session_options *o = s->opt;
  const char *host = o->hosts[s->addr], *port = o->ports[s->addr];
  gs_wire_control m;
  uint64_t deadline;
  char err[320];
  int rc, challenged = 0;

  s->refused = 0;
  if (gs_link_open(&s->link, host, port, o->connect_timeout_ms, err, sizeof err)) {
    session_log("%s%s", err, "");
    return STEP_LINK;
  }
  if (session_send_hello(s)) {
    session_log("%s%s", gs_link_error(s->link), "");
    return STEP_LINK;
  }
  deadline = gs_port_time_us() + (uint64_t)o->connect_timeout_ms * 1000u;
  for (;;) {
    uint64_t now = gs_port_time_us();
    if (now >= deadline) {
      session_log("connected to %s:%s, but no Welcome came in time", host, port);
      return STEP_LINK;
    }
    if ((rc = session_recv(s, &m, (int)((deadline - now) / 1000u) + 1))) return rc;
    switch (m.body) {
    case GS_WIRE_NONE: case GS_WIRE_PING: continue;
    case GS_WIRE_ERROR:
      session_log_error(&m);
      if (m.error.code == GS_WIRE_E_AUTH) s->refused = 1;
      return STEP_REFUSED;
    case GS_WIRE_AUTH_CHALLENGE:
      if (challenged++) return session_unexpected(s, &m, "after a key proof");
      if ((rc = session_answer_challenge(s, &m))) return rc;
      continue;
    case GS_WIRE_WELCOME: break;
    default: return session_unexpected(s, &m, "before Welcome");
    }
    if (m.welcome.protocol_version != GS_WIRE_PROTOCOL_VERSION) {
      fprintf(stderr, AGENT_NAME ": the collector speaks protocol %u, this agent %u\n",
              (unsigned)m.welcome.protocol_version, GS_WIRE_PROTOCOL_VERSION);
      return STEP_REFUSED;
    }
    fprintf(stderr, AGENT_NAME ": connected to %s:%s (collector ", host, port);
    if (m.welcome.collector_version)
      session_put_escaped(m.welcome.collector_version, m.welcome.collector_version_len);
    else
      fputc('?', stderr);
    fprintf(stderr, ") as device %s%s\n", o->device_id,
            challenged ? ", key accepted" : o->key ? " (the collector did not ask for the key)"
                                                   : "");
    fflush(stderr);
    return STEP_OK;
  }
}

/* ---- capturing ---- */

static void session_print_json(session *s, const gs_wire_snapshot *snap,
                               const gs_wire_counts *c, uint64_t us) {
  double seconds = (double)us / 1e6;
  printf("{\"source\":\"%s\",\"request_id\":%llu,\"snapshot_id\":%llu,\"objects\":%llu,"
         "\"references\":%llu,\"roots\":%llu,\"types\":%llu,\"sections\":%llu,"
         "\"generations\":%llu,\"text_bytes\":%llu,\"wire_bytes\":%llu,"
         "\"wire_ratio\":%.4f,\"crc32\":\"%08lx\",\"seconds\":%.6f,"
         "\"objects_per_second\":%.0f,\"pause_us\":%llu,\"peak_rss_kb\":%llu}\n",
         s->src->ops->name, (unsigned long long)snap->request_id,
         (unsigned long long)snap->snapshot_id, (unsigned long long)c->objects,
         (unsigned long long)c->references, (unsigned long long)c->roots,
         (unsigned long long)c->types, (unsigned long long)c->sections,
         (unsigned long long)c->generations, (unsigned long long)c->text_bytes,
         (unsigned long long)c->wire_bytes,
         c->text_bytes ? (double)c->wire_bytes / (double)c->text_bytes : 0.0,
         (unsigned long)c->crc32, seconds,
         seconds > 0 ? (double)c->objects / seconds : 0.0,
         (unsigned long long)s->src->pause_us,
         (unsigned long long)(gs_port_peak_rss() / 1024));
  fflush(stdout);
}

/* Streams one snapshot. STEP_OK when it was sent, or when the capture
 * failed and the collector was told; STEP_LINK when the link failed.
 * *sent says whether a complete snapshot went out. */
static int session_capture(session *s, uint64_t request_id, int stable_ids,
                           const char *trigger, uint64_t *snapshot_id, int *sent) {
  gs_walk_options walk = s->opt->walk;
  gs_wire_snapshot snap;
  gs_walk_stats st;
  gs_sink *sink = NULL;
  uint64_t t0 = gs_port_time_us();
  char err[320];
  int rc;

  *sent = 0;
  walk.stable_ids = walk.stable_ids || stable_ids;
  if (gs_walk_check(s->src, &walk, err, sizeof err)) {
    session_log("capture refused: %s%s", err, "");
    return session_send_error(s, GS_WIRE_E_UNSUPPORTED, err, request_id) ? STEP_LINK : STEP_OK;
  }
  memset(&snap, 0, sizeof snap);
  snap.request_id = request_id;
  snap.snapshot_id = *snapshot_id = session_snapshot_id(s);
  snap.stable_ids = walk.stable_ids;
  snap.trigger = trigger;
  snap.clock_ms = walk.fixed_clock ? walk.clock_ms : gs_port_clock_ms();
  if (gs_sink_stream_new(&sink, gs_link_send, s->link, &snap, err, sizeof err)) {
    if (gs_link_failed(s->link)) {
      session_log("%s%s", gs_link_error(s->link), "");
      return STEP_LINK;
    }
    session_log("capture failed: %s%s", err, "");
    return session_send_error(s, GS_WIRE_E_CAPTURE, err, request_id) ? STEP_LINK : STEP_OK;
  }
  rc = gs_walk(s->src, sink, &walk, &st);
  if (!rc) rc = sink->ops->commit(sink);
  if (!rc) rc = gs_link_flush(s->link);
  if (rc) {
    int link = gs_link_failed(s->link);
    const char *why = st.failed ? st.error : sink->error;
    if (link) {
      session_log("%s%s", gs_link_error(s->link), "");
    } else {
      session_log("capture failed: %s%s", why, "");
      if (session_send_error(s, GS_WIRE_E_CAPTURE, why, request_id)) link = 1;
    }
    sink->ops->free(sink);
    return link ? STEP_LINK : STEP_OK;
  }
  {
    const gs_wire_counts *c = gs_sink_stream_counts(sink);
    fprintf(stderr, AGENT_NAME ": sent snapshot %llu: %llu objects, %llu bytes on the wire"
            " for %llu of text\n", (unsigned long long)snap.snapshot_id,
            (unsigned long long)c->objects, (unsigned long long)c->wire_bytes,
            (unsigned long long)c->text_bytes);
    fflush(stderr);
    if (s->opt->json) session_print_json(s, &snap, c, gs_port_time_us() - t0);
  }
  sink->ops->free(sink);
  *sent = 1;
  return STEP_OK;
}

/* ---- the two modes ---- */

/* --once: one snapshot, then the collector's verdict. */
static gs_session_result session_once(session *s) {
  gs_wire_control m;
  uint64_t snapshot_id, deadline;
  int sent;
  if (session_capture(s, 0, 0, "once", &snapshot_id, &sent) || !sent) return GS_SESSION_FAILED;
  deadline = gs_port_time_us() + (uint64_t)GS_SESSION_ACK_MS * 1000u;
  for (;;) {
    uint64_t now = gs_port_time_us();
    if (now >= deadline) {
      fprintf(stderr, AGENT_NAME ": no answer from the collector for snapshot %llu\n",
              (unsigned long long)snapshot_id);
      return GS_SESSION_FAILED;
    }
    if (session_recv(s, &m, (int)((deadline - now) / 1000u) + 1)) return GS_SESSION_FAILED;
    switch (m.body) {
    case GS_WIRE_ACK:
      if (m.ack.snapshot_id != snapshot_id) continue;
      session_log_ack(&m);
      return GS_SESSION_STORED;
    case GS_WIRE_ERROR:
      session_log_error(&m);
      return GS_SESSION_FAILED;
    case GS_WIRE_CAPTURE_REQUEST:
      session_send_error(s, GS_WIRE_E_BUSY, "the agent runs with --once",
                         m.capture.request_id);
      continue;
    case GS_WIRE_NONE: case GS_WIRE_PING: continue;
    default:
      session_unexpected(s, &m, "after a snapshot");
      return GS_SESSION_FAILED;
    }
  }
}

/* ---- the long-running session ---- */

static unsigned session_backoff(session *s, unsigned backoff) {
  /* "Equal jitter": half the delay fixed, half random. */
  unsigned half = backoff / 2;
  return half + (unsigned)(session_random(s) % (half + 1));
}

/* The link is gone: close it and plan the next attempt. */
static void session_drop_link(session *s) {
  unsigned delay = session_backoff(s, s->backoff);
  int next_now = ++s->tried < s->opt->naddrs && !s->refused;
  s->addr = (s->addr + 1) % s->opt->naddrs;
  if (next_now) delay = 0;
  else s->tried = 0;
  if (s->refused)
    delay = GS_SESSION_REFUSED_MS +
            (unsigned)(session_random(s) % (GS_SESSION_REFUSED_MS / 4 + 1));
  if (s->inflight) {
    /* Not acknowledged: it stays spooled and goes again. */
    if (s->failing == s->inflight) s->failures++;
    else s->failing = s->inflight, s->failures = 1;
    s->inflight = 0;
  }
  gs_link_close(s->link);
  s->link = NULL;
  s->next_connect = gs_port_time_us() + (uint64_t)delay * 1000u;
  fprintf(stderr, AGENT_NAME ": reconnecting in %u.%03u s\n", delay / 1000, delay % 1000);
  fflush(stderr);
  if (next_now) return;
  s->backoff = s->backoff >= s->opt->retry_max_ms / 2 ? s->opt->retry_max_ms : s->backoff * 2;
}

static void session_try_connect(session *s) {
  if (session_connect(s) != STEP_OK) {
    session_drop_link(s);
    return;
  }
  s->backoff = GS_SESSION_BACKOFF_MS;
  s->tried = 0;
  s->next_ping = gs_port_time_us() + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
  s->upload_after = 0;
}

/* The heap's size now, where the source can tell. */
static int session_heap_bytes(session *s, uint64_t *bytes) {
  return s->src->ops->heap_bytes ? s->src->ops->heap_bytes(s->src, bytes) : GS_EINVAL;
}

/* After a capture: growth is measured from here. */
static void session_rebase(session *s) {
  uint64_t bytes;
  if (session_heap_bytes(s, &bytes) == GS_OK) {
    s->baseline = bytes;
    s->have_baseline = 1;
  }
}

/* Captures into the spool. GS_OK when the snapshot was spooled. */
static int session_capture_spool(session *s, const char *trigger) {
  gs_spool *sp = s->opt->spool;
  gs_walk_options walk = s->opt->walk;
  gs_wire_snapshot snap;
  gs_walk_stats st;
  gs_sink *sink = NULL;
  uint64_t t0 = gs_port_time_us();
  char err[320];
  int rc;

  memset(&snap, 0, sizeof snap);
  snap.snapshot_id = session_snapshot_id(s);
  snap.stable_ids = walk.stable_ids;
  snap.trigger = trigger;
  snap.clock_ms = walk.fixed_clock ? walk.clock_ms : gs_port_clock_ms();
  if ((rc = gs_spool_begin(sp, snap.snapshot_id, trigger))) {
    session_log("cannot spool a snapshot: %s%s", gs_spool_error(sp), "");
    return rc;
  }
  if ((rc = gs_sink_stream_new(&sink, gs_spool_write, sp, &snap, err, sizeof err))) {
    session_log("cannot spool a snapshot: %s%s", err, "");
    gs_spool_abort(sp);
    return rc;
  }
  rc = gs_walk(s->src, sink, &walk, &st);
  if (!rc) rc = sink->ops->commit(sink);
  if (rc) {
    session_log("capture failed: %s%s", st.failed ? st.error : sink->error, "");
    sink->ops->free(sink);
    gs_spool_abort(sp);
    return rc;
  }
  if ((rc = gs_spool_commit(sp))) {
    session_log("cannot spool a snapshot: %s%s", gs_spool_error(sp), "");
  } else {
    const gs_wire_counts *c = gs_sink_stream_counts(sink);
    fprintf(stderr, AGENT_NAME ": spooled snapshot %llu (%s): %llu objects, %llu bytes\n",
            (unsigned long long)snap.snapshot_id, trigger, (unsigned long long)c->objects,
            (unsigned long long)c->wire_bytes);
    fflush(stderr);
    if (s->opt->json) session_print_json(s, &snap, c, gs_port_time_us() - t0);
  }
  sink->ops->free(sink);
  return rc;
}

/* A capture the agent decided on (trigger or schedule). */
static void session_capture_own(session *s, const char *trigger) {
  uint64_t snapshot_id = 0;
  int sent;
  if (s->opt->spool) {
    if (session_capture_spool(s, trigger) == GS_OK) session_rebase(s);
    return;
  }
  if (!s->link) {
    fprintf(stderr, AGENT_NAME ": no collector and no --spool: snapshot for %s not taken\n",
            trigger);
    fflush(stderr);
    return;
  }
  if (session_capture(s, 0, 0, trigger, &snapshot_id, &sent)) {
    fprintf(stderr, AGENT_NAME ": snapshot %llu for %s lost with the link (no --spool)\n",
            (unsigned long long)snapshot_id, trigger);
    fflush(stderr);
    session_drop_link(s);
  }
  if (sent) session_rebase(s);
}

/* The growth threshold over base, base * (1 + bp / 10000), without
 * overflow. */
static uint64_t session_growth_limit(uint64_t base, uint32_t bp) {
  return base + base / 10000u * bp + base % 10000u * bp / 10000u;
}

/* Lets the program run on, reads the heap's size and fires a trigger
 * when it says so and the cool-down is over. */
static void session_check(session *s, uint64_t now) {
  const gs_session_options *o = s->opt;
  const char *fired = NULL;
  uint64_t bytes;
  if (s->src->ops->run && s->src->ops->run(s->src)) {
    session_log("the heap source failed: %s%s", s->src->error, "");
    return;
  }
  if (session_heap_bytes(s, &bytes)) return;
  if (!s->have_baseline) {
    s->baseline = bytes;
    s->have_baseline = 1;
  }
  if (now < s->cooldown_until) return;
  if (o->growth_trigger && bytes > session_growth_limit(s->baseline, o->growth_bp))
    fired = o->growth_trigger;
  else if (o->bytes_trigger && bytes > o->heap_limit)
    fired = o->bytes_trigger;
  if (!fired) return;
  fprintf(stderr, AGENT_NAME ": %s: the heap holds %llu bytes (%llu after the last capture)\n",
          fired, (unsigned long long)bytes, (unsigned long long)s->baseline);
  fflush(stderr);
  /* From the capture's start, which the snapshot's ID also stamps. */
  s->cooldown_until = gs_port_time_us() + (uint64_t)o->cooldown_ms * 1000u;
  session_capture_own(s, fired);
}

/* Sends the oldest spooled snapshot, if the link is free for it. */
static void session_upload(session *s, uint64_t now) {
  gs_spool *sp = s->opt->spool;
  char trigger[GS_SPOOL_TRIGGER_MAX + 1];
  uint64_t id, bytes;
  int rc;
  if (!sp || !s->link || s->inflight || now < s->upload_after) return;
  rc = gs_spool_oldest(sp, &id, trigger, sizeof trigger, &bytes);
  if (rc == GS_EOF) return;
  if (rc == GS_OK && id == s->failing && s->failures >= GS_SESSION_UPLOAD_TRIES) {
    fprintf(stderr, AGENT_NAME ": spooled snapshot %llu broke the link %u times running:"
            " removed from the spool\n", (unsigned long long)id, s->failures);
    fflush(stderr);
    gs_spool_remove(sp, id);
    s->failing = 0;
    s->failures = 0;
    return;
  }
  if (rc == GS_EFORMAT) {
    session_log("%s; removed from the spool%s", gs_spool_error(sp), "");
    gs_spool_remove(sp, id);
    return;
  }
  if (rc) {
    session_log("%s%s", gs_spool_error(sp), "");
    s->upload_after = now + (uint64_t)GS_SESSION_RETRY_MS * 1000u;
    return;
  }
  fprintf(stderr, AGENT_NAME ": uploading spooled snapshot %llu (%s), %llu bytes\n",
          (unsigned long long)id, trigger, (unsigned long long)bytes);
  fflush(stderr);
  s->inflight = id;
  rc = gs_spool_send(sp, id, gs_link_send, s->link);
  if (!rc) rc = gs_link_flush(s->link);
  if (rc && gs_link_failed(s->link)) {
    session_log("%s%s", gs_link_error(s->link), "");
    session_drop_link(s);
    return;
  }
  if (rc) {
    /* The file failed half way: the collector must not keep what it got. */
    session_log("%s; removed from the spool%s", gs_spool_error(sp), "");
    gs_spool_remove(sp, id);
    s->inflight = 0;
    if (session_send_error(s, GS_WIRE_E_CAPTURE, "a spooled snapshot could not be read", 0))
      session_drop_link(s);
    return;
  }
  s->inflight_deadline = gs_port_time_us() + (uint64_t)GS_SESSION_ACK_MS * 1000u;
}

/* The collector's Ack or Error for the snapshot in flight. */
static void session_verdict(session *s, const gs_wire_control *m) {
  uint64_t id = s->inflight;
  if (m->body == GS_WIRE_ACK) {
    if (m->ack.snapshot_id != id) return;
    if (gs_spool_remove(s->opt->spool, id))
      session_log("%s%s", gs_spool_error(s->opt->spool), "");
    s->inflight = 0;
    if (s->failing == id) s->failing = 0, s->failures = 0;
    return;
  }
  if (m->error.request_id != 0) return;
  s->inflight = 0;
  switch (m->error.code) {
  case GS_WIRE_E_STORAGE: case GS_WIRE_E_BUSY: case GS_WIRE_E_SHUTDOWN: case GS_WIRE_E_TIMEOUT:
    fprintf(stderr, AGENT_NAME ": spooled snapshot %llu kept, offered again in %u s\n",
            (unsigned long long)id, GS_SESSION_RETRY_MS / 1000u);
    s->upload_after = gs_port_time_us() + (uint64_t)GS_SESSION_RETRY_MS * 1000u;
    break;
  default:
    fprintf(stderr, AGENT_NAME ": spooled snapshot %llu refused: removed from the spool\n",
            (unsigned long long)id);
    gs_spool_remove(s->opt->spool, id);
  }
  fflush(stderr);
}

/* One message from the collector. */
static void session_handle(session *s, const gs_wire_control *m) {
  uint64_t snapshot_id;
  int sent;
  switch (m->body) {
  case GS_WIRE_CAPTURE_REQUEST:
    if (session_capture(s, m->capture.request_id, m->capture.stable_ids, "request",
                        &snapshot_id, &sent))
      session_drop_link(s);
    else if (sent)
      session_rebase(s);
    break;
  case GS_WIRE_ACK:
    session_log_ack(m);
    if (s->inflight) session_verdict(s, m);
    break;
  case GS_WIRE_ERROR:
    session_log_error(m);
    if (s->inflight) session_verdict(s, m);
    break;
  case GS_WIRE_NONE: case GS_WIRE_PING: break;
  default:
    session_unexpected(s, m, "in a session");
    session_drop_link(s);
  }
}

static uint64_t session_min(uint64_t a, uint64_t b) {
  return a < b ? a : b;
}

/* The next moment something is due. */
static uint64_t session_next(const session *s, uint64_t now) {
  uint64_t t = now + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
  if (!s->link) t = session_min(t, s->next_connect);
  else {
    t = session_min(t, s->next_ping);
    if (s->inflight) t = session_min(t, s->inflight_deadline);
    else if (s->upload_after > now) t = session_min(t, s->upload_after);
  }
  if (s->opt->every_ms) t = session_min(t, s->next_every);
  if (s->opt->check_ms) t = session_min(t, s->next_check);
  return t;
}

/* Runs until the agent is stopped. */
static void session_loop(session *s) {
  const gs_session_options *o = s->opt;
  uint64_t now = gs_port_time_us();
  s->backoff = GS_SESSION_BACKOFF_MS;
  if (o->every_ms) s->next_every = now + (uint64_t)o->every_ms * 1000u;
  if (o->check_ms) s->next_check = now;
  for (;;) {
    gs_wire_control m;
    uint64_t next;
    now = gs_port_time_us();
    if (!s->link && now >= s->next_connect) session_try_connect(s);
    if (o->every_ms && now >= s->next_every) {
      s->next_every += (uint64_t)o->every_ms * 1000u;
      if (s->next_every <= now) s->next_every = now + (uint64_t)o->every_ms * 1000u;
      session_capture_own(s, "every");
    }
    if (o->check_ms && now >= s->next_check) {
      s->next_check = now + (uint64_t)o->check_ms * 1000u;
      session_check(s, now);
    }
    now = gs_port_time_us();
    if (s->link && s->inflight && now >= s->inflight_deadline) {
      fprintf(stderr, AGENT_NAME ": no answer from the collector for snapshot %llu\n",
              (unsigned long long)s->inflight);
      session_drop_link(s);
    }
    if (s->link && now >= s->next_ping) {
      s->next_ping = now + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
      if (session_send_ping(s, now, 0)) {
        session_log("%s%s", gs_link_error(s->link), "");
        session_drop_link(s);
      }
    }
    session_upload(s, now);
    now = gs_port_time_us();
    next = session_next(s, now);
    if (!s->link) {
      if (next > now) gs_port_sleep_ms((unsigned)((next - now + 999) / 1000u));
      continue;
    }
    if (session_recv(s, &m, next > now ? (int)((next - now + 999) / 1000u) : 0)) {
      session_drop_link(s);
      continue;
    }
    if (m.body != GS_WIRE_NONE)
      s->next_ping = gs_port_time_us() + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
    session_handle(s, &m);
  }
}

gs_session_result gs_session_run(gs_source *src, const gs_session_options *opt) {
  session s;
  memset(&s, 0, sizeof s);
  s.src = src;
  s.opt = opt;
  s.rng = (gs_port_wall_ms() ^ gs_port_time_us() << 20 ^ (uint64_t)gs_port_pid() << 40) | 1;
  /* IDs keep growing past what is spooled, even if the clock went back. */
  if (opt->spool) s.last_snapshot_id = gs_spool_last_id(opt->spool);

  if (opt->once) {
    gs_session_result r;
    int rc;
    /* Each collector in turn, until one answers. */
    while ((rc = session_connect(&s)) == STEP_LINK && s.addr + 1 < opt->naddrs) {
      gs_link_close(s.link);
      s.link = NULL;
      s.addr++;
    }
    if (rc == STEP_OK) r = session_once(&s);
    else if (rc == STEP_REFUSED) r = s.refused ? GS_SESSION_REFUSED : GS_SESSION_FAILED;
    else r = GS_SESSION_UNREACHABLE;
    gs_link_close(s.link);
    return r;
  }
  session_loop(&s);
  return GS_SESSION_FAILED;
}
