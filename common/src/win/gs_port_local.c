/* gs_port_local.c - local sockets on Windows: not supported by this port. */
#include <stdio.h>
#include "gs_error.h"
#include "gs_port_local.h"

int gs_port_local_connect(gs_port_socket **out, const char *path, char *err, size_t errcap) {
  *out = NULL;
  snprintf(err, errcap, "%.200s: local sockets are not supported on Windows", path);
  return GS_EINVAL;
}
