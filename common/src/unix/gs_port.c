/* gs_port.c (unix) - POSIX implementation of the port layer. */
#include <errno.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_port.h"

int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got) {
  for (;;) {
    ssize_t n = read(fd, buf, cap);
    if (n >= 0) { *got = (size_t)n; return GS_OK; }
    if (errno != EINTR) return GS_EIO;
  }
}
