/* gs_cmd_summary.c - "gcsnap summary": what is in a heap dump.
 *
 * Loads one section at a time as a gs_graph, keeps only its numbers
 * (gs_heapstats) and frees it before the next, so memory is bounded by the
 * largest section. Prints each section, then the file's totals when there
 * are several; the type table is like "dotnet-gcdump report" or SOS
 * "!dumpheap -stat", sorted by bytes. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_graph.h"
#include "gs_heapstats.h"
#include "gs_json.h"

#define DEFAULT_TOP 20

static const char usage[] =
  "usage: gcsnap summary [--top N] [--json] FILE\n"
  "\n"
  "Reports objects, bytes, references, roots (by kind and flag), types,\n"
  "objects unreachable from any strong root, dangling references and the\n"
  "types that take the most bytes, per section and in total.\n"
  "FILE is a .gclog or .gclog.zst dump; - reads stdin.\n"
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

typedef struct summary {
  const char *name;        /* file as shown */
  gs_heapstats total;
  gs_heapstats *sections;
  size_t nsections, cap;
} summary;

/* ---- loading --------------------------------------------------------- */

static int keep_section(summary *sum, const gs_graph *g) {
  gs_heapstats s;
  int err;
  if (sum->nsections == sum->cap) {
    size_t cap = sum->cap ? sum->cap * 2 : 4;
    gs_heapstats *a = realloc(sum->sections, cap * sizeof *a);
    if (!a) return GS_ENOMEM;
    sum->sections = a;
    sum->cap = cap;
  }
  if ((err = gs_heapstats_init(&s))) return err;
  if ((err = gs_heapstats_of_graph(&s, g)) || (err = gs_heapstats_add(&sum->total, &s))) {
    gs_heapstats_free(&s);
    return err;
  }
  sum->sections[sum->nsections++] = s;
  return GS_OK;
}

static void print_load_error(const summary *sum, const gs_diag *d) {
  gs_cli_print_diag(stderr, sum->name, d);
  fprintf(stderr, "gcsnap: run 'gcsnap validate %s' to list every problem\n", sum->name);
}

/* Reads every section; returns the exit code (GS_EXIT_OK when all loaded). */
static int load_sections(summary *sum, gs_file *f, gs_reader *r) {
  for (;;) {
    gs_graph *g = NULL;
    gs_diag d;
    int err = gs_graph_load(r, &g, &d);
    if (err == GS_OK) {
      err = keep_section(sum, g);
      gs_graph_free(g);
    }
    if (err == GS_OK) continue;
    gs_file_hide_progress(f);
    if (err == GS_EOF && sum->nsections > 0) return GS_EXIT_OK;
    if (err == GS_EOF) {
      d.code = GS_D_NO_SECTION;
      d.line = 0;
      snprintf(d.message, sizeof d.message, "no AppDomain section ('a' record) in the input");
      err = GS_EFORMAT;
    }
    if (err == GS_EFORMAT) { print_load_error(sum, &d); return GS_EXIT_INVALID; }
    if (err == GS_ELIMIT) { gs_cli_error("%s: %s", sum->name, gs_strerror(err)); return GS_EXIT_INVALID; }
    if (err == GS_EIO && gs_file_error(f)[0]) gs_cli_error("%s: %s", sum->name, gs_file_error(f));
    else gs_cli_error("%s: %s", sum->name, gs_strerror(err));
    return GS_EXIT_USAGE;
  }
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

static void print_type_row(int wc, int wb, uint64_t count, uint64_t bytes,
                           uint64_t total, const char *name) {
  printf("  %*llu  %*llu  %5.1f%%  %s\n", wc, (unsigned long long)count, wb,
         (unsigned long long)bytes, share(bytes, total), name);
}

static int print_types(const gs_heapstats *s, uint64_t top) {
  const gs_histo_row **rows;
  size_t n = gs_histo_size(s->by_type), shown, i;
  uint64_t rest_count = 0, rest_bytes = 0;
  int wc = digits(s->objects) > 5 ? digits(s->objects) : 5;
  int wb = digits(s->bytes) > 5 ? digits(s->bytes) : 5;
  char label[64];
  if (gs_histo_sorted(s->by_type, &rows)) return GS_ENOMEM;
  shown = (top == 0 || top > n) ? n : (size_t)top;
  printf("\n  Types by bytes (%zu of %zu):\n", shown, n);
  printf("  %*s  %*s  %6s  %s\n", wc, "Count", wb, "Bytes", "Share", "Type");
  for (i = 0; i < shown; i++)
    print_type_row(wc, wb, rows[i]->count, rows[i]->bytes, s->bytes, rows[i]->name);
  for (; i < n; i++) {
    rest_count += rows[i]->count;
    rest_bytes += rows[i]->bytes;
  }
  if (shown < n) {
    snprintf(label, sizeof label, "(%zu more type%s)", n - shown, n - shown == 1 ? "" : "s");
    print_type_row(wc, wb, rest_count, rest_bytes, s->bytes, label);
  }
  free(rows);
  return GS_OK;
}

static int print_text(const summary *sum, uint64_t top) {
  size_t i;
  printf("File: %s (%zu section%s)\n", sum->name, sum->nsections,
         sum->nsections == 1 ? "" : "s");
  for (i = 0; i < sum->nsections; i++) {
    const gs_heapstats *s = &sum->sections[i];
    printf("\nSection %zu: %s (line %llu, timestamp %llx)\n", i + 1, s->name,
           (unsigned long long)s->line, (unsigned long long)s->timestamp);
    print_counts(s);
    if (print_types(s, top)) return GS_ENOMEM;
  }
  if (sum->nsections < 2) return GS_OK;
  printf("\nTotal of %zu sections\n", sum->nsections);
  print_counts(&sum->total);
  return print_types(&sum->total, top);
}

/* ---- JSON output ----------------------------------------------------- */

static json_t *counts_by_name(const uint64_t *v, const char *const *names, int n) {
  json_t *o = json_object();
  int k;
  for (k = 0; o && k < n; k++)
    if (gs_json_set(o, names[k], gs_json_u64(v[k]))) { json_decref(o); return NULL; }
  return o;
}

static json_t *type_row_json(const gs_histo_row *row, uint64_t total) {
  json_t *o = json_object();
  /* Two decimals are plenty for a share and keep the output stable. */
  double percent = (double)(uint64_t)(share(row->bytes, total) * 100.0 + 0.5) / 100.0;
  if (!o || gs_json_set(o, "type", gs_json_cstring(row->name)) ||
      gs_json_set(o, "count", gs_json_u64(row->count)) ||
      gs_json_set(o, "bytes", gs_json_u64(row->bytes)) ||
      gs_json_set(o, "percent", json_real(percent))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* Sets by_type (top rows) and by_type_omitted (the sum of the others). */
static int types_json(json_t *o, const gs_heapstats *s, uint64_t top) {
  const gs_histo_row **rows;
  size_t n = gs_histo_size(s->by_type), shown, i;
  uint64_t rest_count = 0, rest_bytes = 0;
  json_t *arr = json_array(), *rest = json_object();
  int bad = !arr || !rest || gs_histo_sorted(s->by_type, &rows);
  if (bad) { json_decref(arr); json_decref(rest); return -1; }
  shown = (top == 0 || top > n) ? n : (size_t)top;
  for (i = 0; !bad && i < shown; i++)
    bad = json_array_append_new(arr, type_row_json(rows[i], s->bytes)) != 0;
  for (; i < n; i++) {
    rest_count += rows[i]->count;
    rest_bytes += rows[i]->bytes;
  }
  free(rows);
  bad = bad || gs_json_set(rest, "types", gs_json_u64(n - shown)) ||
        gs_json_set(rest, "count", gs_json_u64(rest_count)) ||
        gs_json_set(rest, "bytes", gs_json_u64(rest_bytes));
  if (bad) { json_decref(arr); json_decref(rest); return -1; }
  return gs_json_set(o, "by_type", arr) | gs_json_set(o, "by_type_omitted", rest);
}

static int stats_json(json_t *o, const gs_heapstats *s, uint64_t top) {
  if (gs_json_set(o, "objects", gs_json_u64(s->objects)) ||
      gs_json_set(o, "bytes", gs_json_u64(s->bytes)) ||
      gs_json_set(o, "references", gs_json_u64(s->references)) ||
      gs_json_set(o, "dangling_references", gs_json_u64(s->dangling_references)) ||
      gs_json_set(o, "roots", gs_json_u64(s->roots)) ||
      gs_json_set(o, "roots_by_kind",
                  counts_by_name(s->roots_by_kind, gs_root_kind_names, GS_ROOT_KINDS)) ||
      gs_json_set(o, "roots_by_flag",
                  counts_by_name(s->roots_by_flag, gs_root_flag_names, GS_RFLAG_BUCKETS)) ||
      gs_json_set(o, "dangling_roots", gs_json_u64(s->dangling_roots)) ||
      gs_json_set(o, "types", gs_json_u64(gs_heapstats_types(s))) ||
      gs_json_set(o, "unreachable", gs_json_u64(s->unreachable)) ||
      gs_json_set(o, "unreachable_bytes", gs_json_u64(s->unreachable_bytes)))
    return -1;
  return types_json(o, s, top);
}

static json_t *section_json(const gs_heapstats *s, uint64_t top) {
  json_t *o = json_object();
  if (!o || gs_json_set(o, "name", gs_json_cstring(s->name)) ||
      gs_json_set(o, "timestamp", gs_json_u64(s->timestamp)) ||
      gs_json_set(o, "line", gs_json_u64(s->line)) || stats_json(o, s, top)) {
    json_decref(o);
    return NULL;
  }
  return o;
}

/* The totals at the top level, and every section in "sections". */
static int print_json(const summary *sum, uint64_t top) {
  json_t *o = json_object(), *arr = json_array();
  size_t i;
  int bad = !o || !arr || gs_json_set(o, "file", gs_json_cstring(sum->name)) ||
            stats_json(o, &sum->total, top);
  for (i = 0; !bad && i < sum->nsections; i++)
    bad = json_array_append_new(arr, section_json(&sum->sections[i], top)) != 0;
  bad = bad || gs_json_set(o, "sections", json_incref(arr)) || gs_json_print(o);
  json_decref(arr);
  json_decref(o);
  return bad ? -1 : 0;
}

/* ---- command --------------------------------------------------------- */

static int parse_args(int argc, char **argv, summary_args *sa) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  sa->top = DEFAULT_TOP;
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

static void summary_free(summary *sum) {
  size_t i;
  for (i = 0; i < sum->nsections; i++) gs_heapstats_free(&sum->sections[i]);
  free(sum->sections);
  gs_heapstats_free(&sum->total);
}

static int run(const summary_args *sa, summary *sum) {
  gs_file *f = NULL;
  gs_reader *r = NULL;
  char err[300];
  int code;
  if (gs_file_open(&f, sa->path, err, sizeof err)) {
    gs_cli_error("%s", err);
    return GS_EXIT_USAGE;
  }
  gs_file_show_progress(f);
  if (gs_file_new_reader(f, &r)) {
    gs_file_close(f);
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  code = load_sections(sum, f, r);
  gs_reader_free(r);
  gs_file_close(f);
  if (code != GS_EXIT_OK) return code;
  if ((sa->json ? print_json(sum, sa->top) : print_text(sum, sa->top)) != 0) {
    /* A write error is reported by gs_cli_finish(). */
    if (!ferror(stdout)) gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  return GS_EXIT_OK;
}

int gs_cmd_summary(int argc, char **argv) {
  summary_args sa;
  summary sum;
  int code;
  memset(&sa, 0, sizeof sa);
  if ((code = parse_args(argc, argv, &sa)) != GS_EXIT_OK) return code;
  if (sa.help) return gs_cli_help(usage);
  memset(&sum, 0, sizeof sum);
  sum.name = gs_cli_display_name(sa.path);
  if (gs_heapstats_init(&sum.total)) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  code = run(&sa, &sum);
  summary_free(&sum);
  return gs_cli_finish(code);
}
