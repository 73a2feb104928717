/* gs_graph.c - loads one section of a dump into a compact object graph.
 *
 * Objects are kept in file order while the section streams in, their
 * references as 4-byte codes of their IDs (gs_refcodes) and their IDs in a
 * gs_idset. When the section ends, the set is sealed and each ID's rank
 * becomes its node number, so the references are resolved in one sequential
 * pass, in place, to 4-byte node numbers, with no hash table of IDs at all:
 * loading holds little more than the graph and its reader. Objects are
 * numbered in ID order (which is file order for a heap walked by address);
 * IDs referenced or rooted but not in the dump get placeholder nodes after
 * the objects. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_graph.h"
#include "gs_graph_pack.h"
#include "gs_idmap.h"
#include "gs_idset.h"
#include "gs_refcodes.h"

#define MAX_NODES (UINT32_MAX - 1u)
#define MAX_REFS UINT32_MAX
/* How many nodes ahead of the one it visits reachability asks for their
 * references: they land anywhere in arrays far larger than the cache, and
 * asking early lets the misses overlap. */
#define AHEAD 64

typedef struct loader {
  gs_reader *reader;
  gs_graph *g;
  gs_diag *err;
  gs_idset objects;              /* IDs of the objects in the dump */
  gs_idset missing;              /* IDs named but not in the dump */
  gs_idmap types;                /* type ID -> type index */
  gs_refcodes raw;               /* references, in file order */
  uint64_t *root_ids;
  int ascending;                 /* object IDs came in ascending order */
  uint64_t bytes;                /* of the objects so far, up to GS_MAX_BYTES */
  size_t nodes_cap, types_cap, names_cap, names_len, roots_cap, root_ids_cap;
} loader;

/* ---- small helpers --------------------------------------------------- */

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
  /* Every array gets the capacity the first one chose. */
  c = cap; if (gs_array_reserve((void **)&g->ids, &c, need, sizeof *g->ids)) return GS_ENOMEM;
  need = c;
  c = cap; if (gs_array_reserve((void **)&g->sizes, &c, need, sizeof *g->sizes)) return GS_ENOMEM;
  c = cap; if (gs_array_reserve((void **)&g->types, &c, need, sizeof *g->types)) return GS_ENOMEM;
  c = cap ? cap + 1 : 0;
  if (gs_array_reserve((void **)&g->ref_offsets, &c, need + 1, sizeof *g->ref_offsets))
    return GS_ENOMEM;
  l->nodes_cap = need;
  return GS_OK;
}

/* ---- types ----------------------------------------------------------- */

static int type_of(loader *l, uint64_t id, uint32_t *index) {
  gs_graph *g = l->g;
  gs_idmap_slot *s = gs_idmap_find(&l->types, id);
  int inserted;
  if (s) { *index = s->value; return GS_OK; }
  inserted = gs_idmap_put(&l->types, id, &s);
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
  uint32_t type, n = g->nobjects;
  int err;
  if (g->nrefs + rec->nrefs > MAX_REFS) return GS_ELIMIT;
  if ((err = type_of(l, rec->type, &type)) || (err = grow_nodes(l, (size_t)n + 1)) ||
      (err = gs_idset_add(&l->objects, rec->id)) < 0)
    return err;
  if (!err)
    return fail(l, GS_D_DUPLICATE_OBJECT, rec->line, "object %llx is defined twice",
                (unsigned long long)rec->id);
  if (rec->size > GS_MAX_BYTES - l->bytes)
    return fail(l, GS_D_BYTES_OVERFLOW, rec->line, "object sizes add up to more than %llu bytes",
                (unsigned long long)GS_MAX_BYTES);
  l->bytes += rec->size;
  if (gs_refcodes_append(&l->raw, rec->refs, rec->nrefs)) return GS_ENOMEM;
  if (n > 0 && rec->id < g->ids[n - 1]) l->ascending = 0;
  g->ids[n] = rec->id;
  g->sizes[n] = rec->size;
  g->types[n] = type;
  g->ref_offsets[n] = (uint32_t)g->nrefs;
  g->nrefs += rec->nrefs;
  g->nobjects = n + 1;
  return GS_OK;
}

static int add_root(loader *l, const gs_record *rec) {
  gs_graph *g = l->g;
  gs_graph_root *r;
  uint32_t container = GS_GRAPH_MISSING;
  size_t c = l->root_ids_cap;
  int err;
  if (rec->has_container && (err = type_of(l, rec->type, &container))) return err;
  if (g->nroots == MAX_NODES) return GS_ELIMIT;
  if (gs_array_reserve((void **)&g->roots, &l->roots_cap, (size_t)g->nroots + 1, sizeof *g->roots) ||
      gs_array_reserve((void **)&l->root_ids, &c, (size_t)g->nroots + 1, sizeof *l->root_ids))
    return GS_ENOMEM;
  l->root_ids_cap = c;
  r = &g->roots[g->nroots];
  memset(r, 0, sizeof *r);
  r->container = container;
  r->kind = (uint8_t)rec->root_kind;
  r->flags = (uint8_t)(rec->root_flags > 0xff ? 0xff : rec->root_flags);
  l->root_ids[g->nroots++] = rec->id;
  return GS_OK;
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

/* ---- finishing: IDs to node numbers ---------------------------------- */

/* Collects the IDs named by the references of the stretches and by the
 * roots that are not in the dump; they become placeholder nodes numbered
 * after the objects. */
static int collect_missing(loader *l, const gs_refcodes_range *rest, size_t nrest) {
  gs_graph *g = l->g;
  size_t r;
  uint32_t i;
  for (r = 0; r < nrest; r++) {
    gs_refcodes_cursor cur = rest[r].from;
    while (cur.at < rest[r].end) {
      uint64_t id = gs_refcodes_next(&l->raw, &cur);
      if (!gs_idset_has(&l->objects, id) && gs_idset_add(&l->missing, id) < 0) return GS_ENOMEM;
    }
  }
  for (i = 0; i < g->nroots; i++)
    if (!gs_idset_has(&l->objects, l->root_ids[i]) && gs_idset_add(&l->missing, l->root_ids[i]) < 0)
      return GS_ENOMEM;
  if (l->missing.count > MAX_NODES - g->nobjects) return GS_ELIMIT;
  return gs_idset_seal(&l->missing);
}

/* Node of an ID; counts the IDs that are not in the dump in *misses. */
static uint32_t node_of(loader *l, uint64_t id, uint64_t *misses) {
  uint32_t node = 0;
  if (gs_idset_rank(&l->objects, id, &node)) return node;
  ++*misses;
  gs_idset_rank(&l->missing, id, &node);
  return l->g->nobjects + node;
}

/* Replaces each reference by its node number: an object's rank among the
 * objects, or, for the stretches from a first reference to an object not
 * in the dump (most dumps have none), a placeholder's. */
static int resolve_refs(loader *l) {
  gs_graph *g = l->g;
  gs_refcodes_range rest[2];
  size_t nrest = gs_refcodes_resolve(&l->raw, &l->objects, rest), r;
  int err;
  if (!nrest && !g->nroots) return GS_OK;
  if ((err = collect_missing(l, rest, nrest))) return err;
  for (r = 0; r < nrest; r++)
    while (rest[r].from.at < rest[r].end) {
      uint64_t k = rest[r].from.at, id = gs_refcodes_next(&l->raw, &rest[r].from);
      gs_refcodes_set(&l->raw, k, node_of(l, id, &g->dangling_refs));
    }
  return GS_OK;
}

/* Moves each object to its node (order[v] is the object that becomes node
 * v), copying from order so that the reads run along the file's sorted
 * stretches. Node v's ID is the set's member of rank v: the IDs are written
 * from the set, and their array first takes the sizes, so that only the
 * types need a second array. */
static int permute_nodes(loader *l, const uint32_t *order, uint32_t n) {
  gs_graph *g = l->g;
  uint64_t *sizes = g->ids;
  uint32_t *types = malloc(((size_t)n + 1) * sizeof *types), v;
  if (!types) return GS_ENOMEM;
  for (v = 0; v < n; v++) {
    sizes[v] = g->sizes[order[v]];
    types[v] = g->types[order[v]];
  }
  free(g->types);
  g->types = types;
  g->ids = g->sizes;
  g->sizes = sizes;
  return gs_idset_members(&l->objects, g->ids);
}

/* The references are taken from their blocks object by object in node
 * order (order[v] is the object that becomes node v, and is replaced by
 * where its references start), each block freed once emptied: for objects
 * that came nearly in ID order, as a heap walk gives them, the blocks empty
 * as the copy fills. The ranges by object are freed before. */
static int take_refs_in_order(loader *l, uint32_t *order, uint32_t n) {
  gs_graph *g = l->g;
  uint32_t *offsets = malloc(((size_t)n + 2) * sizeof *offsets), v;
  if (!offsets) return GS_ENOMEM;
  offsets[0] = 0;
  for (v = 0; v < n; v++) {
    offsets[v + 1] = offsets[v] + g->ref_offsets[order[v] + 1] - g->ref_offsets[order[v]];
    order[v] = g->ref_offsets[order[v]];
  }
  free(g->ref_offsets);
  g->ref_offsets = offsets;
  return (g->refs = gs_refcodes_take_nodes(&l->raw, order, offsets, n)) ? GS_OK : GS_ENOMEM;
}

/* Objects came out of ID order: moves each to the node its rank names, with
 * its references. */
static int sort_objects(loader *l) {
  gs_graph *g = l->g;
  uint32_t n = g->nobjects, i, *order;
  int err;
  if (!(order = malloc(((size_t)n + 1) * sizeof *order))) return GS_ENOMEM;
  for (i = 0; i < n; i++) {
    uint32_t node = 0;
    int member = gs_idset_rank(&l->objects, g->ids[i], &node);
    assert(member);
    (void)member;
    order[node] = i;
  }
  /* The new reference ranges hold n + 1 entries: the capacity all the node
   * arrays are taken to have. */
  l->nodes_cap = n;
  if (!(err = permute_nodes(l, order, n))) err = take_refs_in_order(l, order, n);
  free(order);
  return err;
}

/* Appends a node for each missing ID: type GS_GRAPH_MISSING, size 0, no
 * references. */
static int add_placeholders(loader *l) {
  gs_graph *g = l->g;
  size_t m = l->missing.count, i;
  if (!m) return GS_OK;
  if (grow_nodes(l, (size_t)g->nobjects + m)) return GS_ENOMEM;
  if (gs_idset_members(&l->missing, g->ids + g->nobjects)) return GS_ENOMEM;
  for (i = 0; i < m; i++) {
    g->sizes[g->nobjects + i] = 0;
    g->types[g->nobjects + i] = GS_GRAPH_MISSING;
    g->ref_offsets[g->nobjects + i + 1] = (uint32_t)g->nrefs;
  }
  g->nnodes = g->nobjects + (uint32_t)m;
  return GS_OK;
}

static int finish(loader *l) {
  gs_graph *g = l->g;
  uint64_t dangling_roots = 0;
  uint32_t i;
  int err;
  g->ref_offsets[g->nobjects] = (uint32_t)g->nrefs;
  g->nnodes = g->nobjects;
  if ((err = gs_idset_seal(&l->objects)) || (err = resolve_refs(l))) return err;
  for (i = 0; i < g->nroots; i++) g->roots[i].node = node_of(l, l->root_ids[i], &dangling_roots);
  if (!l->ascending) err = sort_objects(l);
  else if (!(g->refs = gs_refcodes_take_nodes(&l->raw, NULL, NULL, 0))) err = GS_ENOMEM;
  if (err) return err;
  if ((err = add_placeholders(l))) return err;
  g->ids = gs_array_shrink(g->ids, g->nnodes, sizeof *g->ids);
  g->sizes = gs_array_shrink(g->sizes, g->nnodes, sizeof *g->sizes);
  g->types = gs_array_shrink(g->types, g->nnodes, sizeof *g->types);
  g->ref_offsets = gs_array_shrink(g->ref_offsets, (size_t)g->nnodes + 1, sizeof *g->ref_offsets);
  if (g->type_names) g->type_names = gs_array_shrink(g->type_names, l->names_len, 1);
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

/* Dumps average 40 to 45 bytes per object; an estimate slightly high
 * reserves pages that are never touched. */
#define BYTES_PER_OBJECT 40
#define MIN_OBJECTS (1u << 12)   /* the objects a section reserves at least */

static size_t expected_objects(gs_reader *r) {
  uint64_t n = gs_reader_size_hint(r) / BYTES_PER_OBJECT;
  return n < MIN_OBJECTS ? MIN_OBJECTS : n > MAX_NODES ? MAX_NODES : (size_t)n;
}

/* Reserves generously from the size hint for the section that starts the
 * input (most dumps hold one): pages that are never touched cost nothing,
 * and finish() gives back the slack. A later section starts small and
 * grows, since mapping and giving back arrays for the whole file in each
 * section made a dump of many small sections cost the square of its size. */
static int reserve_arrays(loader *l) {
  if (gs_reader_offset(l->reader) > 0) return grow_nodes(l, MIN_OBJECTS);
  return grow_nodes(l, expected_objects(l->reader) * 2);
}

int gs_graph_load(gs_reader *r, gs_graph **out, gs_diag *err_out) {
  loader l;
  gs_diag scratch = {0};
  int err;
  memset(&l, 0, sizeof l);
  l.reader = r;
  l.err = err_out ? err_out : &scratch;
  l.ascending = 1;
  *out = NULL;
  if (!(l.g = calloc(1, sizeof *l.g))) return GS_ENOMEM;
  if (gs_idset_init(&l.objects) || gs_idset_init(&l.missing) || gs_idmap_init(&l.types, 1024) ||
      reserve_arrays(&l))
    err = GS_ENOMEM;
  else
    err = load_records(&l);
  gs_idset_free(&l.objects);
  gs_idset_free(&l.missing);
  gs_idmap_free(&l.types);
  gs_refcodes_free(&l.raw);
  free(l.root_ids);
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
  gs_graph_packing_free_(g->packing);
  free(g);
}

const char *gs_graph_type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  if (t < g->ntypes && g->type_name_offsets[t] != UINT32_MAX)
    return g->type_names + g->type_name_offsets[t];
  if (t < g->ntypes) snprintf(buf, cap, "?%llx", (unsigned long long)g->type_ids[t]);
  else snprintf(buf, cap, "?");
  return buf;
}

/* Breadth first: the queue says which nodes come next, so their reference
 * ranges, then their references, are asked for some nodes ahead (they land
 * anywhere in arrays far larger than the cache); a stack would pop each
 * node just as it learnt of it. Each node enters the queue once. */
int gs_graph_reachable(const gs_graph *g, uint8_t *bits) {
  uint32_t *queue, head = 0, tail = 0, i;
  if (!(queue = malloc(((size_t)g->nnodes + 1) * sizeof *queue))) return GS_ENOMEM;
#define MARK(n) (bits[(n) >> 3] & (1u << ((n) & 7)))
#define ENQUEUE(n) (bits[(n) >> 3] |= (uint8_t)(1u << ((n) & 7)), queue[tail++] = (n))
  for (i = 0; i < g->nroots; i++) {
    uint32_t n = g->roots[i].node;
    if (!(g->roots[i].flags & GS_FLAG_WEAK) && !MARK(n)) ENQUEUE(n);
  }
  while (head < tail) {
    uint32_t n, k;
    if (tail - head > AHEAD) GS_PREFETCH(&g->ref_offsets[queue[head + AHEAD]]);
    if (tail - head > AHEAD / 2) GS_PREFETCH(&g->refs[g->ref_offsets[queue[head + AHEAD / 2]]]);
    n = queue[head++];
    for (k = g->ref_offsets[n]; k < g->ref_offsets[n + 1]; k++)
      if (!MARK(g->refs[k])) ENQUEUE(g->refs[k]);
  }
#undef ENQUEUE
#undef MARK
  free(queue);
  return GS_OK;
}

void gs_graph_drop_refs(gs_graph *g) {
  free(g->refs);
  free(g->ref_offsets);
  g->refs = NULL;
  g->ref_offsets = NULL;
}

size_t gs_graph_memory(const gs_graph *g) {
  size_t per_node = sizeof *g->ids + sizeof *g->sizes + sizeof *g->types;
  size_t per_type = sizeof *g->type_ids + sizeof *g->type_name_offsets;
  size_t refs = g->refs ? ((size_t)g->nnodes + 1) * sizeof *g->ref_offsets +
                              (size_t)g->nrefs * sizeof *g->refs : 0;
  return (size_t)g->nnodes * per_node + refs + (size_t)g->ntypes * per_type +
         g->type_names_len + (size_t)g->nroots * sizeof *g->roots;
}
