/* gsd_analysis.h - the analyses of the HTTP API (dominators, paths, diff,
 * trend of stored snapshots), run by the analysis library in a child
 * process (gsd_child.h) from libuv's thread pool, answered as JSON. */
#ifndef GSD_ANALYSIS_H
#define GSD_ANALYSIS_H

#include <stdint.h>
#include "h2o.h"
#include "gs_domtree.h"
#include "gs_retainers.h"
#include "gsd_server.h"

typedef enum gsd_analysis_kind {
  GSD_ANALYSIS_DOMINATORS, GSD_ANALYSIS_PATHS, GSD_ANALYSIS_DIFF, GSD_ANALYSIS_TREND,
  GSD_ANALYSIS_DOMTREE, GSD_ANALYSIS_GENS
} gsd_analysis_kind;

#define GSD_ANALYSIS_MAX_FILES 10

/* One analysis asked for: its files (malloc'd, oldest first) and options,
 * with the meaning of the same gcsnap command's. */
typedef struct gsd_analysis {
  gsd_analysis_kind kind;
  char *files[GSD_ANALYSIS_MAX_FILES];
  int nfiles;
  const char *dir;               /* the store, left out of the names answered */
  uint64_t top;                  /* dominators, diff, trend */
  uint64_t threshold;            /* trend */
  int old_only;                  /* trend, diff: gen 2 and the large object heap only */
  int by_type;                   /* dominators */
  gs_retainers_query paths;      /* paths (type points into type_name) */
  char type_name[1024];
  gs_domtree_query tree;         /* domtree: the node asked for */
  char *cache;                   /* domtree: the tree file to write; gens: the ranges (malloc'd) */
} gsd_analysis;

/* A new request of kind, zeroed; NULL when out of memory. */
gsd_analysis *gsd_analysis_new(gsd_analysis_kind kind);
void gsd_analysis_free(gsd_analysis *a);

/* In the child: writes a's tree file and answers a->tree from it
 * (gsd_api_domtree.c); a gsd_child_fn's codes. */
int gsd_domtree_compute(const gsd_analysis *a, json_t **answer, char *why, size_t cap);

/* Runs a (taking it) and answers req with its JSON: 200, 422 when the
 * input is wanting (invalid, or without what was asked), 500 otherwise,
 * with the reason. Returns 0. */
int gsd_analysis_run(gsd_server *srv, h2o_req_t *req, gsd_analysis *a);

/* The analyses running or waiting that read the stored file at path, as
 * [{"kind", "state": "running"|"waiting", "seconds" (since asked), "files"
 * (it reads), "reads" (files its child opened so far), "bytes_read" and
 * "file_bytes" (of the last one), "percent" (of it; null when unknown)}];
 * NULL when out of memory. On the loop's thread. */
json_t *gsd_analysis_progress(const char *path);

#endif
