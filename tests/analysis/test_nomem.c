/* test_nomem.c - running out of memory while a graph is loaded, packed and
 * its dominator tree built, and while the tree's JSON is printed or built. Each allocation fails in turn (gs_unit_nomem):
 * the step that meets it must report GS_ENOMEM and leave what it had
 * freeable, or do without and give the tree of a run with memory to spare
 * (the sanitizers check that nothing leaks or is used once freed). */
#include "gs_unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gs_dom.h"
#include "gs_dominators.h"
#include "gs_error.h"
#include "gs_graph.h"
#include "gs_jsonw.h"
#include "gs_unit_nomem.h"

/* Loads text, packs the graph, builds its tree, drops the references and
 * unpacks the graph, with allocation k failing (0: none). GS_OK with the
 * tree in d, or the first error. *met says whether allocation k came. */
static int run(const char *text, long k, gs_dom *d, int *met) {
  gs_reader *r = NULL;
  gs_graph *g = NULL;
  gs_diag diag;
  int err;
  gsu_nomem_arm(k);
  if (!(err = gs_reader_new_buffer(&r, text, strlen(text)))) err = gs_graph_load(r, &g, &diag);
  if (!err) err = gs_graph_pack(g);
  if (!err) err = gs_dom_build(g, d);
  if (!err) {
    gs_graph_drop_refs(g);
    err = gs_graph_unpack(g);
    if (err) gs_dom_free(d);
  }
  *met = gsu_nomem_disarm();
  gs_reader_free(r);
  gs_graph_free(g);
  return err;
}

/* 300 objects out of ID order, sizes and ID steps of every width, up to
 * eight references each (more than two a vertex point back in depth-first
 * order, so predecessors are listed a range at a time), references to
 * objects not in the dump, and roots. */
static void make_dump(gsu_buf *b) {
  uint64_t seed = 5;
  uint32_t i, k, n = 300;
  gsu_buf_printf(b, "a 2 Low 0\nt 1 A\nt 2 B\n");
  for (i = 0; i < n; i++) {
    uint32_t at = (i * 7) % n, degree;
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    degree = (uint32_t)(seed >> 60) % 9;
    gsu_buf_printf(b, "o %x %x %x", 0x1000 + 0x40 * at + (at > 200 ? 0x100000 : 0), 1 + at % 2,
                   at % 50 == 0 ? 0x12345 : 8 + at % 64);
    for (k = 0; k < degree; k++) {
      uint32_t to = (uint32_t)((seed >> (8 * k)) % (n + 4));
      gsu_buf_printf(b, " %x", 0x1000 + 0x40 * to + (to > 200 ? 0x100000 : 0));
    }
    gsu_buf_printf(b, "\n");
  }
  for (i = 0; i < n; i += 37) gsu_buf_printf(b, "r %x 1 0\n", 0x1000 + 0x40 * i);
  gsu_buf_printf(b, "c Low 0\n");
}

/* got, as a run that met no failure gives it. */
static void check_same(const gs_dom *got, const gs_dom *want) {
  assert_int_equal(got->n, want->n);
  assert_int_equal(got->reachable, want->reachable);
  assert_memory_equal(got->idom, want->idom, ((size_t)want->n + 1) * sizeof *want->idom);
  assert_memory_equal(got->retained, want->retained,
                      ((size_t)want->n + 1) * sizeof *want->retained);
}

/* A failure either stops the step with GS_ENOMEM or is one it can do
 * without (a thread, giving back slack): then the tree is the same. */
static void every_allocation_fails(void **state) {
  gsu_buf b = {0};
  gs_dom want, got;
  long k, refused = 0;
  int met;
  (void)state;
  make_dump(&b);
  gsu_assert_ok(run(b.data, 0, &want, &met));
  for (k = 1, met = 1; met; k++) {
    int err = run(b.data, k, &got, &met);
    if (err) {
      assert_int_equal(err, GS_ENOMEM);
      refused++;
      continue;
    }
    check_same(&got, &want);
    gs_dom_free(&got);
  }
  /* Every step allocates: load, pack, tree and unpack. */
  assert_true(refused > 40);
  gs_dom_free(&want);
  gsu_buf_free(&b);
}

/* ---- the dominators' JSON --------------------------------------------- */

/* jansson's allocations go through the wrapped malloc too. */
static void *json_malloc(size_t n) { return malloc(n); }

/* The document of path, printed (the text in *text) or built, with
 * allocation k failing; its error. */
static int dominators_json(const char *path, long k, int print, json_t **built, char **text, int *met) {
  gs_file_fault fault;
  int err;
  size_t len = 0;
  FILE *out = print ? open_memstream(text, &len) : NULL;
  gsu_nomem_arm(k);
  if (print) {
    gs_jsonw *w = gs_jsonw_print(out);
    err = w ? gs_dominators_write(w, path, 0, 1, &fault) : GS_ENOMEM;
    if (gs_jsonw_finish(w, NULL) && !err) err = GS_ENOMEM;
  } else {
    err = gs_dominators_json(path, 0, 1, built, &fault);
  }
  *met = gsu_nomem_disarm();
  if (out) fclose(out);
  return err;
}

/* Printed or built, the document is whole or the error is GS_ENOMEM. */
static void json_allocations_fail(void **state) {
  char path[] = "/tmp/gs-nomem-XXXXXX", *want_text = NULL, *text = NULL;
  gsu_buf b = {0};
  json_t *want = NULL, *got;
  long k, refused = 0;
  int fd = mkstemp(path), print, met;
  (void)state;
  assert_true(fd >= 0);
  make_dump(&b);
  assert_int_equal(write(fd, b.data, b.len), (long)b.len);
  close(fd);
  json_set_alloc_funcs(json_malloc, free);
  gsu_assert_ok(dominators_json(path, 0, 0, &want, NULL, &met));
  gsu_assert_ok(dominators_json(path, 0, 1, NULL, &want_text, &met));
  got = json_loads(want_text, 0, NULL);
  assert_true(got && json_equal(got, want));
  json_decref(got);
  for (print = 0; print < 2; print++)
    for (k = 1, met = 1; met; k++) {
      int err = dominators_json(path, k, print, &got, &text, &met);
      if (err) {
        assert_int_equal(err, GS_ENOMEM);
        refused++;
      } else if (print) {
        assert_string_equal(text, want_text);
      } else {
        assert_true(json_equal(got, want));
        json_decref(got);
      }
      free(text);
      text = NULL;
    }
  assert_true(refused > 40);
  json_set_alloc_funcs(malloc, free);
  json_decref(want);
  free(want_text);
  unlink(path);
  gsu_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(every_allocation_fails),
    cmocka_unit_test(json_allocations_fail),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
