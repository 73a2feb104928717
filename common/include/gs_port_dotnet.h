/* gs_port_dotnet.h - where a .NET program listens for diagnostics tools.
 *
 * Every .NET 5+ process serves its diagnostics IPC on an endpoint of its
 * own: a Unix domain socket $TMPDIR/dotnet-diagnostic-PID-KEY-socket (TMPDIR
 * as the program has it, else /tmp; the newest when several are left), or
 * the named pipe \\.\pipe\dotnet-diagnostic-PID on Windows. The connection
 * is a gs_port_socket: send, receive and close it with gs_port.h's network
 * calls. */
#ifndef GS_PORT_DOTNET_H
#define GS_PORT_DOTNET_H

#include <stddef.h>
#include <stdint.h>
#include "gs_port.h"

/* The endpoint of process pid into path. GS_OK; GS_EIO with the reason in
 * err (no such process, or no endpoint: not a .NET program, or one started
 * with its diagnostics off); GS_EINVAL where the platform has none. */
int gs_port_dotnet_endpoint(unsigned long pid, char *path, size_t cap, char *err, size_t errcap);

/* Called for each process with an endpoint this user may open; a nonzero
 * return stops the listing and is returned. */
typedef int (*gs_port_dotnet_fn)(void *ctx, unsigned long pid, const char *endpoint);
int gs_port_dotnet_list(gs_port_dotnet_fn fn, void *ctx);

/* Connects to an endpoint (a socket's path or a pipe's name). GS_EIO with
 * the reason in err. */
int gs_port_dotnet_connect(gs_port_socket **s, const char *endpoint, char *err, size_t errcap);

/* Whether process pid still runs (1), or is gone (0). */
int gs_port_proc_alive(unsigned long pid);

/* The resident memory of process pid in bytes; 0 when unknown. */
uint64_t gs_port_proc_rss(unsigned long pid);

#endif
