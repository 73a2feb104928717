/* gs_nettrace.c - EventPipe's NetTrace stream, read forwards (see
 * gs_nettrace.h). A block is read whole (its size is checked against the
 * limit first), then its events are decoded from memory: compressed headers
 * carry their fields as deltas from the event before in the same block. */
#include "gs_nettrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_array.h"
#include "gs_error.h"
#include "gs_fastser.h"
#include "gs_idmap.h"

#define NT_MAGIC "Nettrace"
#define NT_PROVIDERS_MAX 1024u
#define NT_NAME_MAX 512u            /* UTF-16 units of a provider's name */

enum { BLOCK_NONE, BLOCK_EVENTS, BLOCK_METADATA };

/* What a metadata record says of the events that name it. */
typedef struct nt_meta {
  uint32_t event_id, version;
  unsigned provider;
} nt_meta;

/* The fields a compressed header may leave out, as the event before. */
typedef struct nt_header {
  uint32_t metadata_id, sequence, processor, stack_id, payload_len;
  uint64_t thread_id, capture_thread;
  int64_t timestamp;
} nt_header;

struct gs_nt {
  gs_fs s;
  gs_nt_trace trace;
  unsigned char *block;
  size_t block_len, block_cap, pos;
  uint64_t block_off;                 /* stream offset of block[0] */
  int kind, compressed, done;
  nt_header h;
  gs_idmap meta_ids;                  /* metadata ID -> index in meta */
  nt_meta *meta;
  size_t nmeta, meta_cap;
  gs_idmap threads;                   /* capture thread -> its last sequence number */
  char *providers[NT_PROVIDERS_MAX];
  unsigned nproviders;
  uint64_t lost;
};

/* ---- bytes of a block --------------------------------------------------------- */

static int fail_at(gs_nt *nt, int code, const char *what) {
  return gs_fs_fail(&nt->s, code, nt->block_off + nt->pos, "%s", what);
}

static int take(gs_nt *nt, const unsigned char **p, size_t n, const char *what) {
  *p = NULL;
  if (nt->block_len - nt->pos < n) return fail_at(nt, GS_EFORMAT, what);
  *p = nt->block + nt->pos;
  nt->pos += n;
  return GS_OK;
}

static uint64_t le(const unsigned char *p, unsigned n) {
  uint64_t v = 0;
  while (n-- > 0) v = v << 8 | p[n];
  return v;
}

static int get_le(gs_nt *nt, uint64_t *v, unsigned n, const char *what) {
  const unsigned char *p;
  int rc = take(nt, &p, n, what);
  *v = p ? le(p, n) : 0;
  return rc;
}

static int varint(gs_nt *nt, uint64_t *v, unsigned max_bytes) {
  unsigned shift = 0, i;
  *v = 0;
  for (i = 0; i < max_bytes && nt->pos < nt->block_len; i++, shift += 7) {
    unsigned char b = nt->block[nt->pos++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return GS_OK;
  }
  return fail_at(nt, GS_EFORMAT, "a variable-length number runs past its size or its block");
}

static int varint32(gs_nt *nt, uint32_t *v) {
  uint64_t w;
  int rc = varint(nt, &w, 5);
  if (rc == GS_OK && w > UINT32_MAX)
    rc = fail_at(nt, GS_EFORMAT, "a 32-bit variable-length number is above 2^32");
  *v = (uint32_t)w;
  return rc;
}

/* ---- dropped events ------------------------------------------------------------
 * Every capture thread numbers its events from 1, dropped ones included; a
 * number that starts again at 1 is a new thread with a reused ID. */

static int note_sequence(gs_nt *nt, uint64_t thread, uint32_t seq, int at_point) {
  gs_idmap_slot *s = gs_idmap_find(&nt->threads, thread);
  uint32_t last;
  if (!s && nt->threads.count >= GS_NT_THREADS_MAX)
    return fail_at(nt, GS_ELIMIT, "more capture threads than the reader tracks");
  if (!s && gs_idmap_put(&nt->threads, thread, &s) < 0)
    return fail_at(nt, GS_ENOMEM, "out of memory for the capture threads");
  last = s->value;
  if (at_point) {
    /* A sequence point's number is a lower bound of what was attempted. */
    if ((uint32_t)(seq - last) < 0x80000000u) nt->lost += (uint32_t)(seq - last);
    else return GS_OK;
  } else if (seq != 1 || last == 0) {
    if ((uint32_t)(seq - last - 1) < 0x80000000u) nt->lost += (uint32_t)(seq - last - 1);
  }
  s->value = seq;
  return GS_OK;
}

/* ---- metadata ---------------------------------------------------------------------- */

/* A UTF-16 string ending in a NUL, as UTF-8 into the fastser arena. */
static int utf16z(gs_nt *nt, size_t *off) {
  size_t units = 0;
  *off = nt->s.arena_len;
  for (;;) {
    uint64_t c;
    int rc = get_le(nt, &c, 2, "a string runs past its block");
    char b[3];
    size_t n = 1;
    if (rc < 0) return rc;
    if (c == 0) break;
    if (++units > NT_NAME_MAX) return fail_at(nt, GS_ELIMIT, "a provider's name is too long");
    if (c < 0x20 || c == 0x7f) c = '?';
    if (c < 0x80) b[0] = (char)c;
    else if (c < 0x800) {
      b[0] = (char)(0xc0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3f)), n = 2;
    } else {
      b[0] = (char)(0xe0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
      b[2] = (char)(0x80 | (c & 0x3f)), n = 3;
    }
    if (gs_fs_grow((void **)&nt->s.arena, &nt->s.arena_cap, nt->s.arena_len + n + 1, 1) < 0)
      return fail_at(nt, GS_ENOMEM, "out of memory for a name");
    memcpy(nt->s.arena + nt->s.arena_len, b, n);
    nt->s.arena_len += n;
  }
  if (gs_fs_grow((void **)&nt->s.arena, &nt->s.arena_cap, nt->s.arena_len + 1, 1) < 0)
    return fail_at(nt, GS_ENOMEM, "out of memory for a name");
  nt->s.arena[nt->s.arena_len] = '\0';
  return GS_OK;
}

/* The index of the provider named at the arena's offset off (added if new). */
static int provider_index(gs_nt *nt, size_t off, unsigned *index) {
  const char *name = nt->s.arena + off;
  unsigned i;
  for (i = 0; i < nt->nproviders; i++)
    if (!strcmp(nt->providers[i], name)) break;
  if (i == nt->nproviders) {
    if (i == NT_PROVIDERS_MAX) return fail_at(nt, GS_ELIMIT, "too many providers");
    if (!(nt->providers[i] = malloc(strlen(name) + 1)))
      return fail_at(nt, GS_ENOMEM, "out of memory for a provider");
    strcpy(nt->providers[i], name);
    nt->nproviders++;
  }
  nt->s.arena_len = off;
  *index = i;
  return GS_OK;
}

/* A metadata record: its ID, provider, event ID and version; the field
 * descriptions after them are not needed to read the runtime's events. */
static int metadata(gs_nt *nt, size_t end) {
  uint64_t id, event_id, skip, version;
  size_t name;
  unsigned provider = 0;
  gs_idmap_slot *s;
  nt_meta *m;
  int rc;
  if ((rc = get_le(nt, &id, 4, "a metadata record is cut")) < 0 || (rc = utf16z(nt, &name)) < 0 ||
      (rc = provider_index(nt, name, &provider)) < 0 ||
      (rc = get_le(nt, &event_id, 4, "a metadata record is cut")) < 0 ||
      (rc = utf16z(nt, &name)) < 0)
    return rc;
  nt->s.arena_len = name;
  if ((rc = get_le(nt, &skip, 8, "a metadata record is cut")) < 0 ||
      (rc = get_le(nt, &version, 4, "a metadata record is cut")) < 0)
    return rc;
  if (id == 0 || version > 0xffff) return fail_at(nt, GS_EFORMAT, "a metadata record is malformed");
  if (nt->pos > end) return fail_at(nt, GS_EFORMAT, "a metadata record is longer than its event");
  if (nt->nmeta >= GS_NT_METADATA_MAX)
    return fail_at(nt, GS_ELIMIT, "more kinds of event than the reader takes");
  if (gs_array_reserve((void **)&nt->meta, &nt->meta_cap, nt->nmeta + 1, sizeof *m) < 0 ||
      gs_idmap_put(&nt->meta_ids, id, &s) < 0)
    return fail_at(nt, GS_ENOMEM, "out of memory for the metadata");
  s->value = (uint32_t)nt->nmeta;       /* a later record of the same ID replaces it */
  m = &nt->meta[nt->nmeta++];
  m->event_id = (uint32_t)event_id;
  m->version = (uint32_t)version;
  m->provider = provider;
  nt->pos = end;
  return GS_OK;
}

/* ---- event headers -------------------------------------------------------------------- */

static int compressed_header(gs_nt *nt) {
  nt_header *h = &nt->h;
  const unsigned char *guid;
  uint64_t v = 0;
  unsigned flags;
  int rc = GS_OK;
  if (nt->pos >= nt->block_len) return fail_at(nt, GS_EFORMAT, "an event header is cut");
  flags = nt->block[nt->pos++];
  if (flags & 1) rc = varint32(nt, &h->metadata_id);
  if (rc == GS_OK && (flags & 2)) {
    uint32_t delta = 0;
    if ((rc = varint32(nt, &delta)) == GS_OK) h->sequence += delta;
    if (rc == GS_OK) rc = varint(nt, &h->capture_thread, 10);
    if (rc == GS_OK) rc = varint32(nt, &h->processor);
  }
  if (h->metadata_id != 0) h->sequence++;
  if (rc == GS_OK && (flags & 4)) rc = varint(nt, &h->thread_id, 10);
  if (rc == GS_OK && (flags & 8)) rc = varint32(nt, &h->stack_id);
  if (rc == GS_OK && (rc = varint(nt, &v, 10)) == GS_OK) h->timestamp += (int64_t)v;
  if (rc == GS_OK && (flags & 16)) rc = take(nt, &guid, 16, "an event header is cut");
  if (rc == GS_OK && (flags & 32)) rc = take(nt, &guid, 16, "an event header is cut");
  if (rc == GS_OK && (flags & 128)) rc = varint32(nt, &h->payload_len);
  return rc;
}

static int plain_header(gs_nt *nt) {
  const unsigned char *p;
  nt_header *h = &nt->h;
  int rc = take(nt, &p, 80, "an event header is cut");
  if (rc < 0) return rc;
  h->metadata_id = (uint32_t)le(p + 4, 4) & 0x7fffffffu;
  h->sequence = (uint32_t)le(p + 8, 4);
  h->thread_id = le(p + 12, 8);
  h->capture_thread = le(p + 20, 8);
  h->processor = (uint32_t)le(p + 28, 4);
  h->stack_id = (uint32_t)le(p + 32, 4);
  h->timestamp = (int64_t)le(p + 36, 8);
  h->payload_len = (uint32_t)le(p + 76, 4);
  return GS_OK;
}

/* One event or metadata record of the current block: 1 when ev was set. */
static int block_event(gs_nt *nt, gs_nt_event *ev) {
  uint64_t at;
  size_t start;
  gs_idmap_slot *slot;
  const nt_meta *m;
  int rc = nt->compressed ? compressed_header(nt) : plain_header(nt);
  if (rc < 0) return rc;
  at = nt->block_off + nt->pos;
  start = nt->pos;
  if (nt->block_len - nt->pos < nt->h.payload_len)
    return fail_at(nt, GS_EFORMAT, "an event's payload runs past its block");
  nt->pos += nt->h.payload_len;
  if (!nt->compressed) nt->pos = (nt->pos + 3) & ~(size_t)3;
  if (nt->pos > nt->block_len) nt->pos = nt->block_len;
  if (nt->kind == BLOCK_METADATA) {
    size_t end = nt->pos;
    nt->pos = start;
    rc = metadata(nt, start + nt->h.payload_len);
    nt->pos = end;
    return rc;
  }
  if ((rc = note_sequence(nt, nt->h.capture_thread, nt->h.sequence, 0)) < 0) return rc;
  if (!(slot = gs_idmap_find(&nt->meta_ids, nt->h.metadata_id)))
    return gs_fs_fail(&nt->s, GS_EFORMAT, at, "an event names metadata %lu, never defined",
                      (unsigned long)nt->h.metadata_id);
  m = &nt->meta[slot->value];
  ev->provider = nt->providers[m->provider];
  ev->event_id = m->event_id;
  ev->version = m->version;
  ev->thread_id = nt->h.thread_id;
  ev->capture_thread = nt->h.capture_thread;
  ev->sequence = nt->h.sequence;
  ev->timestamp = nt->h.timestamp;
  ev->payload = nt->block + start;
  ev->payload_len = nt->h.payload_len;
  ev->offset = at;
  return 1;
}

/* ---- blocks ------------------------------------------------------------------------------ */

static int sequence_point(gs_nt *nt) {
  uint64_t n, id, seq, skip;
  int rc = get_le(nt, &skip, 8, "a sequence point is cut");
  if (rc == GS_OK) rc = get_le(nt, &n, 4, "a sequence point is cut");
  for (; rc == GS_OK && n > 0; n--)
    if ((rc = get_le(nt, &id, 8, "a sequence point is cut")) == GS_OK &&
        (rc = get_le(nt, &seq, 4, "a sequence point is cut")) == GS_OK)
      rc = note_sequence(nt, id, (uint32_t)seq, 1);
  return rc;
}

/* The content of a block into nt->block; its kind's header read. */
static int read_block(gs_nt *nt, const char *name) {
  uint32_t size = 0;
  uint64_t hsize = 0, flags = 0;
  int rc = gs_fs_count(&nt->s, &size, GS_NT_BLOCK_MAX, "a block's size");
  size_t pad = (size_t)((4 - nt->s.off % 4) % 4);
  if (rc < 0 || (rc = gs_fs_get(&nt->s, NULL, pad, "a block's padding")) < 0) return rc;
  if (size > nt->block_cap) {
    free(nt->block);
    if (!(nt->block = malloc(size))) return gs_fs_fail(&nt->s, GS_ENOMEM, nt->s.off, "out of memory");
    nt->block_cap = size;
  }
  nt->block_off = nt->s.off;
  if ((rc = gs_fs_get(&nt->s, nt->block, size, name)) < 0) return rc;
  nt->block_len = size;
  nt->pos = 0;
  memset(&nt->h, 0, sizeof nt->h);
  if (nt->kind == BLOCK_NONE) return GS_OK;
  if ((rc = get_le(nt, &hsize, 2, "a block header is cut")) < 0 ||
      (rc = get_le(nt, &flags, 2, "a block header is cut")) < 0)
    return rc;
  if (hsize < 4 || hsize > size) return fail_at(nt, GS_EFORMAT, "a block header's size is wrong");
  nt->pos = (size_t)hsize;
  nt->compressed = (int)(flags & 1);
  return GS_OK;
}

static int end_tag(gs_nt *nt) {
  unsigned tag;
  uint64_t at = nt->s.off;
  int rc = gs_fs_u8(&nt->s, &tag, "an object's end");
  if (rc == GS_OK && tag != GS_FS_TAG_END)
    rc = gs_fs_fail(&nt->s, GS_EFORMAT, at, "an object is not closed (tag %u)", tag);
  return rc;
}

/* The next object of the stream: a block to read events from, a block of
 * stacks or sequence points dealt with here, or the end. */
static int next_object(gs_nt *nt) {
  static const char *const names[] = {"EventBlock", "MetadataBlock", "StackBlock", "SPBlock"};
  static const int kinds[] = {BLOCK_EVENTS, BLOCK_METADATA, BLOCK_NONE, BLOCK_NONE};
  uint64_t at = nt->s.off;
  size_t name;
  int32_t version, minver;
  unsigned tag, i;
  size_t len;
  int rc = gs_fs_u8(&nt->s, &tag, "the stream (no closing tag)");
  if (rc < 0) return rc;
  if (tag == GS_FS_TAG_NULL) return nt->done = 1, GS_EOF;
  if (tag != GS_FS_TAG_BEGIN_PRIVATE && tag != GS_FS_TAG_BEGIN)
    return gs_fs_fail(&nt->s, GS_EFORMAT, at, "expected a block, found tag %u", tag);
  if ((rc = gs_fs_type(&nt->s, &name, &version, &minver)) < 0) return rc;
  if (name == SIZE_MAX) return gs_fs_fail(&nt->s, GS_EFORMAT, at, "a block without its type");
  len = nt->s.arena_len - name;
  for (i = 0; i < 4; i++)
    if (strlen(names[i]) == len && !memcmp(nt->s.arena + name, names[i], len)) break;
  nt->s.arena_len = name;
  if (i == 4) return gs_fs_fail(&nt->s, GS_EFORMAT, at + 1, "unknown object in the stream");
  nt->kind = kinds[i];
  if ((rc = read_block(nt, names[i])) < 0) return rc;
  if (i == 3) rc = sequence_point(nt);
  if (rc == GS_OK) rc = end_tag(nt);
  if (nt->kind == BLOCK_NONE) nt->pos = nt->block_len;
  return rc;
}

int gs_nt_next(gs_nt *nt, gs_nt_event *ev) {
  int rc;
  if (nt->done) return GS_EOF;
  for (;;) {
    while (nt->kind != BLOCK_NONE && nt->pos < nt->block_len)
      if ((rc = block_event(nt, ev)) != GS_OK) return rc < 0 ? rc : GS_OK;
    nt->kind = BLOCK_NONE;
    nt->pos = nt->block_len = 0;
    if ((rc = next_object(nt)) < 0) return rc;
  }
}

/* ---- the start --------------------------------------------------------------------------- */

static int trace_object(gs_nt *nt) {
  unsigned char t[48];
  int32_t minver = 0;
  uint64_t at;
  int rc = gs_fs_begin(&nt->s, "Trace", 0, &nt->trace.version, &minver);
  if (rc < 0) return rc;
  at = nt->s.off;
  if (nt->trace.version < 4 || minver > 5)
    return gs_fs_fail(&nt->s, GS_EFORMAT, at, "NetTrace version %ld (reads 4 and 5)",
                      (long)nt->trace.version);
  if ((rc = gs_fs_get(&nt->s, t, sizeof t, "the Trace object")) < 0) return rc;
  nt->trace.qpc_frequency = (int64_t)le(t + 24, 8);
  nt->trace.pointer_size = (uint32_t)le(t + 32, 4);
  nt->trace.process_id = (uint32_t)le(t + 36, 4);
  if (nt->trace.pointer_size != 4 && nt->trace.pointer_size != 8)
    return gs_fs_fail(&nt->s, GS_EFORMAT, at + 32, "pointer size %lu (4 or 8)",
                      (unsigned long)nt->trace.pointer_size);
  if (nt->trace.qpc_frequency <= 0)
    return gs_fs_fail(&nt->s, GS_EFORMAT, at + 24, "the timestamps' frequency is not positive");
  return end_tag(nt);
}

static int stream_start(gs_nt *nt) {
  unsigned char head[8 + 24];
  int rc = gs_fs_get(&nt->s, head, sizeof head, "the stream's header");
  if (rc < 0) return rc;
  if (memcmp(head, NT_MAGIC, 8) != 0 || !gs_fs_is_header(head + 8, sizeof head - 8))
    return gs_fs_fail(&nt->s, GS_EFORMAT, 0, "not a NetTrace stream (no Nettrace magic)");
  return trace_object(nt);
}

int gs_nt_open(gs_nt **out, gs_read_fn fn, void *ctx, char *err, size_t errcap) {
  gs_nt *nt = calloc(1, sizeof *nt);
  int rc;
  *out = NULL;
  if (!nt) {
    if (errcap) snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  if (gs_idmap_init(&nt->meta_ids, 64) < 0 || gs_idmap_init(&nt->threads, 64) < 0) {
    gs_nt_free(nt);
    if (errcap) snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  if ((rc = gs_fs_init(&nt->s, fn, ctx, err, errcap)) < 0 || (rc = stream_start(nt)) < 0) {
    gs_nt_free(nt);
    return rc;
  }
  *out = nt;
  return GS_OK;
}

const gs_nt_trace *gs_nt_trace_of(const gs_nt *nt) { return &nt->trace; }
uint64_t gs_nt_lost(const gs_nt *nt) { return nt->lost; }

int gs_nt_buffered(const gs_nt *nt) {
  return (nt->kind != BLOCK_NONE && nt->pos < nt->block_len) || nt->s.pos < nt->s.len;
}
uint64_t gs_nt_bytes(const gs_nt *nt) { return nt->s.off; }

void gs_nt_free(gs_nt *nt) {
  unsigned i;
  if (!nt) return;
  gs_fs_free(&nt->s);
  free(nt->block);
  free(nt->meta);
  gs_idmap_free(&nt->meta_ids);
  gs_idmap_free(&nt->threads);
  for (i = 0; i < nt->nproviders; i++) free(nt->providers[i]);
  free(nt);
}
