/* gs_sink_file.c - the record writer as a sink: a dump file or standard output.
 *
 * A regular file is never written in place. Records go to PATH.tmp.PID,
 * created exclusively in the destination's folder (so the rename stays on
 * one file system), which is synced, closed and renamed over PATH only on
 * commit; on any failure, and on an interrupt, the temporary file is
 * removed and PATH is left as it was. A device or pipe given as PATH (the
 * null device, a FIFO) cannot be replaced by a rename and is written
 * directly. Generation ranges, which the record format has no record for,
 * go to PATH.gens.json (gs_genfile.h), written once the dump has its name;
 * a side file left from an earlier dump is removed before the rename. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_genfile.h"
#include "gs_port.h"
#include "gs_sink.h"
#include "gs_writer.h"

#define SINK_FORMAT_VERSION 2

typedef struct file_sink {
  gs_sink base;
  gs_port_file *f;
  gs_writer *w;
  char *path;               /* NULL for standard output */
  char *tmp_path;           /* NULL when written directly */
  gs_genfile *gens;         /* the generation ranges, for PATH.gens.json */
  uint64_t sections;
  int committed;
  int discarding;           /* freeing after a failure: write nothing more */
} file_sink;

static int sink_fail(file_sink *s, int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->base.error, sizeof s->base.error, fmt, ap);
  va_end(ap);
  return err;
}

static const char *sink_target(const file_sink *s) {
  if (!s->path) return "standard output";
  return s->tmp_path ? s->tmp_path : s->path;
}

static int sink_write(void *ctx, const void *buf, size_t len) {
  file_sink *s = ctx;
  int err;
  if (s->discarding) return GS_OK;
  if ((err = gs_port_file_write(s->f, buf, len)))
    return sink_fail(s, err, "cannot write '%s': %s", sink_target(s), gs_port_error_text());
  s->base.bytes += len;
  return GS_OK;
}

/* ---- records ---- */

static int sink_section(gs_sink *base, const char *name, size_t len, uint64_t ts) {
  ((file_sink *)base)->sections++;
  return gs_writer_section(((file_sink *)base)->w, SINK_FORMAT_VERSION, name, len, ts);
}

static int sink_type(gs_sink *base, uint64_t id, const char *name, size_t len) {
  return gs_writer_type(((file_sink *)base)->w, id, name, len);
}

static int sink_object(gs_sink *base, uint64_t id, uint64_t type, uint64_t size,
                       const uint64_t *refs, size_t nrefs) {
  return gs_writer_object(((file_sink *)base)->w, id, type, size, refs, nrefs);
}

static int sink_object_begin(gs_sink *base, uint64_t id, uint64_t type, uint64_t size) {
  return gs_writer_object_begin(((file_sink *)base)->w, id, type, size);
}

static int sink_object_refs(gs_sink *base, const uint64_t *refs, size_t nrefs) {
  return gs_writer_refs(((file_sink *)base)->w, refs, nrefs);
}

static int sink_object_end(gs_sink *base) { return gs_writer_object_end(((file_sink *)base)->w); }

static int sink_root(gs_sink *base, uint64_t id, unsigned kind, unsigned flags,
                     uint64_t container) {
  return gs_writer_root(((file_sink *)base)->w, id, kind, flags, container);
}

/* Kept for the side file; standard output and devices have none. */
static int sink_generation(gs_sink *base, unsigned generation, uint64_t start, uint64_t used,
                           uint64_t reserved) {
  file_sink *s = (file_sink *)base;
  if (!s->tmp_path) return GS_OK;
  if (gs_genfile_add(&s->gens, s->sections ? s->sections - 1 : 0, generation, start, used, reserved))
    return sink_fail(s, GS_ENOMEM, "out of memory");
  return GS_OK;
}

static int sink_section_end(gs_sink *base, const char *name, size_t len, uint64_t ts) {
  return gs_writer_end(((file_sink *)base)->w, name, len, ts);
}

/* Kept for the side file, as generation ranges are. */
static int sink_static_name(gs_sink *base, uint64_t object, const char *name, size_t len) {
  file_sink *s = (file_sink *)base;
  if (!s->tmp_path) return GS_OK;
  if (gs_genfile_add_static(&s->gens, s->sections ? s->sections - 1 : 0, object, name, len))
    return sink_fail(s, GS_ENOMEM, "out of memory");
  return GS_OK;
}

/* ---- commit and discard ---- */

static int sink_commit(gs_sink *base) {
  file_sink *s = (file_sink *)base;
  int err;
  if ((err = gs_writer_flush(s->w))) return err;
  if (!s->tmp_path) {
    s->committed = 1;
    return GS_OK;
  }
  /* Sync before the rename: after a crash PATH holds either the old file
   * or the whole new one, never a prefix. */
  if ((err = gs_port_file_sync(s->f)))
    return sink_fail(s, err, "cannot write '%s': %s", s->tmp_path, gs_port_error_text());
  err = gs_port_file_close(s->f);
  s->f = NULL;
  if (err) return sink_fail(s, err, "cannot write '%s': %s", s->tmp_path, gs_port_error_text());
  if ((err = gs_genfile_write(NULL, s->path, s->base.error, sizeof s->base.error))) return err;
  if ((err = gs_port_rename(s->tmp_path, s->path)))
    return sink_fail(s, err, "cannot rename '%s' to '%s': %s", s->tmp_path, s->path,
                     gs_port_error_text());
  s->committed = 1;
  gs_port_remove_on_signal(NULL);
  return s->gens ? gs_genfile_write(s->gens, s->path, s->base.error, sizeof s->base.error) : GS_OK;
}

static void sink_free(gs_sink *base) {
  file_sink *s = (file_sink *)base;
  if (!s) return;
  s->discarding = !s->committed;
  gs_writer_free(s->w);
  gs_port_file_close(s->f);
  if (s->tmp_path && !s->committed) {
    gs_port_remove(s->tmp_path);
    gs_port_remove_on_signal(NULL);
  }
  gs_genfile_free(s->gens);
  free(s->path);
  free(s->tmp_path);
  free(s);
}

static const gs_sink_ops file_sink_ops = {
  sink_section, sink_type, sink_object, sink_root, sink_generation, sink_section_end,
  sink_commit, sink_free, sink_static_name, sink_object_begin, sink_object_refs, sink_object_end
};

/* ---- opening ---- */

static char *sink_strdup(const char *s) {
  char *p = malloc(strlen(s) + 1);
  if (p) strcpy(p, s);
  return p;
}

static int sink_open_temp(file_sink *s, const char *path) {
  size_t cap = strlen(path) + 32;
  int err;
  if (!(s->path = sink_strdup(path)) || !(s->tmp_path = malloc(cap)))
    return sink_fail(s, GS_ENOMEM, "out of memory");
  snprintf(s->tmp_path, cap, "%s.tmp.%lu", path, gs_port_pid());
  if ((err = gs_port_file_create(&s->f, s->tmp_path))) {
    sink_fail(s, err, "cannot create '%s': %s", s->tmp_path, gs_port_error_text());
    free(s->tmp_path);
    s->tmp_path = NULL;             /* not ours: never remove it */
    return err;
  }
  gs_port_remove_on_signal(s->tmp_path);
  return GS_OK;
}

static int sink_open(file_sink *s, const char *path) {
  int err;
  if (strcmp(path, "-") == 0) {
    if ((err = gs_port_file_stdout(&s->f)))
      return sink_fail(s, err, "cannot write to standard output: %s", gs_port_error_text());
    return GS_OK;
  }
  switch (gs_port_path_kind_of(path)) {
  case GS_PORT_FOLDER:
    return sink_fail(s, GS_EINVAL, "'%s' is a folder", path);
  case GS_PORT_OTHER:
    if (!(s->path = sink_strdup(path))) return sink_fail(s, GS_ENOMEM, "out of memory");
    if ((err = gs_port_file_open_write(&s->f, path)))
      return sink_fail(s, err, "cannot open '%s': %s", path, gs_port_error_text());
    return GS_OK;
  default:
    return sink_open_temp(s, path);
  }
}

int gs_sink_file_new(gs_sink **out, const char *path, char *err, size_t errcap) {
  file_sink *s = calloc(1, sizeof *s);
  int rc;
  *out = NULL;
  if (!s) {
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  s->base.ops = &file_sink_ops;
  rc = sink_open(s, path);
  if (rc == GS_OK && (rc = gs_writer_new(&s->w, sink_write, s)))
    sink_fail(s, rc, "out of memory");
  if (rc) {
    snprintf(err, errcap, "%s", s->base.error);
    sink_free(&s->base);
    return rc;
  }
  gs_writer_set_max_refs(s->w, SIZE_MAX);   /* the walker holds objects to its --max-refs */
  *out = &s->base;
  return GS_OK;
}
