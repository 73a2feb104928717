/* gs_rt_walk.c - the capture: a full collection, then a linear walk of the
 * heap handed to a visitor as it goes.
 *
 * Right after a full collection every object in the heap is live and every
 * reference names a live object, so a linear walk of both segments is the
 * snapshot; nothing is copied. The only memory used is one buffer for the
 * references of the largest object, kept for the next capture. */
#include <stdlib.h>
#include "gs_error.h"
#include "gs_rt_int.h"

typedef struct walk {
  const gs_rt_visitor *v;
  int stable;
} walk;

static uint64_t id_of(const walk *w, const gs_rt_obj *o) {
  return w->stable ? (o->meta & GS_RT_ID_MASK) : (uint64_t)(uintptr_t)o;
}

static int reserve(gs_rt *rt, size_t n) {
  size_t cap = rt->scratch_cap ? rt->scratch_cap : 64;
  uint64_t *p;
  if (n <= rt->scratch_cap) return GS_OK;
  while (cap < n) cap *= 2;
  if (!(p = realloc(rt->scratch, cap * sizeof *p))) return GS_ENOMEM;
  rt->scratch = p;
  rt->scratch_cap = cap;
  return GS_OK;
}

static int visit_object(gs_rt *rt, const walk *w, gs_rt_obj *o) {
  gs_rt_refs r;
  size_t i, n = 0;
  int err;
  gs_rt_refs_of(rt, o, &r);
  if ((err = reserve(rt, r.n))) return err;
  for (i = 0; i < r.n; i++) {
    gs_rt_obj *t = *gs_rt_ref_slot(&r, i);
    if (t) rt->scratch[n++] = id_of(w, t);
  }
  return w->v->object(w->v->ctx, id_of(w, o), o->type, gs_rt_obj_size(rt, o), rt->scratch, n);
}

static int visit_range(gs_rt *rt, const walk *w, char *p, char *end) {
  int err;
  while (p < end) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    p += gs_rt_obj_size(rt, o);
    if (o->type && (err = visit_object(rt, w, o))) return err;
  }
  return GS_OK;
}

static int visit_root(gs_rt *rt, gs_rt_obj **slot, unsigned kind, unsigned flags,
                      uint32_t container, void *ctx) {
  const walk *w = ctx;
  (void)rt;
  return w->v->root(w->v->ctx, id_of(w, *slot), kind, flags, container);
}

static int visit_types(gs_rt *rt, const gs_rt_visitor *v) {
  uint32_t i;
  int err;
  for (i = 1; i <= rt->ntypes; i++)
    if ((err = v->type(v->ctx, i, rt->types[i].name, rt->types[i].name_len))) return err;
  return GS_OK;
}

static int visit_generations(gs_rt *rt, const gs_rt_visitor *v) {
  int err;
  uint64_t gen2 = (uint64_t)(rt->gen1 - rt->soh), gen1 = (uint64_t)(rt->gen0 - rt->gen1);
  uint64_t loh = (uint64_t)(rt->end - rt->loh);
  if ((err = v->generation(v->ctx, 2, (uintptr_t)rt->soh, gen2, gen2)) ||
      (err = v->generation(v->ctx, 1, (uintptr_t)rt->gen1, gen1, gen1)) ||
      (err = v->generation(v->ctx, 0, (uintptr_t)rt->gen0, (uint64_t)(rt->alloc - rt->gen0),
                           (uint64_t)(rt->loh - rt->gen0))))
    return err;
  return v->generation(v->ctx, 3, (uintptr_t)rt->loh, loh, loh);
}

int gs_rt_capture(gs_rt *rt, const gs_rt_visitor *v, unsigned flags) {
  walk w;
  int err;
  w.v = v;
  w.stable = (flags & GS_RT_STABLE_IDS) != 0;
  gs_rt_collect(rt, 2);
  if (v->type && (err = visit_types(rt, v))) return err;
  if (v->object && ((err = visit_range(rt, &w, rt->soh, rt->alloc)) ||
                    (err = visit_range(rt, &w, rt->loh, rt->end))))
    return err;
  if (v->root && (err = gs_rt_roots_each(rt, visit_root, &w))) return err;
  if (v->generation && (err = visit_generations(rt, v))) return err;
  return GS_OK;
}
