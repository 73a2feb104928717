/* gs_trend.h - leak suspects over a series of snapshots (the analysis of
 * "gcsnap trend" and of the collector's /api/devices/ID/trend).
 *
 * Each file is read a section at a time: its summary, then (when all have
 * stable IDs) its object IDs, then the last file's graphs once more to say
 * what holds each suspect. */
#ifndef GS_TREND_H
#define GS_TREND_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_file.h"
#include "gs_histo.h"
#include "gs_summary.h"

/* One type's series: count and bytes in each snapshot. */
typedef struct gs_trend_series {
  const char *name;
  uint64_t *count, *bytes;
  int every;                 /* count grew in every interval */
  int64_t gained;            /* bytes, last minus first */
  /* what holds it in the last snapshot */
  int held;
  char *root_kind, *root_type, *hop_type;
  char *root_field;          /* a static root's field, where the side file names it */
  uint32_t root_flags;       /* of the root that holds the most */
  uint64_t held_count, held_bytes;
  json_t *path;              /* [{id, type, size}] */
} gs_trend_series;

typedef struct gs_trend {
  int nfiles;
  gs_summary *sums;
  gs_trend_series *rows;
  size_t nrows;
  gs_trend_series **suspects;
  size_t nsuspects;
  int stable;
  uint64_t survivors, survivor_bytes;
  gs_histo *survivor_types;
} gs_trend;

/* Analyses the npaths (at least 2) dumps at paths, oldest first, into t
 * (free it with gs_trend_free either way): the suspects are the types
 * whose bytes grew by more than threshold percent, or whose count grew in
 * every interval, the top largest gains (0: all). With old_only, only the
 * objects of generation 2 and the large object heap (gs_gens.h) of each
 * file count, by the generation ranges beside it; who holds a suspect is
 * still looked for among all its instances in the last snapshot. GS_OK, or
 * the error with fault filled. */
int gs_trend_analyse(gs_trend *t, const char *const *paths, int npaths, int old_only,
                     uint64_t threshold, uint64_t top, gs_file_fault *fault);
void gs_trend_free(gs_trend *t);
/* The rule of a suspect over n (at least 2) snapshots, oldest first: the
 * count grew in every interval (*every), or the count and the bytes grew
 * and the bytes by more than threshold percent (or from nothing). */
int gs_trend_suspect(const uint64_t *count, const uint64_t *bytes, int n, uint64_t threshold,
                     int *every);
/* The object "gcsnap trend --json" prints; NULL when out of memory. */
json_t *gs_trend_json(const gs_trend *t);

#endif
