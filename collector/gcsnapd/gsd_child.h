/* gsd_child.h - runs a gcsnap child process and collects what it prints.
 *
 * The collector runs heavy reads of stored snapshots (summaries, whole
 * histograms) as "gcsnap ..." children, so that their memory is given back
 * when they end. Called from libuv's thread pool; blocks until the child
 * exits. */
#ifndef GSD_CHILD_H
#define GSD_CHILD_H

#include <stddef.h>

/* Where the child's stderr goes. */
typedef enum { GSD_CHILD_STDERR_DROP, GSD_CHILD_STDERR_KEEP } gsd_child_stderr;

/* Runs argv (argv[0] a path); *out gets its stdout, and its stderr with
 * KEEP, NUL-terminated (free it), at most max bytes (the rest is not
 * read); *status its exit status, -1 when it could not run or was killed.
 * GS_OK once it ran, GS_EIO when it could not start, GS_ENOMEM. */
int gsd_child_run(char *const argv[], gsd_child_stderr err, size_t max, char **out, size_t *len,
                  int *status);

#endif
