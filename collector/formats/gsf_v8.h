/* gsf_v8.h - reader of V8 heap snapshots (.heapsnapshot JSON, written by
 * Chrome DevTools, Node's v8.writeHeapSnapshot and --heapsnapshot-signal).
 *
 * The JSON is parsed as a stream (yajl): memory holds a fixed 24 bytes a
 * node and 8 bytes an edge of a synthetic node, never the text. The node
 * type mapping, weak edges and roots are described in this folder's README. */
#ifndef GSF_V8_H
#define GSF_V8_H

#include <stddef.h>
#include "gs_reader.h"
#include "gs_writer.h"

/* Where a JSON value in head (n bytes) begins: past a UTF-8 byte order
 * mark and blanks. */
size_t gsf_v8_json_start(const unsigned char *head, size_t n);
/* Nonzero when head (n bytes) starts a V8 heap snapshot. */
int gsf_v8_sniff(const unsigned char *head, size_t n);
/* Reads a whole snapshot through in/in_ctx and writes it as records (one
 * section) through w. Returns 0, or a negative GS_E* code (gs_error.h) with
 * a message naming the byte offset in err. */
int gsf_v8_convert(gs_read_fn in, void *in_ctx, gs_writer *w, char *err, size_t cap);

#endif
