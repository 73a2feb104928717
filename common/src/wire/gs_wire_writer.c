/* gs_wire_writer.c - the snapshot stream encoder and the control messages
 * the agent writes (proto/gcsnap.proto).
 *
 * A frame is built in one buffer that keeps GS_WIRE_PREFIX_MAX bytes free
 * at its start: the Envelope is written after them, and once its length is
 * known the minimal prefix is written just before it, so a frame is one
 * contiguous write with no copy.
 *
 * A data batch is kept as columns, one per repeated field (an ObjectBatch
 * has five packed arrays filled in step), and assembled into a frame when
 * it is cut: when its columns reach GS_WIRE_BATCH_BYTES, or when a record of
 * another kind arrives, so that reading the batches in order gives the
 * records in their order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_crc32.h"
#include "gs_error.h"
#include "gs_pb_writer.h"
#include "gs_wire_writer.h"

/* ---- building frames ---- */

/* Room kept before an Envelope's body: the frame prefix, the body's tag
 * (one byte for field numbers below 16, two up to 2047) and its length. */
#define FRAME_TAG_MAX 2u
#define FRAME_HEAD (GS_WIRE_PREFIX_MAX + FRAME_TAG_MAX + GS_WIRE_PREFIX_MAX)

/* Starts a frame in buf: the Envelope's body is written after the room
 * its head needs, which frame_close fills. */
static void frame_open(gs_pb *w, void *buf, size_t cap) {
  if (cap < FRAME_HEAD) {
    gs_pb_init(w, buf, 0);
    w->overflow = 1;
  } else {
    gs_pb_init(w, (uint8_t *)buf + FRAME_HEAD, cap - FRAME_HEAD);
  }
}

/* Writes the head just before the body, now that its length is known:
 * prefix, tag and length, each as short as it can be. */
static int frame_close(gs_pb *w, gs_wire_body body, const uint8_t **frame, size_t *len) {
  uint8_t head[FRAME_HEAD], *start;
  size_t n, k, t;
  if (w->overflow || w->len + FRAME_HEAD > GS_WIRE_MAX_FRAME) return GS_ELIMIT;
  /* The tag is a varint: field << 3 | wire type. */
  t = gs_wire_prefix(head + GS_WIRE_PREFIX_MAX, (size_t)body << 3 | GS_PB_LEN);
  k = gs_wire_prefix(head + GS_WIRE_PREFIX_MAX + t, w->len);
  n = gs_wire_prefix(head, t + k + w->len);
  memmove(head + n, head + GS_WIRE_PREFIX_MAX, t + k);
  start = w->buf - (n + t + k);
  memcpy(start, head, n + t + k);
  *frame = start;
  *len = n + t + k + w->len;
  return GS_OK;
}

/* Proto3 leaves out singular fields that hold their default. */
static void pb_opt_varint(gs_pb *w, uint32_t field, uint64_t v) {
  if (v) gs_pb_varint(w, field, v);
}

static void pb_opt_string(gs_pb *w, uint32_t field, const char *s) {
  if (s && *s) gs_pb_string(w, field, s);
}

/* ---- the snapshot stream encoder ---- */

enum { COL_COUNT = 5 };
/* A record's worst case, beyond its name and references: an object's ID
 * delta, type, size and reference count, or a root's four fields. */
#define WIRE_RECORD_MAX (4 * GS_PB_VARINT_MAX)
#define WIRE_COL_CAP (GS_WIRE_BATCH_BYTES + WIRE_RECORD_MAX)
/* Column 1 carries type names: it may hold one name of the longest kind. */
#define WIRE_NAME_COL_CAP (GS_WIRE_BATCH_BYTES + GS_WIRE_MAX_NAME + WIRE_RECORD_MAX)
#define WIRE_FRAME_CAP (GS_WIRE_PREFIX_MAX + 256 + GS_WIRE_BATCH_BYTES + GS_WIRE_MAX_NAME + \
                        COL_COUNT * WIRE_RECORD_MAX)

struct gs_wire_encoder {
  gs_wire_frame_fn fn;
  void *ctx;
  uint8_t *mem;                 /* one allocation: frame buffer and columns */
  uint8_t *frame;
  gs_pb col[COL_COUNT];
  gs_wire_body kind;            /* of the batch being built, or GS_WIRE_NONE */
  size_t count;                 /* records in it */
  uint64_t prev_id;             /* the base of the next ID delta */
  int continues;                /* its last object goes on in the next batch */
  int in_object;                /* between gs_wire_encoder_object_begin and _end */
  uint64_t obj_id, obj_type, obj_size;   /* the object being written */
  size_t part_refs, part_budget;         /* its references in this batch, their room */
  int open;                     /* between begin and end */
  int failed;
  gs_wire_counts counts;
  gs_writer *text;              /* the canonical text, into the CRC */
  uint32_t crc;
  uint64_t text_bytes;
  char error[160];
};

static int text_crc(void *ctx, const void *buf, size_t len) {
  gs_wire_encoder *e = ctx;
  e->crc = gs_crc32(e->crc, buf, len);
  e->text_bytes += len;
  return GS_OK;
}

int gs_wire_encoder_new(gs_wire_encoder **out, gs_wire_frame_fn fn, void *ctx) {
  gs_wire_encoder *e = calloc(1, sizeof *e);
  size_t i, off;
  int err;
  *out = NULL;
  if (!e) return GS_ENOMEM;
  e->mem = malloc(WIRE_FRAME_CAP + WIRE_NAME_COL_CAP + (COL_COUNT - 1) * WIRE_COL_CAP);
  if (!e->mem) {
    free(e);
    return GS_ENOMEM;
  }
  e->frame = e->mem;
  off = WIRE_FRAME_CAP;
  for (i = 0; i < COL_COUNT; i++) {
    size_t cap = i == 1 ? WIRE_NAME_COL_CAP : WIRE_COL_CAP;
    gs_pb_init(&e->col[i], e->mem + off, cap);
    off += cap;
  }
  if ((err = gs_writer_new(&e->text, text_crc, e))) {
    free(e->mem);
    free(e);
    return err;
  }
  /* It only sums the text; whoever produces the objects bounds them. */
  gs_writer_set_max_refs(e->text, SIZE_MAX);
  e->fn = fn;
  e->ctx = ctx;
  *out = e;
  return GS_OK;
}

void gs_wire_encoder_free(gs_wire_encoder *e) {
  if (!e) return;
  gs_writer_free(e->text);
  free(e->mem);
  free(e);
}

const gs_wire_counts *gs_wire_encoder_counts(const gs_wire_encoder *e) {
  return &e->counts;
}

const char *gs_wire_encoder_error(const gs_wire_encoder *e) {
  return e->error;
}

static int enc_fail(gs_wire_encoder *e, int err, const char *what) {
  if (!e->failed) {
    e->failed = err;
    snprintf(e->error, sizeof e->error, "%s", what);
  }
  return err;
}

/* Every record call starts here: the encoder must be open and healthy. */
static int enc_ready(gs_wire_encoder *e) {
  if (e->failed) return e->failed;
  if (!e->open) return enc_fail(e, GS_EINVAL, "a record outside a snapshot");
  return GS_OK;
}

static int enc_name_ok(gs_wire_encoder *e, size_t len) {
  char msg[96];
  if (len <= GS_WIRE_MAX_NAME) return GS_OK;
  snprintf(msg, sizeof msg, "a name of %lu bytes, above the wire's limit of %u",
           (unsigned long)len, GS_WIRE_MAX_NAME);
  return enc_fail(e, GS_ELIMIT, msg);
}

static int enc_text(gs_wire_encoder *e, int err) {
  return err ? enc_fail(e, err, "the text checksum writer failed") : GS_OK;
}

/* Hands a frame built by frame_open/frame_close to the sink. */
static int enc_emit(gs_wire_encoder *e, gs_pb *w, gs_wire_body body) {
  const uint8_t *frame;
  size_t len;
  int err;
  if ((err = frame_close(w, body, &frame, &len)))
    return enc_fail(e, err, "a message larger than the frame buffer");
  if ((err = e->fn(e->ctx, frame, len))) return enc_fail(e, err, "the connection failed");
  e->counts.wire_bytes += len;
  e->counts.frames++;
  return GS_OK;
}

static size_t enc_batch_bytes(const gs_wire_encoder *e) {
  size_t i, n = 0;
  for (i = 0; i < COL_COUNT; i++) n += e->col[i].len;
  return n;
}

static void enc_packed(gs_pb *w, uint32_t field, const gs_pb *col) {
  if (col->len) gs_pb_bytes(w, field, col->buf, col->len);
}

/* Sends the batch being built, if any, and starts an empty one. */
static int enc_flush(gs_wire_encoder *e) {
  gs_pb w;
  size_t i;
  int err;
  if (e->kind == GS_WIRE_NONE) return GS_OK;
  if (e->count) {
    frame_open(&w, e->frame, WIRE_FRAME_CAP);
    gs_pb_varint(&w, 1, ++e->counts.seq);
    switch (e->kind) {
    case GS_WIRE_TYPES:
      enc_packed(&w, 2, &e->col[0]);
      gs_pb_raw_bytes(&w, e->col[1].buf, e->col[1].len);   /* tagged names */
      break;
    case GS_WIRE_OBJECTS:
      for (i = 0; i < 5; i++) enc_packed(&w, (uint32_t)(2 + i), &e->col[i]);
      if (e->continues) gs_pb_varint(&w, 7, 1);
      break;
    case GS_WIRE_ROOTS:
      for (i = 0; i < 4; i++) enc_packed(&w, (uint32_t)(2 + i), &e->col[i]);
      break;
    default:                                                /* generations, statics */
      gs_pb_raw_bytes(&w, e->col[1].buf, e->col[1].len);
      break;
    }
    if ((err = enc_emit(e, &w, e->kind))) return err;
  }
  for (i = 0; i < COL_COUNT; i++) e->col[i].len = 0;
  e->count = 0;
  e->prev_id = 0;
  e->continues = 0;
  return GS_OK;
}

/* Makes the batch one of kind with room for need more bytes, cutting the
 * current one when the kind changes or it would grow past the bound. */
static int enc_batch(gs_wire_encoder *e, gs_wire_body kind, size_t need) {
  int err;
  if (e->kind != kind || (e->count && enc_batch_bytes(e) + need > GS_WIRE_BATCH_BYTES)) {
    if ((err = enc_flush(e))) return err;
    e->kind = kind;
  }
  return GS_OK;
}

int gs_wire_encoder_begin(gs_wire_encoder *e, const gs_wire_snapshot *s) {
  gs_pb w;
  size_t i;
  if (e->open && !e->failed) return enc_fail(e, GS_EINVAL, "a snapshot began inside another");
  /* A snapshot that failed half way may have left text in the writer and
   * records in the columns: they are dropped. */
  gs_writer_flush(e->text);
  for (i = 0; i < COL_COUNT; i++) gs_pb_init(&e->col[i], e->col[i].buf, e->col[i].cap);
  memset(&e->counts, 0, sizeof e->counts);
  e->crc = 0;
  e->text_bytes = 0;
  e->failed = 0;
  e->error[0] = '\0';
  e->kind = GS_WIRE_NONE;
  e->count = 0;
  e->prev_id = 0;
  e->continues = 0;
  e->in_object = 0;
  e->open = 1;
  frame_open(&w, e->frame, WIRE_FRAME_CAP);
  pb_opt_varint(&w, 1, s->request_id);
  pb_opt_varint(&w, 2, s->snapshot_id);
  pb_opt_varint(&w, 3, s->stable_ids ? 1 : 0);
  pb_opt_string(&w, 4, s->trigger);
  pb_opt_varint(&w, 5, s->clock_ms);
  return enc_emit(e, &w, GS_WIRE_SNAPSHOT_BEGIN);
}

int gs_wire_encoder_section(gs_wire_encoder *e, uint64_t version, const char *name,
                            size_t name_len, uint64_t timestamp) {
  gs_pb w;
  int err;
  if ((err = enc_ready(e)) || (err = enc_name_ok(e, name_len))) return err;
  if ((err = enc_text(e, gs_writer_section(e->text, version, name, name_len, timestamp))))
    return err;
  if ((err = enc_flush(e))) return err;
  e->kind = GS_WIRE_NONE;
  e->counts.sections++;
  frame_open(&w, e->frame, WIRE_FRAME_CAP);
  gs_pb_varint(&w, 1, ++e->counts.seq);
  pb_opt_varint(&w, 2, version);
  if (name_len) gs_pb_bytes(&w, 3, name, name_len);
  pb_opt_varint(&w, 4, timestamp);
  return enc_emit(e, &w, GS_WIRE_SECTION_BEGIN);
}

int gs_wire_encoder_section_end(gs_wire_encoder *e, const char *name, size_t name_len,
                                uint64_t timestamp) {
  gs_pb w;
  int err;
  if ((err = enc_ready(e)) || (err = enc_name_ok(e, name_len))) return err;
  if ((err = enc_text(e, gs_writer_end(e->text, name, name_len, timestamp)))) return err;
  if ((err = enc_flush(e))) return err;
  e->kind = GS_WIRE_NONE;
  frame_open(&w, e->frame, WIRE_FRAME_CAP);
  gs_pb_varint(&w, 1, ++e->counts.seq);
  if (name_len) gs_pb_bytes(&w, 2, name, name_len);
  pb_opt_varint(&w, 3, timestamp);
  return enc_emit(e, &w, GS_WIRE_SECTION_END);
}

int gs_wire_encoder_type(gs_wire_encoder *e, uint64_t id, const char *name, size_t name_len) {
  int err;
  if ((err = enc_ready(e)) || (err = enc_name_ok(e, name_len))) return err;
  if ((err = enc_text(e, gs_writer_type(e->text, id, name, name_len)))) return err;
  if ((err = enc_batch(e, GS_WIRE_TYPES, WIRE_RECORD_MAX + name_len))) return err;
  gs_pb_raw_varint(&e->col[0], id);
  gs_pb_bytes(&e->col[1], 3, name, name_len);
  e->count++;
  e->counts.types++;
  return GS_OK;
}

/* An object's entry opened in a batch with room for it and few references;
 * part_budget is what its references may take of the batch. */
static int part_start(gs_wire_encoder *e, size_t few) {
  int err = enc_batch(e, GS_WIRE_OBJECTS, WIRE_RECORD_MAX + few * GS_PB_VARINT_MAX);
  if (err) return err;
  gs_pb_raw_varint(&e->col[0], gs_pb_zigzag(e->obj_id - e->prev_id));
  gs_pb_raw_varint(&e->col[1], e->obj_type);
  gs_pb_raw_varint(&e->col[2], e->obj_size);
  e->prev_id = e->obj_id;
  e->part_refs = 0;
  /* The longest reference must still fit, the count's varint kept aside. */
  e->part_budget = GS_WIRE_BATCH_BYTES - GS_PB_VARINT_MAX - (enc_batch_bytes(e) - e->col[4].len);
  return GS_OK;
}

/* References into the entry while they fit; returns how many went in. */
static size_t part_fill(gs_wire_encoder *e, const uint64_t *refs, size_t n) {
  gs_pb *deltas = &e->col[4];
  size_t i = 0;
  while (i < n && deltas->len + GS_PB_VARINT_MAX <= e->part_budget)
    gs_pb_raw_varint(deltas, gs_pb_zigzag(refs[i++] - e->obj_id));
  e->part_refs += i;
  return i;
}

static void part_close(gs_wire_encoder *e) {
  gs_pb_raw_varint(&e->col[3], e->part_refs);
  e->count++;
}

/* The batch is full: the entry ends, and the object goes on in the next. */
static int part_next(gs_wire_encoder *e, size_t few) {
  int err;
  part_close(e);
  e->continues = 1;
  if ((err = enc_flush(e))) return err;
  return part_start(e, few);
}

static void part_object(gs_wire_encoder *e, uint64_t id, uint64_t type, uint64_t size) {
  e->obj_id = id;
  e->obj_type = type;
  e->obj_size = size;
  e->counts.objects++;
}

/* Writes one object, or as many parts of it as its references need: each
 * part but the last fills a batch and sets continues. */
int gs_wire_encoder_object(gs_wire_encoder *e, uint64_t id, uint64_t type, uint64_t size,
                           const uint64_t *refs, size_t nrefs) {
  size_t done = 0;
  int err;
  if ((err = enc_ready(e))) return err;
  if ((err = enc_text(e, gs_writer_object(e->text, id, type, size, refs, nrefs)))) return err;
  part_object(e, id, type, size);
  e->counts.references += nrefs;
  if ((err = part_start(e, nrefs < 8 ? nrefs : 8))) return err;
  while ((done += part_fill(e, refs + done, nrefs - done)) < nrefs)
    if ((err = part_next(e, nrefs - done < 8 ? nrefs - done : 8))) return err;
  part_close(e);
  return GS_OK;
}

int gs_wire_encoder_object_begin(gs_wire_encoder *e, uint64_t id, uint64_t type, uint64_t size) {
  int err;
  if ((err = enc_ready(e))) return err;
  if (e->in_object) return enc_fail(e, GS_EINVAL, "an object began inside another");
  if ((err = enc_text(e, gs_writer_object_begin(e->text, id, type, size)))) return err;
  part_object(e, id, type, size);
  e->in_object = 1;
  return part_start(e, 8);
}

int gs_wire_encoder_refs(gs_wire_encoder *e, const uint64_t *refs, size_t nrefs) {
  size_t done = 0;
  int err;
  if ((err = enc_ready(e))) return err;
  if (!e->in_object) return enc_fail(e, GS_EINVAL, "references outside an object");
  if ((err = enc_text(e, gs_writer_refs(e->text, refs, nrefs)))) return err;
  e->counts.references += nrefs;
  while ((done += part_fill(e, refs + done, nrefs - done)) < nrefs)
    if ((err = part_next(e, 8))) return err;
  return GS_OK;
}

int gs_wire_encoder_object_end(gs_wire_encoder *e) {
  int err;
  if ((err = enc_ready(e))) return err;
  if (!e->in_object) return enc_fail(e, GS_EINVAL, "an object ended that did not begin");
  if ((err = enc_text(e, gs_writer_object_end(e->text)))) return err;
  part_close(e);
  e->in_object = 0;
  return GS_OK;
}

int gs_wire_encoder_root(gs_wire_encoder *e, uint64_t id, unsigned kind, unsigned flags,
                         uint64_t container) {
  int err;
  if ((err = enc_ready(e))) return err;
  if ((err = enc_text(e, gs_writer_root(e->text, id, kind, flags, container)))) return err;
  if ((err = enc_batch(e, GS_WIRE_ROOTS, WIRE_RECORD_MAX))) return err;
  gs_pb_raw_varint(&e->col[0], gs_pb_zigzag(id - e->prev_id));
  gs_pb_raw_varint(&e->col[1], kind);
  gs_pb_raw_varint(&e->col[2], flags);
  if (kind == 4) gs_pb_raw_varint(&e->col[3], container);
  e->prev_id = id;
  e->count++;
  e->counts.roots++;
  return GS_OK;
}

int gs_wire_encoder_generation(gs_wire_encoder *e, unsigned generation, uint64_t start,
                               uint64_t used, uint64_t reserved) {
  gs_pb *c = &e->col[1];
  size_t mark;
  int err;
  if ((err = enc_ready(e))) return err;
  if ((err = enc_batch(e, GS_WIRE_GENERATIONS, 2 * WIRE_RECORD_MAX))) return err;
  mark = gs_pb_begin(c, 2);
  pb_opt_varint(c, 1, generation);
  pb_opt_varint(c, 2, start);
  pb_opt_varint(c, 3, used);
  pb_opt_varint(c, 4, reserved);
  gs_pb_end(c, mark);
  e->count++;
  e->counts.generations++;
  return GS_OK;
}

int gs_wire_encoder_static_name(gs_wire_encoder *e, uint64_t object, const char *name,
                                size_t name_len) {
  gs_pb *c = &e->col[1];
  size_t mark;
  int err;
  if ((err = enc_ready(e)) || (err = enc_name_ok(e, name_len))) return err;
  if ((err = enc_batch(e, GS_WIRE_STATICS, WIRE_RECORD_MAX + name_len))) return err;
  mark = gs_pb_begin(c, 2);
  pb_opt_varint(c, 1, object);
  gs_pb_bytes(c, 2, name, name_len);
  gs_pb_end(c, mark);
  e->count++;
  return GS_OK;
}

int gs_wire_encoder_end(gs_wire_encoder *e) {
  gs_wire_counts *c = &e->counts;
  gs_pb w;
  int err;
  if ((err = enc_ready(e))) return err;
  if ((err = enc_flush(e))) return err;
  if ((err = enc_text(e, gs_writer_flush(e->text)))) return err;
  e->kind = GS_WIRE_NONE;
  c->text_bytes = e->text_bytes;
  c->crc32 = e->crc;
  frame_open(&w, e->frame, WIRE_FRAME_CAP);
  gs_pb_varint(&w, 1, ++c->seq);
  pb_opt_varint(&w, 2, c->sections);
  pb_opt_varint(&w, 3, c->types);
  pb_opt_varint(&w, 4, c->objects);
  pb_opt_varint(&w, 5, c->references);
  pb_opt_varint(&w, 6, c->roots);
  pb_opt_varint(&w, 7, c->text_bytes);
  pb_opt_varint(&w, 8, c->crc32);
  if ((err = enc_emit(e, &w, GS_WIRE_SNAPSHOT_END))) return err;
  e->open = 0;
  return GS_OK;
}

/* ---- control messages the agent writes ---- */

int gs_wire_write_hello(void *buf, size_t cap, const gs_wire_hello *h,
                        const uint8_t **frame, size_t *len) {
  gs_pb w;
  frame_open(&w, buf, cap);
  pb_opt_varint(&w, 1, h->protocol_version);
  pb_opt_string(&w, 2, h->agent_version);
  pb_opt_string(&w, 3, h->device_id);
  pb_opt_string(&w, 4, h->app_name);
  pb_opt_string(&w, 5, h->architecture);
  pb_opt_varint(&w, 6, h->pointer_size);
  pb_opt_varint(&w, 7, h->clock_ms);
  return frame_close(&w, GS_WIRE_HELLO, frame, len);
}

int gs_wire_write_ping(void *buf, size_t cap, uint64_t nonce, int reply,
                       const uint8_t **frame, size_t *len) {
  gs_pb w;
  frame_open(&w, buf, cap);
  pb_opt_varint(&w, 1, nonce);
  pb_opt_varint(&w, 2, reply ? 1 : 0);
  return frame_close(&w, GS_WIRE_PING, frame, len);
}

int gs_wire_write_error(void *buf, size_t cap, unsigned code, const char *message,
                        uint64_t request_id, const uint8_t **frame, size_t *len) {
  gs_pb w;
  frame_open(&w, buf, cap);
  pb_opt_varint(&w, 1, code);
  pb_opt_string(&w, 2, message);
  pb_opt_varint(&w, 3, request_id);
  return frame_close(&w, GS_WIRE_ERROR, frame, len);
}

int gs_wire_write_auth_proof(void *buf, size_t cap, const uint8_t proof[GS_WIRE_PROOF_BYTES],
                             const uint8_t **frame, size_t *len) {
  gs_pb w;
  frame_open(&w, buf, cap);
  gs_pb_bytes(&w, 1, proof, GS_WIRE_PROOF_BYTES);
  return frame_close(&w, GS_WIRE_AUTH_PROOF, frame, len);
}
