/* gs_fleet.c - per-device figures for the fleet overview, from what the
 * catalog already holds: the growth of the heap as the least-squares slope
 * of bytes over time (a fit over the series, so one odd snapshot does not
 * make a device look leaking or steady), and the leak suspects of the
 * stored summaries' type rows by the rule of gs_trend. A type absent from
 * a summary's rows counts as zero there, as in gs_trend. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_fleet.h"
#include "gs_trend.h"

#define MAX_SERIES 64

int gs_fleet_slope(const double *x, const double *y, size_t n, double *slope) {
  double mx = 0, my = 0, sxx = 0, sxy = 0;
  size_t i;
  if (n < 2) return GS_EINVAL;
  for (i = 0; i < n; i++) { mx += x[i]; my += y[i]; }
  mx /= (double)n;
  my /= (double)n;
  for (i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (sxx <= 0) return GS_EINVAL;
  *slope = sxy / sxx;
  return GS_OK;
}

/* count and bytes of type name in summary sum (0 when not in its rows). */
static void figures_of(json_t *sum, const char *name, uint64_t *count, uint64_t *bytes) {
  json_t *row;
  size_t i;
  *count = *bytes = 0;
  json_array_foreach(json_object_get(sum, "by_type"), i, row) {
    const char *type = json_string_value(json_object_get(row, "type"));
    if (!type || strcmp(type, name)) continue;
    *count = (uint64_t)json_integer_value(json_object_get(row, "count"));
    *bytes = (uint64_t)json_integer_value(json_object_get(row, "bytes"));
    return;
  }
}

typedef struct gain { const char *name; int64_t gained; } gain;

static int by_gain(const void *a, const void *b) {
  const gain *x = a, *y = b;
  if (x->gained != y->gained) return x->gained < y->gained ? 1 : -1;
  return strcmp(x->name, y->name);
}

int gs_fleet_suspects(json_t *const *sums, int n, uint64_t threshold, json_t **out) {
  json_t *rows, *row;
  uint64_t count[MAX_SERIES], bytes[MAX_SERIES];
  gain *found;
  size_t i, nfound = 0;
  int f, every;
  *out = NULL;
  if (n < 2 || n > MAX_SERIES) return GS_EINVAL;
  rows = json_object_get(sums[n - 1], "by_type");
  if (!(found = malloc((json_array_size(rows) + 1) * sizeof *found))) return GS_ENOMEM;
  json_array_foreach(rows, i, row) {
    const char *name = json_string_value(json_object_get(row, "type"));
    if (!name) continue;
    for (f = 0; f < n; f++) figures_of(sums[f], name, &count[f], &bytes[f]);
    if (!gs_trend_suspect(count, bytes, n, threshold, &every)) continue;
    found[nfound].name = name;
    found[nfound++].gained = (int64_t)(bytes[n - 1] - bytes[0]);
  }
  qsort(found, nfound, sizeof *found, by_gain);
  if ((*out = json_array()))
    for (i = 0; i < nfound; i++) json_array_append_new(*out, json_string(found[i].name));
  free(found);
  return *out ? GS_OK : GS_ENOMEM;
}
