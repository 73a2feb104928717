/* gs_dotnet_heap.c - a .NET runtime's heap walk, from its events (see
 * gs_dotnet_heap.h). The payload layouts are those of the runtime's event
 * manifest (ClrEtwAll.man): packed little-endian fields, addresses of the
 * trace's pointer size, names as UTF-16 ending in a NUL. */
#include "gs_dotnet_heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_array.h"
#include "gs_error.h"
#include "gs_idmap.h"
#include "gs_port.h"

/* RPM root kinds and flags. */
enum { KIND_INTERNAL = 0, KIND_LOCAL = 1, KIND_FINALIZER = 2, KIND_HANDLE = 3, KIND_STATIC = 4 };
enum { RUNTIME_STACK = 0, RUNTIME_FINALIZER = 1, RUNTIME_HANDLE = 2 };
#define ROOT_FLAGS 7u               /* pinned 1, weak 2, interior 4: the same bits */
#define BACKGROUND_GC 1u
#define SPILL_BUFFER ((size_t)1 << 20)


/* A dependent handle: key keeps value alive. next chains a key's values. */
typedef struct dh_dependent {
  uint64_t value;
  uint32_t next;
} dh_dependent;
#define NO_NEXT UINT32_MAX

/* A generation range, kept until the walk's end: the runtime describes
 * its generations before the collection and again after it, and the walk
 * is of the heap after it, so only the last run of ranges holds. */
typedef struct dh_range {
  uint64_t start, used, reserved;
  unsigned gen;
} dh_range;

/* The bulk events whose Index counts them from 0. */
enum { BULK_ROOTS, BULK_DEPENDENTS, BULK_NODES, BULK_EDGES, BULK_KINDS };

/* Type names from earlier walks of the process, NUL-ended in an arena:
 * while sessions overlap (a --trigger's watch), the runtime names each
 * type once, not in every walk; a type's ID is its method table, fixed
 * for the process's life. */
struct gs_dheap_names {
  gs_idmap map;                 /* ID -> offset in arena */
  char *arena;
  size_t len, cap;
};

struct gs_dheap {
  gs_heap_visitor v;
  gs_dheap_names *names;        /* NULL: none kept */
  unsigned ptr;                 /* pointer size */
  uint64_t max_size;            /* of an object: what the pointers can address */
  size_t max_refs;
  FILE *nodes, *edges;          /* the walk's objects until its end: see spill_open() */
  uint64_t edges_owed;          /* the nodes' references, less the edges come so far */
  uint64_t refs[GS_DHEAP_CHUNK]; /* references read back a chunk at a time */
  gs_idmap types;               /* type IDs handed to the visitor */
  gs_idmap keys;                /* dependent handles' keys: the first of their values */
  dh_dependent *deps;
  size_t ndeps, deps_cap;
  char *name;                   /* a name as UTF-8 */
  size_t name_cap;
  dh_range *ranges;
  size_t nranges, ranges_cap;
  uint32_t last_event;          /* the previous event's ID */
  uint32_t next_index[BULK_KINDS];
  uint32_t walk_gc;             /* the walk's collection number */
  int walk_started;
  gs_dheap_stats st;
  char error[200];
};

/* ---- payloads ------------------------------------------------------------------ */

typedef struct dh_cur {
  const unsigned char *p, *end;
  int cut;                      /* a read ran past the end: see cut() */
} dh_cur;

/* n little-endian bytes; the fixed sizes spelled out, which compilers turn
 * into one load (a walk reads a billion of them). */
static uint64_t get(dh_cur *c, unsigned n) {
  const unsigned char *p = c->p;
  uint64_t v = 0;
  unsigned i;
  if ((size_t)(c->end - p) < n) {
    c->cut = 1;
    c->p = c->end;
    return 0;
  }
  c->p += n;
  if (n == 8)
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
  if (n == 4)
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
  for (i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

static int cut(const dh_cur *c) { return c->cut; }

static int fail(gs_dheap *h, uint64_t at, const char *what) {
  snprintf(h->error, sizeof h->error, "byte %llu: %s", (unsigned long long)at, what);
  return GS_EFORMAT;
}

/* Count entries of size bytes each must fit in what is left of c. */
static int fits(gs_dheap *h, const dh_cur *c, uint64_t count, size_t size, uint64_t at) {
  if (cut(c) || count > (uint64_t)(c->end - c->p) / size)
    return fail(h, at, "an event of the heap walk is shorter than its count says");
  return GS_OK;
}

/* A UTF-16 name ending in a NUL, as UTF-8 in h->name (controls become '?'). */
static int get_name(gs_dheap *h, dh_cur *c, size_t *len, uint64_t at) {
  size_t n = 0, units = 0;
  for (;;) {
    uint64_t u = get(c, 2);
    if (cut(c)) return fail(h, at, "a name runs past the end of its event");
    if (u == 0) break;
    if (++units > GS_DHEAP_NAME_MAX) return fail(h, at, "a name longer than 65,536 characters");
    if (u >= 0xd800 && u < 0xe000) u = 0xfffd;   /* a surrogate: names are BMP text */
    if (u < 0x20 || u == 0x7f) u = '?';
    if (gs_array_reserve((void **)&h->name, &h->name_cap, n + 3, 1) < 0) return GS_ENOMEM;
    if (u < 0x80) {
      h->name[n++] = (char)u;
    } else if (u < 0x800) {
      h->name[n++] = (char)(0xc0 | u >> 6);
      h->name[n++] = (char)(0x80 | (u & 0x3f));
    } else {
      h->name[n++] = (char)(0xe0 | u >> 12);
      h->name[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
      h->name[n++] = (char)(0x80 | (u & 0x3f));
    }
  }
  *len = n;
  return GS_OK;
}

/* The header of a bulk event with an index: checks it follows the last. */
static int bulk_header(gs_dheap *h, dh_cur *c, unsigned kind, uint64_t *count, uint64_t at) {
  uint32_t index = (uint32_t)get(c, 4);
  *count = get(c, 4);
  (void)get(c, 2);                                    /* ClrInstanceID */
  if (cut(c)) return fail(h, at, "an event of the heap walk is cut");
  if (!h->st.walking) return fail(h, at, "an event of the heap walk outside its collection");
  if (index != h->next_index[kind]) h->st.index_gaps += (uint32_t)(index - h->next_index[kind]);
  h->next_index[kind] = index + 1;
  return GS_OK;
}

/* ---- objects ---------------------------------------------------------------------- */

/* Objects wait in two temporary files until the walk ends, because the
 * runtime sends the dependent handles (key keeps value alive) after the
 * objects, and a key's line must name its values: the nodes (address,
 * type, size, count: u64 each) and, apart, the edges as they come, which
 * follow the nodes' order. Paired again when read back, a chunk at a time,
 * so that no array's references are ever held whole. */
static FILE *spill_file(void) {
  FILE *f = gs_port_temp_file();
  if (f) setvbuf(f, NULL, _IOFBF, SPILL_BUFFER);   /* fewer system calls than stdio's 4 KiB */
  return f;
}

static int spill_open(gs_dheap *h) {
  if (!h->nodes) h->nodes = spill_file();
  if (!h->edges) h->edges = spill_file();
  if (h->nodes && h->edges) return GS_OK;
  return fail(h, 0, "cannot create a temporary file for the walk's objects");
}

static int spill_write(gs_dheap *h, FILE *f, const uint64_t *v, size_t n) {
  if (fwrite(v, sizeof *v, n, f) == n) return GS_OK;
  return fail(h, 0, "cannot write the walk's objects to a temporary file (disk full?)");
}

static int spill_read(gs_dheap *h, FILE *f, uint64_t *v, size_t n) {
  if (fread(v, sizeof *v, n, f) == n) return GS_OK;
  return fail(h, 0, "cannot read the walk's objects back from their temporary file");
}

static int node_checks(gs_dheap *h, const uint64_t *node, uint64_t at) {
  if (node[2] > h->max_size) {
    snprintf(h->error, sizeof h->error, "byte %llu: object %llx of %llu bytes, more than its "
             "address space holds", (unsigned long long)at, (unsigned long long)node[0],
             (unsigned long long)node[2]);
    return GS_EFORMAT;
  }
  if (node[3] > h->max_refs) {
    snprintf(h->error, sizeof h->error,
             "byte %llu: object %llx has %llu references, above the limit of %lu (--max-refs)",
             (unsigned long long)at, (unsigned long long)node[0], (unsigned long long)node[3],
             (unsigned long)h->max_refs);
    return GS_ELIMIT;
  }
  return GS_OK;
}

static int on_nodes(gs_dheap *h, dh_cur *c, uint64_t at) {
  uint64_t count, i, node[4];
  int rc = bulk_header(h, c, BULK_NODES, &count, at);
  if (rc < 0 || (rc = fits(h, c, count, h->ptr + 24u, at)) < 0 || (rc = spill_open(h)) < 0)
    return rc;
  for (i = 0; i < count; i++) {
    node[0] = get(c, h->ptr);
    node[2] = get(c, 8);                               /* size */
    node[1] = get(c, 8);                               /* type */
    node[3] = get(c, 8);                               /* edges */
    if ((rc = node_checks(h, node, at)) < 0 || (rc = spill_write(h, h->nodes, node, 4)) < 0)
      return rc;
    h->edges_owed += node[3];
  }
  h->st.nodes += count;
  return GS_OK;
}

static int on_edges(gs_dheap *h, dh_cur *c, uint64_t at) {
  uint64_t count, i;
  size_t n = 0;
  int rc = bulk_header(h, c, BULK_EDGES, &count, at);
  if (rc < 0 || (rc = fits(h, c, count, h->ptr + 4u, at)) < 0 || (rc = spill_open(h)) < 0)
    return rc;
  for (i = 0; i < count; i++) {
    h->refs[n++] = get(c, h->ptr);
    (void)get(c, 4);                                   /* ReferencingFieldID */
    if ((n == GS_DHEAP_CHUNK || i + 1 == count) && (rc = spill_write(h, h->edges, h->refs, n)) < 0)
      return rc;
    if (n == GS_DHEAP_CHUNK) n = 0;
  }
  h->edges_owed -= count;                              /* wraps when edges outrun nodes */
  return GS_OK;
}

/* ---- roots ------------------------------------------------------------------------------ */

static unsigned root_kind(unsigned runtime_kind) {
  switch (runtime_kind) {
  case RUNTIME_STACK: return KIND_LOCAL;
  case RUNTIME_FINALIZER: return KIND_FINALIZER;
  case RUNTIME_HANDLE: return KIND_HANDLE;
  default: return KIND_INTERNAL;                     /* older, sized references, ... */
  }
}

static int on_roots(gs_dheap *h, dh_cur *c, uint64_t at) {
  uint64_t count, i;
  int rc = bulk_header(h, c, BULK_ROOTS, &count, at);
  if (rc < 0 || (rc = fits(h, c, count, 2u * h->ptr + 5u, at)) < 0) return rc;
  for (i = 0; i < count; i++) {
    uint64_t addr = get(c, h->ptr);
    unsigned kind = (unsigned)get(c, 1), flags = (unsigned)get(c, 4);
    (void)get(c, h->ptr);                              /* GCRootID: the handle */
    if (!addr) continue;                               /* a cleared slot */
    if ((rc = h->v.root(h->v.ctx, addr, root_kind(kind), flags & ROOT_FLAGS, 0)) < 0) return rc;
  }
  return GS_OK;
}

/* Dependent handles (ConditionalWeakTable entries): the key's object line
 * will reference the value. */
static int add_dependent(gs_dheap *h, uint64_t key, uint64_t value) {
  gs_idmap_slot *s;
  int rc;
  if (h->ndeps >= NO_NEXT) return GS_ELIMIT;
  if (gs_array_reserve((void **)&h->deps, &h->deps_cap, h->ndeps + 1, sizeof *h->deps) < 0 ||
      (rc = gs_idmap_put(&h->keys, key, &s)) < 0)
    return GS_ENOMEM;
  h->deps[h->ndeps].value = value;
  h->deps[h->ndeps].next = rc == 1 ? NO_NEXT : s->value;
  s->value = (uint32_t)h->ndeps++;
  return GS_OK;
}

static int on_dependents(gs_dheap *h, dh_cur *c, uint64_t at) {
  uint64_t count, i;
  int rc = bulk_header(h, c, BULK_DEPENDENTS, &count, at);
  if (rc < 0 || (rc = fits(h, c, count, 3u * h->ptr, at)) < 0) return rc;
  for (i = 0; i < count; i++) {
    uint64_t key = get(c, h->ptr), value = get(c, h->ptr);
    (void)get(c, h->ptr);                              /* GCRootID */
    if (key && value && (rc = add_dependent(h, key, value)) < 0) return rc;
  }
  return GS_OK;
}

static int on_statics(gs_dheap *h, dh_cur *c, uint64_t at) {
  uint64_t count = get(c, 4), i;
  size_t len;
  int rc;
  (void)get(c, 8);                                     /* AppDomainID */
  (void)get(c, 2);
  if ((rc = fits(h, c, count, 30, at)) < 0) return rc;
  if (!h->st.walking) return fail(h, at, "static variables outside the walk's collection");
  for (i = 0; i < count; i++) {
    uint64_t obj, type;
    (void)get(c, 8);                                   /* GCRootID */
    obj = get(c, 8);
    type = get(c, 8);
    (void)get(c, 4);                                   /* Flags: thread static */
    if ((rc = get_name(h, c, &len, at)) < 0) return rc;
    if (!obj) continue;
    if ((rc = h->v.root(h->v.ctx, obj, KIND_STATIC, 0, type)) < 0) return rc;
    if (h->v.static_name && (rc = h->v.static_name(h->v.ctx, obj, h->name, len)) < 0) return rc;
  }
  return GS_OK;
}

/* ---- types, generations, collections ------------------------------------------------- */

static int names_put(gs_dheap_names *n, uint64_t id, const char *name, size_t len) {
  gs_idmap_slot *s;
  if (n->len + len + 1 > GS_DHEAP_NAMES_BYTES || gs_idmap_find(&n->map, id)) return GS_OK;
  if (gs_array_reserve((void **)&n->arena, &n->cap, n->len + len + 1, 1) < 0 ||
      gs_idmap_put(&n->map, id, &s) < 0)
    return GS_ENOMEM;
  s->value = (uint32_t)n->len;
  memcpy(n->arena + n->len, name, len);
  n->arena[n->len + len] = '\0';
  n->len += len + 1;
  return GS_OK;
}

/* The type of an object, described from an earlier walk where this one
 * has not named it. */
static int known_type(gs_dheap *h, uint64_t id) {
  gs_idmap_slot *s, *t;
  const char *name;
  int rc;
  if (!h->names || gs_idmap_find(&h->types, id) || !(s = gs_idmap_find(&h->names->map, id)))
    return GS_OK;
  if (gs_idmap_put(&h->types, id, &t) < 0) return GS_ENOMEM;
  name = h->names->arena + s->value;
  if ((rc = h->v.type(h->v.ctx, id, name, strlen(name))) < 0) return rc;
  return GS_OK;
}

int gs_dheap_names_new(gs_dheap_names **out) {
  *out = calloc(1, sizeof **out);
  if (*out && gs_idmap_init(&(*out)->map, 1024) == GS_OK) return GS_OK;
  free(*out);
  *out = NULL;
  return GS_ENOMEM;
}

void gs_dheap_names_free(gs_dheap_names *n) {
  if (!n) return;
  gs_idmap_free(&n->map);
  free(n->arena);
  free(n);
}

static int on_types(gs_dheap *h, dh_cur *c, uint64_t at) {
  uint64_t count = get(c, 4), i;
  int rc;
  (void)get(c, 2);
  if ((rc = fits(h, c, count, 29, at)) < 0) return rc;
  for (i = 0; i < count; i++) {
    uint64_t id = get(c, 8), params;
    gs_idmap_slot *s;
    size_t len;
    (void)get(c, 8 + 4 + 4 + 1);                       /* module, name ID, flags, element type */
    if ((rc = get_name(h, c, &len, at)) < 0) return rc;
    params = get(c, 4);
    if ((rc = fits(h, c, params, 8, at)) < 0) return rc;
    c->p += params * 8;
    if (h->names && names_put(h->names, id, h->name, len) < 0) return GS_ENOMEM;
    if ((rc = gs_idmap_put(&h->types, id, &s)) < 0) return GS_ENOMEM;
    if (rc == 0) continue;                             /* described already */
    if ((rc = h->v.type(h->v.ctx, id, h->name, len)) < 0) return rc;
    }
  return GS_OK;
}

static int on_generation(gs_dheap *h, dh_cur *c, uint32_t last, uint64_t at) {
  unsigned gen = (unsigned)get(c, 1);
  uint64_t start = get(c, h->ptr), used = get(c, 8), reserved = get(c, 8);
  dh_range *r;
  if (cut(c)) return fail(h, at, "a generation range is cut");
  if (!h->st.walking || !h->v.generation) return GS_OK;
  if (last != GS_DHEAP_GEN_RANGE) h->nranges = 0;
  if (h->nranges >= GS_DHEAP_RANGES_MAX) return fail(h, at, "more than 65,536 generation ranges");
  if (gs_array_reserve((void **)&h->ranges, &h->ranges_cap, h->nranges + 1, sizeof *r) < 0)
    return GS_ENOMEM;
  r = &h->ranges[h->nranges++];
  r->gen = gen;
  r->start = start;
  r->used = used;
  r->reserved = reserved;
  return GS_OK;
}

/* The walk is the first blocking collection of generation 2. */
static int on_gc_start(gs_dheap *h, dh_cur *c, int64_t ts, uint64_t at) {
  uint32_t count = (uint32_t)get(c, 4), depth = (uint32_t)get(c, 4), type;
  (void)get(c, 4);                                     /* reason */
  type = (uint32_t)get(c, 4);
  if (cut(c)) type = 0;                                /* version 0: no type */
  if (h->walk_started || depth != 2 || type == BACKGROUND_GC) return GS_OK;
  (void)at;
  h->walk_started = h->st.walking = 1;
  h->walk_gc = count;
  h->st.walk_start = ts;
  return GS_OK;
}

static int on_gc_end(gs_dheap *h, dh_cur *c, int64_t ts) {
  uint32_t count = (uint32_t)get(c, 4);
  size_t i;
  int rc;
  if (!h->st.walking || cut(c) || count != h->walk_gc) return GS_OK;
  h->st.walking = 0;
  h->st.walk_end = ts;
  /* A walk cut short leaves nodes without their edges (or edges over). */
  h->st.unpaired = h->edges_owed < (1ull << 63) ? h->edges_owed : 0 - h->edges_owed;
  for (i = 0; i < h->nranges; i++) {
    const dh_range *r = &h->ranges[i];
    if ((rc = h->v.generation(h->v.ctx, r->gen, r->start, r->used, r->reserved)) < 0) return rc;
  }
  return GS_DHEAP_END;
}

int gs_dheap_event(gs_dheap *h, uint32_t id, const unsigned char *p, size_t n,
                   int64_t timestamp, uint64_t at) {
  dh_cur c;
  uint32_t last = h->last_event;
  c.p = p;
  c.end = p + n;
  c.cut = 0;
  h->last_event = id;
  switch (id) {
  case GS_DHEAP_GC_START: return on_gc_start(h, &c, timestamp, at);
  case GS_DHEAP_GC_END: return on_gc_end(h, &c, timestamp);
  case GS_DHEAP_BULK_TYPE: return on_types(h, &c, at);
  case GS_DHEAP_ROOT_EDGE: return on_roots(h, &c, at);
  case GS_DHEAP_CWT_EDGE: return on_dependents(h, &c, at);
  case GS_DHEAP_NODE: return on_nodes(h, &c, at);
  case GS_DHEAP_EDGE: return on_edges(h, &c, at);
  case GS_DHEAP_GEN_RANGE: return on_generation(h, &c, last, at);
  case GS_DHEAP_STATIC_VAR: return on_statics(h, &c, at);
  default: return GS_OK;
  }
}

/* ---- the end ------------------------------------------------------------------------------ */

/* The values of key's dependent handles, as more references of its object. */
static int add_values(gs_dheap *h, uint64_t key) {
  gs_idmap_slot *s = h->keys.count ? gs_idmap_find(&h->keys, key) : NULL;
  uint32_t i;
  size_t n = 0;
  int rc;
  if (!s) return GS_OK;
  for (i = s->value; i != NO_NEXT; i = h->deps[i].next) {
    h->refs[n++] = h->deps[i].value;
    if (n == GS_DHEAP_CHUNK && (rc = h->v.object_refs(h->v.ctx, h->refs, n)) < 0) return rc;
    if (n == GS_DHEAP_CHUNK) n = 0;
  }
  s->value = NO_NEXT;                                 /* handed over */
  return n ? h->v.object_refs(h->v.ctx, h->refs, n) : GS_OK;
}

/* One object back from the temporary files, to the visitor in parts. */
static int replay_one(gs_dheap *h, const uint64_t *node) {
  uint64_t left = node[3];
  int rc = known_type(h, node[1]);
  if (rc >= 0) rc = h->v.object_begin(h->v.ctx, node[0], node[1], node[2]);
  while (rc >= 0 && left > 0) {
    size_t n = left < GS_DHEAP_CHUNK ? (size_t)left : GS_DHEAP_CHUNK;
    if ((rc = spill_read(h, h->edges, h->refs, n)) >= 0)
      rc = h->v.object_refs(h->v.ctx, h->refs, n);
    left -= n;
  }
  if (rc >= 0) rc = add_values(h, node[0]);
  return rc < 0 ? rc : h->v.object_end(h->v.ctx);
}

static int replay(gs_dheap *h) {
  uint64_t node[4], i;
  int rc;
  if (!h->nodes) return GS_OK;
  if (fflush(h->nodes) || fflush(h->edges) || fseek(h->nodes, 0, SEEK_SET) ||
      fseek(h->edges, 0, SEEK_SET))
    return fail(h, 0, "cannot read the walk's objects back from their temporary file");
  for (i = 0; i < h->st.nodes; i++)
    if ((rc = spill_read(h, h->nodes, node, 4)) < 0 || (rc = replay_one(h, node)) < 0) return rc;
  return GS_OK;
}

int gs_dheap_finish(gs_dheap *h) {
  size_t i;
  int rc;
  if (h->st.unpaired) {
    snprintf(h->error, sizeof h->error, "the walk ended with %llu references more or fewer "
             "than its objects have", (unsigned long long)h->st.unpaired);
    return GS_EFORMAT;
  }
  if ((rc = replay(h)) < 0) return rc;
  /* A key that is no object of the heap: its value is held only weakly. */
  for (i = 0; i < h->keys.mask + 1 && h->keys.count; i++) {
    gs_idmap_slot *s = &h->keys.slots[i];
    uint32_t d;
    if (!s->bits) continue;
    for (d = s->value; d != NO_NEXT; d = h->deps[d].next)
      if ((rc = h->v.root(h->v.ctx, h->deps[d].value, KIND_HANDLE, 2, 0)) < 0) return rc;
    s->value = NO_NEXT;
  }
  return GS_OK;
}

int gs_dheap_new(gs_dheap **out, const gs_heap_visitor *v, unsigned pointer_size,
                 size_t max_refs, gs_dheap_names *names) {
  gs_dheap *h = calloc(1, sizeof *h);
  *out = NULL;
  if (!h) return GS_ENOMEM;
  if (gs_idmap_init(&h->types, 1024) < 0 || gs_idmap_init(&h->keys, 64) < 0) {
    gs_dheap_free(h);
    return GS_ENOMEM;
  }
  h->v = *v;
  h->names = names;
  h->ptr = pointer_size == 4 ? 4 : 8;
  h->max_size = h->ptr == 4 ? UINT32_MAX : (uint64_t)1 << 56;
  h->max_refs = max_refs;
  *out = h;
  return GS_OK;
}

const gs_dheap_stats *gs_dheap_stats_of(const gs_dheap *h) { return &h->st; }
const char *gs_dheap_error(const gs_dheap *h) { return h->error; }

void gs_dheap_free(gs_dheap *h) {
  if (!h) return;
  if (h->nodes) fclose(h->nodes);
  if (h->edges) fclose(h->edges);
  free(h->deps);
  free(h->ranges);
  free(h->name);
  gs_idmap_free(&h->types);
  gs_idmap_free(&h->keys);
  free(h);
}
