/* gsd_ingest.h - one snapshot stream turned back into records, validated
 * and written as the canonical text through zstd to a temporary file.
 *
 * Fed the data messages that follow SnapshotBegin, in order, as protobuf-c
 * decoded them. Objects are delta-decoded per the schema and an object
 * split over several batches ("continues") is joined again. Every record
 * goes to the validator of "gcsnap validate" and to gs_writer; the text is
 * counted and CRC-32'd on its way to zstd, so SnapshotEnd can be checked
 * without reading the file back. Memory: the validator's tables, zstd's
 * context, and the references of one object (8 bytes each, at most
 * max_object_refs: by default 256 MiB, given back once that object is
 * written when it took more than GSD_INGEST_KEEP_REFS). The validator's
 * tables and, beyond GSD_INGEST_KEEP_REFS, that object's references stay
 * within max_validator_bytes together.
 *
 * No event loop in here: the daemon calls it from its loop (messages) and
 * from a worker thread (commit, summary), and the tests call it directly. */
#ifndef GSD_INGEST_H
#define GSD_INGEST_H

#include <stddef.h>
#include <stdint.h>
#include "gcsnap.pb-c.h"
#include "gs_reader.h"
#include "gsd_store.h"

/* References an ingest keeps room for between objects (8 MiB). */
#define GSD_INGEST_KEEP_REFS (1u << 20)

typedef struct gsd_ingest gsd_ingest;

/* What one snapshot may take (gcsnapd's --max-objects, --max-references,
 * --max-sections, --min-free-bytes); 0 for no limit. More objects,
 * references or sections than the limit, or references of one object than
 * max_object_refs (--max-object-references; 0: GS_READER_DEFAULT_MAX_REFS,
 * what the stored file is written and read back with), fail the stream (code GS_WIRE_E_INVALID, fatal: the session ends,
 * so the rest is not sent for nothing). Free space on the file's
 * filesystem is checked every GSD_INGEST_SPACE_CHECK bytes written: below
 * min_free_bytes, or on a write error (ENOSPC), the file is removed at
 * once and the snapshot fails at SnapshotEnd (GS_WIRE_E_STORAGE, which
 * agents retry later). */
typedef struct gsd_ingest_limits {
  uint64_t max_objects, max_references, max_sections, min_free_bytes;
  uint64_t max_validator_bytes;   /* the validator's tables and the references
                                   * of the object arriving; 0: none */
  uint64_t max_object_refs;
} gsd_ingest_limits;

#define GSD_INGEST_SPACE_CHECK (1u << 20)

/* Why a stream failed: a GS_WIRE_E_* code, a reason for the log, the
 * catalog and the agent, and whether the session must end (the stream
 * broke the protocol) or only this snapshot fails (invalid content, a
 * write error). */
typedef struct gsd_fault {
  unsigned code;
  int fatal;
  char reason[256];
} gsd_fault;

/* What was received so far (all of it once the stream ended). */
typedef struct gsd_ingest_counts {
  uint64_t sections, types, objects, references, roots, generations;
  uint64_t bytes;            /* sum of object sizes */
  uint64_t records;
  uint64_t text_bytes;
  uint32_t crc32;
  uint64_t errors, warnings; /* validation */
  uint64_t file_bytes;       /* compressed bytes written */
} gsd_ingest_counts;

/* Writes to tmp_path (created; it must not exist). With tmp_path NULL the
 * stream is only checked (sequence and structure), nothing is validated or
 * written: for a snapshot already stored. */
int gsd_ingest_new(gsd_ingest **ig, const char *tmp_path, char *err, size_t cap);
/* Sets the limits (none until called). */
void gsd_ingest_set_limits(gsd_ingest *ig, const gsd_ingest_limits *lim);
/* Frees; removes the temporary file unless it was committed. */
void gsd_ingest_free(gsd_ingest *ig);

/* Feeds one message of the stream. GS_OK, or GS_EFORMAT with *f filled:
 * the stream is over. After SnapshotEnd, gsd_ingest_ended() is set. */
int gsd_ingest_message(gsd_ingest *ig, const Gcsnap__Envelope *env, gsd_fault *f);
int gsd_ingest_ended(const gsd_ingest *ig);

const gsd_ingest_counts *gsd_ingest_stats(const gsd_ingest *ig);
/* Why the file is no longer being written (disk full, a write error), or
 * NULL while it is; the stream still fails only at SnapshotEnd. */
const char *gsd_ingest_write_error(const gsd_ingest *ig);
/* "line N: [code] message" of the first validation error, or "". */
const char *gsd_ingest_first_error(const gsd_ingest *ig);

/* Ends the zstd frame, syncs the file and renames it to final_path (and
 * syncs its folder), never over a file already there. Returns GS_OK or
 * GS_EIO with err. Thread-safe: touches only ig. */
int gsd_ingest_commit(gsd_ingest *ig, const char *final_path, char *err, size_t cap);
/* Whether the file has its final name (so it is this snapshot's to remove). */
int gsd_ingest_committed(const gsd_ingest *ig);

/* The summary of a stored snapshot, as "gcsnap summary --json" prints it
 * (shown_name in its "file"): JSON text in *json (malloc'd) and the figures
 * in e. Made by the analysis library in a child process (gsd_child.h),
 * waited for, or in this process when c (the stream's counts; NULL: none)
 * says the work is small: text, objects and sections (thread-safe; for the
 * thread pool). A summary above 64 MB is refused (GS_ELIMIT), whichever
 * made it. */
int gsd_ingest_summarize(const char *path, const gsd_ingest_counts *c, const char *shown_name,
                         char **json, gsd_snapshot_end *e, char *err, size_t cap);

#endif
