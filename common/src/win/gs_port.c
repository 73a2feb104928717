/* gs_port.c (win) - Win32 implementation of the port layer.
 *
 * Files use the wide-character API: paths arrive as UTF-8 and are converted,
 * so names outside the ANSI code page work. With UNDER_CE the file keeps to
 * what Windows CE provides: no C file descriptors, no console, no psapi, no
 * 64-bit tick count, no MoveFileEx, and the ANSI getaddrinfo only. */
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
#ifndef UNDER_CE
#include <psapi.h>
#include <io.h>
#include <sys/stat.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port.h"
#include "gs_port_socket.h"

static DWORD port_error;

void gs_port_set_error(DWORD code) { port_error = code; }

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

#ifdef UNDER_CE
/* CE's C library has no file descriptors: callers open files by path. */
int gs_port_read_fd(int fd, void *buf, size_t cap, size_t *got) {
  (void)fd, (void)buf, (void)cap;
  *got = 0;
  SetLastError(ERROR_NOT_SUPPORTED);
  return port_fail(GS_EIO);
}

unsigned long long gs_port_fd_size(int fd) {
  (void)fd;
  return 0;
}
#else
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
#endif

/* Not offered: CE has no descriptors, and on Win32 ReadFile at an offset on
 * a synchronous handle also moves the position that the sequential reads of
 * another thread share. So the reader keeps its list of forward references. */
int gs_port_pread_fd(int fd, void *buf, size_t cap, uint64_t offset, size_t *got) {
  (void)fd, (void)buf, (void)cap, (void)offset;
  *got = 0;
  return GS_EINVAL;
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

#ifdef UNDER_CE
FILE *gs_port_temp_file(void) { return NULL; }
#else
/* msvcrt's tmpfile() writes to the drive's root, which a user may not:
 * the temporary path instead, deleted on close ("D"). */
FILE *gs_port_temp_file(void) {
  char dir[MAX_PATH], path[MAX_PATH];
  DWORD n = GetTempPathA(sizeof dir, dir);
  if (n == 0 || n >= sizeof dir || !GetTempFileNameA(dir, "gcs", 0, path)) return NULL;
  return fopen(path, "w+bTD");
}
#endif

#ifdef UNDER_CE
/* Most CE images have no console and no standard handles: output goes to a
 * file or to the collector. */
int gs_port_file_stdout(gs_port_file **f) {
  *f = NULL;
  SetLastError(ERROR_NOT_SUPPORTED);
  return port_fail(GS_EIO);
}
#else
int gs_port_file_stdout(gs_port_file **f) {
  HANDLE h = GetStdHandle(STD_OUTPUT_HANDLE);
  *f = NULL;
  if (h == INVALID_HANDLE_VALUE || h == NULL) return port_fail(GS_EIO);
  /* a raw handle: no text-mode translation of LF */
  return file_wrap(f, h, 1);
}
#endif

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
#ifdef UNDER_CE
/* CE's stream devices ("COM1:") have no file attributes, so they count as
 * missing rather than regular. */
static int is_char_device(const char *path) {
  (void)path;
  return 0;
}
#else
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
#endif

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
#ifdef UNDER_CE
  /* No MoveFileEx: the old file goes first, so a crash between the two
   * calls leaves only the new one, under its temporary name. */
  BOOL ok = wf && wt && (DeleteFileW(wt) || GetLastError() == ERROR_FILE_NOT_FOUND) &&
            MoveFileW(wf, wt);
#else
  BOOL ok = wf && wt &&
            MoveFileExW(wf, wt, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
#endif
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

#ifdef UNDER_CE
/* CE sends no console events: the path is only remembered. */
void gs_port_remove_on_signal(const char *path) {
  wchar_t *old = signal_path;
  signal_path = path ? widen(path) : NULL;
  free(old);
}
#else
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
#endif

/* ---- process and time ---- */

#ifdef UNDER_CE
/* CE's GetCurrentProcessId is no export but a read of the kernel's data
 * page, which every process sees at this address. */
#define CE_USER_KDATA 0xFFFFC800u
#define CE_SYSHANDLE_CURPROC (CE_USER_KDATA + 0x004u + 2u * sizeof(HANDLE))
unsigned long gs_port_pid(void) {
  return (unsigned long)(uintptr_t)*(HANDLE volatile *)(uintptr_t)CE_SYSHANDLE_CURPROC;
}

/* GetTickCount wraps after 49.7 days; each wrap seen adds 2^32. The agent
 * asks often enough never to miss one. */
uint64_t gs_port_clock_ms(void) {
  static DWORD last;
  static uint64_t wraps;
  DWORD now = GetTickCount();
  if (now < last) wraps += (uint64_t)1 << 32;
  last = now;
  return wraps + now;
}
#else
unsigned long gs_port_pid(void) { return (unsigned long)GetCurrentProcessId(); }

uint64_t gs_port_clock_ms(void) { return (uint64_t)GetTickCount64(); }
#endif

uint64_t gs_port_time_us(void) {
  static LARGE_INTEGER freq;
  LARGE_INTEGER now;
  if (freq.QuadPart == 0 && !QueryPerformanceFrequency(&freq)) return 0;
  QueryPerformanceCounter(&now);
  return (uint64_t)(now.QuadPart / freq.QuadPart) * 1000000u +
         (uint64_t)(now.QuadPart % freq.QuadPart) * 1000000u / (uint64_t)freq.QuadPart;
}

#ifdef UNDER_CE
uint64_t gs_port_peak_rss(void) { return 0; }   /* unknown: CE has no psapi */
#else
uint64_t gs_port_peak_rss(void) {
  PROCESS_MEMORY_COUNTERS pmc;
  if (!GetProcessMemoryInfo(GetCurrentProcess(), &pmc, sizeof pmc)) return 0;
  return (uint64_t)pmc.PeakWorkingSetSize;
}
#endif

/* ---- network ---- */


/* CE's Winsock resolves ANSI names only; elsewhere the wide call takes any
 * host name. */
#ifdef UNDER_CE
typedef ADDRINFOA net_addrinfo;
typedef char net_char;
#define net_name(s) (s)
#define net_name_free(s) ((void)(s))
#define net_resolve getaddrinfo
#define net_resolve_free freeaddrinfo
#else
typedef ADDRINFOW net_addrinfo;
typedef wchar_t net_char;
#define net_name(s) widen(s)
#define net_name_free(s) free(s)
#define net_resolve GetAddrInfoW
#define net_resolve_free FreeAddrInfoW
#endif

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
static int net_connect_one(SOCKET fd, const net_addrinfo *ai, unsigned timeout_ms) {
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
  net_addrinfo hints, *list = NULL, *ai;
  const net_char *whost, *wport;
  uint64_t t0 = gs_port_time_us();
  int rc, last = WSAETIMEDOUT;
  char what[320];

  *out = NULL;
  if (net_start()) {
    net_describe(err, errcap, "starting Winsock", WSAGetLastError());
    return GS_EIO;
  }
  whost = net_name(host);
  wport = net_name(port);
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  rc = whost && wport ? net_resolve(whost, wport, &hints, &list) : WSA_NOT_ENOUGH_MEMORY;
  net_name_free((void *)whost);
  net_name_free((void *)wport);
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
      net_resolve_free(list);
      if (!(*out = malloc(sizeof **out))) {
        closesocket(fd);
        snprintf(err, errcap, "out of memory");
        return GS_ENOMEM;
      }
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof one);
      setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, (const char *)&one, sizeof one);
      (*out)->fd = fd;
      (*out)->pipe = (*out)->event = NULL;
      return GS_OK;
    }
    closesocket(fd);
  }
  net_resolve_free(list);
  snprintf(what, sizeof what, "connecting to %s:%s", host, port);
  net_describe(err, errcap, what, last);
  return GS_EIO;
}

int gs_port_net_send(gs_port_socket *s, const void *buf, size_t len, unsigned stall_ms) {
  const char *p = buf;
  if (s->pipe) return gs_port_pipe_send(s, buf, len, stall_ms);
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
  if (s->pipe) return gs_port_pipe_recv(s, buf, cap, got, timeout_ms);
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
  if (s->pipe) gs_port_pipe_close(s);
  else closesocket(s->fd);
  free(s);
}

void gs_port_sleep_ms(unsigned ms) { Sleep(ms); }

uint64_t gs_port_wall_ms(void) {
  /* FILETIME counts 100 ns from 1601; 11644473600 s lie before 1970. */
  FILETIME ft;
  ULARGE_INTEGER t;
#ifdef UNDER_CE
  SYSTEMTIME st;                    /* CE lacks GetSystemTimeAsFileTime */
  GetSystemTime(&st);
  if (!SystemTimeToFileTime(&st, &ft)) return 0;
#else
  GetSystemTimeAsFileTime(&ft);
#endif
  t.LowPart = ft.dwLowDateTime;
  t.HighPart = ft.dwHighDateTime;
  return (t.QuadPart - 116444736000000000ull) / 10000u;
}
