/* gs_diff.c - what changed between two snapshots, by type.
 *
 * Object IDs are not stable across dumps, so snapshots are compared by type
 * name: per type the count and bytes before and after, sorted by growth in
 * bytes, with the types that appeared or vanished marked, the way
 * "dotnet-gcdump report" users compare two reports by hand. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "gs_diff.h"
#include "gs_error.h"
#include "gs_json.h"

int64_t gs_diff_change(uint64_t before, uint64_t after) {
  return (int64_t)(after - before);
}

static int by_growth(const void *a, const void *b) {
  const gs_diff_row *x = a, *y = b;
  int64_t dx = gs_diff_change(x->bytes[0], x->bytes[1]), dy = gs_diff_change(y->bytes[0], y->bytes[1]);
  int64_t cx = gs_diff_change(x->count[0], x->count[1]), cy = gs_diff_change(y->count[0], y->count[1]);
  if (dx != dy) return dx < dy ? 1 : -1;
  if (cx != cy) return cx < cy ? 1 : -1;
  return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(const gs_histo_row *const *)a)->name, (*(const gs_histo_row *const *)b)->name);
}

/* The rows of h sorted by name; the caller frees the array. */
static const gs_histo_row **rows_by_name(const gs_histo *h) {
  size_t n = gs_histo_size(h), i;
  const gs_histo_row **rows = malloc((n ? n : 1) * sizeof *rows);
  if (!rows) return NULL;
  for (i = 0; i < n; i++) rows[i] = gs_histo_row_at(h, i);
  qsort(rows, n, sizeof *rows, by_name);
  return rows;
}

/* One row per type name of either side: a merge of the two by name. */
int gs_diff_join(const gs_histo *old_h, const gs_histo *new_h, gs_diff_row **out, size_t *n) {
  size_t nold = gs_histo_size(old_h), nnew = gs_histo_size(new_h), i = 0, j = 0, k = 0;
  const gs_histo_row **a = rows_by_name(old_h), **b = rows_by_name(new_h);
  gs_diff_row *rows = calloc(nold + nnew + 1, sizeof *rows);
  if (!a || !b || !rows) { free(a); free(b); free(rows); return GS_ENOMEM; }
  while (i < nold || j < nnew) {
    int c = i == nold ? 1 : j == nnew ? -1 : strcmp(a[i]->name, b[j]->name);
    gs_diff_row *row = &rows[k++];
    if (c <= 0) { row->name = a[i]->name; row->count[0] = a[i]->count; row->bytes[0] = a[i]->bytes; i++; }
    if (c >= 0) { row->name = b[j]->name; row->count[1] = b[j]->count; row->bytes[1] = b[j]->bytes; j++; }
  }
  free(a);
  free(b);
  assert(k <= nold + nnew);   /* each row takes at least one of either side */
  qsort(rows, k, sizeof *rows, by_growth);
  *out = rows;
  *n = k;
  return GS_OK;
}

int gs_diff_unchanged(const gs_diff_row *r) {
  return r->count[0] == r->count[1] && r->bytes[0] == r->bytes[1];
}

const char *gs_diff_status(const gs_diff_row *r) {
  if (!r->count[0]) return "new";
  if (!r->count[1]) return "gone";
  return "";
}

static json_t *totals_json(const gs_summary *s) {
  json_t *o = json_object();
  gs_json_set(o, "file", gs_json_cstring(s->name));
  gs_json_set(o, "objects", gs_json_u64(s->total.objects));
  gs_json_set(o, "bytes", gs_json_u64(s->total.bytes));
  return o;
}

static json_t *to_json(const gs_summary *old_s, const gs_summary *new_s, const gs_diff_row *rows,
                       size_t n, size_t shown, int all) {
  json_t *o = json_object(), *types = json_array();
  size_t i, listed = 0;
  if (!o || !types) { json_decref(o); json_decref(types); return NULL; }
  gs_json_set(o, "old", totals_json(old_s));
  gs_json_set(o, "new", totals_json(new_s));
  gs_json_set(o, "objects_change", json_integer(gs_diff_change(old_s->total.objects, new_s->total.objects)));
  gs_json_set(o, "bytes_change", json_integer(gs_diff_change(old_s->total.bytes, new_s->total.bytes)));
  for (i = 0; i < n && listed < shown; i++) {
    json_t *row;
    if (!all && gs_diff_unchanged(&rows[i])) continue;
    row = json_object();
    gs_json_set(row, "type", gs_json_cstring(rows[i].name));
    gs_json_set(row, "count_before", gs_json_u64(rows[i].count[0]));
    gs_json_set(row, "count_after", gs_json_u64(rows[i].count[1]));
    gs_json_set(row, "count_change", json_integer(gs_diff_change(rows[i].count[0], rows[i].count[1])));
    gs_json_set(row, "bytes_before", gs_json_u64(rows[i].bytes[0]));
    gs_json_set(row, "bytes_after", gs_json_u64(rows[i].bytes[1]));
    gs_json_set(row, "bytes_change", json_integer(gs_diff_change(rows[i].bytes[0], rows[i].bytes[1])));
    gs_json_set(row, "status", gs_json_cstring(!rows[i].count[0] ? "new" : !rows[i].count[1] ? "gone"
                                               : gs_diff_unchanged(&rows[i]) ? "same" : "changed"));
    json_array_append_new(types, row);
    listed++;
  }
  gs_json_set(o, "types", types);
  return o;
}

json_t *gs_diff_json(const gs_summary *old_s, const gs_summary *new_s, uint64_t top, int all) {
  gs_diff_row *rows = NULL;
  size_t n = 0, shown;
  json_t *o;
  if (gs_diff_join(old_s->total.by_type, new_s->total.by_type, &rows, &n)) return NULL;
  shown = top == 0 || top > n ? n : (size_t)top;
  o = to_json(old_s, new_s, rows, n, shown, all);
  free(rows);
  return o;
}
