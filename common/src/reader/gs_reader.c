/* gs_reader.c - streaming reader of the RPM GC heap dump record format.
 *
 * Input is read in large blocks into one window buffer; each call finds the
 * next line with memchr and parses it in place. The window only grows to hold
 * the longest line, and the reference array only to hold the most references
 * of one object, so a steady-state read allocates nothing. An object line
 * longer than half the first window is parsed as it arrives instead (numbers
 * up to the window's last blank, then the window refilled), so an array of
 * millions of elements costs its references, not its text as well.
 *
 * Lenient where both seed versions differ (optional timestamps, blank lines,
 * CRLF, runs of blanks between numbers), strict about everything else: each
 * malformed line is one diagnostic, and reading goes on with the next line. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_reader.h"
#include "gs_text.h"
#include "gs_reader_int.h"

#define WINDOW       (1u << 20)   /* initial window; grows only for longer lines */
#define SMALL_WINDOW 64u
#define LONG_OBJECT  (WINDOW / 2) /* object lines above this are parsed in pieces */
#define TRIM_REFS    (1u << 20)   /* references kept for the next record at most */
#define MAX_HEX_DIGITS 16


/* Character classes: HEX | value for hex digits, SEP for a field separator,
 * 0 for anything else. A constant table keeps the reader free of start-up
 * state. */
#define HEX 0x10
#define SEP 0x20
#define D(v) (HEX | (v))
static const unsigned char cclass[256] = {
  ['\t'] = SEP, [' '] = SEP,
  ['0'] = D(0), ['1'] = D(1), ['2'] = D(2), ['3'] = D(3), ['4'] = D(4),
  ['5'] = D(5), ['6'] = D(6), ['7'] = D(7), ['8'] = D(8), ['9'] = D(9),
  ['a'] = D(10), ['b'] = D(11), ['c'] = D(12), ['d'] = D(13), ['e'] = D(14), ['f'] = D(15),
  ['A'] = D(10), ['B'] = D(11), ['C'] = D(12), ['D'] = D(13), ['E'] = D(14), ['F'] = D(15),
};

/* ---- construction ---------------------------------------------------- */

static int reader_alloc(gs_reader **out) {
  gs_reader *r = calloc(1, sizeof *r);
  if (!r) return GS_ENOMEM;
  r->max_line = GS_READER_DEFAULT_MAX_LINE;
  r->max_refs = GS_READER_DEFAULT_MAX_REFS;
  r->fd = -1;
  r->fast = GS_FAST_PATH;
  *out = r;
  return GS_OK;
}

static int reader_new_sized(gs_reader **out, gs_read_fn fn, void *ctx, size_t window) {
  int err = reader_alloc(out);
  if (err) return err;
  (*out)->fn = fn;
  (*out)->ctx = ctx;
  if (!((*out)->buf = calloc(1, window + GS_READER_PAD))) { gs_reader_free(*out); *out = NULL; return GS_ENOMEM; }
  (*out)->cap = window;
  return GS_OK;
}

int gs_reader_new(gs_reader **out, gs_read_fn fn, void *ctx) {
  return reader_new_sized(out, fn, ctx, WINDOW);
}

static int read_file(void *ctx, void *buf, size_t cap, size_t *got) {
  FILE *f = ctx;
  *got = fread(buf, 1, cap, f);
  return (*got == 0 && ferror(f)) ? GS_EIO : GS_OK;
}

static int read_fd(void *ctx, void *buf, size_t cap, size_t *got) {
  return gs_port_read_fd(*(int *)ctx, buf, cap, got);
}

static int read_fd_at(void *ctx, uint64_t offset, void *buf, size_t cap, size_t *got) {
  return gs_port_pread_fd(*(int *)ctx, buf, cap, offset, got);
}

int gs_reader_new_file(gs_reader **out, FILE *f) {
  return gs_reader_new(out, read_file, f);
}

int gs_reader_new_fd(gs_reader **out, int fd) {
  size_t got;
  int err = gs_reader_new(out, read_fd, NULL);
  if (err) return err;
  (*out)->fd = fd;
  (*out)->ctx = &(*out)->fd;
  (*out)->size_hint = gs_port_fd_size(fd);
  /* A regular file can be read again where the platform reads at an
   * offset, as far as its end (a 32-bit off_t may not reach it). */
  if ((*out)->size_hint && read_fd_at((*out)->ctx, (*out)->size_hint, &got, 0, &got) == GS_OK)
    gs_reader_set_read_at(*out, read_fd_at, (*out)->ctx);
  return GS_OK;
}

typedef struct buffer_source { const char *data; size_t len, pos; } buffer_source;

static int read_buffer_at(void *ctx, uint64_t offset, void *buf, size_t cap, size_t *got) {
  const buffer_source *b = ctx;
  size_t at = offset < b->len ? (size_t)offset : b->len;
  size_t n = b->len - at < cap ? b->len - at : cap;
  memcpy(buf, b->data + at, n);
  *got = n;
  return GS_OK;
}

static int read_buffer(void *ctx, void *buf, size_t cap, size_t *got) {
  buffer_source *b = ctx;
  read_buffer_at(b, b->pos, buf, cap, got);
  b->pos += *got;
  return GS_OK;
}

int gs_reader_new_buffer(gs_reader **out, const void *data, size_t len) {
  buffer_source *b = malloc(sizeof *b);
  size_t window;
  int err;
  if (!b) return GS_ENOMEM;
  b->data = data;
  b->len = len;
  b->pos = 0;
  /* A small input needs no more window than itself (plus the sentinel). */
  window = len + 2 < SMALL_WINDOW ? SMALL_WINDOW : len + 2 < WINDOW ? len + 2 : WINDOW;
  err = reader_new_sized(out, read_buffer, b, window);
  if (err) { free(b); return err; }
  (*out)->size_hint = len;
  (*out)->owned_ctx = b;
  gs_reader_set_read_at(*out, read_buffer_at, b);
  return GS_OK;
}

/* ---- reading again --------------------------------------------------- */

void gs_reader_set_read_at(gs_reader *r, gs_read_at_fn fn, void *ctx) {
  r->read_at = fn;
  r->read_at_ctx = ctx;
}

typedef struct again { gs_read_at_fn fn; void *ctx; uint64_t offset; } again;

static int read_again(void *ctx, void *buf, size_t cap, size_t *got) {
  again *a = ctx;
  int err = a->fn(a->ctx, a->offset, buf, cap, got);
  if (!err) a->offset += *got;
  return err;
}

int gs_reader_can_reopen(const gs_reader *r) { return r->read_at != NULL; }

int gs_reader_mark_here(const gs_reader *r, gs_reader_mark *m) {
  if (!r->read_at) return GS_EINVAL;
  if (r->ahead) return gs_reader_ahead_mark_(r, m);
  m->offset = r->base + r->pos;
  m->line = r->line;
  return GS_OK;
}

int gs_reader_reopen(const gs_reader *r, const gs_reader_mark *m, gs_reader **out) {
  again *a = malloc(sizeof *a);
  int err;
  if (!a) return GS_ENOMEM;
  a->fn = r->read_at;
  a->ctx = r->read_at_ctx;
  a->offset = m->offset;
  if ((err = gs_reader_new(out, read_again, a))) { free(a); return err; }
  (*out)->owned_ctx = a;
  gs_reader_set_read_at(*out, r->read_at, r->read_at_ctx);
  (*out)->base = m->offset;
  (*out)->line = m->line;
  (*out)->max_line = r->max_line;
  (*out)->max_refs = r->max_refs;
  (*out)->fast = r->fast;
  return GS_OK;
}

void gs_reader_free(gs_reader *r) {
  if (!r) return;
  gs_reader_ahead_stop_(r);
  free(r->buf);
  free(r->owned_ctx);
  free(r->refs);
  free(r);
}

void gs_reader_set_max_line(gs_reader *r, size_t max_line) {
  r->max_line = max_line < GS_READER_MIN_MAX_LINE ? GS_READER_MIN_MAX_LINE : max_line;
}

void gs_reader_set_max_refs(gs_reader *r, size_t max_refs) {
  r->max_refs = max_refs ? max_refs : 1;
}

void gs_reader_set_size_hint(gs_reader *r, uint64_t bytes) { r->size_hint = bytes; }

void gs_reader_set_fast_path(gs_reader *r, int on) { r->fast = on && GS_FAST_PATH; }

uint64_t gs_reader_size_hint(const gs_reader *r) { return r->size_hint; }

const gs_diag *gs_reader_diag(const gs_reader *r) {
  return r->ahead ? gs_reader_ahead_diag_(r) : &r->diag;
}

int gs_reader_tag(const gs_reader *r) { return r->ahead ? gs_reader_ahead_tag_(r) : 0; }

int gs_reader_block(const gs_reader *r, gs_refs_block *block) {
  return r->ahead ? gs_reader_ahead_block_(r, block) : GS_EINVAL;
}

uint64_t gs_reader_offset(const gs_reader *r) {
  return r->ahead ? gs_reader_ahead_offset_(r) : r->base + r->pos;
}

/* ---- diagnostics ----------------------------------------------------- */

static int fail(gs_reader *r, gs_diag_code code, const char *fmt, ...) {
  va_list ap;
  r->diag.code = code;
  r->diag.line = r->line;
  va_start(ap, fmt);
  vsnprintf(r->diag.message, sizeof r->diag.message, fmt, ap);
  va_end(ap);
  return GS_EFORMAT;
}

static int is_control(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* ---- input window ---------------------------------------------------- */

/* Moves the partial line to the front of the window, grows the window when
 * the partial line fills it, and reads one more block. */
int gs_reader_refill_(gs_reader *r) {
  size_t partial = r->end - r->pos, got = 0;
  int err;
  if (r->pos > 0) {
    memmove(r->buf, r->buf + r->pos, partial);
    r->base += r->pos;
    r->pos = 0;
    r->end = partial;
  }
  if (r->cap - r->end < r->cap / 4) {
    size_t cap = r->cap * 2;
    char *buf = realloc(r->buf, cap + GS_READER_PAD);
    if (!buf) return GS_ENOMEM;
    memset(buf + r->cap + GS_READER_PAD, 0, cap - r->cap);
    r->buf = buf;
    r->cap = cap;
  }
  err = r->fn(r->ctx, r->buf + r->end, r->cap - r->end - 1, &got);
  if (err) return err;
  if (got == 0) r->eof = 1;
  /* The partial line held no newline, so only the new bytes can. They
   * hold none at all in the middle of a long line: memchr says so at once,
   * where a byte-by-byte search back from the end would read them all. */
  r->complete = memchr(r->buf + r->end, '\n', got) ? r->end + got : 0;
  while (r->complete > r->end && r->buf[r->complete - 1] != '\n') r->complete--;
  r->end += got;
  return GS_OK;
}

int gs_reader_object_line_(const char *p, size_t n) {
  while (n && (*p == ' ' || *p == '\t')) p++, n--;
  return n >= 2 && p[0] == 'o' && (p[1] == ' ' || p[1] == '\t');
}

size_t gs_reader_stream_at_(const gs_reader *r) {
  return r->max_line < LONG_OBJECT ? r->max_line : LONG_OBJECT;
}

static int too_long(gs_reader *r) {
  return fail(r, GS_D_LINE_TOO_LONG, "line is longer than the limit of %lu bytes",
              (unsigned long)r->max_line);
}

/* Sets [*start, *stop) to the next line without its newline. Returns GS_OK,
 * GS_EOF, GS_EFORMAT for an overlong line, GS_READER_LONG_ before an object
 * line to parse in pieces, or an I/O error. */
static int next_line(gs_reader *r, const char **start, const char **stop) {
  for (;;) {
    char *p = r->buf + r->pos;
    size_t avail = r->end - r->pos;
    /* A long line arriving in small reads is searched once, not per read. */
    char *nl = avail > r->scanned ? memchr(p + r->scanned, '\n', avail - r->scanned) : NULL;
    size_t len = nl ? (size_t)(nl - p) : avail;
    int err;
    r->scanned = nl ? 0 : avail;
    if (nl || (r->eof && avail)) {
      /* A text editor may start the file with a UTF-8 byte order mark. */
      size_t bom = r->base + r->pos == 0 ? gs_utf8_bom((const unsigned char *)p, len) : 0;
      r->pos += len + (nl != NULL);
      r->scanned = 0;
      if (r->skip_line) { r->skip_line = 0; continue; }
      r->line++;
      if (len > r->max_line && !gs_reader_object_line_(p, len)) return too_long(r);
      /* The parsers rely on a non-hex byte right after the line. */
      if (!nl) p[len] = '\n';
      *start = p + bom;
      *stop = p + len;
      return GS_OK;
    }
    if (r->eof) return GS_EOF;
    if (!r->skip_line && avail > gs_reader_stream_at_(r) && gs_reader_object_line_(p, avail))
      return GS_READER_LONG_;
    if (r->skip_line || avail > r->max_line) {
      /* Report now and drop the rest of the line as it arrives, so that
       * memory stays bounded by the limit. */
      int reported = r->skip_line;
      r->base += r->end;
      r->pos = r->end = r->complete = r->scanned = 0;
      if (!reported) {
        r->skip_line = 1;
        r->line++;
        return too_long(r);
      }
    }
    if ((err = gs_reader_refill_(r))) { r->io_error = err; return err; }
  }
}

/* ---- fields ---------------------------------------------------------- */

static const char *skip_blanks(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  return p;
}

/* Parses one hex number at *pp (blanks before it skipped). Returns GS_OK,
 * GS_EOF when the line has no more fields, or GS_EFORMAT. The byte at e is
 * never a hex digit (see next_line), so the digit loop needs no bound. */
static int parse_hex(gs_reader *r, const char **pp, const char *e, const char *what,
                     uint64_t *out) {
  const unsigned char *p = (const unsigned char *)*pp, *start;
  uint64_t v = 0;
  unsigned c;
  while (cclass[*p] == SEP) p++;
  if ((const char *)p >= e) return GS_EOF;
  start = p;
  while ((c = cclass[*p]) & HEX) { v = (v << 4) | (c & 15); p++; }
  if (c != SEP && (const char *)p < e) {
    if (is_control(*p)) return fail(r, GS_D_NOT_TEXT, "control byte 0x%02x in %s", *p, what);
    return fail(r, GS_D_NOT_HEX, "%s is not a hex number: unexpected '%c'", what,
                *p < 0x80 ? *p : '?');
  }
  if (p - start > MAX_HEX_DIGITS) {
    while (*start == '0' && p - start > MAX_HEX_DIGITS) start++;
    if (p - start > MAX_HEX_DIGITS)
      return fail(r, GS_D_OVERFLOW, "%s %.*s does not fit in 64 bits", what,
                  (int)(p - start > 40 ? 40 : p - start), (const char *)start);
  }
  *pp = (const char *)p;
  *out = v;
  return GS_OK;
}

static int need_hex(gs_reader *r, const char **pp, const char *e, const char *what,
                    uint64_t *out) {
  int err = parse_hex(r, pp, e, what, out);
  if (err == GS_EOF) return fail(r, GS_D_MISSING_FIELD, "%s is missing", what);
  return err;
}

static int no_more_fields(gs_reader *r, const char *p, const char *e, const char *rec) {
  p = skip_blanks(p, e);
  if (p == e) return GS_OK;
  return fail(r, GS_D_EXTRA_FIELD, "%s has an extra field '%.*s'", rec,
              (int)(e - p > 40 ? 40 : e - p), p);
}

static int check_text(gs_reader *r, const char *s, const char *e, const char *what) {
  const unsigned char *p = (const unsigned char *)s, *end = (const unsigned char *)e;
  while (p < end) {
    size_t n;
    if (*p >= 0x20 && *p < 0x7f) { p++; continue; }
    if (*p < 0x80) {
      if (*p == '\t') { p++; continue; }
      return fail(r, GS_D_NOT_TEXT, "control byte 0x%02x in %s", *p, what);
    }
    if (!(n = gs_utf8_len(p, end)))
      return fail(r, GS_D_NOT_TEXT, "%s is not valid UTF-8 (byte 0x%02x)", what, *p);
    p += n;
  }
  return GS_OK;
}

/* Splits "NAME [TIMESTAMP]": the last blank-separated token is the timestamp
 * when it is a hex number and something comes before it. A name ending in a
 * hex-looking word written without a timestamp is therefore ambiguous; files
 * written by gcsnap always carry the timestamp. */
static int parse_name_timestamp(gs_reader *r, const char *p, const char *e,
                                const char *what, gs_record *rec) {
  const char *last = e, *q;
  p = skip_blanks(p, e);
  if (p == e) return fail(r, GS_D_MISSING_FIELD, "%s is missing", what);
  while (last > p && last[-1] != ' ' && last[-1] != '\t') last--;
  rec->has_timestamp = 0;
  if (last > p && e - last <= MAX_HEX_DIGITS) {
    uint64_t v = 0;
    for (q = last; q < e && (cclass[(unsigned char)*q] & HEX); q++)
      v = (v << 4) | (cclass[(unsigned char)*q] & 15);
    if (q == e) {
      rec->has_timestamp = 1;
      rec->timestamp = v;
      e = last;
      while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    }
  }
  rec->name = p;
  rec->name_len = (size_t)(e - p);
  return check_text(r, p, e, what);
}

/* ---- records --------------------------------------------------------- */

static int parse_section(gs_reader *r, const char *p, const char *e, gs_record *rec) {
  int err = need_hex(r, &p, e, "format version", &rec->id);
  if (err) return err;
  return parse_name_timestamp(r, p, e, "AppDomain name", rec);
}

static int parse_type(gs_reader *r, const char *p, const char *e, gs_record *rec) {
  int err = need_hex(r, &p, e, "type ID", &rec->id);
  if (err) return err;
  p = skip_blanks(p, e);
  if (p == e) return fail(r, GS_D_MISSING_FIELD, "type name is missing");
  rec->name = p;
  rec->name_len = (size_t)(e - p);
  return check_text(r, p, e, "type name");
}

int gs_reader_grow_refs_(gs_reader *r) {
  size_t cap = r->refs_cap ? r->refs_cap * 2 : 256;
  uint64_t *refs = realloc(r->refs, cap * sizeof *refs);
  if (!refs) return GS_ENOMEM;
  r->refs = refs;
  r->refs_cap = cap;
  return GS_OK;
}

static void start_record(const gs_reader *r, gs_record *rec, char letter) {
  rec->kind = (gs_record_kind)letter;
  rec->line = r->line;
  rec->has_timestamp = 0;
  rec->name = NULL;
  rec->name_len = 0;
  rec->nrefs = 0;
  rec->has_container = 0;
}

int gs_reader_too_many_refs_(gs_reader *r) {
  return fail(r, GS_D_TOO_MANY_REFS, "object has more than %lu references (the limit of one object)",
              (unsigned long)r->max_refs);
}

static const char *const object_field[3] = {"object ID", "type ID", "object size"};

/* Parses the numbers of an object line in [*pp, e), the k-th field of the
 * line first (0-2: ID, type, size; then references, counted in rec->nrefs).
 * Returns GS_EOF when they are all read, else an error. */
static int parse_object_fields(gs_reader *r, const char **pp, const char *e, unsigned *k,
                               gs_record *rec) {
  uint64_t *head[3];
  int err;
  head[0] = &rec->id; head[1] = &rec->type; head[2] = &rec->size;
  for (;; ++*k) {
    uint64_t v = 0;
    const char *start = skip_blanks(*pp, e);
    if (*k == 2 && start < e && *start == '-')
      return fail(r, GS_D_NEGATIVE_SIZE, "object size is negative");
    if ((err = parse_hex(r, pp, e, *k < 3 ? object_field[*k] : "reference", &v))) return err;
    /* An object line has no byte limit, but one number (leading zeros) has. */
    if ((size_t)(*pp - start) > r->max_line) return too_long(r);
    if (*k < 3) { *head[*k] = v; continue; }
    if (rec->nrefs == r->max_refs) return gs_reader_too_many_refs_(r);
    if (rec->nrefs == r->refs_cap && (err = gs_reader_grow_refs_(r))) return err;
    r->refs[rec->nrefs++] = v;
  }
}

/* The end of the object fields: an error, or GS_OK when the ID, type and
 * size were all there. */
static int object_done(gs_reader *r, int err, unsigned k, gs_record *rec) {
  if (err != GS_EOF) return err;
  if (k < 3) return fail(r, GS_D_MISSING_FIELD, "%s is missing", object_field[k]);
  rec->refs = r->refs;
  return GS_OK;
}

static int parse_object(gs_reader *r, const char *p, const char *e, gs_record *rec) {
  unsigned k = 0;
  int err = parse_object_fields(r, &p, e, &k, rec);
  return object_done(r, err, k, rec);
}

int gs_reader_parse_rest_(gs_reader *r, char *p, char *e, gs_record *rec) {
  unsigned k = 3;
  const char *q = p;
  start_record(r, rec, 'o');
  if (r->fast && gs_reader_fast_refs_(r, p, e, rec)) return object_done(r, GS_EOF, k, rec);
  while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
  return object_done(r, parse_object_fields(r, &q, e, &k, rec), k, rec);
}

/* Parses the object line at r->pos, which does not fit the window, as it
 * arrives: the numbers before the window's last blank, then the window is
 * refilled with the rest, until the line ends. A failure drops the rest of
 * the line. */
static int parse_long_object(gs_reader *r, gs_record *rec) {
  unsigned k = 0;
  int err;
  while (r->buf[r->pos] != 'o') r->pos++;
  r->pos++;
  r->line++;
  start_record(r, rec, 'o');
  for (;;) {
    char *p = r->buf + r->pos, *e = r->buf + r->end;
    char *nl = memchr(r->buf + r->pos, '\n', r->end - r->pos);
    const char *q = p;
    if (nl || r->eof) {
      if (nl) e = nl;
      else r->buf[r->end] = '\n';
      r->pos = (size_t)(e - r->buf) + (nl != NULL);
      r->scanned = 0;
      if (k >= 3 && r->fast && gs_reader_fast_refs_(r, p, e, rec)) return object_done(r, GS_EOF, k, rec);
      while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
      err = parse_object_fields(r, &q, e, &k, rec);
      return object_done(r, err, k, rec);
    }
    /* p is a blank: parse up to the window's last blank after it, before
     * which the numbers are whole. */
    while (e > p + 1 && e[-1] != ' ' && e[-1] != '\t') e--;
    if (e > p + 1) {
      e--;
      r->pos = (size_t)(e - r->buf);
      if (!(k >= 3 && r->fast && gs_reader_fast_refs_(r, p, e, rec)) &&
          (err = parse_object_fields(r, &q, e, &k, rec)) != GS_EOF) {
        r->skip_line = 1;
        return err;
      }
    } else if (r->end - r->pos - 1 > r->max_line) {
      /* One number over the line limit: what is wrong with it if anything,
       * as for a whole line, else its length. */
      r->buf[r->end] = '\n';
      r->skip_line = 1;
      err = parse_object_fields(r, &q, r->buf + r->end, &k, rec);
      return err == GS_EOF ? too_long(r) : err;
    }
    r->scanned = r->end - r->pos;
    if ((err = gs_reader_refill_(r))) { r->io_error = err; return err; }
  }
}

static int parse_root(gs_reader *r, const char *p, const char *e, gs_record *rec) {
  uint64_t kind, flags;
  int err;
  if ((err = need_hex(r, &p, e, "root object ID", &rec->id)) ||
      (err = need_hex(r, &p, e, "root kind", &kind)) ||
      (err = need_hex(r, &p, e, "root flags", &flags)))
    return err;
  if (kind >= GS_ROOT_KINDS)
    return fail(r, GS_D_ROOT_KIND, "root kind %llx is outside 0-5", (unsigned long long)kind);
  rec->root_kind = (unsigned)kind;
  rec->root_flags = flags > 0xffffffffu ? 0xffffffffu : (unsigned)flags;
  rec->has_container = 0;
  if (kind == GS_ROOT_STATIC) {
    err = parse_hex(r, &p, e, "static root container", &rec->type);
    if (err == GS_EOF)
      return fail(r, GS_D_STATIC_CONTAINER, "static root (kind 4) has no container type");
    if (err) return err;
    rec->has_container = 1;
  }
  return no_more_fields(r, p, e, "root record");
}

static int parse_end(gs_reader *r, const char *p, const char *e, gs_record *rec) {
  return parse_name_timestamp(r, p, e, "AppDomain name", rec);
}

static int parse_line(gs_reader *r, const char *p, const char *e, gs_record *rec) {
  char letter = *p;
  if (e - p > 1 && p[1] != ' ' && p[1] != '\t') letter = 0;
  start_record(r, rec, letter);
  switch (letter) {
  case 'o': return parse_object(r, p + 1, e, rec);
  case 'r': return parse_root(r, p + 1, e, rec);
  case 't': return parse_type(r, p + 1, e, rec);
  case 'a': return parse_section(r, p + 1, e, rec);
  case 'c': return parse_end(r, p + 1, e, rec);
  default: {
    const char *w = p;
    while (w < e && *w != ' ' && *w != '\t') w++;
    if (check_text(r, p, w, "record letter")) return GS_EFORMAT;
    return fail(r, GS_D_UNKNOWN_RECORD, "unknown record '%.*s' (expected a, t, o, r or c)",
                (int)(w - p > 20 ? 20 : w - p), p);
  }
  }
}

void gs_reader_trim_refs_(uint64_t **refs, size_t *cap) {
  if (*cap <= TRIM_REFS) return;
  free(*refs);
  *refs = NULL;
  *cap = 0;
}

int gs_reader_read_next_(gs_reader *r, gs_record *rec) {
  gs_reader_trim_refs_(&r->refs, &r->refs_cap);
  for (;;) {
    const char *p = NULL, *e = NULL;
    int err;
    if (r->io_error) return r->io_error;
    if (r->fast && r->pos < r->complete && !r->skip_line && r->buf[r->pos] == 'o' &&
        gs_reader_fast_object_(r, rec))
      return GS_OK;
    err = next_line(r, &p, &e);
    if (err == GS_READER_LONG_) return parse_long_object(r, rec);
    if (err) return err;
    while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
    p = skip_blanks(p, e);
    if (p == e) continue;   /* blank line */
    return parse_line(r, p, e, rec);
  }
}

int gs_reader_next(gs_reader *r, gs_record *rec) {
  return r->ahead ? gs_reader_ahead_next_(r, rec) : gs_reader_read_next_(r, rec);
}
