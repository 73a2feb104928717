/* gs_rt_gc.c - the collector: mark, then slide the survivors of the
 * collected generations down (Lisp 2 compaction in three linear passes).
 *
 * A collection of generation g condemns gen0..g of the small object heap,
 * which is the address range [start of gen g, end of gen0), and for g = 2
 * the large object heap too. It runs in phases:
 *   1. mark from the roots and, for a young collection, from the remembered
 *      set (old objects that may reference condemned ones);
 *   2. clear weak handles to unmarked objects; queue unmarked finalizable
 *      objects for finalization and mark from them;
 *   3. plan: give every marked object its new address, the next free byte,
 *      or its own address if it is pinned;
 *   4. update every reference to a condemned object, rebuilding the
 *      remembered set as it goes;
 *   5. relocate in address order, reporting moved blocks, and turn the gaps
 *      left before pinned objects into free blocks;
 *   6. full collections sweep the large object heap into a free list.
 * Survivors of gen1 join gen2 and survivors of gen0 become gen1 simply by
 * moving the generation boundaries: the ephemeral segment stays ordered
 * gen2, gen1, gen0 by address. Nothing here allocates, so nothing fails. */
#include <string.h>
#include "gs_reader.h"
#include "gs_rt_int.h"

int gs_rt_condemned(const gs_rt *rt, const gs_rt_obj *o) {
  const char *c = (const char *)o;
  if (c >= rt->cond_lo && c < rt->cond_hi) return 1;
  return rt->condemned == 2 && c >= rt->loh;
}

static int in_soh_condemned(const gs_rt *rt, const gs_rt_obj *o) {
  return (const char *)o >= rt->cond_lo && (const char *)o < rt->cond_hi;
}

static int is_live(const gs_rt_obj *o) { return o->type && (o->meta & GS_RT_MARK); }

static gs_rt_obj *forward(const gs_rt *rt, const gs_rt_obj *o) {
  return (gs_rt_obj *)(rt->soh + (size_t)o->fwd * 8u);
}

/* ---- 1, 2: mark ---- */

void gs_rt_mark(gs_rt *rt, gs_rt_obj *o) {
  if (!o || (o->meta & GS_RT_MARK) || !gs_rt_condemned(rt, o)) return;
  o->meta |= GS_RT_MARK;
  if (rt->types[o->type].kind == GS_RT_DATA_ARRAY) return;   /* nothing to scan */
  if (rt->mark_n < rt->mark_cap)
    rt->mark_stack[rt->mark_n++] = o;
  else
    rt->mark_overflow = 1;   /* marked but not scanned: found again by rescan() */
}

static void scan(gs_rt *rt, gs_rt_obj *o) {
  gs_rt_refs r;
  size_t i;
  gs_rt_refs_of(rt, o, &r);
  for (i = 0; i < r.n; i++) gs_rt_mark(rt, *gs_rt_ref_slot(&r, i));
}

static void drain_stack(gs_rt *rt) {
  while (rt->mark_n) scan(rt, rt->mark_stack[--rt->mark_n]);
}

static void rescan_range(gs_rt *rt, char *p, char *end) {
  while (p < end) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    p += gs_rt_obj_size(rt, o);
    if (is_live(o)) {
      scan(rt, o);
      drain_stack(rt);
    }
  }
}

/* After the stack overflowed some marked objects were never scanned;
 * scanning every marked object again finds their children. */
static void rescan(gs_rt *rt) {
  rescan_range(rt, rt->cond_lo, rt->cond_hi);
  if (rt->condemned == 2) rescan_range(rt, rt->loh, rt->end);
}

void gs_rt_drain(gs_rt *rt) {
  for (;;) {
    drain_stack(rt);
    if (!rt->mark_overflow) return;
    rt->mark_overflow = 0;
    rescan(rt);
  }
}

static int mark_root(gs_rt *rt, gs_rt_obj **slot, unsigned kind, unsigned flags,
                     uint32_t container, void *ctx) {
  gs_rt_obj *o = *slot;
  (void)kind, (void)container, (void)ctx;
  if (flags & GS_FLAG_WEAK) return 0;
  if ((flags & GS_FLAG_PINNED) && in_soh_condemned(rt, o)) o->meta |= GS_RT_PIN;
  gs_rt_mark(rt, o);
  return 0;
}

/* Keeps the remembered objects outside the condemned range (they are the
 * extra roots of a young collection); all are judged again in update(). */
static void remset_begin(gs_rt *rt) {
  size_t i, n = 0;
  for (i = 0; i < rt->remset_n; i++) {
    gs_rt_obj *o = rt->remset[i];
    o->meta &= ~GS_RT_REMEMBER;
    if (rt->condemned < 2 && !gs_rt_condemned(rt, o)) rt->remset[n++] = o;
  }
  rt->remset_n = n;
  rt->remset_overflow = 0;
}

static void mark_all(gs_rt *rt) {
  size_t i;
  gs_rt_roots_each(rt, mark_root, NULL);
  for (i = 0; i < rt->remset_n; i++) scan(rt, rt->remset[i]);
  gs_rt_drain(rt);
  gs_rt_handles_clear_weak(rt);
  gs_rt_final_scan(rt);
}

/* ---- 3: plan ---- */

static void plan(gs_rt *rt) {
  char *p = rt->cond_lo, *dest = rt->cond_lo, *old_gen0 = rt->gen0;
  int crossed = rt->condemned == 0;   /* gen1 keeps its start */
  rt->new_gen1 = rt->gen1;
  while (p < rt->cond_hi) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    size_t size = gs_rt_obj_size(rt, o);
    if (!crossed && p >= old_gen0) {
      rt->new_gen1 = dest;            /* what survived above this joins gen2 */
      crossed = 1;
    }
    if (is_live(o)) {
      char *to = (o->meta & GS_RT_PIN) ? p : dest;
      o->fwd = (uint32_t)((size_t)(to - rt->soh) / 8u);
      dest = to + size;
    }
    p += size;
  }
  if (!crossed) rt->new_gen1 = dest;
  rt->new_gen0 = dest;                /* gen0 starts empty */
}

/* ---- 4: update references ---- */

static void update_slot(gs_rt *rt, gs_rt_obj **slot) {
  if (*slot && in_soh_condemned(rt, *slot)) *slot = forward(rt, *slot);
}

static int update_root(gs_rt *rt, gs_rt_obj **slot, unsigned kind, unsigned flags,
                       uint32_t container, void *ctx) {
  (void)kind, (void)flags, (void)container, (void)ctx;
  update_slot(rt, slot);
  return 0;
}

/* Updates o's fields in place; returns 1 if one now references gen1, the
 * only young generation after a collection. */
static int update_fields(gs_rt *rt, gs_rt_obj *o) {
  gs_rt_refs r;
  size_t i;
  int young = 0;
  gs_rt_refs_of(rt, o, &r);
  for (i = 0; i < r.n; i++) {
    gs_rt_obj **slot = gs_rt_ref_slot(&r, i), *t;
    update_slot(rt, slot);
    t = *slot;
    if (t && (char *)t >= rt->new_gen1 && (char *)t < rt->new_gen0) young = 1;
  }
  return young;
}

/* o is still at its old address; the set must name where it will be. */
static void remember_at(gs_rt *rt, gs_rt_obj *o, gs_rt_obj *to) {
  if (rt->remset_n == rt->remset_cap) {
    rt->remset_overflow = 1;
    return;
  }
  o->meta |= GS_RT_REMEMBER;
  rt->remset[rt->remset_n++] = to;
}

static int old_after(const gs_rt *rt, const gs_rt_obj *where) {
  return (const char *)where < rt->new_gen1 || gs_rt_in_loh(rt, where);
}

static void update(gs_rt *rt) {
  size_t i, n = rt->remset_n;
  char *p;
  gs_rt_roots_each(rt, update_root, NULL);
  gs_rt_final_each_registered(rt, update_slot);
  rt->remset_n = 0;
  for (i = 0; i < n; i++) {           /* remembered objects outside the condemned range */
    gs_rt_obj *o = rt->remset[i];
    if (update_fields(rt, o) && old_after(rt, o)) remember_at(rt, o, o);
  }
  for (p = rt->cond_lo; p < rt->cond_hi;) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    p += gs_rt_obj_size(rt, o);
    if (is_live(o) && update_fields(rt, o) && old_after(rt, forward(rt, o)))
      remember_at(rt, o, forward(rt, o));
  }
  if (rt->condemned < 2) return;
  for (p = rt->loh; p < rt->end;) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    p += gs_rt_obj_size(rt, o);
    if (is_live(o) && update_fields(rt, o)) remember_at(rt, o, o);
  }
}

/* ---- 5: relocate ---- */

typedef struct moved_block {
  char *from, *to;
  size_t len;
} moved_block;

static void report(gs_rt *rt, moved_block *b) {
  if (b->len && rt->moved_fn)
    rt->moved_fn(rt->moved_ctx, (uintptr_t)b->from, (uintptr_t)b->to, b->len);
  b->len = 0;
}

static void moved(gs_rt *rt, moved_block *b, char *from, char *to, size_t len) {
  if (b->len && b->from + b->len == from && b->to + b->len == to) {
    b->len += len;
    return;
  }
  report(rt, b);
  b->from = from;
  b->to = to;
  b->len = len;
}

/* Moving in address order never overwrites an object not yet visited:
 * every destination is at or below its source. */
static void relocate(gs_rt *rt) {
  char *p = rt->cond_lo, *dest = rt->cond_lo;
  moved_block b = {NULL, NULL, 0};
  while (p < rt->cond_hi) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    size_t size = gs_rt_obj_size(rt, o);
    if (is_live(o)) {
      char *to = rt->soh + (size_t)o->fwd * 8u;
      if (to != dest) gs_rt_heap_free_block(dest, (size_t)(to - dest));  /* before a pinned one */
      if (to != p) memmove(to, p, size);
      o = (gs_rt_obj *)to;
      o->fwd = 0;
      o->meta &= ~(GS_RT_MARK | GS_RT_PIN);
      moved(rt, &b, p, to, size);
      dest = to + size;
    }
    p += size;
  }
  report(rt, &b);
  if (rt->stress) memset(dest, 0xAB, (size_t)(rt->cond_hi - dest));
}

/* ---- 6: sweep the large object heap ---- */

/* Makes [start, end) one free block at the end of the list after *last. */
static void free_run(gs_rt *rt, char *start, char *end, gs_rt_obj **last) {
  size_t bytes = (size_t)(end - start);
  if (start == rt->loh) {             /* the lowest blocks go back to the shared gap */
    rt->loh = end;
    return;
  }
  gs_rt_heap_free_block(start, bytes);
  if (bytes < GS_RT_FREE_MIN) return;
  if (*last)
    gs_rt_free_link(*last, (gs_rt_obj *)start);
  else
    rt->loh_free = (gs_rt_obj *)start;
  *last = (gs_rt_obj *)start;
}

static void sweep_loh(gs_rt *rt) {
  char *p = rt->loh, *run = NULL;
  gs_rt_obj *last = NULL;
  rt->loh_free = NULL;
  while (p < rt->end) {
    gs_rt_obj *o = (gs_rt_obj *)p;
    size_t size = gs_rt_obj_size(rt, o);
    if (is_live(o)) {
      o->meta &= ~(GS_RT_MARK | GS_RT_PIN);
      if (run) free_run(rt, run, p, &last);
      run = NULL;
    } else if (!run) {
      run = p;
    }
    p += size;
  }
  if (run) free_run(rt, run, rt->end, &last);
}

/* ---- the collection ---- */

int gs_rt_gc_pick(const gs_rt *rt) {
  if (rt->stress) return (int)(rt->stats.allocated_objects % 3u);
  if (rt->remset_overflow || gs_rt_old_bytes(rt) > rt->full_at) return 2;
  return (size_t)(rt->gen0 - rt->gen1) >= rt->gen1_budget ? 1 : 0;
}

void gs_rt_collect(gs_rt *rt, int gen) {
  size_t old;
  if (gen < 0) gen = 0;
  if (gen > 2 || rt->remset_overflow) gen = 2;
  rt->condemned = gen;
  rt->cond_lo = gen == 0 ? rt->gen0 : gen == 1 ? rt->gen1 : rt->soh;
  rt->cond_hi = rt->alloc;
  remset_begin(rt);
  mark_all(rt);
  plan(rt);
  update(rt);
  relocate(rt);
  if (gen == 2) sweep_loh(rt);
  rt->gen1 = rt->new_gen1;
  rt->gen0 = rt->alloc = rt->new_gen0;
  rt->condemned = -1;
  rt->cond_lo = rt->cond_hi = NULL;
  rt->stats.collections[gen]++;
  if (gen == 2) {
    old = gs_rt_old_bytes(rt);
    rt->full_at = old + (old > 8 * rt->gen0_budget ? old : 8 * rt->gen0_budget);
  }
}

void gs_rt_on_moved(gs_rt *rt, gs_rt_moved_fn fn, void *ctx) {
  rt->moved_fn = fn;
  rt->moved_ctx = ctx;
}
