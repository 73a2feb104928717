/* gs_source_mock.c - the mock heap source: a deterministic synthetic heap.
 *
 * The same knobs and seed give the same heap on every walk and platform,
 * and memory does not grow with the object count: every property a record
 * needs about another object (its ID, whether it is garbage) is a function
 * of that object's index, so objects are made as they are visited and never
 * kept. Ten million objects take a few seconds.
 *
 * Shape of a section of n objects (agent/README.md has the details):
 *  - Object i has ID base + 0x20*i + 8*jitter(i), jitter in 0..3: IDs ascend
 *    like allocation addresses and any index can be named before it is
 *    visited, so references go forward as well as backward.
 *  - The index range is cut into chunks; the tail of each chunk is garbage.
 *    No live object and no root names a garbage object, so garbage is
 *    unreachable by construction. Garbage references garbage of its own
 *    range (cycles) and live objects.
 *  - Live objects, numbered k = 0, 1, ... in index order, form groups of
 *    four. The head of group g (k = 4g) references the heads of groups
 *    2g+1 and 2g+2 and the three other members of its group, and the head
 *    of group 0 is a strong root, so every live object is reachable.
 *    Other references go to neighbours, a few popular early objects, or
 *    anything.
 *  - Types have Zipf popularity (gs_mock_catalog.c); most type records come
 *    just before the first object that uses them, a few after, and types no
 *    object uses are defined at the end of the section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_knob.h"
#include "gs_mock_catalog.h"
#include "gs_mock_rng.h"
#include "gs_reader.h"
#include "gs_source.h"
#include "gs_sources.h"

#define MOCK_MIN_TYPES     2u
#define MOCK_MAX_TYPES     1000000u
#define MOCK_MAX_OBJECTS   (UINT64_C(1) << 40)
#define MOCK_MAX_SECTIONS  1000u
#define MOCK_MAX_REFS      4096u      /* references of one object */
#define MOCK_MAX_DEGREE    1000000u   /* degree knob, in thousandths */
#define MOCK_MAX_WEIGHT    1000000u   /* one root kind weight */
#define MOCK_LARGE_SIZE    85000u     /* large object heap threshold */
#define MOCK_ID_BASE       UINT64_C(0x200000000)
#define MOCK_ID_STRIDE     UINT64_C(0x20)
#define MOCK_CHUNK         1024u      /* objects per live+garbage chunk */
#define MOCK_GROUP         4u         /* live objects per reachability group */
#define MOCK_LATE_FLUSH    65536u     /* objects between writes of late types */
#define MOCK_NO_TARGET     UINT64_MAX

enum { MOCK_DIST_GEOMETRIC, MOCK_DIST_UNIFORM, MOCK_DIST_FIXED };
enum { MOCK_TARGETS_LOCAL, MOCK_TARGETS_FORWARD, MOCK_TARGETS_RANDOM };
enum { MOCK_TYPE_UNWRITTEN = 0, MOCK_TYPE_WRITTEN = 1, MOCK_TYPE_WAITING = 2 };

const char gs_source_mock_help[] =
  "  mock[:KNOBS]  a deterministic synthetic heap. KNOBS is KEY=VALUE,...:\n"
  "    objects=N      objects, shared out between the sections (default 100000)\n"
  "    types=N        types defined in every section, 2-1000000\n"
  "                   (default objects/100, at least 20, at most 20000)\n"
  "    seed=S         seed of every random choice, decimal or 0x hex (default 1)\n"
  "    sections=N     AppDomain sections, 1-1000 (default 1)\n"
  "    garbage=PCT    share of objects unreachable by construction (default 10)\n"
  "    large=PCT      share of objects of 85000 bytes or more (default 0.1)\n"
  "    roots=PCT      share of live objects that are roots (default 1.5625)\n"
  "    kinds=W0/W1/W2/W3/W4/W5\n"
  "                   weights of root kinds 0-5: internal, local, finalizer,\n"
  "                   handle, static, runtime (default 6/35/4/25/20/10)\n"
  "    pinned=PCT weak=PCT interior=PCT\n"
  "                   share of roots with each flag (default: by kind, as in\n"
  "                   real heaps; giving one makes the others 0 unless given)\n"
  "    degree=MEAN    mean references per object, up to 3 decimals; the\n"
  "                   reachability tree alone gives about 1 - garbage/100\n"
  "                   (default auto: by type, about 2.2)\n"
  "    degree-dist=D  spread of references per object with degree=MEAN:\n"
  "                   geometric (default), uniform (0 to twice the mean), fixed\n"
  "    cycles=0|1     1 (default): references go both ways, the heap has cycles;\n"
  "                   0: every reference goes to a later object, no cycles\n"
  "    Percentages take up to 4 decimals. Object IDs are a function of the\n"
  "    knobs, so the mock supports --stable-ids.\n";

typedef struct mock_options {
  uint64_t objects;
  uint64_t types;
  uint64_t seed;
  uint32_t sections;
  uint32_t garbage_ppm, large_ppm, root_ppm;
  uint64_t kind_weight[GS_ROOT_KINDS];
  int flags_by_kind;              /* the per-kind flag mix of real heaps */
  uint32_t flag_ppm[4];           /* by flag index: none, pinned, weak, interior */
  int degree_by_type;
  uint64_t degree_milli;          /* mean references per object, in thousandths */
  unsigned degree_dist;
  int cycles;
  unsigned targets;               /* MOCK_TARGETS_* */
} mock_options;

typedef struct gs_mock {
  gs_source base;
  mock_options opt;
  gs_mock_catalog cat;
  uint64_t kind_total;            /* sum of kind weights */
  const gs_heap_visitor *v;       /* during a walk */
  gs_mock_rng rng;
  uint8_t *type_state;            /* per rank: MOCK_TYPE_* */
  uint32_t *waiting;              /* late types used but not yet defined */
  uint32_t nwaiting;
  unsigned root_combos;           /* bit kind*4 + flag index: combinations seen */
  /* geometry of the current section */
  uint64_t n;                     /* objects */
  uint64_t chunk;                 /* chunk length */
  uint64_t chunk_live;            /* live objects at the head of each chunk */
  uint64_t live;                  /* live objects in the section */
  uint64_t id_base;
  uint64_t id_key;
  uint64_t extra_milli;           /* degree=MEAN: mean references beyond the tree */
  uint64_t refs[MOCK_MAX_REFS];
} gs_mock;

static const unsigned mock_flag_bits[4] = {0, 1, 2, 4};
/* Kinds in the order the draw walks them: most common first. */
static const unsigned mock_kind_order[GS_ROOT_KINDS] = {1, 3, 4, 5, 0, 2};
static const uint64_t mock_default_weights[GS_ROOT_KINDS] = {6, 35, 4, 25, 20, 10};

/* ---- knobs ---- */

static void mock_defaults(mock_options *o) {
  memset(o, 0, sizeof *o);
  o->objects = 100000;
  o->seed = 1;
  o->sections = 1;
  o->garbage_ppm = 10 * 10000;
  o->large_ppm = 1000;
  o->root_ppm = 15625;            /* one live object in 64 */
  memcpy(o->kind_weight, mock_default_weights, sizeof o->kind_weight);
  o->flags_by_kind = 1;
  o->degree_by_type = 1;
  o->cycles = 1;
}

/* "W0/W1/W2/W3/W4/W5": six integer weights, not all zero. */
static int mock_parse_kinds(const gs_knob *k, mock_options *o, char *err, size_t cap) {
  const char *p = k->val, *e = k->val + k->val_len;
  uint64_t total = 0;
  unsigned i;
  for (i = 0; i < GS_ROOT_KINDS; i++) {
    const char *slash = p;
    gs_knob part;
    while (slash < e && *slash != '/') slash++;
    if ((slash == e) != (i == GS_ROOT_KINDS - 1))
      return gs_knob_bad(k, "not six weights W0/W1/W2/W3/W4/W5", err, cap);
    part = *k;
    part.val = p;
    part.val_len = (size_t)(slash - p);
    if (gs_knob_count(&part, 0, MOCK_MAX_WEIGHT, &o->kind_weight[i], err, cap))
      return gs_knob_bad(k, "weights must be integers 0-1000000", err, cap);
    total += o->kind_weight[i];
    p = slash + 1;
  }
  if (total == 0) return gs_knob_bad(k, "all weights are 0", err, cap);
  return GS_OK;
}

static int mock_parse_flag(const gs_knob *k, mock_options *o, unsigned index, char *err,
                           size_t cap) {
  if (o->flags_by_kind) {
    o->flags_by_kind = 0;
    memset(o->flag_ppm, 0, sizeof o->flag_ppm);
  }
  return gs_knob_percent(k, &o->flag_ppm[index], err, cap);
}

static int mock_parse_degree(const gs_knob *k, mock_options *o, char *err, size_t cap) {
  static const char *const words[] = {"auto", NULL};
  unsigned w = 0;
  if (gs_knob_word(k, words, &w, err, cap) == GS_OK) {
    o->degree_by_type = 1;
    return GS_OK;
  }
  o->degree_by_type = 0;
  return gs_knob_fixed(k, 3, MOCK_MAX_DEGREE, &o->degree_milli, err, cap);
}

static int mock_parse_knob(const gs_knob *k, mock_options *o, char *err, size_t cap) {
  static const char *const dists[] = {"geometric", "uniform", "fixed", NULL};
  static const char *const bools[] = {"0", "1", NULL};
  static const char *const targets[] = {"local", "forward", "random", NULL};
  uint64_t v = 0;
  unsigned w = 0;
  int rc;
  if (gs_knob_is(k, "objects")) return gs_knob_count(k, 0, MOCK_MAX_OBJECTS, &o->objects, err, cap);
  if (gs_knob_is(k, "types"))
    return gs_knob_count(k, MOCK_MIN_TYPES, MOCK_MAX_TYPES, &o->types, err, cap);
  if (gs_knob_is(k, "seed")) return gs_knob_count(k, 0, UINT64_MAX, &o->seed, err, cap);
  if (gs_knob_is(k, "sections")) {
    rc = gs_knob_count(k, 1, MOCK_MAX_SECTIONS, &v, err, cap);
    o->sections = (uint32_t)v;
    return rc;
  }
  if (gs_knob_is(k, "garbage")) return gs_knob_percent(k, &o->garbage_ppm, err, cap);
  if (gs_knob_is(k, "large")) return gs_knob_percent(k, &o->large_ppm, err, cap);
  if (gs_knob_is(k, "roots")) return gs_knob_percent(k, &o->root_ppm, err, cap);
  if (gs_knob_is(k, "kinds")) return mock_parse_kinds(k, o, err, cap);
  if (gs_knob_is(k, "pinned")) return mock_parse_flag(k, o, 1, err, cap);
  if (gs_knob_is(k, "weak")) return mock_parse_flag(k, o, 2, err, cap);
  if (gs_knob_is(k, "interior")) return mock_parse_flag(k, o, 3, err, cap);
  if (gs_knob_is(k, "degree")) return mock_parse_degree(k, o, err, cap);
  if (gs_knob_is(k, "degree-dist")) {
    rc = gs_knob_word(k, dists, &w, err, cap);
    o->degree_dist = w;
    return rc;
  }
  if (gs_knob_is(k, "targets")) {
    rc = gs_knob_word(k, targets, &w, err, cap);
    o->targets = w;
    return rc;
  }
  if (gs_knob_is(k, "cycles")) {
    rc = gs_knob_word(k, bools, &w, err, cap);
    o->cycles = (int)w;
    return rc;
  }
  snprintf(err, cap, "unknown knob '%.*s'", (int)k->key_len, k->key);
  return GS_EINVAL;
}

static int mock_parse(const char *options, mock_options *o, char *err, size_t cap) {
  const char *p = options;
  gs_knob k;
  int rc;
  mock_defaults(o);
  while ((rc = gs_knob_next(&p, &k, err, cap)) == 1)
    if ((rc = mock_parse_knob(&k, o, err, cap))) return rc;
  if (rc) return rc;
  if (!o->flags_by_kind &&
      (uint64_t)o->flag_ppm[1] + o->flag_ppm[2] + o->flag_ppm[3] > GS_MOCK_PPM) {
    snprintf(err, cap, "pinned + weak + interior is more than 100%%");
    return GS_EINVAL;
  }
  if (!o->flags_by_kind)
    o->flag_ppm[0] = GS_MOCK_PPM - o->flag_ppm[1] - o->flag_ppm[2] - o->flag_ppm[3];
  if (o->types == 0) {
    o->types = o->objects / 100;
    if (o->types < 20) o->types = 20;
    if (o->types > 20000) o->types = 20000;
  }
  return GS_OK;
}

/* ---- object geometry: everything about object i from i alone ---- */

static uint64_t mock_object_id(const gs_mock *m, uint64_t i) {
  return m->id_base + MOCK_ID_STRIDE * i + 8 * (gs_mock_mix(m->id_key ^ i) & 3);
}

static int mock_is_garbage(const gs_mock *m, uint64_t i) {
  return i % m->chunk >= m->chunk_live;
}

static uint64_t mock_live_index(const gs_mock *m, uint64_t k) {
  return (k / m->chunk_live) * m->chunk + k % m->chunk_live;
}

static uint64_t mock_live_number(const gs_mock *m, uint64_t i) {
  return (i / m->chunk) * m->chunk_live + i % m->chunk;
}

/* ---- types ---- */

static int mock_define_type(gs_mock *m, uint32_t rank) {
  const gs_mock_type *t = &m->cat.types[rank];
  m->type_state[rank] = MOCK_TYPE_WRITTEN;
  return m->v->type(m->v->ctx, t->id, m->cat.names + t->name_off, t->name_len);
}

/* Makes sure type rank is or will be defined in this section. */
static int mock_use_type(gs_mock *m, uint32_t rank) {
  if (m->type_state[rank] != MOCK_TYPE_UNWRITTEN) return GS_OK;
  if (m->cat.types[rank].late) {
    m->type_state[rank] = MOCK_TYPE_WAITING;
    m->waiting[m->nwaiting++] = rank;
    return GS_OK;
  }
  return mock_define_type(m, rank);
}

static int mock_flush_late_types(gs_mock *m) {
  uint32_t i;
  int err;
  for (i = 0; i < m->nwaiting; i++)
    if ((err = mock_define_type(m, m->waiting[i]))) return err;
  m->nwaiting = 0;
  return GS_OK;
}

/* Types no object used: loaded types without instances, as real heaps have. */
static int mock_define_unused_types(gs_mock *m) {
  uint32_t r;
  int err;
  for (r = 0; r < m->cat.ntypes; r++)
    if (m->type_state[r] == MOCK_TYPE_UNWRITTEN && (err = mock_define_type(m, r))) return err;
  return GS_OK;
}

/* ---- references ---- */

/* Live number of a target for live object k: a neighbour, one of the
 * popular long-lived objects at the start of the heap, or anything. */
static uint64_t mock_pick_local(gs_mock *m, uint64_t k) {
  uint64_t pick = gs_mock_below(&m->rng, 100);
  if (pick < 55) {
    uint64_t d = 1 + gs_mock_below(&m->rng, 48);
    if (gs_mock_below(&m->rng, 2) && k >= d) return k - d;
    return k + d < m->live ? k + d : k - (k >= d ? d : 0);
  }
  if (pick < 80) {
    uint64_t u = gs_mock_below(&m->rng, 2048);
    return (u * u / 2048) % m->live;
  }
  return gs_mock_below(&m->rng, m->live);
}

/* The local pick, mirrored ahead of k or drawn anywhere, by the targets knob. */
static uint64_t mock_pick_live(gs_mock *m, uint64_t k) {
  uint64_t t;
  if (m->opt.targets == MOCK_TARGETS_RANDOM) return gs_mock_below(&m->rng, m->live);
  t = mock_pick_local(m, k);
  if (m->opt.targets == MOCK_TARGETS_FORWARD && t < k && k + (k - t) < m->live) t = k + (k - t);
  return t;
}

/* ID of a live target for live object k; with forward set only objects
 * after k qualify (no cycles), and there may be none. */
static uint64_t mock_live_target(gs_mock *m, uint64_t k, int forward) {
  uint64_t t = mock_pick_live(m, k);
  if (forward && t <= k) {
    if (k + 1 >= m->live) return MOCK_NO_TARGET;
    t = k + 1 + t % (m->live - k - 1);
  }
  return mock_object_id(m, mock_live_index(m, t));
}

/* A target for garbage object i: garbage of its own range, or live; with
 * cycles off, only objects after i. */
static uint64_t mock_garbage_target(gs_mock *m, uint64_t i) {
  uint64_t start = i - i % m->chunk + m->chunk_live;
  uint64_t end = start - m->chunk_live + m->chunk, t;
  if (end > m->n) end = m->n;
  if (m->live == 0 || gs_mock_below(&m->rng, 100) < 60) {
    t = start + gs_mock_below(&m->rng, end - start);
    if (!m->opt.cycles && t <= i) {
      if (i + 1 >= end) return MOCK_NO_TARGET;
      t = i + 1 + (t - start) % (end - i - 1);
    }
    return mock_object_id(m, t);
  }
  /* the last live object of i's chunk: a forward pick lands after i */
  return mock_live_target(m, mock_live_number(m, i - i % m->chunk) + m->chunk_live - 1,
                          !m->opt.cycles);
}

static size_t mock_add_targets(gs_mock *m, uint64_t i, uint64_t k, int garbage, size_t nrefs,
                               uint64_t want) {
  while (want-- > 0 && nrefs < MOCK_MAX_REFS) {
    uint64_t id = garbage ? mock_garbage_target(m, i) : mock_live_target(m, k, !m->opt.cycles);
    if (id != MOCK_NO_TARGET) m->refs[nrefs++] = id;
  }
  return nrefs;
}

/* Non-null slots among n pointer slots: about three in four of a class's
 * fields, one in two of an array's elements (arrays are grown ahead of use). */
static uint64_t mock_nonnull(gs_mock *m, uint64_t n, int array) {
  uint64_t set = 0;
  while (n > 0) {
    uint64_t bits = gs_mock_rng_next(&m->rng);
    uint64_t null = array ? bits : bits & (bits >> 32);
    uint64_t j, c = n < 32 ? n : 32;
    for (j = 0; j < c; j++) set += !((null >> j) & 1);
    n -= c;
  }
  return set;
}

/* degree=MEAN: references beyond the tree, with mean extra_milli / 1000. */
static uint64_t mock_extra_degree(gs_mock *m) {
  uint64_t mean = m->extra_milli, n = 0, v;
  switch (m->opt.degree_dist) {
  case MOCK_DIST_FIXED:
    return mean / 1000 + (gs_mock_below(&m->rng, 1000) < mean % 1000);
  case MOCK_DIST_UNIFORM:
    v = gs_mock_below(&m->rng, 2 * mean + 1);
    return v / 1000 + (gs_mock_below(&m->rng, 1000) < v % 1000);
  default:
    /* go on with probability mean / (1 + mean): a geometric count */
    while (n < MOCK_MAX_REFS && gs_mock_below(&m->rng, 1000 + mean) < mean) n++;
    return n;
  }
}

/* ---- sizes ---- */

/* Arrays: a quarter empty, most short, a few with hundreds of elements. */
static uint64_t mock_array_length(gs_mock *m, uint64_t cap) {
  uint64_t pick = gs_mock_below(&m->rng, 100);
  if (pick < 25) return 0;
  if (pick < 87) return 1 + gs_mock_below(&m->rng, 8);
  if (pick < 99) return 8 + gs_mock_below(&m->rng, 24);
  return 64 + gs_mock_heavy(&m->rng, cap - 64);
}

/* Length of a variable-size object of type t; large ones reach 85000 bytes. */
static uint64_t mock_length(gs_mock *m, const gs_mock_type *t, int large) {
  if (large) {
    uint64_t bytes = MOCK_LARGE_SIZE + gs_mock_heavy(&m->rng, 64) * 16384 +
                     gs_mock_below(&m->rng, 65536);
    return (bytes + t->elem - 1) / t->elem;
  }
  if (t->shape == GS_MOCK_STRING) {
    uint64_t pick = gs_mock_below(&m->rng, 100);
    if (pick < 85) return 1 + gs_mock_below(&m->rng, 32);
    if (pick < 99) return 32 + gs_mock_below(&m->rng, 224);
    return 256 + gs_mock_below(&m->rng, 4096);
  }
  return mock_array_length(m, t->shape == GS_MOCK_REFS ? 1500 : 8000);
}

static uint64_t mock_size(const gs_mock_type *t, uint64_t len) {
  uint64_t size;
  if (t->shape == GS_MOCK_CLASS) return t->size;
  if (t->shape == GS_MOCK_STRING) size = 22 + 2 * len;
  else size = 24 + (uint64_t)t->elem * len;
  return size < 24 ? 24 : (size + 7) & ~UINT64_C(7);
}

/* ---- roots ---- */

static int mock_root(gs_mock *m, uint64_t id, unsigned kind, unsigned flag_index) {
  uint64_t container = 0;
  int err;
  if (kind == GS_ROOT_STATIC) {
    uint32_t rank = gs_mock_pool_pick(&m->cat.all, &m->rng);
    if ((err = mock_use_type(m, rank))) return err;
    container = m->cat.types[rank].id;
  }
  m->root_combos |= 1u << (kind * 4 + flag_index);
  return m->v->root(m->v->ctx, id, kind, mock_flag_bits[flag_index], container);
}

static unsigned mock_pick_kind(gs_mock *m) {
  uint64_t pick = gs_mock_below(&m->rng, m->kind_total);
  unsigned i;
  for (i = 0; i < GS_ROOT_KINDS - 1; i++) {
    unsigned kind = mock_kind_order[i];
    if (pick < m->opt.kind_weight[kind]) return kind;
    pick -= m->opt.kind_weight[kind];
  }
  return mock_kind_order[GS_ROOT_KINDS - 1];
}

/* Flags of real heaps: some locals pinned or interior, some handles weak
 * or pinned, some internal roots pinned. */
static unsigned mock_flags_by_kind(unsigned kind, uint64_t fpick) {
  if (kind == 1) return fpick < 10 ? 1 : fpick < 15 ? 3 : 0;
  if (kind == 3) return fpick < 15 ? 2 : fpick < 25 ? 1 : 0;
  if (kind == 0) return fpick < 20 ? 1 : 0;
  return 0;
}

static unsigned mock_flags_by_share(const gs_mock *m, uint64_t fpick) {
  const uint32_t *ppm = m->opt.flag_ppm;
  if (fpick < ppm[1]) return 1;
  if (fpick < (uint64_t)ppm[1] + ppm[2]) return 2;
  if (fpick < (uint64_t)ppm[1] + ppm[2] + ppm[3]) return 3;
  return 0;
}

static int mock_random_root(gs_mock *m, uint64_t id) {
  unsigned kind = mock_pick_kind(m);
  uint64_t fpick = gs_mock_below(&m->rng, m->opt.flags_by_kind ? 100 : GS_MOCK_PPM);
  unsigned flag_index = m->opt.flags_by_kind ? mock_flags_by_kind(kind, fpick)
                                             : mock_flags_by_share(m, fpick);
  return mock_root(m, id, kind, flag_index);
}

/* The root of live object 0 holds the whole live graph: a strong handle,
 * or the most common kind when handles are switched off. */
static int mock_tree_root(gs_mock *m, uint64_t id) {
  unsigned kind = 3, i;
  if (m->opt.kind_weight[3] == 0)
    for (i = 0; i < GS_ROOT_KINDS; i++)
      if (m->opt.kind_weight[i] > m->opt.kind_weight[kind]) kind = i;
  return mock_root(m, id, kind, 0);
}

static int mock_flag_allowed(const gs_mock *m, unsigned flag_index) {
  return m->opt.flags_by_kind || m->opt.flag_ppm[flag_index] > 0;
}

/* Roots of every allowed kind and flag not seen yet, so that even small
 * heaps exercise them all. */
static int mock_missing_roots(gs_mock *m) {
  unsigned kind, f;
  int err;
  if (m->live == 0) return GS_OK;
  for (kind = 0; kind < GS_ROOT_KINDS; kind++)
    for (f = 0; f < 4; f++) {
      uint64_t k = gs_mock_below(&m->rng, m->live);
      if (m->root_combos & (1u << (kind * 4 + f))) continue;
      if (m->opt.kind_weight[kind] == 0 || !mock_flag_allowed(m, f)) continue;
      if ((err = mock_root(m, mock_object_id(m, mock_live_index(m, k)), kind, f))) return err;
    }
  return GS_OK;
}

/* ---- objects ---- */

/* The tree references of the head of group g: the heads of groups 2g+1 and
 * 2g+2 and the other members of its own group. */
static size_t mock_tree_refs(gs_mock *m, uint64_t k) {
  uint64_t g = k / MOCK_GROUP, j;
  size_t nrefs = 0;
  for (j = 2 * g + 1; j <= 2 * g + 2; j++)
    if (j * MOCK_GROUP < m->live)
      m->refs[nrefs++] = mock_object_id(m, mock_live_index(m, j * MOCK_GROUP));
  for (j = k + 1; j < k + MOCK_GROUP && j < m->live; j++)
    m->refs[nrefs++] = mock_object_id(m, mock_live_index(m, j));
  return nrefs;
}

/* References an object of type t holds besides the tree's. */
static uint64_t mock_want_refs(gs_mock *m, const gs_mock_type *t, uint64_t len, int head,
                               int large) {
  uint64_t slots = 0, want;
  if (!m->opt.degree_by_type) return mock_extra_degree(m);
  if (t->shape == GS_MOCK_CLASS) slots = t->fields;
  else if (t->shape == GS_MOCK_REFS) slots = len;
  if (head) slots = slots > MOCK_GROUP + 1 ? slots - (MOCK_GROUP + 1) : 0;
  if (slots == 0) return 0;
  want = large ? 20 + gs_mock_below(&m->rng, 300)
               : mock_nonnull(m, slots, t->shape == GS_MOCK_REFS);
  return want > slots ? slots : want;
}

/* Visits object i of the section, with its roots. */
static int mock_object(gs_mock *m, uint64_t i) {
  int garbage = mock_is_garbage(m, i);
  uint64_t k = garbage ? 0 : mock_live_number(m, i);
  int head = !garbage && k % MOCK_GROUP == 0;
  int large = m->opt.large_ppm > 0 && gs_mock_chance(&m->rng, m->opt.large_ppm);
  uint64_t id = mock_object_id(m, i), len = 0, want;
  int root = !garbage && (k == 0 || gs_mock_chance(&m->rng, m->opt.root_ppm));
  int root_first = root && k != 0 && gs_mock_below(&m->rng, 10) == 0;
  /* a large head must hold references: System.Object[] */
  uint32_t rank = large && head ? 1
                  : gs_mock_pool_pick(large ? &m->cat.large : head ? &m->cat.head : &m->cat.all,
                                      &m->rng);
  const gs_mock_type *t = &m->cat.types[rank];
  size_t nrefs = 0;
  int err;

  if ((err = mock_use_type(m, rank))) return err;
  if (t->shape != GS_MOCK_CLASS) len = mock_length(m, t, large);
  if (head && t->shape == GS_MOCK_REFS && len < MOCK_GROUP + 1) len = MOCK_GROUP + 1;
  if (head) nrefs = mock_tree_refs(m, k);
  want = mock_want_refs(m, t, len, head, large);
  nrefs = mock_add_targets(m, i, k, garbage, nrefs, want);

  if (root_first && (err = mock_random_root(m, id))) return err;
  err = m->v->object(m->v->ctx, id, t->id, mock_size(t, len), m->refs, nrefs);
  if (err || !root || root_first) return err;
  if ((err = k == 0 ? mock_tree_root(m, id) : mock_random_root(m, id))) return err;
  if (gs_mock_below(&m->rng, 16) == 0) return mock_random_root(m, id);
  return GS_OK;
}

/* ---- sections ---- */

static void mock_section_geometry(gs_mock *m, uint32_t s, uint64_t n) {
  uint64_t garbage, full, rest;
  m->n = n;
  m->chunk = n < MOCK_CHUNK ? (n ? n : 1) : MOCK_CHUNK;
  garbage = (m->chunk * m->opt.garbage_ppm + GS_MOCK_PPM / 2) / GS_MOCK_PPM;
  m->chunk_live = m->chunk - garbage;
  full = n / m->chunk;
  rest = n % m->chunk;
  /* with no live object (all garbage) nothing divides by chunk_live */
  m->live = full * m->chunk_live + (rest < m->chunk_live ? rest : m->chunk_live);
  m->id_key = gs_mock_mix(m->opt.seed ^ (UINT64_C(0x6964) + s));
  m->extra_milli = 0;
  if (!m->opt.degree_by_type && n > 0) {
    uint64_t tree_milli = m->live ? (m->live - 1) * 1000 / n : 0;
    if (m->opt.degree_milli > tree_milli) m->extra_milli = m->opt.degree_milli - tree_milli;
  }
}

/* Generations as a runtime would lay them out over the section's address
 * range: the oldest objects first, in generation 2, the newest in 0. */
static int mock_generations(gs_mock *m) {
  uint64_t span = m->n * MOCK_ID_STRIDE, start = m->id_base;
  uint64_t used[3];
  unsigned g;
  int err;
  used[2] = span / 10 * 9;
  used[1] = span / 100 * 8;
  used[0] = span - used[2] - used[1];
  for (g = 3; g-- > 0;) {
    uint64_t reserved = (used[g] + 0xffff) & ~UINT64_C(0xffff);
    if ((err = m->v->generation(m->v->ctx, g, start, used[g], reserved))) return err;
    start += used[g];
  }
  return GS_OK;
}

static void mock_section_name(uint32_t s, char *buf, size_t cap) {
  if (s == 0) snprintf(buf, cap, "Contoso.Inventory.exe");
  else snprintf(buf, cap, "Contoso Plugin Host %u", (unsigned)s);
}

static int mock_section(gs_mock *m, uint32_t s, uint64_t n, uint64_t *id_next) {
  char name[64];
  uint64_t i;
  int err;

  mock_section_geometry(m, s, n);
  /* sections of one process share the address space: each gets its range */
  m->id_base = *id_next;
  *id_next += (n * MOCK_ID_STRIDE + 0x1000000) & ~UINT64_C(0xffffff);
  gs_mock_rng_seed(&m->rng, m->opt.seed ^ (UINT64_C(0x73656374) + s));
  memset(m->type_state, 0, m->cat.ntypes);
  m->nwaiting = 0;
  m->root_combos = 0;
  mock_section_name(s, name, sizeof name);
  if ((err = m->v->section(m->v->ctx, name, strlen(name)))) return err;
  for (i = 0; i < n; i++) {
    if ((err = mock_object(m, i))) return err;
    if ((i + 1) % MOCK_LATE_FLUSH == 0 && (err = mock_flush_late_types(m))) return err;
  }
  if ((err = mock_missing_roots(m)) || (err = mock_flush_late_types(m)) ||
      (err = mock_define_unused_types(m)) || (err = mock_generations(m)))
    return err;
  return m->v->section_end(m->v->ctx);
}

static int mock_walk(gs_source *src, const gs_heap_visitor *v) {
  gs_mock *m = (gs_mock *)src;
  uint64_t per = m->opt.objects / m->opt.sections, id_next = MOCK_ID_BASE;
  uint32_t s;
  int err = GS_OK;
  m->v = v;
  m->base.pause_us = 0;
  for (s = 0; s < m->opt.sections && !err; s++)
    err = mock_section(m, s, per + (s == 0 ? m->opt.objects % m->opt.sections : 0), &id_next);
  m->v = NULL;
  return err;
}

static void mock_free(gs_source *src) {
  gs_mock *m = (gs_mock *)src;
  if (!m) return;
  gs_mock_catalog_free(&m->cat);
  free(m->type_state);
  free(m->waiting);
  free(m);
}

static const gs_source_ops mock_ops = {"mock", mock_walk, mock_free, NULL, NULL, NULL, NULL};

int gs_source_mock_new(gs_source **out, const char *options, char *err, size_t errcap) {
  gs_mock *m;
  unsigned i;
  int rc;
  *out = NULL;
  if (!(m = calloc(1, sizeof *m))) {
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  m->base.ops = &mock_ops;
  m->base.stable_ids = 1;       /* IDs are a function of the knobs */
  if ((rc = mock_parse(options, &m->opt, err, errcap))) {
    mock_free(&m->base);
    return rc;
  }
  for (i = 0; i < GS_ROOT_KINDS; i++) m->kind_total += m->opt.kind_weight[i];
  rc = gs_mock_catalog_build(&m->cat, (uint32_t)m->opt.types, m->opt.seed);
  m->type_state = malloc(m->opt.types);
  m->waiting = malloc(sizeof *m->waiting * m->opt.types);
  if (rc || !m->type_state || !m->waiting) {
    snprintf(err, errcap, "out of memory for %llu types", (unsigned long long)m->opt.types);
    mock_free(&m->base);
    return GS_ENOMEM;
  }
  *out = &m->base;
  return GS_OK;
}
