/* gs_cmd_replay.c - "gcsnap replay": plays a recorded agent session (a
 * .gcstream of gcsnapd --record) to a collector, as the agent did.
 *
 * The agent's frames are sent in their order: Hello, then (after the
 * collector's Welcome) everything else, waiting for the collector's Ack or
 * Error after each SnapshotEnd. A snapshot the recorded agent sent for a
 * CaptureRequest is pushed unasked: its SnapshotBegin is sent with
 * request_id 0, which the collector takes as one the agent started, since
 * the replayed collector never asked. Everything else goes byte for byte.
 *
 * A recording cut short (the file ends inside a frame, or inside a
 * snapshot) is played up to where it ends and the connection closed: the
 * collector records that snapshot as failed, never as complete. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gcsnap.pb-c.h"
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_parse.h"
#include "gs_port.h"
#include "gs_stream.h"
#include "gs_table.h"
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"

#define CONNECT_TIMEOUT_MS 5000
#define DEFAULT_VERDICT_S 120

static const char usage[] =
  "usage: gcsnap replay FILE.gcstream --to HOST:PORT [--speed max|realtime]\n"
  "                     [--device-id ID] [--timeout S]\n"
  "\n"
  "Plays a session recorded by gcsnapd --record to the collector at\n"
  "HOST:PORT (its agent port) as if it were the agent: the agent's frames\n"
  "in their order, a snapshot the agent sent for a request pushed unasked,\n"
  "and waits for the collector's verdict on each snapshot. A recording cut\n"
  "short replays to a failed snapshot.\n"
  "\n"
  "  --to HOST:PORT  the collector ([ADDR]:PORT for IPv6)\n"
  "  --speed max     send as fast as the collector reads (default)\n"
  "  --speed realtime  keep the recorded gaps between frames\n"
  "  --device-id ID  say this device ID in the Hello instead of the recorded one\n"
  "  --timeout S     wait at most S seconds for each verdict (default 120)\n"
  "  -h, --help      show this help\n"
  "\n"
  "Exit status: 0 every snapshot in the recording was stored (Ack), 1 one\n"
  "was refused or failed, or the recording is cut short, 2 usage error, a\n"
  "file that is not a .gcstream, or no collector at HOST:PORT.\n";

enum { OPT_HELP = 1, OPT_TO, OPT_SPEED, OPT_DEVICE, OPT_TIMEOUT };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"to", 0, 1, OPT_TO},
  {"speed", 0, 1, OPT_SPEED},
  {"device-id", 0, 1, OPT_DEVICE},
  {"timeout", 0, 1, OPT_TIMEOUT},
  {NULL, 0, 0, 0},
};

typedef struct replay {
  const char *file, *to, *device_id;
  int realtime, help;
  uint64_t timeout_s;
  gs_port_socket *sock;
  gs_wire_reader in;
  uint8_t inbuf[64 << 10];
  /* the recording */
  uint64_t frames, snapshots, stored;
  uint64_t agent_snapshot_id;
  int in_snapshot;
  uint64_t first_us, start_ns;
} replay;

static int usage_error(const char *message) { return gs_cli_usage_error("replay", usage, message); }

static int parse_args(int argc, char **argv, replay *rp) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  rp->timeout_s = DEFAULT_VERDICT_S;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return usage_error(a.error);
    if (k == GS_ARG_OPERAND) {
      if (rp->file) return usage_error("only one FILE is allowed");
      rp->file = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: rp->help = 1; break;
    case OPT_TO: rp->to = a.value; break;
    case OPT_DEVICE: rp->device_id = a.value; break;
    case OPT_SPEED:
      if (strcmp(a.value, "max") && strcmp(a.value, "realtime"))
        return usage_error("--speed is max or realtime");
      rp->realtime = strcmp(a.value, "realtime") == 0;
      break;
    case OPT_TIMEOUT:
      if (gs_args_parse_count(a.value, 86400, &rp->timeout_s) || rp->timeout_s == 0)
        return usage_error("--timeout needs a number of seconds, 1-86400");
      break;
    }
  }
  if (rp->help) return GS_EXIT_OK;
  if (!rp->file) return usage_error("no FILE given");
  if (!rp->to) return usage_error("--to HOST:PORT is required");
  if (rp->device_id && (!*rp->device_id || strlen(rp->device_id) > GS_STREAM_DEVICE_MAX))
    return usage_error("--device-id needs an ID");
  return GS_EXIT_OK;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the connection ------------------------------------------------------ */

static int open_connection(replay *rp) {
  char host[256], port[32], err[300];
  if (gs_parse_address(rp->to, NULL, host, sizeof host, port, sizeof port) != GS_OK)
    return usage_error("--to needs HOST:PORT");
  if (gs_port_net_connect(&rp->sock, host, port, CONNECT_TIMEOUT_MS, err, sizeof err) != GS_OK) {
    gs_cli_error("replay: cannot connect to the collector at %s: %s", rp->to, err);
    return GS_EXIT_USAGE;
  }
  gs_wire_reader_init(&rp->in, rp->inbuf, sizeof rp->inbuf, sizeof rp->inbuf - GS_WIRE_PREFIX_MAX);
  return GS_EXIT_OK;
}

static int send_all(replay *rp, const uint8_t *p, size_t n) {
  return gs_port_net_send(rp->sock, p, n, 0);
}

static int send_frame(replay *rp, const uint8_t *env, size_t len) {
  uint8_t prefix[GS_WIRE_PREFIX_MAX];
  size_t n = gs_wire_prefix(prefix, len);
  if (send_all(rp, prefix, n) != GS_OK || send_all(rp, env, len) != GS_OK) {
    gs_cli_error("replay: the collector at %s closed the connection: %s", rp->to,
                 gs_port_error_text());
    return GS_EIO;
  }
  return GS_OK;
}

/* The collector's next message, other than Ping (answered here). GS_OK,
 * or GS_EIO after saying why (connection closed, garbled, timed out). */
static int receive(replay *rp, gs_wire_control *m, int timeout_ms) {
  const uint8_t *frame;
  size_t len, avail;
  char err[160];
  for (;;) {
    int rc = gs_wire_reader_next(&rp->in, &frame, &len);
    if (rc == GS_OK) {
      if (gs_wire_decode_control(frame, len, m, err, sizeof err) != GS_OK) {
        gs_cli_error("replay: the collector sent an undecodable frame: %s", err);
        return GS_EIO;
      }
      if (m->body == GS_WIRE_PING && !m->ping.reply) {
        uint8_t buf[64];
        const uint8_t *out;
        size_t n;
        if (gs_wire_write_ping(buf, sizeof buf, m->ping.nonce, 1, &out, &n) == GS_OK)
          send_all(rp, out, n);
        continue;
      }
      if (m->body == GS_WIRE_PING) continue;
      return GS_OK;
    }
    if (rc != GS_EOF) {
      gs_cli_error("replay: the collector's frames are garbled");
      return GS_EIO;
    }
    uint8_t *space = gs_wire_reader_space(&rp->in, &avail);
    size_t got = 0;
    rc = gs_port_net_recv(rp->sock, space, avail, &got, timeout_ms);
    if (rc == GS_OK && got == 0) {
      gs_cli_error("replay: no answer from the collector in %d s", timeout_ms / 1000);
      return GS_EIO;
    }
    if (rc != GS_OK) {
      gs_cli_error("replay: the collector closed the connection");
      return GS_EIO;
    }
    gs_wire_reader_commit(&rp->in, got);
  }
}

/* The collector's text is escaped for the terminal, as names are. */
static void print_error(const char *what, const gs_wire_control *m) {
  char text[1024];
  size_t n = m->error.message ? m->error.message_len : 0;
  if (n >= sizeof text) n = sizeof text - 1;
  if (n) memcpy(text, m->error.message, n);
  text[n] = '\0';
  fprintf(stderr, "gcsnap replay: %s: error %u (%s): ", what, (unsigned)m->error.code,
          gs_wire_error_name(m->error.code));
  gs_table_fputs(text, stderr);
  fputc('\n', stderr);
}

/* After Hello: Welcome, or the collector's refusal. */
static int welcome(replay *rp) {
  gs_wire_control m;
  if (receive(rp, &m, CONNECT_TIMEOUT_MS * 2) != GS_OK) return GS_EIO;
  if (m.body == GS_WIRE_WELCOME) return GS_OK;
  if (m.body == GS_WIRE_ERROR) print_error("the collector refused the session", &m);
  else gs_cli_error("replay: expected Welcome, got message %d", (int)m.body);
  return GS_EIO;
}

/* After SnapshotEnd: Ack, or Error in its place. */
static int verdict(replay *rp) {
  gs_wire_control m;
  char what[96];
  snprintf(what, sizeof what, "agent snapshot %llu was refused",
           (unsigned long long)rp->agent_snapshot_id);
  if (receive(rp, &m, (int)rp->timeout_s * 1000) != GS_OK) return GS_EIO;
  if (m.body == GS_WIRE_ACK) {
    rp->stored++;
    printf("Agent snapshot %llu stored as snapshot %llu.\n",
           (unsigned long long)m.ack.snapshot_id, (unsigned long long)m.ack.stored_id);
    return GS_OK;
  }
  if (m.body == GS_WIRE_ERROR) {
    print_error(what, &m);
    return GS_OK;   /* the session goes on, as it did for the agent */
  }
  gs_cli_error("replay: expected Ack or Error, got message %d", (int)m.body);
  return GS_EIO;
}

/* ---- frames --------------------------------------------------------------- */

/* The frame as it is to be sent: the Hello with --device-id, a requested
 * SnapshotBegin made unasked. *out is frame itself, or packed into *packed
 * (free() it). */
static int rewrite(replay *rp, const Gcsnap__Envelope *env, const uint8_t *frame, size_t len,
                   const uint8_t **out, size_t *out_len, uint8_t **packed) {
  Gcsnap__Envelope copy = *env;
  Gcsnap__Hello hello;
  Gcsnap__SnapshotBegin begin;
  *out = frame;
  *out_len = len;
  *packed = NULL;
  if (env->body_case == GCSNAP__ENVELOPE__BODY_HELLO && rp->device_id) {
    hello = *env->hello;
    hello.device_id = (char *)rp->device_id;
    copy.hello = &hello;
  } else if (env->body_case == GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN &&
             env->snapshot_begin->request_id) {
    begin = *env->snapshot_begin;
    begin.request_id = 0;
    copy.snapshot_begin = &begin;
  } else {
    return GS_OK;
  }
  *out_len = gcsnap__envelope__get_packed_size(&copy);
  if (!(*packed = malloc(*out_len ? *out_len : 1))) return GS_ENOMEM;
  gcsnap__envelope__pack(&copy, *packed);
  *out = *packed;
  return GS_OK;
}

static void keep_time(replay *rp, uint64_t offset_us) {
  uint64_t due_ns, now;
  if (rp->frames == 0) {
    rp->first_us = offset_us;
    rp->start_ns = now_ns();
    return;
  }
  due_ns = rp->start_ns + (offset_us > rp->first_us ? offset_us - rp->first_us : 0) * 1000;
  if ((now = now_ns()) < due_ns) {
    struct timespec ts;
    ts.tv_sec = (time_t)((due_ns - now) / 1000000000u);
    ts.tv_nsec = (long)((due_ns - now) % 1000000000u);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
  }
}

/* Sends one recorded frame and follows the snapshot it belongs to. */
static int play(replay *rp, const uint8_t *frame, size_t len, uint64_t offset_us) {
  Gcsnap__Envelope *env = gcsnap__envelope__unpack(NULL, len, frame);
  const uint8_t *out;
  uint8_t *packed;
  size_t out_len;
  unsigned body;
  int rc;
  if (!env) {
    gs_cli_error("replay: %s: frame %llu is undecodable; sent as recorded", rp->file,
                 (unsigned long long)rp->frames + 1);
    return send_frame(rp, frame, len);
  }
  body = env->body_case;
  if (rp->frames == 0 && body != GCSNAP__ENVELOPE__BODY_HELLO) {
    gcsnap__envelope__free_unpacked(env, NULL);
    gs_cli_error("replay: %s: the recording does not start with Hello", rp->file);
    return GS_EFORMAT;
  }
  if (body == GCSNAP__ENVELOPE__BODY_SNAPSHOT_BEGIN) {
    rp->agent_snapshot_id = env->snapshot_begin->snapshot_id;
    rp->in_snapshot = 1;
    rp->snapshots++;
  }
  rc = rewrite(rp, env, frame, len, &out, &out_len, &packed);
  gcsnap__envelope__free_unpacked(env, NULL);
  if (rc != GS_OK) return rc;
  if (rp->realtime) keep_time(rp, offset_us);
  else if (rp->frames == 0) rp->first_us = offset_us;
  rc = send_frame(rp, out, out_len);
  free(packed);
  rp->frames++;
  if (rc != GS_OK) return rc;
  if (body == GCSNAP__ENVELOPE__BODY_HELLO) return welcome(rp);
  if (body == GCSNAP__ENVELOPE__BODY_ERROR && rp->in_snapshot) {
    /* The agent gave up this snapshot; the collector records it failed. */
    fprintf(stderr, "gcsnap replay: agent snapshot %llu was cut short by the agent\n",
            (unsigned long long)rp->agent_snapshot_id);
    rp->in_snapshot = 0;
  }
  if (body == GCSNAP__ENVELOPE__BODY_SNAPSHOT_END && rp->in_snapshot) {
    rp->in_snapshot = 0;
    return verdict(rp);
  }
  return GS_OK;
}

static int play_file(replay *rp, FILE *f) {
  uint8_t *buf = NULL;
  size_t cap = 0, len;
  uint64_t offset;
  char err[160];
  int rc;
  while ((rc = gs_stream_read_frame(f, &offset, &buf, &cap, &len, err, sizeof err)) == GS_OK)
    if ((rc = play(rp, buf, len, offset)) != GS_OK) break;
  free(buf);
  if (rc == GS_EFORMAT && rp->frames > 0)
    fprintf(stderr, "gcsnap replay: %s: %s\n", rp->file, err);
  if (rc == GS_EIO && ferror(f)) gs_cli_error("replay: cannot read %s: %s", rp->file, strerror(errno));
  if (rp->in_snapshot)
    fprintf(stderr, "gcsnap replay: %s: the recording ends inside agent snapshot %llu; "
            "the collector records it as failed\n", rp->file,
            (unsigned long long)rp->agent_snapshot_id);
  return rc;
}

int gs_cmd_replay(int argc, char **argv) {
  replay *rp = calloc(1, sizeof *rp);
  gs_stream_header h;
  char err[200];
  FILE *f = NULL;
  int code, rc;
  if (!rp) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  if ((code = parse_args(argc, argv, rp)) != GS_EXIT_OK || rp->help) {
    if (rp->help) code = gs_cli_help(usage);
    free(rp);
    return code;
  }
  if (!(f = fopen(rp->file, "rb"))) {
    gs_cli_error("replay: cannot open %s: %s", rp->file, strerror(errno));
    code = GS_EXIT_USAGE;
  } else if (gs_stream_read_header(f, &h, err, sizeof err) != GS_OK) {
    gs_cli_error("replay: %s: %s", rp->file, err);
    code = GS_EXIT_USAGE;
  } else if (h.protocol_version != GS_WIRE_PROTOCOL_VERSION) {
    gs_cli_error("replay: %s was recorded with protocol version %u; this gcsnap speaks %u",
                 rp->file, h.protocol_version, GS_WIRE_PROTOCOL_VERSION);
    code = GS_EXIT_USAGE;
  } else if ((code = open_connection(rp)) == GS_EXIT_OK) {
    rc = play_file(rp, f);
    if ((rc == GS_EFORMAT || rc == GS_EIO) && rp->frames == 0) code = GS_EXIT_USAGE;
    else code = (rc == GS_EOF && !rp->in_snapshot && rp->stored == rp->snapshots)
                    ? GS_EXIT_OK : GS_EXIT_INVALID;
    printf("Replayed %s (device ", rp->file);
    gs_table_fputs(rp->device_id ? rp->device_id : h.device_id, stdout);
    printf(", %llu frames) to %s: %llu of %llu snapshots stored.\n", (unsigned long long)rp->frames,
           rp->to, (unsigned long long)rp->stored, (unsigned long long)rp->snapshots);
  }
  gs_port_net_close(rp->sock);
  if (f) fclose(f);
  free(rp);
  return gs_cli_finish(code);
}
