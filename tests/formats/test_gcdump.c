/* test_gcdump.c - the .gcdump reader on a sample file built the way PerfView
 * lays it out (gcdump_build.c): the exact records, sniffing, every
 * truncation, corrupted counts and offsets, random damage, failing input
 * and output. Damaged input must give an error naming a byte offset, write
 * nothing, and never crash or allocate what the file only claims. */
#include "gs_unit.h"

#include <stdlib.h>

#include "gcdump_build.h"
#include "gs_writer.h"
#include "gsf_gcdump.h"

typedef struct mem_in {
  const unsigned char *p;
  size_t len, pos, step;   /* step: most bytes handed out per call */
  int fail_at;             /* > 0: this call fails with fail_rc, else GS_EIO */
  int fail_rc;
  int calls;
} mem_in;

static int mem_read(void *ctx, void *buf, size_t cap, size_t *got) {
  mem_in *m = ctx;
  size_t n = m->len - m->pos;
  if (++m->calls == m->fail_at) return m->fail_rc ? m->fail_rc : GS_EIO;
  if (m->step && n > m->step) n = m->step;
  if (n > cap) n = cap;
  memcpy(buf, m->p + m->pos, n);
  m->pos += n;
  *got = n;
  return GS_OK;
}

/* Converts data into out (text); returns the reader's code. */
static int convert(const unsigned char *data, size_t len, size_t step, gsu_buf *out, char *err,
                   size_t cap) {
  mem_in in = {data, len, 0, step, 0, 0, 0};
  gs_writer *w;
  int rc, wrc;
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, out));
  rc = gsf_gcdump_convert(mem_read, &in, w, err, cap);
  wrc = gs_writer_free(w);
  if (rc == GS_OK) gsu_assert_ok(wrc);
  return rc;
}

/* A refusal: an error code, "byte N: ..." in err, nothing written. */
static void assert_refused(const unsigned char *data, size_t len, const char *must_say) {
  gsu_buf out = {0};
  char err[256];
  int rc = convert(data, len, 0, &out, err, sizeof err);
  if (rc >= 0 || strncmp(err, "byte ", 5) != 0 || out.len != 0 ||
      (must_say && !strstr(err, must_say))) {
    print_error("input of %zu bytes: rc %d, err \"%s\", %zu bytes written\n", len, rc, err,
                out.len);
    fail();
  }
  gsu_buf_free(&out);
}

static void test_sample_records(void **state) {
  gcdb_file f;
  gsu_buf out = {0};
  char err[256];
  size_t step;
  (void)state;
  gcdb_sample(&f);
  /* in one piece, and handed out a few bytes at a time */
  for (step = 0; step < 8; step += 3) {
    out.len = 0;
    gsu_assert_ok(convert(f.data, f.len, step, &out, err, sizeof err));
    gsu_buf_append(&out, "", 1);
    assert_string_equal(out.data, GCDB_SAMPLE_RECORDS);
    assert_string_equal(err, "");   /* no note: the whole heap */
  }
  gsu_buf_free(&out);
  free(f.data);
}

/* The sample's App node has four children in the file (two of them
 * pseudo-nodes, which are not written, but counted when the nodes are
 * checked): a writer that takes three refuses the file before anything is
 * written; one that takes four, nothing. */
static void test_object_limit(void **state) {
  gcdb_file f;
  gsu_buf out = {0};
  char err[256];
  size_t max;
  (void)state;
  gcdb_sample(&f);
  for (max = 3; max <= 4; max++) {
    mem_in in = {f.data, f.len, 0, 0, 0, 0, 0};
    gs_writer *w;
    int rc;
    out.len = 0;
    gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, &out));
    gs_writer_set_max_refs(w, max);
    rc = gsf_gcdump_convert(mem_read, &in, w, err, sizeof err);
    gsu_assert_ok(gs_writer_free(w));
    if (max == 3) {
      gsu_assert_err(rc, GS_ELIMIT);
      assert_non_null(strstr(err, "node 8 has 4 references, above the limit of one object (3)"));
      assert_int_equal(out.len, 0);
    } else {
      gsu_assert_ok(rc);
      assert_int_equal(out.len, strlen(GCDB_SAMPLE_RECORDS));
    }
  }
  gsu_buf_free(&out);
  free(f.data);
}

/* A heap PerfView sampled converts to the same records (the sample), with
 * a note that says so and how much was left out. */
static void test_sampled(void **state) {
  static const struct { float average, by_type; const char *says; } cases[] = {
    {4.0f, 0, "PerfView kept a sample of this heap, about 1 object in 4.0: objects, bytes and "
              "references are the sample's, not scaled"},
    {1.0f, 9.5f, "PerfView kept a sample of this heap, up to 1 object in 9.5 of a type: "},
    {1.0f, 1.0f, ""},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    gcdb_file f;
    gsu_buf out = {0};
    char err[256];
    gcdb_sampled(&f, cases[i].average, cases[i].by_type);
    gsu_assert_ok(convert(f.data, f.len, 0, &out, err, sizeof err));
    gsu_buf_append(&out, "", 1);
    assert_string_equal(out.data, GCDB_SAMPLE_RECORDS);
    if (cases[i].says[0]) assert_non_null(strstr(err, cases[i].says));
    else assert_string_equal(err, "");
    gsu_buf_free(&out);
    free(f.data);
  }
}

/* The graph built as a file converts into exactly want. */
static void assert_records(const gcdb_graph *graph, const char *want) {
  gcdb_file f;
  gsu_buf out = {0};
  char err[256];
  gcdb_build(&f, graph);
  gsu_assert_ok(convert(f.data, f.len, 0, &out, err, sizeof err));
  gsu_buf_append(&out, "", 1);
  assert_string_equal(out.data, want);
  gsu_buf_free(&out);
  free(f.data);
}

/* The category names of dotnet-gcdump and of newer PerfView files, nested
 * under "[GC Heaps]" and "[other roots]"; names of static variables that
 * hold words of other categories; a pseudo-node reached twice. An object a
 * COM object stands behind (an RCW), named in brackets as well, is an
 * object: in a local variable, with a reference of its own. */
static void test_root_categories(void **state) {
  static const char *const types[] = {
    "UNDEFINED", "[GC Heaps]", "[.NET Roots]", "[other roots]", "[StrongHandle]",
    "[PinnedHandle]", "[thread static vars]", "[static var Worker.current]",
    "[Pinned local vars]", "[local vars]", "[RCW Some.Finalizer.Handle RefCnt: 1]",
    "[AsyncPinnedHandle]", "[SizedRefHandle]", "[RefCountedHandle]", "Worker", "[JS Roots]",
    "[static var Pinned.handles]"};
  static const int32_t sizes[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1024, 0, 0, 0, 32, 0, 0};
  static const gcdb_node nodes[] = {
    {1, -1, 2, {1, 14}},             /* 0 [GC Heaps] */
    {2, -1, 4, {2, 7, 9, 10}},       /* 1 [.NET Roots] */
    {3, -1, 5, {3, 4, 5, 6, 17}},    /* 2 [other roots] */
    {4, -1, 1, {20}},                /* 3 [StrongHandle] */
    {5, -1, 1, {21}},                /* 4 [PinnedHandle] */
    {11, -1, 1, {22}},               /* 5 [AsyncPinnedHandle] */
    {12, -1, 1, {20}},               /* 6 [SizedRefHandle] */
    {6, -1, 2, {8, 19}},             /* 7 [thread static vars] */
    {7, -1, 1, {22}},                /* 8 [static var Worker.current] */
    {8, -1, 1, {21}},                /* 9 [Pinned local vars] */
    {9, -1, 2, {11, 20}},            /* 10 [local vars] */
    {10, -1, 1, {23}},               /* 11 an RCW */
    {-1, -1, 0, {0}}, {-1, -1, 0, {0}},
    {15, -1, 2, {23, 1}},            /* 14 [JS Roots] */
    {-1, -1, 0, {0}}, {-1, -1, 0, {0}},
    {13, -1, 1, {21}},               /* 17 [RefCountedHandle] */
    {-1, -1, 0, {0}},
    {16, -1, 1, {20}},               /* 19 [static var Pinned.handles] */
    {14, -1, 1, {21}}, {14, -1, 1, {22}}, {14, -1, 0, {0}}, {14, -1, 2, {20, 5}}};
  static const gcdb_graph graph = {types, sizes, 17, nodes, 24};
  static const char want[] =
    "a 2 TestApp 0\n"
    "t a [RCW Some.Finalizer.Handle RefCnt: 1]\n" "o b a 400 17\n"
    "t e Worker\n"
    "o 14 e 20 15\n" "o 15 e 20 16\n" "o 16 e 20\n" "o 17 e 20 14\n"
    "r b 1 0\n" "r 14 1 0\n" "r 15 1 1\n"         /* local vars, pinned locals */
    "r 14 4 0 e\n" "r 16 4 0 e\n"                   /* thread statics */
    "r 15 0 0\n" "r 14 3 0\n" "r 16 3 1\n" "r 15 3 1\n" "r 14 3 0\n"   /* other roots */
    "r 17 0 0\n"                                     /* [JS Roots] */
    "c TestApp 0\n";
  (void)state;
  assert_records(&graph, want);
}

/* PerfView's JavaScript heaps (Internet Explorer, Edge): the objects'
 * names may start with a bracket, as pseudo-nodes' do, but do not end
 * with one. */
static void test_js_heap(void **state) {
  static const char *const types[] = {
    "UNDEFINED", "[JS Roots]", "(Type  JSGlobal)", "[] (Type  JSArray)",
    "[object Window] (Type  JSObject)"};
  static const int32_t sizes[] = {0, 0, 256, 32, 64};
  static const gcdb_node nodes[] = {
    {1, -1, 2, {1, 3}},              /* 0 [JS Roots] */
    {2, -1, 1, {2}},                 /* 1 the global object */
    {3, -1, 1, {3}},                 /* 2 an array element of it */
    {4, -1, 0, {0}}};                /* 3 the window */
  static const gcdb_graph graph = {types, sizes, 5, nodes, 4};
  static const char want[] =
    "a 2 TestApp 0\n"
    "t 2 (Type  JSGlobal)\n" "o 1 2 100 2\n"
    "t 3 [] (Type  JSArray)\n" "o 2 3 20 3\n"
    "t 4 [object Window] (Type  JSObject)\n" "o 3 4 40\n"
    "r 1 0 0\n" "r 3 0 0\n"
    "c TestApp 0\n";
  (void)state;
  assert_records(&graph, want);
}

static void test_sniff(void **state) {
  static const unsigned char nettrace[] =
      "\x14\0\0\0!FastSerialization.1\x04\x04\x01\x04\0\0\0\x04\0\0\0\x05\0\0\0Trace\x06";
  static const char text[] = "a 2 wpfapp.exe 0\nt 1 System.Object\n";
  gcdb_file f;
  (void)state;
  gcdb_sample(&f);
  assert_true(gsf_gcdump_sniff(f.data, GSF_GCDUMP_SNIFF_BYTES));
  assert_true(gsf_gcdump_sniff(f.data, f.len));
  assert_false(gsf_gcdump_sniff(f.data, 30));   /* too short to tell */
  assert_false(gsf_gcdump_sniff(NULL, 0));
  assert_false(gsf_gcdump_sniff(nettrace, sizeof nettrace - 1));
  assert_false(gsf_gcdump_sniff((const unsigned char *)text, sizeof text - 1));
  f.data[40] ^= 0x20;   /* "GCHeapDump" spelt otherwise */
  assert_false(gsf_gcdump_sniff(f.data, f.len));
  free(f.data);
}

/* Every prefix of the file is reported as truncated. */
static void test_truncations(void **state) {
  gcdb_file f;
  size_t n;
  (void)state;
  gcdb_sample(&f);
  for (n = 0; n < f.len; n++) assert_refused(f.data, n, "truncated");
  free(f.data);
}

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

/* Sets the int32 at off to v in a copy of the sample and expects a refusal. */
static void refuse_with(const gcdb_file *f, size_t off, uint32_t v, const char *must_say) {
  unsigned char *d = malloc(f->len);
  assert_non_null(d);
  memcpy(d, f->data, f->len);
  put32(d + off, v);
  assert_refused(d, f->len, must_say);
  free(d);
}

static void test_corrupt_counts(void **state) {
  gcdb_file f;
  (void)state;
  gcdb_sample(&f);
  refuse_with(&f, f.type_count, 0x7fffffffu, "limit");
  refuse_with(&f, f.type_count, 0x00ffffffu, NULL);
  refuse_with(&f, f.type_count, 0xfffffffbu, "negative");
  refuse_with(&f, f.first_type_name, 0x7fffffffu, "limit");
  refuse_with(&f, f.first_type_name, 0x000fffffu, "truncated");
  refuse_with(&f, f.first_type_name, 0xfffffff0u, "negative");
  refuse_with(&f, f.node_count, 0x7fffffffu, "truncated");
  refuse_with(&f, f.node_count, 0x80000000u, "negative");
  refuse_with(&f, f.blob_len, 0x7fffffffu, "truncated");
  refuse_with(&f, f.root, 15, "root node");
  refuse_with(&f, f.root, 0xffffffffu, "root node");
  refuse_with(&f, f.first_offset + 4, 0x7ffffff0u, "starts at byte");
  free(f.data);
}

/* The fields after the graph are read only for the process name: when they
 * are not as expected (here its length), the section is named "gcdump" and
 * the records are the same. */
static void test_unknown_dump_fields(void **state) {
  static const char from[] = "TestApp", to[] = "gcdump";
  gcdb_file f;
  gsu_buf out = {0}, want = {0};
  const char *p = GCDB_SAMPLE_RECORDS, *q;
  char err[256];
  (void)state;
  while ((q = strstr(p, from)) != NULL) {
    gsu_buf_append(&want, p, (size_t)(q - p));
    gsu_buf_append(&want, to, sizeof to - 1);
    p = q + sizeof from - 1;
  }
  gsu_buf_append(&want, p, strlen(p) + 1);
  gcdb_sample(&f);
  put32(f.data + f.process, 0x7fffffffu);
  gsu_assert_ok(convert(f.data, f.len, 0, &out, err, sizeof err));
  assert_string_equal(err, "");
  gsu_buf_append(&out, "", 1);
  assert_string_equal(out.data, want.data);
  gsu_buf_free(&out);
  gsu_buf_free(&want);
  free(f.data);
}

/* Damage inside the node records: a type past the table, a child past the
 * nodes, a child count the record cannot hold, a record cut short. */
static void test_corrupt_records(void **state) {
  gcdb_file f;
  unsigned char *d;
  gsu_buf out = {0};
  char err[256];
  size_t i;
  int refused = 0;
  (void)state;
  gcdb_sample(&f);
  d = malloc(f.len);
  assert_non_null(d);
  /* every byte of the blob set to values that break it one way or another */
  for (i = 2; i < f.len - f.blob && i < 120; i++) {
    static const unsigned char bad[] = {0x7f, 0x3f, 0x40, 0xff, 0x80};
    size_t k;
    for (k = 0; k < sizeof bad; k++) {
      int rc;
      memcpy(d, f.data, f.len);
      d[f.blob + i] = bad[k];
      out.len = 0;
      rc = convert(d, f.len, 0, &out, err, sizeof err);
      if (rc < 0) {
        assert_int_equal(strncmp(err, "byte ", 5), 0);
        assert_int_equal(out.len, 0);
        refused++;
      }
    }
  }
  assert_true(refused > 0);
  gsu_buf_free(&out);
  free(d);
  free(f.data);
}

/* Random bytes changed: an error with an offset, or records the record
 * reader reads back without a complaint. */
static void test_random_damage(void **state) {
  gcdb_file f;
  unsigned char *d;
  gsu_buf out = {0};
  char err[256];
  uint32_t seed = 12345;
  int round, ok = 0;
  (void)state;
  gcdb_sample(&f);
  d = malloc(f.len);
  assert_non_null(d);
  for (round = 0; round < 3000; round++) {
    int k, changes = 1 + round % 4, rc;
    memcpy(d, f.data, f.len);
    for (k = 0; k < changes; k++) {
      seed = seed * 1103515245u + 12345u;
      d[(seed >> 8) % f.len] = (unsigned char)(seed >> 24);
    }
    out.len = 0;
    rc = convert(d, f.len, 0, &out, err, sizeof err);
    if (rc < 0) {
      assert_int_equal(strncmp(err, "byte ", 5), 0);
      assert_int_equal(out.len, 0);
    } else {
      gs_reader *r;
      gs_record rec;
      int e;
      gsu_assert_ok(gs_reader_new_buffer(&r, out.data, out.len));
      while ((e = gs_reader_next(r, &rec)) == GS_OK) {}
      gsu_assert_err(e, GS_EOF);
      gs_reader_free(r);
      ok++;
    }
  }
  assert_true(ok > 0);
  gsu_buf_free(&out);
  free(d);
  free(f.data);
}

static void test_io_errors(void **state) {
  gcdb_file f;
  mem_in in;
  gsu_buf out = {0};
  gs_writer *w;
  char err[256];
  int rc;
  (void)state;
  gcdb_sample(&f);
  /* the input fails on its third read */
  memset(&in, 0, sizeof in);
  in.p = f.data;
  in.len = f.len;
  in.step = 64;
  in.fail_at = 3;
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, &out));
  gsu_assert_err(gsf_gcdump_convert(mem_read, &in, w, err, sizeof err), GS_EIO);
  assert_non_null(strstr(err, "byte 128: reading the file failed"));
  gs_writer_free(w);
  /* ... or among the dump's fields after the graph, which are otherwise
   * read by guesswork: the input's error (here a decompressor's "bad
   * format") is not taken for a layout the reader does not know */
  memset(&in, 0, sizeof in);
  in.p = f.data;
  in.len = f.len;
  in.step = 64;
  in.fail_at = (int)(f.process / 64) + 1;
  in.fail_rc = GS_EFORMAT;
  assert_true(f.process / 64 * 64 > f.blob + 150);
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, &out));
  gsu_assert_err(gsf_gcdump_convert(mem_read, &in, w, err, sizeof err), GS_EFORMAT);
  assert_non_null(strstr(err, "reading the file failed"));
  gs_writer_free(w);
  assert_int_equal(out.len, 0);
  /* the output fails */
  memset(&in, 0, sizeof in);
  in.p = f.data;
  in.len = f.len;
  out.fail_from = 1;
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, &out));
  rc = gsf_gcdump_convert(mem_read, &in, w, err, sizeof err);
  assert_true(gs_writer_free(w) < 0 || rc < 0);
  /* no room for a message, and bad arguments */
  gsu_assert_err(gsf_gcdump_convert(mem_read, &in, NULL, err, sizeof err), GS_EINVAL);
  memset(&in, 0, sizeof in);
  in.p = f.data;
  in.len = 10;
  out.fail_from = 0;
  out.len = 0;
  gsu_assert_ok(gs_writer_new(&w, gsu_buf_write, &out));
  gsu_assert_err(gsf_gcdump_convert(mem_read, &in, w, NULL, 0), GS_EFORMAT);
  gs_writer_free(w);
  gsu_buf_free(&out);
  free(f.data);
}

/* "test_gcdump --write-sample FILE" writes the sample, the seed of the fuzz
 * target (tests/fuzz/corpus/gcdump); "--write-sampled FILE" the same as a
 * heap PerfView sampled, 1 object in 4 kept. */
static int write_sample(const char *path, int sampled) {
  gcdb_file f;
  FILE *out = fopen(path, "wb");
  int ok;
  if (sampled) gcdb_sampled(&f, 4.0f, 0);
  else gcdb_sample(&f);
  ok = out && fwrite(f.data, 1, f.len, out) == f.len;
  if (out && fclose(out) != 0) ok = 0;
  free(f.data);
  if (!ok) perror(path);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sample_records),
    cmocka_unit_test(test_sampled),
    cmocka_unit_test(test_object_limit),
    cmocka_unit_test(test_root_categories),
    cmocka_unit_test(test_js_heap),
    cmocka_unit_test(test_sniff),
    cmocka_unit_test(test_truncations),
    cmocka_unit_test(test_corrupt_counts),
    cmocka_unit_test(test_unknown_dump_fields),
    cmocka_unit_test(test_corrupt_records),
    cmocka_unit_test(test_random_damage),
    cmocka_unit_test(test_io_errors),
  };
  if (argc == 3 && strcmp(argv[1], "--write-sample") == 0) return write_sample(argv[2], 0);
  if (argc == 3 && strcmp(argv[1], "--write-sampled") == 0) return write_sample(argv[2], 1);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
