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
 * Entries are read in order with a cursor, and each may then be replaced by
 * its 4-byte node number in place (gs_refcodes_set). Internal. */
#ifndef GS_REFCODES_H
#define GS_REFCODES_H

#include <stddef.h>
#include <stdint.h>

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
} gs_refcodes;

/* Where a pass over the entries is. */
typedef struct gs_refcodes_cursor { uint64_t at; size_t esc; } gs_refcodes_cursor;

void gs_refcodes_init(gs_refcodes *c);
void gs_refcodes_free(gs_refcodes *c);
/* Appends ids[0..n). GS_OK or GS_ENOMEM (nothing appended). */
int gs_refcodes_append(gs_refcodes *c, const uint64_t *ids, size_t n);

/* The ID of entry cur->at, which then moves on; entries go in order. */
uint64_t gs_refcodes_next(const gs_refcodes *c, gs_refcodes_cursor *cur);
/* The ID of entry k without a cursor, when it is not an escape: for asking
 * early for the memory its lookup will read. Returns 1, or 0 for none. */
int gs_refcodes_peek(const gs_refcodes *c, uint64_t k, uint64_t *id);
/* Writes node as entry k's replacement: entry k and those before it must
 * have been read already, and those after it not be replaced yet. */
void gs_refcodes_set(gs_refcodes *c, uint64_t k, uint32_t node);

/* Once every entry was replaced: one array of the count node numbers, run
 * after run, where run r is entries start[order[r]] to start[order[r] + 1]
 * (order NULL: all entries as they are). Each block is freed as soon as
 * its last entry is taken, and c is left empty. NULL when memory is short,
 * with c as it was. */
uint32_t *gs_refcodes_take_nodes(gs_refcodes *c, const uint32_t *start, const uint32_t *order,
                                 uint32_t nruns);

#endif
