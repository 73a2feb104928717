/* gs_dotnet_heap.h - a .NET runtime's heap walk, from its events.
 *
 * During a blocking full collection with the heap dump keywords on, the
 * runtime (provider Microsoft-Windows-DotNETRuntime) describes its heap in
 * bulk events: types, nodes (an object and its count of references), edges
 * (the references, in node order, in events of their own), roots, static
 * variables, dependent handles and generation ranges. The decoder pairs
 * nodes with their edges as they come; types, roots and static variables
 * go to the visitor at once, objects only at the walk's end, because the
 * runtime sends the dependent handles (a key keeps its value alive: the
 * key's line names the value) after the objects. Until then objects wait
 * in temporary files, not in memory, and they go to the visitor in parts
 * (object_begin, object_refs, object_end): memory holds dependent handles,
 * types and a chunk of references, whatever the heap. Every
 * bulk event carries an index; a gap is counted as lost events, which the
 * caller treats as a failed capture. Payloads come from another process:
 * every count is checked against the bytes there are. */
#ifndef GS_DOTNET_HEAP_H
#define GS_DOTNET_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include "gs_source.h"

#define GS_DHEAP_END 1              /* gs_dheap_event: the walk's collection ended */
#define GS_DHEAP_NAME_MAX 65536u    /* UTF-16 units of a type or field name */
#define GS_DHEAP_RANGES_MAX 65536u  /* generation ranges of a collection */
#define GS_DHEAP_CHUNK 65536u       /* references handed over at a time */

/* The runtime's event IDs the decoder reads. */
enum {
  GS_DHEAP_GC_START = 1, GS_DHEAP_GC_END = 2, GS_DHEAP_BULK_TYPE = 15,
  GS_DHEAP_ROOT_EDGE = 16, GS_DHEAP_CWT_EDGE = 17, GS_DHEAP_NODE = 18, GS_DHEAP_EDGE = 19,
  GS_DHEAP_GEN_RANGE = 23, GS_DHEAP_STATIC_VAR = 38
};

typedef struct gs_dheap gs_dheap;

/* Type names kept from one walk of a process to the next (the runtime may
 * name a type in only one of them), at most GS_DHEAP_NAMES_BYTES. */
typedef struct gs_dheap_names gs_dheap_names;
#define GS_DHEAP_NAMES_BYTES (16u << 20)
int gs_dheap_names_new(gs_dheap_names **out);
void gs_dheap_names_free(gs_dheap_names *n);

typedef struct gs_dheap_stats {
  uint64_t nodes;               /* objects of the walk */
  uint64_t index_gaps;          /* bulk events missing by their index */
  uint64_t unpaired;            /* at the walk's end: nodes and edges without each other */
  int64_t walk_start, walk_end; /* timestamps of the walk's GCStart and GCEnd */
  int walking;                  /* the walk's GCStart came, its GCEnd not yet */
} gs_dheap_stats;

/* A decoder that calls v (section opened and closed by the caller; its
 * object_begin, object_refs and object_end are needed) for payloads whose
 * addresses are pointer_size (4 or 8) bytes; names (NULL: none) are the
 * process's type names from earlier walks, and learn this one's. */
int gs_dheap_new(gs_dheap **out, const gs_heap_visitor *v, unsigned pointer_size,
                 size_t max_refs, gs_dheap_names *names);

/* One event of the runtime's provider (others are the caller's to drop):
 * GS_OK, GS_DHEAP_END at the walk's GCEnd, GS_EFORMAT (or GS_ENOMEM,
 * GS_ELIMIT) with the reason in gs_dheap_error, or a visitor's error. at
 * is the payload's offset in the stream, for messages. */
int gs_dheap_event(gs_dheap *h, uint32_t id, const unsigned char *p, size_t n,
                   int64_t timestamp, uint64_t at);

/* After GS_DHEAP_END: checks that no node waits for references, hands the
 * objects over, then the dependent handles whose key is no object (their
 * value as a weak handle root). */
int gs_dheap_finish(gs_dheap *h);

const gs_dheap_stats *gs_dheap_stats_of(const gs_dheap *h);
const char *gs_dheap_error(const gs_dheap *h);
void gs_dheap_free(gs_dheap *h);

#endif
