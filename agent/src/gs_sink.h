/* gs_sink.h - where the walker sends a heap.
 *
 * A sink receives the records of a snapshot in order, timestamps included,
 * and makes them visible only on commit: a file sink renames its temporary
 * file into place, a stream sink sends its end marker. Freeing a sink
 * that was not committed discards what it received, so a failed capture
 * leaves nothing that looks complete. Every call returns GS_OK or an error
 * and then describes it in sink->error. */
#ifndef GS_SINK_H
#define GS_SINK_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"
#include "gs_wire_writer.h"

typedef struct gs_sink gs_sink;

typedef struct gs_sink_ops {
  int (*section)(gs_sink *s, const char *name, size_t name_len, uint64_t timestamp);
  int (*type)(gs_sink *s, uint64_t id, const char *name, size_t name_len);
  int (*object)(gs_sink *s, uint64_t id, uint64_t type, uint64_t size,
                const uint64_t *refs, size_t nrefs);
  int (*root)(gs_sink *s, uint64_t id, unsigned kind, unsigned flags, uint64_t container);
  int (*generation)(gs_sink *s, unsigned generation, uint64_t start, uint64_t used,
                    uint64_t reserved);
  int (*section_end)(gs_sink *s, const char *name, size_t name_len, uint64_t timestamp);
  int (*commit)(gs_sink *s);
  void (*free)(gs_sink *s);
  /* Optional (NULL: dropped): a static root's field name (gs_source.h). */
  int (*static_name)(gs_sink *s, uint64_t object, const char *name, size_t name_len);
  /* An object in parts (gs_source.h), written as object would write it. */
  int (*object_begin)(gs_sink *s, uint64_t id, uint64_t type, uint64_t size);
  int (*object_refs)(gs_sink *s, const uint64_t *refs, size_t nrefs);
  int (*object_end)(gs_sink *s);
} gs_sink_ops;

struct gs_sink {
  const gs_sink_ops *ops;
  uint64_t bytes;           /* bytes handed to the output so far */
  char error[256];
};

/* The record writer into path, or into standard output when path is "-".
 * A file is written under a temporary name in the same folder (PATH.tmp.PID)
 * and renamed over path on commit, after it was synced. The record format
 * has no place for generation ranges: they go to path.gens.json
 * (gs_genfile.h) after the rename; standard output and devices drop them. */
int gs_sink_file_new(gs_sink **out, const char *path, char *err, size_t errcap);

/* The snapshot stream encoder as a sink: writes SnapshotBegin (from snap)
 * when created, the records as data messages, and SnapshotEnd on commit.
 * Frames go to send(ctx, frame, len), which may block (backpressure).
 * Freeing it uncommitted sends nothing more: the caller tells the peer the
 * capture failed. bytes counts wire bytes. */
int gs_sink_stream_new(gs_sink **out, gs_wire_frame_fn send, void *ctx,
                       const gs_wire_snapshot *snap, char *err, size_t errcap);
/* Counts, text size and CRC-32 of what a stream sink sent (SnapshotEnd's
 * figures once committed). */
const gs_wire_counts *gs_sink_stream_counts(const gs_sink *s);

#endif
