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
#include "gs_sink.h"
#include "gs_wire.h"

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
} session;

const char *gs_session_architecture(void) {
#if defined(__x86_64__) || defined(_M_X64) || defined(_M_AMD64)
  return "x86_64";
#elif defined(__i386__) || defined(_M_IX86)
  return "x86";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "arm64";
#elif defined(__ARM_ARCH_5TE__) || defined(__ARM_ARCH_5TEJ__)
  return "armv5te";
#elif defined(__ARM_ARCH_6__) || defined(__ARM_ARCH_6K__) || defined(__ARM_ARCH_6Z__) || \
      defined(__ARM_ARCH_6ZK__)
  return "armv6";
#elif defined(__ARM_ARCH_7A__) || defined(__ARM_ARCH_7__)
  return "armv7";
#elif defined(__arm__) || defined(_M_ARM)
  return "arm";
#elif defined(__mips__) || defined(_M_MRX000)
  return "mips";
#elif defined(__SH4__) || defined(_M_SH)
  return "sh";
#elif defined(__powerpc64__)
  return "ppc64";
#elif defined(__powerpc__) || defined(_M_PPC)
  return "ppc";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__riscv)
  return "riscv32";
#else
  return "unknown";
#endif
}

static void session_log(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, AGENT_NAME ": ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  fflush(stderr);
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
  h.architecture = gs_session_architecture();
  h.pointer_size = (uint32_t)sizeof(void *);
  h.clock_ms = gs_port_clock_ms();
  if ((err = gs_wire_write_hello(buf, sizeof buf, &h, &frame, &len))) return err;
  if ((err = gs_link_send(s->link, frame, len))) return err;
  return gs_link_flush(s->link);
}

/* ---- messages ---- */

static void session_log_error(const gs_wire_control *m) {
  fprintf(stderr, AGENT_NAME ": collector error %u (%s): %.*s", (unsigned)m->error.code,
          gs_wire_error_name(m->error.code), (int)m->error.message_len,
          m->error.message ? m->error.message : "");
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
  gs_wire_control m;
  uint64_t deadline;
  char err[320];
  int rc;

  if (gs_link_open(&s->link, o->host, o->port, o->connect_timeout_ms, err, sizeof err)) {
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
      session_log("connected to %s:%s, but no Welcome came in time", o->host, o->port);
      return STEP_LINK;
    }
    if ((rc = session_recv(s, &m, (int)((deadline - now) / 1000u) + 1))) return rc;
    switch (m.body) {
    case GS_WIRE_NONE: case GS_WIRE_PING: continue;
    case GS_WIRE_ERROR: session_log_error(&m); return STEP_REFUSED;
    case GS_WIRE_WELCOME: break;
    default: return session_unexpected(s, &m, "before Welcome");
    }
    if (m.welcome.protocol_version != GS_WIRE_PROTOCOL_VERSION) {
      fprintf(stderr, AGENT_NAME ": the collector speaks protocol %u, this agent %u\n",
              (unsigned)m.welcome.protocol_version, GS_WIRE_PROTOCOL_VERSION);
      return STEP_REFUSED;
    }
    fprintf(stderr, AGENT_NAME ": connected to %s:%s (collector %.*s) as device %s\n",
            o->host, o->port, (int)m.welcome.collector_version_len,
            m.welcome.collector_version ? m.welcome.collector_version : "?", o->device_id);
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

/* Answers the collector until the link goes. */
static void session_serve(session *s) {
  gs_wire_control m;
  uint64_t snapshot_id, pings = 0;
  int sent;
  for (;;) {
    if (session_recv(s, &m, (int)GS_SESSION_IDLE_MS)) return;
    switch (m.body) {
    case GS_WIRE_NONE:
      if (session_send_ping(s, ++pings, 0)) {
        session_log("%s%s", gs_link_error(s->link), "");
        return;
      }
      break;
    case GS_WIRE_CAPTURE_REQUEST:
      if (session_capture(s, m.capture.request_id, m.capture.stable_ids, "request",
                          &snapshot_id, &sent))
        return;
      break;
    case GS_WIRE_ACK: session_log_ack(&m); break;
    case GS_WIRE_ERROR: session_log_error(&m); break;
    case GS_WIRE_PING: break;
    default: session_unexpected(s, &m, "in a session"); return;
    }
  }
}

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

static unsigned session_backoff(session *s, unsigned backoff) {
  /* "Equal jitter": half the delay fixed, half random. */
  unsigned half = backoff / 2;
  return half + (unsigned)(session_random(s) % (half + 1));
}

gs_session_result gs_session_run(gs_source *src, const gs_session_options *opt) {
  session s;
  unsigned backoff = GS_SESSION_BACKOFF_MS;
  memset(&s, 0, sizeof s);
  s.src = src;
  s.opt = opt;
  s.rng = (gs_port_wall_ms() ^ gs_port_time_us() << 20 ^ (uint64_t)gs_port_pid() << 40) | 1;

  if (opt->once) {
    gs_session_result r;
    int rc = session_connect(&s);
    if (rc == STEP_OK) r = session_once(&s);
    else r = rc == STEP_REFUSED ? GS_SESSION_FAILED : GS_SESSION_UNREACHABLE;
    gs_link_close(s.link);
    return r;
  }
  for (;;) {
    unsigned delay;
    int rc = session_connect(&s);
    if (rc == STEP_OK) {
      backoff = GS_SESSION_BACKOFF_MS;
      session_serve(&s);
    }
    gs_link_close(s.link);
    s.link = NULL;
    delay = session_backoff(&s, backoff);
    fprintf(stderr, AGENT_NAME ": reconnecting in %u.%03u s\n", delay / 1000, delay % 1000);
    fflush(stderr);
    gs_port_sleep_ms(delay);
    backoff = backoff >= opt->retry_max_ms / 2 ? opt->retry_max_ms : backoff * 2;
  }
}
