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
 * so the cost is cache misses. Path compression chases an array of
 * ancestors alone (4 bytes a vertex), and the paths of the next
 * evaluations are asked for a step further up for each nearer one, so that
 * a climb finds most of its steps come, and the best entries that an
 * evaluation returns or a compression rewrites are asked for with the
 * first step or as the climb passes them; the search, on its way back up,
 * asks for what the ancestors it returns to will read; the scans over
 * references ask for their targets' entries some steps ahead. The search
 * tells a numbered target by a bit per node, which stays in the cache, and
 * hands each edge it meets, with its target's node, to another thread, in
 * batches. That thread writes the numbers of the vertices numbered so far,
 * then sorts each edge into a forward one, lowering its target's first
 * candidate, or a backward one, counted for its target's list: the search
 * itself reads no entry of a target it has numbered. Predecessors are
 * listed and the results filled on two threads as well, on disjoint words;
 * when the lists would hold more than PREDS_PER_VERTEX entries a vertex,
 * for a range of vertices at a time.
 * With one processor the same work is done on one thread, so the result
 * does not depend on it. */
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_dom.h"
#include "gs_error.h"
#include "gs_thread.h"

#define NONE UINT32_MAX
/* How far ahead of a scan over the references to ask for the entry of a
 * node they name: a heap's references land anywhere in arrays far larger
 * than the cache, and asking early lets the misses overlap. */
#define AHEAD 16
/* The edges the search meets are sorted in batches of BATCH, BATCHES of
 * them in turn, on a thread of their own when there are two processors. */
#define BATCH 4096u
#define BATCHES 8u
/* Path compression climbs about six ancestors an evaluation, each a miss
 * that needs the one before: the evaluations CLIMB_GAP, 2 CLIMB_GAP...
 * predecessors ahead have their paths asked for up to CLIMB steps. */
#define CLIMB 3
#define CLIMB_GAP 4
/* How many levels above the parent of a finished vertex the search asks
 * for the entries it will need on its way back up. */
#define RETURN_AHEAD 2
/* A graph with fewer references than this is scanned on one thread. */
#define PARALLEL_MIN 65536u
/* Predecessor lists are held for a range of vertices at a time, about this
 * many entries per vertex at most: a graph with more references pointing
 * back in preorder (V8 heaps have 3 a vertex) scans its references once per
 * range rather than hold them all. */
#define PREDS_PER_VERTEX 2u

/* What the search and the semi-dominators read about a vertex in order. */
typedef struct dom_tree {
  uint32_t semi;         /* while the vertex is open in the search: position
                          * in its successor list; then the least
                          * semi-dominator candidate so far */
  uint32_t parent;       /* preorder number of the DFS parent */
} dom_tree;

/* from: a number; to: a node, until the sorter makes it a number. */
typedef struct dom_edge { uint32_t from, to, second; } dom_edge;

/* Hands the edges the search meets to the thread that sorts them: the
 * search fills one batch while the others wait or are sorted. */
typedef struct dom_sorter {
  struct dom_work *w;
  dom_edge *edges;       /* BATCHES batches of BATCH */
  uint32_t len[BATCHES]; /* edges of each batch handed over */
  uint32_t upto[BATCHES]; /* vertices numbered when it was handed over */
  uint32_t numbered;     /* vertices whose dfn is written */
  uint32_t batch, n;     /* the batch being filled, and its edges so far */
  gs_sem *filled, *empty;
  gs_thread *thread;     /* NULL: the search sorts each batch itself */
} dom_sorter;

typedef struct dom_work {
  const gs_graph *g;
  dom_sorter sorter;
  uint32_t count;        /* vertices numbered so far */
  uint32_t half;         /* nodes below it are the first half, about half
                          * the references */
  uint32_t *dfn;         /* node (n = virtual root) -> preorder number, NONE if unseen;
                          * written by the sorter (vertex[] is the search's) */
  uint8_t *seen;         /* a bit per node: numbered by the search */
  uint32_t *vertex;      /* preorder number -> node */
  dom_tree *tree;        /* by preorder number */
  /* Path compression chases ancestor alone, so it lands in an array of 4
   * bytes per vertex, about the size of the processor's cache, and reads
   * best, which no step needs to go on, only as it unwinds. */
  uint32_t *ancestor;    /* by preorder number: link-eval forest; until the
                          * vertex is linked, its predecessors' count, then
                          * cursor, from the first half of the nodes */
  uint32_t *best;        /* by preorder number: least semi-dominator on the
                          * compressed path above; until linked, the same as
                          * ancestor from the second half, which ends as the
                          * end of its predecessors in preds; at last, the
                          * immediate dominator */
  uint32_t *stack;       /* of compress(), touched only as deep as a path goes */
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

static int seen(const dom_work *w, uint32_t x) { return w->seen[x >> 3] >> (x & 7) & 1; }

static void see(dom_work *w, uint32_t x) { w->seen[x >> 3] |= (uint8_t)(1u << (x & 7)); }

/* A new vertex: asks for the reference ranges of the targets not numbered
 * yet, then, once they have come, for their references, so a descent into
 * one of them does not wait for two misses in a row. */
static void prefetch_targets(const dom_work *w, uint32_t node) {
  const gs_graph *g = w->g;
  uint32_t k;
  if (node == g->nnodes) return;
  for (k = g->ref_offsets[node]; k < g->ref_offsets[node + 1]; k++)
    if (!seen(w, g->refs[k])) GS_PREFETCH(&g->ref_offsets[g->refs[k]]);
  for (k = g->ref_offsets[node]; k < g->ref_offsets[node + 1]; k++)
    if (!seen(w, g->refs[k])) GS_PREFETCH(&g->refs[g->ref_offsets[g->refs[k]]]);
}

/* An edge from open vertex cur to numbered vertex t. Ancestors of t are
 * numbered before it, so an edge from before t is its own eval() when t is
 * processed and only lowers t's first semi-dominator candidate: t is then a
 * finished descendant of cur, whose semi field the search no longer
 * touches. An edge from after t is counted in t's fields, by the half of
 * the nodes its source is in, to be listed later. */
static void sort_edge(dom_work *w, const dom_edge *e) {
  if (e->to > e->from) {
    if (e->from < w->tree[e->to].semi) w->tree[e->to].semi = e->from;
  } else if (e->second) w->best[e->to]++;
  else w->ancestor[e->to]++;
}

/* Each edge's target node becomes its number: asked for 2 AHEAD edges
 * ahead, and the entry it leads to AHEAD edges ahead, once it has come. */
static void sort_batch(dom_work *w, dom_edge *e, uint32_t n) {
  uint32_t k;
  for (k = 0; k < 2 * AHEAD && k < n; k++) GS_PREFETCH(&w->dfn[e[k].to]);
  for (k = 0; k < n; k++) {
    if (k + 2 * AHEAD < n) GS_PREFETCH(&w->dfn[e[k + 2 * AHEAD].to]);
    if (k + AHEAD < n) {
      const dom_edge *a = &e[k + AHEAD];
      uint32_t t = w->dfn[a->to];
      if (t > a->from) GS_PREFETCH(&w->tree[t]);
      else GS_PREFETCH(a->second ? &w->best[t] : &w->ancestor[t]);
    }
    e[k].to = w->dfn[e[k].to];
    sort_edge(w, &e[k]);
  }
}

/* The numbers of the vertices the search had numbered when it handed a
 * batch over: every edge of the batch names one of them. */
static void write_numbers(dom_work *w, uint32_t upto) {
  dom_sorter *s = &w->sorter;
  for (; s->numbered < upto; s->numbered++) w->dfn[w->vertex[s->numbered]] = s->numbered;
}

/* The sorting thread: batches in turn until one that is not full. */
static void sorter_main(void *arg) {
  dom_sorter *s = arg;
  uint32_t b = 0, n;
  do {
    gs_sem_wait(s->filled);
    n = s->len[b];
    write_numbers(s->w, s->upto[b]);
    sort_batch(s->w, s->edges + (size_t)b * BATCH, n);
    gs_sem_post(s->empty);
    b = (b + 1) % BATCHES;
  } while (n == BATCH);
}

/* The batch being filled is done: sorted now, or handed to the thread
 * once the next one is free. */
static void hand_over(dom_sorter *s) {
  s->len[s->batch] = s->n;
  s->upto[s->batch] = s->w->count;
  if (s->thread) {
    gs_sem_post(s->filled);
    gs_sem_wait(s->empty);
  } else {
    write_numbers(s->w, s->w->count);
    sort_batch(s->w, s->edges + (size_t)s->batch * BATCH, s->n);
  }
  s->batch = (s->batch + 1) % BATCHES;
  s->n = 0;
}

/* An edge from open vertex cur (node x) to node y, numbered. */
static void meet_edge(dom_work *w, uint32_t cur, uint32_t x, uint32_t y) {
  dom_sorter *s = &w->sorter;
  dom_edge *e = &s->edges[(size_t)s->batch * BATCH + s->n];
  if (y == x) return;
  e->from = cur;
  e->to = y;
  e->second = x >= w->half;
  if (++s->n == BATCH) hand_over(s);
}

/* A thread sorts the edges when there are two processors and enough of
 * them; else, or if it cannot start, the search does. */
static int sorter_start(dom_work *w) {
  dom_sorter *s = &w->sorter;
  s->w = w;
  if (!(s->edges = malloc((size_t)BATCHES * BATCH * sizeof *s->edges))) return GS_ENOMEM;
  if (w->g->nrefs < PARALLEL_MIN || gs_thread_cpus() < 2 || gs_sem_new(&s->filled, 0) ||
      gs_sem_new(&s->empty, BATCHES - 1) || gs_thread_start(&s->thread, sorter_main, s))
    s->thread = NULL;
  return GS_OK;
}

/* The last batch, never full, ends the thread. */
static void sorter_finish(dom_sorter *s) {
  hand_over(s);
  if (s->thread) gs_thread_join(s->thread);
  s->thread = NULL;
}

static void sorter_free(dom_sorter *s) {
  free(s->edges);
  gs_sem_free(s->filled);
  gs_sem_free(s->empty);
  s->edges = NULL;
  s->filled = s->empty = NULL;
}

/* A finished vertex hands the search back to its parent, whose entries
 * the subtree may have pushed out of the cache: the open ancestor
 * RETURN_AHEAD levels up has its references' range and its place in them
 * asked for, so a climb back up a long path does not wait at each step
 * (their tree entries, numbered one after another down such a path, stay
 * near). Returns the parent. */
static uint32_t finish_vertex(dom_work *w, uint32_t cur) {
  uint32_t a = w->tree[cur].parent, up = RETURN_AHEAD;
  w->tree[cur].semi = w->tree[cur].parent;
  while (up-- && a != 0 && a != NONE) a = w->tree[a].parent;
  if (a != 0 && a != NONE) {
    GS_PREFETCH(&w->g->ref_offsets[w->vertex[a]]);
    GS_PREFETCH(&w->g->refs[w->tree[a].semi]);
  }
  return w->tree[cur].parent;
}

/* The position of each open vertex in its successor list lives in its
 * semi field; a finished vertex's holds its parent, the candidate of its
 * tree edge. */
static void number_vertices(dom_work *w) {
  const gs_graph *g = w->g;
  uint32_t cur = 0;
  succ_iter it;
  see(w, g->nnodes);
  w->vertex[0] = g->nnodes;
  w->tree[0].parent = NONE;
  w->tree[0].semi = NONE;
  w->count = 1;
  while (cur != NONE) {
    uint32_t y;
    succ_start(&it, g, w->vertex[cur]);
    if (w->tree[cur].semi != NONE) it.k = w->tree[cur].semi;
    else prefetch_targets(w, it.node);
    while ((y = succ_next(&it)) != NONE && seen(w, y)) meet_edge(w, cur, it.node, y);
    if (y == NONE) {
      cur = finish_vertex(w, cur);
      continue;
    }
    w->tree[cur].semi = it.k;
    see(w, y);
    w->vertex[w->count] = y;
    w->tree[w->count].parent = cur;
    w->tree[w->count].semi = NONE;
    cur = w->count++;
  }
  sorter_finish(&w->sorter);
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

/* The first node of the second half: the one whose references start
 * nearest after the middle, so each half holds about as many. */
static uint32_t middle_node(const gs_graph *g) {
  uint32_t lo = 0, hi = g->nnodes, mid = g->ref_offsets[g->nnodes] / 2;
  while (lo < hi) {
    uint32_t m = lo + (hi - lo) / 2;
    if (g->ref_offsets[m] < mid) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/* ---- predecessors ----------------------------------------------------- */

/* Only the edges that point back in preorder are listed, for the targets
 * from low to high. The search counted each half of the nodes' sources
 * apart (ancestor for the first, best for the second), so each half lists
 * its own in a part of each list with a cursor of its own, and the halves
 * can be scanned at once without sharing a word. */
typedef struct pred_job {
  dom_work *w;
  uint32_t first, end;   /* the sources */
  uint32_t low, high;    /* the targets listed */
  int second;
} pred_job;

static void scan_half(void *arg) {
  const pred_job *j = arg;
  const gs_graph *g = j->w->g;
  const uint32_t *dfn = j->w->dfn;
  uint32_t *cursor = j->second ? j->w->best : j->w->ancestor;
  uint32_t x, k, end = g->ref_offsets[j->end];
  for (x = j->first; x < j->end; x++) {
    uint32_t from = dfn[x];
    if (from == NONE) continue;
    for (k = g->ref_offsets[x]; k < g->ref_offsets[x + 1]; k++) {
      uint32_t to;
      /* Two steps: a target's number, then, once it has come, its cursor. */
      if (k + AHEAD < end) GS_PREFETCH(&dfn[g->refs[k + AHEAD]]);
      if (k + AHEAD / 2 < end && (to = dfn[g->refs[k + AHEAD / 2]]) != NONE) GS_PREFETCH(&cursor[to]);
      if (from > (to = dfn[g->refs[k]]) && to >= j->low && to < j->high)
        j->w->preds[cursor[to]++] = from;
    }
  }
}

/* Runs a(arg_a) and b(arg_b), which share no word they write, on two
 * threads when there are two processors and the graph is large enough to
 * pay for a thread (on this one alone if a thread cannot start: the result
 * is the same). */
static void run_both(const dom_work *w, void (*a)(void *), void *arg_a, void (*b)(void *),
                     void *arg_b) {
  gs_thread *helper = NULL;
  if (w->g->nrefs < PARALLEL_MIN || gs_thread_cpus() < 2 || gs_thread_start(&helper, a, arg_a))
    a(arg_a);
  b(arg_b);
  if (helper) gs_thread_join(helper);
}

static void scan_halves(dom_work *w, uint32_t low, uint32_t high) {
  pred_job jobs[2];
  jobs[0].w = jobs[1].w = w;
  jobs[0].low = jobs[1].low = low;
  jobs[0].high = jobs[1].high = high;
  jobs[0].first = 0;
  jobs[0].end = jobs[1].first = w->half;
  jobs[1].end = w->g->nnodes;
  jobs[0].second = 0;
  jobs[1].second = 1;
  run_both(w, scan_half, &jobs[1], scan_half, &jobs[0]);
}

/* Counts to cursors for the vertices from low to high: each list has the
 * first half's sources, then the second's. Returns the number of
 * predecessors. */
static uint32_t place_lists(dom_work *w, uint32_t low, uint32_t high) {
  uint32_t i, total = 0;
  for (i = low; i < high; i++) {
    uint32_t first = w->ancestor[i], second = w->best[i];
    w->ancestor[i] = total;
    w->best[i] = total + first;
    total += first + second;
  }
  return total;
}

/* The entries a range may hold: the predecessors split evenly into as few
 * ranges as PREDS_PER_VERTEX allows, with a sixteenth to spare so that the
 * ranges, cut between vertices, come out as many. */
static uint64_t range_budget(const dom_work *w) {
  uint64_t total = 0, most = (uint64_t)PREDS_PER_VERTEX * w->count, ranges;
  uint32_t i;
  for (i = 0; i < w->count; i++) total += (uint64_t)w->ancestor[i] + w->best[i];
  ranges = total ? (total + most - 1) / most : 1;
  return total / ranges + total / ranges / 16 + 1;
}

/* The first vertex of the range that ends before high: as many vertices
 * as the budget of entries holds, one at least. */
static uint32_t range_start(const dom_work *w, uint32_t high, uint64_t budget) {
  uint64_t held = 0;
  uint32_t low = high;
  while (low > 1 && (low == high || held + w->ancestor[low - 1] + w->best[low - 1] <= budget)) {
    low--;
    held += w->ancestor[low] + w->best[low];
  }
  return low;
}

/* Lists the predecessors of the vertices from low to high, which no
 * evaluation has linked yet: the counts are theirs still. Each list ends
 * where its best field says. */
static int list_predecessors(dom_work *w, uint32_t low, uint32_t high, size_t *cap) {
  size_t n = (size_t)place_lists(w, low, high) + 1;
  if (n > *cap) {
    free(w->preds);
    if (!(w->preds = malloc(n * sizeof *w->preds))) return GS_ENOMEM;
    *cap = n;
  }
  scan_halves(w, low, high);
  return GS_OK;
}

/* ---- semi-dominators -------------------------------------------------- */

/* Only semi-dominators are ever compared, so each vertex keeps the least
 * one on its compressed path (best) rather than the vertex it belongs to.
 * While vertex i is processed, the linked vertices are exactly those
 * numbered after i, so a number tells whether an ancestor is linked
 * without reading its entry. */
static void compress(dom_work *w, uint32_t v, uint32_t i) {
  uint32_t *ancestor = w->ancestor, *best = w->best;
  uint32_t *stack = w->stack, top = 0, x = v, root, least;
  while (ancestor[x] > i) {
    GS_PREFETCH(&best[x]);          /* read as the path unwinds */
    stack[top++] = x;
    x = ancestor[x];
  }
  /* x is its tree's root; everything on the path now hangs from x's parent. */
  root = ancestor[x];
  least = best[x];
  while (top) {
    uint32_t e = stack[--top];
    if (best[e] < least) least = best[e];
    best[e] = least;
    ancestor[e] = root;
  }
}

/* The least semi-dominator on the path from v up to its forest root. A
 * vertex numbered up to i is not linked yet: it is its own answer. */
static uint32_t eval(dom_work *w, uint32_t v, uint32_t i) {
  if (v <= i) return v;
  if (w->ancestor[v] > i) compress(w, v, i);
  return w->best[v];
}

/* The evaluation of predecessor k, once the paths that the next ones will
 * climb are asked for, a step further up for each nearer one: the step
 * before it was asked for CLIMB_GAP predecessors earlier and has come.
 * Compressions meanwhile may move a path; only the speed depends on it.
 * The asking lives beside the evaluation because a function that only
 * reads and prefetches has no effect the compiler must keep. */
static uint32_t eval_pred(dom_work *w, uint32_t k, uint32_t i) {
  const uint32_t *ancestor = w->ancestor;
  uint32_t step;
  for (step = 0; step < CLIMB; step++) {
    uint32_t ahead = (CLIMB - step) * CLIMB_GAP, x, up = step;
    if (k < ahead) continue;
    x = w->preds[k - ahead];
    while (up-- && x < w->count) x = ancestor[x];
    if (x < w->count) GS_PREFETCH(&ancestor[x]);
    if (!step && x < w->count) GS_PREFETCH(&w->best[x]);
  }
  return eval(w, w->preds[k], i);
}

/* Only linked vertices (numbered after the one processed) are read as
 * ancestors, so each vertex's fields are set when it is processed; its
 * predecessors end where its best field says and start where the previous
 * vertex's do, or at 0 for the first listed. */
static void semi_dominators(dom_work *w, uint32_t low, uint32_t high) {
  uint32_t *ancestor = w->ancestor, *best = w->best, i, k;
  /* Vertices go from the last, and each one's predecessors from its last,
   * so preds[] is read backwards from its end: the next ones are known. */
  for (i = high; i-- > low;) {
    uint32_t semi = w->tree[i].semi, first = i > low ? best[i - 1] : 0;
    for (k = best[i]; k-- > first;) {
      uint32_t s = eval_pred(w, k, i);
      if (s < semi) semi = s;
    }
    w->tree[i].semi = semi;
    best[i] = semi;
    ancestor[i] = w->tree[i].parent;
  }
}

/* Each one lands in the vertex's best field, dead once the semi-dominators
 * are known, so no other array of a word per vertex is live beside them. */
static void immediate_dominators(dom_work *w) {
  uint32_t *best = w->best, i;
  best[0] = NONE;
  for (i = 1; i < w->count; i++) {
    uint32_t d = w->tree[i].parent;
    while (d > w->tree[i].semi) d = best[d];
    best[i] = d;
  }
}

/* ---- results ---------------------------------------------------------- */

/* The results by node, two arrays at a time on two threads: while dfn
 * lives, vertex is rebuilt from it and each reachable object's own size
 * read in node order; then idom and the sums. */
typedef struct fill_job { dom_work *w; gs_dom *d; } fill_job;

static void invert_numbering(void *arg) {
  dom_work *w = ((fill_job *)arg)->w;
  uint32_t x;
  for (x = 0; x <= w->g->nnodes; x++)
    if (w->dfn[x] != NONE) w->vertex[w->dfn[x]] = x;
}

static void fill_sizes(void *arg) {
  const fill_job *j = arg;
  uint32_t x;
  for (x = 0; x < j->w->g->nnodes; x++)
    j->d->retained[x] = j->w->dfn[x] != NONE ? gs_graph_size(j->w->g, x) : 0;
  j->d->retained[x] = 0;
}

static void fill_idom(void *arg) {
  const fill_job *j = arg;
  const dom_work *w = j->w;
  uint32_t i;
  for (i = 0; i <= w->g->nnodes; i++) j->d->idom[i] = GS_DOM_UNREACHABLE;
  for (i = 1; i < w->count; i++) j->d->idom[w->vertex[i]] = w->vertex[w->best[i]];
}

/* Children come after their dominator in preorder: summed from the end. */
static void sum_retained(void *arg) {
  const fill_job *j = arg;
  const dom_work *w = j->w;
  uint64_t *retained = j->d->retained;
  uint32_t i;
  for (i = w->count; i-- > 1;) retained[w->vertex[w->best[i]]] += retained[w->vertex[i]];
}

/* What semi-NCA needed is no longer, and the results take its memory, of
 * the same sizes, rather than fault in as much again: the path stack (a
 * word per vertex) becomes the numbering by vertex, the tree (8 bytes a
 * node) the retained sizes and the link-eval forest the dominators. */
static void fill_result(dom_work *w, gs_dom *d) {
  fill_job job;
  assert(sizeof *w->tree == sizeof *d->retained);
  job.w = w;
  job.d = d;
  w->vertex = w->stack;
  d->retained = (uint64_t *)(void *)w->tree;
  d->idom = w->ancestor;
  w->stack = w->ancestor = NULL;
  w->tree = NULL;
  run_both(w, invert_numbering, &job, fill_sizes, &job);
  free(w->dfn);
  w->dfn = NULL;
  run_both(w, fill_idom, &job, sum_retained, &job);
  d->reachable = w->count - 1;
}

static void work_free(dom_work *w) {
  free(w->dfn); free(w->vertex); free(w->tree); free(w->ancestor); free(w->best); free(w->stack);
  free(w->preds); free(w->seen);
  sorter_free(&w->sorter);
}

/* Vertices are processed from the last, a range of them at a time. */
static int dominate(dom_work *w) {
  uint64_t budget = range_budget(w);
  uint32_t high, low;
  size_t cap = 0;
  if (!(w->stack = malloc(w->count * sizeof *w->stack))) return GS_ENOMEM;
  for (high = w->count; high > 1; high = low) {
    low = range_start(w, high, budget);
    if (list_predecessors(w, low, high, &cap)) return GS_ENOMEM;
    semi_dominators(w, low, high);
  }
  immediate_dominators(w);
  return GS_OK;
}

int gs_dom_build(const gs_graph *g, gs_dom *d) {
  dom_work w;
  size_t n = (size_t)g->nnodes + 1;
  memset(&w, 0, sizeof w);
  memset(d, 0, sizeof *d);
  w.g = g;
  w.half = middle_node(g);
  d->n = g->nnodes;
  if (!(w.dfn = malloc(n * sizeof *w.dfn)) || !(w.vertex = malloc(n * sizeof *w.vertex)) ||
      !(w.tree = calloc(n, sizeof *w.tree)) || !(w.ancestor = calloc(n, sizeof *w.ancestor)) ||
      !(w.best = calloc(n, sizeof *w.best)) || !(w.seen = calloc(n / 8 + 1, 1)))
    goto nomem;
  memset(w.dfn, 0xff, n * sizeof *w.dfn);
  if (sorter_start(&w)) goto nomem;
  number_vertices(&w);
  sorter_free(&w.sorter);
  free(w.seen);
  w.seen = NULL;
  /* The search needs the numbering both ways, the rest one way at a time:
   * dfn until the dominators are known, then vertex, rebuilt from it. */
  free(w.vertex);
  w.vertex = NULL;
  if (dominate(&w)) goto nomem;
  free(w.preds);
  w.preds = NULL;
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
