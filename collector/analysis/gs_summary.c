/* gs_summary.c - the summary of a dump: figures per section and in total,
 * and the JSON object "gcsnap summary --json" prints.
 *
 * Loads one section at a time as a gs_graph, keeps only its numbers
 * (gs_heapstats) and frees it before the next. Past the totals, a section
 * listed keeps its top type rows, and only the first GS_SUMMARY_SECTIONS
 * are listed, so memory is bounded by the largest section and the types
 * of the whole file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_graph.h"
#include "gs_json.h"
#include "gs_summary.h"

int gs_summary_init(gs_summary *sum, const char *name, uint64_t top) {
  memset(sum, 0, sizeof *sum);
  sum->name = name;
  sum->top = top;
  return gs_heapstats_init(&sum->total);
}

void gs_summary_free(gs_summary *sum) {
  size_t i;
  for (i = 0; i < sum->nsections; i++) gs_heapstats_free(&sum->sections[i]);
  free(sum->sections);
  gs_heapstats_free(&sum->total);
  memset(sum, 0, sizeof *sum);
}

/* ---- loading --------------------------------------------------------- */

/* Each section is below GS_MAX_BYTES (the loader checks); so must be their sum. */
static int total_fits(const gs_summary *sum, const gs_heapstats *s, gs_diag *d) {
  if (s->bytes <= GS_MAX_BYTES - sum->total.bytes) return 1;
  d->code = GS_D_BYTES_OVERFLOW;
  d->line = s->line;
  snprintf(d->message, sizeof d->message, "object sizes add up to more than %llu bytes",
           (unsigned long long)GS_MAX_BYTES);
  return 0;
}

/* Keeps s, trimmed, in the list of sections, or frees it: past the end of
 * the list, or on failure. */
static int list_section(gs_summary *sum, gs_heapstats *s) {
  int err = GS_OK;
  if (sum->nsections < GS_SUMMARY_SECTIONS &&
      !(err = gs_array_reserve((void **)&sum->sections, &sum->cap, sum->nsections + 1,
                               sizeof *sum->sections)) &&
      !(err = gs_heapstats_trim(s, sum->top))) {
    sum->sections[sum->nsections++] = *s;
    return GS_OK;
  }
  gs_heapstats_free(s);
  return err;
}

int gs_summary_add(gs_summary *sum, const gs_graph *g, const gs_dom *dom, gs_diag *d) {
  gs_heapstats s;
  int err;
  if ((err = gs_heapstats_init(&s))) return err;
  if ((err = gs_heapstats_of_graph(&s, g, dom)) || (!total_fits(sum, &s, d) && (err = GS_EFORMAT)) ||
      (err = gs_heapstats_add(&sum->total, &s))) {
    gs_heapstats_free(&s);
    return err;
  }
  if ((err = list_section(sum, &s))) return err;
  return sum->each_graph ? sum->each_graph(sum->each_ctx, g) : GS_OK;
}

int gs_summary_load(gs_summary *sum, gs_reader *r, gs_diag *d) {
  for (;;) {
    gs_graph *g = NULL;
    int err = gs_graph_load(r, &g, d);
    if (err == GS_OK) {
      err = gs_summary_add(sum, g, NULL, d);
      gs_graph_free(g);
    }
    if (err == GS_OK) continue;
    if (err == GS_EOF && sum->total.sections > 0) return GS_OK;
    if (err == GS_EOF) {
      d->code = GS_D_NO_SECTION;
      d->line = 0;
      snprintf(d->message, sizeof d->message, "no AppDomain section ('a' record) in the input");
      err = GS_EFORMAT;
    }
    return err;
  }
}

/* ---- JSON ------------------------------------------------------------ */

static double share(uint64_t part, uint64_t whole) {
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

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

/* Sets by_type (top rows) and by_type_omitted (the others together). */
static int types_json(json_t *o, const gs_heapstats *s, uint64_t top) {
  const gs_histo_row **rows;
  gs_heapstats_rest rest;
  size_t shown, i;
  json_t *arr = json_array(), *more = json_object();
  int bad = !arr || !more || gs_heapstats_top(s, top, &rows, &shown, &rest);
  if (bad) { json_decref(arr); json_decref(more); return -1; }
  for (i = 0; !bad && i < shown; i++)
    bad = json_array_append_new(arr, type_row_json(rows[i], s->bytes)) != 0;
  free(rows);
  bad = bad || gs_json_set(more, "types", gs_json_u64(rest.types)) ||
        gs_json_set(more, "count", gs_json_u64(rest.count)) ||
        gs_json_set(more, "bytes", gs_json_u64(rest.bytes));
  if (bad) { json_decref(arr); json_decref(more); return -1; }
  return gs_json_set(o, "by_type", arr) | gs_json_set(o, "by_type_omitted", more);
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

int gs_summary_load_file(gs_summary *sum, const char *path, uint64_t top, gs_file_fault *fault) {
  return gs_summary_load_file_each(sum, path, top, NULL, NULL, fault);
}

int gs_summary_load_file_each(gs_summary *sum, const char *path, uint64_t top,
                              int (*each)(void *ctx, const gs_graph *g), void *ctx,
                              gs_file_fault *fault) {
  gs_file *f;
  gs_reader *r;
  gs_diag d;
  int err;
  gs_summary_init(sum, gs_file_display_name(path), top);
  sum->each_graph = each;
  sum->each_ctx = ctx;
  if ((err = gs_file_open_dump(path, &f, &r, fault)) != GS_OK) return err;
  err = gs_summary_load(sum, r, &d);
  gs_file_hide_progress(f);
  if (err) gs_file_fault_set(fault, f, err, &d);
  gs_file_close_dump(f, r);
  return err;
}

json_t *gs_summary_json(const gs_summary *sum, uint64_t top, size_t max_sections) {
  json_t *o = json_object(), *arr = json_array();
  size_t i, n = max_sections && max_sections < sum->nsections ? max_sections : sum->nsections;
  uint64_t omitted = sum->total.sections - n;
  int bad = !o || !arr || gs_json_set(o, "file", gs_json_cstring(sum->name)) ||
            stats_json(o, &sum->total, top);
  for (i = 0; !bad && i < n; i++)
    bad = json_array_append_new(arr, section_json(&sum->sections[i], top)) != 0;
  if (!bad && omitted) bad = gs_json_set(o, "sections_omitted", gs_json_u64(omitted));
  bad = bad || gs_json_set(o, "sections", json_incref(arr));
  json_decref(arr);
  if (bad) {
    json_decref(o);
    return NULL;
  }
  return o;
}
