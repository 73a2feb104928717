/* gs_port_socket.h - the socket handle of the Win32 port layer: a Winsock
 * socket, or the handle of a named pipe (a .NET program's diagnostics
 * endpoint), whose sends, receives and close gs_port.c hands to
 * gs_port_pipe.c. Not on CE, which has no named pipes. */
#ifndef GS_PORT_SOCKET_H
#define GS_PORT_SOCKET_H

#include <winsock2.h>
#include <windows.h>
#include "gs_port.h"

struct gs_port_socket {
  SOCKET fd;                  /* INVALID_SOCKET for a pipe */
  HANDLE pipe, event;         /* NULL for a socket; event: the pipe's overlapped I/O */
};

/* gs_port_pipe.c: the pipe named name (\\.\pipe\...), opened for
 * overlapped I/O so that every wait is bounded; GS_EIO with the reason. */
int gs_port_pipe_connect(gs_port_socket **out, const char *name, char *err, size_t errcap);
int gs_port_pipe_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms);
int gs_port_pipe_recv(gs_port_socket *s, void *buf, size_t cap, size_t *got, int timeout_ms);
void gs_port_pipe_close(gs_port_socket *s);

/* gs_port.c: keeps code for gs_port_error_text(). */
void gs_port_set_error(DWORD code);

#endif
