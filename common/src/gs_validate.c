/* gs_validate.c - validator of the RPM GC heap dump record format.
 *
 * Syntax is the reader's job; this file checks what spans records: section
 * structure, unique object IDs, consistent type names, and (at the end of
 * each section) references, roots and types that name nothing in the dump.
 *
 * Object IDs go into a gs_idset, whose bitmaps stay in the processor cache
 * even for millions of objects. A reference to an object not yet defined is
 * remembered (once per ID, with the line of its first mention) and settled
 * when the section ends, since the object may still come. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_idmap.h"
#include "gs_idset.h"
#include "gs_validate.h"

#define TYPE_DEFINED    1u     /* type bits */
#define TYPE_USED       2u

typedef struct type_info { uint64_t first_use; size_t name_off, name_len; } type_info;
typedef struct late_diag { uint64_t line; uint64_t id; gs_diag_code code; } late_diag;
typedef struct first_ref { uint64_t line; uint64_t id; } first_ref;

struct gs_validator {
  gs_diag_fn fn;
  void *ctx;
  gs_validate_counts counts;
  int in_section, ever_section;
  uint64_t section_line;
  char *section_name;
  size_t section_name_len;
  gs_idset defined;           /* objects of this section */
  gs_idset forward;           /* IDs referenced before (or without) their object */
  first_ref *refs;            /* first such reference to each, checked at the end */
  size_t nrefs, refs_cap;
  gs_idmap types;             /* value: index into type_infos */
  type_info *type_infos;
  size_t ntypes, types_cap;
  char *names;                /* type names of this section, back to back */
  size_t names_len, names_cap;
  late_diag *roots;           /* roots of this section, checked at its end */
  size_t nroots, roots_cap;
};


/* ---- diagnostics ----------------------------------------------------- */

static void emit(gs_validator *v, gs_diag_code code, uint64_t line, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 4, 5)))
#endif
  ;

static void emit(gs_validator *v, gs_diag_code code, uint64_t line, const char *fmt, ...) {
  gs_diag d;
  va_list ap;
  d.code = code;
  d.line = line;
  va_start(ap, fmt);
  vsnprintf(d.message, sizeof d.message, fmt, ap);
  va_end(ap);
  gs_validator_report(v, &d);
}

void gs_validator_report(gs_validator *v, const gs_diag *d) {
  if (gs_diag_severity(d->code) == GS_SEV_ERROR) v->counts.errors++;
  else v->counts.warnings++;
  if (v->fn) v->fn(v->ctx, d);
}

/* ---- lifetime -------------------------------------------------------- */

int gs_validator_new(gs_validator **out, gs_diag_fn fn, void *ctx) {
  gs_validator *v = calloc(1, sizeof *v);
  if (!v) return GS_ENOMEM;
  v->fn = fn;
  v->ctx = ctx;
  if (gs_idset_init(&v->defined) || gs_idset_init(&v->forward) ||
      gs_idmap_init(&v->types, 256)) {
    gs_validator_free(v);
    return GS_ENOMEM;
  }
  *out = v;
  return GS_OK;
}

void gs_validator_free(gs_validator *v) {
  if (!v) return;
  gs_idset_free(&v->defined);
  gs_idset_free(&v->forward);
  free(v->refs);
  gs_idmap_free(&v->types);
  free(v->type_infos);
  free(v->names);
  free(v->roots);
  free(v->section_name);
  free(v);
}

const gs_validate_counts *gs_validator_counts(const gs_validator *v) { return &v->counts; }

/* ---- objects and references ----------------------------------------- */

static int use_type(gs_validator *v, uint64_t id, uint64_t line);

static int check_reference(gs_validator *v, uint64_t id, uint64_t line) {
  first_ref *d;
  int added;
  if (gs_idset_has(&v->defined, id)) return GS_OK;
  if ((added = gs_idset_add(&v->forward, id)) <= 0) return added;
  if (gs_array_reserve((void **)&v->refs, &v->refs_cap, v->nrefs + 1, sizeof *v->refs))
    return GS_ENOMEM;
  d = &v->refs[v->nrefs++];
  d->line = line;
  d->id = id;
  return GS_OK;
}

static int check_object(gs_validator *v, const gs_record *rec) {
  size_t i;
  int err = use_type(v, rec->type, rec->line);
  if (err || (err = gs_idset_add(&v->defined, rec->id)) < 0) return err;
  if (!err)
    emit(v, GS_D_DUPLICATE_OBJECT, rec->line, "object %llx is defined more than once in this section",
         (unsigned long long)rec->id);
  for (i = 0; i < rec->nrefs; i++)
    if ((err = check_reference(v, rec->refs[i], rec->line))) return err;
  return GS_OK;
}


/* ---- types ----------------------------------------------------------- */

static int type_slot(gs_validator *v, uint64_t id, uint64_t line, type_info **out, uint32_t **bits) {
  gs_idmap_slot *s;
  int inserted = gs_idmap_put(&v->types, id, &s);
  if (inserted < 0) return inserted;
  if (inserted) {
    if (gs_array_reserve((void **)&v->type_infos, &v->types_cap, v->ntypes + 1, sizeof *v->type_infos))
      return GS_ENOMEM;
    s->value = (uint32_t)v->ntypes;
    v->type_infos[v->ntypes].first_use = line;
    v->type_infos[v->ntypes].name_len = 0;
    v->ntypes++;
  }
  *out = &v->type_infos[s->value];
  *bits = &s->bits;
  return GS_OK;
}

static int use_type(gs_validator *v, uint64_t id, uint64_t line) {
  const gs_idmap_slot *seen = gs_idmap_find(&v->types, id);
  type_info *t;
  uint32_t *bits;
  int err;
  if (seen && (seen->bits & TYPE_USED)) return GS_OK;
  err = type_slot(v, id, line, &t, &bits);
  if (err) return err;
  if (!(*bits & TYPE_USED)) { *bits |= TYPE_USED; t->first_use = line; }
  return GS_OK;
}

static int define_type(gs_validator *v, const gs_record *rec) {
  type_info *t;
  uint32_t *bits;
  int err = type_slot(v, rec->id, rec->line, &t, &bits);
  if (err) return err;
  if (*bits & TYPE_DEFINED) {
    if (t->name_len != rec->name_len || memcmp(v->names + t->name_off, rec->name, rec->name_len))
      emit(v, GS_D_TYPE_REDEFINED, rec->line, "type %llx is redefined as '%.*s' (was '%.*s')",
           (unsigned long long)rec->id, (int)(rec->name_len > 60 ? 60 : rec->name_len), rec->name,
           (int)(t->name_len > 60 ? 60 : t->name_len), v->names + t->name_off);
    return GS_OK;
  }
  if (gs_array_reserve((void **)&v->names, &v->names_cap, v->names_len + rec->name_len + 1, 1))
    return GS_ENOMEM;
  *bits |= TYPE_DEFINED;
  t->name_off = v->names_len;
  t->name_len = rec->name_len;
  memcpy(v->names + v->names_len, rec->name, rec->name_len);
  v->names_len += rec->name_len;
  return GS_OK;
}

/* ---- roots ----------------------------------------------------------- */

static int check_root(gs_validator *v, const gs_record *rec) {
  late_diag *r;
  if (rec->root_flags & ~(GS_FLAG_PINNED | GS_FLAG_WEAK | GS_FLAG_INTERIOR))
    emit(v, GS_D_ROOT_FLAGS, rec->line, "root flags %x have unknown bits (known: 1, 2, 4)",
         rec->root_flags);
  if (rec->has_container) {
    int err = use_type(v, rec->type, rec->line);
    if (err) return err;
  }
  if (gs_array_reserve((void **)&v->roots, &v->roots_cap, v->nroots + 1, sizeof *v->roots))
    return GS_ENOMEM;
  r = &v->roots[v->nroots++];
  r->line = rec->line;
  r->id = rec->id;
  return GS_OK;
}

/* ---- sections -------------------------------------------------------- */

static int late_cmp(const void *a, const void *b) {
  const late_diag *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  if (x->code != y->code) return x->code < y->code ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Collects what the whole section was needed for, then reports it in line
 * order. */
static int close_section(gs_validator *v) {
  late_diag *late = NULL;
  size_t nlate = 0, cap = 0, i;
  /* Usually every forward reference found its object: one bitmap check. */
  if (gs_idset_within(&v->forward, &v->defined)) v->nrefs = 0;
  for (i = 0; i < v->nrefs; i++) {
    if (gs_idset_has(&v->defined, v->refs[i].id)) continue;
    if (gs_array_reserve((void **)&late, &cap, nlate + 1, sizeof *late)) goto nomem;
    late[nlate].line = v->refs[i].line;
    late[nlate].id = v->refs[i].id;
    late[nlate++].code = GS_D_DANGLING_REFERENCE;
  }
  for (i = 0; i < v->nroots; i++) {
    if (gs_idset_has(&v->defined, v->roots[i].id)) continue;
    if (gs_array_reserve((void **)&late, &cap, nlate + 1, sizeof *late)) goto nomem;
    late[nlate] = v->roots[i];
    late[nlate++].code = GS_D_DANGLING_ROOT;
  }
  for (i = 0; i <= v->types.mask; i++) {
    const gs_idmap_slot *s = &v->types.slots[i];
    if (!s->bits || (s->bits & TYPE_DEFINED)) continue;
    if (gs_array_reserve((void **)&late, &cap, nlate + 1, sizeof *late)) goto nomem;
    late[nlate].line = v->type_infos[s->value].first_use;
    late[nlate].id = s->key;
    late[nlate++].code = GS_D_UNDEFINED_TYPE;
  }
  if (nlate) qsort(late, nlate, sizeof *late, late_cmp);
  for (i = 0; i < nlate; i++) {
    unsigned long long id = (unsigned long long)late[i].id;
    if (late[i].code == GS_D_DANGLING_REFERENCE)
      emit(v, late[i].code, late[i].line, "reference to object %llx, which is not in the dump", id);
    else if (late[i].code == GS_D_DANGLING_ROOT)
      emit(v, late[i].code, late[i].line, "root names object %llx, which is not in the dump", id);
    else
      emit(v, late[i].code, late[i].line, "type %llx is never defined", id);
  }
  free(late);
  gs_idset_clear(&v->defined);
  gs_idset_clear(&v->forward);
  gs_idmap_clear(&v->types);
  v->ntypes = v->names_len = v->nroots = v->nrefs = 0;
  v->in_section = 0;
  return GS_OK;
nomem:
  free(late);
  return GS_ENOMEM;
}

static int open_section(gs_validator *v, const gs_record *rec) {
  int err;
  if (v->in_section) {
    emit(v, GS_D_NESTED_SECTION, rec->line,
         "AppDomain record inside the section opened at line %lu (no 'c' record before it)",
         (unsigned long)v->section_line);
    if ((err = close_section(v))) return err;
  }
  if (rec->id != 2)
    emit(v, GS_D_VERSION, rec->line, "format version %llx (this reader knows version 2)",
         (unsigned long long)rec->id);
  free(v->section_name);
  if (!(v->section_name = malloc(rec->name_len + 1))) return GS_ENOMEM;
  memcpy(v->section_name, rec->name, rec->name_len);
  v->section_name[rec->name_len] = 0;
  v->section_name_len = rec->name_len;
  v->section_line = rec->line;
  v->in_section = v->ever_section = 1;
  v->counts.sections++;
  return GS_OK;
}

static int end_section(gs_validator *v, const gs_record *rec) {
  if (rec->name_len != v->section_name_len ||
      memcmp(rec->name, v->section_name, rec->name_len))
    emit(v, GS_D_SECTION_NAME, rec->line, "end record names '%.*s' but the section at line %lu is '%.60s'",
         (int)(rec->name_len > 60 ? 60 : rec->name_len), rec->name,
         (unsigned long)v->section_line, v->section_name);
  return close_section(v);
}

/* ---- entry points ---------------------------------------------------- */

static int dispatch(gs_validator *v, const gs_record *rec) {
  if (rec->kind == GS_REC_SECTION) return open_section(v, rec);
  if (!v->in_section) {
    emit(v, GS_D_OUTSIDE_SECTION, rec->line, "'%c' record outside an AppDomain section (no open 'a' record)",
         (char)rec->kind);
    return GS_OK;
  }
  switch (rec->kind) {
  case GS_REC_OBJECT: return check_object(v, rec);
  case GS_REC_TYPE: return define_type(v, rec);
  case GS_REC_ROOT: return check_root(v, rec);
  case GS_REC_END: return end_section(v, rec);
  default: return GS_EINVAL;
  }
}

int gs_validator_record(gs_validator *v, const gs_record *rec) {
  v->counts.records++;
  return dispatch(v, rec);
}

int gs_validator_finish(gs_validator *v) {
  if (v->in_section) {
    emit(v, GS_D_UNTERMINATED, v->section_line,
         "input ends inside the section '%.60s' opened here (no 'c' record)", v->section_name);
    return close_section(v);
  }
  if (!v->ever_section)
    emit(v, GS_D_NO_SECTION, 0, "no AppDomain section ('a' record) in the input");
  return GS_OK;
}

int gs_validate_reader(gs_reader *r, gs_diag_fn fn, void *ctx, gs_validate_counts *counts) {
  gs_validator *v;
  gs_record rec;
  int err = gs_validator_new(&v, fn, ctx);
  if (err) return err;
  for (;;) {
    err = gs_reader_next(r, &rec);
    if (err == GS_EOF) break;
    if (err == GS_EFORMAT) {
      gs_validator_report(v, gs_reader_diag(r));
      continue;
    }
    if (err || (err = gs_validator_record(v, &rec))) break;
  }
  if (err == GS_EOF) err = gs_validator_finish(v);
  if (counts) *counts = v->counts;
  gs_validator_free(v);
  return err;
}
