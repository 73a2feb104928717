/* gsf_v8dom.c - the DOM state of a Chromium snapshot's native nodes, passed
 * on as DevTools does (see gsf_v8dom.h).
 *
 * Two worklists, the attached nodes and the detached ones; a node is seen
 * once, so each list takes a node at most once and the walk is linear in
 * the nodes and the kept edges. */
#include <stdlib.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gsf_v8dom.h"

typedef struct walk {
  unsigned char *types;
  unsigned native;
  const gsf_v8_edge *e;
  size_t ne;
  uint8_t *seen;                /* a bit per node */
  uint32_t *list[2];            /* to pass on: attached, detached */
  size_t len[2], cap[2];
} walk;

void gsf_v8_edges_of(const gsf_v8_edge *e, size_t n, size_t k, size_t *first, size_t *last) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e[mid].from < k) lo = mid + 1; else hi = mid;
  }
  *first = *last = lo;
  while (*last < n && e[*last].from == k) (*last)++;
}

/* Node k takes state (a state bit), unless it was seen or is not native. */
static int visit(walk *w, uint32_t k, unsigned state) {
  int i = state == GSF_V8_DETACHED;
  if (w->seen[k >> 3] & (1u << (k & 7))) return GS_OK;
  w->seen[k >> 3] |= (uint8_t)(1u << (k & 7));
  if ((w->types[k] & GSF_V8_TYPE) != w->native) return GS_OK;
  w->types[k] = (unsigned char)((w->types[k] & ~(GSF_V8_ATTACHED | GSF_V8_DETACHED)) | state);
  if (gs_array_reserve((void **)&w->list[i], &w->cap[i], w->len[i] + 1, sizeof *w->list[i]))
    return GS_ENOMEM;
  w->list[i][w->len[i]++] = k;
  return GS_OK;
}

/* Empties a list, handing its state to what each node reaches. */
static int pass_on(walk *w, unsigned state) {
  int i = state == GSF_V8_DETACHED, err = GS_OK;
  while (!err && w->len[i]) {
    size_t a, b, k = w->list[i][--w->len[i]];
    gsf_v8_edges_of(w->e, w->ne, k, &a, &b);
    for (; a < b && !err; a++)
      if (w->e[a].follow) err = visit(w, w->e[a].to, state);
  }
  return err;
}

int gsf_v8dom_propagate(unsigned char *types, size_t n, unsigned native, const gsf_v8_edge *e,
                        size_t ne) {
  walk w = {0};
  size_t k;
  int err = GS_OK;
  w.types = types;
  w.native = native;
  w.e = e;
  w.ne = ne;
  if (!(w.seen = calloc(n / 8 + 1, 1))) return GS_ENOMEM;
  for (k = 0; k < n && !err; k++)
    if ((types[k] & GSF_V8_TYPE) == native && types[k] & (GSF_V8_ATTACHED | GSF_V8_DETACHED))
      err = visit(&w, (uint32_t)k, types[k] & (GSF_V8_ATTACHED | GSF_V8_DETACHED));
  if (!err) err = pass_on(&w, GSF_V8_ATTACHED);
  if (!err) err = pass_on(&w, GSF_V8_DETACHED);
  free(w.seen);
  free(w.list[0]);
  free(w.list[1]);
  return err;
}
