/* gs_analysis.h - the analyses of the gcsnap commands as JSON objects.
 *
 * Each function builds exactly the object the command prints with --json,
 * so that "gcsnap report" shows the same figures the commands give scripts.
 * Functions taking a path open the dump themselves and report failures on
 * stderr as the commands do; they return a gcsnap exit code (GS_EXIT_*)
 * and set *out only on success. */
#ifndef GS_ANALYSIS_H
#define GS_ANALYSIS_H

#include <stdint.h>
#include <jansson.h>

struct gs_summary;

/* "gcsnap dominators --json [--top N] [--by-type] PATH". */
int gs_dominators_json(const char *path, uint64_t top, int by_type, json_t **out);

/* "gcsnap diff --json [--top N] [--all] OLD NEW" over loaded summaries. */
int gs_diff_json(const struct gs_summary *old_s, const struct gs_summary *new_s, uint64_t top,
                 int all, json_t **out);

/* "gcsnap trend --json [--top N] [--threshold PCT] PATH...": npaths >= 2,
 * oldest first. */
int gs_trend_json(const char *const *paths, int npaths, uint64_t threshold, uint64_t top,
                  json_t **out);

#endif
