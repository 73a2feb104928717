/* gs_obuf.c - buffered text output into a gs_output (see gs_obuf.h). */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "gs_error.h"
#include "gs_obuf.h"

int gs_obuf_flush(gs_obuf *b) {
  if (!b->err && b->len && gs_output_write(b->out, b->buf, b->len)) b->err = GS_EIO;
  b->len = 0;
  return b->err;
}

void gs_obuf_put(gs_obuf *b, const char *s, size_t n) {
  while (n && !b->err) {
    size_t room = sizeof b->buf - b->len, k = n < room ? n : room;
    memcpy(b->buf + b->len, s, k);
    b->len += k;
    s += k;
    n -= k;
    if (b->len == sizeof b->buf) gs_obuf_flush(b);
    assert(b->len < sizeof b->buf || b->err);
  }
}

void gs_obuf_puts(gs_obuf *b, const char *s) { gs_obuf_put(b, s, strlen(s)); }

void gs_obuf_printf(gs_obuf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) { b->err = GS_EIO; return; }
  gs_obuf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}
