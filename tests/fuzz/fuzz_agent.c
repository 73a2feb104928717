/* fuzz_agent.c - libFuzzer target for the agent's side of the wire: what
 * it does with the bytes the collector sends (gs_link.c): gs_wire_reader
 * cuts frames out of what the socket delivers, gs_wire_decode_control
 * decodes each on gs_pb's reader.
 *
 * An input is what the collector's connection delivers. What must hold:
 *   - the reader, fed as gs_link feeds it (into its own space, in pieces of
 *     varying size, with the agent's buffer and frame limit), gives the same
 *     frames and the same verdict as a plain walk of the whole input;
 *   - gs_pb's reader stays inside the message at every depth;
 *   - a decoded message's strings lie inside its frame;
 *   - where the envelope holds one message and the decoder accepts it,
 *     protobuf-c (the collector's decoder) accepts it too, with the same
 *     kind and, for Welcome, CaptureRequest, Ack, Error and Ping, the same
 *     fields. (Not the other way round: the decoder refuses a known field
 *     of the wrong wire type or number 0, which protobuf-c lets pass.)
 *   - a Ping or an Error encoded by the agent decodes to what was put in. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gcsnap.pb-c.h"
#include "gs_error.h"
#include "gs_pb_reader.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"
#include "fuzz_util.h"

/* As gs_link.h: the agent takes frames of at most 64 KiB. */
#define AGENT_MAX_IN (64u << 10)
#define MAX_FRAMES 4096

typedef struct frame_ref {
  const uint8_t *data;
  size_t len;
} frame_ref;

/* ---- gs_pb, at every depth ------------------------------------------------ */

/* Walks the fields of a message and, taking each length-delimited one for
 * a message too, of what it holds. */
static void walk_pb(const uint8_t *data, size_t len, int depth) {
  gs_pb_reader r;
  gs_pb_field f;
  int rc;
  gs_pb_reader_init(&r, data, len);
  while ((rc = gs_pb_next(&r, &f)) == GS_OK) {
    FUZZ_CHECK(f.number >= 1 && f.number <= GS_PB_FIELD_MAX);
    FUZZ_CHECK(r.p <= data + len);
    if (f.wire_type == GS_PB_LEN) {
      const uint8_t *p = f.data, *end = f.data + f.len;
      uint64_t v;
      FUZZ_CHECK(f.data >= data && f.len <= (size_t)(data + len - f.data));
      /* As a packed field of varints. */
      while (p < end && gs_pb_read_varint(&p, end, &v) == GS_OK) FUZZ_CHECK(p <= end);
      if (depth < 4) walk_pb(f.data, f.len, depth + 1);
    } else {
      FUZZ_CHECK(f.wire_type == GS_PB_VARINT || f.wire_type == GS_PB_FIXED32 ||
                 f.wire_type == GS_PB_FIXED64);
    }
  }
  FUZZ_CHECK(rc == GS_EOF || (rc == GS_EFORMAT && r.error != NULL && r.error[0]));
  FUZZ_CHECK(rc != GS_EOF || r.p == data + len);
}

/* ---- the decoder against protobuf-c ------------------------------------- */

static int inside(const uint8_t *frame, size_t len, const char *s, size_t n) {
  const uint8_t *p = (const uint8_t *)s;
  return n == 0 || (p >= frame && n <= (size_t)(frame + len - p));
}

/* The highest body number of the schema's Envelope. */
static uint32_t last_body(void) {
  static uint32_t last;
  unsigned i;
  if (!last)
    for (i = 0; i < gcsnap__envelope__descriptor.n_fields; i++)
      if (gcsnap__envelope__descriptor.fields[i].id > last)
        last = gcsnap__envelope__descriptor.fields[i].id;
  return last;
}

/* The number of Envelope bodies in the frame: the decoder keeps the last,
 * protobuf-c merges repeated ones, so they are compared only for one. */
static int count_bodies(const uint8_t *frame, size_t len) {
  gs_pb_reader r;
  gs_pb_field f;
  int n = 0;
  gs_pb_reader_init(&r, frame, len);
  while (gs_pb_next(&r, &f) == GS_OK) n += f.number <= last_body();
  return n;
}

static int is_control(gs_wire_body b) {
  return b == GS_WIRE_WELCOME || b == GS_WIRE_CAPTURE_REQUEST || b == GS_WIRE_ACK ||
         b == GS_WIRE_ERROR || b == GS_WIRE_PING;
}

/* A string field as protobuf-c gives it (NUL-terminated, so cut at the first
 * NUL) against the decoder's bytes. */
static int same_string(const char *pbc, const char *s, size_t n) {
  size_t k = pbc ? strlen(pbc) : 0;
  const char *nul = n ? memchr(s, '\0', n) : NULL;
  if (nul) n = (size_t)(nul - s);
  return k == n && (n == 0 || memcmp(pbc, s, n) == 0);
}

static void compare_fields(const gs_wire_control *m, const Gcsnap__Envelope *e) {
  FUZZ_CHECK((unsigned)e->body_case == (unsigned)m->body);
  switch (m->body) {
  case GS_WIRE_WELCOME:
    FUZZ_CHECK(e->welcome->protocol_version == m->welcome.protocol_version);
    FUZZ_CHECK(e->welcome->max_frame == m->welcome.max_frame);
    FUZZ_CHECK(same_string(e->welcome->collector_version, m->welcome.collector_version,
                           m->welcome.collector_version_len));
    break;
  case GS_WIRE_CAPTURE_REQUEST:
    FUZZ_CHECK(e->capture_request->request_id == m->capture.request_id);
    FUZZ_CHECK((e->capture_request->options && e->capture_request->options->stable_ids) ==
               (m->capture.stable_ids != 0));
    break;
  case GS_WIRE_ACK:
    FUZZ_CHECK(e->ack->request_id == m->ack.request_id);
    FUZZ_CHECK(e->ack->snapshot_id == m->ack.snapshot_id);
    FUZZ_CHECK(e->ack->stored_id == m->ack.stored_id);
    break;
  case GS_WIRE_ERROR:
    FUZZ_CHECK(e->error->code == m->error.code);
    FUZZ_CHECK(e->error->request_id == m->error.request_id);
    FUZZ_CHECK(same_string(e->error->message, m->error.message, m->error.message_len));
    break;
  case GS_WIRE_PING:
    FUZZ_CHECK(e->ping->nonce == m->ping.nonce);
    FUZZ_CHECK((e->ping->reply != 0) == (m->ping.reply != 0));
    break;
  default:
    break;
  }
}

/* ---- the agent's own encoders, back through its decoder ------------------- */

static void check_ping_round_trip(const gs_wire_control *m) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len, plen, flen;
  gs_wire_control back;
  char err[128];
  FUZZ_CHECK(gs_wire_write_ping(buf, sizeof buf, m->ping.nonce, m->ping.reply, &frame, &len) ==
             GS_OK);
  FUZZ_CHECK(gs_wire_frame_peek(frame, len, GS_WIRE_MAX_FRAME, &plen, &flen) == GS_OK);
  FUZZ_CHECK(plen + flen == len);
  FUZZ_CHECK(gs_wire_decode_control(frame + plen, flen, &back, err, sizeof err) == GS_OK);
  FUZZ_CHECK(back.body == GS_WIRE_PING && back.ping.nonce == m->ping.nonce);
  FUZZ_CHECK((back.ping.reply != 0) == (m->ping.reply != 0));
}

static void check_error_round_trip(const gs_wire_control *m) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  char text[512], err[128];
  const uint8_t *frame;
  size_t len, plen, flen, n = m->error.message_len;
  gs_wire_control back;
  if (n >= sizeof text || (n && memchr(m->error.message, '\0', n))) return;
  if (n) memcpy(text, m->error.message, n);
  text[n] = '\0';
  FUZZ_CHECK(gs_wire_write_error(buf, sizeof buf, m->error.code, text, m->error.request_id,
                                 &frame, &len) == GS_OK);
  FUZZ_CHECK(gs_wire_frame_peek(frame, len, GS_WIRE_MAX_FRAME, &plen, &flen) == GS_OK);
  FUZZ_CHECK(plen + flen == len);
  FUZZ_CHECK(gs_wire_decode_control(frame + plen, flen, &back, err, sizeof err) == GS_OK);
  FUZZ_CHECK(back.body == GS_WIRE_ERROR && back.error.code == m->error.code);
  FUZZ_CHECK(back.error.request_id == m->error.request_id);
  FUZZ_CHECK(back.error.message_len == n && (n == 0 || !memcmp(back.error.message, text, n)));
}

static void check_frame(const uint8_t *frame, size_t len) {
  gs_wire_control m;
  char err[160];
  int rc, bodies;
  Gcsnap__Envelope *e;
  memset(err, 'x', sizeof err);
  walk_pb(frame, len, 0);
  rc = gs_wire_decode_control(frame, len, &m, err, sizeof err);
  bodies = count_bodies(frame, len);
  e = gcsnap__envelope__unpack(NULL, len, frame);
  if (rc != GS_OK) {
    FUZZ_CHECK(rc == GS_EFORMAT);
    FUZZ_CHECK(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0');
  } else {
    FUZZ_CHECK(m.body >= GS_WIRE_HELLO && (uint32_t)m.body <= last_body() && bodies >= 1);
    FUZZ_CHECK(inside(frame, len, m.welcome.collector_version, m.welcome.collector_version_len));
    FUZZ_CHECK(inside(frame, len, m.error.message, m.error.message_len));
    if (bodies == 1 && is_control(m.body)) {
      FUZZ_CHECK(e != NULL);
      compare_fields(&m, e);
    } else if (bodies == 1 && e) {
      FUZZ_CHECK((unsigned)e->body_case == (unsigned)m.body);
    }
    if (m.body == GS_WIRE_PING) check_ping_round_trip(&m);
    if (m.body == GS_WIRE_ERROR) check_error_round_trip(&m);
  }
  if (e) gcsnap__envelope__free_unpacked(e, NULL);
}

/* ---- framing ------------------------------------------------------------ */

/* The frames of the whole input, walked plainly; returns the verdict at the
 * end (GS_EOF: the input ends inside a frame or between frames). */
static int plain_frames(const uint8_t *data, size_t size, frame_ref *out, size_t *n) {
  size_t off = 0;
  *n = 0;
  for (;;) {
    size_t plen, flen;
    int rc = gs_wire_frame_peek(data + off, size - off, AGENT_MAX_IN, &plen, &flen);
    if (rc != GS_OK) return rc;
    if (size - off - plen < flen || *n == MAX_FRAMES) return GS_EOF;
    out[*n].data = data + off + plen;
    out[*n].len = flen;
    ++*n;
    off += plen + flen;
  }
}

/* The sizes the socket delivers in: from 1 byte to the whole buffer. */
static size_t piece_size(size_t i, const uint8_t *data, size_t size) {
  static const size_t sizes[] = {1, 2, 3, 5, 16, 64, 1000, 4096, 70000};
  uint8_t b = size ? data[(i * 7) % size] : 0;
  return sizes[(b ^ i) % (sizeof sizes / sizeof sizes[0])];
}

static void check_framing(const uint8_t *data, size_t size) {
  static frame_ref want[MAX_FRAMES];
  static uint8_t buf[AGENT_MAX_IN + GS_WIRE_PREFIX_MAX];
  gs_wire_reader r;
  size_t nwant, got = 0, fed = 0, piece = 0;
  int verdict = plain_frames(data, size, want, &nwant), rc;
  gs_wire_reader_init(&r, buf, sizeof buf, AGENT_MAX_IN);
  for (;;) {
    const uint8_t *frame;
    size_t len, avail, n;
    rc = gs_wire_reader_next(&r, &frame, &len);
    if (rc == GS_OK) {
      if (got == nwant) break;   /* past MAX_FRAMES */
      FUZZ_CHECK(len == want[got].len && memcmp(frame, want[got].data, len) == 0);
      check_frame(frame, len);
      got++;
      continue;
    }
    if (rc != GS_EOF || fed == size) break;
    uint8_t *space = gs_wire_reader_space(&r, &avail);
    FUZZ_CHECK(avail > 0);   /* any frame the limit allows fits the buffer */
    n = piece_size(piece++, data, size);
    if (n > avail) n = avail;
    if (n > size - fed) n = size - fed;
    memcpy(space, data + fed, n);
    gs_wire_reader_commit(&r, n);
    fed += n;
  }
  if (got < nwant) FUZZ_CHECK(0);   /* the reader lost a frame */
  if (nwant < MAX_FRAMES) {
    FUZZ_CHECK(rc == verdict);
    if (rc == GS_EOF) FUZZ_CHECK(fed == size);
    if (rc != GS_EOF) FUZZ_CHECK(gs_wire_reader_next(&r, &(const uint8_t *){0}, &(size_t){0}) == rc);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_framing(data, size);
  return 0;
}
