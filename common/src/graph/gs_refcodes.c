/* gs_refcodes.c - references waiting for their node numbers (see gs_refcodes.h).
 *
 * A code is an ID's distance from the base in slots of 2^shift, biased by
 * 2^31 slots so that IDs below the base fit as well: with 8-byte aligned
 * addresses that is 16 GB either side of the first reference. The sums wrap
 * modulo 2^64 on purpose: decoding undoes them exactly.
 *
 * Blocks hold 2^23 entries, 32 MB of codes: past the largest size glibc's
 * malloc may start serving from its heap, so each is a mapping of its own
 * and freeing one gives its memory back. Only the first grows, and only
 * while it is small enough for the heap: so that a small section does not
 * map 32 MB, and no mapping of a size between is freed, which would have
 * glibc serve later allocations of that size from its heap, where freeing
 * them gives nothing back. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_refcodes.h"
#include "gs_thread.h"

#define ESCAPE GS_REFCODES_ESCAPE
#define BIAS GS_REFCODES_BIAS
#define MAX_ESCAPED 16     /* at most one escape in this many entries... */
#define FEW_ESCAPES 4096   /* ...once there are more than this many */
#define BLOCK_LOG2 GS_REFCODES_BLOCK_LOG2
#define BLOCK GS_REFCODES_BLOCK
#define FIRST_BLOCK 4096   /* entries of the first block to start with... */
#define SMALL_BLOCK 16384  /* ...and grown to, beyond which it takes BLOCK */

void gs_refcodes_init(gs_refcodes *c) {
  memset(c, 0, sizeof *c);
}

void gs_refcodes_free(gs_refcodes *c) {
  size_t b;
  for (b = 0; b < c->nblocks; b++) free(c->blocks[b]);
  free(c->blocks);
  free(c->esc);
  gs_refcodes_init(c);
}

/* ---- blocks ------------------------------------------------------------ */

static size_t entry_size(const gs_refcodes *c) {
  return c->wide ? 8 : 4;
}

/* Entries block b has room for: the first may be smaller than the rest. */
static size_t block_cap(const gs_refcodes *c, size_t b) {
  return b == 0 ? c->first_cap : BLOCK;
}

/* Where the fast append writes next: nowhere once wide. */
static void place_tail(gs_refcodes *c) {
  size_t b = c->count >> BLOCK_LOG2, off = c->count & (BLOCK - 1);
  c->room = 0;
  if (c->wide || b >= c->nblocks) return;
  c->tail = (uint32_t *)(void *)c->blocks[b] + off;
  c->room = block_cap(c, b) - off;
}

static size_t capacity(const gs_refcodes *c) {
  return c->nblocks ? (c->nblocks - 1) * BLOCK + c->first_cap : 0;
}

static int grow_first(gs_refcodes *c, size_t need) {
  size_t cap = c->first_cap * 2 > need ? c->first_cap * 2 : need;
  char *p;
  if (cap > SMALL_BLOCK) cap = BLOCK;
  if (!(p = realloc(c->blocks[0], cap * entry_size(c)))) return GS_ENOMEM;
  c->blocks[0] = p;
  c->first_cap = cap;
  return GS_OK;
}

static int add_block(gs_refcodes *c, size_t need) {
  size_t cap = BLOCK;
  if (gs_array_reserve((void **)&c->blocks, &c->blocks_cap, c->nblocks + 1, sizeof *c->blocks))
    return GS_ENOMEM;
  if (!c->nblocks) cap = need <= FIRST_BLOCK ? FIRST_BLOCK : need <= SMALL_BLOCK ? need : BLOCK;
  if (!(c->blocks[c->nblocks] = malloc(cap * entry_size(c)))) return GS_ENOMEM;
  if (!c->nblocks) c->first_cap = cap;
  c->nblocks++;
  return GS_OK;
}

static int reserve(gs_refcodes *c, size_t need) {
  while (capacity(c) < need) {
    int err = c->nblocks == 1 && c->first_cap < BLOCK ? grow_first(c, need) : add_block(c, need);
    if (err) return err;
  }
  return GS_OK;
}

/* ---- codes ------------------------------------------------------------- */

/* Aligned IDs use their alignment, up to 8 bytes, as the slot. */
static void set_base(gs_refcodes *c, uint64_t id) {
  c->base = id;
  c->shift = 0;
  while (c->shift < 3 && !(id & (UINT64_C(1) << c->shift))) c->shift++;
  c->based = 1;
}

static uint32_t encode(const gs_refcodes *c, uint64_t id) {
  uint64_t e = id - c->base + (BIAS << c->shift);
  if (e & ((UINT64_C(1) << c->shift) - 1) || e >> c->shift >= ESCAPE) return ESCAPE;
  return (uint32_t)(e >> c->shift);
}

/* Block b's n codes become their IDs, from the last, in a block twice as
 * large: the bytes of entry j are written once the codes they cover (j and
 * after) have been read. Escapes are taken from *e down. */
static void widen_block(gs_refcodes *c, size_t b, size_t n, size_t *e) {
  char *mem = c->blocks[b];
  while (n-- > 0) {
    uint32_t code;
    uint64_t id;
    memcpy(&code, mem + 4 * n, 4);
    id = code == ESCAPE ? c->esc[--*e].id : gs_refcodes_decode(c, code);
    memcpy(mem + 8 * n, &id, 8);
  }
}

/* Every block grows first, so that running short of memory leaves the
 * codes as they were. */
static int widen(gs_refcodes *c) {
  size_t b, e = c->nesc;
  for (b = 0; b < c->nblocks; b++) {
    char *p = realloc(c->blocks[b], block_cap(c, b) * 8);
    if (!p) return GS_ENOMEM;
    c->blocks[b] = p;
  }
  for (b = c->nblocks; b-- > 0;) widen_block(c, b, gs_refcodes_used_(c, b), &e);
  assert(e == 0);
  free(c->esc);
  c->esc = NULL;
  c->nesc = c->esc_cap = 0;
  c->wide = 1;
  return GS_OK;
}

static int escape(gs_refcodes *c, uint64_t at, uint64_t id) {
  if (gs_array_reserve((void **)&c->esc, &c->esc_cap, c->nesc + 1, sizeof *c->esc)) return GS_ENOMEM;
  c->esc[c->nesc].at = at;
  c->esc[c->nesc++].id = id;
  return GS_OK;
}

static int append_codes(gs_refcodes *c, const uint64_t *ids, size_t n) {
  size_t i, nesc = c->nesc;
  if (!c->based) set_base(c, ids[0]);
  for (i = 0; i < n; i++) {
    uint32_t code = encode(c, ids[i]);
    if (code == ESCAPE && escape(c, c->count + i, ids[i])) {
      c->nesc = nesc;
      return GS_ENOMEM;
    }
    memcpy(gs_refcodes_entry_(c, c->count + i), &code, 4);
  }
  c->count += n;
  /* Widening that runs short of memory leaves the codes as they were. */
  if (c->nesc > FEW_ESCAPES && c->nesc > c->count / MAX_ESCAPED) (void)widen(c);
  return GS_OK;
}

static int append_slow(gs_refcodes *c, const uint64_t *ids, size_t n) {
  size_t i;
  if (!n) return GS_OK;
  if (c->count + n < c->count || reserve(c, c->count + n)) return GS_ENOMEM;
  if (!c->wide) return append_codes(c, ids, n);
  for (i = 0; i < n; i++) memcpy(gs_refcodes_entry_(c, c->count + i), &ids[i], 8);
  c->count += n;
  return GS_OK;
}

int gs_refcodes_append_slow_(gs_refcodes *c, const uint64_t *ids, size_t n) {
  int err = append_slow(c, ids, n);
  place_tail(c);
  return err;
}

/* ---- resolution -------------------------------------------------------- */

/* How far ahead of the entry it resolves a pass asks for a later one's rank
 * entry: IDs land anywhere in the set, and asking early overlaps the misses. */
#define AHEAD 64

/* One thread's blocks. It works on copies of the tables, whose addresses
 * are taken nowhere else, so the compiler knows the stores into the blocks
 * leave their fields alone (and the set's cache of chunks is its own). */
typedef struct resolve_job {
  gs_refcodes codes;
  gs_idset objects;
  size_t first, end;         /* blocks */
  gs_refcodes_range rest;    /* what it left, from its first ID not in the set */
} resolve_job;

/* Replaces block b's codes by ranks up to the first ID not in the set;
 * returns how many, of the *n it holds. *esc follows the escapes' table. */
static size_t resolve_block(resolve_job *j, size_t b, size_t *esc, size_t *n_out) {
  size_t k, n;
  uint32_t *e = gs_refcodes_codes(&j->codes, b, &n);
  *n_out = n;
  for (k = 0; k < n; k++) {
    uint32_t code, rank = 0;
    uint64_t id;
    if (k + AHEAD < n && (code = e[k + AHEAD]) != ESCAPE)
      gs_idset_prefetch(&j->objects, gs_refcodes_decode(&j->codes, code));
    code = e[k];
    id = code != ESCAPE ? gs_refcodes_decode(&j->codes, code) : j->codes.esc[*esc].id;
    if (!gs_idset_rank(&j->objects, id, &rank)) break;
    *esc += code == ESCAPE;
    e[k] = rank;
  }
  return k;
}

/* Wide entries: one at a time through a cursor. */
static void resolve_wide(resolve_job *j) {
  gs_refcodes_cursor at;
  uint32_t rank = 0;
  while (j->rest.from.at < j->rest.end) {
    at = j->rest.from;
    if (!gs_idset_rank(&j->objects, gs_refcodes_next(&j->codes, &j->rest.from), &rank)) {
      j->rest.from = at;
      return;
    }
    gs_refcodes_set(&j->codes, at.at, rank);
  }
}

static void resolve_run(void *arg) {
  resolve_job *j = arg;
  size_t b, n, done;
  if (j->codes.wide) { resolve_wide(j); return; }
  for (b = j->first; b < j->end; b++) {
    done = resolve_block(j, b, &j->rest.from.esc, &n);
    j->rest.from.at += done;
    if (done < n) return;
  }
}

/* A cursor at entry k: the escapes before it are counted by halving. */
static gs_refcodes_cursor cursor_at(const gs_refcodes *c, uint64_t k) {
  gs_refcodes_cursor cur;
  size_t lo = 0, hi = c->nesc;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->esc[mid].at < k) lo = mid + 1;
    else hi = mid;
  }
  cur.at = k;
  cur.esc = lo;
  return cur;
}

/* Blocks first to end; once wide, the first job takes every entry. */
static void job_for(resolve_job *j, const gs_refcodes *c, gs_idset *objects, size_t first, size_t end) {
  uint64_t from = first && c->wide ? c->count : (uint64_t)first << BLOCK_LOG2;
  j->codes = *c;
  j->objects = *objects;
  j->first = first;
  j->end = end;
  j->rest.from = cursor_at(c, from < c->count ? from : c->count);
  j->rest.end = end < c->nblocks && !c->wide ? (uint64_t)end << BLOCK_LOG2 : c->count;
}

size_t gs_refcodes_resolve(gs_refcodes *c, gs_idset *objects, gs_refcodes_range rest[2]) {
  resolve_job jobs[2];
  gs_thread *helper = NULL;
  size_t half = c->wide || c->nblocks < 2 || gs_thread_cpus() < 2 ? c->nblocks : c->nblocks / 2;
  size_t i, n = 0;
  job_for(&jobs[0], c, objects, 0, half);
  job_for(&jobs[1], c, objects, half, c->nblocks);
  if (half == c->nblocks || gs_thread_start(&helper, resolve_run, &jobs[1])) resolve_run(&jobs[1]);
  resolve_run(&jobs[0]);
  if (helper) gs_thread_join(helper);
  for (i = 0; i < 2; i++)
    if (jobs[i].rest.from.at < jobs[i].rest.end) rest[n++] = jobs[i].rest;
  return n;
}

/* ---- node numbers ------------------------------------------------------ */

/* Copies entries [k, end) to out, freeing each block whose last entry is
 * taken (left[b] counts what is not). */
static void take_run(gs_refcodes *c, size_t *left, uint64_t k, uint64_t end, uint32_t *out) {
  while (k < end) {
    size_t b = (size_t)(k >> BLOCK_LOG2), off = (size_t)(k & (BLOCK - 1));
    size_t n = end - k < BLOCK - off ? (size_t)(end - k) : BLOCK - off;
    memcpy(out, c->blocks[b] + 4 * off, 4 * n);
    out += n;
    k += n;
    if (!(left[b] -= n)) {
      free(c->blocks[b]);
      c->blocks[b] = NULL;
    }
  }
}

/* A single block taken in order is the array already, its slack given back:
 * NULL when memory is short, with c as it was. */
static uint32_t *take_block(gs_refcodes *c) {
  uint32_t *out = realloc(c->blocks[0], c->count * 4);
  if (!out) return NULL;
  c->blocks[0] = NULL;
  gs_refcodes_free(c);
  return out;
}

uint32_t *gs_refcodes_take_nodes(gs_refcodes *c, const uint32_t *begin, const uint32_t *offsets,
                                 uint32_t nruns) {
  uint32_t *out, r;
  size_t *left, b;
  if (!begin && c->nblocks == 1 && c->count) return take_block(c);
  out = malloc(c->count ? c->count * 4 : 1);
  left = calloc(c->nblocks + 1, sizeof *left);
  if (!out || !left) {
    free(out);
    free(left);
    return NULL;
  }
  for (b = 0; b < c->nblocks; b++) left[b] = gs_refcodes_used_(c, b);
  if (!begin) take_run(c, left, 0, c->count, out);
  for (r = 0; begin && r < nruns; r++)
    take_run(c, left, begin[r], begin[r] + offsets[r + 1] - offsets[r], out + offsets[r]);
  free(left);
  gs_refcodes_free(c);
  return out;
}
