/* gs_graph.h - compact in-memory object graph of one section of a dump.
 *
 * For analyses that need the whole graph (reachability, paths, dominators).
 * Arrays, not a node per object: 8 bytes of ID, 8 of size, 4 of type and 4 of
 * reference offset per object (24 bytes), 4 bytes per reference (CSR), 16 per
 * root. Objects are nodes 0..nobjects-1 in ascending ID order; objects that
 * are referenced or rooted but not in the dump get the nodes after them, with
 * type GS_GRAPH_MISSING and size 0, so every reference resolves.
 *
 * Limits: fewer than 2^32-1 nodes and 2^32-1 references per section. */
#ifndef GS_GRAPH_H
#define GS_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include "gs_diag.h"
#include "gs_reader.h"

#define GS_GRAPH_MISSING UINT32_MAX   /* node type / container: not in the dump */

typedef struct gs_graph_root {
  uint32_t node;
  uint32_t container;   /* type index for static roots, else GS_GRAPH_MISSING */
  uint8_t kind;
  uint8_t flags;
  uint8_t pad_[6];
} gs_graph_root;

typedef struct gs_graph {
  /* section */
  char *name;                 /* AppDomain name, NUL-terminated */
  uint64_t version;
  uint64_t timestamp, end_timestamp;
  uint64_t first_line;        /* line of the "a" record */
  /* objects: node i */
  uint32_t nnodes;            /* objects in the dump plus missing placeholders */
  uint32_t nobjects;          /* objects in the dump */
  uint64_t *ids;
  uint64_t *sizes;
  uint32_t *types;            /* type index, or GS_GRAPH_MISSING */
  uint32_t *ref_offsets;      /* nnodes + 1 entries */
  uint32_t *refs;             /* node indices */
  uint64_t nrefs;
  uint64_t dangling_refs;     /* references to missing nodes */
  /* types: type index t */
  uint32_t ntypes;
  uint64_t *type_ids;
  uint32_t *type_name_offsets; /* into type_names; UINT32_MAX if never defined */
  char *type_names;           /* NUL-terminated names, back to back */
  size_t type_names_len;
  /* roots */
  uint32_t nroots;
  gs_graph_root *roots;
  struct gs_graph_packing *packing;   /* ids, sizes, types while packed */
} gs_graph;

/* Loads the next section of r. Returns GS_OK, GS_EOF when no section is left,
 * GS_EFORMAT with *err filled for an invalid record or structure (duplicate
 * object, section not closed...), GS_ELIMIT, GS_ENOMEM or GS_EIO. The reader's
 * own syntax errors are returned as GS_EFORMAT too. */
int gs_graph_load(gs_reader *r, gs_graph **g, gs_diag *err);
void gs_graph_free(gs_graph *g);

/* Name of type index t ("?" followed by the hex ID when never defined). The
 * returned pointer is valid until the next call with the same buffer. */
const char *gs_graph_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap);

/* Marks in bits (nnodes bits, caller-zeroed; node n is bit n % 8 of byte
 * n / 8) every node reachable from a root without the weak flag. Returns
 * GS_OK or GS_ENOMEM. */
int gs_graph_reachable(const gs_graph *g, uint8_t *bits);

/* Packs ids and sizes into 1, 2 or about 4 bytes per node each, and types
 * into 1 or 2 when there are fewer than 65535, for an analysis that needs
 * none of them until it ends: those arrays become NULL until
 * gs_graph_unpack (sizes stay when too many are 4 GiB or more);
 * gs_graph_size works in both states.
 * GS_OK or GS_ENOMEM; either way gs_graph_unpack restores them (GS_OK, or
 * GS_ENOMEM with the graph still packed). */
int gs_graph_pack(gs_graph *g);
int gs_graph_unpack(gs_graph *g);
uint64_t gs_graph_size(const gs_graph *g, uint32_t v);

/* Frees the references, for an analysis done with them: refs and
 * ref_offsets become NULL, nrefs and dangling_refs stay the counts. */
void gs_graph_drop_refs(gs_graph *g);

/* Bytes the graph holds (arrays only), for the memory bound. */
size_t gs_graph_memory(const gs_graph *g);

#endif
