/* gsf_v8dom.h - the DOM state of the nodes of a Chromium heap snapshot.
 *
 * Blink marks some native nodes attached to the document or detached from
 * it (the node field "detachedness"); DevTools passes the state on to the
 * native nodes of unknown state they hold before it names the detached ones
 * "Detached NAME", and so does this, the same way: what an attached node
 * reaches is attached, then what a detached one reaches and is not attached
 * is detached, through edges that are not hidden, invisible or weak, and
 * never through a node that is not native. */
#ifndef GSF_V8DOM_H
#define GSF_V8DOM_H

#include <stddef.h>
#include <stdint.h>

/* A node's byte in the V8 reader: its type number and its state. */
#define GSF_V8_TYPE     0x1f
#define GSF_V8_ATTACHED 0x20
#define GSF_V8_DETACHED 0x40

/* An edge kept by the reader; follow is 0 for the edges the state does not
 * pass through. */
typedef struct gsf_v8_edge {
  uint32_t from, to;
  uint8_t follow;
} gsf_v8_edge;

/* The edges of node k in e[0..n), which is sorted by from: [*first, *last). */
void gsf_v8_edges_of(const gsf_v8_edge *e, size_t n, size_t k, size_t *first, size_t *last);

/* Sets the state bits of the n nodes' bytes in types; native is the type
 * number of native nodes, whose edges must all be in e (sorted by from).
 * Returns GS_OK or GS_ENOMEM. */
int gsf_v8dom_propagate(unsigned char *types, size_t n, unsigned native, const gsf_v8_edge *e,
                        size_t ne);

#endif
