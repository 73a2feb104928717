/* gs_wire_writer.h - the frames the agent produces: the snapshot stream
 * encoder, which turns a walk's records into the data messages, and the
 * control messages it writes (Hello, Ping, Error, AuthProof).
 *
 * Portable C99; the encoder allocates its buffers once when created and
 * nothing per record. */
#ifndef GS_WIRE_WRITER_H
#define GS_WIRE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"
#include "gs_writer.h"

/* ---- the snapshot stream encoder ---- */

/* Called with each complete frame, prefix included; returns GS_OK or an
 * error, which stops the encoder. It may block: that is the backpressure. */
typedef gs_write_fn gs_wire_frame_fn;

typedef struct gs_wire_snapshot {
  uint64_t request_id;          /* 0 when the agent captures on its own */
  uint64_t snapshot_id;
  int stable_ids;
  const char *trigger;          /* "request", "once", ... */
  uint64_t clock_ms;
} gs_wire_snapshot;

/* What a snapshot held; SnapshotEnd carries the same figures. */
typedef struct gs_wire_counts {
  uint64_t sections, types, objects, references, roots, generations;
  uint64_t text_bytes;          /* the canonical text of the same records */
  uint32_t crc32;               /* and its CRC-32 */
  uint64_t wire_bytes;          /* frames written, prefixes included */
  uint64_t frames;
  uint64_t seq;                 /* the last seq written */
} gs_wire_counts;

typedef struct gs_wire_encoder gs_wire_encoder;

/* Allocates the encoder's buffers (about 770 KiB, the text writer's
 * included); frames go to fn(ctx, frame, len). */
int gs_wire_encoder_new(gs_wire_encoder **e, gs_wire_frame_fn fn, void *ctx);
void gs_wire_encoder_free(gs_wire_encoder *e);

/* Writes SnapshotBegin and starts counting. */
int gs_wire_encoder_begin(gs_wire_encoder *e, const gs_wire_snapshot *s);

/* The records, in the order of gs_writer's calls (and of the heap
 * visitor's); each batch holds one kind, so the order is kept exactly. */
int gs_wire_encoder_section(gs_wire_encoder *e, uint64_t version, const char *name,
                            size_t name_len, uint64_t timestamp);
int gs_wire_encoder_type(gs_wire_encoder *e, uint64_t id, const char *name, size_t name_len);
int gs_wire_encoder_object(gs_wire_encoder *e, uint64_t id, uint64_t type, uint64_t size,
                           const uint64_t *refs, size_t nrefs);
/* The same in parts (as gs_writer_object_begin, gs_writer_refs and
 * gs_writer_object_end): for a source that meets an object's references a
 * batch at a time; nothing else between begin and end. */
int gs_wire_encoder_object_begin(gs_wire_encoder *e, uint64_t id, uint64_t type, uint64_t size);
int gs_wire_encoder_refs(gs_wire_encoder *e, const uint64_t *refs, size_t nrefs);
int gs_wire_encoder_object_end(gs_wire_encoder *e);
int gs_wire_encoder_root(gs_wire_encoder *e, uint64_t id, unsigned kind, unsigned flags,
                         uint64_t container);
/* Sent on the wire only; the text format has no record for it. */
int gs_wire_encoder_generation(gs_wire_encoder *e, unsigned generation, uint64_t start,
                               uint64_t used, uint64_t reserved);
/* Sent on the wire only, like generation ranges: a static root's field. */
int gs_wire_encoder_static_name(gs_wire_encoder *e, uint64_t object, const char *name,
                                size_t name_len);
int gs_wire_encoder_section_end(gs_wire_encoder *e, const char *name, size_t name_len,
                                uint64_t timestamp);

/* Flushes the last batch and writes SnapshotEnd. */
int gs_wire_encoder_end(gs_wire_encoder *e);
/* The figures so far (all of them after gs_wire_encoder_end). */
const gs_wire_counts *gs_wire_encoder_counts(const gs_wire_encoder *e);
/* Why the last call failed, or "". */
const char *gs_wire_encoder_error(const gs_wire_encoder *e);

/* ---- control messages ---- */

/* Frames are built into a caller buffer: a function returns GS_OK with
 * *frame pointing into buf (prefix included), or GS_ELIMIT when buf is too
 * small. GS_WIRE_CONTROL_BYTES always fits a control message whose strings
 * total under 1 KiB. */
#define GS_WIRE_CONTROL_BYTES 2048u

typedef struct gs_wire_hello {
  uint32_t protocol_version;
  const char *agent_version;
  const char *device_id;
  const char *app_name;
  const char *architecture;
  uint32_t pointer_size;
  uint64_t clock_ms;
} gs_wire_hello;

int gs_wire_write_hello(void *buf, size_t cap, const gs_wire_hello *h,
                        const uint8_t **frame, size_t *len);
int gs_wire_write_ping(void *buf, size_t cap, uint64_t nonce, int reply,
                       const uint8_t **frame, size_t *len);
int gs_wire_write_error(void *buf, size_t cap, unsigned code, const char *message,
                        uint64_t request_id, const uint8_t **frame, size_t *len);
int gs_wire_write_auth_proof(void *buf, size_t cap, const uint8_t proof[GS_WIRE_PROOF_BYTES],
                             const uint8_t **frame, size_t *len);

#endif
