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
#include "gs_jsonw.h"

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

static void write_objects(gs_jsonw *w, const gs_dominators *s) {
  const gs_graph *g = s->g;
  char id[24], tbuf[64];
  size_t i;
  gs_jsonw_array(w, "top_objects");
  for (i = 0; i < s->ntop; i++) {
    uint32_t v = s->top[i];
    snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
    gs_jsonw_object(w, NULL);
    gs_jsonw_value(w, "id", gs_json_cstring(id));
    gs_jsonw_value(w, "type", gs_json_cstring(gs_dominators_type_name(g, g->types[v], tbuf, sizeof tbuf)));
    gs_jsonw_value(w, "shallow", gs_json_u64(g->sizes[v]));
    gs_jsonw_value(w, "retained", gs_json_u64(s->dom.retained[v]));
    gs_jsonw_end(w);
  }
  gs_jsonw_end(w);
}

static void write_types(gs_jsonw *w, const gs_dominators *s) {
  char tbuf[64];
  size_t i;
  gs_jsonw_array(w, "by_type");
  for (i = 0; i < s->ntype_rows; i++) {
    uint32_t t = s->type_order[i];
    gs_jsonw_object(w, NULL);
    gs_jsonw_value(w, "type", gs_json_cstring(gs_dominators_type_name(s->g, t, tbuf, sizeof tbuf)));
    gs_jsonw_value(w, "retained", gs_json_u64(s->type_retained[t]));
    gs_jsonw_value(w, "count", gs_json_u64(s->type_count[t]));
    gs_jsonw_value(w, "shallow", gs_json_u64(s->type_shallow[t]));
    gs_jsonw_end(w);
  }
  gs_jsonw_end(w);
}

void gs_dominators_write_section(gs_jsonw *w, const gs_dominators *s, int by_type) {
  const gs_graph *g = s->g;
  gs_jsonw_object(w, NULL);
  gs_jsonw_value(w, "name", gs_json_cstring(g->name));
  gs_jsonw_value(w, "reachable_objects", gs_json_u64(s->reachable));
  gs_jsonw_value(w, "reachable_bytes", gs_json_u64(s->dom.retained[g->nnodes]));
  gs_jsonw_value(w, "unreachable_objects", gs_json_u64(s->unreachable));
  gs_jsonw_value(w, "unreachable_bytes", gs_json_u64(s->unreachable_bytes));
  write_objects(w, s);
  if (by_type) write_types(w, s);
  gs_jsonw_end(w);
}

json_t *gs_dominators_json_section(const gs_dominators *s, int by_type) {
  gs_jsonw *w = gs_jsonw_build();
  json_t *o = NULL;
  if (w) gs_dominators_write_section(w, s, by_type);
  return gs_jsonw_finish(w, &o) ? NULL : o;
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

/* The document's start, before its sections. */
static void write_head(gs_jsonw *w, const char *path) {
  gs_jsonw_object(w, NULL);
  gs_jsonw_value(w, "file", gs_json_cstring(gs_file_display_name(path)));
}

json_t *gs_dominators_json_object(const char *path, json_t *sections) {
  gs_jsonw *w = gs_jsonw_build();
  json_t *o = NULL;
  if (!w) {
    json_decref(sections);
    return NULL;
  }
  write_head(w, path);
  gs_jsonw_value(w, "sections", sections);
  gs_jsonw_end(w);
  return gs_jsonw_finish(w, &o) ? NULL : o;
}

typedef struct write_ctx { gs_jsonw *w; const char *path; int by_type; } write_ctx;

/* Nothing is written before the first section is known: a file that
 * cannot be read leaves no start of a document. */
static int write_section(void *ctx, const gs_dominators *s, size_t index) {
  write_ctx *x = ctx;
  if (index == 0) {
    write_head(x->w, x->path);
    gs_jsonw_array(x->w, "sections");
  }
  gs_dominators_write_section(x->w, s, x->by_type);
  return GS_OK;
}

int gs_dominators_write(gs_jsonw *w, const char *path, uint64_t top, int by_type, gs_file_fault *fault) {
  write_ctx x;
  int err;
  x.w = w;
  x.path = path;
  x.by_type = by_type;
  if ((err = gs_dominators_each(path, top, by_type, write_section, &x, fault))) return err;
  gs_jsonw_end(w);
  gs_jsonw_end(w);
  return GS_OK;
}

int gs_dominators_json(const char *path, uint64_t top, int by_type, json_t **out,
                       gs_file_fault *fault) {
  gs_jsonw *w = gs_jsonw_build();
  int err = w ? gs_dominators_write(w, path, top, by_type, fault) : GS_OK;
  *out = NULL;
  if (gs_jsonw_finish(w, out) && !err) err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  if (err) {
    json_decref(*out);
    *out = NULL;
  }
  return err;
}
