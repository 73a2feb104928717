/* gs_rt_int.h - what the runtime's files share: the object header, the
 * runtime state and the helpers every phase of a collection uses. */
#ifndef GS_RT_INT_H
#define GS_RT_INT_H

#include <stddef.h>
#include <stdint.h>
#include "gs_rt.h"

/* Every object starts with this header; arrays follow it with their length.
 * Type 0 is free space: fwd then holds its size in 8-byte units, and a free
 * block of 8 bytes has only the first word. */
struct gs_rt_obj {
  uint32_t type;
  uint32_t fwd;     /* during a collection: new address, 8-byte units from rt->soh */
  uint64_t meta;    /* identity (low 56 bits) and the GC bits below */
};

typedef struct gs_rt_array {
  gs_rt_obj h;
  uint64_t length;
} gs_rt_array;

#define GS_RT_ID_MASK   ((UINT64_C(1) << 56) - 1)
#define GS_RT_MARK      (UINT64_C(1) << 56)  /* reached in this collection */
#define GS_RT_PIN       (UINT64_C(1) << 57)  /* pinned by a root in this collection */
#define GS_RT_REMEMBER  (UINT64_C(1) << 58)  /* in the remembered set */
#define GS_RT_NOFINAL   (UINT64_C(1) << 59)  /* finalization suppressed */
#define GS_RT_ISARRAY   (UINT64_C(1) << 60)  /* header is a gs_rt_array */

#define GS_RT_ALIGN(n)  (((n) + 7u) & ~(size_t)7u)
#define GS_RT_FREE_MIN  sizeof(gs_rt_obj)    /* smallest free block with a link */

typedef struct gs_rt_type {
  char *name;
  size_t name_len;
  gs_rt_kind kind;
  unsigned flags;
  size_t size;          /* instances: whole size; arrays: header size */
  size_t elem;          /* arrays: bytes per element */
  uint32_t *refs;       /* instances: offsets from the object start */
  size_t nrefs;
} gs_rt_type;

typedef struct gs_rt_local_slot {
  gs_rt_obj **slot;
  unsigned flags;
} gs_rt_local_slot;

typedef struct gs_rt_static_slot {
  gs_rt_obj **slot;
  uint32_t container;
} gs_rt_static_slot;

typedef struct gs_rt_handle_slot {
  gs_rt_obj *obj;
  uint32_t next_free;   /* free slots: index + 1 of the next free one */
  uint8_t kind;         /* gs_rt_handle_kind */
  uint8_t used;
} gs_rt_handle_slot;

struct gs_rt {
  /* The arena: [mark stack | remembered set | SOH -> ... <- LOH]. */
  char *arena;
  size_t arena_bytes;
  int own_arena;
  char *soh;            /* start of the small object heap (gen2, gen1, gen0 in that order) */
  char *gen1, *gen0;    /* generation starts */
  char *alloc;          /* end of gen0, where the next small object goes */
  char *loh;            /* lowest byte of the large object heap, which grows down */
  char *end;            /* end of the arena */
  gs_rt_obj *loh_free;  /* free blocks of the LOH, linked through meta */

  gs_rt_obj **mark_stack;
  size_t mark_cap, mark_n;
  int mark_overflow;
  gs_rt_obj **remset;   /* old objects that may reference younger ones */
  size_t remset_cap, remset_n;
  int remset_overflow;

  /* The collection in progress. */
  int condemned;        /* highest generation collected */
  char *cond_lo, *cond_hi;  /* condemned part of the SOH; the LOH too when full */
  char *new_gen1, *new_gen0;

  gs_rt_type *types;    /* index = type ID; 0 unused */
  uint32_t ntypes, types_cap;

  gs_rt_local_slot *locals;
  size_t nlocals, locals_cap;
  gs_rt_static_slot *statics;
  size_t nstatics, statics_cap;
  gs_rt_handle_slot *handles;
  uint32_t nhandles, handles_cap, handle_free;
  gs_rt_obj **interned; /* open addressing by string content */
  size_t interned_n, interned_cap;
  gs_rt_obj *domain_obj, *oom_obj;  /* runtime-internal roots (kind 0) */

  /* Finalization: final[0..nready) wait for the program (the finalizer
   * queue), final[nready..nfinal) are registered and still alive. */
  gs_rt_obj **final;
  size_t nready, nfinal, final_cap;

  size_t gen0_budget, gen1_budget;
  size_t full_at;       /* old bytes (gen2 + LOH) that trigger a full collection */
  int stress;
  uint64_t next_id;
  gs_rt_stats stats;
  gs_rt_moved_fn moved_fn;
  void *moved_ctx;

  uint64_t *scratch;    /* one object's references during a capture */
  size_t scratch_cap;
  char *domain;
};

/* ---- objects (gs_rt_heap.c) ---- */

static inline size_t gs_rt_obj_size(const gs_rt *rt, const gs_rt_obj *o) {
  const gs_rt_type *t;
  if (o->type == 0) return (size_t)o->fwd * 8u;
  t = &rt->types[o->type];
  if (t->kind == GS_RT_INSTANCE) return t->size;
  return GS_RT_ALIGN(t->size + (size_t)((const gs_rt_array *)o)->length * t->elem);
}

static inline int gs_rt_in_loh(const gs_rt *rt, const void *p) {
  return (const char *)p >= rt->loh;
}

/* Generation of an address under the current boundaries. */
static inline int gs_rt_gen_of(const gs_rt *rt, const void *p) {
  const char *c = p;
  if (c >= rt->loh || c < rt->gen1) return 2;
  return c >= rt->gen0 ? 0 : 1;
}

/* Free blocks of the LOH are linked through meta. */
static inline gs_rt_obj *gs_rt_free_next(const gs_rt_obj *b) {
  return (gs_rt_obj *)(uintptr_t)b->meta;
}

static inline void gs_rt_free_link(gs_rt_obj *b, const gs_rt_obj *next) {
  b->meta = (uint64_t)(uintptr_t)next;
}

/* Writes a free block of bytes (a multiple of 8) at p. */
void gs_rt_heap_free_block(void *p, size_t bytes);
/* Adds o to the remembered set unless it is there (overflow is recorded). */
void gs_rt_remember(gs_rt *rt, gs_rt_obj *o);
/* Old bytes: gen2 plus the large object heap. */
size_t gs_rt_old_bytes(const gs_rt *rt);

/* Reference slots of an object: offsets from its start, or a run of slots. */
typedef struct gs_rt_refs {
  char *base;
  const uint32_t *offs;   /* NULL: slots are run[0..n) */
  gs_rt_obj **run;
  size_t n;
} gs_rt_refs;

static inline void gs_rt_refs_of(const gs_rt *rt, gs_rt_obj *o, gs_rt_refs *r) {
  const gs_rt_type *t = &rt->types[o->type];
  r->base = (char *)o;
  r->offs = NULL;
  r->run = NULL;
  r->n = 0;
  if (t->kind == GS_RT_INSTANCE) {
    r->offs = t->refs;
    r->n = t->nrefs;
  } else if (t->kind == GS_RT_REF_ARRAY) {
    r->run = (gs_rt_obj **)((char *)o + t->size);
    r->n = (size_t)((gs_rt_array *)o)->length;
  }
}

static inline gs_rt_obj **gs_rt_ref_slot(const gs_rt_refs *r, size_t i) {
  return r->offs ? (gs_rt_obj **)(r->base + r->offs[i]) : r->run + i;
}

/* ---- types (gs_rt_types.c) ---- */

/* Bodies of the runtime's own objects (System.AppDomain and the
 * preallocated System.OutOfMemoryException). */
typedef struct gs_rt_appdomain_body {
  gs_rt_obj *friendly_name;
  int32_t id;
} gs_rt_appdomain_body;

typedef struct gs_rt_exception_body {
  gs_rt_obj *message;
  gs_rt_obj *inner;
  gs_rt_obj *stack_trace;
  int32_t hresult;
} gs_rt_exception_body;

int gs_rt_types_init(gs_rt *rt);
/* Creates the runtime's own objects (root kind 0). */
int gs_rt_roots_init(gs_rt *rt);
void gs_rt_types_free(gs_rt *rt);

/* ---- roots (gs_rt_roots.c, gs_rt_handles.c, gs_rt_finalize.c) ---- */

/* Visits every root slot, weak ones included; stops at a nonzero return. */
typedef int (*gs_rt_slot_fn)(gs_rt *rt, gs_rt_obj **slot, unsigned kind, unsigned flags,
                             uint32_t container, void *ctx);
int gs_rt_roots_each(gs_rt *rt, gs_rt_slot_fn fn, void *ctx);
int gs_rt_handles_each(gs_rt *rt, gs_rt_slot_fn fn, void *ctx);
int gs_rt_interned_each(gs_rt *rt, gs_rt_slot_fn fn, void *ctx);
void gs_rt_roots_free(gs_rt *rt);
void gs_rt_handles_free(gs_rt *rt);
/* Clears weak handles whose target is condemned and unmarked. */
void gs_rt_handles_clear_weak(gs_rt *rt);

int gs_rt_final_register(gs_rt *rt, gs_rt_obj *o);
/* Moves condemned, unmarked registered objects to the finalizer queue and
 * pushes them for marking; drops suppressed ones. */
void gs_rt_final_scan(gs_rt *rt);
/* Registered (not yet queued) objects, for the update pass. */
void gs_rt_final_each_registered(gs_rt *rt, void (*fn)(gs_rt *rt, gs_rt_obj **slot));
void gs_rt_final_free(gs_rt *rt);

/* ---- collection (gs_rt_gc.c) ---- */

int gs_rt_condemned(const gs_rt *rt, const gs_rt_obj *o);
/* Marks o if it is condemned and unmarked, and queues it for scanning. */
void gs_rt_mark(gs_rt *rt, gs_rt_obj *o);
/* Scans queued objects until none is left. */
void gs_rt_drain(gs_rt *rt);
/* Collection policy: which generation to collect now. */
int gs_rt_gc_pick(const gs_rt *rt);

#endif
