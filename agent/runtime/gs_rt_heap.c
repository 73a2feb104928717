/* gs_rt_heap.c - the arena, its two segments, and allocation.
 *
 * The arena is carved once: the mark stack and the remembered set first,
 * then the small object heap (SOH) growing up from the bottom and the large
 * object heap (LOH) growing down from the top, so that the two share the
 * free space between them. The SOH is one ephemeral segment ordered gen2,
 * gen1, gen0; a small allocation bumps the end of gen0. Large objects are
 * placed first-fit in the LOH's free blocks, else below its lowest one. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_rt_int.h"

#define ARENA_MIN    ((size_t)64 << 10)
#define ARENA_MAX    ((uint64_t)32 << 30)   /* fwd addresses 2^32 units of 8 bytes */
#define GEN0_MIN     ((size_t)4 << 10)
#define GEN0_MAX     ((size_t)4 << 20)

void gs_rt_heap_free_block(void *p, size_t bytes) {
  gs_rt_obj *o = p;
  o->type = 0;
  o->fwd = (uint32_t)(bytes / 8u);
  if (bytes >= GS_RT_FREE_MIN) o->meta = 0;
}

size_t gs_rt_old_bytes(const gs_rt *rt) {
  return (size_t)(rt->gen1 - rt->soh) + (size_t)(rt->end - rt->loh);
}

void gs_rt_remember(gs_rt *rt, gs_rt_obj *o) {
  if (o->meta & GS_RT_REMEMBER) return;
  if (rt->remset_n == rt->remset_cap) {
    rt->remset_overflow = 1;   /* the next collection is a full one */
    return;
  }
  o->meta |= GS_RT_REMEMBER;
  rt->remset[rt->remset_n++] = o;
}

/* ---- setup ---- */

static size_t pick(size_t asked, size_t dflt) { return asked ? asked : dflt; }

static int layout(gs_rt *rt, const gs_rt_config *c) {
  size_t bytes = rt->arena_bytes, meta;
  char *a = (char *)GS_RT_ALIGN((uintptr_t)rt->arena);
  rt->mark_cap = pick(c->mark_stack, bytes / 512 > 256 ? bytes / 512 : 256);
  rt->remset_cap = pick(c->remembered, bytes / 1024 > 128 ? bytes / 1024 : 128);
  meta = (rt->mark_cap + rt->remset_cap) * sizeof(gs_rt_obj *);
  if (meta > bytes / 2) return GS_EINVAL;
  rt->mark_stack = (gs_rt_obj **)a;
  rt->remset = rt->mark_stack + rt->mark_cap;
  rt->soh = (char *)GS_RT_ALIGN((uintptr_t)(rt->remset + rt->remset_cap));
  rt->end = (char *)((uintptr_t)(rt->arena + bytes) & ~(uintptr_t)7u);
  rt->gen1 = rt->gen0 = rt->alloc = rt->soh;
  rt->loh = rt->end;
  return GS_OK;
}

static void budgets(gs_rt *rt, const gs_rt_config *c) {
  size_t g0 = rt->arena_bytes / 16;
  g0 = g0 < GEN0_MIN ? GEN0_MIN : g0 > GEN0_MAX ? GEN0_MAX : g0;
  rt->gen0_budget = pick(c->gen0_budget, g0);
  rt->gen1_budget = pick(c->gen1_budget, 2 * rt->gen0_budget);
  rt->full_at = 8 * rt->gen0_budget;
}

static int set_domain(gs_rt *rt, const char *name) {
  size_t len;
  if (!name) name = "gs_rt";
  len = strlen(name);
  if (!(rt->domain = malloc(len + 1))) return GS_ENOMEM;
  memcpy(rt->domain, name, len + 1);
  return GS_OK;
}

/* A 32-bit size_t cannot exceed ARENA_MAX, and comparing it would warn. */
static int arena_size_ok(size_t bytes) {
  if (bytes < ARENA_MIN) return 0;
#if SIZE_MAX > 0xffffffffu
  if ((uint64_t)bytes > ARENA_MAX) return 0;
#endif
  return 1;
}

int gs_rt_new(gs_rt **out, const gs_rt_config *c) {
  gs_rt *rt;
  int err;
  *out = NULL;
  if (!c || !arena_size_ok(c->arena_bytes)) return GS_EINVAL;
  if (!(rt = calloc(1, sizeof *rt))) return GS_ENOMEM;
  rt->arena_bytes = c->arena_bytes;
  rt->arena = c->arena;
  if (!rt->arena) {
    if (!(rt->arena = gs_port_alloc_table(c->arena_bytes))) {
      free(rt);
      return GS_ENOMEM;
    }
    rt->own_arena = 1;
  }
  rt->stress = c->stress;
  rt->condemned = -1;
  rt->next_id = 1;
  budgets(rt, c);
  if ((err = layout(rt, c)) || (err = set_domain(rt, c->domain)) ||
      (err = gs_rt_types_init(rt)) || (err = gs_rt_roots_init(rt))) {
    gs_rt_free(rt);
    return err;
  }
  *out = rt;
  return GS_OK;
}

void gs_rt_free(gs_rt *rt) {
  if (!rt) return;
  gs_rt_roots_free(rt);
  gs_rt_handles_free(rt);
  gs_rt_final_free(rt);
  gs_rt_types_free(rt);
  free(rt->scratch);
  free(rt->domain);
  if (rt->own_arena) gs_port_free_table(rt->arena, rt->arena_bytes);
  free(rt);
}

const char *gs_rt_domain(const gs_rt *rt) { return rt->domain; }

/* ---- allocation ---- */

static int soh_fits(const gs_rt *rt, size_t size) {
  return (size_t)(rt->loh - rt->alloc) >= size;
}

static char *soh_alloc(gs_rt *rt, size_t size) {
  char *p;
  if (rt->stress || !soh_fits(rt, size) ||
      (size_t)(rt->alloc - rt->gen0) + size > rt->gen0_budget) {
    gs_rt_collect(rt, gs_rt_gc_pick(rt));
    if (!soh_fits(rt, size)) gs_rt_collect(rt, 2);
    if (!soh_fits(rt, size)) return NULL;
  }
  p = rt->alloc;
  rt->alloc += size;
  return p;
}

/* First fit among the free blocks, carved from a block's top so that the
 * block itself stays in the list; else below the lowest LOH object. */
static char *loh_take(gs_rt *rt, size_t size) {
  gs_rt_obj *prev = NULL, *b;
  for (b = rt->loh_free; b; prev = b, b = gs_rt_free_next(b)) {
    size_t have = (size_t)b->fwd * 8u, rest;
    if (have < size) continue;
    rest = have - size;
    if (rest >= GS_RT_FREE_MIN) {
      b->fwd = (uint32_t)(rest / 8u);
    } else {
      if (prev)
        gs_rt_free_link(prev, gs_rt_free_next(b));
      else
        rt->loh_free = gs_rt_free_next(b);
      if (rest) gs_rt_heap_free_block(b, rest);
    }
    return (char *)b + rest;
  }
  if ((size_t)(rt->loh - rt->alloc) < size) return NULL;
  rt->loh -= size;
  return rt->loh;
}

static char *loh_alloc(gs_rt *rt, size_t size) {
  char *p;
  int collected = 0;
  if (rt->stress || gs_rt_old_bytes(rt) + size > rt->full_at) {
    gs_rt_collect(rt, 2);
    collected = 1;
  }
  if (!(p = loh_take(rt, size)) && !collected) {
    gs_rt_collect(rt, 2);
    p = loh_take(rt, size);
  }
  return p;
}

static gs_rt_obj *alloc_object(gs_rt *rt, uint32_t type, size_t size, uint64_t bits) {
  char *p = size >= GS_RT_LARGE_OBJECT ? loh_alloc(rt, size) : soh_alloc(rt, size);
  gs_rt_obj *o = (gs_rt_obj *)p;
  if (!p) return NULL;
  memset(p, 0, size);
  o->type = type;
  o->meta = (rt->next_id++ & GS_RT_ID_MASK) | bits;
  rt->stats.allocated_objects++;
  rt->stats.allocated_bytes += size;
  if ((rt->types[type].flags & GS_RT_FINALIZABLE) && gs_rt_final_register(rt, o))
    return NULL;   /* unreachable, it is collected like any garbage */
  return o;
}

gs_rt_obj *gs_rt_new_object(gs_rt *rt, uint32_t type) {
  if (type < 1 || type > rt->ntypes || rt->types[type].kind != GS_RT_INSTANCE) return NULL;
  return alloc_object(rt, type, rt->types[type].size, 0);
}

gs_rt_obj *gs_rt_new_array(gs_rt *rt, uint32_t type, size_t length) {
  const gs_rt_type *t;
  gs_rt_obj *o;
  if (type < 1 || type > rt->ntypes) return NULL;
  t = &rt->types[type];
  if (t->kind == GS_RT_INSTANCE || length > rt->arena_bytes / t->elem) return NULL;
  o = alloc_object(rt, type, GS_RT_ALIGN(t->size + length * t->elem), GS_RT_ISARRAY);
  if (o) ((gs_rt_array *)o)->length = length;
  return o;
}

gs_rt_obj *gs_rt_new_string(gs_rt *rt, const char *s, size_t len) {
  gs_rt_obj *o = gs_rt_new_array(rt, GS_RT_T_STRING, len);
  uint16_t *u;
  size_t i;
  if (!o) return NULL;
  u = gs_rt_body(o);
  for (i = 0; i < len; i++) u[i] = (unsigned char)s[i];
  return o;
}

/* ---- access ---- */

void *gs_rt_body(gs_rt_obj *o) {
  return (char *)o + (o->meta & GS_RT_ISARRAY ? sizeof(gs_rt_array) : sizeof(gs_rt_obj));
}

size_t gs_rt_length(const gs_rt_obj *o) {
  return o->meta & GS_RT_ISARRAY ? (size_t)((const gs_rt_array *)o)->length : 0;
}

uint32_t gs_rt_type_of(const gs_rt_obj *o) { return o->type; }
size_t gs_rt_size(const gs_rt *rt, const gs_rt_obj *o) { return gs_rt_obj_size(rt, o); }
uint64_t gs_rt_id(const gs_rt_obj *o) { return o->meta & GS_RT_ID_MASK; }
int gs_rt_generation(const gs_rt *rt, const gs_rt_obj *o) { return gs_rt_gen_of(rt, o); }

/* The write barrier: an older object that now references a younger one is
 * remembered, so that a young collection finds the reference without
 * scanning the old generations. */
void gs_rt_write(gs_rt *rt, gs_rt_obj *o, gs_rt_obj **field, gs_rt_obj *v) {
  *field = v;
  if (v && !(o->meta & GS_RT_REMEMBER) && gs_rt_gen_of(rt, o) > gs_rt_gen_of(rt, v))
    gs_rt_remember(rt, o);
}

int gs_rt_set_elem(gs_rt *rt, gs_rt_obj *a, size_t i, gs_rt_obj *v) {
  if (rt->types[a->type].kind != GS_RT_REF_ARRAY || i >= gs_rt_length(a)) return GS_EINVAL;
  gs_rt_write(rt, a, (gs_rt_obj **)gs_rt_body(a) + i, v);
  return GS_OK;
}

gs_rt_obj *gs_rt_elem(gs_rt_obj *a, size_t i) {
  return i < gs_rt_length(a) ? ((gs_rt_obj **)gs_rt_body(a))[i] : NULL;
}

void gs_rt_get_stats(const gs_rt *rt, gs_rt_stats *st) {
  *st = rt->stats;
  st->generation_bytes[0] = (uint64_t)(rt->alloc - rt->gen0);
  st->generation_bytes[1] = (uint64_t)(rt->gen0 - rt->gen1);
  st->generation_bytes[2] = (uint64_t)(rt->gen1 - rt->soh);
  st->generation_bytes[3] = (uint64_t)(rt->end - rt->loh);
  st->arena_bytes = rt->arena_bytes;
  st->finalizer_queue = rt->nready;
}
