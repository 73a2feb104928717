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
#include "gs_reader_ahead.h"

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
  *status = gs_block_take(a, w, len, &s->b.open);
  /* Dropped bytes are not parsed, but count for the offsets. */
  *offset = a->offset += a->skipped_before;
  *parsed = *status == GS_READER_LONG_;
  if (*parsed) *status = gs_block_stream(a, w, &s->b, len, *offset);
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
    s->b.end_err = parsed ? 0 : gs_block_parse(w, &s->b, len, offset);
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
  /* Taken only once every worker runs (gs_reader_start_thread). */
  return gs_sem_new(&a->source, 0);
}

int gs_reader_start_thread(gs_reader *r) {
  ahead *a;
  size_t i, started = 0;
  if (r->ahead || gs_thread_cpus() < 2) return GS_OK;
  if (!(a = calloc(1, sizeof *a))) return GS_ENOMEM;
  a->r = r;
  /* What the window holds already is the start of the first block. */
  if (ahead_init(a) || gs_block_reserve(&a->carry, &a->carry_cap, r->end - r->pos)) {
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
  /* Not before: a worker that read blocks from the source before another
   * failed to start would leave the caller, reading alone, a source that
   * has moved on. */
  gs_sem_post(a->source);
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
 * line of rec, to a->refs (unless tagged and skipped), counting them in
 * *total: GS_OK, 1 when the line goes on, or an error (the blocks with the
 * rest of a failed line are dropped as they come). */
static int join_rest(ahead *a, gs_record *rec, uint64_t *total) {
  const batch *b;
  const entry *e;
  int tag, err = next_batch(a);
  if (err) return err;
  b = a->cur;
  /* Only an I/O error leaves a block that goes on with a line empty. */
  if (!b->n) return b->end_err ? b->end_err : GS_EIO;
  e = &b->entries[a->cur_i++];
  if (*total + e->n > a->r->max_refs) {
    gs_reader_too_many_refs_(a->r);
    a->diag = a->r->diag;
    a->diag.line = rec->line;
    return GS_EFORMAT;
  }
  if (e->flags & E_FAILED) return failed(a, b, e);
  *total += e->n;
  if ((tag = tag_of(a, b, e)) < a->tag) a->tag = tag;
  if ((a->skip_tagged && tag) || !e->n) return b->open;
  if (gs_array_reserve((void **)&a->refs, &a->refs_cap, rec->nrefs + e->n, sizeof *a->refs)) return GS_ENOMEM;
  memcpy(a->refs + rec->nrefs, b->refs + e->at, e->n * sizeof *a->refs);
  rec->nrefs += e->n;
  return b->open;
}

/* The object record whose line goes on in the next blocks, whole. */
static int join_line(ahead *a, gs_record *rec) {
  uint64_t total = rec->nrefs;
  int err;
  if (a->skip_tagged && a->tag) rec->nrefs = 0;
  if (gs_array_reserve((void **)&a->refs, &a->refs_cap, rec->nrefs, sizeof *a->refs)) return GS_ENOMEM;
  if (rec->nrefs) memcpy(a->refs, rec->refs, rec->nrefs * sizeof *a->refs);
  while ((err = join_rest(a, rec, &total)) == 1) continue;
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
      gs_block_unpack(b, e, a->line_base, rec);
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

int gs_reader_skip_tagged(gs_reader *r, int on) {
  if (!r->ahead) return GS_EINVAL;
  r->ahead->skip_tagged = on;
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
