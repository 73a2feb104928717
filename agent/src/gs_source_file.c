/* gs_source_file.c - the file source: re-emits an existing dump.
 *
 * Reads an uncompressed .gclog through the streaming record reader (the
 * agent has no zstd) and hands every record on, timestamps included, so a
 * canonical dump comes out byte for byte as it went in; the format version
 * written is always 2. It stops at the first malformed line, or at a broken
 * section structure, with "PATH:LINE: message". Memory is the reader's line
 * and the open section's name. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_reader.h"
#include "gs_sources.h"

const char gs_source_file_help[] =
  "  file:PATH     re-emits the dump in PATH (uncompressed .gclog; to replay a\n"
  "                .gclog.zst, decompress it first), timestamps included. Stops\n"
  "                at the first malformed line with PATH:LINE and the reason.\n";

typedef struct file_source {
  gs_source base;
  char *path;
  /* during a walk */
  const gs_heap_visitor *v;
  gs_reader *reader;
  char *name;                   /* the open section's name, NUL-terminated */
  uint64_t name_line;           /* its a record's line; 0 when none is open */
  uint64_t sections;
} file_source;

/* Describes a failure as "PATH:LINE: ..." (or "PATH: ..." when line is 0). */
static int file_fail(file_source *fs, int err, uint64_t line, const char *fmt, ...) {
  char *e = fs->base.error;
  size_t cap = sizeof fs->base.error, n;
  va_list ap;
  if (line) snprintf(e, cap, "%s:%llu: ", fs->path, (unsigned long long)line);
  else snprintf(e, cap, "%s: ", fs->path);
  n = strlen(e);
  va_start(ap, fmt);
  vsnprintf(e + n, cap - n, fmt, ap);
  va_end(ap);
  return err;
}

static int file_read(void *ctx, void *buf, size_t cap, size_t *got) {
  return gs_port_file_read(ctx, buf, cap, got);
}

/* ---- sections ---- */

/* The record's own time goes on; the first form of the format has none: 0. */
static int file_timestamp(const gs_heap_visitor *v, const gs_record *rec) {
  if (!v->timestamp) return GS_OK;
  return v->timestamp(v->ctx, rec->has_timestamp ? rec->timestamp : 0);
}

static int file_section(file_source *fs, const gs_record *rec) {
  const gs_heap_visitor *v = fs->v;
  char *name;
  int err;
  if (fs->name_line)
    return file_fail(fs, GS_EFORMAT, rec->line,
                     "section starts inside section '%.80s' of line %llu", fs->name,
                     (unsigned long long)fs->name_line);
  if (!(name = realloc(fs->name, rec->name_len + 1)))
    return file_fail(fs, GS_ENOMEM, rec->line, "out of memory");
  memcpy(name, rec->name, rec->name_len);
  name[rec->name_len] = '\0';
  fs->name = name;
  fs->name_line = rec->line;
  fs->sections++;
  if ((err = file_timestamp(v, rec))) return err;
  return v->section(v->ctx, rec->name, rec->name_len);
}

static int file_section_end(file_source *fs, const gs_record *rec) {
  const gs_heap_visitor *v = fs->v;
  int err;
  if (strlen(fs->name) != rec->name_len || memcmp(fs->name, rec->name, rec->name_len) != 0)
    return file_fail(fs, GS_EFORMAT, rec->line,
                     "section end names '%.*s', not '%.80s' of line %llu",
                     (int)(rec->name_len < 80 ? rec->name_len : 80), rec->name, fs->name,
                     (unsigned long long)fs->name_line);
  fs->name_line = 0;
  if ((err = file_timestamp(v, rec))) return err;
  return v->section_end(v->ctx);
}

/* ---- records ---- */

static int file_record(file_source *fs, const gs_record *rec) {
  const gs_heap_visitor *v = fs->v;
  if (rec->kind == GS_REC_SECTION) return file_section(fs, rec);
  if (!fs->name_line) return file_fail(fs, GS_EFORMAT, rec->line, "record outside a section");
  switch (rec->kind) {
  case GS_REC_TYPE: return v->type(v->ctx, rec->id, rec->name, rec->name_len);
  case GS_REC_OBJECT:
    return v->object(v->ctx, rec->id, rec->type, rec->size, rec->refs, rec->nrefs);
  case GS_REC_ROOT:
    return v->root(v->ctx, rec->id, rec->root_kind, rec->root_flags,
                   rec->has_container ? rec->type : 0);
  case GS_REC_END: return file_section_end(fs, rec);
  default: return file_fail(fs, GS_EFORMAT, rec->line, "unknown record");
  }
}

static int file_reader_error(file_source *fs, int err) {
  const gs_diag *d = gs_reader_diag(fs->reader);
  if (err == GS_EIO) return file_fail(fs, err, 0, "cannot read: %s", gs_port_error_text());
  if (err != GS_EFORMAT) return file_fail(fs, err, 0, "%s", gs_strerror(err));
  return file_fail(fs, err, d->line, "%s [%s]%s", d->message, gs_diag_name(d->code),
                   d->code == GS_D_TOO_MANY_REFS ? "; --max-refs N takes more" : "");
}

static int file_records(file_source *fs) {
  gs_record rec;
  int err;
  while ((err = gs_reader_next(fs->reader, &rec)) == GS_OK)
    if ((err = file_record(fs, &rec))) return err;
  if (err != GS_EOF) return file_reader_error(fs, err);
  if (fs->name_line)
    return file_fail(fs, GS_EFORMAT, 0, "input ends inside section '%.80s' of line %llu",
                     fs->name, (unsigned long long)fs->name_line);
  if (fs->sections == 0) return file_fail(fs, GS_EFORMAT, 0, "no section in the input");
  return GS_OK;
}

static int file_walk(gs_source *src, const gs_heap_visitor *v) {
  file_source *fs = (file_source *)src;
  gs_port_file *f;
  int err;
  if ((err = gs_port_file_open(&f, fs->path)))
    return file_fail(fs, err, 0, "cannot open: %s", gs_port_error_text());
  fs->v = v;
  fs->name_line = 0;
  fs->sections = 0;
  if ((err = gs_reader_new(&fs->reader, file_read, f))) {
    err = file_fail(fs, err, 0, "out of memory");
  } else {
    gs_reader_set_max_refs(fs->reader, src->max_refs);
    err = file_records(fs);
  }
  gs_reader_free(fs->reader);
  fs->reader = NULL;
  gs_port_file_close(f);
  free(fs->name);
  fs->name = NULL;
  fs->v = NULL;
  return err;
}

static void file_free(gs_source *src) {
  file_source *fs = (file_source *)src;
  if (!fs) return;
  free(fs->path);
  free(fs);
}

static const gs_source_ops file_ops = {"file", file_walk, file_free, NULL, NULL, NULL, NULL};

int gs_source_file_new(gs_source **out, const char *options, char *err, size_t errcap) {
  file_source *fs;
  gs_port_file *probe;
  *out = NULL;
  if (!options || !*options) {
    snprintf(err, errcap, "a path is needed: file:PATH");
    return GS_EINVAL;
  }
  /* fail before the capture starts, not after the output was created */
  if (gs_port_file_open(&probe, options)) {
    snprintf(err, errcap, "cannot open '%s': %s", options, gs_port_error_text());
    return GS_EIO;
  }
  gs_port_file_close(probe);
  if (!(fs = calloc(1, sizeof *fs)) || !(fs->path = malloc(strlen(options) + 1))) {
    free(fs);
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  strcpy(fs->path, options);
  fs->base.ops = &file_ops;
  fs->base.max_refs = GS_READER_DEFAULT_MAX_REFS;   /* until a walker sets it */
  fs->base.stable_ids = 0;      /* a dump's IDs are whatever its runtime gave */
  *out = &fs->base;
  return GS_OK;
}
