/* gs_reader_int.h - the reader's state, shared by its four files.
 *
 * gs_reader.c parses, gs_reader_fast.c takes the common object lines
 * faster; gs_reader_ahead.c runs that parser on worker threads over
 * blocks of the input, which gs_reader_block.c reads and parses, each
 * through a reader of its own that points into the block. Internal to the
 * library. */
#ifndef GS_READER_INT_H
#define GS_READER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gs_reader.h"

/* Readable bytes kept after the window, so the fast path can load whole
 * words past the end of a line. */
#define GS_READER_PAD 24

/* The fast path for object lines (gs_reader_fast.c) is built with GCC or
 * Clang on little-endian processors. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GS_FAST_PATH 1
#else
#define GS_FAST_PATH 0
#endif

struct gs_reader {
  gs_read_fn fn;
  void *ctx;
  FILE *file;
  int fd;
  void *owned_ctx;      /* source state the reader frees */
  char *buf;            /* window; one byte past end is always writable */
  size_t cap, pos, end;
  size_t complete;      /* bytes of the window up to its last newline */
  size_t scanned;       /* bytes after pos known to hold no newline */
  int fast;             /* try the fast path for object lines */
  int eof, skip_line;
  int io_error;
  uint64_t line;        /* number of the line last returned */
  uint64_t base;        /* stream offset of buf[0] */
  size_t max_line;
  size_t max_refs;
  uint64_t size_hint;
  gs_read_at_fn read_at; /* reads the source again, when it can */
  void *read_at_ctx;
  uint64_t *refs;
  size_t refs_cap;
  gs_diag diag;
  struct ahead *ahead;  /* parsing on worker threads, when started */
};

/* Parses the object line at r->pos the fast way: 1 with *rec filled, or 0
 * when the general parser must take the line. */
int gs_reader_fast_object_(gs_reader *r, gs_record *rec);
/* Parses the references of a piece of a long object line the fast way:
 * the numbers between the blank at p and the end at e (a blank, or the
 * line's end), after rec->nrefs. 1 when done, 0 when the general parser
 * must take the piece. */
int gs_reader_fast_refs_(gs_reader *r, char *p, char *e, gs_record *rec);
/* Parses the references in [p, e) that end an object line whose start
 * another block held (p a blank, the byte at e not a hex digit) into
 * r->refs: GS_OK, or an error with rec->nrefs those parsed before it. */
int gs_reader_parse_rest_(gs_reader *r, char *p, char *e, gs_record *rec);
/* Fails with the diagnostic of an object over r->max_refs references. */
int gs_reader_too_many_refs_(gs_reader *r);
/* Whether the n bytes at p start an object record ("o" after blanks). */
int gs_reader_object_line_(const char *p, size_t n);
/* Bytes of an object line without its end after which it is parsed in
 * pieces rather than held whole. */
size_t gs_reader_stream_at_(const gs_reader *r);
/* What gs_reader_read_next_ and the workers' blocks see before such a line. */
#define GS_READER_LONG_ 1
/* Moves the partial line to the front of the window and reads more. */
int gs_reader_refill_(gs_reader *r);
/* Frees a reference array grown for one huge object, so that it is not
 * kept for the rest of the input. */
void gs_reader_trim_refs_(uint64_t **refs, size_t *cap);
/* Doubles r->refs: GS_OK or GS_ENOMEM. */
int gs_reader_grow_refs_(gs_reader *r);

/* The next record, parsed on the calling thread. */
int gs_reader_read_next_(gs_reader *r, gs_record *rec);

/* gs_reader_ahead.c: the same for a reader whose workers were started. */
int gs_reader_ahead_next_(gs_reader *r, gs_record *rec);
const gs_diag *gs_reader_ahead_diag_(const gs_reader *r);
uint64_t gs_reader_ahead_offset_(const gs_reader *r);
/* The end of the last record's line; GS_EINVAL when bytes were dropped
 * before its block, which leaves its offset unknown. */
int gs_reader_ahead_mark_(const gs_reader *r, gs_reader_mark *m);
int gs_reader_ahead_tag_(const gs_reader *r);
int gs_reader_ahead_block_(const gs_reader *r, gs_refs_block *block);
/* Stops the workers, if any, once they have parsed the block they are on. */
void gs_reader_ahead_stop_(gs_reader *r);

#endif
