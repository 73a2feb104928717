/* gs_trend.c - leak suspects across a series of snapshots.
 *
 * Snapshots of one application, oldest first. A type is a suspect when its
 * instance count grew in every interval, or when its bytes grew by more
 * than a threshold from the first snapshot to the last; suspects are ranked
 * by bytes gained. For each, the last snapshot says what holds its
 * instances: the group of roots and first hops that keeps most of them
 * alive, with the shortest path of one instance. When every snapshot was
 * taken with stable object IDs (sections named "... [stable-ids]"), the
 * objects alive in all of them are counted too: what was never freed. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gs_paths.h"
#include "gs_retainers.h"
#include "gs_gens.h"
#include "gs_trend.h"

#define STABLE_SUFFIX " [stable-ids]"

/* ---- series ------------------------------------------------------------ */

typedef struct tagged { const char *name; int file; uint64_t count, bytes; } tagged;

static int by_name_then_file(const void *a, const void *b) {
  const tagged *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : x->file - y->file;
}

static int by_gain(const void *a, const void *b) {
  const gs_trend_series *x = *(gs_trend_series *const *)a, *y = *(gs_trend_series *const *)b;
  if (x->gained != y->gained) return x->gained < y->gained ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* One row per type name seen in any snapshot. */
static int build_series(gs_trend *t) {
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
    gs_trend_series *s = &t->rows[t->nrows++];
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

int gs_trend_suspect(const uint64_t *count, const uint64_t *bytes, int n, uint64_t threshold,
                     int *every) {
  uint64_t first = bytes[0], last = bytes[n - 1];
  int f;
  *every = 1;
  for (f = 1; f < n; f++) *every &= count[f] > count[f - 1];
  if (count[n - 1] <= count[0] || last <= first) return *every;
  return *every || first == 0 || (last - first) * 100 > threshold * first;
}

static int is_suspect(gs_trend_series *s, int nfiles, uint64_t threshold) {
  /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): build_series filled every row */
  s->gained = (int64_t)(s->bytes[nfiles - 1] - s->bytes[0]);
  return gs_trend_suspect(s->count, s->bytes, nfiles, threshold, &s->every);
}

static int rank_suspects(gs_trend *t, uint64_t threshold, uint64_t top) {
  size_t i;
  if (!(t->suspects = malloc((t->nrows ? t->nrows : 1) * sizeof *t->suspects))) return GS_ENOMEM;
  for (i = 0; i < t->nrows; i++)
    if (is_suspect(&t->rows[i], t->nfiles, threshold)) t->suspects[t->nsuspects++] = &t->rows[i];
  qsort(t->suspects, t->nsuspects, sizeof *t->suspects, by_gain);
  if (top && t->nsuspects > top) t->nsuspects = (size_t)top;
  return GS_OK;
}

/* ---- what holds each suspect in the last snapshot ---------------------- */

/* The path from the root that reaches v first, its middle left out. */
static json_t *path_json(const gs_graph *g, const gs_retention *ret, uint32_t v) {
  uint32_t ends[2 * GS_PATH_ENDS + 1], u;
  size_t len = 0, n = 0, elided, i, k;
  for (u = v; u != GS_PATH_NONE; u = ret->parent[u]) len++;
  elided = gs_path_elided(len);
  /* Walked from v back to the root: keep the last ends, then the first. */
  for (u = v, i = len; u != GS_PATH_NONE; u = ret->parent[u], i--)
    if (i <= GS_PATH_ENDS || i > GS_PATH_ENDS + elided) ends[n++] = u;
  for (k = 0; k < n / 2; k++) { u = ends[k]; ends[k] = ends[n - 1 - k]; ends[n - 1 - k] = u; }
  return gs_path_json(g, ends, n, elided);
}

static char *type_copy(const gs_graph *g, uint32_t t) {
  char buf[64];
  return strdup(t == GS_GRAPH_MISSING || t >= g->ntypes ? "(not in the dump)" : gs_graph_type_name(g, t, buf, sizeof buf));
}

/* The field of the static root that reaches v first, as the dump's side
 * file names it (NULL: another kind of root, or no name). */
static char *field_copy(const gs_graph *g, const gs_retention *ret, uint32_t v,
                        const gs_retainers_at *at) {
  const char *name;
  if (ret->root[v] == GS_PATH_NONE || g->roots[ret->root[v]].kind != GS_ROOT_STATIC) return NULL;
  name = gs_retainers_field(at, g, g->roots[ret->root[v]].node);
  return name ? strdup(name) : NULL;
}

static int hold_section(gs_trend *t, const gs_graph *g, const gs_retainers_at *at) {
  gs_retention ret;
  uint8_t *is_type = calloc((size_t)g->ntypes + 1, 1);
  size_t i;
  uint32_t ty;
  char buf[64];
  if (!is_type || gs_retention_build(g, &ret)) { free(is_type); return GS_ENOMEM; }
  for (i = 0; i < t->nsuspects; i++) {
    gs_trend_series *s = t->suspects[i];
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
      s->root_flags = groups[0].root_flags;
      s->root_type = type_copy(g, groups[0].root_type);
      s->hop_type = type_copy(g, groups[0].hop_type);
      s->held_count = groups[0].count;
      s->held_bytes = groups[0].bytes;
      s->path = path_json(g, &ret, groups[0].example);
      s->root_field = field_copy(g, &ret, groups[0].example, at);
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
static int read_ids(const char *path, id_list *l, int *stable, gs_file_fault *fault) {
  gs_file *f;
  gs_reader *r;
  gs_record rec;
  int code = gs_file_open_dump(path, &f, &r, fault), err;
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
  if (err != GS_EOF) code = gs_file_fault_set(fault, f, err, gs_reader_diag(r));
  gs_file_close_dump(f, r);
  if (!code && l->n) qsort(l->ids, l->n, sizeof *l->ids, cmp_u64);
  return code;
}

/* The IDs of the first file that every later file also has. */
static int alive_in_all(const char *const *paths, int npaths, id_list *alive, int *stable,
                        gs_file_fault *fault) {
  id_list next = {NULL, 0, 0};
  int f, code;
  size_t i, j, k;
  *stable = 1;
  if ((code = read_ids(paths[0], alive, stable, fault)) || !*stable) return code;
  for (f = 1; f < npaths && *stable && !code; f++) {
    if ((code = read_ids(paths[f], &next, stable, fault))) break;
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
static int count_survivors(gs_trend *t, const gs_graph *g, const id_list *alive) {
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
static int last_snapshot(gs_trend *t, const char *path, const id_list *alive,
                         gs_file_fault *fault) {
  gs_file *f;
  gs_reader *r;
  gs_fields *fields = NULL;
  gs_retainers_at at;
  int code = gs_file_open_dump(path, &f, &r, fault);
  if (!code && gs_fields_load(&fields, path)) code = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  at.section = 0;
  at.fields = fields;
  while (!code) {
    gs_graph *g = NULL;
    gs_diag d;
    int err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF) break;
    if (err) { code = gs_file_fault_set(fault, f, err, &d); break; }
    err = hold_section(t, g, &at);
    at.section++;
    if (!err && t->stable) err = count_survivors(t, g, alive);
    gs_graph_free(g);
    if (err) code = gs_file_fault_text(fault, NULL, err, NULL);
  }
  gs_file_close_dump(f, r);
  gs_fields_free(fields);
  return code;
}

static json_t *u64_array(const uint64_t *v, int n) {
  json_t *a = json_array();
  int i;
  for (i = 0; i < n; i++) json_array_append_new(a, gs_json_u64(v[i]));
  return a;
}

json_t *gs_trend_json(const gs_trend *t) {
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
    const gs_trend_series *s = t->suspects[i];
    json_t *row = json_object();
    gs_json_set(row, "type", gs_json_cstring(s->name));
    gs_json_set(row, "counts", u64_array(s->count, t->nfiles));
    gs_json_set(row, "bytes", u64_array(s->bytes, t->nfiles));
    gs_json_set(row, "bytes_gained", json_integer(s->gained));
    gs_json_set(row, "grew_every_interval", json_boolean(s->every));
    if (s->held) {
      json_t *h = json_object();
      gs_json_set(h, "root_kind", gs_json_cstring(s->root_kind));
      gs_json_set(h, "root_flags", gs_json_u64(s->root_flags));
      gs_json_set(h, "root_type", gs_json_cstring(s->root_type));
      if (s->root_field) gs_json_set(h, "root_field", gs_json_cstring(s->root_field));
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

void gs_trend_free(gs_trend *t) {
  size_t i;
  int f;
  for (i = 0; i < t->nrows; i++) {
    gs_trend_series *s = &t->rows[i];
    free(s->count); free(s->bytes); free(s->root_kind); free(s->root_type); free(s->root_field); free(s->hop_type);
    json_decref(s->path);
  }
  free(t->rows);
  free(t->suspects);
  for (f = 0; f < t->nfiles; f++) gs_summary_free(&t->sums[f]);
  free(t->sums);
  gs_histo_free(t->survivor_types);
}

/* The summary of the file at path, narrowed to its long-lived objects when
 * old_only. */
static int load_summary(gs_summary *sum, const char *path, int old_only, gs_file_fault *fault) {
  gs_gens *gens = NULL;
  int err;
  if (!old_only) return gs_summary_load_file(sum, path, GS_SUMMARY_TOP, fault);
  err = gs_gens_load_summary(sum, path, 1, &gens, fault);
  gs_gens_free(gens);
  return err;
}

int gs_trend_analyse(gs_trend *t, const char *const *paths, int npaths, int old_only,
                     uint64_t threshold, uint64_t top, gs_file_fault *fault) {
  id_list alive = {NULL, 0, 0};
  int err = GS_OK;
  assert(npaths >= 2);
  memset(t, 0, sizeof *t);
  if (!(t->sums = calloc((size_t)npaths, sizeof *t->sums)) || gs_histo_new(&t->survivor_types))
    err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  for (; !err && t->nfiles < npaths; t->nfiles++)
    err = load_summary(&t->sums[t->nfiles], paths[t->nfiles], old_only, fault);
  if (!err && (build_series(t) || rank_suspects(t, threshold, top)))
    err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  if (!err) err = alive_in_all(paths, npaths, &alive, &t->stable, fault);
  if (!err) err = last_snapshot(t, paths[npaths - 1], &alive, fault);
  free(alive.ids);
  return err;
}
