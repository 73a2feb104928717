/* gs_obuf.h - text written through a buffer into a gs_output.
 *
 * For the commands that print large generated files (heap snapshots, HTML
 * reports) piece by piece: small writes are gathered into 64 KiB blocks,
 * and the first failure is kept and stops later writes, so callers check
 * once at the end. */
#ifndef GS_OBUF_H
#define GS_OBUF_H

#include <stddef.h>
#include <stdint.h>
#include "gs_output.h"

typedef struct gs_obuf {
  gs_output *out;
  int err;                 /* first failure: GS_EIO */
  size_t len;
  char buf[1 << 16];
} gs_obuf;

void gs_obuf_put(gs_obuf *b, const char *s, size_t n);
void gs_obuf_puts(gs_obuf *b, const char *s);
void gs_obuf_printf(gs_obuf *b, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
/* The decimal digits of v; one character. */
void gs_obuf_u64(gs_obuf *b, uint64_t v);
void gs_obuf_char(gs_obuf *b, char c);
/* Writes what is buffered; returns the first failure, or GS_OK. */
int gs_obuf_flush(gs_obuf *b);

#endif
