/* gs_file.h - input files of every command: dumps, plain or compressed by
 * zstd or gzip, and the heap files of other tools (V8, HPROF, .gcdump) as
 * records.
 *
 * A file is opened by path ("-" is standard input) and read through a
 * gs_read_fn, so any gs_reader can sit on top of it. Compression and the
 * format are detected by content, not by the name, and both are handled as
 * streams (collector/formats). */
#ifndef GS_FILE_H
#define GS_FILE_H

#include <stddef.h>
#include <stdint.h>
#include "gs_diag.h"
#include "gs_reader.h"

typedef struct gs_file gs_file;

/* Opens path and looks at its first bytes. On failure returns GS_EIO or
 * GS_ENOMEM with a message in err ("cannot open 'x': No such file..."). */
int gs_file_open(gs_file **f, const char *path, char *err, size_t cap);
void gs_file_close(gs_file *f);

/* The gs_read_fn of the file: decompressed bytes. On GS_EIO,
 * gs_file_error() says what went wrong (read error, bad zstd or gzip data). */
int gs_file_read(void *ctx, void *buf, size_t cap, size_t *got);
/* A reader on the file; free it before the file. */
int gs_file_new_reader(gs_file *f, gs_reader **r);

#define GS_FILE_STDIN_NAME "<stdin>"
/* The name shown for a path: GS_FILE_STDIN_NAME for "-". */
const char *gs_file_display_name(const char *path);

const char *gs_file_name(const gs_file *f);     /* as shown: "<stdin>" for "-" */
const char *gs_file_error(const gs_file *f);    /* "" when nothing failed */
/* After a read failed with GS_EIO: the diagnostic when the file is a foreign
 * heap file that is malformed or truncated (the input is invalid), else NULL. */
const gs_diag *gs_file_diag(const gs_file *f);
const char *gs_file_format(const gs_file *f);   /* "gclog", "hprof", ... */
uint64_t gs_file_size(const gs_file *f);        /* bytes on disk; 0 if unknown */
uint64_t gs_file_consumed(const gs_file *f);    /* bytes read from disk so far */

/* Shows a percentage on stderr while the file is read, when it is large
 * and stderr is a terminal; hide before printing, end when done. */
void gs_file_show_progress(gs_file *f);
void gs_file_hide_progress(gs_file *f);

/* Called as every file of the process is opened (opened 1, consumed 0)
 * and read, with the bytes read from disk so far and its size (0 when
 * unknown): for a process whose progress is watched from outside (the
 * collector's analysis children). One hook a process; NULL removes it. */
typedef void (*gs_file_read_fn)(int opened, uint64_t consumed, uint64_t size);
void gs_file_on_read(gs_file_read_fn fn);

/* The references one object of every file opened from now on may have
 * (default GS_READER_DEFAULT_MAX_REFS), in its records and when converted:
 * each costs 8 bytes while the object is read. One limit per process. */
void gs_file_set_max_refs(size_t max_refs);
size_t gs_file_max_refs(void);

/* ---- dumps, for the analyses ---- */

/* What went wrong with an input, for the caller to report in its own way:
 * err (GS_E*), the file as shown ("" when the problem is not one file's),
 * the diagnostic of invalid input (GS_EFORMAT), else the reason. */
typedef struct gs_file_fault {
  int err;
  char file[256];
  char text[300];
  gs_diag diag;
} gs_file_fault;

/* Whether gs_file_open_dump shows progress (gs_file_show_progress); off
 * unless a program turns it on. One switch per process. */
void gs_file_set_progress(int on);
/* Whether closing a file read to its end prints, on stderr, what its
 * reader noted ("FILE: warning: ..."; a .gcdump that is a sample of the
 * heap). Off unless a program turns it on. One switch per process. */
void gs_file_set_notes(int on);

/* Opens the dump at path with a reader on it, for an analysis, which
 * builds the graph: a foreign file whose converter holds the whole heap
 * (gsf_format_holds_heap) is converted whole now into an unlinked file in
 * $TMPDIR (else /tmp) and read from there, so that the converter's tables
 * and the graph are not held at once. On failure returns the error with
 * fault filled (a failed write to the temporary file is GS_EIO, naming
 * it), and leaves *f and *r NULL. */
int gs_file_open_dump(const char *path, gs_file **f, gs_reader **r, gs_file_fault *fault);
/* The same, the records streamed as they are converted: for a caller that
 * holds no graph. */
int gs_file_open_records(const char *path, gs_file **f, gs_reader **r, gs_file_fault *fault);
void gs_file_close_dump(gs_file *f, gs_reader *r);
/* Fills fault for a failed read of f (d for GS_EFORMAT, else NULL);
 * returns err. */
int gs_file_fault_set(gs_file_fault *fault, const gs_file *f, int err, const gs_diag *d);
/* Fills fault with a reason about file (NULL: none); returns err. */
int gs_file_fault_text(gs_file_fault *fault, const char *file, int err, const char *text);

#endif
