/* gs_port_socket.h - the socket handle of the Unix port layer, shared by
 * its TCP client (gs_port.c) and its local socket client (gs_port_local.c). */
#ifndef GS_PORT_SOCKET_H
#define GS_PORT_SOCKET_H

struct gs_port_socket {
  int fd;
};

#endif
