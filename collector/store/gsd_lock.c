/* gsd_lock.c - one collector per store folder (see gsd_lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "gs_error.h"
#include "gsd_lock.h"

#define LOCK_NAME "gcsnapd.lock"

/* The PID the holder wrote, or 0. */
static long holder_of(int fd) {
  char buf[32];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return strtol(buf, NULL, 10);
}

int gsd_lock_take(const char *dir, int *out, char *err, size_t cap) {
  size_t n = strlen(dir) + sizeof LOCK_NAME + 2;
  char *path = malloc(n), pid[32];
  int fd, len;
  if (!path) {
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  snprintf(path, n, "%s/%s", dir, LOCK_NAME);
  fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(err, cap, "cannot open %s: %s", path, strerror(errno));
  } else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int busy = errno == EWOULDBLOCK;
    if (busy)
      snprintf(err, cap, "the store is in use by another gcsnapd (pid %ld, lock %s): stop it, or "
               "give this one another --store", holder_of(fd), path);
    else
      snprintf(err, cap, "cannot lock %s: %s", path, strerror(errno));
    close(fd);
    free(path);
    return busy ? GS_ELIMIT : GS_EIO;
  } else {
    len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
      /* The PID is only for the message: the lock holds without it. */
    }
    free(path);
    *out = fd;
    return GS_OK;
  }
  free(path);
  return GS_EIO;
}

void gsd_lock_release(int fd) {
  if (fd >= 0) close(fd);
}
