/* gs_output.c - output file written atomically, optionally zstd-compressed.
 *
 * The files are the port layer's (gs_port.h), as the agent's: the
 * temporary file is created only when no file or link has its name, and
 * is removed if the process is interrupted (gs_port_remove_on_signal), so
 * an interrupted convert never leaves a partial dump next to the
 * destination. A device or pipe (the null device, a FIFO) cannot be
 * replaced by a rename, which would put a file in its place: it is
 * written directly, as standard output is. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include "gs_error.h"
#include "gs_output.h"
#include "gs_port.h"

#define ZSTD_LEVEL 3

struct gs_output {
  gs_port_file *f;
  int is_stdout;
  int direct;           /* a device or pipe, written in place */
  int committed;
  int discarding;
  char *path;           /* destination */
  char *tmp_path;       /* NULL for stdout */
  ZSTD_CCtx *cctx;      /* NULL when not compressing */
  unsigned char *zbuf;
  size_t zbuf_cap;
  char error[256];
};

/* Whether an interrupted run removes its temporary file on the way out. */
static int use_signals = 1;

void gs_output_keep_signals(void) { use_signals = 0; }

static int fail(gs_output *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->error, sizeof o->error, fmt, ap);
  va_end(ap);
  return GS_EIO;
}

/* ---- raw writes ------------------------------------------------------ */

static int write_fd(gs_output *o, const void *buf, size_t len) {
  if (gs_port_file_write(o->f, buf, len) == GS_OK) return GS_OK;
  return fail(o, "cannot write '%s': %s",
              o->is_stdout ? "<stdout>" : o->direct ? o->path : o->tmp_path, gs_port_error_text());
}

/* Feeds zstd until it has taken all of in (or, for ZSTD_e_end, until the
 * frame is complete), writing compressed blocks as they come. */
static int compress(gs_output *o, ZSTD_inBuffer *in, ZSTD_EndDirective mode) {
  for (;;) {
    ZSTD_outBuffer out = {o->zbuf, o->zbuf_cap, 0};
    size_t left = ZSTD_compressStream2(o->cctx, &out, in, mode);
    int err;
    if (ZSTD_isError(left))
      return fail(o, "zstd compression failed: %s", ZSTD_getErrorName(left));
    if ((err = write_fd(o, o->zbuf, out.pos))) return err;
    if (mode == ZSTD_e_end ? left == 0 : in->pos == in->size) return GS_OK;
  }
}

int gs_output_write(void *ctx, const void *buf, size_t len) {
  gs_output *o = ctx;
  ZSTD_inBuffer in = {buf, len, 0};
  if (o->discarding) return GS_OK;
  if (!o->cctx) return write_fd(o, buf, len);
  return compress(o, &in, ZSTD_e_continue);
}

/* ---- open / commit --------------------------------------------------- */

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int start_zstd(gs_output *o) {
  o->cctx = ZSTD_createCCtx();
  o->zbuf_cap = ZSTD_CStreamOutSize();
  o->zbuf = malloc(o->zbuf_cap);
  if (!o->cctx || !o->zbuf) return GS_ENOMEM;
  /* The checksum lets readers tell a damaged file from a short one. */
  ZSTD_CCtx_setParameter(o->cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
  ZSTD_CCtx_setParameter(o->cctx, ZSTD_c_checksumFlag, 1);
  return GS_OK;
}

static int create_tmp(gs_output *o, const char *path, char *err, size_t cap) {
  size_t n = strlen(path) + 32;
  if (!(o->tmp_path = malloc(n))) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  snprintf(o->tmp_path, n, "%s.tmp.%lu", path, gs_port_pid());
  if (gs_port_file_create(&o->f, o->tmp_path) != GS_OK) {
    snprintf(err, cap, "cannot create '%s': %s", o->tmp_path, gs_port_error_text());
    free(o->tmp_path);
    o->tmp_path = NULL;
    return GS_EIO;
  }
  if (use_signals) gs_port_remove_on_signal(o->tmp_path);
  return GS_OK;
}

static int open_direct(gs_output *o, const char *path, char *err, size_t cap) {
  o->direct = 1;
  if (gs_port_file_open_write(&o->f, path) == GS_OK) return GS_OK;
  snprintf(err, cap, "cannot open '%s': %s", path, gs_port_error_text());
  return GS_EIO;
}

/* The destination by what is there: a folder is refused before anything
 * is written. */
static int open_path(gs_output *o, const char *path, char *err, size_t cap) {
  if (!(o->path = malloc(strlen(path) + 1))) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  strcpy(o->path, path);
  switch (gs_port_path_kind_of(path)) {
  case GS_PORT_FOLDER: snprintf(err, cap, "'%s' is a folder", path); return GS_EIO;
  case GS_PORT_OTHER: return open_direct(o, path, err, cap);
  default: return create_tmp(o, path, err, cap);
  }
}

static int open_output(gs_output **out, const char *path, int by_name, char *err,
                       size_t cap) {
  gs_output *o = calloc(1, sizeof *o);
  int rc = GS_OK;
  *out = NULL;
  if (!o) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  if (strcmp(path, "-") == 0) {
    o->is_stdout = 1;
    if (gs_port_file_stdout(&o->f) != GS_OK) { snprintf(err, cap, "out of memory"); rc = GS_ENOMEM; }
  } else {
    rc = open_path(o, path, err, cap);
    if (rc == GS_OK && by_name && ends_with(path, ".zst") && (rc = start_zstd(o)) != GS_OK)
      snprintf(err, cap, "out of memory");
  }
  if (rc != GS_OK) { gs_output_close(o); return rc; }
  *out = o;
  return GS_OK;
}

int gs_output_open(gs_output **out, const char *path, char *err, size_t cap) {
  return open_output(out, path, 1, err, cap);
}

int gs_output_open_raw(gs_output **out, const char *path, char *err, size_t cap) {
  return open_output(out, path, 0, err, cap);
}

void gs_output_discard(gs_output *o) { o->discarding = 1; }

int gs_output_commit(gs_output *o) {
  int err;
  if (o->cctx) {
    ZSTD_inBuffer in = {NULL, 0, 0};
    if ((err = compress(o, &in, ZSTD_e_end))) return err;
  }
  if (o->is_stdout) { o->committed = 1; return GS_OK; }
  if (o->direct) {
    err = gs_port_file_close(o->f);
    o->f = NULL;
    if (err != GS_OK) return fail(o, "cannot write '%s': %s", o->path, gs_port_error_text());
    o->committed = 1;
    return GS_OK;
  }
  /* Sync before the rename: after a crash the destination holds either the
   * old file or the whole new one, never a prefix. */
  if (gs_port_file_sync(o->f) != GS_OK)
    return fail(o, "cannot write '%s': %s", o->tmp_path, gs_port_error_text());
  err = gs_port_file_close(o->f);
  o->f = NULL;
  if (err != GS_OK) return fail(o, "cannot write '%s': %s", o->tmp_path, gs_port_error_text());
  if (gs_port_rename(o->tmp_path, o->path) != GS_OK)
    return fail(o, "cannot rename '%s' to '%s': %s", o->tmp_path, o->path,
                gs_port_error_text());
  o->committed = 1;
  return GS_OK;
}

void gs_output_close(gs_output *o) {
  if (!o) return;
  gs_port_file_close(o->f);
  if (o->tmp_path) {
    if (!o->committed) gs_port_remove(o->tmp_path);
    if (use_signals) gs_port_remove_on_signal(NULL);
  }
  ZSTD_freeCCtx(o->cctx);
  free(o->zbuf);
  free(o->path);
  free(o->tmp_path);
  free(o);
}

const char *gs_output_error(const gs_output *o) { return o->error; }
