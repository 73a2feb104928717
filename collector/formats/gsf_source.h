/* gsf_source.h - any heap file as a stream of records.
 *
 * Wraps a byte source (raw, already decompressed bytes): the first bytes
 * tell the format; a .gclog passes through unchanged, a foreign file is
 * converted on a thread of its own into a few fixed buffers that the
 * caller's reads drain, so every consumer of records reads it as it is
 * converted, in bounded memory. */
#ifndef GSF_SOURCE_H
#define GSF_SOURCE_H

#include <stddef.h>
#include "gs_diag.h"
#include "gs_reader.h"
#include "gsf_format.h"

typedef struct gsf_source gsf_source;

/* Reads the first bytes of in; returns GS_OK, GS_ENOMEM or in's error. */
int gsf_source_open(gsf_source **s, gs_read_fn in, void *in_ctx);
/* Stops a conversion still running, and frees. */
void gsf_source_close(gsf_source *s);

/* The references one object may have (default GS_READER_DEFAULT_MAX_REFS):
 * a converted object with more fails the read (code too-many-references).
 * Set before the first read. */
void gsf_source_set_max_refs(gsf_source *s, size_t max_refs);

gsf_format gsf_source_format(const gsf_source *s);

/* The gs_read_fn of the records. A foreign file that is malformed makes it
 * return GS_EIO with gsf_source_diag() set (code bad-heap-file or
 * truncated-heap-file, a message naming the format and byte offset); any
 * other failure is the input's own error or GS_ENOMEM. */
int gsf_source_read(void *s, void *buf, size_t cap, size_t *got);
const gs_diag *gsf_source_diag(const gsf_source *s);
/* Once every record was read: what the converter noted about a file it
 * read whole (a .gcdump that holds a sample of the heap), or NULL. */
const char *gsf_source_note(const gsf_source *s);

#endif
