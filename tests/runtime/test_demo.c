/* test_demo.c - the demo application on the runtime, and the demo heap
 * source: its leak grows, its dumps validate strictly, its knobs. */
#include "gs_unit.h"

#include <stdlib.h>

#include "gs_demo.h"
#include "gs_source.h"
#include "gs_sources.h"
#include "gs_validate.h"
#include "gs_writer.h"
#include "rt_snap.h"

static gs_demo *open_demo(uint64_t objects, uint64_t seed) {
  gs_demo_options o;
  gs_demo *d;
  memset(&o, 0, sizeof o);
  o.objects = objects;
  o.seed = seed;
  gsu_assert_ok(gs_demo_new(&d, &o));
  return d;
}

/* Every step leaks one page: snapshots over time show it growing. */
static void test_leak_grows(void **state) {
  gs_demo *d = open_demo(2000, 1);
  gs_rt *rt = gs_demo_runtime(d);
  uint32_t leak = gs_demo_leak_type(d);
  size_t last = 0, k;
  rt_snap s;
  (void)state;
  assert_string_equal(gs_rt_type_name(rt, leak), GS_DEMO_LEAK_TYPE);
  for (k = 1; k <= 3; k++) {
    size_t n;
    gsu_assert_ok(gs_demo_step(d, 60));
    rt_snap_take(rt, GS_RT_STABLE_IDS, &s);
    rt_snap_check(&s);
    n = rt_snap_count_type(&s, leak);
    assert_int_equal(n, 60 * k);
    assert_true(n > last);
    last = n;
    rt_snap_free(&s);
  }
  assert_int_equal(gs_demo_steps_done(d), 180);
  gs_demo_free(d);
}

static void test_prefill_size(void **state) {
  gs_demo *d = open_demo(30000, 2);
  gs_rt_stats st;
  rt_snap s;
  (void)state;
  rt_snap_take(gs_demo_runtime(d), 0, &s);
  assert_true(s.nobjs >= 27000 && s.nobjs <= 33000);
  rt_snap_check(&s);
  rt_snap_free(&s);
  gs_rt_get_stats(gs_demo_runtime(d), &st);
  assert_int_equal(st.arena_bytes, gs_demo_arena_for(30000));
  gs_demo_free(d);
}

/* The program runs its session in a heap that collects all the time. */
static void test_demo_long_run(void **state) {
  gs_demo_options o;
  gs_demo *d;
  gs_rt_stats st;
  rt_snap s;
  (void)state;
  memset(&o, 0, sizeof o);
  o.objects = 3000;
  o.seed = 9;
  o.arena_bytes = (size_t)4 << 20;          /* small: many collections, large ones too */
  gsu_assert_ok(gs_demo_new(&d, &o));
  gsu_assert_ok(gs_demo_step(d, 2000));
  gs_rt_get_stats(gs_demo_runtime(d), &st);
  assert_true(st.collections[0] > 0);
  assert_true(st.collections[2] > 0);   /* the large photos fill the heap */
  assert_true(st.collections[0] + st.collections[1] + st.collections[2] > 20);
  rt_snap_take(gs_demo_runtime(d), 0, &s);
  rt_snap_check(&s);
  assert_int_equal(rt_snap_count_type(&s, gs_demo_leak_type(d)), 2000);
  rt_snap_free(&s);
  gs_demo_free(d);
}

static void test_demo_roots(void **state) {
  gs_demo *d = open_demo(2000, 3);
  unsigned kinds[6] = {0}, pinned = 0, interior = 0, weak = 0;
  rt_snap s;
  size_t i;
  (void)state;
  gsu_assert_ok(gs_demo_step(d, 100));
  rt_snap_take(gs_demo_runtime(d), 0, &s);
  rt_snap_check(&s);
  for (i = 0; i < s.nroots; i++) {
    kinds[s.roots[i].kind]++;
    pinned += s.roots[i].kind == 3 && s.roots[i].flags == 1;
    interior += s.roots[i].kind == 1 && s.roots[i].flags == 5;
    weak += s.roots[i].kind == 3 && s.roots[i].flags == 2;
  }
  assert_true(kinds[0] && kinds[1] && kinds[3] && kinds[4] && kinds[5]);
  assert_int_equal(pinned, 1);
  assert_int_equal(interior, 1);
  assert_int_equal(weak, 1);
  rt_snap_free(&s);
  gs_demo_free(d);
}

static void test_demo_bad_options(void **state) {
  gs_demo_options o;
  gs_demo *d;
  (void)state;
  memset(&o, 0, sizeof o);
  o.objects = GS_DEMO_MAX_OBJECTS + 1;
  assert_int_equal(gs_demo_new(&d, &o), GS_EINVAL);
  assert_null(d);
  o.objects = 20000;
  o.arena_bytes = 100;                        /* smaller than the runtime accepts */
  assert_int_equal(gs_demo_new(&d, &o), GS_EINVAL);
  o.arena_bytes = (size_t)128 << 10;          /* too small for the program */
  assert_int_equal(gs_demo_new(&d, &o), GS_ENOMEM);
}

/* ---- the demo source through the record writer ---- */

typedef struct dump {
  gs_writer *w;
  gsu_buf buf;
  char name[64];
  size_t name_len;
  uint64_t leak_type;
  uint64_t leak_count;
} dump;

static int d_section(void *ctx, const char *name, size_t len) {
  dump *d = ctx;
  assert_true(len < sizeof d->name);
  memcpy(d->name, name, len);
  d->name_len = len;
  return gs_writer_section(d->w, 2, name, len, 0);
}

static int d_type(void *ctx, uint64_t id, const char *name, size_t len) {
  dump *d = ctx;
  if (len == strlen(GS_DEMO_LEAK_TYPE) && !memcmp(name, GS_DEMO_LEAK_TYPE, len)) d->leak_type = id;
  return gs_writer_type(d->w, id, name, len);
}

static int d_object(void *ctx, uint64_t id, uint64_t type, uint64_t size, const uint64_t *refs,
                    size_t nrefs) {
  dump *d = ctx;
  d->leak_count += d->leak_type && type == d->leak_type;
  return gs_writer_object(d->w, id, type, size, refs, nrefs);
}

static int d_root(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint64_t container) {
  dump *d = ctx;
  return gs_writer_root(d->w, id, kind, flags, container);
}

static int d_end(void *ctx) {
  dump *d = ctx;
  return gs_writer_end(d->w, d->name, d->name_len, 0);
}

/* Walks src once into d->buf. */
static void walk_into(gs_source *src, dump *d) {
  gs_heap_visitor v;
  memset(&d->buf, 0, sizeof d->buf);
  d->leak_type = d->leak_count = 0;
  gsu_assert_ok(gs_writer_new(&d->w, gsu_buf_write, &d->buf));
  memset(&v, 0, sizeof v);
  v.ctx = d;
  v.section = d_section;
  v.type = d_type;
  v.object = d_object;
  v.root = d_root;
  v.section_end = d_end;
  gsu_assert_ok(src->ops->walk(src, &v));
  gsu_assert_ok(gs_writer_free(d->w));
}

static void assert_strictly_valid(const dump *d) {
  gs_reader *r;
  gsu_diags diags;
  gs_validate_counts counts;
  size_t i;
  memset(&diags, 0, sizeof diags);
  gsu_assert_ok(gs_reader_new_buffer(&r, d->buf.data, d->buf.len));
  gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &diags, &counts));
  for (i = 0; i < diags.n && i < 5; i++)
    print_message("line %llu: %s: %s\n", (unsigned long long)diags.items[i].line,
                  gs_diag_name(diags.items[i].code), diags.items[i].message);
  assert_int_equal(counts.errors, 0);
  assert_int_equal(counts.warnings, 0);
  assert_int_equal(counts.sections, 1);
  assert_true(counts.records > 2000);
  gs_reader_free(r);
  gsu_diags_free(&diags);
}

static void test_source_validates(void **state) {
  int stable;
  (void)state;
  for (stable = 0; stable <= 1; stable++) {
    char err[256] = "";
    gs_source *src;
    dump d;
    gsu_assert_ok(gs_source_demo_new(&src, "objects=5000,steps=200,seed=3", err, sizeof err));
    assert_string_equal(src->ops->name, "demo");
    assert_int_equal(src->stable_ids, 1);
    src->use_stable_ids = stable;
    walk_into(src, &d);
    assert_true(src->pause_us > 0);
    assert_true(d.name_len == strlen(GS_DEMO_APP_NAME) && !memcmp(d.name, GS_DEMO_APP_NAME, d.name_len));
    assert_int_equal(d.leak_count, 200);
    assert_strictly_valid(&d);
    gsu_buf_free(&d.buf);
    src->ops->free(src);
  }
}

/* With stable IDs, the same knobs give the same dump, byte for byte. */
static void test_source_deterministic(void **state) {
  const char *opts = "objects=3000,steps=150,seed=11";
  char err[256];
  gs_source *a, *b;
  dump da, db;
  (void)state;
  gsu_assert_ok(gs_source_demo_new(&a, opts, err, sizeof err));
  gsu_assert_ok(gs_source_demo_new(&b, opts, err, sizeof err));
  a->use_stable_ids = b->use_stable_ids = 1;
  walk_into(a, &da);
  walk_into(b, &db);
  assert_int_equal(da.buf.len, db.buf.len);
  assert_memory_equal(da.buf.data, db.buf.data, da.buf.len);
  gsu_buf_free(&da.buf);
  gsu_buf_free(&db.buf);
  a->ops->free(a);
  b->ops->free(b);
}

/* Later walks let the program run `every` steps first. */
static void test_source_walks_advance(void **state) {
  char err[256];
  gs_source *src;
  dump d;
  (void)state;
  gsu_assert_ok(gs_source_demo_new(&src, "objects=2000,steps=10,every=7", err, sizeof err));
  walk_into(src, &d);
  assert_int_equal(d.leak_count, 10);
  gsu_buf_free(&d.buf);
  walk_into(src, &d);
  assert_int_equal(d.leak_count, 17);
  assert_strictly_valid(&d);
  gsu_buf_free(&d.buf);
  src->ops->free(src);
}

static void test_source_options(void **state) {
  static const char *const bad[] = {"objects=0", "colour=red", "steps=x", "objects",
                                    "arena=0", "seed=-1"};
  char err[256];
  gs_source *src;
  size_t i;
  (void)state;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    assert_int_equal(gs_source_demo_new(&src, bad[i], err, sizeof err), GS_EINVAL);
    assert_null(src);
    assert_true(err[0] != '\0');
  }
  assert_int_equal(gs_source_demo_new(&src, "colour=red", err, sizeof err), GS_EINVAL);
  assert_non_null(strstr(err, "colour"));
  assert_int_equal(gs_source_demo_new(&src, "objects=100000,arena=1", err, sizeof err),
                   GS_ENOMEM);
  assert_non_null(strstr(err, "demo"));
  gsu_assert_ok(gs_source_demo_new(&src, NULL, err, sizeof err));   /* all defaults */
  src->ops->free(src);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_leak_grows),
    cmocka_unit_test(test_prefill_size),
    cmocka_unit_test(test_demo_long_run),
    cmocka_unit_test(test_demo_roots),
    cmocka_unit_test(test_demo_bad_options),
    cmocka_unit_test(test_source_validates),
    cmocka_unit_test(test_source_deterministic),
    cmocka_unit_test(test_source_walks_advance),
    cmocka_unit_test(test_source_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
