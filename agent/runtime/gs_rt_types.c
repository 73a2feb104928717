/* gs_rt_types.c - the type registry: names, sizes and reference maps.
 *
 * A type ID is an index into rt->types, so the collector finds an object's
 * reference fields with one load. IDs are dense and start at 1; 0 is free
 * space in the heap. */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_rt_int.h"

#define TYPE_MAX_BODY ((size_t)1 << 30)

static int check_name(const char *name) {
  const unsigned char *p = (const unsigned char *)name;
  if (!name || !*name) return GS_EINVAL;
  for (; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return GS_EINVAL;   /* one record per line */
  return GS_OK;
}

static int check_desc(const gs_rt_type_desc *d) {
  size_t i;
  if (check_name(d->name)) return GS_EINVAL;
  switch (d->kind) {
  case GS_RT_INSTANCE:
    if (d->body > TYPE_MAX_BODY || (d->nrefs && !d->refs)) return GS_EINVAL;
    for (i = 0; i < d->nrefs; i++)
      if (d->refs[i] % sizeof(gs_rt_obj *) ||
          d->refs[i] + sizeof(gs_rt_obj *) > d->body) return GS_EINVAL;
    return GS_OK;
  case GS_RT_REF_ARRAY:
    return GS_OK;
  case GS_RT_DATA_ARRAY:
    return d->body >= 1 && d->body <= 64 ? GS_OK : GS_EINVAL;
  }
  return GS_EINVAL;
}

static int grow_types(gs_rt *rt) {
  uint32_t cap = rt->types_cap ? rt->types_cap * 2 : 32;
  gs_rt_type *t = realloc(rt->types, cap * sizeof *t);
  if (!t) return GS_ENOMEM;
  memset(t + rt->types_cap, 0, (cap - rt->types_cap) * sizeof *t);
  rt->types = t;
  rt->types_cap = cap;
  return GS_OK;
}

int gs_rt_type_new(gs_rt *rt, const gs_rt_type_desc *d, uint32_t *id) {
  gs_rt_type *t;
  size_t i, len;
  int err;
  if (!d || check_desc(d)) return GS_EINVAL;
  if (rt->ntypes + 1 >= rt->types_cap && (err = grow_types(rt))) return err;
  t = &rt->types[rt->ntypes + 1];
  len = strlen(d->name);
  if (!(t->name = malloc(len + 1))) return GS_ENOMEM;
  memcpy(t->name, d->name, len + 1);
  t->name_len = len;
  t->kind = d->kind;
  t->flags = d->flags;
  t->nrefs = 0;
  t->refs = NULL;
  t->elem = 0;
  if (d->kind == GS_RT_INSTANCE) {
    t->size = GS_RT_ALIGN(sizeof(gs_rt_obj) + d->body);
    if (d->nrefs && !(t->refs = malloc(d->nrefs * sizeof *t->refs))) {
      free(t->name);
      t->name = NULL;
      return GS_ENOMEM;
    }
    for (i = 0; i < d->nrefs; i++)
      t->refs[i] = (uint32_t)(sizeof(gs_rt_obj) + d->refs[i]);
    t->nrefs = d->nrefs;
  } else {
    t->size = sizeof(gs_rt_array);
    t->elem = d->kind == GS_RT_REF_ARRAY ? sizeof(gs_rt_obj *) : d->body;
  }
  *id = ++rt->ntypes;
  return GS_OK;
}

const char *gs_rt_type_name(const gs_rt *rt, uint32_t id) {
  return id >= 1 && id <= rt->ntypes ? rt->types[id].name : NULL;
}

uint32_t gs_rt_type_count(const gs_rt *rt) { return rt->ntypes; }

int gs_rt_types_init(gs_rt *rt) {
  static const size_t domain_refs[] = {offsetof(gs_rt_appdomain_body, friendly_name)};
  static const size_t exc_refs[] = {offsetof(gs_rt_exception_body, message),
                                    offsetof(gs_rt_exception_body, inner),
                                    offsetof(gs_rt_exception_body, stack_trace)};
  const gs_rt_type_desc builtin[] = {
    {"System.String", GS_RT_DATA_ARRAY, 2, NULL, 0, 0},
    {"System.Byte[]", GS_RT_DATA_ARRAY, 1, NULL, 0, 0},
    {"System.Object[]", GS_RT_REF_ARRAY, 0, NULL, 0, 0},
    {"System.AppDomain", GS_RT_INSTANCE, sizeof(gs_rt_appdomain_body), domain_refs, 1, 0},
    {"System.OutOfMemoryException", GS_RT_INSTANCE, sizeof(gs_rt_exception_body), exc_refs, 3, 0},
  };
  size_t i;
  uint32_t id;
  int err;
  for (i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
    if ((err = gs_rt_type_new(rt, &builtin[i], &id))) return err;
  return GS_OK;
}

void gs_rt_types_free(gs_rt *rt) {
  uint32_t i;
  for (i = 1; i <= rt->ntypes; i++) {
    free(rt->types[i].name);
    free(rt->types[i].refs);
  }
  free(rt->types);
  rt->types = NULL;
  rt->ntypes = rt->types_cap = 0;
}
