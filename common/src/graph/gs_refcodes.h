/* gs_refcodes.h - references waiting for their node numbers, in 4 bytes each.
 *
 * The graph loader cannot number a reference's target before the section
 * has ended, so it keeps the references of a whole section. An ID is kept
 * as its distance, in slots of its alignment, from the first ID appended:
 * heap addresses and counters span far less than 2^32 slots. An ID that
 * does not fit is an escape, kept whole in a table; should escapes pass one
 * in MAX_ESCAPED, every entry is widened to its 8-byte ID in place and the
 * rest are stored whole, so the table never outgrows the codes.
 *
 * Entries live in blocks of 32 MB, not one array: appending never copies,
 * and handing the node numbers over as one array frees each block once its
 * entries are taken, so a section whose objects came nearly in ID order is
 * put in that order with little more than one copy of its references.
 *
 * Entries are read in order with a cursor, or block by block while they are
 * codes, and each may then be replaced by its 4-byte node number in place.
 * Appending and reading are inline: a load does both for every reference.
 * Internal. */
#ifndef GS_REFCODES_H
#define GS_REFCODES_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "gs_idset.h"

typedef struct gs_refcodes_escape { uint64_t at, id; } gs_refcodes_escape;

typedef struct gs_refcodes {
  char **blocks;             /* 4-byte codes, or 8-byte IDs once wide */
  size_t nblocks, blocks_cap;
  size_t first_cap;          /* entries of the first block */
  size_t count;              /* entries */
  int wide;
  int based;                 /* base and shift are set */
  uint64_t base;
  unsigned shift;
  gs_refcodes_escape *esc;   /* in entry order */
  size_t nesc, esc_cap;
  uint32_t *tail;            /* while narrow: where entry count goes... */
  size_t room;               /* ...and the entries its block has left */
} gs_refcodes;

/* Where a pass over the entries is. */
typedef struct gs_refcodes_cursor { uint64_t at; size_t esc; } gs_refcodes_cursor;

void gs_refcodes_init(gs_refcodes *c);
void gs_refcodes_free(gs_refcodes *c);
/* Appends ids[0..n). GS_OK or GS_ENOMEM (nothing appended). */
static inline int gs_refcodes_append(gs_refcodes *c, const uint64_t *ids, size_t n);

/* The ID of entry cur->at, which then moves on; entries go in order. */
static inline uint64_t gs_refcodes_next(const gs_refcodes *c, gs_refcodes_cursor *cur);
/* Writes node as entry k's replacement: entry k and those before it must
 * have been read already, and those after it not be replaced yet. */
static inline void gs_refcodes_set(gs_refcodes *c, uint64_t k, uint32_t node);
/* While the entries are codes (not wide): block b's codes and their number
 * in *n, for a pass that reads and replaces them in place without a cursor;
 * an escape's ID is the next one of the table. */
static inline uint32_t *gs_refcodes_codes(const gs_refcodes *c, size_t b, size_t *n);
/* The ID a code that is no escape stands for. */
static inline uint64_t gs_refcodes_decode(const gs_refcodes *c, uint32_t code);

/* A stretch of entries: from a cursor up to entry end. */
typedef struct gs_refcodes_range { gs_refcodes_cursor from; uint64_t end; } gs_refcodes_range;

/* Replaces every entry whose ID is a member of objects (sealed) by its rank
 * there, on two threads when there are two processors and several blocks
 * (each with a copy of objects' cache of chunks: the set is only read).
 * Each thread stops at its first ID that is not a member: the stretches it
 * left, at most two, are written to rest, and their number returned. */
size_t gs_refcodes_resolve(gs_refcodes *c, gs_idset *objects, gs_refcodes_range rest[2]);

/* Once every entry was replaced: one array of the count node numbers, run
 * after run, where run r is the offsets[r + 1] - offsets[r] entries from
 * begin[r] (begin NULL: all entries as they are). Each block is freed as
 * soon as its last entry is taken, and c is left empty. NULL when memory is
 * short, with c as it was. */
uint32_t *gs_refcodes_take_nodes(gs_refcodes *c, const uint32_t *begin, const uint32_t *offsets,
                                 uint32_t nruns);

/* ---- inline ------------------------------------------------------------ */

#define GS_REFCODES_ESCAPE UINT32_MAX
#define GS_REFCODES_BIAS (UINT64_C(1) << 31)
#define GS_REFCODES_BLOCK_LOG2 23
#define GS_REFCODES_BLOCK ((size_t)1 << GS_REFCODES_BLOCK_LOG2)

static inline char *gs_refcodes_entry_(const gs_refcodes *c, uint64_t k) {
  return c->blocks[k >> GS_REFCODES_BLOCK_LOG2] +
         (size_t)(k & (GS_REFCODES_BLOCK - 1)) * (c->wide ? 8 : 4);
}

static inline uint64_t gs_refcodes_decode(const gs_refcodes *c, uint32_t code) {
  return ((uint64_t)code << c->shift) - (GS_REFCODES_BIAS << c->shift) + c->base;
}

int gs_refcodes_append_slow_(gs_refcodes *c, const uint64_t *ids, size_t n);

/* Most objects' references fit in the current block as codes; the rest,
 * escapes included, take the slow path, which encodes them all again. */
static inline int gs_refcodes_append(gs_refcodes *c, const uint64_t *ids, size_t n) {
  uint64_t base = c->base, bias = GS_REFCODES_BIAS << c->shift, low = (UINT64_C(1) << c->shift) - 1;
  unsigned shift = c->shift;
  uint32_t *to = c->tail;
  size_t i;
  if (!n) return 0;
  if (n > c->room) return gs_refcodes_append_slow_(c, ids, n);
  for (i = 0; i < n; i++) {
    uint64_t e = ids[i] - base + bias;
    if ((e & low) || e >> shift >= GS_REFCODES_ESCAPE) return gs_refcodes_append_slow_(c, ids, n);
    to[i] = (uint32_t)(e >> shift);
  }
  c->tail = to + n;
  c->room -= n;
  c->count += n;
  return 0;
}

/* Entries block b holds. */
static inline size_t gs_refcodes_used_(const gs_refcodes *c, size_t b) {
  size_t first = b << GS_REFCODES_BLOCK_LOG2;
  return c->count <= first ? 0 : c->count - first < GS_REFCODES_BLOCK ? c->count - first : GS_REFCODES_BLOCK;
}

static inline uint32_t *gs_refcodes_codes(const gs_refcodes *c, size_t b, size_t *n) {
  assert(!c->wide && b < c->nblocks);
  *n = gs_refcodes_used_(c, b);
  return (uint32_t *)(void *)c->blocks[b];
}

static inline uint64_t gs_refcodes_next(const gs_refcodes *c, gs_refcodes_cursor *cur) {
  uint64_t k = cur->at++, id;
  uint32_t code;
  assert(k < c->count);
  if (c->wide) {
    memcpy(&id, gs_refcodes_entry_(c, k), 8);
    return id;
  }
  memcpy(&code, gs_refcodes_entry_(c, k), 4);
  if (code != GS_REFCODES_ESCAPE) return gs_refcodes_decode(c, code);
  assert(cur->esc < c->nesc && c->esc[cur->esc].at == k);
  return c->esc[cur->esc++].id;
}

/* In either width, entry k's node number takes the 4 bytes at 4 (k % BLOCK)
 * of its block: once wide, they overwrite IDs already read, so memcpy, not
 * a typed store the compiler could reorder. */
static inline void gs_refcodes_set(gs_refcodes *c, uint64_t k, uint32_t node) {
  memcpy(c->blocks[k >> GS_REFCODES_BLOCK_LOG2] + 4 * (size_t)(k & (GS_REFCODES_BLOCK - 1)), &node, 4);
}

#endif
