/* fuzz_formats.c - one input through a foreign-format converter, then its
 * records through the validator (see fuzz_formats.h). */
#include <stdlib.h>
#include <string.h>
#include "fuzz_formats.h"
#include "fuzz_util.h"
#include "gs_error.h"
#include "gs_validate.h"

/* Output beyond this is cut (the converter sees a write error). */
#define OUT_MAX (8u << 20)

typedef struct mem { const uint8_t *data; size_t size, pos; } mem;
typedef struct out { char *buf; size_t len, cap; } out;

static int mem_read(void *ctx, void *buf, size_t cap, size_t *got) {
  mem *m = ctx;
  /* Small, uneven reads: a block boundary can fall anywhere. */
  size_t n = m->size - m->pos < cap ? m->size - m->pos : cap;
  if (n > 1 + (m->pos % 4093)) n = 1 + (m->pos % 4093);
  memcpy(buf, m->data + m->pos, n);
  m->pos += n;
  *got = n;
  return GS_OK;
}

static int out_write(void *ctx, const void *buf, size_t len) {
  out *o = ctx;
  if (len > OUT_MAX - o->len) return GS_EIO;
  if (o->len + len > o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 65536;
    char *b;
    while (cap < o->len + len) cap *= 2;
    if (!(b = realloc(o->buf, cap))) return GS_ENOMEM;
    o->buf = b;
    o->cap = cap;
  }
  memcpy(o->buf + o->len, buf, len);
  o->len += len;
  return GS_OK;
}

/* Counts the errors a reader must not make. A repeated object ID, or a
 * class ID equal to a primitive array's type code, is left to the
 * validator that reads every converted stream: finding them in the reader
 * would take a table of every ID. */
static void on_diag(void *ctx, const gs_diag *d) {
  uint64_t *errors = ctx;
  if (gs_diag_severity(d->code) == GS_SEV_ERROR && d->code != GS_D_DUPLICATE_OBJECT &&
      d->code != GS_D_TYPE_REDEFINED)
    (*errors)++;
}

void fuzz_formats_run(gsf_convert_fn convert, const uint8_t *data, size_t size,
                      uint64_t max_sections) {
  mem m = {data, size, 0};
  out o = {NULL, 0, 0};
  char err[200] = "";
  gs_writer *w;
  gs_reader *r;
  gs_validate_counts counts;
  uint64_t errors = 0;
  /* Inputs of odd size meet a low limit of one object's references, so
   * that its refusal is exercised; what is written reads back under it. */
  size_t max_refs = size % 2 ? 16 : GS_READER_DEFAULT_MAX_REFS;
  int rc;
  FUZZ_CHECK(gs_writer_new(&w, out_write, &o) == GS_OK);
  gs_writer_set_max_refs(w, max_refs);
  rc = convert(mem_read, &m, w, err, sizeof err);
  if (gs_writer_free(w) != GS_OK && rc == GS_OK) rc = GS_EIO;
  FUZZ_CHECK(rc <= 0);
  FUZZ_CHECK(rc == GS_OK || err[0] != '\0');
  FUZZ_CHECK(memchr(err, '\0', sizeof err) != NULL);
  FUZZ_CHECK(rc == GS_OK || rc == GS_EFORMAT || rc == GS_ELIMIT || rc == GS_EIO || rc == GS_ENOMEM);
  if (rc == GS_OK) {
    FUZZ_CHECK(gs_reader_new_buffer(&r, o.buf ? o.buf : "", o.len) == GS_OK);
    gs_reader_set_max_refs(r, max_refs);
    FUZZ_CHECK(gs_validate_reader(r, on_diag, &errors, &counts) == GS_OK);
    FUZZ_CHECK(errors == 0);
    FUZZ_CHECK(counts.sections >= 1 && counts.sections <= max_sections);
    gs_reader_free(r);
  }
  free(o.buf);
}
