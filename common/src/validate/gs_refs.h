/* gs_refs.h - sets of referenced object IDs, noted on the calling thread or
 * on a reader's workers, for the validator's check at a section's end.
 *
 * A set becomes "overflowed" (and empty) when its IDs are too sparse for
 * bitmaps; its owner then checks every reference another way. The workers'
 * sets (gs_refs_ahead) each hold the references of one section at a time,
 * named by the number of section records before it. For each block they
 * note, the workers also keep a 32-bit hash of each ID it mentions first
 * (for that worker), so that the blocks where a given ID is first mentioned
 * can be found again without reading the others; the calling thread does
 * the same for spans of lines when no workers run (gs_refs_spans). Internal. */
#ifndef GS_REFS_H
#define GS_REFS_H

#include <stddef.h>
#include <stdint.h>
#include "gs_idset.h"
#include "gs_reader.h"

/* Adds refs[0..n) to set unless *overflow; sets *overflow (and empties the
 * set) when it would stop being bitmaps. Returns GS_OK or GS_ENOMEM. */
int gs_refs_note(gs_idset *set, int *overflow, const uint64_t *refs, size_t n);

typedef struct gs_refs_ahead gs_refs_ahead;

/* Has r's workers note the references of the blocks that lie within one
 * section, in sets of the given bitmap allowance (gs_idset_bitmaps_only);
 * gs_reader_tag() is then 1 for their records. NULL when r has no workers
 * or memory is short: the caller notes everything itself. */
gs_refs_ahead *gs_refs_ahead_start(gs_reader *r, size_t free_chunks);
/* Stops the noting and frees the sets. */
void gs_refs_ahead_stop(gs_refs_ahead *a, gs_reader *r);
/* Adds what the workers noted for the section after `section` section
 * records to `into` (or sets *overflow): call once the caller has taken
 * every record of that section, and before gs_refs_ahead_find. Returns
 * GS_OK or GS_ENOMEM. */
int gs_refs_ahead_gather(gs_refs_ahead *a, uint64_t section, gs_idset *into, int *overflow);
/* Appends to *blocks (*n of them, room for *cap) the blocks of that
 * section the workers noted where one of ids[0..nids) may be mentioned
 * first, in block order: every block where one is; a block of one long
 * array when it mentions one at all, or always when its set of mentions
 * would take more than 4 bytes a reference; and rarely another.
 * Returns GS_OK or GS_ENOMEM. */
int gs_refs_ahead_find(gs_refs_ahead *a, uint64_t section, const uint64_t *ids, size_t nids,
                       gs_refs_block **blocks, size_t *n, size_t *cap);
/* Frees the sets of sections before `before`, whose records the caller has
 * all taken, so the workers can note later ones. */
void gs_refs_ahead_release(gs_refs_ahead *a, uint64_t before);
/* Bytes the sets hold. */
size_t gs_refs_ahead_memory(const gs_refs_ahead *a);

/* The calling thread's notes when no workers run: spans of lines, each
 * with the hashes of the IDs first mentioned in it, which find the spans a
 * section's dangling IDs are first mentioned in as the workers' notes do.
 * Zero is empty. */
typedef struct gs_refs_span { gs_refs_block where; size_t end; } gs_refs_span;
typedef struct gs_refs_spans {
  gs_refs_span *spans;          /* closed spans, in line order */
  size_t n, cap;
  uint32_t *hashes;             /* of span i: from spans[i - 1].end to spans[i].end */
  size_t nhashes, hashes_cap;
} gs_refs_spans;
/* As gs_refs_note, and the hashes of the IDs new to set go to the open span. */
int gs_refs_note_firsts(gs_refs_spans *s, gs_idset *set, int *overflow, const uint64_t *refs, size_t n);
/* Closes the open span, which lies at where. Returns GS_OK or GS_ENOMEM. */
int gs_refs_spans_close(gs_refs_spans *s, const gs_refs_block *where);
/* Appends to *blocks the closed spans where one of ids[0..nids) may be
 * mentioned first, as gs_refs_ahead_find does. */
int gs_refs_spans_find(const gs_refs_spans *s, const uint64_t *ids, size_t nids, gs_refs_block **blocks,
                       size_t *n, size_t *cap);
/* Forgets every span, keeping the memory for the next section's. */
void gs_refs_spans_clear(gs_refs_spans *s);
void gs_refs_spans_free(gs_refs_spans *s);
size_t gs_refs_spans_memory(const gs_refs_spans *s);

#endif
