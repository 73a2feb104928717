/* fuzz_collector.c - libFuzzer target for what the collector does with the
 * bytes an agent sends: framing, protobuf-c decoding, the session's rules
 * for which message may come when, and the snapshot ingest (gsd_ingest.c:
 * sequence numbers, batches, continued objects, validation, the canonical
 * text, SnapshotEnd's counts and CRC-32).
 *
 * An input is what one agent connection delivers. It is cut into frames
 * with the framing of gs_wire.h and played through the states of
 * gsd_session.c (HELLO, IDLE, RECEIVING), which are mirrored here without
 * the socket, the catalog and the event loop: whatever ends the session
 * there ends the input here. Snapshots whose agent snapshot_id is odd are
 * taken as already stored, so the check-only ingest is fuzzed too.
 *
 * A mutated record almost never keeps SnapshotEnd's CRC-32 and counts
 * right, which would leave the storing of a snapshot to the seeds alone. So
 * when a SnapshotEnd is refused for its CRC-32 or counts, the input is run
 * again with that SnapshotEnd given the figures the collector computed
 * (up to MAX_PASSES times, one more snapshot each): whatever the records,
 * the snapshot then reaches the end of the ingest.
 *
 * What must hold (not protobuf-c's own pack/unpack round trip: it keeps an
 * unknown field numbered 0 and writes back a key it then refuses, and the
 * collector never packs what it received):
 *   - every refusal has a known GS_WIRE_E_* code and a reason;
 *   - a snapshot the collector accepts (SnapshotEnd answered with Ack) was
 *     stored as a zstd file whose text has the size and CRC-32 SnapshotEnd
 *     gave, reads back as the records and sections received, and validates
 *     without an error.
 * (The collector's own length-prefix parser, device authentication and
 * duplicate-device check live in gsd_session.c with the socket and are not
 * reached.) */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "gcsnap.pb-c.h"
#include "gs_crc32.h"
#include "gs_diag.h"
#include "gs_error.h"
#include "gs_reader.h"
#include "gs_text.h"
#include "gs_validate.h"
#include "gs_wire.h"
#include "gsd_ingest.h"
#include "fuzz_util.h"

#define MAX_PASSES 4
#define MAX_FIXES 8

typedef enum state { ST_HELLO, ST_IDLE, ST_RECEIVING, ST_CLOSED } state;

/* The figures the collector computed for the input's n-th SnapshotEnd. */
typedef struct end_fix {
  int set;
  Gcsnap__SnapshotEnd figures;
} end_fix;

typedef struct session {
  state st;
  gsd_ingest *ingest;
  int check_only;
  unsigned ends;                  /* SnapshotEnd messages seen */
  int learned;                    /* a fix was learned in this pass */
  end_fix fixes[MAX_FIXES];
  char tmp_path[FUZZ_PATH_MAX], final_path[FUZZ_PATH_MAX];
} session;

/* ---- a stored snapshot, read back ---------------------------------------- */

static void on_diag(void *ctx, const gs_diag *d) {
  (void)ctx;
  FUZZ_CHECK((int)d->code > 0 && d->code < GS_D_COUNT_);
}

/* The whole file decompressed (it was written by one zstd stream). */
static uint8_t *read_zstd(const char *path, size_t *len) {
  size_t zlen, cap = 1u << 16, out_len = 0;
  uint8_t *z = fuzz_read_file(path, &zlen), *out = malloc(cap);
  ZSTD_DCtx *d = ZSTD_createDCtx();
  ZSTD_inBuffer in = {z, zlen, 0};
  size_t left = 1;
  FUZZ_CHECK(z && out && d);
  while (in.pos < in.size || left != 0) {
    ZSTD_outBuffer o;
    if (out_len == cap) FUZZ_CHECK((out = realloc(out, cap *= 2)) != NULL);
    o.dst = out + out_len;
    o.size = cap - out_len;
    o.pos = 0;
    left = ZSTD_decompressStream(d, &o, &in);
    FUZZ_CHECK(!ZSTD_isError(left));
    out_len += o.pos;
    FUZZ_CHECK(o.pos > 0 || in.pos < in.size || left == 0);
  }
  ZSTD_freeDCtx(d);
  free(z);
  *len = out_len;
  return out;
}

/* What the collector stored for an accepted snapshot. */
static void check_stored(session *s, const Gcsnap__SnapshotEnd *e) {
  const gsd_ingest_counts *c = gsd_ingest_stats(s->ingest);
  gs_validate_counts vc;
  gs_reader *r;
  char err[256];
  size_t len;
  uint8_t *text;
  FUZZ_CHECK(c->errors == 0);
  FUZZ_CHECK(gsd_ingest_commit(s->ingest, s->final_path, err, sizeof err) == GS_OK);
  text = read_zstd(s->final_path, &len);
  FUZZ_CHECK(unlink(s->final_path) == 0);
  FUZZ_CHECK(len == e->text_bytes && len == c->text_bytes);
  FUZZ_CHECK(gs_crc32(0, text, len) == e->crc32);
  FUZZ_CHECK(gs_reader_new_buffer(&r, text, len) == GS_OK);
  FUZZ_CHECK(gs_validate_reader(r, on_diag, NULL, &vc) == GS_OK);
  FUZZ_CHECK(vc.errors == 0);
  FUZZ_CHECK(vc.records == c->records && vc.sections == c->sections);
  gs_reader_free(r);
  free(text);
}

/* ---- the session's states ---------------------------------------------- */

static void end_snapshot(session *s) {
  gsd_ingest_free(s->ingest);   /* removes the temporary file */
  s->ingest = NULL;
  FUZZ_CHECK(access(s->tmp_path, F_OK) != 0);
}

static void check_fault(const gsd_fault *f) {
  FUZZ_CHECK(f->code > 0 && f->code < GS_WIRE_E_COUNT);
  FUZZ_CHECK(strcmp(gs_wire_error_name(f->code), "unknown") != 0);
  FUZZ_CHECK(memchr(f->reason, '\0', sizeof f->reason) != NULL && f->reason[0] != '\0');
}

/* The device ID rules of gsd_session.c's Hello: text of 1 to
 * GSD_DEVICE_ID_MAX bytes, no control bytes. */
static int hello_ok(const Gcsnap__Hello *h) {
  const unsigned char *p = (const unsigned char *)(h->device_id ? h->device_id : ""), *e;
  size_t len = strlen((const char *)p);
  if (h->protocol_version != GS_WIRE_PROTOCOL_VERSION || len == 0 || len > GSD_DEVICE_ID_MAX)
    return 0;
  for (e = p + len; p < e;) {
    size_t n = 1;
    if (*p < 0x20 || *p == 0x7f) return 0;
    if (*p >= 0x80 && !(n = gs_utf8_len(p, e))) return 0;
    p += n;
  }
  return 1;
}

static void on_begin(session *s, const Gcsnap__SnapshotBegin *b) {
  char err[256];
  s->check_only = (int)(b->snapshot_id & 1);
  FUZZ_CHECK(gsd_ingest_new(&s->ingest, s->check_only ? NULL : s->tmp_path, err,
                            sizeof err) == GS_OK);
  s->st = ST_RECEIVING;
}

/* Puts a learned fix into this pass's SnapshotEnd. */
static void apply_fix(session *s, Gcsnap__SnapshotEnd *e, unsigned n) {
  const Gcsnap__SnapshotEnd *fix;
  if (n >= MAX_FIXES || !s->fixes[n].set) return;
  fix = &s->fixes[n].figures;
  e->sections = fix->sections;
  e->types = fix->types;
  e->objects = fix->objects;
  e->references = fix->references;
  e->roots = fix->roots;
  e->text_bytes = fix->text_bytes;
  e->crc32 = fix->crc32;
}

/* Remembers what SnapshotEnd number n should have said. */
static void learn_fix(session *s, unsigned n) {
  const gsd_ingest_counts *c = gsd_ingest_stats(s->ingest);
  Gcsnap__SnapshotEnd *fix;
  if (n >= MAX_FIXES || s->fixes[n].set) return;
  fix = &s->fixes[n].figures;
  s->fixes[n].set = 1;
  s->learned = 1;
  fix->sections = c->sections;
  fix->types = c->types;
  fix->objects = c->objects;
  fix->references = c->references;
  fix->roots = c->roots;
  fix->text_bytes = c->text_bytes;
  fix->crc32 = c->crc32;
}

static void on_data(session *s, Gcsnap__Envelope *env) {
  unsigned end = s->ends;
  gsd_fault f;
  if (env->body_case == GCSNAP__ENVELOPE__BODY_SNAPSHOT_END) {
    s->ends++;
    apply_fix(s, env->snapshot_end, end);
  }
  if (gsd_ingest_message(s->ingest, env, &f) != GS_OK) {
    check_fault(&f);
    if (f.code == GS_WIRE_E_CRC || f.code == GS_WIRE_E_COUNTS) learn_fix(s, end);
    end_snapshot(s);
    s->st = f.fatal ? ST_CLOSED : ST_IDLE;
    return;
  }
  if (!gsd_ingest_ended(s->ingest)) return;
  FUZZ_CHECK(env->body_case == GCSNAP__ENVELOPE__BODY_SNAPSHOT_END);
  if (!s->check_only) check_stored(s, env->snapshot_end);
  end_snapshot(s);
  s->st = ST_IDLE;
}

static void dispatch(session *s, Gcsnap__Envelope *env) {
  Gcsnap__Envelope__BodyCase body = env->body_case;
  switch (s->st) {
  case ST_HELLO:
    s->st = body == GCSNAP__ENVELOPE__BODY_HELLO && hello_ok(env->hello) ? ST_IDLE : ST_CLOSED;
    return;
  case ST_IDLE:
    if (body == GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN) on_begin(s, env->snapshot_begin);
    else if (body != GCSNAP__ENVELOPE__BODY_PING && body != GCSNAP__ENVELOPE__BODY_ERROR)
      s->st = ST_CLOSED;
    return;
  case ST_RECEIVING:
    if (body == GCSNAP__ENVELOPE__BODY_ERROR) {
      end_snapshot(s);
      s->st = ST_IDLE;
    } else {
      on_data(s, env);
    }
    return;
  case ST_CLOSED:
    return;
  }
}

/* ---- frames -------------------------------------------------------------- */

static void on_frame(session *s, const uint8_t *data, size_t len) {
  Gcsnap__Envelope *env = gcsnap__envelope__unpack(NULL, len, data);
  if (!env) {
    s->st = ST_CLOSED;
    return;
  }
  dispatch(s, env);
  gcsnap__envelope__free_unpacked(env, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One connection: the frames of the input, through the session. */
static void run_session(session *s, const uint8_t *data, size_t size) {
  size_t off = 0;
  s->st = ST_HELLO;
  s->ends = 0;
  s->learned = 0;
  while (s->st != ST_CLOSED) {
    size_t plen, flen;
    int rc = gs_wire_frame_peek(data + off, size - off, GS_WIRE_MAX_FRAME, &plen, &flen);
    if (rc != GS_OK) {
      FUZZ_CHECK(rc == GS_EOF || rc == GS_EFORMAT || rc == GS_ELIMIT);
      break;
    }
    FUZZ_CHECK(plen >= 1 && plen <= GS_WIRE_PREFIX_MAX && flen <= GS_WIRE_MAX_FRAME);
    if (size - off - plen < flen) break;   /* the connection ends inside a frame */
    on_frame(s, data + off + plen, flen);
    off += plen + flen;
  }
  /* The agent went away: a snapshot being received fails. */
  if (s->ingest) end_snapshot(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static session s;
  int pass;
  memset(&s, 0, sizeof s);
  fuzz_temp_path(s.tmp_path, sizeof s.tmp_path, "snapshot.tmp");
  fuzz_temp_path(s.final_path, sizeof s.final_path, "snapshot.gclog.zst");
  for (pass = 0; pass < MAX_PASSES; pass++) {
    run_session(&s, data, size);
    if (!s.learned) break;
  }
  return 0;
}
