/* gs_dom.h - dominator tree and retained sizes of a heap graph.
 *
 * The tree hangs from a virtual root joined to every root without the weak
 * flag, so an object's immediate dominator is the one object every path
 * from any strong root to it must pass through (or the virtual root when
 * no single object is on all of them). An object's retained size is the
 * bytes of its dominator subtree: what the heap would lose if it died.
 *
 * Semi-NCA (Georgiadis), iterative throughout, on flat arrays: at most 24
 * bytes per object while it runs, plus 4 per reference that points back in
 * depth-first order; 12 per object after. The scans over all references
 * and the results use a second thread when there are two processors (the
 * result is the same either way). Sizes are read through gs_graph_size, so
 * the graph may be packed (gs_graph_pack). */
#ifndef GS_DOM_H
#define GS_DOM_H

#include <stdint.h>
#include "gs_graph.h"

#define GS_DOM_UNREACHABLE UINT32_MAX

typedef struct gs_dom {
  uint32_t n;            /* nodes of the graph; node n stands for the virtual root */
  uint32_t reachable;    /* nodes reachable from a strong root */
  uint32_t *idom;        /* n + 1 entries: immediate dominator, n for the virtual
                          * root, GS_DOM_UNREACHABLE if unreachable (and for n) */
  uint64_t *retained;    /* n + 1 entries: retained bytes (0 if unreachable);
                          * retained[n] is all reachable bytes */
} gs_dom;

/* Returns GS_OK or GS_ENOMEM. */
int gs_dom_build(const gs_graph *g, gs_dom *d);
void gs_dom_free(gs_dom *d);

/* Retained bytes by type without double counting: an object counts toward
 * its type only when no object above it in the dominator tree has the same
 * type. out has g->ntypes + 1 entries; the last is for placeholders. */
int gs_dom_retained_by_type(const gs_graph *g, const gs_dom *d, uint64_t *out);

#endif
