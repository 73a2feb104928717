/* gs_rt_handles.c - GC handles: strong, weak and pinning references the
 * program holds outside the heap (System.Runtime.InteropServices.GCHandle).
 *
 * A handle is an index + 1 into one table whose free slots form a list, so
 * handles stay valid while the table grows and freed ones are reused. */
#include <stdlib.h>
#include "gs_error.h"
#include "gs_reader.h"
#include "gs_rt_int.h"

static int grow(gs_rt *rt) {
  uint32_t cap = rt->handles_cap ? rt->handles_cap * 2 : 64;
  gs_rt_handle_slot *h;
  if (cap <= rt->handles_cap) return GS_ENOMEM;
  if (!(h = realloc(rt->handles, cap * sizeof *h))) return GS_ENOMEM;
  rt->handles = h;
  rt->handles_cap = cap;
  return GS_OK;
}

static gs_rt_handle_slot *slot_of(const gs_rt *rt, gs_rt_handle h) {
  if (h < 1 || h > rt->nhandles || !rt->handles[h - 1].used) return NULL;
  return &rt->handles[h - 1];
}

int gs_rt_handle_new(gs_rt *rt, gs_rt_obj *o, gs_rt_handle_kind kind, gs_rt_handle *h) {
  uint32_t i;
  int err;
  if (kind != GS_RT_STRONG && kind != GS_RT_WEAK && kind != GS_RT_PINNING) return GS_EINVAL;
  if (rt->handle_free) {
    i = rt->handle_free - 1;
    rt->handle_free = rt->handles[i].next_free;
  } else {
    if (rt->nhandles == rt->handles_cap && (err = grow(rt))) return err;
    i = rt->nhandles++;
  }
  rt->handles[i].obj = o;
  rt->handles[i].kind = (uint8_t)kind;
  rt->handles[i].used = 1;
  rt->handles[i].next_free = 0;
  *h = i + 1;
  return GS_OK;
}

gs_rt_obj *gs_rt_handle_get(const gs_rt *rt, gs_rt_handle h) {
  gs_rt_handle_slot *s = slot_of(rt, h);
  return s ? s->obj : NULL;
}

void gs_rt_handle_set(gs_rt *rt, gs_rt_handle h, gs_rt_obj *o) {
  gs_rt_handle_slot *s = slot_of(rt, h);
  if (s) s->obj = o;
}

void gs_rt_handle_free(gs_rt *rt, gs_rt_handle h) {
  gs_rt_handle_slot *s = slot_of(rt, h);
  if (!s) return;
  s->obj = NULL;
  s->used = 0;
  s->next_free = rt->handle_free;
  rt->handle_free = h;
}

int gs_rt_handles_each(gs_rt *rt, gs_rt_slot_fn fn, void *ctx) {
  static const unsigned flags[] = {0, GS_FLAG_WEAK, GS_FLAG_PINNED};
  uint32_t i;
  int err;
  for (i = 0; i < rt->nhandles; i++) {
    gs_rt_handle_slot *s = &rt->handles[i];
    if (s->used && s->obj &&
        (err = fn(rt, &s->obj, GS_ROOT_HANDLE, flags[s->kind], 0, ctx)))
      return err;
  }
  return GS_OK;
}

/* Short weak handles: cleared before finalization keeps anything alive. */
void gs_rt_handles_clear_weak(gs_rt *rt) {
  uint32_t i;
  for (i = 0; i < rt->nhandles; i++) {
    gs_rt_handle_slot *s = &rt->handles[i];
    if (s->used && s->kind == GS_RT_WEAK && s->obj && gs_rt_condemned(rt, s->obj) &&
        !(s->obj->meta & GS_RT_MARK))
      s->obj = NULL;
  }
}

void gs_rt_handles_free(gs_rt *rt) {
  free(rt->handles);
  rt->handles = NULL;
  rt->nhandles = rt->handles_cap = rt->handle_free = 0;
}
