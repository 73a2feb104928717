/* gs_idmap.c - open-addressing hash map of 64-bit IDs (see gs_idmap.h).
 *
 * Fibonacci hashing spreads the ascending, evenly spaced IDs that heap walks
 * produce; the table grows at 70% load. Growing a table of millions of
 * entries costs more than filling it, so callers size it from the input size
 * when they know it. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_idmap.h"
#include "gs_port.h"

#define MIN_CAPACITY 64

static int idmap_alloc(gs_idmap *m, size_t capacity) {
  unsigned log2 = 0;
  while (((size_t)1 << log2) < capacity) log2++;
  m->slots = gs_port_alloc_table(((size_t)1 << log2) * sizeof *m->slots);
  if (!m->slots) return GS_ENOMEM;
  m->mask = ((size_t)1 << log2) - 1;
  m->shift = 64 - log2;
  m->count = 0;
  return GS_OK;
}

int gs_idmap_init(gs_idmap *m, size_t expected) {
  size_t capacity = MIN_CAPACITY;
  while (capacity / 10 * 7 < expected) capacity *= 2;
  return idmap_alloc(m, capacity);
}

void gs_idmap_free(gs_idmap *m) {
  if (m->slots) gs_port_free_table(m->slots, (m->mask + 1) * sizeof *m->slots);
  memset(m, 0, sizeof *m);
}

void gs_idmap_clear(gs_idmap *m) {
  if (m->slots) memset(m->slots, 0, (m->mask + 1) * sizeof *m->slots);
  m->count = 0;
}

static int idmap_grow(gs_idmap *m) {
  gs_idmap old = *m;
  size_t i;
  if (idmap_alloc(m, (old.mask + 1) * 2)) { *m = old; return GS_ENOMEM; }
  for (i = 0; i <= old.mask; i++) {
    gs_idmap_slot *s = &old.slots[i];
    size_t j;
    if (!s->bits) continue;
    j = gs_idmap_home(m, s->key);
    while (m->slots[j].bits) j = (j + 1) & m->mask;
    m->slots[j] = *s;
  }
  m->count = old.count;
  gs_idmap_free(&old);
  return GS_OK;
}

int gs_idmap_put(gs_idmap *m, uint64_t key, gs_idmap_slot **slot) {
  size_t i;
  if (m->count + 1 > (m->mask + 1) / 10 * 7 && idmap_grow(m)) return GS_ENOMEM;
  i = gs_idmap_home(m, key);
  for (;;) {
    gs_idmap_slot *s = &m->slots[i];
    if (!s->bits) {
      s->key = key;
      s->value = 0;
      s->bits = GS_IDMAP_USED;
      m->count++;
      *slot = s;
      return 1;
    }
    if (s->key == key) { *slot = s; return 0; }
    i = (i + 1) & m->mask;
  }
}
