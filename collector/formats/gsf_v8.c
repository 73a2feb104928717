/* gsf_v8.c - V8 heap snapshots (.heapsnapshot) as records.
 *
 * V8 writes snapshot.meta, then "nodes" (a flat array of numbers, node
 * after node), then "edges" (each node's edges in node order), then
 * "strings" last. So the nodes are kept in a flat table (24 bytes each plus
 * their type); each node's object record is written as soon as its edges
 * have streamed past; the type records follow once the strings arrive.
 * Synthetic nodes (the root, "(GC roots)" and its categories) and their
 * edges are kept until then, since only their names say which roots they
 * stand for; so are native nodes when Blink gave some a DOM state, which
 * is passed on through the kept edges first (gsf_v8dom).
 *
 * The nodes and edges are nearly all of a snapshot's bytes, and a JSON
 * tokenizer spends most of its time on them: yajl reads everything up to
 * the bracket that opens either array, then the numbers are read by
 * gsf_numlist, and yajl takes over again from the bracket that closes it
 * (an empty array to yajl). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gsf_numlist.h"
#include "gsf_text.h"
#include "gsf_v8.h"
#include "gsf_v8dom.h"

#define BLOCK (64u << 10)
#define MAX_DEPTH 32
#define MAX_NODE_TYPES (GSF_V8_TYPE + 1)
#define MAX_FIELDS 32
/* References of one object: as many as the record reader takes. */
#define MAX_REFS GS_READER_DEFAULT_MAX_REFS
/* Type IDs of the node types named by category ("(string)", ...): above
 * every string index, which name the other types. */
#define CATEGORY_TYPE 0x100000000ull
/* Type IDs of detached DOM nodes: 2^33 + the string index of their name. */
#define DETACHED_TYPE 0x200000000ull
#define NONE SIZE_MAX
/* types[] holds a node's type number and DOM state (gsf_v8dom.h), and: */
#define DROPPED 0x80   /* a synthetic node that is no object */
#define INFO_WEAK 0x08
#define INFO_GC_ROOTS 0x10
#define INFO_DETACHED 0x20  /* a detached node has this name */

typedef enum {
  C_SKIP, C_TOP, C_SNAPSHOT, C_META, C_NODE_FIELDS, C_NODE_TYPES, C_NODE_TYPE_LIST,
  C_EDGE_FIELDS, C_EDGE_TYPES, C_EDGE_TYPE_LIST, C_NODES, C_EDGES, C_STRINGS
} json_ctx;

typedef struct v8_node {
  uint64_t id, size;
  uint32_t name, edges;
} v8_node;

typedef struct v8 {
  yajl_handle h;
  gs_writer *w;
  char *err;
  size_t errcap;
  int rc;
  uint64_t base;                     /* input offset of the current block */
  unsigned depth;
  unsigned char stack[MAX_DEPTH + 1];
  /* the numbers of the nodes or edges, read apart (see the top comment) */
  int numbers;                       /* inside them */
  gsf_numlist list;
  uint64_t at;                       /* input offset of the byte read */
  uint32_t elems[MAX_DEPTH + 1];     /* values seen in each open array */
  json_ctx pending;                  /* context of a map's next value */
  int phase;                         /* 0 meta, 1 nodes, 2 edges, 3 strings, 4 done */
  /* meta */
  unsigned nf, ef, nfield_names, efield_names;
  int f_type, f_name, f_id, f_size, f_edges, f_detached, e_type, e_to;
  unsigned nntypes, netypes;
  int named[MAX_NODE_TYPES];         /* type name = the node's name */
  char label[MAX_NODE_TYPES][32];    /* else this category */
  int synthetic, native;             /* node type numbers; -1: none */
  int weak, hidden, invisible;       /* edge type numbers; -1: none */
  int dom;                           /* some native node has a DOM state */
  /* nodes */
  v8_node *nodes;
  unsigned char *types;
  size_t nnodes, nodes_cap, types_cap;
  uint64_t cur[MAX_FIELDS];
  unsigned pos;
  uint64_t categories;               /* bit per node type used by a category */
  /* edges */
  size_t enode;
  uint32_t eleft;
  uint64_t *refs;
  size_t nrefs, refs_cap;
  gsf_v8_edge *kept;                 /* edges of the nodes written last */
  size_t nkept, kept_cap;
  /* strings */
  uint32_t *want;                    /* sorted string indices used as type names */
  unsigned char *info;               /* their root kind and flags */
  size_t nwant, wpos;
  uint64_t nstrings;
} v8;

int gsf_v8_sniff(const unsigned char *head, size_t n) {
  static const char key[] = "\"snapshot\"";
  size_t i = 0;
  if (n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf) i = 3;
  while (i < n && strchr(" \t\r\n", head[i]) && head[i]) i++;
  if (i >= n || head[i++] != '{') return 0;
  while (i < n && strchr(" \t\r\n", head[i]) && head[i]) i++;
  return n - i >= sizeof key - 1 && memcmp(head + i, key, sizeof key - 1) == 0;
}

/* ---- errors ------------------------------------------------------------ */

static uint64_t offset(const v8 *p) {
  return p->numbers ? p->at : p->base + yajl_get_bytes_consumed(p->h);
}

/* Records a malformed-input message and stops the parse (returns 0). */
static int bad(v8 *p, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
static int bad(v8 *p, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(p->err, p->errcap, "byte %llu: ", (unsigned long long)offset(p));
  p->rc = GS_EFORMAT;
  if (n < 0 || (size_t)n >= p->errcap) return 0;
  va_start(ap, fmt);
  vsnprintf(p->err + n, p->errcap - (size_t)n, fmt, ap);
  va_end(ap);
  return 0;
}

static int failed(v8 *p, int rc) {
  if (rc == GS_ENOMEM)
    snprintf(p->err, p->errcap, "out of memory at byte %llu", (unsigned long long)offset(p));
  else if (rc == GS_ELIMIT)
    snprintf(p->err, p->errcap, "byte %llu: an object has more than %u references (the limit of one object)",
             (unsigned long long)offset(p), MAX_REFS);
  else
    snprintf(p->err, p->errcap, "byte %llu: cannot write the records", (unsigned long long)offset(p));
  p->rc = rc;
  return 0;
}

/* ---- meta -------------------------------------------------------------- */

static const char *const category_labels[][2] = {
  {"hidden", "(system)"}, {"code", "(compiled code)"}, {"string", "(string)"},
  {"concatenated string", "(string)"}, {"sliced string", "(string)"},
};

static int meta_node_type(v8 *p, const char *s, size_t n) {
  unsigned t = p->nntypes, i;
  if (t == MAX_NODE_TYPES) return bad(p, "more than %u node types", MAX_NODE_TYPES);
  p->nntypes++;
  if ((n == 6 && !memcmp(s, "object", 6)) || (n == 6 && !memcmp(s, "native", 6)) ||
      (n == 9 && !memcmp(s, "synthetic", 9))) {
    p->named[t] = 1;
    if (n == 9) p->synthetic = (int)t;
    if (n == 6 && !memcmp(s, "native", 6)) p->native = (int)t;
    return 1;
  }
  snprintf(p->label[t], sizeof p->label[t], "(%.*s)", (int)(n < 28 ? n : 28), s);
  for (i = 0; i < sizeof category_labels / sizeof category_labels[0]; i++)
    if (strlen(category_labels[i][0]) == n && !memcmp(category_labels[i][0], s, n))
      snprintf(p->label[t], sizeof p->label[t], "%s", category_labels[i][1]);
  gsf_text_clean(p->label[t], sizeof p->label[t], p->label[t], strlen(p->label[t]));
  return 1;
}

static int field_is(const char *s, size_t n, const char *name) {
  return strlen(name) == n && memcmp(s, name, n) == 0;
}

static int meta_string(v8 *p, json_ctx c, const char *s, size_t n) {
  if (c == C_NODE_FIELDS) {
    int i = (int)p->nfield_names++;
    if (field_is(s, n, "type")) p->f_type = i;
    else if (field_is(s, n, "name")) p->f_name = i;
    else if (field_is(s, n, "id")) p->f_id = i;
    else if (field_is(s, n, "self_size")) p->f_size = i;
    else if (field_is(s, n, "edge_count")) p->f_edges = i;
    else if (field_is(s, n, "detachedness")) p->f_detached = i;
  } else if (c == C_EDGE_FIELDS) {
    int i = (int)p->efield_names++;
    if (field_is(s, n, "type")) p->e_type = i;
    else if (field_is(s, n, "to_node")) p->e_to = i;
  } else if (c == C_NODE_TYPE_LIST) {
    return meta_node_type(p, s, n);
  } else if (c == C_EDGE_TYPE_LIST) {
    if (field_is(s, n, "weak")) p->weak = (int)p->netypes;
    if (field_is(s, n, "hidden")) p->hidden = (int)p->netypes;
    if (field_is(s, n, "invisible")) p->invisible = (int)p->netypes;
    p->netypes++;
  }
  return 1;
}

/* Checks the meta once the nodes start. */
static int meta_done(v8 *p) {
  p->nf = p->nfield_names;
  p->ef = p->efield_names;
  if (p->f_type < 0 || p->f_name < 0 || p->f_id < 0 || p->f_size < 0 || p->f_edges < 0)
    return bad(p, "snapshot.meta.node_fields lacks type, name, id, self_size or edge_count");
  if (p->e_type < 0 || p->e_to < 0)
    return bad(p, "snapshot.meta.edge_fields lacks type or to_node");
  if (p->nf > MAX_FIELDS || p->ef > MAX_FIELDS)
    return bad(p, "more than %u node or edge fields", MAX_FIELDS);
  if (!p->nntypes) return bad(p, "snapshot.meta.node_types has no list of types");
  p->phase = 1;
  return 1;
}

/* ---- nodes and edges --------------------------------------------------- */

/* The state Blink gave a native node (1 attached, 2 detached), as bits. */
static unsigned dom_state(v8 *p, uint64_t t) {
  uint64_t v = p->f_detached >= 0 && (int)t == p->native ? p->cur[p->f_detached] : 0;
  unsigned state = v == 1 ? GSF_V8_ATTACHED : v == 2 ? GSF_V8_DETACHED : 0;
  p->dom |= state != 0;
  return state;
}

static int node_done(v8 *p) {
  uint64_t t = p->cur[p->f_type], name = p->cur[p->f_name], edges = p->cur[p->f_edges];
  v8_node *nd;
  if (t >= p->nntypes) return bad(p, "node type %llu is not in snapshot.meta", (unsigned long long)t);
  if (name > UINT32_MAX || edges > UINT32_MAX)
    return bad(p, "node name or edge count %llu out of range", (unsigned long long)(name > edges ? name : edges));
  if (gs_array_reserve((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof *p->nodes) ||
      gs_array_reserve((void **)&p->types, &p->types_cap, p->nnodes + 1, 1))
    return failed(p, GS_ENOMEM);
  nd = &p->nodes[p->nnodes];
  nd->id = p->cur[p->f_id];
  nd->size = p->cur[p->f_size];
  nd->name = (uint32_t)name;
  nd->edges = (uint32_t)edges;
  p->types[p->nnodes++] = (unsigned char)(t | dom_state(p, t));
  if (!p->named[t]) p->categories |= 1ull << t;
  return 1;
}

static int is_synthetic(const v8 *p, size_t k) {
  return (p->types[k] & GSF_V8_TYPE) == p->synthetic;
}

/* Synthetic nodes, and native ones when their DOM state is passed on, are
 * written at the end: their edges are kept until then. */
static int is_kept(const v8 *p, size_t k) {
  return is_synthetic(p, k) || (p->dom && (p->types[k] & GSF_V8_TYPE) == p->native);
}

static uint64_t type_id(const v8 *p, size_t k) {
  unsigned t = p->types[k] & GSF_V8_TYPE;
  if (!p->named[t]) return CATEGORY_TYPE + t;
  return (p->types[k] & GSF_V8_DETACHED ? DETACHED_TYPE : 0) + p->nodes[k].name;
}

static int put_object(v8 *p, size_t k, const uint64_t *refs, size_t n) {
  int rc = gs_writer_object(p->w, p->nodes[k].id, type_id(p, k), p->nodes[k].size, refs, n);
  return rc ? failed(p, rc) : 1;
}

/* Moves to the node that owns the next edge, writing the nodes passed;
 * kept nodes wait for the end. */
static int next_owner(v8 *p) {
  while (p->eleft == 0) {
    if (p->enode != NONE && !is_kept(p, p->enode) && !put_object(p, p->enode, p->refs, p->nrefs))
      return 0;
    p->enode = p->enode == NONE ? 0 : p->enode + 1;
    p->nrefs = 0;
    if (p->enode >= p->nnodes) return 2;
    p->eleft = p->nodes[p->enode].edges;
  }
  return 1;
}

static int edge_done(v8 *p) {
  uint64_t t = p->cur[p->e_type], to = p->cur[p->e_to];
  int rc = next_owner(p);
  if (rc == 2) return bad(p, "more edges than the nodes' edge counts");
  if (!rc) return 0;
  if (t >= p->netypes) return bad(p, "edge type %llu is not in snapshot.meta", (unsigned long long)t);
  if (to % p->nf || to / p->nf >= p->nnodes)
    return bad(p, "edge to_node %llu is not the index of a node", (unsigned long long)to);
  to /= p->nf;
  p->eleft--;
  if ((int)t == p->weak) {
    rc = gs_writer_root(p->w, p->nodes[to].id, GS_ROOT_HANDLE, GS_FLAG_WEAK, 0);
    return rc ? failed(p, rc) : 1;
  }
  if (is_kept(p, p->enode)) {
    gsf_v8_edge *e;
    if (gs_array_reserve((void **)&p->kept, &p->kept_cap, p->nkept + 1, sizeof *p->kept))
      return failed(p, GS_ENOMEM);
    e = &p->kept[p->nkept++];
    e->from = (uint32_t)p->enode;
    e->to = (uint32_t)to;
    e->follow = (int)t != p->hidden && (int)t != p->invisible;
    return 1;
  }
  if (p->nrefs == MAX_REFS) return failed(p, GS_ELIMIT);
  if (gs_array_reserve((void **)&p->refs, &p->refs_cap, p->nrefs + 1, sizeof *p->refs))
    return failed(p, GS_ENOMEM);
  p->refs[p->nrefs++] = p->nodes[to].id;
  return 1;
}

/* Writes the last nodes, which must have no edges left. */
static int edges_end(v8 *p) {
  int rc = p->eleft ? 1 : next_owner(p);
  if (rc == 1)
    return bad(p, "the edges end %lu short of the nodes' edge counts", (unsigned long)p->eleft);
  if (!rc) return 0;
  p->phase = 3;
  return 1;
}

static int not_whole(v8 *p) {
  return bad(p, "%s is not a whole number", p->stack[p->depth] == C_NODES ? "a node field" : "an edge field");
}

/* The next field of the current node or edge; at is where it ends in the
 * block, when the numbers are read apart (gsf_numlist's take). */
static int take_number(void *ctx, uint64_t v, size_t at) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  p->at = p->base + at;
  p->cur[p->pos++] = v;
  if (c == C_NODES && p->pos == p->nf) { p->pos = 0; return node_done(p); }
  if (c == C_EDGES && p->pos == p->ef) { p->pos = 0; return edge_done(p); }
  return 1;
}

static int on_number(void *ctx, const char *s, size_t n) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  uint64_t v = 0;
  size_t i;
  if (c != C_NODES && c != C_EDGES) return 1;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10) return not_whole(p);
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  return take_number(p, v, 0);
}

/* ---- strings ----------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Where name is in want, or nwant if it is not. */
static size_t want_index(const v8 *p, uint32_t name) {
  const uint32_t *w = bsearch(&name, p->want, p->nwant, sizeof *p->want, cmp_u32);
  return w ? (size_t)(w - p->want) : p->nwant;
}

/* The string indices that name types, sorted, each once; and which of them
 * also name detached nodes. */
static int strings_start(v8 *p) {
  size_t k, n = 0;
  if (p->phase != 3) return bad(p, "\"strings\" comes before the nodes and edges");
  if (!(p->want = malloc((p->nnodes + 1) * sizeof *p->want))) return failed(p, GS_ENOMEM);
  for (k = 0; k < p->nnodes; k++)
    if (p->named[p->types[k] & GSF_V8_TYPE]) p->want[n++] = p->nodes[k].name;
  qsort(p->want, n, sizeof *p->want, cmp_u32);
  for (k = 0; k < n; k++)
    if (!p->nwant || p->want[p->nwant - 1] != p->want[k]) p->want[p->nwant++] = p->want[k];
  if (!(p->info = calloc(p->nwant + 1, 1))) return failed(p, GS_ENOMEM);
  if (p->dom && gsf_v8dom_propagate(p->types, p->nnodes, (unsigned)p->native, p->kept, p->nkept))
    return failed(p, GS_ENOMEM);
  for (k = 0; k < p->nnodes; k++)
    if (p->types[k] & GSF_V8_DETACHED) p->info[want_index(p, p->nodes[k].name)] |= INFO_DETACHED;
  return 1;
}

/* A synthetic category's root kind, from its name (see the README). */
static unsigned char root_info(const char *s) {
  static const struct { const char *part; unsigned char kind; } names[] = {
    {"(GC roots)", GS_ROOT_INTERNAL | INFO_GC_ROOTS}, {"Weak", GS_ROOT_INTERNAL | INFO_WEAK},
    {"(local roots)", GS_ROOT_LOCAL}, {"Stack roots", GS_ROOT_LOCAL}, {"Handle scope", GS_ROOT_LOCAL},
    {"(finalizer roots)", GS_ROOT_FINALIZER}, {"(static roots)", GS_ROOT_STATIC},
    {"(handle roots)", GS_ROOT_HANDLE}, {"Global handles", GS_ROOT_HANDLE},
    {"Eternal handles", GS_ROOT_HANDLE}, {"Traced handles", GS_ROOT_HANDLE},
    {"(runtime roots)", GS_ROOT_RUNTIME}, {"Internalized strings", GS_ROOT_RUNTIME},
    {"External strings", GS_ROOT_RUNTIME}, {"Builtins", GS_ROOT_RUNTIME},
    {"Read-only", GS_ROOT_RUNTIME}, {"object cache", GS_ROOT_RUNTIME},
    {"Strong root", GS_ROOT_RUNTIME}, {"Smi roots", GS_ROOT_RUNTIME},
    {"Bootstrapper", GS_ROOT_RUNTIME}, {"Extensions", GS_ROOT_RUNTIME},
  };
  size_t i;
  for (i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strstr(s, names[i].part)) return names[i].kind;
  return GS_ROOT_INTERNAL;
}

/* A foreign name as a type name, "(no name)" for an empty one. */
static size_t clean_name(char *out, size_t cap, const unsigned char *s, size_t n) {
  size_t len = gsf_text_clean(out, cap, (const char *)s, n);
  return len ? len : (size_t)snprintf(out, cap, "(no name)");
}

/* The type records of a string that names types: the name, and
 * "Detached " and the name when a detached node has it. */
static int name_types(v8 *p, const unsigned char *s, size_t n) {
  static const char prefix[] = "Detached ";
  char name[GSF_NAME_MAX];
  size_t len = clean_name(name, sizeof name, s, n);
  int rc;
  p->info[p->wpos] |= root_info(name);
  rc = gs_writer_type(p->w, p->nstrings, name, len);
  if (!rc && p->info[p->wpos] & INFO_DETACHED) {
    memcpy(name, prefix, sizeof prefix - 1);
    len = clean_name(name + sizeof prefix - 1, sizeof name - (sizeof prefix - 1), s, n);
    rc = gs_writer_type(p->w, DETACHED_TYPE + p->nstrings, name, sizeof prefix - 1 + len);
  }
  p->wpos++;
  return rc ? failed(p, rc) : 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  if (c != C_STRINGS) return c == C_SKIP ? 1 : meta_string(p, c, (const char *)s, n);
  if (p->wpos < p->nwant && p->want[p->wpos] == p->nstrings && !name_types(p, s, n)) return 0;
  p->nstrings++;
  return 1;
}

/* ---- the end: roots, synthetic nodes, categories ------------------------ */

static unsigned char info_of(const v8 *p, uint32_t name) {
  size_t w = want_index(p, name);
  return w < p->nwant ? p->info[w] : GS_ROOT_INTERNAL;
}

/* The kept edges of node k: kept[*first .. *last). */
static void kept_range(const v8 *p, size_t k, size_t *first, size_t *last) {
  gsf_v8_edges_of(p->kept, p->nkept, k, first, last);
}

/* The children of (GC roots) that are categories stand for their children,
 * rooted with the category's kind; other children are rooted themselves. */
static int write_roots(v8 *p, size_t gc) {
  size_t a, b, i, j, c0, c1;
  kept_range(p, gc, &a, &b);
  for (i = a; i < b; i++) {
    uint32_t c = p->kept[i].to;
    int rc = GS_OK;
    if (!is_synthetic(p, c)) {
      rc = gs_writer_root(p->w, p->nodes[c].id, GS_ROOT_INTERNAL, 0, 0);
    } else {
      unsigned char info = info_of(p, p->nodes[c].name);
      unsigned kind = info & 7, flags = info & INFO_WEAK ? GS_FLAG_WEAK : 0;
      p->types[c] |= DROPPED;
      kept_range(p, c, &c0, &c1);
      for (j = c0; j < c1 && !rc; j++)
        rc = gs_writer_root(p->w, p->nodes[p->kept[j].to].id, kind, flags,
                            kind == GS_ROOT_STATIC ? p->nodes[c].name : 0);
    }
    if (rc) return failed(p, rc);
  }
  return 1;
}

/* Node 0 is V8's root: it and its synthetic children ((GC roots) among
 * them) are no objects; the other kept nodes are. */
static int write_kept(v8 *p) {
  size_t a, b, i, k, gc = NONE;
  if (p->nnodes && is_synthetic(p, 0)) {
    p->types[0] |= DROPPED;
    kept_range(p, 0, &a, &b);
    for (i = a; i < b; i++) {
      uint32_t c = p->kept[i].to;
      if (!is_synthetic(p, c)) continue;
      if (gc == NONE && info_of(p, p->nodes[c].name) & INFO_GC_ROOTS) gc = c;
      p->types[c] |= DROPPED;
    }
  }
  if (gc != NONE && !write_roots(p, gc)) return 0;
  for (k = 0; k < p->nnodes; k++) {
    if (!is_kept(p, k) || (p->types[k] & DROPPED)) continue;
    kept_range(p, k, &a, &b);
    p->nrefs = 0;
    for (i = a; i < b; i++) {
      if (gs_array_reserve((void **)&p->refs, &p->refs_cap, p->nrefs + 1, sizeof *p->refs))
        return failed(p, GS_ENOMEM);
      p->refs[p->nrefs++] = p->nodes[p->kept[i].to].id;
    }
    if (!put_object(p, k, p->refs, p->nrefs)) return 0;
  }
  return 1;
}

static int finish(v8 *p) {
  unsigned t;
  int rc = GS_OK;
  if (p->phase != 3) return bad(p, "the snapshot lacks its %s", p->phase < 2 ? "nodes or edges" : "strings");
  if (p->wpos < p->nwant)
    return bad(p, "node name %lu is not among the strings", (unsigned long)p->want[p->wpos]);
  if (!write_kept(p)) return 0;
  for (t = 0; t < p->nntypes && !rc; t++)
    if (p->categories & (1ull << t))
      rc = gs_writer_type(p->w, CATEGORY_TYPE + t, p->label[t], strlen(p->label[t]));
  if (!rc) rc = gs_writer_end(p->w, "heapsnapshot", 12, 0);
  if (rc) return failed(p, rc);
  p->phase = 4;
  return 1;
}

/* ---- JSON structure ---------------------------------------------------- */

/* The context of a value opening in the current container. */
static json_ctx child_ctx(v8 *p) {
  json_ctx c = p->stack[p->depth];
  uint32_t index = p->elems[p->depth]++;
  switch (c) {
  case C_TOP: case C_SNAPSHOT: case C_META: return p->pending;
  case C_NODE_TYPES: return index == 0 ? C_NODE_TYPE_LIST : C_SKIP;
  case C_EDGE_TYPES: return index == 0 ? C_EDGE_TYPE_LIST : C_SKIP;
  default: return C_SKIP;
  }
}

static int open_value(v8 *p, json_ctx c) {
  if (p->depth == MAX_DEPTH) return bad(p, "JSON nested deeper than %u levels", MAX_DEPTH);
  p->stack[++p->depth] = (unsigned char)c;
  p->elems[p->depth] = 0;
  p->pending = C_SKIP;
  if (c == C_NODES) {
    if (p->phase != 0 && p->phase != 1) return bad(p, "\"nodes\" comes twice or after the edges");
    p->pos = 0;
    return meta_done(p);
  }
  if (c == C_EDGES) {
    if (p->phase != 1) return bad(p, "\"edges\" does not follow \"nodes\"");
    if (p->pos) return bad(p, "the nodes end inside a node");
    p->phase = 2;
    p->enode = NONE;
    p->eleft = 0;
    return 1;
  }
  return c == C_STRINGS ? strings_start(p) : 1;
}

static int on_start(void *ctx) {
  v8 *p = ctx;
  if (p->depth == 0) return open_value(p, C_TOP);
  return open_value(p, child_ctx(p));
}

static int on_end(void *ctx) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth--];
  if (c == C_EDGES) {
    if (p->pos) return bad(p, "the edges end inside an edge");
    return edges_end(p);
  }
  if (c == C_STRINGS && p->phase == 3) return finish(p);
  return 1;
}

static int on_key(void *ctx, const unsigned char *s, size_t n) {
  static const struct { json_ctx in; const char *key; json_ctx value; } keys[] = {
    {C_TOP, "snapshot", C_SNAPSHOT}, {C_TOP, "nodes", C_NODES}, {C_TOP, "edges", C_EDGES},
    {C_TOP, "strings", C_STRINGS}, {C_SNAPSHOT, "meta", C_META},
    {C_META, "node_fields", C_NODE_FIELDS}, {C_META, "node_types", C_NODE_TYPES},
    {C_META, "edge_fields", C_EDGE_FIELDS}, {C_META, "edge_types", C_EDGE_TYPES},
  };
  v8 *p = ctx;
  size_t i;
  p->pending = C_SKIP;
  for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (keys[i].in == p->stack[p->depth] && field_is((const char *)s, n, keys[i].key))
      p->pending = keys[i].value;
  return 1;
}

/* A scalar where a list is expected (e.g. "nodes": 5) leaves that part
 * unread, which finish() reports. */
static int on_scalar(void *ctx) {
  v8 *p = ctx;
  if (p->depth) child_ctx(p);
  return 1;
}
static int on_null(void *ctx) { return on_scalar(ctx); }
static int on_bool(void *ctx, int b) { (void)b; return on_scalar(ctx); }

static int on_number_value(void *ctx, const char *s, size_t n) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  if (c == C_NODES || c == C_EDGES) return on_number(ctx, s, n);
  return on_scalar(ctx);
}

static int on_string_value(void *ctx, const unsigned char *s, size_t n) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  if (p->depth) child_ctx(p);
  if (c == C_TOP || c == C_SNAPSHOT || c == C_META) return 1;
  if (c == C_NODES || c == C_EDGES) return bad(p, "a string among the %s", c == C_NODES ? "nodes" : "edges");
  return on_string(ctx, s, n);
}

static const yajl_callbacks callbacks = {
  on_null, on_bool, NULL, NULL, on_number_value, on_string_value,
  on_start, on_key, on_end, on_start, on_end,
};

/* ---- the parse --------------------------------------------------------- */

static int parse_error(v8 *p, const unsigned char *buf, size_t n, int at_end) {
  unsigned char *msg;
  size_t len;
  /* At the end, a number cut short may have been taken whole first. */
  if (p->rc && (!at_end || p->rc != GS_EFORMAT)) return p->rc;
  if (at_end) {
    snprintf(p->err, p->errcap, "the file ends at byte %llu inside the JSON (truncated file?)",
             (unsigned long long)p->base);
    return GS_EFORMAT;
  }
  msg = yajl_get_error(p->h, 0, buf, n);
  len = msg ? strcspn((const char *)msg, "\r\n") : 0;
  snprintf(p->err, p->errcap, "byte %llu: JSON: %.*s", (unsigned long long)offset(p),
           (int)(len ? len : 12), len ? (const char *)msg : "syntax error");
  if (msg) yajl_free_error(p->h, msg);
  return GS_EFORMAT;
}

/* How much of buf yajl reads next: up to the bracket after the key of the
 * nodes (before them) or of the edges (after the nodes), *at_array set;
 * else all of it. */
static size_t yajl_part(const v8 *p, const unsigned char *buf, size_t n, int *at_array) {
  const char *key = p->phase == 0 ? "\"nodes\"" : p->phase == 1 ? "\"edges\"" : NULL;
  const unsigned char *q = buf, *end = buf + n;
  *at_array = 0;
  while (key && (q = memchr(q, '"', (size_t)(end - q))) != NULL) {
    const unsigned char *r = q + 7;
    if (end - q >= 7 && memcmp(q, key, 7) == 0) {
      while (r < end && gsf_numlist_blank(*r)) r++;
      if (r < end && *r++ == ':') {
        while (r < end && gsf_numlist_blank(*r)) r++;
        if (r < end && *r == '[') {
          *at_array = 1;
          return (size_t)(r + 1 - buf);
        }
      }
    }
    q++;
  }
  return n;
}

/* Reads as many bytes of the numbers as buf holds, up to the bracket that
 * ends them (left to yajl). */
static size_t numbers_part(v8 *p, const unsigned char *buf, size_t n) {
  size_t used;
  int rc = gsf_numlist_read(&p->list, buf, n, &used, take_number, p);
  p->at = p->base + used;
  if (rc == GSF_NUMLIST_END) p->numbers = 0;
  else if (rc == GSF_NUMLIST_NOT_WHOLE) not_whole(p);
  else if (rc == GSF_NUMLIST_MISSING) bad(p, "JSON: a number is missing");
  else if (rc == GSF_NUMLIST_NO_COMMA) bad(p, "JSON: a comma is missing between two numbers");
  return used;
}

/* Hands buf to yajl, the numbers of the nodes and edges excepted. */
static int feed(v8 *p, const unsigned char *buf, size_t n) {
  while (n) {
    size_t len;
    int at_array;
    if (p->numbers) {
      len = numbers_part(p, buf, n);
      if (p->rc) return p->rc;
    } else {
      len = yajl_part(p, buf, n, &at_array);
      if (yajl_parse(p->h, buf, len) != yajl_status_ok) return parse_error(p, buf, len, 0);
      if (at_array && (p->stack[p->depth] == C_NODES || p->stack[p->depth] == C_EDGES)) {
        p->numbers = 1;
        gsf_numlist_start(&p->list);
      }
    }
    p->base += len;
    buf += len;
    n -= len;
  }
  return GS_OK;
}

static int parse(v8 *p, gs_read_fn in, void *in_ctx) {
  unsigned char *buf = malloc(BLOCK);
  int rc = GS_OK;
  if (!buf) return failed(p, GS_ENOMEM), GS_ENOMEM;
  for (;;) {
    size_t got = 0;
    if ((rc = in(in_ctx, buf, BLOCK, &got))) {
      snprintf(p->err, p->errcap, "read error at byte %llu", (unsigned long long)p->base);
      break;
    }
    if (got == 0) {
      if (p->numbers || yajl_complete_parse(p->h) != yajl_status_ok) rc = parse_error(p, buf, 0, 1);
      break;
    }
    if ((rc = feed(p, buf, got)) != GS_OK) break;
  }
  free(buf);
  if (!rc && p->phase != 4) {
    snprintf(p->err, p->errcap, "byte %llu: the JSON is not a whole heap snapshot",
             (unsigned long long)p->base);
    rc = GS_EFORMAT;
  }
  return rc;
}

int gsf_v8_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap) {
  v8 *p = calloc(1, sizeof *p);
  int rc;
  if (cap) err[0] = '\0';
  if (!p) { snprintf(err, cap, "out of memory"); return GS_ENOMEM; }
  p->w = w;
  p->err = err;
  p->errcap = cap;
  p->f_type = p->f_name = p->f_id = p->f_size = p->f_edges = p->f_detached = -1;
  p->e_type = p->e_to = -1;
  p->synthetic = p->native = p->weak = p->hidden = p->invisible = -1;
  if (!(p->h = yajl_alloc(&callbacks, NULL, p))) {
    free(p);
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  if ((rc = gs_writer_section(w, 2, "heapsnapshot", 12, 0)) == GS_OK) rc = parse(p, in, in_ctx);
  yajl_free(p->h);
  free(p->nodes);
  free(p->types);
  free(p->refs);
  free(p->kept);
  free(p->want);
  free(p->info);
  free(p);
  return rc;
}
