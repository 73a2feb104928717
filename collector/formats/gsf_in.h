/* gsf_in.h - the byte input of the binary readers: a buffered gs_read_fn
 * with the offset of every byte, big-endian numbers, and the first error.
 *
 * Every getter returns GS_OK or an error code and, on error, keeps a message
 * naming the byte offset; an input that ends early is reported as truncated
 * ("the file ends at byte N inside ..."). Memory is one fixed block. */
#ifndef GSF_IN_H
#define GSF_IN_H

#include <stddef.h>
#include <stdint.h>
#include "gs_reader.h"

#define GSF_IN_BLOCK (256u << 10)

typedef struct gsf_in {
  gs_read_fn fn;
  void *ctx;
  uint64_t base;            /* offset of buf[0] in the input */
  size_t pos, end;
  int eof;
  char *err;
  size_t errcap;
  unsigned char buf[GSF_IN_BLOCK];
} gsf_in;

void gsf_in_init(gsf_in *in, gs_read_fn fn, void *ctx, char *err, size_t cap);
static inline uint64_t gsf_in_offset(const gsf_in *in) { return in->base + in->pos; }

/* what names the thing being read, for the truncation message. */
int gsf_in_bytes(gsf_in *in, void *out, size_t n, const char *what);
int gsf_in_skip(gsf_in *in, uint64_t n, const char *what);
int gsf_in_u1(gsf_in *in, uint32_t *v, const char *what);
int gsf_in_u2(gsf_in *in, uint32_t *v, const char *what);
int gsf_in_u4(gsf_in *in, uint32_t *v, const char *what);
int gsf_in_u8(gsf_in *in, uint64_t *v, const char *what);
/* A big-endian unsigned number of n bytes (1, 2, 4 or 8). */
int gsf_in_uint(gsf_in *in, unsigned n, uint64_t *v, const char *what);
/* Sets *at_end when no byte is left (an error of the source is returned). */
int gsf_in_at_end(gsf_in *in, int *at_end);

/* Formats a malformed-input message at offset: "byte N: ..."; GS_EFORMAT. */
int gsf_in_fail(gsf_in *in, uint64_t offset, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 3, 4)))
#endif
  ;

#endif
