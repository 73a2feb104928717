/* test_gcdump_wpfapp.c - the real PerfView file (GS_SHARED_DIR/fixtures/
 * wpfapp.gcdump) read by the .gcdump reader: the records must be those of
 * wpfapp.gclog, which was made from it (fixtures/README.md), line for line
 * but the section name, which the reader takes from the file's process
 * name, and the six objects a COM object stands behind (RCWs, named
 * "[RCW ...]"), which wpfapp.gclog leaves out with the roots that hold
 * them. Cut copies are refused as truncated and write nothing.
 *
 * The files live outside the repository. Without them the test exits with
 * 77, which ctest reports as skipped. */
#include "gs_unit.h"

#include <stdlib.h>

#include "gs_writer.h"
#include "gsf_gcdump.h"

#define GCDUMP GS_SHARED_DIR "/fixtures/wpfapp.gcdump"
#define GCLOG  GS_SHARED_DIR "/fixtures/wpfapp.gclog"

static char *dump, *log_text;
static size_t dump_len, log_len;

typedef struct mem_in {
  const char *p;
  size_t len, pos;
  uint32_t seed;   /* hands out pieces of pseudo-random sizes */
} mem_in;

static int mem_read(void *ctx, void *buf, size_t cap, size_t *got) {
  mem_in *m = ctx;
  size_t n = m->len - m->pos;
  m->seed = m->seed * 1103515245u + 12345u;
  if (n > cap) n = cap;
  if (n > 1 + (m->seed >> 16) % 9000) n = 1 + (m->seed >> 16) % 9000;
  memcpy(buf, m->p + m->pos, n);
  m->pos += n;
  *got = n;
  return GS_OK;
}

static int convert(size_t len, gsu_buf *out, char *err, size_t cap) {
  mem_in in = {dump, len, 0, 7};
  gs_writer *w;
  int rc;
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, out));
  rc = gsf_gcdump_convert(mem_read, &in, w, err, cap);
  gsu_assert_ok(gs_writer_free(w));
  return rc;
}

/* The text between the first and the last line. */
static const char *body(const char *s, size_t len, size_t *n) {
  const char *a = memchr(s, '\n', len), *e = s + len - 1;
  assert_non_null(a);
  while (e > a && e[-1] != '\n') e--;
  *n = (size_t)(e - a - 1);
  return a + 1;
}

#define MAX_RCWS 16

typedef struct rcws {
  uint64_t types[MAX_RCWS], objects[MAX_RCWS];
  unsigned ntypes, nobjects, nroots, nrefs;
} rcws;

static int listed(const uint64_t *ids, unsigned n, uint64_t id) {
  while (n--)
    if (ids[n] == id) return 1;
  return 0;
}

/* The RCWs' types and objects among the records from s to e. */
static void find_rcws(const char *s, const char *e, rcws *r) {
  memset(r, 0, sizeof *r);
  for (; s < e; s = (const char *)memchr(s, '\n', (size_t)(e - s)) + 1) {
    char *end;
    uint64_t id = strtoull(s + 2, &end, 16);
    if (*s == 't' && strncmp(end, " [RCW ", 6) == 0) {
      assert_true(r->ntypes < MAX_RCWS);
      r->types[r->ntypes++] = id;
    } else if (*s == 'o' && listed(r->types, r->ntypes, strtoull(end, NULL, 16))) {
      assert_true(r->nobjects < MAX_RCWS);
      r->objects[r->nobjects++] = id;
    }
  }
}

/* The object line from s to nl without its references to RCWs, into out. */
static size_t copy_object(const char *s, const char *nl, rcws *r, char *out) {
  size_t len = 0;
  unsigned field = 0;
  while (s < nl) {
    const char *sp = memchr(s, ' ', (size_t)(nl - s)), *end = sp ? sp : nl;
    if (field++ >= 4 && listed(r->objects, r->nobjects, strtoull(s, NULL, 16))) {
      r->nrefs++;
    } else {
      if (len) out[len++] = ' ';
      memcpy(out + len, s, (size_t)(end - s));
      len += (size_t)(end - s);
    }
    s = end + 1;
  }
  out[len++] = '\n';
  return len;
}

/* The records of s (n bytes) without the RCWs: their types, objects, roots
 * and the references to them, into out. */
static size_t without_rcws(const char *s, size_t n, char *out, rcws *r) {
  const char *e = s + n;
  size_t len = 0;
  find_rcws(s, e, r);
  while (s < e) {
    const char *nl = memchr(s, '\n', (size_t)(e - s));
    char *end;
    uint64_t id = strtoull(s + 2, &end, 16);
    assert_non_null(nl);
    if (*s == 'r' && listed(r->objects, r->nobjects, id)) {
      r->nroots++;
    } else if (*s == 'o' && !listed(r->objects, r->nobjects, id)) {
      len += copy_object(s, nl, r, out + len);
    } else if (*s != 'o' && !(*s == 't' && listed(r->types, r->ntypes, id))) {
      memcpy(out + len, s, (size_t)(nl + 1 - s));
      len += (size_t)(nl + 1 - s);
    }
    s = nl + 1;
  }
  return len;
}

static void test_same_records(void **state) {
  gsu_buf out = {0};
  char err[256], *kept;
  const char *got, *want;
  size_t got_n, want_n;
  rcws r;
  (void)state;
  gsu_assert_ok(convert(dump_len, &out, err, sizeof err));
  got = body(out.data, out.len, &got_n);
  want = body(log_text, log_len, &want_n);
  kept = malloc(got_n + 1);
  assert_non_null(kept);
  got_n = without_rcws(got, got_n, kept, &r);
  assert_int_equal(r.ntypes, 2);    /* System.__ComObject, by reference count */
  assert_int_equal(r.nobjects, 6);
  assert_int_equal(r.nroots, 4);    /* three static variables, one local */
  assert_int_equal(r.nrefs, 6);
  assert_int_equal(got_n, want_n);
  assert_memory_equal(kept, want, want_n);
  free(kept);
  assert_int_equal(strncmp(out.data, "a 2 WpfApplication2 0\n", 22), 0);
  assert_int_equal(strncmp(out.data + out.len - 20, "c WpfApplication2 0\n", 20), 0);
  gsu_buf_free(&out);
}

/* Cut at 80 places over the whole file and at every byte of its head. */
static void test_truncated(void **state) {
  gsu_buf out = {0};
  char err[256];
  size_t i;
  (void)state;
  for (i = 0; i < 80 + 200; i++) {
    size_t n = i < 80 ? dump_len / 80 * i + i : i - 80;
    int rc;
    out.len = 0;
    rc = convert(n, &out, err, sizeof err);
    if (rc != GS_EFORMAT || !strstr(err, "truncated") || strncmp(err, "byte ", 5) != 0 || out.len) {
      print_error("cut at %zu: rc %d, \"%s\", %zu bytes written\n", n, rc, err, out.len);
      fail();
    }
  }
  gsu_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_same_records),
    cmocka_unit_test(test_truncated),
  };
  FILE *a = fopen(GCDUMP, "rb"), *b = fopen(GCLOG, "rb");
  if (a) fclose(a);
  if (b) fclose(b);
  if (!a || !b) {
    printf("%s or %s not found: skipped\n", GCDUMP, GCLOG);
    return 77;
  }
  dump = gsu_read_file(GCDUMP, &dump_len);
  log_text = gsu_read_file(GCLOG, &log_len);
  {
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    free(dump);
    free(log_text);
    return rc;
  }
}
