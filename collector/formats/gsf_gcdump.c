/* gsf_gcdump.c - .gcdump files (PerfView's FastSerialization of a MemoryGraph)
 * written as records.
 *
 * Layout of the file, as PerfView and dotnet-gcdump write it (integers little
 * endian, strings an int32 count of UTF-16 units then each unit in 1 to 3
 * bytes, -1 for null):
 *   "!FastSerialization.1"
 *   BeginObject(4), type object "GCHeapDump"     the entry object
 *   BeginObject(4), type object "...MemoryGraph"  its first field, the graph:
 *     int64 total size, int32 root node index
 *     int32 type count, per type: name, int32 size, module name
 *     int32 node count, per node: int32 offset of its record in the blob
 *     int32 blob length, the blob: per node record compressed ints
 *       (type << 1 | has size), [size], child count, child - node index
 *     the rest of the graph (addresses, deferred region) and of the entry
 *     object (metadata), then the forward reference table, the trailer and
 *     a last int32 pointing at the trailer.
 * A type object is BeginObject, the type's own type (NullReference(1) or
 * ObjectReference(2) + int32), int32 version, int32 minimum reader version,
 * the type's full name, EndObject(6).
 *
 * The graph comes whole before anything is written: the nodes' records are
 * read into memory as the file holds them (the blob, a few bytes per node
 * and per reference) with an int32 offset per node, then written in node
 * order, so a truncated or corrupt file writes nothing. Every count and
 * length is checked against what was actually read before it sizes memory. */
#include "gsf_gcdump.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_error.h"

#define GD_BUF   65536u
#define GD_TAIL  65536u   /* last bytes kept to check the trailer */
#define GD_CHUNK (1u << 20)

enum { TAG_NULL = 1, TAG_OBJREF = 2, TAG_BEGIN = 4, TAG_BEGIN_PRIVATE = 5,
       TAG_END = 6, TAG_FWDDEF = 7 };

/* Node flags. */
#define NF_SKIP    1u   /* not an object: a "[...]" pseudo-node or undefined */
#define NF_VISITED 2u   /* pseudo-node already walked for roots */

typedef struct gd_type {
  size_t name_off;
  uint32_t name_len;
  int32_t size;
  unsigned char pseudo, written;
} gd_type;

typedef struct gd {
  gs_read_fn fn;
  void *ctx;
  unsigned char *buf;
  size_t pos, len;
  uint64_t off;               /* file offset of buf[pos] */
  int eof;
  char *err;
  size_t cap;
  gs_writer *w;

  char *names;                /* type names, UTF-8, one after another */
  size_t names_len, names_cap;
  gd_type *types;
  size_t types_cap;
  uint32_t ntypes;
  uint32_t root;
  uint32_t *node_off;
  size_t node_cap;
  unsigned char *nflag;
  uint32_t nnodes;
  unsigned char *blob;
  uint32_t blob_len;
  uint64_t blob_at;           /* file offset of the blob */
  uint64_t *refs;
  size_t refs_cap;
  uint64_t *stack;            /* root walk: node index << 8 | class */
  size_t stack_len, stack_cap;
  unsigned char *tail;
  size_t tail_len;
} gd;

static int fail(gd *g, int code, uint64_t at, const char *fmt, ...) {
  va_list ap;
  int n;
  if (g->cap == 0) return code;
  n = snprintf(g->err, g->cap, "byte %llu: ", (unsigned long long)at);
  if (n >= 0 && (size_t)n < g->cap) {
    va_start(ap, fmt);
    vsnprintf(g->err + n, g->cap - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* ---- input ---------------------------------------------------------------- */

static int fill(gd *g) {
  size_t got = 0;
  int rc;
  if (g->pos < g->len || g->eof) return GS_OK;
  g->pos = g->len = 0;
  rc = g->fn(g->ctx, g->buf, GD_BUF, &got);
  if (rc < 0) return fail(g, rc, g->off, "reading the file failed (%s)", gs_strerror(rc));
  if (got > GD_BUF) return fail(g, GS_EIO, g->off, "the input callback returned too many bytes");
  g->len = got;
  g->eof = got == 0;
  return GS_OK;
}

static int get(gd *g, void *dst, size_t n, const char *what) {
  unsigned char *d = dst;
  while (n > 0) {
    size_t k;
    int rc = fill(g);
    if (rc < 0) return rc;
    if (g->eof) return fail(g, GS_EFORMAT, g->off, "truncated file: it ends inside %s", what);
    k = g->len - g->pos < n ? g->len - g->pos : n;
    if (d) {
      memcpy(d, g->buf + g->pos, k);
      d += k;
    }
    g->pos += k;
    g->off += k;
    n -= k;
  }
  return GS_OK;
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int get_u8(gd *g, unsigned *v, const char *what) {
  unsigned char b;
  int rc = get(g, &b, 1, what);
  *v = b;
  return rc;
}

static int get_i32(gd *g, int32_t *v, const char *what) {
  unsigned char b[4];
  int rc = get(g, b, 4, what);
  uint32_t u = le32(b);
  *v = u <= INT32_MAX ? (int32_t)u : -(int32_t)(~u) - 1;
  return rc;
}

/* A count that must be 0..max; at is where it was read. */
static int get_count(gd *g, uint32_t *v, uint32_t max, const char *what) {
  uint64_t at = g->off;
  int32_t n;
  int rc = get_i32(g, &n, what);
  if (rc < 0) return rc;
  if (n < 0) return fail(g, GS_EFORMAT, at, "%s is negative (%ld)", what, (long)n);
  if ((uint32_t)n > max)
    return fail(g, GS_ELIMIT, at, "%s is %ld, above the limit of %lu", what, (long)n,
                (unsigned long)max);
  *v = (uint32_t)n;
  return GS_OK;
}

/* Makes room for need elements of size elem in *p (capacity *cap), doubling. */
static int grow(void **p, size_t *cap, size_t need, size_t elem) {
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

static int put_name(gd *g, const char *s, size_t n) {
  void *p = g->names;
  int rc = grow(&p, &g->names_cap, g->names_len + n, 1);
  g->names = p;
  if (rc < 0) return fail(g, rc, g->off, "out of memory for type names");
  memcpy(g->names + g->names_len, s, n);
  g->names_len += n;
  return GS_OK;
}

/* Appends code point c as UTF-8; controls become '?' so that a name stays on
 * its record's line. */
static int put_utf8(gd *g, uint32_t c) {
  char b[4];
  size_t n;
  if (c < 0x20 || c == 0x7f) c = '?';
  if (c < 0x80) { b[0] = (char)c; n = 1; }
  else if (c < 0x800) { b[0] = (char)(0xc0 | c >> 6); b[1] = (char)(0x80 | (c & 0x3f)); n = 2; }
  else if (c < 0x10000) {
    b[0] = (char)(0xe0 | c >> 12); b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    b[2] = (char)(0x80 | (c & 0x3f)); n = 3;
  } else {
    b[0] = (char)(0xf0 | c >> 18); b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3f)); b[3] = (char)(0x80 | (c & 0x3f)); n = 4;
  }
  return put_name(g, b, n);
}

/* One UTF-16 unit as FastSerialization writes it: 1, 2 or 3 bytes. */
static int get_unit(gd *g, uint32_t *c) {
  unsigned b, b2, b3;
  int rc = get_u8(g, &b, "a string");
  if (rc < 0 || b < 0x80) { *c = b; return rc; }
  if ((rc = get_u8(g, &b2, "a string")) < 0) return rc;
  if (b < 0xe0) { *c = (b & 0x1fu) << 6 | (b2 & 0x3fu); return GS_OK; }
  if ((rc = get_u8(g, &b3, "a string")) < 0) return rc;
  *c = (b & 0xfu) << 12 | (b2 & 0x3fu) << 6 | (b3 & 0x3fu);
  return GS_OK;
}

/* Reads a string and appends it to the name arena as UTF-8 (surrogate pairs
 * joined, lone ones U+FFFD). *is_null is set for a null string. */
static int get_string(gd *g, int *is_null) {
  uint64_t at = g->off;
  int32_t n;
  uint32_t hi = 0, c;
  int rc = get_i32(g, &n, "a string length");
  if (rc < 0) return rc;
  *is_null = n == -1;
  if (n == -1) return GS_OK;
  if (n < 0) return fail(g, GS_EFORMAT, at, "string length %ld is negative", (long)n);
  if ((uint32_t)n > GSF_GCDUMP_MAX_NAME)
    return fail(g, GS_ELIMIT, at, "string of %ld characters, above the limit of %u", (long)n,
                GSF_GCDUMP_MAX_NAME);
  for (; n > 0; n--) {
    if ((rc = get_unit(g, &c)) < 0) return rc;
    if (hi && c >= 0xdc00 && c < 0xe000) {
      rc = put_utf8(g, 0x10000 + ((hi - 0xd800) << 10) + (c - 0xdc00));
      hi = 0;
      if (rc < 0) return rc;
      continue;
    }
    if (hi && (rc = put_utf8(g, 0xfffd)) < 0) return rc;
    hi = 0;
    if (c >= 0xd800 && c < 0xdc00) hi = c;
    else if ((rc = put_utf8(g, c >= 0xdc00 && c < 0xe000 ? 0xfffd : c)) < 0) return rc;
  }
  return hi ? put_utf8(g, 0xfffd) : GS_OK;
}

/* ---- the object frame ----------------------------------------------------- */

/* Reads the start of an object whose type must be named `want` (or end with
 * it when suffix is set); *minver receives the type's minimum reader version. */
static int begin_object(gd *g, const char *want, int suffix, int32_t *minver) {
  uint64_t at = g->off, name_at;
  unsigned tag;
  int32_t skip, version;
  size_t mark = g->names_len, wl = strlen(want), len;
  int is_null, rc;
  if ((rc = get_u8(g, &tag, "an object")) < 0) return rc;
  if (tag == TAG_FWDDEF) {
    if ((rc = get_i32(g, &skip, "an object")) < 0 || (rc = get_u8(g, &tag, "an object")) < 0)
      return rc;
  }
  if (tag != TAG_BEGIN && tag != TAG_BEGIN_PRIVATE)
    return fail(g, GS_EFORMAT, at, "expected the start of the %s object, found tag %u", want, tag);
  at = g->off;
  if ((rc = get_u8(g, &tag, "a type")) < 0) return rc;
  if (tag != TAG_BEGIN && tag != TAG_BEGIN_PRIVATE)
    return fail(g, GS_EFORMAT, at, "expected the %s type object, found tag %u", want, tag);
  if ((rc = get_u8(g, &tag, "a type")) < 0) return rc;
  if (tag == TAG_OBJREF) rc = get_i32(g, &skip, "a type");
  else if (tag != TAG_NULL)
    return fail(g, GS_EFORMAT, at + 1, "unexpected tag %u for the type of a type", tag);
  if (rc < 0 || (rc = get_i32(g, &version, "a type")) < 0 || (rc = get_i32(g, minver, "a type")) < 0)
    return rc;
  name_at = g->off;
  if ((rc = get_string(g, &is_null)) < 0) return rc;
  len = g->names_len - mark;
  g->names_len = mark;
  if (is_null || len < wl || memcmp(g->names + mark + (suffix ? len - wl : 0), want, wl) != 0 ||
      (!suffix && len != wl))
    return fail(g, GS_EFORMAT, name_at, "expected type %s: not a .gcdump file", want);
  at = g->off;
  if ((rc = get_u8(g, &tag, "a type")) < 0) return rc;
  return tag == TAG_END ? GS_OK : fail(g, GS_EFORMAT, at, "type object not closed (tag %u)", tag);
}

static int read_header(gd *g) {
  static const char magic[] = "!FastSerialization.1";
  unsigned char b[4 + sizeof magic - 1];
  int32_t minver;
  int rc = get(g, b, sizeof b, "the header");
  if (rc < 0) return rc;
  if (le32(b) != sizeof magic - 1 || memcmp(b + 4, magic, sizeof magic - 1) != 0)
    return fail(g, GS_EFORMAT, 0, "not a FastSerialization file");
  if ((rc = begin_object(g, "GCHeapDump", 0, &minver)) < 0) return rc;
  return begin_object(g, "MemoryGraph", 1, &minver);
}

/* ---- the graph -------------------------------------------------------------- */

static int read_types(gd *g) {
  uint32_t i;
  int is_null, rc;
  if ((rc = get_count(g, &g->ntypes, GSF_GCDUMP_MAX_TYPES, "the type count")) < 0) return rc;
  for (i = 0; i < g->ntypes; i++) {
    size_t mark;
    void *p = g->types;
    gd_type *t;
    rc = grow(&p, &g->types_cap, (size_t)i + 1, sizeof *t);
    g->types = p;
    if (rc < 0) return fail(g, rc, g->off, "out of memory for %u types", g->ntypes);
    t = &g->types[i];
    memset(t, 0, sizeof *t);
    t->name_off = g->names_len;
    if ((rc = get_string(g, &is_null)) < 0) return rc;
    t->name_len = (uint32_t)(g->names_len - t->name_off);
    t->pseudo = t->name_len > 0 && g->names[t->name_off] == '[';
    if ((rc = get_i32(g, &t->size, "a type")) < 0) return rc;
    mark = g->names_len;
    if ((rc = get_string(g, &is_null)) < 0) return rc;   /* module name: not kept */
    g->names_len = mark;
  }
  return GS_OK;
}

/* The node table: the blob offset of each node's record. Memory grows with
 * the entries actually read, not with the count the file states. */
static int read_nodes(gd *g) {
  unsigned char b[4];
  uint32_t i;
  int rc;
  if ((rc = get_count(g, &g->nnodes, INT32_MAX, "the node count")) < 0) return rc;
  for (i = 0; i < g->nnodes; i++) {
    void *p = g->node_off;
    rc = grow(&p, &g->node_cap, (size_t)i + 1, sizeof *g->node_off);
    g->node_off = p;
    if (rc < 0) return fail(g, rc, g->off, "out of memory for %u nodes", g->nnodes);
    if ((rc = get(g, b, 4, "the node table")) < 0) return rc;
    g->node_off[i] = le32(b);
  }
  g->nflag = calloc(g->nnodes ? g->nnodes : 1, 1);
  return g->nflag ? GS_OK : fail(g, GS_ENOMEM, g->off, "out of memory for %u nodes", g->nnodes);
}

static int read_blob(gd *g) {
  size_t cap = 0, have = 0;
  int rc;
  if ((rc = get_count(g, &g->blob_len, INT32_MAX, "the node data length")) < 0) return rc;
  g->blob_at = g->off;
  while (have < g->blob_len) {
    size_t k = g->blob_len - have < GD_CHUNK ? g->blob_len - have : GD_CHUNK;
    void *p = g->blob;
    rc = grow(&p, &cap, have + k, 1);
    g->blob = p;
    if (rc < 0) return fail(g, rc, g->off, "out of memory for %u bytes of node data", g->blob_len);
    if ((rc = get(g, g->blob + have, k, "the node data")) < 0) return rc;
    have += k;
  }
  return GS_OK;
}

/* Reads the rest of the file, keeping its last bytes, and checks the
 * FastSerialization trailer: a last int32 pointing 8 bytes before the end at
 * the trailer, whose int32 points at the forward reference table (a count
 * and an int32 per entry) that follows the closing EndObject tag. A file cut
 * anywhere after the graph fails here. */
static int read_tail(gd *g) {
  uint64_t end, table, start;
  uint32_t count;
  const unsigned char *t;
  int rc;
  if (!(g->tail = malloc(GD_TAIL))) return fail(g, GS_ENOMEM, g->off, "out of memory");
  for (;;) {
    size_t k;
    if ((rc = fill(g)) < 0) return rc;
    if (g->eof) break;
    k = g->len - g->pos;
    if (k >= GD_TAIL) {
      memcpy(g->tail, g->buf + g->len - GD_TAIL, GD_TAIL);
      g->tail_len = GD_TAIL;
    } else {
      size_t keep = g->tail_len + k > GD_TAIL ? GD_TAIL - k : g->tail_len;
      memmove(g->tail, g->tail + g->tail_len - keep, keep);
      memcpy(g->tail + keep, g->buf + g->pos, k);
      g->tail_len = keep + k;
    }
    g->off += k;
    g->pos = g->len;
  }
  end = g->off;
  start = end - g->tail_len;
  t = g->tail;
  if (g->tail_len < 13)
    return fail(g, GS_EFORMAT, end, "truncated file: it ends before the serialization trailer");
  if (le32(t + g->tail_len - 4) != end - 8)
    return fail(g, GS_EFORMAT, end, "truncated file: the last 4 bytes do not point at the trailer");
  table = le32(t + g->tail_len - 8);
  if (table <= start || table + 4 > end - 8)
    return fail(g, GS_EFORMAT, end - 8, "the trailer points outside the end of the file");
  count = le32(t + (table - start));
  if (t[table - 1 - start] != TAG_END || (uint64_t)count * 4 + table + 4 != end - 8)
    return fail(g, GS_EFORMAT, table, "the forward reference table is malformed (truncated file?)");
  return GS_OK;
}

/* ---- node records -------------------------------------------------------- */

/* One compressed int: 1 to 5 bytes, 7 bits each, the first sign-extended. */
static int cint(gd *g, uint32_t *pos, int32_t *v) {
  uint32_t r, b, i;
  if (*pos >= g->blob_len) goto past;
  b = g->blob[(*pos)++];
  r = (b & 0x40u) ? (b | 0xffffff80u) : (b & 0x7fu);
  for (i = 1; (b & 0x80u) && i < 5; i++) {
    if (*pos >= g->blob_len) goto past;
    b = g->blob[(*pos)++];
    r = r << 7 | (i == 4 ? b : (b & 0x7fu));
  }
  *v = r <= INT32_MAX ? (int32_t)r : -(int32_t)(~r) - 1;
  return GS_OK;
past:
  return fail(g, GS_EFORMAT, g->blob_at + g->blob_len, "truncated node record: it runs past the end of the node data");
}

typedef struct gd_node {
  uint32_t type;
  int32_t size, nch;
  uint32_t pos;            /* blob offset of the first child */
} gd_node;

static int node_head(gd *g, uint32_t i, gd_node *n) {
  uint32_t pos = g->node_off[i];
  int32_t ts;
  int rc;
  if (pos >= g->blob_len)
    return fail(g, GS_EFORMAT, g->blob_at - 4, "node %lu starts at byte %lu of the node data, which has %lu",
                (unsigned long)i, (unsigned long)pos, (unsigned long)g->blob_len);
  if ((rc = cint(g, &pos, &ts)) < 0) return rc;
  if (ts < 0 || (uint32_t)ts >> 1 >= g->ntypes)
    return fail(g, GS_EFORMAT, g->blob_at + g->node_off[i], "node %lu has type %ld; the file has %lu types",
                (unsigned long)i, (long)(ts >> 1), (unsigned long)g->ntypes);
  n->type = (uint32_t)ts >> 1;
  n->size = g->types[n->type].size;
  if ((ts & 1) && (rc = cint(g, &pos, &n->size)) < 0) return rc;
  if (n->size < 0)
    return fail(g, GS_EFORMAT, g->blob_at + g->node_off[i], "node %lu has a negative size", (unsigned long)i);
  if ((rc = cint(g, &pos, &n->nch)) < 0) return rc;
  if (n->nch < 0 || (uint32_t)n->nch > g->blob_len - pos)
    return fail(g, GS_EFORMAT, g->blob_at + g->node_off[i], "node %lu has %ld children, more than its record holds",
                (unsigned long)i, (long)n->nch);
  n->pos = pos;
  return GS_OK;
}

static int next_child(gd *g, uint32_t i, gd_node *n, uint32_t *child) {
  uint32_t at = n->pos;
  int32_t d;
  int64_t c;
  int rc = cint(g, &n->pos, &d);
  if (rc < 0) return rc;
  c = (int64_t)i + d;
  if (c < 0 || c >= (int64_t)g->nnodes)
    return fail(g, GS_EFORMAT, g->blob_at + at, "node %lu refers to node %lld; the file has %lu nodes",
                (unsigned long)i, (long long)c, (unsigned long)g->nnodes);
  *child = (uint32_t)c;
  return GS_OK;
}

/* Undefined nodes all point at the placeholder record at offset 0. */
static int mark_skipped(gd *g) {
  uint32_t i;
  gd_node n;
  int rc;
  for (i = 0; i < g->nnodes; i++) {
    if ((rc = node_head(g, i, &n)) < 0) return rc;
    if (g->node_off[i] == 0 || g->types[n.type].pseudo) g->nflag[i] |= NF_SKIP;
  }
  return GS_OK;
}

/* ---- records ------------------------------------------------------------- */

static int wfail(gd *g, int rc) {
  return fail(g, rc, g->off, "writing the records failed (%s)", gs_strerror(rc));
}

static int write_type(gd *g, uint32_t t) {
  gd_type *ty = &g->types[t];
  char name[32];
  int rc;
  if (ty->written) return GS_OK;
  ty->written = 1;
  if (ty->name_len > 0) rc = gs_writer_type(g->w, t, g->names + ty->name_off, ty->name_len);
  else {
    snprintf(name, sizeof name, "(type %lu)", (unsigned long)t);
    rc = gs_writer_type(g->w, t, name, strlen(name));
  }
  return rc < 0 ? wfail(g, rc) : GS_OK;
}

static int write_object(gd *g, uint32_t i) {
  gd_node n;
  uint32_t c;
  size_t nrefs = 0;
  int32_t k;
  int rc;
  void *p = g->refs;
  if ((rc = node_head(g, i, &n)) < 0) return rc;
  if ((uint32_t)n.nch > GSF_GCDUMP_MAX_OBJ_REFS)
    return fail(g, GS_ELIMIT, g->blob_at + g->node_off[i], "node %lu has %ld references, above the limit of %u",
                (unsigned long)i, (long)n.nch, GSF_GCDUMP_MAX_OBJ_REFS);
  rc = grow(&p, &g->refs_cap, (size_t)n.nch, sizeof *g->refs);
  g->refs = p;
  if (rc < 0) return fail(g, rc, g->off, "out of memory for the references of node %lu", (unsigned long)i);
  for (k = 0; k < n.nch; k++) {
    if ((rc = next_child(g, i, &n, &c)) < 0) return rc;
    if (!(g->nflag[c] & NF_SKIP)) g->refs[nrefs++] = c;
  }
  if ((rc = write_type(g, n.type)) < 0) return rc;
  rc = gs_writer_object(g->w, i, n.type, (uint64_t)n.size, g->refs, nrefs);
  return rc < 0 ? wfail(g, rc) : GS_OK;
}

/* ---- roots ------------------------------------------------------------------
 * A class is a root kind (bits 0-2) and flags (bits 3-5). The pseudo-nodes
 * under the root node name why their children are live; a pseudo-node whose
 * name says nothing (an RCW, "[other roots]") passes on its parent's class. */
#define CLASS(kind, flags) ((unsigned)(kind) | (unsigned)(flags) << 3)

static int has(const char *s, size_t n, const char *word) {
  size_t w = strlen(word), i, j;
  for (i = 0; i + w <= n; i++) {
    for (j = 0; j < w; j++) {
      char c = s[i + j];
      if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
      if (c != word[j]) break;
    }
    if (j == w) return 1;
  }
  return 0;
}

static int starts(const char *s, size_t n, const char *word) {
  return n >= strlen(word) && has(s, strlen(word), word);
}

static unsigned classify(const char *s, size_t n, unsigned parent) {
  unsigned pinned = has(s, n, "pinned") ? GS_FLAG_PINNED : 0;
  if (starts(s, n, "[static var") || starts(s, n, "[thread static var")) return CLASS(GS_ROOT_STATIC, 0);
  if (starts(s, n, "[rcw")) return parent;
  if (starts(s, n, "[ccw") || has(s, n, "com/winrt") || has(s, n, "refcounted"))
    return CLASS(GS_ROOT_INTERNAL, 0);
  if (has(s, n, "finaliz")) return CLASS(GS_ROOT_FINALIZER, 0);
  if (has(s, n, "local var") || starts(s, n, "[stack]")) return CLASS(GS_ROOT_LOCAL, pinned);
  if (has(s, n, "dependent handle")) return CLASS(GS_ROOT_HANDLE, GS_FLAG_WEAK);
  if (has(s, n, "handle")) return CLASS(GS_ROOT_HANDLE, pinned);
  return parent;
}

static int write_root(gd *g, uint32_t id, unsigned cls) {
  gd_node n;
  unsigned kind = cls & 7u;
  int rc = node_head(g, id, &n);
  if (rc < 0) return rc;
  rc = gs_writer_root(g->w, id, kind, cls >> 3, kind == GS_ROOT_STATIC ? n.type : 0);
  return rc < 0 ? wfail(g, rc) : GS_OK;
}

static int push(gd *g, uint32_t node, unsigned cls) {
  void *p = g->stack;
  int rc = grow(&p, &g->stack_cap, g->stack_len + 1, sizeof *g->stack);
  g->stack = p;
  if (rc < 0) return fail(g, rc, g->off, "out of memory for the roots");
  g->nflag[node] |= NF_VISITED;
  g->stack[g->stack_len++] = (uint64_t)node << 8 | cls;
  return GS_OK;
}

/* Objects under one category, depth first: the objects a pseudo-node holds
 * directly, in order, then the pseudo-nodes it holds, last first. */
static int walk_category(gd *g, uint32_t cat, unsigned parent) {
  const gd_type *t;
  gd_node n;
  uint32_t p, c;
  int32_t k;
  int rc;
  n.type = 0;
  if ((rc = node_head(g, cat, &n)) < 0) return rc;
  t = &g->types[n.type];
  if ((rc = push(g, cat, classify(g->names + t->name_off, t->name_len, parent))) < 0) return rc;
  while (g->stack_len > 0) {
    uint64_t e = g->stack[--g->stack_len];
    unsigned cls = (unsigned)(e & 0xffu);
    p = (uint32_t)(e >> 8);
    if ((rc = node_head(g, p, &n)) < 0) return rc;
    for (k = 0; k < n.nch; k++) {
      if ((rc = next_child(g, p, &n, &c)) < 0) return rc;
      if (!(g->nflag[c] & NF_SKIP)) rc = write_root(g, c, cls);
      else if (g->node_off[c] != 0 && !(g->nflag[c] & NF_VISITED)) {
        gd_node cn;
        if ((rc = node_head(g, c, &cn)) < 0) return rc;
        t = &g->types[cn.type];
        rc = push(g, c, classify(g->names + t->name_off, t->name_len, cls));
      }
      if (rc < 0) return rc;
    }
  }
  return GS_OK;
}

static int write_roots(gd *g) {
  const unsigned other = CLASS(GS_ROOT_INTERNAL, 0);
  gd_node n;
  uint32_t c;
  int32_t k;
  int rc;
  if (!(g->nflag[g->root] & NF_SKIP)) return write_root(g, g->root, other);
  g->nflag[g->root] |= NF_VISITED;
  if ((rc = node_head(g, g->root, &n)) < 0) return rc;
  for (k = 0; k < n.nch; k++) {
    if ((rc = next_child(g, g->root, &n, &c)) < 0) return rc;
    if (!(g->nflag[c] & NF_SKIP)) rc = write_root(g, c, other);
    else if (g->node_off[c] != 0 && !(g->nflag[c] & NF_VISITED)) rc = walk_category(g, c, other);
    if (rc < 0) return rc;
  }
  return GS_OK;
}

/* ---- entry points ------------------------------------------------------------ */

static int read_graph(gd *g) {
  unsigned char b[12];
  int32_t root;
  int rc = read_header(g);
  if (rc < 0 || (rc = get(g, b, 8, "the graph")) < 0) return rc;   /* total size */
  if ((rc = get_i32(g, &root, "the graph")) < 0) return rc;
  if ((rc = read_types(g)) < 0 || (rc = read_nodes(g)) < 0 || (rc = read_blob(g)) < 0 ||
      (rc = read_tail(g)) < 0)
    return rc;
  if (root < 0 || (uint32_t)root >= g->nnodes)
    return fail(g, GS_EFORMAT, g->blob_at, "the root node %ld is not one of the %lu nodes", (long)root,
                (unsigned long)g->nnodes);
  g->root = (uint32_t)root;
  return mark_skipped(g);
}

static int write_all(gd *g) {
  static const char section[] = "gcdump";
  uint32_t i;
  int rc = gs_writer_section(g->w, 2, section, sizeof section - 1, 0);
  if (rc < 0) return wfail(g, rc);
  for (i = 0; i < g->nnodes; i++)
    if (!(g->nflag[i] & NF_SKIP) && (rc = write_object(g, i)) < 0) return rc;
  if ((rc = write_roots(g)) < 0) return rc;
  rc = gs_writer_end(g->w, section, sizeof section - 1, 0);
  return rc < 0 ? wfail(g, rc) : GS_OK;
}

int gsf_gcdump_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap) {
  gd *g;
  int rc;
  if (err && cap) err[0] = '\0';
  if (!in || !w) return GS_EINVAL;
  g = calloc(1, sizeof *g);
  if (!g || !(g->buf = malloc(GD_BUF))) {
    free(g);
    if (err && cap) snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  g->fn = in;
  g->ctx = in_ctx;
  g->w = w;
  g->err = err;
  g->cap = err ? cap : 0;
  rc = read_graph(g);
  if (rc == GS_OK) rc = write_all(g);
  free(g->buf);
  free(g->names);
  free(g->types);
  free(g->node_off);
  free(g->nflag);
  free(g->blob);
  free(g->refs);
  free(g->stack);
  free(g->tail);
  free(g);
  return rc;
}

int gsf_gcdump_sniff(const unsigned char *head, size_t n) {
  static const char magic[] = "!FastSerialization.1", type[] = "GCHeapDump";
  size_t p = 4 + sizeof magic - 1;
  if (!head || n < p || le32(head) != sizeof magic - 1 || memcmp(head + 4, magic, sizeof magic - 1) != 0)
    return 0;
  /* BeginObject, the type object's BeginObject, the type's own type */
  if (n < p + 3 || head[p] != TAG_BEGIN || head[p + 1] != TAG_BEGIN) return 0;
  p += 2;
  if (head[p] == TAG_OBJREF) p += 4;
  else if (head[p] != TAG_NULL) return 0;
  p += 1 + 8;   /* version, minimum reader version */
  if (n < p + 4 + sizeof type - 1 || le32(head + p) != sizeof type - 1) return 0;
  return memcmp(head + p + 4, type, sizeof type - 1) == 0;
}
