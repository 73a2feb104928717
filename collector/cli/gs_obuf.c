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

/* A heap snapshot is little else than numbers and commas: printf and
 * copies of a few bytes took most of the time of writing one. */
void gs_obuf_u64(gs_obuf *b, uint64_t v) {
  char tmp[20], *p = tmp + sizeof tmp, *to;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  if (b->err || sizeof b->buf - b->len <= sizeof tmp) {
    gs_obuf_put(b, p, (size_t)(tmp + sizeof tmp - p));
    return;
  }
  for (to = b->buf + b->len; p < tmp + sizeof tmp;) *to++ = *p++;
  b->len = (size_t)(to - b->buf);
}

void gs_obuf_char(gs_obuf *b, char c) {
  if (b->err || b->len + 1 == sizeof b->buf) gs_obuf_put(b, &c, 1);
  else b->buf[b->len++] = c;
}

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
