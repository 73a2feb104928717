/* gs_idmap.h - hash map from 64-bit object or type IDs to a 32-bit value.
 *
 * Open addressing with linear probing in one array of 16-byte slots, so a
 * lookup usually costs one cache miss. Also used by the host's readers
 * of foreign heap files. */
#ifndef GS_IDMAP_H
#define GS_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define GS_IDMAP_USED 0x80000000u   /* set in bits of every occupied slot */

typedef struct gs_idmap_slot {
  uint64_t key;
  uint32_t value;
  uint32_t bits;      /* GS_IDMAP_USED | caller's flags */
} gs_idmap_slot;

typedef struct gs_idmap {
  gs_idmap_slot *slots;
  size_t mask;        /* capacity - 1; capacity is a power of two */
  size_t count;
  unsigned shift;     /* 64 - log2(capacity) */
} gs_idmap;

int gs_idmap_init(gs_idmap *m, size_t expected);
void gs_idmap_free(gs_idmap *m);
void gs_idmap_clear(gs_idmap *m);

static inline size_t gs_idmap_home(const gs_idmap *m, uint64_t key) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> m->shift);
}

/* Asks the processor for the slot a later lookup of key starts at. A macro:
 * GCC drops calls of a function that only prefetches. */
#if defined(__GNUC__) || defined(__clang__)
#define gs_idmap_prefetch(m, key) __builtin_prefetch(&(m)->slots[gs_idmap_home((m), (key))])
#else
#define gs_idmap_prefetch(m, key) ((void)(m), (void)(key))
#endif

/* Inline: loaders look up a type for every object. */
static inline gs_idmap_slot *gs_idmap_find(const gs_idmap *m, uint64_t key) {
  size_t i = gs_idmap_home(m, key);
  for (;;) {
    gs_idmap_slot *s = &m->slots[i];
    if (!s->bits) return NULL;
    if (s->key == key) return s;
    i = (i + 1) & m->mask;
  }
}
/* Finds key or inserts it with value 0 and bits GS_IDMAP_USED. Returns 1 when
 * inserted, 0 when found, GS_ENOMEM. *slot is valid until the next insert. */
int gs_idmap_put(gs_idmap *m, uint64_t key, gs_idmap_slot **slot);

#endif
