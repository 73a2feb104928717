/* gs_spool.h - the agent's store-and-forward spool: snapshots waiting for
 * the collector, one file each in a folder.
 *
 * A spooled snapshot is the exact stream of frames the agent would have
 * sent (SnapshotBegin to SnapshotEnd, see gs_wire.h) after a one-line
 * header, in a file named after its snapshot ID:
 *
 *     DIR/00001795244768269000.gcspool
 *     gcsnap-spool 1 1795244768269000 heap-growth=25%\n   (magic, format, ID, trigger)
 *     <frames>
 *
 * It is written under DIR/ID.gcspool.tmp, synced and renamed, so a file
 * under its final name is always whole; a temporary file left by a crash
 * is removed when the spool is opened. IDs grow with time, so the names'
 * order is the capture order, oldest first. Uploading one is sending its
 * frames as they are, which keeps its snapshot ID, trigger and clock.
 *
 * The spool holds at most max_files snapshots and max_bytes bytes. When a
 * new snapshot makes it exceed either, the oldest ones are removed (and
 * logged) until it fits again; the snapshot just written is never removed
 * for the bound, so a single snapshot larger than max_bytes is kept alone.
 * One agent per spool folder. */
#ifndef GS_SPOOL_H
#define GS_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"
#include "gs_wire_writer.h"

#define GS_SPOOL_SUFFIX ".gcspool"
#define GS_SPOOL_MAGIC "gcsnap-spool"
#define GS_SPOOL_FORMAT 1
/* Longest trigger a header keeps. */
#define GS_SPOOL_TRIGGER_MAX 128

typedef struct gs_spool gs_spool;

/* Opens (creating the folder if needed) the spool in dir; removes stale
 * temporary files. GS_EIO with the reason in err when the folder cannot be
 * made or read. max_files >= 1; max_bytes 0: no byte bound. */
int gs_spool_open(gs_spool **sp, const char *dir, unsigned max_files, uint64_t max_bytes,
                  char *err, size_t errcap);
void gs_spool_close(gs_spool *sp);

/* Snapshots and bytes spooled now. */
int gs_spool_usage(gs_spool *sp, unsigned *files, uint64_t *bytes);
/* The largest snapshot ID spooled, 0 when empty: new IDs must exceed it. */
uint64_t gs_spool_last_id(gs_spool *sp);

/* ---- writing one snapshot ---- */

/* Starts the file of snapshot_id, header written. */
int gs_spool_begin(gs_spool *sp, uint64_t snapshot_id, const char *trigger);
/* Appends frames (a gs_wire_frame_fn: ctx is the spool). */
int gs_spool_write(void *spool, const void *frame, size_t len);
/* Syncs and renames the file into place, then applies the bound. */
int gs_spool_commit(gs_spool *sp);
/* Drops the file being written. */
void gs_spool_abort(gs_spool *sp);

/* ---- forwarding ---- */

/* The oldest spooled snapshot: GS_OK with its ID, trigger and size;
 * GS_EOF when the spool is empty. */
int gs_spool_oldest(gs_spool *sp, uint64_t *snapshot_id, char *trigger, size_t trigger_cap,
                    uint64_t *bytes);
/* Sends the frames of snapshot_id to send(ctx, ...), in chunks. Returns
 * GS_OK, the error send returned, GS_EFORMAT for a file that is not a
 * spooled snapshot, or GS_EIO when it cannot be read. */
int gs_spool_send(gs_spool *sp, uint64_t snapshot_id, gs_wire_frame_fn send, void *ctx);
/* Removes snapshot_id (the collector stored it); GS_OK if already gone. */
int gs_spool_remove(gs_spool *sp, uint64_t snapshot_id);

/* Why the last call failed. */
const char *gs_spool_error(const gs_spool *sp);

#endif
