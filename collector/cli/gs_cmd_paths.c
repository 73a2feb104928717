/* gs_cmd_paths.c - "gcsnap paths": which roots keep an object or a type alive.
 *
 * For one object, the shortest reference chains from the nearest strong
 * roots, root kind and flags shown. For a type, every live instance is
 * traced back along its shortest path to the root that reaches it first,
 * and the instances are grouped by that root (kind, flags, type) and the
 * first object after it, the way RPM's root view groups them: the groups
 * that hold the most instances are where a leak is held. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_heapstats.h"
#include "gs_json.h"
#include "gs_paths.h"
#include "gs_table.h"

#define DEFAULT_MAX 5

static const char usage[] =
  "usage: gcsnap paths (--object ID | --type NAME) [--max N] [--json] FILE\n"
  "\n"
  "Shows what keeps objects alive: only roots without the weak flag do.\n"
  "  --object ID   the shortest reference paths to the object ID (hex, as\n"
  "                in the dump) from up to N strong roots, nearest first\n"
  "  --type NAME   for all objects of the type NAME (exactly as in the dump),\n"
  "                the roots and first hops that keep most of them alive,\n"
  "                grouped, with the shortest path of one instance per group\n"
  "  --max N       paths or groups to show (default 5, 0 = all)\n"
  "  --json        print one JSON object instead of text\n"
  "  -h, --help    show this help\n"
  "FILE is a .gclog or .gclog.zst dump; - reads stdin. Every section is\n"
  "searched.\n"
  "\n"
  "Exit status: 0 done, 1 the file is invalid or has no such object or\n"
  "type, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_OBJECT, OPT_TYPE, OPT_MAX, OPT_JSON };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"object", 0, 1, OPT_OBJECT},
  {"type", 0, 1, OPT_TYPE},
  {"max", 0, 1, OPT_MAX},
  {"json", 0, 0, OPT_JSON},
  {NULL, 0, 0, 0},
};

typedef struct paths_args {
  int help, json, has_object;
  uint64_t object, max;
  const char *type, *path;
} paths_args;

/* ---- names ------------------------------------------------------------ */

static const char *type_of(const gs_graph *g, uint32_t t, char *buf, size_t cap) {
  if (t == GS_GRAPH_MISSING || t >= g->ntypes) return "(not in the dump)";
  return gs_graph_type_name(g, t, buf, cap);
}

static void flags_text(unsigned flags, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s%s", flags & GS_FLAG_PINNED ? "pinned " : "",
           flags & GS_FLAG_WEAK ? "weak " : "", flags & GS_FLAG_INTERIOR ? "interior " : "",
           flags ? "" : "no flags");
  if (buf[0] && buf[strlen(buf) - 1] == ' ') buf[strlen(buf) - 1] = 0;
}

static json_t *node_json(const gs_graph *g, uint32_t v) {
  json_t *o = json_object();
  char id[24], tbuf[64];
  snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
  gs_json_set(o, "id", gs_json_cstring(id));
  gs_json_set(o, "type", gs_json_cstring(type_of(g, g->types[v], tbuf, sizeof tbuf)));
  gs_json_set(o, "size", gs_json_u64(g->sizes[v]));
  return o;
}

static json_t *root_json(const gs_graph *g, const gs_graph_root *r) {
  json_t *o = json_object();
  char tbuf[64];
  gs_json_set(o, "kind", gs_json_cstring(gs_root_kind_names[r->kind]));
  gs_json_set(o, "flags", gs_json_u64(r->flags));
  if (r->container != GS_GRAPH_MISSING)
    gs_json_set(o, "container", gs_json_cstring(type_of(g, r->container, tbuf, sizeof tbuf)));
  return o;
}

static void print_path(const gs_graph *g, const uint32_t *nodes, size_t len) {
  size_t i;
  char tbuf[64];
  for (i = 0; i < len; i++)
    printf("     %*s%" PRIx64 "  %s (%" PRIu64 " bytes)\n", (int)(2 * i), "", g->ids[nodes[i]],
           type_of(g, g->types[nodes[i]], tbuf, sizeof tbuf), g->sizes[nodes[i]]);
}

/* The path from the root that reaches v first, root first. */
static size_t trace(const gs_retention *ret, uint32_t v, uint32_t *out) {
  size_t n = 0, i;
  for (; v != GS_PATH_NONE; v = ret->parent[v]) out[n++] = v;
  for (i = 0; i < n / 2; i++) { uint32_t t = out[i]; out[i] = out[n - 1 - i]; out[n - 1 - i] = t; }
  return n;
}

/* ---- one object ------------------------------------------------------- */

static uint32_t find_object(const gs_graph *g, uint64_t id) {
  uint32_t lo = 0, hi = g->nobjects;
  /* Objects are numbered in ID order. */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->ids[mid] < id) lo = mid + 1; else hi = mid;
  }
  return lo < g->nobjects && g->ids[lo] == id ? lo : GS_PATH_NONE;
}

static int object_paths(const gs_graph *g, uint32_t v, size_t max, json_t *json_out) {
  gs_paths p;
  size_t i;
  char tbuf[64], fbuf[40];
  if (gs_paths_to(g, v, max ? max : g->nroots, &p)) return GS_ENOMEM;
  if (json_out) {
    json_t *paths = json_array();
    gs_json_set(json_out, "object", node_json(g, v));
    for (i = 0; i < p.npaths; i++) {
      json_t *one = json_object(), *chain = json_array();
      size_t k;
      gs_json_set(one, "root", root_json(g, &g->roots[p.roots[i]]));
      for (k = p.start[i]; k < p.start[i + 1]; k++) json_array_append_new(chain, node_json(g, p.nodes[k]));
      gs_json_set(one, "path", chain);
      json_array_append_new(paths, one);
    }
    gs_json_set(json_out, "paths", paths);
  } else {
    printf("  Object %" PRIx64 " (%s, %" PRIu64 " bytes)", g->ids[v],
           type_of(g, g->types[v], tbuf, sizeof tbuf), g->sizes[v]);
    if (!p.npaths) printf(": no strong root reaches it (garbage, or held by weak roots only)\n");
    else printf(", shortest paths from %zu root%s:\n", p.npaths, p.npaths == 1 ? "" : "s");
    for (i = 0; i < p.npaths; i++) {
      const gs_graph_root *r = &g->roots[p.roots[i]];
      flags_text(r->flags, fbuf, sizeof fbuf);
      printf("\n  %zu. %s root (%s), %zu reference%s:\n", i + 1, gs_root_kind_names[r->kind], fbuf,
             p.start[i + 1] - p.start[i] - 1, p.start[i + 1] - p.start[i] == 2 ? "" : "s");
      print_path(g, p.nodes + p.start[i], p.start[i + 1] - p.start[i]);
    }
  }
  gs_paths_free(&p);
  return GS_OK;
}

/* ---- one type --------------------------------------------------------- */

static int type_paths(const gs_graph *g, const uint8_t *is_type, const char *name, size_t max,
                      json_t *json_out) {
  gs_retention ret;
  gs_type_group *groups = NULL;
  size_t ngroups = 0, i, shown;
  uint64_t count, bytes, live;
  uint32_t *chain;
  char rbuf[64], hbuf[64], fbuf[40];
  int err;
  if (gs_retention_build(g, &ret)) return GS_ENOMEM;
  err = gs_type_groups(g, &ret, is_type, &groups, &ngroups, &count, &bytes, &live);
  chain = malloc(((size_t)g->nnodes + 1) * sizeof *chain);
  if (err || !chain) { gs_retention_free(&ret); free(groups); free(chain); return GS_ENOMEM; }
  shown = max == 0 || max > ngroups ? ngroups : max;
  if (json_out) {
    json_t *arr = json_array();
    gs_json_set(json_out, "type", gs_json_cstring(name));
    gs_json_set(json_out, "objects", gs_json_u64(count));
    gs_json_set(json_out, "bytes", gs_json_u64(bytes));
    gs_json_set(json_out, "reachable", gs_json_u64(live));
    for (i = 0; i < shown; i++) {
      json_t *o = json_object(), *path = json_array();
      size_t len = trace(&ret, groups[i].example, chain), k;
      gs_json_set(o, "objects", gs_json_u64(groups[i].count));
      gs_json_set(o, "bytes", gs_json_u64(groups[i].bytes));
      gs_json_set(o, "root_kind", gs_json_cstring(gs_root_kind_names[groups[i].root_kind]));
      gs_json_set(o, "root_flags", gs_json_u64(groups[i].root_flags));
      gs_json_set(o, "root_type", gs_json_cstring(type_of(g, groups[i].root_type, rbuf, sizeof rbuf)));
      gs_json_set(o, "first_hop_type", gs_json_cstring(type_of(g, groups[i].hop_type, hbuf, sizeof hbuf)));
      for (k = 0; k < len; k++) json_array_append_new(path, node_json(g, chain[k]));
      gs_json_set(o, "example_path", path);
      json_array_append_new(arr, o);
    }
    gs_json_set(json_out, "groups", arr);
  } else {
    printf("  Type %s: %" PRIu64 " objects (%" PRIu64 " bytes), %" PRIu64 " kept alive by strong roots\n",
           name, count, bytes, live);
    for (i = 0; i < shown; i++) {
      size_t len = trace(&ret, groups[i].example, chain);
      flags_text(groups[i].root_flags, fbuf, sizeof fbuf);
      printf("\n  %zu. %" PRIu64 " objects (%" PRIu64 " bytes) held by a %s root (%s) of type %s\n"
             "     through %s; shortest example:\n", i + 1, groups[i].count, groups[i].bytes,
             gs_root_kind_names[groups[i].root_kind], fbuf,
             type_of(g, groups[i].root_type, rbuf, sizeof rbuf),
             type_of(g, groups[i].hop_type, hbuf, sizeof hbuf));
      print_path(g, chain, len);
    }
    if (shown < ngroups) printf("\n  (%zu more groups; --max 0 shows all)\n", ngroups - shown);
  }
  gs_retention_free(&ret);
  free(groups);
  free(chain);
  return GS_OK;
}

/* ---- command ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, paths_args *pa) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  pa->max = DEFAULT_MAX;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("paths", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (pa->path) return gs_cli_usage_error("paths", usage, "only one FILE is allowed");
      pa->path = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: pa->help = 1; break;
    case OPT_JSON: pa->json = 1; break;
    case OPT_TYPE: pa->type = a.value; break;
    case OPT_OBJECT: {
      const char *s = a.value;
      char *end;
      if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
      pa->object = strtoull(s, &end, 16);
      if (!*s || *end || *s == '-') return gs_cli_usage_error("paths", usage, "--object needs a hex object ID");
      pa->has_object = 1;
      break;
    }
    case OPT_MAX:
      if (gs_args_parse_count(a.value, UINT32_MAX, &pa->max) != 0)
        return gs_cli_usage_error("paths", usage, "--max needs a number");
      break;
    }
  }
  if (pa->help) return GS_EXIT_OK;
  if (!pa->path) return gs_cli_usage_error("paths", usage, "no FILE given");
  if (pa->has_object == !!pa->type) return gs_cli_usage_error("paths", usage, "give one of --object or --type");
  return GS_EXIT_OK;
}

/* Marks the type indices of g named name; returns how many. */
static size_t mark_types(const gs_graph *g, const char *name, uint8_t *is_type) {
  size_t n = 0;
  uint32_t t;
  char buf[64];
  for (t = 0; t < g->ntypes; t++) {
    is_type[t] = !strcmp(gs_graph_type_name(g, t, buf, sizeof buf), name);
    n += is_type[t];
  }
  return n;
}

static int one_section(const paths_args *pa, const gs_graph *g, json_t *sections, int *found) {
  json_t *o = sections ? json_object() : NULL;
  int err = GS_OK;
  if (sections) {
    gs_json_set(o, "name", gs_json_cstring(g->name));
    json_array_append_new(sections, o);
  }
  if (pa->has_object) {
    uint32_t v = find_object(g, pa->object);
    if (v == GS_PATH_NONE) return GS_OK;
    *found = 1;
    if (!o) printf("Section %s\n", g->name);
    err = object_paths(g, v, (size_t)pa->max, o);
  } else {
    uint8_t *is_type = calloc((size_t)g->ntypes + 1, 1);
    if (!is_type) return GS_ENOMEM;
    if (mark_types(g, pa->type, is_type)) {
      *found = 1;
      if (!o) printf("Section %s\n", g->name);
      err = type_paths(g, is_type, pa->type, (size_t)pa->max, o);
    }
    free(is_type);
  }
  return err;
}

static int run(const paths_args *pa, gs_file *f, gs_reader *r) {
  json_t *sections = pa->json ? json_array() : NULL;
  int found = 0, code = GS_EXIT_OK, any = 0;
  for (;;) {
    gs_graph *g = NULL;
    gs_diag d;
    int err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF && any) break;
    if (err == GS_EOF) {
      gs_cli_error("%s: no AppDomain section ('a' record) in the input", gs_file_name(f));
      code = GS_EXIT_INVALID;
      break;
    }
    if (err) { code = gs_cli_load_error(f, err, &d); break; }
    any = 1;
    gs_file_hide_progress(f);
    err = one_section(pa, g, sections, &found);
    gs_graph_free(g);
    if (err) { gs_cli_error("%s", gs_strerror(err)); code = GS_EXIT_USAGE; break; }
  }
  if (code == GS_EXIT_OK && !found) {
    if (pa->has_object) gs_cli_error("%s: no object %" PRIx64 " in any section", gs_file_name(f), pa->object);
    else gs_cli_error("%s: no type named '%s' in any section", gs_file_name(f), pa->type);
    code = GS_EXIT_INVALID;
  }
  if (sections && code == GS_EXIT_OK) {
    json_t *o = json_object();
    gs_json_set(o, "file", gs_json_cstring(gs_file_name(f)));
    gs_json_set(o, "sections", sections);
    sections = NULL;
    if (gs_json_print(o)) code = GS_EXIT_USAGE;
    json_decref(o);
  }
  json_decref(sections);
  return code;
}

int gs_cmd_paths(int argc, char **argv) {
  paths_args pa;
  gs_file *f;
  gs_reader *r;
  int code;
  memset(&pa, 0, sizeof pa);
  if ((code = parse_args(argc, argv, &pa)) != GS_EXIT_OK) return code;
  if (pa.help) return gs_cli_help(usage);
  if ((code = gs_cli_open_dump(pa.path, &f, &r)) != GS_EXIT_OK) return code;
  code = run(&pa, f, r);
  gs_cli_close_dump(f, r);
  return gs_cli_finish(code);
}
