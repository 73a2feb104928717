/* gs_summary.h - the summary of a dump: figures per section and in total,
 * and the JSON object "gcsnap summary --json" prints.
 *
 * Shared by the command and the collector daemon, which stores the same JSON
 * in its catalog for every snapshot, so that both always agree. */
#ifndef GS_SUMMARY_H
#define GS_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_diag.h"
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_heapstats.h"
#include "gs_reader.h"

/* Sections listed one by one, at most; the others count in the totals
 * only ("sections_omitted"), so that a file of many small sections cannot
 * make a summary hold its types many times over. */
#define GS_SUMMARY_SECTIONS 1000
/* The type rows a summary shows by default ("gcsnap summary"), and keeps
 * of each section listed. */
#define GS_SUMMARY_TOP 20

typedef struct gs_summary {
  const char *name;        /* file as shown; not owned */
  gs_heapstats total;      /* every section; total.sections counts them */
  gs_heapstats *sections;  /* the first GS_SUMMARY_SECTIONS */
  size_t nsections, cap;
  uint64_t top;            /* type rows kept of each section listed; 0 = all
                            * (the totals keep all) */
  /* When set, called with each section's graph as it is loaded, so that
   * another breakdown of the same dump needs no load of its own; an error
   * it returns ends the load. */
  int (*each_graph)(void *ctx, const gs_graph *g);
  void *each_ctx;
} gs_summary;

/* top: the type rows kept of each section listed (0 = all). */
int gs_summary_init(gs_summary *sum, const char *name, uint64_t top);
void gs_summary_free(gs_summary *sum);

/* Loads every section of r, one graph at a time. Returns GS_OK, GS_EFORMAT
 * with *d filled (an invalid record, or no section at all), GS_ELIMIT,
 * GS_EIO or GS_ENOMEM. */
int gs_summary_load(gs_summary *sum, gs_reader *r, gs_diag *d);
/* Adds the section whose graph is g, as gs_summary_load does for each one
 * it loads (each_graph included); dom is g's dominator tree or NULL. GS_OK,
 * GS_EFORMAT with d filled (the sections' bytes add up to more than
 * GS_MAX_BYTES), GS_ENOMEM. */
int gs_summary_add(gs_summary *sum, const gs_graph *g, const gs_dom *dom, gs_diag *d);

/* Sets up sum for the dump at path (plain or zstd; "-" is stdin), with
 * top as sum->top, and loads it. sum is set up even when this fails (free
 * it either way). Returns GS_OK, or the error with fault filled. */
int gs_summary_load_file(gs_summary *sum, const char *path, uint64_t top, gs_file_fault *fault);
/* The same with each_graph set to each(ctx) while it loads. */
int gs_summary_load_file_each(gs_summary *sum, const char *path, uint64_t top,
                              int (*each)(void *ctx, const gs_graph *g), void *ctx,
                              gs_file_fault *fault);

/* The report as one object: totals at the top level, each section in
 * "sections"; at most top rows of the type histogram (0 = all), and the
 * first max_sections sections listed (0 = all; "sections_omitted" counts
 * the others, which the totals include). NULL when out of memory. */
json_t *gs_summary_json(const gs_summary *sum, uint64_t top, size_t max_sections);

#endif
