/* test_wire_protoc.c - every message kind the agent writes, decoded by
 * protoc itself against proto/gcsnap.proto: the reference decoder agrees
 * with the agent's writer, field by field.
 *
 *   test_wire_protoc PROTOC PROTO_DIR WORKDIR
 *
 * A missing protoc is a failure, not a skip: the check matters. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"

static const char *protoc, *proto_dir, *workdir;
static int failures;

/* protoc's text for one Envelope (without its prefix), into out. */
static int protoc_decode(const uint8_t *env, size_t len, char *out, size_t cap) {
  char path[1024], cmd[4096];
  FILE *f, *p;
  size_t n = 0, got;
  snprintf(path, sizeof path, "%s/message.bin", workdir);
  if (!(f = fopen(path, "wb")) || fwrite(env, 1, len, f) != len || fclose(f)) return -1;
  snprintf(cmd, sizeof cmd, "'%s' --decode=gcsnap.Envelope --proto_path='%s' '%s/gcsnap.proto' "
                            "< '%s' 2>&1", protoc, proto_dir, proto_dir, path);
  if (!(p = popen(cmd, "r"))) return -1;
  while (n + 1 < cap && (got = fread(out + n, 1, cap - 1 - n, p)) > 0) n += got;
  out[n] = '\0';
  return pclose(p) == 0 ? 0 : -1;
}

static void check(const char *what, const uint8_t *frame, size_t len, const char *expect) {
  static char out[1 << 20];
  size_t plen, flen;
  if (gs_wire_frame_peek(frame, len, GS_WIRE_MAX_FRAME, &plen, &flen) || plen + flen != len) {
    printf("FAIL %s: bad frame prefix\n", what);
    failures++;
    return;
  }
  if (protoc_decode(frame + plen, flen, out, sizeof out)) {
    printf("FAIL %s: protoc could not decode it:\n%s\n", what, out);
    failures++;
  } else if (strcmp(out, expect) != 0) {
    printf("FAIL %s: protoc says\n%s\nexpected\n%s\n", what, out, expect);
    failures++;
  } else {
    printf("ok   %s\n", what);
  }
}

/* ---- control messages ---- */

static void check_control(void) {
  uint8_t buf[GS_WIRE_CONTROL_BYTES];
  const uint8_t *frame;
  size_t len;
  gs_wire_hello h;
  memset(&h, 0, sizeof h);
  h.protocol_version = GS_WIRE_PROTOCOL_VERSION;
  h.agent_version = "0.1.0";
  h.device_id = "bench-07";
  h.app_name = "Contoso \"Inventory\"";
  h.architecture = "armv5te";
  h.pointer_size = 4;
  h.clock_ms = 0x123456789ull;
  gs_wire_write_hello(buf, sizeof buf, &h, &frame, &len);
  check("Hello", frame, len,
        "hello {\n"
        "  protocol_version: 1\n"
        "  agent_version: \"0.1.0\"\n"
        "  device_id: \"bench-07\"\n"
        "  app_name: \"Contoso \\\"Inventory\\\"\"\n"
        "  architecture: \"armv5te\"\n"
        "  pointer_size: 4\n"
        "  clock_ms: 4886718345\n"
        "}\n");
  gs_wire_write_ping(buf, sizeof buf, 18446744073709551615ull, 1, &frame, &len);
  check("Ping reply", frame, len,
        "ping {\n"
        "  nonce: 18446744073709551615\n"
        "  reply: true\n"
        "}\n");
  gs_wire_write_error(buf, sizeof buf, GS_WIRE_E_CAPTURE, "the source failed", 42, &frame,
                      &len);
  check("Error", frame, len,
        "error {\n"
        "  code: 10\n"
        "  message: \"the source failed\"\n"
        "  request_id: 42\n"
        "}\n");
}

/* ---- a snapshot ---- */

typedef struct frames {
  uint8_t *data[16];
  size_t len[16];
  size_t n;
} frames;

static int frames_add(void *ctx, const void *data, size_t len) {
  frames *f = ctx;
  if (f->n == 16 || !(f->data[f->n] = malloc(len))) return GS_ENOMEM;
  memcpy(f->data[f->n], data, len);
  f->len[f->n++] = len;
  return GS_OK;
}

static void check_snapshot(void) {
  static const uint64_t refs[] = {0x1000, 0x2000, 0x10000000000ull};
  static const char *const expect[] = {
    "snapshot_begin {\n  request_id: 7\n  snapshot_id: 11259375\n  stable_ids: true\n"
    "  trigger: \"request\"\n  clock_ms: 1000\n}\n",
    "section_begin {\n  seq: 1\n  version: 2\n  name: \"My App [stable-ids]\"\n"
    "  timestamp: 1000\n}\n",
    "types {\n  seq: 2\n  ids: 5\n  ids: 4294967296\n  names: \"System.String\"\n"
    "  names: \"A+<>c\"\n}\n",
    "objects {\n  seq: 3\n"
    "  id_deltas: 4096\n  id_deltas: 4096\n  id_deltas: -4088\n"
    "  type_ids: 5\n  type_ids: 6\n  type_ids: 5\n"
    "  sizes: 32\n  sizes: 24\n  sizes: 0\n"
    "  ref_counts: 0\n  ref_counts: 3\n  ref_counts: 1\n"
    "  ref_deltas: -4096\n  ref_deltas: 0\n  ref_deltas: 1099511619584\n  ref_deltas: -8\n"
    "}\n",
    "roots {\n  seq: 4\n  id_deltas: 8192\n  id_deltas: -4096\n  kinds: 3\n  kinds: 4\n"
    "  flags: 0\n  flags: 1\n  containers: 6\n}\n",
    "generations {\n  seq: 5\n  ranges {\n    start: 4096\n    used: 256\n"
    "    reserved: 4096\n  }\n  ranges {\n    generation: 3\n    start: 32768\n"
    "    reserved: 32768\n  }\n}\n",
    "section_end {\n  seq: 6\n  name: \"My App [stable-ids]\"\n  timestamp: 1001\n}\n",
    "snapshot_end {\n  seq: 7\n  sections: 1\n  types: 2\n  objects: 3\n  references: 4\n"
    "  roots: 2\n  text_bytes: 176\n  crc32: 563562243\n}\n",
  };
  static const char *const names[] = {
    "SnapshotBegin", "SectionBegin", "TypeBatch", "ObjectBatch", "RootBatch",
    "GenerationRanges", "SectionEnd", "SnapshotEnd"};
  gs_wire_encoder *e;
  gs_wire_snapshot snap;
  frames f;
  size_t i;
  memset(&f, 0, sizeof f);
  memset(&snap, 0, sizeof snap);
  snap.request_id = 7;
  snap.snapshot_id = 0xabcdef;
  snap.stable_ids = 1;
  snap.trigger = "request";
  snap.clock_ms = 1000;
  if (gs_wire_encoder_new(&e, frames_add, &f) || gs_wire_encoder_begin(e, &snap) ||
      gs_wire_encoder_section(e, 2, "My App [stable-ids]", 19, 1000) ||
      gs_wire_encoder_type(e, 5, "System.String", 13) ||
      gs_wire_encoder_type(e, 0x100000000ull, "A+<>c", 5) ||
      gs_wire_encoder_object(e, 0x1000, 5, 0x20, NULL, 0) ||
      gs_wire_encoder_object(e, 0x2000, 6, 0x18, refs, 3) ||
      gs_wire_encoder_object(e, 0x1008, 5, 0, refs, 1) ||
      gs_wire_encoder_root(e, 0x2000, 3, 0, 0) ||
      gs_wire_encoder_root(e, 0x1000, 4, 1, 6) ||
      gs_wire_encoder_generation(e, 0, 0x1000, 0x100, 0x1000) ||
      gs_wire_encoder_generation(e, 3, 0x8000, 0, 0x8000) ||
      gs_wire_encoder_section_end(e, "My App [stable-ids]", 19, 1001) ||
      gs_wire_encoder_end(e) || f.n != 8) {
    printf("FAIL the encoder refused the snapshot (%u frames)\n", (unsigned)f.n);
    failures++;
  } else {
    for (i = 0; i < f.n; i++) check(names[i], f.data[i], f.len[i], expect[i]);
  }
  for (i = 0; i < f.n; i++) free(f.data[i]);
  gs_wire_encoder_free(e);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_wire_protoc PROTOC PROTO_DIR WORKDIR\n");
    return 2;
  }
  protoc = argv[1];
  proto_dir = argv[2];
  workdir = argv[3];
  if (!*protoc || strstr(protoc, "NOTFOUND")) {
    printf("FAIL protoc not found: install protobuf-compiler (toolchains/install-deps.sh)\n");
    return 1;
  }
  check_control();
  check_snapshot();
  return failures ? 1 : 0;
}
