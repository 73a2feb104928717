/* gst_agent.c - a scripted agent for the collector's tests.
 *
 *   gst_agent HOST:PORT DEVICE FILE [MODE] [options]
 *
 * Says Hello, then answers capture requests by streaming FILE (or streams
 * at once with --unsolicited), and prints what the collector answered, one
 * line each: "welcome", "request N", "ack REQUEST SNAPSHOT STORED",
 * "error CODE MESSAGE", "closed". MODE breaks the stream on purpose: ok
 * (default), crc, counts, gap, cut (half the stream, then close), oversize
 * (a frame length above the maximum), garbage (a frame that does not
 * decode), unexpected (a SectionEnd out of a snapshot), idle (only Hello).
 * Options: --count N (captures to serve, default 1, 0 = forever),
 * --delay-ms N (before streaming), --snapshot-id N, --unsolicited,
 * --batch-refs N. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "gcsnap.pb-c.h"
#include "gs_wire.h"
#include "gst_stream.h"

static int sock = -1;

static int send_all(const void *p, size_t len) {
  const char *c = p;
  while (len > 0) {
    ssize_t n = send(sock, c, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    c += n;
    len -= (size_t)n;
  }
  return 0;
}

static int frame_out(void *ctx, const uint8_t *frame, size_t len) {
  size_t *limit = ctx;
  if (limit && *limit == 0) return 1;
  if (limit) (*limit)--;
  return send_all(frame, len);
}

static int recv_all(void *p, size_t len) {
  char *c = p;
  while (len > 0) {
    ssize_t n = recv(sock, c, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    c += n;
    len -= (size_t)n;
  }
  return 0;
}

/* The next envelope, or NULL when the connection ends. */
static Gcsnap__Envelope *next_env(void) {
  uint64_t len = 0;
  uint8_t b, *buf;
  Gcsnap__Envelope *env;
  int shift = 0;
  do {
    if (recv_all(&b, 1)) return NULL;
    len |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (!(buf = malloc(len ? len : 1)) || recv_all(buf, len)) {
    free(buf);
    return NULL;
  }
  env = gcsnap__envelope__unpack(NULL, len, buf);
  free(buf);
  return env;
}

/* Prints an Ack or an Error; returns 1 for an Error, -1 when closed. */
static int print_reply(void) {
  Gcsnap__Envelope *env;
  int rc = -1;
  while ((env = next_env())) {
    if (env->body_case == GCSNAP__ENVELOPE__BODY_ACK) {
      printf("ack %llu %llu %llu\n", (unsigned long long)env->ack->request_id,
             (unsigned long long)env->ack->snapshot_id, (unsigned long long)env->ack->stored_id);
      rc = 0;
    } else if (env->body_case == GCSNAP__ENVELOPE__BODY_ERROR) {
      printf("error %u %s\n", env->error->code, env->error->message);
      rc = 1;
    }
    gcsnap__envelope__free_unpacked(env, NULL);
    if (rc >= 0) break;
  }
  if (rc < 0) printf("closed\n");
  fflush(stdout);
  return rc;
}

static int connect_to(const char *addr) {
  char host[64];
  const char *colon = strrchr(addr, ':');
  struct sockaddr_in sa;
  if (!colon || (size_t)(colon - addr) >= sizeof host) return -1;
  memcpy(host, addr, (size_t)(colon - addr));
  host[colon - addr] = '\0';
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)atoi(colon + 1));
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) return -1;
  sock = socket(AF_INET, SOCK_STREAM, 0);
  return connect(sock, (struct sockaddr *)&sa, sizeof sa);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void send_broken(const char *mode) {
  static const uint8_t oversize[] = {0x80, 0x80, 0x80, 0x04, 1, 2, 3};   /* 8 MiB */
  static const uint8_t garbage[] = {4, 0xff, 0xff, 0xff, 0xff};
  Gcsnap__Envelope env = GCSNAP__ENVELOPE__INIT;
  Gcsnap__SectionEnd se = GCSNAP__SECTION_END__INIT;
  uint8_t buf[64];
  size_t n;
  if (!strcmp(mode, "oversize")) {
    send_all(oversize, sizeof oversize);
  } else if (!strcmp(mode, "garbage")) {
    send_all(garbage, sizeof garbage);
  } else {
    se.seq = 1;
    se.name = (char *)"x";
    env.body_case = GCSNAP__ENVELOPE__BODY_SECTION_END;
    env.section_end = &se;
    n = gcsnap__envelope__pack(&env, buf + 1);
    buf[0] = (uint8_t)n;
    send_all(buf, n + 1);
  }
  print_reply();
}

static int frame_count(void *ctx, const uint8_t *frame, size_t len) {
  (void)ctx;
  (void)frame;
  (void)len;
  return 0;
}

/* Streams FILE as MODE says; returns 1 when the connection was cut. */
static int stream(const char *file, const char *mode, gst_opts *o) {
  gst_totals t;
  size_t limit;
  if (!strcmp(mode, "cut")) {
    gst_encode(file, o, frame_count, NULL, &t);
    limit = (size_t)t.frames / 2;
    gst_encode(file, o, frame_out, &limit, &t);
    close(sock);
    printf("cut\n");
    fflush(stdout);
    return 1;
  }
  if (!strcmp(mode, "crc")) o->crc_xor = 0x5a5a;
  if (!strcmp(mode, "counts")) o->objects_delta = 1;
  if (!strcmp(mode, "gap")) o->gap_at = 4;
  gst_encode(file, o, frame_out, NULL, &t);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = "ok";
  long count = 1, delay = 0, served = 0;
  int unsolicited = 0, i;
  gst_opts o;
  Gcsnap__Envelope *env;
  uint8_t *hello;
  size_t len;
  memset(&o, 0, sizeof o);
  o.snapshot_id = (uint64_t)time(NULL);
  if (argc < 4) {
    fprintf(stderr, "usage: gst_agent HOST:PORT DEVICE FILE [MODE] [options]\n");
    return 2;
  }
  for (i = 4; i < argc; i++) {
    if (!strcmp(argv[i], "--count") && i + 1 < argc) count = atol(argv[++i]);
    else if (!strcmp(argv[i], "--delay-ms") && i + 1 < argc) delay = atol(argv[++i]);
    else if (!strcmp(argv[i], "--snapshot-id") && i + 1 < argc) o.snapshot_id = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--batch-refs") && i + 1 < argc) o.batch_refs = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--unsolicited")) unsolicited = 1;
    else if (argv[i][0] != '-') mode = argv[i];
    else { fprintf(stderr, "gst_agent: unknown option %s\n", argv[i]); return 2; }
  }
  if (connect_to(argv[1]) != 0) { perror("gst_agent: connect"); return 1; }
  hello = gst_hello(argv[2], GS_WIRE_PROTOCOL_VERSION, &len);
  send_all(hello, len);
  free(hello);
  if (!(env = next_env()) || env->body_case != GCSNAP__ENVELOPE__BODY_WELCOME) {
    if (env && env->body_case == GCSNAP__ENVELOPE__BODY_ERROR)
      printf("error %u %s\n", env->error->code, env->error->message);
    else
      printf("closed\n");
    if (env) gcsnap__envelope__free_unpacked(env, NULL);
    fflush(stdout);
    return 1;
  }
  gcsnap__envelope__free_unpacked(env, NULL);
  printf("welcome\n");
  fflush(stdout);
  if (!strcmp(mode, "oversize") || !strcmp(mode, "garbage") || !strcmp(mode, "unexpected")) {
    send_broken(mode);
    return 0;
  }
  if (unsolicited) {
    if (stream(argv[3], mode, &o)) return 0;
    return print_reply() < 0 ? 1 : 0;
  }
  while ((env = next_env())) {
    int cut;
    if (env->body_case == GCSNAP__ENVELOPE__BODY_PING && !env->ping->reply) {
      gcsnap__envelope__free_unpacked(env, NULL);
      continue;
    }
    if (env->body_case != GCSNAP__ENVELOPE__BODY_CAPTURE_REQUEST || !strcmp(mode, "idle")) {
      gcsnap__envelope__free_unpacked(env, NULL);
      continue;
    }
    o.request_id = env->capture_request->request_id;
    gcsnap__envelope__free_unpacked(env, NULL);
    printf("request %llu\n", (unsigned long long)o.request_id);
    fflush(stdout);
    if (delay) sleep_ms(delay);
    cut = stream(argv[3], mode, &o);
    if (cut) return 0;
    if (print_reply() < 0) return 1;
    o.snapshot_id++;
    if (count && ++served >= count) break;
  }
  close(sock);
  return 0;
}
