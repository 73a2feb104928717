/* gs_wire.c - the wire protocol's error names and framing: the varint
 * length prefix, and the frame reader that pulls whole frames out of a
 * byte stream. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_pb_writer.h"
#include "gs_wire.h"

/* ---- error codes ---- */

static const char *const wire_error_names[GS_WIRE_E_COUNT] = {
  "none", "protocol", "version", "frame-size", "sequence", "crc", "counts",
  "invalid", "storage", "busy", "capture", "unsupported", "timeout", "shutdown",
  "device", "auth"
};

const char *gs_wire_error_name(unsigned code) {
  return code < GS_WIRE_E_COUNT ? wire_error_names[code] : "unknown";
}

/* ---- framing ---- */

size_t gs_wire_prefix(uint8_t *out, size_t len) {
  gs_pb w;
  gs_pb_init(&w, out, GS_WIRE_PREFIX_MAX);
  gs_pb_raw_varint(&w, len);
  return w.len;
}

int gs_wire_frame_peek(const uint8_t *data, size_t avail, size_t max_frame,
                       size_t *prefix_len, size_t *frame_len) {
  uint64_t v = 0;
  size_t i;
  for (i = 0; i < GS_WIRE_PREFIX_MAX; i++) {
    if (i == avail) return GS_EOF;
    v |= (uint64_t)(data[i] & 0x7f) << (7 * i);
    if (!(data[i] & 0x80)) {
      if (v > 0xffffffffu) return GS_EFORMAT;
      *prefix_len = i + 1;
      *frame_len = (size_t)v;
      return v > max_frame ? GS_ELIMIT : GS_OK;
    }
  }
  return GS_EFORMAT;
}

void gs_wire_reader_init(gs_wire_reader *r, void *buf, size_t cap, size_t max_frame) {
  r->buf = buf;
  r->cap = cap;
  r->start = r->end = 0;
  r->max_frame = max_frame;
  r->failed = 0;
}

/* Moves pending bytes to the front so that the space is contiguous. */
static void wire_reader_compact(gs_wire_reader *r) {
  if (r->start == 0) return;
  memmove(r->buf, r->buf + r->start, r->end - r->start);
  r->end -= r->start;
  r->start = 0;
}

uint8_t *gs_wire_reader_space(gs_wire_reader *r, size_t *avail) {
  if (r->cap - r->end < r->cap / 4) wire_reader_compact(r);
  *avail = r->cap - r->end;
  return r->buf + r->end;
}

void gs_wire_reader_commit(gs_wire_reader *r, size_t n) {
  r->end += n;
}

void gs_wire_reader_feed(gs_wire_reader *r, const void *data, size_t len, size_t *used) {
  size_t avail;
  uint8_t *space = gs_wire_reader_space(r, &avail);
  if (avail < len) {
    wire_reader_compact(r);
    space = gs_wire_reader_space(r, &avail);
  }
  *used = len < avail ? len : avail;
  if (*used) memcpy(space, data, *used);
  r->end += *used;
}

int gs_wire_reader_next(gs_wire_reader *r, const uint8_t **frame, size_t *len) {
  size_t prefix, body;
  int err;
  if (r->failed) return r->failed;
  err = gs_wire_frame_peek(r->buf + r->start, r->end - r->start, r->max_frame, &prefix, &body);
  if (err == GS_OK && prefix + body > r->cap) err = GS_ELIMIT;
  if (err == GS_EOF) return GS_EOF;
  if (err) return r->failed = err;
  if (r->end - r->start < prefix + body) {
    if (r->cap - r->start < prefix + body) wire_reader_compact(r);
    return GS_EOF;
  }
  *frame = r->buf + r->start + prefix;
  *len = body;
  r->start += prefix + body;
  if (r->start == r->end) r->start = r->end = 0;
  return GS_OK;
}

size_t gs_wire_reader_pending(const gs_wire_reader *r) {
  return r->end - r->start;
}
