/* gs_rt_roots.c - the root set: locals, statics, interned strings and the
 * runtime's own objects, and the one walk over every root slot that both
 * the collector and the capture use.
 *
 * Roots are slots (addresses of pointers), never copies, so that the
 * collector can update them when it moves their objects. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_reader.h"
#include "gs_rt_int.h"

static int grow(void **items, size_t *cap, size_t need, size_t size) {
  size_t n = *cap ? *cap : 16;
  void *p;
  if (need <= *cap) return GS_OK;
  while (n < need) n *= 2;
  if (!(p = realloc(*items, n * size))) return GS_ENOMEM;
  *items = p;
  *cap = n;
  return GS_OK;
}

/* ---- locals and statics ---- */

size_t gs_rt_frame(const gs_rt *rt) { return rt->nlocals; }

int gs_rt_local(gs_rt *rt, gs_rt_obj **slot, unsigned flags) {
  int err;
  if (!slot || (flags & ~(GS_RT_PINNED | GS_RT_INTERIOR))) return GS_EINVAL;
  if ((err = grow((void **)&rt->locals, &rt->locals_cap, rt->nlocals + 1,
                  sizeof *rt->locals)))
    return err;
  if (flags & GS_RT_INTERIOR) flags |= GS_RT_PINNED;
  rt->locals[rt->nlocals].slot = slot;
  rt->locals[rt->nlocals].flags = flags;
  rt->nlocals++;
  return GS_OK;
}

void gs_rt_unwind(gs_rt *rt, size_t depth) {
  if (depth < rt->nlocals) rt->nlocals = depth;
}

int gs_rt_static(gs_rt *rt, gs_rt_obj **slot, uint32_t declaring_type) {
  int err;
  if (!slot || declaring_type < 1 || declaring_type > rt->ntypes) return GS_EINVAL;
  if ((err = grow((void **)&rt->statics, &rt->statics_cap, rt->nstatics + 1,
                  sizeof *rt->statics)))
    return err;
  rt->statics[rt->nstatics].slot = slot;
  rt->statics[rt->nstatics].container = declaring_type;
  rt->nstatics++;
  return GS_OK;
}

/* ---- interned strings: open addressing keyed by content ---- */

static uint32_t hash_text(const char *s, size_t len) {
  uint32_t h = 2166136261u;   /* FNV-1a */
  size_t i;
  for (i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

static uint32_t hash_string(gs_rt_obj *str) {
  const uint16_t *u = gs_rt_body(str);
  size_t i, len = gs_rt_length(str);
  uint32_t h = 2166136261u;
  for (i = 0; i < len; i++) h = (h ^ (u[i] & 0xffu)) * 16777619u;
  return h;
}

static int same_text(gs_rt_obj *str, const char *s, size_t len) {
  const uint16_t *u = gs_rt_body(str);
  size_t i;
  if (gs_rt_length(str) != len) return 0;
  for (i = 0; i < len; i++)
    if (u[i] != (unsigned char)s[i]) return 0;
  return 1;
}

static int rehash(gs_rt *rt) {
  size_t cap = rt->interned_cap ? rt->interned_cap * 2 : 64, i, j;
  gs_rt_obj **t = calloc(cap, sizeof *t);
  if (!t) return GS_ENOMEM;
  for (i = 0; i < rt->interned_cap; i++) {
    gs_rt_obj *s = rt->interned[i];
    if (!s) continue;
    for (j = hash_string(s) & (cap - 1); t[j]; j = (j + 1) & (cap - 1)) {}
    t[j] = s;
  }
  free(rt->interned);
  rt->interned = t;
  rt->interned_cap = cap;
  return GS_OK;
}

gs_rt_obj *gs_rt_intern(gs_rt *rt, const char *s, size_t len) {
  gs_rt_obj *str;
  size_t j;
  if ((rt->interned_n + 1) * 2 > rt->interned_cap && rehash(rt)) return NULL;
  for (j = hash_text(s, len) & (rt->interned_cap - 1); rt->interned[j];
       j = (j + 1) & (rt->interned_cap - 1))
    if (same_text(rt->interned[j], s, len)) return rt->interned[j];
  if (!(str = gs_rt_new_string(rt, s, len))) return NULL;
  /* The allocation may have collected, which moves strings but keeps their
   * slots: the probe position found above is still free. */
  rt->interned[j] = str;
  rt->interned_n++;
  return str;
}

int gs_rt_interned_each(gs_rt *rt, gs_rt_slot_fn fn, void *ctx) {
  size_t i;
  int err;
  for (i = 0; i < rt->interned_cap; i++)
    if (rt->interned[i] && (err = fn(rt, &rt->interned[i], GS_ROOT_RUNTIME, 0, 0, ctx)))
      return err;
  return GS_OK;
}

/* ---- the runtime's own objects (root kind 0) ---- */

int gs_rt_roots_init(gs_rt *rt) {
  static const char oom_text[] = "Insufficient memory to continue the execution of the program.";
  gs_rt_obj *name = NULL, *msg = NULL;
  size_t top = gs_rt_frame(rt);
  int err;
  if ((err = gs_rt_local(rt, &name, 0)) || (err = gs_rt_local(rt, &msg, 0))) return err;
  err = GS_ENOMEM;
  if (!(name = gs_rt_new_string(rt, rt->domain, strlen(rt->domain)))) goto out;
  if (!(rt->domain_obj = gs_rt_new_object(rt, GS_RT_T_APPDOMAIN))) goto out;
  gs_rt_write(rt, rt->domain_obj,
              &((gs_rt_appdomain_body *)gs_rt_body(rt->domain_obj))->friendly_name, name);
  ((gs_rt_appdomain_body *)gs_rt_body(rt->domain_obj))->id = 1;
  if (!(msg = gs_rt_new_string(rt, oom_text, sizeof oom_text - 1))) goto out;
  if (!(rt->oom_obj = gs_rt_new_object(rt, GS_RT_T_OOM))) goto out;
  gs_rt_write(rt, rt->oom_obj, &((gs_rt_exception_body *)gs_rt_body(rt->oom_obj))->message,
              msg);
  ((gs_rt_exception_body *)gs_rt_body(rt->oom_obj))->hresult = (int32_t)0x8007000Eu;
  err = GS_OK;
out:
  gs_rt_unwind(rt, top);
  return err;
}

void gs_rt_roots_free(gs_rt *rt) {
  free(rt->locals);
  free(rt->statics);
  free(rt->interned);
  rt->locals = NULL;
  rt->statics = NULL;
  rt->interned = NULL;
}

/* ---- every root ---- */

int gs_rt_roots_each(gs_rt *rt, gs_rt_slot_fn fn, void *ctx) {
  size_t i;
  int err;
  if (rt->domain_obj && (err = fn(rt, &rt->domain_obj, GS_ROOT_INTERNAL, 0, 0, ctx)))
    return err;
  if (rt->oom_obj && (err = fn(rt, &rt->oom_obj, GS_ROOT_INTERNAL, 0, 0, ctx))) return err;
  for (i = 0; i < rt->nlocals; i++)
    if (*rt->locals[i].slot &&
        (err = fn(rt, rt->locals[i].slot, GS_ROOT_LOCAL, rt->locals[i].flags, 0, ctx)))
      return err;
  for (i = 0; i < rt->nready; i++)
    if ((err = fn(rt, &rt->final[i], GS_ROOT_FINALIZER, 0, 0, ctx))) return err;
  if ((err = gs_rt_handles_each(rt, fn, ctx))) return err;
  for (i = 0; i < rt->nstatics; i++)
    if (*rt->statics[i].slot && (err = fn(rt, rt->statics[i].slot, GS_ROOT_STATIC, 0,
                                          rt->statics[i].container, ctx)))
      return err;
  return gs_rt_interned_each(rt, fn, ctx);
}
