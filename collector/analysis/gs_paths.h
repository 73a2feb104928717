/* gs_paths.h - retention paths: which roots keep an object alive, and how.
 *
 * Only roots without the weak flag keep objects alive, so only they start
 * paths. Paths are shortest in references, found by breadth-first search
 * on flat arrays (4 bytes per node per array, no recursion). */
#ifndef GS_PATHS_H
#define GS_PATHS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_graph.h"

#define GS_PATH_NONE UINT32_MAX

/* A path is shown by its ends: the GS_PATH_ENDS nodes from its root and
 * the GS_PATH_ENDS up to its object, the middle counted, so that what is
 * printed (and held) stays the same size however deep the heap. */
#define GS_PATH_ENDS 10

/* The nodes of a path of len nodes left out in the middle (0: none). */
size_t gs_path_elided(size_t len);

/* Shortest paths to one object from up to max strong roots, nearest roots
 * first. Path i is nodes[start[i]] (its root's node) ... target, its
 * middle left out: elided[i] nodes after the first GS_PATH_ENDS. roots[i]
 * indexes g->roots. */
typedef struct gs_paths {
  size_t npaths;
  uint32_t *roots;
  size_t *start;          /* npaths + 1 entries */
  size_t *elided;
  uint32_t *nodes;
} gs_paths;

/* npaths is 0 when nothing keeps target alive. Returns GS_OK or GS_ENOMEM. */
int gs_paths_to(const gs_graph *g, uint32_t target, size_t max, gs_paths *out);
void gs_paths_free(gs_paths *p);

/* The len nodes of a path shown (the middle already left out: elided
 * nodes after the first GS_PATH_ENDS) as JSON: an array of {"id", "type",
 * "size"} with {"elided": N} in place of the middle. */
json_t *gs_path_json(const gs_graph *g, const uint32_t *nodes, size_t len, size_t elided);

/* A node as {"id" (hex), "type", "size"}; a type name, or "(not in the
 * dump)" for a placeholder. */
json_t *gs_path_node_json(const gs_graph *g, uint32_t v);
const char *gs_path_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap);

/* Leaves out the middle of a path of *len nodes in place; returns how many. */
size_t gs_path_shorten(uint32_t *nodes, size_t *len);

/* For every node reached from a strong root: the root that reaches it
 * first (index into g->roots), the first object after that root on a
 * shortest path (the root's own node for the root itself), the parent on
 * that path and its length in references; GS_PATH_NONE for unreachable
 * nodes. */
typedef struct gs_retention {
  uint32_t *root;
  uint32_t *hop;
  uint32_t *parent;
  uint32_t *depth;
} gs_retention;

int gs_retention_build(const gs_graph *g, gs_retention *r);
void gs_retention_free(gs_retention *r);

/* The reachable instances of the types marked in is_type (by type index),
 * grouped by what holds them: the root that reaches each first (kind,
 * flags, type of its object) and the type of the first object after it,
 * the way RPM's root view groups them. Groups come largest first. */
typedef struct gs_type_group {
  uint32_t root_kind, root_flags, root_type, hop_type;
  uint64_t count, bytes;
  uint32_t example;          /* the instance with the shortest path */
} gs_type_group;

/* *count and *bytes: all instances; *live: those a strong root reaches.
 * The caller frees *groups. Returns GS_OK or GS_ENOMEM. */
int gs_type_groups(const gs_graph *g, const gs_retention *ret, const uint8_t *is_type,
                   gs_type_group **groups, size_t *ngroups, uint64_t *count, uint64_t *bytes,
                   uint64_t *live);

#endif
