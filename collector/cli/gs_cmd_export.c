/* gs_cmd_export.c - "gcsnap export": a dump in another tool's format.
 *
 *  heapsnapshot  Chrome DevTools' .heapsnapshot JSON, with the snapshot.meta
 *                field lists of V8's HeapSnapshotJSONSerializer. Node 0 is
 *                the synthetic root; it holds "(GC roots)", which holds one
 *                synthetic node per root kind, which holds the rooted
 *                objects (weak roots by weak edges), and "(unreachable
 *                objects)", which holds what no root reaches, so DevTools
 *                lists every object of the dump; references from those to
 *                reachable objects are weak edges, since they keep nothing
 *                alive. Objects are "object" nodes named by their type, the
 *                name DevTools' Summary groups by; each name is one string,
 *                so types that share a name are one row there, as in
 *                "gcsnap summary".
 *  csv           the type histogram: type,count,bytes.
 *  dot           Graphviz: the shortest retention paths of --object ID or
 *                of one instance per group of --type NAME (gcsnap paths).
 * Only the first section of a multi-section dump is exported as a
 * heapsnapshot or dot graph: those formats hold one heap. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_heapstats.h"
#include "gs_obuf.h"
#include "gs_output.h"
#include "gs_paths.h"
#include "gs_summary.h"

static const char usage[] =
  "usage: gcsnap export --format heapsnapshot|csv|dot [--object ID | --type NAME]\n"
  "                     -o OUT FILE\n"
  "\n"
  "Writes FILE in another format:\n"
  "  heapsnapshot  Chrome DevTools heap snapshot (open it in the Memory tab);\n"
  "                the first section of FILE\n"
  "  csv           the type histogram of all sections: type,count,bytes\n"
  "  dot           Graphviz graph of the retention paths of --object ID\n"
  "                (hex) or --type NAME, as 'gcsnap paths' finds them\n"
  "OUT is written under a temporary name and renamed when complete; a name\n"
  "ending in .zst is compressed. - writes to stdout.\n"
  "\n"
  "  -h, --help  show this help\n"
  "\n"
  "Exit status: 0 done, 1 the file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_FORMAT, OPT_OUT, OPT_OBJECT, OPT_TYPE };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"format", 0, 1, OPT_FORMAT},
  {"out", 'o', 1, OPT_OUT},
  {"object", 0, 1, OPT_OBJECT},
  {"type", 0, 1, OPT_TYPE},
  {NULL, 0, 0, 0},
};

enum { FMT_NONE, FMT_HEAPSNAPSHOT, FMT_CSV, FMT_DOT };

typedef struct export_args {
  int help, format, has_object;
  uint64_t object;
  const char *type, *out, *path;
} export_args;

/* A JSON string; bytes that are not printable ASCII are escaped as \u00XX
 * when below 0x20, and kept as UTF-8 otherwise (the reader checked them). */
static void put_json_string(gs_obuf *s, const char *p, size_t n) {
  size_t i;
  gs_obuf_puts(s, "\"");
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c == '"' || c == '\\') { gs_obuf_puts(s, "\\"); gs_obuf_put(s, p + i, 1); }
    else if (c < 0x20) gs_obuf_printf(s, "\\u%04x", c);
    else gs_obuf_put(s, p + i, 1);
  }
  gs_obuf_puts(s, "\"");
}

/* ---- heapsnapshot ----------------------------------------------------- */

/* Node and edge type numbers: positions in V8's meta lists below. */
enum { NT_HIDDEN = 0, NT_OBJECT = 3, NT_SYNTHETIC = 9 };
enum { ET_ELEMENT = 1, ET_WEAK = 6 };
#define NODE_FIELDS 7

static const char meta[] =
  "{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\",\"trace_node_id\","
  "\"detachedness\"],"
  "\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\",\"code\",\"closure\",\"regexp\","
  "\"number\",\"native\",\"synthetic\",\"concatenated string\",\"sliced string\",\"symbol\","
  "\"bigint\"],\"string\",\"number\",\"number\",\"number\",\"number\",\"number\"],"
  "\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],"
  "\"edge_types\":[[\"context\",\"element\",\"property\",\"internal\",\"hidden\",\"shortcut\","
  "\"weak\"],\"string_or_number\",\"node\"],"
  "\"trace_function_info_fields\":[\"function_id\",\"name\",\"script_name\",\"script_id\","
  "\"line\",\"column\"],"
  "\"trace_node_fields\":[\"id\",\"function_info_index\",\"count\",\"size\",\"children\"],"
  "\"sample_fields\":[\"timestamp_us\",\"last_assigned_id\"],"
  "\"location_fields\":[\"object_index\",\"script_id\",\"line\",\"column\"]}";

/* Strings: 0 "<dummy>", 1 "", 2 "(GC roots)", 3 "(unreachable objects)",
 * 4 "(not in the dump)", 5 "weak", 6..11 the root kinds, then the type
 * names. Element edges name their target by a number; every other edge
 * type by a string (DevTools reads the name of a weak or internal edge
 * from the strings and fails to load a snapshot where it is missing). */
enum { S_EMPTY = 1, S_GC_ROOTS, S_UNREACHABLE, S_MISSING, S_WEAK, S_KINDS };
#define S_TYPES (S_KINDS + GS_ROOT_KINDS)

/* Synthetic nodes come first: the root, (GC roots), one per root kind,
 * (unreachable objects); graph node v is node FIRST_OBJECT + v. */
enum { N_ROOT = 0, N_GC_ROOTS = 1, N_KINDS = 2 };
#define N_UNREACHABLE (N_KINDS + GS_ROOT_KINDS)
#define FIRST_OBJECT (N_UNREACHABLE + 1)

/* One node's or edge's fields on a line, after a comma unless first. */
static void put_fields(gs_obuf *s, int first, const uint64_t *f, size_t n) {
  size_t i;
  for (i = 0; i < n; i++) {
    if (i || !first) gs_obuf_char(s, ',');
    gs_obuf_u64(s, f[i]);
  }
  gs_obuf_char(s, '\n');
}

static void put_node(gs_obuf *s, int first, unsigned type, uint64_t name, uint64_t index,
                     uint64_t size, uint64_t edges) {
  /* V8 numbers heap objects with odd IDs; any unique numbers load. */
  uint64_t f[NODE_FIELDS];
  f[0] = type;
  f[1] = name;
  f[2] = 2 * index + 1;
  f[3] = size;
  f[4] = edges;
  f[5] = f[6] = 0;
  put_fields(s, first, f, NODE_FIELDS);
}

static void put_edge(gs_obuf *s, int *first, unsigned type, uint64_t name_or_index, uint64_t to) {
  uint64_t f[3];
  f[0] = type;
  f[1] = name_or_index;
  f[2] = to * NODE_FIELDS;
  put_fields(s, *first, f, 3);
  *first = 0;
}

/* The type names, each once, sorted: DevTools keys its Summary rows by the
 * text of a name, and two strings with the same text would each make a row
 * under that key, of which it keeps only the last. */
typedef struct type_names {
  const char **sorted;   /* the distinct names */
  uint32_t count;
  uint32_t *string_of;   /* type index -> position in sorted */
  char *undefined;       /* "?ID" of types never defined, 24 bytes each */
} type_names;

typedef struct named_type {
  const char *name;
  uint32_t type;
} named_type;

static int by_name(const void *a, const void *b) {
  return strcmp(((const named_type *)a)->name, ((const named_type *)b)->name);
}

static void type_names_free(type_names *tn) {
  free(tn->sorted);
  free(tn->string_of);
  free(tn->undefined);
}

static int type_names_build(const gs_graph *g, type_names *tn) {
  size_t n = g->ntypes;
  named_type *all = malloc((n + 1) * sizeof *all);
  uint32_t i;
  memset(tn, 0, sizeof *tn);
  tn->sorted = malloc((n + 1) * sizeof *tn->sorted);
  tn->string_of = malloc((n + 1) * sizeof *tn->string_of);
  tn->undefined = malloc(n * 24 + 1);
  if (!all || !tn->sorted || !tn->string_of || !tn->undefined) {
    free(all);
    type_names_free(tn);
    return GS_ENOMEM;
  }
  for (i = 0; i < n; i++) {
    all[i].name = gs_graph_type_name(g, i, tn->undefined + (size_t)i * 24, 24);
    all[i].type = i;
  }
  if (n) qsort(all, n, sizeof *all, by_name);
  for (i = 0; i < n; i++) {
    if (!tn->count || strcmp(tn->sorted[tn->count - 1], all[i].name)) tn->sorted[tn->count++] = all[i].name;
    tn->string_of[all[i].type] = tn->count - 1;
  }
  free(all);
  return GS_OK;
}

#define IS_REACHED(v) ((reached[(v) >> 3] >> ((v) & 7)) & 1)

static int write_heapsnapshot(gs_obuf *s, const gs_graph *g) {
  uint64_t roots_by_kind[GS_ROOT_KINDS] = {0}, unreachable = 0, nodes = FIRST_OBJECT + (uint64_t)g->nnodes;
  uint64_t edges = 0, k;
  uint8_t *reached = calloc((size_t)g->nnodes / 8 + 1, 1);
  uint32_t v, i;
  int first = 1;
  type_names tn;
  if (!reached || gs_graph_reachable(g, reached)) { free(reached); return GS_ENOMEM; }
  if (type_names_build(g, &tn)) { free(reached); return GS_ENOMEM; }
  for (i = 0; i < g->nroots; i++) roots_by_kind[g->roots[i].kind]++;
  for (v = 0; v < g->nnodes; v++) unreachable += !IS_REACHED(v);
  edges = 1 + 1 + GS_ROOT_KINDS + g->nroots + unreachable + g->nrefs;
  gs_obuf_puts(s, "{\"snapshot\":{\"meta\":");
  gs_obuf_put(s, meta, sizeof meta - 1);
  gs_obuf_printf(s, ",\"node_count\":%" PRIu64 ",\"edge_count\":%" PRIu64 ",\"trace_function_count\":0},\n", nodes, edges);
  gs_obuf_puts(s, "\"nodes\":[");
  put_node(s, 1, NT_SYNTHETIC, S_EMPTY, N_ROOT, 0, 2);
  put_node(s, 0, NT_SYNTHETIC, S_GC_ROOTS, N_GC_ROOTS, 0, GS_ROOT_KINDS);
  for (i = 0; i < GS_ROOT_KINDS; i++) put_node(s, 0, NT_SYNTHETIC, S_KINDS + i, N_KINDS + i, 0, roots_by_kind[i]);
  put_node(s, 0, NT_SYNTHETIC, S_UNREACHABLE, N_UNREACHABLE, 0, unreachable);
  for (v = 0; v < g->nnodes; v++) {
    uint32_t t = g->types[v];
    put_node(s, 0, t == GS_GRAPH_MISSING ? NT_HIDDEN : NT_OBJECT,
             t == GS_GRAPH_MISSING ? S_MISSING : (uint64_t)S_TYPES + tn.string_of[t], FIRST_OBJECT + v, g->sizes[v],
             g->ref_offsets[v + 1] - g->ref_offsets[v]);
  }
  gs_obuf_puts(s, "],\n\"edges\":[");
  put_edge(s, &first, ET_ELEMENT, 1, N_GC_ROOTS);
  put_edge(s, &first, ET_ELEMENT, 2, N_UNREACHABLE);
  for (i = 0; i < GS_ROOT_KINDS; i++) put_edge(s, &first, ET_ELEMENT, i + 1, N_KINDS + i);
  for (i = 0; i < GS_ROOT_KINDS; i++) {
    uint32_t r, n = 0;
    for (r = 0; r < g->nroots; r++) {
      if (g->roots[r].kind != i) continue;
      n++;
      if (g->roots[r].flags & GS_FLAG_WEAK) put_edge(s, &first, ET_WEAK, S_WEAK, FIRST_OBJECT + g->roots[r].node);
      else put_edge(s, &first, ET_ELEMENT, n, FIRST_OBJECT + g->roots[r].node);
    }
  }
  for (v = 0, k = 0; v < g->nnodes; v++)
    if (!IS_REACHED(v)) put_edge(s, &first, ET_ELEMENT, ++k, FIRST_OBJECT + v);
  /* A reference from an unreachable object to a reachable one keeps nothing
   * alive, so it is a weak edge: DevTools' dominators and retained sizes
   * then follow the strong roots only, as those of "gcsnap dominators". */
  for (v = 0; v < g->nnodes; v++)
    for (k = g->ref_offsets[v]; k < g->ref_offsets[v + 1]; k++) {
      uint32_t to = g->refs[k];
      if (!IS_REACHED(v) && IS_REACHED(to)) put_edge(s, &first, ET_WEAK, S_WEAK, FIRST_OBJECT + to);
      else put_edge(s, &first, ET_ELEMENT, k - g->ref_offsets[v] + 1, FIRST_OBJECT + to);
    }
  gs_obuf_puts(s, "],\n\"trace_function_infos\":[],\"trace_tree\":[],\"samples\":[],\"locations\":[],\n");
  gs_obuf_puts(s, "\"strings\":[\"<dummy>\",\"\",\"(GC roots)\",\"(unreachable objects)\",\"(not in the dump)\",\"weak\"");
  for (i = 0; i < GS_ROOT_KINDS; i++) gs_obuf_printf(s, ",\"(%s roots)\"", gs_root_kind_names[i]);
  for (i = 0; i < tn.count; i++) {
    gs_obuf_puts(s, ",\n");
    put_json_string(s, tn.sorted[i], strlen(tn.sorted[i]));
  }
  gs_obuf_puts(s, "]}\n");
  type_names_free(&tn);
  free(reached);
  return GS_OK;
}

/* ---- csv -------------------------------------------------------------- */

static int write_csv(gs_obuf *s, const gs_summary *sum) {
  const gs_histo_row **rows;
  size_t n = gs_histo_size(sum->total.by_type), i;
  if (gs_histo_sorted(sum->total.by_type, &rows)) return GS_ENOMEM;
  gs_obuf_puts(s, "type,count,bytes\n");
  for (i = 0; i < n; i++) {
    const char *p = rows[i]->name;
    /* RFC 4180: quote every name, doubling its quotes. */
    gs_obuf_puts(s, "\"");
    for (; *p; p++) {
      if (*p == '"') gs_obuf_puts(s, "\"\"");
      else gs_obuf_put(s, p, 1);
    }
    gs_obuf_printf(s, "\",%" PRIu64 ",%" PRIu64 "\n", rows[i]->count, rows[i]->bytes);
  }
  free(rows);
  return GS_OK;
}

/* ---- dot -------------------------------------------------------------- */

/* Instances of a type whose paths a dot graph shows at most. */
#define DOT_INSTANCES 50

static void dot_node(gs_obuf *s, const gs_graph *g, uint32_t v, const char *extra) {
  char buf[64];
  const char *t = g->types[v] == GS_GRAPH_MISSING ? "(not in the dump)"
                                                    : gs_graph_type_name(g, g->types[v], buf, sizeof buf);
  gs_obuf_printf(s, "  n%" PRIx64 " [label=", g->ids[v]);
  gs_obuf_puts(s, "\"");
  for (; *t; t++) {
    if (*t == '"' || *t == '\\') gs_obuf_puts(s, "\\");
    gs_obuf_put(s, t, 1);
  }
  gs_obuf_printf(s, "\\n%" PRIx64 " (%" PRIu64 " bytes)\"%s];\n", g->ids[v], g->sizes[v], extra);
}

static void dot_root(gs_obuf *s, const gs_graph *g, uint32_t root, uint32_t v) {
  const gs_graph_root *r = &g->roots[root];
  gs_obuf_printf(s, "  r%u [shape=box, label=\"%s root%s\"];\n  r%u -> n%" PRIx64 ";\n", root,
       gs_root_kind_names[r->kind], r->flags & GS_FLAG_PINNED ? " (pinned)" : "", root, g->ids[v]);
}

/* Marks the nodes and roots on the shortest paths to target, or to up to
 * DOT_INSTANCES instances of the types marked in is_type. */
static int write_dot(gs_obuf *s, const gs_graph *g, int has_object, uint32_t target, const uint8_t *is_type) {
  gs_retention ret;
  uint8_t *on_path = calloc((size_t)g->nnodes + 1, 1), *root_used = calloc((size_t)g->nroots + 1, 1);
  uint32_t v, shown = 0;
  uint64_t k;
  if (!on_path || !root_used || gs_retention_build(g, &ret)) {
    free(on_path);
    free(root_used);
    return GS_ENOMEM;
  }
  if (has_object) {
    gs_paths p;
    size_t i, j;
    if (gs_paths_to(g, target, 5, &p)) { gs_retention_free(&ret); free(on_path); free(root_used); return GS_ENOMEM; }
    for (i = 0; i < p.npaths; i++) {
      root_used[p.roots[i]] = 1;
      for (j = p.start[i]; j < p.start[i + 1]; j++) on_path[p.nodes[j]] = 1;
    }
    on_path[target] = 1;
    gs_paths_free(&p);
  } else {
    for (v = 0; v < g->nobjects && shown < DOT_INSTANCES; v++) {
      uint32_t u;
      if (g->types[v] == GS_GRAPH_MISSING || !is_type[g->types[v]]) continue;
      shown++;
      on_path[v] = 1;
      if (ret.root[v] == GS_PATH_NONE) continue;
      root_used[ret.root[v]] = 1;
      for (u = v; u != GS_PATH_NONE; u = ret.parent[u]) on_path[u] = 1;
    }
  }
  gs_obuf_puts(s, "digraph retention {\n  rankdir=LR;\n  node [shape=ellipse, fontsize=10];\n");
  for (v = 0; v < g->nnodes; v++)
    if (on_path[v]) dot_node(s, g, v, (has_object && v == target) || (!has_object && g->types[v] != GS_GRAPH_MISSING && is_type[g->types[v]]) ? ", style=filled, fillcolor=\"#ffd6d6\"" : "");
  for (v = 0; v < g->nroots; v++)
    if (root_used[v]) dot_root(s, g, v, g->roots[v].node);
  for (v = 0; v < g->nnodes; v++) {
    if (!on_path[v]) continue;
    for (k = g->ref_offsets[v]; k < g->ref_offsets[v + 1]; k++)
      if (on_path[g->refs[k]])
        gs_obuf_printf(s, "  n%" PRIx64 " -> n%" PRIx64 ";\n", g->ids[v], g->ids[g->refs[k]]);
  }
  gs_obuf_puts(s, "}\n");
  gs_retention_free(&ret);
  free(on_path);
  free(root_used);
  return GS_OK;
}

/* ---- command ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, export_args *ea) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("export", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (ea->path) return gs_cli_usage_error("export", usage, "only one FILE is allowed");
      ea->path = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: ea->help = 1; break;
    case OPT_OUT: ea->out = a.value; break;
    case OPT_TYPE: ea->type = a.value; break;
    case OPT_FORMAT:
      ea->format = !strcmp(a.value, "heapsnapshot") ? FMT_HEAPSNAPSHOT
                   : !strcmp(a.value, "csv") ? FMT_CSV : !strcmp(a.value, "dot") ? FMT_DOT : FMT_NONE;
      if (ea->format == FMT_NONE)
        return gs_cli_usage_error("export", usage, "--format is heapsnapshot, csv or dot");
      break;
    case OPT_OBJECT: {
      const char *p = a.value;
      char *end;
      if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
      ea->object = strtoull(p, &end, 16);
      if (!*p || *end || *p == '-') return gs_cli_usage_error("export", usage, "--object needs a hex object ID");
      ea->has_object = 1;
      break;
    }
    }
  }
  if (ea->help) return GS_EXIT_OK;
  if (!ea->format) return gs_cli_usage_error("export", usage, "no --format given");
  if (!ea->out) return gs_cli_usage_error("export", usage, "no -o OUT given");
  if (!ea->path) return gs_cli_usage_error("export", usage, "no FILE given");
  if (ea->format == FMT_DOT && ea->has_object == !!ea->type)
    return gs_cli_usage_error("export", usage, "dot needs one of --object or --type");
  if (ea->format != FMT_DOT && (ea->has_object || ea->type))
    return gs_cli_usage_error("export", usage, "--object and --type are for --format dot");
  return GS_EXIT_OK;
}

/* Writes the graph formats from the first section. */
static int export_graph(const export_args *ea, gs_file *f, gs_reader *r, gs_obuf *s) {
  gs_graph *g = NULL;
  gs_diag d;
  uint8_t *is_type = NULL;
  uint32_t target = GS_PATH_NONE, t, lo = 0, hi;
  int err = gs_graph_load(r, &g, &d), found = 0;
  char buf[64];
  if (err == GS_EOF) {
    err = GS_EFORMAT;
    d.code = GS_D_NO_SECTION;
    d.line = 0;
    snprintf(d.message, sizeof d.message, "no AppDomain section ('a' record) in the input");
  }
  if (err) return gs_cli_load_error(f, err, &d);
  gs_file_hide_progress(f);
  if (ea->format == FMT_HEAPSNAPSHOT) {
    err = write_heapsnapshot(s, g);
    gs_graph_free(g);
    if (err) { gs_cli_error("out of memory"); return GS_EXIT_USAGE; }
    return GS_EXIT_OK;
  }
  if (ea->has_object) {
    for (hi = g->nobjects; lo < hi;) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (g->ids[mid] < ea->object) lo = mid + 1; else hi = mid;
    }
    found = lo < g->nobjects && g->ids[lo] == ea->object;
    target = lo;
  } else if ((is_type = calloc((size_t)g->ntypes + 1, 1))) {
    for (t = 0; t < g->ntypes; t++)
      found |= is_type[t] = !strcmp(gs_graph_type_name(g, t, buf, sizeof buf), ea->type);
  }
  if (!found && (ea->has_object || is_type)) {
    if (ea->has_object) gs_cli_error("%s: no object %" PRIx64 " in the first section", gs_file_name(f), ea->object);
    else gs_cli_error("%s: no type named '%s' in the first section", gs_file_name(f), ea->type);
    free(is_type);
    gs_graph_free(g);
    return GS_EXIT_INVALID;
  }
  err = (ea->has_object || is_type) ? write_dot(s, g, ea->has_object, target, is_type) : GS_ENOMEM;
  free(is_type);
  gs_graph_free(g);
  if (err) { gs_cli_error("out of memory"); return GS_EXIT_USAGE; }
  return GS_EXIT_OK;
}

static int export_csv(gs_file *f, gs_reader *r, gs_obuf *s) {
  gs_summary sum;
  gs_diag d;
  int err, code = GS_EXIT_OK;
  gs_summary_init(&sum, gs_file_name(f), GS_SUMMARY_TOP);
  err = gs_summary_load(&sum, r, &d);
  gs_file_hide_progress(f);
  if (err) code = gs_cli_load_error(f, err, &d);
  else if (write_csv(s, &sum)) { gs_cli_error("out of memory"); code = GS_EXIT_USAGE; }
  gs_summary_free(&sum);
  return code;
}

int gs_cmd_export(int argc, char **argv) {
  export_args ea;
  gs_file *f;
  gs_reader *r;
  gs_obuf *s;
  char err[300];
  int code;
  memset(&ea, 0, sizeof ea);
  if ((code = parse_args(argc, argv, &ea)) != GS_EXIT_OK) return code;
  if (ea.help) return gs_cli_help(usage);
  if (!(s = calloc(1, sizeof *s))) { gs_cli_error("out of memory"); return GS_EXIT_USAGE; }
  if ((code = gs_cli_open_dump(ea.path, &f, &r)) != GS_EXIT_OK) { free(s); return code; }
  if (gs_output_open(&s->out, ea.out, err, sizeof err)) {
    gs_cli_error("%s", err);
    gs_cli_close_dump(f, r);
    free(s);
    return GS_EXIT_USAGE;
  }
  code = ea.format == FMT_CSV ? export_csv(f, r, s) : export_graph(&ea, f, r, s);
  gs_obuf_flush(s);
  if (code == GS_EXIT_OK && (s->err || gs_output_commit(s->out))) {
    gs_cli_error("%s: %s", ea.out, gs_output_error(s->out)[0] ? gs_output_error(s->out) : "write failed");
    code = GS_EXIT_USAGE;
  }
  if (code != GS_EXIT_OK) gs_output_discard(s->out);
  gs_output_close(s->out);
  gs_cli_close_dump(f, r);
  free(s);
  return gs_cli_finish(code);
}
