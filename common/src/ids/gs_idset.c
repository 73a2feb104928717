/* gs_idset.c - set of object IDs as bitmaps over address chunks (see gs_idset.h).
 *
 * Heap walks visit objects in address order and most references stay within
 * a segment, so the chunk used last is kept at hand and the chunk table is
 * consulted only when a lookup crosses into another chunk of addresses. */
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_idset.h"

#define CHUNK_BITS_LOG2 GS_IDSET_CHUNK_BITS_LOG2
#define CHUNK_WORDS GS_IDSET_CHUNK_WORDS
#define WORD_MASK (CHUNK_WORDS - 1)
#define ADDRESS_SHIFT 3                         /* IDs start as 8-byte aligned */
/* A chunk's bitmap is 512 KB; past 32 MB of them, each must hold enough
 * members to beat a hash table's 23 bytes per ID. */
#define FREE_CHUNKS 64
#define MIN_PER_CHUNK ((CHUNK_WORDS * 8) / 32)

static unsigned lowest_bit(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return (unsigned)__builtin_ctzll(x);
#else
  unsigned n = 0;
  while (!(x & 1)) { x >>= 1; n++; }
  return n;
#endif
}

/* One bit per 2^shift IDs: shift 3 or 2 for addresses, 0 for IDs that are
 * counters or indices. */
static uint64_t key_of(const gs_idset *s, uint64_t id) { return id >> (s->shift + CHUNK_BITS_LOG2); }
static size_t word_of(const gs_idset *s, uint64_t id) { return (size_t)(id >> (s->shift + 6)) & WORD_MASK; }
static unsigned bit_of(const gs_idset *s, uint64_t id) { return (unsigned)(id >> s->shift) & 63; }
static int fits(const gs_idset *s, uint64_t id) { return !(id & ((UINT64_C(1) << s->shift) - 1)); }

static uint64_t id_of(const gs_idset *s, uint64_t key, size_t w, unsigned b) {
  return (key << (s->shift + CHUNK_BITS_LOG2)) | ((uint64_t)(w * 64 + b) << s->shift);
}

static void forget_ways(gs_idset *s) {
  memset(s->ways, 0, sizeof s->ways);
}

int gs_idset_init(gs_idset *s) {
  memset(s, 0, sizeof *s);
  s->shift = ADDRESS_SHIFT;
  return gs_idmap_init(&s->dir, 64);
}

/* Zeroes what the chunk's members touched and keeps its bitmap as a spare,
 * or frees it. */
static void retire_bits(gs_idset *s, gs_idset_chunk *ch) {
  if (s->nspares == GS_IDSET_SPARES) {
    free(ch->bits);
    return;
  }
  if (ch->lo < ch->hi) memset(ch->bits + ch->lo, 0, (ch->hi - ch->lo) * sizeof *ch->bits);
  s->spares[s->nspares++] = ch->bits;
}

static void free_chunks(gs_idset *s) {
  size_t i;
  for (i = 0; i < s->nchunks; i++) {
    retire_bits(s, &s->chunks[i]);
    free(s->chunks[i].rank);
  }
  s->nchunks = 0;
  gs_idmap_clear(&s->dir);
  forget_ways(s);
}

void gs_idset_bitmaps_only(gs_idset *s, size_t free_chunks) {
  s->bitmaps_only = 1;
  s->free_chunks = free_chunks;
}

void gs_idset_clear(gs_idset *s) {
  free_chunks(s);
  if (s->hashed) gs_idmap_free(&s->ids);
  s->hashed = 0;
  s->sealed = 0;
  s->count = 0;
  s->shift = ADDRESS_SHIFT;
}

void gs_idset_free(gs_idset *s) {
  gs_idset_clear(s);
  while (s->nspares) free(s->spares[--s->nspares]);
  free(s->chunks);
  gs_idmap_free(&s->dir);
  memset(s, 0, sizeof *s);
}

/* ---- changing representation --------------------------------------- */

static int add_all(gs_idset *s, const uint64_t *ids, size_t n) {
  size_t i;
  int err;
  for (i = 0; i < n; i++)
    /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): gs_idset_members wrote all n */
    if ((err = gs_idset_add(s, ids[i])) < 0) return err;
  return GS_OK;
}

/* Re-adds every member with one bit per 4-byte slot, per ID, or into a
 * hash table when the set is already at one bit per ID. */
static int rebuild(gs_idset *s) {
  size_t n = s->count;
  uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
  int err;
  if (!ids) return GS_ENOMEM;
  gs_idset_members(s, ids);
  free_chunks(s);
  s->count = 0;
  if (s->shift > 0) {
    s->shift = s->shift > 2 ? 2 : 0;
  } else {
    if (gs_idmap_init(&s->ids, n + 1)) { free(ids); return GS_ENOMEM; }
    s->hashed = 1;
  }
  err = add_all(s, ids, n);
  free(ids);
  return err;
}

static int hash_add(gs_idset *s, uint64_t id) {
  gs_idmap_slot *slot;
  int inserted = gs_idmap_put(&s->ids, id, &slot);
  if (inserted > 0) s->count++;
  return inserted;
}

/* ---- chunk mode ------------------------------------------------------ */

/* memset, through a pointer the compiler cannot see through: it would
 * otherwise turn malloc and memset back into calloc (see new_chunk). */
static void *(*volatile zero_fill)(void *, int, size_t) = memset;

static gs_idset_chunk *find_chunk(gs_idset *s, uint64_t key) {
  struct gs_idset_way *way = &s->ways[key % GS_IDSET_WAYS];
  gs_idmap_slot *d;
  if (way->chunk && way->key == key) return way->chunk;
  if (!(d = gs_idmap_find(&s->dir, key))) return NULL;
  way->key = key;
  return way->chunk = &s->chunks[d->value];
}

/* Returns 1 with a new chunk, 0 when the set should become a hash table. */
static int new_chunk(gs_idset *s, uint64_t key, gs_idset_chunk **out) {
  gs_idset_chunk *ch;
  gs_idmap_slot *d;
  uint64_t *bits;
  if (s->nchunks >= FREE_CHUNKS && s->nchunks >= s->free_chunks &&
      s->count < MIN_PER_CHUNK * s->nchunks)
    return 0;
  if (s->nchunks == s->chunks_cap) {
    /* The cache points into the array, which may move. */
    if (gs_array_reserve((void **)&s->chunks, &s->chunks_cap, s->nchunks + 1, sizeof *s->chunks))
      return GS_ENOMEM;
    forget_ways(s);
  }
  /* Zeroed now rather than calloc'd: a bit is read before it is set, and
   * a fresh page first read is mapped to the zero page, then copied on the
   * first write, which interrupts every processor running the process to
   * flush the old mapping. */
  if (s->nspares) {
    bits = s->spares[--s->nspares];
  } else {
    if (!(bits = malloc(CHUNK_WORDS * sizeof *bits))) return GS_ENOMEM;
    zero_fill(bits, 0, CHUNK_WORDS * sizeof *bits);
  }
  if (gs_idmap_put(&s->dir, key, &d) < 0) { s->spares[s->nspares++] = bits; return GS_ENOMEM; }
  ch = &s->chunks[s->nchunks];
  /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): chunks_cap > nchunks, so allocated */
  ch->bits = bits;
  d->value = (uint32_t)s->nchunks++;
  ch->key = key;
  ch->rank = NULL;
  ch->lo = (uint32_t)CHUNK_WORDS;
  ch->hi = 0;
  *out = ch;
  return 1;
}

int gs_idset_add_slow(gs_idset *s, uint64_t id) {
  uint64_t bit;
  size_t w;
  gs_idset_chunk *ch;
  int err;
  if (s->hashed) return hash_add(s, id);
  if (!fits(s, id)) goto rebuild;
  if (!(ch = find_chunk(s, key_of(s, id)))) {
    if ((err = new_chunk(s, key_of(s, id), &ch)) < 0) return err;
    if (!err && s->bitmaps_only) return GS_ELIMIT;
    if (!err) goto rebuild;
  }
  bit = UINT64_C(1) << bit_of(s, id);
  w = word_of(s, id);
  /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): every chunk has its bits */
  if (ch->bits[w] & bit) return 0;
  ch->bits[w] |= bit;
  gs_idset_touch_(ch, w);
  s->count++;
  return 1;
rebuild:
  if ((err = rebuild(s))) return err;
  return gs_idset_add(s, id);
}

int gs_idset_has_slow(gs_idset *s, uint64_t id) {
  gs_idset_chunk *ch;
  if (s->hashed) return gs_idmap_find(&s->ids, id) != NULL;
  if (!fits(s, id) || !(ch = find_chunk(s, key_of(s, id)))) return 0;
  /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): every chunk has its bits */
  return (int)((ch->bits[word_of(s, id)] >> bit_of(s, id)) & 1);
}

/* ---- memory -------------------------------------------------------- */

size_t gs_idset_memory(const gs_idset *s) {
  size_t bytes = s->chunks_cap * sizeof *s->chunks + (s->dir.mask + 1) * sizeof *s->dir.slots;
  size_t c;
  for (c = 0; c < s->nchunks; c++)
    bytes += CHUNK_WORDS * (sizeof *s->chunks[c].bits + (s->chunks[c].rank ? sizeof(uint32_t) : 0));
  bytes += s->nspares * CHUNK_WORDS * sizeof(uint64_t);
  if (s->hashed) bytes += (s->ids.mask + 1) * sizeof *s->ids.slots;
  return bytes;
}

/* ---- rank ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int cmp_chunk(const void *a, const void *b) {
  return cmp_u64(&((const gs_idset_chunk *)a)->key, &((const gs_idset_chunk *)b)->key);
}

/* Puts the chunks in ID order, which rank and members rely on. */
static void sort_chunks(gs_idset *s) {
  size_t c;
  if (!s->nchunks) return;
  qsort(s->chunks, s->nchunks, sizeof *s->chunks, cmp_chunk);
  for (c = 0; c < s->nchunks; c++) gs_idmap_find(&s->dir, s->chunks[c].key)->value = (uint32_t)c;
  forget_ways(s);
}

static int seal_chunks(gs_idset *s) {
  uint32_t total = 0;
  size_t c, w;
  sort_chunks(s);
  for (c = 0; c < s->nchunks; c++) {
    gs_idset_chunk *ch = &s->chunks[c];
    /* Only the words members touched are ever looked up. */
    if (!(ch->rank = malloc(CHUNK_WORDS * sizeof *ch->rank))) return GS_ENOMEM;
    for (w = ch->lo; w < ch->hi; w++) {
      ch->rank[w] = total;
      total += gs_idset_popcount_(ch->bits[w]);
    }
  }
  return GS_OK;
}

static void hash_members(gs_idset *s, uint64_t *out) {
  size_t i, n = 0;
  for (i = 0; i < s->ids.mask + 1; i++)
    if (s->ids.slots[i].bits) out[n++] = s->ids.slots[i].key;
  qsort(out, n, sizeof *out, cmp_u64);
}

static int seal_hash(gs_idset *s) {
  uint64_t *ids = malloc((s->count ? s->count : 1) * sizeof *ids);
  size_t i;
  if (!ids) return GS_ENOMEM;
  hash_members(s, ids);
  for (i = 0; i < s->count; i++) gs_idmap_find(&s->ids, ids[i])->value = (uint32_t)i;
  free(ids);
  return GS_OK;
}

int gs_idset_seal(gs_idset *s) {
  int err;
  if (s->sealed) return GS_OK;
  if (s->count > UINT32_MAX) return GS_ELIMIT;
  err = s->hashed ? seal_hash(s) : seal_chunks(s);
  if (err) return err;
  s->sealed = 1;
  return GS_OK;
}

int gs_idset_rank_slow(gs_idset *s, uint64_t id, uint32_t *rank) {
  gs_idmap_slot *d;
  if (s->hashed) {
    if (!(d = gs_idmap_find(&s->ids, id))) return 0;
    *rank = d->value;
    return 1;
  }
  if (!fits(s, id) || !find_chunk(s, key_of(s, id))) return 0;
  return gs_idset_rank(s, id, rank);
}

int gs_idset_members(gs_idset *s, uint64_t *out) {
  size_t c, w, n = 0;
  if (s->hashed) { hash_members(s, out); return GS_OK; }
  sort_chunks(s);
  for (c = 0; c < s->nchunks; c++)
    for (w = s->chunks[c].lo; w < s->chunks[c].hi; w++) {
      uint64_t bits = s->chunks[c].bits[w];
      for (; bits; bits &= bits - 1) out[n++] = id_of(s, s->chunks[c].key, w, lowest_bit(bits));
    }
  return GS_OK;
}

/* Writes id to out[n] when out is given; returns 1 to count it. */
static size_t put_member(uint64_t *out, size_t n, uint64_t id) {
  if (out) out[n] = id;
  return 1;
}

/* Members of word w of chunk ch of a that are not in b, written to out + n
 * when out is given: a word at a time when b has the same chunk, else one
 * member at a time. */
static size_t word_outside(gs_idset *a, const gs_idset_chunk *ch, size_t w, gs_idset *b,
                           uint64_t *out, size_t n) {
  uint64_t bits = ch->bits[w];
  const gs_idset_chunk *same = !b->hashed && b->shift == a->shift ? find_chunk(b, ch->key) : NULL;
  size_t k = 0;
  if (same) bits &= ~same->bits[w];
  if (same && !out) return gs_idset_popcount_(bits);
  for (; bits; bits &= bits - 1) {
    uint64_t id = id_of(a, ch->key, w, lowest_bit(bits));
    if (same || !gs_idset_has(b, id)) k += put_member(out, n + k, id);
  }
  return k;
}

size_t gs_idset_outside(gs_idset *a, gs_idset *b, uint64_t *out) {
  size_t c, w, n = 0;
  if (a->hashed) {
    for (c = 0; c <= a->ids.mask; c++)
      if (a->ids.slots[c].bits && !gs_idset_has(b, a->ids.slots[c].key))
        n += put_member(out, n, a->ids.slots[c].key);
    return n;
  }
  for (c = 0; c < a->nchunks; c++)
    for (w = a->chunks[c].lo; w < a->chunks[c].hi; w++)
      if (a->chunks[c].bits[w]) n += word_outside(a, &a->chunks[c], w, b, out, n);
  return n;
}

/* ---- union ----------------------------------------------------------- */

static int merge_members(gs_idset *dst, const gs_idset *src, const gs_idset_chunk *ch) {
  size_t w;
  int err;
  for (w = ch->lo; w < ch->hi; w++) {
    uint64_t bits = ch->bits[w];
    for (; bits; bits &= bits - 1)
      if ((err = gs_idset_add(dst, id_of(src, ch->key, w, lowest_bit(bits)))) < 0) return err;
  }
  return GS_OK;
}

/* A chunk of src into dst: one member first, which gives dst the chunk (or
 * changes its layout), then a word at a time when the layouts match. */
static int merge_chunk(gs_idset *dst, const gs_idset *src, const gs_idset_chunk *ch) {
  gs_idset_chunk *to;
  size_t w = ch->lo;
  int err;
  while (w < ch->hi && !ch->bits[w]) w++;
  if (w >= ch->hi) return GS_OK;
  if ((err = gs_idset_add(dst, id_of(src, ch->key, w, lowest_bit(ch->bits[w])))) < 0) return err;
  if (dst->hashed || dst->shift != src->shift || !(to = find_chunk(dst, ch->key)))
    return merge_members(dst, src, ch);
  for (; w < ch->hi; w++) {
    uint64_t fresh = ch->bits[w] & ~to->bits[w];
    if (!fresh) continue;
    to->bits[w] |= fresh;
    gs_idset_touch_(to, w);
    dst->count += gs_idset_popcount_(fresh);
  }
  return GS_OK;
}

int gs_idset_merge(gs_idset *dst, const gs_idset *src) {
  size_t i;
  int err;
  if (src->hashed) {
    for (i = 0; i <= src->ids.mask; i++)
      if (src->ids.slots[i].bits && (err = gs_idset_add(dst, src->ids.slots[i].key)) < 0) return err;
    return GS_OK;
  }
  for (i = 0; i < src->nchunks; i++)
    if ((err = merge_chunk(dst, src, &src->chunks[i]))) return err;
  return GS_OK;
}
