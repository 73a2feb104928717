/* gs_pb_writer.c - protobuf wire format: an allocation-free writer.
 *
 * The writer never fails mid-message: a write that does not fit marks the
 * buffer as overflowed and later writes do nothing, so a message builder
 * is a straight sequence of calls and one status check. */
#include <string.h>
#include "gs_error.h"
#include "gs_pb_writer.h"

void gs_pb_init(gs_pb *w, void *buf, size_t cap) {
  w->buf = buf;
  w->len = 0;
  w->cap = cap;
  w->overflow = 0;
}

int gs_pb_status(const gs_pb *w) {
  return w->overflow ? GS_ELIMIT : GS_OK;
}

/* Room for n more bytes, or the buffer is marked overflowed. */
static int pb_room(gs_pb *w, size_t n) {
  if (w->overflow || w->cap - w->len < n) {
    w->overflow = 1;
    return 0;
  }
  return 1;
}

size_t gs_pb_varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    n++;
  }
  return n;
}

uint64_t gs_pb_zigzag(uint64_t v) {
  return (v << 1) ^ (0 - (v >> 63));
}

void gs_pb_raw_varint(gs_pb *w, uint64_t v) {
  uint8_t *p;
  /* The common case checks once for the longest varint; near the end of
   * the buffer, the exact size decides. */
  if (w->overflow) return;
  if (w->cap - w->len < GS_PB_VARINT_MAX && !pb_room(w, gs_pb_varint_size(v))) return;
  p = w->buf + w->len;
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  w->len = (size_t)(p - w->buf);
}

void gs_pb_raw_bytes(gs_pb *w, const void *data, size_t len) {
  if (!pb_room(w, len)) return;
  if (len) memcpy(w->buf + w->len, data, len);
  w->len += len;
}

void gs_pb_tag(gs_pb *w, uint32_t field, unsigned wire_type) {
  gs_pb_raw_varint(w, (uint64_t)field << 3 | wire_type);
}

void gs_pb_varint(gs_pb *w, uint32_t field, uint64_t v) {
  gs_pb_tag(w, field, GS_PB_VARINT);
  gs_pb_raw_varint(w, v);
}

void gs_pb_sint64(gs_pb *w, uint32_t field, int64_t v) {
  gs_pb_varint(w, field, gs_pb_zigzag((uint64_t)v));
}

static void pb_little_endian(gs_pb *w, uint64_t v, size_t n) {
  size_t i;
  if (!pb_room(w, n)) return;
  for (i = 0; i < n; i++) w->buf[w->len++] = (uint8_t)(v >> (8 * i));
}

void gs_pb_fixed32(gs_pb *w, uint32_t field, uint32_t v) {
  gs_pb_tag(w, field, GS_PB_FIXED32);
  pb_little_endian(w, v, 4);
}

void gs_pb_fixed64(gs_pb *w, uint32_t field, uint64_t v) {
  gs_pb_tag(w, field, GS_PB_FIXED64);
  pb_little_endian(w, v, 8);
}

void gs_pb_bytes(gs_pb *w, uint32_t field, const void *data, size_t len) {
  gs_pb_tag(w, field, GS_PB_LEN);
  gs_pb_raw_varint(w, len);
  gs_pb_raw_bytes(w, data, len);
}

void gs_pb_string(gs_pb *w, uint32_t field, const char *s) {
  if (s) gs_pb_bytes(w, field, s, strlen(s));
}

size_t gs_pb_begin(gs_pb *w, uint32_t field) {
  size_t mark;
  gs_pb_tag(w, field, GS_PB_LEN);
  mark = w->len;
  if (pb_room(w, GS_PB_NESTED_LEN)) w->len += GS_PB_NESTED_LEN;
  return mark;
}

void gs_pb_end(gs_pb *w, size_t mark) {
  size_t body, i;
  uint8_t *p;
  if (w->overflow) return;
  body = w->len - mark - GS_PB_NESTED_LEN;
  if (body > GS_PB_NESTED_MAX) {
    w->overflow = 1;
    return;
  }
  /* Four 7-bit groups, the first three with the continuation bit. */
  p = w->buf + mark;
  for (i = 0; i < GS_PB_NESTED_LEN; i++) {
    p[i] = (uint8_t)((body >> (7 * i)) & 0x7f);
    if (i + 1 < GS_PB_NESTED_LEN) p[i] |= 0x80;
  }
}
