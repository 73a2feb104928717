/* gcdump_build.c - the sample .gcdump of the tests (gcdump_build.h). */
#include "gcdump_build.h"

#include <stdlib.h>
#include <string.h>

typedef struct out {
  unsigned char *p;
  size_t len, cap;
} out;

static void put(out *o, const void *d, size_t n) {
  if (o->len + n > o->cap) {
    o->cap = (o->len + n) * 2;
    o->p = realloc(o->p, o->cap);
    if (!o->p) abort();
  }
  memcpy(o->p + o->len, d, n);
  o->len += n;
}

static void u8(out *o, unsigned v) {
  unsigned char c = (unsigned char)v;
  put(o, &c, 1);
}

static void i32(out *o, uint32_t v) {
  unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  put(o, b, 4);
}

static void i64(out *o, uint64_t v) {
  i32(o, (uint32_t)v);
  i32(o, (uint32_t)(v >> 32));
}

/* A string of UTF-16 units, each in 1 to 3 bytes as the serializer writes. */
static void units(out *o, const uint16_t *u, size_t n) {
  size_t i;
  i32(o, (uint32_t)n);
  for (i = 0; i < n; i++) {
    unsigned c = u[i];
    if (c < 0x80) u8(o, c);
    else if (c < 0x800) {
      u8(o, 0xc0 | c >> 6);
      u8(o, 0x80 | (c & 0x3f));
    } else {
      u8(o, 0xe0 | ((c >> 12) & 0xf));
      u8(o, 0x80 | ((c >> 6) & 0x3f));
      u8(o, 0x80 | (c & 0x3f));
    }
  }
}

static void str(out *o, const char *s) {
  uint16_t u[256];
  size_t i, n = strlen(s);
  for (i = 0; i < n; i++) u[i] = (unsigned char)s[i];
  units(o, u, n);
}

static void type_object(out *o, const char *name, uint32_t version, uint32_t minver) {
  u8(o, 4);   /* BeginObject */
  u8(o, 1);   /* the type of a type: null */
  i32(o, version);
  i32(o, minver);
  str(o, name);
  u8(o, 6);   /* EndObject */
}

/* PerfView's compressed int: big-endian groups of 7 bits, the first one
 * sign-extended, the high bit saying another byte follows. */
static void cint(out *o, int32_t v) {
  int n = 1;
  while (n < 5 && !(v >= -((int64_t)1 << (7 * n - 1)) && v < ((int64_t)1 << (7 * n - 1)))) n++;
  for (; n > 1; n--) u8(o, 0x80 | (((uint32_t)v >> (7 * (n - 1))) & 0x7f));
  u8(o, (uint32_t)v & 0x7f);
}

/* Ü n € 😀 newline x, a lone high surrogate, y */
static const uint16_t odd_name[] = {0xdc, 'n', 0x20ac, 0xd83d, 0xde00, '\n', 'x', 0xd800, 'y'};
const char gcdb_odd_name[] = "(odd)";

static const char *const sample_types[] = {
  "UNDEFINED", "[.NET Roots]", "[static vars]", "[static var App.cache]", "[local vars]",
  "[Pinned handles]", "[other roots]", "[FinalizerQueue]", "[Dependent Handles]", "App",
  "System.Object[] (Ptrs,ElemSize=8)", "[CCW for App RefCnt: 1]", "[COM/WinRT Objects]",
  gcdb_odd_name, NULL /* a null name */};
static const int32_t sample_sizes[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 24, -1, 200, 0, 16, -1};
static const gcdb_node sample_nodes[] = {
  {1, -1, 4, {1, 4, 6, 13}}, {2, -1, 1, {2}}, {3, -1, 1, {8}}, {-1, -1, 0, {0}},
  {4, -1, 2, {9, 3}}, {5, -1, 1, {10}}, {6, -1, 3, {5, 7, 12}}, {7, -1, 1, {9}},
  {9, -1, 4, {9, 10, 3, 2}}, {10, 40, 2, {8, 8}}, {13, -1, 0, {0}}, {14, 100000, 0, {0}},
  {8, -1, 1, {11}}, {12, -1, 1, {14}}, {11, -1, 1, {8}}};
static const gcdb_graph sample = {sample_types, sample_sizes, 15, sample_nodes, 15};

/* The node records, last node first, after the undefined one at 0. */
static void blob(out *b, const gcdb_graph *g, uint32_t *offsets) {
  int i, k;
  u8(b, 0);   /* UNDEFINED: type 0, size from the type */
  u8(b, 0);   /* no children */
  for (i = g->nnodes - 1; i >= 0; i--) {
    const gcdb_node *n = &g->nodes[i];
    if (n->type < 0) {
      offsets[i] = 0;
      continue;
    }
    offsets[i] = (uint32_t)b->len;
    cint(b, n->type << 1 | (n->size >= 0));
    if (n->size >= 0) cint(b, n->size);
    cint(b, n->nch);
    for (k = 0; k < n->nch; k++) cint(b, n->ch[k] - i);
  }
}

static void graph(out *o, const gcdb_graph *g, gcdb_file *f) {
  out b = {0};
  uint32_t *offsets = calloc((size_t)g->nnodes, sizeof *offsets);
  int i;
  if (!offsets) abort();
  i64(o, 1000);                 /* total size */
  f->root = o->len;
  i32(o, 0);                    /* root node */
  f->type_count = o->len;
  i32(o, (uint32_t)g->ntypes);
  for (i = 0; i < g->ntypes; i++) {
    const char *name = g->type_names[i];
    if (i == 1) f->first_type_name = o->len;
    if (name == gcdb_odd_name) units(o, odd_name, sizeof odd_name / sizeof *odd_name);
    else if (name) str(o, name);
    else i32(o, 0xffffffffu);
    i32(o, (uint32_t)g->type_sizes[i]);
    i32(o, 0xffffffffu);        /* no module name */
  }
  blob(&b, g, offsets);
  f->node_count = o->len;
  i32(o, (uint32_t)g->nnodes);
  f->first_offset = o->len;
  for (i = 0; i < g->nnodes; i++) i32(o, offsets[i]);
  f->blob_len = o->len;
  i32(o, (uint32_t)b.len);
  f->blob = o->len;
  put(o, b.p, b.len);
  free(b.p);
  free(offsets);
  i32(o, (uint32_t)g->nnodes);  /* addresses */
  for (i = 0; i < g->nnodes; i++) i64(o, 0x10000 + 8 * (uint64_t)i);
  u8(o, 8);                     /* tagged byte: 64-bit */
  u8(o, 1);
  u8(o, 6);                     /* end of the graph */
}

/* The count multipliers of the next dump built: 1 and none by type, unless
 * gcdb_sampled set them. */
static float next_average = 1.0f, next_by_type;
static int next_ntypes;

static void f32(out *o, float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  i32(o, u);
}

static void dump_fields(out *o, gcdb_file *f) {
  int i;
  u8(o, 1);                     /* 64-bit */
  f32(o, next_average);         /* count and size multipliers */
  f32(o, next_average);
  u8(o, 1);                     /* no JavaScript heap */
  u8(o, 4);                     /* the .NET heap information */
  type_object(o, "DotNetHeapInfo", 0, 0);
  i64(o, 4096);
  i32(o, 2);
  u8(o, 4);
  type_object(o, "GCHeapDumpSegment", 1, 1);
  for (i = 0; i < 7; i++) i64(o, 0x10000);
  u8(o, 6);
  u8(o, 4);
  u8(o, 2);                     /* the same type again, by reference */
  i32(o, 0x40);
  for (i = 0; i < 7; i++) i64(o, 0x20000);
  u8(o, 6);
  u8(o, 6);                     /* end of the heap information */
  str(o, "collected by a test");
  i64(o, 0);
  str(o, "machine");
  f->process = o->len;
  str(o, "TestApp");
  i32(o, 1234);
  i64(o, 0);
  i64(o, 0);
  i32(o, (uint32_t)next_ntypes);  /* count multipliers by type: the last one differs */
  for (i = 0; i < next_ntypes; i++) f32(o, i + 1 == next_ntypes ? next_by_type : 1.0f);
  u8(o, 13);                    /* tagged string: the creation tool */
  str(o, "test");
  u8(o, 6);                     /* end of the dump */
}

void gcdb_sample(gcdb_file *f) {
  gcdb_build(f, &sample);
}

void gcdb_sampled(gcdb_file *f, float average, float by_type) {
  next_average = average;
  next_by_type = by_type;
  next_ntypes = by_type > 0 ? sample.ntypes : 0;
  gcdb_build(f, &sample);
  next_average = 1.0f;
  next_ntypes = 0;
}

void gcdb_build(gcdb_file *f, const gcdb_graph *g) {
  out o = {0};
  size_t table, trailer;
  memset(f, 0, sizeof *f);
  str(&o, "!FastSerialization.1");
  u8(&o, 4);
  type_object(&o, "GCHeapDump", 10, 8);
  u8(&o, 4);
  type_object(&o, "Graphs.MemoryGraph", 1, 0);
  graph(&o, g, f);
  dump_fields(&o, f);
  u8(&o, 6);                    /* the end of the objects */
  table = o.len;
  i32(&o, 0);                   /* no forward references */
  trailer = o.len;
  i32(&o, (uint32_t)table);
  i32(&o, (uint32_t)trailer);
  f->data = o.p;
  f->len = o.len;
}
