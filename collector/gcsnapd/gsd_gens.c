/* gsd_gens.c - generation ranges received with a snapshot, written beside
 * its file once it is stored (gsd_gens.h). The text format has no record
 * for them, and a side file keeps the snapshot's bytes those of the
 * canonical dump. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_gens.h"

typedef struct range { uint64_t section, start, used, reserved; unsigned generation; } range;

struct gsd_gens {
  range r[GSD_GENS_MAX];
  size_t n;
  uint64_t dropped;
};

int gsd_gens_add(gsd_gens **g, uint64_t section, const Gcsnap__GenerationRanges *r) {
  size_t i;
  if (!*g && !(*g = calloc(1, sizeof **g))) return GS_ENOMEM;
  for (i = 0; i < r->n_ranges; i++) {
    range *x;
    if ((*g)->n == GSD_GENS_MAX) { (*g)->dropped++; continue; }
    x = &(*g)->r[(*g)->n++];
    x->section = section;
    x->generation = r->ranges[i]->generation;
    x->start = r->ranges[i]->start;
    x->used = r->ranges[i]->used;
    x->reserved = r->ranges[i]->reserved;
  }
  return GS_OK;
}

static json_t *to_json(const gsd_gens *g) {
  json_t *o = json_object(), *a = json_array();
  char hex[24];
  size_t i;
  if (!o || !a) { json_decref(o); json_decref(a); return NULL; }
  for (i = 0; i < g->n; i++) {
    snprintf(hex, sizeof hex, "%" PRIx64, g->r[i].start);
    if (json_array_append_new(a, json_pack("{s:o,s:i,s:s,s:o,s:o}", "section", gs_json_u64(g->r[i].section),
                                           "generation", (int)g->r[i].generation, "start", hex,
                                           "used", gs_json_u64(g->r[i].used),
                                           "reserved", gs_json_u64(g->r[i].reserved)))) {
      json_decref(a);
      json_decref(o);
      return NULL;
    }
  }
  gs_json_set(o, "format", json_string("gcsnap-generations/1"));
  gs_json_set(o, "dropped", gs_json_u64(g->dropped));
  gs_json_set(o, "ranges", a);
  return o;
}

int gsd_gens_write(const gsd_gens *g, const char *snapshot_path) {
  size_t n = strlen(snapshot_path) + 32;
  char *path = malloc(n), *tmp = malloc(n);
  json_t *o = g ? to_json(g) : NULL;
  int err = GS_OK;
  if (!g) { free(path); free(tmp); return GS_OK; }
  if (!path || !tmp || !o) err = GS_ENOMEM;
  else {
    snprintf(path, n, "%s.gens.json", snapshot_path);
    snprintf(tmp, n, "%s.gens.json.tmp", snapshot_path);
    if (json_dump_file(o, tmp, JSON_COMPACT) != 0 || rename(tmp, path) != 0) {
      unlink(tmp);
      err = GS_EIO;
    }
  }
  json_decref(o);
  free(path);
  free(tmp);
  return err;
}

void gsd_gens_free(gsd_gens *g) { free(g); }
