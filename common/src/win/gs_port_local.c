/* gs_port_local.c - local sockets on Windows: not supported by this port. */
#include <stdio.h>
#include "gs_error.h"
#include "gs_port_local.h"

int gs_port_local_connect(gs_port_socket **out, const char *path, char *err, size_t errcap) {
  *out = NULL;
  snprintf(err, errcap, "%.200s: local sockets are not supported on Windows", path);
  return GS_EINVAL;
}

int gs_port_local_listen(gs_port_listener **l, const char *path, char *err, size_t errcap) {
  *l = NULL;
  snprintf(err, errcap, "%.200s: listening on a local socket is not supported on Windows", path);
  return GS_EINVAL;
}

int gs_port_local_accept(gs_port_listener *l, gs_port_socket **s, int timeout_ms, char *err,
                         size_t errcap) {
  (void)l, (void)timeout_ms;
  *s = NULL;
  snprintf(err, errcap, "local sockets are not supported on Windows");
  return GS_EIO;
}

void gs_port_local_unlisten(gs_port_listener *l) { (void)l; }
