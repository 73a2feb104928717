/* test_validate.c - the validator against the fixture files.
 *
 * Every tests/fixtures/{diag,seeds,valid}/NAME.gclog has a NAME.expect that
 * lists the diagnostics the validator must report, exactly and completely,
 * as "LINE SEVERITY CODE" lines (see tests/fixtures/README.md). Every code of
 * gs_diag.h must have its own diag/<code-name>.gclog. */
#include "gs_unit.h"

#include <dirent.h>
#include <stdlib.h>

#include "gs_validate.h"

static const char *const fixture_dirs[] = {"diag", "seeds", "valid"};

/* The reader limits for fixtures that test them; the file cannot carry them. */
static size_t max_line_for(const char *file) {
  return strcmp(file, "line-too-long.gclog") == 0 ? 1024 : 0;
}

static size_t max_refs_for(const char *file) {
  return strcmp(file, "too-many-references.gclog") == 0 ? 4 : 0;
}

/* ---- diagnostic lists ---------------------------------------------------- */

typedef struct entry {
  uint64_t line;
  gs_diag_code code;
  gs_severity severity;
} entry;

typedef struct entries {
  entry *items;
  size_t n, cap;
} entries;

static void entries_add(entries *e, uint64_t line, gs_diag_code code, gs_severity sev) {
  if (e->n == e->cap) {
    e->cap = e->cap ? e->cap * 2 : 16;
    e->items = realloc(e->items, e->cap * sizeof *e->items);
    assert_non_null(e->items);
  }
  e->items[e->n].line = line;
  e->items[e->n].code = code;
  e->items[e->n].severity = sev;
  e->n++;
}

static int entry_cmp(const void *pa, const void *pb) {
  const entry *a = pa, *b = pb;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  if (a->code != b->code) return a->code < b->code ? -1 : 1;
  return (int)a->severity - (int)b->severity;
}

static const char *severity_name(gs_severity s) {
  return s == GS_SEV_ERROR ? "error" : "warning";
}

static void entries_print(const char *title, const entries *e) {
  size_t i;
  print_message("  %s (%zu):\n", title, e->n);
  for (i = 0; i < e->n; i++)
    print_message("    %llu %s %s\n", (unsigned long long)e->items[i].line,
                  severity_name(e->items[i].severity), gs_diag_name(e->items[i].code));
}

static int code_by_name(const char *name, gs_diag_code *out) {
  int c;
  for (c = 1; c < GS_D_COUNT_; c++)
    if (strcmp(gs_diag_name((gs_diag_code)c), name) == 0) {
      *out = (gs_diag_code)c;
      return 1;
    }
  return 0;
}

/* Parses an .expect file; lines starting with '#' and blank lines are
 * ignored. Returns 0 and prints why on a malformed line. */
static int load_expect(const char *path, entries *out) {
  size_t len;
  char *text = gsu_read_file(path, &len), *line, *save = NULL;
  int ok = 1;
  for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    unsigned long long lineno;
    char sev[16], name[64], extra[2];
    gs_diag_code code;
    int n;
    if (line[0] == '#' || line[strspn(line, " \t\r")] == '\0') continue;
    n = sscanf(line, "%llu %15s %63s %1s", &lineno, sev, name, extra);
    if (n != 3 || !code_by_name(name, &code) ||
        (strcmp(sev, "error") != 0 && strcmp(sev, "warning") != 0)) {
      print_error("%s: malformed line \"%s\"\n", path, line);
      ok = 0;
      continue;
    }
    entries_add(out, lineno, code, strcmp(sev, "error") == 0 ? GS_SEV_ERROR : GS_SEV_WARNING);
  }
  free(text);
  return ok;
}

/* ---- running the validator ------------------------------------------------ */

typedef struct run {
  gsu_diags diags;
  gs_validate_counts counts;
} run;

static void validate_file(const char *path, size_t max_line, size_t max_refs, run *out) {
  size_t len;
  char *text = gsu_read_file(path, &len);
  gs_reader *r = NULL;
  memset(out, 0, sizeof *out);
  gsu_assert_ok(gs_reader_new_buffer(&r, text, len));
  if (max_line) gs_reader_set_max_line(r, max_line);
  if (max_refs) gs_reader_set_max_refs(r, max_refs);
  gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &out->diags, &out->counts));
  gs_reader_free(r);
  free(text);
}

/* Validates dir/file and compares with dir/<stem>.expect. Returns 1 when they
 * agree; otherwise prints both lists and returns 0. */
static int check_fixture(const char *dir, const char *file) {
  char rel[512], expect_rel[512];
  entries want = {0}, got = {0};
  uint64_t errors = 0, warnings = 0;
  run res;
  size_t i, stem = strlen(file) - strlen(".gclog");
  int ok;
  snprintf(rel, sizeof rel, "%s/%s", dir, file);
  snprintf(expect_rel, sizeof expect_rel, "%s/%.*s.expect", dir, (int)stem, file);
  ok = load_expect(gsu_fixture(expect_rel), &want);
  validate_file(gsu_fixture(rel), max_line_for(file), max_refs_for(file), &res);
  for (i = 0; i < res.diags.n; i++) {
    const gs_diag *d = &res.diags.items[i];
    entries_add(&got, d->line, d->code, gs_diag_severity(d->code));
    if (d->message[0] == '\0') {
      print_error("%s: %s on line %llu has no message\n", rel, gs_diag_name(d->code),
                  (unsigned long long)d->line);
      ok = 0;
    }
    if (gs_diag_severity(d->code) == GS_SEV_ERROR) errors++;
    else warnings++;
  }
  if (want.n) qsort(want.items, want.n, sizeof *want.items, entry_cmp);
  if (got.n) qsort(got.items, got.n, sizeof *got.items, entry_cmp);
  int same = want.n == got.n;
  for (i = 0; same && i < want.n; i++) same = entry_cmp(&want.items[i], &got.items[i]) == 0;
  if (!same) {
    print_error("%s: diagnostics differ from %s\n", rel, expect_rel);
    entries_print("expected", &want);
    entries_print("reported", &got);
    for (i = 0; i < res.diags.n; i++)
      print_message("    message: %llu %s: %s\n", (unsigned long long)res.diags.items[i].line,
                    gs_diag_name(res.diags.items[i].code), res.diags.items[i].message);
    ok = 0;
  }
  if (res.counts.errors != errors || res.counts.warnings != warnings) {
    print_error("%s: counts say %llu errors and %llu warnings, callback saw %llu and %llu\n",
                rel, (unsigned long long)res.counts.errors,
                (unsigned long long)res.counts.warnings, (unsigned long long)errors,
                (unsigned long long)warnings);
    ok = 0;
  }
  free(want.items);
  free(got.items);
  gsu_diags_free(&res.diags);
  return ok;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int name_cmp(const void *a, const void *b) { return strcmp(a, b); }

/* Names of the .gclog files in a fixture folder, sorted. */
static size_t list_fixtures(const char *dir, char names[][128], size_t cap) {
  DIR *d = opendir(gsu_fixture(dir));
  struct dirent *e;
  size_t n = 0;
  if (!d) fail_msg("cannot open fixture folder %s", gsu_fixture(dir));
  while ((e = readdir(d)) != NULL) {
    if (!has_suffix(e->d_name, ".gclog")) continue;
    assert_true(n < cap);
    assert_true(strlen(e->d_name) < 128);
    strcpy(names[n++], e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof names[0], name_cmp);
  return n;
}

/* ---- tests ---------------------------------------------------------------------- */

static void test_diag_names(void **state) {
  (void)state;
  int a, b;
  for (a = 1; a < GS_D_COUNT_; a++) {
    const char *name = gs_diag_name((gs_diag_code)a);
    assert_non_null(name);
    assert_true(name[0] != '\0');
    assert_string_not_equal(name, "unknown");
    for (b = 1; b < a; b++) assert_string_not_equal(name, gs_diag_name((gs_diag_code)b));
    assert_int_equal(gs_diag_severity((gs_diag_code)a),
                     a < GS_D_DANGLING_REFERENCE ? GS_SEV_ERROR : GS_SEV_WARNING);
  }
  assert_string_equal(gs_diag_name(GS_D_DUPLICATE_OBJECT), "duplicate-object");
  assert_string_equal(gs_diag_name(GS_D_LINE_TOO_LONG), "line-too-long");
  assert_string_equal(gs_diag_name(GS_D_DANGLING_REFERENCE), "dangling-reference");
}

/* Every code of the records has diag/<name>.gclog and its .expect reports
 * that code. */
static void test_every_code_has_fixture(void **state) {
  (void)state;
  int c, missing = 0;
  for (c = 1; c < GS_D_COUNT_; c++) {
    const char *name = gs_diag_name((gs_diag_code)c);
    char rel[256];
    entries want = {0};
    size_t i, hits = 0;
    FILE *f;
    /* Said of foreign heap files, never of records: tests/formats. */
    if (c == GS_D_BAD_HEAP_FILE || c == GS_D_TRUNCATED_HEAP_FILE) continue;
    snprintf(rel, sizeof rel, "diag/%s.gclog", name);
    if (!(f = fopen(gsu_fixture(rel), "rb"))) {
      print_error("no fixture %s for code %s\n", rel, name);
      missing++;
      continue;
    }
    fclose(f);
    snprintf(rel, sizeof rel, "diag/%s.expect", name);
    assert_true(load_expect(gsu_fixture(rel), &want));
    for (i = 0; i < want.n; i++) hits += want.items[i].code == (gs_diag_code)c;
    if (!hits) {
      print_error("%s does not expect %s\n", rel, name);
      missing++;
    }
    free(want.items);
  }
  assert_int_equal(missing, 0);
}

static void test_fixtures(void **state) {
  (void)state;
  static char names[256][128];
  size_t d, i, n, checked = 0, failed = 0;
  for (d = 0; d < sizeof fixture_dirs / sizeof fixture_dirs[0]; d++) {
    n = list_fixtures(fixture_dirs[d], names, 256);
    assert_true(n > 0);
    for (i = 0; i < n; i++) {
      checked++;
      if (!check_fixture(fixture_dirs[d], names[i])) failed++;
    }
  }
  print_message("  %zu fixtures checked, %zu differ\n", checked, failed);
  assert_int_equal(failed, 0);
}

/* The seed examples: warnings only, and the counts of what was read. */
static void test_seed_counts(void **state) {
  (void)state;
  static const char *const seeds[] = {"seeds/seed000-example.gclog",
                                      "seeds/seed001-example.gclog"};
  size_t i;
  for (i = 0; i < 2; i++) {
    run res;
    validate_file(gsu_fixture(seeds[i]), 0, 0, &res);
    assert_int_equal(res.counts.errors, 0);
    assert_int_equal(res.counts.warnings, 11);
    assert_int_equal(res.counts.sections, 1);
    assert_int_equal(res.counts.records, 14);
    gsu_diags_free(&res.diags);
  }
}

static void test_section_counts(void **state) {
  (void)state;
  run res;
  validate_file(gsu_fixture("valid/sections-repeat-ids.gclog"), 0, 0, &res);
  assert_int_equal(res.counts.errors, 0);
  assert_int_equal(res.counts.warnings, 0);
  assert_int_equal(res.counts.sections, 3);
  assert_int_equal(res.counts.records, 17);
  gsu_diags_free(&res.diags);
}

/* Records fed by hand, without a reader, and a producer's own diagnostic. */
static void test_validator_api(void **state) {
  (void)state;
  static const uint64_t refs[] = {0x20, 0x21};
  gsu_diags diags = {0};
  gs_validator *v = NULL;
  const gs_validate_counts *counts;
  gs_record a = {.kind = GS_REC_SECTION, .line = 1, .id = 2, .name = "app", .name_len = 3,
                 .has_timestamp = 1, .timestamp = 5};
  gs_record t = {.kind = GS_REC_TYPE, .line = 2, .id = 1, .name = "T", .name_len = 1};
  gs_record o1 = {.kind = GS_REC_OBJECT, .line = 3, .id = 0x20, .type = 1, .size = 8,
                  .refs = refs, .nrefs = 2};
  gs_record o2 = {.kind = GS_REC_OBJECT, .line = 5, .id = 0x20, .type = 1, .size = 8};
  gs_record r = {.kind = GS_REC_ROOT, .line = 6, .id = 0x20, .root_kind = 1};
  gs_record c = {.kind = GS_REC_END, .line = 7, .name = "app", .name_len = 3,
                 .has_timestamp = 1, .timestamp = 6};
  gs_diag syntax = {.code = GS_D_NOT_HEX, .line = 4, .message = "reference is not hex"};
  gsu_assert_ok(gs_validator_new(&v, gsu_diags_collect, &diags));
  gsu_assert_ok(gs_validator_record(v, &a));
  gsu_assert_ok(gs_validator_record(v, &t));
  gsu_assert_ok(gs_validator_record(v, &o1));
  gs_validator_report(v, &syntax);
  gsu_assert_ok(gs_validator_record(v, &o2));
  gsu_assert_ok(gs_validator_record(v, &r));
  gsu_assert_ok(gs_validator_record(v, &c));
  gsu_assert_ok(gs_validator_finish(v));
  counts = gs_validator_counts(v);
  assert_int_equal(counts->errors, 2);
  assert_int_equal(counts->warnings, 1);
  assert_int_equal(counts->sections, 1);
  assert_int_equal(counts->records, 6);
  /* In report order: the forwarded one, the duplicate at once, the dangling
   * reference (0x21) when the section ends. */
  assert_int_equal(diags.n, 3);
  assert_int_equal(diags.items[0].code, GS_D_NOT_HEX);
  assert_int_equal(diags.items[0].line, 4);
  assert_string_equal(diags.items[0].message, "reference is not hex");
  assert_int_equal(diags.items[1].code, GS_D_DUPLICATE_OBJECT);
  assert_int_equal(diags.items[1].line, 5);
  assert_int_equal(diags.items[2].code, GS_D_DANGLING_REFERENCE);
  assert_int_equal(diags.items[2].line, 3);
  gs_validator_free(v);
  gsu_diags_free(&diags);
}

/* A validator given nothing reports the missing section once. */
static void test_validator_empty(void **state) {
  (void)state;
  gsu_diags diags = {0};
  gs_validator *v = NULL;
  gsu_assert_ok(gs_validator_new(&v, gsu_diags_collect, &diags));
  gsu_assert_ok(gs_validator_finish(v));
  assert_int_equal(diags.n, 1);
  assert_int_equal(diags.items[0].code, GS_D_NO_SECTION);
  assert_int_equal(diags.items[0].line, 0);
  assert_int_equal(gs_validator_counts(v)->errors, 1);
  assert_int_equal(gs_validator_counts(v)->sections, 0);
  gs_validator_free(v);
  gsu_diags_free(&diags);
}

/* Diagnostics that wait for the end of a section come in line order. */
static void test_deferred_in_line_order(void **state) {
  (void)state;
  const char *text =
    "a 2 app 0\n"
    "r 90 1 0\n"
    "o 10 5 8 91\n"
    "r 92 1 0\n"
    "o 11 6 8 93 94\n"
    "c app 0\n";
  gsu_diags diags = {0};
  gs_validate_counts counts;
  gs_reader *r = NULL;
  size_t i;
  gsu_assert_ok(gs_reader_new_buffer(&r, text, strlen(text)));
  gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &diags, &counts));
  assert_int_equal(counts.errors, 0);
  assert_true(diags.n >= 4);
  for (i = 1; i < diags.n; i++) assert_true(diags.items[i - 1].line <= diags.items[i].line);
  gs_reader_free(r);
  gsu_diags_free(&diags);
}

/* Many objects and references: a clean heap stays clean, and one missing
 * object is found among them. */
static void test_large_section(void **state) {
  (void)state;
  enum { OBJECTS = 300000 };
  gsu_buf b = {0};
  gsu_diags diags = {0};
  gs_validate_counts counts;
  gs_reader *r = NULL;
  size_t i;
  gsu_buf_printf(&b, "a 2 big 0\nt 1 T\n");
  for (i = 0; i < OBJECTS; i++)
    gsu_buf_printf(&b, "o %zx 1 8 %zx\n", 0x7ff000000000u + i * 8,
                   0x7ff000000000u + ((i * 7919) % OBJECTS) * 8);
  gsu_buf_printf(&b, "o 1 1 8 %zx\nr 1 1 0\nc big 0\n", 0x7ff000000000u + OBJECTS * 8);
  gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
  gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &diags, &counts));
  assert_int_equal(counts.errors, 0);
  assert_int_equal(counts.warnings, 1);
  assert_int_equal(counts.records, OBJECTS + 5);
  assert_int_equal(diags.n, 1);
  assert_int_equal(diags.items[0].code, GS_D_DANGLING_REFERENCE);
  assert_int_equal(diags.items[0].line, OBJECTS + 3);
  gs_reader_free(r);
  gsu_diags_free(&diags);
  gsu_buf_free(&b);
}

/* ---- dangling references against a plain model ---------------------- */

typedef struct dangle { uint64_t line, id; } dangle;

static int dangle_cmp(const void *pa, const void *pb) {
  const dangle *a = pa, *b = pb;
  if (a->line != b->line) return a->line < b->line ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static int dangle_by_id(const void *pa, const void *pb) {
  const dangle *a = pa, *b = pb;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return a->line < b->line ? -1 : a->line > b->line;
}

static uint64_t test_rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A section of `objects` objects whose references go back, ahead, nowhere
 * (to IDs in the heap's range, or, with sparse, to random addresses, which
 * the validator cannot keep in bitmaps), several times to the same ID and
 * twice on a line; the middle object holds an array of `array` references
 * (a line the parsing workers cut into blocks). The expected report is
 * worked out naively: every reference checked against the whole section,
 * the first mention of each missing ID kept. */
static void dangling_section(gsu_buf *b, uint64_t *line, int sparse, uint64_t seed, uint64_t objects,
                             unsigned array, dangle *want, size_t *nwant) {
  const uint64_t base = UINT64_C(0x7f0000000000);
  const uint64_t OBJECTS = objects;
  uint64_t pool[64], i;
  size_t k, n0 = *nwant, w;
  for (k = 0; k < 64; k++)
    pool[k] = sparse ? (test_rng(&seed) & ~UINT64_C(3)) | 4 : base + 0x20 * (test_rng(&seed) % OBJECTS) + 0x10;
  gsu_buf_printf(b, "a 2 s%d 0\nt 1 T\n", sparse);
  *line += 2;
  for (i = 0; i < OBJECTS; i++) {
    unsigned nrefs = i == OBJECTS / 2 ? array : (unsigned)(test_rng(&seed) % 6), r;
    gsu_buf_printf(b, "o %llx 1 8", (unsigned long long)(base + 0x20 * i));
    ++*line;
    for (r = 0; r < nrefs; r++) {
      uint64_t pick = test_rng(&seed) % 100, id;
      int missing = 1;
      if (pick < 35) { id = base + 0x20 * (test_rng(&seed) % (i + 1)); missing = 0; }
      else if (pick < 65) { id = base + 0x20 * (test_rng(&seed) % OBJECTS); missing = 0; }
      else if (pick < 80) id = sparse ? test_rng(&seed) & ~UINT64_C(3) : base + 0x20 * (test_rng(&seed) % OBJECTS) + 8;
      else id = pool[test_rng(&seed) % 64];
      gsu_buf_printf(b, " %llx", (unsigned long long)id);
      if (pick >= 95) gsu_buf_printf(b, " %llx", (unsigned long long)id);
      if (!missing) continue;
      want[*nwant].line = *line;
      want[(*nwant)++].id = id;
    }
    gsu_buf_printf(b, "\n");
    if (i % 1000 == 0) {
      gsu_buf_printf(b, "r %llx 1 0\n", (unsigned long long)pool[i / 1000]);
      ++*line;
    }
  }
  gsu_buf_printf(b, "c s%d 0\n", sparse);
  ++*line;
  /* the first mention of each ID, in line order */
  qsort(want + n0, *nwant - n0, sizeof *want, dangle_by_id);
  for (k = n0, w = n0; k < *nwant; k++)
    if (w == n0 || want[w - 1].id != want[k].id) want[w++] = want[k];
  *nwant = w;
  qsort(want + n0, *nwant - n0, sizeof *want, dangle_cmp);
}

/* The dangling references reported are those expected, in line order. */
static void check_dangling(const gsu_diags *diags, const gs_validate_counts *counts, const dangle *want,
                           size_t nwant) {
  size_t k, d = 0;
  for (k = 0; k < diags->n; k++) {
    unsigned long long id = 0;
    if (diags->items[k].code != GS_D_DANGLING_REFERENCE) continue;
    assert_true(d < nwant);
    assert_int_equal(diags->items[k].line, want[d].line);
    assert_int_equal(sscanf(diags->items[k].message, "reference to object %llx", &id), 1);
    assert_int_equal(id, want[d].id);
    d++;
  }
  assert_int_equal(d, nwant);
  /* roots to pool IDs missing from the dump: every one but those defined */
  assert_true(counts->warnings > nwant);
}

/* On one thread and on the parsing workers alike. */
static void test_dangling_like_naive(void **state) {
  (void)state;
  gsu_buf b = {0};
  gsu_diags diags = {0};
  gs_validate_counts counts;
  gs_reader *r = NULL;
  dangle *want = malloc(400000 * sizeof *want);
  size_t nwant = 0, sections;
  uint64_t line = 0;
  int threads;
  assert_non_null(want);
  dangling_section(&b, &line, 0, 0x1234567, 30000, 300000, want, &nwant);
  dangling_section(&b, &line, 1, 0x7654321, 30000, 5, want, &nwant);
  /* Many small sections, which the sets are cleared between. */
  for (sections = 0; sections < 40; sections++)
    dangling_section(&b, &line, 0, 0x9999 + sections, 500, 3, want, &nwant);
  assert_true(nwant > 5000);
  for (threads = 0; threads < 2; threads++) {
    if (threads && gsu_no_processes()) break;
    gsu_assert_ok(gs_reader_new_buffer(&r, b.data, b.len));
    if (threads) gsu_assert_ok(gs_reader_start_thread(r));
    gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &diags, &counts));
    check_dangling(&diags, &counts, want, nwant);
    gs_reader_free(r);
    gsu_diags_free(&diags);
  }
  gsu_buf_free(&b);
  free(want);
}
/* ---- few dangling references: only their spans read again ----------- */

typedef struct counted {
  const char *data;
  size_t len, pos;
  uint64_t again;              /* bytes read again */
} counted;

static int counted_read(void *ctx, void *buf, size_t cap, size_t *got) {
  counted *c = ctx;
  *got = c->len - c->pos < cap ? c->len - c->pos : cap;
  memcpy(buf, c->data + c->pos, *got);
  c->pos += *got;
  return GS_OK;
}

static int counted_read_at(void *ctx, uint64_t offset, void *buf, size_t cap, size_t *got) {
  counted *c = ctx;
  *got = offset >= c->len ? 0 : c->len - offset < cap ? c->len - (size_t)offset : cap;
  memcpy(buf, c->data + offset, *got);
  c->again += *got;
  return GS_OK;
}

/* On one thread, the lines of a large section's few dangling references
 * (one mentioned again later, one twice on its line) are found by reading
 * again only the parts of it that mention them first. */
static void test_few_dangling_read_again(void **state) {
  (void)state;
  const uint64_t base = UINT64_C(0x7f0000000000), N = 200000;
  const uint64_t at[4] = {20000, 90000, 150000, 180000};
  const uint64_t missing[4] = {base + 8, base + 0x20 * N + 0x20, base + 0x18, base + 8};
  gsu_buf b = {0};
  gsu_diags diags = {0};
  gs_validate_counts counts;
  counted c = {0};
  gs_reader *r;
  uint64_t i;
  size_t k, d = 0;
  gsu_buf_printf(&b, "a 2 big 0\nt 1 T\n");
  for (i = 0; i < N; i++) {
    gsu_buf_printf(&b, "o %llx 1 20 %llx %llx", (unsigned long long)(base + 0x20 * i),
                   (unsigned long long)(base + 0x20 * (i / 2)), (unsigned long long)(base + 0x20 * (N - 1 - i)));
    for (k = 0; k < 4; k++)
      if (at[k] == i) gsu_buf_printf(&b, " %llx %llx", (unsigned long long)missing[k], (unsigned long long)missing[k]);
    gsu_buf_printf(&b, "\n");
  }
  gsu_buf_printf(&b, "c big 0\n");
  c.data = b.data;
  c.len = b.len;
  gsu_assert_ok(gs_reader_new(&r, counted_read, &c));
  gs_reader_set_read_at(r, counted_read_at, &c);
  gsu_assert_ok(gs_validate_reader(r, gsu_diags_collect, &diags, &counts));
  for (k = 0; k < diags.n; k++) {
    unsigned long long id = 0;
    assert_int_equal(diags.items[k].code, GS_D_DANGLING_REFERENCE);
    assert_true(d < 3);
    assert_int_equal(diags.items[k].line, at[d] + 3);
    assert_int_equal(sscanf(diags.items[k].message, "reference to object %llx", &id), 1);
    assert_int_equal(id, missing[d]);
    d++;
  }
  assert_int_equal(d, 3);
  assert_true(b.len > 8000000);
  /* three parts read again (a reader's window each), not the 9 MB */
  assert_true(c.again < b.len / 2);
  gs_reader_free(r);
  gsu_diags_free(&diags);
  gsu_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_diag_names),
    cmocka_unit_test(test_every_code_has_fixture),
    cmocka_unit_test(test_fixtures),
    cmocka_unit_test(test_seed_counts),
    cmocka_unit_test(test_section_counts),
    cmocka_unit_test(test_validator_api),
    cmocka_unit_test(test_validator_empty),
    cmocka_unit_test(test_deferred_in_line_order),
    cmocka_unit_test(test_large_section),
    cmocka_unit_test(test_dangling_like_naive),
    cmocka_unit_test(test_few_dangling_read_again),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
