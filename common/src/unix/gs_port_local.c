/* gs_port_local.c - the Unix port layer's client of a Unix domain socket. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_port_local.h"
#include "gs_port_socket.h"

int gs_port_local_connect(gs_port_socket **out, const char *path, char *err, size_t errcap) {
  struct sockaddr_un sa;
  int fd, rc;
  *out = NULL;
  memset(&sa, 0, sizeof sa);
  if (strlen(path) >= sizeof sa.sun_path) {
    snprintf(err, errcap, "%.100s...: path too long for a socket (at most %u bytes)", path,
             (unsigned)sizeof sa.sun_path - 1);
    return GS_EINVAL;
  }
  sa.sun_family = AF_UNIX;
  memcpy(sa.sun_path, path, strlen(path) + 1);
  if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) {
    snprintf(err, errcap, "%.200s: %s", path, strerror(errno));
    return GS_EIO;
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  do rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
  while (rc != 0 && errno == EINTR);
  if (rc != 0 || !(*out = malloc(sizeof **out))) {
    snprintf(err, errcap, "%.200s: %s", path, rc != 0 ? strerror(errno) : "out of memory");
    close(fd);
    return rc != 0 ? GS_EIO : GS_ENOMEM;
  }
  /* Non-blocking like the TCP sockets: every wait is bounded by poll. */
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  (*out)->fd = fd;
  return GS_OK;
}
