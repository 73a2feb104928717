/* gs_cmd_dominators.c - "gcsnap dominators": what each object keeps alive.
 *
 * For each section: the objects with the largest retained size (the bytes
 * that would be freed if the object died), and with --by-type the retained
 * size of each type without double counting, as Eclipse MAT's dominator
 * tree view shows them. Unreachable objects are reported apart: nothing
 * keeps them alive, so they retain nothing. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_analysis.h"
#include "gs_cli.h"
#include "gs_dom.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_json.h"
#include "gs_table.h"

#define DEFAULT_TOP 20

static const char usage[] =
  "usage: gcsnap dominators [--top N] [--by-type] [--json] FILE\n"
  "\n"
  "Builds the dominator tree of each section of FILE over a virtual root\n"
  "joined to every root without the weak flag, and lists the objects that\n"
  "retain the most bytes: their own (shallow) size plus everything only they\n"
  "keep alive. Objects no strong root reaches are counted apart.\n"
  "FILE is a .gclog or .gclog.zst dump; - reads stdin.\n"
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

/* One section's analysis. */
typedef struct dom_section {
  const gs_graph *g;
  gs_dom dom;
  uint64_t unreachable, unreachable_bytes;
  uint32_t *top;             /* nodes, largest retained first */
  size_t ntop;
  uint64_t *type_retained;   /* ntypes + 1, with --by-type */
  uint64_t *type_count, *type_shallow;
  uint32_t *type_order;      /* types, largest retained first */
  size_t ntype_rows;
} dom_section;

/* ---- ranking ---------------------------------------------------------- */

/* Beyond this many rows a full sort beats insertion into the kept rows. */
#define INSERTION_LIMIT 1000

static const uint64_t *sort_key;

static int by_key_desc(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (sort_key[x] != sort_key[y]) return sort_key[x] < sort_key[y] ? 1 : -1;
  return x < y ? -1 : 1;
}

/* The at most limit entries of 0..n-1 with the largest key that keep()
 * accepts, largest first; out has room for limit entries (all n when limit
 * is above INSERTION_LIMIT). */
static size_t top_of(const uint64_t *key, uint32_t n, size_t limit,
                     int (*keep)(const dom_section *, uint32_t), const dom_section *s,
                     uint32_t *out) {
  size_t count = 0, j;
  uint32_t i;
  if (limit > INSERTION_LIMIT) {
    for (i = 0; i < n; i++)
      if (keep(s, i)) out[count++] = i;
    sort_key = key;
    qsort(out, count, sizeof *out, by_key_desc);
    return count < limit ? count : limit;
  }
  for (i = 0; i < n && limit; i++) {
    if (!keep(s, i)) continue;
    if (count == limit && key[i] <= key[out[count - 1]]) continue;
    j = count < limit ? count++ : count - 1;
    while (j > 0 && key[out[j - 1]] < key[i]) { out[j] = out[j - 1]; j--; }
    out[j] = i;
  }
  return count;
}

static int reachable_object(const dom_section *s, uint32_t v) {
  return v < s->g->nobjects && s->dom.idom[v] != GS_DOM_UNREACHABLE;
}

static int any_type(const dom_section *s, uint32_t t) {
  return s->type_count[t] > 0;
}

/* Room for the rows top_of() may use: all n beyond its insertion limit. */
static size_t rows_for(size_t limit, uint32_t n) {
  if (limit == 0 || limit > n) limit = n;
  return limit > INSERTION_LIMIT ? n : limit;
}

static int analyse(dom_section *s, const gs_graph *g, size_t limit, int by_type) {
  uint32_t v, ntypes = g->ntypes + 1;
  memset(s, 0, sizeof *s);
  s->g = g;
  if (gs_dom_build(g, &s->dom)) return GS_ENOMEM;
  for (v = 0; v < g->nobjects; v++)
    if (s->dom.idom[v] == GS_DOM_UNREACHABLE) { s->unreachable++; s->unreachable_bytes += g->sizes[v]; }
  if (!(s->top = malloc((rows_for(limit, g->nobjects) + 1) * sizeof *s->top))) return GS_ENOMEM;
  s->ntop = top_of(s->dom.retained, g->nobjects, limit ? limit : g->nobjects, reachable_object, s,
                   s->top);
  if (!by_type) return GS_OK;
  s->type_retained = calloc(ntypes, sizeof *s->type_retained);
  s->type_count = calloc(ntypes, sizeof *s->type_count);
  s->type_shallow = calloc(ntypes, sizeof *s->type_shallow);
  s->type_order = malloc((rows_for(limit, ntypes) + 1) * sizeof *s->type_order);
  if (!s->type_retained || !s->type_count || !s->type_shallow || !s->type_order ||
      gs_dom_retained_by_type(g, &s->dom, s->type_retained))
    return GS_ENOMEM;
  for (v = 0; v < g->nnodes; v++) {
    uint32_t t = g->types[v] == GS_GRAPH_MISSING ? g->ntypes : g->types[v];
    if (s->dom.idom[v] == GS_DOM_UNREACHABLE) continue;
    s->type_count[t]++;
    s->type_shallow[t] += g->sizes[v];
  }
  s->ntype_rows = top_of(s->type_retained, ntypes, limit ? limit : ntypes, any_type, s,
                         s->type_order);
  return GS_OK;
}

static void section_free(dom_section *s) {
  gs_dom_free(&s->dom);
  free(s->top);
  free(s->type_retained);
  free(s->type_count);
  free(s->type_shallow);
  free(s->type_order);
}

/* ---- output ----------------------------------------------------------- */

static const char *type_name(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  if (t >= g->ntypes || t == GS_GRAPH_MISSING) return "(not in the dump)";
  return gs_graph_type_name(g, t, buf, cap);
}

static double share(uint64_t part, uint64_t whole) {
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

static int print_objects(const dom_section *s) {
  static const char *const heads[] = {"Retained", "Share", "Shallow", "Object", "Type"};
  const gs_graph *g = s->g;
  uint64_t total = s->dom.retained[g->nnodes];
  gs_table t;
  size_t i;
  int err = GS_OK;
  gs_table_init(&t, 5, heads, "rrrll");
  for (i = 0; i < s->ntop && !err; i++) {
    uint32_t v = s->top[i];
    char retained[24], pct[16], shallow[24], id[24], tbuf[64];
    const char *cells[5];
    snprintf(retained, sizeof retained, "%" PRIu64, s->dom.retained[v]);
    snprintf(pct, sizeof pct, "%.1f%%", share(s->dom.retained[v], total));
    snprintf(shallow, sizeof shallow, "%" PRIu64, g->sizes[v]);
    snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
    cells[0] = retained; cells[1] = pct; cells[2] = shallow; cells[3] = id;
    cells[4] = type_name(g, g->types[v], tbuf, sizeof tbuf);
    err = gs_table_add(&t, cells);
  }
  printf("\n  Objects by retained size (%zu):\n", s->ntop);
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}

static int print_types(const dom_section *s) {
  static const char *const heads[] = {"Retained", "Share", "Objects", "Shallow", "Type"};
  const gs_graph *g = s->g;
  uint64_t total = s->dom.retained[g->nnodes];
  gs_table t;
  size_t i;
  int err = GS_OK;
  gs_table_init(&t, 5, heads, "rrrrl");
  for (i = 0; i < s->ntype_rows && !err; i++) {
    uint32_t ty = s->type_order[i];
    char retained[24], pct[16], count[24], shallow[24], tbuf[64];
    const char *cells[5];
    snprintf(retained, sizeof retained, "%" PRIu64, s->type_retained[ty]);
    snprintf(pct, sizeof pct, "%.1f%%", share(s->type_retained[ty], total));
    snprintf(count, sizeof count, "%" PRIu64, s->type_count[ty]);
    snprintf(shallow, sizeof shallow, "%" PRIu64, s->type_shallow[ty]);
    cells[0] = retained; cells[1] = pct; cells[2] = count; cells[3] = shallow;
    cells[4] = type_name(g, ty, tbuf, sizeof tbuf);
    err = gs_table_add(&t, cells);
  }
  printf("\n  Types by retained size, no object counted twice (%zu):\n", s->ntype_rows);
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}

static int print_section_text(const dom_section *s, size_t index, int by_type) {
  const gs_graph *g = s->g;
  printf("%sSection %zu: %s\n", index ? "\n" : "", index + 1, g->name);
  printf("  Reachable objects    %" PRIu32 " (%" PRIu64 " bytes)\n", s->dom.reachable,
         s->dom.retained[g->nnodes]);
  printf("  Unreachable objects  %" PRIu64 " (%" PRIu64 " bytes, retained by nothing)\n",
         s->unreachable, s->unreachable_bytes);
  if (print_objects(s)) return GS_ENOMEM;
  return by_type ? print_types(s) : GS_OK;
}

static json_t *section_json(const dom_section *s, int by_type) {
  const gs_graph *g = s->g;
  json_t *o = json_object(), *top = json_array(), *types = by_type ? json_array() : NULL;
  size_t i;
  char id[24], tbuf[64];
  if (!o || !top || (by_type && !types)) goto fail;
  gs_json_set(o, "name", gs_json_cstring(g->name));
  gs_json_set(o, "reachable_objects", gs_json_u64(s->dom.reachable));
  gs_json_set(o, "reachable_bytes", gs_json_u64(s->dom.retained[g->nnodes]));
  gs_json_set(o, "unreachable_objects", gs_json_u64(s->unreachable));
  gs_json_set(o, "unreachable_bytes", gs_json_u64(s->unreachable_bytes));
  for (i = 0; i < s->ntop; i++) {
    uint32_t v = s->top[i];
    json_t *row = json_object();
    if (!row || json_array_append_new(top, row)) goto fail;
    snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
    gs_json_set(row, "id", gs_json_cstring(id));
    gs_json_set(row, "type", gs_json_cstring(type_name(g, g->types[v], tbuf, sizeof tbuf)));
    gs_json_set(row, "shallow", gs_json_u64(g->sizes[v]));
    gs_json_set(row, "retained", gs_json_u64(s->dom.retained[v]));
  }
  gs_json_set(o, "top_objects", top);
  top = NULL;
  for (i = 0; by_type && i < s->ntype_rows; i++) {
    uint32_t t = s->type_order[i];
    json_t *row = json_object();
    if (!row || json_array_append_new(types, row)) goto fail;
    gs_json_set(row, "type", gs_json_cstring(type_name(g, t, tbuf, sizeof tbuf)));
    gs_json_set(row, "retained", gs_json_u64(s->type_retained[t]));
    gs_json_set(row, "count", gs_json_u64(s->type_count[t]));
    gs_json_set(row, "shallow", gs_json_u64(s->type_shallow[t]));
  }
  if (types) gs_json_set(o, "by_type", types);
  return o;
fail:
  json_decref(o);
  json_decref(top);
  json_decref(types);
  return NULL;
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

/* Analyses one section at a time, so memory is bounded by the largest;
 * each section is printed, or appended to sections when it is not NULL. */
static int run(gs_file *f, gs_reader *r, uint64_t top, int by_type, json_t *sections) {
  size_t index = 0;
  int code = GS_EXIT_OK;
  for (;;) {
    gs_graph *g = NULL;
    gs_diag d;
    dom_section s;
    int err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF && index > 0) break;
    if (err == GS_EOF) { err = GS_EFORMAT; d.code = GS_D_NO_SECTION; d.line = 0;
      snprintf(d.message, sizeof d.message, "no AppDomain section ('a' record) in the input"); }
    if (err) { code = gs_cli_load_error(f, err, &d); break; }
    gs_file_hide_progress(f);
    err = analyse(&s, g, (size_t)top, by_type);
    if (!err && sections) err = json_array_append_new(sections, section_json(&s, by_type)) ? GS_ENOMEM : GS_OK;
    else if (!err) err = print_section_text(&s, index, by_type);
    section_free(&s);
    gs_graph_free(g);
    if (err) { gs_cli_error("%s: %s", gs_file_name(f), gs_strerror(err)); code = GS_EXIT_USAGE; break; }
    index++;
  }
  return code;
}

int gs_dominators_json(const char *path, uint64_t top, int by_type, json_t **out) {
  gs_file *f;
  gs_reader *r;
  json_t *o, *sections;
  int code;
  *out = NULL;
  if ((code = gs_cli_open_dump(path, &f, &r)) != GS_EXIT_OK) return code;
  o = json_object();
  sections = json_array();
  if (!o || !sections || gs_json_set(o, "file", gs_json_cstring(gs_file_name(f)))) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  }
  if (code == GS_EXIT_OK) code = run(f, r, top, by_type, sections);
  if (code == GS_EXIT_OK && gs_json_set(o, "sections", json_incref(sections))) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  }
  json_decref(sections);
  gs_cli_close_dump(f, r);
  if (code == GS_EXIT_OK) *out = o;
  else json_decref(o);
  return code;
}

int gs_cmd_dominators(int argc, char **argv) {
  dom_args da;
  gs_file *f;
  gs_reader *r;
  int code;
  memset(&da, 0, sizeof da);
  if ((code = parse_args(argc, argv, &da)) != GS_EXIT_OK) return code;
  if (da.help) return gs_cli_help(usage);
  if (da.json) {
    json_t *o;
    if ((code = gs_dominators_json(da.path, da.top, da.by_type, &o)) == GS_EXIT_OK &&
        gs_json_print(o))
      code = GS_EXIT_USAGE;
    json_decref(o);
    return gs_cli_finish(code);
  }
  if ((code = gs_cli_open_dump(da.path, &f, &r)) != GS_EXIT_OK) return code;
  code = run(f, r, da.top, da.by_type, NULL);
  gs_cli_close_dump(f, r);
  return gs_cli_finish(code);
}
