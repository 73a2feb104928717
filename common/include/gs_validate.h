/* gs_validate.h - validator of the RPM GC heap dump record format.
 *
 * Records (from gs_reader or any other producer) are fed one at a time; every
 * problem is reported through a callback with a stable code (gs_diag.h). The
 * validator keeps going after errors. Checks that need the whole section
 * (references and roots to objects not in the dump, types never defined) are
 * reported when the section ends, in line order. Memory is O(objects in the
 * largest section): a bit per object ID (see README.md), 24 bytes per root,
 * and at most 32 bytes per distinct ID referenced but not defined so far in
 * the section, however often it is named (so 10 million dangling IDs take at
 * most 320 MB), plus the bitmaps that spot repeated IDs: 32 MB, or for
 * gs_validate_reader() up to a twentieth of the input's size hint (once
 * more per worker when the reader's workers note references), then 32
 * bytes per such ID. gs_validator_memory() says what it holds now. */
#ifndef GS_VALIDATE_H
#define GS_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include "gs_diag.h"
#include "gs_reader.h"

typedef void (*gs_diag_fn)(void *ctx, const gs_diag *d);

typedef struct gs_validator gs_validator;

typedef struct gs_validate_counts {
  uint64_t errors;
  uint64_t warnings;
  uint64_t sections;
  uint64_t records;
} gs_validate_counts;

int gs_validator_new(gs_validator **v, gs_diag_fn fn, void *ctx);
void gs_validator_free(gs_validator *v);

/* Feeds one record. Returns GS_OK or GS_ENOMEM. */
int gs_validator_record(gs_validator *v, const gs_record *rec);
/* Feeds a diagnostic the producer found itself (a reader syntax error). */
void gs_validator_report(gs_validator *v, const gs_diag *d);
/* Ends the input: reports an open section or an input with no section. */
int gs_validator_finish(gs_validator *v);
const gs_validate_counts *gs_validator_counts(const gs_validator *v);
/* Bytes the validator holds now (its tables; growth may briefly need the
 * old block of the one that grows as well), for callers that bound memory. */
size_t gs_validator_memory(const gs_validator *v);

/* Reads r to its end through a validator. Where r can read its input again
 * (gs_reader_mark_here), references only set bits as they come (on the
 * reader's workers, when started: gs_reader_on_refs), and the parts of a
 * section where dangling ones may be are read again for their lines; the
 * diagnostics are the same. Returns GS_OK (see counts for the verdict), or GS_EIO /
 * GS_ENOMEM. */
int gs_validate_reader(gs_reader *r, gs_diag_fn fn, void *ctx,
                       gs_validate_counts *counts);

#endif
