/* test_wpfapp.c - the real WPF application heap (GS_SHARED_DIR/fixtures/
 * wpfapp.gclog): read, validated and loaded as a graph, with the figures
 * checked against ones computed independently of gcsnap.
 *
 * The file lives outside the repository. Without it the test exits with 77,
 * which ctest reports as skipped. */
#include "gs_unit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "gs_graph.h"
#include "gs_validate.h"

#define WPFAPP GS_SHARED_DIR "/fixtures/wpfapp.gclog"

/* Figures of the file, from its README and from tools other than gcsnap. */
#define WPF_OBJECTS 138204u
#define WPF_REFS    230761u
#define WPF_ROOTS   2185u
#define WPF_TYPES   1151u
#define WPF_LINES   141542u   /* wc -l: 1 a + 1151 t + 138204 o + 2185 r + 1 c */
/* Sum of the size field of every "o" record ("4.1 MB" in the README),
 * computed once with
 *   awk 'function hex(s, i,v){v=0; s=tolower(s); for(i=1;i<=length(s);i++)
 *        v=v*16+index("0123456789abcdef",substr(s,i,1))-1; return v}
 *        $1=="o"{t+=hex($4)} END{print t}' wpfapp.gclog */
#define WPF_BYTES   4139432u
/* Objects not reachable from a root without the weak flag ("about 123,000"
 * in the README), computed once with a Python script that builds a dict of
 * object ID -> referenced IDs from the "o" records and walks it depth-first
 * from the object of every "r" record whose flags lack bit 2. It also found
 * 14,731 reachable objects and no reference or root to an object missing
 * from the dump. */
#define WPF_UNREACHABLE 123473u

/* ---- reading ------------------------------------------------------------ */

static void count_records(gs_reader *r) {
  gs_record rec;
  uint64_t n[128] = {0}, refs = 0, bytes = 0, lines = 0;
  int err;
  while ((err = gs_reader_next(r, &rec)) == GS_OK) {
    n[rec.kind & 127]++;
    if (rec.kind == GS_REC_OBJECT) {
      refs += rec.nrefs;
      bytes += rec.size;
    }
    lines = rec.line;
  }
  gsu_assert_err(err, GS_EOF);
  assert_int_equal(n['a'], 1);
  assert_int_equal(n['c'], 1);
  assert_int_equal(n['t'], WPF_TYPES);
  assert_int_equal(n['o'], WPF_OBJECTS);
  assert_int_equal(n['r'], WPF_ROOTS);
  assert_int_equal(refs, WPF_REFS);
  assert_int_equal(bytes, WPF_BYTES);
  assert_int_equal(lines, WPF_LINES);
}

static void test_read_fd(void **state) {
  (void)state;
  int fd = open(WPFAPP, O_RDONLY | GSU_O_BINARY);
  gs_reader *r = NULL;
  assert_true(fd >= 0);
  gsu_assert_ok(gs_reader_new_fd(&r, fd));
  count_records(r);
  assert_int_equal(gs_reader_offset(r), (uint64_t)lseek(fd, 0, SEEK_END));
  gs_reader_free(r);
  close(fd);
}

static void test_read_file(void **state) {
  (void)state;
  FILE *f = fopen(WPFAPP, "rb");
  gs_reader *r = NULL;
  assert_non_null(f);
  gsu_assert_ok(gs_reader_new_file(&r, f));
  count_records(r);
  gs_reader_free(r);
  fclose(f);
}

/* ---- validation --------------------------------------------------------- */

static void test_validate(void **state) {
  (void)state;
  FILE *f = fopen(WPFAPP, "rb");
  gs_reader *r = NULL;
  gsu_diags diags = {0};
  gs_validate_counts counts;
  size_t i;
  assert_non_null(f);
  gsu_assert_ok(gs_reader_new_file(&r, f));
  gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &diags, &counts));
  print_message("  wpfapp.gclog: %llu errors, %llu warnings, %llu records, %llu sections\n",
                (unsigned long long)counts.errors, (unsigned long long)counts.warnings,
                (unsigned long long)counts.records, (unsigned long long)counts.sections);
  for (i = 0; i < diags.n && i < 10; i++)
    print_message("  line %llu: %s: %s\n", (unsigned long long)diags.items[i].line,
                  gs_diag_name(diags.items[i].code), diags.items[i].message);
  assert_int_equal(counts.errors, 0);
  /* Every reference, root and type resolves (checked by the script above),
   * flags are 0 or 1 and the version is 2, so there is nothing to warn of. */
  assert_int_equal(counts.warnings, 0);
  assert_int_equal(counts.sections, 1);
  assert_int_equal(counts.records, WPF_LINES);
  gs_reader_free(r);
  fclose(f);
  gsu_diags_free(&diags);
}

/* ---- graph -------------------------------------------------------------- */

static void test_graph(void **state) {
  (void)state;
  FILE *f = fopen(WPFAPP, "rb");
  gs_reader *r = NULL;
  gs_graph *g = NULL, *none = NULL;
  gs_diag err;
  uint8_t *bits;
  uint64_t bytes = 0;
  uint32_t i, unreachable = 0;
  size_t mem;
  assert_non_null(f);
  gsu_assert_ok(gs_reader_new_file(&r, f));
  gsu_assert_ok(gs_graph_load(r, &g, &err));
  assert_string_equal(g->name, "wpfapp.exe");
  assert_int_equal(g->nobjects, WPF_OBJECTS);
  assert_int_equal(g->nnodes, WPF_OBJECTS);
  assert_int_equal(g->nrefs, WPF_REFS);
  assert_int_equal(g->dangling_refs, 0);
  assert_int_equal(g->nroots, WPF_ROOTS);
  assert_int_equal(g->ntypes, WPF_TYPES);
  for (i = 0; i < g->nnodes; i++) {
    assert_true(g->types[i] != GS_GRAPH_MISSING);
    bytes += g->sizes[i];
  }
  assert_int_equal(bytes, WPF_BYTES);
  bits = calloc((g->nnodes + 7) / 8, 1);
  assert_non_null(bits);
  gsu_assert_ok(gs_graph_reachable(g, bits));
  for (i = 0; i < g->nnodes; i++) unreachable += !((bits[i >> 3] >> (i & 7)) & 1);
  print_message("  wpfapp.gclog: %u of %u objects unreachable\n", unreachable, g->nobjects);
  assert_int_equal(unreachable, WPF_UNREACHABLE);
  mem = gs_graph_memory(g);
  print_message("  graph memory: %zu bytes\n", mem);
  assert_true(mem <= (size_t)32 * g->nobjects + 4 * g->nrefs + 16 * (size_t)g->nroots);
  gsu_assert_err(gs_graph_load(r, &none, &err), GS_EOF);
  free(bits);
  gs_graph_free(g);
  gs_reader_free(r);
  fclose(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_read_fd),
    cmocka_unit_test(test_read_file),
    cmocka_unit_test(test_validate),
    cmocka_unit_test(test_graph),
  };
  FILE *f;
  if (!GS_HAVE_SHARED) {
    printf("SKIP: %s was absent when the build was configured\n", WPFAPP);
    return 77;
  }
  if (!(f = fopen(WPFAPP, "rb"))) {
    printf("SKIP: %s not found (set GS_SHARED_DIR to the folder with fixtures/)\n", WPFAPP);
    return 77;
  }
  fclose(f);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
