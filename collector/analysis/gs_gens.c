/* gs_gens.c - a dump broken down by generation, a section at a time: each
 * object is placed by its address among the section's ranges (a sorted
 * array, binary search), and counted in its generation's totals and type
 * histogram. The sections come from a load of the dump's own, or from the
 * load of the summary being made of it. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_diff.h"
#include "gs_error.h"
#include "gs_genfile.h"
#include "gs_gens.h"
#include "gs_graph.h"
#include "gs_histo.h"
#include "gs_json.h"

#define NGEN 6                       /* 0, 1, 2, loh, poh (pinned objects), unknown */
#define MAX_RANGES GS_GENFILE_MAX
static const char *const gen_names[NGEN] = {"0", "1", "2", "loh", "poh", "unknown"};

typedef struct range { uint64_t section, start, end; unsigned gen; } range;

struct gs_gens {
  range r[MAX_RANGES];
  size_t n;
  uint64_t sections;                 /* sections counted so far */
  uint64_t objects[NGEN], bytes[NGEN];
  gs_histo *types[NGEN];
};

static int by_section_start(const void *a, const void *b) {
  const range *x = a, *y = b;
  if (x->section != y->section) return x->section < y->section ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start;
}

/* The ranges of the file at path; GS_EFORMAT when it is not a ranges file. */
static int load_ranges(gs_gens *gs, const char *path) {
  json_error_t e;
  json_t *o = json_load_file(path, 0, &e), *r;
  const char *format;
  size_t i;
  if (!o) return GS_EIO;
  format = json_string_value(json_object_get(o, "format"));
  if (!format || strcmp(format, "gcsnap-generations/1") || json_array_size(json_object_get(o, "ranges")) > MAX_RANGES) {
    json_decref(o);
    return GS_EFORMAT;
  }
  json_array_foreach(json_object_get(o, "ranges"), i, r) {
    const char *start = json_string_value(json_object_get(r, "start"));
    range *x = &gs->r[gs->n];
    json_int_t g = json_integer_value(json_object_get(r, "generation"));
    if (!start || g < 0 || g > 4) continue;
    x->section = (uint64_t)json_integer_value(json_object_get(r, "section"));
    x->start = strtoull(start, NULL, 16);
    x->end = x->start + (uint64_t)json_integer_value(json_object_get(r, "used"));
    x->gen = (unsigned)g;
    if (x->end > x->start) gs->n++;
  }
  json_decref(o);
  qsort(gs->r, gs->n, sizeof *gs->r, by_section_start);
  return GS_OK;
}

/* The generation of address id in section s (NGEN - 1 when none). */
static unsigned gen_of(const gs_gens *gs, uint64_t s, uint64_t id) {
  size_t lo = 0, hi = gs->n;
  while (lo < hi) {           /* the first range after (s, id) */
    size_t mid = lo + (hi - lo) / 2;
    const range *x = &gs->r[mid];
    if (x->section < s || (x->section == s && x->start <= id)) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NGEN - 1;
  lo--;
  return gs->r[lo].section == s && id < gs->r[lo].end ? gs->r[lo].gen : NGEN - 1;
}

typedef struct tally { uint64_t count, bytes; } tally;

/* Each generation's objects are counted by type index, and each type named
 * once: naming and hashing a name per object took longer than loading. */
int gs_gens_each_graph(void *gs, const gs_graph *g) { return gs_gens_add(gs, g); }

int gs_gens_add(gs_gens *gs, const gs_graph *g) {
  uint64_t s = gs->sections++;
  tally *t = calloc((size_t)NGEN * g->ntypes + 1, sizeof *t);
  char buf[64];
  uint32_t v;
  size_t i;
  int err = t ? GS_OK : GS_ENOMEM;
  for (v = 0; !err && v < g->nobjects; v++) {
    unsigned k = gen_of(gs, s, g->ids[v]);
    tally *c;
    assert(g->types[v] < g->ntypes);
    c = &t[(size_t)k * g->ntypes + g->types[v]];
    gs->objects[k]++;
    gs->bytes[k] += g->sizes[v];
    c->count++;
    c->bytes += g->sizes[v];
  }
  for (i = 0; !err && i < (size_t)NGEN * g->ntypes; i++)
    if (t[i].count)
      err = gs_histo_add(gs->types[i / g->ntypes],
                         gs_graph_type_name(g, (uint32_t)(i % g->ntypes), buf, sizeof buf),
                         t[i].count, t[i].bytes);
  free(t);
  return err;
}

static int each_section(gs_gens *gs, const char *dump, gs_file_fault *fault) {
  gs_file *f;
  gs_reader *r;
  int err = gs_file_open_dump(dump, &f, &r, fault);
  while (!err) {
    gs_graph *g = NULL;
    gs_diag d;
    err = gs_graph_load(r, &g, &d);
    if (err == GS_EOF) { err = GS_OK; break; }
    if (err) { gs_file_fault_set(fault, f, err, &d); break; }
    err = gs_gens_add(gs, g);
    gs_graph_free(g);
    if (err) gs_file_fault_text(fault, gs_file_name(f), err, NULL);
  }
  gs_file_close_dump(f, r);
  return err;
}

static json_t *gen_json(const gs_gens *gs, unsigned k, uint64_t top) {
  const gs_histo_row **rows;
  json_t *o = json_object(), *types = json_array();
  size_t i;
  if (!o || !types || gs_histo_sorted(gs->types[k], &rows)) { json_decref(o); json_decref(types); return NULL; }
  for (i = 0; i < gs_histo_size(gs->types[k]) && (!top || i < top); i++)
    json_array_append_new(types, json_pack("{s:s,s:o,s:o}", "type", rows[i]->name, "count",
                                           gs_json_u64(rows[i]->count), "bytes", gs_json_u64(rows[i]->bytes)));
  free(rows);
  gs_json_set(o, "generation", json_string(gen_names[k]));
  gs_json_set(o, "objects", gs_json_u64(gs->objects[k]));
  gs_json_set(o, "bytes", gs_json_u64(gs->bytes[k]));
  gs_json_set(o, "types", types);
  return o;
}

int gs_gens_start(const char *gens_path, gs_gens **out, gs_file_fault *fault) {
  gs_gens *gs = calloc(1, sizeof *gs);
  unsigned k;
  int err = gs ? GS_OK : GS_ENOMEM;
  *out = NULL;
  for (k = 0; !err && k < NGEN; k++) err = gs_histo_new(&gs->types[k]);
  if (!err && (err = load_ranges(gs, gens_path)) != GS_OK)
    gs_file_fault_text(fault, gens_path, err, err == GS_EFORMAT ? "not a generation ranges file" : NULL);
  else if (err)
    gs_file_fault_text(fault, NULL, err, NULL);
  if (err) gs_gens_free(gs);
  else *out = gs;
  return err;
}

int gs_gens_start_beside(const char *dump, gs_gens **out, gs_file_fault *fault) {
  char *path = gs_genfile_path(dump);
  int err = GS_OK;
  *out = NULL;
  if (!path) return gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  if (access(path, F_OK) == 0) err = gs_gens_start(path, out, fault);
  free(path);
  return err;
}

void gs_gens_free(gs_gens *gs) {
  unsigned k;
  for (k = 0; gs && k < NGEN; k++) gs_histo_free(gs->types[k]);
  free(gs);
}

/* Narrows sum to generation 2 and the large and pinned object heaps of
 * gs: the long-lived objects, where leaks live. */
static int narrow(gs_summary *sum, const gs_gens *gs) {
  const gs_histo_row **rows;
  gs_histo *old;
  size_t i;
  unsigned k;
  int err = gs_histo_new(&old);
  sum->total.objects = sum->total.bytes = 0;
  for (k = 2; !err && k <= 4; k++) {
    sum->total.objects += gs->objects[k];
    sum->total.bytes += gs->bytes[k];
    if ((err = gs_histo_sorted(gs->types[k], &rows)) != GS_OK) break;
    for (i = 0; !err && i < gs_histo_size(gs->types[k]); i++)
      err = gs_histo_add(old, rows[i]->name, rows[i]->count, rows[i]->bytes);
    free(rows);
  }
  if (err) {
    gs_histo_free(old);
    return err;
  }
  gs_histo_free(sum->total.by_type);
  sum->total.by_type = old;
  return GS_OK;
}

/* Loads sum with gs (NULL: none) counting the generations, and narrows
 * it when old_only. */
static int load_counted(gs_summary *sum, const char *dump, gs_gens *gs, int old_only,
                        gs_file_fault *fault) {
  /* Its callers read the totals only. */
  int err = gs_summary_load_file_each(sum, dump, GS_SUMMARY_TOP, gs ? gs_gens_each_graph : NULL, gs,
                                      fault);
  if (!err && old_only && gs && (err = narrow(sum, gs)) != GS_OK) gs_file_fault_text(fault, NULL, err, NULL);
  return err;
}

int gs_gens_load_summary(gs_summary *sum, const char *dump, int old_only, gs_gens **out,
                         gs_file_fault *fault) {
  char *path = old_only ? gs_genfile_path(dump) : NULL;
  int err;
  if (old_only && !path) err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  else err = old_only ? gs_gens_start(path, out, fault) : gs_gens_start_beside(dump, out, fault);
  free(path);
  if (err) {
    gs_summary_init(sum, gs_file_display_name(dump), GS_SUMMARY_TOP);
    return err;
  }
  if ((err = load_counted(sum, dump, *out, old_only, fault)) != GS_OK) {
    gs_gens_free(*out);
    *out = NULL;
  }
  return err;
}

json_t *gs_gens_result(const gs_gens *gs, uint64_t top) {
  json_t *o = json_object(), *a = json_array();
  unsigned k;
  int bad = !o || !a;
  for (k = 0; !bad && k < NGEN; k++) bad = json_array_append_new(a, gen_json(gs, k, top)) != 0;
  bad = bad || gs_json_set(o, "ranges", gs_json_u64(gs->n)) ||
        gs_json_set(o, "generations", json_incref(a));
  json_decref(a);
  return gs_json_unless(o, bad);
}

int gs_gens_json(const char *dump, const char *gens_path, uint64_t top, json_t **out,
                 gs_file_fault *fault) {
  gs_gens *gs;
  int err = gs_gens_start(gens_path, &gs, fault);
  *out = NULL;
  if (!err) err = each_section(gs, dump, fault);
  if (!err && !(*out = gs_gens_result(gs, top))) err = gs_file_fault_text(fault, NULL, GS_ENOMEM, NULL);
  gs_gens_free(gs);
  return err;
}

static json_t *change_json(const gs_gens *before, const gs_gens *after, unsigned k) {
  json_t *o = json_object();
  uint64_t ob = before->objects[k], oa = after->objects[k];
  uint64_t bb = before->bytes[k], ba = after->bytes[k];
  int bad = !o || gs_json_set(o, "generation", json_string(gen_names[k])) ||
            gs_json_set(o, "objects_before", gs_json_u64(ob)) ||
            gs_json_set(o, "objects_after", gs_json_u64(oa)) ||
            gs_json_set(o, "objects_change", json_integer(gs_diff_change(ob, oa))) ||
            gs_json_set(o, "bytes_before", gs_json_u64(bb)) ||
            gs_json_set(o, "bytes_after", gs_json_u64(ba)) ||
            gs_json_set(o, "bytes_change", json_integer(gs_diff_change(bb, ba)));
  return gs_json_unless(o, bad);
}

int gs_gens_diff_of(json_t *diff, const gs_gens *before, const gs_gens *after) {
  json_t *a;
  unsigned k;
  int bad;
  if (!before || !after) return GS_OK;
  bad = !(a = json_array());
  for (k = 0; !bad && k < NGEN; k++) bad = json_array_append_new(a, change_json(before, after, k)) != 0;
  if (bad) {
    json_decref(a);
    return GS_ENOMEM;
  }
  return gs_json_set(diff, "generations", a) ? GS_ENOMEM : GS_OK;
}
