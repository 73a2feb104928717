/* gs_graph_pack.h - what gs_graph.c needs of the packing (gs_graph_pack.c).
 * Internal. */
#ifndef GS_GRAPH_PACK_H
#define GS_GRAPH_PACK_H

#include "gs_graph.h"

/* Frees a graph's packed arrays; NULL is nothing. */
void gs_graph_packing_free_(struct gs_graph_packing *p);

#endif
