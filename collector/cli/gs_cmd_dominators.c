/* gs_cmd_dominators.c - "gcsnap dominators": what each object keeps alive.
 *
 * For each section: the objects with the largest retained size (the bytes
 * that would be freed if the object died), and with --by-type the retained
 * size of each type without double counting, as Eclipse MAT's dominator
 * tree view shows them. Unreachable objects are reported apart: nothing
 * keeps them alive, so they retain nothing. The analysis is
 * gs_dominators.c's; this file reads the options and prints. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_dominators.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_jsonw.h"
#include "gs_table.h"

#define DEFAULT_TOP 20

static const char usage[] =
  "usage: gcsnap dominators [--top N] [--by-type] [--json] FILE\n"
  "\n"
  "Builds the dominator tree of each section of FILE over a virtual root\n"
  "joined to every root without the weak flag, and lists the objects that\n"
  "retain the most bytes: their own (shallow) size plus everything only they\n"
  "keep alive. Objects no strong root reaches are counted apart.\n"
  "FILE is a dump (.gclog, .heapsnapshot, .hprof or .gcdump; plain, gzip\n"
  "or zstd); - reads stdin.\n"
  "\n"
  "  --top N     list N objects (or types) (default 20, 0 = all)\n"
  "  --by-type   list types by retained size; an object counts for its type\n"
  "              only when no object of that type dominates it, so nothing\n"
  "              is counted twice\n"
  "  --json      print one JSON object instead of text\n"
  "  -h, --help  show this help\n"
  "\n"
  "Exit status: 0 done, 1 the file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_TOP, OPT_BY_TYPE, OPT_JSON };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"top", 0, 1, OPT_TOP},
  {"by-type", 0, 0, OPT_BY_TYPE},
  {"json", 0, 0, OPT_JSON},
  {NULL, 0, 0, 0},
};

typedef struct dom_args {
  int help, json, by_type;
  uint64_t top;
  const char *path;
} dom_args;

/* ---- output ----------------------------------------------------------- */

static double share(uint64_t part, uint64_t whole) {
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* A row of either table, made again when printed: there may be one for
 * each object of the heap. */
typedef struct row_text {
  const gs_dominators *s;
  uint64_t total;
  char retained[24], pct[16], count[24], shallow[24], id[24], type[64];
} row_text;

static void fill_sizes(row_text *x, uint64_t retained, uint64_t shallow) {
  snprintf(x->retained, sizeof x->retained, "%" PRIu64, retained);
  snprintf(x->pct, sizeof x->pct, "%.1f%%", share(retained, x->total));
  snprintf(x->shallow, sizeof x->shallow, "%" PRIu64, shallow);
}

static int object_row(void *ctx, size_t r, const char **cells) {
  row_text *x = ctx;
  const gs_graph *g = x->s->g;
  uint32_t v = x->s->top[r];
  fill_sizes(x, x->s->dom.retained[v], g->sizes[v]);
  snprintf(x->id, sizeof x->id, "%" PRIx64, g->ids[v]);
  cells[0] = x->retained; cells[1] = x->pct; cells[2] = x->shallow; cells[3] = x->id;
  cells[4] = gs_dominators_type_name(g, g->types[v], x->type, sizeof x->type);
  return GS_OK;
}

static int type_row(void *ctx, size_t r, const char **cells) {
  row_text *x = ctx;
  uint32_t ty = x->s->type_order[r];
  fill_sizes(x, x->s->type_retained[ty], x->s->type_shallow[ty]);
  snprintf(x->count, sizeof x->count, "%" PRIu64, x->s->type_count[ty]);
  cells[0] = x->retained; cells[1] = x->pct; cells[2] = x->count; cells[3] = x->shallow;
  cells[4] = gs_dominators_type_name(x->s->g, ty, x->type, sizeof x->type);
  return GS_OK;
}

static int print_objects(const gs_dominators *s) {
  static const char *const heads[] = {"Retained", "Share", "Shallow", "Object", "Type"};
  gs_table t;
  row_text x;
  x.s = s;
  x.total = s->dom.retained[s->g->nnodes];
  gs_table_init(&t, 5, heads, "rrrll");
  printf("\n  Objects by retained size (%zu):\n", s->ntop);
  return gs_table_print_rows(&t, s->ntop, object_row, &x, stdout);
}

static int print_types(const gs_dominators *s) {
  static const char *const heads[] = {"Retained", "Share", "Objects", "Shallow", "Type"};
  gs_table t;
  row_text x;
  x.s = s;
  x.total = s->dom.retained[s->g->nnodes];
  gs_table_init(&t, 5, heads, "rrrrl");
  printf("\n  Types by retained size, no object counted twice (%zu):\n", s->ntype_rows);
  return gs_table_print_rows(&t, s->ntype_rows, type_row, &x, stdout);
}

static int print_section_text(const gs_dominators *s, size_t index, int by_type) {
  const gs_graph *g = s->g;
  printf("%sSection %zu: %s\n", index ? "\n" : "", index + 1, g->name);
  printf("  Reachable objects    %" PRIu64 " (%" PRIu64 " bytes)\n", s->reachable,
         s->dom.retained[g->nnodes]);
  printf("  Unreachable objects  %" PRIu64 " (%" PRIu64 " bytes, retained by nothing)\n",
         s->unreachable, s->unreachable_bytes);
  if (print_objects(s)) return GS_ENOMEM;
  return by_type ? print_types(s) : GS_OK;
}

/* ---- command ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, dom_args *da) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  da->top = DEFAULT_TOP;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("dominators", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (da->path) return gs_cli_usage_error("dominators", usage, "only one FILE is allowed");
      da->path = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: da->help = 1; break;
    case OPT_JSON: da->json = 1; break;
    case OPT_BY_TYPE: da->by_type = 1; break;
    case OPT_TOP:
      if (gs_args_parse_count(a.value, UINT32_MAX, &da->top) != 0)
        return gs_cli_usage_error("dominators", usage, "--top needs a number");
      break;
    }
  }
  if (!da->help && !da->path) return gs_cli_usage_error("dominators", usage, "no FILE given");
  return GS_EXIT_OK;
}

static int print_section(void *ctx, const gs_dominators *s, size_t index) {
  return print_section_text(s, index, *(const int *)ctx);
}

int gs_cmd_dominators(int argc, char **argv) {
  dom_args da;
  gs_file_fault fault;
  int code;
  memset(&da, 0, sizeof da);
  if ((code = parse_args(argc, argv, &da)) != GS_EXIT_OK) return code;
  if (da.help) return gs_cli_help(usage);
  if (da.json) {
    gs_jsonw *w = gs_jsonw_print(stdout);
    int err = w ? gs_dominators_write(w, da.path, da.top, da.by_type, &fault)
                : gs_file_fault_text(&fault, NULL, GS_ENOMEM, NULL);
    if (err) code = gs_cli_fault(&fault);
    if (gs_jsonw_finish(w, NULL) && !err) code = GS_EXIT_USAGE;
    return gs_cli_finish(code);
  }
  if (gs_dominators_each(da.path, da.top, da.by_type, print_section, &da.by_type, &fault))
    code = gs_cli_fault(&fault);
  return gs_cli_finish(code);
}
