/* fuzz_nettrace.c - libFuzzer target for what a .NET program's diagnostics
 * socket sends the agent: the NetTrace reader (common's gs_nettrace) and the
 * heap walk decoder (the agent's gs_dotnet_heap), as the dotnet source
 * drives them.
 *
 * Each input is read twice: in one piece and in pieces whose sizes come
 * from the input. Both must give the same code, the same events and the
 * same heap. A refusal must say "byte N: ..."; whatever the input, memory
 * follows the blocks it holds (libFuzzer's RSS limit enforces it). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "fuzz_util.h"
#include "gs_crc32.h"
#include "gs_dotnet_heap.h"
#include "gs_error.h"
#include "gs_nettrace.h"

/* What a run saw, folded into a CRC: equal runs give equal results. */
typedef struct seen {
  uint32_t crc;
  uint64_t calls;
} seen;

static void fold(seen *s, const void *p, size_t n) {
  s->crc = gs_crc32(s->crc, p, n);
  s->calls++;
}

static int v_section(void *ctx, const char *name, size_t len) {
  fold(ctx, name, len);
  return GS_OK;
}

static int v_type(void *ctx, uint64_t id, const char *name, size_t len) {
  fold(ctx, &id, sizeof id);
  fold(ctx, name, len);
  return GS_OK;
}

static int v_object(void *ctx, uint64_t id, uint64_t type, uint64_t size, const uint64_t *refs,
                    size_t n) {
  uint64_t head[3];
  head[0] = id;
  head[1] = type;
  head[2] = size;
  fold(ctx, head, sizeof head);
  if (n) fold(ctx, refs, n * sizeof *refs);
  return GS_OK;
}

static int v_object_begin(void *ctx, uint64_t id, uint64_t type, uint64_t size) {
  return v_object(ctx, id, type, size, NULL, 0);
}

static int v_object_refs(void *ctx, const uint64_t *refs, size_t n) {
  FUZZ_CHECK(n > 0);
  fold(ctx, refs, n * sizeof *refs);
  return GS_OK;
}

static int v_object_end(void *ctx) {
  fold(ctx, "", 1);
  return GS_OK;
}

static int v_root(void *ctx, uint64_t id, unsigned kind, unsigned flags, uint64_t container) {
  uint64_t r[4];
  FUZZ_CHECK(kind <= 5 && flags <= 7);
  r[0] = id;
  r[1] = kind;
  r[2] = flags;
  r[3] = container;
  fold(ctx, r, sizeof r);
  return GS_OK;
}

static int v_generation(void *ctx, unsigned gen, uint64_t start, uint64_t used,
                        uint64_t reserved) {
  uint64_t g[4];
  g[0] = gen;
  g[1] = start;
  g[2] = used;
  g[3] = reserved;
  fold(ctx, g, sizeof g);
  return GS_OK;
}

static int v_static_name(void *ctx, uint64_t object, const char *name, size_t len) {
  fold(ctx, &object, sizeof object);
  fold(ctx, name, len);
  return GS_OK;
}

/* The events into the decoder, as the dotnet source hands them over. */
static int decode(gs_nt *nt, gs_dheap *h, seen *s) {
  gs_nt_event ev;
  int rc;
  while ((rc = gs_nt_next(nt, &ev)) == GS_OK) {
    fold(s, &ev.event_id, sizeof ev.event_id);
    if (strcmp(ev.provider, "Microsoft-Windows-DotNETRuntime")) continue;
    rc = gs_dheap_event(h, ev.event_id, ev.payload, ev.payload_len, ev.timestamp, ev.offset);
    if (rc == GS_DHEAP_END) return gs_dheap_finish(h);
    if (rc < 0) return rc;
  }
  return rc;
}

static int run(const uint8_t *data, size_t size, size_t piece, seen *s, char *err, size_t cap) {
  fuzz_src in = {data, size, 0, piece};
  gs_heap_visitor v;
  gs_nt *nt = NULL;
  gs_dheap *h = NULL;
  int rc;
  memset(&v, 0, sizeof v);
  v.ctx = s;
  v.section = v_section;
  v.type = v_type;
  v.object = v_object;
  v.root = v_root;
  v.generation = v_generation;
  v.static_name = v_static_name;
  v.object_begin = v_object_begin;
  v.object_refs = v_object_refs;
  v.object_end = v_object_end;
  err[0] = '\0';
  if ((rc = gs_nt_open(&nt, fuzz_src_read, &in, err, cap)) < 0) return rc;
  FUZZ_CHECK(gs_dheap_new(&h, &v, gs_nt_trace_of(nt)->pointer_size, 1u << 16, NULL) == GS_OK);
  rc = decode(nt, h, s);
  if (rc < 0 && !err[0]) snprintf(err, cap, "%s", gs_dheap_error(h));
  fold(s, &rc, sizeof rc);
  s->calls += gs_nt_lost(nt);
  gs_dheap_free(h);
  gs_nt_free(nt);
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  seen a = {0, 0}, b = {0, 0};
  char err_a[256], err_b[256];
  int rc_a = run(data, size, 0, &a, err_a, sizeof err_a);
  int rc_b = run(data, size, size ? 1 + data[size - 1] % 61 : 1, &b, err_b, sizeof err_b);
  FUZZ_CHECK(rc_a == rc_b && a.crc == b.crc && a.calls == b.calls);
  FUZZ_CHECK(strcmp(err_a, err_b) == 0);
  /* A stream may end without its closing tag (GS_EOF from the reader is
   * only after it); any other failure names its byte or the walk's end. */
  if (rc_a < 0 && rc_a != GS_EOF)
    FUZZ_CHECK(strncmp(err_a, "byte ", 5) == 0 || strncmp(err_a, "the walk ended", 14) == 0);
  return 0;
}
