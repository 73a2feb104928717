/* gs_dotnet_watch.h - a .NET program's heap size between captures, without
 * a walk or a pause: a long-lived EventPipe session with the GC keyword at
 * level 4, whose GCHeapStats event ends each of the runtime's own
 * collections with the size of every generation. The size is as of the
 * last collection; until one has happened since the watch began, there is
 * none. Each poll reads only what has arrived and never waits for an
 * event that has not. */
#ifndef GS_DOTNET_WATCH_H
#define GS_DOTNET_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include "gs_dotnet_ipc.h"

typedef struct gs_dwatch gs_dwatch;

#define GS_DWATCH_BUFFER_MB 16u

/* Opens the session with the program at peer (which must outlive it).
 * GS_OK, or GS_EIO with the reason. */
int gs_dwatch_open(gs_dwatch **out, gs_dipc_peer *peer, char *err, size_t errcap);

/* The heap's bytes after the runtime's last collection: GS_OK; GS_EOF while
 * no collection has ended since the watch began; GS_EIO (reason in err)
 * when the session broke (the program exited: close and open again). */
int gs_dwatch_poll(gs_dwatch *w, uint64_t *bytes, char *err, size_t errcap);

/* Stops the session and frees w (NULL is fine). */
void gs_dwatch_close(gs_dwatch *w);

#endif
