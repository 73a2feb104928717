/* gs_heapstats.c - the numbers "gcsnap summary" reports for a heap.
 *
 * One pass over the graph's arrays per figure; the only allocations are the
 * per-type counters and the reachability bitmap (one bit per node). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_heapstats.h"

const char *const gs_root_kind_names[GS_ROOT_KINDS] = {
  "internal", "local", "finalizer", "handle", "static", "runtime",
};

const char *const gs_root_flag_names[GS_RFLAG_BUCKETS] = {
  "none", "pinned", "weak", "interior", "other",
};

int gs_heapstats_init(gs_heapstats *s) {
  memset(s, 0, sizeof *s);
  if (gs_histo_new(&s->by_type) || gs_histo_new(&s->type_names)) {
    gs_heapstats_free(s);
    return GS_ENOMEM;
  }
  return GS_OK;
}

void gs_heapstats_free(gs_heapstats *s) {
  free(s->name);
  gs_histo_free(s->by_type);
  gs_histo_free(s->type_names);
  memset(s, 0, sizeof *s);
}

static int in_dump(const gs_graph *g, uint32_t node) {
  return g->types[node] != GS_GRAPH_MISSING;
}

/* Objects, bytes and the per-type histogram. */
static int count_objects(gs_heapstats *s, const gs_graph *g) {
  uint64_t *count = calloc(g->ntypes ? g->ntypes : 1, sizeof *count);
  uint64_t *bytes = calloc(g->ntypes ? g->ntypes : 1, sizeof *bytes);
  char buf[40];
  uint32_t i;
  int err = (count && bytes) ? GS_OK : GS_ENOMEM;
  for (i = 0; !err && i < g->nnodes; i++) {
    if (!in_dump(g, i)) continue;
    s->objects++;
    s->bytes += g->sizes[i];
    count[g->types[i]]++;
    bytes[g->types[i]] += g->sizes[i];
  }
  for (i = 0; !err && i < g->ntypes; i++)
    if (count[i])
      err = gs_histo_add(s->by_type, gs_graph_type_name(g, i, buf, sizeof buf),
                         count[i], bytes[i]);
  free(count);
  free(bytes);
  return err;
}

static int count_types(gs_heapstats *s, const gs_graph *g) {
  char buf[40];
  uint32_t t;
  int err = GS_OK;
  for (t = 0; !err && t < g->ntypes; t++)
    if (g->type_name_offsets[t] != UINT32_MAX)
      err = gs_histo_add(s->type_names, gs_graph_type_name(g, t, buf, sizeof buf), 0, 0);
  return err;
}

static void count_root_flags(gs_heapstats *s, unsigned flags) {
  if (flags == 0) s->roots_by_flag[GS_RFLAG_NONE]++;
  if (flags & GS_FLAG_PINNED) s->roots_by_flag[GS_RFLAG_PINNED]++;
  if (flags & GS_FLAG_WEAK) s->roots_by_flag[GS_RFLAG_WEAK]++;
  if (flags & GS_FLAG_INTERIOR) s->roots_by_flag[GS_RFLAG_INTERIOR]++;
  if (flags & ~(GS_FLAG_PINNED | GS_FLAG_WEAK | GS_FLAG_INTERIOR))
    s->roots_by_flag[GS_RFLAG_OTHER]++;
}

static void count_roots(gs_heapstats *s, const gs_graph *g) {
  uint32_t i;
  s->roots = g->nroots;
  for (i = 0; i < g->nroots; i++) {
    const gs_graph_root *root = &g->roots[i];
    if (root->kind < GS_ROOT_KINDS) s->roots_by_kind[root->kind]++;
    count_root_flags(s, root->flags);
    if (!in_dump(g, root->node)) s->dangling_roots++;
  }
}

static void add_unreachable(gs_heapstats *s, const gs_graph *g, uint32_t i) {
  if (!in_dump(g, i)) return;
  s->unreachable++;
  s->unreachable_bytes += g->sizes[i];
}

static int count_unreachable(gs_heapstats *s, const gs_graph *g) {
  uint8_t *bits = calloc((size_t)g->nnodes / 8 + 1, 1);
  uint32_t i;
  int err = bits ? gs_graph_reachable(g, bits) : GS_ENOMEM;
  for (i = 0; !err && i < g->nnodes; i++)
    if (!((bits[i >> 3] >> (i & 7)) & 1)) add_unreachable(s, g, i);
  free(bits);
  return err;
}

/* The dominator tree says what no strong root reaches: the same set. */
static void count_undominated(gs_heapstats *s, const gs_graph *g, const gs_dom *dom) {
  uint32_t i;
  for (i = 0; i < g->nnodes; i++)
    if (dom->idom[i] == GS_DOM_UNREACHABLE) add_unreachable(s, g, i);
}

int gs_heapstats_of_graph(gs_heapstats *s, const gs_graph *g, const gs_dom *dom) {
  int err;
  if (!(s->name = malloc(strlen(g->name) + 1))) return GS_ENOMEM;
  strcpy(s->name, g->name);
  s->timestamp = g->timestamp;
  s->line = g->first_line;
  s->sections = 1;
  s->references = g->nrefs;
  s->dangling_references = g->dangling_refs;
  count_roots(s, g);
  if ((err = count_objects(s, g)) || (err = count_types(s, g))) return err;
  if (!dom) return count_unreachable(s, g);
  count_undominated(s, g, dom);
  return GS_OK;
}

static int add_histo(gs_histo *to, const gs_histo *from) {
  size_t i;
  int err = GS_OK;
  for (i = 0; !err && i < gs_histo_size(from); i++) {
    const gs_histo_row *row = gs_histo_row_at(from, i);
    err = gs_histo_add(to, row->name, row->count, row->bytes);
  }
  return err;
}

int gs_heapstats_add(gs_heapstats *t, const gs_heapstats *s) {
  int k;
  assert(s->type_names);
  t->sections += s->sections;
  t->objects += s->objects;
  t->bytes += s->bytes;
  t->references += s->references;
  t->dangling_references += s->dangling_references;
  t->roots += s->roots;
  t->dangling_roots += s->dangling_roots;
  for (k = 0; k < GS_ROOT_KINDS; k++) t->roots_by_kind[k] += s->roots_by_kind[k];
  for (k = 0; k < GS_RFLAG_BUCKETS; k++) t->roots_by_flag[k] += s->roots_by_flag[k];
  t->unreachable += s->unreachable;
  t->unreachable_bytes += s->unreachable_bytes;
  if (add_histo(t->by_type, s->by_type) || add_histo(t->type_names, s->type_names))
    return GS_ENOMEM;
  return GS_OK;
}

uint64_t gs_heapstats_types(const gs_heapstats *s) {
  return s->type_names ? gs_histo_size(s->type_names) : s->types;
}

int gs_heapstats_top(const gs_heapstats *s, uint64_t top, const gs_histo_row ***rows,
                     size_t *shown, gs_heapstats_rest *rest) {
  size_t n = gs_histo_size(s->by_type), i;
  if (gs_histo_sorted(s->by_type, rows)) return GS_ENOMEM;
  *shown = (top == 0 || top > n) ? n : (size_t)top;
  *rest = s->folded;
  rest->types += n - *shown;
  for (i = *shown; i < n; i++) {
    rest->count += (*rows)[i]->count;
    rest->bytes += (*rows)[i]->bytes;
  }
  return GS_OK;
}

/* A histogram of the first n rows. */
static int histo_of(const gs_histo_row *const *rows, size_t n, gs_histo **out) {
  gs_histo *h;
  size_t i;
  int err;
  if ((err = gs_histo_new(&h)) != GS_OK) return err;
  for (i = 0; !err && i < n; i++)
    err = gs_histo_add(h, rows[i]->name, rows[i]->count, rows[i]->bytes);
  if (err) {
    gs_histo_free(h);
    return err;
  }
  *out = h;
  return GS_OK;
}

int gs_heapstats_trim(gs_heapstats *s, uint64_t top) {
  const gs_histo_row **rows;
  gs_heapstats_rest rest;
  gs_histo *kept;
  size_t shown;
  int err;
  s->types = gs_heapstats_types(s);
  gs_histo_free(s->type_names);
  s->type_names = NULL;
  if (top == 0 || gs_histo_size(s->by_type) <= top) return GS_OK;
  if ((err = gs_heapstats_top(s, top, &rows, &shown, &rest))) return err;
  err = histo_of(rows, shown, &kept);
  free(rows);
  if (err) return err;
  gs_histo_free(s->by_type);
  s->by_type = kept;
  s->folded = rest;
  return GS_OK;
}
