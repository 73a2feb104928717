/* gs_gens.h - bytes and counts of a dump by generation (0, 1, 2, the large
 * object heap), from the generation ranges kept beside it (the collector's
 * DUMP.gens.json, gs_genfile.h): an object whose ID is an
 * address inside a range of its section belongs to that range's
 * generation; the others are "unknown" (IDs that are not addresses, or
 * outside every range). */
#ifndef GS_GENS_H
#define GS_GENS_H

#include <stdint.h>
#include <jansson.h>
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_histo.h"
#include "gs_summary.h"

/* A breakdown fed one section's graph at a time, in order (so the load
 * of a summary can feed it, through gs_summary's each_graph): started
 * with the ranges file at gens_path, or with the ranges beside the dump
 * at dump (*out stays NULL when there are none). GS_OK, or the error with
 * fault (GS_EFORMAT for a ranges file that is not one). */
typedef struct gs_gens gs_gens;
int gs_gens_start(const char *gens_path, gs_gens **out, gs_file_fault *fault);
int gs_gens_start_beside(const char *dump, gs_gens **out, gs_file_fault *fault);
/* Counts the next section's objects. GS_OK or GS_ENOMEM. */
int gs_gens_add(gs_gens *gs, const gs_graph *g);
/* gs_gens_add as gs_summary's each_graph, gs its context. */
int gs_gens_each_graph(void *gs, const gs_graph *g);
/* gs_gens_json's object for the sections added; NULL when out of memory. */
json_t *gs_gens_result(const gs_gens *gs, uint64_t top);
void gs_gens_free(gs_gens *gs);

/* {"generations": [{"generation": "0"|"1"|"2"|"loh"|"unknown", "objects",
 * "bytes", "types": [{"type", "count", "bytes"}] (the top largest)}],
 * "ranges": N} for the dump at dump and the ranges at gens. GS_OK, or the
 * error with fault (GS_EFORMAT also for a ranges file that is not one). */
int gs_gens_json(const char *dump, const char *gens, uint64_t top, json_t **out,
                 gs_file_fault *fault);

/* The summary of the dump at dump and, from the same load, its breakdown
 * by generation in *out: by the ranges beside it, NULL when there are none.
 * With old_only the ranges must be there, and the summary is narrowed to
 * the long-lived objects (where leaks live): its total objects, bytes and
 * type histogram are those of generation 2 and the large object heap (the
 * sections' figures stay whole). sum is set up even when this fails. GS_OK,
 * or the error with fault. */
int gs_gens_load_summary(gs_summary *sum, const char *dump, int old_only, gs_gens **out,
                         gs_file_fault *fault);
/* Adds "generations" to diff (gs_diff_json's object) from the breakdowns
 * of its two dumps, nothing when either is NULL: [{"generation",
 * "objects_before", "objects_after", "objects_change", "bytes_before",
 * "bytes_after", "bytes_change"}]. GS_OK or GS_ENOMEM. */
int gs_gens_diff_of(json_t *diff, const gs_gens *before, const gs_gens *after);

#endif
