/* gsf_hprof.h - reader of the JDK's HPROF heap dumps (JAVA PROFILE 1.0.x,
 * 4- or 8-byte identifiers), as written by jcmd GC.heap_dump, jmap -dump
 * and -XX:+HeapDumpOnOutOfMemoryError, and Android's (1.0.3, am dumpheap).
 *
 * The dump streams: objects are written as they are read; memory holds the
 * strings, the classes and their field layouts, never the objects. How
 * classes, sizes and roots are mapped is in this folder's README. */
#ifndef GSF_HPROF_H
#define GSF_HPROF_H

#include <stddef.h>
#include "gs_reader.h"
#include "gs_writer.h"

/* Nonzero when head (n bytes) starts an HPROF file. */
int gsf_hprof_sniff(const unsigned char *head, size_t n);
/* Reads a whole HPROF file through in/in_ctx and writes it as records (a
 * section for each heap dump it holds) through w. Returns 0, or a negative GS_E* code (gs_error.h) with
 * a message naming the byte offset in err. */
int gsf_hprof_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap);

#endif
