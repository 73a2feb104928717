/* test_agent.c - unit tests of the agent's parts: knob parsing, the walker
 * (order checks, timestamps, stable-ID marks, who failed), the mock source
 * driven directly, and the file sink's commit and discard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_error.h"
#include "gs_knob.h"
#include "gs_sink.h"
#include "gs_sources.h"
#include "gs_reader.h"
#include "gs_walk.h"

/* ---- a sink that prints records into memory --------------------------- */

typedef struct text_sink {
  gs_sink base;
  char *text;
  size_t len, cap;
  int calls;
  int fail_at;              /* when > 0: this call fails with GS_EIO */
  int committed;
} text_sink;

static int text_add(text_sink *s, const char *fmt, ...) {
  char line[512];
  va_list ap;
  int n;
  if (s->fail_at > 0 && ++s->calls >= s->fail_at) {
    snprintf(s->base.error, sizeof s->base.error, "disk on fire");
    return GS_EIO;
  }
  va_start(ap, fmt);
  n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  assert_true(n > 0 && (size_t)n < sizeof line);
  if (s->len + (size_t)n + 1 > s->cap) {
    s->cap = (s->len + (size_t)n + 1) * 2;
    s->text = realloc(s->text, s->cap);
    assert_non_null(s->text);
  }
  memcpy(s->text + s->len, line, (size_t)n + 1);
  s->len += (size_t)n;
  s->base.bytes += (uint64_t)n;
  return GS_OK;
}

static int ts_section(gs_sink *b, const char *name, size_t len, uint64_t ts) {
  return text_add((text_sink *)b, "a %.*s %llx\n", (int)len, name, (unsigned long long)ts);
}
static int ts_type(gs_sink *b, uint64_t id, const char *name, size_t len) {
  return text_add((text_sink *)b, "t %llx %.*s\n", (unsigned long long)id, (int)len, name);
}
static int ts_object(gs_sink *b, uint64_t id, uint64_t type, uint64_t size,
                     const uint64_t *refs, size_t nrefs) {
  (void)refs;
  return text_add((text_sink *)b, "o %llx %llx %llx +%zu\n", (unsigned long long)id,
                  (unsigned long long)type, (unsigned long long)size, nrefs);
}
static int ts_object_begin(gs_sink *b, uint64_t id, uint64_t type, uint64_t size) {
  return text_add((text_sink *)b, "o %llx %llx %llx", (unsigned long long)id,
                  (unsigned long long)type, (unsigned long long)size);
}
static int ts_object_refs(gs_sink *b, const uint64_t *refs, size_t nrefs) {
  (void)refs;
  return text_add((text_sink *)b, " +%zu", nrefs);
}
static int ts_object_end(gs_sink *b) { return text_add((text_sink *)b, "\n"); }
static int ts_root(gs_sink *b, uint64_t id, unsigned kind, unsigned flags, uint64_t c) {
  return text_add((text_sink *)b, "r %llx %x %x %llx\n", (unsigned long long)id, kind, flags,
                  (unsigned long long)c);
}
static int ts_generation(gs_sink *b, unsigned g, uint64_t start, uint64_t used,
                         uint64_t reserved) {
  return text_add((text_sink *)b, "g %u %llx %llx %llx\n", g, (unsigned long long)start,
                  (unsigned long long)used, (unsigned long long)reserved);
}
static int ts_end(gs_sink *b, const char *name, size_t len, uint64_t ts) {
  return text_add((text_sink *)b, "c %.*s %llx\n", (int)len, name, (unsigned long long)ts);
}
static int ts_commit(gs_sink *b) {
  ((text_sink *)b)->committed = 1;
  return GS_OK;
}
static void ts_free(gs_sink *b) { free(((text_sink *)b)->text); }

static const gs_sink_ops text_sink_ops = {
  ts_section, ts_type, ts_object, ts_root, ts_generation, ts_end, ts_commit, ts_free, NULL,
  ts_object_begin, ts_object_refs, ts_object_end};

static void text_sink_init(text_sink *s) {
  memset(s, 0, sizeof *s);
  s->base.ops = &text_sink_ops;
}

/* ---- a source that plays a script -------------------------------------- */

/* One letter per visitor call: a section "App", t type, o object with two
 * references, W one with more than a dump may hold (never read: the walker
 * refuses it first), r root, g generation, c section end, T timestamp 0x77. */
typedef struct script_source {
  gs_source base;
  const char *script;
  int calls_made;
  int fail_with;            /* returned after the script, with a message */
} script_source;

static int script_step(const gs_heap_visitor *v, char op, uint64_t n) {
  static const uint64_t refs[2] = {0x10, 0x20};
  switch (op) {
  case 'a': return v->section(v->ctx, "App", 3);
  case 't': return v->type(v->ctx, n, "T", 1);
  case 'o': return v->object(v->ctx, 0x10 * n, 1, 0x18, refs, 2);
  case 'W': return v->object(v->ctx, 0x10 * n, 1, 0x18, refs, GS_READER_DEFAULT_MAX_REFS + 1u);
  case 'r': return v->root(v->ctx, 0x10, 4, 1, 1);
  case 'R': return v->root(v->ctx, 0x10, 9, 0, 0);
  case 'g': return v->generation(v->ctx, 2, 0x1000, 0x200, 0x10000);
  case 'c': return v->section_end(v->ctx);
  case 'T': return v->timestamp(v->ctx, 0x77);
  default: return GS_EINVAL;
  }
}

static int script_walk(gs_source *src, const gs_heap_visitor *v) {
  script_source *s = (script_source *)src;
  const char *p;
  int err;
  for (p = s->script; *p; p++) {
    s->calls_made++;
    if ((err = script_step(v, *p, (uint64_t)(p - s->script) + 1))) return err;
  }
  if (s->fail_with) {
    snprintf(src->error, sizeof src->error, "runtime went away");
    return s->fail_with;
  }
  return GS_OK;
}

static void script_free(gs_source *src) { (void)src; }

static const gs_source_ops script_ops = {"script", script_walk, script_free, NULL, NULL, NULL,
                                         NULL};

static void script_init(script_source *s, const char *script, int stable_ids) {
  memset(s, 0, sizeof *s);
  s->base.ops = &script_ops;
  s->base.stable_ids = stable_ids;
  s->script = script;
}

static const gs_walk_options fixed_clock = {0, 1, 0x3e8, 0};

/* ---- knobs ------------------------------------------------------------------ */

static void test_knob_split(void **state) {
  const char *p = "objects=10,seed=0x1f,name=a=b,empty=";
  gs_knob k;
  char err[128];
  uint64_t v;
  (void)state;
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), 1);
  assert_true(gs_knob_is(&k, "objects"));
  assert_int_equal(gs_knob_count(&k, 0, 100, &v, err, sizeof err), GS_OK);
  assert_int_equal(v, 10);
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), 1);
  assert_int_equal(gs_knob_count(&k, 0, UINT64_MAX, &v, err, sizeof err), GS_OK);
  assert_int_equal(v, 0x1f);
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), 1);
  assert_true(gs_knob_is(&k, "name"));
  assert_int_equal(k.val_len, 3);
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), 1);
  assert_int_equal(k.val_len, 0);
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), 0);
  p = "novalue";
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), GS_EINVAL);
  assert_string_equal(err, "'novalue' is not KEY=VALUE");
  p = "=5";
  assert_int_equal(gs_knob_next(&p, &k, err, sizeof err), GS_EINVAL);
}

static gs_knob knob(const char *val) {
  gs_knob k;
  k.key = "x";
  k.key_len = 1;
  k.val = val;
  k.val_len = strlen(val);
  return k;
}

static void test_knob_numbers(void **state) {
  char err[128];
  uint64_t v;
  uint32_t ppm;
  gs_knob k;
  (void)state;
  k = knob("18446744073709551615");
  assert_int_equal(gs_knob_count(&k, 0, UINT64_MAX, &v, err, sizeof err), GS_OK);
  assert_true(v == UINT64_MAX);
  k = knob("18446744073709551616");
  assert_int_equal(gs_knob_count(&k, 0, UINT64_MAX, &v, err, sizeof err), GS_EINVAL);
  k = knob("0x");
  assert_int_equal(gs_knob_count(&k, 0, 10, &v, err, sizeof err), GS_EINVAL);
  k = knob("11");
  assert_int_equal(gs_knob_count(&k, 2, 10, &v, err, sizeof err), GS_EINVAL);
  assert_string_equal(err, "x: out of range 2-10: '11'");
  k = knob("2.5");
  assert_int_equal(gs_knob_fixed(&k, 3, 1000000, &v, err, sizeof err), GS_OK);
  assert_int_equal(v, 2500);
  k = knob(".125");
  assert_int_equal(gs_knob_fixed(&k, 3, 1000000, &v, err, sizeof err), GS_OK);
  assert_int_equal(v, 125);
  k = knob("1.2345");
  assert_int_equal(gs_knob_fixed(&k, 3, 1000000, &v, err, sizeof err), GS_EINVAL);
  k = knob("12.5");
  assert_int_equal(gs_knob_percent(&k, &ppm, err, sizeof err), GS_OK);
  assert_int_equal(ppm, 125000);
  k = knob("100");
  assert_int_equal(gs_knob_percent(&k, &ppm, err, sizeof err), GS_OK);
  assert_int_equal(ppm, 1000000);
  k = knob("100.0001");
  assert_int_equal(gs_knob_percent(&k, &ppm, err, sizeof err), GS_EINVAL);
  assert_string_equal(err, "x: larger than 100: '100.0001'");
  k = knob("-1");
  assert_int_equal(gs_knob_percent(&k, &ppm, err, sizeof err), GS_EINVAL);
}

static void test_knob_word(void **state) {
  static const char *const words[] = {"geometric", "uniform", NULL};
  char err[128];
  unsigned w = 9;
  gs_knob k = knob("uniform");
  (void)state;
  assert_int_equal(gs_knob_word(&k, words, &w, err, sizeof err), GS_OK);
  assert_int_equal(w, 1);
  k = knob("uni");
  assert_int_equal(gs_knob_word(&k, words, &w, err, sizeof err), GS_EINVAL);
  assert_string_equal(err, "x: not one of geometric, uniform: 'uni'");
}

/* ---- the walker --------------------------------------------------------------- */

static void test_walk_records(void **state) {
  script_source src;
  text_sink sink;
  gs_walk_stats st;
  (void)state;
  script_init(&src, "atorgcaoc", 0);
  text_sink_init(&sink);
  assert_int_equal(gs_walk(&src.base, &sink.base, &fixed_clock, &st), GS_OK);
  assert_string_equal(sink.text,
                      "a App 3e8\nt 2 T\no 30 1 18 +2\nr 10 4 1 1\n"
                      "g 2 1000 200 10000\nc App 3e8\n"
                      "a App 3e8\no 80 1 18 +2\nc App 3e8\n");
  assert_int_equal(st.sections, 2);
  assert_int_equal(st.types, 1);
  assert_int_equal(st.objects, 2);
  assert_int_equal(st.references, 4);
  assert_int_equal(st.roots, 1);
  assert_int_equal(st.generations, 1);
  assert_int_equal(st.failed, GS_WALK_OK);
  assert_int_equal(sink.committed, 0);    /* the caller commits */
  ts_free(&sink.base);
}

static void test_walk_timestamps(void **state) {
  script_source src;
  text_sink sink;
  gs_walk_stats st;
  gs_walk_options now = {0, 0, 0, 0};
  (void)state;
  /* a source's own time wins over the clock, once */
  script_init(&src, "Taoc", 0);
  text_sink_init(&sink);
  assert_int_equal(gs_walk(&src.base, &sink.base, &fixed_clock, &st), GS_OK);
  assert_string_equal(sink.text, "a App 77\no 30 1 18 +2\nc App 3e8\n");
  ts_free(&sink.base);
  /* the port clock: ms since boot, never 0 on a running system */
  script_init(&src, "ac", 0);
  text_sink_init(&sink);
  assert_int_equal(gs_walk(&src.base, &sink.base, &now, &st), GS_OK);
  assert_null(strstr(sink.text, "a App 0\n"));
  ts_free(&sink.base);
}

static void test_walk_stable_ids(void **state) {
  script_source src;
  text_sink sink;
  gs_walk_stats st;
  gs_walk_options opt = fixed_clock;
  char err[256];
  (void)state;
  opt.stable_ids = 1;
  script_init(&src, "aoc", 1);
  text_sink_init(&sink);
  assert_int_equal(gs_walk(&src.base, &sink.base, &opt, &st), GS_OK);
  assert_string_equal(sink.text,
                      "a App [stable-ids] 3e8\no 20 1 18 +2\nc App [stable-ids] 3e8\n");
  ts_free(&sink.base);
  /* refused, before anything reaches the sink, for a source without them */
  script_init(&src, "aoc", 0);
  text_sink_init(&sink);
  assert_int_equal(gs_walk_check(&src.base, &opt, err, sizeof err), GS_EINVAL);
  assert_int_equal(gs_walk(&src.base, &sink.base, &opt, &st), GS_EINVAL);
  assert_int_equal(st.failed, GS_WALK_USAGE);
  assert_non_null(strstr(st.error, "script source"));
  assert_int_equal(src.calls_made, 0);
  assert_null(sink.text);
}

static void check_order_error(const char *script, const char *message) {
  script_source src;
  text_sink sink;
  gs_walk_stats st;
  script_init(&src, script, 0);
  text_sink_init(&sink);
  assert_int_not_equal(gs_walk(&src.base, &sink.base, &fixed_clock, &st), GS_OK);
  assert_int_equal(st.failed, GS_WALK_SOURCE);
  assert_string_equal(st.error, message);
  ts_free(&sink.base);
}

static void test_walk_order(void **state) {
  (void)state;
  check_order_error("o", "the source gave an object outside a section");
  check_order_error("acr", "the source gave a root outside a section");
  check_order_error("aa", "the source opened a section inside another");
  check_order_error("c", "the source gave a section end outside a section");
  check_order_error("ao", "the source left a section open");
  check_order_error("aR", "the source gave a root kind above 5");
  check_order_error("aW", "the source gave object 20 with 33554433 references, above the "
                          "limit of 33554432 (--max-refs)");
}

/* A lower limit holds the same way; the source is told it before its walk. */
static void test_walk_max_refs(void **state) {
  gs_walk_options opt = {0, 1, 0x3e8, 2};
  script_source src;
  text_sink sink;
  gs_walk_stats st;
  (void)state;
  script_init(&src, "aoc", 0);
  text_sink_init(&sink);
  assert_int_equal(gs_walk(&src.base, &sink.base, &opt, &st), GS_OK);
  assert_int_equal(src.base.max_refs, 2);
  ts_free(&sink.base);
  opt.max_refs = 1;
  script_init(&src, "aoc", 0);
  text_sink_init(&sink);
  assert_int_not_equal(gs_walk(&src.base, &sink.base, &opt, &st), GS_OK);
  assert_int_equal(st.failed, GS_WALK_SOURCE);
  assert_string_equal(st.error, "the source gave object 20 with 2 references, above the "
                                "limit of 1 (--max-refs)");
  ts_free(&sink.base);
}

static void test_walk_blame(void **state) {
  script_source src;
  text_sink sink;
  gs_walk_stats st;
  (void)state;
  /* the sink fails on its third record: the source stops there */
  script_init(&src, "aooooc", 0);
  text_sink_init(&sink);
  sink.fail_at = 3;
  assert_int_equal(gs_walk(&src.base, &sink.base, &fixed_clock, &st), GS_EIO);
  assert_int_equal(st.failed, GS_WALK_SINK);
  assert_string_equal(st.error, "disk on fire");
  assert_int_equal(src.calls_made, 3);
  ts_free(&sink.base);
  /* the source fails for a reason of its own */
  script_init(&src, "ao", 0);
  src.fail_with = GS_EIO;
  text_sink_init(&sink);
  assert_int_equal(gs_walk(&src.base, &sink.base, &fixed_clock, &st), GS_EIO);
  assert_int_equal(st.failed, GS_WALK_SOURCE);
  assert_string_equal(st.error, "runtime went away");
  ts_free(&sink.base);
}

/* ---- the mock source through the walker ------------------------------------------- */

static char *mock_text(const char *options, gs_walk_stats *st) {
  gs_source *src = NULL;
  text_sink sink;
  char err[256];
  assert_int_equal(gs_sources_open(&src, options, err, sizeof err), GS_OK);
  text_sink_init(&sink);
  assert_int_equal(gs_walk(src, &sink.base, &fixed_clock, st), GS_OK);
  src->ops->free(src);
  return sink.text;
}

static void test_mock(void **state) {
  gs_walk_stats st, st2;
  char *a, *b, *c;
  (void)state;
  a = mock_text("mock:objects=5000,sections=2,types=40,seed=3", &st);
  b = mock_text("mock:objects=5000,sections=2,types=40,seed=3", &st2);
  c = mock_text("mock:objects=5000,sections=2,types=40,seed=4", &st2);
  assert_string_equal(a, b);
  assert_string_not_equal(a, c);
  assert_int_equal(st.objects, 5000);
  assert_int_equal(st.sections, 2);
  assert_int_equal(st.types, 2 * 40);
  assert_int_equal(st.generations, 2 * 3);
  assert_true(st.roots > 5000 / 64);
  free(a);
  free(b);
  free(c);
  /* an empty heap is one section with its types and nothing else */
  a = mock_text("mock:objects=0,types=2", &st);
  assert_int_equal(st.objects, 0);
  assert_int_equal(st.roots, 0);
  assert_int_equal(st.types, 2);
  free(a);
}

static void test_sources_open(void **state) {
  gs_source *src = (gs_source *)1;
  char err[256];
  (void)state;
  assert_int_equal(gs_sources_open(&src, "nosuch:x=1", err, sizeof err), GS_EINVAL);
  assert_null(src);
  assert_non_null(strstr(err, "unknown source 'nosuch'"));
  assert_int_equal(gs_sources_open(&src, "mock:seed=x", err, sizeof err), GS_EINVAL);
  assert_string_equal(err, "mock: seed: not a non-negative integer: 'x'");
  assert_int_equal(gs_sources_open(&src, "file:/no/such/file.gclog", err, sizeof err), GS_EIO);
  assert_non_null(strstr(err, "file: cannot open '/no/such/file.gclog'"));
  assert_int_equal(gs_sources_open(&src, "mock", err, sizeof err), GS_OK);
  assert_int_equal(src->stable_ids, 1);
  src->ops->free(src);
}

/* ---- the file sink ------------------------------------------------------------------ */

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void test_file_sink(void **state) {
  char dir[] = "/tmp/gs-agent-test-XXXXXX", path[128], tmp[160];
  gs_sink *sink;
  char err[256];
  FILE *f;
  char buf[64] = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/x.gclog", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp.%lu", path, (unsigned long)getpid());
  /* discarded: the temporary file goes, nothing appears */
  assert_int_equal(gs_sink_file_new(&sink, path, err, sizeof err), GS_OK);
  assert_true(exists(tmp));
  assert_int_equal(sink->ops->section(sink, "A", 1, 1), GS_OK);
  sink->ops->free(sink);
  assert_false(exists(tmp));
  assert_false(exists(path));
  /* committed: renamed into place, generation ranges dropped */
  assert_int_equal(gs_sink_file_new(&sink, path, err, sizeof err), GS_OK);
  assert_int_equal(sink->ops->section(sink, "A", 1, 1), GS_OK);
  assert_int_equal(sink->ops->generation(sink, 0, 1, 2, 3), GS_OK);
  assert_int_equal(sink->ops->section_end(sink, "A", 1, 2), GS_OK);
  assert_false(exists(path));
  assert_int_equal(sink->ops->commit(sink), GS_OK);
  assert_int_equal(sink->bytes, 14);
  sink->ops->free(sink);
  assert_false(exists(tmp));
  assert_non_null(f = fopen(path, "rb"));
  assert_int_equal(fread(buf, 1, sizeof buf - 1, f), 14);
  fclose(f);
  assert_string_equal(buf, "a 2 A 1\nc A 2\n");
  /* a stale temporary file of the same name is never written through */
  assert_non_null(f = fopen(tmp, "wb"));
  fclose(f);
  assert_int_equal(gs_sink_file_new(&sink, path, err, sizeof err), GS_EIO);
  assert_non_null(strstr(err, "cannot create"));
  assert_true(exists(tmp));
  remove(tmp);
  remove(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_knob_split),
    cmocka_unit_test(test_knob_numbers),
    cmocka_unit_test(test_knob_word),
    cmocka_unit_test(test_walk_records),
    cmocka_unit_test(test_walk_timestamps),
    cmocka_unit_test(test_walk_stable_ids),
    cmocka_unit_test(test_walk_order),
    cmocka_unit_test(test_walk_max_refs),
    cmocka_unit_test(test_walk_blame),
    cmocka_unit_test(test_mock),
    cmocka_unit_test(test_sources_open),
    cmocka_unit_test(test_file_sink),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
