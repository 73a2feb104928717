/* gs_writer.c - writer of the RPM GC heap dump record format (later form).
 *
 * Records are formatted straight into a fixed output buffer that is handed to
 * the write callback when full; a record longer than the buffer (an object
 * with many references) is flushed in pieces. Nothing is allocated per
 * record. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_writer.h"

#define OUT_BUFFER (256u << 10)
#define MAX_FIELD 18            /* separator + 16 hex digits + newline */

struct gs_writer {
  gs_write_fn fn;
  void *ctx;
  int error;                    /* first write error; later writes are no-ops */
  size_t max_refs, obj_refs;    /* the limit of one object; the current one's so far */
  size_t len;
  char pairs[512];              /* "000102...ff": two digits a byte */
  char buf[OUT_BUFFER];
};

static const char digits[] = "0123456789abcdef";

int gs_writer_new(gs_writer **out, gs_write_fn fn, void *ctx) {
  gs_writer *w = malloc(sizeof *w);
  unsigned i;
  if (!w) return GS_ENOMEM;
  w->fn = fn;
  w->ctx = ctx;
  w->error = GS_OK;
  w->max_refs = GS_READER_DEFAULT_MAX_REFS;
  w->obj_refs = 0;
  w->len = 0;
  for (i = 0; i < 256; i++) {
    w->pairs[2 * i] = digits[i >> 4];
    w->pairs[2 * i + 1] = digits[i & 15];
  }
  *out = w;
  return GS_OK;
}

static int write_file(void *ctx, const void *buf, size_t len) {
  return fwrite(buf, 1, len, (FILE *)ctx) == len ? GS_OK : GS_EIO;
}

int gs_writer_new_file(gs_writer **out, FILE *f) {
  return gs_writer_new(out, write_file, f);
}

int gs_writer_flush(gs_writer *w) {
  if (w->len && !w->error) w->error = w->fn(w->ctx, w->buf, w->len);
  w->len = 0;
  return w->error;
}

int gs_writer_free(gs_writer *w) {
  int err;
  if (!w) return GS_OK;
  err = gs_writer_flush(w);
  free(w);
  return err;
}

static void reserve(gs_writer *w, size_t n) {
  if (OUT_BUFFER - w->len < n) gs_writer_flush(w);
}

static void put_char(gs_writer *w, char c) {
  reserve(w, 1);
  w->buf[w->len++] = c;
}

static void put_bytes(gs_writer *w, const char *s, size_t n) {
  while (n) {
    size_t room, chunk;
    reserve(w, 1);
    room = OUT_BUFFER - w->len;
    chunk = n < room ? n : room;
    memcpy(w->buf + w->len, s, chunk);
    w->len += chunk;
    s += chunk;
    n -= chunk;
  }
}

/* Hex digits of v, 1 to 16: a dump writes several numbers a record. */
static int hex_digits(uint64_t v) {
#if defined(__GNUC__)
  return v ? (67 - __builtin_clzll(v)) / 4 : 1;
#else
  int n = 1;
  while (n < 16 && (v >> (4 * n))) n++;
  return n;
#endif
}

/* Appends ' ' and v in lowercase hex without leading zeros, two digits at
 * a time from the last. */
static void put_hex(gs_writer *w, uint64_t v) {
  int i = hex_digits(v);
  char *p;
  reserve(w, MAX_FIELD);
  p = w->buf + w->len;
  *p++ = ' ';
  w->len += (size_t)i + 1;
  for (; i >= 2; i -= 2, v >>= 8) memcpy(p + i - 2, w->pairs + 2 * (v & 0xff), 2);
  if (i) p[0] = digits[v & 15];
}

static int end_record(gs_writer *w) {
  put_char(w, '\n');
  return w->error;
}

int gs_writer_section(gs_writer *w, uint64_t version, const char *name,
                      size_t name_len, uint64_t timestamp) {
  put_char(w, 'a');
  put_hex(w, version);
  put_char(w, ' ');
  put_bytes(w, name, name_len);
  put_hex(w, timestamp);
  return end_record(w);
}

int gs_writer_type(gs_writer *w, uint64_t id, const char *name, size_t name_len) {
  put_char(w, 't');
  put_hex(w, id);
  put_char(w, ' ');
  put_bytes(w, name, name_len);
  return end_record(w);
}

void gs_writer_set_max_refs(gs_writer *w, size_t max_refs) {
  w->max_refs = max_refs ? max_refs : 1;
}

size_t gs_writer_max_refs(const gs_writer *w) { return w->max_refs; }

int gs_writer_object_begin(gs_writer *w, uint64_t id, uint64_t type, uint64_t size) {
  w->obj_refs = 0;
  put_char(w, 'o');
  put_hex(w, id);
  put_hex(w, type);
  put_hex(w, size);
  return w->error;
}

int gs_writer_refs(gs_writer *w, const uint64_t *refs, size_t nrefs) {
  size_t i;
  /* What the reader would refuse is not written: the output stops here. */
  if (nrefs > w->max_refs - w->obj_refs && !w->error) w->error = GS_ELIMIT;
  w->obj_refs += nrefs;
  for (i = 0; i < nrefs && !w->error; i++) put_hex(w, refs[i]);
  return w->error;
}

int gs_writer_object_end(gs_writer *w) { return end_record(w); }

int gs_writer_object(gs_writer *w, uint64_t id, uint64_t type, uint64_t size,
                     const uint64_t *refs, size_t nrefs) {
  gs_writer_object_begin(w, id, type, size);
  gs_writer_refs(w, refs, nrefs);
  return end_record(w);
}

int gs_writer_root(gs_writer *w, uint64_t id, unsigned kind, unsigned flags,
                   uint64_t container) {
  put_char(w, 'r');
  put_hex(w, id);
  put_hex(w, kind);
  put_hex(w, flags);
  if (kind == GS_ROOT_STATIC) put_hex(w, container);
  return end_record(w);
}

int gs_writer_end(gs_writer *w, const char *name, size_t name_len, uint64_t timestamp) {
  put_char(w, 'c');
  put_char(w, ' ');
  put_bytes(w, name, name_len);
  put_hex(w, timestamp);
  return end_record(w);
}

int gs_writer_record(gs_writer *w, const gs_record *rec) {
  uint64_t ts = rec->has_timestamp ? rec->timestamp : 0;
  switch (rec->kind) {
  case GS_REC_SECTION: return gs_writer_section(w, rec->id, rec->name, rec->name_len, ts);
  case GS_REC_TYPE: return gs_writer_type(w, rec->id, rec->name, rec->name_len);
  case GS_REC_OBJECT:
    return gs_writer_object(w, rec->id, rec->type, rec->size, rec->refs, rec->nrefs);
  case GS_REC_ROOT:
    return gs_writer_root(w, rec->id, rec->root_kind, rec->root_flags, rec->type);
  case GS_REC_END: return gs_writer_end(w, rec->name, rec->name_len, ts);
  }
  return GS_EINVAL;
}
