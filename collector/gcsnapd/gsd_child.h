/* gsd_child.h - the one way gcsnapd runs an analysis: in a child process.
 *
 * The analyses of stored snapshots (summaries, histograms, dominators,
 * paths, diff, trend) build whole-heap graphs. Run by gsd_child_run, the
 * analysis library does that in a forked child: its memory goes back to
 * the system when the child ends, and a heap too large for memory, or a
 * crash, fails that one request, never the collector. Called from libuv's
 * thread pool; blocks until the child ends. */
#ifndef GSD_CHILD_H
#define GSD_CHILD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_file.h"

/* What an analysis gives back, as the child's exit status. */
#define GSD_CHILD_OK 0            /* *answer is the result */
#define GSD_CHILD_WANTING 1       /* the input is invalid, or lacks what was asked */
#define GSD_CHILD_FAILED 2        /* I/O error, out of memory */
#define GSD_CHILD_DIED (-1)       /* killed, or ended without an answer */
#define GSD_CHILD_TOO_LARGE (-2)  /* the answer was longer than allowed */

/* What one analysis child may use before the kernel stops it (it then
 * counts as GSD_CHILD_DIED or GSD_CHILD_FAILED, out of memory): by
 * default GSD_CHILD_CPU_SECONDS and GSD_CHILD_MAX_BYTES of address space;
 * gsd_child_bound() changes both for the children started after it. */
#define GSD_CHILD_CPU_SECONDS 600
#define GSD_CHILD_MAX_BYTES (16ULL << 30)
void gsd_child_bound(unsigned long long cpu_seconds, unsigned long long max_bytes);

/* Runs in the child: the result in *answer (GSD_CHILD_OK), or why it
 * failed in why (the other codes). */
typedef int (*gsd_child_fn)(void *ctx, json_t **answer, char *why, size_t cap);

/* Runs fn(ctx) in a child process. *out gets the answer's JSON text or
 * the reason (NUL-terminated, at most max bytes; free it), *status one of
 * the codes above. GS_OK once the child ran; GS_EIO when it could not
 * start (errno says why), GS_ENOMEM. */
int gsd_child_run(gsd_child_fn fn, void *ctx, size_t max, char **out, size_t *len,
                  int *status);

/* What a running child has read, in memory it shares with the collector:
 * the files it opened, and of the last one the bytes read from disk and
 * its size. The child writes it as it reads; read it with
 * gsd_child_progress_get at any time. */
typedef struct gsd_child_progress gsd_child_progress;
typedef struct gsd_child_read { uint64_t files, consumed, size; } gsd_child_read;
gsd_child_progress *gsd_child_progress_new(void);   /* NULL when out of memory */
void gsd_child_progress_free(gsd_child_progress *p);
gsd_child_read gsd_child_progress_get(const gsd_child_progress *p);

/* gsd_child_run, the child reporting what it reads in p (NULL: nothing).
 * Sanitizer builds, which run the analysis on the calling thread, report
 * nothing. */
int gsd_child_run_watched(gsd_child_fn fn, void *ctx, size_t max, char **out, size_t *len,
                          int *status, gsd_child_progress *p);

/* The code and reason of a failed analysis, as "FILE:LINE: error [CODE]:
 * message" for invalid input and "FILE: reason" otherwise. */
int gsd_child_fault(const gs_file_fault *fault, char *why, size_t cap);

/* A gsd_child_fn: the summary of the dump at path with top rows of its
 * histogram (0: all), as "gcsnap summary --json" prints it. */
typedef struct gsd_child_summary {
  const char *path;
  uint64_t top;
} gsd_child_summary;
int gsd_child_summary_fn(void *ctx, json_t **answer, char *why, size_t cap);

#endif
