/* gs_graph.c - loads one section of a dump into a compact object graph.
 *
 * Nodes are numbered in order of first mention, so a reference to an object
 * that comes later in the file resolves at once to a placeholder node that the
 * object's own record fills in. References are therefore stored as 4-byte
 * node indices from the start, in file order, with a (start, count) pair per
 * node; when the section ends they are regrouped into CSR order and the ID
 * map is freed, leaving 24 bytes per object and 4 per reference.
 *
 * As in the validator, ID lookups are queued and their hash slots prefetched
 * in batches, which hides most of the cache misses of a large heap. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_graph.h"
#include "gs_idmap.h"

#define BATCH 512
#define NODE_DEFINED 1u
#define MAX_NODES (UINT32_MAX - 1u)
#define MAX_REFS UINT32_MAX

enum { P_DEF, P_REF, P_ROOT };

typedef struct pending {
  uint64_t id, size, line;
  uint32_t type, start, count, what;   /* start: edge or root slot for P_REF / P_ROOT */
} pending;

typedef struct loader {
  gs_reader *reader;
  gs_graph *g;
  gs_diag *err;
  gs_idmap objects;              /* object ID -> node */
  gs_idmap types;                /* type ID -> type index */
  uint32_t *starts, *counts;     /* per node, file-order edges */
  size_t nodes_cap, edges_cap, types_cap, names_cap, names_len, roots_cap;
  pending queue[BATCH];
  size_t nqueue;
} loader;

/* ---- small helpers --------------------------------------------------- */

/* Gives back the slack that growth left behind. */
static void *shrink(void *arr, size_t n, size_t elem) {
  void *p = realloc(arr, n ? n * elem : 1);
  return p ? p : arr;
}

static int fail(loader *l, gs_diag_code code, uint64_t line, const char *fmt, ...) {
  va_list ap;
  l->err->code = code;
  l->err->line = line;
  va_start(ap, fmt);
  vsnprintf(l->err->message, sizeof l->err->message, fmt, ap);
  va_end(ap);
  return GS_EFORMAT;
}

/* ---- nodes ----------------------------------------------------------- */

static int grow_nodes(loader *l, size_t need) {
  gs_graph *g = l->g;
  size_t cap = l->nodes_cap, c;
  if (need <= cap) return GS_OK;
  if (need > MAX_NODES) return GS_ELIMIT;
  c = cap; if (gs_array_reserve((void **)&g->ids, &c, need, sizeof *g->ids)) return GS_ENOMEM;
  c = cap; if (gs_array_reserve((void **)&g->sizes, &c, need, sizeof *g->sizes)) return GS_ENOMEM;
  c = cap; if (gs_array_reserve((void **)&g->types, &c, need, sizeof *g->types)) return GS_ENOMEM;
  c = cap; if (gs_array_reserve((void **)&l->starts, &c, need, sizeof *l->starts)) return GS_ENOMEM;
  c = cap; if (gs_array_reserve((void **)&l->counts, &c, need, sizeof *l->counts)) return GS_ENOMEM;
  l->nodes_cap = c;
  return GS_OK;
}

/* Node of an object ID, created as a placeholder on first mention. */
static int node_of(loader *l, uint64_t id, gs_idmap_slot **slot) {
  gs_graph *g = l->g;
  int inserted = gs_idmap_put(&l->objects, id, slot), err;
  uint32_t n;
  if (inserted <= 0) return inserted;
  if ((err = grow_nodes(l, (size_t)g->nnodes + 1))) return err;
  n = g->nnodes++;
  (*slot)->value = n;
  g->ids[n] = id;
  g->sizes[n] = 0;
  g->types[n] = GS_GRAPH_MISSING;
  l->starts[n] = l->counts[n] = 0;
  return GS_OK;
}

static int apply_queue(loader *l) {
  gs_graph *g = l->g;
  size_t i;
  for (i = 0; i < l->nqueue; i++) gs_idmap_prefetch(&l->objects, l->queue[i].id);
  for (i = 0; i < l->nqueue; i++) {
    const pending *q = &l->queue[i];
    gs_idmap_slot *s;
    uint32_t n;
    int err = node_of(l, q->id, &s);
    if (err < 0) return err;
    n = s->value;
    if (q->what == P_REF) { g->refs[q->start] = n; continue; }
    if (q->what == P_ROOT) { g->roots[q->start].node = n; continue; }
    if (s->bits & NODE_DEFINED)
      return fail(l, GS_D_DUPLICATE_OBJECT, q->line, "object %llx is defined twice", (unsigned long long)q->id);
    s->bits |= NODE_DEFINED;
    g->sizes[n] = q->size;
    g->types[n] = q->type;
    l->starts[n] = q->start;
    l->counts[n] = q->count;
    g->nobjects++;
  }
  l->nqueue = 0;
  return GS_OK;
}

static int enqueue(loader *l, uint32_t what, uint64_t id, uint32_t start) {
  pending *q;
  if (l->nqueue == BATCH) {
    int err = apply_queue(l);
    if (err) return err;
  }
  q = &l->queue[l->nqueue++];
  q->what = what;
  q->id = id;
  q->start = start;
  return GS_OK;
}

/* ---- types ----------------------------------------------------------- */

static int type_of(loader *l, uint64_t id, uint32_t *index) {
  gs_graph *g = l->g;
  gs_idmap_slot *s;
  int inserted = gs_idmap_put(&l->types, id, &s);
  if (inserted < 0) return inserted;
  if (inserted) {
    size_t c = l->types_cap;
    if (g->ntypes == MAX_NODES) return GS_ELIMIT;
    if (gs_array_reserve((void **)&g->type_ids, &c, (size_t)g->ntypes + 1, sizeof *g->type_ids))
      return GS_ENOMEM;
    c = l->types_cap;
    if (gs_array_reserve((void **)&g->type_name_offsets, &c, (size_t)g->ntypes + 1, sizeof(uint32_t)))
      return GS_ENOMEM;
    l->types_cap = c;
    s->value = g->ntypes++;
    g->type_ids[s->value] = id;
    g->type_name_offsets[s->value] = UINT32_MAX;
  }
  *index = s->value;
  return GS_OK;
}

static int define_type(loader *l, const gs_record *rec) {
  gs_graph *g = l->g;
  uint32_t t, off;
  int err = type_of(l, rec->id, &t);
  if (err) return err;
  off = g->type_name_offsets[t];
  if (off != UINT32_MAX) {
    const char *old = g->type_names + off;
    if (strlen(old) == rec->name_len && !memcmp(old, rec->name, rec->name_len)) return GS_OK;
    return fail(l, GS_D_TYPE_REDEFINED, rec->line, "type %llx is redefined with another name",
                (unsigned long long)rec->id);
  }
  if (l->names_len + rec->name_len + 1 >= UINT32_MAX) return GS_ELIMIT;
  if (gs_array_reserve((void **)&g->type_names, &l->names_cap, l->names_len + rec->name_len + 1, 1))
    return GS_ENOMEM;
  memcpy(g->type_names + l->names_len, rec->name, rec->name_len);
  g->type_names[l->names_len + rec->name_len] = 0;
  g->type_name_offsets[t] = (uint32_t)l->names_len;
  l->names_len += rec->name_len + 1;
  return GS_OK;
}

/* ---- records --------------------------------------------------------- */

static int add_object(loader *l, const gs_record *rec) {
  gs_graph *g = l->g;
  uint32_t type, start = (uint32_t)g->nrefs;
  pending *q;
  size_t i;
  int err;
  if (g->nrefs + rec->nrefs > MAX_REFS) return GS_ELIMIT;
  if ((err = type_of(l, rec->type, &type))) return err;
  if (gs_array_reserve((void **)&g->refs, &l->edges_cap, g->nrefs + rec->nrefs, sizeof *g->refs))
    return GS_ENOMEM;
  for (i = 0; i < rec->nrefs; i++)
    if ((err = enqueue(l, P_REF, rec->refs[i], (uint32_t)(g->nrefs + i)))) return err;
  g->nrefs += rec->nrefs;
  if ((err = enqueue(l, P_DEF, rec->id, start))) return err;
  q = &l->queue[l->nqueue - 1];
  q->size = rec->size;
  q->type = type;
  q->count = (uint32_t)rec->nrefs;
  q->line = rec->line;
  return GS_OK;
}

static int add_root(loader *l, const gs_record *rec) {
  gs_graph *g = l->g;
  gs_graph_root *r;
  uint32_t container = GS_GRAPH_MISSING;
  int err;
  if (rec->has_container && (err = type_of(l, rec->type, &container))) return err;
  if (g->nroots == MAX_NODES) return GS_ELIMIT;
  if (gs_array_reserve((void **)&g->roots, &l->roots_cap, (size_t)g->nroots + 1, sizeof *g->roots))
    return GS_ENOMEM;
  r = &g->roots[g->nroots];
  memset(r, 0, sizeof *r);
  r->container = container;
  r->kind = (uint8_t)rec->root_kind;
  r->flags = (uint8_t)(rec->root_flags > 0xff ? 0xff : rec->root_flags);
  return enqueue(l, P_ROOT, rec->id, g->nroots++);
}

static int begin_section(loader *l, const gs_record *rec) {
  gs_graph *g = l->g;
  if (!(g->name = malloc(rec->name_len + 1))) return GS_ENOMEM;
  memcpy(g->name, rec->name, rec->name_len);
  g->name[rec->name_len] = 0;
  g->version = rec->id;
  g->timestamp = rec->has_timestamp ? rec->timestamp : 0;
  g->first_line = rec->line;
  return GS_OK;
}

/* ---- finishing: regroup edges into CSR order ------------------------- */

static int finish(loader *l) {
  gs_graph *g = l->g;
  uint32_t *refs, n;
  uint8_t *missing = NULL;
  uint64_t pos = 0;
  int err = apply_queue(l);
  if (err) return err;
  if (!(g->ref_offsets = malloc(((size_t)g->nnodes + 1) * sizeof *g->ref_offsets)) ||
      !(refs = malloc((g->nrefs ? g->nrefs : 1) * sizeof *refs)))
    return GS_ENOMEM;
  /* A bitset of placeholder nodes stays in cache while counting dangling
   * references; only dumps with missing objects pay for it. */
  if (g->nobjects < g->nnodes) {
    if (!(missing = calloc((size_t)g->nnodes / 8 + 1, 1))) { free(refs); return GS_ENOMEM; }
    for (n = 0; n < g->nnodes; n++)
      if (g->types[n] == GS_GRAPH_MISSING) missing[n >> 3] |= (uint8_t)(1u << (n & 7));
  }
  for (n = 0; n < g->nnodes; n++) {
    const uint32_t *src = g->refs + l->starts[n];
    uint32_t k, c = l->counts[n];
    g->ref_offsets[n] = (uint32_t)pos;
    memcpy(refs + pos, src, (size_t)c * sizeof *refs);
    if (missing)
      for (k = 0; k < c; k++) g->dangling_refs += (missing[src[k] >> 3] >> (src[k] & 7)) & 1;
    pos += c;
  }
  g->ref_offsets[g->nnodes] = (uint32_t)pos;
  free(missing);
  free(g->refs);
  g->refs = refs;
  g->ids = shrink(g->ids, g->nnodes, sizeof *g->ids);
  g->sizes = shrink(g->sizes, g->nnodes, sizeof *g->sizes);
  g->types = shrink(g->types, g->nnodes, sizeof *g->types);
  if (g->type_names) g->type_names = shrink(g->type_names, l->names_len, 1);
  g->type_names_len = l->names_len;
  return GS_OK;
}

/* ---- entry points ---------------------------------------------------- */

static int load_records(loader *l) {
  gs_graph *g = l->g;
  gs_record rec;
  int started = 0;
  for (;;) {
    int err = gs_reader_next(l->reader, &rec);
    if (err == GS_EOF) {
      if (!started) return GS_EOF;
      return fail(l, GS_D_UNTERMINATED, g->first_line,
                  "input ends inside the section opened here (no 'c' record)");
    }
    if (err == GS_EFORMAT) { *l->err = *gs_reader_diag(l->reader); return err; }
    if (err) return err;
    if (!started) {
      if (rec.kind != GS_REC_SECTION)
        return fail(l, GS_D_OUTSIDE_SECTION, rec.line, "'%c' record outside an AppDomain section",
                    (char)rec.kind);
      if ((err = begin_section(l, &rec))) return err;
      started = 1;
      continue;
    }
    switch (rec.kind) {
    case GS_REC_OBJECT: err = add_object(l, &rec); break;
    case GS_REC_ROOT: err = add_root(l, &rec); break;
    case GS_REC_TYPE: err = define_type(l, &rec); break;
    case GS_REC_SECTION:
      return fail(l, GS_D_NESTED_SECTION, rec.line, "AppDomain record inside the section opened at line %llu",
                  (unsigned long long)g->first_line);
    case GS_REC_END:
      if (strlen(g->name) != rec.name_len || memcmp(g->name, rec.name, rec.name_len))
        return fail(l, GS_D_SECTION_NAME, rec.line, "end record names '%.*s' but the section is '%.60s'",
                    (int)(rec.name_len > 60 ? 60 : rec.name_len), rec.name, g->name);
      g->end_timestamp = rec.has_timestamp ? rec.timestamp : 0;
      return finish(l);
    }
    if (err) return err;
  }
}

static size_t expected_objects(gs_reader *r) {
  uint64_t n = gs_reader_size_hint(r) / GS_IDMAP_BYTES_PER_ID;
  return n < (1u << 12) ? (1u << 12) : n > MAX_NODES ? MAX_NODES : (size_t)n;
}

/* Reserves generously from the size hint: pages that are never touched cost
 * nothing, and finish() gives back the slack. */
static int reserve_arrays(loader *l) {
  size_t nodes = expected_objects(l->reader) * 2, edges = nodes * 4;
  if (grow_nodes(l, nodes)) return GS_ENOMEM;
  return gs_array_reserve((void **)&l->g->refs, &l->edges_cap, edges, sizeof *l->g->refs);
}

int gs_graph_load(gs_reader *r, gs_graph **out, gs_diag *err_out) {
  loader l;
  gs_diag scratch;
  int err;
  memset(&l, 0, sizeof l);
  l.reader = r;
  l.err = err_out ? err_out : &scratch;
  *out = NULL;
  if (!(l.g = calloc(1, sizeof *l.g))) return GS_ENOMEM;
  if (gs_idmap_init(&l.objects, expected_objects(r)) || gs_idmap_init(&l.types, 1024) ||
      reserve_arrays(&l))
    err = GS_ENOMEM;
  else
    err = load_records(&l);
  gs_idmap_free(&l.objects);
  gs_idmap_free(&l.types);
  free(l.starts);
  free(l.counts);
  if (err) { gs_graph_free(l.g); return err; }
  *out = l.g;
  return GS_OK;
}

void gs_graph_free(gs_graph *g) {
  if (!g) return;
  free(g->name);
  free(g->ids);
  free(g->sizes);
  free(g->types);
  free(g->ref_offsets);
  free(g->refs);
  free(g->type_ids);
  free(g->type_name_offsets);
  free(g->type_names);
  free(g->roots);
  free(g);
}

const char *gs_graph_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  if (t < g->ntypes && g->type_name_offsets[t] != UINT32_MAX)
    return g->type_names + g->type_name_offsets[t];
  if (t < g->ntypes) snprintf(buf, cap, "?%llx", (unsigned long long)g->type_ids[t]);
  else snprintf(buf, cap, "?");
  return buf;
}

int gs_graph_reachable(const gs_graph *g, uint8_t *bits) {
  uint32_t *stack, top = 0, i;
  if (!(stack = malloc(((size_t)g->nnodes + 1) * sizeof *stack))) return GS_ENOMEM;
#define MARK(n) (bits[(n) >> 3] & (1u << ((n) & 7)))
  for (i = 0; i < g->nroots; i++) {
    uint32_t n = g->roots[i].node;
    if ((g->roots[i].flags & GS_FLAG_WEAK) || MARK(n)) continue;
    bits[n >> 3] |= (uint8_t)(1u << (n & 7));
    stack[top++] = n;
  }
  while (top) {
    uint32_t n = stack[--top], k;
    for (k = g->ref_offsets[n]; k < g->ref_offsets[n + 1]; k++) {
      uint32_t m = g->refs[k];
      if (MARK(m)) continue;
      bits[m >> 3] |= (uint8_t)(1u << (m & 7));
      stack[top++] = m;
    }
  }
#undef MARK
  free(stack);
  return GS_OK;
}

size_t gs_graph_memory(const gs_graph *g) {
  size_t per_node = sizeof *g->ids + sizeof *g->sizes + sizeof *g->types + sizeof *g->ref_offsets;
  size_t per_type = sizeof *g->type_ids + sizeof *g->type_name_offsets;
  return (size_t)g->nnodes * per_node + sizeof *g->ref_offsets +
         (size_t)g->nrefs * sizeof *g->refs + (size_t)g->ntypes * per_type +
         g->type_names_len + (size_t)g->nroots * sizeof *g->roots;
}
