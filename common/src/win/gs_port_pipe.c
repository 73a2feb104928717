/* gs_port_pipe.c - named pipes as the Win32 port layer's sockets (see
 * gs_port_socket.h): overlapped reads and writes, each waited for with a
 * bound and cancelled when it runs out, as poll bounds a socket's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port_socket.h"

#define PIPE_CHUNK 0x40000000u
#define PIPE_BUSY_TRIES 4
#define PIPE_BUSY_WAIT_MS 2000

#ifdef UNDER_CE
int gs_port_pipe_connect(gs_port_socket **out, const char *name, char *err, size_t errcap) {
  *out = NULL;
  snprintf(err, errcap, "%.200s: Windows CE has no named pipes", name);
  return GS_EINVAL;
}
int gs_port_pipe_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms) {
  (void)s, (void)buf, (void)len, (void)stall_ms;
  return GS_EIO;
}
int gs_port_pipe_recv(gs_port_socket *s, void *buf, size_t cap, size_t *got, int timeout_ms) {
  (void)s, (void)buf, (void)cap, (void)timeout_ms;
  *got = 0;
  return GS_EIO;
}
void gs_port_pipe_close(gs_port_socket *s) { (void)s; }
#else

static int pipe_fail(DWORD code) {
  gs_port_set_error(code);
  return code == ERROR_BROKEN_PIPE || code == ERROR_PIPE_NOT_CONNECTED ? GS_EOF : GS_EIO;
}

/* The end of an overlapped operation begun on s, within timeout_ms (-1:
 * none). GS_OK with *n (0 when the time ran out and it was cancelled),
 * GS_EOF when the other end closed, GS_EIO. */
static int pipe_finish(gs_port_socket *s, OVERLAPPED *ov, DWORD *n, int timeout_ms) {
  DWORD w = WaitForSingleObject(s->event, timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
  if (w == WAIT_OBJECT_0)
    return GetOverlappedResult(s->pipe, ov, n, FALSE) ? GS_OK : pipe_fail(GetLastError());
  CancelIo(s->pipe);
  if (GetOverlappedResult(s->pipe, ov, n, TRUE)) return GS_OK;   /* done before the cancel */
  *n = 0;
  return GetLastError() == ERROR_OPERATION_ABORTED ? GS_OK : pipe_fail(GetLastError());
}

/* One read or write of at most PIPE_CHUNK bytes. */
static int pipe_io(gs_port_socket *s, int writing, void *buf, size_t len, DWORD *n, int timeout_ms) {
  OVERLAPPED ov;
  DWORD chunk = len > PIPE_CHUNK ? PIPE_CHUNK : (DWORD)len;
  BOOL done;
  memset(&ov, 0, sizeof ov);
  ov.hEvent = s->event;
  ResetEvent(s->event);
  *n = 0;
  done = writing ? WriteFile(s->pipe, buf, chunk, n, &ov) : ReadFile(s->pipe, buf, chunk, n, &ov);
  if (done) return GetOverlappedResult(s->pipe, &ov, n, TRUE) ? GS_OK : pipe_fail(GetLastError());
  if (GetLastError() != ERROR_IO_PENDING) return pipe_fail(GetLastError());
  return pipe_finish(s, &ov, n, timeout_ms);
}

int gs_port_pipe_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms) {
  char *p = (char *)buf;
  while (len > 0) {
    DWORD n;
    int rc = pipe_io(s, 1, p, len, &n, stall_ms ? (int)stall_ms : -1);
    if (rc == GS_EOF) return GS_EIO;
    if (rc) return rc;
    if (n == 0) return pipe_fail(ERROR_TIMEOUT);
    p += n;
    len -= n;
  }
  return GS_OK;
}

int gs_port_pipe_recv(gs_port_socket *s, void *buf, size_t cap, size_t *got, int timeout_ms) {
  DWORD n;
  int rc = pipe_io(s, 0, buf, cap, &n, timeout_ms);
  *got = rc == GS_OK ? n : 0;
  return rc;
}

void gs_port_pipe_close(gs_port_socket *s) {
  CloseHandle(s->pipe);
  CloseHandle(s->event);
}

/* CreateFile, again while every instance of the pipe is busy. */
static HANDLE pipe_open(const char *name) {
  int tries;
  for (tries = 0;; tries++) {
    HANDLE h = CreateFileA(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING,
                           FILE_FLAG_OVERLAPPED, NULL);
    if (h != INVALID_HANDLE_VALUE || GetLastError() != ERROR_PIPE_BUSY ||
        tries == PIPE_BUSY_TRIES || !WaitNamedPipeA(name, PIPE_BUSY_WAIT_MS))
      return h;
  }
}

int gs_port_pipe_connect(gs_port_socket **out, const char *name, char *err, size_t errcap) {
  HANDLE h = pipe_open(name), ev = NULL;
  DWORD code = GetLastError();
  *out = NULL;
  if (h == INVALID_HANDLE_VALUE) {
    gs_port_set_error(code);
    snprintf(err, errcap, "%.200s: %s", name, code == ERROR_FILE_NOT_FOUND
             ? "no such pipe (is the program running, with its diagnostics on?)"
             : gs_port_error_text());
    return GS_EIO;
  }
  if (!(ev = CreateEventA(NULL, TRUE, FALSE, NULL)) || !(*out = malloc(sizeof **out))) {
    snprintf(err, errcap, "%.200s: %s", name, ev ? "out of memory" : "cannot make an event");
    if (ev) CloseHandle(ev);
    CloseHandle(h);
    return GS_EIO;
  }
  (*out)->fd = INVALID_SOCKET;
  (*out)->pipe = h;
  (*out)->event = ev;
  return GS_OK;
}
#endif
