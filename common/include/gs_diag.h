/* gs_diag.h - diagnostics of the RPM GC heap dump record format.
 *
 * Each problem the reader or the validator finds has a stable code with a
 * stable name (the name is what tools and scripts match on) and a fixed
 * severity. Errors make a file invalid; warnings describe files that are
 * valid but incomplete, such as the seeds' own "format only" examples. */
#ifndef GS_DIAG_H
#define GS_DIAG_H

#include <stdint.h>

typedef enum gs_diag_code {
  /* errors */
  GS_D_UNKNOWN_RECORD = 1, /* line starts with a letter other than a t o r c */
  GS_D_MISSING_FIELD,      /* a required field is absent */
  GS_D_EXTRA_FIELD,        /* more fields than the record kind has */
  GS_D_NOT_HEX,            /* a number field holds a non-hex character */
  GS_D_OVERFLOW,           /* a number does not fit in 64 bits */
  GS_D_NEGATIVE_SIZE,      /* object size written with a minus sign */
  GS_D_OUTSIDE_SECTION,    /* t, o, r or c before any a, or after its c */
  GS_D_NESTED_SECTION,     /* a while a section is open */
  GS_D_SECTION_NAME,       /* c whose name differs from its a */
  GS_D_UNTERMINATED,       /* input ends inside a section */
  GS_D_NO_SECTION,         /* empty input or no a record at all */
  GS_D_DUPLICATE_OBJECT,   /* object ID defined twice in one section */
  GS_D_TYPE_REDEFINED,     /* type ID defined again with another name */
  GS_D_ROOT_KIND,          /* root kind outside 0-5 */
  GS_D_STATIC_CONTAINER,   /* static root (kind 4) without its container type */
  GS_D_NOT_TEXT,           /* control bytes or invalid UTF-8 */
  GS_D_LINE_TOO_LONG,      /* line longer than the reader's limit */
  GS_D_BAD_HEAP_FILE,      /* a foreign heap file (.heapsnapshot, .hprof, .gcdump) is malformed */
  GS_D_TRUNCATED_HEAP_FILE,/* a foreign heap file ends early */
  GS_D_BYTES_OVERFLOW,     /* object sizes add up to more than GS_MAX_BYTES */
  GS_D_TOO_MANY_REFS,      /* an object with more references than the reader's limit */
  /* warnings */
  GS_D_DANGLING_REFERENCE, /* reference to an object not in the section */
  GS_D_DANGLING_ROOT,      /* root naming an object not in the section */
  GS_D_UNDEFINED_TYPE,     /* object or static container whose type is never defined */
  GS_D_ROOT_FLAGS,         /* root flags with bits other than 1, 2, 4 */
  GS_D_VERSION,            /* a record with a format version other than 2 */
  GS_D_COUNT_
} gs_diag_code;

/* The most bytes the objects of one dump may add up to: every total and
 * difference of totals then fits a signed 64-bit number (and JSON). */
#define GS_MAX_BYTES 0x7fffffffffffffffULL

typedef enum gs_severity { GS_SEV_ERROR = 0, GS_SEV_WARNING = 1 } gs_severity;

typedef struct gs_diag {
  gs_diag_code code;
  uint64_t line;       /* 1-based line of the record; 0 when about the whole input */
  char message[200];
} gs_diag;

const char *gs_diag_name(gs_diag_code code);   /* "duplicate-object", ... */
gs_severity gs_diag_severity(gs_diag_code code);

#endif
