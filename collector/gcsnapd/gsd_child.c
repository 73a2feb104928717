/* gsd_child.c - an analysis in a forked child process (see gsd_child.h).
 *
 * The child is a fork, not a new program: it runs the analysis library
 * directly and writes the answer to a pipe. It shares nothing with the
 * collector once forked: it closes every descriptor but the pipe first, so
 * a collector that stops or crashes never has its ports or files kept open
 * by a child still at work, and it ends with _exit, so nothing of the
 * collector's runs twice. Only the forking thread exists in the child;
 * glibc keeps malloc and stdio usable there. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gs_diag.h"
#include "gs_error.h"
#include "gs_summary.h"
#include "gsd_child.h"

/* Shared with the child: a page of its own, mapped before the fork. */
struct gsd_child_progress { uint64_t files, consumed, size; };

gsd_child_progress *gsd_child_progress_new(void) {
  void *p = mmap(NULL, sizeof(gsd_child_progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;    /* zeroed */
}

void gsd_child_progress_free(gsd_child_progress *p) {
  if (p) munmap(p, sizeof *p);
}

gsd_child_read gsd_child_progress_get(const gsd_child_progress *p) {
  gsd_child_read r = {0, 0, 0};
  if (!p) return r;
  r.files = __atomic_load_n(&p->files, __ATOMIC_RELAXED);
  r.consumed = __atomic_load_n(&p->consumed, __ATOMIC_RELAXED);
  r.size = __atomic_load_n(&p->size, __ATOMIC_RELAXED);
  return r;
}

int gsd_child_run(gsd_child_fn fn, void *ctx, size_t max, char **out, size_t *len,
                  int *status) {
  return gsd_child_run_watched(fn, ctx, max, out, len, status, NULL);
}

/* Runs fn: its status, with the answer's JSON text in *text (malloc'd) or
 * the reason in why. */
static int produce(gsd_child_fn fn, void *ctx, char **text, char *why, size_t cap) {
  json_t *answer = NULL;
  int status = fn(ctx, &answer, why, cap);
  assert(status == GSD_CHILD_OK || answer == NULL);
  *text = NULL;
  if (status == GSD_CHILD_OK &&
      !(*text = json_dumps(answer, JSON_COMPACT | JSON_REAL_PRECISION(10)))) {
    snprintf(why, cap, "out of memory");
    status = GSD_CHILD_FAILED;
  }
  json_decref(answer);
  return status;
}

#if defined(__SANITIZE_ADDRESS__)
#define IN_THREAD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IN_THREAD 1
#endif
#endif

#ifdef IN_THREAD
void gsd_child_bound(unsigned long long cpu_seconds, unsigned long long max_bytes) {
  (void)cpu_seconds;
  (void)max_bytes;
}

/* AddressSanitizer's allocator (GCC 12's) is not fork-safe: a child forked
 * while another thread holds one of its locks hangs in its first malloc,
 * and its request is never answered. Sanitizer builds (the tests) run the
 * analysis on the calling pool thread instead, with the same answer. */
int gsd_child_run_watched(gsd_child_fn fn, void *ctx, size_t max, char **out, size_t *len,
                          int *status, gsd_child_progress *p) {
  char why[1024] = "", *text;
  (void)p;
  *status = produce(fn, ctx, &text, why, sizeof why);
  *out = text ? text : strdup(why);
  *len = *out ? strlen(*out) : 0;
  if (!*out) return GS_ENOMEM;
  if (*len > max) *status = GSD_CHILD_TOO_LARGE;
  return GS_OK;
}
#else

/* Every descriptor above 2 but keep. */
static void close_others(int keep) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  long fd, max;
  if (!d) {
    max = sysconf(_SC_OPEN_MAX);
    for (fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
      if (fd != keep) close((int)fd);
    return;
  }
  while ((e = readdir(d)) != NULL) {
    fd = strtol(e->d_name, NULL, 10);
    if (fd > 2 && fd != keep && fd != dirfd(d)) close((int)fd);
  }
  closedir(d);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* A runaway analysis ends in its child, not in the collector: the kernel
 * stops it past its processor time (SIGXCPU) and refuses it memory past
 * its address space. The defaults are several times what the largest
 * snapshot the limits admit needs. */
static struct rlimit cpu_bound = {GSD_CHILD_CPU_SECONDS, GSD_CHILD_CPU_SECONDS};
static struct rlimit mem_bound = {GSD_CHILD_MAX_BYTES, GSD_CHILD_MAX_BYTES};

void gsd_child_bound(unsigned long long cpu_seconds, unsigned long long max_bytes) {
  cpu_bound.rlim_cur = cpu_bound.rlim_max = (rlim_t)cpu_seconds;
  mem_bound.rlim_cur = mem_bound.rlim_max = (rlim_t)max_bytes;
}

static void bound_child(void) {
  setrlimit(RLIMIT_CPU, &cpu_bound);
  setrlimit(RLIMIT_AS, &mem_bound);
}

/* The child's progress page, which its file reads update. */
static gsd_child_progress *watched;

static void on_read(int opened, uint64_t consumed, uint64_t size) {
  if (opened) __atomic_store_n(&watched->files, watched->files + 1, __ATOMIC_RELAXED);
  __atomic_store_n(&watched->size, size, __ATOMIC_RELAXED);
  __atomic_store_n(&watched->consumed, consumed, __ATOMIC_RELAXED);
}

/* The child's whole life. */
static void child_main(gsd_child_fn fn, void *ctx, int fd, gsd_child_progress *p) {
  char why[1024] = "", *text;
  int status;
  close_others(fd);
  bound_child();
  if ((watched = p) != NULL) gs_file_on_read(on_read);
  status = produce(fn, ctx, &text, why, sizeof why);
  if (write_all(fd, text ? text : why, strlen(text ? text : why))) status = GSD_CHILD_FAILED;
  _exit(status);
}


/* Reads the child's answer, at most max bytes; *over when there was more. */
static int read_answer(int fd, size_t max, char **out, size_t *len, int *over) {
  size_t cap = 1u << 16;
  ssize_t n;
  *over = 0;
  if (!(*out = malloc(cap))) return GS_ENOMEM;
  for (;;) {
    if (*len + 1 == cap) {
      char *bigger = cap < max ? realloc(*out, cap * 2) : NULL;
      if (!bigger) { *over = 1; break; }
      *out = bigger;
      cap *= 2;
    }
    n = read(fd, *out + *len, cap - 1 - *len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    *len += (size_t)n;
  }
  (*out)[*len] = 0;
  return GS_OK;
}

int gsd_child_run_watched(gsd_child_fn fn, void *ctx, size_t max, char **out, size_t *len,
                          int *status, gsd_child_progress *p) {
  int fds[2], ws = 0, over = 0, rc;
  pid_t pid;
  *out = NULL;
  *len = 0;
  *status = GSD_CHILD_DIED;
  if (pipe(fds)) return GS_EIO;
  if ((pid = fork()) < 0) {
    close(fds[0]);
    close(fds[1]);
    return GS_EIO;
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fn, ctx, fds[1], p);
  }
  close(fds[1]);
  rc = read_answer(fds[0], max, out, len, &over);
  close(fds[0]);   /* a child with more to say gets EPIPE and ends */
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
  if (over) *status = GSD_CHILD_TOO_LARGE;
  else if (WIFEXITED(ws) && WEXITSTATUS(ws) <= GSD_CHILD_FAILED) *status = WEXITSTATUS(ws);
  return rc;
}
#endif

int gsd_child_fault(const gs_file_fault *fault, char *why, size_t cap) {
  const gs_diag *d = &fault->diag;
  if (fault->err == GS_EFORMAT && d->line)
    snprintf(why, cap, "%s:%llu: error [%s]: %s", fault->file, (unsigned long long)d->line,
             gs_diag_name(d->code), d->message);
  else if (fault->err == GS_EFORMAT)
    snprintf(why, cap, "%s: error [%s]: %s", fault->file, gs_diag_name(d->code), d->message);
  else if (fault->file[0])
    snprintf(why, cap, "%s: %s", fault->file, fault->text);
  else
    snprintf(why, cap, "%s", fault->text);
  return fault->err == GS_EFORMAT || fault->err == GS_ELIMIT || fault->err == GS_EOF
             ? GSD_CHILD_WANTING : GSD_CHILD_FAILED;
}

int gsd_child_summary_fn(void *ctx, json_t **answer, char *why, size_t cap) {
  const gsd_child_summary *job = ctx;
  gs_file_fault fault;
  gs_summary sum;
  int status = GSD_CHILD_OK;
  if (gs_summary_load_file(&sum, job->path, job->top, &fault) != GS_OK) {
    status = gsd_child_fault(&fault, why, cap);
  } else if (!(*answer = gs_summary_json(&sum, job->top, 0))) {
    snprintf(why, cap, "out of memory");
    status = GSD_CHILD_FAILED;
  }
  gs_summary_free(&sum);
  return status;
}
