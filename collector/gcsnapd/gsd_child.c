/* gsd_child.c - runs a gcsnap child process and collects what it prints
 * (see gsd_child.h). */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gs_error.h"
#include "gsd_child.h"

extern char **environ;

static int spawn(char *const argv[], gsd_child_stderr err, int fds[2], pid_t *pid) {
  posix_spawn_file_actions_t fa;
  int rc;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  if (err == GSD_CHILD_STDERR_KEEP) posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  else posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  rc = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

int gsd_child_run(char *const argv[], gsd_child_stderr err, size_t max, char **out, size_t *len,
                  int *status) {
  int fds[2], ws = 0, rc;
  pid_t pid;
  size_t cap = 1u << 16;
  ssize_t n;
  *out = NULL;
  *len = 0;
  *status = -1;
  if (pipe(fds)) return GS_EIO;
  rc = spawn(argv, err, fds, &pid);
  close(fds[1]);
  if (rc) {
    close(fds[0]);
    errno = rc;
    return GS_EIO;
  }
  *out = malloc(cap);
  while (*out) {
    if (*len + 1 == cap) {
      char *bigger = cap < max ? realloc(*out, cap * 2) : NULL;
      if (!bigger) break;
      *out = bigger;
      cap *= 2;
    }
    n = read(fds[0], *out + *len, cap - 1 - *len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    *len += (size_t)n;
  }
  if (*out) (*out)[*len] = 0;
  close(fds[0]);
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(ws)) *status = WEXITSTATUS(ws);
  return *out ? GS_OK : GS_ENOMEM;
}
