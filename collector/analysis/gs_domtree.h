/* gs_domtree.h - a dump's dominator tree as a file, browsed a node at a time.
 *
 * gs_domtree_write computes the tree of every section once and writes it
 * (40 bytes per reachable object, 4 more for the index by ID, and per
 * type its name and retained bytes); gs_domtree_open maps such a file and gs_domtree_children answers
 * one node's children, largest retained first, a page at a time, without
 * reading the rest. The file carries the stamp of the dump it was made
 * from (size, modification time, inode), so a tree is never served for
 * another dump than its own. */
#ifndef GS_DOMTREE_H
#define GS_DOMTREE_H

#include <stdint.h>
#include <jansson.h>
#include "gs_dominators.h"
#include "gs_file.h"

typedef struct gs_domtree gs_domtree;

typedef struct gs_domtree_stamp {
  uint64_t size, mtime_ns, ino;
} gs_domtree_stamp;

/* The stamp of the file at path: GS_OK or GS_EIO (errno says why). */
int gs_domtree_stamp_of(const char *path, gs_domtree_stamp *stamp);

/* Writes the tree of the dump at dump to out (through out.PID.tmp and a
 * rename, so out is whole or absent). GS_OK, or the error with fault. */
int gs_domtree_write(const char *dump, const char *out, gs_domtree_stamp stamp,
                     gs_file_fault *fault);

/* Maps the tree file at path. GS_OK; GS_EOF when it is absent or was made
 * from another dump than stamp's; GS_EFORMAT when it is not a whole tree
 * file; GS_EIO, GS_ENOMEM. */
int gs_domtree_open(const char *path, gs_domtree_stamp stamp, gs_domtree **t);
void gs_domtree_close(gs_domtree *t);

typedef struct gs_domtree_query {
  uint32_t section;        /* from 0 */
  int root;                /* 1: the virtual root above the strong roots */
  uint64_t parent;         /* else the object's ID */
  uint64_t offset, limit;  /* the page of children */
  int by_type;             /* add "retained_by_type" (gs_domtree_by_type) */
} gs_domtree_query;

/* The node of q and a page of its children as JSON. GS_OK; GS_EINVAL
 * when the section or the object is not in the tree (reason in why);
 * GS_EFORMAT for a damaged file; GS_ENOMEM. */
int gs_domtree_children(const gs_domtree *t, const gs_domtree_query *q, json_t **out,
                        char *why, size_t cap);

/* The retained bytes of each type name, without double counting (as
 * "gcsnap dominators --by-type"), added up over the sections: a new
 * object {NAME: BYTES} in *out, types retaining nothing left out. GS_OK,
 * GS_EFORMAT, GS_ENOMEM. */
int gs_domtree_by_type(const gs_domtree *t, json_t **out);

/* The tree of every section of the dump to depth levels below the virtual
 * root, at most fanout children a node (largest retained first), as
 * {"depth", "fanout", "sections": [{"name", "reachable_bytes",
 * "reachable_objects", "root"}]}, each node {"id", "type", "shallow",
 * "retained", "children" (all of them), "kids" (those kept)}: for a page
 * that embeds the top of the tree. GS_OK, or the error with fault. */
int gs_domtree_nested(const char *dump, unsigned depth, unsigned fanout, json_t **out,
                      gs_file_fault *fault);
/* Its parts, for a caller with the analyses at hand: one section's tree,
 * and the object around the sections (taken). NULL when out of memory. */
json_t *gs_domtree_nest_section(const gs_dominators *s, unsigned depth, unsigned fanout);
json_t *gs_domtree_nest_object(unsigned depth, unsigned fanout, json_t *sections);

#endif
