/* gs_port_local.c - the Unix port layer's Unix domain sockets: the client
 * a profiler module's socket needs, and the listener a .NET runtime that
 * connects to its tool needs. */
#define _DEFAULT_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* ---- listening ---- */

struct gs_port_listener {
  int fd;
  char path[108];
};

/* Fills sa for path; GS_EINVAL with the reason for a path too long. */
static int local_address(struct sockaddr_un *sa, const char *path, char *err, size_t errcap) {
  memset(sa, 0, sizeof *sa);
  if (strlen(path) >= sizeof sa->sun_path) {
    snprintf(err, errcap, "%.100s...: path too long for a socket (at most %u bytes)", path,
             (unsigned)sizeof sa->sun_path - 1);
    return GS_EINVAL;
  }
  sa->sun_family = AF_UNIX;
  memcpy(sa->sun_path, path, strlen(path) + 1);
  return GS_OK;
}

int gs_port_local_listen(gs_port_listener **l, const char *path, char *err, size_t errcap) {
  struct sockaddr_un sa;
  struct stat st;
  int fd, rc;
  *l = NULL;
  if ((rc = local_address(&sa, path, err, errcap))) return rc;
  if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path);   /* an earlier run's */
  if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
      bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 8)) {
    snprintf(err, errcap, "%.200s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return GS_EIO;
  }
  if (!(*l = malloc(sizeof **l))) {
    snprintf(err, errcap, "%.200s: out of memory", path);
    close(fd);
    unlink(path);
    return GS_ENOMEM;
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  (*l)->fd = fd;
  memcpy((*l)->path, sa.sun_path, sizeof (*l)->path);
  return GS_OK;
}

int gs_port_local_accept(gs_port_listener *l, gs_port_socket **s, int timeout_ms, char *err,
                         size_t errcap) {
  struct pollfd p;
  int fd, rc;
  *s = NULL;
  p.fd = l->fd;
  p.events = POLLIN;
  do rc = poll(&p, 1, timeout_ms); while (rc < 0 && errno == EINTR);
  if (rc == 0) return GS_EOF;
  do fd = rc > 0 ? accept(l->fd, NULL, NULL) : -1; while (fd < 0 && rc > 0 && errno == EINTR);
  if (fd < 0 || !(*s = malloc(sizeof **s))) {
    snprintf(err, errcap, "%.200s: %s", l->path, fd < 0 ? strerror(errno) : "out of memory");
    if (fd >= 0) close(fd);
    return GS_EIO;
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  (*s)->fd = fd;
  return GS_OK;
}

void gs_port_local_unlisten(gs_port_listener *l) {
  if (!l) return;
  close(l->fd);
  unlink(l->path);
  free(l);
}
