/* test_reader_modes.c - the reader's fast path for object lines and its
 * parsing thread give exactly the records and diagnostics of the general
 * parser, on every fixture and on generated input full of odd cases, read
 * whole or a few bytes at a time. */
#include "gs_unit.h"

#include <dirent.h>
#include <stdlib.h>

#include "gs_validate.h"

enum { MODE_FAST = 1, MODE_THREAD = 2, MODE_CHUNKED = 4, MODES = 8 };

typedef struct chunked { const char *data; size_t len, pos; unsigned seed; } chunked;

/* Hands out 1 to 97 bytes at a time, so lines straddle every boundary. */
static int chunked_read(void *ctx, void *buf, size_t cap, size_t *got) {
  chunked *c = ctx;
  size_t n;
  c->seed = c->seed * 1103515245u + 12345u;
  n = 1 + (c->seed >> 16) % 97;
  if (n > cap) n = cap;
  if (n > c->len - c->pos) n = c->len - c->pos;
  memcpy(buf, c->data + c->pos, n);
  c->pos += n;
  *got = n;
  return GS_OK;
}

/* The reference limit of the readers transcript makes (0: the default). */
static size_t refs_limit;

/* Everything the reader said, as text: one line per record or diagnostic. */
static void transcript(const char *data, size_t len, int mode, size_t max_line, gsu_buf *out) {
  chunked c = {data, len, 0, 7};
  gs_reader *r;
  gs_record rec;
  int err;
  if (mode & MODE_CHUNKED) gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
  else gsu_assert_ok(gs_reader_new_buffer(&r, data, len));
  gs_reader_set_max_line(r, max_line);
  if (refs_limit) gs_reader_set_max_refs(r, refs_limit);
  gs_reader_set_fast_path(r, mode & MODE_FAST);
  if (mode & MODE_THREAD) gsu_assert_ok(gs_reader_start_thread(r));
  while ((err = gs_reader_next(r, &rec)) != GS_EOF) {
    size_t i;
    if (err == GS_EFORMAT) {
      const gs_diag *d = gs_reader_diag(r);
      gsu_buf_printf(out, "diag %s %llu %s\n", gs_diag_name(d->code),
                     (unsigned long long)d->line, d->message);
      continue;
    }
    gsu_assert_ok(err);
    gsu_buf_printf(out, "%c %llu %llx %llx %llx %d %llx %u %u %d [%.*s]", (char)rec.kind,
                   (unsigned long long)rec.line, (unsigned long long)(rec.kind == 'c' ? 0 : rec.id),
                   (unsigned long long)(rec.kind == 'o' || rec.has_container ? rec.type : 0),
                   (unsigned long long)(rec.kind == 'o' ? rec.size : 0), rec.has_timestamp,
                   (unsigned long long)(rec.has_timestamp ? rec.timestamp : 0),
                   rec.kind == 'r' ? rec.root_kind : 0, rec.kind == 'r' ? rec.root_flags : 0,
                   rec.has_container, (int)rec.name_len, rec.name ? rec.name : "");
    for (i = 0; i < rec.nrefs; i++) gsu_buf_printf(out, " %llx", (unsigned long long)rec.refs[i]);
    gsu_buf_printf(out, "\n");
  }
  gs_reader_free(r);
}

static void check_modes(const char *what, const char *data, size_t len, size_t max_line) {
  gsu_buf base = {0};
  int mode;
  transcript(data, len, 0, max_line, &base);
  for (mode = 1; mode < MODES; mode++) {
    gsu_buf got = {0};
    if ((mode & MODE_THREAD) && gsu_no_processes()) continue;
    transcript(data, len, mode, max_line, &got);
    if (got.len != base.len || (base.len && memcmp(got.data, base.data, base.len))) {
      size_t i = 0;
      while (i < got.len && i < base.len && got.data[i] == base.data[i]) i++;
      fail_msg("%s: mode %d differs from the general parser at byte %zu:\n  general: %.120s\n  mode:    %.120s",
               what, mode, i, base.data + (i > 40 ? i - 40 : 0), got.data + (i > 40 ? i - 40 : 0));
    }
    gsu_buf_free(&got);
  }
  gsu_buf_free(&base);
}

static void check_fixture_dir(const char *rel) {
  char dir[1024];
  DIR *d;
  struct dirent *e;
  int files = 0;
  snprintf(dir, sizeof dir, "%s", gsu_fixture(rel));
  assert_non_null(d = opendir(dir));
  while ((e = readdir(d))) {
    char path[2048];
    char *data;
    size_t len, n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 6, ".gclog")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    data = gsu_read_file(path, &len);
    check_modes(path, data, len, GS_READER_DEFAULT_MAX_LINE);
    free(data);
    files++;
  }
  closedir(d);
  assert_true(files > 0);
}

static void fixtures_read_alike(void **state) {
  (void)state;
  check_fixture_dir("diag");
  check_fixture_dir("valid");
  check_fixture_dir("canonical");
  check_fixture_dir("seeds");
}

/* Object lines of every shape the fast path must take or hand back. */
static const char *const odd_lines[] = {
  "o 200000000 1e 68 200000098 200000100\n",
  "o 200000008 1e 68\n",
  "o ffffffffffffffff 1 8 fffffffffffffff8\n",
  "o 0000000000000000012 1 8\n",          /* 19 digits, leading zeros */
  "o 10000000000000000 1 8\n",            /* 17 digits: overflow */
  "o 12345678 1 8 123456789abcdef0 ABCDEF 1\n",
  "o 1 2 3\r\n",
  "o 1 2 3 4\r\n",
  "o 1  2 3\n",
  "o 1 2 3 \n",
  "o\t1\t2\t3\t4\n",
  " o 1 2 3\n",
  "o 1 2 -3\n",
  "o 1 2\n",
  "o 1\n",
  "o\n",
  "o 1 2 3 4g\n",
  "o 1 2 3 :\n",
  "o 1 2 3 4 \r\n",
  "o 12345678 2 3 4\x01\n",
  "o 1 2 3 \xc3\xa9\n",
  "o 1 2 3 12345678901234567\n",
  "o 1234567 2 3 87654321\n",
  "o 123456789 2 3 1234567812345678\n",
  "oo 1 2 3\n",
  "o 1 2 3 4\r\r\n",
  "o 1 2 3\r 4\n",
  "o 1 2 3 4\x80\n",
  "o 1 2 3 4\x7f 5\n",
  "o 1 2 3 G\n",
  "o 1 2 3 00000000000000000000000000000000000000000000000000000000000000000000000001\n",
  /* numbers of every length, across the 64-byte windows of the x86-64 path */
  ("o 1 2 3 a bc def 1234 56789 abcdef 1234567 89abcdef 123456789 abcdef0123 "
   "456789abcde f0123456789a bcdef0123456 789abcdef0123 456789abcdef01 "
   "23456789abcdef0 123456789abcdef0 1 22 333\n"),
  ("o 123456789abcdef0 FEDCBA9876543210 fffffffffffffff 0123456789ABCDEF 1 23456789abcdef01 "
   "aBcDeF0123456789 42\r\n"),
  "o 1 2 3 1234567812345678 1234567812345678 1234567812345678 123456781234567 1\n",
  "o 1 2 3 1234567812345678 1234567812345678 1234567812345678 12345678123456789\n",
  "t 1 System.String\n",
  "r 1 4 0 2\n",
  "\n",
  "o 1 2 3",                               /* last line, no newline */
};

static void odd_lines_read_alike(void **state) {
  gsu_buf in = {0};
  size_t i, k, n = sizeof odd_lines / sizeof *odd_lines;
  (void)state;
  gsu_buf_printf(&in, "a 2 Odd 0\n");
  /* Enough lines to fill several batches of the parsing thread. */
  for (k = 0; k < 20000; k++) {
    i = (k * 7919) % (n - 1);
    gsu_buf_printf(&in, "%s", odd_lines[i]);
  }
  gsu_buf_printf(&in, "%s", odd_lines[n - 1]);
  check_modes("odd lines", in.data, in.len, GS_READER_DEFAULT_MAX_LINE);
  /* A tight line limit, so some object lines are over it. */
  check_modes("odd lines, max 1024", in.data, in.len, 1024);
  gsu_buf_free(&in);
}

static void long_lines_read_alike(void **state) {
  gsu_buf in = {0};
  size_t i;
  (void)state;
  gsu_buf_printf(&in, "a 2 Long 0\n");
  for (i = 0; i < 3; i++) {
    size_t k;
    gsu_buf_printf(&in, "o %zx 1 8", 0x1000 + 8 * i);
    for (k = 0; k < 300000; k++) gsu_buf_printf(&in, " %zx", 0x200000000 + 8 * k);
    gsu_buf_printf(&in, "\n");
  }
  gsu_buf_printf(&in, "c Long 0\n");
  check_modes("long lines", in.data, in.len, GS_READER_DEFAULT_MAX_LINE);
  check_modes("long lines over the limit", in.data, in.len, 1u << 20);
  gsu_buf_free(&in);
}

/* Object lines longer than the window, parsed as they arrive, among short
 * lines: whole, with a bad number early, late or at a piece's end, over the
 * reference limit, with a number over the line limit, and last without
 * its newline. */
static void long_objects_read_alike(void **state) {
  static const char *const odd[] = {"", " 12x4", " 123456789abcdef012", " -5", "\x01"};
  gsu_buf in = {0};
  size_t i, k;
  (void)state;
  gsu_buf_printf(&in, "a 2 Long 0\n");
  for (i = 0; i < 9; i++) {
    size_t refs = 55000 + 37 * i, at = i < 6 ? refs - 1 - i * 9000 : 1000 * i;
    gsu_buf_printf(&in, "t %zx T\n%so %zx 1 8", i, i % 3 ? "" : "  ", 0x1000 + 8 * i);
    for (k = 0; k < refs; k++) {
      gsu_buf_printf(&in, "%s%zx", k % 5 ? " " : " \t ", 0x200000000 + 8 * k);
      if (k == at) gsu_buf_printf(&in, "%s", odd[i % 5]);
      if (k == at && i == 7)
        for (size_t z = 0; z < 5000; z++) gsu_buf_append(&in, z ? "0" : " ", 1);
    }
    gsu_buf_printf(&in, i % 2 ? "\r\n" : " \n");
  }
  gsu_buf_printf(&in, "o 5 1 8");
  for (k = 0; k < 90000; k++) gsu_buf_printf(&in, " %zx", 0x300000000 + k);
  check_modes("long objects", in.data, in.len, GS_READER_DEFAULT_MAX_LINE);
  check_modes("long objects, max 1024", in.data, in.len, 1024);
  refs_limit = 55100;
  check_modes("long objects, 55100 references", in.data, in.len, 4096);
  refs_limit = 0;
  gsu_buf_free(&in);
}

/* Many blocks of the parsing workers: short odd lines with long ones over
 * and under the limit between them, so that lines, diagnostics and cut
 * lines straddle every kind of block boundary. */
static void mixed_blocks_read_alike(void **state) {
  gsu_buf in = {0};
  size_t i, k, n = sizeof odd_lines / sizeof *odd_lines;
  (void)state;
  gsu_buf_printf(&in, "a 2 Mixed 0\r\n");
  for (k = 0; k < 120000; k++) {
    gsu_buf_printf(&in, "%s", odd_lines[(k * 7919) % (n - 1)]);
    if (k % 9973 == 0) {
      size_t refs = 200 + (k % 7) * 9000;
      gsu_buf_printf(&in, "o %zx 1 8", 0x4000 + 8 * k);
      for (i = 0; i < refs; i++) gsu_buf_printf(&in, " %zx", 0x200000000 + 8 * i);
      gsu_buf_printf(&in, k % 2 ? "\r\n" : "\n");
    }
  }
  gsu_buf_printf(&in, "%s", odd_lines[n - 1]);
  check_modes("mixed blocks", in.data, in.len, GS_READER_DEFAULT_MAX_LINE);
  check_modes("mixed blocks, max 4096", in.data, in.len, 4096);
  check_modes("mixed blocks, max 300000", in.data, in.len, 300000);
  gsu_buf_free(&in);
}

/* ---- the validator over every reading mode ----------------------------- */

static void note_diag(void *ctx, const gs_diag *d) {
  gsu_buf_printf(ctx, "%llu %s %s\n", (unsigned long long)d->line, gs_diag_name(d->code),
                 d->message);
}

static void validate_transcript(const char *data, size_t len, int mode, size_t max_line, gsu_buf *out) {
  chunked c = {data, len, 0, 7};
  gs_validate_counts counts;
  gs_reader *r;
  if (mode & MODE_CHUNKED) gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
  else gsu_assert_ok(gs_reader_new_buffer(&r, data, len));
  gs_reader_set_max_line(r, max_line);
  gs_reader_set_fast_path(r, mode & MODE_FAST);
  if (mode & MODE_THREAD) gsu_assert_ok(gs_reader_start_thread(r));
  gsu_assert_ok(gs_validate_reader(r, note_diag, out, &counts));
  gsu_buf_printf(out, "%llu errors %llu warnings %llu records\n", (unsigned long long)counts.errors,
                 (unsigned long long)counts.warnings, (unsigned long long)counts.records);
  gs_reader_free(r);
}

enum { SHAPE_BACK, SHAPE_FORWARD, SHAPE_RANDOM };

static uint64_t shape_rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A heap whose references point back, ahead or anywhere, with a few
 * dangling references, duplicates, undefined types and bad lines. Its
 * objects are at base + 0x20 * i; the dangling references name the objects
 * just after them. */
static void shape_heap(gsu_buf *b, int shape, size_t n, uint64_t base) {
  uint64_t seed = 0x9e3779b9u + (uint64_t)shape, i;
  gsu_buf_printf(b, "a 2 Shape 0\nt 1 A\nt 2 B\n");
  for (i = 0; i < n; i++) {
    unsigned refs = (unsigned)(shape_rng(&seed) % 5), k;
    gsu_buf_printf(b, "o %llx %u 18", (unsigned long long)(base + 0x20 * i),
                   i % 5000 == 7 ? 9u : 1u + (unsigned)(i % 2));
    for (k = 0; k < refs; k++) {
      uint64_t d = 1 + shape_rng(&seed) % 64, t;
      if (shape == SHAPE_RANDOM) t = shape_rng(&seed) % n;
      else if (shape == SHAPE_FORWARD) t = i + d < n ? i + d : i;
      else t = i >= d ? i - d : i;
      if (shape_rng(&seed) % 4000 == 0) t = n + shape_rng(&seed) % 50;      /* dangling */
      gsu_buf_printf(b, " %llx", (unsigned long long)(base + 0x20 * t));
    }
    gsu_buf_printf(b, "\n");
    if (i % 7001 == 3) gsu_buf_printf(b, "o %llx 1 8\n", (unsigned long long)(base + 0x20 * (i / 2)));
    if (i % 9001 == 5) gsu_buf_printf(b, "o 12 x 8\nr %llx 1 0\n", (unsigned long long)(base + 0x20 * (n + i)));
  }
  gsu_buf_printf(b, "r %llx 1 0\nc Shape 0\n", (unsigned long long)base);
}

/* Validates in every mode and compares with mode 0 (a buffer read whole,
 * which reads a section again for its dangling references); the diagnostics
 * must include each of want. */
static void validation_alike(const char *what, const gsu_buf *in, size_t max_line, const char **want) {
  gsu_buf base = {0};
  int mode;
  validate_transcript(in->data, in->len, 0, max_line, &base);
  for (; *want; want++) assert_true(strstr(base.data, *want) != NULL);
  for (mode = 1; mode < MODES; mode++) {
    gsu_buf got = {0};
    if ((mode & MODE_THREAD) && gsu_no_processes()) continue;
    validate_transcript(in->data, in->len, mode, max_line, &got);
    if (got.len != base.len || memcmp(got.data, base.data, base.len))
      fail_msg("%s: mode %d validates differently:\n%.300s\n---\n%.300s", what, mode, base.data,
               got.data);
    gsu_buf_free(&got);
  }
  gsu_buf_free(&base);
}

static void validation_alike_on_every_shape(void **state) {
  static const char *want[] = {"dangling", NULL};
  static const char *names[] = {"back", "forward", "random"};
  int shape;
  (void)state;
  for (shape = SHAPE_BACK; shape <= SHAPE_RANDOM; shape++) {
    gsu_buf in = {0};
    shape_heap(&in, shape, 60000, 0x7f0000000000u);
    validation_alike(names[shape], &in, GS_READER_DEFAULT_MAX_LINE, want);
    gsu_buf_free(&in);
  }
}

/* Many small sections, each with dangling references, some after a line
 * over the limit: each is read again from its own start. */
static void many_sections_validate_alike(void **state) {
  static const char *want[] = {"dangling", "line-too-long", NULL};
  gsu_buf in = {0};
  size_t i;
  (void)state;
  for (i = 0; i < 4000; i++) {
    gsu_buf_printf(&in, "a 2 S%zu 0\nt 1 A\no %zx 1 8 %zx %zx\n", i, 0x1000 + 16 * i, 0x1000 + 16 * i,
                   0x900000 + 8 * (i % 7));
    if (i % 997 == 5) gsu_buf_printf(&in, "o 1 1 8 %0*d\n", 2000, 1);
    gsu_buf_printf(&in, "r %zx 1 0\nc S%zu 0\n", 0x1000 + 16 * i, i);
  }
  validation_alike("many sections", &in, GS_READER_MIN_MAX_LINE, want);
  gsu_buf_free(&in);
}

/* Sections of many blocks each, so that the parsing workers note most of
 * their references: each section's dangling references name objects of
 * the next one, a stretch of records outside any section lies between two
 * of them, and one section is opened inside another. */
static void large_sections_validate_alike(void **state) {
  static const char *want[] = {"dangling", "outside-section", "nested-section", NULL};
  gsu_buf in = {0};
  uint64_t base = 0x7f0000000000u;
  size_t i, k, sizes[] = {30000, 9000, 45000, 20000, 25000};
  (void)state;
  for (k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    gsu_buf one = {0};
    shape_heap(&one, (int)(k % 3), sizes[k], base);
    /* The fourth section is not closed: the fifth opens inside it. */
    if (k == 3) one.len -= strlen("c Shape 0\n");
    gsu_buf_printf(&in, "%.*s", (int)one.len, one.data);
    gsu_buf_free(&one);
    base += 0x20 * sizes[k];
    if (k == 1)
      for (i = 0; i < 15000; i++) gsu_buf_printf(&in, "o %zx 1 8 %zx\n", 0x1000 + 8 * i, 0x1000 + 8 * i);
  }
  validation_alike("large sections", &in, GS_READER_DEFAULT_MAX_LINE, want);
  gsu_buf_free(&in);
}

/* A heap whose few dangling references sit in one block of the middle, on
 * the last line of the block before an object line too long for a block,
 * on that line (a span of one line that other blocks follow, whose set of
 * mentions is kept) and on the last object line; then a section with more dangling IDs than are looked
 * for block by block: the first is read again only where they are, the
 * second whole. Once more after a type line over the limit, whose dropped
 * bytes leave the blocks' offsets unknown: the first is then read whole
 * too. */
static void dangling_at_the_end(int dropped) {
  static const char *want[] = {"dangling", NULL};
  gsu_buf in = {0};
  uint64_t base = 0x7f0000000000u;
  size_t i, n = 80000;
  gsu_buf_printf(&in, "a 2 End 0\nt 1 A\n");
  if (dropped) gsu_buf_printf(&in, "t 2 %0*d\n", 1200000, 2);
  for (i = 0; i < n; i++)
    gsu_buf_printf(&in, "o %llx 1 18 %llx %llx\n", (unsigned long long)(base + 0x20 * i),
                   (unsigned long long)(base + 0x20 * ((i + 1) % n)),
                   (unsigned long long)(base + 0x20 * (i == n / 3 ? n + 5 : i == n - 1 ? n + 90 : i / 2)));
  gsu_buf_printf(&in, "o %llx 1 8", (unsigned long long)(base - 0x20));
  for (i = 0; i < 150000; i++)
    gsu_buf_printf(&in, " %llx", (unsigned long long)(base + 0x20 * (i % 9973 == 5 ? n + 60 + i % 7 : i % n)));
  gsu_buf_printf(&in, "\n");
  for (i = 0; i < n; i++)
    gsu_buf_printf(&in, "o %llx 1 18 %llx\n", (unsigned long long)(base + 0x20 * (2 * n + i)),
                   (unsigned long long)(base + 0x20 * i));
  gsu_buf_printf(&in, "o %llx 1 8 %llx\nr %llx 1 0\nc End 0\n", (unsigned long long)(base - 0x40),
                 (unsigned long long)(base + 0x20 * (n + 80)), (unsigned long long)base);
  gsu_buf_printf(&in, "a 2 Many 0\nt 1 A\n");
  for (i = 0; i < 30000; i++)
    gsu_buf_printf(&in, "o %zx 1 8 %zx %zx\n", 0x1000 + 16 * i, 0x1000 + 16 * (i / 2), 0x900000 + 8 * i);
  gsu_buf_printf(&in, "c Many 0\n");
  validation_alike("dangling at the end", &in, GS_READER_MIN_MAX_LINE, want);
  gsu_buf_free(&in);
}

static void dangling_at_the_end_validate_alike(void **state) {
  (void)state;
  dangling_at_the_end(0);
  dangling_at_the_end(1);
}

/* Freeing a reader whose thread is still parsing stops it cleanly. */
static void free_while_parsing(void **state) {
  gsu_buf in = {0};
  gs_reader *r;
  gs_record rec;
  size_t i;
  (void)state;
  if (gsu_no_processes()) skip();
  gsu_buf_printf(&in, "a 2 Big 0\n");
  for (i = 0; i < 200000; i++) gsu_buf_printf(&in, "o %zx 1 8 %zx\n", 8 * i, 8 * (i + 1));
  gsu_buf_printf(&in, "c Big 0\n");
  for (i = 0; i < 3; i++) {
    size_t k;
    gsu_assert_ok(gs_reader_new_buffer(&r, in.data, in.len));
    gsu_assert_ok(gs_reader_start_thread(r));
    for (k = 0; k < i * 5000; k++) gsu_assert_ok(gs_reader_next(r, &rec));
    gs_reader_free(r);
  }
  gsu_buf_free(&in);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(fixtures_read_alike),
    cmocka_unit_test(odd_lines_read_alike),
    cmocka_unit_test(long_lines_read_alike),
    cmocka_unit_test(long_objects_read_alike),
    cmocka_unit_test(mixed_blocks_read_alike),
    cmocka_unit_test(validation_alike_on_every_shape),
    cmocka_unit_test(many_sections_validate_alike),
    cmocka_unit_test(large_sections_validate_alike),
    cmocka_unit_test(dangling_at_the_end_validate_alike),
    cmocka_unit_test(free_while_parsing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
