/* gs_check.c - a stored snapshot checked against its catalog row while it
 * streams (see gs_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>
#include "gs_check.h"
#include "gs_crc32.h"
#include "gs_error.h"

#define OUT_CHUNK 65536

struct gs_check {
  gs_check_expect want;
  int compressed, failed;
  uint64_t file_bytes, text_bytes;
  uint32_t crc32;
  size_t pending;            /* zstd's hint: nonzero inside a frame */
  ZSTD_DCtx *dctx;
  char error[200];
  unsigned char out[OUT_CHUNK];
};

int gs_check_new(gs_check **out, const gs_check_expect *e, int compressed) {
  gs_check *c = calloc(1, sizeof *c);
  if (!c || (compressed && !(c->dctx = ZSTD_createDCtx()))) {
    free(c);
    return GS_ENOMEM;
  }
  c->want = *e;
  c->compressed = compressed;
  *out = c;
  return GS_OK;
}

void gs_check_free(gs_check *c) {
  if (!c) return;
  ZSTD_freeDCtx(c->dctx);
  free(c);
}

static int fail(gs_check *c, const char *what, unsigned long long got, unsigned long long want) {
  if (!c->failed++)
    snprintf(c->error, sizeof c->error, "%s %llu bytes where the catalog says %llu", what, got, want);
  return GS_EFORMAT;
}

static void text(gs_check *c, const void *buf, size_t len) {
  c->text_bytes += len;
  c->crc32 = gs_crc32(c->crc32, buf, len);
}

int gs_check_feed(gs_check *c, const void *buf, size_t len) {
  ZSTD_inBuffer in = {buf, len, 0};
  if (c->failed) return GS_EFORMAT;
  if (!c->compressed) {
    text(c, buf, len);
    return GS_OK;
  }
  c->file_bytes += len;
  while (in.pos < in.size) {
    ZSTD_outBuffer o = {c->out, sizeof c->out, 0};
    size_t rc = ZSTD_decompressStream(c->dctx, &o, &in);
    if (ZSTD_isError(rc)) {
      c->failed = 1;
      snprintf(c->error, sizeof c->error, "not the stored zstd data: %s", ZSTD_getErrorName(rc));
      return GS_EFORMAT;
    }
    text(c, c->out, o.pos);
    c->pending = rc;
  }
  return GS_OK;
}

int gs_check_finish(gs_check *c) {
  if (c->failed) return GS_EFORMAT;
  if (c->compressed && c->file_bytes != c->want.file_bytes)
    return fail(c, "a file of", c->file_bytes, c->want.file_bytes);
  if (c->compressed && c->pending) {
    c->failed = 1;
    snprintf(c->error, sizeof c->error, "the zstd data ends inside a frame");
    return GS_EFORMAT;
  }
  if (c->text_bytes != c->want.text_bytes) return fail(c, "text of", c->text_bytes, c->want.text_bytes);
  if (c->crc32 != c->want.crc32) {
    c->failed = 1;
    snprintf(c->error, sizeof c->error, "CRC-32 of the text %08x where the catalog says %08x",
             (unsigned)c->crc32, (unsigned)c->want.crc32);
    return GS_EFORMAT;
  }
  return GS_OK;
}

const char *gs_check_error(const gs_check *c) { return c->error; }
