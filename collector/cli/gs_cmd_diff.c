/* gs_cmd_diff.c - "gcsnap diff": what changed between two snapshots, by type.
 *
 * Object IDs are not stable across dumps, so snapshots are compared by type
 * name: per type the count and bytes before and after, sorted by growth in
 * bytes, with the types that appeared or vanished marked, the way
 * "dotnet-gcdump report" users compare two reports by hand (the analysis
 * is gs_diff.c's; this file reads the files and prints). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_diff.h"
#include "gs_gens.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_json.h"
#include "gs_summary.h"
#include "gs_table.h"

#define DEFAULT_TOP 30

static const char usage[] =
  "usage: gcsnap diff [--top N] [--all] [--old-only] [--json] OLD NEW\n"
  "\n"
  "Compares two dumps type by type (all sections together): count and bytes\n"
  "in OLD and in NEW and the change, largest growth first, with the types\n"
  "that are new in NEW or gone from it marked, and the totals; when both\n"
  "have their generation ranges beside them (OLD.gens.json, NEW.gens.json,\n"
  "as the collector keeps them), also the totals by generation.\n"
  "OLD and NEW are dumps: .gclog, .heapsnapshot, .hprof or .gcdump, plain, gzip or\n"
  "zstd.\n"
  "\n"
  "  --top N     show the N rows that grew or shrank most (default 30, 0 = all)\n"
  "  --all       include the types that did not change\n"
  "  --old-only  compare only the objects of generation 2 and the large\n"
  "              object heap, placed by OLD.gens.json and NEW.gens.json\n"
  "  --json      print one JSON object instead of text\n"
  "  -h, --help  show this help\n"
  "\n"
  "Exit status: 0 done, 1 a file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_TOP, OPT_ALL, OPT_JSON, OPT_OLD };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"top", 0, 1, OPT_TOP},
  {"all", 0, 0, OPT_ALL},
  {"json", 0, 0, OPT_JSON},
  {"old-only", 0, 0, OPT_OLD},
  {NULL, 0, 0, 0},
};

typedef struct diff_args {
  int help, json, all, old_only;
  uint64_t top;
  const char *paths[2];
  int npaths;
} diff_args;

/* ---- output ----------------------------------------------------------- */

static void fmt_u64(char *buf, size_t cap, uint64_t v) { snprintf(buf, cap, "%" PRIu64, v); }

static void fmt_change(char *buf, size_t cap, uint64_t before, uint64_t after) {
  int64_t d = gs_diff_change(before, after);
  snprintf(buf, cap, "%s%" PRId64, d > 0 ? "+" : "", d);
}

static int print_text(const gs_summary *old_s, const gs_summary *new_s, const gs_diff_row *rows,
                      size_t n, size_t shown, int all) {
  static const char *const heads[] = {"Count", "Change", "Bytes", "Change", "", "Type"};
  gs_table t;
  char cells[4][32];
  const char *c[6];
  size_t i, listed = 0, changed = 0, fresh = 0, gone = 0;
  int err = GS_OK;
  gs_table_init(&t, 6, heads, "rrrrll");
  for (i = 0; i < n; i++) {
    if (gs_diff_unchanged(&rows[i])) continue;
    changed++;
    fresh += !rows[i].count[0];
    gone += !rows[i].count[1];
  }
  for (i = 0; i < n && !err && listed < shown; i++) {
    if (!all && gs_diff_unchanged(&rows[i])) continue;
    fmt_u64(cells[0], 32, rows[i].count[1]);
    fmt_change(cells[1], 32, rows[i].count[0], rows[i].count[1]);
    fmt_u64(cells[2], 32, rows[i].bytes[1]);
    fmt_change(cells[3], 32, rows[i].bytes[0], rows[i].bytes[1]);
    c[0] = cells[0]; c[1] = cells[1]; c[2] = cells[2]; c[3] = cells[3];
    c[4] = gs_diff_status(&rows[i]);
    c[5] = rows[i].name;
    err = gs_table_add(&t, c);
    listed++;
  }
  printf("Old: %s\nNew: %s\n\n", old_s->name, new_s->name);
  printf("  Objects  %" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")\n", old_s->total.objects,
         new_s->total.objects, gs_diff_change(old_s->total.objects, new_s->total.objects));
  printf("  Bytes    %" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")\n", old_s->total.bytes,
         new_s->total.bytes, gs_diff_change(old_s->total.bytes, new_s->total.bytes));
  printf("  Types    %zu changed, %zu new, %zu gone\n\n", changed, fresh, gone);
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}

/* The change by generation (gs_gens_diff_of's "generations"). */
static int print_generations(const json_t *gens) {
  static const char *const heads[] = {"Generation", "Objects", "Change", "Bytes", "Change"};
  static const char *const keys[] = {"objects_after", "objects_change", "bytes_after", "bytes_change"};
  const json_t *g;
  gs_table t;
  size_t i, k;
  int err = GS_OK;
  gs_table_init(&t, 5, heads, "lrrrr");
  json_array_foreach(gens, i, g) {
    char cells[4][32];
    const char *c[5];
    c[0] = json_string_value(json_object_get(g, "generation"));
    for (k = 0; k < 4; k++) {
      json_int_t v = json_integer_value(json_object_get(g, keys[k]));
      snprintf(cells[k], 32, k % 2 && v > 0 ? "+%" JSON_INTEGER_FORMAT : "%" JSON_INTEGER_FORMAT, v);
      c[k + 1] = cells[k];
    }
    if (!err) err = gs_table_add(&t, c);
  }
  printf("\nBy generation:\n");
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}

/* ---- command ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, diff_args *da) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  da->top = DEFAULT_TOP;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("diff", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (da->npaths == 2) return gs_cli_usage_error("diff", usage, "give exactly two files, OLD and NEW");
      da->paths[da->npaths++] = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: da->help = 1; break;
    case OPT_JSON: da->json = 1; break;
    case OPT_ALL: da->all = 1; break;
    case OPT_OLD: da->old_only = 1; break;
    case OPT_TOP:
      if (gs_args_parse_count(a.value, UINT64_MAX, &da->top) != 0)
        return gs_cli_usage_error("diff", usage, "--top needs a number");
      break;
    }
  }
  if (!da->help && da->npaths != 2) return gs_cli_usage_error("diff", usage, "give two files, OLD and NEW");
  return GS_EXIT_OK;
}

/* The summary of PATH, and its breakdown by PATH.gens.json when that lies
 * beside it; with --old-only, narrowed to gen 2 and the LOH. */
static int load(const diff_args *da, const char *path, gs_summary *sum, gs_gens **gens) {
  gs_file_fault fault;
  return gs_gens_load_summary(sum, path, da->old_only, gens, &fault) ? gs_cli_fault(&fault)
                                                                     : GS_EXIT_OK;
}

/* The JSON object, with the change by generation in gens (or none). */
static int print_json(const diff_args *da, const gs_summary *sums, json_t *gens) {
  json_t *o = gs_diff_json(&sums[0], &sums[1], da->top, da->all);
  int code = GS_EXIT_OK;
  if (!o || (gens && gs_json_set(o, "generations", json_incref(gens)))) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  } else if (gs_json_print(o)) {
    code = GS_EXIT_USAGE;
  }
  json_decref(o);
  return code;
}

static int print_tables(const diff_args *da, const gs_summary *sums, const json_t *gens) {
  gs_diff_row *rows = NULL;
  size_t n = 0, shown;
  int err = gs_diff_join(sums[0].total.by_type, sums[1].total.by_type, &rows, &n);
  shown = da->top == 0 || da->top > n ? n : (size_t)da->top;
  if (!err) err = print_text(&sums[0], &sums[1], rows, n, shown, da->all);
  if (!err && gens) err = print_generations(gens);
  free(rows);
  if (err) gs_cli_error("out of memory");
  return err ? GS_EXIT_USAGE : GS_EXIT_OK;
}

/* The change by generation when both files have their ranges beside them. */
static int generations(gs_gens *const *counted, json_t **gens) {
  json_t *holder = json_object();
  *gens = NULL;
  if (!holder || gs_gens_diff_of(holder, counted[0], counted[1])) {
    json_decref(holder);
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  *gens = json_incref(json_object_get(holder, "generations"));
  json_decref(holder);
  return GS_EXIT_OK;
}

int gs_cmd_diff(int argc, char **argv) {
  diff_args da;
  gs_summary sums[2];
  gs_gens *counted[2] = {NULL, NULL};
  json_t *gens = NULL;
  int code, loaded = 0;
  memset(&da, 0, sizeof da);
  if ((code = parse_args(argc, argv, &da)) != GS_EXIT_OK) return code;
  if (da.help) return gs_cli_help(usage);
  for (; loaded < 2 && code == GS_EXIT_OK; loaded++)
    code = load(&da, da.paths[loaded], &sums[loaded], &counted[loaded]);
  if (code == GS_EXIT_OK) code = generations(counted, &gens);
  if (code == GS_EXIT_OK) code = da.json ? print_json(&da, sums, gens) : print_tables(&da, sums, gens);
  json_decref(gens);
  while (loaded-- > 0) {
    gs_summary_free(&sums[loaded]);
    gs_gens_free(counted[loaded]);
  }
  return gs_cli_finish(code);
}
