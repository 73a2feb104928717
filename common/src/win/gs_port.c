/* gs_port.c (win) - Win32 implementation of the port layer. */
#include <io.h>
#include "gs_error.h"
#include "gs_port.h"

int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got) {
  int n = _read(fd, buf, cap > 0x40000000u ? 0x40000000u : (unsigned)cap);
  if (n < 0) return GS_EIO;
  *got = (size_t)n;
  return GS_OK;
}
