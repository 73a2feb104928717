/* gs_validate_int.h - the validator's state, shared by its two files.
 *
 * gs_validate.c checks records as they come; gs_validate_again.c reads
 * parts of a section again for the lines of its dangling references.
 * Internal to the library. */
#ifndef GS_VALIDATE_INT_H
#define GS_VALIDATE_INT_H

#include <stddef.h>
#include <stdint.h>
#include "gs_idmap.h"
#include "gs_idset.h"
#include "gs_refs.h"
#include "gs_validate.h"

typedef struct type_info { uint64_t first_use; size_t name_off, name_len; } type_info;
typedef struct late_diag { uint64_t line; uint64_t id; gs_diag_code code; } late_diag;
typedef struct first_ref { uint64_t line; uint64_t id; } first_ref;

struct gs_validator {
  gs_diag_fn fn;
  void *ctx;
  gs_validate_counts counts;
  int in_section, ever_section;
  uint64_t bytes;             /* object bytes of the input so far, up to GS_MAX_BYTES */
  int bytes_overflow;         /* reported once */
  uint64_t section_line;
  char *section_name;
  size_t section_name_len;
  gs_idset defined;           /* objects of this section */
  gs_idset forward;           /* IDs referenced before (or without) their object;
                               * later mode: every ID referenced */
  int merge;                  /* forward was too sparse: repeats merged by sorting */
  gs_reader *source;          /* the input, when gs_validate_reader reads it */
  int later;                  /* this section's references are checked at its end */
  int overflow;               /* later, and forward was too sparse: check them all */
  gs_reader_mark mark;        /* later: where the section can be read again */
  first_ref *refs;            /* first such reference to each still pending */
  size_t nrefs, refs_cap;
  gs_idmap types;             /* value: index into type_infos */
  type_info *type_infos;
  size_t ntypes, types_cap;
  char *names;                /* type names of this section, back to back */
  size_t names_len, names_cap;
  late_diag *roots;           /* roots of this section, checked at its end */
  size_t nroots, roots_cap;
  uint64_t sections;          /* section records ('a', 'c') so far */
  uint64_t section_epoch;     /* sections before this section's objects */
  gs_refs_ahead *ahead;       /* references noted on the reader's workers */
  gs_refs_block *own;         /* later, with workers: blocks whose references
                               * this thread noted itself */
  size_t nown, own_cap;
  gs_refs_spans spans;        /* later, without workers: what this thread noted */
  gs_reader_mark span_from;   /* where the open span starts */
};

/* Checks a reference against the section's objects, listing its ID when
 * not defined yet (once per ID). Returns GS_OK or GS_ENOMEM. */
int gs_validator_check_reference_(gs_validator *v, uint64_t id, uint64_t line);
/* Asks for the bitmap words checking refs[0..n) reads. */
void gs_validator_prefetch_refs_(gs_validator *v, const uint64_t *refs, size_t n);

/* gs_validate_again.c: later mode. Remembers the block of the record
 * returned last, whose references this thread notes itself. */
int gs_validator_own_block_(gs_validator *v);
/* Later mode, without workers: closes the span of lines open since
 * v->span_from at the record returned last, every reference of which this
 * thread noted. */
int gs_validator_close_span_(gs_validator *v);
/* The section's dangling references into v->refs, as checking them as they
 * came would have left them; the section ends before close_line. */
int gs_validator_later_refs_(gs_validator *v, uint64_t close_line);

#endif
