/* gst_stream.c - a snapshot stream built from a dump file, for the
 * collector's tests.
 *
 * Batches are cut by record count and, for objects, by reference count, so
 * that a small batch_refs makes objects continue over several batches. The
 * CRC-32 and text size in SnapshotEnd come from gs_writer over the same
 * records: the canonical text the collector must store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gcsnap.pb-c.h"
#include "gs_crc32.h"
#include "gs_error.h"
#include "gs_reader.h"
#include "gs_writer.h"
#include "gst_stream.h"

typedef struct enc {
  const gst_opts *o;
  gst_frame_fn fn;
  void *ctx;
  gst_totals *t;
  uint64_t seq;
  int failed;
  uint64_t sections, types, objects, refs, roots;
  /* the batch being filled */
  int kind;                       /* 0, 't', 'o', 'r' */
  size_t n, nrefs;
  uint64_t prev_id;
  uint64_t *ids, *types_or_kinds, *sizes_or_flags, *containers;
  int64_t *deltas, *ref_deltas;
  uint32_t *ref_counts, *u32a, *u32b;
  char **names;
  size_t ncontainers;
  size_t cap, ref_cap;
} enc;

static size_t batch_records(const enc *e) { return e->o->batch_records ? e->o->batch_records : 1000; }
static size_t batch_refs(const enc *e) { return e->o->batch_refs ? e->o->batch_refs : 4096; }

static void send_env(enc *e, Gcsnap__Envelope *env) {
  size_t n = gcsnap__envelope__get_packed_size(env), p = 0;
  uint8_t *buf = malloc(n + 10);
  size_t v = n;
  if (!buf) { e->failed = 1; return; }
  while (v >= 0x80) { buf[p++] = (uint8_t)(v | 0x80); v >>= 7; }
  buf[p++] = (uint8_t)v;
  gcsnap__envelope__pack(env, buf + p);
  if (!e->failed && e->fn(e->ctx, buf, p + n)) e->failed = 1;
  e->t->frames++;
  e->t->wire_bytes += p + n;
  free(buf);
}

static uint64_t next_seq(enc *e) {
  e->seq++;
  if (e->o->gap_at && e->seq == e->o->gap_at) e->seq++;
  return e->seq;
}

static void grow(enc *e, size_t n, size_t nrefs) {
  if (n > e->cap) {
    size_t c = e->cap ? e->cap * 2 : 64;
    while (c < n) c *= 2;
    e->ids = realloc(e->ids, c * sizeof *e->ids);
    e->types_or_kinds = realloc(e->types_or_kinds, c * sizeof(uint64_t));
    e->sizes_or_flags = realloc(e->sizes_or_flags, c * sizeof(uint64_t));
    e->containers = realloc(e->containers, c * sizeof(uint64_t));
    e->deltas = realloc(e->deltas, c * sizeof(int64_t));
    e->ref_counts = realloc(e->ref_counts, c * sizeof(uint32_t));
    e->u32a = realloc(e->u32a, c * sizeof(uint32_t));
    e->u32b = realloc(e->u32b, c * sizeof(uint32_t));
    e->names = realloc(e->names, c * sizeof(char *));
    e->cap = c;
  }
  if (nrefs > e->ref_cap) {
    size_t c = e->ref_cap ? e->ref_cap * 2 : 256;
    while (c < nrefs) c *= 2;
    e->ref_deltas = realloc(e->ref_deltas, c * sizeof(int64_t));
    e->ref_cap = c;
  }
}

static void flush(enc *e, int continues) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__TypeBatch tb = GCSNAP__TYPE_BATCH__INIT;
  Gcsnap__ObjectBatch ob = GCSNAP__OBJECT_BATCH__INIT;
  Gcsnap__RootBatch rb = GCSNAP__ROOT_BATCH__INIT;
  size_t i;
  if (!e->kind) return;
  if (e->kind == 't') {
    tb.seq = next_seq(e);
    tb.n_ids = tb.n_names = e->n;
    tb.ids = e->ids;
    tb.names = e->names;
    env.body_case = GCSNAP__ENVELOPE__BODY_TYPES;
    env.types = &tb;
  } else if (e->kind == 'o') {
    ob.seq = next_seq(e);
    ob.n_id_deltas = ob.n_type_ids = ob.n_sizes = ob.n_ref_counts = e->n;
    ob.id_deltas = e->deltas;
    ob.type_ids = e->types_or_kinds;
    ob.sizes = e->sizes_or_flags;
    ob.ref_counts = e->ref_counts;
    ob.n_ref_deltas = e->nrefs;
    ob.ref_deltas = e->ref_deltas;
    ob.continues = continues;
    env.body_case = GCSNAP__ENVELOPE__BODY_OBJECTS;
    env.objects = &ob;
  } else {
    rb.seq = next_seq(e);
    rb.n_id_deltas = rb.n_kinds = rb.n_flags = e->n;
    rb.id_deltas = e->deltas;
    rb.kinds = e->u32a;
    rb.flags = e->u32b;
    rb.n_containers = e->ncontainers;
    rb.containers = e->containers;
    env.body_case = GCSNAP__ENVELOPE__BODY_ROOTS;
    env.roots = &rb;
  }
  send_env(e, &env);
  if (e->kind == 't')
    for (i = 0; i < e->n; i++) free(e->names[i]);
  e->kind = 0;
  e->n = e->nrefs = e->ncontainers = 0;
  e->prev_id = 0;
}

static void start(enc *e, int kind) {
  if (e->kind != kind || e->n >= batch_records(e)) flush(e, 0);
  e->kind = kind;
}

static void add_object(enc *e, const gs_record *r) {
  size_t off = 0;
  e->objects++;
  e->refs += r->nrefs;
  do {
    size_t room, take, i;
    start(e, 'o');
    room = batch_refs(e) - e->nrefs;
    if (room == 0 && r->nrefs > 0) {
      flush(e, 0);
      start(e, 'o');
      room = batch_refs(e);
    }
    take = r->nrefs - off < room ? r->nrefs - off : room;
    grow(e, e->n + 1, e->nrefs + take);
    e->deltas[e->n] = (int64_t)(r->id - e->prev_id);
    e->types_or_kinds[e->n] = r->type;
    e->sizes_or_flags[e->n] = r->size;
    e->ref_counts[e->n] = (uint32_t)take;
    for (i = 0; i < take; i++) e->ref_deltas[e->nrefs++] = (int64_t)(r->refs[off + i] - r->id);
    e->n++;
    e->prev_id = r->id;
    off += take;
    if (off < r->nrefs) flush(e, 1);
  } while (off < r->nrefs);
}

static void add_root(enc *e, const gs_record *r) {
  start(e, 'r');
  grow(e, e->n + 1, 0);
  e->deltas[e->n] = (int64_t)(r->id - e->prev_id);
  e->u32a[e->n] = r->root_kind;
  e->u32b[e->n] = r->root_flags;
  if (r->root_kind == GS_ROOT_STATIC) e->containers[e->ncontainers++] = r->type;
  e->prev_id = r->id;
  e->n++;
  e->roots++;
}

static char *dup_name(const gs_record *r) {
  char *s = malloc(r->name_len + 1);
  memcpy(s, r->name, r->name_len);
  s[r->name_len] = '\0';
  return s;
}

static void add_type(enc *e, const gs_record *r) {
  start(e, 't');
  grow(e, e->n + 1, 0);
  e->ids[e->n] = r->id;
  e->names[e->n] = dup_name(r);
  e->n++;
  e->types++;
}

static void section(enc *e, const gs_record *r) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__SectionBegin sb = GCSNAP__SECTION_BEGIN__INIT;
  Gcsnap__SectionEnd se = GCSNAP__SECTION_END__INIT;
  char *name = dup_name(r);
  flush(e, 0);
  if (r->kind == GS_REC_SECTION) {
    sb.seq = next_seq(e);
    sb.version = r->id;
    sb.name = name;
    sb.timestamp = r->has_timestamp ? r->timestamp : 0;
    env.body_case = GCSNAP__ENVELOPE__BODY_SECTION_BEGIN;
    env.section_begin = &sb;
    e->sections++;
  } else {
    se.seq = next_seq(e);
    se.name = name;
    se.timestamp = r->has_timestamp ? r->timestamp : 0;
    env.body_case = GCSNAP__ENVELOPE__BODY_SECTION_END;
    env.section_end = &se;
  }
  send_env(e, &env);
  free(name);
}

static int crc_sink(void *ctx, const void *buf, size_t len) {
  gst_totals *t = ctx;
  t->crc32 = gs_crc32(t->crc32, buf, len);
  t->text_bytes += len;
  return 0;
}

static void begin(enc *e) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__SnapshotBegin b = GCSNAP__SNAPSHOT_BEGIN__INIT;
  b.request_id = e->o->request_id;
  b.snapshot_id = e->o->snapshot_id;
  b.trigger = (char *)(e->o->request_id ? "request" : "test");
  b.clock_ms = 1234;
  env.body_case = GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN;
  env.snapshot_begin = &b;
  send_env(e, &env);
}

static void end(enc *e) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__SnapshotEnd se = GCSNAP__SNAPSHOT_END__INIT;
  flush(e, 0);
  se.seq = next_seq(e);
  se.sections = e->sections;
  se.types = e->types;
  se.objects = (uint64_t)((int64_t)e->objects + e->o->objects_delta);
  se.references = e->refs;
  se.roots = e->roots;
  se.text_bytes = e->t->text_bytes;
  se.crc32 = e->t->crc32 ^ e->o->crc_xor;
  env.body_case = GCSNAP__ENVELOPE__BODY_SNAPSHOT_END;
  env.snapshot_end = &se;
  send_env(e, &env);
}

static void rename_record(const gst_opts *o, gs_record *rec) {
  const char *name = rec->kind == GS_REC_TYPE ? o->type_name
                     : rec->kind == GS_REC_SECTION || rec->kind == GS_REC_END ? o->section_name : NULL;
  if (!name) return;
  rec->name = name;
  rec->name_len = strlen(name);
}

int gst_encode(const char *path, const gst_opts *o, gst_frame_fn fn, void *ctx, gst_totals *t) {
  FILE *f = fopen(path, "rb");
  gs_reader *r = NULL;
  gs_writer *w = NULL;
  gs_record rec;
  enc e;
  int rc;
  memset(t, 0, sizeof *t);
  memset(&e, 0, sizeof e);
  e.o = o;
  e.fn = fn;
  e.ctx = ctx;
  e.t = t;
  if (!f || gs_reader_new_file(&r, f) || gs_writer_new(&w, crc_sink, t)) {
    if (f) fclose(f);
    gs_reader_free(r);
    return -1;
  }
  begin(&e);
  while (!e.failed && (rc = gs_reader_next(r, &rec)) != GS_EOF) {
    if (rc != 0) { e.failed = 1; break; }
    rename_record(o, &rec);
    gs_writer_record(w, &rec);
    switch (rec.kind) {
    case GS_REC_SECTION: case GS_REC_END: section(&e, &rec); break;
    case GS_REC_TYPE: add_type(&e, &rec); break;
    case GS_REC_OBJECT: add_object(&e, &rec); break;
    case GS_REC_ROOT: add_root(&e, &rec); break;
    }
  }
  gs_writer_free(w);
  t->objects = e.objects;
  if (!e.failed && !o->no_end) end(&e);
  else flush(&e, 0);
  gs_reader_free(r);
  fclose(f);
  free(e.ids); free(e.types_or_kinds); free(e.sizes_or_flags); free(e.containers);
  free(e.deltas); free(e.ref_deltas); free(e.ref_counts); free(e.u32a); free(e.u32b);
  free(e.names);
  return e.failed ? -1 : 0;
}

uint8_t *gst_hello(const char *device_id, uint32_t protocol_version, size_t *len) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Hello h = GCSNAP__HELLO__INIT;
  size_t n, p = 0, v;
  uint8_t *buf;
  h.protocol_version = protocol_version;
  h.agent_version = (char *)"test";
  h.device_id = (char *)device_id;
  h.app_name = (char *)"test.exe";
  h.architecture = (char *)"x86_64";
  h.pointer_size = 8;
  h.clock_ms = 1000;
  env.body_case = GCSNAP__ENVELOPE__BODY_HELLO;
  env.hello = &h;
  n = gcsnap__envelope__get_packed_size(&env);
  if (!(buf = malloc(n + 10))) return NULL;
  for (v = n; v >= 0x80; v >>= 7) buf[p++] = (uint8_t)(v | 0x80);
  buf[p++] = (uint8_t)v;
  gcsnap__envelope__pack(&env, buf + p);
  *len = p + n;
  return buf;
}
