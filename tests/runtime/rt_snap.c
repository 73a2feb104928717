/* rt_snap.c - captures of a gs_rt heap in memory (see rt_snap.h). */
#include "gs_unit.h"

#include <stdlib.h>

#include "rt_snap.h"

static void *grow(void *p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return p;
  *cap = *cap ? *cap * 2 : 64;
  while (*cap < need) *cap *= 2;
  p = realloc(p, *cap * size);
  assert_non_null(p);
  return p;
}

static int on_type(void *ctx, uint32_t id, const char *name, size_t len) {
  rt_snap *s = ctx;
  assert_true(len > 0 && name[0]);
  assert_int_equal(id, s->ntypes + 1);   /* dense, in order */
  s->ntypes = id;
  return GS_OK;
}

static int on_object(void *ctx, uint64_t id, uint32_t type, uint64_t size,
                     const uint64_t *refs, size_t nrefs) {
  rt_snap *s = ctx;
  rt_snap_obj *o;
  s->objs = grow(s->objs, &s->cobjs, s->nobjs + 1, sizeof *s->objs);
  s->refs = grow(s->refs, &s->crefs, s->nrefs + nrefs, sizeof *s->refs);
  o = &s->objs[s->nobjs++];
  o->id = id;
  o->type = type;
  o->size = size;
  o->first = s->nrefs;
  o->nrefs = nrefs;
  if (nrefs) memcpy(s->refs + s->nrefs, refs, nrefs * sizeof *refs);
  s->nrefs += nrefs;
  return GS_OK;
}

static int on_root(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint32_t container) {
  rt_snap *s = ctx;
  rt_snap_root *r;
  s->roots = grow(s->roots, &s->croots, s->nroots + 1, sizeof *s->roots);
  r = &s->roots[s->nroots++];
  r->id = id;
  r->kind = kind;
  r->flags = flags;
  r->container = container;
  return GS_OK;
}

static int on_generation(void *ctx, unsigned gen, uint64_t start, uint64_t used,
                         uint64_t reserved) {
  rt_snap *s = ctx;
  assert_true(s->ngens < 8);
  s->gens[s->ngens].gen = gen;
  s->gens[s->ngens].start = start;
  s->gens[s->ngens].used = used;
  s->gens[s->ngens].reserved = reserved;
  s->ngens++;
  return GS_OK;
}

static int by_id(const void *a, const void *b) {
  uint64_t x = ((const rt_snap_obj *)a)->id, y = ((const rt_snap_obj *)b)->id;
  return x < y ? -1 : x > y;
}

void rt_snap_take(gs_rt *rt, unsigned flags, rt_snap *s) {
  gs_rt_visitor v;
  memset(s, 0, sizeof *s);
  v.ctx = s;
  v.type = on_type;
  v.object = on_object;
  v.root = on_root;
  v.generation = on_generation;
  gsu_assert_ok(gs_rt_capture(rt, &v, flags));
  if (s->nobjs) qsort(s->objs, s->nobjs, sizeof *s->objs, by_id);
}

void rt_snap_free(rt_snap *s) {
  free(s->objs);
  free(s->refs);
  free(s->roots);
  memset(s, 0, sizeof *s);
}

const rt_snap_obj *rt_snap_find(const rt_snap *s, uint64_t id) {
  rt_snap_obj key;
  if (!s->nobjs) return NULL;
  key.id = id;
  return bsearch(&key, s->objs, s->nobjs, sizeof *s->objs, by_id);
}

size_t rt_snap_count_type(const rt_snap *s, uint32_t type) {
  size_t i, n = 0;
  for (i = 0; i < s->nobjs; i++) n += s->objs[i].type == type;
  return n;
}

size_t rt_snap_roots_of(const rt_snap *s, uint64_t id, unsigned kind, int flags) {
  size_t i, n = 0;
  for (i = 0; i < s->nroots; i++)
    n += s->roots[i].id == id && s->roots[i].kind == kind &&
         (flags < 0 || s->roots[i].flags == (unsigned)flags);
  return n;
}

void rt_snap_check(const rt_snap *s) {
  size_t i;
  for (i = 1; i < s->nobjs; i++) assert_true(s->objs[i - 1].id < s->objs[i].id);
  for (i = 0; i < s->nobjs; i++) {
    assert_true(s->objs[i].type >= 1 && s->objs[i].type <= s->ntypes);
    assert_true(s->objs[i].size >= 8);
  }
  for (i = 0; i < s->nrefs; i++) assert_non_null(rt_snap_find(s, s->refs[i]));
  for (i = 0; i < s->nroots; i++) {
    assert_non_null(rt_snap_find(s, s->roots[i].id));
    assert_true(s->roots[i].kind <= 5);
    if (s->roots[i].kind == 4)
      assert_true(s->roots[i].container >= 1 && s->roots[i].container <= s->ntypes);
    else
      assert_int_equal(s->roots[i].container, 0);
  }
}
