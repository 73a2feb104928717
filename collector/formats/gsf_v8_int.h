/* gsf_v8_int.h - what the two halves of the V8 reader share: the JSON side
 * (gsf_v8.c: yajl, the numbers read apart, errors) and the heap side
 * (gsf_v8heap.c: the meta, nodes, edges and strings as records). */
#ifndef GSF_V8_INT_H
#define GSF_V8_INT_H

#include <stdint.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include "gs_reader.h"
#include "gs_writer.h"
#include "gsf_format.h"
#include "gsf_numlist.h"
#include "gsf_v8dom.h"

#define MAX_DEPTH 32
/* Containers inside a value that is skipped are counted, not kept: the
 * allocation trace tree nests as deep as the stacks it records. */
#define MAX_SKIPPED_DEPTH (1u << 20)
#define MAX_NODE_TYPES (GSF_V8_TYPE + 1)
#define MAX_FIELDS 32
#define NONE SIZE_MAX

typedef enum {
  C_SKIP, C_TOP, C_SNAPSHOT, C_META, C_NODE_FIELDS, C_NODE_TYPES, C_NODE_TYPE_LIST,
  C_EDGE_FIELDS, C_EDGE_TYPES, C_EDGE_TYPE_LIST, C_NODES, C_EDGES, C_LOCATIONS, C_STRINGS
} json_ctx;

/* 16 bytes a node: V8's IDs are 32 bits, and sizes nearly always. A node
 * whose ID or size does not fit (or is WIDE) has WIDE as its ID here and
 * both values in the wide list. */
typedef struct v8_node {
  uint32_t id, size, name, edges;
} v8_node;
#define WIDE UINT32_MAX
typedef struct v8_wide { uint64_t node, id, size; } v8_wide;
/* An edge read, waiting its turn (see edge_came). */
typedef struct v8_edge_in { uint64_t type, to, at; } v8_edge_in;
#define EDGE_AHEAD 16
/* Names already listed as type names, by their low bits: most nodes'
 * names are among a few hundred, which then take no room in the list. */
#define NAME_CACHE 4096u

typedef struct v8 {
  yajl_handle h;
  gs_writer *w;
  char *err;
  size_t errcap;
  int rc;
  uint64_t base;                     /* input offset of the current block */
  unsigned depth;
  unsigned char stack[MAX_DEPTH + 1];
  /* the JSON string yajl is in, whose end past MAX_STRING it is not given */
  int in_string, clipping;
  unsigned escape;                   /* bytes left of a backslash escape */
  size_t string_len;
  /* the numbers of the nodes or edges, read apart (see the top comment) */
  int numbers;                       /* inside them */
  gsf_numlist list;
  /* the numbers of the locations, read past unparsed; past them once done */
  int in_locations, past_locations;
  uint64_t at;                       /* input offset of the byte read */
  uint32_t elems[MAX_DEPTH + 1];     /* values seen in each open array */
  uint32_t skipped;                  /* containers open inside a skipped one */
  json_ctx pending;                  /* context of a map's next value */
  int phase;                         /* 0 meta, 1 nodes, 2 edges, 3 strings, 4 done */
  /* meta */
  unsigned nf, ef, nfield_names, efield_names;
  int f_type, f_name, f_id, f_size, f_edges, f_detached, e_type, e_to;
  unsigned nntypes, netypes;
  int named[MAX_NODE_TYPES];         /* type name = the node's name */
  char label[MAX_NODE_TYPES][32];    /* else this category */
  int synthetic, native;             /* node type numbers; -1: none */
  int weak, hidden, invisible, shortcut, internal; /* edge type numbers; -1: none */
  int dom;                           /* some native node has a DOM state */
  /* nodes */
  v8_node *nodes;
  unsigned char *types;
  size_t nnodes, nodes_cap, types_cap;
  v8_wide *wide;                     /* in node order */
  size_t nwide, wide_cap;
  uint64_t cur[MAX_FIELDS];
  unsigned pos;
  uint64_t categories;               /* bit per node type used by a category */
  /* edges */
  v8_edge_in ahead[EDGE_AHEAD];      /* read, not yet taken */
  uint64_t ahead_in, ahead_out;
  size_t enode;
  uint32_t eleft;
  uint64_t *refs;                    /* of the owner, since its last part */
  size_t nrefs, refs_cap;
  size_t written;                    /* references in its parts written: its
                                      * record is begun when not 0 */
  uint64_t *later;                   /* weak roots met while it is open */
  size_t nlater, later_cap;
  gsf_v8_edge *kept;                 /* edges of the nodes written last */
  size_t nkept, kept_cap;
  uint8_t *weak_to;                  /* a bit per node the owner links weakly */
  uint32_t *weak_list;               /* those nodes, to clear the bits */
  size_t nweak, weak_cap;
  /* strings */
  uint32_t *want;                    /* string indices used as type names: as
                                      * the nodes come, then sorted, each once */
  size_t want_cap;
  uint64_t name_cache[NAME_CACHE];   /* name + 1 of a listed name; 0 none */
  unsigned char *info;               /* their root kind and flags */
  size_t nwant, wpos;
  uint64_t nstrings;
} v8;

static inline int gsf_v8_field_is(const char *s, size_t n, const char *name) {
  return strlen(name) == n && memcmp(s, name, n) == 0;
}

/* ---- gsf_v8.c: errors, each recorded in p->err; both return 0, which
 * stops the parse ---- */

/* A malformed input, at the byte being read. */
int gsf_v8_bad(v8 *p, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;
/* Any other failure (GS_ENOMEM, GS_ELIMIT, the writer's). */
int gsf_v8_failed(v8 *p, int rc);

/* ---- gsf_v8heap.c: the values, as the JSON side meets them; each returns
 * 1 to go on, 0 to stop ---- */

int gsf_v8_meta_done(v8 *p);                  /* the nodes start */
int gsf_v8_number(void *ctx, uint64_t v, size_t at);   /* a gsf_numlist take */
int gsf_v8_number_text(v8 *p, const char *s, size_t n); /* one yajl read */
int gsf_v8_not_whole(v8 *p);
int gsf_v8_numbers_end(v8 *p);                /* before the bracket that ends them */
int gsf_v8_edges_end(v8 *p);
int gsf_v8_strings_start(v8 *p);
int gsf_v8_string(v8 *p, const unsigned char *s, size_t n);  /* in the meta or strings */
int gsf_v8_finish(v8 *p);

#endif
