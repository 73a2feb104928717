/* gs_session.c - the agent's link to a collector (see gs_session.h):
 * sending, the key proof, receiving, connecting, a capture streamed over
 * the link, --once, and gs_session_run. The long-running session is in
 * gs_session_loop.c.
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
#include "gs_session_int.h"
#include "gs_sha256.h"
#include "gs_sink.h"
#include "gs_spool.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"

#ifndef GS_VERSION
#define GS_VERSION "0"
#endif

void gs_sess_log(const char *fmt, const char *a, const char *b) {
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

/* ---- ids ---- */

/* Wall-clock ms times 1000, plus one for each snapshot of the same ms: never
 * repeats on a device whose clock does not run backwards. */
uint64_t gs_sess_snapshot_id(gs_sess *s) {
  uint64_t id = gs_port_wall_ms() * 1000u;
  if (id <= s->last_snapshot_id) id = s->last_snapshot_id + 1;
  return s->last_snapshot_id = id;
}

/* ---- sending ---- */

int gs_sess_send_ping(gs_sess *s, uint64_t nonce, int reply) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len;
  int err;
  if ((err = gs_wire_write_ping(buf, sizeof buf, nonce, reply, &frame, &len))) return err;
  if ((err = gs_link_send(s->link, frame, len))) return err;
  return gs_link_flush(s->link);
}

int gs_sess_send_error(gs_sess *s, unsigned code, const char *message,
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

static int session_send_hello(gs_sess *s) {
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
static void session_proof(gs_sess *s, const uint8_t *nonce, uint8_t proof[GS_WIRE_PROOF_BYTES]) {
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
static int session_answer_challenge(gs_sess *s, const gs_wire_control *m) {
  /* Small: this is inlined into gs_sess_connect, and a stack frame above
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
    gs_sess_send_error(s, GS_WIRE_E_UNSUPPORTED, "unknown key proof scheme", 0);
    gs_sess_log("the collector asks for a key proof this agent does not know (%s)%s",
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
    gs_sess_log("%s%s", gs_link_error(s->link), "");
    return STEP_LINK;
  }
  return STEP_OK;
}

/* ---- messages ---- */

void gs_sess_log_error(const gs_wire_control *m) {
  fprintf(stderr, AGENT_NAME ": collector error %u (%s): ", (unsigned)m->error.code,
          gs_wire_error_name(m->error.code));
  if (m->error.message) session_put_escaped(m->error.message, m->error.message_len);
  if (m->error.request_id)
    fprintf(stderr, " (request %llu)", (unsigned long long)m->error.request_id);
  fputc('\n', stderr);
  fflush(stderr);
}

void gs_sess_log_ack(const gs_wire_control *m) {
  fprintf(stderr, AGENT_NAME ": snapshot %llu stored as %llu",
          (unsigned long long)m->ack.snapshot_id, (unsigned long long)m->ack.stored_id);
  if (m->ack.request_id)
    fprintf(stderr, " (request %llu)", (unsigned long long)m->ack.request_id);
  fputc('\n', stderr);
  fflush(stderr);
}

/* Receives the next message; STEP_LINK, logged, when the link is gone or
 * broke the protocol. m->body is GS_WIRE_NONE when the time ran out. */
int gs_sess_recv(gs_sess *s, gs_wire_control *m, int timeout_ms) {
  int err = gs_link_recv(s->link, m, timeout_ms);
  if (err) {
    gs_sess_log("%s%s", gs_link_error(s->link), "");
    if (err == GS_EFORMAT || err == GS_ELIMIT)
      gs_sess_send_error(s, GS_WIRE_E_PROTOCOL, gs_link_error(s->link), 0);
    return STEP_LINK;
  }
  if (m->body == GS_WIRE_PING && !m->ping.reply &&
      gs_sess_send_ping(s, m->ping.nonce, 1))
    return STEP_LINK;
  return STEP_OK;
}

/* An unexpected message: say so to the collector and drop the link. */
int gs_sess_unexpected(gs_sess *s, const gs_wire_control *m, const char *when) {
  char msg[128];
  snprintf(msg, sizeof msg, "unexpected message %u %s", (unsigned)m->body, when);
  gs_sess_send_error(s, GS_WIRE_E_PROTOCOL, msg, 0);
  gs_sess_log("from the collector: %s%s", msg, "");
  return STEP_LINK;
}

/* ---- connecting ---- */

/* Connects, says Hello and waits for Welcome. STEP_LINK when the collector
 * cannot be reached or does not answer, STEP_REFUSED when it answers Error. */
int gs_sess_connect(gs_sess *s) {
  const gs_session_options *o = s->opt;
  const char *host = o->hosts[s->addr], *port = o->ports[s->addr];
  gs_wire_control m;
  uint64_t deadline;
  char err[320];
  int rc, challenged = 0;

  s->refused = 0;
  if (gs_link_open(&s->link, host, port, o->connect_timeout_ms, err, sizeof err)) {
    gs_sess_log("%s%s", err, "");
    return STEP_LINK;
  }
  if (session_send_hello(s)) {
    gs_sess_log("%s%s", gs_link_error(s->link), "");
    return STEP_LINK;
  }
  deadline = gs_port_time_us() + (uint64_t)o->connect_timeout_ms * 1000u;
  for (;;) {
    uint64_t now = gs_port_time_us();
    if (now >= deadline) {
      gs_sess_log("connected to %s:%s, but no Welcome came in time", host, port);
      return STEP_LINK;
    }
    if ((rc = gs_sess_recv(s, &m, (int)((deadline - now) / 1000u) + 1))) return rc;
    switch (m.body) {
    case GS_WIRE_NONE: case GS_WIRE_PING: continue;
    case GS_WIRE_ERROR:
      gs_sess_log_error(&m);
      if (m.error.code == GS_WIRE_E_AUTH) s->refused = 1;
      return STEP_REFUSED;
    case GS_WIRE_AUTH_CHALLENGE:
      if (challenged++) return gs_sess_unexpected(s, &m, "after a key proof");
      if ((rc = session_answer_challenge(s, &m))) return rc;
      continue;
    case GS_WIRE_WELCOME: break;
    default: return gs_sess_unexpected(s, &m, "before Welcome");
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

void gs_sess_print_json(gs_sess *s, const gs_wire_snapshot *snap,
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
int gs_sess_capture(gs_sess *s, uint64_t request_id, int stable_ids,
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
    gs_sess_log("capture refused: %s%s", err, "");
    return gs_sess_send_error(s, GS_WIRE_E_UNSUPPORTED, err, request_id) ? STEP_LINK : STEP_OK;
  }
  memset(&snap, 0, sizeof snap);
  snap.request_id = request_id;
  snap.snapshot_id = *snapshot_id = gs_sess_snapshot_id(s);
  snap.stable_ids = walk.stable_ids;
  snap.trigger = trigger;
  snap.clock_ms = walk.fixed_clock ? walk.clock_ms : gs_port_clock_ms();
  if (gs_sink_stream_new(&sink, gs_link_send, s->link, &snap, err, sizeof err)) {
    if (gs_link_failed(s->link)) {
      gs_sess_log("%s%s", gs_link_error(s->link), "");
      return STEP_LINK;
    }
    gs_sess_log("capture failed: %s%s", err, "");
    return gs_sess_send_error(s, GS_WIRE_E_CAPTURE, err, request_id) ? STEP_LINK : STEP_OK;
  }
  rc = gs_walk(s->src, sink, &walk, &st);
  if (!rc) rc = sink->ops->commit(sink);
  if (!rc) rc = gs_link_flush(s->link);
  if (rc) {
    int link = gs_link_failed(s->link);
    const char *why = st.failed ? st.error : sink->error;
    if (link) {
      gs_sess_log("%s%s", gs_link_error(s->link), "");
    } else {
      gs_sess_log("capture failed: %s%s", why, "");
      if (gs_sess_send_error(s, GS_WIRE_E_CAPTURE, why, request_id)) link = 1;
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
    if (s->opt->json) gs_sess_print_json(s, &snap, c, gs_port_time_us() - t0);
  }
  sink->ops->free(sink);
  *sent = 1;
  return STEP_OK;
}

/* ---- the two modes ---- */

/* --once: one snapshot, then the collector's verdict. */
static gs_session_result session_once(gs_sess *s) {
  gs_wire_control m;
  uint64_t snapshot_id, deadline;
  int sent;
  if (gs_sess_capture(s, 0, 0, "once", &snapshot_id, &sent) || !sent) return GS_SESSION_FAILED;
  deadline = gs_port_time_us() + (uint64_t)GS_SESSION_ACK_MS * 1000u;
  for (;;) {
    uint64_t now = gs_port_time_us();
    if (now >= deadline) {
      fprintf(stderr, AGENT_NAME ": no answer from the collector for snapshot %llu\n",
              (unsigned long long)snapshot_id);
      return GS_SESSION_FAILED;
    }
    if (gs_sess_recv(s, &m, (int)((deadline - now) / 1000u) + 1)) return GS_SESSION_FAILED;
    switch (m.body) {
    case GS_WIRE_ACK:
      if (m.ack.snapshot_id != snapshot_id) continue;
      gs_sess_log_ack(&m);
      return GS_SESSION_STORED;
    case GS_WIRE_ERROR:
      gs_sess_log_error(&m);
      return GS_SESSION_FAILED;
    case GS_WIRE_CAPTURE_REQUEST:
      gs_sess_send_error(s, GS_WIRE_E_BUSY, "the agent runs with --once",
                         m.capture.request_id);
      continue;
    case GS_WIRE_NONE: case GS_WIRE_PING: continue;
    default:
      gs_sess_unexpected(s, &m, "after a snapshot");
      return GS_SESSION_FAILED;
    }
  }
}

gs_session_result gs_session_run(gs_source *src, const gs_session_options *opt) {
  gs_sess s;
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
    while ((rc = gs_sess_connect(&s)) == STEP_LINK && s.addr + 1 < opt->naddrs) {
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
  gs_sess_loop(&s);
  gs_link_close(s.link);
  return GS_SESSION_GONE;
}
