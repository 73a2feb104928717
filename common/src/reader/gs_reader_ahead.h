/* gs_reader_ahead.h - the state of the parsing workers, shared by
 * gs_reader_ahead.c (the workers and the caller) and gs_reader_block.c
 * (reading a block from the source and parsing it). Internal. */
#ifndef GS_READER_AHEAD_H
#define GS_READER_AHEAD_H

#include <stddef.h>
#include <stdint.h>
#include "gs_reader_int.h"
#include "gs_thread.h"

#define BLOCK   (256u << 10)     /* bytes of fresh input per block */
#define WORKERS GS_READER_WORKERS
#define SLOTS   6                /* parsed blocks waiting for the caller */

/* A record as it waits for the caller: only what its kind has, in a cache
 * line, as the caller reads every one the worker wrote (a gs_record is half
 * as large again). */
typedef struct entry {
  uint64_t id;                   /* a: format version; t: type ID; o, r: object ID */
  uint64_t type;                 /* o: type ID; r: container type */
  uint64_t size;                 /* o: size; a, c: timestamp */
  uint64_t at;                   /* in the batch's refs (o), names (a, c, t) or diags (failed) */
  uint64_t n;                    /* o: references; a, c, t: name length */
  uint64_t line;                 /* in the block */
  uint64_t end;                  /* bytes of the block up to the end of its line */
  uint32_t root_flags;
  uint8_t kind, root_kind, flags;
} entry;

#define E_FAILED    1u           /* GS_EFORMAT: at is a diagnostic */
#define E_TIMESTAMP 2u
#define E_CONTAINER 4u
#define E_NAME      8u
#define E_REST      16u          /* the end of the line the block before began */

typedef struct batch {
  entry *entries;
  size_t n, cap;
  gs_diag *diags;
  size_t ndiags, diags_cap;
  uint64_t *refs;
  size_t nrefs, refs_cap;
  char *names;
  size_t names_len, names_cap;
  uint64_t lines;                /* lines of the block */
  uint64_t start_offset, end_offset;
  int exact;                     /* no bytes dropped before the block */
  int end_err;                   /* after the entries: 0 (more follow), EOF or an error */
  int rest;                      /* the first entry ends a line an earlier block began */
  int open;                      /* the last line goes on in the next block */
  uint64_t sections;             /* section records ('a', 'c') in the block */
  gs_refs_block where;           /* set once counted, in block order */
  int tag;                       /* what the consumer's refs_fn returned for it */
} batch;

typedef struct slot {
  batch b;
  gs_sem *free, *full;           /* posted when the caller is done with it, when parsed */
  gs_sem *count;                 /* posted when its block may count its sections */
} slot;

typedef struct worker {
  struct ahead *a;
  gs_thread *thread;
  gs_sem *hook_lock;             /* held while it calls the consumer's refs_fn */
  gs_reader sub;                 /* parses the block in place */
  gs_record rec;                 /* the record it parsed last */
  char *block;
  size_t block_cap;
} worker;

typedef struct ahead {
  gs_reader *r;
  worker w[WORKERS];
  slot slots[SLOTS];
  int stop;
  /* the source, used by one worker at a time (the one holding it) */
  gs_sem *source;
  uint64_t next;                 /* number of the next block */
  char *carry;                   /* start of the next block: a partial line */
  size_t carry_len, carry_cap;
  int carry_lines;               /* carry may hold whole lines (after a long one) */
  int in_line;                   /* the next block goes on with an object line */
  int skip_line;                 /* drop input up to the next newline */
  int dropped;                   /* bytes were dropped: offsets are off */
  uint64_t skipped_before, skipped_after; /* bytes dropped around the block taken */
  int src_end;                   /* 0, or GS_EOF or an error once the source is done */
  uint64_t offset;               /* stream offset of the next block */
  uint64_t sections;             /* section records before the next block to count */
  uint64_t lines;                /* lines before it */
  uint64_t open_offset, open_line; /* where the line cut into blocks starts */
  uint64_t open_refs;            /* references since */
  gs_refs_fn refs_fn;            /* under every hook_lock */
  void *refs_ctx;
  /* the caller */
  uint64_t taken;                /* blocks taken */
  batch *cur;
  size_t cur_i;
  uint64_t line_base;            /* lines before the current block */
  gs_diag diag;
  uint64_t cur_offset;
  int tag;                       /* of the record returned last */
  int skip_tagged;               /* see gs_reader_skip_tagged */
  uint64_t *refs;                /* of a line cut into blocks, joined */
  size_t refs_cap;
} ahead;

/* gs_reader_block.c */
/* Makes *buf hold at least need bytes (plus the parser's padding). */
int gs_block_reserve(char **buf, size_t *cap, size_t need);
/* Takes the next block of whole lines into w->block: its length, and the
 * state of the source after it (0, GS_EOF or an error), or GS_READER_LONG_
 * when the block starts a long object line it cannot cut. *open says the
 * block ends inside an object line, which the next one goes on with. */
int gs_block_take(ahead *a, worker *w, size_t *len, int *open);
/* Parses the len bytes of w->block, at stream offset offset, into b. */
int gs_block_parse(worker *w, batch *b, size_t len, uint64_t offset);
/* Parses the long object line that starts the len bytes of w->block while
 * reading the rest of it from the source (held by this worker); what came
 * after it is carried to the next block. Sets *len to the bytes of the line
 * and returns the state of the source, as gs_block_take does. */
int gs_block_stream(ahead *a, worker *w, batch *b, size_t *len, uint64_t offset);
/* The record back from its entry, as the parser gave it; what its kind
 * lacks is zero. */
void gs_block_unpack(const batch *b, const entry *e, uint64_t line_base, gs_record *rec);

#endif
