/* test_reader.c - the streaming reader: every record kind and field, both
 * seed versions of the format, line endings and blank lines, long lines,
 * syntax errors and recovery, and the four byte sources. */
#include "gs_unit.h"

#include <stdlib.h>
#include <unistd.h>

/* ---- expected records ------------------------------------------------- */

typedef struct want_rec {
  char kind;
  uint64_t id, type, size;
  int has_timestamp;
  uint64_t timestamp;
  unsigned root_kind, root_flags;
  int has_container;
  const char *name;
  size_t nrefs;
  const uint64_t *refs;
} want_rec;

static void check_record(const gs_record *got, const want_rec *want, uint64_t line) {
  size_t i;
  assert_int_equal(got->kind, want->kind);
  assert_int_equal(got->line, line);
  switch (want->kind) {
  case 'a':
    assert_int_equal(got->id, want->id);
    /* fall through */
  case 'c':
    gsu_assert_name(got, want->name);
    assert_int_equal(got->has_timestamp, want->has_timestamp);
    if (want->has_timestamp) assert_int_equal(got->timestamp, want->timestamp);
    break;
  case 't':
    assert_int_equal(got->id, want->id);
    gsu_assert_name(got, want->name);
    break;
  case 'o':
    assert_int_equal(got->id, want->id);
    assert_int_equal(got->type, want->type);
    assert_int_equal(got->size, want->size);
    assert_int_equal(got->nrefs, want->nrefs);
    for (i = 0; i < want->nrefs; i++) assert_int_equal(got->refs[i], want->refs[i]);
    break;
  case 'r':
    assert_int_equal(got->id, want->id);
    assert_int_equal(got->root_kind, want->root_kind);
    assert_int_equal(got->root_flags, want->root_flags);
    assert_int_equal(!!got->has_container, want->has_container);
    if (want->has_container) assert_int_equal(got->type, want->type);
    break;
  default:
    fail_msg("bad expectation kind %c", want->kind);
  }
}

static const uint64_t seed_refs[] = {0x1ce11f, 0x1ce14c, 0x1ce079, 0x1ce113,
                                     0x1ce116, 0x1ce267, 0x1ce26a, 0x1ce26d};

/* The example dump of both seeds; the timestamps are those of seed 001. */
static const want_rec seed_records[] = {
  {.kind = 'a', .id = 2, .name = "bubblecs.exe", .has_timestamp = 1, .timestamp = 0x763f9d2},
  {.kind = 't', .id = 2, .name = "System.RuntimeType"},
  {.kind = 'o', .id = 0x7c79f, .type = 2, .size = 0x64},
  {.kind = 't', .id = 1, .name = "System.NullReferenceException"},
  {.kind = 'o', .id = 0x7cb42, .type = 2, .size = 0x64},
  {.kind = 'o', .id = 0x1ce004, .type = 1, .size = 0x18},
  {.kind = 't', .id = 3, .name = "System.OutOfMemoryException"},
  {.kind = 'o', .id = 0x1ce056, .type = 0x1d, .size = 0x118, .nrefs = 8, .refs = seed_refs},
  {.kind = 'r', .id = 0x22c81b, .root_kind = 5, .root_flags = 0},
  {.kind = 'o', .id = 0x22c81e, .type = 0x1b, .size = 0x24},
  {.kind = 'r', .id = 0x22c81e, .root_kind = 5, .root_flags = 0},
  {.kind = 'o', .id = 0x22c823, .type = 0x1b, .size = 0x28},
  {.kind = 'r', .id = 0x22c823, .root_kind = 5, .root_flags = 0},
  {.kind = 'c', .name = "bubblecs.exe", .has_timestamp = 1, .timestamp = 0x763fbef},
};
#define SEED_RECORDS (sizeof seed_records / sizeof seed_records[0])

/* Reads every record of r and checks it against the seed example. Records
 * are on lines first_line, first_line + step, ... */
static void check_seed(gs_reader *r, int with_timestamps, uint64_t first_line,
                       uint64_t step) {
  gs_record rec;
  size_t i;
  for (i = 0; i < SEED_RECORDS; i++) {
    want_rec w = seed_records[i];
    if (!with_timestamps) w.has_timestamp = 0;
    gsu_assert_ok(gs_reader_next(r, &rec));
    check_record(&rec, &w, first_line + i * step);
  }
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
}

/* Reads a one-record buffer and returns the reader for more checks. */
static gs_reader *open_text(const char *text) {
  gs_reader *r = NULL;
  gsu_assert_ok(gs_reader_new_buffer(&r, text, strlen(text)));
  assert_non_null(r);
  return r;
}

static void check_only_record(const char *text, const want_rec *want) {
  gs_reader *r = open_text(text);
  gs_record rec;
  gsu_assert_ok(gs_reader_next(r, &rec));
  check_record(&rec, want, 1);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  assert_int_equal(gs_reader_offset(r), strlen(text));
  gs_reader_free(r);
}

/* ---- each record kind --------------------------------------------------- */

static void test_section_with_timestamp(void **state) {
  (void)state;
  want_rec w = {.kind = 'a', .id = 2, .name = "bubblecs.exe", .has_timestamp = 1,
                .timestamp = 0x763f9d2};
  check_only_record("a 2 bubblecs.exe 763f9d2\n", &w);
  w.name = "NHLSchedule.exe";
  w.timestamp = 0x444d20df;
  check_only_record("a 2 NHLSchedule.exe 444d20df\n", &w);
}

static void test_section_without_timestamp(void **state) {
  (void)state;
  want_rec w = {.kind = 'a', .id = 2, .name = "bubblecs.exe", .has_timestamp = 0};
  check_only_record("a 2 bubblecs.exe\n", &w);
}

static void test_end_with_and_without_timestamp(void **state) {
  (void)state;
  want_rec w = {.kind = 'c', .name = "HH3.exe", .has_timestamp = 1, .timestamp = 0x763fbef};
  check_only_record("c HH3.exe 763fbef\n", &w);
  w.has_timestamp = 0;
  check_only_record("c HH3.exe\n", &w);
}

static void test_version_and_timestamp_values(void **state) {
  (void)state;
  want_rec w = {.kind = 'a', .id = 0x3, .name = "x", .has_timestamp = 1,
                .timestamp = UINT64_MAX};
  check_only_record("a 3 x ffffffffffffffff\n", &w);
  w.id = 2;
  w.timestamp = 0;
  check_only_record("a 2 x 0\n", &w);
}

static void test_type_record(void **state) {
  (void)state;
  want_rec w = {.kind = 't', .id = 0xa1, .name = "Western.Pacific.SanJoseSharks"};
  check_only_record("t a1 Western.Pacific.SanJoseSharks\n", &w);
}

static void test_type_name_with_spaces(void **state) {
  (void)state;
  want_rec w = {.kind = 't', .id = 0x5,
                .name = "System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
                        "[System.Int32, mscorlib]]"};
  check_only_record("t 5 System.Collections.Generic.Dictionary`2[[System.String, mscorlib],"
                    "[System.Int32, mscorlib]]\n", &w);
  w.id = 0xbb;
  w.name = "System.Char[] (NoPtrs,ElemSize=2)";
  check_only_record("t bb System.Char[] (NoPtrs,ElemSize=2)\n", &w);
  /* A type name ending in a hex-looking word is still all name. */
  w.id = 7;
  w.name = "Generic List 1f";
  check_only_record("t 7 Generic List 1f\n", &w);
  /* UTF-8 text beyond ASCII is text. */
  w.name = "Caf\xc3\xa9.\xe6\x97\xa5\xe6\x9c\xac";
  check_only_record("t 7 Caf\xc3\xa9.\xe6\x97\xa5\xe6\x9c\xac\n", &w);
}

static void test_section_name_with_spaces(void **state) {
  (void)state;
  want_rec a = {.kind = 'a', .id = 2, .name = "My Game Domain.exe", .has_timestamp = 1,
                .timestamp = 0x1f4};
  want_rec c = {.kind = 'c', .name = "My Game Domain.exe", .has_timestamp = 1,
                .timestamp = 0x2e8};
  check_only_record("a 2 My Game Domain.exe 1f4\n", &a);
  check_only_record("c My Game Domain.exe 2e8\n", &c);
  a.has_timestamp = 0;
  c.has_timestamp = 0;
  check_only_record("a 2 My Game Domain.exe\n", &a);
  check_only_record("c My Game Domain.exe\n", &c);
}

static void test_object_record(void **state) {
  (void)state;
  static const uint64_t refs[] = {0x1c15db, 0x1c15d8, 0x1c15d5};
  want_rec w = {.kind = 'o', .id = 0x1c15d2, .type = 3, .size = 0x1c, .nrefs = 3,
                .refs = refs};
  check_only_record("o 1c15d2 3 1c 1c15db 1c15d8 1c15d5\n", &w);
  want_rec bare = {.kind = 'o', .id = 0x7c79f, .type = 2, .size = 0x64};
  check_only_record("o 7c79f 2 64\n", &bare);
  static const uint64_t max_refs[] = {UINT64_MAX, 0};
  want_rec extremes = {.kind = 'o', .id = UINT64_MAX, .type = 0, .size = UINT64_MAX,
                       .nrefs = 2, .refs = max_refs};
  check_only_record("o ffffffffffffffff 0 ffffffffffffffff ffffffffffffffff 0\n", &extremes);
}

static void test_root_record(void **state) {
  (void)state;
  want_rec w = {.kind = 'r', .id = 0x22c81b, .root_kind = 5, .root_flags = 0};
  check_only_record("r 22c81b 5 0\n", &w);
  want_rec st = {.kind = 'r', .id = 0xb2753, .root_kind = 4, .root_flags = 0,
                 .has_container = 1, .type = 0x13c};
  check_only_record("r b2753 4 0 13c\n", &st);
  want_rec flags = {.kind = 'r', .id = 1, .root_kind = 3, .root_flags = 7};
  check_only_record("r 1 3 7\n", &flags);
}

static void test_every_root_kind(void **state) {
  (void)state;
  char line[64];
  unsigned kind;
  for (kind = 0; kind < GS_ROOT_KINDS; kind++) {
    want_rec w = {.kind = 'r', .id = 0xabc, .root_kind = kind, .root_flags = 1,
                  .has_container = kind == GS_ROOT_STATIC, .type = 0x42};
    snprintf(line, sizeof line, kind == GS_ROOT_STATIC ? "r abc %x 1 42\n" : "r abc %x 1\n",
             kind);
    check_only_record(line, &w);
  }
}

static void test_uppercase_hex(void **state) {
  (void)state;
  static const uint64_t refs[] = {0x1ce11f, 0xabcdef};
  want_rec o = {.kind = 'o', .id = 0x7c79f, .type = 0x2b, .size = 0x6a, .nrefs = 2,
                .refs = refs};
  check_only_record("o 7C79F 2B 6A 1CE11F AbCdEf\n", &o);
  want_rec a = {.kind = 'a', .id = 2, .name = "App", .has_timestamp = 1,
                .timestamp = 0x763f9d2};
  check_only_record("a 2 App 763F9D2\n", &a);
  want_rec r = {.kind = 'r', .id = 0xb2753, .root_kind = 4, .has_container = 1,
                .type = 0x13c};
  check_only_record("r B2753 4 0 13C\n", &r);
  want_rec t = {.kind = 't', .id = 0xa1, .name = "T"};
  check_only_record("t A1 T\n", &t);
}

/* ---- whole inputs: both seeds, line endings, blank lines ----------------- */

static void test_seed001_example(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed001-example.gclog"), &len);
  gs_reader *r = NULL;
  gsu_assert_ok(gs_reader_new_buffer(&r, text, len));
  check_seed(r, 1, 1, 1);
  assert_int_equal(gs_reader_offset(r), len);
  gs_reader_free(r);
  free(text);
}

/* Seed 000 as printed: no timestamps and a blank line between records. */
static void test_seed000_example(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed000-example.gclog"), &len);
  gs_reader *r = NULL;
  gsu_assert_ok(gs_reader_new_buffer(&r, text, len));
  check_seed(r, 0, 1, 2);
  assert_int_equal(gs_reader_offset(r), len);
  gs_reader_free(r);
  free(text);
}

/* Converts LF line ends to CRLF. */
static char *to_crlf(const char *text, size_t len, size_t *out_len) {
  gsu_buf b = {0};
  size_t i;
  for (i = 0; i < len; i++) {
    if (text[i] == '\n') gsu_buf_append(&b, "\r", 1);
    gsu_buf_append(&b, &text[i], 1);
  }
  *out_len = b.len;
  return b.data;
}

static void test_crlf(void **state) {
  (void)state;
  size_t len, crlf_len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed001-example.gclog"), &len);
  char *crlf = to_crlf(text, len, &crlf_len);
  gs_reader *r = NULL;
  gsu_assert_ok(gs_reader_new_buffer(&r, crlf, crlf_len));
  check_seed(r, 1, 1, 1);  /* names end before the CR, timestamps parse */
  gs_reader_free(r);
  free(crlf);
  free(text);

  text = gsu_read_file(gsu_fixture("seeds/seed000-example.gclog"), &len);
  crlf = to_crlf(text, len, &crlf_len);
  gsu_assert_ok(gs_reader_new_buffer(&r, crlf, crlf_len));
  check_seed(r, 0, 1, 2);  /* "\r\n" alone is a blank line */
  gs_reader_free(r);
  free(crlf);
  free(text);
}

static void test_missing_final_newline(void **state) {
  (void)state;
  static const char *inputs[] = {
    "a 2 x 1\nc x 2", "a 2 x 1\r\nc x 2", "a 2 x 1\nc x 2\r",
  };
  want_rec a = {.kind = 'a', .id = 2, .name = "x", .has_timestamp = 1, .timestamp = 1};
  want_rec c = {.kind = 'c', .name = "x", .has_timestamp = 1, .timestamp = 2};
  size_t i;
  for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    gs_reader *r = open_text(inputs[i]);
    gs_record rec;
    gsu_assert_ok(gs_reader_next(r, &rec));
    check_record(&rec, &a, 1);
    gsu_assert_ok(gs_reader_next(r, &rec));
    check_record(&rec, &c, 2);
    gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
    assert_int_equal(gs_reader_offset(r), strlen(inputs[i]));
    gs_reader_free(r);
  }
  /* Last record without timestamp nor newline, and an object with refs. */
  static const uint64_t refs[] = {0x10, 0x20};
  want_rec o = {.kind = 'o', .id = 1, .type = 2, .size = 3, .nrefs = 2, .refs = refs};
  check_only_record("o 1 2 3 10 20", &o);
  c.has_timestamp = 0;
  check_only_record("c x", &c);
}

static void test_blank_lines(void **state) {
  (void)state;
  const char *text = "\n\n\r\na 2 x 1\n\n\n\r\no 1 2 3\r\n\r\n\nc x 2\n\n\n";
  want_rec a = {.kind = 'a', .id = 2, .name = "x", .has_timestamp = 1, .timestamp = 1};
  want_rec o = {.kind = 'o', .id = 1, .type = 2, .size = 3};
  want_rec c = {.kind = 'c', .name = "x", .has_timestamp = 1, .timestamp = 2};
  gs_reader *r = open_text(text);
  gs_record rec;
  gsu_assert_ok(gs_reader_next(r, &rec));
  check_record(&rec, &a, 4);
  gsu_assert_ok(gs_reader_next(r, &rec));
  check_record(&rec, &o, 8);
  gsu_assert_ok(gs_reader_next(r, &rec));
  check_record(&rec, &c, 11);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  gs_reader_free(r);
}

static void test_empty_input(void **state) {
  (void)state;
  static const char *inputs[] = {"", "\n", "\n\n\r\n\n"};
  size_t i;
  for (i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    gs_reader *r = open_text(inputs[i]);
    gs_record rec;
    gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
    gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
    gs_reader_free(r);
  }
}

static void test_several_sections(void **state) {
  (void)state;
  const char *text =
    "a 2 first.exe 10\n"
    "t 1 A\n"
    "o 1 1 8\n"
    "c first.exe 11\n"
    "a 2 second domain 20\n"
    "t 1 B\n"
    "o 1 1 c\n"
    "r 1 1 0\n"
    "c second domain 21\n"
    "a 2 third\n"
    "c third\n";
  static const want_rec want[] = {
    {.kind = 'a', .id = 2, .name = "first.exe", .has_timestamp = 1, .timestamp = 0x10},
    {.kind = 't', .id = 1, .name = "A"},
    {.kind = 'o', .id = 1, .type = 1, .size = 8},
    {.kind = 'c', .name = "first.exe", .has_timestamp = 1, .timestamp = 0x11},
    {.kind = 'a', .id = 2, .name = "second domain", .has_timestamp = 1, .timestamp = 0x20},
    {.kind = 't', .id = 1, .name = "B"},
    {.kind = 'o', .id = 1, .type = 1, .size = 0xc},
    {.kind = 'r', .id = 1, .root_kind = 1, .root_flags = 0},
    {.kind = 'c', .name = "second domain", .has_timestamp = 1, .timestamp = 0x21},
    {.kind = 'a', .id = 2, .name = "third"},
    {.kind = 'c', .name = "third"},
  };
  gs_reader *r = open_text(text);
  gs_record rec;
  size_t i;
  for (i = 0; i < sizeof want / sizeof want[0]; i++) {
    gsu_assert_ok(gs_reader_next(r, &rec));
    check_record(&rec, &want[i], i + 1);
  }
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  gs_reader_free(r);
}

/* ---- big lines ------------------------------------------------------------ */

#define MILLION 1000000u

static void test_million_references(void **state) {
  (void)state;
  gsu_buf b = {0};
  gs_reader *r = NULL;
  gs_record rec;
  size_t i;
  gsu_buf_printf(&b, "a 2 big 0\no abcdef 12 40");
  for (i = 0; i < MILLION; i++) gsu_buf_printf(&b, " %zx", (size_t)0x1000000 + i * 3);
  gsu_buf_printf(&b, "\nc big 0\n");
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'a');
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'o');
  assert_int_equal(rec.line, 2);
  assert_int_equal(rec.id, 0xabcdef);
  assert_int_equal(rec.type, 0x12);
  assert_int_equal(rec.size, 0x40);
  assert_int_equal(rec.nrefs, MILLION);
  assert_int_equal(rec.refs[0], 0x1000000);
  assert_int_equal(rec.refs[1], 0x1000003);
  assert_int_equal(rec.refs[MILLION - 1], 0x1000000 + (uint64_t)(MILLION - 1) * 3);
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'c');
  assert_int_equal(rec.line, 3);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  gs_reader_free(r);
  gsu_buf_free(&b);
}

static void check_line_too_long(gs_reader *r, uint64_t long_line) {
  gs_record rec;
  const gs_diag *d;
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'a');
  gsu_assert_err(gs_reader_next(r, &rec), GS_EFORMAT);
  d = gs_reader_diag(r);
  assert_int_equal(d->code, GS_D_LINE_TOO_LONG);
  assert_int_equal(d->line, long_line);
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'o');
  assert_int_equal(rec.line, long_line + 1);
  assert_int_equal(rec.id, 0x77);
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'c');
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
}

static void long_line_input(gsu_buf *b, size_t name_len) {
  gsu_buf_printf(b, "a 2 x 0\nt 1 ");
  for (size_t i = 0; i < name_len; i++) gsu_buf_append(b, "N", 1);
  gsu_buf_printf(b, "\no 77 1 8\nc x 0\n");
}

/* The reading callback hands out at most ctx->chunk bytes per call. */
typedef struct chunked {
  const char *data;
  size_t len, pos, chunk;
  int fail_at_end;
} chunked;

static int chunked_read(void *ctx, void *buf, size_t cap, size_t *got) {
  chunked *c = ctx;
  size_t n = c->len - c->pos;
  if (n == 0 && c->fail_at_end) return GS_EIO;
  if (n > c->chunk) n = c->chunk;
  if (n > cap) n = cap;
  memcpy(buf, c->data + c->pos, n);
  c->pos += n;
  *got = n;
  return GS_OK;
}

static void test_line_too_long(void **state) {
  (void)state;
  gsu_buf b = {0};
  gs_reader *r = NULL;
  size_t lens[] = {2000, 300000, 5u << 20};
  size_t i;
  for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    long_line_input(&b, lens[i]);
    /* From a buffer. */
    gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
    gs_reader_set_max_line(r, 1024);
    check_line_too_long(r, 2);
    assert_int_equal(gs_reader_offset(r), b.len);
    gs_reader_free(r);
    /* From a stream, so that the long line spans many reads. */
    chunked c = {.data = b.data, .len = b.len, .chunk = 4096};
    gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
    gs_reader_set_max_line(r, 1024);
    check_line_too_long(r, 2);
    gs_reader_free(r);
    gsu_buf_free(&b);
  }
}

/* An overlong last line, with or without its newline, ends the input. */
static void test_line_too_long_at_end(void **state) {
  (void)state;
  static const char *const ends[] = {"", "\n", "\r\n"};
  size_t i, k;
  for (i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    gsu_buf b = {0};
    gsu_buf_printf(&b, "a 2 x 0\nt 1 ");
    for (k = 0; k < 300000; k++) gsu_buf_append(&b, "N", 1);
    gsu_buf_printf(&b, "%s", ends[i]);
    for (k = 0; k < 2; k++) {
      chunked c = {.data = b.data, .len = b.len, .chunk = k ? 1000 : b.len};
      gs_reader *r = NULL;
      gs_record rec;
      gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
      gs_reader_set_max_line(r, 2048);
      gsu_assert_ok(gs_reader_next(r, &rec));
      gsu_assert_err(gs_reader_next(r, &rec), GS_EFORMAT);
      assert_int_equal(gs_reader_diag(r)->code, GS_D_LINE_TOO_LONG);
      assert_int_equal(gs_reader_diag(r)->line, 2);
      gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
      assert_int_equal(gs_reader_offset(r), b.len);
      gs_reader_free(r);
    }
    gsu_buf_free(&b);
  }
}

/* The limit cannot be set below GS_READER_MIN_MAX_LINE. */
static void test_max_line_floor(void **state) {
  (void)state;
  gsu_buf b = {0};
  gs_reader *r = NULL;
  gs_record rec;
  long_line_input(&b, GS_READER_MIN_MAX_LINE - 10);
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gs_reader_set_max_line(r, 1);
  gsu_assert_ok(gs_reader_next(r, &rec));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 't');
  assert_int_equal(rec.name_len, GS_READER_MIN_MAX_LINE - 10);
  gs_reader_free(r);
  gsu_buf_free(&b);
}

/* A line of exactly the limit is accepted; one byte more is not. The limit
 * counts the line's bytes, not its line end. */
static void test_max_line_boundary(void **state) {
  (void)state;
  gsu_buf b = {0};
  gs_reader *r = NULL;
  gs_record rec;
  size_t prefix = strlen("t 1 ");
  long_line_input(&b, 1024 - prefix);
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gs_reader_set_max_line(r, 1024);
  gsu_assert_ok(gs_reader_next(r, &rec));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 't');
  assert_int_equal(rec.name_len, 1024 - prefix);
  gs_reader_free(r);
  gsu_buf_free(&b);

  long_line_input(&b, 1025 - prefix);
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gs_reader_set_max_line(r, 1024);
  check_line_too_long(r, 2);
  gs_reader_free(r);
  gsu_buf_free(&b);
}

/* ---- syntax errors ------------------------------------------------------------ */

typedef struct bad_line {
  const char *text;
  size_t len;          /* 0: strlen(text) */
  gs_diag_code code;
} bad_line;

static const bad_line bad_lines[] = {
  {"x 1 2 3", 0, GS_D_UNKNOWN_RECORD},
  {"O 1 2 3", 0, GS_D_UNKNOWN_RECORD},
  {"# comment", 0, GS_D_UNKNOWN_RECORD},
  {"obj 1 2 3", 0, GS_D_UNKNOWN_RECORD},
  {"o", 0, GS_D_MISSING_FIELD},
  {"o 1", 0, GS_D_MISSING_FIELD},
  {"o 1 2", 0, GS_D_MISSING_FIELD},
  {"t", 0, GS_D_MISSING_FIELD},
  {"t 5", 0, GS_D_MISSING_FIELD},
  {"a", 0, GS_D_MISSING_FIELD},
  {"a 2", 0, GS_D_MISSING_FIELD},
  {"c", 0, GS_D_MISSING_FIELD},
  {"r", 0, GS_D_MISSING_FIELD},
  {"r 1", 0, GS_D_MISSING_FIELD},
  {"r 1 1", 0, GS_D_MISSING_FIELD},
  {"r 1 1 0 5", 0, GS_D_EXTRA_FIELD},
  {"r 1 4 0 5 6", 0, GS_D_EXTRA_FIELD},
  {"o 1g 2 3", 0, GS_D_NOT_HEX},
  {"o 1 2 3 1 zz", 0, GS_D_NOT_HEX},
  {"o 0x1 2 3", 0, GS_D_NOT_HEX},
  {"o 1 2 3.5", 0, GS_D_NOT_HEX},
  {"r 1 1 z", 0, GS_D_NOT_HEX},
  {"r 1 4 0 z", 0, GS_D_NOT_HEX},
  {"t g Name", 0, GS_D_NOT_HEX},
  {"a z app", 0, GS_D_NOT_HEX},
  {"o 10000000000000000 2 3", 0, GS_D_OVERFLOW},
  {"o 1 2 3 fffffffffffffffff", 0, GS_D_OVERFLOW},
  {"o 1 2 123456789abcdef01", 0, GS_D_OVERFLOW},
  {"o 1 2 -3", 0, GS_D_NEGATIVE_SIZE},
  {"r 1 6 0", 0, GS_D_ROOT_KIND},
  {"r 1 4 0", 0, GS_D_STATIC_CONTAINER},
  {"t 5 A\x01" "B", 0, GS_D_NOT_TEXT},
  {"t 5 A\x1b[0m", 0, GS_D_NOT_TEXT},
  {"t 5 A\0B", 7, GS_D_NOT_TEXT},
  {"t 5 A\xff", 0, GS_D_NOT_TEXT},
  {"t 5 A\xc3", 0, GS_D_NOT_TEXT},
  {"t 5 \xc0\xaf", 0, GS_D_NOT_TEXT},
  {"a 2 bad\x02name 0", 0, GS_D_NOT_TEXT},
  {"c bad\xfe", 0, GS_D_NOT_TEXT},
};
#define BAD_LINES (sizeof bad_lines / sizeof bad_lines[0])

static size_t bad_len(const bad_line *b) { return b->len ? b->len : strlen(b->text); }

/* Each bad line alone: GS_EFORMAT with its code and line, then the reader
 * goes on with the next line. */
static void test_syntax_errors(void **state) {
  (void)state;
  size_t i;
  for (i = 0; i < BAD_LINES; i++) {
    gsu_buf b = {0};
    gs_reader *r = NULL;
    gs_record rec;
    const gs_diag *d;
    gsu_buf_append(&b, "\n", 1);
    gsu_buf_append(&b, bad_lines[i].text, bad_len(&bad_lines[i]));
    gsu_buf_printf(&b, "\no 5 1 1\n");
    gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
    int err = gs_reader_next(r, &rec);
    if (err != GS_EFORMAT)
      fail_msg("bad line %zu (\"%s\") returned %d (%s)", i, bad_lines[i].text, err,
               gs_strerror(err));
    d = gs_reader_diag(r);
    if (d->code != bad_lines[i].code)
      fail_msg("bad line %zu (\"%s\") gave %s, expected %s: %s", i, bad_lines[i].text,
               gs_diag_name(d->code), gs_diag_name(bad_lines[i].code), d->message);
    assert_int_equal(d->line, 2);
    assert_true(d->message[0] != '\0');
    gsu_assert_ok(gs_reader_next(r, &rec));
    assert_int_equal(rec.kind, 'o');
    assert_int_equal(rec.id, 5);
    assert_int_equal(rec.line, 3);
    gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
    gs_reader_free(r);
    gsu_buf_free(&b);
  }
}

/* All bad lines in one input, between good records. */
static void test_syntax_errors_in_sequence(void **state) {
  (void)state;
  gsu_buf b = {0};
  gs_reader *r = NULL;
  gs_record rec;
  size_t i;
  gsu_buf_printf(&b, "a 2 x 0\n");
  for (i = 0; i < BAD_LINES; i++) {
    gsu_buf_append(&b, bad_lines[i].text, bad_len(&bad_lines[i]));
    gsu_buf_printf(&b, "\no %zx 1 1\n", i);
  }
  gsu_buf_printf(&b, "c x 0\n");
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'a');
  for (i = 0; i < BAD_LINES; i++) {
    gsu_assert_err(gs_reader_next(r, &rec), GS_EFORMAT);
    assert_int_equal(gs_reader_diag(r)->code, bad_lines[i].code);
    assert_int_equal(gs_reader_diag(r)->line, 2 + 2 * i);
    gsu_assert_ok(gs_reader_next(r, &rec));
    assert_int_equal(rec.kind, 'o');
    assert_int_equal(rec.id, i);
    assert_int_equal(rec.line, 3 + 2 * i);
  }
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'c');
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  gs_reader_free(r);
  gsu_buf_free(&b);
}

/* Leading zeros do not count towards the 64 bits. */
static void test_leading_zeros(void **state) {
  (void)state;
  want_rec w = {.kind = 'o', .id = 1, .type = UINT64_MAX, .size = 0x10};
  check_only_record("o 00000000000000000001 0000ffffffffffffffff 010\n", &w);
}

/* The buffer's length bounds the input, whatever follows it in memory. */
static void test_buffer_bounded_by_len(void **state) {
  (void)state;
  static const char *const texts[] = {"o 1 2 3 4", "a 2 x 1\nc x 2", "t 1 T"};
  gs_reader *r = NULL;
  gs_record rec;
  size_t i;
  gsu_assert_ok(gs_reader_new_buffer(&r, "o 1 2 3FF 5", 7));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.size, 3);
  assert_int_equal(rec.nrefs, 0);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  gs_reader_free(r);
  /* Exactly sized heap copies with no terminator (AddressSanitizer builds
   * catch a read past the end). */
  for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    size_t len = strlen(texts[i]);
    char *copy = malloc(len);
    int err, n = 0;
    assert_non_null(copy);
    memcpy(copy, texts[i], len);
    gsu_assert_ok(gs_reader_new_buffer(&r, copy, len));
    while ((err = gs_reader_next(r, &rec)) == GS_OK) n++;
    gsu_assert_err(err, GS_EOF);
    assert_true(n >= 1);
    if (rec.kind == 'o') assert_int_equal(rec.refs[0], 4);
    if (rec.kind == 'c') assert_int_equal(rec.timestamp, 2);
    if (rec.kind == 't') gsu_assert_name(&rec, "T");
    gs_reader_free(r);
    free(copy);
  }
}

/* A last line without newline, moved to the front of the reader's window
 * over bytes of an earlier line, ends where the input ends. */
static void test_last_line_after_refill(void **state) {
  (void)state;
  const char *text = "o 1 2 31111111111111\no 5 6 7";
  chunked c = {.data = text, .len = strlen(text), .chunk = strlen(text)};
  gs_reader *r = NULL;
  gs_record rec;
  gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.size, 0x31111111111111);
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.id, 5);
  assert_int_equal(rec.type, 6);
  assert_int_equal(rec.size, 7);
  assert_int_equal(rec.nrefs, 0);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  gs_reader_free(r);
}

/* ---- byte sources ---------------------------------------------------------------- */

static void test_reader_file(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed001-example.gclog"), &len);
  FILE *f = tmpfile();
  gs_reader *r = NULL;
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, len, f), len);
  rewind(f);
  gsu_assert_ok(gs_reader_new_file(&r, f));
  check_seed(r, 1, 1, 1);
  assert_int_equal(gs_reader_offset(r), len);
  gs_reader_free(r);
  fclose(f);
  free(text);
}

static void test_reader_fd_file(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed000-example.gclog"), &len);
  int fd = gsu_temp_fd();
  gs_reader *r = NULL;
  assert_int_equal(write(fd, text, len), (ssize_t)len);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  gsu_assert_ok(gs_reader_new_fd(&r, fd));
  check_seed(r, 0, 1, 2);
  gs_reader_free(r);
  close(fd);
  free(text);
}

/* Many records through a pipe fed by a child process (a thread on
 * Windows), so reads return partial blocks and lines straddle them. */
static void test_reader_fd_pipe(void **state) {
  (void)state;
  enum { OBJECTS = 40000 };
  gsu_buf b = {0};
  gs_reader *r = NULL;
  gs_record rec;
  gsu_feed feed;
  int fd;
  size_t n = 0;
  if (gsu_no_processes()) skip();
  gsu_buf_printf(&b, "a 2 piped app 5\nt 1 System.Object\n");
  for (n = 0; n < OBJECTS; n++) gsu_buf_printf(&b, "o %zx 1 %zx %zx\n", n + 1, n % 97, n);
  gsu_buf_printf(&b, "c piped app 6");
  fd = gsu_feed_start(&feed, b.data, b.len);
  gsu_assert_ok(gs_reader_new_fd(&r, fd));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'a');
  gsu_assert_name(&rec, "piped app");
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 't');
  for (n = 0; n < OBJECTS; n++) {
    gsu_assert_ok(gs_reader_next(r, &rec));
    assert_int_equal(rec.kind, 'o');
    assert_int_equal(rec.line, n + 3);
    assert_int_equal(rec.id, n + 1);
    assert_int_equal(rec.size, n % 97);
    assert_int_equal(rec.nrefs, 1);
    assert_int_equal(rec.refs[0], n);
  }
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'c');
  assert_int_equal(rec.timestamp, 6);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EOF);
  assert_int_equal(gs_reader_offset(r), b.len);
  gs_reader_free(r);
  close(fd);
  gsu_feed_finish(&feed);
  gsu_buf_free(&b);
}

/* One byte per read: every line straddles reads. */
static void test_reader_callback_bytewise(void **state) {
  (void)state;
  size_t len;
  char *text = gsu_read_file(gsu_fixture("seeds/seed000-example.gclog"), &len);
  chunked c = {.data = text, .len = len, .chunk = 1};
  gs_reader *r = NULL;
  gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
  check_seed(r, 0, 1, 2);
  assert_int_equal(gs_reader_offset(r), len);
  gs_reader_free(r);
  free(text);
}

/* A byte order mark opens the first line, however the reads split it, and
 * counts in the offset; anywhere else it is no record letter. */
static void test_byte_order_mark(void **state) {
  (void)state;
  size_t len, chunk;
  char *text = gsu_read_file(gsu_fixture("seeds/seed001-example.gclog"), &len);
  char *marked = malloc(len + 3);
  gs_reader *r = NULL;
  gs_record rec;
  assert_non_null(marked);
  memcpy(marked, "\xef\xbb\xbf", 3);
  memcpy(marked + 3, text, len);
  for (chunk = 1; chunk <= len + 3; chunk += len + 2) {
    chunked c = {.data = marked, .len = len + 3, .chunk = chunk};
    gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
    check_seed(r, 1, 1, 1);
    assert_int_equal(gs_reader_offset(r), len + 3);
    gs_reader_free(r);
  }
  r = open_text("a 2 x 1\n\xef\xbb\xbf" "c x 2\n");
  gsu_assert_ok(gs_reader_next(r, &rec));
  gsu_assert_err(gs_reader_next(r, &rec), GS_EFORMAT);
  assert_int_equal(gs_reader_diag(r)->code, GS_D_UNKNOWN_RECORD);
  gs_reader_free(r);
  free(marked);
  free(text);
}

/* A failing source ends reading with GS_EIO, after the complete records. */
static void test_reader_callback_error(void **state) {
  (void)state;
  const char *text = "a 2 x 0\no 1 2 3\no 4 5";
  chunked c = {.data = text, .len = strlen(text), .chunk = 3, .fail_at_end = 1};
  gs_reader *r = NULL;
  gs_record rec;
  gsu_assert_ok(gs_reader_new(&r, chunked_read, &c));
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'a');
  gsu_assert_ok(gs_reader_next(r, &rec));
  assert_int_equal(rec.kind, 'o');
  assert_int_equal(rec.id, 1);
  gsu_assert_err(gs_reader_next(r, &rec), GS_EIO);
  gs_reader_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_section_with_timestamp),
    cmocka_unit_test(test_section_without_timestamp),
    cmocka_unit_test(test_end_with_and_without_timestamp),
    cmocka_unit_test(test_version_and_timestamp_values),
    cmocka_unit_test(test_type_record),
    cmocka_unit_test(test_type_name_with_spaces),
    cmocka_unit_test(test_section_name_with_spaces),
    cmocka_unit_test(test_object_record),
    cmocka_unit_test(test_root_record),
    cmocka_unit_test(test_every_root_kind),
    cmocka_unit_test(test_uppercase_hex),
    cmocka_unit_test(test_seed001_example),
    cmocka_unit_test(test_seed000_example),
    cmocka_unit_test(test_crlf),
    cmocka_unit_test(test_missing_final_newline),
    cmocka_unit_test(test_blank_lines),
    cmocka_unit_test(test_empty_input),
    cmocka_unit_test(test_several_sections),
    cmocka_unit_test(test_million_references),
    cmocka_unit_test(test_line_too_long),
    cmocka_unit_test(test_line_too_long_at_end),
    cmocka_unit_test(test_max_line_boundary),
    cmocka_unit_test(test_max_line_floor),
    cmocka_unit_test(test_syntax_errors),
    cmocka_unit_test(test_syntax_errors_in_sequence),
    cmocka_unit_test(test_leading_zeros),
    cmocka_unit_test(test_buffer_bounded_by_len),
    cmocka_unit_test(test_last_line_after_refill),
    cmocka_unit_test(test_reader_file),
    cmocka_unit_test(test_reader_fd_file),
    cmocka_unit_test(test_reader_fd_pipe),
    cmocka_unit_test(test_reader_callback_bytewise),
    cmocka_unit_test(test_reader_callback_error),
    cmocka_unit_test(test_byte_order_mark),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
