/* gs_port.c (win) - Win32 implementation of the port layer. */
#include <io.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "gs_error.h"
#include "gs_port.h"

int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got) {
  int n = _read(fd, buf, cap > 0x40000000u ? 0x40000000u : (unsigned)cap);
  if (n < 0) return GS_EIO;
  *got = (size_t)n;
  return GS_OK;
}

unsigned long long gs_port_fd_size(int fd) {
  struct _stat st;
  if (_fstat(fd, &st) || !(st.st_mode & _S_IFREG) || st.st_size < 0) return 0;
  return (unsigned long long)st.st_size;
}

void *gs_port_alloc_table(size_t bytes) { return calloc(1, bytes); }

void gs_port_free_table(void *p, size_t bytes) { (void)bytes; free(p); }
