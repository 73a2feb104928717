/* test_wire_session.c - gcsnap-agent against a fake collector.
 *
 * The fake collector is this program: plain sockets, frames read with a
 * varint of its own and decoded with protobuf-c. It starts the agent
 * binary, plays the collector's part and checks what the agent does.
 *
 *   test_wire_session session AGENT WORKDIR   hello, captures on request,
 *                                              ping, reconnection
 *   test_wire_session once AGENT WORKDIR      --once: stored, refused,
 *                                              unreachable
 *   test_wire_session failure AGENT WORKDIR   a capture that fails half way
 *                                              is reported with Error */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "gcsnap.pb-c.h"
#include "gs_error.h"
#include "gs_wire.h"
#include "wire_decode.h"

#define WAIT_MS 20000
#define MOCK "mock:objects=5000,sections=2"

static const char *agent_path, *workdir;
static pid_t agent_pid;
static char agent_log[1024];

static void die(const char *fmt, ...) {
  va_list ap;
  char cmd[1200];
  va_start(ap, fmt);
  printf("FAIL ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  if (agent_pid > 0) kill(agent_pid, SIGKILL);
  snprintf(cmd, sizeof cmd, "echo '--- agent log:'; cat '%s'", agent_log);
  if (system(cmd) < 0) perror("system");
  exit(1);
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (long)(ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* ---- the agent process ---- */

static void agent_start(const char *const *args) {
  const char *argv[32];
  size_t n = 0;
  argv[n++] = agent_path;
  while (*args && n < 31) argv[n++] = *args++;
  argv[n] = NULL;
  agent_pid = fork();
  if (agent_pid < 0) die("fork: %s", strerror(errno));
  if (agent_pid == 0) {
    int fd = open(agent_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) dup2(fd, 2);
    execv(agent_path, (char *const *)argv);
    _exit(127);
  }
}

/* The agent's exit status, waiting up to ms. */
static int agent_wait(int ms) {
  uint64_t end = now_ms() + (uint64_t)ms;
  int status;
  while (now_ms() < end) {
    pid_t p = waitpid(agent_pid, &status, WNOHANG);
    if (p == agent_pid) {
      agent_pid = 0;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    sleep_ms(10);
  }
  die("the agent did not exit within %d ms", ms);
  return -1;
}

static void agent_stop(void) {
  if (agent_pid <= 0) return;
  kill(agent_pid, SIGTERM);
  agent_wait(5000);
}

static int log_contains(const char *needle) {
  char buf[1 << 16];
  size_t n;
  FILE *f = fopen(agent_log, "r");
  if (!f) return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  return strstr(buf, needle) != NULL;
}

/* ---- sockets ---- */

static int listen_any(unsigned short *port) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  if (fd < 0) die("socket: %s", strerror(errno));
  /* The agent must not inherit it, or closing it here would not close it. */
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 4) ||
      getsockname(fd, (struct sockaddr *)&a, &len))
    die("listen: %s", strerror(errno));
  *port = ntohs(a.sin_port);
  return fd;
}

static int wait_fd(int fd, int ms) {
  struct pollfd p;
  p.fd = fd;
  p.events = POLLIN;
  return poll(&p, 1, ms) > 0;
}

static int accept_agent(int lfd) {
  int fd;
  if (!wait_fd(lfd, WAIT_MS)) die("the agent did not connect");
  if ((fd = accept(lfd, NULL, NULL)) < 0) die("accept: %s", strerror(errno));
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

static void read_exact(int fd, uint8_t *buf, size_t len) {
  while (len > 0) {
    ssize_t n;
    if (!wait_fd(fd, WAIT_MS)) die("the agent went silent");
    n = read(fd, buf, len);
    if (n <= 0) die("the agent closed the link (%s)", n < 0 ? strerror(errno) : "EOF");
    buf += n;
    len -= (size_t)n;
  }
}

/* One frame's Envelope, length-checked against the protocol's maximum. */
static Gcsnap__Envelope *read_envelope(int fd, uint8_t *buf, size_t *len_out) {
  uint64_t len = 0;
  unsigned shift;
  Gcsnap__Envelope *env;
  for (shift = 0;; shift += 7) {
    uint8_t b;
    if (shift > 28) die("a frame length longer than 5 bytes");
    read_exact(fd, &b, 1);
    len |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  if (len > GS_WIRE_MAX_FRAME) die("a frame of %llu bytes", (unsigned long long)len);
  read_exact(fd, buf, (size_t)len);
  if (!(env = gcsnap__envelope__unpack(NULL, (size_t)len, buf)))
    die("protobuf-c cannot decode a frame of %llu bytes", (unsigned long long)len);
  if (len_out) *len_out = (size_t)len;
  return env;
}

static void send_envelope(int fd, const Gcsnap__Envelope *env) {
  uint8_t buf[4096];
  size_t n = gcsnap__envelope__get_packed_size(env), p;
  p = gs_wire_prefix(buf, n);
  gcsnap__envelope__pack(env, buf + p);
  if (write(fd, buf, p + n) != (ssize_t)(p + n)) die("write: %s", strerror(errno));
}

static void send_welcome(int fd) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Welcome w = GCSNAP__WELCOME__INIT;
  w.protocol_version = GS_WIRE_PROTOCOL_VERSION;
  w.collector_version = "fake\x1b]0;t\x07 1";   /* a title escape, to be shown escaped */
  w.max_frame = GS_WIRE_MAX_FRAME;
  env.body_case = GCSNAP__ENVELOPE__BODY_WELCOME;
  env.welcome = &w;
  send_envelope(fd, &env);
}

static void send_capture(int fd, uint64_t request_id, int stable_ids) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__CaptureRequest r = GCSNAP__CAPTURE_REQUEST__INIT;
  Gcsnap__CaptureOptions o = GCSNAP__CAPTURE_OPTIONS__INIT;
  r.request_id = request_id;
  o.stable_ids = stable_ids;
  r.options = &o;
  env.body_case = GCSNAP__ENVELOPE__BODY_CAPTURE_REQUEST;
  env.capture_request = &r;
  send_envelope(fd, &env);
}

static void send_ack(int fd, uint64_t request_id, uint64_t snapshot_id, uint64_t stored) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Ack a = GCSNAP__ACK__INIT;
  a.request_id = request_id;
  a.snapshot_id = snapshot_id;
  a.stored_id = stored;
  env.body_case = GCSNAP__ENVELOPE__BODY_ACK;
  env.ack = &a;
  send_envelope(fd, &env);
}

static void send_error(int fd, unsigned code, const char *msg) {
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__Error e = GCSNAP__ERROR__INIT;
  e.code = code;
  e.message = (char *)msg;
  env.body_case = GCSNAP__ENVELOPE__BODY_ERROR;
  env.error = &e;
  send_envelope(fd, &env);
}

/* ---- the checks ---- */

static uint8_t frame_buf[GS_WIRE_MAX_FRAME];

static void expect_hello(int fd, const char *device, const char *app) {
  Gcsnap__Envelope *env = read_envelope(fd, frame_buf, NULL);
  if (env->body_case != GCSNAP__ENVELOPE__BODY_HELLO)
    die("the first message is %d, not Hello", (int)env->body_case);
  if (env->hello->protocol_version != GS_WIRE_PROTOCOL_VERSION ||
      strcmp(env->hello->device_id, device) != 0 || strcmp(env->hello->app_name, app) != 0 ||
      env->hello->pointer_size != sizeof(void *) || !env->hello->architecture[0] ||
      !env->hello->agent_version[0] || env->hello->clock_ms == 0)
    die("Hello says protocol %u, device '%s', app '%s', pointer %u, arch '%s'",
        env->hello->protocol_version, env->hello->device_id, env->hello->app_name,
        env->hello->pointer_size, env->hello->architecture);
  gcsnap__envelope__free_unpacked(env, NULL);
}

typedef struct text_buf {
  char *data;
  size_t len, cap;
} text_buf;

static int text_write(void *ctx, const void *data, size_t len) {
  text_buf *b = ctx;
  if (b->len + len + 1 > b->cap) {
    size_t cap = (b->len + len + 1) * 2;
    char *p = realloc(b->data, cap);
    if (!p) return GS_ENOMEM;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return GS_OK;
}

/* Reads one streamed snapshot; its text into text (reset first). */
static void expect_snapshot(int fd, wd_state *d, text_buf *text) {
  uint8_t prefix[GS_WIRE_PREFIX_MAX];
  text->len = 0;
  if (wd_init(d, text_write, text)) die("%s", d->error);
  while (!d->ended) {
    size_t len;
    Gcsnap__Envelope *env = read_envelope(fd, frame_buf, &len);
    gcsnap__envelope__free_unpacked(env, NULL);
    d->wire_bytes += len + gs_wire_prefix(prefix, len);
    if (wd_envelope(d, frame_buf, len)) die("the snapshot stream: %s", d->error);
  }
  if (wd_finish(d)) die("the snapshot stream: %s", d->error);
}

static void read_file(const char *path, text_buf *b) {
  char chunk[1 << 16];
  size_t n;
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot read %s", path);
  b->len = 0;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) text_write(b, chunk, n);
  fclose(f);
}

/* What --out writes for the same source and clock. */
static void reference(const char *source, const char *extra, text_buf *ref) {
  char cmd[2048], path[1100];
  snprintf(path, sizeof path, "%s/ref.gclog", workdir);
  snprintf(cmd, sizeof cmd, "'%s' --source '%s' --clock 1000 %s --out '%s'", agent_path,
           source, extra, path);
  if (system(cmd) != 0) die("the reference dump failed: %s", cmd);
  read_file(path, ref);
}

static void check_text(const text_buf *got, const text_buf *ref, const char *what) {
  if (got->len != ref->len || memcmp(got->data, ref->data, ref->len) != 0)
    die("%s: the streamed snapshot is not --out's text (%lu vs %lu bytes)", what,
        (unsigned long)got->len, (unsigned long)ref->len);
}

static int mode_session(void) {
  unsigned short port;
  char portarg[64];
  int lfd = listen_any(&port), fd;
  text_buf ref = {0}, ref_stable = {0}, got = {0};
  wd_state d;
  uint64_t first_id, t0, delay;
  Gcsnap__Envelope *env;

  reference(MOCK, "", &ref);
  reference(MOCK, "--stable-ids", &ref_stable);
  snprintf(portarg, sizeof portarg, "127.0.0.1:%u", port);
  {
    const char *args[] = {"--source", MOCK, "--clock", "1000", "--connect", portarg,
                          "--device-id", "dev-1", "--app", "TestApp", "--retry-max", "2",
                          NULL};
    agent_start(args);
  }
  fd = accept_agent(lfd);
  expect_hello(fd, "dev-1", "TestApp");
  send_welcome(fd);

  /* A capture on request: the text of --out, request and trigger echoed. */
  send_capture(fd, 11, 0);
  expect_snapshot(fd, &d, &got);
  check_text(&got, &ref, "request 11");
  if (d.request_id != 11 || strcmp(d.trigger, "request") || d.stable_ids || !d.snapshot_id)
    die("SnapshotBegin: request %llu, trigger '%s'", (unsigned long long)d.request_id,
        d.trigger);
  first_id = d.snapshot_id;
  wd_free(&d);
  send_ack(fd, 11, first_id, 101);
  printf("ok   capture on request: %lu bytes of text, %llu on the wire\n",
         (unsigned long)got.len, (unsigned long long)d.wire_bytes);

  /* Ping is answered with the same nonce. */
  {
    Gcsnap__Envelope p = GCSNAP__ENVELOPE__INIT;
    Gcsnap__Ping ping = GCSNAP__PING__INIT;
    ping.nonce = 0xfeed;
    p.body_case = GCSNAP__ENVELOPE__BODY_PING;
    p.ping = &ping;
    send_envelope(fd, &p);
    env = read_envelope(fd, frame_buf, NULL);
    if (env->body_case != GCSNAP__ENVELOPE__BODY_PING || env->ping->nonce != 0xfeed ||
        !env->ping->reply)
      die("no Ping reply");
    gcsnap__envelope__free_unpacked(env, NULL);
    printf("ok   ping answered\n");
  }

  /* Stable IDs on request; a new snapshot ID. */
  send_capture(fd, 12, 1);
  expect_snapshot(fd, &d, &got);
  check_text(&got, &ref_stable, "request 12 with stable IDs");
  if (d.request_id != 12 || !d.stable_ids || d.snapshot_id == first_id)
    die("the second snapshot: request %llu, stable %d, id %llu",
        (unsigned long long)d.request_id, d.stable_ids, (unsigned long long)d.snapshot_id);
  wd_free(&d);
  send_error(fd, GS_WIRE_E_INVALID, "test refusal");
  printf("ok   capture with stable IDs\n");

  /* The link drops: the agent comes back after its backoff. */
  close(fd);
  t0 = now_ms();
  fd = accept_agent(lfd);
  delay = now_ms() - t0;
  if (delay < 200 || delay > 5000) die("reconnected after %llu ms", (unsigned long long)delay);
  expect_hello(fd, "dev-1", "TestApp");
  send_welcome(fd);
  send_capture(fd, 13, 0);
  expect_snapshot(fd, &d, &got);
  check_text(&got, &ref, "request 13 after reconnecting");
  send_ack(fd, 13, d.snapshot_id, 102);
  wd_free(&d);
  printf("ok   reconnected after %llu ms and captured\n", (unsigned long long)delay);

  /* A collector that is down for a while: attempts back off. */
  close(fd);
  close(lfd);
  sleep_ms(1500);
  {
    unsigned short p2 = port;
    struct sockaddr_in a;
    int one = 1;
    lfd = socket(AF_INET, SOCK_STREAM, 0);
    fcntl(lfd, F_SETFD, FD_CLOEXEC);
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(p2);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 4))
      die("listening again on %u: %s", p2, strerror(errno));
  }
  fd = accept_agent(lfd);
  expect_hello(fd, "dev-1", "TestApp");
  close(fd);
  close(lfd);
  agent_stop();
  if (!log_contains("snapshot ") || !log_contains("stored as 101") ||
      !log_contains("collector error 7 (invalid): test refusal") ||
      !log_contains("reconnecting in") || !log_contains("Connection refused"))
    die("the agent's log lacks the Ack, Error or reconnection lines");
  printf("ok   reconnected to a collector that came back; log lines present\n");
  free(ref.data);
  free(ref_stable.data);
  free(got.data);
  return 0;
}

/* --once against a collector that answers verdict (Ack or Error). */
static int once_run(int ack) {
  unsigned short port;
  char portarg[64];
  int lfd = listen_any(&port), fd, rc;
  text_buf ref = {0}, got = {0};
  wd_state d;
  reference(MOCK, "", &ref);
  snprintf(portarg, sizeof portarg, "127.0.0.1:%u", port);
  {
    const char *args[] = {"--source", MOCK, "--clock", "1000", "--connect", portarg,
                          "--device-id", "dev-once", "--once", NULL};
    agent_start(args);
  }
  fd = accept_agent(lfd);
  expect_hello(fd, "dev-once", "mock");
  send_welcome(fd);
  expect_snapshot(fd, &d, &got);
  check_text(&got, &ref, "--once");
  if (d.request_id != 0 || strcmp(d.trigger, "once") != 0)
    die("--once: request %llu, trigger '%s'", (unsigned long long)d.request_id, d.trigger);
  if (ack) {
    send_ack(fd, 99, d.snapshot_id + 1, 1);     /* another snapshot's: not the verdict */
    send_ack(fd, 0, d.snapshot_id, 5);
  } else {
    send_error(fd, GS_WIRE_E_CRC, "CRC mismatch\n\x1b[31mforged line\\");
  }
  rc = agent_wait(WAIT_MS);
  wd_free(&d);
  close(fd);
  close(lfd);
  free(ref.data);
  free(got.data);
  return rc;
}

static int mode_once(void) {
  unsigned short port;
  char portarg[64];
  int lfd, rc;
  if ((rc = once_run(1)) != 0) die("--once, acknowledged: exit %d, not 0", rc);
  if (!log_contains("stored as 5")) die("--once: no Ack line in the log");
  printf("ok   --once acknowledged: exit 0\n");
  if ((rc = once_run(0)) != 1) die("--once, refused: exit %d, not 1", rc);
  if (!log_contains("collector error 5 (crc): CRC mismatch\\x0a\\x1b[31mforged line\\\\\n"))
    die("--once: no Error line, or its text not escaped");
  if (!log_contains("(collector fake\\x1b]0;t\\x07 1) as device dev-once"))
    die("--once: the collector's version is not shown escaped");
  if (log_contains("\x1b")) die("--once: the log holds an escape byte from the collector");
  printf("ok   --once refused: exit 1; the collector's version and error text escaped\n");
  /* Nobody listens on a port just released. */
  lfd = listen_any(&port);
  close(lfd);
  snprintf(portarg, sizeof portarg, "127.0.0.1:%u", port);
  {
    const char *args[] = {"--source", MOCK, "--connect", portarg, "--device-id", "x",
                          "--once", "--connect-timeout", "2", NULL};
    agent_start(args);
  }
  if ((rc = agent_wait(WAIT_MS)) != 3) die("--once, nobody listening: exit %d, not 3", rc);
  printf("ok   --once unreachable: exit 3\n");
  return 0;
}

/* A source that fails half way: SnapshotBegin, then Error in place of
 * SnapshotEnd; the session goes on. */
static int mode_failure(void) {
  unsigned short port;
  char portarg[64], path[1100], source[1200];
  int lfd = listen_any(&port), fd, saw_begin = 0;
  FILE *f;
  Gcsnap__Envelope *env;
  snprintf(path, sizeof path, "%s/broken.gclog", workdir);
  if (!(f = fopen(path, "w"))) die("cannot write %s", path);
  fputs("a 2 Broken 0\nt 1 T\no 10 1 8\no 20 1 zz\nc Broken 0\n", f);
  fclose(f);
  snprintf(source, sizeof source, "file:%s", path);
  snprintf(portarg, sizeof portarg, "127.0.0.1:%u", port);
  {
    const char *args[] = {"--source", source, "--connect", portarg, "--device-id", "dev-f",
                          NULL};
    agent_start(args);
  }
  fd = accept_agent(lfd);
  expect_hello(fd, "dev-f", "file");
  send_welcome(fd);
  send_capture(fd, 21, 0);
  for (;;) {
    env = read_envelope(fd, frame_buf, NULL);
    if (env->body_case == GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN) saw_begin = 1;
    if (env->body_case == GCSNAP__ENVELOPE__BODY_SNAPSHOT_END) die("SnapshotEnd for a failed capture");
    if (env->body_case == GCSNAP__ENVELOPE__BODY_ERROR) break;
    gcsnap__envelope__free_unpacked(env, NULL);
  }
  if (!saw_begin || env->error->code != GS_WIRE_E_CAPTURE || env->error->request_id != 21 ||
      !strstr(env->error->message, ":4:"))
    die("Error: code %u, request %llu, '%s'", env->error->code,
        (unsigned long long)env->error->request_id, env->error->message);
  printf("ok   failed capture reported: %s\n", env->error->message);
  gcsnap__envelope__free_unpacked(env, NULL);
  /* Stable IDs from a source that cannot keep them: refused, no snapshot. */
  send_capture(fd, 22, 1);
  env = read_envelope(fd, frame_buf, NULL);
  if (env->body_case != GCSNAP__ENVELOPE__BODY_ERROR ||
      env->error->code != GS_WIRE_E_UNSUPPORTED || env->error->request_id != 22)
    die("stable IDs from the file source: message %d", (int)env->body_case);
  gcsnap__envelope__free_unpacked(env, NULL);
  printf("ok   unsupported option refused\n");
  /* A frame that does not decode: the agent says so and drops the link. */
  if (write(fd, "\x03\xff\xff\xff", 4) != 4) die("write: %s", strerror(errno));
  env = read_envelope(fd, frame_buf, NULL);
  if (env->body_case != GCSNAP__ENVELOPE__BODY_ERROR ||
      env->error->code != GS_WIRE_E_PROTOCOL || !strstr(env->error->message, "malformed"))
    die("a garbled frame: message %d", (int)env->body_case);
  gcsnap__envelope__free_unpacked(env, NULL);
  {
    char c;
    if (!wait_fd(fd, WAIT_MS) || read(fd, &c, 1) != 0) die("the agent kept the link");
  }
  printf("ok   garbled frame answered with Error protocol, link dropped\n");
  close(fd);
  close(lfd);
  agent_stop();
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_wire_session session|once|failure AGENT WORKDIR\n");
    return 2;
  }
  agent_path = argv[2];
  workdir = argv[3];
  snprintf(agent_log, sizeof agent_log, "%s/agent-%s.log", workdir, argv[1]);
  remove(agent_log);
  signal(SIGPIPE, SIG_IGN);
  if (!strcmp(argv[1], "session")) return mode_session();
  if (!strcmp(argv[1], "once")) return mode_once();
  if (!strcmp(argv[1], "failure")) return mode_failure();
  fprintf(stderr, "unknown mode %s\n", argv[1]);
  return 2;
}
