/* test_rt.c - the instrumented GC runtime: reachability, generations,
 * compaction and its moved ranges, pinning, large objects, weak handles,
 * finalization, roots of every kind, stable identities, exhaustion. */
#include "gs_unit.h"

#include <stdlib.h>

#include "gs_rt.h"
#include "rt_snap.h"

/* ---- fixtures ---- */

typedef struct node {
  gs_rt_obj *a, *b;
  int64_t value;
} node;

typedef struct resource {
  gs_rt_obj *payload;
  int64_t handle;
} resource;

#define N(o) ((node *)gs_rt_body(o))

static uint32_t t_node, t_res, t_cfg, t_nodes;

typedef struct rt_opts {
  size_t arena, gen0, mark, remset;
  int stress;
} rt_opts;

static gs_rt *open_rt(rt_opts o) {
  static const size_t node_refs[] = {offsetof(node, a), offsetof(node, b)};
  static const size_t res_refs[] = {offsetof(resource, payload)};
  gs_rt_type_desc d[4];
  gs_rt_config c;
  gs_rt *rt;
  memset(&c, 0, sizeof c);
  c.arena_bytes = o.arena ? o.arena : (size_t)4 << 20;
  c.gen0_budget = o.gen0;
  c.mark_stack = o.mark;
  c.remembered = o.remset;
  c.stress = o.stress;
  c.domain = "Test.exe";
  gsu_assert_ok(gs_rt_new(&rt, &c));
  memset(d, 0, sizeof d);
  d[0].name = "Test.Node";
  d[0].kind = GS_RT_INSTANCE;
  d[0].body = sizeof(node);
  d[0].refs = node_refs;
  d[0].nrefs = 2;
  d[1].name = "Test.Resource";
  d[1].kind = GS_RT_INSTANCE;
  d[1].body = sizeof(resource);
  d[1].refs = res_refs;
  d[1].nrefs = 1;
  d[1].flags = GS_RT_FINALIZABLE;
  d[2].name = "Test.Config";
  d[2].kind = GS_RT_INSTANCE;
  d[3].name = "Test.Node[]";
  d[3].kind = GS_RT_REF_ARRAY;
  gsu_assert_ok(gs_rt_type_new(rt, &d[0], &t_node));
  gsu_assert_ok(gs_rt_type_new(rt, &d[1], &t_res));
  gsu_assert_ok(gs_rt_type_new(rt, &d[2], &t_cfg));
  gsu_assert_ok(gs_rt_type_new(rt, &d[3], &t_nodes));
  return rt;
}

static gs_rt *open_default(void) {
  rt_opts o;
  memset(&o, 0, sizeof o);
  return open_rt(o);
}

static gs_rt_obj *new_node(gs_rt *rt, int64_t value) {
  gs_rt_obj *o = gs_rt_new_object(rt, t_node);
  assert_non_null(o);
  N(o)->value = value;
  return o;
}

static void link_a(gs_rt *rt, gs_rt_obj *from, gs_rt_obj *to) {
  gs_rt_write(rt, from, &N(from)->a, to);
}

static void link_b(gs_rt *rt, gs_rt_obj *from, gs_rt_obj *to) {
  gs_rt_write(rt, from, &N(from)->b, to);
}

static void garbage(gs_rt *rt, int n) {
  while (n--) new_node(rt, -1);
}

static uint64_t rng_state = 1;
static uint32_t rnd(uint32_t n) {
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return (uint32_t)((z ^ (z >> 31)) % n);
}

/* ---- moved ranges ---- */

typedef struct ranges {
  uintptr_t from[4096], to[4096];
  size_t len[4096];
  size_t n;
} ranges;

/* Keeps the ranges of the last collection (the caller resets n before it). */
static void on_moved(void *ctx, uintptr_t from, uintptr_t to, size_t len) {
  ranges *r = ctx;
  if (r->n == 4096) r->n = 0;
  assert_true(len > 0 && len % 8 == 0);
  assert_true(to <= from);   /* sliding compaction */
  r->from[r->n] = from;
  r->to[r->n] = to;
  r->len[r->n] = len;
  r->n++;
}

/* Ranges come in address order and do not overlap, before or after. */
static void ranges_check(const ranges *r) {
  size_t i;
  for (i = 1; i < r->n; i++) {
    assert_true(r->from[i] >= r->from[i - 1] + r->len[i - 1]);
    assert_true(r->to[i] >= r->to[i - 1] + r->len[i - 1]);
  }
}

/* The new address of an object that was at old, if a range holds it. */
static int ranges_map(const ranges *r, uintptr_t old, uintptr_t *out) {
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (old < r->from[mid]) hi = mid;
    else if (old >= r->from[mid] + r->len[mid]) lo = mid + 1;
    else {
      *out = r->to[mid] + (old - r->from[mid]);
      return 1;
    }
  }
  return 0;
}

/* ---- reachability ---- */

/* A full capture holds exactly what roots reach, strong roots only. */
static void test_full_reachability(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *a = NULL, *st = NULL, *o;
  gs_rt_handle strong, weak;
  uint64_t ida, idb, idc, idd, ide, idf, idg, idh, idi, idj, idk;
  rt_snap s;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &a, 0));
  gsu_assert_ok(gs_rt_static(rt, &st, t_cfg));
  a = new_node(rt, 1);                    /* a -> b -> c from a local */
  link_a(rt, a, new_node(rt, 2));
  link_a(rt, N(a)->a, new_node(rt, 3));
  ida = gs_rt_id(a), idb = gs_rt_id(N(a)->a), idc = gs_rt_id(N(N(a)->a)->a);
  o = new_node(rt, 4);                    /* d -> e, unrooted */
  link_a(rt, o, new_node(rt, 5));
  idd = gs_rt_id(o), ide = gs_rt_id(N(o)->a);
  o = new_node(rt, 6);                    /* f <-> g, an unrooted cycle */
  link_a(rt, o, new_node(rt, 7));
  link_a(rt, N(o)->a, o);
  idf = gs_rt_id(o), idg = gs_rt_id(N(o)->a);
  st = new_node(rt, 8);                   /* h, a static */
  idh = gs_rt_id(st);
  o = new_node(rt, 9);                    /* i, a strong handle */
  idi = gs_rt_id(o);
  gsu_assert_ok(gs_rt_handle_new(rt, o, GS_RT_STRONG, &strong));
  o = new_node(rt, 10);                   /* j -> k, only a weak handle */
  link_b(rt, o, new_node(rt, 11));
  idj = gs_rt_id(o), idk = gs_rt_id(N(o)->b);
  gsu_assert_ok(gs_rt_handle_new(rt, o, GS_RT_WEAK, &weak));

  rt_snap_take(rt, GS_RT_STABLE_IDS, &s);
  rt_snap_check(&s);
  assert_non_null(rt_snap_find(&s, ida));
  assert_non_null(rt_snap_find(&s, idb));
  assert_non_null(rt_snap_find(&s, idc));
  assert_non_null(rt_snap_find(&s, idh));
  assert_non_null(rt_snap_find(&s, idi));
  assert_null(rt_snap_find(&s, idd));
  assert_null(rt_snap_find(&s, ide));
  assert_null(rt_snap_find(&s, idf));
  assert_null(rt_snap_find(&s, idg));
  assert_null(rt_snap_find(&s, idj));
  assert_null(rt_snap_find(&s, idk));
  assert_null(gs_rt_handle_get(rt, weak));
  assert_int_equal(gs_rt_id(gs_rt_handle_get(rt, strong)), idi);
  assert_int_equal(rt_snap_count_type(&s, t_node), 5);
  rt_snap_free(&s);
  gs_rt_free(rt);
}

/* A young collection keeps exactly the young objects reachable from the
 * roots, and its moved ranges map every survivor and its fields. */
static void test_young_reachability(void **state) {
  enum { COUNT = 400, ROOTS = 24 };
  rt_opts opt = {(size_t)4 << 20, (size_t)2 << 20, 0, 0, 0};
  gs_rt *rt = open_rt(opt);
  gs_rt_obj *nodes[COUNT], *slots[ROOTS];
  uintptr_t addr[COUNT], moved[COUNT];
  uint64_t ids[COUNT];
  int a[COUNT], b[COUNT], reach[COUNT], stack[COUNT * 3], sp = 0, i, kept = 0;
  ranges *r = calloc(1, sizeof *r);
  gs_rt_stats st;
  (void)state;
  assert_non_null(r);
  gs_rt_get_stats(rt, &st);
  for (i = 0; i < ROOTS; i++) {
    slots[i] = NULL;
    gsu_assert_ok(gs_rt_local(rt, &slots[i], 0));
  }
  for (i = 0; i < COUNT; i++) {    /* well under the gen0 budget: no collection */
    nodes[i] = new_node(rt, i);
    a[i] = i && rnd(3) ? (int)rnd((uint32_t)i) : -1;
    b[i] = i && rnd(2) ? (int)rnd((uint32_t)i) : -1;
    if (a[i] >= 0) link_a(rt, nodes[i], nodes[a[i]]);
    if (b[i] >= 0) link_b(rt, nodes[i], nodes[b[i]]);
    addr[i] = (uintptr_t)nodes[i];
    ids[i] = gs_rt_id(nodes[i]);
    reach[i] = 0;
  }
  for (i = 0; i < ROOTS; i++) slots[i] = nodes[COUNT / 2 + (int)rnd(COUNT / 2)];
  for (i = 0; i < ROOTS; i++) {
    int j;
    for (j = 0; j < COUNT; j++)
      if ((uintptr_t)slots[i] == addr[j]) stack[sp++] = j;
  }
  while (sp) {
    int j = stack[--sp];
    if (reach[j]) continue;
    reach[j] = 1;
    if (a[j] >= 0) stack[sp++] = a[j];
    if (b[j] >= 0) stack[sp++] = b[j];
  }
  gs_rt_on_moved(rt, on_moved, r);
  gs_rt_collect(rt, 0);
  ranges_check(r);
  for (i = 0; i < COUNT; i++) {
    int live = ranges_map(r, addr[i], &moved[i]);
    assert_int_equal(live, reach[i]);
    kept += live;
    if (!live) continue;
    assert_int_equal(gs_rt_id((gs_rt_obj *)moved[i]), ids[i]);
    assert_int_equal(N((gs_rt_obj *)moved[i])->value, i);
    assert_int_equal(gs_rt_generation(rt, (gs_rt_obj *)moved[i]), 1);
  }
  assert_true(kept > 0 && kept < COUNT);
  for (i = 0; i < COUNT; i++) {   /* fields point at the new addresses */
    gs_rt_obj *o = (gs_rt_obj *)moved[i];
    if (!reach[i]) continue;
    assert_true(a[i] < 0 ? N(o)->a == NULL : (uintptr_t)N(o)->a == moved[a[i]]);
    assert_true(b[i] < 0 ? N(o)->b == NULL : (uintptr_t)N(o)->b == moved[b[i]]);
  }
  gs_rt_collect(rt, 1);
  for (i = 0; i < ROOTS; i++) assert_int_equal(gs_rt_generation(rt, slots[i]), 2);
  gs_rt_get_stats(rt, &st);
  assert_int_equal(st.collections[0], 1);
  assert_int_equal(st.collections[1], 1);
  gs_rt_free(rt);
  free(r);
}

/* Old objects keep young ones alive through the remembered set, and a young
 * collection updates the old object's field when the young one moves. */
static void test_old_to_young(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *old = NULL, *young;
  uint64_t id;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &old, 0));
  old = new_node(rt, 1);
  gs_rt_collect(rt, 1);
  gs_rt_collect(rt, 1);
  assert_int_equal(gs_rt_generation(rt, old), 2);
  garbage(rt, 100);
  young = new_node(rt, 2);
  id = gs_rt_id(young);
  assert_int_equal(gs_rt_generation(rt, young), 0);
  link_a(rt, old, young);
  gs_rt_collect(rt, 0);
  assert_int_equal(gs_rt_id(N(old)->a), id);
  assert_int_equal(N(N(old)->a)->value, 2);
  assert_int_equal(gs_rt_generation(rt, N(old)->a), 1);
  garbage(rt, 100);
  gs_rt_collect(rt, 1);                   /* still remembered: gen2 -> gen1 */
  assert_int_equal(gs_rt_id(N(old)->a), id);
  assert_int_equal(gs_rt_generation(rt, N(old)->a), 2);
  gs_rt_free(rt);
}

/* Random mutation, collections of every generation, pins and large
 * objects; a shadow record of (address, identity) taken before each
 * collection must map through the moved ranges to the same identity. */
static void test_moved_ranges_shadow(void **state) {
  enum { SLOTS = 32, PINS = 6, TRACK = 30000 };
  rt_opts opt = {(size_t)8 << 20, (size_t)64 << 10, 0, 0, 0};
  gs_rt *rt = open_rt(opt);
  gs_rt_obj *slots[SLOTS], *tmp = NULL;
  gs_rt_handle *weak = calloc(TRACK, sizeof *weak), pins[PINS];
  uintptr_t *old = calloc(TRACK, sizeof *old), pin_addr[PINS];
  uint64_t *ids = calloc(TRACK, sizeof *ids);
  size_t nweak = 0, i, j, moved_seen = 0, died = 0;
  ranges *r = calloc(1, sizeof *r);
  int round, k, npins = 0;
  (void)state;
  assert_true(weak && old && ids && r);
  for (i = 0; i < SLOTS; i++) {
    slots[i] = NULL;
    gsu_assert_ok(gs_rt_local(rt, &slots[i], 0));
  }
  gsu_assert_ok(gs_rt_local(rt, &tmp, 0));
  gs_rt_on_moved(rt, on_moved, r);
  for (round = 0; round < 150; round++) {
    for (k = 0; k < 60; k++) {
      int s = (int)rnd(SLOTS), t = (int)rnd(SLOTS);
      switch (rnd(8)) {
      case 0: case 1:
        tmp = rnd(40) ? new_node(rt, round) : gs_rt_new_array(rt, GS_RT_T_BYTES, 90000);
        assert_non_null(tmp);
        if (nweak < TRACK) gsu_assert_ok(gs_rt_handle_new(rt, tmp, GS_RT_WEAK, &weak[nweak++]));
        if (gs_rt_type_of(tmp) == t_node || !slots[s] || gs_rt_type_of(slots[s]) != t_node)
          slots[s] = tmp;
        else
          link_b(rt, slots[s], tmp);
        break;
      case 2: case 3:
        if (slots[s] && slots[t] && gs_rt_type_of(slots[s]) == t_node) link_a(rt, slots[s], slots[t]);
        break;
      case 4:
        if (slots[s] && gs_rt_type_of(slots[s]) == t_node) slots[s] = N(slots[s])->a;
        break;
      case 5:
        slots[s] = NULL;
        break;
      case 6:
        if (npins < PINS && slots[s]) {
          gsu_assert_ok(gs_rt_handle_new(rt, slots[s], GS_RT_PINNING, &pins[npins]));
          pin_addr[npins++] = (uintptr_t)slots[s];
        }
        break;
      default:
        if (npins && rnd(4) == 0) {
          gs_rt_handle_free(rt, pins[--npins]);
        }
        break;
      }
      tmp = NULL;
    }
    /* the shadow: every tracked object still alive, where it is now */
    for (i = j = 0; i < nweak; i++) {
      gs_rt_obj *o = gs_rt_handle_get(rt, weak[i]);
      if (!o) {
        gs_rt_handle_free(rt, weak[i]);
        continue;
      }
      weak[j] = weak[i];
      old[j] = (uintptr_t)o;
      ids[j] = gs_rt_id(o);
      j++;
    }
    nweak = j;
    r->n = 0;
    gs_rt_collect(rt, round % 3);
    ranges_check(r);
    for (i = 0; i < nweak; i++) {
      gs_rt_obj *now = gs_rt_handle_get(rt, weak[i]);
      uintptr_t to;
      if (ranges_map(r, old[i], &to)) {
        assert_true((uintptr_t)now == to);
        assert_int_equal(gs_rt_id((gs_rt_obj *)to), ids[i]);
        moved_seen += to != old[i];
      } else if (now) {
        assert_true((uintptr_t)now == old[i]);    /* not collected: not moved */
        assert_int_equal(gs_rt_id(now), ids[i]);
      } else {
        died++;
      }
    }
    for (k = 0; k < npins; k++) assert_true((uintptr_t)gs_rt_handle_get(rt, pins[k]) == pin_addr[k]);
  }
  assert_true(moved_seen > 0);
  assert_true(died > 0);
  gs_rt_free(rt);
  free(weak);
  free(old);
  free(ids);
  free(r);
}

/* ---- weak handles ---- */

static void test_weak_handles(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *keep = NULL, *old = NULL, *o;
  gs_rt_handle w_dead, w_live, w_via_old, w_old;
  uint64_t id_live, id_via;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &keep, 0));
  gsu_assert_ok(gs_rt_local(rt, &old, 0));
  gsu_assert_ok(gs_rt_handle_new(rt, new_node(rt, 1), GS_RT_WEAK, &w_dead));
  garbage(rt, 50);
  keep = new_node(rt, 2);
  id_live = gs_rt_id(keep);
  gsu_assert_ok(gs_rt_handle_new(rt, keep, GS_RT_WEAK, &w_live));
  gs_rt_collect(rt, 0);                   /* young: the dead one is cleared */
  assert_null(gs_rt_handle_get(rt, w_dead));
  assert_true(gs_rt_handle_get(rt, w_live) == keep);
  assert_int_equal(gs_rt_id(gs_rt_handle_get(rt, w_live)), id_live);

  old = new_node(rt, 3);                  /* weakly held, reachable only from gen2 */
  gs_rt_collect(rt, 1);
  gs_rt_collect(rt, 1);
  assert_int_equal(gs_rt_generation(rt, old), 2);
  o = new_node(rt, 4);
  id_via = gs_rt_id(o);
  link_a(rt, old, o);
  gsu_assert_ok(gs_rt_handle_new(rt, o, GS_RT_WEAK, &w_via_old));
  gsu_assert_ok(gs_rt_handle_new(rt, old, GS_RT_WEAK, &w_old));
  gs_rt_collect(rt, 0);
  assert_non_null(gs_rt_handle_get(rt, w_via_old));
  assert_int_equal(gs_rt_id(gs_rt_handle_get(rt, w_via_old)), id_via);
  old = NULL;                             /* now only weakly held */
  gs_rt_collect(rt, 1);                   /* gen2 parent not collected: keeps it */
  assert_non_null(gs_rt_handle_get(rt, w_via_old));
  gs_rt_collect(rt, 2);
  assert_null(gs_rt_handle_get(rt, w_via_old));
  assert_null(gs_rt_handle_get(rt, w_old));
  assert_true(gs_rt_handle_get(rt, w_live) == keep);
  gs_rt_handle_free(rt, w_live);
  assert_null(gs_rt_handle_get(rt, w_live));   /* a freed handle reads NULL */
  gs_rt_free(rt);
}

/* ---- pinning and large objects ---- */

static void test_pinned_never_move(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *q = NULL, *in = NULL, *s = NULL;
  gs_rt_handle hp;
  uintptr_t p_at, q_at, in_at, s_at;
  int round, s_moved = 0;
  rt_snap snap;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &q, GS_RT_PINNED));
  gsu_assert_ok(gs_rt_local(rt, &in, GS_RT_INTERIOR));
  gsu_assert_ok(gs_rt_local(rt, &s, 0));
  garbage(rt, 30);
  gsu_assert_ok(gs_rt_handle_new(rt, new_node(rt, 1), GS_RT_PINNING, &hp));
  garbage(rt, 30);
  q = new_node(rt, 2);
  garbage(rt, 30);
  in = gs_rt_new_array(rt, GS_RT_T_BYTES, 100);
  garbage(rt, 30);
  s = new_node(rt, 3);
  p_at = (uintptr_t)gs_rt_handle_get(rt, hp), q_at = (uintptr_t)q, in_at = (uintptr_t)in;
  for (round = 0; round < 9; round++) {
    s_at = (uintptr_t)s;
    garbage(rt, 20);
    gs_rt_collect(rt, round % 3);
    assert_true((uintptr_t)gs_rt_handle_get(rt, hp) == p_at);
    assert_true((uintptr_t)q == q_at);
    assert_true((uintptr_t)in == in_at);
    s_moved += (uintptr_t)s != s_at;
    assert_int_equal(N(s)->value, 3);
  }
  assert_true(s_moved > 0);
  rt_snap_take(rt, 0, &snap);
  rt_snap_check(&snap);
  assert_int_equal(rt_snap_roots_of(&snap, p_at, 3, 1), 1);
  assert_int_equal(rt_snap_roots_of(&snap, q_at, 1, 1), 1);
  assert_int_equal(rt_snap_roots_of(&snap, in_at, 1, 5), 1);   /* interior implies pinned */
  rt_snap_free(&snap);
  gs_rt_free(rt);
}

static void test_large_objects(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *big = NULL, *arr = NULL, *o;
  uintptr_t big_at, arr_at;
  uint64_t child_id;
  int round;
  rt_snap snap;
  size_t i;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &big, 0));
  gsu_assert_ok(gs_rt_local(rt, &arr, 0));
  garbage(rt, 10);
  big = gs_rt_new_array(rt, GS_RT_T_BYTES, 100000);
  assert_non_null(big);
  assert_true(gs_rt_size(rt, big) >= GS_RT_LARGE_OBJECT);
  assert_int_equal(gs_rt_generation(rt, big), 2);
  arr = gs_rt_new_array(rt, t_nodes, 20000);   /* 160 KB of references */
  assert_non_null(arr);
  o = gs_rt_new_array(rt, GS_RT_T_BYTES, GS_RT_LARGE_OBJECT - 100);   /* just below */
  assert_true(gs_rt_generation(rt, o) == 0);
  big_at = (uintptr_t)big, arr_at = (uintptr_t)arr;
  o = new_node(rt, 7);                        /* a young object held by a large one */
  child_id = gs_rt_id(o);
  gsu_assert_ok(gs_rt_set_elem(rt, arr, 19999, o));
  assert_int_equal(gs_rt_set_elem(rt, arr, 20000, o), GS_EINVAL);
  for (round = 0; round < 6; round++) {
    garbage(rt, 40);
    gs_rt_collect(rt, round % 3);
    assert_true((uintptr_t)big == big_at);
    assert_true((uintptr_t)arr == arr_at);
    assert_int_equal(gs_rt_id(gs_rt_elem(arr, 19999)), child_id);
    assert_int_equal(N(gs_rt_elem(arr, 19999))->value, 7);
  }
  rt_snap_take(rt, 0, &snap);
  rt_snap_check(&snap);
  for (i = 0; i < snap.ngens; i++)
    if (snap.gens[i].gen == 3) {
      assert_true(big_at >= snap.gens[i].start && big_at < snap.gens[i].start + snap.gens[i].used);
      assert_true(arr_at >= snap.gens[i].start && arr_at < snap.gens[i].start + snap.gens[i].used);
    }
  assert_int_equal(snap.ngens, 4);
  rt_snap_free(&snap);
  big = NULL;                                 /* its space is reused */
  gs_rt_collect(rt, 2);
  o = gs_rt_new_array(rt, GS_RT_T_BYTES, 100000);
  assert_true((uintptr_t)o == big_at);
  gs_rt_free(rt);
}

/* Every object of a capture lies in one of its generation ranges, and the
 * ranges do not overlap. */
static void test_generation_ranges(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *keep = NULL;
  rt_snap s;
  size_t i, g, hits;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &keep, 0));
  keep = new_node(rt, 1);
  link_a(rt, keep, gs_rt_new_array(rt, GS_RT_T_BYTES, 120000));
  link_b(rt, keep, new_node(rt, 2));
  rt_snap_take(rt, 0, &s);
  assert_int_equal(s.ngens, 4);
  for (i = 0; i < s.nobjs; i++) {
    for (g = hits = 0; g < s.ngens; g++)
      hits += s.objs[i].id >= s.gens[g].start &&
              s.objs[i].id + s.objs[i].size <= s.gens[g].start + s.gens[g].used;
    assert_int_equal(hits, 1);
  }
  for (g = 0; g < s.ngens; g++) {
    assert_true(s.gens[g].used <= s.gens[g].reserved);
    if (s.gens[g].gen == 0) assert_int_equal(s.gens[g].used, 0);  /* after a full collection */
  }
  rt_snap_free(&s);
  gs_rt_free(rt);
}

/* ---- finalization ---- */

static void test_finalization(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *r, *r2, *f;
  uint64_t id_r, id_payload, id_r2;
  gs_rt_stats st;
  rt_snap s;
  (void)state;
  r = gs_rt_new_object(rt, t_res);
  assert_non_null(r);
  id_r = gs_rt_id(r);
  f = new_node(rt, 1);
  id_payload = gs_rt_id(f);
  gs_rt_write(rt, r, &((resource *)gs_rt_body(r))->payload, f);
  r2 = gs_rt_new_object(rt, t_res);
  id_r2 = gs_rt_id(r2);
  gs_rt_suppress_finalize(rt, r2);            /* disposed: dies at once */
  assert_null(gs_rt_next_finalizable(rt));

  rt_snap_take(rt, GS_RT_STABLE_IDS, &s);     /* unreachable: queued, kept one cycle */
  rt_snap_check(&s);
  assert_non_null(rt_snap_find(&s, id_r));
  assert_non_null(rt_snap_find(&s, id_payload));
  assert_null(rt_snap_find(&s, id_r2));
  assert_int_equal(rt_snap_roots_of(&s, id_r, 2, 0), 1);
  rt_snap_free(&s);
  gs_rt_get_stats(rt, &st);
  assert_int_equal(st.finalizer_queue, 1);

  gs_rt_collect(rt, 2);                       /* still waiting for its finalizer */
  f = gs_rt_next_finalizable(rt);
  assert_non_null(f);
  assert_int_equal(gs_rt_id(f), id_r);
  assert_int_equal(gs_rt_id(((resource *)gs_rt_body(f))->payload), id_payload);
  assert_null(gs_rt_next_finalizable(rt));

  rt_snap_take(rt, GS_RT_STABLE_IDS, &s);     /* finalized: gone at the next one */
  assert_null(rt_snap_find(&s, id_r));
  assert_null(rt_snap_find(&s, id_payload));
  assert_int_equal(rt_snap_count_type(&s, t_res), 0);
  rt_snap_free(&s);
  gs_rt_free(rt);
}

/* A live finalizable object stays registered; it is queued once it dies. */
static void test_finalization_later(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *keep = NULL;
  uint64_t id;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &keep, 0));
  keep = gs_rt_new_object(rt, t_res);
  id = gs_rt_id(keep);
  gs_rt_collect(rt, 0);
  gs_rt_collect(rt, 2);
  assert_null(gs_rt_next_finalizable(rt));
  keep = NULL;
  gs_rt_collect(rt, 1);          /* gen2 by now: a young collection does not see it */
  assert_null(gs_rt_next_finalizable(rt));
  gs_rt_collect(rt, 2);
  keep = gs_rt_next_finalizable(rt);
  assert_non_null(keep);
  assert_int_equal(gs_rt_id(keep), id);
  gs_rt_free(rt);
}

/* ---- roots ---- */

static void test_root_kinds(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *loc = NULL, *st = NULL, *s1, *s2;
  gs_rt_handle h;
  unsigned seen[6] = {0};
  rt_snap s;
  size_t i;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &loc, 0));
  gsu_assert_ok(gs_rt_static(rt, &st, t_cfg));
  assert_int_equal(gs_rt_static(rt, &st, 999), GS_EINVAL);
  assert_int_equal(gs_rt_local(rt, &loc, 2), GS_EINVAL);
  loc = new_node(rt, 1);
  st = gs_rt_new_object(rt, t_cfg);
  gsu_assert_ok(gs_rt_handle_new(rt, new_node(rt, 2), GS_RT_STRONG, &h));
  s1 = gs_rt_intern(rt, "Home", 4);
  s2 = gs_rt_intern(rt, "Work", 4);
  assert_true(s1 != s2);
  assert_true(gs_rt_intern(rt, "Home", 4) == s1);
  gs_rt_new_object(rt, t_res);            /* will be on the finalizer queue */
  gs_rt_collect(rt, 2);
  s1 = gs_rt_intern(rt, "Home", 4);       /* found again after moving */
  assert_int_equal(gs_rt_length(s1), 4);
  assert_int_equal(((uint16_t *)gs_rt_body(s1))[0], 'H');
  rt_snap_take(rt, GS_RT_STABLE_IDS, &s);
  rt_snap_check(&s);
  for (i = 0; i < s.nroots; i++) seen[s.roots[i].kind]++;
  for (i = 0; i < 6; i++) assert_true(seen[i] > 0);
  assert_int_equal(rt_snap_roots_of(&s, gs_rt_id(s1), 5, 0), 1);
  assert_int_equal(rt_snap_roots_of(&s, gs_rt_id(loc), 1, 0), 1);
  for (i = 0; i < s.nroots; i++)
    if (s.roots[i].kind == 4) {
      assert_int_equal(s.roots[i].container, t_cfg);
      assert_int_equal(s.roots[i].id, gs_rt_id(st));
    }
  assert_int_equal(rt_snap_roots_of(&s, gs_rt_id(gs_rt_handle_get(rt, h)), 3, 0), 1);
  rt_snap_free(&s);
  gs_rt_unwind(rt, 0);
  loc = NULL;
  rt_snap_take(rt, 0, &s);
  for (i = 0; i < s.nroots; i++) assert_true(s.roots[i].kind != 1);
  rt_snap_free(&s);
  gs_rt_free(rt);
}

/* ---- stable identities ---- */

static void test_stable_ids(void **state) {
  gs_rt *rt = open_default();
  gs_rt_obj *a = NULL, *b = NULL;
  rt_snap s1, s2, a1, a2;
  uint64_t id_a, id_b;
  uintptr_t addr1;
  size_t i;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &a, 0));
  gsu_assert_ok(gs_rt_local(rt, &b, 0));
  garbage(rt, 200);
  a = new_node(rt, 1);
  id_a = gs_rt_id(a);
  addr1 = (uintptr_t)a;
  rt_snap_take(rt, GS_RT_STABLE_IDS, &s1);
  assert_true((uintptr_t)a != addr1);        /* the collection moved it */
  rt_snap_take(rt, 0, &a1);
  garbage(rt, 200);
  b = new_node(rt, 2);
  id_b = gs_rt_id(b);
  link_a(rt, b, a);
  rt_snap_take(rt, GS_RT_STABLE_IDS, &s2);
  rt_snap_take(rt, 0, &a2);
  assert_non_null(rt_snap_find(&s1, id_a));
  assert_non_null(rt_snap_find(&s2, id_a));  /* same object, same ID */
  assert_null(rt_snap_find(&s1, id_b));
  assert_non_null(rt_snap_find(&s2, id_b));  /* a new object, a new ID */
  for (i = 0; i < s1.nobjs; i++) assert_true(s1.objs[i].id != id_b);
  assert_non_null(rt_snap_find(&a2, (uintptr_t)a));
  assert_null(rt_snap_find(&a1, addr1));     /* address IDs do not survive moves */
  assert_int_equal(s1.nobjs + 1, s2.nobjs);
  rt_snap_free(&s1);
  rt_snap_free(&s2);
  rt_snap_free(&a1);
  rt_snap_free(&a2);
  gs_rt_free(rt);
}

/* ---- limits ---- */

static void test_alloc_failure(void **state) {
  rt_opts opt = {(size_t)256 << 10, 0, 0, 0, 0};
  gs_rt *rt = open_rt(opt);
  gs_rt_obj *head = NULL, *o;
  size_t n = 0;
  rt_snap s;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &head, 0));
  for (;;) {
    o = gs_rt_new_object(rt, t_node);
    if (!o) break;
    link_a(rt, o, head);
    head = o;
    n++;
  }
  assert_true(n > 1000);
  assert_null(gs_rt_new_object(rt, t_node));
  assert_null(gs_rt_new_array(rt, GS_RT_T_BYTES, 200000));
  assert_null(gs_rt_new_array(rt, GS_RT_T_BYTES, (size_t)-1 / 2));
  assert_null(gs_rt_new_object(rt, 999));
  assert_null(gs_rt_new_array(rt, t_node, 1));   /* not an array type */
  rt_snap_take(rt, 0, &s);                       /* a full heap still captures */
  rt_snap_check(&s);
  assert_int_equal(rt_snap_count_type(&s, t_node), n);
  rt_snap_free(&s);
  head = NULL;
  assert_non_null(gs_rt_new_object(rt, t_node));
  assert_non_null(gs_rt_new_array(rt, GS_RT_T_BYTES, 100000));
  gs_rt_free(rt);
}

static void test_bad_config(void **state) {
  gs_rt_config c;
  gs_rt_type_desc d;
  gs_rt *rt;
  uint32_t id;
  size_t bad_refs[] = {4};
  (void)state;
  memset(&c, 0, sizeof c);
  c.arena_bytes = 1000;
  assert_int_equal(gs_rt_new(&rt, &c), GS_EINVAL);
  assert_null(rt);
  assert_int_equal(gs_rt_new(&rt, NULL), GS_EINVAL);
  rt = open_default();
  memset(&d, 0, sizeof d);
  d.name = "Bad.Type";
  d.kind = GS_RT_INSTANCE;
  d.body = 16;
  d.refs = bad_refs;                          /* misaligned reference field */
  d.nrefs = 1;
  assert_int_equal(gs_rt_type_new(rt, &d, &id), GS_EINVAL);
  d.nrefs = 0;
  d.name = "Bad\nName";
  assert_int_equal(gs_rt_type_new(rt, &d, &id), GS_EINVAL);
  assert_string_equal(gs_rt_type_name(rt, GS_RT_T_STRING), "System.String");
  assert_null(gs_rt_type_name(rt, 0));
  gs_rt_free(rt);
}

/* A mark stack of 4 entries overflows at once; marking stays complete. */
static void test_mark_stack_overflow(void **state) {
  rt_opts opt = {(size_t)4 << 20, 0, 4, 0, 0};
  gs_rt *rt = open_rt(opt);
  gs_rt_obj *arr = NULL, *list = NULL, *o;
  rt_snap s;
  size_t i;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &arr, 0));
  gsu_assert_ok(gs_rt_local(rt, &list, 0));
  arr = gs_rt_new_array(rt, t_nodes, 500);
  for (i = 0; i < 500; i++) {
    o = new_node(rt, (int64_t)i);
    gsu_assert_ok(gs_rt_set_elem(rt, arr, i, o));
    link_a(rt, o, new_node(rt, -2));
  }
  for (i = 0; i < 3000; i++) {
    o = new_node(rt, (int64_t)i);
    link_a(rt, o, list);
    list = o;
  }
  gs_rt_collect(rt, 0);
  rt_snap_take(rt, 0, &s);
  rt_snap_check(&s);
  assert_int_equal(rt_snap_count_type(&s, t_node), 500 * 2 + 3000);
  rt_snap_free(&s);
  for (i = 0; i < 500; i++) assert_int_equal(N(gs_rt_elem(arr, i))->value, (int64_t)i);
  gs_rt_free(rt);
}

/* A remembered set of 4 entries overflows; the next collection is full. */
static void test_remembered_overflow(void **state) {
  rt_opts opt = {(size_t)4 << 20, 0, 0, 4, 0};
  gs_rt *rt = open_rt(opt);
  gs_rt_obj *arr = NULL, *o;
  gs_rt_stats st;
  uint64_t ids[100];
  size_t i;
  (void)state;
  gsu_assert_ok(gs_rt_local(rt, &arr, 0));
  arr = gs_rt_new_array(rt, t_nodes, 100);
  for (i = 0; i < 100; i++) gs_rt_set_elem(rt, arr, i, new_node(rt, 0));
  gs_rt_collect(rt, 1);
  gs_rt_collect(rt, 1);
  for (i = 0; i < 100; i++) {                /* 100 old objects get a young child */
    garbage(rt, 3);
    o = new_node(rt, (int64_t)i);
    ids[i] = gs_rt_id(o);
    link_a(rt, gs_rt_elem(arr, i), o);
  }
  gs_rt_collect(rt, 0);
  gs_rt_get_stats(rt, &st);
  assert_int_equal(st.collections[2], 1);
  for (i = 0; i < 100; i++) {
    o = N(gs_rt_elem(arr, i))->a;
    assert_int_equal(gs_rt_id(o), ids[i]);
    assert_int_equal(N(o)->value, (int64_t)i);
  }
  gs_rt_free(rt);
}

/* ---- a model of the heap under stress collections ---- */

/* A collection at every allocation (generations in turn, freed memory
 * poisoned) while a random program mutates the heap; a model of the graph
 * by identity must match every capture exactly. */
static void test_stress_model(void **state) {
  enum { SLOTS = 24, MAXID = 40000, WEAK = 4 };
  rt_opts opt = {(size_t)4 << 20, 0, 0, 0, 1};
  gs_rt *rt = open_rt(opt);
  gs_rt_obj *slots[SLOTS], *tmp = NULL;
  uint64_t mslot[SLOTS], *ma = calloc(MAXID, 8), *mb = calloc(MAXID, 8), mweak[WEAK];
  unsigned char *isnode = calloc(MAXID, 1), *reach = calloc(MAXID, 1);
  uint64_t *stack = calloc(MAXID * 2, 8);
  gs_rt_handle weak[WEAK];
  int op, i, k;
  (void)state;
  assert_true(ma && mb && isnode && reach && stack);
  for (i = 0; i < SLOTS; i++) {
    slots[i] = NULL;
    mslot[i] = 0;
    gsu_assert_ok(gs_rt_local(rt, &slots[i], 0));
  }
  gsu_assert_ok(gs_rt_local(rt, &tmp, 0));
  for (i = 0; i < WEAK; i++) {
    gsu_assert_ok(gs_rt_handle_new(rt, NULL, GS_RT_WEAK, &weak[i]));
    mweak[i] = 0;
  }
  for (op = 0; op < 3000; op++) {
    int s = (int)rnd(SLOTS), t = (int)rnd(SLOTS);
    uint64_t id;
    switch (rnd(7)) {
    case 0: case 1:
      tmp = rnd(30) ? new_node(rt, op) : gs_rt_new_array(rt, GS_RT_T_BYTES, rnd(5) ? 40 : 90000);
      assert_non_null(tmp);
      id = gs_rt_id(tmp);
      assert_true(id < MAXID);
      isnode[id] = gs_rt_type_of(tmp) == t_node;
      if (rnd(2) || !slots[s] || !isnode[mslot[s]]) {
        slots[s] = tmp;
        mslot[s] = id;
      } else {
        link_b(rt, slots[s], tmp);
        mb[mslot[s]] = id;
      }
      tmp = NULL;
      break;
    case 2: case 3:
      if (slots[s] && isnode[mslot[s]]) {
        link_a(rt, slots[s], slots[t]);
        ma[mslot[s]] = mslot[t];
      }
      break;
    case 4:
      if (slots[s] && isnode[mslot[s]]) {
        slots[s] = N(slots[s])->a;
        mslot[s] = ma[mslot[s]];
      }
      break;
    case 5:
      slots[s] = NULL;
      mslot[s] = 0;
      break;
    default:
      k = (int)rnd(WEAK);
      gs_rt_handle_set(rt, weak[k], slots[s]);
      mweak[k] = mslot[s];
      break;
    }
    for (i = 0; i < SLOTS; i++)
      assert_int_equal(slots[i] ? gs_rt_id(slots[i]) : 0, mslot[i]);
    if (op % 150 == 149) {
      rt_snap snap;
      size_t n = 0, sp = 0, j, live = 0;
      memset(reach, 0, MAXID);
      for (i = 0; i < SLOTS; i++)
        if (mslot[i]) stack[sp++] = mslot[i];
      while (sp) {
        uint64_t x = stack[--sp];
        if (reach[x]) continue;
        reach[x] = 1;
        live++;
        if (isnode[x] && ma[x]) stack[sp++] = ma[x];
        if (isnode[x] && mb[x]) stack[sp++] = mb[x];
      }
      rt_snap_take(rt, GS_RT_STABLE_IDS, &snap);
      rt_snap_check(&snap);
      for (j = 0; j < snap.nobjs; j++) {
        const rt_snap_obj *o = &snap.objs[j];
        if (o->type != t_node && !(o->type == GS_RT_T_BYTES)) continue;
        assert_true(o->id < MAXID && reach[o->id]);
        n++;
        if (o->type == t_node) {
          size_t e = 0;
          if (ma[o->id]) assert_int_equal(snap.refs[o->first + e++], ma[o->id]);
          if (mb[o->id]) assert_int_equal(snap.refs[o->first + e++], mb[o->id]);
          assert_int_equal(o->nrefs, e);
        }
      }
      assert_int_equal(n, live);
      for (k = 0; k < WEAK; k++) {
        gs_rt_obj *w = gs_rt_handle_get(rt, weak[k]);
        if (mweak[k] && reach[mweak[k]]) assert_int_equal(gs_rt_id(w), mweak[k]);
        else assert_null(w);
        if (!w) mweak[k] = 0;
      }
      rt_snap_free(&snap);
    }
  }
  gs_rt_free(rt);
  free(ma);
  free(mb);
  free(isnode);
  free(reach);
  free(stack);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_full_reachability),
    cmocka_unit_test(test_young_reachability),
    cmocka_unit_test(test_old_to_young),
    cmocka_unit_test(test_moved_ranges_shadow),
    cmocka_unit_test(test_weak_handles),
    cmocka_unit_test(test_pinned_never_move),
    cmocka_unit_test(test_large_objects),
    cmocka_unit_test(test_generation_ranges),
    cmocka_unit_test(test_finalization),
    cmocka_unit_test(test_finalization_later),
    cmocka_unit_test(test_root_kinds),
    cmocka_unit_test(test_stable_ids),
    cmocka_unit_test(test_alloc_failure),
    cmocka_unit_test(test_bad_config),
    cmocka_unit_test(test_mark_stack_overflow),
    cmocka_unit_test(test_remembered_overflow),
    cmocka_unit_test(test_stress_model),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
