/* gsd_ingest.c - one snapshot stream turned back into records, validated
 * and written as the canonical text through zstd to a temporary file, and
 * that file committed under its final name (the summary is
 * gsd_ingest_summary.c's).
 *
 * The canonical text is never held: gs_writer hands each buffer to
 * on_text(), which adds it to the CRC-32 and the byte count and compresses
 * it straight into the file. Once the validator has found an error the
 * snapshot can no longer be stored, so compression stops (the CRC goes on:
 * a CRC mismatch is still told apart from invalid content). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zstd.h>
#include "gs_crc32.h"
#include "gs_error.h"
#include "gs_text.h"
#include "gs_validate.h"
#include "gs_wire.h"
#include "gs_writer.h"
#include "gs_genfile.h"
#include "gsd_ingest.h"

#define ZSTD_LEVEL 3          /* as "gcsnap convert" */

struct gsd_ingest {
  int check_only;
  char *tmp_path;
  int fd;
  int committed;
  ZSTD_CCtx *cctx;
  unsigned char *zbuf;
  size_t zbuf_cap;
  gs_writer *writer;
  gs_validator *validator;
  uint64_t next_seq;
  int ended;
  int write_failed;
  char write_error[200];
  char first_error[256];
  gsd_ingest_counts c;
  gs_genfile *gens;              /* the generation ranges, for a side file */
  gsd_ingest_limits lim;
  uint64_t space_check_at;   /* file_bytes at which free space is checked next */
  /* the object whose references go on in the next ObjectBatch */
  int pending;
  uint64_t pend_id, pend_type, pend_size;
  uint64_t *refs;
  size_t nrefs, refs_cap;
};

static const char *const body_names[] = {
  "nothing", "Hello", "Welcome", "CaptureRequest", "SnapshotBegin", "SectionBegin",
  "TypeBatch", "ObjectBatch", "RootBatch", "GenerationRanges", "SectionEnd",
  "SnapshotEnd", "Ack", "Error", "Ping", "AuthChallenge", "AuthProof", "StaticNames",
};

static const char *body_name(unsigned body) {
  return body < sizeof body_names / sizeof body_names[0] ? body_names[body] : "unknown";
}

static int fault(gsd_fault *f, unsigned code, int fatal, const char *fmt, ...) {
  va_list ap;
  f->code = code;
  f->fatal = fatal;
  va_start(ap, fmt);
  vsnprintf(f->reason, sizeof f->reason, fmt, ap);
  va_end(ap);
  return GS_EFORMAT;
}

/* ---- output: CRC, count, zstd, file ----------------------------------- */

/* Nothing more will be written: the file goes now, not at the end of the
 * stream, so that a full disk gets its space back at once. */
static void write_failed(gsd_ingest *ig, const char *what, const char *why) {
  if (ig->write_failed) return;
  ig->write_failed = 1;
  snprintf(ig->write_error, sizeof ig->write_error, "%s: %s", what, why);
  if (ig->fd >= 0 && !ig->committed) {
    close(ig->fd);
    ig->fd = -1;
    unlink(ig->tmp_path);
  }
}

/* Below the free space to keep, the snapshot stops being written. */
static int check_space(gsd_ingest *ig) {
  struct statvfs v;
  uint64_t avail;
  char why[160];
  ig->space_check_at = ig->c.file_bytes + GSD_INGEST_SPACE_CHECK;
  if (!ig->lim.min_free_bytes || fstatvfs(ig->fd, &v) != 0) return GS_OK;
  avail = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
  if (avail >= ig->lim.min_free_bytes) return GS_OK;
  snprintf(why, sizeof why, "the store's filesystem has %llu bytes free, below the minimum"
           " of %llu (--min-free-bytes)",
           (unsigned long long)avail, (unsigned long long)ig->lim.min_free_bytes);
  write_failed(ig, "disk full", why);
  return GS_EIO;
}

static int write_all(gsd_ingest *ig, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(ig->fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      write_failed(ig, e == ENOSPC || e == EDQUOT ? "disk full: cannot write the snapshot file"
                                                  : "cannot write the snapshot file", strerror(e));
      return GS_EIO;
    }
    p += n;
    len -= (size_t)n;
    ig->c.file_bytes += (uint64_t)n;
  }
  if (ig->c.file_bytes >= ig->space_check_at) return check_space(ig);
  return GS_OK;
}

static int compress(gsd_ingest *ig, ZSTD_inBuffer *in, ZSTD_EndDirective mode) {
  if (!ig->cctx) return GS_OK;          /* the frame was ended with the stream */
  for (;;) {
    ZSTD_outBuffer out = {ig->zbuf, ig->zbuf_cap, 0};
    size_t left = ZSTD_compressStream2(ig->cctx, &out, in, mode);
    if (ZSTD_isError(left)) {
      write_failed(ig, "zstd compression failed", ZSTD_getErrorName(left));
      return GS_EIO;
    }
    if (write_all(ig, ig->zbuf, out.pos)) return GS_EIO;
    if (mode == ZSTD_e_end ? left == 0 : in->pos == in->size) return GS_OK;
  }
}

/* The gs_write_fn of the canonical text. It never fails the writer: a
 * write error is remembered and reported when the stream ends. */
static int on_text(void *ctx, const void *buf, size_t len) {
  gsd_ingest *ig = ctx;
  ZSTD_inBuffer in = {buf, len, 0};
  ig->c.crc32 = gs_crc32(ig->c.crc32, buf, len);
  ig->c.text_bytes += len;
  if (!ig->write_failed && ig->c.errors == 0) compress(ig, &in, ZSTD_e_continue);
  return GS_OK;
}

/* ---- validation ------------------------------------------------------ */

static void on_diag(void *ctx, const gs_diag *d) {
  gsd_ingest *ig = ctx;
  if (gs_diag_severity(d->code) != GS_SEV_ERROR) {
    ig->c.warnings++;
    return;
  }
  if (ig->c.errors++ == 0)
    snprintf(ig->first_error, sizeof ig->first_error, "line %llu: [%s] %s",
             (unsigned long long)d->line, gs_diag_name(d->code), d->message);
}

/* d holds the message; reported at the record about to be emitted. */
static void name_error(gsd_ingest *ig, gs_diag *d, gs_diag_code code) {
  d->code = code;
  d->line = ig->c.records + 1;
  gs_validator_report(ig->validator, d);
}

static int is_blank(unsigned char c) { return c == ' ' || c == '\t'; }

/* Names become part of a text line: the rules are the reader's (UTF-8, no
 * control bytes but tab), and the reader drops blanks around a name and
 * takes an empty one for a missing field, so such names are refused: the
 * stored file must read back the same. */
static void check_name(gsd_ingest *ig, const char *name, size_t len, const char *what) {
  const unsigned char *p = (const unsigned char *)name, *e = p + len;
  gs_diag d;
  if (name[strspn(name, " \t")] == '\0') {
    snprintf(d.message, sizeof d.message, "%s is missing (empty or blanks only)", what);
    name_error(ig, &d, GS_D_MISSING_FIELD);
    return;
  }
  if (is_blank(p[0]) || is_blank(e[-1])) {
    snprintf(d.message, sizeof d.message, "%s starts or ends with a blank (0x%02x), which a record "
             "cannot keep", what, is_blank(p[0]) ? p[0] : e[-1]);
    name_error(ig, &d, GS_D_NOT_TEXT);
    return;
  }
  while (p < e) {
    size_t n = 1;
    if (*p < 0x20 ? *p != '\t' : *p == 0x7f) break;
    if (*p >= 0x80 && !(n = gs_utf8_len(p, e))) break;
    p += n;
  }
  if (p == e) return;
  snprintf(d.message, sizeof d.message, "%s has byte 0x%02x, which is not text", what, *p);
  name_error(ig, &d, GS_D_NOT_TEXT);
}

/* ---- records ----------------------------------------------------------- */

static int emit(gsd_ingest *ig, gs_record *rec) {
  rec->line = ++ig->c.records;
  switch (rec->kind) {
  case GS_REC_SECTION: ig->c.sections++; break;
  case GS_REC_TYPE: ig->c.types++; break;
  case GS_REC_OBJECT:
    ig->c.objects++;
    ig->c.references += rec->nrefs;
    ig->c.bytes += rec->size;
    break;
  case GS_REC_ROOT: ig->c.roots++; break;
  case GS_REC_END: break;
  }
  if (ig->check_only) return GS_OK;
  if (gs_validator_record(ig->validator, rec) != GS_OK)
    write_failed(ig, "cannot validate", "out of memory");
  gs_writer_record(ig->writer, rec);
  return GS_OK;
}

static int emit_named(gsd_ingest *ig, gs_record_kind kind, uint64_t id, const char *name,
                      uint64_t timestamp, const char *what) {
  gs_record rec;
  memset(&rec, 0, sizeof rec);
  rec.kind = kind;
  rec.id = id;
  rec.name = name ? name : "";
  rec.name_len = strlen(rec.name);
  rec.timestamp = timestamp;
  rec.has_timestamp = kind != GS_REC_TYPE;
  if (!ig->check_only) check_name(ig, rec.name, rec.name_len, what);
  return emit(ig, &rec);
}

static int emit_object(gsd_ingest *ig, uint64_t id, uint64_t type, uint64_t size) {
  gs_record rec;
  int rc;
  memset(&rec, 0, sizeof rec);
  rec.kind = GS_REC_OBJECT;
  rec.id = id;
  rec.type = type;
  rec.size = size;
  rec.refs = ig->refs;
  rec.nrefs = ig->nrefs;
  ig->nrefs = 0;
  rc = emit(ig, &rec);
  if (ig->refs_cap > GSD_INGEST_KEEP_REFS) {   /* one huge array: not held for the rest */
    free(ig->refs);
    ig->refs = NULL;
    ig->refs_cap = 0;
  }
  return rc;
}

/* Whether the session's checking budget holds the references of the object
 * arriving, n more of them, beside the validator's tables. Small objects are
 * not worth the count. */
static int refs_fit(gsd_ingest *ig, size_t n) {
  uint64_t bytes = (uint64_t)(ig->nrefs + n) * sizeof *ig->refs;
  if (ig->check_only || !ig->lim.max_validator_bytes || ig->nrefs + n <= GSD_INGEST_KEEP_REFS)
    return 1;
  return bytes <= ig->lim.max_validator_bytes &&
         gs_validator_memory(ig->validator) <= ig->lim.max_validator_bytes - bytes;
}

static int add_refs(gsd_ingest *ig, uint64_t id, const int64_t *deltas, size_t n,
                    gsd_fault *f) {
  size_t i;
  if (ig->lim.max_references && n > ig->lim.max_references - ig->c.references - ig->nrefs)
    return fault(f, GS_WIRE_E_INVALID, 1,
                 "the snapshot has more than %llu references, the collector's limit"
                 " (--max-references)", (unsigned long long)ig->lim.max_references);
  if (n > ig->lim.max_object_refs - ig->nrefs)
    return fault(f, GS_WIRE_E_INVALID, 1,
                 "object %llx has more than %llu references, the collector's limit"
                 " (--max-object-references)", (unsigned long long)id,
                 (unsigned long long)ig->lim.max_object_refs);
  if (!refs_fit(ig, n))
    return fault(f, GS_WIRE_E_INVALID, 1,
                 "checking the snapshot needs more than %llu bytes (the references of object "
                 "%llx), the collector's limit (--max-validator-memory)",
                 (unsigned long long)ig->lim.max_validator_bytes, (unsigned long long)id);
  if (ig->nrefs + n > ig->refs_cap) {
    size_t cap = ig->refs_cap ? ig->refs_cap : 256;
    uint64_t *a;
    while (cap < ig->nrefs + n) cap *= 2;
    if (!(a = realloc(ig->refs, cap * sizeof *a)))
      return fault(f, GS_WIRE_E_STORAGE, 1, "out of memory for the references of object %llx",
                   (unsigned long long)id);
    ig->refs = a;
    ig->refs_cap = cap;
  }
  for (i = 0; i < n; i++) ig->refs[ig->nrefs++] = id + (uint64_t)deltas[i];
  return GS_OK;
}

static int on_objects(gsd_ingest *ig, const Gcsnap__ObjectBatch *b, gsd_fault *f) {
  size_t n = b->n_id_deltas, i, r = 0;
  uint64_t id = 0, total = 0;
  if (b->n_type_ids != n || b->n_sizes != n || b->n_ref_counts != n)
    return fault(f, GS_WIRE_E_PROTOCOL, 1,
                 "ObjectBatch %llu: %zu IDs, %zu types, %zu sizes, %zu reference counts",
                 (unsigned long long)b->seq, n, b->n_type_ids, b->n_sizes, b->n_ref_counts);
  for (i = 0; i < n; i++) total += b->ref_counts[i];
  if (total != b->n_ref_deltas)
    return fault(f, GS_WIRE_E_PROTOCOL, 1,
                 "ObjectBatch %llu: reference counts add up to %llu, but it has %zu references",
                 (unsigned long long)b->seq, (unsigned long long)total, b->n_ref_deltas);
  if (b->continues && n == 0)
    return fault(f, GS_WIRE_E_PROTOCOL, 1, "ObjectBatch %llu continues, but has no object",
                 (unsigned long long)b->seq);
  for (i = 0; i < n; i++) {
    int err;
    id += (uint64_t)b->id_deltas[i];
    if (i == 0 && ig->pending &&
        (id != ig->pend_id || b->type_ids[0] != ig->pend_type || b->sizes[0] != ig->pend_size))
      return fault(f, GS_WIRE_E_PROTOCOL, 1,
                   "ObjectBatch %llu should go on with object %llx, but starts with %llx",
                   (unsigned long long)b->seq, (unsigned long long)ig->pend_id,
                   (unsigned long long)id);
    if (b->ref_counts[i] && (err = add_refs(ig, id, b->ref_deltas + r, b->ref_counts[i], f)))
      return err;
    r += b->ref_counts[i];
    if (i == n - 1 && b->continues) {
      ig->pending = 1;
      ig->pend_id = id;
      ig->pend_type = b->type_ids[i];
      ig->pend_size = b->sizes[i];
      return GS_OK;
    }
    ig->pending = 0;
    if (ig->lim.max_objects && ig->c.objects >= ig->lim.max_objects)
      return fault(f, GS_WIRE_E_INVALID, 1,
                   "the snapshot has more than %llu objects, the collector's limit"
                   " (--max-objects)", (unsigned long long)ig->lim.max_objects);
    emit_object(ig, id, b->type_ids[i], b->sizes[i]);
  }
  /* The validator's tables grow with the references to objects not sent
   * yet (at most 32 bytes each): counted against the session. */
  if (!ig->check_only && ig->lim.max_validator_bytes &&
      gs_validator_memory(ig->validator) > ig->lim.max_validator_bytes)
    return fault(f, GS_WIRE_E_INVALID, 1,
                 "checking the snapshot needs more than %llu bytes (references to objects not "
                 "in it yet), the collector's limit (--max-validator-memory)",
                 (unsigned long long)ig->lim.max_validator_bytes);
  return GS_OK;
}

/* The reader refuses a root kind above 5, so the validator never sees one:
 * the same error here, or the stored text would not read back. */
static void check_root_kind(gsd_ingest *ig, unsigned kind) {
  gs_diag d;
  if (kind < GS_ROOT_KINDS) return;
  d.code = GS_D_ROOT_KIND;
  d.line = ig->c.records + 1;
  snprintf(d.message, sizeof d.message, "root kind %x is outside 0-5", kind);
  gs_validator_report(ig->validator, &d);
}

/* The ranges of the current section, for the side file (gs_genfile.h). */
static int add_generations(gsd_ingest *ig, const Gcsnap__GenerationRanges *r) {
  uint64_t section = ig->c.sections ? ig->c.sections - 1 : 0;
  size_t i;
  int err = GS_OK;
  for (i = 0; !err && i < r->n_ranges; i++)
    err = gs_genfile_add(&ig->gens, section, r->ranges[i]->generation, r->ranges[i]->start,
                         r->ranges[i]->used, r->ranges[i]->reserved);
  return err;
}

/* Whether name is UTF-8 without control characters (the side file is JSON). */
static int is_text(const char *name) {
  const unsigned char *p = (const unsigned char *)name, *e = p + strlen(name);
  size_t n;
  for (; p < e; p += n) {
    n = 1;
    if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && !(n = gs_utf8_len(p, e)))) return 0;
  }
  return 1;
}

/* The static fields' names of the current section, for the side file; a
 * name that is not text is refused, as a type name would be. */
static int on_statics(gsd_ingest *ig, const Gcsnap__StaticNames *b, gsd_fault *f) {
  uint64_t section = ig->c.sections ? ig->c.sections - 1 : 0;
  size_t i;
  for (i = 0; i < b->n_names; i++) {
    const char *name = b->names[i]->field ? b->names[i]->field : "";
    if (!is_text(name))
      return fault(f, GS_WIRE_E_INVALID, 1, "StaticNames %llu: the name of static %llx is not "
                   "UTF-8 text without control characters", (unsigned long long)b->seq,
                   (unsigned long long)b->names[i]->object);
    if (ig->check_only) continue;
    if (gs_genfile_add_static(&ig->gens, section, b->names[i]->object, name, strlen(name)))
      return fault(f, GS_WIRE_E_STORAGE, 1, "out of memory for the static fields' names");
  }
  return GS_OK;
}

static int on_roots(gsd_ingest *ig, const Gcsnap__RootBatch *b, gsd_fault *f) {
  size_t n = b->n_id_deltas, i, statics = 0, c = 0;
  uint64_t id = 0;
  if (b->n_kinds != n || b->n_flags != n)
    return fault(f, GS_WIRE_E_PROTOCOL, 1, "RootBatch %llu: %zu IDs, %zu kinds, %zu flags",
                 (unsigned long long)b->seq, n, b->n_kinds, b->n_flags);
  for (i = 0; i < n; i++) statics += b->kinds[i] == GS_ROOT_STATIC;
  if (statics != b->n_containers)
    return fault(f, GS_WIRE_E_PROTOCOL, 1,
                 "RootBatch %llu: %zu static roots, but %zu containers",
                 (unsigned long long)b->seq, statics, b->n_containers);
  for (i = 0; i < n; i++) {
    gs_record rec;
    memset(&rec, 0, sizeof rec);
    id += (uint64_t)b->id_deltas[i];
    rec.kind = GS_REC_ROOT;
    rec.id = id;
    rec.root_kind = b->kinds[i];
    rec.root_flags = b->flags[i];
    if (b->kinds[i] == GS_ROOT_STATIC) {
      rec.has_container = 1;
      rec.type = b->containers[c++];
    }
    if (!ig->check_only) check_root_kind(ig, rec.root_kind);
    emit(ig, &rec);
  }
  return GS_OK;
}

static int on_types(gsd_ingest *ig, const Gcsnap__TypeBatch *b, gsd_fault *f) {
  size_t i;
  if (b->n_ids != b->n_names)
    return fault(f, GS_WIRE_E_PROTOCOL, 1, "TypeBatch %llu: %zu IDs, but %zu names",
                 (unsigned long long)b->seq, b->n_ids, b->n_names);
  for (i = 0; i < b->n_ids; i++) emit_named(ig, GS_REC_TYPE, b->ids[i], b->names[i], 0, "type name");
  return GS_OK;
}

/* ---- the stream -------------------------------------------------------- */

static int seq_of(const Gcsnap__Envelope *env, uint64_t *seq) {
  switch (env->body_case) {
  case GCSNAP__ENVELOPE__BODY_SECTION_BEGIN: *seq = env->section_begin->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_TYPES: *seq = env->types->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_OBJECTS: *seq = env->objects->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_ROOTS: *seq = env->roots->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_GENERATIONS: *seq = env->generations->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_STATICS: *seq = env->statics->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_SECTION_END: *seq = env->section_end->seq; return 1;
  case GCSNAP__ENVELOPE__BODY_SNAPSHOT_END: *seq = env->snapshot_end->seq; return 1;
  default: return 0;
  }
}

static int count_mismatch(gsd_fault *f, const char *what, uint64_t said, uint64_t got) {
  return fault(f, GS_WIRE_E_COUNTS, 1, "SnapshotEnd says %llu %s, but %llu were received",
               (unsigned long long)said, what, (unsigned long long)got);
}

/* The stream is whole and will be stored: the zstd frame is ended now and
 * the compressor, writer and validator freed, so that a snapshot waiting
 * for its sync and summary holds a few bytes rather than megabytes (a
 * fleet captured at once queues hundreds of them). */
static void end_output(gsd_ingest *ig) {
  ZSTD_inBuffer in = {NULL, 0, 0};
  if (compress(ig, &in, ZSTD_e_end) != GS_OK) return;
  ZSTD_freeCCtx(ig->cctx);
  ig->cctx = NULL;
  free(ig->zbuf);
  ig->zbuf = NULL;
  gs_writer_free(ig->writer);
  ig->writer = NULL;
  gs_validator_free(ig->validator);
  ig->validator = NULL;
}

static int on_end(gsd_ingest *ig, const Gcsnap__SnapshotEnd *e, gsd_fault *f) {
  const gsd_ingest_counts *c = &ig->c;
  ig->ended = 1;
  if (ig->check_only) return GS_OK;
  gs_writer_flush(ig->writer);
  gs_validator_finish(ig->validator);
  if (e->text_bytes != c->text_bytes || e->crc32 != c->crc32)
    return fault(f, GS_WIRE_E_CRC, 1,
                 "CRC-32 mismatch: SnapshotEnd says %08x over %llu bytes, the records"
                 " received give %08x over %llu bytes",
                 (unsigned)e->crc32, (unsigned long long)e->text_bytes, (unsigned)c->crc32,
                 (unsigned long long)c->text_bytes);
  if (e->sections != c->sections) return count_mismatch(f, "sections", e->sections, c->sections);
  if (e->types != c->types) return count_mismatch(f, "types", e->types, c->types);
  if (e->objects != c->objects) return count_mismatch(f, "objects", e->objects, c->objects);
  if (e->references != c->references)
    return count_mismatch(f, "references", e->references, c->references);
  if (e->roots != c->roots) return count_mismatch(f, "roots", e->roots, c->roots);
  if (c->errors)
    return fault(f, GS_WIRE_E_INVALID, 0, "invalid snapshot: %llu validation errors; first: %s",
                 (unsigned long long)c->errors, ig->first_error);
  if (ig->write_failed) return fault(f, GS_WIRE_E_STORAGE, 0, "%s", ig->write_error);
  end_output(ig);
  if (ig->write_failed) return fault(f, GS_WIRE_E_STORAGE, 0, "%s", ig->write_error);
  return GS_OK;
}

int gsd_ingest_message(gsd_ingest *ig, const Gcsnap__Envelope *env, gsd_fault *f) {
  uint64_t seq = 0;
  if (ig->ended)
    return fault(f, GS_WIRE_E_PROTOCOL, 1, "%s after SnapshotEnd", body_name(env->body_case));
  if (!seq_of(env, &seq))
    return fault(f, GS_WIRE_E_PROTOCOL, 1, "unexpected %s during a snapshot",
                 body_name(env->body_case));
  if (seq != ig->next_seq)
    return fault(f, GS_WIRE_E_SEQUENCE, 1, "%s has seq %llu where %llu was expected (%s)",
                 body_name(env->body_case), (unsigned long long)seq,
                 (unsigned long long)ig->next_seq, seq > ig->next_seq ? "a gap" : "a repeat");
  ig->next_seq++;
  if (ig->pending && env->body_case != GCSNAP__ENVELOPE__BODY_OBJECTS)
    return fault(f, GS_WIRE_E_PROTOCOL, 1,
                 "object %llx continues, but %s comes next instead of an ObjectBatch",
                 (unsigned long long)ig->pend_id, body_name(env->body_case));
  switch (env->body_case) {
  case GCSNAP__ENVELOPE__BODY_SECTION_BEGIN:
    if (ig->lim.max_sections && ig->c.sections >= ig->lim.max_sections)
      return fault(f, GS_WIRE_E_INVALID, 1,
                   "the snapshot has more than %llu sections, the collector's limit"
                   " (--max-sections)", (unsigned long long)ig->lim.max_sections);
    return emit_named(ig, GS_REC_SECTION, env->section_begin->version, env->section_begin->name,
                      env->section_begin->timestamp, "AppDomain name");
  case GCSNAP__ENVELOPE__BODY_TYPES: return on_types(ig, env->types, f);
  case GCSNAP__ENVELOPE__BODY_OBJECTS: return on_objects(ig, env->objects, f);
  case GCSNAP__ENVELOPE__BODY_ROOTS: return on_roots(ig, env->roots, f);
  case GCSNAP__ENVELOPE__BODY_GENERATIONS:
    /* The text format has no record for them: they go beside the file. */
    ig->c.generations += env->generations->n_ranges;
    if (ig->check_only || add_generations(ig, env->generations) == GS_OK) return GS_OK;
    return fault(f, GS_WIRE_E_STORAGE, 1, "out of memory for the generation ranges");
  case GCSNAP__ENVELOPE__BODY_STATICS: return on_statics(ig, env->statics, f);
  case GCSNAP__ENVELOPE__BODY_SECTION_END:
    return emit_named(ig, GS_REC_END, 0, env->section_end->name, env->section_end->timestamp,
                      "AppDomain name");
  default:
    return on_end(ig, env->snapshot_end, f);
  }
}

void gsd_ingest_set_limits(gsd_ingest *ig, const gsd_ingest_limits *lim) {
  ig->lim = *lim;
  ig->space_check_at = 0;   /* the first write checks */
  if (!ig->lim.max_object_refs) ig->lim.max_object_refs = GS_READER_DEFAULT_MAX_REFS;
  if (ig->writer) gs_writer_set_max_refs(ig->writer, (size_t)ig->lim.max_object_refs);
}

int gsd_ingest_ended(const gsd_ingest *ig) { return ig->ended; }
const gsd_ingest_counts *gsd_ingest_stats(const gsd_ingest *ig) { return &ig->c; }
const char *gsd_ingest_first_error(const gsd_ingest *ig) { return ig->first_error; }
const char *gsd_ingest_write_error(const gsd_ingest *ig) {
  return ig->write_failed ? ig->write_error : NULL;
}

/* ---- life cycle -------------------------------------------------------- */

static int open_output(gsd_ingest *ig, const char *tmp_path, char *err, size_t cap) {
  if (!(ig->tmp_path = malloc(strlen(tmp_path) + 1))) return GS_ENOMEM;
  strcpy(ig->tmp_path, tmp_path);
  ig->fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (ig->fd < 0) {
    snprintf(err, cap, "cannot create '%s': %s", tmp_path, strerror(errno));
    free(ig->tmp_path);
    ig->tmp_path = NULL;
    return GS_EIO;
  }
  ig->cctx = ZSTD_createCCtx();
  ig->zbuf_cap = ZSTD_CStreamOutSize();
  if (!ig->cctx || !(ig->zbuf = malloc(ig->zbuf_cap))) return GS_ENOMEM;
  /* The checksum lets readers tell a damaged file from a short one. */
  ZSTD_CCtx_setParameter(ig->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
  ZSTD_CCtx_setParameter(ig->cctx, ZSTD_c_checksumFlag, 1);
  if (gs_writer_new(&ig->writer, on_text, ig) || gs_validator_new(&ig->validator, on_diag, ig))
    return GS_ENOMEM;
  return GS_OK;
}

int gsd_ingest_new(gsd_ingest **out, const char *tmp_path, char *err, size_t cap) {
  gsd_ingest *ig = calloc(1, sizeof *ig);
  int rc;
  *out = NULL;
  if (!ig) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  ig->fd = -1;
  ig->next_seq = 1;
  ig->check_only = tmp_path == NULL;
  ig->lim.max_object_refs = GS_READER_DEFAULT_MAX_REFS;
  if (tmp_path && (rc = open_output(ig, tmp_path, err, cap)) != GS_OK) {
    if (rc == GS_ENOMEM) snprintf(err, cap, "out of memory");
    gsd_ingest_free(ig);
    return rc;
  }
  *out = ig;
  return GS_OK;
}

void gsd_ingest_free(gsd_ingest *ig) {
  if (!ig) return;
  if (ig->writer) gs_writer_free(ig->writer);
  gs_validator_free(ig->validator);
  if (ig->fd >= 0) close(ig->fd);
  if (ig->tmp_path && !ig->committed) unlink(ig->tmp_path);
  ZSTD_freeCCtx(ig->cctx);
  free(ig->zbuf);
  free(ig->tmp_path);
  free(ig->refs);
  gs_genfile_free(ig->gens);
  free(ig);
}

/* The rename is durable only once the folder that holds the name is. */
static int sync_folder_of(const char *path) {
  char *dir = malloc(strlen(path) + 2), *slash;
  int fd, rc = 0;
  if (!dir) return -1;
  strcpy(dir, path);
  if ((slash = strrchr(dir, '/'))) *slash = '\0';
  else strcpy(dir, ".");
  if ((fd = open(dir, O_RDONLY | O_CLOEXEC)) >= 0) {
    rc = fsync(fd);
    close(fd);
  }
  free(dir);
  return rc;
}

/* Gives tmp its final name, never over a file already there: one whose row
 * a lost catalog took still holds an acknowledged snapshot. link() fails
 * with EEXIST; where the filesystem has no hard links, the check before
 * rename() is enough, since the store is locked to this collector. */
static int place(const char *tmp, const char *final_path) {
  if (link(tmp, final_path) == 0) {
    unlink(tmp);
    return 0;
  }
  if (errno == EEXIST) return -1;
  if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP && errno != EXDEV && errno != EMLINK)
    return -1;
  if (access(final_path, F_OK) == 0) {
    errno = EEXIST;
    return -1;
  }
  return rename(tmp, final_path);
}

int gsd_ingest_committed(const gsd_ingest *ig) { return ig->committed; }

int gsd_ingest_commit(gsd_ingest *ig, const char *final_path, char *err, size_t cap) {
  ZSTD_inBuffer in = {NULL, 0, 0};
  int rc;
  if (ig->write_failed) {
    snprintf(err, cap, "%s", ig->write_error);
    return GS_EIO;
  }
  if (ig->check_only || ig->fd < 0) {
    snprintf(err, cap, "nothing to commit");
    return GS_EINVAL;
  }
  compress(ig, &in, ZSTD_e_end);
  if (!ig->write_failed && fsync(ig->fd) != 0)
    write_failed(ig, errno == ENOSPC || errno == EDQUOT ? "disk full: cannot sync the snapshot file"
                                                        : "cannot sync the snapshot file", strerror(errno));
  rc = ig->fd >= 0 ? close(ig->fd) : 0;
  ig->fd = -1;
  if (!ig->write_failed && rc != 0)
    write_failed(ig, "cannot write the snapshot file", strerror(errno));
  if (!ig->write_failed && place(ig->tmp_path, final_path) != 0)
    write_failed(ig, errno == EEXIST ? "a file is already at the snapshot's name (not overwritten)"
                                     : "cannot rename the snapshot file", strerror(errno));
  if (ig->write_failed) {
    snprintf(err, cap, "%s", ig->write_error);
    return GS_EIO;
  }
  ig->committed = 1;
  {
    char why[300];            /* the snapshot is stored; without it, no breakdown by generation */
    (void)gs_genfile_write(ig->gens, final_path, why, sizeof why);
  }
  sync_folder_of(final_path);
  return GS_OK;
}
