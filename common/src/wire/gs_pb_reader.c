/* gs_pb_reader.c - protobuf wire format: the fields of one message, read
 * with bounds checks; malformed input is refused, never trusted. */
#include <string.h>
#include "gs_error.h"
#include "gs_pb_reader.h"

uint64_t gs_pb_unzigzag(uint64_t v) {
  return (v >> 1) ^ (0 - (v & 1));
}

void gs_pb_reader_init(gs_pb_reader *r, const void *data, size_t len) {
  r->p = data;
  r->end = r->p + len;
  r->error = "";
}

int gs_pb_read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
  const uint8_t *p = *pp;
  uint64_t x = 0;
  unsigned shift;
  for (shift = 0; shift < 64; shift += 7) {
    if (p >= end) return GS_EFORMAT;
    if (shift == 63 && *p > 1) return GS_EFORMAT;   /* bits past 64 */
    x |= (uint64_t)(*p & 0x7f) << shift;
    if (!(*p++ & 0x80)) {
      *pp = p;
      *v = x;
      return GS_OK;
    }
  }
  return GS_EFORMAT;
}

static int pb_fail(gs_pb_reader *r, const char *why) {
  r->error = why;
  return GS_EFORMAT;
}

static int pb_fixed(gs_pb_reader *r, gs_pb_field *f, size_t n) {
  size_t i;
  if ((size_t)(r->end - r->p) < n) return pb_fail(r, "truncated fixed-size field");
  f->value = 0;
  for (i = 0; i < n; i++) f->value |= (uint64_t)r->p[i] << (8 * i);
  r->p += n;
  return GS_OK;
}

/* Keys and lengths are 32-bit values: like protobuf-c, refuse them in more
 * than 5 bytes, so both decoders accept the same messages. */
static int pb_read_varint32(gs_pb_reader *r, uint64_t *v) {
  const uint8_t *start = r->p;
  return gs_pb_read_varint(&r->p, r->end, v) || r->p - start > 5 ? GS_EFORMAT : GS_OK;
}

int gs_pb_next(gs_pb_reader *r, gs_pb_field *f) {
  uint64_t key, len;
  memset(f, 0, sizeof *f);
  if (r->p >= r->end) return GS_EOF;
  if (pb_read_varint32(r, &key))
    return pb_fail(r, "truncated or overlong field key");
  if ((key >> 3) == 0 || (key >> 3) > GS_PB_FIELD_MAX)
    return pb_fail(r, "field number out of range");
  f->number = (uint32_t)(key >> 3);
  f->wire_type = (unsigned)(key & 7);
  switch (f->wire_type) {
  case GS_PB_VARINT:
    if (gs_pb_read_varint(&r->p, r->end, &f->value))
      return pb_fail(r, "truncated or overlong varint");
    return GS_OK;
  case GS_PB_FIXED64:
    return pb_fixed(r, f, 8);
  case GS_PB_FIXED32:
    return pb_fixed(r, f, 4);
  case GS_PB_LEN:
    if (pb_read_varint32(r, &len))
      return pb_fail(r, "truncated or overlong length");
    if (len > (uint64_t)(r->end - r->p)) return pb_fail(r, "length past the end of the message");
    f->data = r->p;
    f->len = (size_t)len;
    r->p += len;
    return GS_OK;
  default:
    return pb_fail(r, "group or unknown wire type");
  }
}
