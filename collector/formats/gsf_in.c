/* gsf_in.c - buffered big-endian input with byte offsets, for the binary
 * heap file readers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "gs_error.h"
#include "gsf_in.h"

void gsf_in_init(gsf_in *in, gs_read_fn fn, void *ctx, char *err, size_t cap) {
  in->fn = fn;
  in->ctx = ctx;
  in->base = 0;
  in->pos = in->end = 0;
  in->eof = 0;
  in->err = err;
  in->errcap = cap;
  if (cap) err[0] = '\0';
}

int gsf_in_fail(gsf_in *in, uint64_t offset, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(in->err, in->errcap, "byte %llu: ", (unsigned long long)offset);
  if (n < 0 || (size_t)n >= in->errcap) return GS_EFORMAT;
  va_start(ap, fmt);
  vsnprintf(in->err + n, in->errcap - (size_t)n, fmt, ap);
  va_end(ap);
  return GS_EFORMAT;
}

/* Moves what is left to the front and reads one more block. */
static int refill(gsf_in *in) {
  size_t left = in->end - in->pos, got = 0;
  int rc;
  if (in->eof) return GS_OK;
  memmove(in->buf, in->buf + in->pos, left);
  in->base += in->pos;
  in->pos = 0;
  in->end = left;
  rc = in->fn(in->ctx, in->buf + left, sizeof in->buf - left, &got);
  if (rc) {
    snprintf(in->err, in->errcap, "read error at byte %llu",
             (unsigned long long)in->base + left);
    return rc;
  }
  if (got == 0) in->eof = 1;
  in->end += got;
  return GS_OK;
}

static int ended(gsf_in *in, const char *what) {
  snprintf(in->err, in->errcap, "the file ends at byte %llu inside %s (truncated file?)",
           (unsigned long long)in->base + in->end, what);
  return GS_EFORMAT;
}

/* Makes n <= GSF_IN_BLOCK bytes available at buf + pos. */
static int need(gsf_in *in, size_t n, const char *what) {
  while (in->end - in->pos < n) {
    int rc = refill(in);
    if (rc) return rc;
    if (in->eof && in->end - in->pos < n) return ended(in, what);
  }
  return GS_OK;
}

int gsf_in_bytes(gsf_in *in, void *out, size_t n, const char *what) {
  unsigned char *p = out;
  while (n) {
    size_t chunk = n < GSF_IN_BLOCK ? n : GSF_IN_BLOCK;
    int rc = need(in, chunk, what);
    if (rc) return rc;
    memcpy(p, in->buf + in->pos, chunk);
    in->pos += chunk;
    p += chunk;
    n -= chunk;
  }
  return GS_OK;
}

int gsf_in_skip(gsf_in *in, uint64_t n, const char *what) {
  while (n) {
    size_t avail = in->end - in->pos;
    int rc;
    if (avail) {
      size_t chunk = n < avail ? (size_t)n : avail;
      in->pos += chunk;
      n -= chunk;
      continue;
    }
    if ((rc = refill(in))) return rc;
    if (in->eof && in->end == in->pos) return ended(in, what);
  }
  return GS_OK;
}

int gsf_in_uint(gsf_in *in, unsigned n, uint64_t *v, const char *what) {
  uint64_t x = 0;
  unsigned i;
  int rc = need(in, n, what);
  if (rc) return rc;
  for (i = 0; i < n; i++) x = (x << 8) | in->buf[in->pos + i];
  in->pos += n;
  *v = x;
  return GS_OK;
}

static int get32(gsf_in *in, unsigned n, uint32_t *v, const char *what) {
  uint64_t x = 0;
  int rc = gsf_in_uint(in, n, &x, what);
  *v = (uint32_t)x;
  return rc;
}

int gsf_in_u1(gsf_in *in, uint32_t *v, const char *what) { return get32(in, 1, v, what); }
int gsf_in_u2(gsf_in *in, uint32_t *v, const char *what) { return get32(in, 2, v, what); }
int gsf_in_u4(gsf_in *in, uint32_t *v, const char *what) { return get32(in, 4, v, what); }
int gsf_in_u8(gsf_in *in, uint64_t *v, const char *what) { return gsf_in_uint(in, 8, v, what); }

int gsf_in_at_end(gsf_in *in, int *at_end) {
  int rc = GS_OK;
  if (in->pos == in->end) rc = refill(in);
  *at_end = in->pos == in->end;
  return rc;
}
