/* test_graph.c - the in-memory object graph: nodes, sizes, types and
 * references of small hand-written dumps, placeholders for objects not in the
 * dump, roots, reachability (weak roots, cycles), several sections, load
 * errors, the memory bound, IDs and sizes packed, and objects out of ID
 * order. */
#include "gs_unit.h"

#include <stdlib.h>

#include "gs_graph.h"

/* ---- helpers ------------------------------------------------------------ */

typedef struct loaded {
  char *text;           /* the reader reads it in place */
  gs_reader *reader;
} loaded;

static gs_reader *open_text(loaded *l, const char *text) {
  l->text = strdup(text);
  assert_non_null(l->text);
  gsu_assert_ok(gs_reader_new_buffer(&l->reader, l->text, strlen(l->text)));
  return l->reader;
}

static void close_text(loaded *l) {
  gs_reader_free(l->reader);
  free(l->text);
}

/* Loads the one section of text, checking that it is the only one. */
static gs_graph *load_one(loaded *l, const char *text) {
  gs_graph *g = NULL, *none = NULL;
  gs_diag err;
  memset(&err, 0, sizeof err);
  open_text(l, text);
  int rc = gs_graph_load(l->reader, &g, &err);
  if (rc != GS_OK)
    fail_msg("gs_graph_load: %s (%s on line %llu: %s)", gs_strerror(rc), gs_diag_name(err.code),
             (unsigned long long)err.line, err.message);
  assert_non_null(g);
  gsu_assert_err(gs_graph_load(l->reader, &none, &err), GS_EOF);
  return g;
}

static uint32_t node_of(const gs_graph *g, uint64_t id) {
  uint32_t i;
  for (i = 0; i < g->nnodes; i++)
    if (g->ids[i] == id) return i;
  fail_msg("no node for object %llx", (unsigned long long)id);
  return UINT32_MAX;
}

static const char *type_name(const gs_graph *g, uint32_t t) {
  static char buf[256];
  const char *s = gs_graph_type_name(g, t, buf, sizeof buf);
  assert_non_null(s);
  return s;
}

/* Name of the type of object id. */
static const char *type_of(const gs_graph *g, uint64_t id) {
  uint32_t t = g->types[node_of(g, id)];
  assert_true(t != GS_GRAPH_MISSING);
  assert_true(t < g->ntypes);
  return type_name(g, t);
}

/* Checks the references of object id, in file order. */
static void check_refs(const gs_graph *g, uint64_t id, const uint64_t *want, size_t n) {
  uint32_t node = node_of(g, id), i;
  uint32_t start = g->ref_offsets[node], end = g->ref_offsets[node + 1];
  assert_int_equal(end - start, n);
  for (i = 0; i < n; i++) assert_int_equal(g->ids[g->refs[start + i]], want[i]);
}

static int is_marked(const uint8_t *bits, uint32_t n) { return (bits[n >> 3] >> (n & 7)) & 1; }

static uint8_t *reachable(const gs_graph *g) {
  uint8_t *bits = calloc((g->nnodes + 7) / 8 + 1, 1);
  assert_non_null(bits);
  gsu_assert_ok(gs_graph_reachable(g, bits));
  return bits;
}

static uint32_t count_marked(const gs_graph *g, const uint8_t *bits, int objects_only) {
  uint32_t i, n = 0;
  for (i = 0; i < g->nnodes; i++)
    if (is_marked(bits, i) && (!objects_only || g->types[i] != GS_GRAPH_MISSING)) n++;
  return n;
}

static void check_memory(const gs_graph *g) {
  size_t mem = gs_graph_memory(g), names = 0, low, high;
  uint32_t t;
  for (t = 0; t < g->ntypes; t++)
    if (g->type_name_offsets[t] != UINT32_MAX)
      names += strlen(g->type_names + g->type_name_offsets[t]) + 1;
  low = (size_t)24 * g->nnodes + 4 * g->nrefs + 16 * (size_t)g->nroots;
  /* The per-object bound, plus the type table, which small graphs do not
   * amortize. */
  high = (size_t)32 * g->nnodes + 4 * g->nrefs + 16 * (size_t)g->nroots +
         16 * (size_t)g->ntypes + names + strlen(g->name) + 1 + 64;
  if (mem < low || mem > high)
    fail_msg("gs_graph_memory %zu outside [%zu, %zu]", mem, low, high);
}

/* ---- one section in detail ---------------------------------------------------- */

/* Objects 1-3 form a cycle held by a local root; 4 and 5 are a cycle held
 * only by a weak handle; 6 is static and references 77, which is not in the
 * dump; 88 is a pinned root not in the dump; 7 and 8 are garbage; types a
 * and b are defined after their objects and type c never. */
static const char *const small_dump =
  "a 2 Graph Test 10\n"
  "o 1 a 20 2 3\n"
  "o 2 b 10 3\n"
  "o 3 a 8 1\n"
  "o 4 b 30 5\n"
  "o 5 b 40 4\n"
  "o 6 a 18 77\n"
  "t a System.Object\n"
  "o 7 a 8\n"
  "o 8 c 4\n"
  "r 1 1 0\n"
  "r 4 3 2\n"
  "r 6 4 0 b\n"
  "r 88 0 1\n"
  "r 2 3 2\n"
  "t b My Type With Spaces\n"
  "c Graph Test 20\n";

static void test_section_fields(void **state) {
  (void)state;
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  assert_string_equal(g->name, "Graph Test");
  assert_int_equal(g->version, 2);
  assert_int_equal(g->timestamp, 0x10);
  assert_int_equal(g->end_timestamp, 0x20);
  assert_int_equal(g->first_line, 1);
  gs_graph_free(g);
  close_text(&l);
}

static void test_nodes(void **state) {
  (void)state;
  static const struct { uint64_t id, size; } objects[] = {
    {1, 0x20}, {2, 0x10}, {3, 8}, {4, 0x30}, {5, 0x40}, {6, 0x18}, {7, 8}, {8, 4},
  };
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  uint32_t i, missing = 0;
  assert_int_equal(g->nobjects, 8);
  assert_int_equal(g->nnodes, 10);
  for (i = 0; i < 8; i++) {
    uint32_t n = node_of(g, objects[i].id);
    assert_int_equal(g->sizes[n], objects[i].size);
    assert_true(g->types[n] != GS_GRAPH_MISSING);
  }
  for (i = 0; i < g->nnodes; i++) missing += g->types[i] == GS_GRAPH_MISSING;
  assert_int_equal(missing, 2);
  assert_int_equal(g->types[node_of(g, 0x77)], GS_GRAPH_MISSING);
  assert_int_equal(g->sizes[node_of(g, 0x77)], 0);
  assert_int_equal(g->types[node_of(g, 0x88)], GS_GRAPH_MISSING);
  assert_int_equal(g->sizes[node_of(g, 0x88)], 0);
  /* Each ID has one node. */
  for (i = 0; i < g->nnodes; i++) assert_int_equal(node_of(g, g->ids[i]), i);
  gs_graph_free(g);
  close_text(&l);
}

static void test_types(void **state) {
  (void)state;
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  char small[4];
  uint32_t tc;
  assert_int_equal(g->ntypes, 3);
  assert_string_equal(type_of(g, 1), "System.Object");
  assert_string_equal(type_of(g, 2), "My Type With Spaces");
  assert_string_equal(type_of(g, 3), "System.Object");
  assert_string_equal(type_of(g, 4), "My Type With Spaces");
  assert_string_equal(type_of(g, 7), "System.Object");
  assert_string_equal(type_of(g, 8), "?c");
  assert_int_equal(g->types[node_of(g, 1)], g->types[node_of(g, 3)]);
  assert_true(g->types[node_of(g, 1)] != g->types[node_of(g, 2)]);
  tc = g->types[node_of(g, 8)];
  assert_int_equal(g->type_ids[tc], 0xc);
  assert_int_equal(g->type_name_offsets[tc], UINT32_MAX);
  assert_int_equal(g->type_ids[g->types[node_of(g, 2)]], 0xb);
  /* A small buffer still gets a NUL-terminated prefix at most. */
  const char *s = gs_graph_type_name(g, g->types[node_of(g, 2)], small, sizeof small);
  assert_non_null(s);
  assert_true(strlen(s) < sizeof small || s != small);
  gs_graph_free(g);
  close_text(&l);
}

static void test_references(void **state) {
  (void)state;
  static const uint64_t r1[] = {2, 3}, r2[] = {3}, r3[] = {1}, r4[] = {5}, r5[] = {4},
                        r6[] = {0x77};
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  uint32_t i;
  assert_int_equal(g->nrefs, 7);
  assert_int_equal(g->dangling_refs, 1);
  assert_int_equal(g->ref_offsets[0], 0);
  assert_int_equal(g->ref_offsets[g->nnodes], 7);
  for (i = 0; i < g->nnodes; i++) assert_true(g->ref_offsets[i] <= g->ref_offsets[i + 1]);
  check_refs(g, 1, r1, 2);
  check_refs(g, 2, r2, 1);
  check_refs(g, 3, r3, 1);
  check_refs(g, 4, r4, 1);
  check_refs(g, 5, r5, 1);
  check_refs(g, 6, r6, 1);
  check_refs(g, 7, NULL, 0);
  check_refs(g, 8, NULL, 0);
  check_refs(g, 0x77, NULL, 0);
  check_refs(g, 0x88, NULL, 0);
  gs_graph_free(g);
  close_text(&l);
}

static void test_roots(void **state) {
  (void)state;
  static const struct { uint64_t id; uint8_t kind, flags; } want[] = {
    {1, 1, 0}, {4, 3, 2}, {6, 4, 0}, {0x88, 0, 1}, {2, 3, 2},
  };
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  uint32_t i;
  assert_int_equal(g->nroots, 5);
  for (i = 0; i < 5; i++) {
    const gs_graph_root *r = &g->roots[i];
    assert_int_equal(g->ids[r->node], want[i].id);
    assert_int_equal(r->kind, want[i].kind);
    assert_int_equal(r->flags, want[i].flags);
    if (want[i].kind == GS_ROOT_STATIC) {
      assert_true(r->container != GS_GRAPH_MISSING);
      assert_int_equal(g->type_ids[r->container], 0xb);
      assert_string_equal(type_name(g, r->container), "My Type With Spaces");
    } else {
      assert_int_equal(r->container, GS_GRAPH_MISSING);
    }
  }
  gs_graph_free(g);
  close_text(&l);
}

static void test_reachable(void **state) {
  (void)state;
  static const uint64_t live[] = {1, 2, 3, 6, 0x77, 0x88}, dead[] = {4, 5, 7, 8};
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  uint8_t *bits = reachable(g);
  size_t i;
  for (i = 0; i < sizeof live / sizeof live[0]; i++)
    if (!is_marked(bits, node_of(g, live[i]))) fail_msg("%llx not reachable", (unsigned long long)live[i]);
  for (i = 0; i < sizeof dead / sizeof dead[0]; i++)
    if (is_marked(bits, node_of(g, dead[i]))) fail_msg("%llx reachable", (unsigned long long)dead[i]);
  assert_int_equal(count_marked(g, bits, 0), 6);
  assert_int_equal(count_marked(g, bits, 1), 4);
  /* No bit beyond nnodes is touched. */
  for (i = g->nnodes; i < ((size_t)g->nnodes + 7) / 8 * 8; i++) assert_false(is_marked(bits, (uint32_t)i));
  assert_int_equal(bits[(g->nnodes + 7) / 8], 0);
  free(bits);
  gs_graph_free(g);
  close_text(&l);
}

/* Weak roots alone keep nothing alive, whatever else their flags say. */
static void test_weak_roots_only(void **state) {
  (void)state;
  loaded l;
  gs_graph *g = load_one(&l,
                         "a 2 weak 0\n"
                         "t 1 T\n"
                         "o 1 1 8 2\n"
                         "o 2 1 8 1\n"
                         "o 3 1 8\n"
                         "r 1 3 2\n"
                         "r 3 1 3\n"
                         "r 3 4 6 1\n"
                         "r 9 3 7\n"
                         "c weak 0\n");
  uint8_t *bits = reachable(g);
  assert_int_equal(g->nroots, 4);
  assert_int_equal(count_marked(g, bits, 0), 0);
  free(bits);
  gs_graph_free(g);
  close_text(&l);
}

/* Every flag other than weak roots the object; a self-loop and a long chain
 * are followed to the end. */
static void test_reachable_chain(void **state) {
  (void)state;
  enum { LEN = 200000 };
  gsu_buf b = {0};
  loaded l;
  gs_graph *g;
  uint8_t *bits;
  size_t i;
  gsu_buf_printf(&b, "a 2 chain 0\nt 1 Link\n");
  for (i = 0; i < LEN; i++) gsu_buf_printf(&b, "o %zx 1 c %zx %zx\n", i + 1, i + 2, i + 1);
  gsu_buf_printf(&b, "o %zx 1 c\no ffff0 1 c\no ffff1 1 c\no ffff2 1 c\n"
                     "r 1 1 5\nr ffff0 3 1\nr ffff1 0 4\nr ffff2 2 2\nc chain 0\n",
                 (size_t)LEN + 1);
  g = load_one(&l, b.data);
  assert_int_equal(g->nobjects, LEN + 4);
  assert_int_equal(g->nnodes, LEN + 4);
  assert_int_equal(g->nrefs, 2 * LEN);
  assert_int_equal(g->dangling_refs, 0);
  bits = reachable(g);
  assert_int_equal(count_marked(g, bits, 0), LEN + 3);
  assert_false(is_marked(bits, node_of(g, 0xffff2)));
  assert_true(is_marked(bits, node_of(g, LEN + 1)));
  assert_true(gs_graph_memory(g) <=
              (size_t)32 * g->nobjects + 4 * g->nrefs + 16 * (size_t)g->nroots);
  check_memory(g);
  free(bits);
  gs_graph_free(g);
  close_text(&l);
  gsu_buf_free(&b);
}

/* Seed 000 as printed: six objects, eight references and one root to
 * objects that are not in the dump, two types never defined. */
static void test_seed000(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed000-example.gclog"), &len);
  loaded l;
  gs_graph *g = load_one(&l, text);
  uint8_t *bits;
  uint32_t i, missing = 0;
  free(text);
  assert_string_equal(g->name, "bubblecs.exe");
  assert_int_equal(g->timestamp, 0);
  assert_int_equal(g->nobjects, 6);
  assert_int_equal(g->nnodes, 15);
  assert_int_equal(g->nrefs, 8);
  assert_int_equal(g->dangling_refs, 8);
  assert_int_equal(g->nroots, 3);
  assert_int_equal(g->ntypes, 5);
  for (i = 0; i < g->nnodes; i++) missing += g->types[i] == GS_GRAPH_MISSING;
  assert_int_equal(missing, 9);
  assert_string_equal(type_of(g, 0x7c79f), "System.RuntimeType");
  assert_string_equal(type_of(g, 0x1ce004), "System.NullReferenceException");
  assert_string_equal(type_of(g, 0x1ce056), "?1d");
  assert_string_equal(type_of(g, 0x22c823), "?1b");
  assert_int_equal(g->sizes[node_of(g, 0x1ce056)], 0x118);
  bits = reachable(g);
  assert_int_equal(count_marked(g, bits, 0), 3);
  assert_int_equal(count_marked(g, bits, 1), 2);
  assert_true(is_marked(bits, node_of(g, 0x22c81b)));
  assert_false(is_marked(bits, node_of(g, 0x1ce056)));
  check_memory(g);
  free(bits);
  gs_graph_free(g);
  close_text(&l);
}

/* The bound holds, and references dropped are no longer counted. */
static void test_memory_bound(void **state) {
  (void)state;
  loaded l;
  gs_graph *g = load_one(&l, small_dump);
  size_t mem = gs_graph_memory(g);
  uint64_t nrefs = g->nrefs;
  check_memory(g);
  gs_graph_drop_refs(g);
  assert_null(g->refs);
  assert_null(g->ref_offsets);
  assert_int_equal(g->nrefs, nrefs);
  assert_int_equal(gs_graph_memory(g), mem - 4 * nrefs - 4 * ((size_t)g->nnodes + 1));
  gs_graph_free(g);
  close_text(&l);
}

/* ---- several sections and errors ------------------------------------------------ */

static void test_several_sections(void **state) {
  (void)state;
  loaded l;
  gs_reader *r = open_text(&l,
                           "\n"
                           "a 2 first.exe 1\n"
                           "t 1 A\n"
                           "o 10 1 8 11\n"
                           "o 11 1 8\n"
                           "r 10 1 0\n"
                           "c first.exe 2\n"
                           "a 2 second domain 3\n"
                           "o 10 1 c\n"
                           "r 10 1 0\n"
                           "c second domain 4\n"
                           "a 2 empty\n"
                           "c empty\n");
  gs_graph *g = NULL;
  gs_diag err;
  gsu_assert_ok(gs_graph_load(r, &g, &err));
  assert_string_equal(g->name, "first.exe");
  assert_int_equal(g->first_line, 2);
  assert_int_equal(g->nobjects, 2);
  assert_int_equal(g->nrefs, 1);
  assert_int_equal(g->end_timestamp, 2);
  assert_string_equal(type_of(g, 0x10), "A");
  gs_graph_free(g);
  g = NULL;
  gsu_assert_ok(gs_graph_load(r, &g, &err));
  assert_string_equal(g->name, "second domain");
  assert_int_equal(g->first_line, 8);
  assert_int_equal(g->nobjects, 1);
  assert_int_equal(g->nnodes, 1);
  assert_int_equal(g->sizes[node_of(g, 0x10)], 0xc);
  assert_string_equal(type_of(g, 0x10), "?1");  /* types do not carry over */
  gs_graph_free(g);
  g = NULL;
  gsu_assert_ok(gs_graph_load(r, &g, &err));
  assert_string_equal(g->name, "empty");
  assert_int_equal(g->nnodes, 0);
  assert_int_equal(g->nroots, 0);
  assert_int_equal(g->ref_offsets[0], 0);
  gs_graph_free(g);
  g = NULL;
  gsu_assert_err(gs_graph_load(r, &g, &err), GS_EOF);
  gsu_assert_err(gs_graph_load(r, &g, &err), GS_EOF);
  close_text(&l);
}

/* A section after the first starts with small arrays and grows them: one
 * of 10,000 objects in a chain, after a small one, loads whole. */
static void test_large_later_section(void **state) {
  const unsigned n = 10000;
  char *text = malloc((size_t)n * 40 + 100), *p = text;
  loaded l;
  gs_graph *g = NULL;
  gs_diag err;
  unsigned i;
  (void)state;
  assert_non_null(text);
  p += sprintf(p, "a 2 small 0\no 1 1 8\nc small 0\na 2 large 0\nt 1 T\n");
  for (i = 0; i < n; i++)
    p += i + 1 < n ? sprintf(p, "o %x 1 %x %x\n", 0x100 + 16 * i, i, 0x100 + 16 * (i + 1))
                   : sprintf(p, "o %x 1 %x\n", 0x100 + 16 * i, i);
  sprintf(p, "r 100 1 0\nc large 0\n");
  open_text(&l, text);
  free(text);
  gsu_assert_ok(gs_graph_load(l.reader, &g, &err));
  gs_graph_free(g);
  g = NULL;
  gsu_assert_ok(gs_graph_load(l.reader, &g, &err));
  assert_string_equal(g->name, "large");
  assert_int_equal(g->nobjects, n);
  assert_int_equal(g->nnodes, n);
  assert_int_equal(g->nrefs, n - 1);
  for (i = 0; i < n; i++) {
    uint32_t v = node_of(g, 0x100 + 16 * i);
    assert_int_equal(g->sizes[v], i);
    assert_int_equal(g->ref_offsets[v + 1] - g->ref_offsets[v], i + 1 < n);
    if (i + 1 < n) assert_int_equal(g->ids[g->refs[g->ref_offsets[v]]], 0x100 + 16 * (i + 1));
  }
  gs_graph_free(g);
  close_text(&l);
}

static void check_load_error(const char *text, gs_diag_code code, uint64_t line) {
  loaded l;
  gs_graph *g = NULL;
  gs_diag err;
  memset(&err, 0, sizeof err);
  open_text(&l, text);
  gsu_assert_err(gs_graph_load(l.reader, &g, &err), GS_EFORMAT);
  if (err.code != code)
    fail_msg("load error %s, expected %s: %s", gs_diag_name(err.code), gs_diag_name(code),
             err.message);
  if (line) assert_int_equal(err.line, line);
  if (g) gs_graph_free(g);
  close_text(&l);
}

static void test_load_errors(void **state) {
  (void)state;
  check_load_error("a 2 x 0\nt 1 T\no 1 1 8\no 2 1 8\no 1 1 c\nr 1 1 0\nc x 0\n",
                   GS_D_DUPLICATE_OBJECT, 5);
  check_load_error("a 2 x 0\no 1 1 8 zz\nc x 0\n", GS_D_NOT_HEX, 2);
  check_load_error("a 2 x 0\no 1 1 -8\nc x 0\n", GS_D_NEGATIVE_SIZE, 2);
  check_load_error("a 2 x 0\no 1 1 8\nr 1 9 0\nc x 0\n", GS_D_ROOT_KIND, 3);
  check_load_error("a 2 x 0\no 1 1 8\nr 1 4 0\nc x 0\n", GS_D_STATIC_CONTAINER, 3);
  check_load_error("a 2 x 0\no 1 1 8\nc y 0\n", GS_D_SECTION_NAME, 3);
  check_load_error("a 2 x 0\no 1 1 8\n", GS_D_UNTERMINATED, 0);
  check_load_error("a 2 x 0\no 1 1 8\na 2 y 0\nc y 0\n", GS_D_NESTED_SECTION, 3);
}

/* A duplicate in a later section does not spoil the earlier one. */
static void test_error_in_second_section(void **state) {
  (void)state;
  loaded l;
  gs_reader *r = open_text(&l,
                           "a 2 good 0\no 1 1 8\nc good 0\n"
                           "a 2 bad 0\no 1 1 8\no 1 1 8\nc bad 0\n");
  gs_graph *g = NULL;
  gs_diag err;
  gsu_assert_ok(gs_graph_load(r, &g, &err));
  assert_string_equal(g->name, "good");
  gs_graph_free(g);
  g = NULL;
  gsu_assert_err(gs_graph_load(r, &g, &err), GS_EFORMAT);
  assert_int_equal(err.code, GS_D_DUPLICATE_OBJECT);
  assert_int_equal(err.line, 6);
  if (g) gs_graph_free(g);
  close_text(&l);
}

static void test_empty_input(void **state) {
  (void)state;
  static const char *const inputs[] = {"", "\n\r\n\n"};
  size_t i;
  for (i = 0; i < 2; i++) {
    loaded l;
    gs_graph *g = NULL;
    gs_diag err;
    open_text(&l, inputs[i]);
    gsu_assert_err(gs_graph_load(l.reader, &g, &err), GS_EOF);
    close_text(&l);
  }
}

/* Packing keeps every ID, size and type, the wide ones too: an ID 20 GiB
 * past the one before, an object of 4.5 GiB, a placeholder below every
 * object; with IDs step apart and sizes from size, so that each of the
 * widths 1, 2 and 4 bytes is taken. */
static void check_pack(uint64_t step, uint64_t size) {
  char text[4096];
  size_t len = 0;
  uint64_t ids[41], sizes[41];
  uint32_t types[41], i;
  loaded l;
  gs_graph *g;
  len += (size_t)snprintf(text + len, sizeof text - len, "a 2 Pack 10\nt a A\n");
  for (i = 0; i < 40; i++) {
    uint64_t id = 0x1000 + step * i + (i >= 20 ? UINT64_C(0x500000000) : 0);
    uint64_t sz = i == 7 ? UINT64_C(0x123456789) : size + i;
    len += (size_t)snprintf(text + len, sizeof text - len, "o %llx a %llx%s\n",
                            (unsigned long long)id, (unsigned long long)sz, i == 3 ? " 10" : "");
  }
  snprintf(text + len, sizeof text - len, "c Pack 20\n");
  g = load_one(&l, text);
  assert_int_equal(g->nnodes, 41);
  memcpy(ids, g->ids, sizeof ids);
  memcpy(sizes, g->sizes, sizeof sizes);
  memcpy(types, g->types, sizeof types);
  assert_int_equal(types[40], GS_GRAPH_MISSING);
  gsu_assert_ok(gs_graph_pack(g));
  assert_null(g->ids);
  assert_null(g->sizes);
  assert_null(g->types);
  for (i = 0; i < 41; i++) assert_int_equal(gs_graph_size(g, i), sizes[i]);
  gsu_assert_ok(gs_graph_unpack(g));
  assert_memory_equal(g->ids, ids, sizeof ids);
  assert_memory_equal(g->sizes, sizes, sizeof sizes);
  assert_memory_equal(g->types, types, sizeof types);
  gs_graph_free(g);
  close_text(&l);
}

static void test_pack(void **state) {
  (void)state;
  check_pack(0x20, 0x20);
  check_pack(0x300, 0x1000);
  check_pack(0x20000, 0x20000);
}

/* A graph large enough to have its IDs packed and widened on a thread of
 * their own, while this one takes the sizes and types, comes back whole. */
static void test_pack_large(void **state) {
  enum { N = 100000 };
  char *text = malloc((size_t)N * 40 + 64);
  uint64_t *ids = malloc(N * sizeof *ids), *sizes = malloc(N * sizeof *sizes);
  uint32_t *types = malloc(N * sizeof *types), i;
  size_t len = 0;
  loaded l;
  gs_graph *g;
  (void)state;
  assert_non_null(text);
  assert_non_null(ids);
  assert_non_null(sizes);
  assert_non_null(types);
  len += (size_t)sprintf(text + len, "a 2 Large 10\nt 1 A\nt 2 B\n");
  for (i = 0; i < N; i++)
    len += (size_t)sprintf(text + len, "o %x %x %x%s\n", 0x1000 + 24 * i + (i % 7) * 8, 1 + i % 2,
                           i % 1000 == 0 ? 0x40000 + i : 24, i ? " 1000" : "");
  sprintf(text + len, "c Large 20\n");
  g = load_one(&l, text);
  assert_int_equal(g->nnodes, N);
  memcpy(ids, g->ids, N * sizeof *ids);
  memcpy(sizes, g->sizes, N * sizeof *sizes);
  memcpy(types, g->types, N * sizeof *types);
  gsu_assert_ok(gs_graph_pack(g));
  assert_null(g->ids);
  assert_null(g->sizes);
  assert_null(g->types);
  gsu_assert_ok(gs_graph_unpack(g));
  assert_memory_equal(g->ids, ids, N * sizeof *ids);
  assert_memory_equal(g->sizes, sizes, N * sizeof *sizes);
  assert_memory_equal(g->types, types, N * sizeof *types);
  gs_graph_free(g);
  close_text(&l);
  free(text); free(ids); free(sizes); free(types);
}

/* 300 types take 2 bytes a node while packed, a placeholder's included. */
static void test_pack_types(void **state) {
  (void)state;
  char text[16384];
  size_t len = 0;
  uint32_t types[301], i;
  loaded l;
  gs_graph *g;
  len += (size_t)snprintf(text + len, sizeof text - len, "a 2 T 10\n");
  for (i = 0; i < 300; i++)
    len += (size_t)snprintf(text + len, sizeof text - len, "t %x T%u\no %x %x 8%s\n", i + 1, i,
                            16 * (i + 1), i + 1, i == 9 ? " 8" : "");
  snprintf(text + len, sizeof text - len, "c T 20\n");
  g = load_one(&l, text);
  assert_int_equal(g->nnodes, 301);
  memcpy(types, g->types, sizeof types);
  gsu_assert_ok(gs_graph_pack(g));
  assert_null(g->types);
  gsu_assert_ok(gs_graph_unpack(g));
  assert_memory_equal(g->types, types, sizeof types);
  assert_int_equal(g->types[300], GS_GRAPH_MISSING);
  gs_graph_free(g);
  close_text(&l);
}

/* Sizes too often wide for 4 bytes stay as they are; a graph is freed
 * packed as well. */
static void test_pack_wide(void **state) {
  (void)state;
  loaded l;
  gs_graph *g = load_one(&l, "a 2 W 10\nt a A\no 1 a 100000000\no 2 a 100000001\nc W 20\n");
  gsu_assert_ok(gs_graph_pack(g));
  assert_null(g->ids);
  assert_non_null(g->sizes);
  assert_int_equal(gs_graph_size(g, 1), UINT64_C(0x100000001));
  gs_graph_free(g);
  close_text(&l);
}

/* ---- objects out of ID order -------------------------------------------- */

enum { UNSORTED_N = 300, UNSORTED_LINE = 96 };

/* A dump of UNSORTED_N objects into text, with object k (ID 8k + 8) written
 * at position order[k]: types cycle, references go anywhere, a few to
 * missing IDs. */
static void dump_in_order(char *text, size_t cap, const unsigned *order) {
  static char lines[UNSORTED_N][UNSORTED_LINE];
  unsigned k, j;
  size_t len;
  for (k = 0; k < UNSORTED_N; k++) {
    char *line = lines[order[k]];
    int at = snprintf(line, UNSORTED_LINE, "o %x %x %x", 8 * k + 8, 1 + k % 3, 16 + k % 40);
    for (j = 0; j < k % 4; j++)
      at += snprintf(line + at, UNSORTED_LINE - at, " %x", 8 * ((k * 7 + j * 13) % (UNSORTED_N + 5)) + 8);
  }
  len = (size_t)snprintf(text, cap, "a 2 X 0\nt 1 A\nt 2 B\nt 3 C\n");
  for (k = 0; k < UNSORTED_N; k++) len += (size_t)snprintf(text + len, cap - len, "%s\n", lines[k]);
  snprintf(text + len, cap - len, "r 8 1 0\nr %x 2 0\nc X 1\n", 8 * (UNSORTED_N / 2) + 8);
}

/* Loaded in any order, a dump gives the graph of its objects in ID order. */
static void test_unsorted(void **state) {
  static char a[UNSORTED_N * UNSORTED_LINE + 128], b[UNSORTED_N * UNSORTED_LINE + 128];
  unsigned sorted[UNSORTED_N], shuffled[UNSORTED_N], k;
  char buf[64];
  loaded la, lb;
  gs_graph *ga, *gb;
  (void)state;
  for (k = 0; k < UNSORTED_N; k++) sorted[k] = k, shuffled[k] = (k * 97 + 11) % UNSORTED_N;
  dump_in_order(a, sizeof a, sorted);
  dump_in_order(b, sizeof b, shuffled);
  ga = load_one(&la, a);
  gb = load_one(&lb, b);
  assert_int_equal(ga->nnodes, gb->nnodes);
  assert_int_equal(ga->nrefs, gb->nrefs);
  assert_int_equal(ga->dangling_refs, gb->dangling_refs);
  assert_true(ga->dangling_refs > 0);
  for (k = 0; k < ga->nnodes; k++) {
    uint32_t i, c = ga->ref_offsets[k + 1] - ga->ref_offsets[k];
    assert_int_equal(ga->ids[k], gb->ids[k]);
    assert_true(k == 0 || ga->ids[k - 1] < ga->ids[k] || k == ga->nobjects);
    assert_int_equal(ga->sizes[k], gb->sizes[k]);
    strcpy(buf, type_name(ga, ga->types[k]));
    assert_string_equal(buf, type_name(gb, gb->types[k]));
    assert_int_equal(c, gb->ref_offsets[k + 1] - gb->ref_offsets[k]);
    for (i = 0; i < c; i++)
      assert_int_equal(ga->ids[ga->refs[ga->ref_offsets[k] + i]], gb->ids[gb->refs[gb->ref_offsets[k] + i]]);
  }
  for (k = 0; k < ga->nroots; k++) assert_int_equal(ga->ids[ga->roots[k].node], gb->ids[gb->roots[k].node]);
  gs_graph_free(ga);
  gs_graph_free(gb);
  close_text(&la);
  close_text(&lb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_section_fields),
    cmocka_unit_test(test_nodes),
    cmocka_unit_test(test_types),
    cmocka_unit_test(test_references),
    cmocka_unit_test(test_roots),
    cmocka_unit_test(test_reachable),
    cmocka_unit_test(test_weak_roots_only),
    cmocka_unit_test(test_reachable_chain),
    cmocka_unit_test(test_seed000),
    cmocka_unit_test(test_memory_bound),
    cmocka_unit_test(test_several_sections),
    cmocka_unit_test(test_large_later_section),
    cmocka_unit_test(test_load_errors),
    cmocka_unit_test(test_error_in_second_section),
    cmocka_unit_test(test_empty_input),
    cmocka_unit_test(test_pack),
    cmocka_unit_test(test_pack_large),
    cmocka_unit_test(test_pack_types),
    cmocka_unit_test(test_pack_wide),
    cmocka_unit_test(test_unsorted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
