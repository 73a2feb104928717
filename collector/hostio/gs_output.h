/* gs_output.h - output file written atomically, optionally zstd-compressed.
 *
 * Bytes go to a temporary file next to the destination (OUT.tmp.PID) that
 * is renamed over OUT only by gs_output_commit(), after everything was
 * written and synced. An aborted or interrupted run leaves OUT untouched and
 * no temporary file behind. "-" writes to standard output directly, and so
 * is a device or pipe (the null device, a FIFO); a folder is refused. A
 * path ending in ".zst" gets zstd compression. */
#ifndef GS_OUTPUT_H
#define GS_OUTPUT_H

#include <stddef.h>

typedef struct gs_output gs_output;

/* Returns GS_OK, or GS_EIO / GS_ENOMEM with a message in err. */
int gs_output_open(gs_output **o, const char *path, char *err, size_t cap);
/* The same, but the bytes are written as given whatever the name: for
 * data that is already compressed. */
int gs_output_open_raw(gs_output **o, const char *path, char *err, size_t cap);
/* The gs_write_fn of the output. */
int gs_output_write(void *ctx, const void *buf, size_t len);
/* Drops every later write: for a failed run, whose buffered tail must not
 * reach standard output either. */
void gs_output_discard(gs_output *o);
/* Ends the compressed frame, syncs and renames into place. */
int gs_output_commit(gs_output *o);
/* Removes the temporary file unless committed, and frees. */
void gs_output_close(gs_output *o);
const char *gs_output_error(const gs_output *o);   /* "" when nothing failed */
/* Leaves the process's signals alone from now on: for a program with
 * handlers of its own (gcsnapd, whose start-up removes what an interrupted
 * run left), where the removal on SIGTERM would end the whole process. */
void gs_output_keep_signals(void);

#endif
