/* gs_dominators.c - what each object keeps alive, section by section.
 *
 * For each section: the objects with the largest retained size (the bytes
 * that would be freed if the object died), and by type the retained size
 * of each type without double counting, as Eclipse MAT's dominator tree
 * view shows them. Unreachable objects are counted apart: nothing keeps
 * them alive, so they retain nothing. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_dominators.h"
#include "gs_error.h"
#include "gs_json.h"

/* ---- ranking ---------------------------------------------------------- */

/* Beyond this many rows a full sort beats insertion into the kept rows. */
#define INSERTION_LIMIT 1000

static const uint64_t *sort_key;

static int by_key_desc(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (sort_key[x] != sort_key[y]) return sort_key[x] < sort_key[y] ? 1 : -1;
  return x < y ? -1 : 1;
}

/* The at most limit entries of 0..n-1 with the largest key that keep()
 * accepts, largest first; out has room for limit entries (all n when limit
 * is above INSERTION_LIMIT). */
static size_t top_of(const uint64_t *key, uint32_t n, size_t limit,
                     int (*keep)(const gs_dominators *, uint32_t), const gs_dominators *s,
                     uint32_t *out) {
  size_t count = 0, j;
  uint32_t i;
  if (limit > INSERTION_LIMIT) {
    for (i = 0; i < n; i++)
      if (keep(s, i)) out[count++] = i;
    sort_key = key;
    qsort(out, count, sizeof *out, by_key_desc);
    return count < limit ? count : limit;
  }
  for (i = 0; i < n && limit; i++) {
    if (!keep(s, i)) continue;
    if (count == limit && key[i] <= key[out[count - 1]]) continue;
    j = count < limit ? count++ : count - 1;
    while (j > 0 && key[out[j - 1]] < key[i]) { out[j] = out[j - 1]; j--; }
    out[j] = i;
  }
  assert(count <= limit);
  return count;
}

static int reachable_object(const gs_dominators *s, uint32_t v) {
  return v < s->g->nobjects && s->dom.idom[v] != GS_DOM_UNREACHABLE;
}

static int any_type(const gs_dominators *s, uint32_t t) {
  return s->type_count[t] > 0;
}

/* Room for the rows top_of() may use: all n beyond its insertion limit. */
static size_t rows_for(size_t limit, uint32_t n) {
  if (limit == 0 || limit > n) limit = n;
  return limit > INSERTION_LIMIT ? n : limit;
}

/* Analyses g, keeping the limit largest rows (0: all), and by type too
 * when by_type. The tree's work arrays are the peak: IDs, sizes and types
 * wait packed meanwhile, and the references are freed once it is built,
 * before they are widened again. GS_OK or GS_ENOMEM; free s either way. */
static int analyse(gs_dominators *s, gs_graph *g, size_t limit, int by_type) {
  uint32_t v, ntypes = g->ntypes + 1;
  memset(s, 0, sizeof *s);
  s->g = g;
  if (gs_graph_pack(g) || gs_dom_build(g, &s->dom)) return GS_ENOMEM;
  gs_graph_drop_refs(g);
  if (gs_graph_unpack(g)) return GS_ENOMEM;
  for (v = 0; v < g->nobjects; v++)
    if (s->dom.idom[v] == GS_DOM_UNREACHABLE) { s->unreachable++; s->unreachable_bytes += g->sizes[v]; }
  s->reachable = g->nobjects - s->unreachable;
  if (!(s->top = malloc((rows_for(limit, g->nobjects) + 1) * sizeof *s->top))) return GS_ENOMEM;
  s->ntop = top_of(s->dom.retained, g->nobjects, limit ? limit : g->nobjects, reachable_object, s,
                   s->top);
  if (!by_type) return GS_OK;
  s->type_retained = calloc(ntypes, sizeof *s->type_retained);
  s->type_count = calloc(ntypes, sizeof *s->type_count);
  s->type_shallow = calloc(ntypes, sizeof *s->type_shallow);
  s->type_order = malloc((rows_for(limit, ntypes) + 1) * sizeof *s->type_order);
  if (!s->type_retained || !s->type_count || !s->type_shallow || !s->type_order ||
      gs_dom_retained_by_type(g, &s->dom, s->type_retained))
    return GS_ENOMEM;
  for (v = 0; v < g->nnodes; v++) {
    uint32_t t = g->types[v] == GS_GRAPH_MISSING ? g->ntypes : g->types[v];
    if (s->dom.idom[v] == GS_DOM_UNREACHABLE) continue;
    s->type_count[t]++;
    s->type_shallow[t] += g->sizes[v];
  }
  s->ntype_rows = top_of(s->type_retained, ntypes, limit ? limit : ntypes, any_type, s,
                         s->type_order);
  return GS_OK;
}

void gs_dominators_free(gs_dominators *s) {
  gs_dom_free(&s->dom);
  free(s->top);
  free(s->type_retained);
  free(s->type_count);
  free(s->type_shallow);
  free(s->type_order);
}

const char *gs_dominators_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  if (t >= g->ntypes || t == GS_GRAPH_MISSING) return "(not in the dump)";
  return gs_graph_type_name(g, t, buf, cap);
}

json_t *gs_dominators_json_section(const gs_dominators *s, int by_type) {
  const gs_graph *g = s->g;
  json_t *o = json_object(), *top = json_array(), *types = by_type ? json_array() : NULL;
  size_t i;
  char id[24], tbuf[64];
  if (!o || !top || (by_type && !types)) goto fail;
  gs_json_set(o, "name", gs_json_cstring(g->name));
  gs_json_set(o, "reachable_objects", gs_json_u64(s->reachable));
  gs_json_set(o, "reachable_bytes", gs_json_u64(s->dom.retained[g->nnodes]));
  gs_json_set(o, "unreachable_objects", gs_json_u64(s->unreachable));
  gs_json_set(o, "unreachable_bytes", gs_json_u64(s->unreachable_bytes));
  for (i = 0; i < s->ntop; i++) {
    uint32_t v = s->top[i];
    json_t *row = json_object();
    if (!row || json_array_append_new(top, row)) goto fail;
    snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
    gs_json_set(row, "id", gs_json_cstring(id));
    gs_json_set(row, "type", gs_json_cstring(gs_dominators_type_name(g, g->types[v], tbuf, sizeof tbuf)));
    gs_json_set(row, "shallow", gs_json_u64(g->sizes[v]));
    gs_json_set(row, "retained", gs_json_u64(s->dom.retained[v]));
  }
  gs_json_set(o, "top_objects", top);
  top = NULL;
  for (i = 0; by_type && i < s->ntype_rows; i++) {
    uint32_t t = s->type_order[i];
    json_t *row = json_object();
    if (!row || json_array_append_new(types, row)) goto fail;
    gs_json_set(row, "type", gs_json_cstring(gs_dominators_type_name(g, t, tbuf, sizeof tbuf)));
    gs_json_set(row, "retained", gs_json_u64(s->type_retained[t]));
    gs_json_set(row, "count", gs_json_u64(s->type_count[t]));
    gs_json_set(row, "shallow", gs_json_u64(s->type_shallow[t]));
  }
  if (types) gs_json_set(o, "by_type", types);
  return o;
fail:
  json_decref(o);
  json_decref(top);
  json_decref(types);
  return NULL;
}

int gs_dominators_each(const char *path, uint64_t top, int by_type, gs_dominators_fn fn,
                       void *ctx, gs_file_fault *fault) {
  gs_file *f;
  gs_reader *r;
  size_t index = 0;
  int err = gs_file_open_dump(path, &f, &r, fault);
  while (!err) {
    gs_graph *g = NULL;
    gs_diag d;
    gs_dominators s;
    err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF && index > 0) { err = GS_OK; break; }
    if (err == GS_EOF) { err = GS_EFORMAT; d.code = GS_D_NO_SECTION; d.line = 0;
      snprintf(d.message, sizeof d.message, "no AppDomain section ('a' record) in the input"); }
    if (err) { gs_file_fault_set(fault, f, err, &d); break; }
    gs_file_hide_progress(f);
    err = analyse(&s, g, (size_t)top, by_type);
    if (!err) err = fn(ctx, &s, index++);
    gs_dominators_free(&s);
    gs_graph_free(g);
    if (err) gs_file_fault_text(fault, gs_file_name(f), err, NULL);
  }
  gs_file_close_dump(f, r);
  return err;
}

typedef struct json_ctx { json_t *sections; int by_type; } json_ctx;

static int append_section(void *ctx, const gs_dominators *s, size_t index) {
  json_ctx *j = ctx;
  (void)index;
  return json_array_append_new(j->sections, gs_dominators_json_section(s, j->by_type)) ? GS_ENOMEM
                                                                                      : GS_OK;
}

json_t *gs_dominators_json_object(const char *path, json_t *sections) {
  json_t *o = json_object();
  int bad = !o || gs_json_set(o, "file", gs_json_cstring(gs_file_display_name(path))) ||
            gs_json_set(o, "sections", json_incref(sections));
  json_decref(sections);
  return gs_json_unless(o, bad);
}

int gs_dominators_json(const char *path, uint64_t top, int by_type, json_t **out,
                       gs_file_fault *fault) {
  json_ctx j;
  int err;
  *out = NULL;
  j.sections = json_array();
  j.by_type = by_type;
  if (!j.sections) return gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  if ((err = gs_dominators_each(path, top, by_type, append_section, &j, fault)) != GS_OK) {
    json_decref(j.sections);
    return err;
  }
  if (!(*out = gs_dominators_json_object(path, j.sections)))
    err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  return err;
}
