/* wire_decode.h - the test side of the wire: a byte stream of frames is cut
 * with gs_wire_reader, each Envelope decoded with protobuf-c (the decoder
 * the collector uses, independent of the agent's own writer), and the
 * records rebuilt and written with gs_writer, while the stream rules are
 * checked: seq contiguous from 1, batches in step, continued objects
 * completed, SnapshotEnd's counts, size and CRC-32 equal to the text
 * rebuilt. */
#ifndef WIRE_DECODE_H
#define WIRE_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_writer.h"

typedef struct wd_state {
  /* The rebuilt text goes to out(out_ctx, ...) when set. */
  gs_write_fn out;
  void *out_ctx;

  /* What the stream said. */
  uint64_t request_id, snapshot_id, begin_clock_ms;
  int stable_ids;
  char trigger[64];
  int begun, ended;
  uint64_t seq;                 /* the last data message's */
  uint64_t sections, types, objects, references, roots, generations, statics;
  uint64_t continued_parts;     /* object parts sent with continues */
  uint64_t end_text_bytes;
  uint32_t end_crc32;

  /* What the rebuilt text is. */
  uint64_t text_bytes;
  uint32_t crc32;

  /* Frames. */
  uint64_t frames, wire_bytes;
  size_t largest_frame;         /* Envelope bytes of the largest data frame */
  uint64_t by_kind[18];         /* frames per Envelope body */

  char error[256];

  /* internal */
  gs_writer *w;
  gs_wire_reader reader;
  uint8_t *buf;
  uint64_t *refs;               /* the continued object's references */
  size_t nrefs, refs_cap;
  int pending;
  uint64_t pending_id, pending_type, pending_size;
} wd_state;

/* 0, or -1 with the reason in error (for these and the calls below). */
int wd_init(wd_state *s, gs_write_fn out, void *out_ctx);
void wd_free(wd_state *s);

/* Feeds stream bytes (frames with their prefixes), in any pieces. A
 * gs_wire_frame_fn too: ctx is the state. */
int wd_feed(void *ctx, const void *data, size_t len);
/* One Envelope without its prefix. */
int wd_envelope(wd_state *s, const uint8_t *env, size_t len);
/* After the last byte: the stream must have ended with SnapshotEnd and
 * nothing may be left over. */
int wd_finish(wd_state *s);

#endif
