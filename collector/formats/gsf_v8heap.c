/* gsf_v8heap.c - what a V8 heap snapshot's values say, as records: the
 * meta (the field and type lists, read by name), the nodes kept in a flat
 * table (16 bytes a node) with the names that name types listed as they
 * come, each node's object record written once its edges have streamed
 * past, then the strings, which name the types and the root categories,
 * and at the end the kept nodes and the roots (see gsf_v8.c for the JSON
 * side that hands the values over). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gsf_text.h"
#include "gsf_v8_int.h"

/* Type IDs of the node types named by category ("(string)", ...): above
 * every string index, which name the other types. */
#define CATEGORY_TYPE 0x100000000ull
/* Type IDs of detached DOM nodes: 2^33 + the string index of their name. */
#define DETACHED_TYPE 0x200000000ull
/* types[] holds a node's type number and DOM state (gsf_v8dom.h), and: */
#define DROPPED 0x80   /* a synthetic node that is no object */
#define INFO_WEAK 0x08
#define INFO_GC_ROOTS 0x10
#define INFO_DETACHED 0x20  /* a detached node has this name */
#define INFO_NO_ROOT 0x40   /* a category of objects no root holds */

/* ---- meta -------------------------------------------------------------- */

static const char *const category_labels[][2] = {
  {"hidden", "(system)"}, {"code", "(compiled code)"}, {"string", "(string)"},
  {"concatenated string", "(string)"}, {"sliced string", "(string)"},
};

static int meta_node_type(v8 *p, const char *s, size_t n) {
  unsigned t = p->nntypes, i;
  if (t == MAX_NODE_TYPES) return gsf_v8_bad(p, "more than %u node types", MAX_NODE_TYPES);
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

static int meta_string(v8 *p, json_ctx c, const char *s, size_t n) {
  if (c == C_NODE_FIELDS) {
    int i = (int)p->nfield_names++;
    if (gsf_v8_field_is(s, n, "type")) p->f_type = i;
    else if (gsf_v8_field_is(s, n, "name")) p->f_name = i;
    else if (gsf_v8_field_is(s, n, "id")) p->f_id = i;
    else if (gsf_v8_field_is(s, n, "self_size")) p->f_size = i;
    else if (gsf_v8_field_is(s, n, "edge_count")) p->f_edges = i;
    else if (gsf_v8_field_is(s, n, "detachedness")) p->f_detached = i;
  } else if (c == C_EDGE_FIELDS) {
    int i = (int)p->efield_names++;
    if (gsf_v8_field_is(s, n, "type")) p->e_type = i;
    else if (gsf_v8_field_is(s, n, "to_node")) p->e_to = i;
  } else if (c == C_NODE_TYPE_LIST) {
    return meta_node_type(p, s, n);
  } else if (c == C_EDGE_TYPE_LIST) {
    if (gsf_v8_field_is(s, n, "weak")) p->weak = (int)p->netypes;
    if (gsf_v8_field_is(s, n, "hidden")) p->hidden = (int)p->netypes;
    if (gsf_v8_field_is(s, n, "invisible")) p->invisible = (int)p->netypes;
    if (gsf_v8_field_is(s, n, "shortcut")) p->shortcut = (int)p->netypes;
    if (gsf_v8_field_is(s, n, "internal")) p->internal = (int)p->netypes;
    p->netypes++;
  }
  return 1;
}

/* Checks the meta once the nodes start. */
int gsf_v8_meta_done(v8 *p) {
  p->nf = p->nfield_names;
  p->ef = p->efield_names;
  if (p->f_type < 0 || p->f_name < 0 || p->f_id < 0 || p->f_size < 0 || p->f_edges < 0)
    return gsf_v8_bad(p, "snapshot.meta.node_fields lacks type, name, id, self_size or edge_count");
  if (p->e_type < 0 || p->e_to < 0)
    return gsf_v8_bad(p, "snapshot.meta.edge_fields lacks type or to_node");
  if (p->nf > MAX_FIELDS || p->ef > MAX_FIELDS)
    return gsf_v8_bad(p, "more than %u node or edge fields", MAX_FIELDS);
  if (!p->nntypes) return gsf_v8_bad(p, "snapshot.meta.node_types has no list of types");
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

/* A node whose ID or size takes more than 32 bits keeps both here. */
static int put_wide(v8 *p, v8_node *nd, uint64_t id, uint64_t size) {
  v8_wide *e;
  if (gs_array_reserve((void **)&p->wide, &p->wide_cap, p->nwide + 1, sizeof *p->wide))
    return gsf_v8_failed(p, GS_ENOMEM);
  e = &p->wide[p->nwide++];
  e->node = p->nnodes;
  e->id = id;
  e->size = size;
  nd->id = WIDE;
  nd->size = 0;
  return 1;
}

static int cmp_wide(const void *key, const void *elem) {
  uint64_t k = *(const uint64_t *)key, n = ((const v8_wide *)elem)->node;
  return k < n ? -1 : k > n;
}

static const v8_wide *wide_of(const v8 *p, size_t k) {
  uint64_t key = k;
  const v8_wide *e = bsearch(&key, p->wide, p->nwide, sizeof *p->wide, cmp_wide);
  assert(e);
  return e;
}

static uint64_t node_id(const v8 *p, size_t k) {
  return p->nodes[k].id != WIDE ? p->nodes[k].id : wide_of(p, k)->id;
}

static uint64_t node_size(const v8 *p, size_t k) {
  return p->nodes[k].id != WIDE ? p->nodes[k].size : wide_of(p, k)->size;
}

/* Lists name as a type name, unless the cache says it is listed already. */
static int want_name(v8 *p, uint32_t name) {
  uint64_t *c = &p->name_cache[name % NAME_CACHE];
  if (*c == (uint64_t)name + 1) return 1;
  *c = (uint64_t)name + 1;
  if (gs_array_reserve((void **)&p->want, &p->want_cap, p->nwant + 1, sizeof *p->want))
    return gsf_v8_failed(p, GS_ENOMEM);
  p->want[p->nwant++] = name;
  return 1;
}

static int node_done(v8 *p) {
  uint64_t t = p->cur[p->f_type], name = p->cur[p->f_name], edges = p->cur[p->f_edges];
  uint64_t id = p->cur[p->f_id], size = p->cur[p->f_size];
  v8_node *nd;
  if (t >= p->nntypes) return gsf_v8_bad(p, "node type %llu is not in snapshot.meta", (unsigned long long)t);
  if (name > UINT32_MAX || edges > UINT32_MAX)
    return gsf_v8_bad(p, "node name or edge count %llu out of range",
                      (unsigned long long)(name > edges ? name : edges));
  if (gs_array_reserve((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof *p->nodes) ||
      gs_array_reserve((void **)&p->types, &p->types_cap, p->nnodes + 1, 1))
    return gsf_v8_failed(p, GS_ENOMEM);
  nd = &p->nodes[p->nnodes];
  nd->id = (uint32_t)id;
  nd->size = (uint32_t)size;
  if ((id >= WIDE || size >= WIDE) && !put_wide(p, nd, id, size)) return 0;
  nd->name = (uint32_t)name;
  nd->edges = (uint32_t)edges;
  p->types[p->nnodes++] = (unsigned char)(t | dom_state(p, t));
  if (!p->named[t]) p->categories |= 1ull << t;
  else if (!want_name(p, (uint32_t)name)) return 0;
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
  int rc = gs_writer_object(p->w, node_id(p, k), type_id(p, k), node_size(p, k), refs, n);
  return rc ? gsf_v8_failed(p, rc) : 1;
}

static int put_weak(v8 *p, uint64_t id) {
  int rc = gs_writer_root(p->w, id, GS_ROOT_HANDLE, GS_FLAG_WEAK, 0);
  return rc ? gsf_v8_failed(p, rc) : 1;
}

/* The references met so far of the owner of the edges, when they fill a
 * part: its record is begun with the first part. */
static int put_part(v8 *p) {
  size_t k = p->enode;
  int rc = p->written ? GS_OK : gs_writer_object_begin(p->w, node_id(p, k), type_id(p, k), node_size(p, k));
  if (!rc) rc = gs_writer_refs(p->w, p->refs, p->nrefs);
  p->written += p->nrefs;
  p->nrefs = 0;
  return rc ? gsf_v8_failed(p, rc) : 1;
}

/* The owner of the edges passed: its record, whole or its last part, then
 * the weak roots its edges made while the record was open. */
static int put_owner(v8 *p) {
  size_t i;
  int rc;
  if (!p->written) return put_object(p, p->enode, p->refs, p->nrefs);
  if (!put_part(p)) return 0;
  p->written = 0;
  if ((rc = gs_writer_object_end(p->w))) return gsf_v8_failed(p, rc);
  for (i = 0; i < p->nlater; i++)
    if (!put_weak(p, p->later[i])) return 0;
  p->nlater = 0;
  return 1;
}

/* A weak edge roots its target, at once or after the open record. */
static int weak_edge(v8 *p, uint64_t id) {
  if (!p->written) return put_weak(p, id);
  if (gs_array_reserve((void **)&p->later, &p->later_cap, p->nlater + 1, sizeof *p->later))
    return gsf_v8_failed(p, GS_ENOMEM);
  p->later[p->nlater++] = id;
  return 1;
}

/* A WeakMap's table links each value weakly and again by an internal edge,
 * which its key has too: the value lives as long as its key, so the
 * table's internal edge is no reference (DevTools leaves it out as well).
 * The owner's weak targets are marked, a bit per node, until the next. */
static int mark_weak(v8 *p, uint64_t to) {
  if (!p->weak_to && !(p->weak_to = calloc(p->nnodes / 8 + 1, 1))) return 0;
  if (gs_array_reserve((void **)&p->weak_list, &p->weak_cap, p->nweak + 1, sizeof *p->weak_list))
    return 0;
  p->weak_to[to / 8] |= (uint8_t)(1u << (to % 8));
  p->weak_list[p->nweak++] = (uint32_t)to;
  return 1;
}

static int weak_too(const v8 *p, uint64_t to) {
  return p->weak_to && (p->weak_to[to / 8] >> (to % 8) & 1);
}

static void forget_weak(v8 *p) {
  while (p->nweak) {
    uint32_t to = p->weak_list[--p->nweak];
    p->weak_to[to / 8] &= (uint8_t)~(1u << (to % 8));
  }
}

/* Moves to the node that owns the next edge, writing the nodes passed;
 * kept nodes wait for the end. */
static int next_owner(v8 *p) {
  while (p->eleft == 0) {
    if (p->enode != NONE && !is_kept(p, p->enode) && !put_owner(p)) return 0;
    forget_weak(p);
    p->enode = p->enode == NONE ? 0 : p->enode + 1;
    p->nrefs = 0;
    if (p->enode >= p->nnodes) return 2;
    p->eleft = p->nodes[p->enode].edges;
  }
  return 1;
}

static int edge_done(v8 *p, uint64_t t, uint64_t to) {
  int rc = next_owner(p);
  if (rc == 2) return gsf_v8_bad(p, "more edges than the nodes' edge counts");
  if (!rc) return 0;
  if (t >= p->netypes) return gsf_v8_bad(p, "edge type %llu is not in snapshot.meta", (unsigned long long)t);
  if (to % p->nf || to / p->nf >= p->nnodes)
    return gsf_v8_bad(p, "edge to_node %llu is not the index of a node", (unsigned long long)to);
  to /= p->nf;
  p->eleft--;
  if ((int)t == p->weak) {
    if (!mark_weak(p, to)) return gsf_v8_failed(p, GS_ENOMEM);
    return weak_edge(p, node_id(p, to));
  }
  /* V8's links not to follow for sizes (but the root's to the globals). */
  if ((int)t == p->shortcut && p->enode != 0) return 1;
  if ((int)t == p->internal && weak_too(p, to)) return 1;
  if (is_kept(p, p->enode)) {
    gsf_v8_edge *e;
    if (gs_array_reserve((void **)&p->kept, &p->kept_cap, p->nkept + 1, sizeof *p->kept))
      return gsf_v8_failed(p, GS_ENOMEM);
    e = &p->kept[p->nkept++];
    e->from = (uint32_t)p->enode;
    e->to = (uint32_t)to;
    e->follow = (int)t != p->hidden && (int)t != p->invisible;
    return 1;
  }
  if (gs_array_reserve((void **)&p->refs, &p->refs_cap, p->nrefs + 1, sizeof *p->refs))
    return gsf_v8_failed(p, GS_ENOMEM);
  p->refs[p->nrefs++] = node_id(p, to);
  return p->nrefs < GSF_REFS_PART || put_part(p);
}

/* The edge that waited longest, at its own byte for its errors. */
static int edge_take(v8 *p) {
  const v8_edge_in *e = &p->ahead[p->ahead_out++ % EDGE_AHEAD];
  uint64_t at = p->at;
  int rc;
  p->at = e->at;
  rc = edge_done(p, e->type, e->to);
  p->at = at;
  return rc;
}

/* An edge waits for EDGE_AHEAD more to come, its target's node asked for
 * as it came: a heap's edges land anywhere in a table of nodes larger than
 * the cache. */
static int edge_came(v8 *p) {
  v8_edge_in *e;
  if (p->ahead_in - p->ahead_out == EDGE_AHEAD && !edge_take(p)) return 0;
  e = &p->ahead[p->ahead_in++ % EDGE_AHEAD];
  e->type = p->cur[p->e_type];
  e->to = p->cur[p->e_to];
  e->at = p->at;
  if (e->to / p->nf < p->nnodes) GS_PREFETCH(&p->nodes[e->to / p->nf]);
  return 1;
}

int gsf_v8_numbers_end(v8 *p) {
  int rc = 1;
  while (rc && p->ahead_out < p->ahead_in) rc = edge_take(p);
  return rc;
}

/* Writes the last nodes, which must have no edges left. */
int gsf_v8_edges_end(v8 *p) {
  int rc;
  if (!gsf_v8_numbers_end(p)) return 0;
  rc = p->eleft ? 1 : next_owner(p);
  if (rc == 1)
    return gsf_v8_bad(p, "the edges end %lu short of the nodes' edge counts", (unsigned long)p->eleft);
  if (!rc) return 0;
  p->phase = 3;
  return 1;
}

int gsf_v8_not_whole(v8 *p) {
  return gsf_v8_bad(p, "%s is not a whole number",
                    p->stack[p->depth] == C_NODES ? "a node field" : "an edge field");
}

/* The next field of the current node or edge; at is where it ends in the
 * block, when the numbers are read apart (gsf_numlist's take). */
int gsf_v8_number(void *ctx, uint64_t v, size_t at) {
  v8 *p = ctx;
  json_ctx c = p->stack[p->depth];
  p->at = p->base + at;
  p->cur[p->pos++] = v;
  if (c == C_NODES && p->pos == p->nf) { p->pos = 0; return node_done(p); }
  if (c == C_EDGES && p->pos == p->ef) { p->pos = 0; return edge_came(p); }
  return 1;
}

int gsf_v8_number_text(v8 *p, const char *s, size_t n) {
  uint64_t v = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10) return gsf_v8_not_whole(p);
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  return gsf_v8_number(p, v, 0);
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
int gsf_v8_strings_start(v8 *p) {
  size_t k, n = p->nwant;
  if (p->phase != 3) return gsf_v8_bad(p, "\"strings\" comes before the nodes and edges");
  if (n) qsort(p->want, n, sizeof *p->want, cmp_u32);
  p->nwant = 0;
  for (k = 0; k < n; k++)
    if (!p->nwant || p->want[p->nwant - 1] != p->want[k]) p->want[p->nwant++] = p->want[k];
  if (!(p->info = calloc(p->nwant + 1, 1))) return gsf_v8_failed(p, GS_ENOMEM);
  if (p->dom && gsf_v8dom_propagate(p->types, p->nnodes, (unsigned)p->native, p->kept, p->nkept))
    return gsf_v8_failed(p, GS_ENOMEM);
  for (k = 0; k < p->nnodes; k++)
    if (p->types[k] & GSF_V8_DETACHED) p->info[want_index(p, p->nodes[k].name)] |= INFO_DETACHED;
  return 1;
}

/* A synthetic category's root kind, from its name (see the README). */
static unsigned char root_info(const char *s) {
  static const struct { const char *part; unsigned char kind; } names[] = {
    {"(GC roots)", GS_ROOT_INTERNAL | INFO_GC_ROOTS}, {"Weak", GS_ROOT_INTERNAL | INFO_WEAK},
    {"(unreachable objects)", GS_ROOT_INTERNAL | INFO_NO_ROOT},
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
  return rc ? gsf_v8_failed(p, rc) : 1;
}

int gsf_v8_string(v8 *p, const unsigned char *s, size_t n) {
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

/* A category (a synthetic node with no size of its own) stands for its
 * children: each is rooted with the category's kind. */
static int root_children(v8 *p, size_t c, unsigned char info) {
  unsigned kind = info & 7, flags = info & INFO_WEAK ? GS_FLAG_WEAK : 0;
  size_t a, b, i;
  int rc = GS_OK;
  p->types[c] |= DROPPED;
  kept_range(p, c, &a, &b);
  for (i = a; i < b && !rc; i++)
    rc = gs_writer_root(p->w, node_id(p, p->kept[i].to), kind, flags,
                        kind == GS_ROOT_STATIC ? p->nodes[c].name : 0);
  return rc ? gsf_v8_failed(p, rc) : 1;
}

/* The children of node 0 (V8's root, no object), and of (GC roots) among
 * them: an object is a root itself (internal), and so is a synthetic node
 * with a size of its own (Node's "Node / Environment", which holds its
 * native objects); another synthetic node is a category, (GC roots) the
 * category of categories, and "(unreachable objects)" (which gcsnap export
 * writes) one whose objects no root holds. */
static int write_roots(v8 *p, size_t node, int top) {
  size_t a, b, i;
  kept_range(p, node, &a, &b);
  for (i = a; i < b; i++) {
    uint32_t c = p->kept[i].to;
    unsigned char info;
    int rc;
    if (p->types[c] & DROPPED) continue;           /* a category named twice */
    if (!is_synthetic(p, c) || node_size(p, c)) {
      rc = gs_writer_root(p->w, node_id(p, c), GS_ROOT_INTERNAL, 0, 0);
      if (rc) return gsf_v8_failed(p, rc);
      continue;
    }
    info = info_of(p, p->nodes[c].name);
    if (info & INFO_NO_ROOT) {
      p->types[c] |= DROPPED;
    } else if (top && (info & INFO_GC_ROOTS)) {
      p->types[c] |= DROPPED;
      if (!write_roots(p, c, 0)) return 0;
    } else if (!root_children(p, c, info)) {
      return 0;
    }
  }
  return 1;
}

/* The roots, then the kept nodes that are objects. */
static int write_kept(v8 *p) {
  size_t a, b, i, k;
  if (p->nnodes && is_synthetic(p, 0)) {
    p->types[0] |= DROPPED;
    if (!write_roots(p, 0, 1)) return 0;
  }
  for (k = 0; k < p->nnodes; k++) {
    if (!is_kept(p, k) || (p->types[k] & DROPPED)) continue;
    kept_range(p, k, &a, &b);
    p->nrefs = 0;
    for (i = a; i < b; i++) {
      if (gs_array_reserve((void **)&p->refs, &p->refs_cap, p->nrefs + 1, sizeof *p->refs))
        return gsf_v8_failed(p, GS_ENOMEM);
      p->refs[p->nrefs++] = node_id(p, p->kept[i].to);
    }
    if (!put_object(p, k, p->refs, p->nrefs)) return 0;
  }
  return 1;
}

int gsf_v8_finish(v8 *p) {
  unsigned t;
  int rc = GS_OK;
  if (p->phase != 3)
    return gsf_v8_bad(p, "the snapshot lacks its %s", p->phase < 2 ? "nodes or edges" : "strings");
  if (p->wpos < p->nwant)
    return gsf_v8_bad(p, "node name %lu is not among the strings", (unsigned long)p->want[p->wpos]);
  if (!write_kept(p)) return 0;
  for (t = 0; t < p->nntypes && !rc; t++)
    if (p->categories & (1ull << t))
      rc = gs_writer_type(p->w, CATEGORY_TYPE + t, p->label[t], strlen(p->label[t]));
  if (!rc) rc = gs_writer_end(p->w, "heapsnapshot", 12, 0);
  if (rc) return gsf_v8_failed(p, rc);
  p->phase = 4;
  return 1;
}
