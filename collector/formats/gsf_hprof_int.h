/* gsf_hprof_int.h - what the two halves of the HPROF reader share: the
 * file side (gsf_hprof.c: the header, records, strings, the class table, a
 * section a heap dump, the types) and the heap side (gsf_hprof_heap.c: a
 * heap dump's class dumps, instances, arrays and roots as records). */
#ifndef GSF_HPROF_INT_H
#define GSF_HPROF_INT_H

#include <stdint.h>
#include <stdio.h>
#include "gs_idmap.h"
#include "gs_reader.h"
#include "gs_writer.h"
#include "gsf_in.h"

#define NONE UINT32_MAX

enum { T_OBJECT = 2, T_BOOLEAN = 4, T_LONG = 11 };
/* The type ID of class objects when the dump never names java/lang/Class;
 * primitive arrays use their basic type (4-11) as type ID. */
#define CLASS_TYPE_FALLBACK 1u

typedef struct hp_class {
  uint64_t id, super, loader;
  uint64_t name;             /* string ID of the name; 0: none */
  uint32_t field0, nfields;  /* this class's instance field types in fields[] */
  uint32_t layout, nrefs;    /* the chain's reference offsets in refoffs[]; NONE: not yet */
  uint32_t bytes;            /* instance bytes of the whole chain */
  uint32_t referent;         /* of those references, the one that holds weakly; NONE: none */
  int dumped;
} hp_class;

typedef struct hp_string { size_t off; uint32_t len; } hp_string;

typedef struct hprof {
  gsf_in in;
  gsf_in *cur;               /* where objects are read: in, or the spill */
  FILE *spill;               /* instances read before their class dump */
  uint64_t deferred;
  gs_writer *w;
  unsigned idsize;
  gs_idmap strmap;           /* string ID -> index in strs */
  hp_string *strs;
  size_t nstrs, strs_cap;
  char *arena;
  size_t arena_len, arena_cap;
  gs_idmap classmap;         /* class ID -> index in classes */
  hp_class *classes;
  size_t nclasses, classes_cap;
  uint32_t *dumped;          /* indices in classes of this dump's class dumps */
  size_t ndumped, dumped_cap;
  unsigned char *fields;
  size_t nfields, fields_cap;
  uint32_t *refoffs;
  size_t nrefoffs, refoffs_cap;
  uint64_t *refs;
  size_t refs_cap;
  uint64_t class_type;       /* type of class objects */
  uint64_t reference_class;  /* java.lang.ref.Reference, or 0 */
  uint32_t referent_field;   /* its field "referent" among its own, or NONE */
  unsigned prim_used;        /* bit per basic type seen in a primitive array */
  int heap_dumps;            /* HEAP DUMP and HEAP DUMP SEGMENT records */
  int dump_closed;           /* the last dump is whole: a HEAP DUMP, or segments and their END */
} hprof;

/* Read for every field and every instance: inline on both sides. */
static inline int gsf_hprof_read_id(hprof *hp, uint64_t *v, const char *what) {
  return gsf_in_uint(hp->cur, hp->idsize, v, what);
}

static inline hp_class *gsf_hprof_class_find(const hprof *hp, uint64_t id) {
  const gs_idmap_slot *slot = gs_idmap_find(&hp->classmap, id);
  return slot ? &hp->classes[slot->value] : NULL;
}

/* gsf_hprof.c */
int gsf_hprof_oom(hprof *hp);
const char *gsf_hprof_string_of(const hprof *hp, uint64_t id, size_t *len);
int gsf_hprof_class_get(hprof *hp, uint64_t id, hp_class **out);

/* gsf_hprof_heap.c */
int gsf_hprof_heap_dump(hprof *hp, uint32_t len);   /* a HEAP DUMP (SEGMENT)'s body */
int gsf_hprof_replay_deferred(hprof *hp);           /* at the end of a dump */

#endif
