/* gs_dom.c - dominators by semi-NCA and retained sizes (see gs_dom.h).
 *
 * Vertices are numbered in depth-first preorder from the virtual root (0).
 * Semi-dominators come from Lengauer and Tarjan's simple link-eval with path
 * compression; each immediate dominator is then the nearest common ancestor
 * of its parent and its semi-dominator, found by walking up the dominators
 * already known (Georgiadis's semi-NCA). Every walk is a loop over arrays,
 * so the deepest heap cannot overflow the C stack. */
#include <stdlib.h>
#include <string.h>
#include "gs_dom.h"
#include "gs_error.h"

#define NONE UINT32_MAX

typedef struct dom_work {
  const gs_graph *g;
  uint32_t count;        /* vertices numbered so far */
  uint32_t *dfn;         /* node (n = virtual root) -> preorder number, NONE if unseen */
  uint32_t *vertex;      /* preorder number -> node */
  uint32_t *parent;      /* preorder number of the DFS parent */
  uint32_t *semi;
  uint32_t *label;
  uint32_t *ancestor;
  uint32_t *idom;        /* also the stack of compress() */
  uint32_t *pred_off;    /* predecessors by preorder number (CSR) */
  uint32_t *preds;
} dom_work;

/* Successors of a node: the references of an object; for the virtual root,
 * the objects of the roots without the weak flag. */
typedef struct succ_iter { const gs_graph *g; uint32_t node, k, end; } succ_iter;

static void succ_start(succ_iter *it, const gs_graph *g, uint32_t node) {
  it->g = g;
  it->node = node;
  if (node == g->nnodes) { it->k = 0; it->end = g->nroots; }
  else { it->k = g->ref_offsets[node]; it->end = g->ref_offsets[node + 1]; }
}

static uint32_t succ_next(succ_iter *it) {
  const gs_graph *g = it->g;
  if (it->node != g->nnodes) return it->k < it->end ? g->refs[it->k++] : NONE;
  while (it->k < it->end) {
    const gs_graph_root *r = &g->roots[it->k++];
    if (!(r->flags & GS_FLAG_WEAK)) return r->node;
  }
  return NONE;
}

/* ---- depth-first numbering -------------------------------------------- */

/* The position of each open vertex in its successor list lives in semi[],
 * which is free until the semi-dominators are computed. */
static void number_vertices(dom_work *w) {
  const gs_graph *g = w->g;
  uint32_t cur = 0;
  succ_iter it;
  w->dfn[g->nnodes] = 0;
  w->vertex[0] = g->nnodes;
  w->parent[0] = NONE;
  w->semi[0] = NONE;
  w->count = 1;
  while (cur != NONE) {
    uint32_t y;
    succ_start(&it, g, w->vertex[cur]);
    if (w->semi[cur] != NONE) it.k = w->semi[cur];
    y = succ_next(&it);
    w->semi[cur] = it.k;
    if (y == NONE) { cur = w->parent[cur]; continue; }
    if (w->dfn[y] != NONE) continue;
    w->dfn[y] = w->count;
    w->vertex[w->count] = y;
    w->parent[w->count] = cur;
    w->semi[w->count] = NONE;
    cur = w->count++;
  }
}

/* Turns per-list counts in off[1..n] into list starts in off[0..n]. */
static void counts_to_offsets(uint32_t *off, uint32_t n) {
  uint32_t i;
  off[0] = 0;
  for (i = 0; i < n; i++) off[i + 1] += off[i];
}

/* After each list was filled with off[i]++ as its cursor, off[i] is the
 * start of list i + 1: shifts the starts back into place. */
static void cursors_to_offsets(uint32_t *off, uint32_t n) {
  uint32_t i;
  for (i = n; i > 0; i--) off[i] = off[i - 1];
  off[0] = 0;
}

static int build_predecessors(dom_work *w) {
  const gs_graph *g = w->g;
  uint32_t i, y;
  succ_iter it;
  if (!(w->pred_off = calloc((size_t)w->count + 1, sizeof *w->pred_off))) return GS_ENOMEM;
  for (i = 0; i < w->count; i++)
    for (succ_start(&it, g, w->vertex[i]); (y = succ_next(&it)) != NONE;) w->pred_off[w->dfn[y] + 1]++;
  counts_to_offsets(w->pred_off, w->count);
  if (!(w->preds = malloc(((size_t)w->pred_off[w->count] + 1) * sizeof *w->preds))) return GS_ENOMEM;
  for (i = 0; i < w->count; i++)
    for (succ_start(&it, g, w->vertex[i]); (y = succ_next(&it)) != NONE;)
      w->preds[w->pred_off[w->dfn[y]]++] = i;
  cursors_to_offsets(w->pred_off, w->count);
  return GS_OK;
}

/* ---- semi-dominators -------------------------------------------------- */

static void compress(dom_work *w, uint32_t v) {
  uint32_t *stack = w->idom, top = 0, x = v;
  while (w->ancestor[w->ancestor[x]] != NONE) {
    stack[top++] = x;
    x = w->ancestor[x];
  }
  while (top) {
    uint32_t a;
    x = stack[--top];
    a = w->ancestor[x];
    if (w->semi[w->label[a]] < w->semi[w->label[x]]) w->label[x] = w->label[a];
    w->ancestor[x] = w->ancestor[a];
  }
}

static uint32_t eval(dom_work *w, uint32_t v) {
  if (w->ancestor[v] == NONE) return v;
  compress(w, v);
  return w->label[v];
}

static void semi_dominators(dom_work *w) {
  uint32_t i, k;
  for (i = 0; i < w->count; i++) {
    w->semi[i] = i;
    w->label[i] = i;
    w->ancestor[i] = NONE;
  }
  for (i = w->count; i-- > 1;) {
    for (k = w->pred_off[i]; k < w->pred_off[i + 1]; k++) {
      uint32_t u = eval(w, w->preds[k]);
      if (w->semi[u] < w->semi[i]) w->semi[i] = w->semi[u];
    }
    w->ancestor[i] = w->parent[i];
  }
}

static void immediate_dominators(dom_work *w) {
  uint32_t i;
  w->idom[0] = NONE;
  for (i = 1; i < w->count; i++) {
    uint32_t d = w->parent[i];
    while (d > w->semi[i]) d = w->idom[d];
    w->idom[i] = d;
  }
}

/* ---- results ---------------------------------------------------------- */

static void fill_result(dom_work *w, gs_dom *d) {
  const gs_graph *g = w->g;
  uint32_t i;
  for (i = 0; i <= g->nnodes; i++) d->idom[i] = GS_DOM_UNREACHABLE;
  for (i = 1; i < w->count; i++) {
    uint32_t node = w->vertex[i];
    d->idom[node] = w->vertex[w->idom[i]];
    d->retained[node] = g->sizes[node];
  }
  /* Children come after their dominator in preorder: sum from the end. */
  for (i = w->count; i-- > 1;) d->retained[d->idom[w->vertex[i]]] += d->retained[w->vertex[i]];
  d->reachable = w->count - 1;
}

static void work_free(dom_work *w) {
  free(w->dfn); free(w->vertex); free(w->parent); free(w->semi);
  free(w->label); free(w->ancestor); free(w->idom); free(w->pred_off); free(w->preds);
}

int gs_dom_build(const gs_graph *g, gs_dom *d) {
  dom_work w;
  size_t n = (size_t)g->nnodes + 1;
  memset(&w, 0, sizeof w);
  memset(d, 0, sizeof *d);
  w.g = g;
  d->n = g->nnodes;
  if (!(w.dfn = malloc(n * sizeof *w.dfn)) || !(w.vertex = malloc(n * sizeof *w.vertex)) ||
      !(w.parent = malloc(n * sizeof *w.parent)) || !(w.semi = malloc(n * sizeof *w.semi)))
    goto nomem;
  memset(w.dfn, 0xff, n * sizeof *w.dfn);
  number_vertices(&w);
  if (build_predecessors(&w)) goto nomem;
  free(w.dfn);
  w.dfn = NULL;
  if (!(w.label = malloc(w.count * sizeof *w.label)) ||
      !(w.ancestor = malloc(w.count * sizeof *w.ancestor)) ||
      !(w.idom = malloc(w.count * sizeof *w.idom)))
    goto nomem;
  semi_dominators(&w);
  immediate_dominators(&w);
  /* What semi-NCA needed is no longer: free it before the results grow. */
  free(w.label); free(w.ancestor); free(w.semi); free(w.pred_off); free(w.preds);
  w.label = w.ancestor = w.semi = w.pred_off = w.preds = NULL;
  if (!(d->idom = malloc(n * sizeof *d->idom)) || !(d->retained = calloc(n, sizeof *d->retained)))
    goto nomem;
  fill_result(&w, d);
  work_free(&w);
  return GS_OK;
nomem:
  work_free(&w);
  gs_dom_free(d);
  return GS_ENOMEM;
}

void gs_dom_free(gs_dom *d) {
  free(d->idom);
  free(d->retained);
  memset(d, 0, sizeof *d);
}

/* ---- retained size by type -------------------------------------------- */

/* Walks the dominator tree depth first, counting per type how many of the
 * open ancestors have it: an object adds its retained size to its type only
 * when that count is zero. */
int gs_dom_retained_by_type(const gs_graph *g, const gs_dom *d, uint64_t *out) {
  uint32_t n = g->nnodes, i, *child_off, *children, *open;
  uint64_t *stack, top = 0;
  child_off = calloc((size_t)n + 2, sizeof *child_off);
  children = malloc(((size_t)n + 1) * sizeof *children);
  stack = malloc(2 * ((size_t)n + 1) * sizeof *stack);
  open = calloc((size_t)g->ntypes + 1, sizeof *open);
  if (!child_off || !children || !stack || !open) {
    free(child_off); free(children); free(stack); free(open);
    return GS_ENOMEM;
  }
  memset(out, 0, ((size_t)g->ntypes + 1) * sizeof *out);
  for (i = 0; i < n; i++)
    if (d->idom[i] != GS_DOM_UNREACHABLE) child_off[d->idom[i] + 1]++;
  counts_to_offsets(child_off, n + 1);
  for (i = 0; i < n; i++)
    if (d->idom[i] != GS_DOM_UNREACHABLE) children[child_off[d->idom[i]]++] = i;
  cursors_to_offsets(child_off, n + 1);
  /* Each vertex is pushed to enter it, and again with bit 32 set to leave it. */
  stack[top++] = n;
  while (top) {
    uint64_t e = stack[--top];
    uint32_t v = (uint32_t)e, k, t;
    if (v != n) {
      t = g->types[v] == GS_GRAPH_MISSING ? g->ntypes : g->types[v];
      if (e >> 32) { open[t]--; continue; }
      if (!open[t]++) out[t] += d->retained[v];
      stack[top++] = e | (UINT64_C(1) << 32);
    }
    for (k = child_off[v]; k < child_off[v + 1]; k++) stack[top++] = children[k];
  }
  free(child_off); free(children); free(stack); free(open);
  return GS_OK;
}
