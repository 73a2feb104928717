/* gs_validate.c - validator of the RPM GC heap dump record format.
 *
 * Syntax is the reader's job; this file checks what spans records: section
 * structure, unique object IDs, consistent type names, and (at the end of
 * each section) references, roots and types that name nothing in the dump.
 *
 * Object IDs go into a gs_idset, whose bitmaps stay in the processor cache
 * even for millions of objects. A reference to an object not defined yet is
 * remembered once per ID, with its line, since the object may still come:
 * in a heap walked by address about half the references point forward.
 * Whenever that list fills up, the entries whose object has come since are
 * dropped, and it grows (by half) only when more than three quarters stay,
 * so its capacity stays under two entries per ID still pending. What is
 * left when the section ends is, in line order, its dangling references.
 *
 * A second ID set spots an ID already in the list. When IDs are too sparse
 * for its bitmaps to pay off (dangling references to random addresses), it
 * is dropped and repeats are merged by sorting the list when it fills up,
 * which keeps the same bound at some cost in time.
 *
 * When the input can be read again (gs_validate_reader over a buffer or a
 * file, compressed or not), a section's references only set bits in that
 * second set as they come, which costs no list and no lookup of the
 * object; the parsing workers, when there are, set them themselves for the
 * blocks that lie within one section (gs_refs.h). gs_validate_again.c
 * finds the lines of the dangling ones at the section's end. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_array.h"
#include "gs_error.h"
#include "gs_idmap.h"
#include "gs_idset.h"
#include "gs_refs.h"
#include "gs_validate_int.h"

#define TYPE_DEFINED    1u     /* type bits */
#define TYPE_USED       2u
/* The size hint over the bytes of an object record, times the bytes of an
 * object, over the 16 MB of addresses of an ID set's chunk: the chunks a
 * heap's references may name before their objects come. */
#define EXPECTED_RECORD_BYTES 40
#define EXPECTED_OBJECT_BYTES 64
#define PRUNE_AHEAD     64     /* pending references looked up ahead while pruning */


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
  gs_idset_bitmaps_only(&v->forward, 0);
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
  free(v->own);
  gs_refs_spans_free(&v->spans);
  free(v->section_name);
  free(v);
}

const gs_validate_counts *gs_validator_counts(const gs_validator *v) { return &v->counts; }

size_t gs_validator_memory(const gs_validator *v) {
  return gs_refs_ahead_memory(v->ahead) + sizeof *v + gs_idset_memory(&v->defined) + gs_idset_memory(&v->forward) + v->refs_cap * sizeof *v->refs +
         (v->types.mask + 1) * sizeof *v->types.slots + v->types_cap * sizeof *v->type_infos +
         v->names_cap + v->roots_cap * sizeof *v->roots + v->own_cap * sizeof *v->own + gs_refs_spans_memory(&v->spans) +
         v->section_name_len + 1;
}

/* ---- objects and references ----------------------------------------- */

static int use_type(gs_validator *v, uint64_t id, uint64_t line);

/* refs sorting, in place (a library qsort may allocate a copy, which the
 * memory bound does not allow). */
typedef int (*ref_order)(const first_ref *a, const first_ref *b);

static int by_id(const first_ref *a, const first_ref *b) {
  return a->id != b->id ? a->id < b->id : a->line < b->line;
}

static int by_line(const first_ref *a, const first_ref *b) {
  return a->line != b->line ? a->line < b->line : a->id < b->id;
}

static void swap_refs(first_ref *a, first_ref *b) {
  first_ref t = *a;
  *a = *b;
  *b = t;
}

static void sort_refs(first_ref *r, size_t n, ref_order before) {
  while (n > 16) {
    size_t i = 0, j = n - 1, mid = n / 2;
    first_ref pivot;
    if (before(&r[mid], &r[0])) swap_refs(&r[mid], &r[0]);
    if (before(&r[n - 1], &r[0])) swap_refs(&r[n - 1], &r[0]);
    if (before(&r[n - 1], &r[mid])) swap_refs(&r[n - 1], &r[mid]);
    pivot = r[mid];
    for (;;) {
      while (before(&r[i], &pivot)) i++;
      while (before(&pivot, &r[j])) j--;
      if (i >= j) break;
      swap_refs(&r[i++], &r[j--]);
    }
    /* The smaller side recursively, the larger in this loop: depth O(log n). */
    if (j + 1 < n - j - 1) { sort_refs(r, j + 1, before); r += j + 1; n -= j + 1; }
    else { sort_refs(r + j + 1, n - j - 1, before); n = j + 1; }
  }
  for (; n > 1; n--) {
    size_t k;
    for (k = 1; k < n; k++)
      if (before(&r[k], &r[k - 1])) swap_refs(&r[k], &r[k - 1]);
  }
}

/* Drops the references whose object has come, keeping their order. */
static void prune_refs(gs_validator *v) {
  size_t i, n = 0;
  for (i = 0; i < v->nrefs; i++) {
    if (i + PRUNE_AHEAD < v->nrefs) gs_idset_prefetch(&v->defined, v->refs[i + PRUNE_AHEAD].id);
    if (!gs_idset_has(&v->defined, v->refs[i].id)) v->refs[n++] = v->refs[i];
  }
  v->nrefs = n;
}

/* Keeps only the first mention of each ID (merge mode), in ID order. */
static void merge_refs(gs_validator *v) {
  size_t i, n;
  if (v->nrefs < 2) return;
  sort_refs(v->refs, v->nrefs, by_id);
  for (i = 1, n = 1; i < v->nrefs; i++)
    if (v->refs[i].id != v->refs[n - 1].id) v->refs[n++] = v->refs[i];
  v->nrefs = n;
}

/* Makes room for one more pending reference; see the top of the file. The
 * sort of merge mode runs only when the list would grow otherwise. */
static int refs_room(gs_validator *v) {
  size_t cap;
  first_ref *grown;
  prune_refs(v);
  if (v->merge && v->nrefs > v->refs_cap / 4 * 3) merge_refs(v);
  if (v->nrefs <= v->refs_cap / 4 * 3 && v->nrefs < v->refs_cap) return GS_OK;
  cap = v->refs_cap ? v->refs_cap / 2 * 3 : 1024;
  if (cap > SIZE_MAX / sizeof *v->refs || !(grown = realloc(v->refs, cap * sizeof *v->refs)))
    return GS_ENOMEM;
  v->refs = grown;
  v->refs_cap = cap;
  return GS_OK;
}

/* Returns 1 when id is mentioned for the first time (as far as the forward
 * set can tell), 0 for a repeat, or an error. */
static int first_mention(gs_validator *v, uint64_t id) {
  int added;
  if (v->merge) return 1;
  added = gs_idset_add(&v->forward, id);
  if (added != GS_ELIMIT) return added;
  gs_idset_clear(&v->forward);
  v->merge = 1;
  return 1;
}

int gs_validator_check_reference_(gs_validator *v, uint64_t id, uint64_t line) {
  first_ref *d;
  int added;
  if (gs_idset_has(&v->defined, id)) return GS_OK;
  if ((added = first_mention(v, id)) <= 0) return added;
  if (v->nrefs == v->refs_cap && (added = refs_room(v))) return added;
  d = &v->refs[v->nrefs++];
  d->line = line;
  d->id = id;
  return GS_OK;
}

/* Totals wider than the format's numbers would print wrapped figures. */
static void add_bytes(gs_validator *v, uint64_t size, uint64_t line) {
  if (size <= GS_MAX_BYTES - v->bytes) { v->bytes += size; return; }
  if (v->bytes_overflow++) return;
  emit(v, GS_D_BYTES_OVERFLOW, line, "object sizes add up to more than %llu bytes",
       (unsigned long long)GS_MAX_BYTES);
}

/* Later mode: only notes that the IDs are referenced (and, without
 * workers, which span of lines mentions each first). */
static int note_references(gs_validator *v, const uint64_t *refs, size_t n) {
  if (!v->ahead) return gs_refs_note_firsts(&v->spans, &v->forward, &v->overflow, refs, n);
  return gs_refs_note(&v->forward, &v->overflow, refs, n);
}

/* References land anywhere in the bitmaps: asks for them all first (in
 * both sets, since the forward one is needed as often as not). */
void gs_validator_prefetch_refs_(gs_validator *v, const uint64_t *refs, size_t n) {
  size_t i;
  for (i = 0; i < n && !v->later; i++) {
    gs_idset_prefetch(&v->defined, refs[i]);
    gs_idset_prefetch(&v->forward, refs[i]);
  }
}

/* What an object's checks read of its record. */
typedef struct obj_fields { uint64_t id, type, size, line; size_t nrefs; } obj_fields;

static int check_object(gs_validator *v, const obj_fields *o, const uint64_t *refs) {
  size_t i;
  int err = use_type(v, o->type, o->line);
  add_bytes(v, o->size, o->line);
  if (err || (err = gs_idset_add(&v->defined, o->id)) < 0) return err;
  if (!err)
    emit(v, GS_D_DUPLICATE_OBJECT, o->line, "object %llx is defined more than once in this section",
         (unsigned long long)o->id);
  /* Later mode: the caller notes the references. */
  if (v->later) return GS_OK;
  gs_validator_prefetch_refs_(v, refs, o->nrefs);
  for (i = 0; i < o->nrefs; i++)
    if ((err = gs_validator_check_reference_(v, refs[i], o->line))) return err;
  return GS_OK;
}

static void fields_of(obj_fields *o, const gs_record *rec) {
  o->id = rec->id;
  o->type = rec->type;
  o->size = rec->size;
  o->line = rec->line;
  o->nrefs = rec->nrefs;
}

static int check_object_record(gs_validator *v, const gs_record *rec) {
  obj_fields o;
  fields_of(&o, rec);
  return check_object(v, &o, rec->refs);
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

/* One more section record: sets of sections before it are done with. */
static void pass_section_record(gs_validator *v) {
  v->sections++;
  gs_refs_ahead_release(v->ahead, v->sections);
}

static int late_cmp(const void *a, const void *b) {
  const late_diag *x = a, *y = b;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  if (x->code != y->code) return x->code < y->code ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* The section's dangling references, in line order then ID order. */
static void order_refs(gs_validator *v) {
  prune_refs(v);
  if (v->merge) merge_refs(v);
  sort_refs(v->refs, v->nrefs, by_line);
}

/* Types used but never defined, sorted; they are few (one per type ID). */
static int undefined_types(gs_validator *v, late_diag **out, size_t *n) {
  size_t i, cap = 0;
  *out = NULL;
  *n = 0;
  for (i = 0; i <= v->types.mask; i++) {
    const gs_idmap_slot *s = &v->types.slots[i];
    if (!s->bits || (s->bits & TYPE_DEFINED)) continue;
    if (gs_array_reserve((void **)out, &cap, *n + 1, sizeof **out)) return GS_ENOMEM;
    (*out)[*n].line = v->type_infos[s->value].first_use;
    (*out)[*n].id = s->key;
    (*out)[(*n)++].code = GS_D_UNDEFINED_TYPE;
  }
  if (*n) qsort(*out, *n, sizeof **out, late_cmp);
  return GS_OK;
}

static void emit_late(gs_validator *v, const late_diag *d) {
  unsigned long long id = (unsigned long long)d->id;
  if (d->code == GS_D_DANGLING_REFERENCE)
    emit(v, d->code, d->line, "reference to object %llx, which is not in the dump", id);
  else if (d->code == GS_D_DANGLING_ROOT)
    emit(v, d->code, d->line, "root names object %llx, which is not in the dump", id);
  else
    emit(v, d->code, d->line, "type %llx is never defined", id);
}

/* In later mode the workers' notes are all the validator needs of the
 * references they saw (see group_record), so the reader need not join the
 * parts of a long line they noted. */
static void set_later(gs_validator *v, int later) {
  v->later = later;
  if (v->ahead) (void)gs_reader_skip_tagged(v->source, later);
}

/* Reports what the whole section was needed for, in line order: three
 * lists already in that order are merged, so no copy of them is made. The
 * section ends before close_line. */
static int close_section(gs_validator *v, uint64_t close_line) {
  late_diag *types, cand[3];
  size_t ntypes, at[3] = {0, 0, 0};
  int err;
  if (v->later && (err = gs_validator_later_refs_(v, close_line))) return err;
  if (undefined_types(v, &types, &ntypes)) return GS_ENOMEM;
  order_refs(v);
  for (;;) {
    int k, best = -1;
    while (at[1] < v->nroots && gs_idset_has(&v->defined, v->roots[at[1]].id)) at[1]++;
    if (at[0] < v->nrefs) {
      cand[0].line = v->refs[at[0]].line;
      cand[0].id = v->refs[at[0]].id;
      cand[0].code = GS_D_DANGLING_REFERENCE;
    }
    if (at[1] < v->nroots) { cand[1] = v->roots[at[1]]; cand[1].code = GS_D_DANGLING_ROOT; }
    if (at[2] < ntypes) cand[2] = types[at[2]];
    for (k = 0; k < 3; k++)
      if (at[k] < (k == 0 ? v->nrefs : k == 1 ? v->nroots : ntypes) &&
          (best < 0 || late_cmp(&cand[k], &cand[best]) < 0))
        best = k;
    if (best < 0) break;
    emit_late(v, &cand[best]);
    at[best]++;
  }
  free(types);
  gs_idset_clear(&v->defined);
  gs_idset_clear(&v->forward);
  v->merge = 0;
  gs_idmap_clear(&v->types);
  v->ntypes = v->names_len = v->nroots = v->nrefs = 0;
  v->in_section = 0;
  set_later(v, 0);
  return GS_OK;
}

static int open_section(gs_validator *v, const gs_record *rec) {
  int err;
  if (v->in_section) {
    emit(v, GS_D_NESTED_SECTION, rec->line,
         "AppDomain record inside the section opened at line %lu (no 'c' record before it)",
         (unsigned long)v->section_line);
    if ((err = close_section(v, rec->line))) return err;
  }
  pass_section_record(v);
  v->section_epoch = v->sections;
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
  set_later(v, v->source && gs_reader_mark_here(v->source, &v->mark) == GS_OK);
  v->span_from = v->mark;
  v->overflow = 0;
  v->counts.sections++;
  return GS_OK;
}

static int end_section(gs_validator *v, const gs_record *rec) {
  int err;
  if (rec->name_len != v->section_name_len ||
      memcmp(rec->name, v->section_name, rec->name_len))
    emit(v, GS_D_SECTION_NAME, rec->line, "end record names '%.*s' but the section at line %lu is '%.60s'",
         (int)(rec->name_len > 60 ? 60 : rec->name_len), rec->name,
         (unsigned long)v->section_line, v->section_name);
  if ((err = close_section(v, rec->line))) return err;
  pass_section_record(v);
  return GS_OK;
}

/* ---- entry points ---------------------------------------------------- */

static int outside_section(gs_validator *v, gs_record_kind kind, uint64_t line) {
  emit(v, GS_D_OUTSIDE_SECTION, line, "'%c' record outside an AppDomain section (no open 'a' record)",
       (char)kind);
  if (kind == GS_REC_END) pass_section_record(v);
  return GS_OK;
}

static int dispatch(gs_validator *v, const gs_record *rec) {
  if (rec->kind == GS_REC_SECTION) return open_section(v, rec);
  if (!v->in_section) return outside_section(v, rec->kind, rec->line);
  switch (rec->kind) {
  case GS_REC_OBJECT: return check_object_record(v, rec);
  case GS_REC_TYPE: return define_type(v, rec);
  case GS_REC_ROOT: return check_root(v, rec);
  case GS_REC_END: return end_section(v, rec);
  default: return GS_EINVAL;
  }
}

int gs_validator_record(gs_validator *v, const gs_record *rec) {
  int err;
  v->counts.records++;
  err = dispatch(v, rec);
  if (!err && v->later && rec->kind == GS_REC_OBJECT) err = note_references(v, rec->refs, rec->nrefs);
  return err;
}

int gs_validator_finish(gs_validator *v) {
  if (v->in_section) {
    emit(v, GS_D_UNTERMINATED, v->section_line,
         "input ends inside the section '%.60s' opened here (no 'c' record)", v->section_name);
    return close_section(v, UINT64_MAX);
  }
  if (!v->ever_section)
    emit(v, GS_D_NO_SECTION, 0, "no AppDomain section ('a' record) in the input");
  return GS_OK;
}

/* Object records are checked in groups: the bitmap words of a whole
 * group's references and the slots of its types are asked for first, so
 * that their cache misses overlap; anything else is checked after the
 * group before it. */
#define GROUP_RECORDS 64
#define GROUP_REFS    4096
/* Later mode without workers: the lines whose first mentions are noted
 * together, as large as a worker's block. */
#define SPAN_BYTES      (256u << 10)

/* Only what an object's checks read is kept (a record is three times
 * as large, and every object is copied in). */
typedef struct group {
  obj_fields objs[GROUP_RECORDS];
  uint64_t refs[GROUP_REFS];
  size_t n, nrefs;
} group;

static int flush_group(gs_validator *v, group *g) {
  size_t i, at = 0;
  int err = GS_OK;
  for (i = 0; i < g->n; i++) gs_idmap_prefetch(&v->types, g->objs[i].type);
  gs_validator_prefetch_refs_(v, g->refs, g->nrefs);
  for (i = 0; i < g->n && !err; at += g->objs[i++].nrefs) {
    v->counts.records++;
    err = v->in_section ? check_object(v, &g->objs[i], g->refs + at)
                        : outside_section(v, GS_REC_OBJECT, g->objs[i].line);
  }
  if (!err && v->later) err = note_references(v, g->refs, g->nrefs);
  g->n = g->nrefs = 0;
  return err;
}

/* Keeps an object record in the group (copying its references unless a
 * worker noted them), or checks it at once when it is something else. */
static int group_record(gs_validator *v, group *g, gs_record *rec, int noted) {
  int err;
  if (noted && v->later) rec->nrefs = 0;
  else if (v->later && rec->nrefs && (err = gs_validator_own_block_(v))) return err;
  if (rec->kind != GS_REC_OBJECT || rec->nrefs > GROUP_REFS) {
    if ((err = flush_group(v, g))) return err;
    return gs_validator_record(v, rec);
  }
  if (g->n == GROUP_RECORDS || g->nrefs + rec->nrefs > GROUP_REFS) {
    if ((err = flush_group(v, g))) return err;
  }
  if (rec->nrefs) memcpy(g->refs + g->nrefs, rec->refs, rec->nrefs * sizeof *rec->refs);
  fields_of(&g->objs[g->n++], rec);
  g->nrefs += rec->nrefs;
  return GS_OK;
}

int gs_validate_reader(gs_reader *r, gs_diag_fn fn, void *ctx, gs_validate_counts *counts) {
  gs_validator *v;
  gs_record rec;
  size_t free_chunks;
  group *g = malloc(sizeof *g);
  int err = g ? gs_validator_new(&v, fn, ctx) : GS_ENOMEM;
  if (err) { free(g); return err; }
  /* A heap of this size spans about this many chunks of addresses, which
   * references ahead of their objects may touch from the start. */
  free_chunks = (size_t)(gs_reader_size_hint(r) / EXPECTED_RECORD_BYTES * EXPECTED_OBJECT_BYTES >> 24);
  gs_idset_bitmaps_only(&v->forward, free_chunks);
  if (gs_reader_can_reopen(r)) v->ahead = gs_refs_ahead_start(r, free_chunks);
  v->source = r;
  g->n = g->nrefs = 0;
  for (;;) {
    err = gs_reader_next(r, &rec);
    if (err == GS_EOF) break;
    if (err == GS_EFORMAT) {
      if ((err = flush_group(v, g))) break;
      gs_validator_report(v, gs_reader_diag(r));
      continue;
    }
    if (err || (err = group_record(v, g, &rec, gs_reader_tag(r)))) break;
    if (v->later && !v->ahead && gs_reader_offset(r) - v->span_from.offset >= SPAN_BYTES &&
        ((err = flush_group(v, g)) || (err = gs_validator_close_span_(v))))
      break;
  }
  if (err != GS_ENOMEM) {
    int flushed = flush_group(v, g);
    if (err == GS_EOF) err = flushed ? flushed : gs_validator_finish(v);
  }
  if (counts) *counts = v->counts;
  gs_refs_ahead_stop(v->ahead, r);
  gs_validator_free(v);
  free(g);
  return err;
}
