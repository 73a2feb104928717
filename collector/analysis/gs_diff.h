/* gs_diff.h - two summaries compared type by type (the analysis of
 * "gcsnap diff" and of the collector's /api/diff). */
#ifndef GS_DIFF_H
#define GS_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_histo.h"
#include "gs_summary.h"

/* One type name of either side; [0] is old, [1] new; names are the
 * histograms'. */
typedef struct gs_diff_row {
  const char *name;
  uint64_t count[2], bytes[2];
} gs_diff_row;

/* One row per type name of either histogram, largest growth in bytes
 * first. GS_OK or GS_ENOMEM; the caller frees *rows. */
int gs_diff_join(const gs_histo *old_h, const gs_histo *new_h, gs_diff_row **rows, size_t *n);
/* after - before, as a signed change. */
int64_t gs_diff_change(uint64_t before, uint64_t after);
int gs_diff_unchanged(const gs_diff_row *r);
/* "new", "gone" or "". */
const char *gs_diff_status(const gs_diff_row *r);

/* The object "gcsnap diff --json [--top N] [--all]" prints; NULL when out
 * of memory. */
json_t *gs_diff_json(const gs_summary *old_s, const gs_summary *new_s, uint64_t top, int all);

#endif
