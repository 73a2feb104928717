/* gsf_gcdump.h - reader of .gcdump files (PerfView, dotnet-gcdump).
 *
 * A .gcdump is PerfView's FastSerialization stream of a MemoryGraph: a type
 * table, a table of node offsets and a blob of compressed node records (type,
 * size, children), under a root node whose pseudo-node children ("[static
 * vars]", "[local vars]", "[Pinned handles]", ...) name why objects are live.
 * The reader writes it as one section of records: every node that is a real
 * object (not "[...]" and not undefined) becomes an object with its node index
 * as ID, and the objects under the root's categories become roots (kinds and
 * flags in collector/formats/README.md). */
#ifndef GSF_GCDUMP_H
#define GSF_GCDUMP_H

#include <stddef.h>
#include "gs_reader.h"
#include "gs_writer.h"

/* Bytes of the file gsf_gcdump_sniff() needs to tell a .gcdump from other
 * FastSerialization files (.nettrace, .etlx). */
#define GSF_GCDUMP_SNIFF_BYTES 64

/* Limits on what a file may declare; past them the reader returns
 * GS_ELIMIT. An object may have at most as many references as w takes
 * (gs_writer_set_max_refs). */
#define GSF_GCDUMP_MAX_TYPES     (16u << 20)
#define GSF_GCDUMP_MAX_NAME      (1u << 20)    /* characters of one string */

/* Sniffs the first bytes: nonzero when they start a .gcdump file. */
int gsf_gcdump_sniff(const unsigned char *head, size_t n);

/* Reads a whole .gcdump through in/in_ctx (raw bytes, already decompressed)
 * and writes it as records (one section) through w. Returns 0, or a negative
 * GS_E* code (gs_error.h) with a message naming the byte offset in err.
 * Nothing is written unless the whole file was read and found well formed.
 * On success err holds a note when PerfView kept only a sample of the heap
 * (the records are the sample), else "". */
int gsf_gcdump_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap);

#endif
