/* gsf_source.c - the format dispatcher and the converter thread.
 *
 * The converter writes records into one of NCHUNKS fixed chunks; a full
 * chunk is handed to the reading side through a semaphore, and the
 * converter waits for a free one, so it never runs more than a few chunks
 * ahead. The last chunk carries the converter's result. Closing early
 * makes the converter's next read or write fail, so it stops soon. */
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_thread.h"
#include "gs_writer.h"
#include "gsf_source.h"

#define CHUNK (256u << 10)
#define NCHUNKS 4

struct gsf_source {
  gs_read_fn in;
  void *in_ctx;
  gsf_format format;
  gsf_convert_fn convert;
  size_t max_refs;                /* of one object, for the converter's writer */
  unsigned char head[GSF_SNIFF_BYTES];
  size_t head_len, head_pos;
  /* the converter's side */
  gs_thread *thread;
  gs_sem *filled, *free;
  atomic_int closing;
  unsigned wr;
  size_t wr_len;
  int rc;                         /* its result, set before the last chunk is posted;
                                   * for records, set when opened if they cannot be read */
  gs_diag_code refused;           /* then the code of that error (gsf_not_read) */
  char err[200];
  /* the reading side */
  int started, finished;
  unsigned rd;
  size_t rd_pos;
  gs_diag diag;
  int has_diag;
  size_t len[NCHUNKS];
  int last[NCHUNKS];
  unsigned char *data;
};

/* The input's bytes: the sniffed head first. */
static int head_read(void *ctx, void *buf, size_t cap, size_t *got) {
  gsf_source *s = ctx;
  if (atomic_load(&s->closing)) return GS_EIO;
  if (s->head_pos < s->head_len) {
    size_t n = s->head_len - s->head_pos;
    if (n > cap) n = cap;
    memcpy(buf, s->head + s->head_pos, n);
    s->head_pos += n;
    *got = n;
    return GS_OK;
  }
  return s->in(s->in_ctx, buf, cap, got);
}

int gsf_source_open(gsf_source **out, gs_read_fn in, void *in_ctx) {
  gsf_source *s = calloc(1, sizeof *s);
  const char *what;
  *out = NULL;
  if (!s) return GS_ENOMEM;
  s->in = in;
  s->in_ctx = in_ctx;
  s->max_refs = GS_READER_DEFAULT_MAX_REFS;
  while (s->head_len < sizeof s->head) {
    size_t got = 0;
    int rc = in(in_ctx, s->head + s->head_len, sizeof s->head - s->head_len, &got);
    if (rc) { free(s); return rc; }
    if (got == 0) break;
    s->head_len += got;
  }
  s->format = gsf_detect(s->head, s->head_len);
  s->convert = gsf_converter(s->format);
  if (!s->convert && (what = gsf_not_read(s->head, s->head_len, &s->refused))) {
    s->rc = GS_EFORMAT;
    snprintf(s->err, sizeof s->err, "%s", what);
  }
  *out = s;
  return GS_OK;
}

void gsf_source_set_max_refs(gsf_source *s, size_t max_refs) {
  assert(!s->started);
  s->max_refs = max_refs;
}

gsf_format gsf_source_format(const gsf_source *s) { return s->format; }
const gs_diag *gsf_source_diag(const gsf_source *s) { return s->has_diag ? &s->diag : NULL; }
/* The converter's message on success: set before its last chunk was posted. */
const char *gsf_source_note(const gsf_source *s) {
  return s->finished && s->rc == GS_OK && s->err[0] ? s->err : NULL;
}

/* ---- the converter thread ---------------------------------------------- */

static int chunk_write(void *ctx, const void *buf, size_t len) {
  gsf_source *s = ctx;
  const unsigned char *p = buf;
  while (len) {
    size_t n = CHUNK - s->wr_len;
    if (n > len) n = len;
    memcpy(s->data + (size_t)s->wr * CHUNK + s->wr_len, p, n);
    s->wr_len += n;
    p += n;
    len -= n;
    if (s->wr_len < CHUNK) break;
    s->len[s->wr] = CHUNK;
    gs_sem_post(s->filled);
    gs_sem_wait(s->free);
    if (atomic_load(&s->closing)) return GS_EIO;
    s->wr = (s->wr + 1) % NCHUNKS;
    s->wr_len = 0;
  }
  return GS_OK;
}

static void convert_main(void *arg) {
  gsf_source *s = arg;
  gs_writer *w;
  int rc = gs_writer_new(&w, chunk_write, s);
  if (rc == GS_OK) {
    gs_writer_set_max_refs(w, s->max_refs);
    rc = s->convert(head_read, s, w, s->err, sizeof s->err);
    if (rc == GS_OK) rc = gs_writer_flush(w);
    gs_writer_free(w);
  }
  s->rc = rc;
  s->len[s->wr] = s->wr_len;
  s->last[s->wr] = 1;
  gs_sem_post(s->filled);
}

/* Starts the converter and waits for its first chunk. A failure to start
 * reads as a converter that failed at once. */
static void start(gsf_source *s) {
  s->started = 1;
  if (!(s->data = malloc((size_t)NCHUNKS * CHUNK)) || gs_sem_new(&s->filled, 0) ||
      gs_sem_new(&s->free, NCHUNKS - 1) || gs_thread_start(&s->thread, convert_main, s)) {
    s->rc = GS_ENOMEM;
    s->last[0] = 1;
    return;
  }
  gs_sem_wait(s->filled);
}

/* ---- the reading side --------------------------------------------------- */

/* Turns the converter's failure into what the reading side returns. */
static int failed(gsf_source *s) {
  static const char *const labels[] = {"", "V8 heap snapshot", "HPROF", "gcdump"};
  if (s->rc != GS_EFORMAT && s->rc != GS_ELIMIT) return s->rc;
  s->has_diag = 1;
  s->diag.line = 0;
  if (!s->convert) {
    s->diag.code = s->refused;
    snprintf(s->diag.message, sizeof s->diag.message, "%.170s", s->err);
    return GS_EIO;
  }
  if (strstr(s->err, GSF_ONE_OBJECT_LIMIT)) s->diag.code = GS_D_TOO_MANY_REFS;
  else if (strstr(s->err, "truncated")) s->diag.code = GS_D_TRUNCATED_HEAP_FILE;
  else s->diag.code = GS_D_BAD_HEAP_FILE;
  snprintf(s->diag.message, sizeof s->diag.message, "%s: %.170s", labels[s->format],
           s->err[0] ? s->err : gs_strerror(s->rc));
  return GS_EIO;
}

static int converted_read(gsf_source *s, void *buf, size_t cap, size_t *got) {
  *got = 0;
  if (!s->started) start(s);
  while (s->rd_pos == s->len[s->rd]) {
    if (s->last[s->rd]) {
      s->finished = 1;
      return s->rc ? failed(s) : GS_OK;
    }
    s->rd_pos = 0;
    s->len[s->rd] = 0;
    s->rd = (s->rd + 1) % NCHUNKS;
    gs_sem_post(s->free);
    gs_sem_wait(s->filled);
  }
  *got = s->len[s->rd] - s->rd_pos;
  if (*got > cap) *got = cap;
  memcpy(buf, s->data + (size_t)s->rd * CHUNK + s->rd_pos, *got);
  s->rd_pos += *got;
  return GS_OK;
}

int gsf_source_read(void *ctx, void *buf, size_t cap, size_t *got) {
  gsf_source *s = ctx;
  if (s->convert) return converted_read(s, buf, cap, got);
  *got = 0;
  return s->rc ? failed(s) : head_read(s, buf, cap, got);
}

void gsf_source_close(gsf_source *s) {
  unsigned i;
  if (!s) return;
  if (s->thread) {
    atomic_store(&s->closing, 1);
    for (i = 0; i < NCHUNKS; i++) gs_sem_post(s->free);
    gs_thread_join(s->thread);
  }
  gs_sem_free(s->filled);
  gs_sem_free(s->free);
  free(s->data);
  free(s);
}
