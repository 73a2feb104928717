/* gs_rt.h - a small garbage-collected heap that a program allocates into.
 *
 * gs_rt is a precise, generational, mark-compact collector over one fixed
 * arena, instrumented so that a heap snapshot can be taken from it (see
 * README.md beside this file for the design).
 *
 * Contract with the program (the "mutator"):
 * - A gs_rt is single-threaded. Every call into it is a safe point: the
 *   program is stopped there, so any allocation may collect.
 * - Collections move objects. A gs_rt_obj pointer the program keeps across a
 *   call that allocates or collects must live in a slot the runtime knows: a
 *   local (gs_rt_local), a static (gs_rt_static), a handle, or a reference
 *   field of a live object. The runtime updates those slots; it cannot update
 *   a copy in a C variable it was not told about.
 * - Reference fields are written with gs_rt_write / gs_rt_set_elem (the
 *   write barrier that makes young collections correct); reading them
 *   directly through gs_rt_body is fine. Reference fields hold NULL or an
 *   object of this runtime.
 * - New objects are zeroed. Every failure is reported: allocations return
 *   NULL, other calls a gs error code (gs_error.h). Nothing aborts.
 * - Memory: the heap lives in the arena and nowhere else; program-sized
 *   tables (types, roots, handles, interned strings, finalization lists)
 *   grow with malloc. A collection allocates nothing and cannot fail. */
#ifndef GS_RT_H
#define GS_RT_H

#include <stddef.h>
#include <stdint.h>

typedef struct gs_rt gs_rt;
typedef struct gs_rt_obj gs_rt_obj;

/* Objects of this size or more go to the large object heap, never move and
 * are collected only by full collections. */
#define GS_RT_LARGE_OBJECT 85000u

/* ---- the runtime ---- */

typedef struct gs_rt_config {
  void *arena;          /* the heap's memory, 8-byte aligned; NULL: reserved once by gs_rt_new */
  size_t arena_bytes;   /* size of the arena (at least 64 KB, at most 32 GB) */
  size_t gen0_budget;   /* bytes allocated between young collections; 0: default */
  size_t gen1_budget;   /* gen1 size from which young collections take gen1 too; 0: default */
  size_t mark_stack;    /* entries of the mark stack (it may overflow; that is only slower); 0: default */
  size_t remembered;    /* entries of the remembered set (overflow forces a full collection); 0: default */
  const char *domain;   /* application domain name; NULL: "gs_rt" */
  int stress;           /* collect at every allocation and poison freed memory (tests) */
} gs_rt_config;

int gs_rt_new(gs_rt **rt, const gs_rt_config *config);
void gs_rt_free(gs_rt *rt);
const char *gs_rt_domain(const gs_rt *rt);

/* ---- types ---- */

/* Built-in types, registered by gs_rt_new. */
enum {
  GS_RT_T_STRING = 1,   /* System.String: UTF-16 units */
  GS_RT_T_BYTES,        /* System.Byte[] */
  GS_RT_T_OBJECTS,      /* System.Object[] */
  GS_RT_T_APPDOMAIN,    /* System.AppDomain: the runtime's own domain object */
  GS_RT_T_OOM,          /* System.OutOfMemoryException, preallocated */
  GS_RT_T_BUILTIN_END
};

typedef enum gs_rt_kind {
  GS_RT_INSTANCE,       /* fixed size; reference fields at the given offsets */
  GS_RT_REF_ARRAY,      /* array of references */
  GS_RT_DATA_ARRAY      /* array of elements without references */
} gs_rt_kind;

#define GS_RT_FINALIZABLE 1u  /* instances are queued for finalization when they die */

typedef struct gs_rt_type_desc {
  const char *name;     /* full type name, e.g. "Contoso.Contacts.Contact" */
  gs_rt_kind kind;
  size_t body;          /* GS_RT_INSTANCE: bytes of fields; GS_RT_DATA_ARRAY: bytes per element */
  const size_t *refs;   /* GS_RT_INSTANCE: offsets in the body of the reference fields, */
  size_t nrefs;         /*   each aligned to sizeof(gs_rt_obj *) */
  unsigned flags;       /* GS_RT_FINALIZABLE */
} gs_rt_type_desc;

/* Registers a type; *id is its type ID (small, dense, never 0). */
int gs_rt_type_new(gs_rt *rt, const gs_rt_type_desc *desc, uint32_t *id);
const char *gs_rt_type_name(const gs_rt *rt, uint32_t id);
uint32_t gs_rt_type_count(const gs_rt *rt);   /* IDs are 1..count */

/* ---- objects ---- */

/* NULL when the heap is full after a full collection (or on a bad type). */
gs_rt_obj *gs_rt_new_object(gs_rt *rt, uint32_t type);
gs_rt_obj *gs_rt_new_array(gs_rt *rt, uint32_t type, size_t length);
/* A System.String holding s (each byte one UTF-16 unit). */
gs_rt_obj *gs_rt_new_string(gs_rt *rt, const char *s, size_t len);

/* Fields of an instance, or the elements of an array. Valid until the next
 * call that allocates or collects. */
void *gs_rt_body(gs_rt_obj *o);
size_t gs_rt_length(const gs_rt_obj *o);      /* arrays: element count */
uint32_t gs_rt_type_of(const gs_rt_obj *o);
size_t gs_rt_size(const gs_rt *rt, const gs_rt_obj *o);
/* The object's identity: assigned at allocation, kept through moves. */
uint64_t gs_rt_id(const gs_rt_obj *o);
/* 0, 1 or 2 (large objects are in generation 2). */
int gs_rt_generation(const gs_rt *rt, const gs_rt_obj *o);

/* Stores v in *field, a reference field of o, through the write barrier. */
void gs_rt_write(gs_rt *rt, gs_rt_obj *o, gs_rt_obj **field, gs_rt_obj *v);
/* Stores v in element i of a reference array; GS_EINVAL when i is out of range. */
int gs_rt_set_elem(gs_rt *rt, gs_rt_obj *array, size_t i, gs_rt_obj *v);
/* Element i of a reference array; NULL when i is out of range. */
gs_rt_obj *gs_rt_elem(gs_rt_obj *array, size_t i);

/* ---- roots ---- */

#define GS_RT_PINNED   1u   /* the object must not move */
#define GS_RT_INTERIOR 4u   /* the program holds a pointer into the object; implies pinned */

/* Locals are a stack of the program's own slots (RPM root kind 1). */
size_t gs_rt_frame(const gs_rt *rt);           /* current depth, for gs_rt_unwind */
int gs_rt_local(gs_rt *rt, gs_rt_obj **slot, unsigned flags);
void gs_rt_unwind(gs_rt *rt, size_t depth);    /* forgets locals above depth */

/* A static variable of declaring_type (root kind 4), kept for the runtime's life. */
int gs_rt_static(gs_rt *rt, gs_rt_obj **slot, uint32_t declaring_type);

/* The one System.String with this text, rooted by the runtime (root kind 5). */
gs_rt_obj *gs_rt_intern(gs_rt *rt, const char *s, size_t len);

/* GC handles (root kind 3). 0 is never a handle. */
typedef uint32_t gs_rt_handle;
typedef enum gs_rt_handle_kind {
  GS_RT_STRONG, GS_RT_WEAK, GS_RT_PINNING
} gs_rt_handle_kind;

int gs_rt_handle_new(gs_rt *rt, gs_rt_obj *o, gs_rt_handle_kind kind, gs_rt_handle *h);
/* A weak handle reads NULL once its target has died. */
gs_rt_obj *gs_rt_handle_get(const gs_rt *rt, gs_rt_handle h);
void gs_rt_handle_set(gs_rt *rt, gs_rt_handle h, gs_rt_obj *o);
void gs_rt_handle_free(gs_rt *rt, gs_rt_handle h);

/* ---- finalization ---- */

/* Instances of GS_RT_FINALIZABLE types that die are kept alive, with all
 * they reference, on the finalizer queue (root kind 2) until the program
 * takes them from it; they die at a later collection. Returns the next one,
 * removed from the queue, or NULL. */
gs_rt_obj *gs_rt_next_finalizable(gs_rt *rt);
/* o will not be queued for finalization (after an explicit Dispose). */
void gs_rt_suppress_finalize(gs_rt *rt, gs_rt_obj *o);

/* ---- collection ---- */

/* Collects generations 0..generation (0, 1 or 2 = full). Cannot fail. */
void gs_rt_collect(gs_rt *rt, int generation);

/* Called once per block of contiguous surviving objects of the collected
 * generations, whether it moved or not: every object that was at
 * old_start + k (k < length) is now at new_start + k. Objects outside the
 * blocks either died or were not in a collected generation (large objects
 * never move). Called during the collection: do not touch the heap. */
typedef void (*gs_rt_moved_fn)(void *ctx, uintptr_t old_start, uintptr_t new_start,
                               size_t length);
void gs_rt_on_moved(gs_rt *rt, gs_rt_moved_fn fn, void *ctx);

typedef struct gs_rt_stats {
  uint64_t collections[3];   /* collections that collected up to generation g */
  uint64_t allocated_objects;
  uint64_t allocated_bytes;
  uint64_t generation_bytes[4];  /* gen 0, 1, 2 and the large object heap */
  uint64_t arena_bytes;
  uint64_t finalizer_queue;  /* objects waiting for the program to finalize them */
} gs_rt_stats;

void gs_rt_get_stats(const gs_rt *rt, gs_rt_stats *st);

/* ---- capture ---- */

typedef struct gs_rt_visitor {
  void *ctx;
  int (*type)(void *ctx, uint32_t id, const char *name, size_t name_len);
  /* refs: the non-NULL reference fields, valid during the call only. */
  int (*object)(void *ctx, uint64_t id, uint32_t type, uint64_t size,
                const uint64_t *refs, size_t nrefs);
  /* container is the declaring type of a static root (kind 4), else 0. */
  int (*root)(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint32_t container);
  /* generation 0, 1, 2, or 3 for the large object heap. */
  int (*generation)(void *ctx, unsigned generation, uint64_t start, uint64_t used,
                    uint64_t reserved);
} gs_rt_visitor;

#define GS_RT_STABLE_IDS 1u   /* object IDs are gs_rt_id(), not addresses */

/* Takes a snapshot at a consistent point: a full collection, then every
 * registered type, every live object (address order), every root and the
 * generation ranges, streamed to v without copying the heap. Any callback
 * may be NULL. Returns GS_OK, the first callback error, or GS_ENOMEM when
 * the buffer for one object's references cannot grow. */
int gs_rt_capture(gs_rt *rt, const gs_rt_visitor *v, unsigned flags);

#endif
