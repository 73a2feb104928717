/* gs_port.c (unix) - POSIX implementation of the port layer. */
#define _DEFAULT_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_port_socket.h"

static int port_errno;

/* Remembers errno for gs_port_error_text() and returns err. */
static int port_fail(int err) {
  port_errno = errno;
  return err;
}

const char *gs_port_error_text(void) {
  return port_errno ? strerror(port_errno) : "unknown error";
}

/* ---- reading by file descriptor ---- */

int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got) {
  for (;;) {
    ssize_t n = read(fd, buf, cap);
    if (n >= 0) { *got = (size_t)n; return GS_OK; }
    if (errno != EINTR) return port_fail(GS_EIO);
  }
}

int gs_port_pread_fd(int fd, void *buf, size_t cap, uint64_t offset, size_t *got) {
  /* A 32-bit off_t cannot say where: better an error than other bytes. */
  if (sizeof(off_t) < 8 && offset > 0x7fffffffu) return GS_EINVAL;
  for (;;) {
    ssize_t n = pread(fd, buf, cap, (off_t)offset);
    if (n >= 0) { *got = (size_t)n; return GS_OK; }
    if (errno != EINTR) return port_fail(GS_EIO);
  }
}

unsigned long long gs_port_fd_size(int fd) {
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) return 0;
  return (unsigned long long)st.st_size;
}

/* ---- memory ---- */

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

/* ---- files ---- */

struct gs_port_file {
  int fd;
  int is_stdout;
};

static int file_wrap(gs_port_file **f, int fd, int is_stdout) {
  gs_port_file *p = malloc(sizeof *p);
  if (!p) {
    if (!is_stdout) close(fd);
    errno = ENOMEM;
    return port_fail(GS_ENOMEM);
  }
  p->fd = fd;
  p->is_stdout = is_stdout;
  *f = p;
  return GS_OK;
}

int gs_port_file_open(gs_port_file **f, const char *path) {
  int fd;
  *f = NULL;
  do fd = open(path, O_RDONLY); while (fd < 0 && errno == EINTR);
  if (fd < 0) return port_fail(GS_EIO);
  return file_wrap(f, fd, 0);
}

int gs_port_file_create(gs_port_file **f, const char *path) {
  int fd;
  *f = NULL;
  do fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666); while (fd < 0 && errno == EINTR);
  if (fd < 0) return port_fail(GS_EIO);
  return file_wrap(f, fd, 0);
}

/* mkstemp in TMPDIR (tmpfile() would take /tmp whatever TMPDIR says),
 * unlinked at once so that nothing is left whatever happens. */
FILE *gs_port_temp_file(void) {
  const char *dir = getenv("TMPDIR");
  char path[512];
  FILE *f;
  int fd;
  if (!dir || !*dir) dir = "/tmp";
  if ((size_t)snprintf(path, sizeof path, "%s/gcsnap-XXXXXX", dir) >= sizeof path) return NULL;
  if ((fd = mkstemp(path)) < 0) return NULL;
  unlink(path);
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (!(f = fdopen(fd, "w+b"))) close(fd);
  return f;
}

int gs_port_file_open_write(gs_port_file **f, const char *path) {
  int fd;
  *f = NULL;
  do fd = open(path, O_WRONLY); while (fd < 0 && errno == EINTR);
  if (fd < 0) return port_fail(GS_EIO);
  return file_wrap(f, fd, 0);
}

int gs_port_file_stdout(gs_port_file **f) {
  *f = NULL;
  return file_wrap(f, STDOUT_FILENO, 1);
}

int gs_port_file_read(gs_port_file *f, void *buf, size_t cap, size_t *got) {
  return gs_port_read_fd(f->fd, buf, cap, got);
}

int gs_port_file_write(gs_port_file *f, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(f->fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return port_fail(GS_EIO);
    p += n;
    len -= (size_t)n;
  }
  return GS_OK;
}

int gs_port_file_sync(gs_port_file *f) {
  if (f->is_stdout) return GS_OK;
  return fsync(f->fd) == 0 ? GS_OK : port_fail(GS_EIO);
}

int gs_port_file_close(gs_port_file *f) {
  int rc = 0;
  if (!f) return GS_OK;
  if (!f->is_stdout) rc = close(f->fd);
  free(f);
  /* EINTR from close leaves the descriptor closed on Linux: not retried */
  return rc == 0 ? GS_OK : port_fail(GS_EIO);
}

gs_port_path_kind gs_port_path_kind_of(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return GS_PORT_MISSING;
  if (S_ISREG(st.st_mode)) return GS_PORT_REGULAR;
  if (S_ISDIR(st.st_mode)) return GS_PORT_FOLDER;
  return GS_PORT_OTHER;
}

int gs_port_rename(const char *from, const char *to) {
  return rename(from, to) == 0 ? GS_OK : port_fail(GS_EIO);
}

int gs_port_remove(const char *path) {
  return unlink(path) == 0 ? GS_OK : port_fail(GS_EIO);
}

/* ---- folders ---- */

int gs_port_make_dir(const char *path) {
  struct stat st;
  if (mkdir(path, 0700) == 0) return GS_OK;
  if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return GS_OK;
  return port_fail(GS_EIO);
}

int gs_port_list_dir(const char *path, gs_port_dir_fn fn, void *ctx) {
  DIR *d = opendir(path);
  size_t dir_len = strlen(path);
  char *full = NULL;
  size_t cap = 0;
  int rc = GS_OK;
  if (!d) return port_fail(GS_EIO);
  for (;;) {
    struct dirent *e;
    struct stat st;
    size_t need;
    errno = 0;
    if (!(e = readdir(d))) {
      if (errno) rc = port_fail(GS_EIO);
      break;
    }
    if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
      continue;
    need = dir_len + strlen(e->d_name) + 2;
    if (!full || need > cap) {
      char *p = realloc(full, need);
      if (!p) {
        rc = GS_ENOMEM;
        break;
      }
      full = p;
      cap = need;
    }
    snprintf(full, cap, "%s/%s", path, e->d_name);
    /* An entry removed meanwhile is simply not listed. */
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if ((rc = fn(ctx, e->d_name, (uint64_t)st.st_size)) != 0) break;
  }
  free(full);
  closedir(d);
  return rc;
}

/* ---- removal on signals ---- */

static const char *volatile signal_path;

static void on_signal(int sig) {
  const char *p = signal_path;
  if (p) unlink(p);                 /* async-signal-safe */
  signal(sig, SIG_DFL);
  raise(sig);
}

void gs_port_remove_on_signal(const char *path) {
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
  static int installed;
  size_t i;
  signal_path = path;
  if (!path || installed) return;
  for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
  installed = 1;
}

/* ---- process and time ---- */

unsigned long gs_port_pid(void) { return (unsigned long)getpid(); }

static uint64_t clock_us(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t gs_port_clock_ms(void) {
  /* BOOTTIME counts suspended time too, as GetTickCount does on devices */
#ifdef CLOCK_BOOTTIME
  uint64_t us = clock_us(CLOCK_BOOTTIME);
  if (us) return us / 1000u;
#endif
  return clock_us(CLOCK_MONOTONIC) / 1000u;
}

uint64_t gs_port_time_us(void) { return clock_us(CLOCK_MONOTONIC); }

uint64_t gs_port_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0) return 0;
#ifdef __APPLE__
  return (uint64_t)ru.ru_maxrss;           /* bytes there */
#else
  return (uint64_t)ru.ru_maxrss * 1024u;   /* kilobytes elsewhere */
#endif
}

/* ---- network ---- */


#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0              /* SO_NOSIGPIPE does the work instead */
#endif

/* Waits for events on fd for up to timeout_ms (negative: no limit), the
 * wait resumed after a signal with the time that is left. 1: ready,
 * 0: timed out, -1: failed (errno set). */
static int net_wait(int fd, short events, int timeout_ms) {
  uint64_t deadline = gs_port_time_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000u;
  for (;;) {
    struct pollfd p;
    int n, left = timeout_ms;
    if (timeout_ms > 0) {
      uint64_t now = gs_port_time_us();
      left = now >= deadline ? 0 : (int)((deadline - now + 999) / 1000);
    }
    p.fd = fd;
    p.events = events;
    p.revents = 0;
    n = poll(&p, 1, left);
    if (n >= 0) return n > 0 ? 1 : 0;
    if (errno != EINTR) return -1;
  }
}

static void net_options(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
#ifdef SO_NOSIGPIPE
  setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
}

/* Connects fd to one address within timeout_ms; 0 or an errno value. */
static int net_connect_one(int fd, const struct addrinfo *ai, unsigned timeout_ms) {
  int soerr = 0, ready;
  socklen_t len = sizeof soerr;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  ready = net_wait(fd, POLLOUT, (int)timeout_ms);
  if (ready < 0) return errno;
  if (ready == 0) return ETIMEDOUT;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0) return errno;
  return soerr;
}

int gs_port_net_connect(gs_port_socket **out, const char *host, const char *port,
                        unsigned timeout_ms, char *err, size_t errcap) {
  struct addrinfo hints, *list = NULL, *ai;
  uint64_t t0 = gs_port_time_us();
  int rc, last = ETIMEDOUT;

  *out = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if ((rc = getaddrinfo(host, port, &hints, &list)) != 0) {
    snprintf(err, errcap, "resolving %s: %s", host,
             rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
    return GS_EIO;
  }
  for (ai = list; ai; ai = ai->ai_next) {
    uint64_t spent = (gs_port_time_us() - t0) / 1000u;
    int fd;
    if (spent >= timeout_ms) break;
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if ((last = net_connect_one(fd, ai, timeout_ms - (unsigned)spent)) == 0) {
      freeaddrinfo(list);
      if (!(*out = malloc(sizeof **out))) {
        close(fd);
        snprintf(err, errcap, "out of memory");
        return GS_ENOMEM;
      }
      net_options(fd);
      (*out)->fd = fd;
      return GS_OK;
    }
    close(fd);
  }
  freeaddrinfo(list);
  snprintf(err, errcap, "connecting to %s:%s: %s", host, port,
           last == ETIMEDOUT ? "timed out" : strerror(last));
  errno = last;
  return port_fail(GS_EIO);
}

int gs_port_net_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = send(s->fd, p, len, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int ready = net_wait(s->fd, POLLOUT, stall_ms ? (int)stall_ms : -1);
      if (ready < 0) return port_fail(GS_EIO);
      if (ready == 0) {
        errno = ETIMEDOUT;
        return port_fail(GS_EIO);
      }
    } else if (n < 0 && errno != EINTR) {
      return port_fail(GS_EIO);
    }
  }
  return GS_OK;
}

int gs_port_net_recv(gs_port_socket *s, void *buf, size_t cap, size_t *got, int timeout_ms) {
  ssize_t n;
  int ready;
  *got = 0;
  ready = net_wait(s->fd, POLLIN, timeout_ms);
  if (ready < 0) return port_fail(GS_EIO);
  if (ready == 0) return GS_OK;
  do n = recv(s->fd, buf, cap, 0);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    *got = (size_t)n;
    return GS_OK;
  }
  if (n == 0) return GS_EOF;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return GS_OK;
  return port_fail(GS_EIO);
}

void gs_port_net_close(gs_port_socket *s) {
  if (!s) return;
  close(s->fd);
  free(s);
}

void gs_port_sleep_ms(unsigned ms) {
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000u);
  ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

uint64_t gs_port_wall_ms(void) {
  return clock_us(CLOCK_REALTIME) / 1000u;
}
