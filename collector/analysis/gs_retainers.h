/* gs_retainers.h - what keeps an object or a type alive, in every section
 * of a dump (the analysis of "gcsnap paths" and of the collector's
 * /api/snapshots/ID/paths), over the paths of gs_paths.h. */
#ifndef GS_RETAINERS_H
#define GS_RETAINERS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_fields.h"
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_paths.h"

/* What to look for: one object by ID, or every instance of a type name;
 * max paths or groups (0: all). */
typedef struct gs_retainers_query {
  int has_object;
  uint64_t object;
  const char *type;
  size_t max;
} gs_retainers_query;

/* Where a section is: its index in the dump and the field names of the
 * dump's static roots (gs_fields.h), for gs_retainers_field. */
typedef struct gs_retainers_at {
  uint64_t section;
  const gs_fields *fields;
} gs_retainers_at;

/* Called for every section: object is the node of the object looked for
 * (GS_PATH_NONE when the section has none), is_type marks the type
 * indices named (NULL when the section has none). An error stops. */
typedef int (*gs_retainers_fn)(void *ctx, const gs_graph *g, uint32_t object,
                               const uint8_t *is_type, const gs_retainers_at *at);

/* The field name of the static root whose object is node, or NULL. */
const char *gs_retainers_field(const gs_retainers_at *at, const gs_graph *g, uint32_t node);

/* Runs fn over each section of the dump at path. GS_OK, or the error with
 * fault filled; GS_EOF when no section has what q names, or the dump has
 * no section. */
int gs_retainers_each(const char *path, const gs_retainers_query *q, gs_retainers_fn fn,
                      void *ctx, gs_file_fault *fault);

/* The object "gcsnap paths --json" prints. */
int gs_retainers_json(const char *path, const gs_retainers_query *q, json_t **out,
                      gs_file_fault *fault);

/* The instances of the types marked in is_type, grouped by what holds
 * them (gs_type_groups), with the max largest groups shown (0: all) and
 * room to trace their paths (gs_retainers_trace into chain). */
typedef struct gs_retainers_type {
  gs_retention ret;
  gs_type_group *groups;
  size_t ngroups, shown;
  uint64_t count, bytes, live;   /* all instances, their bytes, those reached */
  uint32_t *chain;
} gs_retainers_type;

/* GS_OK or GS_ENOMEM; free t either way. */
int gs_retainers_type_build(gs_retainers_type *t, const gs_graph *g, const uint8_t *is_type,
                            size_t max);
void gs_retainers_type_free(gs_retainers_type *t);

/* For printing: the name of type t ("(not in the dump)" for a missing
 * one), and the path that reaches v first, root first, into out (room for
 * g->nnodes); returns its length. */
const char *gs_retainers_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap);
size_t gs_retainers_trace(const gs_retention *ret, uint32_t v, uint32_t *out);

#endif
