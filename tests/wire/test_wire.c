/* test_wire.c - every message the agent writes decodes with protobuf-c to
 * the values it was given, and the agent's control decoder reads what
 * protobuf-c packs. */
#include "gs_unit.h"

#include <stdlib.h>
#include "gcsnap.pb-c.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"
#include "wire_decode.h"

/* Frames the encoder wrote, each kept whole. */
typedef struct frames {
  uint8_t *data[64];
  size_t len[64];
  size_t n;
} frames;

static int frames_add(void *ctx, const void *data, size_t len) {
  frames *f = ctx;
  assert_true(f->n < 64);
  f->data[f->n] = malloc(len);
  assert_non_null(f->data[f->n]);
  memcpy(f->data[f->n], data, len);
  f->len[f->n++] = len;
  return GS_OK;
}

static void frames_free(frames *f) {
  size_t i;
  for (i = 0; i < f->n; i++) free(f->data[i]);
  f->n = 0;
}

/* Unpacks frame i (its prefix checked and dropped) with protobuf-c. */
static Gcsnap__Envelope *unpack(const uint8_t *frame, size_t len) {
  size_t plen, flen;
  Gcsnap__Envelope *env;
  assert_int_equal(gs_wire_frame_peek(frame, len, GS_WIRE_MAX_FRAME, &plen, &flen), GS_OK);
  assert_int_equal(plen + flen, len);
  env = gcsnap__envelope__unpack(NULL, flen, frame + plen);
  assert_non_null(env);
  return env;
}

static void test_hello(void **state) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len;
  gs_wire_hello h;
  Gcsnap__Envelope *env;
  (void)state;
  memset(&h, 0, sizeof h);
  h.protocol_version = GS_WIRE_PROTOCOL_VERSION;
  h.agent_version = "0.1.0";
  h.device_id = "dev-\xc3\xa9 7";         /* UTF-8 passes through */
  h.app_name = "Contoso Inventory";
  h.architecture = "armv5te";
  h.pointer_size = 4;
  h.clock_ms = 0x123456789ull;
  assert_int_equal(gs_wire_write_hello(buf, sizeof buf, &h, &frame, &len), GS_OK);
  env = unpack(frame, len);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_HELLO);
  assert_int_equal(env->hello->protocol_version, 1);
  assert_string_equal(env->hello->agent_version, "0.1.0");
  assert_string_equal(env->hello->device_id, "dev-\xc3\xa9 7");
  assert_string_equal(env->hello->app_name, "Contoso Inventory");
  assert_string_equal(env->hello->architecture, "armv5te");
  assert_int_equal(env->hello->pointer_size, 4);
  assert_true(env->hello->clock_ms == 0x123456789ull);
  gcsnap__envelope__free_unpacked(env, NULL);
  /* Too small a buffer is an error, not a cut message. */
  assert_int_equal(gs_wire_write_hello(buf, 20, &h, &frame, &len), GS_ELIMIT);
}

static void test_ping_and_error(void **state) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len;
  Gcsnap__Envelope *env;
  (void)state;
  assert_int_equal(gs_wire_write_ping(buf, sizeof buf, UINT64_MAX, 1, &frame, &len), GS_OK);
  env = unpack(frame, len);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_PING);
  assert_true(env->ping->nonce == UINT64_MAX);
  assert_true(env->ping->reply);
  gcsnap__envelope__free_unpacked(env, NULL);
  assert_int_equal(gs_wire_write_ping(buf, sizeof buf, 0, 0, &frame, &len), GS_OK);
  env = unpack(frame, len);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_PING);
  assert_true(env->ping->nonce == 0 && !env->ping->reply);
  gcsnap__envelope__free_unpacked(env, NULL);
  assert_int_equal(gs_wire_write_error(buf, sizeof buf, GS_WIRE_E_CAPTURE, "source failed",
                                       42, &frame, &len), GS_OK);
  env = unpack(frame, len);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_ERROR);
  assert_int_equal(env->error->code, GS_WIRE_E_CAPTURE);
  assert_string_equal(env->error->message, "source failed");
  assert_int_equal(env->error->request_id, 42);
  gcsnap__envelope__free_unpacked(env, NULL);
}

/* A small snapshot through the encoder; every frame checked field by field. */
static void test_snapshot_messages(void **state) {
  static const uint64_t refs[] = {0x1000, 0x2000, 0xfff8, 0x10000000000ull};
  gs_wire_encoder *e;
  gs_wire_snapshot snap;
  frames f;
  Gcsnap__Envelope *env;
  const gs_wire_counts *c;
  (void)state;
  memset(&f, 0, sizeof f);
  memset(&snap, 0, sizeof snap);
  snap.request_id = 7;
  snap.snapshot_id = 0xabcdef;
  snap.stable_ids = 1;
  snap.trigger = "request";
  snap.clock_ms = 1000;
  assert_int_equal(gs_wire_encoder_new(&e, frames_add, &f), GS_OK);
  assert_int_equal(gs_wire_encoder_begin(e, &snap), GS_OK);
  assert_int_equal(gs_wire_encoder_section(e, 2, "My App [stable-ids]", 19, 0x3e8), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 5, "System.String", 13), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 0x100000000ull, "A+<>c", 5), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x1000, 5, 0x20, NULL, 0), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x2000, 6, 0x18, refs, 4), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x1008, 5, 0, refs, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_root(e, 0x2000, 3, 0, 0), GS_OK);
  assert_int_equal(gs_wire_encoder_root(e, 0x1000, 4, 1, 6), GS_OK);
  assert_int_equal(gs_wire_encoder_root(e, 0x1008, 1, 7, 0), GS_OK);
  assert_int_equal(gs_wire_encoder_generation(e, 0, 0x1000, 0x100, 0x1000), GS_OK);
  assert_int_equal(gs_wire_encoder_generation(e, 3, 0x8000, 0, 0x8000), GS_OK);
  assert_int_equal(gs_wire_encoder_section_end(e, "My App [stable-ids]", 19, 0x3e9), GS_OK);
  assert_int_equal(gs_wire_encoder_end(e), GS_OK);
  assert_int_equal(f.n, 8);

  env = unpack(f.data[0], f.len[0]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN);
  assert_int_equal(env->snapshot_begin->request_id, 7);
  assert_int_equal(env->snapshot_begin->snapshot_id, 0xabcdef);
  assert_true(env->snapshot_begin->stable_ids);
  assert_string_equal(env->snapshot_begin->trigger, "request");
  assert_int_equal(env->snapshot_begin->clock_ms, 1000);
  gcsnap__envelope__free_unpacked(env, NULL);

  env = unpack(f.data[1], f.len[1]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_SECTION_BEGIN);
  assert_int_equal(env->section_begin->seq, 1);
  assert_int_equal(env->section_begin->version, 2);
  assert_string_equal(env->section_begin->name, "My App [stable-ids]");
  assert_int_equal(env->section_begin->timestamp, 0x3e8);
  gcsnap__envelope__free_unpacked(env, NULL);

  env = unpack(f.data[2], f.len[2]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_TYPES);
  assert_int_equal(env->types->seq, 2);
  assert_int_equal(env->types->n_ids, 2);
  assert_int_equal(env->types->n_names, 2);
  assert_int_equal(env->types->ids[0], 5);
  assert_true(env->types->ids[1] == 0x100000000ull);
  assert_string_equal(env->types->names[0], "System.String");
  assert_string_equal(env->types->names[1], "A+<>c");
  gcsnap__envelope__free_unpacked(env, NULL);

  env = unpack(f.data[3], f.len[3]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_OBJECTS);
  {
    Gcsnap__ObjectBatch *b = env->objects;
    assert_int_equal(b->seq, 3);
    assert_int_equal(b->n_id_deltas, 3);
    assert_int_equal(b->id_deltas[0], 0x1000);
    assert_int_equal(b->id_deltas[1], 0x1000);
    assert_int_equal(b->id_deltas[2], -0xff8);         /* IDs need not ascend */
    assert_int_equal(b->n_type_ids, 3);
    assert_int_equal(b->type_ids[1], 6);
    assert_int_equal(b->n_sizes, 3);
    assert_int_equal(b->sizes[0], 0x20);
    assert_int_equal(b->sizes[2], 0);
    assert_int_equal(b->n_ref_counts, 3);
    assert_int_equal(b->ref_counts[0], 0);
    assert_int_equal(b->ref_counts[1], 4);
    assert_int_equal(b->ref_counts[2], 1);
    assert_int_equal(b->n_ref_deltas, 5);
    assert_int_equal(b->ref_deltas[0], -0x1000);
    assert_int_equal(b->ref_deltas[1], 0);
    assert_int_equal(b->ref_deltas[2], 0xdff8);
    assert_true(b->ref_deltas[3] == (int64_t)(0x10000000000ull - 0x2000));
    assert_int_equal(b->ref_deltas[4], -8);
    assert_false(b->continues);
  }
  gcsnap__envelope__free_unpacked(env, NULL);

  env = unpack(f.data[4], f.len[4]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_ROOTS);
  assert_int_equal(env->roots->seq, 4);
  assert_int_equal(env->roots->n_id_deltas, 3);
  assert_int_equal(env->roots->id_deltas[0], 0x2000);
  assert_int_equal(env->roots->id_deltas[1], -0x1000);
  assert_int_equal(env->roots->id_deltas[2], 8);
  assert_int_equal(env->roots->kinds[1], 4);
  assert_int_equal(env->roots->flags[1], 1);
  assert_int_equal(env->roots->flags[2], 7);
  assert_int_equal(env->roots->n_containers, 1);
  assert_int_equal(env->roots->containers[0], 6);
  gcsnap__envelope__free_unpacked(env, NULL);

  env = unpack(f.data[5], f.len[5]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_GENERATIONS);
  assert_int_equal(env->generations->seq, 5);
  assert_int_equal(env->generations->n_ranges, 2);
  assert_int_equal(env->generations->ranges[0]->generation, 0);
  assert_int_equal(env->generations->ranges[0]->start, 0x1000);
  assert_int_equal(env->generations->ranges[0]->used, 0x100);
  assert_int_equal(env->generations->ranges[0]->reserved, 0x1000);
  assert_int_equal(env->generations->ranges[1]->generation, 3);
  assert_int_equal(env->generations->ranges[1]->used, 0);
  gcsnap__envelope__free_unpacked(env, NULL);

  env = unpack(f.data[6], f.len[6]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_SECTION_END);
  assert_int_equal(env->section_end->seq, 6);
  assert_string_equal(env->section_end->name, "My App [stable-ids]");
  assert_int_equal(env->section_end->timestamp, 0x3e9);
  gcsnap__envelope__free_unpacked(env, NULL);

  c = gs_wire_encoder_counts(e);
  env = unpack(f.data[7], f.len[7]);
  assert_int_equal(env->body_case, GCSNAP__ENVELOPE__BODY_SNAPSHOT_END);
  assert_int_equal(env->snapshot_end->seq, 7);
  assert_int_equal(env->snapshot_end->sections, 1);
  assert_int_equal(env->snapshot_end->types, 2);
  assert_int_equal(env->snapshot_end->objects, 3);
  assert_int_equal(env->snapshot_end->references, 5);
  assert_int_equal(env->snapshot_end->roots, 3);
  assert_int_equal(env->snapshot_end->text_bytes, c->text_bytes);
  assert_int_equal(env->snapshot_end->crc32, c->crc32);
  gcsnap__envelope__free_unpacked(env, NULL);
  assert_int_equal(c->seq, 7);
  assert_int_equal(c->generations, 2);
  gs_wire_encoder_free(e);
  frames_free(&f);
}

/* The same snapshot through the decoder rebuilds its text exactly. */
static void test_snapshot_text(void **state) {
  static const uint64_t refs[] = {0x1000, 0x2000};
  static const char expect[] =
      "a 2 App 3e8\n"
      "t 5 System.String\n"
      "o 1000 5 20\n"
      "o 2000 5 18 1000 2000\n"
      "r 2000 4 1 5\n"
      "t 6 Late Type\n"
      "o 3000 6 0\n"
      "c App 3e9\n";
  gs_wire_encoder *e;
  gs_wire_snapshot snap;
  wd_state d;
  gsu_buf text;
  (void)state;
  memset(&text, 0, sizeof text);
  memset(&snap, 0, sizeof snap);
  snap.trigger = "once";
  assert_int_equal(wd_init(&d, gsu_buf_write, &text), 0);
  assert_int_equal(gs_wire_encoder_new(&e, wd_feed, &d), GS_OK);
  assert_int_equal(gs_wire_encoder_begin(e, &snap), GS_OK);
  assert_int_equal(gs_wire_encoder_section(e, 2, "App", 3, 0x3e8), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 5, "System.String", 13), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x1000, 5, 0x20, NULL, 0), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x2000, 5, 0x18, refs, 2), GS_OK);
  assert_int_equal(gs_wire_encoder_root(e, 0x2000, 4, 1, 5), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 6, "Late Type", 9), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x3000, 6, 0, NULL, 0), GS_OK);
  assert_int_equal(gs_wire_encoder_section_end(e, "App", 3, 0x3e9), GS_OK);
  assert_int_equal(gs_wire_encoder_end(e), GS_OK);
  if (wd_finish(&d)) fail_msg("%s", d.error);
  assert_string_equal(text.data, expect);
  assert_int_equal(d.text_bytes, strlen(expect));
  assert_string_equal(d.trigger, "once");
  gs_wire_encoder_free(e);
  wd_free(&d);
  gsu_buf_free(&text);
}

/* An object with more references than a batch holds goes out in parts. */
static void test_continued_object(void **state) {
  enum { N = 100000 };
  uint64_t *refs = malloc(N * sizeof *refs);
  gs_wire_encoder *e;
  gs_wire_snapshot snap;
  wd_state d;
  gsu_buf text;
  size_t i;
  (void)state;
  assert_non_null(refs);
  for (i = 0; i < N; i++) refs[i] = 0x200000000ull + ((i * 7919) % N) * 0x1000000ull;
  memset(&text, 0, sizeof text);
  memset(&snap, 0, sizeof snap);
  assert_int_equal(wd_init(&d, gsu_buf_write, &text), 0);
  assert_int_equal(gs_wire_encoder_new(&e, wd_feed, &d), GS_OK);
  assert_int_equal(gs_wire_encoder_begin(e, &snap), GS_OK);
  assert_int_equal(gs_wire_encoder_section(e, 2, "A", 1, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x100, 1, 8, refs, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x200000000ull, 1, 800024, refs, N), GS_OK);
  assert_int_equal(gs_wire_encoder_object(e, 0x300000000ull, 1, 8, refs, 2), GS_OK);
  assert_int_equal(gs_wire_encoder_section_end(e, "A", 1, 2), GS_OK);
  assert_int_equal(gs_wire_encoder_end(e), GS_OK);
  if (wd_finish(&d)) fail_msg("%s", d.error);
  assert_true(d.continued_parts >= 8);      /* about 500 KB of references */
  assert_int_equal(d.objects, 3);
  assert_int_equal(d.references, N + 3);
  assert_true(d.largest_frame <= GS_WIRE_BATCH_BYTES + 64);
  assert_int_equal(d.text_bytes, gs_wire_encoder_counts(e)->text_bytes);
  assert_int_equal(d.crc32, gs_wire_encoder_counts(e)->crc32);
  gs_wire_encoder_free(e);
  wd_free(&d);
  gsu_buf_free(&text);
  free(refs);
}

/* Misuse and limits: records outside a snapshot, names above the limit,
 * a failing sink, and a new snapshot after a failed one. */
static int failing_sink(void *ctx, const void *data, size_t len) {
  int *calls = ctx;
  (void)data;
  (void)len;
  return ++*calls > 2 ? GS_EIO : GS_OK;
}

static void test_encoder_errors(void **state) {
  gs_wire_encoder *e;
  gs_wire_snapshot snap;
  frames f;
  int calls = 0;
  char *big = malloc(GS_WIRE_MAX_NAME + 1);
  (void)state;
  assert_non_null(big);
  memset(big, 'x', GS_WIRE_MAX_NAME + 1);
  memset(&snap, 0, sizeof snap);
  memset(&f, 0, sizeof f);
  assert_int_equal(gs_wire_encoder_new(&e, frames_add, &f), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 1, "T", 1), GS_EINVAL);
  assert_int_equal(gs_wire_encoder_begin(e, &snap), GS_OK);
  assert_int_equal(gs_wire_encoder_section(e, 2, "A", 1, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 1, big, GS_WIRE_MAX_NAME), GS_OK);
  assert_int_equal(gs_wire_encoder_type(e, 2, big, GS_WIRE_MAX_NAME + 1), GS_ELIMIT);
  assert_non_null(strstr(gs_wire_encoder_error(e), "above the wire's limit"));
  /* After a failure, a new snapshot starts clean. */
  frames_free(&f);
  assert_int_equal(gs_wire_encoder_begin(e, &snap), GS_OK);
  assert_int_equal(gs_wire_encoder_section(e, 2, "B", 1, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_section_end(e, "B", 1, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_end(e), GS_OK);
  assert_int_equal(f.n, 4);
  assert_int_equal(gs_wire_encoder_counts(e)->text_bytes, strlen("a 2 B 1\nc B 1\n"));
  gs_wire_encoder_free(e);
  frames_free(&f);

  assert_int_equal(gs_wire_encoder_new(&e, failing_sink, &calls), GS_OK);
  assert_int_equal(gs_wire_encoder_begin(e, &snap), GS_OK);
  assert_int_equal(gs_wire_encoder_section(e, 2, "A", 1, 1), GS_OK);
  assert_int_equal(gs_wire_encoder_section_end(e, "A", 1, 1), GS_EIO);
  assert_int_equal(gs_wire_encoder_end(e), GS_EIO);
  assert_string_equal(gs_wire_encoder_error(e), "the connection failed");
  gs_wire_encoder_free(e);
  free(big);
}

/* ---- the control messages the agent reads, packed by protobuf-c ---- */

static size_t pack(const Gcsnap__Envelope *env, uint8_t *buf) {
  size_t n = gcsnap__envelope__get_packed_size(env);
  assert_true(n < 1024);
  return gcsnap__envelope__pack(env, buf);
}

static void test_control_decode(void **state) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Welcome welcome = GCSNAP__WELCOME__INIT;
  Gcsnap__CaptureRequest req = GCSNAP__CAPTURE_REQUEST__INIT;
  Gcsnap__CaptureOptions opts = GCSNAP__CAPTURE_OPTIONS__INIT;
  Gcsnap__Ack ack = GCSNAP__ACK__INIT;
  Gcsnap__Error error = GCSNAP__ERROR__INIT;
  Gcsnap__Ping ping = GCSNAP__PING__INIT;
  gs_wire_control m;
  uint8_t buf[1024];
  char err[160];
  size_t n;
  (void)state;

  welcome.protocol_version = 1;
  welcome.collector_version = "gcsnapd 0.1.0";
  welcome.max_frame = GS_WIRE_MAX_FRAME;
  env.body_case = GCSNAP__ENVELOPE__BODY_WELCOME;
  env.welcome = &welcome;
  n = pack(&env, buf);
  assert_int_equal(gs_wire_decode_control(buf, n, &m, err, sizeof err), GS_OK);
  assert_int_equal(m.body, GS_WIRE_WELCOME);
  assert_int_equal(m.welcome.protocol_version, 1);
  assert_int_equal(m.welcome.max_frame, GS_WIRE_MAX_FRAME);
  assert_int_equal(m.welcome.collector_version_len, 13);
  assert_memory_equal(m.welcome.collector_version, "gcsnapd 0.1.0", 13);

  req.request_id = 0x1122334455ull;
  opts.stable_ids = 1;
  req.options = &opts;
  env.body_case = GCSNAP__ENVELOPE__BODY_CAPTURE_REQUEST;
  env.capture_request = &req;
  n = pack(&env, buf);
  assert_int_equal(gs_wire_decode_control(buf, n, &m, err, sizeof err), GS_OK);
  assert_int_equal(m.body, GS_WIRE_CAPTURE_REQUEST);
  assert_true(m.capture.request_id == 0x1122334455ull);
  assert_true(m.capture.stable_ids);
  req.options = NULL;
  n = pack(&env, buf);
  assert_int_equal(gs_wire_decode_control(buf, n, &m, err, sizeof err), GS_OK);
  assert_false(m.capture.stable_ids);

  ack.request_id = 3;
  ack.snapshot_id = UINT64_MAX;
  ack.stored_id = 99;
  env.body_case = GCSNAP__ENVELOPE__BODY_ACK;
  env.ack = &ack;
  n = pack(&env, buf);
  assert_int_equal(gs_wire_decode_control(buf, n, &m, err, sizeof err), GS_OK);
  assert_int_equal(m.body, GS_WIRE_ACK);
  assert_int_equal(m.ack.request_id, 3);
  assert_true(m.ack.snapshot_id == UINT64_MAX);
  assert_int_equal(m.ack.stored_id, 99);

  error.code = GS_WIRE_E_CRC;
  error.message = "CRC mismatch";
  error.request_id = 4;
  env.body_case = GCSNAP__ENVELOPE__BODY_ERROR;
  env.error = &error;
  n = pack(&env, buf);
  assert_int_equal(gs_wire_decode_control(buf, n, &m, err, sizeof err), GS_OK);
  assert_int_equal(m.body, GS_WIRE_ERROR);
  assert_int_equal(m.error.code, GS_WIRE_E_CRC);
  assert_int_equal(m.error.message_len, 12);
  assert_memory_equal(m.error.message, "CRC mismatch", 12);
  assert_int_equal(m.error.request_id, 4);

  ping.nonce = 77;
  env.body_case = GCSNAP__ENVELOPE__BODY_PING;
  env.ping = &ping;
  n = pack(&env, buf);
  assert_int_equal(gs_wire_decode_control(buf, n, &m, err, sizeof err), GS_OK);
  assert_int_equal(m.body, GS_WIRE_PING);
  assert_int_equal(m.ping.nonce, 77);
  assert_false(m.ping.reply);

  /* Malformed: truncated, a body of the wrong wire type, a field of the
   * wrong wire type, nothing at all. */
  assert_int_equal(gs_wire_decode_control(buf, n - 1, &m, err, sizeof err), GS_EFORMAT);
  assert_non_null(strstr(err, "malformed"));
  assert_int_equal(gs_wire_decode_control((const uint8_t *)"\x70\x01", 2, &m, err, sizeof err),
                   GS_EFORMAT);
  assert_non_null(strstr(err, "wire type"));
  assert_int_equal(gs_wire_decode_control((const uint8_t *)"\x72\x02\x0a\x00", 4, &m, err,
                                          sizeof err), GS_EFORMAT);
  assert_non_null(strstr(err, "Ping"));
  assert_int_equal(gs_wire_decode_control((const uint8_t *)"", 0, &m, err, sizeof err),
                   GS_EFORMAT);
  /* Unknown fields are skipped: a later version may add some. */
  assert_int_equal(gs_wire_decode_control((const uint8_t *)"\x72\x04\x08\x05\x18\x01", 6, &m,
                                          err, sizeof err), GS_OK);
  assert_int_equal(m.ping.nonce, 5);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_hello),
    cmocka_unit_test(test_ping_and_error),
    cmocka_unit_test(test_snapshot_messages),
    cmocka_unit_test(test_snapshot_text),
    cmocka_unit_test(test_continued_object),
    cmocka_unit_test(test_encoder_errors),
    cmocka_unit_test(test_control_decode),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
