/* gs_cmd_paths.c - "gcsnap paths": which roots keep an object or a type alive.
 *
 * For one object, the shortest reference chains from the nearest strong
 * roots, root kind and flags shown. For a type, every live instance is
 * traced back along its shortest path to the root that reaches it first,
 * and the instances are grouped by that root (kind, flags, type) and the
 * first object after it, the way RPM's root view groups them: the groups
 * that hold the most instances are where a leak is held. The analysis is
 * gs_retainers.c's; this file prints it. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_heapstats.h"
#include "gs_json.h"
#include "gs_retainers.h"

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
  "FILE is a dump (.gclog, .heapsnapshot, .hprof or .gcdump; plain, gzip\n"
  "or zstd); - reads stdin. Every section is searched.\n"
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

/* ---- text ------------------------------------------------------------- */

static void flags_text(unsigned flags, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s%s", flags & GS_FLAG_PINNED ? "pinned " : "",
           flags & GS_FLAG_WEAK ? "weak " : "", flags & GS_FLAG_INTERIOR ? "interior " : "",
           flags ? "" : "no flags");
  if (buf[0] && buf[strlen(buf) - 1] == ' ') buf[strlen(buf) - 1] = 0;
}

/* One line per node, each indented two more spaces, and one for the middle
 * left out (elided nodes after the first GS_PATH_ENDS): at most 42. */
static void print_path(const gs_graph *g, const uint32_t *nodes, size_t len, size_t elided) {
  size_t i, depth = 0;
  char tbuf[64];
  for (i = 0; i < len; i++, depth++) {
    if (elided && i == GS_PATH_ENDS)
      printf("     %*s... %zu more object%s on this path ...\n", (int)(2 * depth++), "", elided,
             elided == 1 ? "" : "s");
    printf("     %*s%" PRIx64 "  %s (%" PRIu64 " bytes)\n", (int)(2 * depth), "", g->ids[nodes[i]],
           gs_retainers_type_name(g, g->types[nodes[i]], tbuf, sizeof tbuf), g->sizes[nodes[i]]);
  }
}

/* " field NAME" after a static root whose field the side file names. */
static void field_text(const gs_retainers_at *at, const gs_graph *g, unsigned kind, uint32_t node,
                       char *buf, size_t cap) {
  const char *name = kind == GS_ROOT_STATIC ? gs_retainers_field(at, g, node) : NULL;
  snprintf(buf, cap, "%s%.200s", name ? " field " : "", name ? name : "");
}

static int print_object(const gs_graph *g, uint32_t v, size_t max, const gs_retainers_at *at) {
  gs_paths p;
  size_t i;
  char tbuf[64], fbuf[40], nbuf[220];
  if (gs_paths_to(g, v, max ? max : g->nroots, &p)) return GS_ENOMEM;
  printf("  Object %" PRIx64 " (%s, %" PRIu64 " bytes)", g->ids[v],
         gs_retainers_type_name(g, g->types[v], tbuf, sizeof tbuf), g->sizes[v]);
  if (!p.npaths) printf(": no strong root reaches it (garbage, or held by weak roots only)\n");
  else printf(", shortest paths from %zu root%s:\n", p.npaths, p.npaths == 1 ? "" : "s");
  for (i = 0; i < p.npaths; i++) {
    const gs_graph_root *r = &g->roots[p.roots[i]];
    size_t len = p.start[i + 1] - p.start[i], refs = len + p.elided[i] - 1;
    flags_text(r->flags, fbuf, sizeof fbuf);
    field_text(at, g, r->kind, p.nodes[p.start[i]], nbuf, sizeof nbuf);
    printf("\n  %zu. %s root (%s)%s, %zu reference%s:\n", i + 1, gs_root_kind_names[r->kind], fbuf,
           nbuf, refs, refs == 1 ? "" : "s");
    print_path(g, p.nodes + p.start[i], len, p.elided[i]);
  }
  gs_paths_free(&p);
  return GS_OK;
}

static void print_group(const gs_graph *g, const gs_retention *ret, const gs_type_group *gr,
                        size_t rank, uint32_t *chain, const gs_retainers_at *at) {
  size_t len = gs_retainers_trace(ret, gr->example, chain), elided = gs_path_shorten(chain, &len);
  char rbuf[64], hbuf[64], fbuf[40], nbuf[220];
  flags_text(gr->root_flags, fbuf, sizeof fbuf);
  field_text(at, g, len ? gr->root_kind : 0, len ? chain[0] : 0, nbuf, sizeof nbuf);
  printf("\n  %zu. %" PRIu64 " objects (%" PRIu64 " bytes) held by a %s root (%s)%s of type %s\n"
         "     through %s; shortest example:\n", rank, gr->count, gr->bytes,
         gs_root_kind_names[gr->root_kind], fbuf, nbuf,
         gs_retainers_type_name(g, gr->root_type, rbuf, sizeof rbuf),
         gs_retainers_type_name(g, gr->hop_type, hbuf, sizeof hbuf));
  print_path(g, chain, len, elided);
}

static int print_type(const gs_graph *g, const uint8_t *is_type, const char *name, size_t max,
                      const gs_retainers_at *at) {
  gs_retainers_type t;
  size_t i;
  if (gs_retainers_type_build(&t, g, is_type, max)) {
    gs_retainers_type_free(&t);
    return GS_ENOMEM;
  }
  printf("  Type %s: %" PRIu64 " objects (%" PRIu64 " bytes), %" PRIu64 " kept alive by strong roots\n",
         name, t.count, t.bytes, t.live);
  for (i = 0; i < t.shown; i++) print_group(g, &t.ret, &t.groups[i], i + 1, t.chain, at);
  if (t.shown < t.ngroups) printf("\n  (%zu more groups; --max 0 shows all)\n", t.ngroups - t.shown);
  gs_retainers_type_free(&t);
  return GS_OK;
}

static int print_section(void *ctx, const gs_graph *g, uint32_t object, const uint8_t *is_type,
                         const gs_retainers_at *at) {
  const gs_retainers_query *q = ctx;
  if (object == GS_PATH_NONE && !is_type) return GS_OK;
  printf("Section %s\n", g->name);
  return is_type ? print_type(g, is_type, q->type, q->max, at)
                 : print_object(g, object, q->max, at);
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
      errno = 0;
      pa->object = strtoull(s, &end, 16);
      if (!*s || *end || !isxdigit((unsigned char)*s) || errno == ERANGE)
        return gs_cli_usage_error("paths", usage, "--object needs a hex object ID of at most 64 bits");
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

int gs_cmd_paths(int argc, char **argv) {
  paths_args pa;
  gs_retainers_query q;
  gs_file_fault fault;
  json_t *o = NULL;
  int code;
  memset(&pa, 0, sizeof pa);
  if ((code = parse_args(argc, argv, &pa)) != GS_EXIT_OK) return code;
  if (pa.help) return gs_cli_help(usage);
  q.has_object = pa.has_object;
  q.object = pa.object;
  q.type = pa.type;
  q.max = (size_t)pa.max;
  if (!pa.json) {
    if (gs_retainers_each(pa.path, &q, print_section, &q, &fault)) code = gs_cli_fault(&fault);
  } else if (gs_retainers_json(pa.path, &q, &o, &fault)) {
    code = gs_cli_fault(&fault);
  } else if (gs_json_print(o)) {
    code = GS_EXIT_USAGE;
  }
  json_decref(o);
  return gs_cli_finish(code);
}
