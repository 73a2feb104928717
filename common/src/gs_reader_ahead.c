/* gs_reader_ahead.c - parsing a dump on two threads while the caller works.
 *
 * The input is cut into blocks of whole lines. A worker that is free takes
 * the byte source, reads the next block (what the block before left after
 * its last newline, then fresh bytes up to a newline), hands the rest on,
 * and parses its block while the other worker reads and parses the next
 * one; the parsed blocks wait in a ring of slots, in block order. Neither
 * worker waits for the other to finish a block (the one the scheduler runs
 * less takes fewer blocks), only for the caller to free a slot. Each block
 * is parsed in place by a reader of its own that numbers lines from 1; the
 * caller takes the batches of records in block order and adds the lines of
 * the blocks before, so records, diagnostics and errors come out exactly as
 * from one thread. A line over the limit is cut at the limit and the rest
 * of it dropped as it arrives, as the plain reader does, so memory stays
 * bounded by the limit. An object line too long for a block (an array of
 * millions of elements) is cut at blanks into blocks of its own, which both
 * workers parse like any other; the caller joins their references into one
 * record, so that the line's text is never held whole and both processors
 * parse it. (One whose first block cannot be cut after its size is parsed
 * by the worker that meets it as it reads it, holding the source.)
 *
 * A consumer may do per-reference work on the workers too (gs_reader_on_refs):
 * after parsing, the workers take turns in block order to count the section
 * records before each block, so that the work knows which section a block
 * belongs to. */
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_reader_int.h"
#include "gs_thread.h"

#define BLOCK   (256u << 10)     /* bytes of fresh input per block */
#define WORKERS GS_READER_WORKERS
#define SLOTS   6                /* parsed blocks waiting for the caller */

static const uint64_t no_refs[1];

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
  uint64_t *refs;                /* of a line cut into blocks, joined */
  size_t refs_cap;
} ahead;

/* Makes *buf hold at least need bytes (plus the parser's padding). */
static int reserve(char **buf, size_t *cap, size_t need) {
  char *p;
  if (need + GS_READER_PAD + 1 <= *cap) return GS_OK;
  if (!(p = realloc(*buf, need + need / 2 + GS_READER_PAD + 1))) return GS_ENOMEM;
  memset(p + *cap, 0, need + need / 2 + GS_READER_PAD + 1 - *cap);
  *buf = p;
  *cap = need + need / 2 + GS_READER_PAD + 1;
  return GS_OK;
}

/* ---- reading a block (on the worker holding the source) ------------- */

/* Drops input up to and including the next newline in b[from..*len). */
static void skip_rest(ahead *a, char *b, size_t from, size_t *len) {
  char *nl = memchr(b + from, '\n', *len - from);
  size_t n = nl ? (size_t)(nl + 1 - (b + from)) : *len - from;
  a->skipped_before += n;
  if (!nl) { *len = from; return; }
  memmove(b + from, nl + 1, (size_t)(b + *len - nl - 1));
  *len -= n;
  a->skip_line = 0;
}

/* Reads fresh input into w->block after len bytes, until BLOCK fresh bytes
 * came or the source ended. */
static int read_more(ahead *a, worker *w, size_t *len) {
  gs_reader *r = a->r;
  size_t want = *len + BLOCK;
  int err;
  if ((err = reserve(&w->block, &w->block_cap, want))) return err;
  while (*len < want) {
    size_t got = 0, at = *len;
    if ((err = r->fn(r->ctx, w->block + at, want - at, &got))) return err;
    if (got == 0) return GS_EOF;
    *len += got;
    if (a->skip_line) skip_rest(a, w->block, at, len);
  }
  return GS_OK;
}

/* The last newline of b[from..len), or NULL. The bytes of a long line
 * hold none: memchr says so at once. */
static const char *last_newline(const char *b, size_t from, size_t len) {
  if (len <= from || !memchr(b + from, '\n', len - from)) return NULL;
  while (b[len - 1] != '\n') len--;
  return b + len - 1;
}

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Bytes of b[0..len) up to the end of an object line's size, or 0. */
static size_t header_end(const char *b, size_t len) {
  size_t i = 0, field;
  for (field = 0; field < 4; field++) {
    while (i < len && is_blank(b[i])) i++;
    if (i == len) return 0;
    while (i < len && !is_blank(b[i])) i++;
  }
  return i;
}

/* Where the len bytes of a block with no newline may be cut so that the
 * next block goes on with the object line they are part of: at the last
 * blank after the object's size (or after the first byte, which is a blank,
 * within a line), or 0 when they may not. */
static size_t cut_point(const ahead *a, const char *b, size_t len) {
  size_t from;
  if (a->in_line) from = 1;
  else if (len > gs_reader_stream_at_(a->r) && gs_reader_object_line_(b, len)) from = header_end(b, len);
  else return 0;
  while (from && len > from && !is_blank(b[len - 1])) len--;
  return from && len > from ? len - 1 : 0;
}

/* Ends the block at the blank at cut, which starts the next one. */
static int cut_block(ahead *a, worker *w, size_t *len, size_t cut, int *open) {
  if (reserve(&a->carry, &a->carry_cap, *len - cut)) return a->src_end = GS_ENOMEM;
  memcpy(a->carry, w->block + cut, *len - cut);
  a->carry_len = *len - cut;
  *len = cut;
  a->in_line = *open = 1;
  return 0;
}

/* Takes the next block of whole lines into w->block: its length, and the
 * state of the source after it (0, GS_EOF or an error), or GS_READER_LONG_
 * when the block starts a long object line it cannot cut. *open says the
 * block ends inside an object line, which the next one goes on with. */
static int take_block(ahead *a, worker *w, size_t *len, int *open) {
  const char *nl = NULL;
  size_t rest, from, cut;
  int status = 0;
  *len = 0;
  *open = 0;
  if (a->src_end) return a->src_end;
  if (reserve(&w->block, &w->block_cap, a->carry_len)) return a->src_end = GS_ENOMEM;
  memcpy(w->block, a->carry, a->carry_len);
  *len = a->carry_len;
  a->carry_len = 0;
  /* The carried bytes hold no newline, but after a long line: only fresh
   * ones are searched. */
  from = a->carry_lines ? 0 : *len;
  a->carry_lines = 0;
  while (!status && !nl) {
    status = read_more(a, w, len);
    nl = last_newline(w->block, from, *len);
    from = *len;
    if (!status && !nl && (cut = cut_point(a, w->block, *len))) return cut_block(a, w, len, cut, open);
    if (!status && !nl && !a->in_line && *len > gs_reader_stream_at_(a->r) &&
        gs_reader_object_line_(w->block, *len))
      return GS_READER_LONG_;
    /* One line (or within one, number) longer than the limit: keep what
     * the parser needs to report it, drop the rest as it comes. */
    if (!status && !nl && *len > a->r->max_line) {
      a->skipped_after = *len - (a->r->max_line + 1 + (size_t)a->in_line);
      *len -= a->skipped_after;
      a->skip_line = a->dropped = 1;
      a->in_line = 0;
      return 0;
    }
  }
  if (nl) a->in_line = 0;
  if (status == GS_EOF) return a->src_end = GS_EOF;
  rest = nl ? (size_t)(w->block + *len - nl - 1) : *len;
  *len -= rest;
  /* An I/O error loses the partial line, as it does on one thread. */
  if (status) return a->src_end = status;
  if (reserve(&a->carry, &a->carry_cap, rest)) return a->src_end = GS_ENOMEM;
  memcpy(a->carry, w->block + *len, rest);
  a->carry_len = rest;
  return 0;
}

/* ---- parsing a block ------------------------------------------------- */

static int grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first) {
  size_t c = *cap;
  void *p;
  if (need <= c) return GS_OK;
  while (c < need) c = c ? c * 2 : first;
  if (!(p = realloc(*arr, c * elem))) return GS_ENOMEM;
  *arr = p;
  *cap = c;
  return GS_OK;
}

/* Copies what the record points to into the batch; the references of a
 * batch's first record change places with the parser's instead (a long
 * object's are tens of MB, a block of a longer one's hundreds of KB). */
static inline int keep(batch *b, gs_reader *sub, const gs_record *rec, entry *e) {
  if (!b->nrefs && rec->refs == sub->refs && (rec->nrefs > b->refs_cap || b->rest)) {
    uint64_t *refs = b->refs;
    size_t cap = b->refs_cap;
    b->refs = sub->refs;
    b->refs_cap = sub->refs_cap;
    sub->refs = refs;
    sub->refs_cap = cap;
  } else if (grow((void **)&b->refs, &b->refs_cap, b->nrefs + rec->nrefs, sizeof *b->refs, 4096)) {
    return GS_ENOMEM;
  } else if (rec->nrefs) {
    memcpy(b->refs + b->nrefs, rec->refs, rec->nrefs * sizeof *rec->refs);
  }
  e->at = b->nrefs;
  e->n = rec->nrefs;
  b->nrefs += rec->nrefs;
  if (!rec->name) return GS_OK;
  if (grow((void **)&b->names, &b->names_cap, b->names_len + rec->name_len, 1, 4096)) return GS_ENOMEM;
  memcpy(b->names + b->names_len, rec->name, rec->name_len);
  e->at = b->names_len;
  e->n = rec->name_len;
  b->names_len += rec->name_len;
  return GS_OK;
}

/* What the kind of record has, into its entry (the parser leaves the other
 * fields as they were). */
static void pack(const gs_record *rec, entry *e) {
  int object = rec->kind == GS_REC_OBJECT, root = rec->kind == GS_REC_ROOT;
  e->kind = (uint8_t)rec->kind;
  e->id = rec->kind == GS_REC_END ? 0 : rec->id;
  e->type = object || rec->has_container ? rec->type : 0;
  e->size = object ? rec->size : rec->has_timestamp ? rec->timestamp : 0;
  e->root_kind = (uint8_t)(root ? rec->root_kind : 0);
  e->root_flags = root ? rec->root_flags : 0;
  e->flags = (uint8_t)((rec->has_timestamp ? E_TIMESTAMP : 0) | (rec->name ? E_NAME : 0) |
                       (rec->has_container ? E_CONTAINER : 0));
}

/* The record back from its entry, as the parser gave it; what its kind
 * lacks is zero. */
static void unpack(const batch *b, const entry *e, uint64_t line_base, gs_record *rec) {
  int object = e->kind == GS_REC_OBJECT;
  rec->kind = (gs_record_kind)e->kind;
  rec->line = line_base + e->line;
  rec->id = e->id;
  rec->type = e->type;
  rec->size = object ? e->size : 0;
  rec->has_timestamp = (e->flags & E_TIMESTAMP) != 0;
  rec->timestamp = rec->has_timestamp ? e->size : 0;
  rec->root_kind = e->root_kind;
  rec->root_flags = e->root_flags;
  rec->has_container = (e->flags & E_CONTAINER) != 0;
  rec->name = e->flags & E_NAME ? b->names + e->at : NULL;
  rec->name_len = e->flags & E_NAME ? (size_t)e->n : 0;
  rec->nrefs = object ? (size_t)e->n : 0;
  rec->refs = rec->nrefs ? b->refs + e->at : no_refs;
}

/* Points w->sub at the block, as a reader at the end of its input. */
static void sub_start(worker *w, size_t len, uint64_t offset) {
  gs_reader *s = &w->sub;
  const char *nl = last_newline(w->block, 0, len);
  s->buf = w->block;
  s->cap = w->block_cap - GS_READER_PAD - 1;
  s->pos = s->scanned = 0;
  s->end = len;
  s->complete = nl ? (size_t)(nl + 1 - w->block) : 0;
  s->eof = 1;
  s->skip_line = s->io_error = 0;
  s->line = 0;
  s->base = offset;
}

static void batch_start(batch *b) {
  b->n = b->ndiags = b->nrefs = b->names_len = 0;
  b->sections = 0;
}

/* Parses the next record of w->sub into the batch: GS_OK, GS_EOF at the
 * end of the block, or an error. */
static int parse_entry(worker *w, batch *b, uint64_t offset) {
  entry *e;
  int err;
  if (grow((void **)&b->entries, &b->cap, b->n + 1, sizeof *b->entries, 1024)) return GS_ENOMEM;
  e = &b->entries[b->n];
  err = gs_reader_read_next_(&w->sub, &w->rec);
  if (err == GS_EOF) return err;
  e->end = w->sub.base + w->sub.pos - offset;
  e->line = w->rec.line;
  if (err == GS_EFORMAT) {
    if (grow((void **)&b->diags, &b->diags_cap, b->ndiags + 1, sizeof *b->diags, 16)) return GS_ENOMEM;
    b->diags[b->ndiags] = w->sub.diag;
    e->at = b->ndiags++;
    e->flags = E_FAILED;
  } else if (err || (err = keep(b, &w->sub, &w->rec, e))) {
    return err;
  } else {
    pack(&w->rec, e);
    if (w->rec.kind == GS_REC_SECTION || w->rec.kind == GS_REC_END) b->sections++;
  }
  b->n++;
  return GS_OK;
}

/* Parses the references that end the line an earlier block began, as the
 * block's first entry (failed, it holds the references parsed before the
 * failure). */
static int parse_rest(worker *w, batch *b) {
  gs_reader *s = &w->sub;
  char *nl = memchr(s->buf, '\n', s->end), *end = nl ? nl : s->buf + s->end;
  entry *e;
  int err;
  if (grow((void **)&b->entries, &b->cap, 1, sizeof *b->entries, 1024)) return GS_ENOMEM;
  e = &b->entries[0];
  *end = '\n';
  err = gs_reader_parse_rest_(s, s->buf, end, &w->rec);
  s->pos = (size_t)(end - s->buf) + (nl != NULL);
  e->end = s->pos;
  e->line = 0;
  e->kind = GS_REC_OBJECT;
  if (err == GS_EFORMAT) {
    if (grow((void **)&b->diags, &b->diags_cap, 1, sizeof *b->diags, 16)) return GS_ENOMEM;
    b->diags[0] = s->diag;
    e->at = b->ndiags++;
    e->n = w->rec.nrefs;
    e->flags = E_REST | E_FAILED;
  } else if (err || (err = keep(b, s, &w->rec, e))) {
    return err;
  } else {
    e->flags = E_REST;
  }
  b->n = 1;
  return GS_OK;
}

static int parse_block(worker *w, batch *b, size_t len, uint64_t offset) {
  int err;
  batch_start(b);
  sub_start(w, len, offset);
  if (b->rest && len && (err = parse_rest(w, b))) return err;
  while ((err = parse_entry(w, b, offset)) == GS_OK) continue;
  if (err != GS_EOF) return err;
  b->lines = w->sub.line;
  b->start_offset = offset;
  b->end_offset = offset + len;
  return GS_OK;
}

/* Drops the rest of the line w->sub failed on, as it arrives. */
static int skip_line(gs_reader *s) {
  while (s->skip_line) {
    char *nl = memchr(s->buf + s->pos, '\n', s->end - s->pos);
    int err;
    if (nl) {
      s->pos = (size_t)(nl + 1 - s->buf);
      s->skip_line = 0;
    } else if (s->eof) {
      s->pos = s->end;
      s->skip_line = 0;
    } else {
      s->pos = s->end;
      if ((err = gs_reader_refill_(s))) return err;
    }
  }
  return GS_OK;
}

/* Parses the long object line that starts the len bytes of w->block while
 * reading the rest of it from the source (held by this worker); what came
 * after it is carried to the next block. Sets *len to the bytes of the line
 * and returns the state of the source, as take_block does. */
static int stream_block(ahead *a, worker *w, batch *b, size_t *len, uint64_t offset) {
  gs_reader *s = &w->sub;
  int err;
  batch_start(b);
  sub_start(w, *len, offset);
  s->eof = 0;
  s->complete = 0;
  s->fn = a->r->fn;
  s->ctx = a->r->ctx;
  err = parse_entry(w, b, offset);
  if (!err || err == GS_EFORMAT) err = skip_line(s);
  w->block = s->buf;                   /* the window may have grown */
  w->block_cap = s->cap + GS_READER_PAD;
  s->fn = NULL;
  *len = (size_t)(s->base + s->pos - offset);
  if (b->n) b->entries[b->n - 1].end = *len;
  b->lines = s->line;
  b->start_offset = offset;
  b->end_offset = offset + *len;
  if (err) return a->src_end = err;
  if (reserve(&a->carry, &a->carry_cap, s->end - s->pos)) return a->src_end = GS_ENOMEM;
  memcpy(a->carry, s->buf + s->pos, s->end - s->pos);
  a->carry_len = s->end - s->pos;
  a->carry_lines = 1;
  if (s->eof && !a->carry_len) return a->src_end = GS_EOF;
  return 0;
}

/* ---- the workers ----------------------------------------------------- */

/* Counts the block's sections in block order, then hands its references to
 * the consumer when the block lies within one section. Returns 0 when
 * stopped. */
static int after_parse(worker *w, slot *s, slot *next) {
  ahead *a = w->a;
  batch *b = &s->b;
  gs_sem_wait(s->count);
  if (a->stop) return 0;
  /* A block that goes on with a line spans it from its start. */
  if (!b->rest) {
    a->open_offset = b->start_offset;
    a->open_line = a->lines;
    a->open_refs = 0;
  }
  a->open_refs += b->nrefs;
  b->where.sections = a->sections;
  b->where.offset = a->open_offset;
  b->where.line = a->open_line;
  b->where.lines = a->lines + b->lines - a->open_line;
  b->where.bytes = b->end_offset - a->open_offset;
  b->where.line_refs = a->open_refs;
  b->where.exact = b->exact;
  b->where.part = b->rest || b->open;
  a->sections += b->sections;
  a->lines += b->lines;
  gs_sem_post(next->count);
  b->tag = 0;
  gs_sem_wait(w->hook_lock);
  if (a->refs_fn && !b->sections && b->nrefs)
    b->tag = a->refs_fn(a->refs_ctx, (unsigned)(w - a->w), &b->where, b->refs, b->nrefs);
  gs_sem_post(w->hook_lock);
  return 1;
}

/* Takes the source and the slot of the next block, and reads the block:
 * its slot, or NULL when stopped. */
static slot *take_next(worker *w, size_t *len, uint64_t *offset, int *status, int *parsed) {
  ahead *a = w->a;
  slot *s = NULL;
  gs_sem_wait(a->source);
  if (!a->stop) {
    uint64_t k = a->next++;
    s = &a->slots[k % SLOTS];
    gs_sem_wait(s->free);
  }
  if (a->stop) {
    gs_sem_post(a->source);
    return NULL;
  }
  s->b.exact = !a->dropped;
  s->b.rest = a->in_line;
  a->skipped_before = a->skipped_after = 0;
  *status = take_block(a, w, len, &s->b.open);
  /* Dropped bytes are not parsed, but count for the offsets. */
  *offset = a->offset += a->skipped_before;
  *parsed = *status == GS_READER_LONG_;
  if (*parsed) *status = stream_block(a, w, &s->b, len, *offset);
  a->offset += *len + a->skipped_after;
  gs_sem_post(a->source);
  return s;
}

static void worker_main(void *arg) {
  worker *w = arg;
  ahead *a = w->a;
  for (;;) {
    size_t len;
    uint64_t offset;
    int status, parsed;
    slot *s = take_next(w, &len, &offset, &status, &parsed);
    if (!s) return;
    s->b.end_err = parsed ? 0 : parse_block(w, &s->b, len, offset);
    if (!s->b.end_err) s->b.end_err = status;
    if (!after_parse(w, s, &a->slots[(size_t)(s - a->slots + 1) % SLOTS])) return;
    gs_sem_post(s->full);
    if (s->b.end_err) return;
  }
}

static void ahead_free(ahead *a) {
  size_t i;
  for (i = 0; i < SLOTS; i++) {
    slot *s = &a->slots[i];
    free(s->b.entries);
    free(s->b.diags);
    free(s->b.refs);
    free(s->b.names);
    gs_sem_free(s->free);
    gs_sem_free(s->full);
    gs_sem_free(s->count);
  }
  for (i = 0; i < WORKERS; i++) {
    free(a->w[i].block);
    free(a->w[i].sub.refs);
    gs_sem_free(a->w[i].hook_lock);
  }
  gs_sem_free(a->source);
  free(a->carry);
  free(a->refs);
  free(a);
}

/* Sets up the workers' own readers with the settings of r, and the slots. */
static int ahead_init(ahead *a) {
  size_t i;
  for (i = 0; i < WORKERS; i++) {
    worker *w = &a->w[i];
    w->a = a;
    w->sub.fd = -1;
    w->sub.fast = a->r->fast;
    w->sub.max_line = a->r->max_line;
    w->sub.max_refs = a->r->max_refs;
    if (gs_sem_new(&w->hook_lock, 1)) return GS_ENOMEM;
  }
  for (i = 0; i < SLOTS; i++) {
    slot *s = &a->slots[i];
    if (gs_sem_new(&s->free, 1) || gs_sem_new(&s->full, 0) || gs_sem_new(&s->count, i == 0))
      return GS_ENOMEM;
  }
  return gs_sem_new(&a->source, 1);
}

int gs_reader_start_thread(gs_reader *r) {
  ahead *a;
  size_t i, started = 0;
  if (r->ahead || gs_thread_cpus() < 2) return GS_OK;
  if (!(a = calloc(1, sizeof *a))) return GS_ENOMEM;
  a->r = r;
  /* What the window holds already is the start of the first block. */
  if (ahead_init(a) || reserve(&a->carry, &a->carry_cap, r->end - r->pos)) {
    ahead_free(a);
    return GS_ENOMEM;
  }
  memcpy(a->carry, r->buf + r->pos, r->end - r->pos);
  a->carry_len = r->end - r->pos;
  a->offset = a->cur_offset = r->base + r->pos;
  a->line_base = a->lines = r->line;
  r->ahead = a;
  for (i = 0; i < WORKERS; i++)
    if (gs_thread_start(&a->w[i].thread, worker_main, &a->w[i]) == GS_OK) started++;
    else break;
  if (started < WORKERS) {
    gs_reader_ahead_stop_(r);
    return GS_ENOMEM;
  }
  return GS_OK;
}

void gs_reader_ahead_stop_(gs_reader *r) {
  ahead *a = r->ahead;
  size_t i;
  if (!a) return;
  a->stop = 1;
  /* Wakes a worker wherever it waits: at most one waits on each slot. */
  for (i = 0; i < WORKERS; i++) gs_sem_post(a->source);
  for (i = 0; i < SLOTS; i++) {
    gs_sem_post(a->slots[i].free);
    gs_sem_post(a->slots[i].count);
  }
  for (i = 0; i < WORKERS; i++)
    if (a->w[i].thread) gs_thread_join(a->w[i].thread);
  ahead_free(a);
  r->ahead = NULL;
}

/* ---- the caller ------------------------------------------------------ */

/* Gives the current batch back and waits for the next: GS_OK, or the
 * state the current one ended the input with. */
static int next_batch(ahead *a) {
  batch *b = a->cur;
  slot *s;
  if (b) {
    if (b->end_err) return b->end_err;
    a->line_base += b->lines;
    gs_reader_trim_refs_(&b->refs, &b->refs_cap);
    gs_sem_post(a->slots[(a->taken - 1) % SLOTS].free);
  }
  s = &a->slots[a->taken % SLOTS];
  gs_sem_wait(s->full);
  a->cur = &s->b;
  a->taken++;
  a->cur_i = 0;
  a->cur_offset = a->cur->end_offset;
  return GS_OK;
}

static int failed(ahead *a, const batch *b, const entry *e) {
  a->diag = b->diags[e->at];
  a->diag.line += a->line_base;
  return GS_EFORMAT;
}

/* The tag of an entry's references, handed to the consumer now if their
 * block was parsed before it asked for them, so that one such block does
 * not leave the whole line to the caller. The first worker's calls then
 * leave block order: such a block is part of a line, which the consumer
 * treats as a whole (gs_refs_block.part). */
static int tag_of(ahead *a, const batch *b, const entry *e) {
  int tag = b->tag;
  if (tag || !e->n) return tag;
  gs_sem_wait(a->w[0].hook_lock);
  if (a->refs_fn) tag = a->refs_fn(a->refs_ctx, 0, &b->where, b->refs + e->at, (size_t)e->n);
  gs_sem_post(a->w[0].hook_lock);
  return tag;
}

/* Appends the references of the next block's first entry, the rest of the
 * line of rec, to a->refs: GS_OK, 1 when the line goes on, or an error (the
 * blocks with the rest of a failed line are dropped as they come). */
static int join_rest(ahead *a, gs_record *rec) {
  const batch *b;
  const entry *e;
  int tag, err = next_batch(a);
  if (err) return err;
  b = a->cur;
  /* Only an I/O error leaves a block that goes on with a line empty. */
  if (!b->n) return b->end_err ? b->end_err : GS_EIO;
  e = &b->entries[a->cur_i++];
  if (rec->nrefs + e->n > a->r->max_refs) {
    gs_reader_too_many_refs_(a->r);
    a->diag = a->r->diag;
    a->diag.line = rec->line;
    return GS_EFORMAT;
  }
  if (e->flags & E_FAILED) return failed(a, b, e);
  if (gs_array_reserve((void **)&a->refs, &a->refs_cap, rec->nrefs + e->n, sizeof *a->refs)) return GS_ENOMEM;
  if ((tag = tag_of(a, b, e)) < a->tag) a->tag = tag;
  memcpy(a->refs + rec->nrefs, b->refs + e->at, e->n * sizeof *a->refs);
  rec->nrefs += e->n;
  return b->open;
}

/* The object record whose line goes on in the next blocks, whole. */
static int join_line(ahead *a, gs_record *rec) {
  int err;
  if (gs_array_reserve((void **)&a->refs, &a->refs_cap, rec->nrefs, sizeof *a->refs)) return GS_ENOMEM;
  memcpy(a->refs, rec->refs, rec->nrefs * sizeof *a->refs);
  while ((err = join_rest(a, rec)) == 1) continue;
  rec->refs = a->refs;
  return err;
}

int gs_reader_ahead_next_(gs_reader *r, gs_record *rec) {
  ahead *a = r->ahead;
  int err;
  gs_reader_trim_refs_(&a->refs, &a->refs_cap);
  for (;;) {
    batch *b = a->cur;
    if (b && a->cur_i < b->n) {
      const entry *e = &b->entries[a->cur_i++];
      if (e->flags & E_REST) continue;           /* of a line that failed */
      if (e->flags & E_FAILED) return failed(a, b, e);
      unpack(b, e, a->line_base, rec);
      if (!b->open || a->cur_i < b->n) {
        a->tag = b->tag;
        return GS_OK;
      }
      a->tag = tag_of(a, b, e);
      return join_line(a, rec);
    }
    if ((err = next_batch(a))) return err;
  }
}

const gs_diag *gs_reader_ahead_diag_(const gs_reader *r) { return &r->ahead->diag; }

uint64_t gs_reader_ahead_offset_(const gs_reader *r) { return r->ahead->cur_offset; }

int gs_reader_ahead_mark_(const gs_reader *r, gs_reader_mark *m) {
  const ahead *a = r->ahead;
  const entry *e;
  if (!a->cur || !a->cur_i || !a->cur->exact) return GS_EINVAL;
  e = &a->cur->entries[a->cur_i - 1];
  m->offset = a->cur->start_offset + e->end;
  m->line = a->line_base + e->line;
  return GS_OK;
}

int gs_reader_on_refs(gs_reader *r, gs_refs_fn fn, void *ctx) {
  ahead *a = r->ahead;
  size_t i;
  if (!a) return GS_EINVAL;
  for (i = 0; i < WORKERS; i++) gs_sem_wait(a->w[i].hook_lock);
  a->refs_fn = fn;
  a->refs_ctx = ctx;
  for (i = 0; i < WORKERS; i++) gs_sem_post(a->w[i].hook_lock);
  return GS_OK;
}

int gs_reader_ahead_block_(const gs_reader *r, gs_refs_block *block) {
  const ahead *a = r->ahead;
  if (!a->cur || !a->cur_i) return GS_EINVAL;
  *block = a->cur->where;
  return GS_OK;
}

int gs_reader_ahead_tag_(const gs_reader *r) {
  const ahead *a = r->ahead;
  return a->cur && a->cur_i ? a->tag : 0;
}
