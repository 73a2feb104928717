/* gs_port.c (unix) - POSIX implementation of the port layer. */
#define _DEFAULT_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

unsigned long long gs_port_fd_size(int fd) {
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) return 0;
  return (unsigned long long)st.st_size;
}

/* Below this size the table is cheap whatever backs it. */
#define TABLE_MMAP_MIN (4u << 20)

void *gs_port_alloc_table(size_t bytes) {
  void *p;
  if (bytes < TABLE_MMAP_MIN) return calloc(1, bytes);
  p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void gs_port_free_table(void *p, size_t bytes) {
  if (!p) return;
  if (bytes < TABLE_MMAP_MIN) free(p);
  else munmap(p, bytes);
}
