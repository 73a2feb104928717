/* gs_heapstats.h - the numbers "gcsnap summary" reports for a heap.
 *
 * Computed per section from its gs_graph, then added up for the whole file.
 * Placeholder nodes of objects that are referenced but not in the dump are
 * not objects: they count only as dangling references or dangling roots. */
#ifndef GS_HEAPSTATS_H
#define GS_HEAPSTATS_H

#include <stdint.h>
#include "gs_dom.h"
#include "gs_graph.h"
#include "gs_histo.h"
#include "gs_reader.h"

/* Root flag buckets; a root with several flag bits counts in each. */
enum { GS_RFLAG_NONE, GS_RFLAG_PINNED, GS_RFLAG_WEAK, GS_RFLAG_INTERIOR,
       GS_RFLAG_OTHER, GS_RFLAG_BUCKETS };

extern const char *const gs_root_kind_names[GS_ROOT_KINDS];
extern const char *const gs_root_flag_names[GS_RFLAG_BUCKETS];

/* Rows of a type table taken together: how many, their objects and bytes. */
typedef struct gs_heapstats_rest {
  uint64_t types, count, bytes;
} gs_heapstats_rest;

typedef struct gs_heapstats {
  char *name;                  /* section's AppDomain; NULL for totals */
  uint64_t timestamp;
  uint64_t line;               /* line of the section's "a" record */
  uint64_t sections;
  uint64_t objects, bytes;
  uint64_t references, dangling_references;
  uint64_t roots, dangling_roots;
  uint64_t roots_by_kind[GS_ROOT_KINDS];
  uint64_t roots_by_flag[GS_RFLAG_BUCKETS];
  uint64_t unreachable, unreachable_bytes;  /* objects no strong root reaches */
  gs_histo *by_type;           /* objects and bytes per type name */
  gs_histo *type_names;        /* defined type names (counts unused); NULL once trimmed */
  uint64_t types;              /* their number, once trimmed */
  gs_heapstats_rest folded;    /* the rows of by_type that trimming folded */
} gs_heapstats;

int gs_heapstats_init(gs_heapstats *s);
void gs_heapstats_free(gs_heapstats *s);
/* Fills a fresh s (after init) from one section's graph; dom, when not
 * NULL, is that graph's dominator tree and spares a reachability pass. */
int gs_heapstats_of_graph(gs_heapstats *s, const gs_graph *g, const gs_dom *dom);
/* Adds a section's numbers into the totals. */
int gs_heapstats_add(gs_heapstats *total, const gs_heapstats *section);
/* Distinct type names defined. */
uint64_t gs_heapstats_types(const gs_heapstats *s);
/* What a section's entry needs once its numbers are in the totals: the
 * top rows of by_type (0 = all), the others folded into s->folded, and
 * the number of type names instead of the names. GS_OK or GS_ENOMEM. */
int gs_heapstats_trim(gs_heapstats *s, uint64_t top);
/* The rows of by_type by bytes (free the array), how many of them the top
 * (0 = all) shows, and the rest: the rows past those, and those folded. */
int gs_heapstats_top(const gs_heapstats *s, uint64_t top, const gs_histo_row ***rows,
                     size_t *shown, gs_heapstats_rest *rest);

#endif
