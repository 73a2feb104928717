/* gs_histo.c - histogram of objects by type name.
 *
 * Rows live in one growing array; an open-addressing table of row indices
 * (FNV-1a hash, linear probing, at most half full) finds a name's row. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_histo.h"

struct gs_histo {
  gs_histo_row *rows;
  size_t nrows, rows_cap;
  uint32_t *slots;        /* row index + 1; 0 = empty */
  size_t nslots;          /* power of two */
};

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Small at first: a summary keeps two histograms per section, and a dump
 * may have many sections of a few types each. */
#define FIRST_SLOTS 8
#define FIRST_ROWS 4

int gs_histo_new(gs_histo **out) {
  gs_histo *h = calloc(1, sizeof *h);
  if (!h || !(h->slots = calloc(FIRST_SLOTS, sizeof *h->slots))) {
    free(h);
    return GS_ENOMEM;
  }
  h->nslots = FIRST_SLOTS;
  *out = h;
  return GS_OK;
}

void gs_histo_free(gs_histo *h) {
  size_t i;
  if (!h) return;
  for (i = 0; i < h->nrows; i++) free(h->rows[i].name);
  free(h->rows);
  free(h->slots);
  free(h);
}

/* Slot holding name, or the empty slot where it would go. */
static size_t find_slot(const gs_histo *h, const char *name) {
  size_t mask = h->nslots - 1, i = (size_t)hash_name(name) & mask;
  while (h->slots[i] && strcmp(h->rows[h->slots[i] - 1].name, name) != 0)
    i = (i + 1) & mask;
  return i;
}

static int grow_slots(gs_histo *h) {
  size_t n = h->nslots * 2, i;
  uint32_t *old = h->slots;
  if (!(h->slots = calloc(n, sizeof *h->slots))) { h->slots = old; return GS_ENOMEM; }
  h->nslots = n;
  for (i = 0; i < h->nrows; i++) h->slots[find_slot(h, h->rows[i].name)] = (uint32_t)i + 1;
  free(old);
  return GS_OK;
}

static int append_row(gs_histo *h, const char *name, size_t slot) {
  gs_histo_row *row;
  if (h->nrows == h->rows_cap) {
    size_t cap = h->rows_cap ? h->rows_cap * 2 : FIRST_ROWS;
    gs_histo_row *rows = realloc(h->rows, cap * sizeof *rows);
    if (!rows) return GS_ENOMEM;
    h->rows = rows;
    h->rows_cap = cap;
  }
  row = &h->rows[h->nrows];
  if (!(row->name = malloc(strlen(name) + 1))) return GS_ENOMEM;
  strcpy(row->name, name);
  row->count = row->bytes = 0;
  h->slots[slot] = (uint32_t)++h->nrows;
  return GS_OK;
}

int gs_histo_add(gs_histo *h, const char *name, uint64_t count, uint64_t bytes) {
  size_t slot;
  gs_histo_row *row;
  int err;
  if ((h->nrows + 1) * 2 > h->nslots && (err = grow_slots(h))) return err;
  if (h->nrows >= UINT32_MAX - 1) return GS_ELIMIT;
  slot = find_slot(h, name);
  if (!h->slots[slot] && (err = append_row(h, name, slot))) return err;
  row = &h->rows[h->slots[slot] - 1];
  row->count += count;
  row->bytes += bytes;
  return GS_OK;
}

size_t gs_histo_size(const gs_histo *h) { return h->nrows; }

const gs_histo_row *gs_histo_row_at(const gs_histo *h, size_t i) { return &h->rows[i]; }

static int by_bytes_desc(const void *pa, const void *pb) {
  const gs_histo_row *a = *(const gs_histo_row *const *)pa;
  const gs_histo_row *b = *(const gs_histo_row *const *)pb;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  return strcmp(a->name, b->name);
}

int gs_histo_sorted(const gs_histo *h, const gs_histo_row ***out) {
  const gs_histo_row **rows = malloc((h->nrows ? h->nrows : 1) * sizeof *rows);
  size_t i;
  if (!rows) return GS_ENOMEM;
  for (i = 0; i < h->nrows; i++) rows[i] = &h->rows[i];
  qsort(rows, h->nrows, sizeof *rows, by_bytes_desc);
  *out = rows;
  return GS_OK;
}
