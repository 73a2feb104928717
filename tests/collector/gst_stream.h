/* gst_stream.h - a snapshot stream built from a dump file, for the
 * collector's tests: the frames an agent would send, encoded with
 * protobuf-c, with ways to break them on purpose. */
#ifndef GST_STREAM_H
#define GST_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct gst_opts {
  uint64_t request_id;
  uint64_t snapshot_id;
  size_t batch_records;     /* records per batch (0: 1000) */
  size_t batch_refs;        /* references per ObjectBatch before an object continues (0: 4096) */
  uint64_t gap_at;          /* when set, the data message with this seq skips one */
  uint32_t crc_xor;         /* flips bits of SnapshotEnd's CRC */
  int64_t objects_delta;    /* added to SnapshotEnd's object count */
  int no_end;               /* stop before SnapshotEnd */
  const char *section_name; /* when set, the name of every section (and its end) */
  const char *type_name;    /* when set, the name of every type */
} gst_opts;

typedef struct gst_totals {
  uint64_t frames, wire_bytes, text_bytes, objects;
  uint32_t crc32;
} gst_totals;

/* Called with each frame, length prefix included; nonzero stops. */
typedef int (*gst_frame_fn)(void *ctx, const uint8_t *frame, size_t len);

/* Reads path (a .gclog) and sends SnapshotBegin, its records as data
 * messages and SnapshotEnd. Returns 0, or -1 when the file cannot be read
 * or fn stopped. */
int gst_encode(const char *path, const gst_opts *o, gst_frame_fn fn, void *ctx, gst_totals *t);

/* A Hello frame (prefix included) in a malloc'd buffer. */
uint8_t *gst_hello(const char *device_id, uint32_t protocol_version, size_t *len);

#endif
