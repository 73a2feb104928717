/* gs_mono.h - the parts of the gcsnap profiler module for Mono, shared
 * between its files (not a public interface).
 *
 * gs_mono_mem.c  memory that is safe to take while the world is stopped:
 *                growable arrays and hash maps on mmap, never malloc
 * gs_mono_snap.c the capture: an induced full collection, the heap walk,
 *                roots and GC handles in the pause; stable identities
 *                after it
 * gs_mono_emit.c the snapshot written to the agent as text lines, after
 *                the world restarted (type names, I/O)
 * gs_mono_prof.c the module's entry point, options, runtime callbacks and
 *                the socket the agent talks to */
#ifndef GS_MONO_H
#define GS_MONO_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <mono/metadata/class.h>
#include <mono/metadata/mono-gc.h>
#include <mono/metadata/object.h>

/* ---- gs_mono_mem.c ---- */

/* A growable array of fixed-size elements in anonymous mappings. */
typedef struct gsm_vec {
  unsigned char *p;
  size_t len, cap, elem;  /* elements used, elements mapped, bytes each */
  size_t touched;         /* bytes written at most: the memory it costs */
} gsm_vec;

/* Room for n more elements: a pointer to the first, or NULL when the
 * system refuses the memory. The array may move. */
void *gsm_vec_push(gsm_vec *v, size_t n);
void gsm_vec_free(gsm_vec *v);

/* An open-addressing map from nonzero 64-bit keys to 32-bit values, 12
 * bytes a slot, at most 3/4 full. The key's bits in tags are the caller's
 * (a key is compared and hashed without them) and travel with the entry.
 * It grows only in gsm_map_put_grow and gsm_map_reserve, never in put, so
 * a caller that must not map memory (the pause) can size it first and
 * insert without growing. */
typedef struct gsm_slot {
  uint32_t lo, hi;        /* the key with its tags; 0: empty */
  uint32_t value;
} gsm_slot;

typedef struct gsm_map {
  gsm_slot *slots;
  size_t n, count;        /* slots, keys held */
  uint64_t tags;          /* key bits that are not the key */
} gsm_map;

static inline uint64_t gsm_slot_key(const gsm_slot *s) { return (uint64_t)s->hi << 32 | s->lo; }

int gsm_map_init(gsm_map *m, size_t keys);     /* room for keys at half load; 0 or -1 */
void gsm_map_free(gsm_map *m);
/* Room for keys in all without growing, by a table half as large again
 * when it lacks: 0 or -1. */
int gsm_map_reserve(gsm_map *m, size_t keys);
size_t gsm_map_bytes(const gsm_map *m);
uint32_t gsm_map_get(const gsm_map *m, uint64_t key);   /* 0: absent */
gsm_slot *gsm_map_find(const gsm_map *m, uint64_t key); /* its slot, in place; NULL */
/* Starts loading key's slot into the cache: lookups in a row hide misses. */
void gsm_map_prefetch(const gsm_map *m, uint64_t key);
/* key may carry tags; needs room. */
void gsm_map_put(gsm_map *m, uint64_t key, uint32_t value);
int gsm_map_put_grow(gsm_map *m, uint64_t key, uint32_t value);  /* 0 or -1 */
/* Removes key: 1 and its entry in *out, or 0 when absent. */
int gsm_map_del(gsm_map *m, uint64_t key, gsm_slot *out);
/* Deletes the keys that lack the tag bit keep, and clears it in the rest. */
void gsm_map_sweep(gsm_map *m, uint64_t keep);

/* Bytes in use now and at most since the last reset: the pages the arrays
 * wrote (mapped pages never written cost nothing) and the maps' tables. */
size_t gsm_mem_peak(void);
void gsm_mem_reset_peak(void);

/* Microseconds of a monotonic clock (no lock, safe in the pause). */
uint64_t gsm_now_us(void);

/* ---- gs_mono_snap.c ---- */

/* 12 bytes an object and 4 a reference. An object's references follow
 * those of the object before it in refs, the last one's bit set in last
 * (a bit a reference). An ID or a reference is a packed address (the bit
 * GSM_PACKED set), a stable identity, or 0 (null). */
typedef struct gsm_obj {
  uint32_t id;
  uint32_t type;          /* gsm_class_index; its AppDomain's index above GSM_CLASS_BITS */
  uint32_t size;          /* bytes, GSM_HAS_REFS when it has references */
} gsm_obj;

#define GSM_CLASS_BITS 24
#define GSM_CLASS_MASK ((1u << GSM_CLASS_BITS) - 1)
#define GSM_DOMAINS_MAX 256u    /* AppDomains of one capture: their index fits 8 bits */
static inline uint32_t gsm_obj_class(const gsm_obj *o) { return o->type & GSM_CLASS_MASK; }
static inline unsigned gsm_obj_domain(const gsm_obj *o) { return o->type >> GSM_CLASS_BITS; }

#define GSM_HAS_REFS 0x80000000u
#define GSM_SIZE_MAX 0x7fffffffu
#define GSM_PACKED   0x80000000u

/* The address a packed ID of the last capture stands for. */
uint64_t gsm_unpack(uint32_t packed);

typedef struct gsm_root {
  uint64_t id;
  uint32_t container;     /* static roots: the declaring type's index, else 0 */
  uint16_t kind, flags;
} gsm_root;

/* One capture's result, valid until gsm_snap_release. */
typedef struct gsm_snap {
  gsm_vec objs, refs, last, roots;
  int32_t domain_ids[GSM_DOMAINS_MAX];   /* Mono's IDs of the AppDomains met, by index:
                                          * the root domain first */
  unsigned ndomains;
  uint64_t pause_us, mem_bytes;
  uint64_t ids_bytes;     /* the identity map kept between captures */
  char error[160];        /* nonempty: the capture failed */
} gsm_snap;

/* A class's index, from 1, the same for the life of the process; the
 * pause may ask (mappings only). 0: out of memory. */
uint32_t gsm_class_index(MonoClass *k);
MonoClass *gsm_class_at(uint32_t index);
uint32_t gsm_class_count(void);

/* Installs the runtime callbacks; stable: track objects across moves. */
void gsm_snap_install(void *handle, int stable);
/* Runs a capture from a thread attached to the runtime. stable_ids: the
 * snapshot's IDs are identities (needs stable at install). */
void gsm_snap_capture(gsm_snap *s, int stable_ids);
void gsm_snap_release(gsm_snap *s);

/* ---- gs_mono_emit.c ---- */

/* Resolves the names of the classes met so far (on a thread attached to
 * the runtime): 0 or -1. */
int gsm_emit_prepare(char *err, size_t errcap);
/* Writes the snapshot's lines to fd, a section an AppDomain named by
 * domains (by index); 0, or -1 when the peer went away or stalled, or
 * memory ran out. */
int gsm_emit(int fd, const gsm_snap *s, char *const *domains);
/* Writes all of buf to fd, waiting at most 60 s for progress: 0 or -1. */
int gsm_write_all(int fd, const void *buf, size_t len);

#endif
