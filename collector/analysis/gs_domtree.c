/* gs_domtree.c - the dominator tree of a dump written to a file once, then
 * mapped and answered a node at a time.
 *
 * Layout (native byte order: the file lives beside the dump on the machine
 * that made it; a file from elsewhere fails its checks):
 *   header   magic "GSDOMT1\n", the dump's stamp, the number of sections
 *            and the offset of their table, written last
 *   section  sec_head; the section's name; nodes in breadth-first order
 *            (node 0 is the virtual root, each node's children follow one
 *            another, largest retained first); the nodes but the root
 *            sorted by object ID; the type names' offsets; each type's
 *            retained bytes; the names
 *   table    the offset of each section
 * Every part starts on 8 bytes. Nothing read is trusted: each offset and
 * count is checked against the mapping before use. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gs_domtree.h"
#include "gs_dominators.h"
#include "gs_error.h"
#include "gs_json.h"

static const char MAGIC[8] = {'G', 'S', 'D', 'O', 'M', 'T', '1', '\n'};
#define NO_TYPE UINT32_MAX
#define MAX_SECTIONS 65536u

typedef struct file_head {
  char magic[8];
  gs_domtree_stamp stamp;
  uint64_t nsections, table;
} file_head;

typedef struct sec_head {
  uint64_t reachable_bytes, reachable_objects, unreachable_objects, unreachable_bytes;
  uint32_t nnodes, ntypes, name_len, names_len;
} sec_head;

typedef struct dt_node {
  uint64_t id, shallow, retained;
  uint32_t type, parent, first, count;
} dt_node;

static uint64_t pad8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

int gs_domtree_stamp_of(const char *path, gs_domtree_stamp *stamp) {
  struct stat st;
  if (stat(path, &st) != 0) return GS_EIO;
  memset(stamp, 0, sizeof *stamp);
  stamp->size = (uint64_t)st.st_size;
  stamp->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
  stamp->ino = (uint64_t)st.st_ino;
  return GS_OK;
}

/* ---- writing ------------------------------------------------------------ */

typedef struct writer {
  FILE *out;
  uint64_t *offsets;
  size_t nsections, cap;
} writer;

static int put(writer *w, const void *p, size_t n) {
  static const char zeros[8] = {0};
  if (n && fwrite(p, 1, n, w->out) != n) return GS_EIO;
  return fwrite(zeros, 1, (size_t)(pad8(n) - n), w->out) == pad8(n) - n ? GS_OK : GS_EIO;
}

static const uint64_t *order_retained;
static const uint64_t *order_ids;

/* Largest retained first; then by ID, so the order is the same every time. */
static int by_retained(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (order_retained[x] != order_retained[y]) return order_retained[x] < order_retained[y] ? 1 : -1;
  return order_ids[x] < order_ids[y] ? -1 : order_ids[x] > order_ids[y];
}

static const dt_node *order_nodes;

static int by_id(const void *a, const void *b) {
  uint64_t x = order_nodes[*(const uint32_t *)a].id, y = order_nodes[*(const uint32_t *)b].id;
  return x < y ? -1 : x > y;
}

/* Sorts the children of graph node p (by_retained's order). */
static void sort_children(const gs_dominators *s, const uint32_t *start, uint32_t *kids, uint32_t p) {
  order_retained = s->dom.retained;
  order_ids = s->g->ids;
  if (start[p + 1] - start[p] > 1) qsort(kids + start[p], start[p + 1] - start[p], sizeof *kids, by_retained);
}

/* Moves the first k children of graph node p in by_retained's order, in
 * that order, to the front of its list: one pass, not a sort of them all. */
static void first_children(const gs_dominators *s, const uint32_t *start, uint32_t *kids,
                           uint32_t p, uint32_t k) {
  uint32_t *a = kids + start[p], n = start[p + 1] - start[p], i, j, have = 0;
  order_retained = s->dom.retained;
  order_ids = s->g->ids;
  for (i = 0; i < n && k; i++) {
    uint32_t x = a[i];
    if (have == k && by_retained(&x, &a[k - 1]) >= 0) continue;
    j = have < k ? have++ : k - 1;     /* the slot x takes, its holder moves to i */
    a[i] = a[j];
    for (; j > 0 && by_retained(&x, &a[j - 1]) < 0; j--) a[j] = a[j - 1];
    a[j] = x;
  }
}

/* kids[start[p] .. start[p + 1]) are the children of graph node p (n is
 * the virtual root), sorted when sorted is set. */
static int children_of(const gs_dominators *s, uint32_t *start, uint32_t *kids, int sorted) {
  uint32_t v, n = s->g->nnodes, *fill = calloc((size_t)n + 2, sizeof *fill);
  if (!fill) return GS_ENOMEM;
  for (v = 0; v < n; v++)
    if (s->dom.idom[v] != GS_DOM_UNREACHABLE) start[s->dom.idom[v] + 1]++;
  for (v = 0; v <= n; v++) start[v + 1] += start[v];
  for (v = 0; v < n; v++)
    if (s->dom.idom[v] != GS_DOM_UNREACHABLE) kids[start[s->dom.idom[v]] + fill[s->dom.idom[v]]++] = v;
  free(fill);
  for (v = 0; sorted && v <= n; v++) sort_children(s, start, kids, v);
  return GS_OK;
}

/* The nodes in breadth-first order from the children lists. */
static void lay_out(const gs_dominators *s, const uint32_t *start, const uint32_t *kids,
                    uint32_t *tree, uint32_t *pos, dt_node *nodes, uint32_t nt) {
  const gs_graph *g = s->g;
  uint32_t head, tail = 1, n = g->nnodes, k;
  tree[0] = n;
  pos[n] = 0;
  for (head = 0; head < nt; head++) {
    uint32_t u;
    dt_node *d = &nodes[head];
    assert(head < tail);   /* every reachable node hangs from the root */
    u = tree[head];
    d->id = u == n ? 0 : g->ids[u];
    d->shallow = u == n ? 0 : g->sizes[u];
    d->retained = s->dom.retained[u];
    d->type = u == n ? NO_TYPE : g->types[u] == GS_GRAPH_MISSING ? g->ntypes : g->types[u];
    d->parent = u == n ? 0 : pos[s->dom.idom[u]];
    d->first = tail;
    d->count = start[u + 1] - start[u];
    for (k = start[u]; k < start[u + 1]; k++) { pos[kids[k]] = tail; tree[tail++] = kids[k]; }
  }
}

/* The offsets of the types' names, their retained bytes (without double
 * counting, gs_dom_retained_by_type) and the names, NUL-terminated. */
static int put_types(writer *w, const gs_graph *g, const uint64_t *retained, uint32_t len) {
  uint32_t t, off = 0, *offs = malloc(((size_t)g->ntypes + 1) * sizeof *offs);
  char buf[64], *names = malloc(len ? len : 1);
  int err = offs && names ? GS_OK : GS_ENOMEM;
  for (t = 0; !err && t <= g->ntypes; t++) {
    const char *name = gs_dominators_type_name(g, t, buf, sizeof buf);
    offs[t] = off;
    memcpy(names + off, name, strlen(name) + 1);
    off += (uint32_t)strlen(name) + 1;
  }
  if (!err) err = put(w, offs, ((size_t)g->ntypes + 1) * sizeof *offs);
  if (!err) err = put(w, retained, ((size_t)g->ntypes + 1) * sizeof *retained);
  if (!err) err = put(w, names, len);
  free(offs);
  free(names);
  return err;
}

static uint32_t names_len(const gs_graph *g) {
  uint32_t t, len = 0;
  char buf[64];
  for (t = 0; t <= g->ntypes; t++) len += (uint32_t)strlen(gs_dominators_type_name(g, t, buf, sizeof buf)) + 1;
  return len;
}

static int put_nodes(writer *w, const dt_node *nodes, uint32_t nt) {
  uint32_t i, *byid = malloc((size_t)nt * sizeof *byid);
  int err;
  if (!byid) return GS_ENOMEM;
  for (i = 1; i < nt; i++) byid[i - 1] = i;
  order_nodes = nodes;
  qsort(byid, nt - 1, sizeof *byid, by_id);
  err = put(w, nodes, (size_t)nt * sizeof *nodes);
  if (!err) err = put(w, byid, (size_t)(nt - 1) * sizeof *byid);
  free(byid);
  return err;
}

/* Room for one more section's offset. */
static int grow(writer *w) {
  uint64_t *more;
  if (w->nsections < w->cap) return GS_OK;
  if (w->nsections >= MAX_SECTIONS) return GS_ELIMIT;
  if (!(more = realloc(w->offsets, (w->cap * 2 + 8) * sizeof *more))) return GS_ENOMEM;
  w->offsets = more;
  w->cap = w->cap * 2 + 8;
  return GS_OK;
}

static int put_head(writer *w, const gs_dominators *s, uint32_t nt, sec_head *h) {
  const gs_graph *g = s->g;
  long at = ftell(w->out);
  if (at < 0) return GS_EIO;
  memset(h, 0, sizeof *h);
  h->reachable_bytes = s->dom.retained[g->nnodes];
  h->reachable_objects = s->reachable;
  h->unreachable_objects = s->unreachable;
  h->unreachable_bytes = s->unreachable_bytes;
  h->nnodes = nt;
  h->ntypes = g->ntypes + 1;
  h->name_len = (uint32_t)strlen(g->name);
  h->names_len = names_len(g);
  w->offsets[w->nsections++] = (uint64_t)at;
  return put(w, h, sizeof *h);
}

static int put_section(void *ctx, const gs_dominators *s, size_t index) {
  writer *w = ctx;
  const gs_graph *g = s->g;
  uint32_t v, n = g->nnodes, nt = 1, *start, *kids, *tree, *pos;
  uint64_t *by_type = NULL;
  dt_node *nodes;
  sec_head h;
  int err;
  (void)index;
  for (v = 0; v < n; v++) nt += s->dom.idom[v] != GS_DOM_UNREACHABLE;
  start = calloc((size_t)n + 2, sizeof *start);
  kids = malloc(((size_t)n + 1) * sizeof *kids);
  tree = malloc((size_t)nt * sizeof *tree);
  pos = malloc(((size_t)n + 1) * sizeof *pos);
  nodes = calloc(nt, sizeof *nodes);
  err = start && kids && tree && pos && nodes ? grow(w) : GS_ENOMEM;
  if (!err) err = children_of(s, start, kids, 1);
  if (!err) {
    lay_out(s, start, kids, tree, pos, nodes, nt);
    err = put_head(w, s, nt, &h);
  }
  if (!err) err = put(w, g->name, h.name_len + 1);
  if (!err) err = put_nodes(w, nodes, nt);
  if (!err && !(by_type = calloc((size_t)g->ntypes + 1, sizeof *by_type))) err = GS_ENOMEM;
  if (!err) err = gs_dom_retained_by_type(g, &s->dom, by_type);
  if (!err) err = put_types(w, g, by_type, h.names_len);
  free(start); free(kids); free(tree); free(pos); free(nodes); free(by_type);
  return err;
}

static int finish(writer *w, gs_domtree_stamp stamp) {
  file_head fh;
  long at = ftell(w->out);
  memset(&fh, 0, sizeof fh);
  memcpy(fh.magic, MAGIC, sizeof MAGIC);
  fh.stamp = stamp;
  fh.nsections = w->nsections;
  fh.table = (uint64_t)at;
  if (at < 0 || put(w, w->offsets, w->nsections * sizeof *w->offsets)) return GS_EIO;
  if (fflush(w->out) || fseek(w->out, 0, SEEK_SET) || put(w, &fh, sizeof fh) || fflush(w->out) ||
      fsync(fileno(w->out)))
    return GS_EIO;
  return GS_OK;
}

int gs_domtree_write(const char *dump, const char *out, gs_domtree_stamp stamp,
                     gs_file_fault *fault) {
  size_t n = strlen(out) + 32;
  char *tmp = malloc(n);
  file_head blank;
  writer w;
  int err;
  memset(&w, 0, sizeof w);
  memset(&blank, 0, sizeof blank);
  if (!tmp) return gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  snprintf(tmp, n, "%s.%ld.tmp", out, (long)getpid());
  if (!(w.out = fopen(tmp, "wb")) || put(&w, &blank, sizeof blank))
    err = gs_file_fault_text(fault, out, GS_EIO, strerror(errno));
  else if ((err = gs_dominators_each(dump, 1, 0, put_section, &w, fault)) == GS_OK &&
           (err = finish(&w, stamp)) != GS_OK)
    gs_file_fault_text(fault, out, err, strerror(errno));
  if (w.out && fclose(w.out) != 0 && !err) err = gs_file_fault_text(fault, out, GS_EIO, strerror(errno));
  if (!err && rename(tmp, out) != 0) err = gs_file_fault_text(fault, out, GS_EIO, strerror(errno));
  if (err) unlink(tmp);
  free(tmp);
  free(w.offsets);
  return err;
}

/* ---- reading ------------------------------------------------------------ */

struct gs_domtree {
  const unsigned char *map;
  size_t len;
  uint64_t nsections;
  const uint64_t *table;
};

typedef struct sec_view {
  const sec_head *h;
  const char *name;
  const dt_node *nodes;
  const uint32_t *byid, *type_offs;
  const uint64_t *type_retained;
  const char *names;
} sec_view;

/* A part of n bytes at *at, which then moves past it; NULL when the file
 * is too short. */
static const void *part(const gs_domtree *t, uint64_t *at, uint64_t n) {
  const void *p = t->map + *at;
  if (*at > t->len || n > t->len - *at || pad8(n) > t->len - *at) return NULL;
  *at += pad8(n);
  return p;
}

static int view_of(const gs_domtree *t, uint32_t index, sec_view *v) {
  uint64_t at = t->table[index];
  const sec_head *h;
  if (at % 8 || !(h = part(t, &at, sizeof *h)) || h->nnodes == 0 || h->ntypes == 0 || h->names_len == 0)
    return GS_EFORMAT;
  v->h = h;
  v->name = part(t, &at, (uint64_t)h->name_len + 1);
  v->nodes = part(t, &at, (uint64_t)h->nnodes * sizeof *v->nodes);
  v->byid = part(t, &at, ((uint64_t)h->nnodes - 1) * sizeof *v->byid);
  v->type_offs = part(t, &at, (uint64_t)h->ntypes * sizeof *v->type_offs);
  v->type_retained = part(t, &at, (uint64_t)h->ntypes * sizeof *v->type_retained);
  v->names = part(t, &at, h->names_len);
  if (!v->name || !v->nodes || (!v->byid && h->nnodes > 1) || !v->type_offs || !v->type_retained || !v->names ||
      v->name[h->name_len] || v->names[h->names_len - 1])
    return GS_EFORMAT;
  return GS_OK;
}

static int check_head(const gs_domtree *t, gs_domtree_stamp stamp) {
  const file_head *fh = (const file_head *)t->map;
  if (t->len < sizeof *fh || memcmp(fh->magic, MAGIC, sizeof MAGIC)) return GS_EFORMAT;
  if (memcmp(&fh->stamp, &stamp, sizeof stamp)) return GS_EOF;
  if (fh->nsections == 0 || fh->nsections > MAX_SECTIONS || fh->table % 8 || fh->table > t->len ||
      fh->nsections * 8 > t->len - fh->table)
    return GS_EFORMAT;
  return GS_OK;
}

int gs_domtree_open(const char *path, gs_domtree_stamp stamp, gs_domtree **out) {
  gs_domtree *t;
  struct stat st;
  void *map;
  int fd = open(path, O_RDONLY | O_CLOEXEC), err;
  *out = NULL;
  if (fd < 0) return errno == ENOENT ? GS_EOF : GS_EIO;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return st.st_size == 0 ? GS_EFORMAT : GS_EIO;
  }
  map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return GS_EIO;
  if (!(t = calloc(1, sizeof *t))) { munmap(map, (size_t)st.st_size); return GS_ENOMEM; }
  t->map = map;
  t->len = (size_t)st.st_size;
  if ((err = check_head(t, stamp)) != GS_OK) { gs_domtree_close(t); return err; }
  t->nsections = ((const file_head *)map)->nsections;
  t->table = (const uint64_t *)(t->map + ((const file_head *)map)->table);
  *out = t;
  return GS_OK;
}

void gs_domtree_close(gs_domtree *t) {
  if (!t) return;
  munmap((void *)t->map, t->len);
  free(t);
}

/* ---- answering ---------------------------------------------------------- */

/* The node of object id, 0 when absent (node 0 is the root). */
static uint32_t find(const sec_view *v, uint64_t id) {
  uint32_t lo = 0, hi = v->h->nnodes - 1;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2, i = v->byid[mid];
    if (i == 0 || i >= v->h->nnodes) return 0;
    if (v->nodes[i].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < v->h->nnodes - 1 && v->byid[lo] < v->h->nnodes && v->nodes[v->byid[lo]].id == id ? v->byid[lo] : 0;
}

/* One node as JSON; NULL when it is damaged or memory ran out. */
static json_t *node_json(const sec_view *v, uint32_t i) {
  const dt_node *d = &v->nodes[i];
  json_t *o;
  char id[24];
  if ((uint64_t)d->first + d->count > v->h->nnodes || (d->type != NO_TYPE && (d->type >= v->h->ntypes ||
      v->type_offs[d->type] >= v->h->names_len)) || !(o = json_object()))
    return NULL;
  snprintf(id, sizeof id, "%" PRIx64, d->id);
  gs_json_set(o, "id", gs_json_cstring(i == 0 ? "root" : id));
  gs_json_set(o, "type", i == 0 ? json_null() : gs_json_cstring(v->names + v->type_offs[d->type]));
  gs_json_set(o, "shallow", gs_json_u64(d->shallow));
  gs_json_set(o, "retained", gs_json_u64(d->retained));
  gs_json_set(o, "percent", json_real(v->h->reachable_bytes ? 100.0 * (double)d->retained /
                                                            (double)v->h->reachable_bytes : 0.0));
  gs_json_set(o, "children", gs_json_u64(d->count));
  return o;
}

/* The dominators of node i from the root down, as IDs. */
static json_t *chain_json(const sec_view *v, uint32_t i) {
  json_t *a = json_array();
  char id[24];
  uint32_t hops = 0;
  while (a && i != 0 && hops++ < v->h->nnodes) {
    i = v->nodes[i].parent;
    if (i >= v->h->nnodes) break;
    snprintf(id, sizeof id, "%" PRIx64, v->nodes[i].id);
    json_array_insert_new(a, 0, gs_json_cstring(i == 0 ? "root" : id));
  }
  return a;
}

static json_t *page_json(const sec_view *v, uint32_t i, const gs_domtree_query *q) {
  const dt_node *d = &v->nodes[i];
  json_t *kids = json_array();
  uint64_t k, end = q->offset + q->limit;
  if (end < q->offset || end > d->count) end = d->count;
  for (k = q->offset; kids && k < end; k++)
    if (json_array_append_new(kids, node_json(v, (uint32_t)(d->first + k)))) {
      json_decref(kids);
      return NULL;
    }
  return kids;
}

/* Adds the retained bytes of each type of section v to by_name. */
static int add_by_type(const sec_view *v, json_t *by_name) {
  uint32_t ty;
  for (ty = 0; ty < v->h->ntypes; ty++) {
    const char *name;
    json_t *had;
    if (v->type_offs[ty] >= v->h->names_len) return GS_EFORMAT;
    if (!v->type_retained[ty]) continue;
    name = v->names + v->type_offs[ty];
    had = json_object_get(by_name, name);
    if (json_object_set_new(by_name, name, gs_json_u64(v->type_retained[ty] +
                                                       (had ? (uint64_t)json_integer_value(had) : 0))))
      return GS_ENOMEM;
  }
  return GS_OK;
}

int gs_domtree_by_type(const gs_domtree *t, json_t **out) {
  json_t *by_name = json_object();
  uint32_t i;
  int err = by_name ? GS_OK : GS_ENOMEM;
  for (i = 0; !err && i < t->nsections; i++) {
    sec_view v;
    err = view_of(t, i, &v);
    if (!err) err = add_by_type(&v, by_name);
  }
  if (err) json_decref(by_name);
  *out = err ? NULL : by_name;
  return err;
}

int gs_domtree_children(const gs_domtree *t, const gs_domtree_query *q, json_t **out,
                        char *why, size_t cap) {
  sec_view v;
  json_t *o, *node, *kids;
  uint32_t i = 0;
  int err;
  *out = NULL;
  if (q->section >= t->nsections) {
    snprintf(why, cap, "no section %" PRIu32 " (the dump has %" PRIu64 ")", q->section, t->nsections);
    return GS_EINVAL;
  }
  if ((err = view_of(t, q->section, &v)) != GS_OK) return err;
  if (!q->root && (i = find(&v, q->parent)) == 0) {
    snprintf(why, cap, "no reachable object %" PRIx64 " in section %" PRIu32, q->parent, q->section);
    return GS_EINVAL;
  }
  node = node_json(&v, i);
  kids = node ? page_json(&v, i, q) : NULL;
  if (!node || !kids || !(o = json_object())) {
    json_decref(node);
    json_decref(kids);
    return node ? GS_ENOMEM : GS_EFORMAT;
  }
  gs_json_set(o, "section", gs_json_u64(q->section));
  gs_json_set(o, "sections", gs_json_u64(t->nsections));
  gs_json_set(o, "name", gs_json_cstring(v.name));
  gs_json_set(o, "reachable_objects", gs_json_u64(v.h->reachable_objects));
  gs_json_set(o, "reachable_bytes", gs_json_u64(v.h->reachable_bytes));
  gs_json_set(o, "node", node);
  gs_json_set(o, "dominators", chain_json(&v, i));
  gs_json_set(o, "offset", gs_json_u64(q->offset));
  gs_json_set(o, "limit", gs_json_u64(q->limit));
  gs_json_set(o, "children", kids);
  if (q->by_type) {
    json_t *by_type;
    if ((err = gs_domtree_by_type(t, &by_type)) != GS_OK) { json_decref(o); return err; }
    gs_json_set(o, "retained_by_type", by_type);
  }
  *out = o;
  return GS_OK;
}

/* ---- the tree to a bounded depth, as one JSON object ------------------- */

/* Only the children shown are put in order, as their parent is reached. */
typedef struct nest {
  const gs_dominators *s;
  const uint32_t *start;
  uint32_t *kids;
  unsigned depth, fanout;
} nest;

static json_t *nest_node(const nest *ne, uint32_t u, unsigned depth) {
  const gs_graph *g = ne->s->g;
  uint32_t k, count = ne->start[u + 1] - ne->start[u];
  json_t *o = json_object(), *kids = json_array();
  char id[24], buf[64];
  if (!o || !kids) { json_decref(o); json_decref(kids); return NULL; }
  snprintf(id, sizeof id, "%" PRIx64, u == g->nnodes ? 0 : g->ids[u]);
  gs_json_set(o, "id", gs_json_cstring(u == g->nnodes ? "root" : id));
  gs_json_set(o, "type", u == g->nnodes ? json_null()
              : gs_json_cstring(gs_dominators_type_name(g, g->types[u], buf, sizeof buf)));
  gs_json_set(o, "shallow", gs_json_u64(u == g->nnodes ? 0 : g->sizes[u]));
  gs_json_set(o, "retained", gs_json_u64(ne->s->dom.retained[u]));
  gs_json_set(o, "children", gs_json_u64(count));
  if (depth < ne->depth) first_children(ne->s, ne->start, ne->kids, u, ne->fanout);
  for (k = 0; depth < ne->depth && k < count && k < ne->fanout; k++)
    if (json_array_append_new(kids, nest_node(ne, ne->kids[ne->start[u] + k], depth + 1))) break;
  gs_json_set(o, "kids", kids);
  return o;
}

json_t *gs_domtree_nest_section(const gs_dominators *s, unsigned depth, unsigned fanout) {
  uint32_t n = s->g->nnodes, *start = calloc((size_t)n + 2, sizeof *start);
  uint32_t *kids = malloc(((size_t)n + 1) * sizeof *kids);
  json_t *sec = json_object();
  nest ne;
  int bad = !start || !kids || !sec || children_of(s, start, kids, 0);
  ne.s = s;
  ne.start = start;
  ne.kids = kids;
  ne.depth = depth;
  ne.fanout = fanout;
  bad = bad || gs_json_set(sec, "name", gs_json_cstring(s->g->name)) ||
        gs_json_set(sec, "reachable_bytes", gs_json_u64(s->dom.retained[n])) ||
        gs_json_set(sec, "reachable_objects", gs_json_u64(s->reachable)) ||
        gs_json_set(sec, "root", nest_node(&ne, n, 0));
  free(start);
  free(kids);
  return gs_json_unless(sec, bad);
}

json_t *gs_domtree_nest_object(unsigned depth, unsigned fanout, json_t *sections) {
  json_t *o = json_object();
  int bad = !o || gs_json_set(o, "depth", gs_json_u64(depth)) ||
            gs_json_set(o, "fanout", gs_json_u64(fanout)) ||
            gs_json_set(o, "sections", json_incref(sections));
  json_decref(sections);
  return gs_json_unless(o, bad);
}

typedef struct nest_run { json_t *sections; unsigned depth, fanout; } nest_run;

static int nest_section(void *ctx, const gs_dominators *s, size_t index) {
  nest_run *nr = ctx;
  (void)index;
  return json_array_append_new(nr->sections, gs_domtree_nest_section(s, nr->depth, nr->fanout))
             ? GS_ENOMEM : GS_OK;
}

int gs_domtree_nested(const char *dump, unsigned depth, unsigned fanout, json_t **out,
                      gs_file_fault *fault) {
  nest_run nr;
  int err;
  *out = NULL;
  nr.depth = depth;
  nr.fanout = fanout;
  if (!(nr.sections = json_array())) return gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  if ((err = gs_dominators_each(dump, 1, 0, nest_section, &nr, fault)) != GS_OK) {
    json_decref(nr.sections);
    return err;
  }
  if (!(*out = gs_domtree_nest_object(depth, fanout, nr.sections)))
    err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  return err;
}
