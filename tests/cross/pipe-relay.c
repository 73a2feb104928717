/* pipe-relay.c - a named pipe in front of a TCP server, so that the Win32
 * agent's dotnet source can be tested under Wine on a real pipe with no
 * .NET: tests/dotnet/diag.py plays a recorded diagnostics stream on TCP
 * (serve --tcp), and this program makes it reachable as \\.\pipe\NAME, the
 * kind of endpoint a .NET program has on Windows (tests/cross/dotnet-pipe.sh).
 *
 * usage: pipe-relay PIPE HOST PORT
 *
 * Creates the named pipe server PIPE (byte mode, any number of instances),
 * prints "listening PIPE" once a client can connect, and for each client
 * connects to HOST:PORT and relays bytes both ways; when either side
 * closes, it closes the other. Clients are served at the same time, each
 * by two threads of its own: the agent keeps a session's stream open while
 * it stops the session on a second connection. Runs until killed; exits 1
 * when the pipe cannot be made (or exists already) and 2 on bad usage. */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE 65536
#define POLL_MS 200

typedef struct {
  HANDLE pipe;
  SOCKET sock;
  volatile LONG done;                   /* set by the direction that ended first */
  unsigned long id;
} relay;

static const char *server_host, *server_port;

static void complain(unsigned long id, const char *what, unsigned long code) {
  fprintf(stderr, "pipe-relay: connection %lu: %s (error %lu)\n", id, what, code);
  fflush(stderr);
}

/* One overlapped read or write on the pipe, waited for (the handle is
 * overlapped so that both directions can be pending at once; a handle
 * without it serializes them). Bytes moved, or -1: closed or broken. */
static long pipe_io(HANDLE pipe, HANDLE ev, int writing, char *buf, DWORD len) {
  OVERLAPPED ov;
  DWORD n = 0;
  BOOL ok;
  memset(&ov, 0, sizeof ov);
  ov.hEvent = ev;
  ok = writing ? WriteFile(pipe, buf, len, NULL, &ov) : ReadFile(pipe, buf, len, NULL, &ov);
  if (!ok && GetLastError() != ERROR_IO_PENDING) return -1;
  if (!GetOverlappedResult(pipe, &ov, &n, TRUE)) return -1;
  return (long)n;
}

static int send_all(SOCKET s, const char *p, long n) {
  while (n > 0) {
    int k = send(s, p, (int)n, 0);
    if (k <= 0) return -1;
    p += k;
    n -= k;
  }
  return 0;
}

/* The client to the server, until the client goes (or the server did);
 * then the server's connection is shut, which ends the other direction. */
static DWORD WINAPI client_to_server(LPVOID arg) {
  relay *r = arg;
  HANDLE ev = CreateEventA(NULL, TRUE, FALSE, NULL);
  char *buf = malloc(BUF_SIZE);
  long n;
  while (ev && buf && !r->done && (n = pipe_io(r->pipe, ev, 0, buf, BUF_SIZE)) >= 0)
    if (n > 0 && send_all(r->sock, buf, n)) break;   /* 0: the client wrote 0 bytes */
  InterlockedExchange(&r->done, 1);
  shutdown(r->sock, SD_BOTH);
  free(buf);
  if (ev) CloseHandle(ev);
  return 0;
}

/* Waits until the socket has bytes, or the other direction ended. 1:
 * readable, 0: the other direction ended, -1: failed. */
static int sock_wait(relay *r) {
  while (!r->done) {
    fd_set rd;
    struct timeval tv = {0, POLL_MS * 1000};
    int k;
    FD_ZERO(&rd);
    FD_SET(r->sock, &rd);
    k = select(0, &rd, NULL, NULL, &tv);
    if (k != 0) return k > 0 ? 1 : -1;
  }
  return 0;
}

/* The server to the client, until the server closes (or the client went);
 * then what the client has not read yet is waited for before the pipe is
 * disconnected, which ends the other direction's read. */
static void server_to_client(relay *r) {
  HANDLE ev = CreateEventA(NULL, TRUE, FALSE, NULL);
  char *buf = malloc(BUF_SIZE);
  int n;
  while (ev && buf && sock_wait(r) > 0 && (n = recv(r->sock, buf, BUF_SIZE, 0)) > 0) {
    long off = 0, k = 0;
    while (off < n && (k = pipe_io(r->pipe, ev, 1, buf + off, (DWORD)(n - off))) > 0) off += k;
    if (k <= 0) break;
  }
  if (!InterlockedExchange(&r->done, 1)) FlushFileBuffers(r->pipe);   /* the client's to read */
  DisconnectNamedPipe(r->pipe);
  CancelIoEx(r->pipe, NULL);           /* a read begun before the disconnect */
  free(buf);
  if (ev) CloseHandle(ev);
}

static SOCKET connect_server(unsigned long id) {
  struct addrinfo hints, *list = NULL, *ai;
  SOCKET s = INVALID_SOCKET;
  int rc;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if ((rc = getaddrinfo(server_host, server_port, &hints, &list)) != 0) {
    complain(id, "cannot resolve the server", (unsigned long)rc);
    return INVALID_SOCKET;
  }
  for (ai = list; ai && s == INVALID_SOCKET; ai = ai->ai_next) {
    s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (s != INVALID_SOCKET && connect(s, ai->ai_addr, (int)ai->ai_addrlen) != 0) {
      closesocket(s);
      s = INVALID_SOCKET;
    }
  }
  freeaddrinfo(list);
  if (s == INVALID_SOCKET) complain(id, "cannot connect to the server", (unsigned long)WSAGetLastError());
  return s;
}

/* One client, from its connection to the end of both directions. */
static DWORD WINAPI serve_client(LPVOID arg) {
  relay *r = arg;
  HANDLE up = NULL;
  BOOL one = TRUE;
  if ((r->sock = connect_server(r->id)) != INVALID_SOCKET) {
    setsockopt(r->sock, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof one);
    if (!(up = CreateThread(NULL, 0, client_to_server, r, 0, NULL)))
      complain(r->id, "cannot start a thread", GetLastError());
  }
  if (up) {
    server_to_client(r);
    WaitForSingleObject(up, INFINITE);
    CloseHandle(up);
  } else {
    DisconnectNamedPipe(r->pipe);      /* the client reads the end at once */
  }
  if (r->sock != INVALID_SOCKET) closesocket(r->sock);
  CloseHandle(r->pipe);
  free(r);
  return 0;
}

/* Waits for a client on a new instance. 1: connected, 0: not. */
static int await_client(HANDLE pipe) {
  OVERLAPPED ov;
  DWORD n;
  int ok = 0;
  memset(&ov, 0, sizeof ov);
  if (!(ov.hEvent = CreateEventA(NULL, TRUE, FALSE, NULL))) return 0;
  if (ConnectNamedPipe(pipe, &ov)) ok = 1;
  else if (GetLastError() == ERROR_PIPE_CONNECTED) ok = 1;   /* came before the call */
  else if (GetLastError() == ERROR_IO_PENDING) ok = GetOverlappedResult(pipe, &ov, &n, TRUE) != 0;
  CloseHandle(ov.hEvent);
  return ok;
}

/* A new instance of the pipe; the first must be new to the system too, or
 * a pipe of that name from another run would take some of the clients. */
static HANDLE pipe_instance(const char *name, int first) {
  HANDLE pipe = CreateNamedPipeA(name, PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED |
                                 (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
                                 PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT,
                                 PIPE_UNLIMITED_INSTANCES, BUF_SIZE, BUF_SIZE, 0, NULL);
  if (pipe == INVALID_HANDLE_VALUE)
    fprintf(stderr, "pipe-relay: cannot create %s (error %lu)\n", name, GetLastError());
  return pipe;
}

int main(int argc, char **argv) {
  WSADATA wsa;
  HANDLE pipe;
  unsigned long id;
  if (argc != 4) {
    fprintf(stderr, "usage: pipe-relay PIPE HOST PORT\n");
    return 2;
  }
  server_host = argv[2];
  server_port = argv[3];
  if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
    fprintf(stderr, "pipe-relay: WSAStartup failed\n");
    return 1;
  }
  if ((pipe = pipe_instance(argv[1], 1)) == INVALID_HANDLE_VALUE) return 1;
  printf("listening %s\n", argv[1]);
  fflush(stdout);
  for (id = 1;; id++) {
    HANDLE next;
    relay *r;
    int connected = await_client(pipe);
    /* The next instance before this one can end, so that the name never
     * vanishes (a client would find no pipe, where it waits for a busy one). */
    if ((next = pipe_instance(argv[1], 0)) == INVALID_HANDLE_VALUE) return 1;
    if (!connected || !(r = calloc(1, sizeof *r))) {
      CloseHandle(pipe);
    } else {
      HANDLE t;
      r->pipe = pipe;
      r->sock = INVALID_SOCKET;
      r->id = id;
      if ((t = CreateThread(NULL, 0, serve_client, r, 0, NULL))) {
        CloseHandle(t);
      } else {
        complain(id, "cannot start a thread", GetLastError());
        CloseHandle(pipe);
        free(r);
      }
    }
    pipe = next;
  }
}
