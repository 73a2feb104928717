/* fuzz_reader.c - libFuzzer target for the reader, validator, graph loader and writer.
 *
 * Each input is read three times from the same buffer:
 *   1. through the validator, checking every diagnostic it reports and that
 *      its counts agree with what was reported;
 *   2. through gs_graph_load, section after section, checking the structure
 *      of every graph (indices in range, offsets ordered, reachability) and
 *      that packing it keeps every ID, size and type;
 *   3. record by record through the writer: every record the reader accepts
 *      must be writable, in exactly the canonical form the writer documents,
 *      and must read back as the same record;
 *   4. with the fast path for object lines on and off, which must give the
 *      same records and diagnostics.
 * A valid input (no validator errors) must also load as graphs to its end.
 * Any broken expectation aborts, which libFuzzer reports as a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_diag.h"
#include "gs_error.h"
#include "gs_graph.h"
#include "gs_reader.h"
#include "gs_validate.h"
#include "gs_writer.h"

/* Short lines keep each run fast; inputs may still exceed it to exercise
 * the line-too-long path. */
#define FUZZ_MAX_LINE 4096u
/* Room for one written record: a line of at most FUZZ_MAX_LINE input bytes
 * can only grow by the timestamp the writer adds. */
#define SINK_CAP (4 * FUZZ_MAX_LINE)
/* Object lines have no byte limit, only one on references: as many as
 * keep a written object line (17 bytes a reference) inside the sink. */
#define FUZZ_MAX_REFS (FUZZ_MAX_LINE / 17)

#define CHECK(cond) \
  do { \
    if (!(cond)) { \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      abort(); \
    } \
  } while (0)

/* ---- validator -------------------------------------------------------- */

typedef struct diag_tally {
  uint64_t errors, warnings;
} diag_tally;

static void on_diag(void *ctx, const gs_diag *d) {
  diag_tally *t = ctx;
  CHECK((int)d->code > 0 && d->code < GS_D_COUNT_);
  CHECK(strcmp(gs_diag_name(d->code), "unknown") != 0);
  CHECK(memchr(d->message, '\0', sizeof d->message) != NULL);
  if (gs_diag_severity(d->code) == GS_SEV_ERROR)
    t->errors++;
  else
    t->warnings++;
}

/* Returns the number of errors the validator found. */
static uint64_t fuzz_validate(const uint8_t *data, size_t size) {
  gs_reader *r;
  gs_validate_counts counts;
  diag_tally tally = {0, 0};
  CHECK(gs_reader_new_buffer(&r, data, size) == GS_OK);
  gs_reader_set_max_line(r, FUZZ_MAX_LINE);
  gs_reader_set_max_refs(r, FUZZ_MAX_REFS);
  CHECK(gs_validate_reader(r, on_diag, &tally, &counts) == GS_OK);
  CHECK(counts.errors == tally.errors);
  CHECK(counts.warnings == tally.warnings);
  gs_reader_free(r);
  return counts.errors;
}

/* ---- graph ------------------------------------------------------------ */

static int is_marked(const uint8_t *bits, uint32_t node) {
  return (bits[node / 8] >> (node % 8)) & 1u;
}

/* Every object in the dump has a type index, defined or not; only the nodes
 * standing for objects missing from the dump have none. */
static int is_placeholder(const gs_graph *g, uint32_t node) {
  return g->types[node] == GS_GRAPH_MISSING;
}

static void check_graph(const gs_graph *g) {
  uint32_t i, strong_roots = 0, placeholders = 0;
  uint64_t dangling = 0;
  uint8_t *bits;
  char name[64];
  CHECK(g->name != NULL);
  CHECK(g->nobjects <= g->nnodes);
  CHECK(g->ref_offsets[0] == 0);
  CHECK(g->ref_offsets[g->nnodes] == g->nrefs);
  for (i = 0; i < g->nnodes; i++) {
    uint32_t k;
    CHECK(g->ref_offsets[i] <= g->ref_offsets[i + 1]);
    CHECK(g->types[i] == GS_GRAPH_MISSING || g->types[i] < g->ntypes);
    if (is_placeholder(g, i)) {   /* an object referenced but not in the dump */
      placeholders++;
      CHECK(g->sizes[i] == 0);
      CHECK(g->ref_offsets[i] == g->ref_offsets[i + 1]);
    }
    for (k = g->ref_offsets[i]; k < g->ref_offsets[i + 1]; k++) {
      CHECK(g->refs[k] < g->nnodes);
      dangling += is_placeholder(g, g->refs[k]);
    }
  }
  CHECK(g->nobjects + placeholders == g->nnodes);
  CHECK(g->dangling_refs == dangling);
  for (i = 0; i < g->nroots; i++) {
    CHECK(g->roots[i].node < g->nnodes);
    CHECK(g->roots[i].kind < GS_ROOT_KINDS);
    CHECK(g->roots[i].container == GS_GRAPH_MISSING || g->roots[i].container < g->ntypes);
  }
  for (i = 0; i < g->ntypes; i++) {
    const char *s = gs_graph_type_name(g, i, name, sizeof name);
    CHECK(s != NULL && (s != name || memchr(name, '\0', sizeof name) != NULL));
  }
  bits = calloc((size_t)g->nnodes / 8 + 1, 1);
  CHECK(bits != NULL);
  CHECK(gs_graph_reachable(g, bits) == GS_OK);
  for (i = 0; i < g->nroots; i++) {
    if (g->roots[i].flags & GS_FLAG_WEAK) continue;
    strong_roots++;
    CHECK(is_marked(bits, g->roots[i].node));
  }
  /* The marked set is closed under references. */
  for (i = 0; i < g->nnodes; i++) {
    uint32_t k;
    if (!is_marked(bits, i)) continue;
    for (k = g->ref_offsets[i]; k < g->ref_offsets[i + 1]; k++)
      CHECK(is_marked(bits, g->refs[k]));
  }
  /* Weak roots keep nothing alive. */
  if (strong_roots == 0)
    for (i = 0; i <= g->nnodes / 8; i++) CHECK(bits[i] == 0);
  free(bits);
  CHECK(gs_graph_memory(g) > 0);
}

/* Packing keeps every ID, size and type, whatever widths they take; a
 * graph's references dropped, it holds less. */
static void check_pack(gs_graph *g) {
  size_t n = (size_t)g->nnodes + 1, mem;
  uint64_t *ids = malloc(n * sizeof *ids), *sizes = malloc(n * sizeof *sizes);
  uint32_t *types = malloc(n * sizeof *types), i;
  CHECK(ids && sizes && types);
  memcpy(ids, g->ids, g->nnodes * sizeof *ids);
  memcpy(sizes, g->sizes, g->nnodes * sizeof *sizes);
  memcpy(types, g->types, g->nnodes * sizeof *types);
  CHECK(gs_graph_pack(g) == GS_OK);
  for (i = 0; i < g->nnodes; i++) CHECK(gs_graph_size(g, i) == sizes[i]);
  CHECK(gs_graph_unpack(g) == GS_OK);
  CHECK(!memcmp(ids, g->ids, g->nnodes * sizeof *ids));
  CHECK(!memcmp(sizes, g->sizes, g->nnodes * sizeof *sizes));
  CHECK(!memcmp(types, g->types, g->nnodes * sizeof *types));
  mem = gs_graph_memory(g);
  gs_graph_drop_refs(g);
  CHECK(gs_graph_memory(g) < mem);
  free(ids);
  free(sizes);
  free(types);
}

/* Returns 1 when every section loaded and the input ended with GS_EOF. */
static int fuzz_graph(const uint8_t *data, size_t size) {
  gs_reader *r;
  gs_graph *g;
  gs_diag err;
  int rc;
  CHECK(gs_reader_new_buffer(&r, data, size) == GS_OK);
  gs_reader_set_max_line(r, FUZZ_MAX_LINE);
  gs_reader_set_max_refs(r, FUZZ_MAX_REFS);
  while ((rc = gs_graph_load(r, &g, &err)) == GS_OK) {
    check_graph(g);
    check_pack(g);
    gs_graph_free(g);
  }
  CHECK(rc == GS_EOF || rc == GS_EFORMAT || rc == GS_ELIMIT);
  if (rc == GS_EFORMAT) {
    CHECK((int)err.code > 0 && err.code < GS_D_COUNT_);
    CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
  }
  gs_reader_free(r);
  return rc == GS_EOF;
}

/* ---- writer round trip ------------------------------------------------ */

typedef struct sink {
  char data[SINK_CAP];
  size_t len;
} sink;

/* The writer, and a reader of what it writes, live for the whole run: both
 * own large buffers whose allocation would otherwise dominate each input. */
typedef struct round_trip {
  gs_writer *writer;
  gs_reader *reader;   /* reads back the line in first */
  sink first;          /* a record as the writer wrote it */
  sink expected;       /* and as it should have written it */
  sink *current;       /* where the writer's output goes now */
  size_t unread;       /* bytes of first not yet handed to the reader */
  uint64_t fed;        /* bytes handed to the reader since the start */
} round_trip;

static int sink_write(void *ctx, const void *buf, size_t len) {
  sink *s = ((round_trip *)ctx)->current;
  if (len > SINK_CAP - s->len) return GS_ELIMIT;
  memcpy(s->data + s->len, buf, len);
  s->len += len;
  return GS_OK;
}

/* The reader's byte source: the line just written. The reader asks for more
 * only once it has used up what it had, and never hears of an end of input,
 * which is what lets it live across records. */
static int feed_read(void *ctx, void *buf, size_t cap, size_t *got) {
  round_trip *t = ctx;
  size_t n = t->unread < cap ? t->unread : cap;
  CHECK(n > 0);   /* the reader wanted more than the one line */
  memcpy(buf, t->first.data + (t->first.len - t->unread), n);
  t->unread -= n;
  t->fed += n;
  *got = n;
  return GS_OK;
}

static round_trip *round_trip_get(void) {
  static round_trip *t;
  if (t) return t;
  CHECK((t = calloc(1, sizeof *t)) != NULL);
  CHECK(gs_writer_new(&t->writer, sink_write, t) == GS_OK);
  CHECK(gs_reader_new(&t->reader, feed_read, t) == GS_OK);
  gs_reader_set_max_line(t->reader, SINK_CAP);
  return t;
}

static int same_name(const gs_record *a, const gs_record *b) {
  return a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0;
}

/* b is a read back from what the writer made of a. */
static int same_record(const gs_record *a, const gs_record *b) {
  uint64_t ts = a->has_timestamp ? a->timestamp : 0;
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case GS_REC_SECTION:
    return a->id == b->id && same_name(a, b) && b->has_timestamp && b->timestamp == ts;
  case GS_REC_TYPE:
    return a->id == b->id && same_name(a, b);
  case GS_REC_OBJECT:
    return a->id == b->id && a->type == b->type && a->size == b->size &&
           a->nrefs == b->nrefs &&
           (a->nrefs == 0 || memcmp(a->refs, b->refs, a->nrefs * sizeof *a->refs) == 0);
  case GS_REC_ROOT:
    return a->id == b->id && a->root_kind == b->root_kind &&
           a->root_flags == b->root_flags && a->has_container == b->has_container &&
           (!a->has_container || a->type == b->type);
  case GS_REC_END:
    return same_name(a, b) && b->has_timestamp && b->timestamp == ts;
  }
  return 0;
}

static void write_one(round_trip *t, sink *to, const gs_record *rec) {
  t->current = to;
  to->len = 0;
  CHECK(gs_writer_record(t->writer, rec) == GS_OK);
  CHECK(gs_writer_flush(t->writer) == GS_OK);
  CHECK(to->len > 0 && to->data[to->len - 1] == '\n');
}

static void put_text(sink *s, const char *text, size_t len) {
  CHECK(len <= SINK_CAP - s->len);
  memcpy(s->data + s->len, text, len);
  s->len += len;
}

static void put_hex(sink *s, uint64_t v) {
  char field[24];
  int n = snprintf(field, sizeof field, " %llx", (unsigned long long)v);
  put_text(s, field, (size_t)n);
}

/* The line the writer must produce for rec, built independently from its
 * documented form: lowercase hex without leading zeros, one space between
 * fields, LF, a missing timestamp as 0, a container only for static roots. */
static void expected_line(sink *s, const gs_record *rec) {
  uint64_t ts = rec->has_timestamp ? rec->timestamp : 0;
  char letter = (char)rec->kind;
  size_t i;
  s->len = 0;
  put_text(s, &letter, 1);
  switch (rec->kind) {
  case GS_REC_SECTION:
    put_hex(s, rec->id);
    put_text(s, " ", 1);
    put_text(s, rec->name, rec->name_len);
    put_hex(s, ts);
    break;
  case GS_REC_TYPE:
    put_hex(s, rec->id);
    put_text(s, " ", 1);
    put_text(s, rec->name, rec->name_len);
    break;
  case GS_REC_OBJECT:
    put_hex(s, rec->id);
    put_hex(s, rec->type);
    put_hex(s, rec->size);
    for (i = 0; i < rec->nrefs; i++) put_hex(s, rec->refs[i]);
    break;
  case GS_REC_ROOT:
    put_hex(s, rec->id);
    put_hex(s, rec->root_kind);
    put_hex(s, rec->root_flags);
    if (rec->root_kind == GS_ROOT_STATIC) put_hex(s, rec->type);
    break;
  case GS_REC_END:
    put_text(s, " ", 1);
    put_text(s, rec->name, rec->name_len);
    put_hex(s, ts);
    break;
  }
  put_text(s, "\n", 1);
}

/* Writes rec, checks the bytes, and reads them back as the same record. */
static void check_round_trip(round_trip *t, const gs_record *rec) {
  gs_record again;
  write_one(t, &t->first, rec);
  expected_line(&t->expected, rec);
  CHECK(t->expected.len == t->first.len &&
        memcmp(t->expected.data, t->first.data, t->first.len) == 0);
  t->unread = t->first.len;
  CHECK(gs_reader_next(t->reader, &again) == GS_OK);
  CHECK(t->unread == 0 && gs_reader_offset(t->reader) == t->fed);   /* one line */
  CHECK(same_record(rec, &again));
}

static void fuzz_writer(const uint8_t *data, size_t size) {
  round_trip *t = round_trip_get();
  gs_reader *r;
  gs_record rec;
  int rc;
  CHECK(gs_reader_new_buffer(&r, data, size) == GS_OK);
  gs_reader_set_max_line(r, FUZZ_MAX_LINE);
  gs_reader_set_max_refs(r, FUZZ_MAX_REFS);
  while ((rc = gs_reader_next(r, &rec)) != GS_EOF) {
    CHECK(rc == GS_OK || rc == GS_EFORMAT);
    if (rc == GS_OK) {
      check_round_trip(t, &rec);
    } else {
      const gs_diag *d = gs_reader_diag(r);
      CHECK((int)d->code > 0 && gs_diag_severity(d->code) == GS_SEV_ERROR && d->line > 0);
    }
  }
  CHECK(gs_reader_offset(r) == size);
  gs_reader_free(r);
}

/* ---- fast path ---------------------------------------------------------- */

static void fuzz_fast_path(const uint8_t *data, size_t size) {
  gs_reader *fast, *slow;
  CHECK(gs_reader_new_buffer(&fast, data, size) == GS_OK);
  CHECK(gs_reader_new_buffer(&slow, data, size) == GS_OK);
  gs_reader_set_max_line(fast, FUZZ_MAX_LINE);
  gs_reader_set_max_refs(fast, FUZZ_MAX_REFS);
  gs_reader_set_max_line(slow, FUZZ_MAX_LINE);
  gs_reader_set_max_refs(slow, FUZZ_MAX_REFS);
  gs_reader_set_fast_path(slow, 0);
  for (;;) {
    gs_record a, b;
    int ea = gs_reader_next(fast, &a), eb = gs_reader_next(slow, &b);
    CHECK(ea == eb);
    if (ea == GS_EOF) break;
    if (ea == GS_EFORMAT) {
      const gs_diag *da = gs_reader_diag(fast), *db = gs_reader_diag(slow);
      CHECK(da->code == db->code && da->line == db->line);
      CHECK(strcmp(da->message, db->message) == 0);
      continue;
    }
    CHECK(ea == GS_OK);
    /* Only object lines take the fast path; the rest share one parser. */
    CHECK(a.line == b.line && a.kind == b.kind);
    if (a.kind == GS_REC_OBJECT) CHECK(same_record(&a, &b));
  }
  gs_reader_free(fast);
  gs_reader_free(slow);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t errors = fuzz_validate(data, size);
  int loaded_all = fuzz_graph(data, size);
  /* A file the validator accepts must load as graphs to its end. */
  if (errors == 0) CHECK(loaded_all);
  fuzz_writer(data, size);
  fuzz_fast_path(data, size);
  return 0;
}
