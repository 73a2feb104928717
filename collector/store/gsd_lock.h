/* gsd_lock.h - one collector per store folder.
 *
 * The store's catalog, its temporary files and its start-up recovery are
 * one collector's own: a second gcsnapd on the same folder would delete the
 * first one's snapshots in flight. The first takes an exclusive flock() on
 * STORE/gcsnapd.lock (with its PID written in it, for the message) and
 * keeps it until it exits; the kernel releases it even after SIGKILL. */
#ifndef GSD_LOCK_H
#define GSD_LOCK_H

#include <stddef.h>

/* Locks dir: GS_OK with *fd open, GS_ELIMIT (err names the holder's PID)
 * when another process holds it, or GS_EIO. */
int gsd_lock_take(const char *dir, int *fd, char *err, size_t cap);
void gsd_lock_release(int fd);

#endif
