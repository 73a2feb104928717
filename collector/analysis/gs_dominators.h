/* gs_dominators.h - retained sizes by object and by type, a section at a
 * time (the analysis of "gcsnap dominators" and of the collector's
 * /dominators).
 *
 * Memory is one section's graph and its dominator tree at a time. */
#ifndef GS_DOMINATORS_H
#define GS_DOMINATORS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_dom.h"
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_jsonw.h"

/* One section's analysis. */
typedef struct gs_dominators {
  const gs_graph *g;
  gs_dom dom;
  /* Objects of the dump; the tree also reaches the nodes of referenced
   * objects the dump lacks, which are neither. */
  uint64_t reachable, unreachable, unreachable_bytes;
  uint32_t *top;             /* nodes, largest retained first */
  size_t ntop;
  uint64_t *type_retained;   /* ntypes + 1, with by_type */
  uint64_t *type_count, *type_shallow;
  uint32_t *type_order;      /* types, largest retained first */
  size_t ntype_rows;
} gs_dominators;

void gs_dominators_free(gs_dominators *s);
/* The name of type t of g, "(not in the dump)" for a missing one. */
const char *gs_dominators_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap);
/* One section as in "gcsnap dominators --json", written to w; as a value
 * (NULL when out of memory). */
void gs_dominators_write_section(gs_jsonw *w, const gs_dominators *s, int by_type);
json_t *gs_dominators_json_section(const gs_dominators *s, int by_type);

/* Called with each section's analysis, in order; an error stops the run.
 * The section's graph (s->g) no longer has its references: the tree holds
 * what they said (gs_graph_drop_refs). */
typedef int (*gs_dominators_fn)(void *ctx, const gs_dominators *s, size_t index);
/* Analyses each section of the dump at path. GS_OK, or the error with
 * fault filled (a dump without a section is GS_EFORMAT). */
int gs_dominators_each(const char *path, uint64_t top, int by_type, gs_dominators_fn fn,
                       void *ctx, gs_file_fault *fault);
/* The object "gcsnap dominators --json [--top N] [--by-type] PATH" prints:
 * around its sections (taken, as gs_dominators_json_section makes them),
 * NULL when out of memory; written to w a section at a time (nothing when
 * the first cannot be analysed; the error of a later one leaves the
 * document unfinished), or as a value. Both return GS_OK or the error
 * with fault filled. */
json_t *gs_dominators_json_object(const char *path, json_t *sections);
int gs_dominators_write(gs_jsonw *w, const char *path, uint64_t top, int by_type, gs_file_fault *fault);
int gs_dominators_json(const char *path, uint64_t top, int by_type, json_t **out,
                       gs_file_fault *fault);

#endif
