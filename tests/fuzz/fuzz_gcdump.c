/* fuzz_gcdump.c - libFuzzer target for the .gcdump reader (collector/formats).
 *
 * Each input is sniffed, then converted twice: in one piece and handed out
 * in pieces whose sizes come from the input. Both must give the same code
 * and the same bytes. A refusal must say "byte N: ..." and write nothing; a
 * conversion that succeeds must write records the validator accepts with no
 * error, as exactly one section. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_util.h"
#include "gs_error.h"
#include "gs_reader.h"
#include "gs_validate.h"
#include "gs_writer.h"
#include "gsf_gcdump.h"

typedef struct sink {
  char *p;
  size_t len, cap;
} sink;

static int sink_write(void *ctx, const void *buf, size_t len) {
  sink *k = ctx;
  if (k->len + len > k->cap) {
    size_t cap = (k->len + len) * 2;
    char *p = realloc(k->p, cap);
    FUZZ_CHECK(p != NULL);
    k->p = p;
    k->cap = cap;
  }
  memcpy(k->p + k->len, buf, len);
  k->len += len;
  return GS_OK;
}

/* Inputs of odd size meet a low limit of one object's references: the
 * converter refuses them before writing, never its writer midway. */
static int convert(const uint8_t *data, size_t size, size_t piece, sink *out, char *err,
                   size_t cap) {
  fuzz_src in = {data, size, 0, piece};
  gs_writer *w;
  int rc;
  FUZZ_CHECK(gs_writer_new(&w, sink_write, out) == GS_OK);
  gs_writer_set_max_refs(w, size % 2 ? 4 : GS_READER_DEFAULT_MAX_REFS);
  rc = gsf_gcdump_convert(fuzz_src_read, &in, w, err, cap);
  FUZZ_CHECK(gs_writer_free(w) == GS_OK);
  return rc;
}

static void no_diag(void *ctx, const gs_diag *d) {
  (void)ctx;
  (void)d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sink a = {0}, b = {0};
  char err_a[256], err_b[256];
  int rc_a, rc_b;
  (void)gsf_gcdump_sniff(data, size);
  rc_a = convert(data, size, 0, &a, err_a, sizeof err_a);
  rc_b = convert(data, size, size ? 1 + data[size - 1] % 61 : 1, &b, err_b, sizeof err_b);
  FUZZ_CHECK(rc_a == rc_b && a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0));
  if (rc_a < 0) {
    FUZZ_CHECK(rc_a == GS_EFORMAT || rc_a == GS_ELIMIT);   /* memory follows the input */
    FUZZ_CHECK(strncmp(err_a, "byte ", 5) == 0 && strcmp(err_a, err_b) == 0);
    FUZZ_CHECK(a.len == 0);
  } else {
    gs_reader *r;
    gs_validate_counts counts;
    /* Success says nothing, or that the file holds a sample of the heap. */
    FUZZ_CHECK(rc_a == GS_OK && strcmp(err_a, err_b) == 0);
    FUZZ_CHECK(err_a[0] == '\0' || strncmp(err_a, "PerfView kept a sample", 22) == 0);
    FUZZ_CHECK(gs_reader_new_buffer(&r, a.p, a.len) == GS_OK);
    FUZZ_CHECK(gs_validate_reader(r, no_diag, NULL, &counts) == GS_OK);
    FUZZ_CHECK(counts.errors == 0 && counts.sections == 1);
    gs_reader_free(r);
  }
  free(a.p);
  free(b.p);
  return 0;
}
