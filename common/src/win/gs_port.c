/* gs_port.c (win) - Win32 implementation of the port layer.
 *
 * Files use the wide-character API: paths arrive as UTF-8 and are converted,
 * so names outside the ANSI code page work. */
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef PSAPI_VERSION
#define PSAPI_VERSION 2         /* GetProcessMemoryInfo from kernel32, no psapi.lib */
#endif
/* Winsock 2 comes before windows.h, which would pull in the old one. */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <psapi.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "gs_error.h"
#include "gs_port.h"

static DWORD port_error;

/* Remembers GetLastError() for gs_port_error_text() and returns err. */
static int port_fail(int err) {
  port_error = GetLastError();
  return err;
}

const char *gs_port_error_text(void) {
  static char text[256];
  wchar_t wide[256];
  DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                           NULL, port_error, 0, wide, 256, NULL);
  int len;
  if (n == 0) return "unknown error";
  while (n > 0 && (wide[n - 1] == L'\r' || wide[n - 1] == L'\n' || wide[n - 1] == L' '))
    n--;
  len = WideCharToMultiByte(CP_UTF8, 0, wide, (int)n, text, (int)sizeof text - 1, NULL, NULL);
  text[len > 0 ? len : 0] = '\0';
  return text;
}

/* ---- reading by file descriptor ---- */

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

/* ---- memory ---- */

void *gs_port_alloc_table(size_t bytes) { return calloc(1, bytes); }

void gs_port_free_table(void *p, size_t bytes) { (void)bytes; free(p); }

/* ---- files ---- */

struct gs_port_file {
  HANDLE h;
  int is_stdout;
};

/* UTF-8 to a malloc'd wide string, or NULL. */
static wchar_t *widen(const char *s) {
  int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
  wchar_t *w;
  if (n <= 0) return NULL;
  w = malloc(sizeof *w * (size_t)n);
  if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
    free(w);
    w = NULL;
  }
  return w;
}

static int file_wrap(gs_port_file **f, HANDLE h, int is_stdout) {
  gs_port_file *p = malloc(sizeof *p);
  if (!p) {
    if (!is_stdout) CloseHandle(h);
    SetLastError(ERROR_NOT_ENOUGH_MEMORY);
    return port_fail(GS_ENOMEM);
  }
  p->h = h;
  p->is_stdout = is_stdout;
  *f = p;
  return GS_OK;
}

static int file_open(gs_port_file **f, const char *path, DWORD access, DWORD disposition) {
  wchar_t *w = widen(path);
  HANDLE h;
  *f = NULL;
  if (!w) return port_fail(GS_EINVAL);
  /* FILE_SHARE_DELETE lets the signal handler remove a file still open */
  h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL, disposition,
                  FILE_ATTRIBUTE_NORMAL, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) return port_fail(GS_EIO);
  return file_wrap(f, h, 0);
}

int gs_port_file_open(gs_port_file **f, const char *path) {
  return file_open(f, path, GENERIC_READ, OPEN_EXISTING);
}

int gs_port_file_create(gs_port_file **f, const char *path) {
  return file_open(f, path, GENERIC_WRITE, CREATE_NEW);
}

int gs_port_file_open_write(gs_port_file **f, const char *path) {
  return file_open(f, path, GENERIC_WRITE, OPEN_EXISTING);
}

int gs_port_file_stdout(gs_port_file **f) {
  HANDLE h = GetStdHandle(STD_OUTPUT_HANDLE);
  *f = NULL;
  if (h == INVALID_HANDLE_VALUE || h == NULL) return port_fail(GS_EIO);
  /* a raw handle: no text-mode translation of LF */
  return file_wrap(f, h, 1);
}

int gs_port_file_read(gs_port_file *f, void *buf, size_t cap, size_t *got) {
  DWORD n = 0;
  DWORD want = cap > 0x40000000u ? 0x40000000u : (DWORD)cap;
  if (!ReadFile(f->h, buf, want, &n, NULL)) {
    if (GetLastError() == ERROR_BROKEN_PIPE) n = 0;   /* end of a pipe */
    else return port_fail(GS_EIO);
  }
  *got = n;
  return GS_OK;
}

int gs_port_file_write(gs_port_file *f, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    DWORD n = 0;
    DWORD want = len > 0x40000000u ? 0x40000000u : (DWORD)len;
    if (!WriteFile(f->h, p, want, &n, NULL)) return port_fail(GS_EIO);
    p += n;
    len -= n;
  }
  return GS_OK;
}

int gs_port_file_sync(gs_port_file *f) {
  if (f->is_stdout) return GS_OK;
  return FlushFileBuffers(f->h) ? GS_OK : port_fail(GS_EIO);
}

int gs_port_file_close(gs_port_file *f) {
  BOOL ok = TRUE;
  if (!f) return GS_OK;
  if (!f->is_stdout) ok = CloseHandle(f->h);
  free(f);
  return ok ? GS_OK : port_fail(GS_EIO);
}

/* NUL, CON and COM1 have no attributes that say "device" (GetFileAttributes
 * even fails for some); opening one and asking its type does. */
static int is_char_device(const char *path) {
  wchar_t *w = widen(path);
  HANDLE h;
  DWORD type;
  if (!w) return 0;
  h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING, 0, NULL);
  free(w);
  if (h == INVALID_HANDLE_VALUE) return 0;
  type = GetFileType(h);
  CloseHandle(h);
  return type == FILE_TYPE_CHAR;
}

gs_port_path_kind gs_port_path_kind_of(const char *path) {
  wchar_t *w = widen(path);
  DWORD attrs = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
  free(w);
  if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DIRECTORY))
    return GS_PORT_FOLDER;
  if (attrs != INVALID_FILE_ATTRIBUTES && (attrs & FILE_ATTRIBUTE_DEVICE)) return GS_PORT_OTHER;
  if (is_char_device(path)) return GS_PORT_OTHER;
  return attrs == INVALID_FILE_ATTRIBUTES ? GS_PORT_MISSING : GS_PORT_REGULAR;
}

int gs_port_rename(const char *from, const char *to) {
  wchar_t *wf = widen(from), *wt = widen(to);
  BOOL ok = wf && wt &&
            MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
  int err = ok ? GS_OK : port_fail(GS_EIO);
  free(wf);
  free(wt);
  return err;
}

int gs_port_remove(const char *path) {
  wchar_t *w = widen(path);
  BOOL ok = w && DeleteFileW(w);
  int err = ok ? GS_OK : port_fail(GS_EIO);
  free(w);
  return err;
}

/* ---- folders ---- */

int gs_port_make_dir(const char *path) {
  wchar_t *w = widen(path);
  DWORD attrs;
  int err = GS_OK;
  if (!w) return port_fail(GS_EINVAL);
  if (!CreateDirectoryW(w, NULL)) {
    attrs = GetFileAttributesW(w);
    if (attrs == INVALID_FILE_ATTRIBUTES || !(attrs & FILE_ATTRIBUTE_DIRECTORY))
      err = port_fail(GS_EIO);
  }
  free(w);
  return err;
}

int gs_port_list_dir(const char *path, gs_port_dir_fn fn, void *ctx) {
  size_t len = strlen(path);
  char *pattern = malloc(len + 3);
  wchar_t *w;
  WIN32_FIND_DATAW fd;
  HANDLE h;
  int rc = GS_OK;
  if (!pattern) return GS_ENOMEM;
  memcpy(pattern, path, len);
  memcpy(pattern + len, "\\*", 3);
  w = widen(pattern);
  free(pattern);
  if (!w) return port_fail(GS_EINVAL);
  h = FindFirstFileW(w, &fd);
  free(w);
  if (h == INVALID_HANDLE_VALUE)
    return GetLastError() == ERROR_FILE_NOT_FOUND ? GS_OK : port_fail(GS_EIO);
  do {
    char name[MAX_PATH * 4];
    uint64_t size;
    if (fd.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_DEVICE |
                               FILE_ATTRIBUTE_REPARSE_POINT))
      continue;
    if (WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name, (int)sizeof name, NULL,
                            NULL) <= 0)
      continue;
    size = (uint64_t)fd.nFileSizeHigh << 32 | fd.nFileSizeLow;
    if ((rc = fn(ctx, name, size)) != 0) break;
  } while (FindNextFileW(h, &fd));
  if (rc == GS_OK && GetLastError() != ERROR_NO_MORE_FILES) rc = port_fail(GS_EIO);
  FindClose(h);
  return rc;
}

/* ---- removal on Ctrl-C and console close ---- */

static wchar_t *volatile signal_path;

static BOOL WINAPI on_console_event(DWORD event) {
  wchar_t *p = signal_path;
  (void)event;
  if (p) DeleteFileW(p);
  return FALSE;                     /* go on with the default: terminate */
}

void gs_port_remove_on_signal(const char *path) {
  static int installed;
  wchar_t *old = signal_path;
  signal_path = path ? widen(path) : NULL;
  free(old);
  if (path && !installed) {
    SetConsoleCtrlHandler(on_console_event, TRUE);
    installed = 1;
  }
}

/* ---- process and time ---- */

unsigned long gs_port_pid(void) { return (unsigned long)GetCurrentProcessId(); }

uint64_t gs_port_clock_ms(void) { return (uint64_t)GetTickCount64(); }

uint64_t gs_port_time_us(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER now;
  if (freq.QuadPart == 0 && !QueryPerformanceFrequency(&freq)) return 0;
  QueryPerformanceCounter(&now);
  return (uint64_t)(now.QuadPart / freq.QuadPart) * 1000000u +
         (uint64_t)(now.QuadPart % freq.QuadPart) * 1000000u / (uint64_t)freq.QuadPart;
}

uint64_t gs_port_peak_rss(void) {
  PROCESS_MEMORY_COUNTERS pmc;
  if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return 0;
  return (uint64_t)pmc.PeakWorkingSetSize;
}

/* ---- network ---- */

struct gs_port_socket {
  SOCKET fd;
};

/* Winsock must be started once per process; the agent is single-threaded,
 * so a flag is enough. */
static int net_start(void) {
  static int started;
  WSADATA data;
  if (started) return 0;
  if (WSAStartup(MAKEWORD(2, 2), &data) != 0) return -1;
  started = 1;
  return 0;
}

static int net_fail(int err) {
  port_error = (DWORD)WSAGetLastError();
  return err;
}

/* select() rather than WSAPoll, which older systems lack. 1: ready,
 * 0: timed out, -1: failed. Exceptions count as ready: the call that
 * follows reports them. */
static int net_wait(SOCKET fd, int for_write, int timeout_ms) {
  fd_set rw, ex;
  struct timeval tv;
  int n;
  FD_ZERO(&rw);
  FD_ZERO(&ex);
  FD_SET(fd, &rw);
  FD_SET(fd, &ex);
  tv.tv_sec = timeout_ms / 1000;
  tv.tv_usec = (timeout_ms % 1000) * 1000;
  n = select(0, for_write ? NULL : &rw, for_write ? &rw : NULL, &ex,
             timeout_ms < 0 ? NULL : &tv);
  return n == SOCKET_ERROR ? -1 : n > 0;
}

/* The system's text for a Winsock error, into err. */
static void net_describe(char *err, size_t errcap, const char *what, int code) {
  port_error = (DWORD)code;
  snprintf(err, errcap, "%s: %s", what,
           code == WSAETIMEDOUT ? "timed out" : gs_port_error_text());
}

/* Connects fd to one address within timeout_ms; 0 or a Winsock error. */
static int net_connect_one(SOCKET fd, const ADDRINFOW *ai, unsigned timeout_ms) {
  int soerr = 0, len = sizeof soerr, ready;
  if (connect(fd, ai->ai_addr, (int)ai->ai_addrlen) == 0) return 0;
  if (WSAGetLastError() != WSAEWOULDBLOCK) return WSAGetLastError();
  ready = net_wait(fd, 1, (int)timeout_ms);
  if (ready < 0) return WSAGetLastError();
  if (ready == 0) return WSAETIMEDOUT;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, (char *)&soerr, &len) != 0) return WSAGetLastError();
  return soerr;
}

int gs_port_net_connect(gs_port_socket **out, const char *host, const char *port,
                        unsigned timeout_ms, char *err, size_t errcap) {
  ADDRINFOW hints, *list = NULL, *ai;
  wchar_t *whost, *wport;
  uint64_t t0 = gs_port_time_us();
  int rc, last = WSAETIMEDOUT;
  char what[320];

  *out = NULL;
  if (net_start()) {
    net_describe(err, errcap, "starting Winsock", WSAGetLastError());
    return GS_EIO;
  }
  whost = widen(host);
  wport = widen(port);
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  rc = whost && wport ? GetAddrInfoW(whost, wport, &hints, &list) : WSA_NOT_ENOUGH_MEMORY;
  free(whost);
  free(wport);
  if (rc != 0) {
    snprintf(what, sizeof what, "resolving %s", host);
    net_describe(err, errcap, what, rc);
    return GS_EIO;
  }
  for (ai = list; ai; ai = ai->ai_next) {
    uint64_t spent = (gs_port_time_us() - t0) / 1000u;
    u_long nonblocking = 1;
    SOCKET fd;
    if (spent >= timeout_ms) break;
    fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd == INVALID_SOCKET) {
      last = WSAGetLastError();
      continue;
    }
    ioctlsocket(fd, FIONBIO, &nonblocking);
    if ((last = net_connect_one(fd, ai, timeout_ms - (unsigned)spent)) == 0) {
      BOOL one = TRUE;
      FreeAddrInfoW(list);
      if (!(*out = malloc(sizeof **out))) {
        closesocket(fd);
        snprintf(err, errcap, "out of memory");
        return GS_ENOMEM;
      }
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof one);
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, (const char *)&one, sizeof one);
      (*out)->fd = fd;
      return GS_OK;
    }
    closesocket(fd);
  }
  FreeAddrInfoW(list);
  snprintf(what, sizeof what, "connecting to %s:%s", host, port);
  net_describe(err, errcap, what, last);
  return GS_EIO;
}

int gs_port_net_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms) {
  const char *p = buf;
  while (len > 0) {
    int chunk = len > 0x40000000u ? 0x40000000 : (int)len;
    int n = send(s->fd, p, chunk, 0);
    if (n > 0) {
      p += n;
      len -= (size_t)n;
    } else if (n == SOCKET_ERROR && WSAGetLastError() == WSAEWOULDBLOCK) {
      int ready = net_wait(s->fd, 1, stall_ms ? (int)stall_ms : -1);
      if (ready < 0) return net_fail(GS_EIO);
      if (ready == 0) {
        port_error = WSAETIMEDOUT;
        return GS_EIO;
      }
    } else {
      return net_fail(GS_EIO);
    }
  }
  return GS_OK;
}

int gs_port_net_recv(gs_port_socket *s, void *buf, size_t cap, size_t *got, int timeout_ms) {
  int n, ready;
  *got = 0;
  ready = net_wait(s->fd, 0, timeout_ms);
  if (ready < 0) return net_fail(GS_EIO);
  if (ready == 0) return GS_OK;
  n = recv(s->fd, buf, cap > 0x40000000u ? 0x40000000 : (int)cap, 0);
  if (n > 0) {
    *got = (size_t)n;
    return GS_OK;
  }
  if (n == 0) return GS_EOF;
  if (WSAGetLastError() == WSAEWOULDBLOCK) return GS_OK;
  return net_fail(GS_EIO);
}

void gs_port_net_close(gs_port_socket *s) {
  if (!s) return;
  closesocket(s->fd);
  free(s);
}

void gs_port_sleep_ms(unsigned ms) { Sleep(ms); }

uint64_t gs_port_wall_ms(void) {
  /* FILETIME counts 100 ns from 1601; 11644473600 s lie before 1970. */
  FILETIME ft;
  ULARGE_INTEGER t;
  GetSystemTimeAsFileTime(&ft);
  t.LowPart = ft.dwLowDateTime;
  t.HighPart = ft.dwHighDateTime;
  return (t.QuadPart - 116444736000000000ull) / 10000u;
}
