/* gs_reader.h - streaming reader of the RPM GC heap dump record format.
 *
 * The reader pulls one record at a time from a byte source (a callback, a file
 * descriptor, a FILE* or a buffer) and keeps only the current line in memory,
 * so memory is O(longest line), never O(file). An object line too long for
 * the input window (an array of millions of references) is parsed a piece at
 * a time: the reader then holds its references, never its text. It accepts both versions of the
 * format: "a" and "c" with or without their timestamp, LF or CRLF, blank
 * lines, and a missing final newline.
 *
 * A record's strings and reference array point into the reader and stay valid
 * until the next call of gs_reader_next(). */
#ifndef GS_READER_H
#define GS_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gs_diag.h"

/* Default and hard limits on one line, in bytes. They bound every line but
 * object records, which are bounded by their references instead: 8 bytes of
 * memory each, by default at most GS_READER_DEFAULT_MAX_REFS (256 MiB of
 * them), which holds a Java or JavaScript array of 30 million elements.
 * gs_writer refuses objects above its limit, the same by default, so that
 * what is written reads back. */
#define GS_READER_DEFAULT_MAX_LINE (64u << 20)
#define GS_READER_MIN_MAX_LINE     1024u
#define GS_READER_DEFAULT_MAX_REFS (1u << 25)
/* The highest limit a program may be told to set: the graph counts
 * references in 32 bits and the reader holds 8 bytes each. */
#define GS_READER_MAX_REFS_CEILING \
  (SIZE_MAX / 8 < UINT32_MAX ? (uint64_t)(SIZE_MAX / 8) : (uint64_t)UINT32_MAX)

typedef enum gs_record_kind {
  GS_REC_SECTION = 'a', GS_REC_TYPE = 't', GS_REC_OBJECT = 'o',
  GS_REC_ROOT = 'r', GS_REC_END = 'c'
} gs_record_kind;

/* Root kinds 0-5 and flag bits, as the format defines them. */
enum { GS_ROOT_INTERNAL = 0, GS_ROOT_LOCAL = 1, GS_ROOT_FINALIZER = 2,
       GS_ROOT_HANDLE = 3, GS_ROOT_STATIC = 4, GS_ROOT_RUNTIME = 5 };
#define GS_ROOT_KINDS 6
#define GS_FLAG_PINNED   1u
#define GS_FLAG_WEAK     2u
#define GS_FLAG_INTERIOR 4u

typedef struct gs_record {
  gs_record_kind kind;
  uint64_t line;            /* 1-based line number */
  uint64_t id;              /* a: format version; t: type ID; o, r: object ID */
  uint64_t type;            /* o: type ID; r: container type ID (kind 4) */
  uint64_t size;            /* o: size in bytes */
  uint64_t timestamp;       /* a, c: ms since boot, when has_timestamp */
  int has_timestamp;        /* a, c */
  unsigned root_kind;       /* r */
  unsigned root_flags;      /* r */
  int has_container;        /* r: set for static roots */
  const char *name;         /* a, c: AppDomain name; t: type name (not NUL-terminated) */
  size_t name_len;
  const uint64_t *refs;     /* o: referenced object IDs */
  size_t nrefs;
} gs_record;

/* Reads up to cap bytes into buf; sets *got (0 at end of input). Returns 0
 * or a negative gs error code. */
typedef int (*gs_read_fn)(void *ctx, void *buf, size_t cap, size_t *got);

typedef struct gs_reader gs_reader;

int gs_reader_new(gs_reader **r, gs_read_fn fn, void *ctx);
int gs_reader_new_file(gs_reader **r, FILE *f);
int gs_reader_new_fd(gs_reader **r, int fd);
/* Reads a caller-owned buffer, a block at a time; it must outlive the reader. */
int gs_reader_new_buffer(gs_reader **r, const void *data, size_t len);
void gs_reader_free(gs_reader *r);

/* Lines other than object records longer than max_line bytes are reported
 * as GS_D_LINE_TOO_LONG; objects with more than max_refs references (at
 * least 1) as GS_D_TOO_MANY_REFS. */
void gs_reader_set_max_line(gs_reader *r, size_t max_line);
void gs_reader_set_max_refs(gs_reader *r, size_t max_refs);

/* Returns GS_OK with *rec filled, GS_EOF at end of input, GS_EFORMAT when the
 * line is malformed (gs_reader_diag() says why; the next call goes on with
 * the next line), or GS_EIO / GS_ENOMEM, after which the reader is done. */
int gs_reader_next(gs_reader *r, gs_record *rec);
const gs_diag *gs_reader_diag(const gs_reader *r);

/* Size of the input in bytes when known (0 if not), set by the fd
 * constructor or by the caller; consumers use it to size their tables. */
void gs_reader_set_size_hint(gs_reader *r, uint64_t bytes);
uint64_t gs_reader_size_hint(const gs_reader *r);

/* Object lines written the canonical way take a faster parser; both give
 * the same records. Off makes every line take the general one (for tests
 * that compare them). */
void gs_reader_set_fast_path(gs_reader *r, int on);

/* Parses ahead on two worker threads, each taking the next block of whole
 * lines when it is free, so that parsing runs on two processors and
 * overlaps with the work the caller does per record (nothing happens on a
 * single processor). Records, diagnostics and errors come out exactly as
 * without it. Call before the first gs_reader_next() and after any
 * setting; the read callback then runs on the workers, one call at a time.
 * Returns GS_OK or GS_ENOMEM (and the reader goes on without threads).
 * gs_reader_free() stops the workers once they have parsed the blocks they
 * are on. */
int gs_reader_start_thread(gs_reader *r);
#define GS_READER_WORKERS 2
/* Records held in a file smaller than this are read faster on one thread:
 * on two processors, validating on the workers took about 40 ms plus 1 ms
 * per MB, on one thread 1.4 to 1.7 ms of processor time per MB (47 MB:
 * 0.09 to 0.10 s on the workers with the machine idle, 0.065 s of processor
 * time on one thread). Input the read callback does more work for
 * (decompression, conversion) gains from the workers sooner. */
#define GS_READER_AHEAD_MIN_BYTES ((uint64_t)64 << 20)

/* A block of whole lines the workers parsed: the number of section
 * records before it, where it starts (its offset, and the lines before it,
 * as gs_reader_reopen takes them), its lines and bytes, and whether the
 * offset is right (it is not once the bytes of an overlong line were
 * dropped before the block), and whether it holds part of an object line
 * too long for one block (it then spans that line from its start, and
 * line_refs counts the references from there to its end). */
typedef struct gs_refs_block {
  uint64_t sections;
  uint64_t offset, line;
  uint64_t lines, bytes;
  uint64_t line_refs;
  int exact, part;
} gs_refs_block;

/* Per-reference work ahead of the caller, on the workers: fn runs on the
 * worker (0 to GS_READER_WORKERS - 1) that parsed a block of lines holding
 * no section record ('a' or 'c'), with the references of its object records
 * back to back, before gs_reader_next() returns the block's records. Calls
 * for different blocks may run at the same time, one per worker, but each
 * worker's calls come in block order. One exception: the references of a
 * line in parts (gs_refs_block.part) that fn did not see, in a block parsed
 * before fn was set or holding a section record, are handed to fn by the
 * calling thread as worker 0's when it takes the line, out of order. What
 * fn returns is the block's tag: gs_reader_tag() gives it for the record
 * returned last (0 for records fn did not see; for a line in parts, the
 * smallest of its parts'). Returns GS_EINVAL when no workers run; NULL
 * stops the calls, and once gs_reader_on_refs returns none is running. */
typedef int (*gs_refs_fn)(void *ctx, unsigned worker, const gs_refs_block *block,
                          const uint64_t *refs, size_t n);
int gs_reader_on_refs(gs_reader *r, gs_refs_fn fn, void *ctx);
int gs_reader_tag(const gs_reader *r);
/* While on, the references of a line in parts that fn tagged nonzero are
 * not joined: the record comes with those of its untagged parts only (and
 * tag 0), or with none. For a consumer that needs no more of a tagged
 * record's references than fn saw; it saves copying arrays of millions.
 * Off at first; GS_EINVAL when no workers run. */
int gs_reader_skip_tagged(gs_reader *r, int on);
/* The block of the record returned last, when workers parse (GS_OK), else
 * GS_EINVAL. */
int gs_reader_block(const gs_reader *r, gs_refs_block *block);

/* Bytes consumed so far, for progress reports. */
uint64_t gs_reader_offset(const gs_reader *r);

/* Reads up to cap bytes of the input from offset on (0 is its first byte),
 * like gs_read_fn otherwise; safe to call while the reader reads. */
typedef int (*gs_read_at_fn)(void *ctx, uint64_t offset, void *buf, size_t cap, size_t *got);
/* Lets r read its input again (see gs_reader_reopen). Buffers and regular
 * files by descriptor can already; call before the first record. */
void gs_reader_set_read_at(gs_reader *r, gs_read_at_fn fn, void *ctx);

/* A place to read the input again from: the end of the line of the record
 * gs_reader_next() returned last, with the number of lines up to it. */
typedef struct gs_reader_mark { uint64_t offset, line; } gs_reader_mark;
/* 1 when r's input can be read again (marks may still fail), else 0. */
int gs_reader_can_reopen(const gs_reader *r);
/* Sets *m and returns GS_OK when the input can be read again from there,
 * else GS_EINVAL. */
int gs_reader_mark_here(const gs_reader *r, gs_reader_mark *m);
/* A reader of r's input from m on, with r's settings and line numbers; it
 * must not outlive r. Returns GS_OK or GS_ENOMEM. */
int gs_reader_reopen(const gs_reader *r, const gs_reader_mark *m, gs_reader **out);

#endif
