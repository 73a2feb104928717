/* gs_cmd_trend.c - "gcsnap trend": leak suspects across a series of snapshots.
 *
 * Snapshots of one application, oldest first. A type is a suspect when its
 * instance count grew in every interval, or when its bytes grew by more
 * than a threshold from the first snapshot to the last; suspects are ranked
 * by bytes gained. For each, the last snapshot says what holds its
 * instances: the group of roots and first hops that keeps most of them
 * alive, with the shortest path of one instance. When every snapshot was
 * taken with stable object IDs (sections named "... [stable-ids]"), the
 * objects alive in all of them are counted too: what was never freed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_args.h"
#include "gs_analysis.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_heapstats.h"
#include "gs_json.h"
#include "gs_paths.h"
#include "gs_summary.h"

#define DEFAULT_TOP 10
#define DEFAULT_THRESHOLD 20
#define STABLE_SUFFIX " [stable-ids]"
#define MAX_FILES 1000

static const char usage[] =
  "usage: gcsnap trend [--top N] [--threshold PCT] [--json] FILE FILE...\n"
  "       gcsnap trend --device ID [--last N] [--collector URL] [--top N] ...\n"
  "\n"
  "Reads snapshots of one application, oldest first, and lists the types\n"
  "that look like leaks: their count grew in every interval, or their bytes\n"
  "grew by more than PCT percent from the first snapshot to the last. For\n"
  "each, the roots and first hop that hold most of its instances in the last\n"
  "snapshot, with one shortest path. When all snapshots have stable object\n"
  "IDs (gcsnap-agent --stable-ids), also the objects alive in every one.\n"
  "\n"
  "  --top N          list N suspects (default 10, 0 = all)\n"
  "  --threshold PCT  bytes growth that makes a suspect (default 20)\n"
  "  --json           print one JSON object instead of text\n"
  "  --device ID      the device's last N complete snapshots at the collector\n"
  "                   (fetched to a temporary folder, removed afterwards)\n"
  "  --last N         how many (default 10, at least 2)\n"
  "  --collector URL  the collector (default $GCSNAP_COLLECTOR, else\n"
  "                   http://127.0.0.1:7411)\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 done, 1 a file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_TOP, OPT_THRESHOLD, OPT_JSON, OPT_DEVICE, OPT_LAST, OPT_COLLECTOR };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"top", 0, 1, OPT_TOP},
  {"threshold", 0, 1, OPT_THRESHOLD},
  {"json", 0, 0, OPT_JSON},
  {"device", 0, 1, OPT_DEVICE},
  {"last", 0, 1, OPT_LAST},
  {"collector", 0, 1, OPT_COLLECTOR},
  {NULL, 0, 0, 0},
};

typedef struct trend_args {
  int help, json;
  uint64_t top, threshold, last;
  const char *device, *collector;
  char folder[256];                /* --device: where the snapshots were fetched */
  const char **paths;
  int npaths;
} trend_args;

/* One type's series: count and bytes in each snapshot. */
typedef struct series {
  const char *name;
  uint64_t *count, *bytes;
  int every;                 /* count grew in every interval */
  int64_t gained;            /* bytes, last minus first */
  /* what holds it in the last snapshot */
  int held;
  char *root_kind, *root_type, *hop_type;
  uint64_t held_count, held_bytes;
  json_t *path;              /* [{id, type, size}] */
} series;

typedef struct trend {
  int nfiles;
  gs_summary *sums;
  series *rows;
  size_t nrows;
  series **suspects;
  size_t nsuspects;
  int stable;
  uint64_t survivors, survivor_bytes;
  gs_histo *survivor_types;
} trend;


/* ---- series ------------------------------------------------------------ */

typedef struct tagged { const char *name; int file; uint64_t count, bytes; } tagged;

static int by_name_then_file(const void *a, const void *b) {
  const tagged *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : x->file - y->file;
}

static int by_gain(const void *a, const void *b) {
  const series *x = *(series *const *)a, *y = *(series *const *)b;
  if (x->gained != y->gained) return x->gained < y->gained ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* One row per type name seen in any snapshot. */
static int build_series(trend *t) {
  size_t total = 0, n = 0, i, j;
  tagged *all;
  int f;
  for (f = 0; f < t->nfiles; f++) total += gs_histo_size(t->sums[f].total.by_type);
  if (!(all = malloc((total ? total : 1) * sizeof *all))) return GS_ENOMEM;
  for (f = 0; f < t->nfiles; f++)
    for (i = 0; i < gs_histo_size(t->sums[f].total.by_type); i++) {
      const gs_histo_row *row = gs_histo_row_at(t->sums[f].total.by_type, i);
      all[n].name = row->name;
      all[n].file = f;
      all[n].count = row->count;
      all[n++].bytes = row->bytes;
    }
  qsort(all, n, sizeof *all, by_name_then_file);
  if (!(t->rows = calloc(n ? n : 1, sizeof *t->rows))) { free(all); return GS_ENOMEM; }
  for (i = 0; i < n; i = j) {
    series *s = &t->rows[t->nrows++];
    s->name = all[i].name;
    s->count = calloc((size_t)t->nfiles, sizeof *s->count);
    s->bytes = calloc((size_t)t->nfiles, sizeof *s->bytes);
    if (!s->count || !s->bytes) { free(all); return GS_ENOMEM; }
    for (j = i; j < n && !strcmp(all[j].name, all[i].name); j++) {
      s->count[all[j].file] = all[j].count;
      s->bytes[all[j].file] = all[j].bytes;
    }
  }
  free(all);
  return GS_OK;
}

static int is_suspect(series *s, int nfiles, uint64_t threshold) {
  /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): build_series filled every row */
  uint64_t first = s->bytes[0], last = s->bytes[nfiles - 1];
  int f;
  s->every = 1;
  for (f = 1; f < nfiles; f++) s->every &= s->count[f] > s->count[f - 1];
  s->gained = (int64_t)(last - first);
  if (s->count[nfiles - 1] <= s->count[0] || last <= first) return s->every;
  return s->every || first == 0 || (last - first) * 100 > threshold * first;
}

static int rank_suspects(trend *t, uint64_t threshold, uint64_t top) {
  size_t i;
  if (!(t->suspects = malloc((t->nrows ? t->nrows : 1) * sizeof *t->suspects))) return GS_ENOMEM;
  for (i = 0; i < t->nrows; i++)
    if (is_suspect(&t->rows[i], t->nfiles, threshold)) t->suspects[t->nsuspects++] = &t->rows[i];
  qsort(t->suspects, t->nsuspects, sizeof *t->suspects, by_gain);
  if (top && t->nsuspects > top) t->nsuspects = (size_t)top;
  return GS_OK;
}

/* ---- what holds each suspect in the last snapshot ---------------------- */

static json_t *path_json(const gs_graph *g, const gs_retention *ret, uint32_t v) {
  json_t *arr = json_array();
  char id[24], buf[64];
  for (; v != GS_PATH_NONE; v = ret->parent[v]) {
    json_t *o = json_object();
    snprintf(id, sizeof id, "%" PRIx64, g->ids[v]);
    gs_json_set(o, "id", gs_json_cstring(id));
    gs_json_set(o, "type", gs_json_cstring(g->types[v] == GS_GRAPH_MISSING ? "(not in the dump)"
                                            : gs_graph_type_name(g, g->types[v], buf, sizeof buf)));
    gs_json_set(o, "size", gs_json_u64(g->sizes[v]));
    json_array_insert_new(arr, 0, o);
  }
  return arr;
}

static char *type_copy(const gs_graph *g, uint32_t t) {
  char buf[64];
  return strdup(t == GS_GRAPH_MISSING || t >= g->ntypes ? "(not in the dump)" : gs_graph_type_name(g, t, buf, sizeof buf));
}

static int hold_section(trend *t, const gs_graph *g) {
  gs_retention ret;
  uint8_t *is_type = calloc((size_t)g->ntypes + 1, 1);
  size_t i;
  uint32_t ty;
  char buf[64];
  if (!is_type || gs_retention_build(g, &ret)) { free(is_type); return GS_ENOMEM; }
  for (i = 0; i < t->nsuspects; i++) {
    series *s = t->suspects[i];
    gs_type_group *groups = NULL;
    size_t ngroups = 0;
    uint64_t count, bytes, live;
    int any = 0;
    if (s->held) continue;
    for (ty = 0; ty < g->ntypes; ty++) any |= is_type[ty] = !strcmp(gs_graph_type_name(g, ty, buf, sizeof buf), s->name);
    if (!any) continue;
    if (gs_type_groups(g, &ret, is_type, &groups, &ngroups, &count, &bytes, &live)) { free(is_type); gs_retention_free(&ret); return GS_ENOMEM; }
    if (ngroups) {
      s->held = 1;
      s->root_kind = strdup(gs_root_kind_names[groups[0].root_kind]);
      s->root_type = type_copy(g, groups[0].root_type);
      s->hop_type = type_copy(g, groups[0].hop_type);
      s->held_count = groups[0].count;
      s->held_bytes = groups[0].bytes;
      s->path = path_json(g, &ret, groups[0].example);
    }
    free(groups);
  }
  free(is_type);
  gs_retention_free(&ret);
  return GS_OK;
}

/* ---- stable IDs -------------------------------------------------------- */

static int ends_with_suffix(const char *name, size_t len) {
  size_t n = sizeof STABLE_SUFFIX - 1;
  return len >= n && !memcmp(name + len - n, STABLE_SUFFIX, n);
}

/* A sorted set of object IDs: plain arrays suffice for a few snapshots. */
typedef struct id_list { uint64_t *ids; size_t n, cap; } id_list;

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int in_list(const id_list *l, uint64_t id) {
  return l->n && bsearch(&id, l->ids, l->n, sizeof id, cmp_u64) != NULL;
}

/* The object IDs of one file, sorted; *stable stays 1 only if all its
 * sections say their IDs are stable. */
static int read_ids(const char *path, id_list *l, int *stable) {
  gs_file *f;
  gs_reader *r;
  gs_record rec;
  int code = gs_cli_open_dump(path, &f, &r), err;
  l->n = 0;
  if (code) return code;
  while ((err = gs_reader_next(r, &rec)) == GS_OK) {
    if (rec.kind == GS_REC_SECTION && !ends_with_suffix(rec.name, rec.name_len)) {
      *stable = 0;             /* no object comparison: the IDs are not needed */
      err = GS_EOF;
      break;
    }
    if (rec.kind != GS_REC_OBJECT) continue;
    if (l->n == l->cap) {
      size_t cap = l->cap ? l->cap * 2 : 4096;
      uint64_t *ids = realloc(l->ids, cap * sizeof *ids);
      if (!ids) { err = GS_ENOMEM; break; }
      l->ids = ids;
      l->cap = cap;
    }
    l->ids[l->n++] = rec.id;
  }
  if (err != GS_EOF) code = gs_cli_load_error(f, err, gs_reader_diag(r));
  gs_cli_close_dump(f, r);
  if (!code && l->n) qsort(l->ids, l->n, sizeof *l->ids, cmp_u64);
  return code;
}

/* The IDs of the first file that every later file also has. */
static int alive_in_all(const char *const *paths, int npaths, id_list *alive, int *stable) {
  id_list next = {NULL, 0, 0};
  int f, code;
  size_t i, j, k;
  *stable = 1;
  if ((code = read_ids(paths[0], alive, stable)) || !*stable) return code;
  for (f = 1; f < npaths && *stable && !code; f++) {
    if ((code = read_ids(paths[f], &next, stable))) break;
    for (i = j = k = 0; i < alive->n && j < next.n;) {
      if (alive->ids[i] < next.ids[j]) i++;
      else if (alive->ids[i] > next.ids[j]) j++;
      else { alive->ids[k++] = alive->ids[i++]; j++; }
    }
    alive->n = k;
  }
  free(next.ids);
  return code;
}

/* Counts by type the objects of g alive in every snapshot. */
static int count_survivors(trend *t, const gs_graph *g, const id_list *alive) {
  uint32_t v;
  char buf[64];
  for (v = 0; v < g->nobjects; v++) {
    if (!in_list(alive, g->ids[v])) continue;
    t->survivors++;
    t->survivor_bytes += g->sizes[v];
    if (gs_histo_add(t->survivor_types, gs_graph_type_name(g, g->types[v], buf, sizeof buf), 1, g->sizes[v]))
      return GS_ENOMEM;
  }
  return GS_OK;
}

/* One pass over the last snapshot, a section at a time. */
static int last_snapshot(trend *t, const char *path, const id_list *alive) {
  gs_file *f;
  gs_reader *r;
  int code = gs_cli_open_dump(path, &f, &r);
  while (!code) {
    gs_graph *g = NULL;
    gs_diag d;
    int err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF) break;
    if (err) { code = gs_cli_load_error(f, err, &d); break; }
    err = hold_section(t, g);
    if (!err && t->stable) err = count_survivors(t, g, alive);
    gs_graph_free(g);
    if (err) { gs_cli_error("out of memory"); code = GS_EXIT_USAGE; }
  }
  gs_cli_close_dump(f, r);
  return code;
}

/* ---- output ------------------------------------------------------------ */

static json_t *u64_array(const uint64_t *v, int n) {
  json_t *a = json_array();
  int i;
  for (i = 0; i < n; i++) json_array_append_new(a, gs_json_u64(v[i]));
  return a;
}

static json_t *to_json(const trend *t) {
  json_t *o = json_object(), *files = json_array(), *sus = json_array();
  size_t i;
  int f;
  for (f = 0; f < t->nfiles; f++) {
    json_t *file = json_object();
    gs_json_set(file, "file", gs_json_cstring(t->sums[f].name));
    gs_json_set(file, "objects", gs_json_u64(t->sums[f].total.objects));
    gs_json_set(file, "bytes", gs_json_u64(t->sums[f].total.bytes));
    json_array_append_new(files, file);
  }
  gs_json_set(o, "files", files);
  for (i = 0; i < t->nsuspects; i++) {
    const series *s = t->suspects[i];
    json_t *row = json_object();
    gs_json_set(row, "type", gs_json_cstring(s->name));
    gs_json_set(row, "counts", u64_array(s->count, t->nfiles));
    gs_json_set(row, "bytes", u64_array(s->bytes, t->nfiles));
    gs_json_set(row, "bytes_gained", json_integer(s->gained));
    gs_json_set(row, "grew_every_interval", json_boolean(s->every));
    if (s->held) {
      json_t *h = json_object();
      gs_json_set(h, "root_kind", gs_json_cstring(s->root_kind));
      gs_json_set(h, "root_type", gs_json_cstring(s->root_type));
      gs_json_set(h, "first_hop_type", gs_json_cstring(s->hop_type));
      gs_json_set(h, "objects", gs_json_u64(s->held_count));
      gs_json_set(h, "bytes", gs_json_u64(s->held_bytes));
      gs_json_set(h, "example_path", json_incref(s->path));
      gs_json_set(row, "held_by", h);
    }
    json_array_append_new(sus, row);
  }
  gs_json_set(o, "suspects", sus);
  gs_json_set(o, "stable_ids", json_boolean(t->stable));
  if (t->stable) {
    json_t *alive = json_object(), *types = json_array();
    const gs_histo_row **rows;
    if (!gs_histo_sorted(t->survivor_types, &rows)) {
      for (i = 0; i < gs_histo_size(t->survivor_types); i++) {
        json_t *row = json_object();
        gs_json_set(row, "type", gs_json_cstring(rows[i]->name));
        gs_json_set(row, "count", gs_json_u64(rows[i]->count));
        gs_json_set(row, "bytes", gs_json_u64(rows[i]->bytes));
        json_array_append_new(types, row);
      }
      free(rows);
    }
    gs_json_set(alive, "objects", gs_json_u64(t->survivors));
    gs_json_set(alive, "bytes", gs_json_u64(t->survivor_bytes));
    gs_json_set(alive, "by_type", types);
    gs_json_set(o, "alive_in_every_snapshot", alive);
  }
  return o;
}

static void print_series(const uint64_t *v, int n) {
  int i;
  for (i = 0; i < n; i++) printf("%s%" PRIu64, i ? " -> " : "", v[i]);
}

static void print_text(const trend *t) {
  size_t i, k;
  printf("%d snapshots, %s -> %s\n", t->nfiles, t->sums[0].name, t->sums[t->nfiles - 1].name);
  printf("  Bytes    ");
  for (i = 0; i < (size_t)t->nfiles; i++) printf("%s%" PRIu64, i ? " -> " : "", t->sums[i].total.bytes);
  printf("\n\nLeak suspects (%zu):\n", t->nsuspects);
  for (i = 0; i < t->nsuspects; i++) {
    const series *s = t->suspects[i];
    printf("\n  %zu. %s: %+" PRId64 " bytes%s\n     count ", i + 1, s->name, s->gained,
           s->every ? ", grew in every interval" : "");
    print_series(s->count, t->nfiles);
    printf("\n     bytes ");
    print_series(s->bytes, t->nfiles);
    printf("\n");
    if (!s->held) continue;
    printf("     %" PRIu64 " of them held by a %s root of type %s through %s, e.g.:\n", s->held_count,
           s->root_kind, s->root_type, s->hop_type);
    for (k = 0; k < json_array_size(s->path); k++) {
      json_t *n = json_array_get(s->path, k);
      printf("       %*s%s  %s\n", (int)(2 * k), "", json_string_value(json_object_get(n, "id")),
             json_string_value(json_object_get(n, "type")));
    }
  }
  if (t->stable)
    printf("\nObjects alive in every snapshot (stable IDs): %" PRIu64 " (%" PRIu64 " bytes)\n",
           t->survivors, t->survivor_bytes);
}

/* ---- command ----------------------------------------------------------- */

static int parse_args(int argc, char **argv, trend_args *ta) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  ta->top = DEFAULT_TOP;
  ta->threshold = DEFAULT_THRESHOLD;
  /* Room for the FILEs, or for the snapshots --device fetches. */
  if (!(ta->paths = calloc((size_t)argc + MAX_FILES + 1, sizeof *ta->paths))) return GS_EXIT_USAGE;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("trend", usage, a.error);
    if (k == GS_ARG_OPERAND) { ta->paths[ta->npaths++] = a.value; continue; }
    switch (a.id) {
    case OPT_HELP: ta->help = 1; break;
    case OPT_JSON: ta->json = 1; break;
    case OPT_TOP:
      if (gs_args_parse_count(a.value, UINT32_MAX, &ta->top)) return gs_cli_usage_error("trend", usage, "--top needs a number");
      break;
    case OPT_THRESHOLD:
      if (gs_args_parse_count(a.value, 1000000, &ta->threshold)) return gs_cli_usage_error("trend", usage, "--threshold needs a percentage");
      break;
    case OPT_DEVICE: ta->device = a.value; break;
    case OPT_COLLECTOR: ta->collector = a.value; break;
    case OPT_LAST:
      if (gs_args_parse_count(a.value, MAX_FILES, &ta->last) || ta->last < 2)
        return gs_cli_usage_error("trend", usage, "--last needs a number from 2 to 1000");
      break;
    }
  }
  if (ta->help) return GS_EXIT_OK;
  if (ta->device && ta->npaths) return gs_cli_usage_error("trend", usage, "give FILEs or --device, not both");
  if (ta->device) return GS_EXIT_OK;
  if (ta->npaths < 2) return gs_cli_usage_error("trend", usage, "give at least two snapshots, oldest first");
  if (ta->npaths > MAX_FILES) return gs_cli_usage_error("trend", usage, "at most 1000 snapshots");
  return GS_EXIT_OK;
}

/* --device: fetches the device's last snapshots, oldest first, into a
 * temporary folder and names them as the files to read. */
static int fetch_series(trend_args *ta) {
  const char *url = gs_client_url(ta->collector), *tmp = getenv("TMPDIR");
  char api[300], *dev = gs_http_escape(ta->device);
  gs_http_reply r;
  json_t *rows;
  size_t i, n;
  int code;
  if (!dev) return GS_EXIT_USAGE;
  snprintf(api, sizeof api, "/api/snapshots?device=%s&status=complete&limit=%llu", dev,
           (unsigned long long)(ta->last ? ta->last : 10));
  free(dev);
  code = gs_client_check("trend", url, gs_http_get_json(url, api, &r), &r);
  rows = code ? NULL : json_object_get(r.json, "snapshots");
  n = json_array_size(rows);
  if (!code && n < 2) {
    fprintf(stderr, "gcsnap trend: device %s has %zu complete snapshots at %s; a trend needs 2\n",
            ta->device, n, url);
    code = GS_EXIT_INVALID;
  }
  snprintf(ta->folder, sizeof ta->folder, "%s/gcsnap-trend-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!code && !mkdtemp(ta->folder)) {
    gs_cli_error("cannot make a temporary folder in %s", tmp && *tmp ? tmp : "/tmp");
    code = GS_EXIT_USAGE;
  }
  for (i = 0; !code && i < n; i++) {
    uint64_t id = gs_client_u64(json_array_get(rows, n - 1 - i), "id"), bytes;
    char *path = malloc(strlen(ta->folder) + 32);
    if (!path) { code = GS_EXIT_USAGE; break; }
    sprintf(path, "%s/%llu.gclog.zst", ta->folder, (unsigned long long)id);
    ta->paths[ta->npaths++] = path;
    code = gs_client_fetch("trend", url, id, "zst", path, &bytes);
  }
  gs_http_reply_free(&r);
  return code;
}

static void remove_series(trend_args *ta) {
  int i;
  if (!ta->device) return;
  for (i = 0; i < ta->npaths; i++) {
    unlink(ta->paths[i]);
    free((char *)ta->paths[i]);
  }
  if (ta->folder[0]) rmdir(ta->folder);
}

static void trend_free(trend *t) {
  size_t i;
  int f;
  for (i = 0; i < t->nrows; i++) {
    series *s = &t->rows[i];
    free(s->count); free(s->bytes); free(s->root_kind); free(s->root_type); free(s->hop_type);
    json_decref(s->path);
  }
  free(t->rows);
  free(t->suspects);
  for (f = 0; f < t->nfiles; f++) gs_summary_free(&t->sums[f]);
  free(t->sums);
  gs_histo_free(t->survivor_types);
}

/* The whole analysis of the series into t (freed by trend_free either
 * way); returns the exit code. */
static int analyse_series(trend *t, const char *const *paths, int npaths, uint64_t threshold,
                          uint64_t top) {
  id_list alive = {NULL, 0, 0};
  int code = GS_EXIT_OK;
  if (npaths < 2) return GS_EXIT_USAGE;   /* parse_args asks for two */
  if (!(t->sums = calloc((size_t)npaths, sizeof *t->sums)) || gs_histo_new(&t->survivor_types))
    code = GS_EXIT_USAGE;
  for (; !code && t->nfiles < npaths; t->nfiles++) code = gs_cli_load_summary(paths[t->nfiles], &t->sums[t->nfiles]);
  if (!code && (build_series(t) || rank_suspects(t, threshold, top))) code = GS_EXIT_USAGE;
  if (!code) code = alive_in_all(paths, npaths, &alive, &t->stable);
  if (!code) code = last_snapshot(t, paths[npaths - 1], &alive);
  free(alive.ids);
  return code;
}

int gs_trend_json(const char *const *paths, int npaths, uint64_t threshold, uint64_t top,
                  json_t **out) {
  trend t;
  int code;
  memset(&t, 0, sizeof t);
  *out = NULL;
  if ((code = analyse_series(&t, paths, npaths, threshold, top)) == GS_EXIT_OK &&
      !(*out = to_json(&t))) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  }
  trend_free(&t);
  return code;
}

int gs_cmd_trend(int argc, char **argv) {
  trend_args ta;
  trend t;
  int code;
  memset(&ta, 0, sizeof ta);
  memset(&t, 0, sizeof t);
  if ((code = parse_args(argc, argv, &ta)) != GS_EXIT_OK || ta.help) {
    free(ta.paths);
    return code ? code : gs_cli_help(usage);
  }
  if (ta.device) code = fetch_series(&ta);
  if (!code && ta.json) {
    json_t *o;
    if ((code = gs_trend_json(ta.paths, ta.npaths, ta.threshold, ta.top, &o)) == GS_EXIT_OK &&
        gs_json_print(o))
      code = GS_EXIT_USAGE;
    json_decref(o);
  } else if (!code && (code = analyse_series(&t, ta.paths, ta.npaths, ta.threshold, ta.top)) == GS_EXIT_OK) {
    print_text(&t);
  }
  trend_free(&t);
  remove_series(&ta);
  free(ta.paths);
  return gs_cli_finish(code);
}
