/* gs_dom.c - dominators by semi-NCA and retained sizes (see gs_dom.h).
 *
 * Vertices are numbered in depth-first preorder from the virtual root (0).
 * Semi-dominators come from Lengauer and Tarjan's simple link-eval with path
 * compression; each immediate dominator is then the nearest common ancestor
 * of its parent and its semi-dominator, found by walking up the dominators
 * already known (Georgiadis's semi-NCA). Every walk is a loop over arrays,
 * so the deepest heap cannot overflow the C stack.
 *
 * A heap's references land anywhere in arrays much larger than the cache,
 * so the cost is cache misses: what a step of the search needs about a
 * vertex is kept in one 16-byte record, the scans over references ask for
 * their targets' entries some steps ahead, and predecessors are gathered
 * reading the graph in node order. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "gs_dom.h"
#include "gs_error.h"

#define NONE UINT32_MAX
/* How far ahead of a scan over the references to ask for the entry of a
 * node they name: a heap's references land anywhere in arrays far larger
 * than the cache, and asking early lets the misses overlap. */
#define AHEAD 16

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

/* What semi-NCA reads about a vertex, together, since a step of its path
 * compression lands on an arbitrary vertex: one cache miss, not four. */
typedef struct dom_vertex {
  uint32_t semi;         /* during the search: position in the successor list;
                          * then the least semi-dominator candidate so far */
  uint32_t best;         /* least semi-dominator on the compressed path above */
  uint32_t ancestor;     /* link-eval forest; until the vertex is linked, the
                          * end of its predecessors in preds */
  uint32_t parent;       /* preorder number of the DFS parent */
} dom_vertex;

typedef struct dom_work {
  const gs_graph *g;
  uint32_t count;        /* vertices numbered so far */
  uint32_t *dfn;         /* node (n = virtual root) -> preorder number, NONE if unseen */
  uint32_t *vertex;      /* preorder number -> node */
  dom_vertex *vx;        /* by preorder number */
  uint32_t *stack;       /* of compress(), touched only as deep as a path goes */
  uint32_t *idom;        /* by preorder number, in the memory vx had */
  uint32_t *preds;       /* predecessors by preorder number, back to back */
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

/* The position of each open vertex in its successor list lives in its
 * semi field, which is free until the semi-dominators are computed. */
static void number_vertices(dom_work *w) {
  const gs_graph *g = w->g;
  uint32_t cur = 0;
  succ_iter it;
  w->dfn[g->nnodes] = 0;
  w->vertex[0] = g->nnodes;
  w->vx[0].parent = NONE;
  w->vx[0].semi = NONE;
  w->count = 1;
  while (cur != NONE) {
    uint32_t y;
    succ_start(&it, g, w->vertex[cur]);
    if (w->vx[cur].semi != NONE) it.k = w->vx[cur].semi;
    else if (it.node != g->nnodes) {
      /* A new vertex: ask for what the search will read about each target. */
      uint32_t k;
      for (k = it.k; k < it.end; k++) {
        PREFETCH(&w->dfn[g->refs[k]]);
        PREFETCH(&g->ref_offsets[g->refs[k]]);
      }
    }
    y = succ_next(&it);
    w->vx[cur].semi = it.k;
    if (y == NONE) { cur = w->vx[cur].parent; continue; }
    if (w->dfn[y] != NONE) continue;
    w->dfn[y] = w->count;
    w->vertex[w->count] = y;
    w->vx[w->count].parent = cur;
    w->vx[w->count].semi = NONE;
    cur = w->count++;
  }
}

/* vertex from dfn. */
static void invert_numbering(dom_work *w) {
  uint32_t x;
  for (x = 0; x <= w->g->nnodes; x++)
    if (w->dfn[x] != NONE) w->vertex[w->dfn[x]] = x;
}

/* Turns per-list counts in off[1..n] into list starts in off[0..n]
 * (gs_dom_retained_by_type's children). */
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

/* Calls add(w, from, to) for every edge between numbered vertices, by
 * preorder number: the roots' first, then the references of each object in
 * node order, which reads the reference arrays from start to end. */
static void each_edge(dom_work *w, void (*add)(dom_work *, uint32_t, uint32_t)) {
  const gs_graph *g = w->g;
  uint32_t x, y, k, end = g->ref_offsets[g->nnodes];
  succ_iter it;
  for (succ_start(&it, g, g->nnodes); (y = succ_next(&it)) != NONE;) add(w, 0, w->dfn[y]);
  for (x = 0; x < g->nnodes; x++) {
    uint32_t from = w->dfn[x];
    if (from == NONE) continue;
    for (k = g->ref_offsets[x]; k < g->ref_offsets[x + 1]; k++) {
      if (k + AHEAD < end) PREFETCH(&w->dfn[g->refs[k + AHEAD]]);
      add(w, from, w->dfn[g->refs[k]]);
    }
  }
}

/* A predecessor numbered before its target is not linked when the target
 * is processed, so it is its own eval(): the least of them is the first
 * candidate semi-dominator, taken here, and only the predecessors numbered
 * after their target are kept in lists. The list offsets live in the
 * vertices' ancestor fields, zeroed when allocated and unused until the
 * semi-dominators: a count, then the start as each list's cursor, which
 * the filling leaves at its end. */
static void count_pred(dom_work *w, uint32_t from, uint32_t to) {
  if (from > to) w->vx[to].ancestor++;
  else if (from < w->vx[to].semi) w->vx[to].semi = from;
}

static void put_pred(dom_work *w, uint32_t from, uint32_t to) {
  if (from > to) w->preds[w->vx[to].ancestor++] = from;
}

static int build_predecessors(dom_work *w) {
  uint32_t i, total = 0;
  for (i = 0; i < w->count; i++) w->vx[i].semi = i;
  each_edge(w, count_pred);
  for (i = 0; i < w->count; i++) {
    uint32_t c = w->vx[i].ancestor;
    w->vx[i].ancestor = total;
    total += c;
  }
  if (!(w->preds = malloc(((size_t)total + 1) * sizeof *w->preds))) return GS_ENOMEM;
  each_edge(w, put_pred);
  return GS_OK;
}

/* ---- semi-dominators -------------------------------------------------- */

/* Only semi-dominators are ever compared, so each vertex keeps the least
 * one on its compressed path (best) rather than the vertex it belongs to.
 * While vertex i is processed, the linked vertices are exactly those
 * numbered after i, so a number tells whether an ancestor is linked
 * without reading its entry. */
static void compress(dom_work *w, uint32_t v, uint32_t i) {
  dom_vertex *vx = w->vx;
  uint32_t *stack = w->stack, top = 0, x = v;
  while (vx[x].ancestor > i) {
    stack[top++] = x;
    x = vx[x].ancestor;
  }
  while (top) {
    dom_vertex *e = &vx[stack[--top]], *a = &vx[e->ancestor];
    if (a->best < e->best) e->best = a->best;
    e->ancestor = a->ancestor;
  }
}

/* The least semi-dominator on the path from v up to its forest root. A
 * vertex numbered up to i is not linked yet: it is its own answer. */
static uint32_t eval(dom_work *w, uint32_t v, uint32_t i) {
  if (v <= i) return v;
  if (w->vx[v].ancestor > i) compress(w, v, i);
  return w->vx[v].best;
}

/* Only linked vertices (numbered after the one processed) are read as
 * ancestors, so each vertex's fields are set when it is processed; its
 * predecessors end where its ancestor field says and start where the
 * previous vertex's does. */
static void semi_dominators(dom_work *w) {
  dom_vertex *vx = w->vx;
  uint32_t i, k;
  /* Vertices go from the last, and each one's predecessors from its last,
   * so preds[] is read backwards from its end: the next ones are known. */
  for (i = w->count; i-- > 1;) {
    for (k = vx[i].ancestor; k-- > vx[i - 1].ancestor;) {
      uint32_t s;
      if (k >= AHEAD) PREFETCH(&vx[w->preds[k - AHEAD]]);
      s = eval(w, w->preds[k], i);
      if (s < vx[i].semi) vx[i].semi = s;
    }
    vx[i].best = vx[i].semi;
    vx[i].ancestor = vx[i].parent;
  }
}

/* Each one lands in the vertex's best field, dead once the semi-dominators
 * are known, so no other array of a word per vertex is live beside the
 * records. */
static void immediate_dominators(dom_work *w) {
  dom_vertex *vx = w->vx;
  uint32_t i;
  vx[0].best = NONE;
  for (i = 1; i < w->count; i++) {
    uint32_t d = vx[i].parent;
    while (d > vx[i].semi) d = vx[d].best;
    vx[i].best = d;
  }
}

/* Packs the immediate dominators into the first 4 bytes per vertex of the
 * records' memory and gives the rest back: entry i is read at byte 16i + 4
 * before byte 4i is written, and memcpy keeps the compiler from assuming
 * the two views do not overlap. */
static void keep_idom(dom_work *w) {
  char *mem = (char *)w->vx;
  uint32_t i, d, *p;
  for (i = 0; i < w->count; i++) {
    memcpy(&d, mem + i * sizeof *w->vx + offsetof(dom_vertex, best), 4);
    memcpy(mem + 4 * (size_t)i, &d, 4);
  }
  p = realloc(mem, ((size_t)w->count + 1) * sizeof *p);
  w->idom = p ? p : (uint32_t *)(void *)mem;   /* the larger block holds them too */
  w->vx = NULL;
}

/* ---- results ---------------------------------------------------------- */

static void fill_result(dom_work *w, gs_dom *d) {
  const gs_graph *g = w->g;
  uint32_t i;
  for (i = 0; i <= g->nnodes; i++) d->idom[i] = GS_DOM_UNREACHABLE;
  for (i = 1; i < w->count; i++) {
    uint32_t node = w->vertex[i];
    d->idom[node] = w->vertex[w->idom[i]];
    d->retained[node] = gs_graph_size(g, node);
  }
  /* Children come after their dominator in preorder: sum from the end. */
  for (i = w->count; i-- > 1;) d->retained[d->idom[w->vertex[i]]] += d->retained[w->vertex[i]];
  d->reachable = w->count - 1;
}

static void work_free(dom_work *w) {
  free(w->dfn); free(w->vertex); free(w->vx); free(w->stack); free(w->idom); free(w->preds);
}

int gs_dom_build(const gs_graph *g, gs_dom *d) {
  dom_work w;
  size_t n = (size_t)g->nnodes + 1;
  memset(&w, 0, sizeof w);
  memset(d, 0, sizeof *d);
  w.g = g;
  d->n = g->nnodes;
  if (!(w.dfn = malloc(n * sizeof *w.dfn)) || !(w.vertex = malloc(n * sizeof *w.vertex)) ||
      !(w.vx = calloc(n, sizeof *w.vx)))
    goto nomem;
  memset(w.dfn, 0xff, n * sizeof *w.dfn);
  number_vertices(&w);
  /* The search needs the numbering both ways, the rest one way at a time:
   * dfn until the dominators are known, then vertex, rebuilt from it. */
  free(w.vertex);
  w.vertex = NULL;
  if (build_predecessors(&w) || !(w.stack = malloc(w.count * sizeof *w.stack))) goto nomem;
  semi_dominators(&w);
  immediate_dominators(&w);
  /* What semi-NCA needed is no longer: free it before the results grow. */
  free(w.stack); free(w.preds);
  w.stack = NULL;
  w.preds = NULL;
  keep_idom(&w);
  if (!(w.vertex = calloc(w.count, sizeof *w.vertex))) goto nomem;
  invert_numbering(&w);
  free(w.dfn);
  w.dfn = NULL;
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
