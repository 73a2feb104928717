/* gs_mono_prof.c - libmono-profiler-gcsnap: the module Mono loads with
 *
 *   mono --profile=gcsnap:socket=PATH[,ids=stable] app.exe
 *
 * It listens on the Unix socket PATH (owner-only) from a thread of its
 * own, which the application never waits for: a slow, stopped or missing
 * agent delays no application thread. One connection at a time; the module
 * greets it with "gcsnap-mono 1 ids=stable|address" and answers one
 * command line:
 *
 *   heap             "heap BYTES": mono_gc_get_used_size, no collection
 *   capture [stable] a snapshot (gs_mono_emit.c), IDs stable when asked;
 *                    asked before the runtime has started (the socket opens
 *                    first), it waits up to READY_WAIT_MS for it
 *
 * The first capture attaches the thread to the runtime as a tools thread
 * (known to the runtime, never stopped by it, so it may wait on its socket)
 * and forces a full collection; type names are resolved and all I/O done
 * after the world restarted. The module links no Mono library: the mono
 * executable exports the API. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <mono/metadata/appdomain.h>
#include <mono/metadata/profiler.h>
#include <mono/metadata/threads.h>
#include "gs_mono.h"

struct _MonoProfiler {
  int listen_fd, stable;
  volatile int ready, stopping;
  char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static struct _MonoProfiler prof = {-1, 0, 0, 0, ""};

/* Well under the agent's wait for an answer (two minutes). */
#define READY_WAIT_MS 30000

static void say(const char *what, const char *detail) {
  fprintf(stderr, "gcsnap: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
}

/* ---- options: gcsnap:socket=PATH[,ids=stable|address] ---- */

static int parse(const char *args) {
  const char *p = strchr(args, ':');
  p = p ? p + 1 : "";
  while (*p) {
    const char *end = strchr(p, ','), *eq = strchr(p, '=');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (!eq || eq > p + len) {
      say("option without '=' (socket=PATH, ids=stable|address)", p);
      return -1;
    }
    if (strncmp(p, "socket=", 7) == 0) {
      if (len - 7 == 0 || len - 7 >= sizeof prof.path) {
        say("socket=PATH: empty or too long a path", p);
        return -1;
      }
      memcpy(prof.path, p + 7, len - 7);
      prof.path[len - 7] = 0;
    } else if (len == 10 && strncmp(p, "ids=stable", 10) == 0) {
      prof.stable = 1;
    } else if (len == 11 && strncmp(p, "ids=address", 11) == 0) {
      prof.stable = 0;
    } else {
      say("unknown option (socket=PATH, ids=stable|address)", p);
      return -1;
    }
    p += len + (end ? 1 : 0);
  }
  if (!prof.path[0]) say("socket=PATH is required", NULL);
  return prof.path[0] ? 0 : -1;
}

/* ---- the socket ---- */

/* Removes the socket a process that died left at path: 0, or -1 when
 * something else is there. */
static int clear_stale(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (!S_ISSOCK(st.st_mode)) {
    say("not a socket, left alone", path);
    return -1;
  }
  unlink(path);
  return 0;
}

/* Binds under PATH.new where that name fits, and renames it to PATH once
 * listening: an agent that connects as soon as PATH appears is never
 * refused for coming between bind() and listen(). */
static int listen_on(const char *path) {
  struct sockaddr_un sa;
  mode_t old;
  int fd, rc, staged = strlen(path) + 4 < sizeof sa.sun_path;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s%s", path, staged ? ".new" : "");
  if (clear_stale(path) || (staged && clear_stale(sa.sun_path))) return -1;
  if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) return -1;
  old = umask(077);                     /* the socket is the owner's alone */
  rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
  umask(old);
  if (rc != 0 || listen(fd, 4) != 0 || (staged && rename(sa.sun_path, path) != 0)) {
    say(strerror(errno), path);
    close(fd);
    if (staged && rc == 0) unlink(sa.sun_path);
    return -1;
  }
  return fd;
}

/* Reads the command line within 10 s: its length, or -1. */
static int read_command(int fd, char *line, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap) {
    struct pollfd pf;
    ssize_t got;
    pf.fd = fd;
    pf.events = POLLIN;
    if (poll(&pf, 1, 10000) <= 0) return -1;
    if ((got = recv(fd, line + n, cap - 1 - n, 0)) <= 0) return -1;
    n += (size_t)got;
    if (memchr(line, '\n', n)) {
      *(char *)memchr(line, '\n', n) = 0;
      return (int)strlen(line);
    }
  }
  return -1;
}

static void reply(int fd, const char *text) {
  gsm_write_all(fd, text, strlen(text));
}

static void free_names(char **names, unsigned n) {
  while (n) free(names[--n]);
  free(names);
}

/* The names of the capture's AppDomains, by index, one line each ("?" for
 * one unloaded since); NULL when memory ran out. */
static char **domain_names(const gsm_snap *s) {
  char **names = calloc(s->ndomains, sizeof *names);
  unsigned i;
  for (i = 0; names && i < s->ndomains; i++) {
    MonoDomain *d = mono_domain_get_by_id(s->domain_ids[i]);
    const char *name = d ? mono_domain_get_friendly_name(d) : NULL;
    if (!(names[i] = strdup(name && *name ? name : "?"))) {
      free_names(names, i);
      return NULL;
    }
    names[i][strcspn(names[i], "\r\n")] = 0;
  }
  return names;
}

static void serve_capture(int fd, int stable_ids) {
  gsm_snap snap;
  char err[160] = "", line[200], **domains = NULL;
  static int attached;
  int waited;
  for (waited = 0; !prof.ready && !prof.stopping && waited < READY_WAIT_MS; waited += 20)
    poll(NULL, 0, 20);
  if (!prof.ready || prof.stopping) {
    reply(fd, prof.stopping ? "x the runtime is shutting down\n"
                            : "x the runtime has not started yet\n");
    return;
  }
  /* A tools thread: the runtime knows it, yet never waits for it to stop,
   * so the module's thread may block on its socket between captures. */
  if (!attached) {
    mono_threads_attach_tools_thread();
    attached = 1;
  }
  gsm_snap_capture(&snap, stable_ids);
  if (!snap.error[0] && gsm_emit_prepare(err, sizeof err) == 0 && !(domains = domain_names(&snap)))
    snprintf(err, sizeof err, "out of memory for the AppDomains' names");
  if (snap.error[0] || err[0]) {
    snprintf(line, sizeof line, "x %s\n", snap.error[0] ? snap.error : err);
    reply(fd, line);
  } else {
    gsm_emit(fd, &snap, domains);
  }
  free_names(domains, domains ? snap.ndomains : 0);
  gsm_snap_release(&snap);
}

static void serve(int fd) {
  char line[64];
  reply(fd, prof.stable ? "gcsnap-mono 1 ids=stable\n" : "gcsnap-mono 1 ids=address\n");
  if (read_command(fd, line, sizeof line) < 0) return;
  if (strcmp(line, "heap") == 0) {
    char out[40];
    snprintf(out, sizeof out, "heap %llx\n",
             prof.ready ? (unsigned long long)mono_gc_get_used_size() : 0ULL);
    reply(fd, out);
  } else if (strcmp(line, "capture") == 0 || strcmp(line, "capture stable") == 0) {
    serve_capture(fd, line[7] != 0);
  } else {
    reply(fd, "x unknown command (heap, capture, capture stable)\n");
  }
}

static void *server(void *arg) {
  (void)arg;
  for (;;) {
    int fd = accept4(prof.listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (prof.stopping) return NULL;
      sleep(1);
      continue;
    }
    serve(fd);
    close(fd);
  }
  return NULL;
}

/* ---- runtime callbacks ---- */

static void on_ready(MonoProfiler *p) {
  p->ready = 1;
}

static void on_shutdown(MonoProfiler *p) {
  p->stopping = 1;
  unlink(p->path);
}

void mono_profiler_init_gcsnap(const char *args);

void mono_profiler_init_gcsnap(const char *args) {
  MonoProfilerHandle h;
  pthread_t thread;
  pthread_attr_t attr;
  if (parse(args ? args : "") || (prof.listen_fd = listen_on(prof.path)) < 0) {
    say("the module is not active", NULL);
    return;
  }
  h = mono_profiler_create(&prof);
  mono_profiler_set_runtime_initialized_callback(h, on_ready);
  mono_profiler_set_runtime_shutdown_begin_callback(h, on_shutdown);
  gsm_snap_install(h, prof.stable);
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&thread, &attr, server, NULL) != 0) {
    say("cannot start the module's thread", strerror(errno));
    close(prof.listen_fd);
    unlink(prof.path);
  }
  pthread_attr_destroy(&attr);
}
