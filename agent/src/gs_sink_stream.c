/* gs_sink_stream.c - the wire as a sink: a snapshot streamed to a collector.
 *
 * A thin adapter: the walker's records go to the snapshot stream encoder
 * (common/src/wire/gs_wire.c), which batches them into frames and hands each to
 * the send callback. The sink keeps nothing else, so its memory is the
 * encoder's fixed buffers whatever the heap's size. */
#include <stdio.h>
#include <stdlib.h>
#include "gs_error.h"
#include "gs_sink.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"

#define SINK_FORMAT_VERSION 2

typedef struct stream_sink {
  gs_sink base;
  gs_wire_encoder *enc;
} stream_sink;

/* Passes a result on, describing a failure in the sink's error. */
static int sink_result(gs_sink *base, int err) {
  stream_sink *s = (stream_sink *)base;
  if (err && !base->error[0]) {
    const char *why = gs_wire_encoder_error(s->enc);
    snprintf(base->error, sizeof base->error, "cannot stream the snapshot: %s",
             why[0] ? why : gs_strerror(err));
  }
  base->bytes = gs_wire_encoder_counts(s->enc)->wire_bytes;
  return err;
}

#define ENC(base) (((stream_sink *)(base))->enc)

static int sink_section(gs_sink *base, const char *name, size_t len, uint64_t ts) {
  return sink_result(base, gs_wire_encoder_section(ENC(base), SINK_FORMAT_VERSION, name, len, ts));
}

static int sink_type(gs_sink *base, uint64_t id, const char *name, size_t len) {
  return sink_result(base, gs_wire_encoder_type(ENC(base), id, name, len));
}

static int sink_object(gs_sink *base, uint64_t id, uint64_t type, uint64_t size,
                       const uint64_t *refs, size_t nrefs) {
  int err = gs_wire_encoder_object(ENC(base), id, type, size, refs, nrefs);
  return err ? sink_result(base, err) : GS_OK;    /* the hot path: no bookkeeping */
}

static int sink_object_begin(gs_sink *base, uint64_t id, uint64_t type, uint64_t size) {
  return sink_result(base, gs_wire_encoder_object_begin(ENC(base), id, type, size));
}

static int sink_object_refs(gs_sink *base, const uint64_t *refs, size_t nrefs) {
  return sink_result(base, gs_wire_encoder_refs(ENC(base), refs, nrefs));
}

static int sink_object_end(gs_sink *base) {
  return sink_result(base, gs_wire_encoder_object_end(ENC(base)));
}

static int sink_root(gs_sink *base, uint64_t id, unsigned kind, unsigned flags,
                     uint64_t container) {
  return sink_result(base, gs_wire_encoder_root(ENC(base), id, kind, flags, container));
}

static int sink_generation(gs_sink *base, unsigned generation, uint64_t start, uint64_t used,
                           uint64_t reserved) {
  return sink_result(base, gs_wire_encoder_generation(ENC(base), generation, start, used,
                                                      reserved));
}

static int sink_static_name(gs_sink *base, uint64_t object, const char *name, size_t len) {
  return sink_result(base, gs_wire_encoder_static_name(ENC(base), object, name, len));
}

static int sink_section_end(gs_sink *base, const char *name, size_t len, uint64_t ts) {
  return sink_result(base, gs_wire_encoder_section_end(ENC(base), name, len, ts));
}

static int sink_commit(gs_sink *base) {
  return sink_result(base, gs_wire_encoder_end(ENC(base)));
}

static void sink_free(gs_sink *base) {
  if (!base) return;
  gs_wire_encoder_free(ENC(base));
  free(base);
}

static const gs_sink_ops stream_sink_ops = {
  sink_section, sink_type, sink_object, sink_root, sink_generation, sink_section_end,
  sink_commit, sink_free, sink_static_name, sink_object_begin, sink_object_refs, sink_object_end
};

const gs_wire_counts *gs_sink_stream_counts(const gs_sink *base) {
  return gs_wire_encoder_counts(((const stream_sink *)base)->enc);
}

int gs_sink_stream_new(gs_sink **out, gs_wire_frame_fn send, void *ctx,
                       const gs_wire_snapshot *snap, char *err, size_t errcap) {
  stream_sink *s = calloc(1, sizeof *s);
  int rc;
  *out = NULL;
  if (!s || gs_wire_encoder_new(&s->enc, send, ctx) != GS_OK) {
    free(s);
    snprintf(err, errcap, "out of memory for the stream encoder");
    return GS_ENOMEM;
  }
  s->base.ops = &stream_sink_ops;
  if ((rc = gs_wire_encoder_begin(s->enc, snap))) {
    snprintf(err, errcap, "cannot stream the snapshot: %s", gs_wire_encoder_error(s->enc));
    sink_free(&s->base);
    return rc;
  }
  s->base.bytes = gs_wire_encoder_counts(s->enc)->wire_bytes;
  *out = &s->base;
  return GS_OK;
}
