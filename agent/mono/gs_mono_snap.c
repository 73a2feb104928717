/* gs_mono_snap.c - one consistent snapshot of a Mono heap.
 *
 * A capture forces a full collection and walks the heap when that
 * collection's world is about to restart (MONO_GC_EVENT_PRE_START_WORLD):
 * every live object is then in place and nothing runs. While the world is
 * stopped the module records into mappings only (gs_mono_mem.c): a
 * suspended thread may hold any lock, malloc's included.
 *
 * Roots arrive as (slot, object) pairs; their reason is the registered
 * root range the slot lies in. GC handles are not reported as roots: the
 * module follows their creation and deletion and reads their targets in
 * the pause. With stable IDs, one map from address to identity follows the
 * collector's moves (from the first capture on) and is brought up to date
 * in place after each walk, once the world restarted: the moves that come
 * meanwhile wait, so the map is the heap as the walk saw it. An identity
 * whose class and size changed at its address is a new object that
 * reused a dead one's address without a move.
 *
 * The map's slot is 12 bytes: the address, with a check of class and
 * size in its upper 16 bits (user addresses have 48 bits on x86-64 and
 * arm64) and the SEEN mark in its low bit (objects are 8-byte aligned),
 * and a 31-bit identity. An address that breaks either rule, or a
 * process that asks for more than GSM_IDS_MAX identities, gets an error,
 * never a wrong identity. */
#include <assert.h>
#include <string.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/profiler.h>
#include "gs_mono.h"

/* A registered root range and what its roots are in the dump. */
typedef struct root_range {
  uintptr_t start, size;
  const void *key;
  uint32_t source, kind, flags;
} root_range;

#define ADDR_MASK 0x0000fffffffffff8ULL  /* an object's address: the rest are tags */
#define CHECK_SHIFT 48                   /* 16 bits of class and size */
#define SEEN      ((uint64_t)1)          /* in the last walk: kept by the sweep */
#define GSM_IDS_MAX 0x7fffffffu          /* identities are 31-bit, never reused */
#define PREFETCH  16            /* map lookups started ahead of use */

static struct {
  int stable, max_gen, tracking;
  volatile int capturing;
  int full_stop;                /* the world is stopped for a full collection */
  pthread_mutex_t ranges_lock, handles_lock, moves_lock;
  int deferring;                /* moves wait in pending: ids is the walk's heap */
  int lost_moves;               /* pending ran out of memory: forget every identity */
  size_t walked_moves;          /* the pending moves that came before the last walk */
  gsm_vec pending;              /* old, new address pairs */
  gsm_vec ranges;               /* root_range, sorted by start */
  gsm_map handles;              /* handle + 1 -> type + 1 */
  gsm_map ids;                  /* address | check << CHECK_SHIFT | SEEN -> identity */
  uint64_t next_id, stop_t0;
  gsm_snap *snap;
  MonoProfilerHandle handle;
} S = {0, 0, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
       PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {NULL, 0, 0, 2 * sizeof(uint64_t), 0},
       {NULL, 0, 0, sizeof(root_range), 0}, {NULL, 0, 0, 0}, {NULL, 0, 0, ~ADDR_MASK}, 0, 0, NULL, NULL};

/* The thread that runs the capture's collection: mono_gc_collect collects
 * on its caller's thread, and the runtime raises that collection's events
 * and roots there. Another thread's collection may begin before
 * mono_gc_collect returned; its roots name a heap the walk never saw. */
static pthread_t capture_thread;

static int own_collection(void) {
  return S.capturing && pthread_equal(pthread_self(), capture_thread);
}

static void fail(const char *why) {
  if (!S.snap->error[0]) strncpy(S.snap->error, why, sizeof S.snap->error - 1);
}

/* ---- root ranges ---- */

/* The dump's root kind for a range: RPM kinds 0 other, 1 stack, 2
 * finalizer queue, 3 handle, 4 static, 5 other runtime tables. */
static void classify(root_range *r, const char *name) {
  r->kind = 0;
  r->flags = 0;
  switch (r->source) {
  case MONO_ROOT_SOURCE_STACK: r->kind = 1; r->flags = 1; break;  /* scanned conservatively: pinned */
  case MONO_ROOT_SOURCE_HANDLE: r->kind = 1; break;
  case MONO_ROOT_SOURCE_FINALIZER_QUEUE: r->kind = 2; break;
  case MONO_ROOT_SOURCE_GC_HANDLE: r->kind = 3; break;
  case MONO_ROOT_SOURCE_STATIC: r->kind = 4; break;
  case MONO_ROOT_SOURCE_THREAD_STATIC: case MONO_ROOT_SOURCE_CONTEXT_STATIC:
  case MONO_ROOT_SOURCE_EPHEMERON: case MONO_ROOT_SOURCE_TOGGLEREF: r->kind = 5; break;
  case MONO_ROOT_SOURCE_DOMAIN:
    if (name && strstr(name, "String Pool")) r->kind = 5;   /* interned strings, literals */
    break;
  default: break;
  }
}

/* Index of the last range starting at or before addr, or -1. */
static long range_floor(uintptr_t addr) {
  const root_range *r = (const root_range *)S.ranges.p;
  long lo = 0, hi = (long)S.ranges.len - 1, found = -1;
  while (lo <= hi) {
    long mid = lo + (hi - lo) / 2;
    if (r[mid].start <= addr) found = mid, lo = mid + 1;
    else hi = mid - 1;
  }
  return found;
}

/* SGen registers pseudo roots (addresses 1 to 4) from its own thread during
 * the first collection: nothing here may allocate, and nothing does. */
static void on_root_register(MonoProfiler *p, const mono_byte *start, uintptr_t size,
                             MonoGCRootSource source, const void *key, const char *name) {
  root_range r, *slot;
  long at;
  (void)p;
  r.start = (uintptr_t)start;
  r.size = size ? size : 1;
  r.key = key;
  r.source = (uint32_t)source;
  classify(&r, name);
  pthread_mutex_lock(&S.ranges_lock);
  at = range_floor(r.start) + 1;
  if (gsm_vec_push(&S.ranges, 1)) {
    slot = (root_range *)S.ranges.p + at;
    memmove(slot + 1, slot, (S.ranges.len - 1 - (size_t)at) * sizeof r);
    *slot = r;
  }
  pthread_mutex_unlock(&S.ranges_lock);
}

static void on_root_unregister(MonoProfiler *p, const mono_byte *start) {
  long at;
  (void)p;
  pthread_mutex_lock(&S.ranges_lock);
  at = range_floor((uintptr_t)start);
  if (at >= 0 && ((root_range *)S.ranges.p)[at].start == (uintptr_t)start) {
    root_range *slot = (root_range *)S.ranges.p + at;
    memmove(slot, slot + 1, (S.ranges.len - 1 - (size_t)at) * sizeof *slot);
    S.ranges.len--;
  }
  pthread_mutex_unlock(&S.ranges_lock);
}

static const root_range *range_of(uintptr_t slot) {
  long at = range_floor(slot);
  const root_range *r = at >= 0 ? (const root_range *)S.ranges.p + at : NULL;
  return r && slot - r->start < r->size ? r : NULL;
}

static gsm_root *push_root(uint64_t obj, uint32_t kind, uint32_t flags, uint32_t container) {
  gsm_root *r = gsm_vec_push(&S.snap->roots, 1);
  if (!r) {
    fail("out of memory for roots");
    return NULL;
  }
  r->id = obj;
  r->kind = (uint16_t)kind;
  r->flags = (uint16_t)flags;
  r->container = container;
  return r;
}

static void on_roots(MonoProfiler *p, uint64_t count, const mono_byte *const *addresses,
                     MonoObject *const *objects) {
  uint64_t i;
  int locked;
  (void)p;
  if (!own_collection() || !S.full_stop) return;
  /* Registration happens under the GC lock, which the collector holds now;
   * the lock is only tried so that a broken promise cannot hang the pause. */
  locked = pthread_mutex_trylock(&S.ranges_lock) == 0;
  for (i = 0; i < count; i++) {
    const root_range *r = range_of((uintptr_t)addresses[i]);
    uint32_t container = 0;
    if (!objects[i]) continue;
    if (r && r->source == MONO_ROOT_SOURCE_GC_HANDLE) continue;  /* from the handle table */
    if (r && r->kind == 4 && r->key)
      container = gsm_class_index(mono_vtable_class((MonoVTable *)r->key));
    if (!push_root((uint64_t)(uintptr_t)objects[i], r ? r->kind : 0, r ? r->flags : 0,
                   container))
      break;
  }
  if (locked) pthread_mutex_unlock(&S.ranges_lock);
}

/* ---- GC handles ---- */

static void on_handle_created(MonoProfiler *p, uint32_t handle, MonoGCHandleType type,
                              MonoObject *obj) {
  (void)p;
  (void)obj;
  pthread_mutex_lock(&S.handles_lock);
  gsm_map_put_grow(&S.handles, (uint64_t)handle + 1, (uint32_t)type + 1);
  pthread_mutex_unlock(&S.handles_lock);
}

static void on_handle_deleted(MonoProfiler *p, uint32_t handle, MonoGCHandleType type) {
  (void)p;
  (void)type;
  pthread_mutex_lock(&S.handles_lock);
  gsm_map_del(&S.handles, (uint64_t)handle + 1, NULL);
  pthread_mutex_unlock(&S.handles_lock);
}

/* Every live handle's target, as a handle root: weak ones flagged weak
 * (they keep nothing alive), pinned ones pinned. */
static void handle_roots(void) {
  size_t i;
  if (pthread_mutex_trylock(&S.handles_lock) != 0) {
    fail("a thread was stopped while changing the GC handle table; try again");
    return;
  }
  for (i = 0; S.handles.slots && i < S.handles.n; i++) {
    uint64_t h = gsm_slot_key(&S.handles.slots[i]);
    uint32_t type = S.handles.slots[i].value - 1;
    MonoObject *o;
    if (!h || !(o = mono_gchandle_get_target((uint32_t)(h - 1)))) continue;
    if (!push_root((uint64_t)(uintptr_t)o, 3,
                   type == MONO_GC_HANDLE_PINNED ? 1 : type <= MONO_GC_HANDLE_WEAK_TRACK_RESURRECTION ? 2 : 0,
                   0))
      break;
  }
  pthread_mutex_unlock(&S.handles_lock);
}

/* ---- classes ---- */

static gsm_vec classes = {NULL, 0, 0, sizeof(MonoClass *), 0};
static gsm_map class_index;       /* class -> its index */
static MonoClass *last_class;     /* the walk meets runs of one class */
static uint32_t last_index;

uint32_t gsm_class_index(MonoClass *k) {
  uint32_t v;
  if (k == last_class && k) return last_index;
  if (!(v = gsm_map_get(&class_index, (uint64_t)(uintptr_t)k))) {
    MonoClass **slot = gsm_vec_push(&classes, 1);
    if (!slot) return 0;
    *slot = k;
    v = (uint32_t)classes.len;
    if (gsm_map_put_grow(&class_index, (uint64_t)(uintptr_t)k, v)) {
      classes.len--;
      return 0;
    }
  }
  last_class = k;
  last_index = v;
  return last_index;
}

MonoClass *gsm_class_at(uint32_t index) {
  assert(index >= 1 && index <= classes.len);
  return ((MonoClass **)classes.p)[index - 1];
}

uint32_t gsm_class_count(void) { return (uint32_t)classes.len; }

/* ---- AppDomains ---- */

/* Mono has one heap for every AppDomain; an object's vtable names its own.
 * Asking the runtime costs a call an object, which doubled the pause: the
 * answer is kept by vtable, in a table that forgets on collisions. */
#define VTABLE_CACHE 1024
static MonoDomain *domains[GSM_DOMAINS_MAX];   /* of the capture, by index */
static struct { const MonoVTable *vtable; uint32_t bits; } seen_vtables[VTABLE_CACHE];

static void domains_reset(gsm_snap *s) {
  memset(seen_vtables, 0, sizeof seen_vtables);
  domains[0] = mono_get_root_domain();
  s->domain_ids[0] = mono_domain_get_id(domains[0]);
  s->ndomains = 1;
}

/* The index of domain d, which is added when new. */
static uint32_t domain_index(gsm_snap *s, MonoDomain *d) {
  unsigned i;
  for (i = 0; i < s->ndomains && domains[i] != d; i++) {}
  if (i == GSM_DOMAINS_MAX) {
    fail("more than 256 AppDomains");
    return 0;
  }
  if (i == s->ndomains) {
    domains[i] = d;
    s->domain_ids[i] = mono_domain_get_id(d);
    s->ndomains++;
  }
  return i;
}

/* The index of obj's AppDomain, in place above its class. */
static uint32_t domain_bits(gsm_snap *s, MonoObject *obj) {
  MonoVTable *vt = obj->vtable;
  size_t slot = (size_t)((uintptr_t)vt >> 4) % VTABLE_CACHE;
  if (seen_vtables[slot].vtable != vt) {
    seen_vtables[slot].vtable = vt;
    seen_vtables[slot].bits = domain_index(s, mono_vtable_domain(vt)) << GSM_CLASS_BITS;
  }
  return seen_vtables[slot].bits;
}

/* ---- the walk ---- */

/* Addresses packed in 31 bits: which of up to 32 stretches of 512 MiB
 * holds it, and its offset there in 8-byte words. Stretches are numbered
 * as the walk meets them, afresh for each walk; a heap spread over more
 * of them fails the capture with an error. */
#define REGION_SHIFT 29
#define REGIONS      32
#define OFFSET_MASK  (((uint64_t)1 << REGION_SHIFT) - 1)
static uint64_t region[REGIONS];
static unsigned regions;
static uint64_t cur_region;       /* the stretch met last, and its packed bits */
static uint32_t cur_bits;

/* 0 for null, and when the address cannot be packed. */
static uint32_t pack_slow(uint64_t addr) {
  uint64_t r = addr >> REGION_SHIFT;
  unsigned i;
  if (!addr || (addr & 7)) return 0;
  for (i = 0; i < regions && region[i] != r; i++) {}
  if (i == REGIONS) return 0;
  if (i == regions) region[regions++] = r;
  cur_region = r;
  cur_bits = GSM_PACKED | i << (REGION_SHIFT - 3);
  return cur_bits | (uint32_t)((addr & OFFSET_MASK) >> 3);
}

static uint32_t pack(uint64_t addr) {
  if (addr >> REGION_SHIFT == cur_region && !(addr & 7))
    return cur_bits | (uint32_t)((addr & OFFSET_MASK) >> 3);
  return pack_slow(addr);
}

static void pack_reset(void) {
  regions = 0;
  cur_region = UINT64_MAX;       /* no stretch: null takes the slow way */
}

uint64_t gsm_unpack(uint32_t packed) {
  uint32_t i = (packed & ~GSM_PACKED) >> (REGION_SHIFT - 3);
  assert(packed & GSM_PACKED && i < regions);
  return region[i] << REGION_SHIFT | (uint64_t)(packed & (OFFSET_MASK >> 3)) << 3;
}

/* The object before this one has all its references: mark the last. */
static void close_refs(gsm_snap *s) {
  const gsm_obj *last = s->objs.len ? (const gsm_obj *)s->objs.p + s->objs.len - 1 : NULL;
  if (last && (last->size & GSM_HAS_REFS)) {
    size_t i = s->refs.len - 1;
    ((uint64_t *)s->last.p)[i / 64] |= (uint64_t)1 << (i % 64);
  }
}

/* Room for num more references and their bits: the first, or NULL. */
static uint32_t *push_refs(gsm_snap *s, size_t num) {
  size_t words = (s->refs.len + num + 63) / 64, had = s->last.len;
  uint64_t *w;
  if (words > had) {
    if (!(w = gsm_vec_push(&s->last, words - had))) return NULL;
    memset(w, 0, (words - had) * sizeof *w);   /* a walk again reuses the array */
  }
  return gsm_vec_push(&s->refs, num);
}

static int on_object(MonoObject *obj, MonoClass *klass, uintptr_t size, uintptr_t num,
                     MonoObject **refs, uintptr_t *offsets, void *data) {
  gsm_snap *s = data;
  gsm_obj *last = s->objs.len ? (gsm_obj *)s->objs.p + s->objs.len - 1 : NULL;
  uint32_t *r, id = pack((uint64_t)(uintptr_t)obj);
  uintptr_t i, bytes;
  (void)offsets;
  if (!id) goto spread;
  /* An object with many references comes in several calls, the later
   * ones with size 0. */
  if (!(size == 0 && last && last->id == id)) {
    close_refs(s);
    if (!(last = gsm_vec_push(&s->objs, 1))) goto oom;
    bytes = mono_object_get_size(obj);
    last->id = id;
    last->size = bytes > GSM_SIZE_MAX ? GSM_SIZE_MAX : (uint32_t)bytes;
    if (!(last->type = gsm_class_index(klass))) goto oom;
    if (last->type > GSM_CLASS_MASK) goto classes;
    last->type |= domain_bits(s, obj);
  }
  if (!num) return 0;
  if (!(r = push_refs(s, num))) goto oom;
  for (i = 0; i < num; i++)
    if (!(r[i] = pack((uint64_t)(uintptr_t)refs[i])) && refs[i]) goto spread;
  last->size |= GSM_HAS_REFS;
  return 0;
oom:
  fail("out of memory for the heap walk");
  return 1;
spread:
  fail("the heap spans more than 32 stretches of 512 MiB, or an object is unaligned");
  return 1;
classes:
  fail("more than 16777215 classes");
  return 1;
}

/* ---- stable identities ---- */

/* The tag bits of a check of class and size: equal ones are one object. */
static uint64_t check_of(const gsm_obj *o) {
  uint64_t h = ((uint64_t)o->type << 32 | (o->size & GSM_SIZE_MAX)) * 0x9e3779b97f4a7c15ULL;
  return h >> CHECK_SHIFT << CHECK_SHIFT;
}

static uint64_t id_of(const gsm_map *m, uint64_t addr) {
  uint32_t id = gsm_map_get(m, addr);
  return id ? id : addr;
}

/* Which 64 KiB stretches of memory may hold a tracked object: a bit each,
 * by hash, 8 KiB in all so that it stays in the cache. Most moves are
 * promotions out of the nursery, where no tracked object lives: the bit
 * spares them a miss in the map. It covers every key of the map. */
#define FILTER_BITS 65536u
static uint64_t filter[FILTER_BITS / 64];

static uint32_t filter_bit(uint64_t addr) {
  return (uint32_t)(((addr >> 16) * 0x9e3779b97f4a7c15ULL) >> 48);
}

static int filter_has(uint64_t addr) {
  uint32_t b = filter_bit(addr);
  return (int)(filter[b / 64] >> (b % 64) & 1);
}

static void filter_add(uint64_t addr) {
  uint32_t b = filter_bit(addr);
  filter[b / 64] |= (uint64_t)1 << (b % 64);
}

/* An address that still holds an entry is a dead object's: overwritten.
 * An address the map cannot hold loses the object: all identities go. */
static void move(uint64_t from, uint64_t to) {
  gsm_slot e;
  if (!filter_has(from) || !gsm_map_del(&S.ids, from, &e)) return;
  if (to & ~ADDR_MASK) {
    S.lost_moves = 1;
    return;
  }
  gsm_map_put(&S.ids, to | (gsm_slot_key(&e) & ~ADDR_MASK), e.value);
  filter_add(to);
}

static void apply_moves(size_t from, size_t to) {
  const uint64_t *pairs = (const uint64_t *)S.pending.p;
  for (; from < to; from++) move(pairs[2 * from], pairs[2 * from + 1]);
}

/* Moves come from the collector with the world stopped; the capture's
 * thread, a tools thread, is never stopped, so it holds moves_lock only
 * briefly and the collector never waits on a stopped holder. */
static void on_moves(MonoProfiler *p, MonoObject *const *objects, uint64_t count) {
  uint64_t i, *q = NULL;
  (void)p;
  pthread_mutex_lock(&S.moves_lock);
  if (S.deferring && !(q = gsm_vec_push(&S.pending, (size_t)(count / 2)))) S.lost_moves = 1;
  for (i = 0; i + 1 < count && (S.deferring || S.ids.count); i += 2) {
    uint64_t from = (uint64_t)(uintptr_t)objects[i], to = (uint64_t)(uintptr_t)objects[i + 1];
    if (!S.deferring) {
      move(from, to);
    } else if (q) {
      *q++ = from;
      *q++ = to;
    }
  }
  pthread_mutex_unlock(&S.moves_lock);
}

/* In the pause: from now on moves wait, so that the map stays the heap the
 * walk saw until the walked objects have their identities. */
static void freeze_ids(void) {
  pthread_mutex_lock(&S.moves_lock);
  S.deferring = 1;
  S.walked_moves = S.pending.len;
  pthread_mutex_unlock(&S.moves_lock);
}

/* The known objects: their entries marked SEEN, their identities taken.
 * The others are set in miss (a bit an object); their number. The filter
 * then holds the walked objects alone, as the map will. */
static size_t keep_known(gsm_snap *s, uint64_t *miss, int rewrite) {
  gsm_obj *o = (gsm_obj *)s->objs.p;
  size_t i, misses = 0;
  memset(filter, 0, sizeof filter);
  for (i = 0; i < s->objs.len; i++) {
    gsm_slot *e;
    uint64_t addr = gsm_unpack(o[i].id);
    if (i + PREFETCH < s->objs.len) gsm_map_prefetch(&S.ids, gsm_unpack(o[i + PREFETCH].id));
    filter_add(addr);
    e = gsm_map_find(&S.ids, addr);
    if (e && (e->hi >> (CHECK_SHIFT - 32)) == check_of(&o[i]) >> CHECK_SHIFT) {
      e->lo |= (uint32_t)SEEN;
      if (rewrite) o[i].id = e->value;
    } else {
      miss[i / 64] |= (uint64_t)1 << (i % 64);
      misses++;
    }
  }
  return misses;
}

static void add_new(gsm_snap *s, const uint64_t *miss, int rewrite) {
  gsm_obj *o = (gsm_obj *)s->objs.p;
  size_t i;
  for (i = 0; i < s->objs.len; i++) {
    uint32_t id;
    if (!(miss[i / 64] >> (i % 64) & 1)) continue;
    id = ++S.next_id;
    gsm_map_put(&S.ids, gsm_unpack(o[i].id) | check_of(&o[i]), id);
    if (rewrite) o[i].id = id;
  }
}

/* A reference to an object the walk missed keeps its address. */
static void rewrite_refs(gsm_snap *s) {
  uint32_t *r = (uint32_t *)s->refs.p;
  gsm_root *rt = (gsm_root *)s->roots.p;
  size_t i;
  for (i = 0; i < s->refs.len; i++) {
    uint32_t id;
    if (i + PREFETCH < s->refs.len && r[i + PREFETCH])
      gsm_map_prefetch(&S.ids, gsm_unpack(r[i + PREFETCH]));
    if (r[i] && (id = gsm_map_get(&S.ids, gsm_unpack(r[i])))) r[i] = id;
  }
  for (i = 0; i < s->roots.len; i++) rt[i].id = id_of(&S.ids, rt[i].id);
}

/* Why the map cannot hold the walked objects, or NULL. */
static const char *ids_limit(const gsm_snap *s) {
  const gsm_obj *o = (const gsm_obj *)s->objs.p;
  size_t i;
  for (i = 0; i < s->objs.len; i++)
    if (gsm_unpack(o[i].id) & ~ADDR_MASK) return "an object address beyond 48 bits: no stable IDs";
  if (S.next_id + s->objs.len > GSM_IDS_MAX)
    return "stable IDs exhausted (2147483647 identities given): restart the program";
  return NULL;
}

/* Brings the map to the walked heap in place: the known objects keep
 * their identities, the dead ones leave, the new ones get new identities;
 * when asked, the snapshot's IDs become identities. NULL, or why not. */
static const char *assign_ids(gsm_snap *s, int rewrite) {
  gsm_vec miss = {NULL, 0, 0, sizeof(uint64_t), 0};
  size_t misses;
  const char *why = ids_limit(s);
  uint64_t *bits = why ? NULL : gsm_vec_push(&miss, s->objs.len / 64 + 1);
  if (why || !bits) return why ? why : "out of memory for the identity map";
  misses = keep_known(s, bits, rewrite);
  gsm_map_sweep(&S.ids, SEEN);
  if (gsm_map_reserve(&S.ids, S.ids.count + misses)) {
    gsm_vec_free(&miss);
    return "out of memory for the identity map";
  }
  add_new(s, bits, rewrite);
  gsm_vec_free(&miss);
  if (rewrite) rewrite_refs(s);
  return NULL;
}

/* After the world restarted. The moves of a collection before the last
 * walk go into the map first, those that came after it last. */
static void settle_ids(gsm_snap *s, int rewrite) {
  const char *why;
  pthread_mutex_lock(&S.moves_lock);
  apply_moves(0, S.walked_moves);
  if (S.lost_moves) gsm_map_free(&S.ids);   /* a move went unseen */
  S.lost_moves = 0;
  pthread_mutex_unlock(&S.moves_lock);
  if (!s->error[0] && (why = assign_ids(s, rewrite))) {
    gsm_map_free(&S.ids);
    strcpy(s->error, why);
  }
  pthread_mutex_lock(&S.moves_lock);
  apply_moves(S.walked_moves, S.pending.len);
  gsm_vec_free(&S.pending);
  S.deferring = 0;
  if (S.lost_moves) gsm_map_free(&S.ids);
  S.lost_moves = 0;
  pthread_mutex_unlock(&S.moves_lock);
}

/* ---- the collection ---- */

static void on_gc(MonoProfiler *p, MonoProfilerGCEvent ev, uint32_t gen, mono_bool serial) {
  gsm_snap *s = S.snap;
  (void)p;
  (void)serial;
  if (!own_collection()) return;
  /* Only the roots of the stop that ends with the walk. */
  if (ev == MONO_GC_EVENT_PRE_STOP_WORLD) {
    S.stop_t0 = gsm_now_us();
    S.full_stop = (int)gen == S.max_gen;
    if (S.full_stop) s->roots.len = 0;
  }
  if (ev == MONO_GC_EVENT_POST_START_WORLD && S.stop_t0) {
    s->pause_us += gsm_now_us() - S.stop_t0;
    S.stop_t0 = 0;
  }
  if ((int)gen != S.max_gen) return;
  /* A forced collection may first finish a concurrent one: the last wins. */
  if (ev == MONO_GC_EVENT_START) s->error[0] = 0;
  if (ev != MONO_GC_EVENT_PRE_START_WORLD) return;
  s->objs.len = s->refs.len = s->last.len = 0;
  pack_reset();
  domains_reset(s);
  mono_gc_walk_heap(0, on_object, s);
  close_refs(s);
  handle_roots();
  if (S.stable) freeze_ids();
}

void gsm_snap_install(void *handle, int stable) {
  S.handle = handle;
  S.stable = stable;
  mono_profiler_set_gc_root_register_callback(S.handle, on_root_register);
  mono_profiler_set_gc_root_unregister_callback(S.handle, on_root_unregister);
  mono_profiler_set_gc_handle_created_callback(S.handle, on_handle_created);
  mono_profiler_set_gc_handle_deleted_callback(S.handle, on_handle_deleted);
}

void gsm_snap_capture(gsm_snap *s, int stable_ids) {
  uint64_t t0;
  memset(s, 0, sizeof *s);
  s->objs.elem = sizeof(gsm_obj);
  s->refs.elem = sizeof(uint32_t);
  s->last.elem = sizeof(uint64_t);
  s->roots.elem = sizeof(gsm_root);
  if (stable_ids && !S.stable) {
    strcpy(s->error, "stable IDs need the module loaded with ids=stable");
    return;
  }
  gsm_mem_reset_peak();
  t0 = gsm_mem_peak();
  S.snap = s;
  S.max_gen = mono_gc_max_generation();
  capture_thread = pthread_self();
  /* The roots and GC events cost the collector only while a capture runs;
   * moves only from the first capture on, as no identity exists before. */
  if (S.stable && !S.tracking) mono_profiler_set_gc_moves_callback(S.handle, on_moves);
  S.tracking = S.stable;
  mono_profiler_set_gc_roots_callback(S.handle, on_roots);
  mono_profiler_set_gc_event_callback(S.handle, on_gc);
  S.capturing = 1;
  mono_gc_collect(S.max_gen);
  S.capturing = 0;
  mono_profiler_set_gc_event_callback(S.handle, NULL);
  mono_profiler_set_gc_roots_callback(S.handle, NULL);
  S.snap = NULL;
  if (S.deferring) settle_ids(s, stable_ids);
  s->mem_bytes = gsm_mem_peak() - t0;
  s->ids_bytes = gsm_map_bytes(&S.ids);
  if (!s->error[0] && !s->objs.len) strcpy(s->error, "the collection walked no object");
}

void gsm_snap_release(gsm_snap *s) {
  gsm_vec_free(&s->objs);
  gsm_vec_free(&s->refs);
  gsm_vec_free(&s->last);
  gsm_vec_free(&s->roots);
}
