/* gs_cmd_summary.c - "gcsnap summary": what is in a heap dump.
 *
 * Loads the dump through gs_summary (one section's graph at a time, so
 * memory is bounded by the largest section). Prints each section, then the
 * file's totals when there are several; the type table is like
 * "dotnet-gcdump report" or SOS "!dumpheap -stat", sorted by bytes. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_gens.h"
#include "gs_graph.h"
#include "gs_heapstats.h"
#include "gs_json.h"
#include "gs_summary.h"
#include "gs_table.h"

#define GEN_TYPES 5              /* the largest types shown per generation */

static const char usage[] =
  "usage: gcsnap summary [--top N] [--json] FILE\n"
  "\n"
  "Reports objects, bytes, references, roots (by kind and flag), types,\n"
  "objects unreachable from any strong root, dangling references and the\n"
  "types that take the most bytes, per section and in total.\n"
  "FILE is a dump (.gclog, .heapsnapshot, .hprof or .gcdump; plain, gzip\n"
  "or zstd); - reads stdin. When FILE.gens.json (the generation ranges the\n"
  "collector keeps beside a snapshot) lies beside FILE, also its objects\n"
  "and bytes by generation: 0, 1, 2, the large object heap, and unknown\n"
  "for objects outside every range (IDs that are not addresses).\n"
  "The first 1000 sections are listed; the totals count them all.\n"
  "\n"
  "  --top N     show the N types with the most bytes (default 20, 0 = all)\n"
  "  --json      print one JSON object instead of text\n"
  "  -h, --help  show this help\n"
  "\n"
  "Exit status: 0 done, 1 the file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_TOP, OPT_JSON };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"top", 0, 1, OPT_TOP},
  {"json", 0, 0, OPT_JSON},
  {NULL, 0, 0, 0},
};

typedef struct summary_args {
  int help;
  int json;
  uint64_t top;            /* 0 = all */
  const char *path;
} summary_args;


/* ---- loading --------------------------------------------------------- */

/* Reads every section; returns the exit code (GS_EXIT_OK when all loaded). */
static int load_sections(gs_summary *sum, gs_file *f, gs_reader *r) {
  gs_diag d;
  int err = gs_summary_load(sum, r, &d);
  gs_file_hide_progress(f);
  if (err == GS_OK) return GS_EXIT_OK;
  if (err == GS_EIO && gs_file_diag(f)) return gs_cli_load_error(f, err, &d);
  if (err == GS_EFORMAT) { gs_cli_print_stop(sum->name, &d, NULL); return GS_EXIT_INVALID; }
  if (err == GS_ELIMIT) { gs_cli_error("%s: %s", sum->name, gs_strerror(err)); return GS_EXIT_INVALID; }
  if (err == GS_EIO && gs_file_error(f)[0]) gs_cli_error("%s: %s", sum->name, gs_file_error(f));
  else gs_cli_error("%s: %s", sum->name, gs_strerror(err));
  return GS_EXIT_USAGE;
}

/* ---- text output ----------------------------------------------------- */

static int digits(uint64_t v) {
  int n = 1;
  while (v >= 10) { v /= 10; n++; }
  return n;
}

static void print_row(const char *label, uint64_t v, int width) {
  printf("  %-22s %*llu\n", label, width, (unsigned long long)v);
}

static void print_counts(const gs_heapstats *s) {
  int w = digits(s->bytes > s->references ? s->bytes : s->references), k;
  char label[40];
  print_row("Objects", s->objects, w);
  print_row("Bytes", s->bytes, w);
  print_row("References", s->references, w);
  print_row("Dangling references", s->dangling_references, w);
  print_row("Roots", s->roots, w);
  for (k = 0; k < GS_ROOT_KINDS; k++) {
    snprintf(label, sizeof label, "  %s", gs_root_kind_names[k]);
    print_row(label, s->roots_by_kind[k], w);
  }
  for (k = 0; k < GS_RFLAG_BUCKETS; k++) {
    if (k == GS_RFLAG_OTHER && !s->roots_by_flag[k]) continue;
    snprintf(label, sizeof label, "  %s", k == GS_RFLAG_NONE ? "no flags" : gs_root_flag_names[k]);
    print_row(label, s->roots_by_flag[k], w);
  }
  print_row("Dangling roots", s->dangling_roots, w);
  print_row("Types", gs_heapstats_types(s), w);
  print_row("Unreachable objects", s->unreachable, w);
  print_row("Unreachable bytes", s->unreachable_bytes, w);
}

static double share(uint64_t part, uint64_t whole) {
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* Type names come from the dump: escaped for the terminal (gs_table.h). */
static void print_type_row(int wc, int wb, uint64_t count, uint64_t bytes,
                           uint64_t total, const char *name) {
  printf("  %*llu  %*llu  %5.1f%%  ", wc, (unsigned long long)count, wb,
         (unsigned long long)bytes, share(bytes, total));
  if (gs_table_fputs(name, stdout) != GS_OK) fputs("?", stdout);
  putchar('\n');
}

static int print_types(const gs_heapstats *s, uint64_t top) {
  const gs_histo_row **rows;
  gs_heapstats_rest rest;
  size_t shown, i;
  int wc = digits(s->objects) > 5 ? digits(s->objects) : 5;
  int wb = digits(s->bytes) > 5 ? digits(s->bytes) : 5;
  char label[64];
  if (gs_heapstats_top(s, top, &rows, &shown, &rest)) return GS_ENOMEM;
  printf("\n  Types by bytes (%zu of %llu):\n", shown, (unsigned long long)shown + rest.types);
  printf("  %*s  %*s  %6s  %s\n", wc, "Count", wb, "Bytes", "Share", "Type");
  for (i = 0; i < shown; i++)
    print_type_row(wc, wb, rows[i]->count, rows[i]->bytes, s->bytes, rows[i]->name);
  if (rest.types) {
    snprintf(label, sizeof label, "(%llu more type%s)", (unsigned long long)rest.types,
             rest.types == 1 ? "" : "s");
    print_type_row(wc, wb, rest.count, rest.bytes, s->bytes, label);
  }
  free(rows);
  return GS_OK;
}

/* The breakdown by generation (gs_gens_json's object). */
static int print_generations(const json_t *gens) {
  static const char *const heads[] = {"Generation", "Objects", "Bytes", "Share", "Largest types"};
  const json_t *g, *x;
  uint64_t total = 0;
  size_t i, k;
  gs_table t;
  int err = GS_OK;
  json_array_foreach(json_object_get(gens, "generations"), i, g) total += (uint64_t)json_integer_value(json_object_get(g, "bytes"));
  gs_table_init(&t, 5, heads, "lrrrl");
  json_array_foreach(json_object_get(gens, "generations"), i, g) {
    char cells[3][32], types[256] = "";
    const char *c[5];
    uint64_t bytes = (uint64_t)json_integer_value(json_object_get(g, "bytes"));
    snprintf(cells[0], 32, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(g, "objects")));
    snprintf(cells[1], 32, "%" JSON_INTEGER_FORMAT, (json_int_t)bytes);
    snprintf(cells[2], 32, "%.1f%%", share(bytes, total));
    json_array_foreach(json_object_get(g, "types"), k, x) {
      size_t used = strlen(types);
      snprintf(types + used, sizeof types - used, "%s%s", k ? ", " : "", json_string_value(json_object_get(x, "type")));
    }
    c[0] = json_string_value(json_object_get(g, "generation"));
    c[1] = cells[0]; c[2] = cells[1]; c[3] = cells[2]; c[4] = types;
    if (!err) err = gs_table_add(&t, c);
  }
  printf("\nBy generation (%" JSON_INTEGER_FORMAT " ranges):\n", json_integer_value(json_object_get(gens, "ranges")));
  if (!err) err = gs_table_print(&t, stdout);
  gs_table_free(&t);
  return err;
}

static int print_text(const gs_summary *sum, uint64_t top, const json_t *gens) {
  uint64_t n = sum->total.sections;
  size_t i;
  printf("File: %s (%llu section%s)\n", sum->name, (unsigned long long)n, n == 1 ? "" : "s");
  for (i = 0; i < sum->nsections; i++) {
    const gs_heapstats *s = &sum->sections[i];
    printf("\nSection %zu: ", i + 1);
    if (gs_table_fputs(s->name, stdout) != GS_OK) return GS_ENOMEM;
    printf(" (line %llu, timestamp %llx)\n", (unsigned long long)s->line,
           (unsigned long long)s->timestamp);
    print_counts(s);
    if (print_types(s, top)) return GS_ENOMEM;
  }
  if (sum->nsections < n)
    printf("\n(%llu more sections, in the total only: at most %d are listed)\n",
           (unsigned long long)(n - sum->nsections), GS_SUMMARY_SECTIONS);
  if (n >= 2) {
    printf("\nTotal of %llu sections\n", (unsigned long long)n);
    print_counts(&sum->total);
    if (print_types(&sum->total, top)) return GS_ENOMEM;
  }
  return gens ? print_generations(gens) : GS_OK;
}

/* ---- command --------------------------------------------------------- */

static int parse_args(int argc, char **argv, summary_args *sa) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  sa->top = GS_SUMMARY_TOP;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("summary", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (sa->path) return gs_cli_usage_error("summary", usage, "only one FILE is allowed");
      sa->path = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: sa->help = 1; break;
    case OPT_JSON: sa->json = 1; break;
    case OPT_TOP:
      if (gs_args_parse_count(a.value, UINT64_MAX, &sa->top) != 0)
        return gs_cli_usage_error("summary", usage, "--top needs a number");
      break;
    }
  }
  if (!sa->help && !sa->path) return gs_cli_usage_error("summary", usage, "no FILE given");
  return GS_EXIT_OK;
}

/* With the ranges, "generation_ranges" and "generations" as gs_gens_json's. */
static int print_json(const gs_summary *sum, uint64_t top, json_t *gens) {
  json_t *o = gs_summary_json(sum, top, 0);
  int bad = !o || (gens && (gs_json_set(o, "generation_ranges", json_incref(json_object_get(gens, "ranges"))) ||
                            gs_json_set(o, "generations", json_incref(json_object_get(gens, "generations"))))) ||
            gs_json_print(o);
  json_decref(o);
  return bad ? -1 : 0;
}

/* The breakdown by generation, counted while the summary loads, when the
 * ranges lie beside the dump. */
static int start_gens(const summary_args *sa, gs_summary *sum, gs_gens **gens) {
  gs_file_fault fault;
  *gens = NULL;
  if (strcmp(sa->path, "-") && gs_gens_start_beside(sa->path, gens, &fault)) return gs_cli_fault(&fault);
  sum->each_graph = *gens ? gs_gens_each_graph : NULL;
  sum->each_ctx = *gens;
  return GS_EXIT_OK;
}

static int run(const summary_args *sa, gs_summary *sum, gs_gens *counted) {
  gs_file *f = NULL;
  gs_reader *r = NULL;
  json_t *gens = NULL;
  int code = gs_cli_open_dump(sa->path, &f, &r);
  if (code != GS_EXIT_OK) return code;
  code = load_sections(sum, f, r);
  gs_reader_free(r);
  gs_file_close(f);
  if (code != GS_EXIT_OK) return code;
  if (counted && !(gens = gs_gens_result(counted, GEN_TYPES))) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  if ((sa->json ? print_json(sum, sa->top, gens) : print_text(sum, sa->top, gens)) != 0) {
    /* A write error is reported by gs_cli_finish(). */
    if (!ferror(stdout)) gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  }
  json_decref(gens);
  return code;
}

int gs_cmd_summary(int argc, char **argv) {
  summary_args sa;
  gs_summary sum;
  gs_gens *gens = NULL;
  int code;
  memset(&sa, 0, sizeof sa);
  if ((code = parse_args(argc, argv, &sa)) != GS_EXIT_OK) return code;
  if (sa.help) return gs_cli_help(usage);
  if (gs_summary_init(&sum, gs_file_display_name(sa.path), sa.top)) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  if ((code = start_gens(&sa, &sum, &gens)) == GS_EXIT_OK) code = run(&sa, &sum, gens);
  gs_gens_free(gens);
  gs_summary_free(&sum);
  return gs_cli_finish(code);
}
