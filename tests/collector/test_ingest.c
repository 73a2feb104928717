/* test_ingest.c - the collector's ingest: a stream built with protobuf-c
 * from a fixture goes back to records, through the validator, into a
 * .gclog.zst byte-identical to the canonical text; broken streams fail with
 * their own code and leave no file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "gcsnap.pb-c.h"
#include "gs_error.h"
#include "gs_wire.h"
#include "gsd_child.h"
#include "gsd_ingest.h"
#include "gst_stream.h"
#include "gst_util.h"

typedef struct fixture {
  char *dir;
  char tmp[4200], final[4200];
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = gst_tempdir("ingest");
  snprintf(fx->tmp, sizeof fx->tmp, "%s/1.gclog.zst.tmp", fx->dir);
  snprintf(fx->final, sizeof fx->final, "%s/1.gclog.zst", fx->dir);
  *state = fx;
  return fx->dir ? 0 : -1;
}

static int teardown(void **state) {
  fixture *fx = *state;
  gst_rmtree(fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

/* Feeds every frame after SnapshotBegin; returns the result of the first
 * failing message (or of the last one), with *f filled. */
static int feed(gsd_ingest *ig, const gst_frames *frames, gsd_fault *f) {
  size_t i;
  int rc = GS_OK;
  for (i = 1; i < frames->n && rc == GS_OK; i++) {
    Gcsnap__Envelope *env = gst_frames_decode(frames, i);
    assert_non_null(env);
    rc = gsd_ingest_message(ig, env, f);
    gcsnap__envelope__free_unpacked(env, NULL);
  }
  return rc;
}

static void encode(const char *path, const gst_opts *o, gst_frames *frames, gst_totals *t) {
  memset(frames, 0, sizeof *frames);
  assert_int_equal(gst_encode(path, o, gst_frames_add, frames, t), 0);
  assert_true(frames->n >= 2);
}

/* Stores path through the ingest and checks the file against want. */
static void round_trip(fixture *fx, const char *path, const gst_opts *o, const char *want,
                       size_t want_len) {
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300], *got;
  size_t got_len;
  encode(path, o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  assert_int_equal(feed(ig, &frames, &f), GS_OK);
  assert_true(gsd_ingest_ended(ig));
  assert_int_equal(gsd_ingest_stats(ig)->crc32, t.crc32);
  assert_int_equal(gsd_ingest_stats(ig)->text_bytes, t.text_bytes);
  assert_int_equal(gsd_ingest_stats(ig)->errors, 0);
  assert_int_equal(gsd_ingest_commit(ig, fx->final, err, sizeof err), GS_OK);
  gsd_ingest_free(ig);
  assert_false(gst_exists(fx->tmp));
  got = gst_read_file(fx->final, &got_len);
  assert_non_null(got);
  assert_int_equal(got_len, want_len);
  assert_memory_equal(got, want, want_len);
  free(got);
  gst_frames_free(&frames);
}

static void test_canonical_identical(void **state) {
  fixture *fx = *state;
  gst_opts o = {0};
  size_t len;
  char *want = gst_read_file(GST_FIXTURE_DIR "/canonical/generated.gclog", &len);
  assert_non_null(want);
  o.snapshot_id = 7;
  round_trip(fx, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, want, len);
  free(want);
}

/* Batches of 3 records and 2 references: objects continue over batches. */
static void test_continues_joined(void **state) {
  fixture *fx = *state;
  gst_opts o = {0};
  size_t len;
  char *want = gst_read_file(GST_FIXTURE_DIR "/canonical/generated.gclog", &len);
  gst_frames frames;
  gst_totals t;
  size_t i, continued = 0;
  o.batch_records = 3;
  o.batch_refs = 2;
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  for (i = 0; i < frames.n; i++) {
    Gcsnap__Envelope *env = gst_frames_decode(&frames, i);
    if (env->body_case == GCSNAP__ENVELOPE__BODY_OBJECTS && env->objects->continues) continued++;
    gcsnap__envelope__free_unpacked(env, NULL);
  }
  gst_frames_free(&frames);
  assert_true(continued > 0);
  round_trip(fx, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, want, len);
  free(want);
}

/* The real heap: the stored text has the CRC the stream announced. */
static void test_wpfapp(void **state) {
  fixture *fx = *state;
  const char *path = GST_SHARED_DIR "/fixtures/wpfapp.gclog";
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300], *got;
  size_t len;
  gst_opts o = {0};
  encode(path, &o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  assert_int_equal(feed(ig, &frames, &f), GS_OK);
  assert_int_equal(gsd_ingest_commit(ig, fx->final, err, sizeof err), GS_OK);
  gsd_ingest_free(ig);
  got = gst_read_file(fx->final, &len);
  assert_non_null(got);
  assert_int_equal(len, t.text_bytes);
  free(got);
  gst_frames_free(&frames);
}

/* A broken stream: the failing message, its code, and no file left. */
static void expect_fault(fixture *fx, const char *path, const gst_opts *o, unsigned code,
                         int fatal, const char *words) {
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300];
  encode(path, o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  assert_int_equal(feed(ig, &frames, &f), GS_EFORMAT);
  assert_int_equal(f.code, code);
  assert_int_equal(f.fatal, fatal);
  if (!strstr(f.reason, words)) fail_msg("reason '%s' lacks '%s'", f.reason, words);
  assert_true(gst_exists(fx->tmp));
  gsd_ingest_free(ig);
  assert_false(gst_exists(fx->tmp));
  assert_false(gst_exists(fx->final));
  gst_frames_free(&frames);
}

static void test_seq_gap(void **state) {
  gst_opts o = {0};
  o.gap_at = 3;
  expect_fault(*state, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, GS_WIRE_E_SEQUENCE, 1,
               "a gap");
}

static void test_crc_mismatch(void **state) {
  gst_opts o = {0};
  o.crc_xor = 1;
  expect_fault(*state, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, GS_WIRE_E_CRC, 1,
               "CRC-32 mismatch");
}

static void test_count_mismatch(void **state) {
  gst_opts o = {0};
  o.objects_delta = 1;
  expect_fault(*state, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, GS_WIRE_E_COUNTS, 1,
               "objects");
}

static void test_invalid_content(void **state) {
  gst_opts o = {0};
  expect_fault(*state, GST_FIXTURE_DIR "/diag/duplicate-object.gclog", &o, GS_WIRE_E_INVALID, 0,
               "duplicate-object");
}

/* Names the format cannot carry back: the reader drops blanks around a
 * name and takes an empty one for a missing field. */
static void test_names_that_do_not_read_back(void **state) {
  static const char *const bad[] = {"", "  ", "\t", " app", "app ", "app\t"};
  size_t i;
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    gst_opts o = {0};
    o.section_name = bad[i];
    expect_fault(*state, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, GS_WIRE_E_INVALID, 0,
                 i < 3 ? "AppDomain name is missing" : "AppDomain name starts or ends with a blank");
    if (i == 0) continue;   /* "" is a type name the stream cannot set apart from none */
    memset(&o, 0, sizeof o);
    o.type_name = bad[i];
    expect_fault(*state, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, GS_WIRE_E_INVALID, 0,
                 i < 3 ? "type name is missing" : "type name starts or ends with a blank");
  }
}

/* Blanks inside a name, and a last word that looks like a timestamp, read
 * back the same (the section's timestamp is always written): accepted. */
static void test_names_that_read_back(void **state) {
  fixture *fx = *state;
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300];
  gst_opts o = {0};
  o.section_name = "my  app 1f4";
  o.type_name = "A\tB  C";
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  assert_int_equal(feed(ig, &frames, &f), GS_OK);
  assert_int_equal(gsd_ingest_stats(ig)->errors, 0);
  gsd_ingest_free(ig);
  gst_frames_free(&frames);
}

/* A repeated message is a repeat, not a gap. */
static void test_seq_repeat(void **state) {
  fixture *fx = *state;
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300];
  Gcsnap__Envelope *env;
  gst_opts o = {0};
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  env = gst_frames_decode(&frames, 1);
  assert_int_equal(gsd_ingest_message(ig, env, &f), GS_OK);
  assert_int_equal(gsd_ingest_message(ig, env, &f), GS_EFORMAT);
  assert_int_equal(f.code, GS_WIRE_E_SEQUENCE);
  assert_non_null(strstr(f.reason, "a repeat"));
  gcsnap__envelope__free_unpacked(env, NULL);
  gsd_ingest_free(ig);
  assert_false(gst_exists(fx->tmp));
  gst_frames_free(&frames);
}

/* Only checked: nothing is written. */
static void test_check_only(void **state) {
  fixture *fx = *state;
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300];
  gst_opts o = {0};
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, NULL, err, sizeof err), GS_OK);
  assert_int_equal(feed(ig, &frames, &f), GS_OK);
  assert_true(gsd_ingest_ended(ig));
  assert_int_equal(gsd_ingest_stats(ig)->objects, t.objects);
  gsd_ingest_free(ig);
  assert_false(gst_exists(fx->tmp));
  gst_frames_free(&frames);
}

/* Feeds the fixture with limits; GS_OK or the fault. The temporary file
 * is gone once the ingest is freed, whatever happened. */
static int feed_limited(fixture *fx, const gsd_ingest_limits *lim, gsd_fault *f,
                        uint64_t *references) {
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  char err[300];
  int rc;
  gst_opts o = {0};
  o.batch_records = 3;   /* the limit is met inside a batch, not only at its end */
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  gsd_ingest_set_limits(ig, lim);
  rc = feed(ig, &frames, f);
  if (references) *references = gsd_ingest_stats(ig)->references;
  gsd_ingest_free(ig);
  assert_false(gst_exists(fx->tmp));
  gst_frames_free(&frames);
  return rc;
}

/* --max-objects and --max-references: exactly the limit passes, one less
 * fails the stream (fatal, code 7) and names the option. */
static void test_snapshot_limits(void **state) {
  fixture *fx = *state;
  gsd_ingest_limits lim = {0, 0, 0, 0, 0, 0};
  gsd_fault f;
  uint64_t objects, refs;
  gst_frames frames;
  gst_totals t;
  gst_opts o = {0};
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  gst_frames_free(&frames);
  objects = t.objects;
  assert_int_equal(feed_limited(fx, &lim, &f, &refs), GS_OK);
  assert_true(objects > 1 && refs > 1);

  lim.max_objects = objects;
  lim.max_references = refs;
  assert_int_equal(feed_limited(fx, &lim, &f, NULL), GS_OK);

  lim.max_objects = objects - 1;
  assert_int_equal(feed_limited(fx, &lim, &f, NULL), GS_EFORMAT);
  assert_int_equal(f.code, GS_WIRE_E_INVALID);
  assert_true(f.fatal);
  if (!strstr(f.reason, "(--max-objects)")) fail_msg("reason: %s", f.reason);

  lim.max_objects = objects;
  lim.max_references = refs - 1;
  assert_int_equal(feed_limited(fx, &lim, &f, NULL), GS_EFORMAT);
  assert_int_equal(f.code, GS_WIRE_E_INVALID);
  assert_true(f.fatal);
  if (!strstr(f.reason, "(--max-references)")) fail_msg("reason: %s", f.reason);
}

/* Free space below --min-free-bytes: the file is removed as soon as the
 * check fails, the stream is still read to its end, and then fails with
 * code 8 (not fatal: agents offer the snapshot again later). */
static void test_disk_floor(void **state) {
  fixture *fx = *state;
  gsd_ingest_limits lim = {0, 0, 0, UINT64_MAX, 0, 0};
  gst_frames frames;
  gst_totals t;
  gsd_ingest *ig;
  gsd_fault f;
  char err[300];
  gst_opts o = {0};
  encode(GST_FIXTURE_DIR "/canonical/generated.gclog", &o, &frames, &t);
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  gsd_ingest_set_limits(ig, &lim);
  assert_null(gsd_ingest_write_error(ig));
  assert_int_equal(feed(ig, &frames, &f), GS_EFORMAT);
  assert_true(gsd_ingest_ended(ig));
  assert_int_equal(f.code, GS_WIRE_E_STORAGE);
  assert_false(f.fatal);
  if (!strstr(f.reason, "disk full") || !strstr(f.reason, "--min-free-bytes"))
    fail_msg("reason: %s", f.reason);
  assert_non_null(gsd_ingest_write_error(ig));
  assert_false(gst_exists(fx->tmp));            /* before the ingest is freed */
  assert_int_equal(gsd_ingest_commit(ig, fx->final, err, sizeof err), GS_EIO);
  assert_false(gst_exists(fx->final));
  gsd_ingest_free(ig);
  gst_frames_free(&frames);
}

/* The summary stored with a snapshot is gcsnap summary's. */
/* An analysis that asks for more than a child may have (512 MiB of a
 * 256 MiB bound): refused in the child, while the collector goes on. */
static int greedy_fn(void *ctx, json_t **answer, char *why, size_t cap) {
  char *p = malloc((size_t)512 << 20);
  (void)ctx;
  *answer = NULL;
  if (!p) {
    snprintf(why, cap, "out of memory");
    return GSD_CHILD_FAILED;
  }
  free(p);
  *answer = json_pack("{s:s}", "got", "it");
  return *answer ? GSD_CHILD_OK : GSD_CHILD_FAILED;
}

static void test_child_bound(void **state) {
  char *out = NULL;
  size_t len = 0;
  int status = 0;
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip();   /* sanitizer builds run analyses on the calling thread */
#endif
  gsd_child_bound(GSD_CHILD_CPU_SECONDS, (size_t)256 << 20);
  assert_int_equal(gsd_child_run(greedy_fn, NULL, 4096, &out, &len, &status), GS_OK);
  gsd_child_bound(GSD_CHILD_CPU_SECONDS, GSD_CHILD_MAX_BYTES);
  assert_int_equal(status, GSD_CHILD_FAILED);
  assert_string_equal(out, "out of memory");
  free(out);
}

static void test_summary(void **state) {
  fixture *fx = *state;
  gst_opts o = {0};
  size_t len;
  char *want = gst_read_file(GST_FIXTURE_DIR "/canonical/generated.gclog", &len), *json, err[300];
  gsd_snapshot_end e;
  memset(&e, 0, sizeof e);
  round_trip(fx, GST_FIXTURE_DIR "/canonical/generated.gclog", &o, want, len);
  assert_int_equal(gsd_ingest_summarize(fx->final, NULL, "x.gclog.zst", &json, &e, err, sizeof err),
                   GS_OK);
  assert_non_null(strstr(json, "\"file\":\"x.gclog.zst\""));
  assert_non_null(strstr(json, "\"by_type\""));
  assert_int_equal(e.sections, 2);
  assert_true(e.objects > 0);
  free(json);
  free(want);
}

/* An array above the 3,947,576 references the collector once stopped at
 * (its line then had to fit the reader's 64 MiB): stored byte for byte. */
static void test_wide_object(void **state) {
  fixture *fx = *state;
  static const char head[] = "a 2 wide.exe 1\nt 1 T\nt 2 T[]\no 10 1 8\no 20 2 8";
  static const char tail[] = "\nr 20 1 0\nc wide.exe 2\n";
  size_t n = 4000000, len = strlen(head) + 3 * n + strlen(tail), i;
  char *want = malloc(len), *p = want, path[4300];
  FILE *f;
  gst_opts o = {0};
  assert_non_null(want);
  p += sprintf(p, "%s", head);
  for (i = 0; i < n; i++, p += 3) memcpy(p, " 10", 3);
  memcpy(p, tail, strlen(tail));
  snprintf(path, sizeof path, "%s/wide.gclog", fx->dir);
  assert_non_null(f = fopen(path, "wb"));
  assert_int_equal(fwrite(want, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
  round_trip(fx, path, &o, want, len);
  free(want);
}

/* One ObjectBatch of object 10: refs references to itself, continued or not. */
static int feed_part(gsd_ingest *ig, uint64_t seq, int64_t *zeros, uint32_t refs, int continues,
                     gsd_fault *f) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__ObjectBatch b = GCSNAP__OBJECT_BATCH__INIT;
  int64_t id = 0x10;
  uint64_t type = 1, size = 8;
  b.seq = seq;
  b.n_id_deltas = b.n_type_ids = b.n_sizes = b.n_ref_counts = 1;
  b.id_deltas = &id;
  b.type_ids = &type;
  b.sizes = &size;
  b.ref_counts = &refs;
  b.n_ref_deltas = refs;
  b.ref_deltas = zeros;
  b.continues = continues;
  env.body_case = GCSNAP__ENVELOPE__BODY_OBJECTS;
  env.objects = &b;
  return gsd_ingest_message(ig, &env, f);
}

/* An object of parts * part references, then one more when over is set,
 * within lim when not NULL. */
static int feed_object(fixture *fx, const gsd_ingest_limits *lim, size_t parts, uint32_t part,
                       int over, gsd_fault *f, uint64_t *refs) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__SectionBegin sb = GCSNAP__SECTION_BEGIN__INIT;
  int64_t *zeros = calloc(part, sizeof *zeros);
  gsd_ingest *ig;
  char err[300];
  size_t i;
  int rc;
  assert_non_null(zeros);
  sb.seq = 1;
  sb.version = 2;
  sb.name = "wide.exe";
  env.body_case = GCSNAP__ENVELOPE__BODY_SECTION_BEGIN;
  env.section_begin = &sb;
  assert_int_equal(gsd_ingest_new(&ig, fx->tmp, err, sizeof err), GS_OK);
  if (lim) gsd_ingest_set_limits(ig, lim);
  rc = gsd_ingest_message(ig, &env, f);
  for (i = 0; i < parts && rc == GS_OK; i++)
    rc = feed_part(ig, 2 + i, zeros, part, over || i + 1 < parts, f);
  if (over && rc == GS_OK) rc = feed_part(ig, 2 + parts, zeros, 1, 0, f);
  *refs = gsd_ingest_stats(ig)->references;
  gsd_ingest_free(ig);
  free(zeros);
  return rc;
}

/* The reader's limit, 2^25 references, by default: taken; one more ends
 * the session. A lower limit (--max-object-references) holds the same way. */
static void test_object_refs_limit(void **state) {
  gsd_ingest_limits lim = {0, 0, 0, 0, 0, 3u << 20};
  fixture *fx = *state;
  gsd_fault f;
  uint64_t refs;
  assert_int_equal(feed_object(fx, NULL, 32, 1u << 20, 0, &f, &refs), GS_OK);
  assert_int_equal(refs, GS_READER_DEFAULT_MAX_REFS);
  assert_int_equal(feed_object(fx, NULL, 32, 1u << 20, 1, &f, &refs), GS_EFORMAT);
  assert_int_equal(f.code, GS_WIRE_E_INVALID);
  assert_true(f.fatal);
  if (!strstr(f.reason, "object 10 has more than 33554432 references, the collector's limit"))
    fail_msg("reason: %s", f.reason);
  assert_false(gst_exists(fx->tmp));
  assert_int_equal(feed_object(fx, &lim, 3, 1u << 20, 0, &f, &refs), GS_OK);
  assert_int_equal(refs, 3u << 20);
  assert_int_equal(feed_object(fx, &lim, 3, 1u << 20, 1, &f, &refs), GS_EFORMAT);
  if (!strstr(f.reason, "object 10 has more than 3145728 references"))
    fail_msg("reason: %s", f.reason);
}

/* The references of the object arriving count against the session's
 * checking budget (--max-validator-memory): 4M of them (32 MB) fit in
 * 64 MiB, not in 16 MiB, and the session then ends. */
static void test_object_refs_memory(void **state) {
  fixture *fx = *state;
  gsd_ingest_limits lim = {0, 0, 0, 0, (uint64_t)64 << 20, 0};
  gsd_fault f;
  uint64_t refs;
  assert_int_equal(feed_object(fx, &lim, 4, 1u << 20, 0, &f, &refs), GS_OK);
  assert_int_equal(refs, 4u << 20);
  lim.max_validator_bytes = (uint64_t)16 << 20;
  assert_int_equal(feed_object(fx, &lim, 4, 1u << 20, 0, &f, &refs), GS_EFORMAT);
  assert_int_equal(f.code, GS_WIRE_E_INVALID);
  assert_true(f.fatal);
  if (!strstr(f.reason, "(the references of object 10), the collector's limit (--max-validator-memory)"))
    fail_msg("reason: %s", f.reason);
  assert_false(gst_exists(fx->tmp));
}

/* "wpfapp" runs only the test on the shared fixture, and exits 77
 * (skipped) when it is absent. */
int main(int argc, char **argv) {
  const struct CMUnitTest wpfapp[] = {
    cmocka_unit_test_setup_teardown(test_wpfapp, setup, teardown),
  };
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_canonical_identical, setup, teardown),
    cmocka_unit_test_setup_teardown(test_continues_joined, setup, teardown),
    cmocka_unit_test_setup_teardown(test_wide_object, setup, teardown),
    cmocka_unit_test_setup_teardown(test_object_refs_limit, setup, teardown),
    cmocka_unit_test_setup_teardown(test_object_refs_memory, setup, teardown),
    cmocka_unit_test_setup_teardown(test_seq_gap, setup, teardown),
    cmocka_unit_test_setup_teardown(test_seq_repeat, setup, teardown),
    cmocka_unit_test_setup_teardown(test_crc_mismatch, setup, teardown),
    cmocka_unit_test_setup_teardown(test_count_mismatch, setup, teardown),
    cmocka_unit_test_setup_teardown(test_invalid_content, setup, teardown),
    cmocka_unit_test_setup_teardown(test_names_that_do_not_read_back, setup, teardown),
    cmocka_unit_test_setup_teardown(test_names_that_read_back, setup, teardown),
    cmocka_unit_test_setup_teardown(test_check_only, setup, teardown),
    cmocka_unit_test_setup_teardown(test_snapshot_limits, setup, teardown),
    cmocka_unit_test_setup_teardown(test_disk_floor, setup, teardown),
    cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
    cmocka_unit_test(test_child_bound),
  };
  if (argc > 1 && strcmp(argv[1], "wpfapp") == 0) {
    if (!gst_exists(GST_SHARED_DIR "/fixtures/wpfapp.gclog")) {
      printf("skipped: %s/fixtures/wpfapp.gclog is absent\n", GST_SHARED_DIR);
      return 77;
    }
    return cmocka_run_group_tests(wpfapp, NULL, NULL);
  }
  return cmocka_run_group_tests(tests, NULL, NULL);
}
