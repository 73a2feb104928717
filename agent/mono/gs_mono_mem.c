/* gs_mono_mem.c - memory the module may take while the runtime's world is
 * stopped. A suspended thread may hold malloc's lock, so everything the
 * pause touches lives in anonymous mappings, grown with mremap: system
 * calls, no user-space lock. */
#include <assert.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "gs_mono.h"

#define HUGE_MIN ((size_t)4 << 20)   /* mappings from this size take huge pages */

static size_t mem_now, mem_peak;

static void count(size_t more) {
  size_t now = __atomic_add_fetch(&mem_now, more, __ATOMIC_RELAXED);
  if (now > mem_peak) mem_peak = now;
}

static void *map_raw(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* Huge pages for large mappings: a map's random lookups miss the TLB less,
 * and an array filled in the pause takes one fault where it took 512. */
static void advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (bytes >= HUGE_MIN) madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/* A map's table: its slots are written anywhere, so all of it counts. */
static void *map_bytes(size_t bytes) {
  void *p = map_raw(bytes);
  if (!p) return NULL;
  advise_huge(p, bytes);
  count(bytes);
  return p;
}

static void unmap_bytes(void *p, size_t bytes) {
  if (!p) return;
  munmap(p, bytes);
  __atomic_sub_fetch(&mem_now, bytes, __ATOMIC_RELAXED);
}

size_t gsm_mem_peak(void) { return mem_peak; }
void gsm_mem_reset_peak(void) { mem_peak = mem_now; }

uint64_t gsm_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void *gsm_vec_push(gsm_vec *v, size_t n) {
  if (v->len + n > v->cap) {
    size_t cap = v->cap ? v->cap : 65536, bytes;
    void *p;
    while (cap < v->len + n) cap *= 2;
    bytes = cap * v->elem;
    if (v->p) {
      p = mremap(v->p, v->cap * v->elem, bytes, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) return NULL;
    } else if (!(p = map_raw(bytes))) {
      return NULL;
    }
    v->p = p;
    v->cap = cap;
    advise_huge(p, bytes);
  }
  v->len += n;
  if (v->len * v->elem > v->touched) {
    /* A huge page is all there once a byte of it was written. */
    size_t page = v->cap * v->elem >= HUGE_MIN ? (size_t)2 << 20 : 4096;
    size_t pages = (v->len * v->elem + page - 1) & ~(page - 1);
    count(pages - v->touched);
    v->touched = pages;
  }
  return v->p + (v->len - n) * v->elem;
}

void gsm_vec_free(gsm_vec *v) {
  if (v->p) munmap(v->p, v->cap * v->elem);
  __atomic_sub_fetch(&mem_now, v->touched, __ATOMIC_RELAXED);
  v->p = NULL;
  v->len = v->cap = v->touched = 0;
}

/* ---- the map: linear probing, deletion by backward shift ----
 * A table of any number of slots (a key's home by multiply-shift, not by
 * a mask), so that a large map grows by half rather than doubling. */

#define MAP_MIN 1024

static uint64_t key_at(const gsm_map *m, size_t i) { return gsm_slot_key(&m->slots[i]) & ~m->tags; }

static size_t slot_of(const gsm_map *m, uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return (size_t)(((key & 0xffffffffu) * m->n) >> 32);
}

static size_t next_slot(const gsm_map *m, size_t i) {
  return i + 1 == m->n ? 0 : i + 1;
}

/* A table of n slots; an old table's keys move into it. */
static int map_rehash(gsm_map *m, size_t n) {
  gsm_map bigger;
  size_t i;
  bigger.n = n < MAP_MIN ? MAP_MIN : n;
  bigger.count = 0;
  bigger.tags = m->tags;
  /* slot_of multiplies 32 bits of hash by n in 64 bits. */
  if ((bigger.n >> 16 >> 16) != 0 || !(bigger.slots = map_bytes(bigger.n * sizeof(gsm_slot))))
    return -1;
  for (i = 0; m->slots && i < m->n; i++)
    if (m->slots[i].lo | m->slots[i].hi)
      gsm_map_put(&bigger, gsm_slot_key(&m->slots[i]), m->slots[i].value);
  gsm_map_free(m);
  *m = bigger;
  return 0;
}

int gsm_map_init(gsm_map *m, size_t keys) {
  m->slots = NULL;
  m->n = m->count = 0;
  return map_rehash(m, keys * 2);
}

void gsm_map_free(gsm_map *m) {
  if (m->slots) unmap_bytes(m->slots, m->n * sizeof(gsm_slot));
  m->slots = NULL;
  m->n = m->count = 0;
}

int gsm_map_reserve(gsm_map *m, size_t keys) {
  if (m->slots && keys * 4 <= m->n * 3) return 0;
  return map_rehash(m, keys + keys / 2);
}

size_t gsm_map_bytes(const gsm_map *m) { return m->n * sizeof(gsm_slot); }

void gsm_map_prefetch(const gsm_map *m, uint64_t key) {
  if (m->slots) __builtin_prefetch(&m->slots[slot_of(m, key)]);
}

gsm_slot *gsm_map_find(const gsm_map *m, uint64_t key) {
  size_t i;
  if (!m->slots) return NULL;
  for (i = slot_of(m, key); m->slots[i].lo | m->slots[i].hi; i = next_slot(m, i))
    if (key_at(m, i) == key) return &m->slots[i];
  return NULL;
}

uint32_t gsm_map_get(const gsm_map *m, uint64_t key) {
  const gsm_slot *s = gsm_map_find(m, key);
  return s ? s->value : 0;
}

void gsm_map_put(gsm_map *m, uint64_t key, uint32_t value) {
  uint64_t bare = key & ~m->tags;
  size_t i;
  assert(bare && m->count < m->n);
  for (i = slot_of(m, bare); m->slots[i].lo | m->slots[i].hi; i = next_slot(m, i))
    if (key_at(m, i) == bare) break;
  if (!(m->slots[i].lo | m->slots[i].hi)) m->count++;
  m->slots[i].lo = (uint32_t)key;
  m->slots[i].hi = (uint32_t)(key >> 32);
  m->slots[i].value = value;
}

int gsm_map_put_grow(gsm_map *m, uint64_t key, uint32_t value) {
  if ((!m->slots || (m->count + 1) * 4 > m->n * 3) && map_rehash(m, (m->count + 1) * 2))
    return -1;
  gsm_map_put(m, key, value);
  return 0;
}

/* Empties slot i, shifting back the entries of its run that may sit there. */
static void del_at(gsm_map *m, size_t i) {
  size_t j;
  for (j = next_slot(m, i); m->slots[j].lo | m->slots[j].hi; j = next_slot(m, j)) {
    size_t home = slot_of(m, key_at(m, j));
    size_t from_home = j >= home ? j - home : j + m->n - home;
    size_t from_i = j >= i ? j - i : j + m->n - i;
    if (from_home >= from_i) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  memset(&m->slots[i], 0, sizeof m->slots[i]);
  m->count--;
}

int gsm_map_del(gsm_map *m, uint64_t key, gsm_slot *out) {
  gsm_slot *s = gsm_map_find(m, key);
  if (!s) return 0;
  if (out) *out = *s;
  del_at(m, (size_t)(s - m->slots));
  return 1;
}

/* One pass from just after an empty slot: no run crosses it, so a shift
 * only ever brings in entries the pass has not reached yet. */
void gsm_map_sweep(gsm_map *m, uint64_t keep) {
  size_t start, k, i;
  assert((keep & m->tags) == keep);
  if (!m->slots) return;
  for (start = 0; start < m->n && (m->slots[start].lo | m->slots[start].hi); start++) {}
  assert(start < m->n);
  for (k = 0, i = start; k < m->n; k++) {
    i = next_slot(m, i);
    while ((m->slots[i].lo | m->slots[i].hi) && !(gsm_slot_key(&m->slots[i]) & keep)) del_at(m, i);
    m->slots[i].lo &= ~(uint32_t)keep;
    m->slots[i].hi &= ~(uint32_t)(keep >> 32);
  }
}
