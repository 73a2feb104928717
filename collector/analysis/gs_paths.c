/* gs_paths.c - shortest retention paths by breadth-first search (see gs_paths.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gs_paths.h"

static int strong(const gs_graph_root *r) { return !(r->flags & GS_FLAG_WEAK); }

/* The first strong root entry of each node, or GS_PATH_NONE. */
static uint32_t *root_of_nodes(const gs_graph *g) {
  uint32_t *first = malloc(((size_t)g->nnodes + 1) * sizeof *first), i;
  if (!first) return NULL;
  memset(first, 0xff, ((size_t)g->nnodes + 1) * sizeof *first);
  for (i = g->nroots; i-- > 0;)
    if (strong(&g->roots[i])) first[g->roots[i].node] = i;
  return first;
}

/* Predecessor lists of every node (CSR): off has nnodes + 1 entries. */
static int predecessors(const gs_graph *g, uint32_t **off_out, uint32_t **preds_out) {
  uint32_t n = g->nnodes, v, *off = calloc((size_t)n + 1, sizeof *off), *preds;
  uint64_t k;
  if (!off) return GS_ENOMEM;
  for (k = 0; k < g->nrefs; k++) off[g->refs[k] + 1]++;
  for (v = 0; v < n; v++) off[v + 1] += off[v];
  if (!(preds = malloc((g->nrefs ? g->nrefs : 1) * sizeof *preds))) { free(off); return GS_ENOMEM; }
  for (v = 0; v < n; v++)
    for (k = g->ref_offsets[v]; k < g->ref_offsets[v + 1]; k++) preds[off[g->refs[k]]++] = v;
  for (v = n; v > 0; v--) off[v] = off[v - 1];
  off[0] = 0;
  *off_out = off;
  *preds_out = preds;
  return GS_OK;
}

size_t gs_path_elided(size_t len) {
  return len > 2 * GS_PATH_ENDS + 1 ? len - 2 * GS_PATH_ENDS : 0;
}

/* Appends the path v ... target that next[] spells out, its ends only. */
static int add_path(gs_paths *p, uint32_t root, uint32_t v, uint32_t target,
                    const uint32_t *next, size_t *cap) {
  uint32_t u;
  size_t len = 1, elided, i = 0;
  for (u = v; u != target; u = next[u]) len++;
  elided = gs_path_elided(len);
  if (p->start[p->npaths] + len - elided > *cap) {
    size_t c = (*cap ? *cap * 2 : 64) + len - elided;
    uint32_t *nodes = realloc(p->nodes, c * sizeof *nodes);
    if (!nodes) return GS_ENOMEM;
    p->nodes = nodes;
    *cap = c;
  }
  for (u = v;; u = next[u], i++) {
    if (i < GS_PATH_ENDS || i >= GS_PATH_ENDS + elided) p->nodes[p->start[p->npaths]++] = u;
    if (u == target) break;
  }
  p->elided[p->npaths] = elided;
  p->roots[p->npaths++] = root;
  p->start[p->npaths] = p->start[p->npaths - 1];
  return GS_OK;
}

int gs_paths_to(const gs_graph *g, uint32_t target, size_t max, gs_paths *p) {
  uint32_t *off = NULL, *preds = NULL, *next, *queue, *root_of, head = 0, tail = 0, k;
  size_t cap = 0, i;
  int err = GS_OK;
  memset(p, 0, sizeof *p);
  if (target >= g->nnodes || max == 0) return GS_OK;
  next = malloc((size_t)g->nnodes * sizeof *next);
  queue = malloc((size_t)g->nnodes * sizeof *queue);
  root_of = root_of_nodes(g);
  p->roots = malloc(max * sizeof *p->roots);
  p->start = calloc(max + 2, sizeof *p->start);
  p->elided = calloc(max + 1, sizeof *p->elided);
  if (!next || !queue || !root_of || !p->roots || !p->start || !p->elided ||
      predecessors(g, &off, &preds)) {
    err = GS_ENOMEM;
    goto done;
  }
  /* next[v]: the node after v on its shortest path to target. */
  memset(next, 0xff, (size_t)g->nnodes * sizeof *next);
  next[target] = target;
  queue[tail++] = target;
  while (head < tail && p->npaths < max && !err) {
    uint32_t v = queue[head++];
    if (root_of[v] != GS_PATH_NONE) err = add_path(p, root_of[v], v, target, next, &cap);
    for (k = off[v]; k < off[v + 1]; k++) {
      uint32_t u = preds[k];
      if (next[u] != GS_PATH_NONE) continue;
      next[u] = v;
      queue[tail++] = u;
    }
  }
  /* start[i] was advanced past path i: rebuild the starts from the ends. */
  for (i = p->npaths; i > 0; i--) p->start[i] = p->start[i - 1];
  p->start[0] = 0;
done:
  free(next); free(queue); free(root_of); free(off); free(preds);
  if (err) gs_paths_free(p);
  return err;
}

void gs_paths_free(gs_paths *p) {
  free(p->roots);
  free(p->start);
  free(p->elided);
  free(p->nodes);
  memset(p, 0, sizeof *p);
}

size_t gs_path_shorten(uint32_t *nodes, size_t *len) {
  size_t elided = gs_path_elided(*len);
  if (elided) {
    memmove(nodes + GS_PATH_ENDS, nodes + GS_PATH_ENDS + elided, GS_PATH_ENDS * sizeof *nodes);
    *len -= elided;
  }
  return elided;
}

const char *gs_path_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  if (t == GS_GRAPH_MISSING || t >= g->ntypes) return "(not in the dump)";
  return gs_graph_type_name(g, t, buf, cap);
}

json_t *gs_path_node_json(const gs_graph *g, uint32_t v) {
  json_t *o = json_object();
  char id[24], tbuf[64];
  snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
  gs_json_set(o, "id", gs_json_cstring(id));
  gs_json_set(o, "type", gs_json_cstring(gs_path_type_name(g, g->types[v], tbuf, sizeof tbuf)));
  gs_json_set(o, "size", gs_json_u64(g->sizes[v]));
  return o;
}

json_t *gs_path_json(const gs_graph *g, const uint32_t *nodes, size_t len, size_t elided) {
  json_t *arr = json_array();
  size_t i;
  for (i = 0; i < len; i++) {
    if (elided && i == GS_PATH_ENDS) {
      json_t *gap = json_object();
      gs_json_set(gap, "elided", gs_json_u64(elided));
      json_array_append_new(arr, gap);
    }
    json_array_append_new(arr, gs_path_node_json(g, nodes[i]));
  }
  return arr;
}

int gs_retention_build(const gs_graph *g, gs_retention *r) {
  size_t bytes = ((size_t)g->nnodes + 1) * sizeof(uint32_t);
  uint32_t *queue = malloc(bytes), head = 0, tail = 0, i;
  memset(r, 0, sizeof *r);
  r->root = malloc(bytes);
  r->hop = malloc(bytes);
  r->parent = malloc(bytes);
  r->depth = malloc(bytes);
  if (!queue || !r->root || !r->hop || !r->parent || !r->depth) {
    free(queue);
    gs_retention_free(r);
    return GS_ENOMEM;
  }
  memset(r->root, 0xff, bytes);
  memset(r->hop, 0xff, bytes);
  memset(r->parent, 0xff, bytes);
  memset(r->depth, 0xff, bytes);
  for (i = 0; i < g->nroots; i++) {
    uint32_t v = g->roots[i].node;
    if (!strong(&g->roots[i]) || r->root[v] != GS_PATH_NONE) continue;
    r->root[v] = i;
    r->hop[v] = v;
    r->depth[v] = 0;
    queue[tail++] = v;
  }
  while (head < tail) {
    uint32_t v = queue[head++], k;
    for (k = g->ref_offsets[v]; k < g->ref_offsets[v + 1]; k++) {
      uint32_t u = g->refs[k];
      if (r->root[u] != GS_PATH_NONE) continue;
      r->root[u] = r->root[v];
      r->hop[u] = r->parent[v] == GS_PATH_NONE ? u : r->hop[v];
      r->parent[u] = v;
      r->depth[u] = r->depth[v] + 1;
      queue[tail++] = u;
    }
  }
  free(queue);
  return GS_OK;
}

void gs_retention_free(gs_retention *r) {
  free(r->root);
  free(r->hop);
  free(r->parent);
  free(r->depth);
  memset(r, 0, sizeof *r);
}

/* ---- instances of a type, grouped by what holds them ------------------- */

/* An instance and what holds it. holder is the root's object for a static
 * root (each static field is a holder of its own, however many fields of
 * one type a class has), 0 for other roots. */
typedef struct instance { uint32_t node, root_type, hop_type, root_kf, holder; } instance;

static int by_group_key(const void *a, const void *b) {
  const instance *x = a, *y = b;
  if (x->root_kf != y->root_kf) return x->root_kf < y->root_kf ? -1 : 1;
  if (x->root_type != y->root_type) return x->root_type < y->root_type ? -1 : 1;
  if (x->hop_type != y->hop_type) return x->hop_type < y->hop_type ? -1 : 1;
  if (x->holder != y->holder) return x->holder < y->holder ? -1 : 1;
  return x->node < y->node ? -1 : x->node > y->node;
}

static int same_group(const instance *x, const instance *y) {
  return x->root_kf == y->root_kf && x->root_type == y->root_type &&
         x->hop_type == y->hop_type && x->holder == y->holder;
}

static int by_count_desc(const void *a, const void *b) {
  const gs_type_group *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
  return x->example < y->example ? -1 : x->example > y->example;
}

/* The reachable instances, with what their group is made of. */
static int collect_instances(const gs_graph *g, const gs_retention *ret, const uint8_t *is_type,
                             instance **out, size_t *n, uint64_t *count, uint64_t *bytes) {
  instance *inst = NULL;
  size_t cap = 0;
  uint32_t v;
  *n = 0;
  *count = *bytes = 0;
  for (v = 0; v < g->nobjects; v++) {
    const gs_graph_root *r;
    if (g->types[v] == GS_GRAPH_MISSING || !is_type[g->types[v]]) continue;
    ++*count;
    *bytes += g->sizes[v];
    if (ret->root[v] == GS_PATH_NONE) continue;
    if (*n == cap) {
      instance *bigger = realloc(inst, (cap = cap ? cap * 2 : 256) * sizeof *inst);
      if (!bigger) { free(inst); return GS_ENOMEM; }
      inst = bigger;
    }
    r = &g->roots[ret->root[v]];
    inst[*n].node = v;
    inst[*n].root_kf = (uint32_t)r->kind << 8 | r->flags;
    inst[*n].root_type = g->types[r->node];
    inst[*n].holder = r->kind == GS_ROOT_STATIC ? r->node : 0;
    inst[(*n)++].hop_type = g->types[ret->hop[v]];
  }
  *out = inst;
  return GS_OK;
}

int gs_type_groups(const gs_graph *g, const gs_retention *ret, const uint8_t *is_type,
                   gs_type_group **out, size_t *ngroups, uint64_t *count, uint64_t *bytes,
                   uint64_t *live) {
  instance *inst;
  gs_type_group *groups;
  size_t n, i, k = 0;
  if (collect_instances(g, ret, is_type, &inst, &n, count, bytes)) return GS_ENOMEM;
  *live = n;
  if (n) qsort(inst, n, sizeof *inst, by_group_key);
  if (!(groups = calloc(n ? n : 1, sizeof *groups))) { free(inst); return GS_ENOMEM; }
  for (i = 0; i < n; i++) {
    gs_type_group *gr;
    if (i == 0 || !same_group(&inst[i], &inst[i - 1])) {
      gr = &groups[k++];
      gr->root_kind = inst[i].root_kf >> 8;
      gr->root_flags = inst[i].root_kf & 0xff;
      gr->root_type = inst[i].root_type;
      gr->hop_type = inst[i].hop_type;
      gr->example = inst[i].node;
    }
    gr = &groups[k - 1];
    gr->count++;
    gr->bytes += g->sizes[inst[i].node];
    if (ret->depth[inst[i].node] < ret->depth[gr->example]) gr->example = inst[i].node;
  }
  free(inst);
  if (k) qsort(groups, k, sizeof *groups, by_count_desc);
  *out = groups;
  *ngroups = k;
  return GS_OK;
}
