/* gs_rt_finalize.c - finalization: objects of finalizable types are
 * registered when allocated; when a collection finds one unreachable it
 * moves it to the finalizer queue, a root (kind 2), so that it and what it
 * references survive until the program has run its finalizer.
 *
 * Both lists share one array, the queue first: moving an object from one to
 * the other is a swap, so a collection never allocates. */
#include <stdlib.h>
#include "gs_error.h"
#include "gs_rt_int.h"

int gs_rt_final_register(gs_rt *rt, gs_rt_obj *o) {
  if (rt->nfinal == rt->final_cap) {
    size_t cap = rt->final_cap ? rt->final_cap * 2 : 64;
    gs_rt_obj **f = realloc(rt->final, cap * sizeof *f);
    if (!f) return GS_ENOMEM;
    rt->final = f;
    rt->final_cap = cap;
  }
  rt->final[rt->nfinal++] = o;
  return GS_OK;
}

void gs_rt_final_scan(gs_rt *rt) {
  size_t i = rt->nready;
  while (i < rt->nfinal) {
    gs_rt_obj *o = rt->final[i];
    int condemned = gs_rt_condemned(rt, o);
    if (condemned && (o->meta & GS_RT_NOFINAL)) {
      rt->final[i] = rt->final[--rt->nfinal];   /* nothing left to do for it */
      continue;
    }
    if (condemned && !(o->meta & GS_RT_MARK)) {
      rt->final[i] = rt->final[rt->nready];      /* an entry already kept */
      rt->final[rt->nready++] = o;
      gs_rt_mark(rt, o);
    }
    i++;
  }
  gs_rt_drain(rt);
}

void gs_rt_final_each_registered(gs_rt *rt, void (*fn)(gs_rt *rt, gs_rt_obj **slot)) {
  size_t i;
  for (i = rt->nready; i < rt->nfinal; i++) fn(rt, &rt->final[i]);
}

gs_rt_obj *gs_rt_next_finalizable(gs_rt *rt) {
  gs_rt_obj *o;
  if (!rt->nready) return NULL;
  o = rt->final[--rt->nready];
  rt->final[rt->nready] = rt->final[--rt->nfinal];
  return o;
}

void gs_rt_suppress_finalize(gs_rt *rt, gs_rt_obj *o) {
  (void)rt;
  if (o) o->meta |= GS_RT_NOFINAL;
}

void gs_rt_final_free(gs_rt *rt) {
  free(rt->final);
  rt->final = NULL;
  rt->nready = rt->nfinal = rt->final_cap = 0;
}
