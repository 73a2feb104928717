/* gs_fastser.c - PerfView's FastSerialization stream, read forwards (see
 * gs_fastser.h). Nothing here trusts a length from the file to size
 * memory: strings grow the arena as their bytes arrive, skipped regions are
 * read and dropped. */
#include "gs_fastser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_error.h"

#define FS_BUF  65536u
#define FS_TAIL 65536u   /* last bytes kept for the trailer */

int gs_fs_init(gs_fs *s, gs_read_fn fn, void *ctx, char *err, size_t cap) {
  memset(s, 0, sizeof *s);
  s->fn = fn;
  s->ctx = ctx;
  s->err = err;
  s->cap = err ? cap : 0;
  s->buf = malloc(FS_BUF);
  return s->buf ? GS_OK : gs_fs_fail(s, GS_ENOMEM, 0, "out of memory");
}

void gs_fs_free(gs_fs *s) {
  free(s->buf);
  free(s->arena);
  free(s->tail);
  s->buf = NULL;
  s->arena = NULL;
  s->tail = NULL;
}

int gs_fs_fail(gs_fs *s, int code, uint64_t at, const char *fmt, ...) {
  va_list ap;
  int n;
  if (s->cap == 0) return code;
  n = snprintf(s->err, s->cap, "byte %llu: ", (unsigned long long)at);
  if (n >= 0 && (size_t)n < s->cap) {
    va_start(ap, fmt);
    vsnprintf(s->err + n, s->cap - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return code;
}

uint32_t gs_fs_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int gs_fs_grow(void **p, size_t *cap, size_t need, size_t elem) {
  size_t n = *cap ? *cap : 64;
  void *q;
  if (need <= *cap) return GS_OK;
  while (n < need) {
    if (n > SIZE_MAX / 2 / elem) return GS_ENOMEM;
    n *= 2;
  }
  q = realloc(*p, n * elem);
  if (!q) return GS_ENOMEM;
  *p = q;
  *cap = n;
  return GS_OK;
}

/* ---- bytes ------------------------------------------------------------------ */

static int fill(gs_fs *s) {
  size_t got = 0;
  int rc;
  if (s->read_rc < 0) return s->read_rc;
  if (s->pos < s->len || s->eof) return GS_OK;
  s->pos = s->len = 0;
  rc = s->fn(s->ctx, s->buf, FS_BUF, &got);
  if (rc < 0) {
    s->read_rc = rc;
    return gs_fs_fail(s, rc, s->off, "reading the file failed (%s)", gs_strerror(rc));
  }
  if (got > FS_BUF)
    return gs_fs_fail(s, GS_EIO, s->off, "the input callback returned too many bytes");
  s->len = got;
  s->eof = got == 0;
  return GS_OK;
}

/* Appends the k bytes at p to the tail, keeping its last FS_TAIL. */
static void keep(gs_fs *s, const unsigned char *p, size_t k) {
  size_t n = s->tail_len, held;
  if (!s->tail) return;
  if (k >= FS_TAIL) {
    memcpy(s->tail, p + k - FS_TAIL, FS_TAIL);
    s->tail_len = FS_TAIL;
    return;
  }
  held = n + k > FS_TAIL ? FS_TAIL - k : n;
  memmove(s->tail, s->tail + n - held, held);
  memcpy(s->tail + held, p, k);
  s->tail_len = held + k;
}

int gs_fs_get(gs_fs *s, void *dst, size_t n, const char *what) {
  unsigned char *d = dst;
  while (n > 0) {
    size_t k;
    int rc = fill(s);
    if (rc < 0) return rc;
    if (s->eof)
      return gs_fs_fail(s, GS_EFORMAT, s->off, "truncated file: it ends inside %s", what);
    k = s->len - s->pos < n ? s->len - s->pos : n;
    if (d) {
      memcpy(d, s->buf + s->pos, k);
      d += k;
    }
    keep(s, s->buf + s->pos, k);
    s->pos += k;
    s->off += k;
    n -= k;
  }
  return GS_OK;
}

int gs_fs_u8(gs_fs *s, unsigned *v, const char *what) {
  unsigned char b = 0;
  int rc = gs_fs_get(s, &b, 1, what);
  *v = b;
  return rc;
}

int gs_fs_i32(gs_fs *s, int32_t *v, const char *what) {
  unsigned char b[4] = {0};
  int rc = gs_fs_get(s, b, 4, what);
  uint32_t u = gs_fs_le32(b);
  *v = u <= INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
  return rc;
}

int gs_fs_count(gs_fs *s, uint32_t *v, uint32_t max, const char *what) {
  uint64_t at = s->off;
  int32_t n;
  int rc = gs_fs_i32(s, &n, what);
  if (rc < 0) return rc;
  if (n < 0) return gs_fs_fail(s, GS_EFORMAT, at, "%s is negative (%ld)", what, (long)n);
  if ((uint32_t)n > max)
    return gs_fs_fail(s, GS_ELIMIT, at, "%s is %ld, above the limit of %lu", what, (long)n,
                       (unsigned long)max);
  *v = (uint32_t)n;
  return GS_OK;
}

/* ---- strings -------------------------------------------------------------- */

static int put(gs_fs *s, const char *b, size_t n) {
  void *p = s->arena;
  int rc = gs_fs_grow(&p, &s->arena_cap, s->arena_len + n, 1);
  s->arena = p;
  if (rc < 0) return gs_fs_fail(s, rc, s->off, "out of memory for strings");
  memcpy(s->arena + s->arena_len, b, n);
  s->arena_len += n;
  return GS_OK;
}

/* Code point c as UTF-8; controls become '?' so that a name stays on its
 * record's line. */
static int put_utf8(gs_fs *s, uint32_t c) {
  char b[4];
  size_t n;
  if (c < 0x20 || c == 0x7f) c = '?';
  if (c < 0x80) {
    b[0] = (char)c;
    n = 1;
  } else if (c < 0x800) {
    b[0] = (char)(0xc0 | c >> 6);
    b[1] = (char)(0x80 | (c & 0x3f));
    n = 2;
  } else if (c < 0x10000) {
    b[0] = (char)(0xe0 | c >> 12);
    b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    b[2] = (char)(0x80 | (c & 0x3f));
    n = 3;
  } else {
    b[0] = (char)(0xf0 | c >> 18);
    b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    b[3] = (char)(0x80 | (c & 0x3f));
    n = 4;
  }
  return put(s, b, n);
}

/* One UTF-16 unit as the writer encodes it: 1, 2 or 3 bytes. */
static int get_unit(gs_fs *s, uint32_t *c) {
  unsigned b, b2, b3;
  int rc = gs_fs_u8(s, &b, "a string");
  if (rc < 0 || b < 0x80) {
    *c = b;
    return rc;
  }
  if ((rc = gs_fs_u8(s, &b2, "a string")) < 0) return rc;
  if (b < 0xe0) {
    *c = (b & 0x1fu) << 6 | (b2 & 0x3fu);
    return GS_OK;
  }
  if ((rc = gs_fs_u8(s, &b3, "a string")) < 0) return rc;
  *c = (b & 0xfu) << 12 | (b2 & 0x3fu) << 6 | (b3 & 0x3fu);
  return GS_OK;
}

static int string_length(gs_fs *s, int32_t *n, int *is_null) {
  uint64_t at = s->off;
  int rc = gs_fs_i32(s, n, "a string length");
  if (rc < 0) return rc;
  *is_null = *n == -1;
  if (*n < -1) return gs_fs_fail(s, GS_EFORMAT, at, "string length %ld is negative", (long)*n);
  return GS_OK;
}

int gs_fs_string(gs_fs *s, int *is_null, uint32_t max_units) {
  uint64_t at = s->off;
  int32_t n;
  uint32_t hi = 0, c;
  int rc = string_length(s, &n, is_null);
  if (rc < 0 || n <= 0) return rc;
  if ((uint32_t)n > max_units)
    return gs_fs_fail(s, GS_ELIMIT, at, "string of %ld characters, above the limit of %lu",
                       (long)n, (unsigned long)max_units);
  for (; n > 0; n--) {
    if ((rc = get_unit(s, &c)) < 0) return rc;
    if (hi && c >= 0xdc00 && c < 0xe000) {
      c = 0x10000 + ((hi - 0xd800) << 10) + (c - 0xdc00);
      hi = 0;
    } else if (hi) {
      if ((rc = put_utf8(s, 0xfffd)) < 0) return rc;
      hi = 0;
    }
    if (c >= 0xd800 && c < 0xdc00) hi = c;
    else if ((rc = put_utf8(s, c >= 0xdc00 && c < 0xe000 ? 0xfffd : c)) < 0) return rc;
  }
  return hi ? put_utf8(s, 0xfffd) : GS_OK;
}

int gs_fs_skip_string(gs_fs *s) {
  int32_t n;
  uint32_t c;
  int is_null, rc = string_length(s, &n, &is_null);
  for (; rc == GS_OK && n > 0; n--) rc = get_unit(s, &c);
  return rc;
}

/* ---- objects ---------------------------------------------------------------- */

int gs_fs_type(gs_fs *s, size_t *name_off, int32_t *version, int32_t *minver) {
  uint64_t at = s->off;
  unsigned tag;
  int32_t label;
  int is_null, rc = gs_fs_u8(s, &tag, "a type");
  if (rc < 0) return rc;
  *name_off = SIZE_MAX;
  *version = *minver = -1;
  if (tag == GS_FS_TAG_OBJREF) return gs_fs_i32(s, &label, "a type");
  if (tag != GS_FS_TAG_BEGIN && tag != GS_FS_TAG_BEGIN_PRIVATE)
    return gs_fs_fail(s, GS_EFORMAT, at, "expected a type object, found tag %u", tag);
  /* The type of a type object: null, or a reference to the first one. */
  if ((rc = gs_fs_u8(s, &tag, "a type")) < 0) return rc;
  if (tag == GS_FS_TAG_OBJREF) rc = gs_fs_i32(s, &label, "a type");
  else if (tag != GS_FS_TAG_NULL)
    return gs_fs_fail(s, GS_EFORMAT, at + 1, "unexpected tag %u for the type of a type", tag);
  if (rc < 0 || (rc = gs_fs_i32(s, version, "a type")) < 0 ||
      (rc = gs_fs_i32(s, minver, "a type")) < 0)
    return rc;
  *name_off = s->arena_len;
  if ((rc = gs_fs_string(s, &is_null, 4096)) < 0) return rc;
  at = s->off;
  if ((rc = gs_fs_u8(s, &tag, "a type")) < 0) return rc;
  return tag == GS_FS_TAG_END
             ? GS_OK
             : gs_fs_fail(s, GS_EFORMAT, at, "type object not closed (tag %u)", tag);
}

int gs_fs_begin(gs_fs *s, const char *want, int suffix, int32_t *version, int32_t *minver) {
  uint64_t at = s->off;
  size_t name, len, wl = strlen(want);
  unsigned tag;
  int32_t index;
  int ok, rc = gs_fs_u8(s, &tag, "an object");
  if (rc == GS_OK && tag == GS_FS_TAG_FWDDEF &&
      ((rc = gs_fs_i32(s, &index, "an object")) < 0 || (rc = gs_fs_u8(s, &tag, "an object")) < 0))
    return rc;
  if (rc < 0) return rc;
  if (tag != GS_FS_TAG_BEGIN && tag != GS_FS_TAG_BEGIN_PRIVATE)
    return gs_fs_fail(s, GS_EFORMAT, at, "expected the start of the %s object, found tag %u", want,
                       tag);
  at = s->off;
  if ((rc = gs_fs_type(s, &name, version, minver)) < 0) return rc;
  if (name == SIZE_MAX) return gs_fs_fail(s, GS_EFORMAT, at, "expected the %s type object", want);
  len = s->arena_len - name;
  ok = len >= wl && (suffix || len == wl) && memcmp(s->arena + s->arena_len - wl, want, wl) == 0;
  s->arena_len = name;
  return ok ? GS_OK : gs_fs_fail(s, GS_EFORMAT, at, "expected type %s", want);
}

/* ---- the end ------------------------------------------------------------------
 * The file ends with the forward reference table (a count and an int32 per
 * entry) right after the closing EndObject tag, the trailer (an int32
 * pointing at that table) and a last int32 pointing at the trailer. */
static int check_trailer(gs_fs *s, const unsigned char *t, size_t n) {
  uint64_t end = s->off, start = end - n, table;
  if (n < 13) return gs_fs_fail(s, GS_EFORMAT, end, "truncated file: it ends before the trailer");
  if (gs_fs_le32(t + n - 4) != end - 8)
    return gs_fs_fail(s, GS_EFORMAT, end,
                       "truncated file: the last 4 bytes do not point at the trailer");
  table = gs_fs_le32(t + n - 8);
  if (table <= start || table + 4 > end - 8)
    return gs_fs_fail(
        s, GS_EFORMAT, end - 8,
        "truncated or corrupt file: the trailer points at byte %llu, outside the last %lu bytes",
        (unsigned long long)table, (unsigned long)n);
  if (t[table - 1 - start] != GS_FS_TAG_END ||
      (uint64_t)gs_fs_le32(t + (table - start)) * 4 + table + 4 != end - 8)
    return gs_fs_fail(
        s, GS_EFORMAT, table,
        "truncated or corrupt file: the forward reference table does not end at the trailer");
  return GS_OK;
}

int gs_fs_keep_tail(gs_fs *s) {
  if (!s->tail && !(s->tail = malloc(FS_TAIL)))
    return gs_fs_fail(s, GS_ENOMEM, s->off, "out of memory");
  return GS_OK;
}

int gs_fs_finish(gs_fs *s) {
  int rc = gs_fs_keep_tail(s);
  while (rc == GS_OK && (rc = fill(s)) == GS_OK && !s->eof) {
    keep(s, s->buf + s->pos, s->len - s->pos);
    s->off += s->len - s->pos;
    s->pos = s->len;
  }
  return rc < 0 ? rc : check_trailer(s, s->tail, s->tail_len);
}

int gs_fs_is_header(const unsigned char *head, size_t n) {
  size_t m = sizeof GS_FS_MAGIC - 1;
  return head && n >= 4 + m && gs_fs_le32(head) == m && memcmp(head + 4, GS_FS_MAGIC, m) == 0;
}
