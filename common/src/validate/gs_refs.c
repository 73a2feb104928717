/* gs_refs.c - sets of referenced object IDs (see gs_refs.h).
 *
 * Each of the reader's workers has a set of its own, so noting needs no
 * atomic operations. A set holds one section at a time: a worker notes a
 * block of another section only once the calling thread has freed the set
 * (it has taken all the records of the section before), and otherwise
 * leaves the block to the calling thread. The section a set holds is the
 * only state both threads touch, under a small lock; the bits are written
 * by the worker before it hands the block over and read by the calling
 * thread after it took the block, which the reader's slots order.
 *
 * A worker's blocks come in order, so an ID it notes for the first time is
 * first mentioned in that block as far as its blocks go; the hashes of
 * those IDs, block by block, find the blocks a section's dangling IDs are
 * first mentioned in (the line numbers the diagnostics need) for 4 bytes
 * per ID each worker notes, instead of reading the whole section again. A
 * block of one long array would hold a hash sought by chance as likely as
 * not: it keeps the set of every ID it mentions instead, when that takes no
 * more than the hashes would, and is otherwise always read again. The
 * blocks a longer line is cut into are noted as one block per worker, its
 * part of the line, in the same way, its set of mentions judged against
 * the whole line once the section is done.
 *
 * Without workers, the calling thread keeps the same hashes for spans of
 * lines it closes itself (gs_refs_spans). */
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_refs.h"
#include "gs_thread.h"

#define PREFETCH_AHEAD  32     /* references asked for ahead of their bits */
#define NO_SECTION UINT64_MAX
#define FILTER_LOG2 18         /* bits of the filter of the hashes sought */
/* References of a block above which its first mentions are not hashed. */
#define MAX_HASHED (1u << 16)

typedef struct noted {
  gs_refs_block where;
  size_t end;                  /* its first mentions end here in hashes */
  int unhashed;                /* over MAX_HASHED, or part of a line */
  int pending;                 /* part of a line: its mentions are not yet in
                                * the worker's set */
  gs_idset *mentions;          /* unhashed: all it mentions, or NULL: wanted
                                * whatever is sought */
} noted;

typedef struct worker_set {
  gs_sem *lock;                /* guards section */
  uint64_t section;            /* section records before the blocks noted, or NO_SECTION */
  int overflow;
  gs_idset set;
  size_t free_chunks;          /* the sets' bitmap allowance */
  noted *blocks;               /* the blocks noted, in order */
  size_t nblocks, blocks_cap;
  uint32_t *hashes;            /* hashes of the IDs each block mentioned first */
  size_t nhashes, hashes_cap;
} worker_set;

/* The hashes sought, sorted, behind a bitmap of their top bits that
 * answers most lookups. */
typedef struct sought {
  uint64_t filter[(1u << FILTER_LOG2) / 64];
  uint32_t *hashes;
  size_t n;
  const uint64_t *ids;         /* n of them, for the sets of mentions */
} sought;

struct gs_refs_ahead {
  worker_set w[GS_READER_WORKERS];
  size_t ready;                /* sets initialised */
};

static uint32_t hash_id(uint64_t id) {
  return (uint32_t)((id * UINT64_C(0x9e3779b97f4a7c15)) >> 32);
}

/* Each ID lands anywhere in the bitmaps and costs little else, so the next
 * ones are asked for well ahead. The hashes of the IDs new to the set go to
 * firsts (room for n), *nfirsts of them, when firsts is given. */
static int note(gs_idset *set, int *overflow, const uint64_t *refs, size_t n, uint32_t *firsts,
                size_t *nfirsts) {
  size_t i, k = 0;    /* not *nfirsts, which the set's count may alias */
  int err = GS_OK;
  for (i = 0; i < n && !*overflow && !err; i++) {
    int added;
    if (i + PREFETCH_AHEAD < n) gs_idset_prefetch(set, refs[i + PREFETCH_AHEAD]);
    added = gs_idset_put(set, refs[i]);
    if (added == GS_ELIMIT) {
      gs_idset_clear(set);
      *overflow = 1;
    } else if (added < 0) {
      err = added;
    } else if (firsts) {
      firsts[k] = hash_id(refs[i]);
      k += (size_t)added;
    }
  }
  if (firsts) *nfirsts += k;
  return err;
}

int gs_refs_note(gs_idset *set, int *overflow, const uint64_t *refs, size_t n) {
  return note(set, overflow, refs, n, NULL, NULL);
}

int gs_refs_note_firsts(gs_refs_spans *s, gs_idset *set, int *overflow, const uint64_t *refs, size_t n) {
  if (*overflow || !n) return GS_OK;
  if (gs_array_reserve((void **)&s->hashes, &s->hashes_cap, s->nhashes + n, sizeof *s->hashes)) return GS_ENOMEM;
  return note(set, overflow, refs, n, s->hashes + s->nhashes, &s->nhashes);
}

int gs_refs_spans_close(gs_refs_spans *s, const gs_refs_block *where) {
  if (gs_array_reserve((void **)&s->spans, &s->cap, s->n + 1, sizeof *s->spans)) return GS_ENOMEM;
  s->spans[s->n].where = *where;
  s->spans[s->n++].end = s->nhashes;
  return GS_OK;
}

void gs_refs_spans_clear(gs_refs_spans *s) { s->n = s->nhashes = 0; }

void gs_refs_spans_free(gs_refs_spans *s) {
  free(s->spans);
  free(s->hashes);
  memset(s, 0, sizeof *s);
}

size_t gs_refs_spans_memory(const gs_refs_spans *s) {
  return s->cap * sizeof *s->spans + s->hashes_cap * sizeof *s->hashes;
}

static void free_mentions(gs_idset *m) {
  if (m) gs_idset_free(m);
  free(m);
}

/* The set of the IDs an unhashed block mentions, when it takes no more
 * than their hashes would; else NULL. Not tried when it cannot: a set
 * holds a chunk of bits at least, and one that overflowed is never read. */
static gs_idset *mentions_of(const worker_set *w, const uint64_t *refs, size_t n) {
  gs_idset *m;
  int overflow = 0;
  if (w->overflow || n * sizeof *w->hashes < GS_IDSET_CHUNK_WORDS * sizeof(uint64_t)) return NULL;
  m = malloc(sizeof *m);
  if (!m || gs_idset_init(m)) {
    free(m);
    return NULL;
  }
  gs_idset_bitmaps_only(m, w->free_chunks);
  if (note(m, &overflow, refs, n, NULL, NULL) || overflow || gs_idset_memory(m) > n * sizeof *w->hashes) {
    free_mentions(m);
    return NULL;
  }
  return m;
}

/* Adds what the block mentions to the worker's set, as note() does. */
static int merge_mentions(worker_set *w, const gs_idset *m) {
  int err = gs_idset_merge(&w->set, m);
  if (err != GS_ELIMIT) return err;
  gs_idset_clear(&w->set);
  w->overflow = 1;
  return GS_OK;
}

/* Whether the set of what a part of a line mentions takes more than the
 * hashes of the line's references would, once they are enough to tell.
 * (Each worker keeps such a set for the blocks of the line it took, which
 * span about the same addresses however few they are.) */
static int too_big(const noted *b, int done) {
  uint64_t bytes = b->where.line_refs * sizeof(uint32_t);
  return (done || bytes >= GS_IDSET_CHUNK_WORDS * sizeof(uint64_t)) && gs_idset_memory(b->mentions) > bytes;
}

/* Adds what the worker's last part of a line mentions to its set, once,
 * when the part is done or its set of mentions too big, and keeps that set
 * if it is not too big yet: whether it is for good is judged once the
 * section is done (judge_parts), against the whole line. */
static int settle(worker_set *w, int done) {
  noted *b = w->nblocks ? &w->blocks[w->nblocks - 1] : NULL;
  int big, err;
  if (!b || !b->pending) return GS_OK;
  big = too_big(b, 0);
  if (!done && !big) return GS_OK;
  b->pending = 0;
  err = merge_mentions(w, b->mentions);
  if (big) {
    free_mentions(b->mentions);
    b->mentions = NULL;
  }
  return err;
}

/* A new part of a line the worker notes, whose references go to a set of
 * its own (or straight to the worker's, when it has none). */
static int new_part(worker_set *w) {
  noted *b;
  int err = settle(w, 1);
  if (err || gs_array_reserve((void **)&w->blocks, &w->blocks_cap, w->nblocks + 1, sizeof *w->blocks))
    return err ? err : GS_ENOMEM;
  b = &w->blocks[w->nblocks++];
  memset(b, 0, sizeof *b);
  b->unhashed = 1;
  b->end = w->nhashes;
  if (!w->overflow && (b->mentions = malloc(sizeof *b->mentions)) && gs_idset_init(b->mentions)) {
    free(b->mentions);
    b->mentions = NULL;
  }
  if ((b->pending = b->mentions != NULL)) gs_idset_bitmaps_only(b->mentions, w->free_chunks);
  return GS_OK;
}

static int same_line(const noted *b, const gs_refs_block *where) {
  return b->where.part && b->where.offset == where->offset && b->where.line == where->line;
}

/* Notes a block that holds part of a line: into the worker's part of that
 * line, which spans as far as the block. A set of mentions that overflows
 * has lost what it held: the worker's set is marked overflowed with it,
 * which has the section read again whole. */
static int note_part(worker_set *w, const gs_refs_block *where, const uint64_t *refs, size_t n) {
  noted *b;
  int overflow = 0, err;
  if ((!w->nblocks || !same_line(&w->blocks[w->nblocks - 1], where)) && (err = new_part(w)))
    return err;
  b = &w->blocks[w->nblocks - 1];
  if (where->line_refs > b->where.line_refs) b->where = *where;
  if (!b->pending) return note(&w->set, &w->overflow, refs, n, NULL, NULL);
  if ((err = note(b->mentions, &overflow, refs, n, NULL, NULL))) return err;
  if (overflow) {
    b->pending = 0;
    free_mentions(b->mentions);
    b->mentions = NULL;
    gs_idset_clear(&w->set);
    w->overflow = 1;
  }
  return settle(w, 0);
}

/* Notes a block of the worker's section and what it mentions first. */
static int note_firsts(worker_set *w, const gs_refs_block *where, const uint64_t *refs, size_t n) {
  size_t firsts = 0;
  int hashed = n <= MAX_HASHED, err = settle(w, 1);
  gs_idset *mentions = NULL;
  if (err) return err;
  if ((hashed && gs_array_reserve((void **)&w->hashes, &w->hashes_cap, w->nhashes + n, sizeof *w->hashes)) ||
      gs_array_reserve((void **)&w->blocks, &w->blocks_cap, w->nblocks + 1, sizeof *w->blocks))
    return GS_ENOMEM;
  if (!hashed && (mentions = mentions_of(w, refs, n))) err = merge_mentions(w, mentions);
  else err = note(&w->set, &w->overflow, refs, n, hashed ? w->hashes + w->nhashes : NULL, &firsts);
  if (err) {
    free_mentions(mentions);
    return err;
  }
  w->nhashes += firsts;
  w->blocks[w->nblocks].where = *where;
  w->blocks[w->nblocks].unhashed = !hashed;
  w->blocks[w->nblocks].pending = 0;
  w->blocks[w->nblocks].mentions = mentions;
  w->blocks[w->nblocks++].end = w->nhashes;
  return GS_OK;
}

/* On worker `worker`: the block's tag, 1 when noted, 0 when left to the
 * calling thread. */
static int note_block(void *ctx, unsigned worker, const gs_refs_block *where, const uint64_t *refs,
                      size_t n) {
  worker_set *w = &((gs_refs_ahead *)ctx)->w[worker];
  int mine;
  gs_sem_wait(w->lock);
  if ((mine = w->section == NO_SECTION || w->section == where->sections)) w->section = where->sections;
  gs_sem_post(w->lock);
  return mine && (where->part ? note_part(w, where, refs, n) : note_firsts(w, where, refs, n)) == GS_OK;
}

static void forget_blocks(worker_set *w) {
  size_t i;
  for (i = 0; i < w->nblocks; i++) free_mentions(w->blocks[i].mentions);
  free(w->blocks);
  free(w->hashes);
  w->blocks = NULL;
  w->hashes = NULL;
  w->nblocks = w->blocks_cap = w->nhashes = w->hashes_cap = 0;
}

static void ahead_free(gs_refs_ahead *a) {
  size_t i;
  for (i = 0; i < a->ready; i++) {
    gs_sem_free(a->w[i].lock);
    gs_idset_free(&a->w[i].set);
    forget_blocks(&a->w[i]);
  }
  free(a);
}

gs_refs_ahead *gs_refs_ahead_start(gs_reader *r, size_t free_chunks) {
  gs_refs_ahead *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  for (; a->ready < GS_READER_WORKERS; a->ready++) {
    worker_set *w = &a->w[a->ready];
    w->section = NO_SECTION;
    w->free_chunks = free_chunks;
    if (gs_idset_init(&w->set)) break;
    if (gs_sem_new(&w->lock, 1)) { gs_idset_free(&w->set); break; }
    gs_idset_bitmaps_only(&w->set, free_chunks);
  }
  if (a->ready < GS_READER_WORKERS || gs_reader_on_refs(r, note_block, a)) {
    ahead_free(a);
    return NULL;
  }
  return a;
}

void gs_refs_ahead_stop(gs_refs_ahead *a, gs_reader *r) {
  if (!a) return;
  gs_reader_on_refs(r, NULL, NULL);
  ahead_free(a);
}

void gs_refs_ahead_release(gs_refs_ahead *a, uint64_t before) {
  size_t i;
  for (i = 0; a && i < GS_READER_WORKERS; i++) {
    worker_set *w = &a->w[i];
    gs_sem_wait(w->lock);
    if (w->section < before) {
      gs_idset_clear(&w->set);
      forget_blocks(w);
      w->overflow = 0;
      w->section = NO_SECTION;
    }
    gs_sem_post(w->lock);
  }
}

static int holds(worker_set *w, uint64_t section) {
  int mine;
  gs_sem_wait(w->lock);
  mine = w->section == section;
  gs_sem_post(w->lock);
  return mine;
}

/* Raises the count of references of each part of a line in w to the count
 * o saw of the same line (each worker counted only as far as its last block
 * of it). Both hold their blocks in line order, but for a part the calling
 * thread handed over late, which may then keep its own count: at worst its
 * line is read again for nothing. */
static void count_whole_lines(worker_set *w, const worker_set *o) {
  size_t i, j = 0;
  for (i = 0; i < w->nblocks; i++) {
    noted *b = &w->blocks[i];
    if (!b->where.part) continue;
    while (j < o->nblocks && o->blocks[j].where.line < b->where.line) j++;
    if (j < o->nblocks && same_line(&o->blocks[j], &b->where) && o->blocks[j].where.line_refs > b->where.line_refs)
      b->where.line_refs = o->blocks[j].where.line_refs;
  }
}

/* Drops the sets of mentions of the parts of lines that take more than the
 * hashes of the whole line's references would: the section is done, so
 * the worker that took a line's last block counted all its references. */
static void judge_parts(gs_refs_ahead *a, const int *mine) {
  size_t i, k;
  for (i = 0; i < GS_READER_WORKERS; i++)
    for (k = 0; k < GS_READER_WORKERS; k++)
      if (i != k && mine[i] && mine[k]) count_whole_lines(&a->w[i], &a->w[k]);
  for (i = 0; i < GS_READER_WORKERS; i++)
    for (k = 0; mine[i] && k < a->w[i].nblocks; k++) {
      noted *b = &a->w[i].blocks[k];
      if (b->mentions && b->where.part && too_big(b, 1)) {
        free_mentions(b->mentions);
        b->mentions = NULL;
      }
    }
}

int gs_refs_ahead_gather(gs_refs_ahead *a, uint64_t section, gs_idset *into, int *overflow) {
  int mine[GS_READER_WORKERS];
  size_t i;
  if (!a) return GS_OK;
  for (i = 0; i < GS_READER_WORKERS; i++) {
    int err;
    /* The workers are done with the section: its last part of a line too. */
    if ((mine[i] = holds(&a->w[i], section)) && (err = settle(&a->w[i], 1))) return err;
  }
  judge_parts(a, mine);
  for (i = 0; i < GS_READER_WORKERS; i++) {
    worker_set *w = &a->w[i];
    int err = GS_OK;
    if (mine[i] && w->overflow) *overflow = 1;
    if (mine[i] && !*overflow) err = gs_idset_merge(into, &w->set);
    if (err == GS_ELIMIT) {
      gs_idset_clear(into);
      *overflow = 1;
    } else if (err) {
      return err;
    }
  }
  return GS_OK;
}

size_t gs_refs_ahead_memory(const gs_refs_ahead *a) {
  size_t i, bytes = 0;
  for (i = 0; a && i < GS_READER_WORKERS; i++) {
    const worker_set *w = &a->w[i];
    size_t b;
    bytes += gs_idset_memory(&w->set) + w->blocks_cap * sizeof *w->blocks + w->hashes_cap * sizeof *w->hashes;
    for (b = 0; b < w->nblocks; b++)
      if (w->blocks[b].mentions) bytes += gs_idset_memory(w->blocks[b].mentions);
  }
  return bytes;
}

/* ---- finding first mentions ----------------------------------------- */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int sought_init(sought *q, const uint64_t *ids, size_t n) {
  size_t i;
  memset(q->filter, 0, sizeof q->filter);
  if (!(q->hashes = malloc((n ? n : 1) * sizeof *q->hashes))) return GS_ENOMEM;
  for (i = 0; i < n; i++) {
    uint32_t h = hash_id(ids[i]);
    q->hashes[i] = h;
    q->filter[h >> (32 - FILTER_LOG2) >> 6] |= UINT64_C(1) << ((h >> (32 - FILTER_LOG2)) & 63);
  }
  qsort(q->hashes, n, sizeof *q->hashes, cmp_u32);
  q->n = n;
  q->ids = ids;
  return GS_OK;
}

static int is_sought(const sought *q, uint32_t h) {
  uint32_t top = h >> (32 - FILTER_LOG2);
  if (!((q->filter[top >> 6] >> (top & 63)) & 1)) return 0;
  return bsearch(&h, q->hashes, q->n, sizeof h, cmp_u32) != NULL;
}

static int block_wanted(const sought *q, const uint32_t *h, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (is_sought(q, h[i])) return 1;
  return 0;
}

/* A block that mentions a sought ID, if only later than first, is read
 * again in line order with the others: the first mention still comes first. */
static int mentions_sought(const sought *q, gs_idset *mentions) {
  size_t i;
  for (i = 0; i < q->n; i++)
    if (gs_idset_has(mentions, q->ids[i])) return 1;
  return 0;
}

static int wanted(const sought *q, const noted *b, const uint32_t *hashes, size_t from) {
  if (!b->unhashed) return block_wanted(q, hashes + from, b->end - from);
  return !b->mentions || mentions_sought(q, b->mentions);
}

/* The worker's blocks where a sought ID may be mentioned first, appended. */
static int find_in(const worker_set *w, const sought *q, gs_refs_block **out, size_t *n, size_t *cap) {
  size_t b, from = 0;
  for (b = 0; b < w->nblocks; from = w->blocks[b++].end) {
    if (!wanted(q, &w->blocks[b], w->hashes, from)) continue;
    if (gs_array_reserve((void **)out, cap, *n + 1, sizeof **out)) return GS_ENOMEM;
    (*out)[(*n)++] = w->blocks[b].where;
  }
  return GS_OK;
}

static sought *sought_new(const uint64_t *ids, size_t nids) {
  sought *q = malloc(sizeof *q);
  if (q && sought_init(q, ids, nids)) {
    free(q);
    return NULL;
  }
  return q;
}

static void sought_free(sought *q) {
  free(q->hashes);
  free(q);
}

int gs_refs_ahead_find(gs_refs_ahead *a, uint64_t section, const uint64_t *ids, size_t nids,
                       gs_refs_block **blocks, size_t *n, size_t *cap) {
  sought *q = sought_new(ids, nids);
  size_t i;
  int err = q ? GS_OK : GS_ENOMEM;
  for (i = 0; !err && i < GS_READER_WORKERS; i++) {
    if (holds(&a->w[i], section)) err = find_in(&a->w[i], q, blocks, n, cap);
  }
  if (q) sought_free(q);
  return err;
}

int gs_refs_spans_find(const gs_refs_spans *s, const uint64_t *ids, size_t nids, gs_refs_block **blocks,
                       size_t *n, size_t *cap) {
  sought *q = sought_new(ids, nids);
  size_t i, from = 0;
  int err = q ? GS_OK : GS_ENOMEM;
  for (i = 0; !err && i < s->n; from = s->spans[i++].end) {
    if (s->spans[i].end == from || !block_wanted(q, s->hashes + from, s->spans[i].end - from)) continue;
    if (gs_array_reserve((void **)blocks, cap, *n + 1, sizeof **blocks)) err = GS_ENOMEM;
    else (*blocks)[(*n)++] = s->spans[i].where;
  }
  if (q) sought_free(q);
  return err;
}
