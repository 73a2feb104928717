/* gs_retainers.c - which roots keep an object or a type alive.
 *
 * For one object, the shortest reference chains from the nearest strong
 * roots, root kind and flags shown. For a type, every live instance is
 * traced back along its shortest path to the root that reaches it first,
 * and the instances are grouped by that root (kind, flags, type) and the
 * first object after it, the way RPM's root view groups them: the groups
 * that hold the most instances are where a leak is held. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_heapstats.h"
#include "gs_json.h"
#include "gs_retainers.h"

const char *gs_retainers_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  return gs_path_type_name(g, t, buf, cap);
}

const char *gs_retainers_field(const gs_retainers_at *at, const gs_graph *g, uint32_t node) {
  return node < g->nobjects ? gs_fields_name(at->fields, at->section, g->ids[node]) : NULL;
}

static json_t *root_json(const gs_graph *g, const gs_graph_root *r, const char *field) {
  json_t *o = json_object();
  char tbuf[64];
  gs_json_set(o, "kind", gs_json_cstring(gs_root_kind_names[r->kind]));
  gs_json_set(o, "flags", gs_json_u64(r->flags));
  if (r->container != GS_GRAPH_MISSING)
    gs_json_set(o, "container", gs_json_cstring(gs_retainers_type_name(g, r->container, tbuf, sizeof tbuf)));
  if (field && r->kind == GS_ROOT_STATIC) gs_json_set(o, "field", gs_json_cstring(field));
  return o;
}

size_t gs_retainers_trace(const gs_retention *ret, uint32_t v, uint32_t *out) {
  size_t n = 0, i;
  for (; v != GS_PATH_NONE; v = ret->parent[v]) out[n++] = v;
  for (i = 0; i < n / 2; i++) { uint32_t t = out[i]; out[i] = out[n - 1 - i]; out[n - 1 - i] = t; }
  return n;
}

static uint32_t find_object(const gs_graph *g, uint64_t id) {
  uint32_t lo = 0, hi = g->nobjects;
  /* Objects are numbered in ID order. */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->ids[mid] < id) lo = mid + 1; else hi = mid;
  }
  return lo < g->nobjects && g->ids[lo] == id ? lo : GS_PATH_NONE;
}

/* Marks the type indices of g named name; returns how many. */
static size_t mark_types(const gs_graph *g, const char *name, uint8_t *is_type) {
  size_t n = 0;
  uint32_t t;
  char buf[64];
  for (t = 0; t < g->ntypes; t++) {
    is_type[t] = !strcmp(gs_graph_type_name(g, t, buf, sizeof buf), name);
    n += is_type[t];
  }
  return n;
}

/* ---- each section ---------------------------------------------------- */

static int one_section(const gs_retainers_query *q, const gs_graph *g, gs_retainers_fn fn,
                       void *ctx, const gs_retainers_at *at, int *found) {
  uint8_t *is_type;
  int err;
  if (q->has_object) {
    uint32_t v = find_object(g, q->object);
    *found |= v != GS_PATH_NONE;
    return fn(ctx, g, v, NULL, at);
  }
  if (!(is_type = calloc((size_t)g->ntypes + 1, 1))) return GS_ENOMEM;
  if (mark_types(g, q->type, is_type)) {
    *found = 1;
    err = fn(ctx, g, GS_PATH_NONE, is_type, at);
  } else {
    err = fn(ctx, g, GS_PATH_NONE, NULL, at);
  }
  free(is_type);
  return err;
}

int gs_retainers_each(const char *path, const gs_retainers_query *q, gs_retainers_fn fn,
                      void *ctx, gs_file_fault *fault) {
  gs_file *f;
  gs_reader *r;
  gs_fields *fields = NULL;
  gs_retainers_at at;
  int found = 0, any = 0, err = gs_file_open_dump(path, &f, &r, fault);
  if (!err && gs_fields_load(&fields, path))
    err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  at.section = 0;
  at.fields = fields;
  while (!err) {
    gs_graph *g = NULL;
    gs_diag d;
    err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF && any) { err = GS_OK; break; }
    if (err == GS_EOF) {
      gs_file_fault_text(fault, gs_file_name(f), err, "no AppDomain section ('a' record) in the input");
      break;
    }
    if (err) { gs_file_fault_set(fault, f, err, &d); break; }
    any = 1;
    gs_file_hide_progress(f);
    err = one_section(q, g, fn, ctx, &at, &found);
    at.section++;
    gs_graph_free(g);
    if (err) gs_file_fault_text(fault, NULL, err, NULL);
  }
  if (!err && !found) {
    char what[300];
    if (q->has_object) snprintf(what, sizeof what, "no object %" PRIx64 " in any section", q->object);
    else snprintf(what, sizeof what, "no type named '%s' in any section", q->type);
    err = gs_file_fault_text(fault, gs_file_name(f), GS_EOF, what);
  }
  gs_file_close_dump(f, r);
  gs_fields_free(fields);
  return err;
}

/* ---- JSON -------------------------------------------------------------- */

static int object_json(const gs_graph *g, uint32_t v, size_t max, const gs_retainers_at *at,
                       json_t *out) {
  json_t *paths = json_array();
  gs_paths p;
  size_t i;
  if (gs_paths_to(g, v, max ? max : g->nroots, &p)) { json_decref(paths); return GS_ENOMEM; }
  gs_json_set(out, "object", gs_path_node_json(g, v));
  for (i = 0; i < p.npaths; i++) {
    json_t *one = json_object();
    const uint32_t *nodes = p.nodes + p.start[i];
    gs_json_set(one, "root", root_json(g, &g->roots[p.roots[i]], gs_retainers_field(at, g, nodes[0])));
    gs_json_set(one, "path", gs_path_json(g, p.nodes + p.start[i], p.start[i + 1] - p.start[i], p.elided[i]));
    json_array_append_new(paths, one);
  }
  gs_json_set(out, "paths", paths);
  gs_paths_free(&p);
  return GS_OK;
}

static json_t *group_json(const gs_graph *g, const gs_retention *ret, const gs_type_group *gr,
                          uint32_t *chain, const gs_retainers_at *at) {
  json_t *o = json_object();
  size_t len = gs_retainers_trace(ret, gr->example, chain), elided = gs_path_shorten(chain, &len);
  char rbuf[64], hbuf[64];
  gs_json_set(o, "objects", gs_json_u64(gr->count));
  gs_json_set(o, "bytes", gs_json_u64(gr->bytes));
  gs_json_set(o, "root_kind", gs_json_cstring(gs_root_kind_names[gr->root_kind]));
  gs_json_set(o, "root_flags", gs_json_u64(gr->root_flags));
  gs_json_set(o, "root_type", gs_json_cstring(gs_retainers_type_name(g, gr->root_type, rbuf, sizeof rbuf)));
  if (len && gr->root_kind == GS_ROOT_STATIC && gs_retainers_field(at, g, chain[0]))
    gs_json_set(o, "root_field", gs_json_cstring(gs_retainers_field(at, g, chain[0])));
  gs_json_set(o, "first_hop_type", gs_json_cstring(gs_retainers_type_name(g, gr->hop_type, hbuf, sizeof hbuf)));
  gs_json_set(o, "example_path", gs_path_json(g, chain, len, elided));
  return o;
}

int gs_retainers_type_build(gs_retainers_type *t, const gs_graph *g, const uint8_t *is_type,
                            size_t max) {
  memset(t, 0, sizeof *t);
  if (gs_retention_build(g, &t->ret)) return GS_ENOMEM;
  if (gs_type_groups(g, &t->ret, is_type, &t->groups, &t->ngroups, &t->count, &t->bytes,
                     &t->live) ||
      !(t->chain = malloc(((size_t)g->nnodes + 1) * sizeof *t->chain)))
    return GS_ENOMEM;
  t->shown = max == 0 || max > t->ngroups ? t->ngroups : max;
  return GS_OK;
}

void gs_retainers_type_free(gs_retainers_type *t) {
  gs_retention_free(&t->ret);
  free(t->groups);
  free(t->chain);
  memset(t, 0, sizeof *t);
}

static int type_json(const gs_graph *g, const uint8_t *is_type, const char *name, size_t max,
                     const gs_retainers_at *at, json_t *out) {
  gs_retainers_type t;
  json_t *arr;
  size_t i;
  if (gs_retainers_type_build(&t, g, is_type, max)) {
    gs_retainers_type_free(&t);
    return GS_ENOMEM;
  }
  arr = json_array();
  gs_json_set(out, "type", gs_json_cstring(name));
  gs_json_set(out, "objects", gs_json_u64(t.count));
  gs_json_set(out, "bytes", gs_json_u64(t.bytes));
  gs_json_set(out, "reachable", gs_json_u64(t.live));
  for (i = 0; i < t.shown; i++) json_array_append_new(arr, group_json(g, &t.ret, &t.groups[i], t.chain, at));
  gs_json_set(out, "groups", arr);
  gs_retainers_type_free(&t);
  return GS_OK;
}

typedef struct json_ctx { const gs_retainers_query *q; json_t *sections; } json_ctx;

static int section_json(void *ctx, const gs_graph *g, uint32_t object, const uint8_t *is_type,
                        const gs_retainers_at *at) {
  json_ctx *j = ctx;
  json_t *o = json_object();
  gs_json_set(o, "name", gs_json_cstring(g->name));
  json_array_append_new(j->sections, o);
  if (object != GS_PATH_NONE) return object_json(g, object, j->q->max, at, o);
  if (is_type) return type_json(g, is_type, j->q->type, j->q->max, at, o);
  return GS_OK;
}

int gs_retainers_json(const char *path, const gs_retainers_query *q, json_t **out,
                      gs_file_fault *fault) {
  json_ctx j;
  int err;
  *out = NULL;
  j.q = q;
  if (!(j.sections = json_array())) return gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  if ((err = gs_retainers_each(path, q, section_json, &j, fault)) != GS_OK) {
    json_decref(j.sections);
    return err;
  }
  *out = json_object();
  gs_json_set(*out, "file", gs_json_cstring(gs_file_display_name(path)));
  gs_json_set(*out, "sections", j.sections);
  return GS_OK;
}
