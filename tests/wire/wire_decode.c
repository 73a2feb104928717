/* wire_decode.c - decodes a snapshot stream with protobuf-c and rebuilds
 * its text (see wire_decode.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gcsnap.pb-c.h"
#include "gs_crc32.h"
#include "gs_error.h"
#include "wire_decode.h"

#define WD_BUF (GS_WIRE_MAX_FRAME + GS_WIRE_PREFIX_MAX)

static int wd_fail(wd_state *s, const char *fmt, ...) {
  va_list ap;
  if (s->error[0]) return -1;
  va_start(ap, fmt);
  vsnprintf(s->error, sizeof s->error, fmt, ap);
  va_end(ap);
  return -1;
}

static int wd_text(void *ctx, const void *buf, size_t len) {
  wd_state *s = ctx;
  s->crc32 = gs_crc32(s->crc32, buf, len);
  s->text_bytes += len;
  return s->out ? s->out(s->out_ctx, buf, len) : GS_OK;
}

int wd_init(wd_state *s, gs_write_fn out, void *out_ctx) {
  memset(s, 0, sizeof *s);
  s->out = out;
  s->out_ctx = out_ctx;
  s->buf = malloc(WD_BUF);
  if (!s->buf || gs_writer_new(&s->w, wd_text, s)) return wd_fail(s, "out of memory");
  gs_wire_reader_init(&s->reader, s->buf, WD_BUF, GS_WIRE_MAX_FRAME);
  return 0;
}

void wd_free(wd_state *s) {
  if (s->w) gs_writer_free(s->w);
  free(s->buf);
  free(s->refs);
  s->w = NULL;
  s->buf = NULL;
  s->refs = NULL;
}

/* ---- records ---- */

static int wd_seq(wd_state *s, uint64_t seq, const char *what) {
  if (!s->begun || s->ended) return wd_fail(s, "%s outside a snapshot", what);
  if (seq != s->seq + 1)
    return wd_fail(s, "%s has seq %llu after %llu", what, (unsigned long long)seq,
                   (unsigned long long)s->seq);
  s->seq = seq;
  return 0;
}

static int wd_check(wd_state *s, int err, const char *what) {
  return err ? wd_fail(s, "gs_writer failed on %s: %s", what, gs_strerror(err)) : 0;
}

static int wd_add_refs(wd_state *s, const int64_t *deltas, size_t n, uint64_t id) {
  size_t i;
  if (s->nrefs + n > s->refs_cap) {
    size_t cap = (s->nrefs + n) * 2;
    uint64_t *p = realloc(s->refs, cap * sizeof *p);
    if (!p) return wd_fail(s, "out of memory");
    s->refs = p;
    s->refs_cap = cap;
  }
  for (i = 0; i < n; i++) s->refs[s->nrefs++] = id + (uint64_t)deltas[i];
  return 0;
}

static int wd_objects(wd_state *s, const Gcsnap__ObjectBatch *b) {
  size_t n = b->n_id_deltas, i, r = 0;
  uint64_t id = 0, total = 0;
  if (b->n_type_ids != n || b->n_sizes != n || b->n_ref_counts != n)
    return wd_fail(s, "ObjectBatch %llu: arrays out of step", (unsigned long long)b->seq);
  if (n == 0) return wd_fail(s, "ObjectBatch %llu is empty", (unsigned long long)b->seq);
  for (i = 0; i < n; i++) total += b->ref_counts[i];
  if (total != b->n_ref_deltas)
    return wd_fail(s, "ObjectBatch %llu: %llu references counted, %lu sent",
                   (unsigned long long)b->seq, (unsigned long long)total,
                   (unsigned long)b->n_ref_deltas);
  for (i = 0; i < n; i++) {
    id += (uint64_t)b->id_deltas[i];
    if (s->pending) {
      if (i != 0 || id != s->pending_id || b->type_ids[i] != s->pending_type ||
          b->sizes[i] != s->pending_size)
        return wd_fail(s, "ObjectBatch %llu does not go on with object %llx",
                       (unsigned long long)b->seq, (unsigned long long)s->pending_id);
    } else {
      s->pending_id = id;
      s->pending_type = b->type_ids[i];
      s->pending_size = b->sizes[i];
      s->nrefs = 0;
      s->objects++;
    }
    if (wd_add_refs(s, b->ref_deltas + r, b->ref_counts[i], id)) return -1;
    r += b->ref_counts[i];
    if (i + 1 == n && b->continues) {
      s->pending = 1;
      s->continued_parts++;
      break;
    }
    s->pending = 0;
    s->references += s->nrefs;
    if (wd_check(s, gs_writer_object(s->w, id, s->pending_type, s->pending_size, s->refs,
                                     s->nrefs), "an object"))
      return -1;
  }
  return 0;
}

static int wd_roots(wd_state *s, const Gcsnap__RootBatch *b) {
  size_t n = b->n_id_deltas, i, c = 0;
  uint64_t id = 0;
  if (b->n_kinds != n || b->n_flags != n || n == 0)
    return wd_fail(s, "RootBatch %llu: arrays out of step or empty", (unsigned long long)b->seq);
  for (i = 0; i < n; i++) {
    uint64_t container = 0;
    id += (uint64_t)b->id_deltas[i];
    if (b->kinds[i] == 4) {
      if (c == b->n_containers)
        return wd_fail(s, "RootBatch %llu: too few containers", (unsigned long long)b->seq);
      container = b->containers[c++];
    }
    s->roots++;
    if (wd_check(s, gs_writer_root(s->w, id, b->kinds[i], b->flags[i], container), "a root"))
      return -1;
  }
  if (c != b->n_containers)
    return wd_fail(s, "RootBatch %llu: too many containers", (unsigned long long)b->seq);
  return 0;
}

static int wd_types(wd_state *s, const Gcsnap__TypeBatch *b) {
  size_t i;
  if (b->n_ids != b->n_names || b->n_ids == 0)
    return wd_fail(s, "TypeBatch %llu: ids and names out of step", (unsigned long long)b->seq);
  for (i = 0; i < b->n_ids; i++) {
    s->types++;
    if (wd_check(s, gs_writer_type(s->w, b->ids[i], b->names[i], strlen(b->names[i])),
                 "a type"))
      return -1;
  }
  return 0;
}

static int wd_snapshot_end(wd_state *s, const Gcsnap__SnapshotEnd *e) {
  if (wd_check(s, gs_writer_flush(s->w), "the end")) return -1;
  s->ended = 1;
  s->end_text_bytes = e->text_bytes;
  s->end_crc32 = e->crc32;
  if (e->sections != s->sections || e->types != s->types || e->objects != s->objects ||
      e->references != s->references || e->roots != s->roots)
    return wd_fail(s, "SnapshotEnd counts %llu/%llu/%llu/%llu/%llu, stream %llu/%llu/%llu/%llu/%llu",
                   (unsigned long long)e->sections, (unsigned long long)e->types,
                   (unsigned long long)e->objects, (unsigned long long)e->references,
                   (unsigned long long)e->roots, (unsigned long long)s->sections,
                   (unsigned long long)s->types, (unsigned long long)s->objects,
                   (unsigned long long)s->references, (unsigned long long)s->roots);
  if (e->text_bytes != s->text_bytes || e->crc32 != s->crc32)
    return wd_fail(s, "SnapshotEnd says %llu bytes, CRC %08lx; the text rebuilt is %llu, %08lx",
                   (unsigned long long)e->text_bytes, (unsigned long)e->crc32,
                   (unsigned long long)s->text_bytes, (unsigned long)s->crc32);
  return 0;
}

static int wd_body(wd_state *s, const Gcsnap__Envelope *env) {
  switch (env->body_case) {
  case GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN:
    if (s->begun) return wd_fail(s, "a second SnapshotBegin");
    s->begun = 1;
    s->request_id = env->snapshot_begin->request_id;
    s->snapshot_id = env->snapshot_begin->snapshot_id;
    s->stable_ids = env->snapshot_begin->stable_ids;
    s->begin_clock_ms = env->snapshot_begin->clock_ms;
    snprintf(s->trigger, sizeof s->trigger, "%s", env->snapshot_begin->trigger);
    return 0;
  case GCSNAP__ENVELOPE__BODY_SECTION_BEGIN:
    if (wd_seq(s, env->section_begin->seq, "SectionBegin")) return -1;
    s->sections++;
    return wd_check(s, gs_writer_section(s->w, env->section_begin->version,
                                         env->section_begin->name,
                                         strlen(env->section_begin->name),
                                         env->section_begin->timestamp), "a section");
  case GCSNAP__ENVELOPE__BODY_TYPES:
    if (wd_seq(s, env->types->seq, "TypeBatch")) return -1;
    return wd_types(s, env->types);
  case GCSNAP__ENVELOPE__BODY_OBJECTS:
    if (wd_seq(s, env->objects->seq, "ObjectBatch")) return -1;
    return wd_objects(s, env->objects);
  case GCSNAP__ENVELOPE__BODY_ROOTS:
    if (wd_seq(s, env->roots->seq, "RootBatch")) return -1;
    return wd_roots(s, env->roots);
  case GCSNAP__ENVELOPE__BODY_GENERATIONS:
    if (wd_seq(s, env->generations->seq, "GenerationRanges")) return -1;
    if (env->generations->n_ranges == 0) return wd_fail(s, "empty GenerationRanges");
    s->generations += env->generations->n_ranges;
    return 0;
  case GCSNAP__ENVELOPE__BODY_STATICS:
    if (wd_seq(s, env->statics->seq, "StaticNames")) return -1;
    if (env->statics->n_names == 0) return wd_fail(s, "empty StaticNames");
    s->statics += env->statics->n_names;
    return 0;
  case GCSNAP__ENVELOPE__BODY_SECTION_END:
    if (wd_seq(s, env->section_end->seq, "SectionEnd")) return -1;
    return wd_check(s, gs_writer_end(s->w, env->section_end->name,
                                     strlen(env->section_end->name),
                                     env->section_end->timestamp), "a section end");
  case GCSNAP__ENVELOPE__BODY_SNAPSHOT_END:
    if (wd_seq(s, env->snapshot_end->seq, "SnapshotEnd")) return -1;
    return wd_snapshot_end(s, env->snapshot_end);
  default:
    return wd_fail(s, "message %d inside a snapshot stream", (int)env->body_case);
  }
}

int wd_envelope(wd_state *s, const uint8_t *data, size_t len) {
  Gcsnap__Envelope *env;
  int rc;
  if (s->error[0]) return -1;
  env = gcsnap__envelope__unpack(NULL, len, data);
  if (!env) return wd_fail(s, "protobuf-c cannot decode frame %llu (%lu bytes)",
                           (unsigned long long)s->frames + 1, (unsigned long)len);
  s->frames++;
  if ((unsigned)env->body_case < 18) s->by_kind[env->body_case]++;
  if (env->body_case >= GCSNAP__ENVELOPE__BODY_TYPES &&
      env->body_case <= GCSNAP__ENVELOPE__BODY_GENERATIONS && len > s->largest_frame)
    s->largest_frame = len;
  if (s->pending && env->body_case != GCSNAP__ENVELOPE__BODY_OBJECTS)
    rc = wd_fail(s, "object %llx was continued, then came message %d",
                 (unsigned long long)s->pending_id, (int)env->body_case);
  else
    rc = wd_body(s, env);
  gcsnap__envelope__free_unpacked(env, NULL);
  return rc;
}

int wd_feed(void *ctx, const void *data, size_t len) {
  wd_state *s = ctx;
  const uint8_t *p = data, *frame;
  size_t flen;
  s->wire_bytes += len;
  while (len > 0) {
    size_t used;
    int err;
    gs_wire_reader_feed(&s->reader, p, len, &used);
    p += used;
    len -= used;
    while ((err = gs_wire_reader_next(&s->reader, &frame, &flen)) == GS_OK)
      if (wd_envelope(s, frame, flen)) return GS_EINVAL;
    if (err != GS_EOF) {
      wd_fail(s, "frame reader: %s", gs_strerror(err));
      return err;
    }
    if (used == 0 && len > 0) {
      wd_fail(s, "frame reader takes no more bytes");
      return GS_ELIMIT;
    }
  }
  return GS_OK;
}

int wd_finish(wd_state *s) {
  if (s->error[0]) return -1;
  if (gs_wire_reader_pending(&s->reader))
    return wd_fail(s, "%lu bytes after the last frame",
                   (unsigned long)gs_wire_reader_pending(&s->reader));
  if (!s->begun) return wd_fail(s, "no SnapshotBegin");
  if (!s->ended) return wd_fail(s, "no SnapshotEnd");
  return 0;
}
