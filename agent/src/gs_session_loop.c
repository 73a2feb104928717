/* gs_session_loop.c - the agent's long-running session (see
 * gs_session.h): reconnection with backoff over the collectors, captures of
 * its own (--every, --trigger), the spool's upload and the collector's
 * verdicts on it, and the loop that runs them all. The link itself is
 * gs_session.c's. */
#include <stdio.h>
#include <string.h>
#include "gs_error.h"
#include "gs_link.h"
#include "gs_port.h"
#include "gs_session.h"
#include "gs_session_int.h"
#include "gs_sink.h"
#include "gs_spool.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"

/* ---- reconnecting ---- */

/* xorshift64*: good enough to spread reconnections. */
static uint64_t session_random(gs_sess *s) {
  s->rng ^= s->rng >> 12;
  s->rng ^= s->rng << 25;
  s->rng ^= s->rng >> 27;
  return s->rng * 0x2545F4914F6CDD1Dull;
}

static unsigned session_backoff(gs_sess *s, unsigned backoff) {
  /* "Equal jitter": half the delay fixed, half random. */
  unsigned half = backoff / 2;
  return half + (unsigned)(session_random(s) % (half + 1));
}

/* The link is gone: close it and plan the next attempt. */
static void session_drop_link(gs_sess *s) {
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

static void session_try_connect(gs_sess *s) {
  if (gs_sess_connect(s) != STEP_OK) {
    session_drop_link(s);
    return;
  }
  s->backoff = GS_SESSION_BACKOFF_MS;
  s->tried = 0;
  s->next_ping = gs_port_time_us() + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
  s->upload_after = 0;
}

/* The heap's size now, where the source can tell. */
static int session_heap_bytes(gs_sess *s, uint64_t *bytes) {
  return s->src->ops->heap_bytes ? s->src->ops->heap_bytes(s->src, bytes) : GS_EINVAL;
}

/* After a capture: growth is measured from here. */
static void session_rebase(gs_sess *s) {
  uint64_t bytes;
  if (!s->opt->growth_trigger) return;   /* no growth to measure: ask the source nothing */
  if (session_heap_bytes(s, &bytes) == GS_OK) {
    s->baseline = bytes;
    s->have_baseline = 1;
  }
}

/* Captures into the spool. GS_OK when the snapshot was spooled. */
static int session_capture_spool(gs_sess *s, const char *trigger) {
  gs_spool *sp = s->opt->spool;
  gs_walk_options walk = s->opt->walk;
  gs_wire_snapshot snap;
  gs_walk_stats st;
  gs_sink *sink = NULL;
  uint64_t t0 = gs_port_time_us();
  char err[320];
  int rc;

  memset(&snap, 0, sizeof snap);
  snap.snapshot_id = gs_sess_snapshot_id(s);
  snap.stable_ids = walk.stable_ids;
  snap.trigger = trigger;
  snap.clock_ms = walk.fixed_clock ? walk.clock_ms : gs_port_clock_ms();
  if ((rc = gs_spool_begin(sp, snap.snapshot_id, trigger))) {
    gs_sess_log("cannot spool a snapshot: %s%s", gs_spool_error(sp), "");
    return rc;
  }
  if ((rc = gs_sink_stream_new(&sink, gs_spool_write, sp, &snap, err, sizeof err))) {
    gs_sess_log("cannot spool a snapshot: %s%s", err, "");
    gs_spool_abort(sp);
    return rc;
  }
  rc = gs_walk(s->src, sink, &walk, &st);
  if (!rc) rc = sink->ops->commit(sink);
  if (rc) {
    gs_sess_log("capture failed: %s%s", st.failed ? st.error : sink->error, "");
    sink->ops->free(sink);
    gs_spool_abort(sp);
    return rc;
  }
  if ((rc = gs_spool_commit(sp))) {
    gs_sess_log("cannot spool a snapshot: %s%s", gs_spool_error(sp), "");
  } else {
    const gs_wire_counts *c = gs_sink_stream_counts(sink);
    fprintf(stderr, AGENT_NAME ": spooled snapshot %llu (%s): %llu objects, %llu bytes\n",
            (unsigned long long)snap.snapshot_id, trigger, (unsigned long long)c->objects,
            (unsigned long long)c->wire_bytes);
    fflush(stderr);
    if (s->opt->json) gs_sess_print_json(s, &snap, c, gs_port_time_us() - t0);
  }
  sink->ops->free(sink);
  return rc;
}

/* A capture the agent decided on (trigger or schedule). */
static void session_capture_own(gs_sess *s, const char *trigger) {
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
  if (gs_sess_capture(s, 0, 0, trigger, &snapshot_id, &sent)) {
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
static void session_check(gs_sess *s, uint64_t now) {
  const gs_session_options *o = s->opt;
  const char *fired = NULL;
  uint64_t bytes;
  if (s->src->ops->run && s->src->ops->run(s->src)) {
    gs_sess_log("the heap source failed: %s%s", s->src->error, "");
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
static void session_upload(gs_sess *s, uint64_t now) {
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
    gs_sess_log("%s; removed from the spool%s", gs_spool_error(sp), "");
    gs_spool_remove(sp, id);
    return;
  }
  if (rc) {
    gs_sess_log("%s%s", gs_spool_error(sp), "");
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
    gs_sess_log("%s%s", gs_link_error(s->link), "");
    session_drop_link(s);
    return;
  }
  if (rc) {
    /* The file failed half way: the collector must not keep what it got. */
    gs_sess_log("%s; removed from the spool%s", gs_spool_error(sp), "");
    gs_spool_remove(sp, id);
    s->inflight = 0;
    if (gs_sess_send_error(s, GS_WIRE_E_CAPTURE, "a spooled snapshot could not be read", 0))
      session_drop_link(s);
    return;
  }
  s->inflight_deadline = gs_port_time_us() + (uint64_t)GS_SESSION_ACK_MS * 1000u;
}

/* The collector's Ack or Error for the snapshot in flight. */
static void session_verdict(gs_sess *s, const gs_wire_control *m) {
  uint64_t id = s->inflight;
  if (m->body == GS_WIRE_ACK) {
    if (m->ack.snapshot_id != id) return;
    if (gs_spool_remove(s->opt->spool, id))
      gs_sess_log("%s%s", gs_spool_error(s->opt->spool), "");
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
static void session_handle(gs_sess *s, const gs_wire_control *m) {
  uint64_t snapshot_id;
  int sent;
  switch (m->body) {
  case GS_WIRE_CAPTURE_REQUEST:
    if (gs_sess_capture(s, m->capture.request_id, m->capture.stable_ids, "request",
                        &snapshot_id, &sent))
      session_drop_link(s);
    else if (sent)
      session_rebase(s);
    break;
  case GS_WIRE_ACK:
    gs_sess_log_ack(m);
    if (s->inflight) session_verdict(s, m);
    break;
  case GS_WIRE_ERROR:
    gs_sess_log_error(m);
    if (s->inflight) session_verdict(s, m);
    break;
  case GS_WIRE_NONE: case GS_WIRE_PING: break;
  default:
    gs_sess_unexpected(s, m, "in a session");
    session_drop_link(s);
  }
}

static uint64_t session_min(uint64_t a, uint64_t b) {
  return a < b ? a : b;
}

/* Whether the source's program exited: then the session ends, the link
 * closed (the collector shows the device gone), rather than answering
 * every capture after with a failure. */
static int session_gone(gs_sess *s, uint64_t now) {
  if (!s->src->ops->gone || now < s->next_gone) return 0;
  s->next_gone = now + (uint64_t)GS_SESSION_GONE_MS * 1000u;
  if (!s->src->ops->gone(s->src)) return 0;
  fprintf(stderr, AGENT_NAME ": %s: the session ends\n", s->src->error);
  fflush(stderr);
  return 1;
}

/* The next moment something is due. */
static uint64_t session_next(const gs_sess *s, uint64_t now) {
  uint64_t t = now + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
  if (!s->link) t = session_min(t, s->next_connect);
  else {
    t = session_min(t, s->next_ping);
    if (s->inflight) t = session_min(t, s->inflight_deadline);
    else if (s->upload_after > now) t = session_min(t, s->upload_after);
  }
  if (s->opt->every_ms) t = session_min(t, s->next_every);
  if (s->opt->check_ms) t = session_min(t, s->next_check);
  if (s->src->ops->gone) t = session_min(t, s->next_gone);
  return t;
}

void gs_sess_loop(gs_sess *s) {
  const gs_session_options *o = s->opt;
  uint64_t now = gs_port_time_us();
  s->backoff = GS_SESSION_BACKOFF_MS;
  if (o->every_ms) s->next_every = now + (uint64_t)o->every_ms * 1000u;
  if (o->check_ms) s->next_check = now;
  for (;;) {
    gs_wire_control m;
    uint64_t next;
    now = gs_port_time_us();
    if (session_gone(s, now)) break;
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
      if (gs_sess_send_ping(s, now, 0)) {
        gs_sess_log("%s%s", gs_link_error(s->link), "");
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
    if (gs_sess_recv(s, &m, next > now ? (int)((next - now + 999) / 1000u) : 0)) {
      session_drop_link(s);
      continue;
    }
    if (m.body != GS_WIRE_NONE)
      s->next_ping = gs_port_time_us() + (uint64_t)GS_SESSION_IDLE_MS * 1000u;
    session_handle(s, &m);
  }
}
