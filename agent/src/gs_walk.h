/* gs_walk.h - the heap walker: drives a source into a sink.
 *
 * The walker stamps each section's "a" and "c" records with the time (ms
 * since boot, from the port layer's clock), checks that the source keeps the
 * order the format needs (records inside a section, sections closed), counts
 * what goes through, and with stable IDs marks each section by appending
 * GS_WALK_STABLE_MARK to its AppDomain name. It keeps no record: memory is
 * that of the longest section name. It does not commit the sink. */
#ifndef GS_WALK_H
#define GS_WALK_H

#include <stddef.h>
#include <stdint.h>
#include "gs_sink.h"
#include "gs_source.h"

/* The side channel analysis tools read: object IDs are stable across dumps. */
#define GS_WALK_STABLE_MARK " [stable-ids]"

typedef struct gs_walk_options {
  int stable_ids;           /* needs a source with stable_ids set */
  int fixed_clock;          /* stamp every section with clock_ms, not the time */
  uint64_t clock_ms;
  size_t max_refs;          /* of one object; 0: GS_READER_DEFAULT_MAX_REFS, what
                             * the record reader takes back by default */
} gs_walk_options;

typedef enum gs_walk_failure {
  GS_WALK_OK = 0,
  GS_WALK_USAGE,            /* the options do not fit the source */
  GS_WALK_SOURCE,           /* the source failed or broke the record order */
  GS_WALK_SINK              /* the sink could not take a record */
} gs_walk_failure;

typedef struct gs_walk_stats {
  uint64_t sections, types, objects, references, roots, generations;
  uint64_t seconds_us;      /* time of the walk */
  gs_walk_failure failed;   /* who failed, when gs_walk returned an error */
  char error[256];          /* and why */
} gs_walk_stats;

/* GS_EINVAL, with the reason in err, when opt does not fit src (stable IDs
 * from a source that cannot keep them). */
int gs_walk_check(const gs_source *src, const gs_walk_options *opt, char *err,
                  size_t errcap);

/* Walks src into sink. Returns GS_OK or the first error, with stats->failed
 * and stats->error saying which side failed and why. */
int gs_walk(gs_source *src, gs_sink *sink, const gs_walk_options *opt, gs_walk_stats *stats);

#endif
