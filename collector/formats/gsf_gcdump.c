/* gsf_gcdump.c - .gcdump files (PerfView's FastSerialization of a MemoryGraph)
 * written as records.
 *
 * What the file holds, in order (gs_fastser.h reads the primitives):
 *   "!FastSerialization.1"
 *   the entry object, type "GCHeapDump"; its first field is the graph, an
 *   object of type "Graphs.MemoryGraph":
 *     int64 total size, int32 root node index
 *     int32 type count; per type: name, int32 size, module name
 *     int32 node count; per node: int32 offset of its record in the blob
 *     int32 blob length, the blob: per node, compressed ints
 *       (type << 1 | has size), [size], child count, (child - node index)...
 *     [a deferred region of extra type information, from version 1 on]
 *     int32 address count, an int64 address per node; tagged fields; End
 *   then the dump's own fields (heap information, collection log, machine
 *   and process name, ...) and the trailer.
 *
 * The graph comes whole before anything is written: the blob (a few bytes
 * per node and per reference, as the file holds it) and an int32 offset per
 * node are kept, then the nodes are written in index order, so a truncated
 * or corrupt file writes nothing. Every count and length from the file is
 * checked, and memory grows only with bytes actually read. */
#include "gsf_gcdump.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_error.h"
#include "gs_fastser.h"
#include "gsf_format.h"

#define GD_CHUNK (1u << 20)
#define GD_MAX_SEGMENTS 65536u

/* Node flags. */
#define NF_SKIP    1u   /* not an object: a "[...]" pseudo-node or undefined */
#define NF_VISITED 2u   /* pseudo-node already walked for roots */

typedef struct gd_type {
  size_t name_off;         /* in the arena */
  uint32_t name_len;
  int32_t size;
  unsigned char pseudo, written;
  unsigned char classified, cls;   /* the root class its name gives (roots) */
} gd_type;

typedef struct gd {
  gs_fs s;
  gs_writer *w;
  int32_t dump_version, graph_minver;
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
  uint64_t table_at;          /* file offset of the node table */
  uint64_t blob_at;           /* file offset of the blob */
  size_t process_off, process_len;   /* the process name, in the arena */
  /* PerfView may keep only a sample of a large heap: 1 in count_mult
   * objects on average, and at most 1 in type_mult of one type; a file
   * before version 8 only says whether it did (sampled). */
  float count_mult, type_mult;
  int sampled;
  uint64_t *refs;             /* room for the most references of an object */
  uint64_t *stack;            /* root walk: node index << 8 | class */
  size_t stack_len, stack_cap;
} gd;

static int read_header(gd *g) {
  unsigned char b[4 + sizeof GS_FS_MAGIC - 1];
  int32_t version;
  int rc = gs_fs_get(&g->s, b, sizeof b, "the header");
  if (rc < 0) return rc;
  if (!gs_fs_is_header(b, sizeof b))
    return gs_fs_fail(&g->s, GS_EFORMAT, 0, "not a FastSerialization file");
  if ((rc = gs_fs_begin(&g->s, "GCHeapDump", 0, &g->dump_version, &version)) < 0) return rc;
  return gs_fs_begin(&g->s, "MemoryGraph", 1, &version, &g->graph_minver);
}

/* ---- the graph -------------------------------------------------------------- */

/* A name the record format cannot hold (empty or blanks only) is written as
 * "(type N)". */
static int blank(const char *s, size_t n) {
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  return n == 0;
}

/* PerfView names its pseudo-nodes in brackets ("[.NET Roots]", "[static
 * var App.cache]", "[JS Roots]"); a JavaScript heap's objects may start
 * with one too ("[] (Type  JSArray)", an array element), but never end so.
 * An object a COM object stands behind is named "[RCW TYPE]" (dotnet-gcdump)
 * or "[RCW MODULE!TYPE RefCnt: N]" (PerfView): an object on the GC heap. */
static int pseudo_name(const char *s, size_t n) {
  return n >= 2 && s[0] == '[' && s[n - 1] == ']' && !(n > 5 && memcmp(s, "[RCW ", 5) == 0);
}

static int read_types(gd *g) {
  uint32_t i;
  int is_null, rc;
  if ((rc = gs_fs_count(&g->s, &g->ntypes, GSF_GCDUMP_MAX_TYPES, "the type count")) < 0) return rc;
  for (i = 0; i < g->ntypes; i++) {
    size_t mark;
    void *p = g->types;
    gd_type *t;
    rc = gs_fs_grow(&p, &g->types_cap, (size_t)i + 1, sizeof *t);
    g->types = p;
    if (rc < 0)
      return gs_fs_fail(&g->s, rc, g->s.off, "out of memory for %lu types",
                         (unsigned long)g->ntypes);
    t = &g->types[i];
    memset(t, 0, sizeof *t);
    t->name_off = g->s.arena_len;
    if ((rc = gs_fs_string(&g->s, &is_null, GSF_GCDUMP_MAX_NAME)) < 0) return rc;
    t->name_len = (uint32_t)(g->s.arena_len - t->name_off);
    if (blank(g->s.arena + t->name_off, t->name_len)) {
      g->s.arena_len = t->name_off;
      t->name_len = 0;
    }
    t->pseudo = pseudo_name(g->s.arena + t->name_off, t->name_len);
    if ((rc = gs_fs_i32(&g->s, &t->size, "a type")) < 0) return rc;
    mark = g->s.arena_len;   /* the module name is not kept */
    if ((rc = gs_fs_string(&g->s, &is_null, GSF_GCDUMP_MAX_NAME)) < 0) return rc;
    g->s.arena_len = mark;
  }
  return GS_OK;
}

/* The node table: the blob offset of each node's record. Memory grows with
 * the entries actually read, not with the count the file states. */
static int read_nodes(gd *g) {
  unsigned char b[4];
  uint32_t i;
  int rc;
  if ((rc = gs_fs_count(&g->s, &g->nnodes, INT32_MAX, "the node count")) < 0) return rc;
  g->table_at = g->s.off;
  for (i = 0; i < g->nnodes; i++) {
    void *p = g->node_off;
    rc = gs_fs_grow(&p, &g->node_cap, (size_t)i + 1, sizeof *g->node_off);
    g->node_off = p;
    if (rc < 0)
      return gs_fs_fail(&g->s, rc, g->s.off, "out of memory for %lu nodes",
                         (unsigned long)g->nnodes);
    if ((rc = gs_fs_get(&g->s, b, 4, "the node table")) < 0) return rc;
    g->node_off[i] = gs_fs_le32(b);
  }
  g->nflag = calloc(g->nnodes ? g->nnodes : 1, 1);
  return g->nflag ? GS_OK
                  : gs_fs_fail(&g->s, GS_ENOMEM, g->s.off, "out of memory for %lu nodes",
                                (unsigned long)g->nnodes);
}

static int read_blob(gd *g) {
  size_t cap = 0, have = 0;
  int rc;
  if ((rc = gs_fs_count(&g->s, &g->blob_len, INT32_MAX, "the node data length")) < 0) return rc;
  g->blob_at = g->s.off;
  while (have < g->blob_len) {
    size_t k = g->blob_len - have < GD_CHUNK ? g->blob_len - have : GD_CHUNK;
    void *p = g->blob;
    rc = gs_fs_grow(&p, &cap, have + k, 1);
    g->blob = p;
    if (rc < 0)
      return gs_fs_fail(&g->s, rc, g->s.off, "out of memory for %lu bytes of node data",
                         (unsigned long)g->blob_len);
    if ((rc = gs_fs_get(&g->s, g->blob + have, k, "the node data")) < 0) return rc;
    have += k;
  }
  return GS_OK;
}

/* ---- node records -------------------------------------------------------- */

/* One compressed int: 1 to 5 bytes, 7 bits each, the first sign-extended. */
static int cint(gd *g, uint32_t *pos, int32_t *v) {
  uint32_t r, b, i;
  *v = 0;
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
  return gs_fs_fail(&g->s, GS_EFORMAT, g->blob_at + g->blob_len,
                     "truncated node record: it runs past the end of the node data");
}

typedef struct gd_node {
  uint32_t type;
  int32_t size, nch;
  uint32_t pos;            /* blob offset of the first child */
} gd_node;

static int node_head(gd *g, uint32_t i, gd_node *n) {
  uint32_t pos = g->node_off[i];
  int32_t ts = 0;
  int rc;
  memset(n, 0, sizeof *n);
  if (pos >= g->blob_len)
    return gs_fs_fail(&g->s, GS_EFORMAT, g->table_at + 4 * (uint64_t)i,
                       "node %lu starts at byte %lu of the node data, which has %lu",
                       (unsigned long)i, (unsigned long)pos, (unsigned long)g->blob_len);
  if ((rc = cint(g, &pos, &ts)) < 0) return rc;
  if (ts < 0 || (uint32_t)ts >> 1 >= g->ntypes)
    return gs_fs_fail(&g->s, GS_EFORMAT, g->blob_at + g->node_off[i],
                       "node %lu has type %lu; the file has %lu types", (unsigned long)i,
                       (unsigned long)((uint32_t)ts >> 1), (unsigned long)g->ntypes);
  n->type = (uint32_t)ts >> 1;
  n->size = g->types[n->type].size;
  if ((ts & 1) && (rc = cint(g, &pos, &n->size)) < 0) return rc;
  if (n->size < 0)
    return gs_fs_fail(&g->s, GS_EFORMAT, g->blob_at + g->node_off[i],
                       "node %lu has a negative size", (unsigned long)i);
  if ((rc = cint(g, &pos, &n->nch)) < 0) return rc;
  if (n->nch < 0 || (uint32_t)n->nch > g->blob_len - pos)
    return gs_fs_fail(&g->s, GS_EFORMAT, g->blob_at + g->node_off[i],
                       "node %lu has %ld children, more than its record holds", (unsigned long)i,
                       (long)n->nch);
  n->pos = pos;
  return GS_OK;
}

static int next_child(gd *g, uint32_t i, gd_node *n, uint32_t *child) {
  uint32_t at = n->pos;
  int32_t d;
  int64_t c;
  int rc;
  *child = 0;
  rc = cint(g, &n->pos, &d);
  if (rc < 0) return rc;
  c = (int64_t)i + d;
  if (c < 0 || c >= (int64_t)g->nnodes)
    return gs_fs_fail(&g->s, GS_EFORMAT, g->blob_at + at,
                       "node %lu refers to node %lld; the file has %lu nodes", (unsigned long)i,
                       (long long)c, (unsigned long)g->nnodes);
  *child = (uint32_t)c;
  return GS_OK;
}

/* Decodes every node record before anything is written, so that a damaged
 * one fails the file whole, and marks the nodes that are not objects:
 * pseudo-nodes and undefined ones (all pointing at the placeholder record
 * at offset 0). */
static int check_nodes(gd *g) {
  uint32_t i, c, max_refs = 1, pseudo = 1;
  int32_t k;
  gd_node n;
  int rc;
  for (i = 0; i < g->nnodes; i++) {
    if ((rc = node_head(g, i, &n)) < 0) return rc;
    if (g->node_off[i] == 0 || g->types[n.type].pseudo) {
      g->nflag[i] |= NF_SKIP;
      pseudo++;
    } else if ((uint64_t)n.nch > gs_writer_max_refs(g->w))
      return gs_fs_fail(&g->s, GS_ELIMIT, g->blob_at + g->node_off[i],
                         "node %lu has %ld references, above " GSF_ONE_OBJECT_LIMIT " (%lu)",
                         (unsigned long)i, (long)n.nch, (unsigned long)gs_writer_max_refs(g->w));
    else if ((uint32_t)n.nch > max_refs)
      max_refs = (uint32_t)n.nch;
    for (k = 0; k < n.nch; k++)
      if ((rc = next_child(g, i, &n, &c)) < 0) return rc;
  }
  /* what writing needs, so that it fails only if the writer does */
  g->refs = calloc(max_refs, sizeof *g->refs);
  g->stack = calloc(pseudo, sizeof *g->stack);
  if (!g->refs || !g->stack)
    return gs_fs_fail(&g->s, GS_ENOMEM, g->s.off, "out of memory for the roots");
  g->stack_cap = pseudo;
  return GS_OK;
}

/* ---- records ------------------------------------------------------------- */

static int wfail(gd *g, int rc) {
  return gs_fs_fail(&g->s, rc, g->s.off, "writing the records failed (%s)", gs_strerror(rc));
}

static int write_type(gd *g, uint32_t t) {
  gd_type *ty = &g->types[t];
  char name[32];
  int rc;
  if (ty->written) return GS_OK;
  ty->written = 1;
  if (ty->name_len > 0) rc = gs_writer_type(g->w, t, g->s.arena + ty->name_off, ty->name_len);
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
  if ((rc = node_head(g, i, &n)) < 0) return rc;
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
 * name says nothing ("[other roots]") passes on its parent's class. */
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

#define INHERIT 0xffu

static unsigned class_of_name(const char *s, size_t n) {
  unsigned pinned = has(s, n, "pinned") ? GS_FLAG_PINNED : 0;
  if (starts(s, n, "[static var") || starts(s, n, "[thread static var"))
    return CLASS(GS_ROOT_STATIC, 0);
  if (starts(s, n, "[ccw") || has(s, n, "com/winrt") || has(s, n, "refcounted"))
    return CLASS(GS_ROOT_INTERNAL, 0);
  if (has(s, n, "finaliz")) return CLASS(GS_ROOT_FINALIZER, 0);
  if (has(s, n, "local var") || starts(s, n, "[stack]")) return CLASS(GS_ROOT_LOCAL, pinned);
  if (has(s, n, "dependent handle")) return CLASS(GS_ROOT_HANDLE, GS_FLAG_WEAK);
  if (has(s, n, "handle")) return CLASS(GS_ROOT_HANDLE, pinned);
  return INHERIT;
}

/* The class of pseudo-node p under a parent of class parent. Names are
 * looked at once per type, so that long names on many nodes cost nothing. */
static unsigned classify(gd *g, uint32_t p, unsigned parent) {
  gd_node n;
  gd_type *t;
  if (node_head(g, p, &n) < 0) return parent;   /* cannot fail: check_nodes() */
  t = &g->types[n.type];
  if (!t->classified) {
    t->cls = (unsigned char)class_of_name(g->s.arena + t->name_off, t->name_len);
    t->classified = 1;
  }
  return t->cls == INHERIT ? parent : t->cls;
}

static int write_root(gd *g, uint32_t id, unsigned cls) {
  gd_node n;
  unsigned kind = cls & 7u;
  int rc = node_head(g, id, &n);
  if (rc < 0) return rc;
  rc = gs_writer_root(g->w, id, kind, cls >> 3, kind == GS_ROOT_STATIC ? n.type : 0);
  return rc < 0 ? wfail(g, rc) : GS_OK;
}

/* Each pseudo-node is pushed once at most: check_nodes() made the room. */
static int push(gd *g, uint32_t node, unsigned cls) {
  assert(g->stack_len < g->stack_cap);
  g->nflag[node] |= NF_VISITED;
  g->stack[g->stack_len++] = (uint64_t)node << 8 | cls;
  return GS_OK;
}

/* Objects under one category, depth first: the objects a pseudo-node holds
 * directly, in order, then the pseudo-nodes it holds, last first. */
static int walk_category(gd *g, uint32_t cat, unsigned parent) {
  gd_node n;
  uint32_t p, c;
  int32_t k;
  int rc;
  if ((rc = push(g, cat, classify(g, cat, parent))) < 0) return rc;
  while (g->stack_len > 0) {
    uint64_t e = g->stack[--g->stack_len];
    unsigned cls = (unsigned)(e & 0xffu);
    p = (uint32_t)(e >> 8);
    if ((rc = node_head(g, p, &n)) < 0) return rc;
    for (k = 0; k < n.nch; k++) {
      if ((rc = next_child(g, p, &n, &c)) < 0) return rc;
      if (!(g->nflag[c] & NF_SKIP)) rc = write_root(g, c, cls);
      else if (g->node_off[c] != 0 && !(g->nflag[c] & NF_VISITED))
        rc = push(g, c, classify(g, c, cls));
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

/* ---- after the graph: only the process name is kept ---------------------
 * Each step returns a negative code, 1 when the layout was as expected, or 0
 * when it is one this reader does not follow (the section is then named
 * "gcdump"; the trailer is still checked). */

static int skip(gd *g, uint64_t n, const char *what) {
  int rc = GS_OK;
  while (rc == GS_OK && n > 0) {
    size_t k = n < GD_CHUNK ? (size_t)n : GD_CHUNK;
    rc = gs_fs_get(&g->s, NULL, k, what);
    n -= k;
  }
  return rc;
}

static int expect_end(gd *g) {
  unsigned tag;
  int rc = gs_fs_u8(&g->s, &tag, "an object");
  return rc < 0 ? rc : tag == GS_FS_TAG_END;
}

/* The MemoryGraph's fields after the blob: an address per node, then tagged
 * fields up to its EndObject. */
static int graph_rest(gd *g) {
  static const unsigned char size[] = {1, 2, 4, 8};
  uint32_t n;
  unsigned tag;
  int rc;
  if (g->graph_minver >= 1) return 0;   /* a deferred region comes first */
  if ((rc = gs_fs_count(&g->s, &n, INT32_MAX, "the address count")) < 0 ||
      (rc = skip(g, (uint64_t)n * 8, "the node addresses")) < 0)
    return rc;
  for (;;) {
    if ((rc = gs_fs_u8(&g->s, &tag, "the graph")) < 0) return rc;
    if (tag == GS_FS_TAG_END) return 1;
    if (tag >= GS_FS_TAG_BYTE && tag <= GS_FS_TAG_INT64)
      rc = skip(g, size[tag - GS_FS_TAG_BYTE], "the graph");
    else if (tag == GS_FS_TAG_STRING) rc = gs_fs_skip_string(&g->s);
    else if (tag == GS_FS_TAG_BLOB &&
             (rc = gs_fs_count(&g->s, &n, INT32_MAX, "a blob length")) == GS_OK)
      rc = skip(g, n, "a blob");
    else if (tag != GS_FS_TAG_BLOB) return 0;
    if (rc < 0) return rc;
  }
}

/* An object field: 1 when nothing follows (null or a reference), 2 when
 * its fields follow (*version is its type's, -1 when the type is a
 * reference to an earlier one). */
static int object_field(gd *g, int32_t *version) {
  unsigned tag;
  int32_t i, minver;
  size_t name;
  int rc = gs_fs_u8(&g->s, &tag, "an object");
  if (rc < 0) return rc;
  if (tag == GS_FS_TAG_NULL) return 1;
  if (tag == GS_FS_TAG_OBJREF) return (rc = gs_fs_i32(&g->s, &i, "an object")) < 0 ? rc : 1;
  if (tag != GS_FS_TAG_BEGIN && tag != GS_FS_TAG_BEGIN_PRIVATE) return 0;
  rc = gs_fs_type(&g->s, &name, version, &minver);
  return rc < 0 ? rc : 2;
}

/* The dump's heap information: its size, then its segments, six int64 each
 * (seven from the segment type's version 1 on). */
static int heap_info(gd *g) {
  int32_t v, segv = -1;
  uint32_t n, i;
  int rc = object_field(g, &v);
  if (rc != 2) return rc;
  if ((rc = skip(g, 8, "the heap information")) < 0 ||
      (rc = gs_fs_count(&g->s, &n, GD_MAX_SEGMENTS, "the segment count")) < 0)
    return rc;
  for (i = 0; i < n; i++) {
    if ((rc = object_field(g, &v)) != 2) {
      if (rc == 1) continue;
      return rc;
    }
    if (v >= 0) segv = v;
    if (segv < 0) return 0;
    if ((rc = skip(g, segv >= 1 ? 56 : 48, "a segment")) < 0 || (rc = expect_end(g)) <= 0)
      return rc;
  }
  return expect_end(g);
}

/* A float as FastSerialization writes it (IEEE 754, little-endian). */
static int read_float(gd *g, float *f, const char *what) {
  int32_t v;
  int rc = gs_fs_i32(&g->s, &v, what);
  uint32_t u = (uint32_t)v;
  memcpy(f, &u, sizeof *f);
  return rc;
}

/* Before version 8: 3 int64, then whether every object was dumped. */
static int old_sampling(gd *g) {
  unsigned all;
  int rc = skip(g, 24, "the dump");
  if (rc == GS_OK && (rc = gs_fs_u8(&g->s, &all, "the dump")) == GS_OK) g->sampled = !all;
  return rc;
}

/* After the process name: its ID, commit and working set, then a count
 * multiplier per type (none when the heap was not sampled). */
static int type_multipliers(gd *g) {
  uint32_t n, i;
  float m;
  int rc = skip(g, 20, "the dump");
  if (rc == GS_OK) rc = gs_fs_count(&g->s, &n, GSF_GCDUMP_MAX_TYPES, "the count multipliers");
  for (i = 0; rc == GS_OK && i < n; i++)
    if ((rc = read_float(g, &m, "a count multiplier")) == GS_OK && m > g->type_mult) g->type_mult = m;
  return rc;
}

static int dump_fields(gd *g) {
  int32_t v;
  int is_null, rc;
  if (g->dump_version < 5) return 0;
  if (g->dump_version < 8) rc = old_sampling(g);
  else if ((rc = skip(g, 1, "the dump")) == GS_OK &&    /* 64-bit */
           (rc = read_float(g, &g->count_mult, "the count multiplier")) == GS_OK &&
           (rc = skip(g, 4, "the dump")) == GS_OK &&     /* size multiplier */
           (rc = object_field(g, &v)) == 2)              /* JavaScript heap */
    rc = expect_end(g);
  if (rc == 1 && g->dump_version >= 8) rc = heap_info(g);
  if (rc < 0 || (g->dump_version >= 8 && rc == 0)) return rc;
  if ((rc = gs_fs_skip_string(&g->s)) < 0 || (rc = skip(g, 8, "the dump")) < 0 ||
      (rc = gs_fs_skip_string(&g->s)) < 0)   /* collection log, time, machine */
    return rc;
  g->process_off = g->s.arena_len;
  if ((rc = gs_fs_string(&g->s, &is_null, 4096)) < 0) return rc;
  g->process_len = g->s.arena_len - g->process_off;
  if (blank(g->s.arena + g->process_off, g->process_len)) g->process_len = 0;
  if (g->dump_version >= 8 && (rc = type_multipliers(g)) < 0) return rc;
  return 1;
}

/* ---- entry points ------------------------------------------------------------ */

static int read_graph(gd *g) {
  int32_t root;
  uint64_t root_at;
  size_t mark;
  int rc = read_header(g);
  if (rc < 0 || (rc = gs_fs_get(&g->s, NULL, 8, "the graph")) < 0) return rc;   /* total size */
  root_at = g->s.off;
  if ((rc = gs_fs_i32(&g->s, &root, "the graph")) < 0) return rc;
  if ((rc = read_types(g)) < 0 || (rc = read_nodes(g)) < 0 || (rc = read_blob(g)) < 0) return rc;
  /* The fields after the graph are read by guesswork for the process name:
   * a layout this reader does not know, or one that runs past the end,
   * only loses the name. Whether the file is whole is the trailer's say. */
  mark = g->s.arena_len;
  if ((rc = gs_fs_keep_tail(&g->s)) < 0) return rc;
  if ((rc = graph_rest(g)) == 1) rc = dump_fields(g);
  if (g->s.read_rc < 0) return g->s.read_rc;
  if (rc == GS_ENOMEM) return rc;
  if (rc != 1) {
    g->process_len = 0;
    g->count_mult = g->type_mult = 0;
    g->sampled = 0;
    g->s.arena_len = mark;
    if (g->s.cap) g->s.err[0] = '\0';
  }
  if ((rc = gs_fs_finish(&g->s)) < 0) return rc;
  if (root < 0 || (uint32_t)root >= g->nnodes)
    return gs_fs_fail(&g->s, GS_EFORMAT, root_at, "the root node %ld is not one of the %lu nodes",
                       (long)root, (unsigned long)g->nnodes);
  g->root = (uint32_t)root;
  return check_nodes(g);
}

static int write_all(gd *g) {
  const char *name = g->process_len ? g->s.arena + g->process_off : "gcdump";
  size_t len = g->process_len ? g->process_len : strlen(name);
  uint32_t i;
  int rc = gs_writer_section(g->w, 2, name, len, 0);
  if (rc < 0) return wfail(g, rc);
  for (i = 0; i < g->nnodes; i++)
    if (!(g->nflag[i] & NF_SKIP) && (rc = write_object(g, i)) < 0) return rc;
  if ((rc = write_roots(g)) < 0) return rc;
  rc = gs_writer_end(g->w, name, len, 0);
  return rc < 0 ? wfail(g, rc) : GS_OK;
}

/* Says in err, after a conversion that succeeded, that the heap was
 * sampled: the records hold the sample, which PerfView's own views scale. */
static void note_sampling(const gd *g, char *err, size_t cap) {
  char ratio[64] = "";
  if (!err || !cap) return;
  if (g->count_mult > 1.001f)
    snprintf(ratio, sizeof ratio, ", about 1 object in %.1f", (double)g->count_mult);
  else if (g->type_mult > 1.001f)
    snprintf(ratio, sizeof ratio, ", up to 1 object in %.1f of a type", (double)g->type_mult);
  else if (!g->sampled)
    return;
  snprintf(err, cap, "PerfView kept a sample of this heap%s: objects, bytes and references "
           "are the sample's, not scaled", ratio);
}

int gsf_gcdump_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap) {
  gd *g;
  int rc;
  if (err && cap) err[0] = '\0';
  if (!in || !w) return GS_EINVAL;
  if (!(g = calloc(1, sizeof *g))) {
    if (err && cap) snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  g->w = w;
  rc = gs_fs_init(&g->s, in, in_ctx, err, cap);
  if (rc == GS_OK) rc = read_graph(g);
  if (rc == GS_OK) rc = write_all(g);
  if (rc == GS_OK) note_sampling(g, err, cap);
  gs_fs_free(&g->s);
  free(g->types);
  free(g->node_off);
  free(g->nflag);
  free(g->blob);
  free(g->refs);
  free(g->stack);
  free(g);
  return rc;
}

int gsf_gcdump_sniff(const unsigned char *head, size_t n) {
  static const char magic[] = "!FastSerialization.1", type[] = "GCHeapDump";
  size_t p = 4 + sizeof magic - 1;
  if (!head || n < p || gs_fs_le32(head) != sizeof magic - 1 ||
      memcmp(head + 4, magic, sizeof magic - 1) != 0)
    return 0;
  /* BeginObject, the type object's BeginObject, the type's own type */
  if (n < p + 3 || head[p] != GS_FS_TAG_BEGIN || head[p + 1] != GS_FS_TAG_BEGIN) return 0;
  p += 2;
  if (head[p] == GS_FS_TAG_OBJREF) p += 4;
  else if (head[p] != GS_FS_TAG_NULL) return 0;
  p += 1 + 8;   /* version, minimum reader version */
  if (n < p + 4 + sizeof type - 1 || gs_fs_le32(head + p) != sizeof type - 1) return 0;
  return memcmp(head + p + 4, type, sizeof type - 1) == 0;
}
