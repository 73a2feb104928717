/* test_dom.c - dominators and retained sizes, checked against the
 * definition (v dominates w when w cannot be reached without v) on many
 * small random graphs, and on hand-made shapes: chains, diamonds, cycles,
 * self references, weak roots and unreachable cycles; on a graph large
 * enough to be worked on two threads, against a much simpler algorithm. */
#include "gs_unit.h"

#include <stdlib.h>
#include "gs_dom.h"
#include "gs_graph.h"

static gs_graph *load(const char *text) {
  gs_reader *r;
  gs_graph *g = NULL;
  gs_diag d;
  gsu_assert_ok(gs_reader_new_buffer(&r, text, strlen(text)));
  gsu_assert_ok(gs_graph_load(r, &g, &d));
  gs_reader_free(r);
  return g;
}

/* Nodes reachable from the strong roots without passing through skip
 * (a node index, or UINT32_MAX for none). */
static void reach_without(const gs_graph *g, uint32_t skip, uint8_t *seen) {
  uint32_t *stack = malloc(((size_t)g->nnodes + 1) * sizeof *stack), top = 0, i, k;
  memset(seen, 0, g->nnodes);
  for (i = 0; i < g->nroots; i++) {
    uint32_t v = g->roots[i].node;
    if ((g->roots[i].flags & GS_FLAG_WEAK) || v == skip || seen[v]) continue;
    seen[v] = 1;
    stack[top++] = v;
  }
  while (top) {
    uint32_t v = stack[--top];
    for (k = g->ref_offsets[v]; k < g->ref_offsets[v + 1]; k++) {
      uint32_t u = g->refs[k];
      if (u == skip || seen[u]) continue;
      seen[u] = 1;
      stack[top++] = u;
    }
  }
  free(stack);
}

/* Checks d against the definition of dominance, and the retained sizes and
 * per-type sums against sums over the dominated sets. */
static void check_against_definition(const gs_graph *g, const gs_dom *d) {
  uint32_t n = g->nnodes, v, w;
  uint8_t *all = malloc(n + 1), *without = malloc(((size_t)n + 1) * (n + 1));
  uint64_t total = 0, *by_type = calloc(g->ntypes + 1, sizeof *by_type);
  uint64_t *want_type = calloc(g->ntypes + 1, sizeof *want_type);
  reach_without(g, UINT32_MAX, all);
  for (v = 0; v < n; v++) reach_without(g, v, without + (size_t)v * (n + 1));
  for (w = 0; w < n; w++) {
    uint64_t retained = 0;
    uint32_t best = n, best_depth = 0;
    if (!all[w]) {
      assert_int_equal(d->idom[w], GS_DOM_UNREACHABLE);
      assert_int_equal(d->retained[w], 0);
      continue;
    }
    total += g->sizes[w];
    /* idom(w): the strict dominator that all others dominate, i.e. the one
     * with the most dominators of its own. */
    for (v = 0; v < n; v++) {
      uint32_t depth = 0, u;
      if (v == w || without[(size_t)v * (n + 1) + w]) continue;
      for (u = 0; u < n; u++) depth += u != v && all[v] && !without[(size_t)u * (n + 1) + v];
      if (best == n || depth > best_depth) { best = v; best_depth = depth; }
    }
    assert_int_equal(d->idom[w], best);
    /* Retained: w and everything that cannot be reached without w. */
    for (v = 0; v < n; v++)
      if (all[v] && (v == w || !without[(size_t)w * (n + 1) + v])) retained += g->sizes[v];
    assert_int_equal(d->retained[w], retained);
  }
  assert_int_equal(d->retained[n], total);
  /* By type: w counts for its type unless a strict dominator has that type. */
  for (w = 0; w < n; w++) {
    uint32_t t = g->types[w] == GS_GRAPH_MISSING ? g->ntypes : g->types[w], u = d->idom[w];
    int shadowed = 0;
    if (!all[w]) continue;
    for (; u != n && u != GS_DOM_UNREACHABLE; u = d->idom[u])
      if ((g->types[u] == GS_GRAPH_MISSING ? g->ntypes : g->types[u]) == t) shadowed = 1;
    if (!shadowed) want_type[t] += d->retained[w];
  }
  gsu_assert_ok(gs_dom_retained_by_type(g, d, by_type));
  for (v = 0; v <= g->ntypes; v++) assert_int_equal(by_type[v], want_type[v]);
  free(all); free(without); free(by_type); free(want_type);
}

static void check_text(const char *text) {
  gs_graph *g = load(text);
  gs_dom d;
  gsu_assert_ok(gs_dom_build(g, &d));
  check_against_definition(g, &d);
  gs_dom_free(&d);
  gs_graph_free(g);
}

static void hand_made_shapes(void **state) {
  (void)state;
  /* Chain with a diamond: 10 -> 20, 30 -> 40; 40 is dominated by 10 only. */
  check_text("a 2 D 0\nt 1 T\nt 2 U\no 10 1 8 20 30\no 20 2 8 40\no 30 2 8 40\no 40 1 8\nr 10 1 0\nc D 0\n");
  /* Cycle through the root and self references. */
  check_text("a 2 D 0\nt 1 T\no 10 1 8 20 10\no 20 1 16 30\no 30 1 24 10 30\nr 10 1 0\nc D 0\n");
  /* Two roots reaching one object: only the virtual root dominates it. */
  check_text("a 2 D 0\nt 1 T\no 10 1 8 30\no 20 1 8 30\no 30 1 8\nr 10 1 0\nr 20 3 0\nc D 0\n");
  /* A weak root keeps nothing alive; an unreachable cycle stays out. */
  check_text("a 2 D 0\nt 1 T\no 10 1 8\no 20 1 8 30\no 30 1 8 20\nr 10 1 0\nr 20 3 2\nc D 0\n");
  /* A reference to an object not in the dump: a placeholder node of size 0. */
  check_text("a 2 D 0\nt 1 T\no 10 1 8 99\nr 10 1 0\nc D 0\n");
  /* No roots at all. */
  check_text("a 2 D 0\nt 1 T\no 10 1 8 20\no 20 1 8\nc D 0\n");
}

static uint32_t next_random(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

static void random_graphs(void **state) {
  uint64_t seed = 42;
  int round;
  (void)state;
  for (round = 0; round < 400; round++) {
    gsu_buf b = {0};
    uint32_t n = 1 + next_random(&seed) % 30, i, k;
    uint32_t density = 1 + next_random(&seed) % 4;
    gsu_buf_printf(&b, "a 2 R 0\nt 1 A\nt 2 B\nt 3 C\n");
    for (i = 0; i < n; i++) {
      uint32_t degree = next_random(&seed) % (density + 1);
      gsu_buf_printf(&b, "o %x %x %x", 8 * (i + 1), 1 + next_random(&seed) % 3, 8 + 8 * (next_random(&seed) % 5));
      for (k = 0; k < degree; k++) gsu_buf_printf(&b, " %x", 8 * (1 + next_random(&seed) % n));
      gsu_buf_printf(&b, "\n");
    }
    for (i = 0; i < 1 + next_random(&seed) % 3; i++)
      gsu_buf_printf(&b, "r %x 1 %x\n", 8 * (1 + next_random(&seed) % n), next_random(&seed) % 4 == 0 ? 2 : 0);
    gsu_buf_printf(&b, "c R 0\n");
    check_text(b.data);
    gsu_buf_free(&b);
  }
}

/* Successor k of node v (the virtual root is node n), UINT32_MAX for a
 * weak root. */
static uint32_t successor(const gs_graph *g, uint32_t v, uint32_t k) {
  if (v != g->nnodes) return g->refs[g->ref_offsets[v] + k];
  return g->roots[k].flags & GS_FLAG_WEAK ? UINT32_MAX : g->roots[k].node;
}

static uint32_t successors(const gs_graph *g, uint32_t v) {
  return v == g->nnodes ? g->nroots : g->ref_offsets[v + 1] - g->ref_offsets[v];
}

/* Postorder from the virtual root: post[v] (UINT32_MAX if unreachable) and
 * order[] (the vertices by postorder). Returns how many are reachable. */
static uint32_t postorder(const gs_graph *g, uint32_t *post, uint32_t *order) {
  uint32_t n = g->nnodes, top = 0, count = 0;
  uint32_t *stack = malloc((n + 1) * sizeof *stack), *pos = calloc(n + 1, sizeof *pos);
  memset(post, 0xff, (n + 1) * sizeof *post);
  stack[top++] = n;
  pos[n] = 0;
  post[n] = 0;   /* seen; numbered when it finishes */
  while (top) {
    uint32_t v = stack[top - 1], w;
    if (pos[v] == successors(g, v)) { post[v] = count; order[count++] = v; top--; continue; }
    w = successor(g, v, pos[v]++);
    if (w != UINT32_MAX && post[w] == UINT32_MAX) { post[w] = 0; stack[top++] = w; }
  }
  free(stack);
  free(pos);
  return count;
}

static uint32_t intersect(const uint32_t *idom, const uint32_t *post, uint32_t a, uint32_t b) {
  while (a != b) {
    while (post[a] < post[b]) a = idom[a];
    while (post[b] < post[a]) b = idom[b];
  }
  return a;
}

/* Cooper, Harvey and Kennedy's iteration over reverse postorder, with the
 * predecessors found by scanning all edges: slow, but too simple to share a
 * mistake with semi-NCA. */
static void iterate_dominators(const gs_graph *g, const uint32_t *post, const uint32_t *order,
                               uint32_t count, uint32_t *idom) {
  uint32_t n = g->nnodes, i, k, v;
  uint32_t *start = calloc(n + 2, sizeof *start), *preds = malloc((g->nrefs + g->nroots) * sizeof *preds);
  int changed = 1;
  for (i = 0; i < count; i++)
    for (k = 0; k < successors(g, order[i]); k++)
      if ((v = successor(g, order[i], k)) != UINT32_MAX) start[v + 1]++;
  for (v = 0; v <= n; v++) start[v + 1] += start[v];
  for (i = 0; i < count; i++)
    for (k = 0; k < successors(g, order[i]); k++)
      if ((v = successor(g, order[i], k)) != UINT32_MAX) preds[start[v]++] = order[i];
  for (v = n + 1; v > 0; v--) start[v] = start[v - 1];
  start[0] = 0;
  memset(idom, 0xff, (n + 1) * sizeof *idom);
  idom[n] = n;
  while (changed) {
    changed = 0;
    for (i = count - 1; i-- > 0;) {
      uint32_t b = order[i], best = UINT32_MAX;
      for (k = start[b]; k < start[b + 1]; k++)
        if (idom[preds[k]] != UINT32_MAX)
          best = best == UINT32_MAX ? preds[k] : intersect(idom, post, preds[k], best);
      if (idom[b] != best) { idom[b] = best; changed = 1; }
    }
  }
  free(start);
  free(preds);
}

/* 60000 objects with random references (up to most each) and loops back
 * to the objects just before: enough for the work split over two threads,
 * with many edges pointing back in depth-first order from both halves of
 * the nodes. */
static void check_large_random(uint64_t seed, uint32_t most) {
  gsu_buf b = {0};
  uint64_t *retained;
  uint32_t n = 60000, i, k, count, *post, *order, *idom;
  gs_graph *g;
  gs_dom d;
  gsu_buf_printf(&b, "a 2 Big 0\nt 1 A\n");
  for (i = 0; i < n; i++) {
    uint32_t degree = next_random(&seed) % (most + 1);
    gsu_buf_printf(&b, "o %x 1 %x", 16 * (i + 1), 8 + 8 * (next_random(&seed) % 9));
    for (k = 0; k < degree; k++) gsu_buf_printf(&b, " %x", 16 * (1 + next_random(&seed) % n));
    if (i > 8 && next_random(&seed) % 2) gsu_buf_printf(&b, " %x", 16 * (i - next_random(&seed) % 8));
    gsu_buf_printf(&b, "\n");
  }
  for (i = 0; i < 40; i++)
    gsu_buf_printf(&b, "r %x 1 %x\n", 16 * (1 + next_random(&seed) % n), i % 4 == 3 ? 2 : 0);
  gsu_buf_printf(&b, "c Big 0\n");
  g = load(b.data);
  assert_true(g->nrefs > 100000);
  post = malloc((n + 1) * sizeof *post);
  order = malloc((n + 1) * sizeof *order);
  idom = malloc((n + 1) * sizeof *idom);
  retained = calloc(n + 1, sizeof *retained);
  count = postorder(g, post, order);
  iterate_dominators(g, post, order, count, idom);
  /* A dominator finishes after what it dominates: sums in postorder. */
  for (i = 0; i + 1 < count; i++) retained[order[i]] += g->sizes[order[i]];
  for (i = 0; i + 1 < count; i++) retained[idom[order[i]]] += retained[order[i]];
  gsu_assert_ok(gs_dom_build(g, &d));
  assert_int_equal(d.reachable, count - 1);
  for (i = 0; i < n; i++) {
    assert_int_equal(d.idom[i], post[i] == UINT32_MAX ? GS_DOM_UNREACHABLE : idom[i]);
    assert_int_equal(d.retained[i], retained[i]);
  }
  assert_int_equal(d.retained[n], retained[n]);
  gs_dom_free(&d);
  gs_graph_free(g);
  gsu_buf_free(&b);
  free(post); free(order); free(idom); free(retained);
}

/* About 150000 references; then 330000, with more than two pointing back
 * in depth-first order per object, so that predecessors are listed a range
 * of vertices at a time. */
static void large_random_graph(void **state) {
  (void)state;
  check_large_random(7, 4);
  check_large_random(11, 10);
}

/* A long chain would overflow a recursive implementation's stack. */
static void deep_chain(void **state) {
  gsu_buf b = {0};
  uint32_t n = 1000000, i;
  gs_graph *g;
  gs_dom d;
  (void)state;
  gsu_buf_printf(&b, "a 2 Deep 0\nt 1 Node\n");
  for (i = 0; i < n; i++)
    if (i + 1 < n) gsu_buf_printf(&b, "o %x 1 10 %x\n", 16 * (i + 1), 16 * (i + 2));
    else gsu_buf_printf(&b, "o %x 1 10\n", 16 * (i + 1));
  gsu_buf_printf(&b, "r 10 1 0\nc Deep 0\n");
  g = load(b.data);
  gsu_assert_ok(gs_dom_build(g, &d));
  assert_int_equal(d.reachable, n);
  assert_int_equal(d.retained[n], (uint64_t)16 * n);
  assert_int_equal(d.retained[0], (uint64_t)16 * n);
  for (i = 1; i < n; i++) assert_int_equal(d.idom[i], i - 1);
  gs_dom_free(&d);
  gs_graph_free(g);
  gsu_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(hand_made_shapes),
    cmocka_unit_test(random_graphs),
    cmocka_unit_test(deep_chain),
    cmocka_unit_test(large_random_graph),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
