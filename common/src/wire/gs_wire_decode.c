/* gs_wire_decode.c - the control messages the agent reads, decoded field
 * by field with gs_pb_reader: every length and type is checked, and an
 * unknown field is skipped, as protobuf asks. */
#include <stdio.h>
#include <string.h>
#include "gs_error.h"
#include "gs_pb_reader.h"
#include "gs_wire_decode.h"

/* ---- control messages the agent reads ---- */

typedef struct ctl_decoder {
  gs_wire_control *m;
  char *err;
  size_t errcap;
} ctl_decoder;

static int ctl_fail(ctl_decoder *d, const char *what, const char *why) {
  snprintf(d->err, d->errcap, "malformed %s: %s", what, why);
  return GS_EFORMAT;
}

/* The field must have the wire type its schema gives it. */
static int ctl_expect(ctl_decoder *d, const char *what, const gs_pb_field *f, unsigned type) {
  char why[64];
  if (f->wire_type == type) return GS_OK;
  snprintf(why, sizeof why, "field %lu has wire type %u, not %u", (unsigned long)f->number,
           f->wire_type, type);
  return ctl_fail(d, what, why);
}

/* Decodes the message body; the set callback stores one known field. */
typedef int (*ctl_set_fn)(ctl_decoder *d, const gs_pb_field *f);

static int ctl_walk(ctl_decoder *d, const char *what, const gs_pb_field *body, ctl_set_fn set) {
  gs_pb_reader r;
  gs_pb_field f;
  int err;
  gs_pb_reader_init(&r, body->data, body->len);
  while ((err = gs_pb_next(&r, &f)) == GS_OK)
    if ((err = set(d, &f))) return err;
  return err == GS_EOF ? GS_OK : ctl_fail(d, what, r.error);
}

static int ctl_welcome(ctl_decoder *d, const gs_pb_field *f) {
  const char *what = "Welcome";
  switch (f->number) {
  case 1: d->m->welcome.protocol_version = (uint32_t)f->value;
    return ctl_expect(d, what, f, GS_PB_VARINT);
  case 2: d->m->welcome.collector_version = (const char *)f->data;
    d->m->welcome.collector_version_len = f->len;
    return ctl_expect(d, what, f, GS_PB_LEN);
  case 3: d->m->welcome.max_frame = (uint32_t)f->value;
    return ctl_expect(d, what, f, GS_PB_VARINT);
  default: return GS_OK;                  /* a later version's field */
  }
}

static int ctl_options(ctl_decoder *d, const gs_pb_field *f) {
  if (f->number != 1) return GS_OK;
  d->m->capture.stable_ids = f->value != 0;
  return ctl_expect(d, "CaptureOptions", f, GS_PB_VARINT);
}

static int ctl_capture(ctl_decoder *d, const gs_pb_field *f) {
  const char *what = "CaptureRequest";
  int err;
  switch (f->number) {
  case 1: d->m->capture.request_id = f->value;
    return ctl_expect(d, what, f, GS_PB_VARINT);
  case 2:   /* a repeated options field replaces the earlier one, as protobuf-c reads it */
    if ((err = ctl_expect(d, what, f, GS_PB_LEN))) return err;
    d->m->capture.stable_ids = 0;
    return ctl_walk(d, "CaptureOptions", f, ctl_options);
  default: return GS_OK;
  }
}

static int ctl_ack(ctl_decoder *d, const gs_pb_field *f) {
  uint64_t *slot;
  switch (f->number) {
  case 1: slot = &d->m->ack.request_id; break;
  case 2: slot = &d->m->ack.snapshot_id; break;
  case 3: slot = &d->m->ack.stored_id; break;
  default: return GS_OK;
  }
  *slot = f->value;
  return ctl_expect(d, "Ack", f, GS_PB_VARINT);
}

static int ctl_error(ctl_decoder *d, const gs_pb_field *f) {
  const char *what = "Error";
  switch (f->number) {
  case 1: d->m->error.code = (uint32_t)f->value;
    return ctl_expect(d, what, f, GS_PB_VARINT);
  case 2: d->m->error.message = (const char *)f->data;
    d->m->error.message_len = f->len;
    return ctl_expect(d, what, f, GS_PB_LEN);
  case 3: d->m->error.request_id = f->value;
    return ctl_expect(d, what, f, GS_PB_VARINT);
  default: return GS_OK;
  }
}

static int ctl_ping(ctl_decoder *d, const gs_pb_field *f) {
  switch (f->number) {
  case 1: d->m->ping.nonce = f->value; break;
  case 2: d->m->ping.reply = f->value != 0; break;
  default: return GS_OK;
  }
  return ctl_expect(d, "Ping", f, GS_PB_VARINT);
}

static int ctl_challenge(ctl_decoder *d, const gs_pb_field *f) {
  switch (f->number) {
  case 1: d->m->challenge.nonce = f->data;
    d->m->challenge.nonce_len = f->len;
    break;
  case 2: d->m->challenge.scheme = (const char *)f->data;
    d->m->challenge.scheme_len = f->len;
    break;
  default: return GS_OK;
  }
  return ctl_expect(d, "AuthChallenge", f, GS_PB_LEN);
}

int gs_wire_decode_control(const uint8_t *env, size_t len, gs_wire_control *m,
                           char *err, size_t errcap) {
  ctl_decoder d;
  gs_pb_reader r;
  gs_pb_field f;
  int rc;
  memset(m, 0, sizeof *m);
  d.m = m;
  d.err = err;
  d.errcap = errcap;
  gs_pb_reader_init(&r, env, len);
  while ((rc = gs_pb_next(&r, &f)) == GS_OK) {
    if (f.number > GS_WIRE_AUTH_PROOF) continue;
    if ((rc = ctl_expect(&d, "Envelope", &f, GS_PB_LEN))) return rc;
    memset(m, 0, sizeof *m);
    m->body = (gs_wire_body)f.number;
    switch (m->body) {
    case GS_WIRE_WELCOME: rc = ctl_walk(&d, "Welcome", &f, ctl_welcome); break;
    case GS_WIRE_CAPTURE_REQUEST: rc = ctl_walk(&d, "CaptureRequest", &f, ctl_capture); break;
    case GS_WIRE_ACK: rc = ctl_walk(&d, "Ack", &f, ctl_ack); break;
    case GS_WIRE_ERROR: rc = ctl_walk(&d, "Error", &f, ctl_error); break;
    case GS_WIRE_PING: rc = ctl_walk(&d, "Ping", &f, ctl_ping); break;
    case GS_WIRE_AUTH_CHALLENGE: rc = ctl_walk(&d, "AuthChallenge", &f, ctl_challenge); break;
    default: rc = GS_OK; break;
    }
    if (rc) return rc;
  }
  if (rc != GS_EOF) return ctl_fail(&d, "Envelope", r.error);
  if (m->body == GS_WIRE_NONE) return ctl_fail(&d, "Envelope", "no message in it");
  return GS_OK;
}
