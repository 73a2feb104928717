/* gs_writer.h - writer of the RPM GC heap dump record format.
 *
 * Always writes the later form of the format: "a" and "c" carry a timestamp,
 * numbers are lowercase hex without leading zeros, fields are separated by one
 * space and lines end with LF. Reading canonical input and writing it back
 * gives the same bytes. Output is buffered and handed to a write callback. */
#ifndef GS_WRITER_H
#define GS_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "gs_reader.h"

/* Writes all len bytes or returns a negative gs error code. */
typedef int (*gs_write_fn)(void *ctx, const void *buf, size_t len);

typedef struct gs_writer gs_writer;

int gs_writer_new(gs_writer **w, gs_write_fn fn, void *ctx);
int gs_writer_new_file(gs_writer **w, FILE *f);
/* Flushes and frees; returns the first write error, if any. */
int gs_writer_free(gs_writer *w);
int gs_writer_flush(gs_writer *w);

int gs_writer_section(gs_writer *w, uint64_t version, const char *name,
                      size_t name_len, uint64_t timestamp);
int gs_writer_type(gs_writer *w, uint64_t id, const char *name, size_t name_len);
int gs_writer_object(gs_writer *w, uint64_t id, uint64_t type, uint64_t size,
                     const uint64_t *refs, size_t nrefs);
/* The same in parts, for a converter that meets an object's references a
 * few at a time: begin, refs as often as needed, end, with no other record
 * in between. */
int gs_writer_object_begin(gs_writer *w, uint64_t id, uint64_t type, uint64_t size);
int gs_writer_refs(gs_writer *w, const uint64_t *refs, size_t nrefs);
int gs_writer_object_end(gs_writer *w);
/* An object with more references than max_refs (default
 * GS_READER_DEFAULT_MAX_REFS, what a reader takes by default) is not
 * written: the object's writes return GS_ELIMIT, and every write after. */
void gs_writer_set_max_refs(gs_writer *w, size_t max_refs);
size_t gs_writer_max_refs(const gs_writer *w);
/* container is written only for static roots (kind 4). */
int gs_writer_root(gs_writer *w, uint64_t id, unsigned kind, unsigned flags,
                   uint64_t container);
int gs_writer_end(gs_writer *w, const char *name, size_t name_len,
                  uint64_t timestamp);
/* Writes any record the reader produced; a missing timestamp is written as 0. */
int gs_writer_record(gs_writer *w, const gs_record *rec);

#endif
