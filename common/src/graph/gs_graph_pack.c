/* gs_graph_pack.c - a graph's IDs, sizes and types packed small while an
 * analysis that needs none of them until it ends holds its largest arrays
 * (gs_graph_pack, gs_graph_unpack and gs_graph_size of gs_graph.h). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_graph.h"
#include "gs_graph_pack.h"
#include "gs_thread.h"

/* While packed, an ID is kept as its distance from the node before (objects
 * are in ID order, so that is about an object's size) and a size as itself,
 * each in the fewest of 1, 2 or 4 bytes that leaves no more than one node in
 * MAX_ESCAPED wider. A value that does not fit below its width's escape is
 * written as the escape and kept whole in a table in node order; an array
 * that would need the table too often even at 4 bytes is left as it is, so
 * packing never holds more than 5 bytes per node for either. */
#define MAX_ESCAPED 16
/* Fewer nodes than this are packed and unpacked on one thread. */
#define PACK_PARALLEL_MIN 65536u

typedef struct escaped { uint64_t node, value; } escaped;

typedef struct packed {
  void *low;         /* width bytes per node */
  unsigned width;
  escaped *wide;
  size_t nwide;
} packed;

struct gs_graph_packing {
  packed ids, sizes;
  void *types;       /* type_width bytes per node */
  unsigned type_width;
};

void gs_graph_packing_free_(struct gs_graph_packing *p) {
  if (!p) return;
  free(p->ids.low); free(p->ids.wide);
  free(p->sizes.low); free(p->sizes.wide);
  free(p->types);
  free(p);
}

static uint64_t escape_of(unsigned width) { return (UINT64_C(1) << (8 * width)) - 1; }

static uint32_t low_get(const char *mem, unsigned width, size_t i) {
  uint8_t b;
  uint16_t h;
  uint32_t w;
  if (width == 1) { memcpy(&b, mem + i, 1); return b; }
  if (width == 2) { memcpy(&h, mem + 2 * i, 2); return h; }
  memcpy(&w, mem + 4 * i, 4);
  return w;
}

static void low_set(char *mem, unsigned width, size_t i, uint64_t v) {
  uint8_t b = (uint8_t)v;
  uint16_t h = (uint16_t)v;
  uint32_t w = (uint32_t)v;
  if (width == 1) memcpy(mem + i, &b, 1);
  else if (width == 2) memcpy(mem + 2 * i, &h, 2);
  else memcpy(mem + 4 * i, &w, 4);
}

/* The fewest bytes of 1, 2 or 4 that leave no more than n / MAX_ESCAPED of
 * the n values wide, and how many; 0 when 4 leave more. */
static unsigned pack_width(const uint64_t *v, size_t n, int delta, size_t *nwide) {
  size_t over[3] = {0, 0, 0}, i;
  unsigned k;
  for (i = 0; i < n; i++) {
    uint64_t x = v[i] - (delta && i ? v[i - 1] : 0);
    over[0] += x >= escape_of(1);
    over[1] += x >= escape_of(2);
    over[2] += x >= escape_of(4);
  }
  for (k = 0; k < 3; k++)
    if (over[k] <= n / MAX_ESCAPED) { *nwide = over[k]; return 1u << k; }
  return 0;
}

/* Packs *v (n values) into p, in the same memory: entry i is read at byte
 * 8i before byte width * i is written, and memcpy keeps the compiler from
 * assuming the two views do not overlap. GS_OK (*v left as it is when too
 * many values are wide) or GS_ENOMEM. */
static int pack(uint64_t **v, size_t n, int delta, packed *p) {
  char *mem = (char *)*v;
  uint64_t prev = 0, x, escape;
  size_t i, nwide = 0;
  if (!(p->width = pack_width(*v, n, delta, &nwide))) return GS_OK;
  if (!(p->wide = malloc((nwide ? nwide : 1) * sizeof *p->wide))) return GS_ENOMEM;
  escape = escape_of(p->width);
  for (i = 0; i < n; i++) {
    memcpy(&x, mem + 8 * i, 8);
    if (x - prev >= escape) { p->wide[p->nwide].node = i; p->wide[p->nwide++].value = x - prev; }
    low_set(mem, p->width, i, x - prev < escape ? x - prev : escape);
    if (delta) prev = x;
  }
  p->low = gs_array_shrink(mem, n, p->width);
  *v = NULL;
  return GS_OK;
}

/* Gives the values of p back to *v, widened in the same memory from the
 * end: bytes 8i.. are written after entry i and those after it were read,
 * and they are all the entries those bytes cover. GS_OK or GS_ENOMEM (p
 * kept). */
static int unpack(packed *p, size_t n, int delta, uint64_t **v) {
  size_t i, w = p->nwide;
  uint64_t *out, escape = escape_of(p->width);
  char *mem;
  if (!p->low) return GS_OK;
  if (!(out = realloc(p->low, (n ? n : 1) * sizeof *out))) return GS_ENOMEM;
  mem = (char *)out;
  for (i = n; i-- > 0;) {
    uint64_t x = low_get(mem, p->width, i);
    if (x == escape) x = p->wide[--w].value;
    memcpy(mem + 8 * i, &x, 8);
  }
  for (i = 1; delta && i < n; i++) out[i] += out[i - 1];
  free(p->wide);
  memset(p, 0, sizeof *p);
  *v = out;
  return GS_OK;
}

/* Types take 1 byte when there are fewer than 255 of them, else 2 when
 * fewer than 65535 (the escape stands for GS_GRAPH_MISSING), narrowed in
 * place as the values are: entry i is read at byte 4i before it is written
 * at a lower one. */
static void pack_types(gs_graph *g) {
  char *mem = (char *)g->types;
  unsigned width = g->ntypes < escape_of(1) ? 1 : 2;
  uint32_t i, t;
  if (g->ntypes >= escape_of(2)) return;
  for (i = 0; i < g->nnodes; i++) {
    memcpy(&t, mem + 4 * (size_t)i, 4);
    low_set(mem, width, i, t == GS_GRAPH_MISSING ? escape_of(width) : t);
  }
  g->packing->types = gs_array_shrink(mem, g->nnodes, width);
  g->packing->type_width = width;
  g->types = NULL;
}

/* Widened from the end, as unpack() does. GS_OK or GS_ENOMEM (kept packed). */
static int unpack_types(gs_graph *g) {
  unsigned width = g->packing->type_width;
  char *mem;
  uint32_t i, t, *wide;
  if (!g->packing->types) return GS_OK;
  if (!(wide = realloc(g->packing->types, ((size_t)g->nnodes + 1) * sizeof *wide))) return GS_ENOMEM;
  mem = (char *)wide;
  for (i = g->nnodes; i-- > 0;) {
    t = low_get(mem, width, i);
    if (t == escape_of(width)) t = GS_GRAPH_MISSING;
    memcpy(mem + 4 * (size_t)i, &t, 4);
  }
  g->types = wide;
  g->packing->types = NULL;
  return GS_OK;
}

/* The IDs are packed or widened on a thread of their own when there are
 * two processors and enough nodes, the sizes and types meanwhile on this
 * one: each is a pass over memory, and widening is mostly faulting in the
 * wide arrays, which two threads do at once. */
typedef struct ids_job { gs_graph *g; int pack, err; } ids_job;

static void pack_ids(void *arg) {
  ids_job *j = arg;
  gs_graph *g = j->g;
  j->err = j->pack ? pack(&g->ids, g->nnodes, 1, &g->packing->ids)
                   : unpack(&g->packing->ids, g->nnodes, 1, &g->ids);
}

static gs_thread *ids_start(ids_job *j, gs_graph *g, int pack) {
  gs_thread *helper = NULL;
  j->g = g;
  j->pack = pack;
  if (g->nnodes < PACK_PARALLEL_MIN || gs_thread_cpus() < 2 || gs_thread_start(&helper, pack_ids, j))
    pack_ids(j);
  return helper;
}

static int ids_finish(ids_job *j, gs_thread *helper, int err) {
  if (helper) gs_thread_join(helper);
  return err ? err : j->err;
}

int gs_graph_pack(gs_graph *g) {
  ids_job ids;
  gs_thread *helper;
  if (!g->packing && !(g->packing = calloc(1, sizeof *g->packing))) return GS_ENOMEM;
  helper = ids_start(&ids, g, 1);
  if (!g->packing->types) pack_types(g);
  return ids_finish(&ids, helper, pack(&g->sizes, g->nnodes, 0, &g->packing->sizes));
}

int gs_graph_unpack(gs_graph *g) {
  ids_job ids;
  gs_thread *helper;
  int err;
  if (!g->packing) return GS_OK;
  helper = ids_start(&ids, g, 0);
  if (!(err = unpack(&g->packing->sizes, g->nnodes, 0, &g->sizes))) err = unpack_types(g);
  if ((err = ids_finish(&ids, helper, err))) return err;
  free(g->packing);
  g->packing = NULL;
  return GS_OK;
}

uint64_t gs_graph_size(const gs_graph *g, uint32_t v) {
  const packed *p;
  size_t lo = 0, hi;
  uint64_t low;
  if (g->sizes) return g->sizes[v];
  p = &g->packing->sizes;
  if ((low = low_get(p->low, p->width, v)) != escape_of(p->width)) return low;
  for (hi = p->nwide; lo + 1 < hi;) {
    size_t mid = lo + (hi - lo) / 2;
    if (p->wide[mid].node <= v) lo = mid;
    else hi = mid;
  }
  assert(p->wide[lo].node == v);
  return p->wide[lo].value;
}
