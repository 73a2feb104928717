/* gs_histo.h - histogram of objects by type name: count and bytes per name.
 *
 * Keyed by name, not by type ID, because IDs are only meaningful inside one
 * section: the totals of a multi-section file add up rows by name. */
#ifndef GS_HISTO_H
#define GS_HISTO_H

#include <stddef.h>
#include <stdint.h>

typedef struct gs_histo_row {
  char *name;
  uint64_t count;
  uint64_t bytes;
} gs_histo_row;

typedef struct gs_histo gs_histo;

int gs_histo_new(gs_histo **h);
void gs_histo_free(gs_histo *h);
/* Adds count and bytes to the row of name (created when new). */
int gs_histo_add(gs_histo *h, const char *name, uint64_t count, uint64_t bytes);
size_t gs_histo_size(const gs_histo *h);
const gs_histo_row *gs_histo_row_at(const gs_histo *h, size_t i);
/* A new array of the rows, by bytes descending, then count descending, then
 * name; the caller frees the array (not the rows). */
int gs_histo_sorted(const gs_histo *h, const gs_histo_row ***rows);

#endif
