/* gcdump_build.h - writes small .gcdump files the way PerfView's serializer
 * lays them out, for the tests: a graph with every kind of root category,
 * pseudo-nodes, undefined nodes, names with non-ASCII and control
 * characters, node records stored out of order, and the dump's fields after
 * the graph up to the trailer. The offsets of the counts are returned so
 * that tests can corrupt them. */
#ifndef GCDUMP_BUILD_H
#define GCDUMP_BUILD_H

#include <stddef.h>
#include <stdint.h>

typedef struct gcdb_file {
  unsigned char *data;
  size_t len;
  /* offsets of fields in data */
  size_t type_count, first_type_name, node_count, first_offset, blob_len, blob, root, process;
} gcdb_file;

/* The sample graph. Its records, as gsf_gcdump_convert writes them: */
#define GCDB_SAMPLE_RECORDS \
  "a 2 TestApp 0\n" \
  "t 9 App\n" \
  "o 8 9 18 9 a\n" \
  "t a System.Object[] (Ptrs,ElemSize=8)\n" \
  "o 9 a 28 8 8\n" \
  "t d \xc3\x9cn\xe2\x82\xac\xf0\x9f\x98\x80?x\xef\xbf\xbdy\n" \
  "o a d 10\n" \
  "t e (type 14)\n" \
  "o b e 186a0\n" \
  "r 8 4 0 9\n" \
  "r 9 1 0\n" \
  "r b 3 2\n" \
  "r 9 2 0\n" \
  "r a 3 1\n" \
  "r 8 0 0\n" \
  "c TestApp 0\n"

/* Builds the sample (free data with free()). */
void gcdb_sample(gcdb_file *f);
/* The sample as PerfView writes a heap it sampled: the average count
 * multiplier, and when by_type > 0 a multiplier per type, 1 but for the
 * last type's. */
void gcdb_sampled(gcdb_file *f, float average, float by_type);

/* Any graph, its root node 0, with the sample's dump fields around it. */
typedef struct gcdb_node {
  int type;            /* -1: undefined (the placeholder record) */
  int32_t size;        /* -1: the type's */
  int nch;
  int ch[6];
} gcdb_node;

typedef struct gcdb_graph {
  const char *const *type_names;   /* NULL: a null name; gcdb_odd_name: odd characters */
  const int32_t *type_sizes;
  int ntypes;
  const gcdb_node *nodes;
  int nnodes;
} gcdb_graph;

extern const char gcdb_odd_name[];

void gcdb_build(gcdb_file *f, const gcdb_graph *g);

#endif
