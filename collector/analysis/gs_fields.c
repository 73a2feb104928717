/* gs_fields.c - static roots' field names from a dump's side file (see
 * gs_fields.h): read once with jansson, kept sorted by section and object
 * for a binary search, the names copied out. */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "gs_error.h"
#include "gs_fields.h"
#include "gs_genfile.h"

typedef struct field {
  uint64_t section, object;
  char *name;
} field;

struct gs_fields {
  field *f;
  size_t n;
};

static int by_place(const void *a, const void *b) {
  const field *x = a, *y = b;
  if (x->section != y->section) return x->section < y->section ? -1 : 1;
  return x->object < y->object ? -1 : x->object > y->object;
}

/* The "statics" array of a side file into fs; GS_OK or GS_ENOMEM. */
static int take(gs_fields *fs, json_t *statics) {
  json_t *s;
  size_t i;
  if (!(fs->f = calloc(json_array_size(statics) + 1, sizeof *fs->f))) return GS_ENOMEM;
  json_array_foreach(statics, i, s) {
    const char *object = json_string_value(json_object_get(s, "object"));
    const char *name = json_string_value(json_object_get(s, "field"));
    field *x = &fs->f[fs->n];
    if (!object || !name) continue;
    if (!(x->name = strdup(name))) return GS_ENOMEM;
    x->section = (uint64_t)json_integer_value(json_object_get(s, "section"));
    x->object = strtoull(object, NULL, 16);
    fs->n++;
  }
  qsort(fs->f, fs->n, sizeof *fs->f, by_place);
  return GS_OK;
}

int gs_fields_load(gs_fields **out, const char *path) {
  char *side = gs_genfile_path(path);
  json_t *o, *statics;
  gs_fields *fs;
  *out = NULL;
  if (!side) return GS_ENOMEM;
  o = json_load_file(side, 0, NULL);
  free(side);
  statics = json_object_get(o, "statics");
  if (!json_array_size(statics)) {
    json_decref(o);
    return GS_OK;
  }
  if (!(fs = calloc(1, sizeof *fs)) || take(fs, statics) != GS_OK) {
    json_decref(o);
    gs_fields_free(fs);
    return GS_ENOMEM;
  }
  json_decref(o);
  *out = fs;
  return GS_OK;
}

const char *gs_fields_name(const gs_fields *f, uint64_t section, uint64_t object) {
  size_t lo = 0, hi = f ? f->n : 0;
  field key;
  key.section = section;
  key.object = object;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = by_place(&f->f[mid], &key);
    if (c == 0) return f->f[mid].name;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

void gs_fields_free(gs_fields *f) {
  size_t i;
  if (!f) return;
  for (i = 0; i < f->n; i++) free(f->f[i].name);
  free(f->f);
  free(f);
}
