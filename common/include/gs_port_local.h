/* gs_port_local.h - a client of a local (Unix domain) stream socket.
 *
 * The agent reaches a heap source that lives inside another process on the
 * same machine (a runtime's profiler module) through a socket file. The
 * connection is a gs_port_socket: send, receive and close it with the
 * network calls of gs_port.h. Platforms without local sockets return
 * GS_EINVAL with a message. */
#ifndef GS_PORT_LOCAL_H
#define GS_PORT_LOCAL_H

#include <stddef.h>
#include "gs_port.h"

/* Connects to the socket file at path. On failure err says why ("PATH:
 * No such file or directory") and the result is GS_EIO, or GS_EINVAL for a
 * path too long for the platform. */
int gs_port_local_connect(gs_port_socket **s, const char *path, char *err, size_t errcap);

/* The other way round, for a program that connects to the agent (a .NET
 * runtime started with DOTNET_DiagnosticPorts=PATH): a socket file made at
 * path (a socket left there by an earlier run is replaced; any other file
 * is not), accepting one connection at a time. */
typedef struct gs_port_listener gs_port_listener;
int gs_port_local_listen(gs_port_listener **l, const char *path, char *err, size_t errcap);
/* The next connection within timeout_ms (-1: no bound): GS_OK, GS_EOF when
 * none came in time, GS_EIO with the reason. */
int gs_port_local_accept(gs_port_listener *l, gs_port_socket **s, int timeout_ms, char *err,
                         size_t errcap);
/* Closes l and removes its socket file (NULL is fine). */
void gs_port_local_unlisten(gs_port_listener *l);

#endif
