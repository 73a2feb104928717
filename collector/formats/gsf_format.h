/* gsf_format.h - the heap file formats gcsnap reads, told apart by content.
 *
 * Every reader has the same shape: a sniff of the first bytes, and a
 * conversion of the whole input (a gs_read_fn of raw, already decompressed
 * bytes) into records of a section a heap, written through a gs_writer. */
#ifndef GSF_FORMAT_H
#define GSF_FORMAT_H

#include <stddef.h>
#include "gs_reader.h"
#include "gs_writer.h"

/* Bytes the sniffs look at; a shorter input is sniffed as it is. */
#define GSF_SNIFF_BYTES 64
/* References of one object a converter holds at most: an object with more
 * (a large array) is written in parts as they are read
 * (gs_writer_object_begin). */
#define GSF_REFS_PART 65536u
/* The words of every converter's message about an object with more
 * references than its writer takes (gs_writer_set_max_refs). */
#define GSF_ONE_OBJECT_LIMIT "the limit of one object"

typedef enum gsf_format {
  GSF_RECORDS = 0,     /* the record format itself (.gclog), or unknown */
  GSF_HEAPSNAPSHOT,    /* V8 .heapsnapshot (JSON) */
  GSF_HPROF,           /* JDK HPROF 1.0.x */
  GSF_GCDUMP           /* PerfView / dotnet-gcdump .gcdump */
} gsf_format;

/* Returns GS_OK, or a negative GS_E* code with a message naming the byte
 * offset in err. */
typedef int (*gsf_convert_fn)(gs_read_fn in, void *in_ctx, gs_writer *w, char *err,
                              size_t cap);

gsf_format gsf_detect(const unsigned char *head, size_t n);
/* What a file no reader takes is, when its first bytes tell: text in
 * UTF-16 (*code GS_D_NOT_TEXT), or JSON that is no V8 heap snapshot, a
 * trace, a core dump, an archive... (GS_D_BAD_HEAP_FILE). The sentence
 * for its one error, or NULL: the records' reader judges it. */
const char *gsf_not_read(const unsigned char *head, size_t n, gs_diag_code *code);
/* "gclog", "heapsnapshot", "hprof", "gcdump": the names a catalog records. */
const char *gsf_format_name(gsf_format f);
/* The converter of a foreign format; NULL for GSF_RECORDS. */
gsf_convert_fn gsf_converter(gsf_format f);
/* Whether f's converter holds a table of the whole heap until its last
 * records are written (V8: the nodes come before their edges; .gcdump: the
 * graph comes whole), so that a consumer building the graph meanwhile holds
 * both at once. */
int gsf_format_holds_heap(gsf_format f);

#endif
