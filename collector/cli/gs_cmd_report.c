/* gs_cmd_report.c - "gcsnap report": one self-contained HTML page about a dump.
 *
 * The page holds the summary, the type histogram, the top retainers and,
 * against a baseline, the diff by type, or over a series, the trend and its
 * leak suspects, the way Eclipse MAT's leak suspects report reads. Every
 * figure comes from the JSON objects the analysis commands print with
 * --json; they are embedded whole as a JSON island, from which the page's
 * script draws the long tables a page at a time, so the numbers a reader
 * sees are the numbers a script gets. Nothing is fetched: CSS, script and
 * charts are inline, so the file opens offline and can be mailed. */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_assets.h"
#include "gs_file.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gs_obuf.h"
#include "gs_output.h"
#include "gs_report.h"

#define MAX_SERIES 1000

static const char usage[] =
  "usage: gcsnap report FILE [--baseline OLD | --series FILE...] -o OUT\n"
  "\n"
  "Writes one self-contained HTML page about FILE: the summary, the type\n"
  "histogram (sortable, filterable), and the objects and types that retain\n"
  "the most bytes. With --baseline, the changes by type from OLD to FILE.\n"
  "With --series, the trend over the snapshots named after it (oldest\n"
  "first) followed by FILE, with a chart and the leak suspects. Without a\n"
  "FILE before --series, FILE is the last of the series.\n"
  "The figures are those of 'gcsnap summary', 'dominators --by-type',\n"
  "'diff --top 0' and 'trend' with --json; they are embedded as JSON.\n"
  "Of a dump of many sections (a stream of captures), the page details\n"
  "the first 100; its totals count them all.\n"
  "OUT is written under a temporary name and renamed when complete;\n"
  "- writes to stdout.\n"
  "\n"
  "  --baseline OLD  an older dump of the same application\n"
  "  --series        the operands that follow are the earlier snapshots\n"
  "  -o, --out OUT   the HTML file to write\n"
  "  -h, --help      show this help\n"
  "\n"
  "Exit status: 0 done, 1 a file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_BASELINE, OPT_SERIES, OPT_OUT };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"baseline", 0, 1, OPT_BASELINE},
  {"series", 0, 0, OPT_SERIES},
  {"out", 'o', 1, OPT_OUT},
  {NULL, 0, 0, 0},
};

/* ---- page output ------------------------------------------------------ */

/* Text from the dump: markup characters become references, and control
 * characters, which HTML does not allow, become U+FFFD. */
static void put_text(gs_obuf *p, const char *s) {
  const char *run = s;
  for (; s && *s; s++) {
    const char *rep = NULL;
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '&': rep = "&amp;"; break;
    case '<': rep = "&lt;"; break;
    case '>': rep = "&gt;"; break;
    case '"': rep = "&quot;"; break;
    case '\'': rep = "&#39;"; break;
    default:
      if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) rep = "\xef\xbf\xbd";
    }
    if (!rep) continue;
    gs_obuf_put(p, run, (size_t)(s - run));
    gs_obuf_puts(p, rep);
    run = s + 1;
  }
  if (run) gs_obuf_puts(p, run);
}

/* 1234567 as "1,234,567". */
static void put_count(gs_obuf *p, uint64_t v) {
  char digits[24], out[32];
  size_t n, i, k = 0;
  n = (size_t)snprintf(digits, sizeof digits, "%" PRIu64, v);
  for (i = 0; i < n; i++) {
    if (i && (n - i) % 3 == 0) out[k++] = ',';
    out[k++] = digits[i];
  }
  out[k] = '\0';
  gs_obuf_puts(p, out);
}

static void put_change(gs_obuf *p, json_int_t v) {
  gs_obuf_puts(p, v > 0 ? "+" : v < 0 ? "-" : "");
  put_count(p, v < 0 ? (uint64_t)-(v + 1) + 1 : (uint64_t)v);
}

/* The next numeric cell of a table row. */
static void next_count(gs_obuf *p, uint64_t v) {
  gs_obuf_puts(p, "</td><td class=\"n\">");
  put_count(p, v);
}

static void next_change(gs_obuf *p, json_int_t v) {
  gs_obuf_puts(p, "</td><td class=\"n\">");
  put_change(p, v);
}

/* ---- JSON access ------------------------------------------------------- */

static uint64_t num(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  if (json_is_integer(v)) return (uint64_t)json_integer_value(v);
  if (json_is_real(v)) return (uint64_t)json_real_value(v);
  return 0;
}

static json_int_t snum(const json_t *o, const char *key) {
  return json_integer_value(json_object_get(o, key));
}

static const char *str(const json_t *o, const char *key) {
  const char *s = json_string_value(json_object_get(o, key));
  return s ? s : "";
}

static double percent(uint64_t part, uint64_t whole) {
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

/* The island: "<" and ">" and "&" only occur inside JSON strings, where
 * \u escapes mean the same, so no "</script>" or "<!--" can end or upset
 * the script element. */
static void put_island(gs_obuf *p, const json_t *data) {
  char *text = json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(10));
  const char *s, *run;
  if (!text) { p->err = GS_ENOMEM; return; }
  for (s = run = text; *s; s++) {
    const char *rep = *s == '<' ? "\\u003c" : *s == '>' ? "\\u003e" : *s == '&' ? "\\u0026" : NULL;
    if (!rep) continue;
    gs_obuf_put(p, run, (size_t)(s - run));
    gs_obuf_puts(p, rep);
    run = s + 1;
  }
  gs_obuf_puts(p, run);
  free(text);
}

/* ---- page parts -------------------------------------------------------- */

/* An embedded file of collector/console (report.css, report.js). */
static void put_asset(gs_obuf *p, const char *name) {
  const gs_asset *a = gs_asset_find(gs_report_assets, name, strlen(name));
  assert(a != NULL);   /* embedded at build time */
  if (a) gs_obuf_put(p, (const char *)a->data, a->size);
}

static void put_head(gs_obuf *p, const char *file) {
  gs_obuf_puts(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"generator\" content=\"gcsnap " GS_VERSION "\">\n<title>Heap report: ");
  put_text(p, file);
  gs_obuf_puts(p, "</title>\n<style>");
  put_asset(p, "report.css");
  gs_obuf_puts(p, "</style>\n</head>\n<body>\n<header><h1>Heap report</h1><p>");
  put_text(p, file);
  gs_obuf_puts(p, "</p></header>\n");
}

static void put_nav(gs_obuf *p, int has_diff, int has_trend) {
  gs_obuf_puts(p, "<nav><a href=\"#summary\">Summary</a><a href=\"#histogram\">Types</a>"
         "<a href=\"#retainers\">Top retainers</a><a href=\"#domtree\">Dominator tree</a>");
  if (has_diff) gs_obuf_puts(p, "<a href=\"#diff\">Diff</a>");
  if (has_trend) gs_obuf_puts(p, "<a href=\"#trend\">Trend and leak suspects</a>");
  gs_obuf_puts(p, "</nav>\n<main>\n");
}

static void put_kv(gs_obuf *p, const char *label, uint64_t v) {
  gs_obuf_puts(p, "<tr><th>");
  gs_obuf_puts(p, label);
  gs_obuf_puts(p, "</th><td class=\"n\">");
  put_count(p, v);
  gs_obuf_puts(p, "</td></tr>");
}

/* A table of an object of counts ({"local": 3, ...}), in its own order. */
static void put_counts(gs_obuf *p, const char *title, const json_t *o) {
  const char *key;
  json_t *v;
  gs_obuf_printf(p, "<table class=\"kv\"><caption class=\"muted\">%s</caption><tbody>", title);
  json_object_foreach((json_t *)o, key, v) {
    gs_obuf_puts(p, "<tr><th>");
    put_text(p, key);
    gs_obuf_puts(p, "</th><td class=\"n\">");
    put_count(p, json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0);
    gs_obuf_puts(p, "</td></tr>");
  }
  gs_obuf_puts(p, "</tbody></table>");
}

/* The sections past REPORT_SECTIONS, which the page does not detail. */
static void put_omitted(gs_obuf *p, uint64_t omitted) {
  if (!omitted) return;
  gs_obuf_puts(p, "<p class=\"muted\">");
  put_count(p, omitted);
  gs_obuf_printf(p, " more sections after the first %d are not detailed here; the totals count "
                 "them, and <code>gcsnap summary</code> and <code>gcsnap dominators</code> list "
                 "them all.</p>\n", REPORT_SECTIONS);
}

static void put_summary(gs_obuf *p, const json_t *sum) {
  const json_t *sections = json_object_get(sum, "sections");
  uint64_t objects = num(sum, "objects"), unreachable = num(sum, "unreachable");
  size_t i;
  gs_obuf_puts(p, "<section id=\"summary\"><h2>Summary</h2>\n<div style=\"display:flex;gap:32px;flex-wrap:wrap\">"
         "<table class=\"kv\"><caption class=\"muted\">Totals</caption><tbody>");
  put_kv(p, "Sections", json_array_size(sections) + num(sum, "sections_omitted"));
  put_kv(p, "Objects", objects);
  put_kv(p, "Bytes", num(sum, "bytes"));
  put_kv(p, "Types", num(sum, "types"));
  put_kv(p, "References", num(sum, "references"));
  put_kv(p, "Dangling references", num(sum, "dangling_references"));
  put_kv(p, "Roots", num(sum, "roots"));
  put_kv(p, "Dangling roots", num(sum, "dangling_roots"));
  put_kv(p, "Reachable objects", objects - unreachable);
  put_kv(p, "Reachable bytes", num(sum, "bytes") - num(sum, "unreachable_bytes"));
  gs_obuf_puts(p, "</tbody></table>");
  put_counts(p, "Roots by kind", json_object_get(sum, "roots_by_kind"));
  put_counts(p, "Roots by flag", json_object_get(sum, "roots_by_flag"));
  gs_obuf_puts(p, "<table class=\"kv\"><caption class=\"muted\">Unreachable (no strong root)</caption><tbody>");
  put_kv(p, "Objects", unreachable);
  put_kv(p, "Bytes", num(sum, "unreachable_bytes"));
  gs_obuf_puts(p, "</tbody></table></div>\n<p class=\"muted\">Roots with the weak flag keep nothing alive; "
         "objects no other root reaches are counted apart as unreachable.</p>\n");
  gs_obuf_puts(p, "<h3>Sections</h3><table><thead><tr><th>Section</th><th class=\"n\">Objects</th>"
         "<th class=\"n\">Bytes</th><th class=\"n\">Roots</th><th class=\"n\">Unreachable</th>"
         "<th class=\"n\">Unreachable bytes</th></tr></thead><tbody>");
  for (i = 0; i < json_array_size(sections); i++) {
    static const char *const cols[] = {"objects", "bytes", "roots", "unreachable", "unreachable_bytes"};
    const json_t *s = json_array_get(sections, i);
    size_t k;
    gs_obuf_puts(p, "<tr><td class=\"t\">");
    put_text(p, str(s, "name"));
    for (k = 0; k < sizeof cols / sizeof cols[0]; k++) next_count(p, num(s, cols[k]));
    gs_obuf_puts(p, "</td></tr>");
  }
  gs_obuf_puts(p, "</tbody></table>");
  put_omitted(p, num(sum, "sections_omitted"));
  gs_obuf_puts(p, "</section>\n");
}

/* A table the page's script fills from the island, a page at a time. */
static void put_grid(gs_obuf *p, const char *id, const char *title, size_t rows) {
  gs_obuf_printf(p, "<section id=\"%s\"><h2>%s</h2>\n<div class=\"grid\" data-rows=\"%zu\">"
          "<noscript><p>The table needs JavaScript; the data is in the "
          "<code>gcsnap-data</code> element of this file.</p></noscript></div>\n</section>\n",
       id, title, rows);
}

/* The start of a retainers row: retained bytes and their share, then the
 * opening of the next numeric cell. */
static void put_retained(gs_obuf *p, const json_t *o, uint64_t total) {
  gs_obuf_puts(p, "<tr><td class=\"n\">");
  put_count(p, num(o, "retained"));
  gs_obuf_printf(p, "</td><td class=\"n\">%.1f%%</td><td class=\"n\">", percent(num(o, "retained"), total));
}

static void put_retainers(gs_obuf *p, const json_t *dom, uint64_t omitted) {
  const json_t *sections = json_object_get(dom, "sections");
  size_t i, k;
  gs_obuf_puts(p, "<section id=\"retainers\"><h2>Top retainers</h2>\n<p class=\"muted\">Retained size: "
         "the bytes that would be freed if the object died (the object and everything only it "
         "keeps alive), from the dominator tree over every strong root. By type, an object "
         "counts only when no object of its type dominates it, so nothing is counted twice.</p>\n");
  for (i = 0; i < json_array_size(sections); i++) {
    const json_t *s = json_array_get(sections, i), *top = json_object_get(s, "top_objects"),
                 *types = json_object_get(s, "by_type");
    uint64_t total = num(s, "reachable_bytes");
    gs_obuf_puts(p, "<h3>");
    put_text(p, str(s, "name"));
    gs_obuf_puts(p, "</h3><p>Reachable: ");
    put_count(p, num(s, "reachable_objects"));
    gs_obuf_puts(p, " objects, ");
    put_count(p, total);
    gs_obuf_puts(p, " bytes. Unreachable: ");
    put_count(p, num(s, "unreachable_objects"));
    gs_obuf_puts(p, " objects, ");
    put_count(p, num(s, "unreachable_bytes"));
    gs_obuf_puts(p, " bytes (retained by nothing).</p>\n<table><caption class=\"muted\">Objects by retained size</caption>"
               "<thead><tr><th class=\"n\">Retained</th><th class=\"n\">Share</th><th class=\"n\">Shallow</th>"
           "<th>Object</th><th>Type</th></tr></thead><tbody>");
    for (k = 0; k < json_array_size(top); k++) {
      const json_t *o = json_array_get(top, k);
      put_retained(p, o, total);
      put_count(p, num(o, "shallow"));
      gs_obuf_puts(p, "</td><td>");
      put_text(p, str(o, "id"));
      gs_obuf_puts(p, "</td><td class=\"t\">");
      put_text(p, str(o, "type"));
      gs_obuf_puts(p, "</td></tr>");
    }
    gs_obuf_puts(p, "</tbody></table>\n<table><caption class=\"muted\">Types by retained size</caption>"
               "<thead><tr><th class=\"n\">Retained</th><th class=\"n\">Share</th><th class=\"n\">Objects</th>"
               "<th class=\"n\">Shallow</th><th>Type</th></tr></thead><tbody>");
    for (k = 0; k < json_array_size(types); k++) {
      const json_t *o = json_array_get(types, k);
      put_retained(p, o, total);
      put_count(p, num(o, "count"));
      next_count(p, num(o, "shallow"));
      gs_obuf_puts(p, "</td><td class=\"t\">");
      put_text(p, str(o, "type"));
      gs_obuf_puts(p, "</td></tr>");
    }
    gs_obuf_puts(p, "</tbody></table>\n");
  }
  put_omitted(p, omitted);
  gs_obuf_puts(p, "</section>\n");
}

static void put_tree(gs_obuf *p) {
  gs_obuf_printf(p, "<section id=\"domtree\"><h2>Dominator tree</h2>\n<p class=\"muted\">From the "
                 "strong roots down: each object with what it alone keeps alive. Open a row for the "
                 "objects it dominates, largest first; the page holds %d levels and %d children a "
                 "node (the collector's console browses the whole tree).</p>\n"
                 "<div class=\"tree\"></div></section>\n", TREE_DEPTH, TREE_FANOUT);
}

/* FILE by generation, when its ranges lie beside it (FILE.gens.json). */
static void put_generations(gs_obuf *p, const json_t *gens) {
  const json_t *g;
  size_t i, k;
  gs_obuf_puts(p, "<section id=\"generations\"><h2>By generation</h2>\n<table><thead><tr><th>Generation</th>"
                  "<th class=\"n\">Objects</th><th class=\"n\">Bytes</th><th>Largest types</th></tr></thead><tbody>");
  json_array_foreach(json_object_get(gens, "generations"), i, g) {
    gs_obuf_puts(p, "<tr><td>");
    put_text(p, str(g, "generation"));
    next_count(p, num(g, "objects"));
    next_count(p, num(g, "bytes"));
    gs_obuf_puts(p, "</td><td class=\"t\">");
    for (k = 0; k < json_array_size(json_object_get(g, "types")); k++) {
      gs_obuf_puts(p, k ? ", " : "");
      put_text(p, str(json_array_get(json_object_get(g, "types"), k), "type"));
    }
    gs_obuf_puts(p, "</td></tr>");
  }
  gs_obuf_puts(p, "</tbody></table></section>\n");
}

/* The change by generation, when both files have their ranges. */
static void put_diff_generations(gs_obuf *p, const json_t *gens) {
  const json_t *g;
  size_t i;
  gs_obuf_puts(p, "<table class=\"gens\"><thead><tr><th>Generation</th><th class=\"n\">Objects</th>"
                  "<th class=\"n\">Change</th><th class=\"n\">Bytes</th><th class=\"n\">Change</th></tr></thead><tbody>");
  json_array_foreach(gens, i, g) {
    gs_obuf_puts(p, "<tr><td>");
    put_text(p, str(g, "generation"));
    next_count(p, num(g, "objects_after"));
    next_change(p, snum(g, "objects_change"));
    next_count(p, num(g, "bytes_after"));
    next_change(p, snum(g, "bytes_change"));
    gs_obuf_puts(p, "</td></tr>");
  }
  gs_obuf_puts(p, "</tbody></table>\n");
}

static void put_diff(gs_obuf *p, const json_t *diff) {
  const json_t *types = json_object_get(diff, "types");
  size_t i, fresh = 0, gone = 0;
  for (i = 0; i < json_array_size(types); i++) {
    const char *status = str(json_array_get(types, i), "status");
    fresh += !strcmp(status, "new");
    gone += !strcmp(status, "gone");
  }
  gs_obuf_puts(p, "<section id=\"diff\"><h2>Changes since the baseline</h2>\n<p>Baseline: ");
  put_text(p, str(json_object_get(diff, "old"), "file"));
  gs_obuf_puts(p, "</p><table class=\"kv\"><tbody><tr><th>Objects</th><td class=\"n\">");
  put_count(p, num(json_object_get(diff, "old"), "objects"));
  gs_obuf_puts(p, " &rarr; ");
  put_count(p, num(json_object_get(diff, "new"), "objects"));
  next_change(p, snum(diff, "objects_change"));
  gs_obuf_puts(p, "</td></tr><tr><th>Bytes</th><td class=\"n\">");
  put_count(p, num(json_object_get(diff, "old"), "bytes"));
  gs_obuf_puts(p, " &rarr; ");
  put_count(p, num(json_object_get(diff, "new"), "bytes"));
  next_change(p, snum(diff, "bytes_change"));
  gs_obuf_printf(p, "</td></tr><tr><th>Types</th><td class=\"n\">%zu changed</td><td class=\"n\">"
          "%zu new, %zu gone</td></tr></tbody></table>\n", json_array_size(types), fresh, gone);
  if (json_object_get(diff, "generations")) put_diff_generations(p, json_object_get(diff, "generations"));
  gs_obuf_puts(p, "<div class=\"grid\" data-rows=\"0\"><noscript><p>The table needs JavaScript.</p></noscript></div>\n</section>\n");
}

/* ---- trend chart ------------------------------------------------------- */

#define CHART_W 720
#define CHART_H 240
#define CHART_L 80    /* room for the bytes axis */
#define CHART_R 80    /* and for the objects axis */
#define CHART_T 16
#define CHART_B 36

static double chart_x(size_t i, size_t n) {
  double w = CHART_W - CHART_L - CHART_R;
  return n < 2 ? CHART_L + w / 2 : CHART_L + w * (double)i / (double)(n - 1);
}

static double chart_y(uint64_t v, uint64_t max) {
  double h = CHART_H - CHART_T - CHART_B;
  return CHART_T + h - (max ? h * (double)v / (double)max : 0.0);
}

/* One line: key is "bytes" or "objects" of each file. */
static void put_line(gs_obuf *p, const json_t *files, const char *key, const char *color,
                     uint64_t max) {
  size_t i, n = json_array_size(files);
  gs_obuf_printf(p, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
  for (i = 0; i < n; i++)
    gs_obuf_printf(p, "%s%.1f,%.1f", i ? " " : "", chart_x(i, n), chart_y(num(json_array_get(files, i), key), max));
  gs_obuf_puts(p, "\"/>\n");
  for (i = 0; i < n; i++) {
    const json_t *f = json_array_get(files, i);
    gs_obuf_printf(p, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>", chart_x(i, n),
         chart_y(num(f, key), max), color);
    put_text(p, str(f, "file"));
    gs_obuf_puts(p, ": ");
    put_count(p, num(f, key));
    gs_obuf_printf(p, " %s</title></circle>", key);
  }
}

static void put_chart(gs_obuf *p, const json_t *files) {
  size_t i, n = json_array_size(files);
  uint64_t max_bytes = 0, max_objects = 0;
  for (i = 0; i < n; i++) {
    const json_t *f = json_array_get(files, i);
    if (num(f, "bytes") > max_bytes) max_bytes = num(f, "bytes");
    if (num(f, "objects") > max_objects) max_objects = num(f, "objects");
  }
  gs_obuf_printf(p, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"Total bytes and objects over the series\">",
       CHART_W, CHART_H, CHART_W, CHART_H);
  gs_obuf_printf(p, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafbfc\" stroke=\"#dde2ea\"/>",
       CHART_L, CHART_T, CHART_W - CHART_L - CHART_R, CHART_H - CHART_T - CHART_B);
  gs_obuf_printf(p, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", CHART_L - 6, CHART_T + 4);
  put_count(p, max_bytes);
  gs_obuf_printf(p, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>", CHART_L - 6, CHART_H - CHART_B);
  gs_obuf_printf(p, "<text x=\"%d\" y=\"%d\">", CHART_W - CHART_R + 6, CHART_T + 4);
  put_count(p, max_objects);
  gs_obuf_printf(p, "</text><text x=\"%d\" y=\"%d\">0</text>", CHART_W - CHART_R + 6, CHART_H - CHART_B);
  for (i = 0; i < n; i++)
    gs_obuf_printf(p, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%zu</text>", chart_x(i, n),
         CHART_H - CHART_B + 14, i + 1);
  put_line(p, files, "bytes", "#c2410c", max_bytes);
  put_line(p, files, "objects", "#2563eb", max_objects);
  gs_obuf_printf(p, "<text x=\"%d\" y=\"%d\" fill=\"#c2410c\" style=\"fill:#c2410c\">&#9632; total bytes (left)</text>"
          "<text x=\"%d\" y=\"%d\" style=\"fill:#2563eb\">&#9632; objects (right)</text></svg>\n",
       CHART_L, CHART_H - 6, CHART_L + 200, CHART_H - 6);
}

static void put_values(gs_obuf *p, const json_t *a) {
  size_t i;
  for (i = 0; i < json_array_size(a); i++) {
    if (i) gs_obuf_puts(p, " &rarr; ");
    put_count(p, json_is_integer(json_array_get(a, i)) ? (uint64_t)json_integer_value(json_array_get(a, i)) : 0);
  }
}

static void put_suspect(gs_obuf *p, size_t rank, const json_t *s) {
  const json_t *h = json_object_get(s, "held_by"), *path = json_object_get(h, "example_path");
  size_t k;
  gs_obuf_printf(p, "<div class=\"suspect\"><h3>%zu. ", rank);
  put_text(p, str(s, "type"));
  gs_obuf_puts(p, "</h3><p><span class=\"up\">");
  put_change(p, snum(s, "bytes_gained"));
  gs_obuf_puts(p, " bytes</span>");
  if (json_is_true(json_object_get(s, "grew_every_interval"))) gs_obuf_puts(p, ", count grew in every interval");
  gs_obuf_puts(p, "</p><table class=\"kv\"><tbody><tr><th>Count</th><td>");
  put_values(p, json_object_get(s, "counts"));
  gs_obuf_puts(p, "</td></tr><tr><th>Bytes</th><td>");
  put_values(p, json_object_get(s, "bytes"));
  gs_obuf_puts(p, "</td></tr></tbody></table>");
  if (!h) {
    gs_obuf_puts(p, "<p class=\"muted\">No strong root holds an instance in the last snapshot.</p></div>\n");
    return;
  }
  gs_obuf_puts(p, "<p>");
  put_count(p, num(h, "objects"));
  gs_obuf_puts(p, " instances (");
  put_count(p, num(h, "bytes"));
  gs_obuf_puts(p, " bytes) are held by a <b>");
  put_text(p, str(h, "root_kind"));
  gs_obuf_printf(p, "</b> root (flags %" PRIu64 ") of type <b>", num(h, "root_flags"));
  put_text(p, str(h, "root_type"));
  gs_obuf_puts(p, "</b> through <b>");
  put_text(p, str(h, "first_hop_type"));
  gs_obuf_puts(p, "</b>. Shortest path of one of them, root first:</p><ol class=\"path\">");
  for (k = 0; k < json_array_size(path); k++) {
    const json_t *n = json_array_get(path, k);
    if (json_object_get(n, "elided")) {
      gs_obuf_puts(p, "<li class=\"muted\">... ");
      put_count(p, num(n, "elided"));
      gs_obuf_puts(p, " more objects on this path ...</li>");
      continue;
    }
    gs_obuf_puts(p, "<li>");
    put_text(p, str(n, "id"));
    gs_obuf_puts(p, " ");
    put_text(p, str(n, "type"));
    gs_obuf_puts(p, " <span class=\"muted\">(");
    put_count(p, num(n, "size"));
    gs_obuf_puts(p, " bytes)</span></li>");
  }
  gs_obuf_puts(p, "</ol></div>\n");
}

static void put_trend(gs_obuf *p, const json_t *trend) {
  const json_t *files = json_object_get(trend, "files"), *sus = json_object_get(trend, "suspects"),
               *alive = json_object_get(trend, "alive_in_every_snapshot");
  size_t i;
  gs_obuf_puts(p, "<section id=\"trend\"><h2>Trend and leak suspects</h2>\n");
  put_chart(p, files);
  gs_obuf_puts(p, "<table><thead><tr><th class=\"n\">#</th><th>Snapshot</th><th class=\"n\">Objects</th>"
         "<th class=\"n\">Bytes</th></tr></thead><tbody>");
  for (i = 0; i < json_array_size(files); i++) {
    const json_t *f = json_array_get(files, i);
    gs_obuf_printf(p, "<tr><td class=\"n\">%zu</td><td class=\"t\">", i + 1);
    put_text(p, str(f, "file"));
    next_count(p, num(f, "objects"));
    next_count(p, num(f, "bytes"));
    gs_obuf_puts(p, "</td></tr>");
  }
  gs_obuf_printf(p, "</tbody></table>\n<h3>Leak suspects (%zu)</h3>\n<p class=\"muted\">Types whose count grew "
          "in every interval, or whose count grew and whose bytes grew by more than %d%% from the "
          "first snapshot to the last, by bytes gained; for each, the roots and first hop that hold "
          "most of its instances in the last snapshot.</p>\n",
       json_array_size(sus), SUSPECTS_THRESHOLD);
  for (i = 0; i < json_array_size(sus); i++) put_suspect(p, i + 1, json_array_get(sus, i));
  if (alive) {
    gs_obuf_puts(p, "<p>Objects alive in every snapshot (stable IDs): ");
    put_count(p, num(alive, "objects"));
    gs_obuf_puts(p, " (");
    put_count(p, num(alive, "bytes"));
    gs_obuf_puts(p, " bytes).</p>\n");
  }
  gs_obuf_puts(p, "</section>\n");
}

static int render(gs_obuf *p, const char *file, const json_t *data) {
  const json_t *sum = json_object_get(data, "summary"), *diff = json_object_get(data, "diff"),
               *trend = json_object_get(data, "trend");
  put_head(p, file);
  put_nav(p, diff != NULL, trend != NULL);
  put_summary(p, sum);
  put_grid(p, "histogram", "Types by bytes", json_array_size(json_object_get(sum, "by_type")));
  put_retainers(p, json_object_get(data, "dominators"), num(sum, "sections_omitted"));
  put_tree(p);
  if (json_object_get(data, "generations")) put_generations(p, json_object_get(data, "generations"));
  if (diff) put_diff(p, diff);
  if (trend) put_trend(p, trend);
  gs_obuf_puts(p, "</main>\n<script type=\"application/json\" id=\"gcsnap-data\">");
  put_island(p, data);
  gs_obuf_puts(p, "</script>\n<script>");
  put_asset(p, "report.js");
  gs_obuf_puts(p, "</script>\n</body>\n</html>\n");
  return p->err;
}

/* Writes the page under a temporary name, renamed into place only when
 * complete, so a failure half way leaves no file. */
static int write_page(const char *out, const char *file, const json_t *data) {
  gs_obuf *b = calloc(1, sizeof *b);
  char err[300];
  int code = GS_EXIT_OK;
  if (!b) { gs_cli_error("out of memory"); return GS_EXIT_USAGE; }
  if (gs_output_open(&b->out, out, err, sizeof err)) {
    gs_cli_error("%s", err);
    free(b);
    return GS_EXIT_USAGE;
  }
  if (render(b, file, data) || gs_obuf_flush(b) || gs_output_commit(b->out)) {
    gs_cli_error("%s: %s", out, gs_output_error(b->out)[0] ? gs_output_error(b->out) : "write failed");
    gs_output_discard(b->out);
    code = GS_EXIT_USAGE;
  }
  gs_output_close(b->out);
  free(b);
  return code;
}

/* ---- command ----------------------------------------------------------- */

/* Operands before --series name FILE, those after it the series. */
static int parse_args(int argc, char **argv, report_args *ra) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  if (!(ra->paths = calloc((size_t)argc + 1, sizeof *ra->paths))) return GS_EXIT_USAGE;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("report", usage, a.error);
    if (k == GS_ARG_OPERAND && ra->series) { ra->paths[ra->npaths++] = a.value; continue; }
    if (k == GS_ARG_OPERAND) {
      if (ra->path) return gs_cli_usage_error("report", usage, "only one FILE is allowed (series files follow --series)");
      ra->path = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: ra->help = 1; break;
    case OPT_BASELINE: ra->baseline = a.value; break;
    case OPT_SERIES: ra->series = 1; break;
    case OPT_OUT: ra->out = a.value; break;
    }
  }
  if (ra->help) return GS_EXIT_OK;
  if (ra->baseline && ra->series) return gs_cli_usage_error("report", usage, "give --baseline or --series, not both");
  if (!ra->path && ra->npaths) ra->path = ra->paths[ra->npaths - 1];
  else if (ra->path && ra->series && (!ra->npaths || strcmp(ra->paths[ra->npaths - 1], ra->path)))
    ra->paths[ra->npaths++] = ra->path;
  if (!ra->path) return gs_cli_usage_error("report", usage, "no FILE given");
  if (!ra->out) return gs_cli_usage_error("report", usage, "no output file given (-o OUT)");
  if (ra->series && ra->npaths < 2) return gs_cli_usage_error("report", usage, "a series needs at least two snapshots");
  if (ra->npaths > MAX_SERIES) return gs_cli_usage_error("report", usage, "at most 1000 snapshots");
  return GS_EXIT_OK;
}

int gs_cmd_report(int argc, char **argv) {
  report_args ra;
  json_t *data;
  int code;
  memset(&ra, 0, sizeof ra);
  if ((code = parse_args(argc, argv, &ra)) != GS_EXIT_OK || ra.help) {
    free(ra.paths);
    return code ? code : gs_cli_help(usage);
  }
  if (!(data = json_object()) ||
      gs_json_set(data, "generator", gs_json_cstring("gcsnap " GS_VERSION))) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  }
  if (!code) code = gs_report_collect(&ra, data);
  if (!code) code = write_page(ra.out, gs_file_display_name(ra.path), data);
  json_decref(data);
  free(ra.paths);
  return gs_cli_finish(code);
}
