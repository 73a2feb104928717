/* gs_idset.h - set of 64-bit object IDs, small and fast for heap addresses.
 *
 * Object IDs are addresses (8- or 4-byte aligned, packed into a few
 * segments) or small counters. The set keeps one bit per 8-byte slot, in
 * chunks of 32 MB of address space found through a tiny table, so a
 * membership test is two memory accesses into about 1/64 of the heap's
 * address range: ten million objects take about 7 MB, which mostly stays
 * in the processor cache. The first ID aligned on 4 bytes only switches to
 * a bit per 4-byte slot, the first unaligned one to one bit per ID value;
 * IDs too sparse for chunks to pay off switch to a hash table, slower but
 * just as exact.
 *
 * Once sealed, the set answers rank queries: the number of members below an
 * ID, which numbers the members 0..count-1 in ID order. Internal. */
#ifndef GS_IDSET_H
#define GS_IDSET_H

#include <stddef.h>
#include <stdint.h>
#include "gs_idmap.h"

#define GS_IDSET_WAYS 64
#define GS_IDSET_CHUNK_BITS_LOG2 22                /* 512 KB of bits per chunk */
#define GS_IDSET_CHUNK_WORDS ((size_t)1 << (GS_IDSET_CHUNK_BITS_LOG2 - 6))

typedef struct gs_idset_chunk {
  uint64_t key;              /* ID >> chunk shift */
  uint64_t *bits;
  uint32_t *rank;            /* sealed: members before each word, in ID order */
  uint32_t lo, hi;           /* the words outside [lo, hi) are zero */
} gs_idset_chunk;

#define GS_IDSET_SPARES 8

typedef struct gs_idset {
  size_t count;
  /* chunk mode */
  gs_idset_chunk *chunks;
  size_t nchunks, chunks_cap;
  gs_idmap dir;              /* chunk key -> chunk index */
  struct gs_idset_way {       /* direct-mapped cache of the chunk table */
    uint64_t key;
    gs_idset_chunk *chunk;
  } ways[GS_IDSET_WAYS];
  unsigned shift;            /* one bit per 2^shift IDs */
  /* hash mode: members are keys; once sealed, values are ranks */
  int hashed;
  gs_idmap ids;
  int sealed;
  int bitmaps_only;          /* fail rather than become a hash table */
  size_t free_chunks;        /* chunks allowed whatever their members */
  /* zeroed bitmaps kept by gs_idset_clear, so that a set cleared often
   * (once a section) costs what its members touched, not 512 KB a chunk */
  uint64_t *spares[GS_IDSET_SPARES];
  size_t nspares;
} gs_idset;

int gs_idset_init(gs_idset *s);
void gs_idset_free(gs_idset *s);
/* From now on, an add that would turn the set into a hash table fails with
 * GS_ELIMIT instead, after which the set must be cleared before use; so it
 * never takes more than 512 KB per chunk of max(64, free_chunks) and 32
 * bytes per member beyond them. free_chunks lets a set whose members come
 * from anywhere in a known range at first (references to objects not read
 * yet) keep its bitmaps. */
void gs_idset_bitmaps_only(gs_idset *s, size_t free_chunks);
/* Empties the set and unseals it, keeping a few bitmaps for reuse. */
void gs_idset_clear(gs_idset *s);

/* Returns 1 when id was added, 0 when already a member, or GS_ENOMEM. */
static inline int gs_idset_add(gs_idset *s, uint64_t id);
static inline int gs_idset_has(gs_idset *s, uint64_t id);
static inline int gs_idset_put(gs_idset *s, uint64_t id);
/* gs_idset_prefetch(s, id) asks the processor for the memory a later
 * gs_idset_has(s, id) (or, once sealed, gs_idset_rank) reads, so that the
 * misses of several lookups overlap. Only a hint; a macro, below. */

/* Bytes the set holds: bitmaps, rank tables, chunk table or hash table. */
size_t gs_idset_memory(const gs_idset *s);

/* Prepares rank queries; no more adds until cleared. */
int gs_idset_seal(gs_idset *s);
/* Sets *rank to the rank of id in a sealed set and returns 1 when id is a
 * member; returns 0 otherwise. */
static inline int gs_idset_rank(gs_idset *s, uint64_t id, uint32_t *rank);
/* Writes the members in ascending order to out (count entries). */
int gs_idset_members(gs_idset *s, uint64_t *out);
/* Adds every member of src to dst. Returns GS_OK or what gs_idset_add
 * failed with (dst then holds some of them). */
int gs_idset_merge(gs_idset *dst, const gs_idset *src);
/* The number of members of a that are not members of b; they are written
 * to out (that many entries) unless it is NULL. */
size_t gs_idset_outside(gs_idset *a, gs_idset *b, uint64_t *out);

/* ---- inline fast paths ----------------------------------------------- */

/* Validation and graph loading call these tens of millions of times, so the
 * common case (the ID's chunk is in the cache) is inline and the rest, and
 * the hash mode, are out of line. */
int gs_idset_add_slow(gs_idset *s, uint64_t id);
int gs_idset_has_slow(gs_idset *s, uint64_t id);
int gs_idset_rank_slow(gs_idset *s, uint64_t id, uint32_t *rank);

static inline unsigned gs_idset_popcount_(uint64_t x) {
  x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
  x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
  x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
  return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* The chunk holding id's bit when it is cached, else NULL. */
static inline gs_idset_chunk *gs_idset_chunk_(gs_idset *s, uint64_t id) {
  uint64_t key = id >> (s->shift + GS_IDSET_CHUNK_BITS_LOG2);
  struct gs_idset_way *way = &s->ways[key % GS_IDSET_WAYS];
  if ((id & ((UINT64_C(1) << s->shift) - 1)) || !way->chunk || way->key != key) return NULL;
  return way->chunk;
}

static inline size_t gs_idset_word_index_(const gs_idset *s, uint64_t id) {
  return (size_t)(id >> (s->shift + 6)) & (GS_IDSET_CHUNK_WORDS - 1);
}

/* Notes that word w of ch may no longer be zero. */
static inline void gs_idset_touch_(gs_idset_chunk *ch, size_t w) {
  if (w < ch->lo) ch->lo = (uint32_t)w;
  if (w >= ch->hi) ch->hi = (uint32_t)w + 1;
}

/* A macro, not a function: GCC finds a function that only prefetches free
 * of side effects and drops its calls. */
#if defined(__GNUC__) || defined(__clang__)
#define gs_idset_prefetch(s, id)                                          \
  do {                                                                    \
    gs_idset_chunk *gs_ch_ = gs_idset_chunk_((s), (id));                  \
    if (gs_ch_) {                                                         \
      size_t gs_w_ = gs_idset_word_index_((s), (id));                     \
      __builtin_prefetch(&gs_ch_->bits[gs_w_]);                           \
      if (gs_ch_->rank) __builtin_prefetch(&gs_ch_->rank[gs_w_]);         \
    } else if ((s)->hashed) {                                             \
      gs_idmap_prefetch(&(s)->ids, (id));                                 \
    }                                                                     \
  } while (0)
#else
#define gs_idset_prefetch(s, id) ((void)(s), (void)(id))
#endif

static inline int gs_idset_has(gs_idset *s, uint64_t id) {
  const gs_idset_chunk *ch = gs_idset_chunk_(s, id);
  if (!ch) return gs_idset_has_slow(s, id);
  return (int)((ch->bits[gs_idset_word_index_(s, id)] >> ((id >> s->shift) & 63)) & 1);
}

static inline int gs_idset_add(gs_idset *s, uint64_t id) {
  gs_idset_chunk *ch = gs_idset_chunk_(s, id);
  size_t w;
  uint64_t bit;
  if (!ch) return gs_idset_add_slow(s, id);
  w = gs_idset_word_index_(s, id);
  bit = UINT64_C(1) << ((id >> s->shift) & 63);
  if (ch->bits[w] & bit) return 0;
  ch->bits[w] |= bit;
  gs_idset_touch_(ch, w);
  s->count++;
  return 1;
}

/* gs_idset_add without branching on whether id was new, which pays where
 * that is random: 1 when it was, 0 when not, or what gs_idset_add fails
 * with. */
static inline int gs_idset_put(gs_idset *s, uint64_t id) {
  gs_idset_chunk *ch = gs_idset_chunk_(s, id);
  size_t w;
  uint64_t bit;
  int fresh;
  if (!ch) return gs_idset_add_slow(s, id);
  w = gs_idset_word_index_(s, id);
  bit = UINT64_C(1) << ((id >> s->shift) & 63);
  fresh = !(ch->bits[w] & bit);
  s->count += (size_t)fresh;
  ch->bits[w] |= bit;
  gs_idset_touch_(ch, w);
  return fresh;
}

static inline int gs_idset_rank(gs_idset *s, uint64_t id, uint32_t *rank) {
  gs_idset_chunk *ch = gs_idset_chunk_(s, id);
  size_t w;
  uint64_t bit;
  if (!ch) return gs_idset_rank_slow(s, id, rank);
  w = gs_idset_word_index_(s, id);
  bit = UINT64_C(1) << ((id >> s->shift) & 63);
  if (!(ch->bits[w] & bit)) return 0;
  *rank = ch->rank[w] + gs_idset_popcount_(ch->bits[w] & (bit - 1));
  return 1;
}

#endif
