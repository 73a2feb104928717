/* gs_mock_catalog.h - the mock heap's types: a catalogue of .NET-like names,
 * shapes and sizes, drawn by Zipf popularity.
 *
 * The catalogue starts with about 40 common framework types and goes on with
 * generated names in the styles real heaps show (nested, generic, arrays).
 * It is built once from the type count and seed; its size depends on the
 * type count only, never on the object count. */
#ifndef GS_MOCK_CATALOG_H
#define GS_MOCK_CATALOG_H

#include <stddef.h>
#include <stdint.h>
#include "gs_mock_rng.h"

/* A type of the head pool can hold this many references: the group
 * structure of the mock heap needs them. */
#define GS_MOCK_HEAD_REFS 5u

typedef enum gs_mock_shape {
  GS_MOCK_CLASS,    /* fixed size, pointer fields */
  GS_MOCK_STRING,   /* System.String */
  GS_MOCK_VALUES,   /* array without references */
  GS_MOCK_REFS      /* array of references (or of structs holding them) */
} gs_mock_shape;

typedef struct gs_mock_type {
  uint64_t id;
  uint32_t name_off;
  uint32_t name_len;
  uint8_t shape;
  uint8_t fields;     /* class: pointer fields */
  uint16_t elem;      /* arrays: element size; string: char size */
  uint32_t size;      /* class: instance size */
  uint8_t late;       /* written after its first use */
} gs_mock_type;

#define GS_MOCK_GUIDE_BITS 12

typedef struct gs_mock_pool {      /* types eligible for one role, by popularity */
  uint32_t *ranks;
  uint64_t *cdf;               /* cumulative weights */
  uint32_t n;
  /* guide[b]: first entry whose cdf exceeds b << shift, so a draw only
   * searches between two neighbouring guides */
  uint32_t guide[(1u << GS_MOCK_GUIDE_BITS) + 1];
  unsigned shift;
} gs_mock_pool;

typedef struct gs_mock_catalog {
  gs_mock_type *types;
  uint32_t ntypes;
  char *names;
  size_t names_len, names_cap;
  gs_mock_pool all, head, large;
} gs_mock_catalog;

/* Builds ntypes (at least 2) types; names and IDs depend on seed. */
int gs_mock_catalog_build(gs_mock_catalog *c, uint32_t ntypes, uint64_t seed);
void gs_mock_catalog_free(gs_mock_catalog *c);

/* Draws a type of pool p by popularity; returns its rank. */
uint32_t gs_mock_pool_pick(const gs_mock_pool *p, gs_mock_rng *r);

#endif
