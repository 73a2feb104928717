/* gs_port_dotnet.c - the Unix port layer's view of .NET programs'
 * diagnostics sockets (gs_port_dotnet.h), through /proc and the folder of
 * temporary files each program uses. */
#define _DEFAULT_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_port_dotnet.h"
#include "gs_port_local.h"

#define PREFIX "dotnet-diagnostic-"
#define SUFFIX "-socket"
#define DIRS_MAX 32                /* folders of sockets searched by a listing */
#define ENVIRON_MAX (1u << 20)     /* bytes of a process's environment read */

/* TMPDIR as process pid has it, else /tmp, into dir. */
static void process_tmpdir(unsigned long pid, char *dir, size_t cap) {
  char path[64], *env = malloc(ENVIRON_MAX), *p;
  ssize_t n = 0;
  int fd;
  snprintf(dir, cap, "/tmp");
  snprintf(path, sizeof path, "/proc/%lu/environ", pid);
  if (!env || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
    free(env);
    return;
  }
  n = read(fd, env, ENVIRON_MAX - 1);
  close(fd);
  env[n > 0 ? n : 0] = '\0';
  for (p = env; p < env + n; p += strlen(p) + 1) {
    if (!strncmp(p, "TMPDIR=", 7) && p[7]) {
      snprintf(dir, cap, "%s", p + 7);
      break;
    }
  }
  free(env);
}

/* The pid of a socket's name, or 0 when the name is not an endpoint's. */
static unsigned long endpoint_pid(const char *name) {
  size_t n = strlen(name), k = strlen(PREFIX), s = strlen(SUFFIX);
  char *end;
  unsigned long pid;
  if (n <= k + s || strncmp(name, PREFIX, k) || strcmp(name + n - s, SUFFIX)) return 0;
  pid = strtoul(name + k, &end, 10);
  return *end == '-' && end != name + k ? pid : 0;
}

typedef struct found {
  unsigned long pid;
  char path[256];
  time_t mtime;
} found;

/* Calls each for every endpoint socket in dir whose pid is alive. */
static int scan(const char *dir, int (*each)(void *, const found *), void *ctx) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int rc = 0;
  if (!d) return 0;
  while (!rc && (e = readdir(d))) {
    found f;
    struct stat st;
    if (!(f.pid = endpoint_pid(e->d_name))) continue;
    if ((size_t)snprintf(f.path, sizeof f.path, "%s/%s", dir, e->d_name) >= sizeof f.path) continue;
    if (stat(f.path, &st) || !S_ISSOCK(st.st_mode)) continue;
    if (kill((pid_t)f.pid, 0) && errno == ESRCH) continue;   /* left by a program gone */
    f.mtime = st.st_mtime;
    rc = each(ctx, &f);
  }
  closedir(d);
  return rc;
}

typedef struct newest {
  unsigned long pid;
  found best;
  int have;
} newest;

static int keep_newest(void *ctx, const found *f) {
  newest *n = ctx;
  if (f->pid == n->pid && (!n->have || f->mtime >= n->best.mtime)) {
    n->best = *f;
    n->have = 1;
  }
  return 0;
}

int gs_port_dotnet_endpoint(unsigned long pid, char *path, size_t cap, char *err, size_t errcap) {
  char dir[200];
  newest n;
  if (kill((pid_t)pid, 0) && errno == ESRCH) {
    snprintf(err, errcap, "no process %lu", pid);
    return GS_EIO;
  }
  process_tmpdir(pid, dir, sizeof dir);
  memset(&n, 0, sizeof n);
  n.pid = pid;
  scan(dir, keep_newest, &n);
  if (!n.have) {
    snprintf(err, errcap, "process %lu has no diagnostics socket in %s (not a .NET 5+ program, "
             "or started with DOTNET_EnableDiagnostics=0)", pid, dir);
    return GS_EIO;
  }
  if (strlen(n.best.path) >= cap) {
    snprintf(err, errcap, "%s: path too long", n.best.path);
    return GS_EINVAL;
  }
  memcpy(path, n.best.path, strlen(n.best.path) + 1);
  return GS_OK;
}

/* ---- listing ---- */

typedef struct listing {
  gs_port_dotnet_fn fn;
  void *ctx;
  char dirs[DIRS_MAX][200];
  unsigned ndirs;
} listing;

static void add_dir(listing *l, const char *dir) {
  unsigned i;
  for (i = 0; i < l->ndirs; i++)
    if (!strcmp(l->dirs[i], dir)) return;
  if (l->ndirs < DIRS_MAX) snprintf(l->dirs[l->ndirs++], sizeof l->dirs[0], "%s", dir);
}

/* Each pid once, at its newest socket: the one its own TMPDIR holds. */
static int report(void *ctx, const found *f) {
  listing *l = ctx;
  char path[256], err[160];
  if (gs_port_dotnet_endpoint(f->pid, path, sizeof path, err, sizeof err) ||
      strcmp(path, f->path))
    return 0;
  return l->fn(l->ctx, f->pid, f->path);
}

int gs_port_dotnet_list(gs_port_dotnet_fn fn, void *ctx) {
  listing *l = calloc(1, sizeof *l);
  DIR *proc;
  struct dirent *e;
  unsigned i;
  int rc = 0;
  if (!l) return GS_ENOMEM;
  l->fn = fn;
  l->ctx = ctx;
  add_dir(l, "/tmp");
  if ((proc = opendir("/proc"))) {
    while ((e = readdir(proc))) {
      char dir[200];
      unsigned long pid = strtoul(e->d_name, NULL, 10);
      if (!pid) continue;
      process_tmpdir(pid, dir, sizeof dir);
      add_dir(l, dir);
    }
    closedir(proc);
  }
  for (i = 0; i < l->ndirs && !rc; i++) rc = scan(l->dirs[i], report, l);
  free(l);
  return rc;
}

int gs_port_dotnet_connect(gs_port_socket **s, const char *endpoint, char *err, size_t errcap) {
  return gs_port_local_connect(s, endpoint, err, errcap);
}

/* A zombie (exited, not yet reaped by its parent) is gone too. */
int gs_port_proc_alive(unsigned long pid) {
  char path[64], line[256], *paren;
  FILE *f;
  int zombie = 0;
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
  snprintf(path, sizeof path, "/proc/%lu/stat", pid);
  if ((f = fopen(path, "r"))) {
    if (fgets(line, sizeof line, f) && (paren = strrchr(line, ')')))
      zombie = paren[1] == ' ' && paren[2] == 'Z';
    fclose(f);
  }
  return !zombie;
}

uint64_t gs_port_proc_rss(unsigned long pid) {
  char path[64], line[128];
  unsigned long long kb = 0;
  FILE *f;
  snprintf(path, sizeof path, "/proc/%lu/status", pid);
  if (!(f = fopen(path, "r"))) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %llu kB", &kb) == 1) break;
  fclose(f);
  return (uint64_t)kb * 1024;
}
