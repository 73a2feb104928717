/* gs_source_dotnet.c - the dotnet heap source: a running .NET 5+ program
 * (CoreCLR), reached through its diagnostics IPC:
 *
 *   gcsnap-agent --source dotnet:PID[,buffer-mb=N][,timeout=S] ...
 *
 * Each walk opens an EventPipe session with the heap dump keywords, which
 * makes the runtime induce a blocking full collection and walk its heap in
 * events; the NetTrace stream (common's gs_nettrace) is decoded as it
 * arrives (gs_dotnet_heap) and the session is stopped at the walk's end.
 * The runtime keeps the walk's events in its buffer until the walk ends,
 * and drops what does not fit: the buffer is sized from the program's
 * memory, and a walk that lost any event fails rather than giving a
 * smaller heap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_dotnet_heap.h"
#include "gs_dotnet_ipc.h"
#include "gs_dotnet_watch.h"
#include "gs_error.h"
#include "gs_knob.h"
#include "gs_nettrace.h"
#include "gs_port_dotnet.h"
#include "gs_reader.h"
#include "gs_sources.h"

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
/* GC | Type | GCHeapDump | GCHeapSurvivalAndMovement (generation ranges) |
 * GCHeapCollect (the induced collection) | GCHeapAndTypeNames. */
#define HEAP_KEYWORDS 0x1d80001ull
#define LEVEL_VERBOSE 5u
#define BUFFER_MIN_MB 256u
#define BUFFER_MAX_MB 1000000u           /* what the runtime accepts */
#define TIMEOUT_MS 30000u
#define AFTER_LOSS_MS 10000u             /* reading on to count what was lost */
#define REST_MS 5000u                    /* reading the stream's end after the walk */
#define EXIT_WAIT_STEPS 25u              /* of 20 ms, for a program that is exiting */

const char gs_source_dotnet_help[] =
  "  dotnet:PID[,KNOBS], dotnet:PATH[,KNOBS] or dotnet:listen=PATH[,KNOBS]\n"
  "                a running .NET 5+ program (CoreCLR: .NET 8, .NET 10, ...),\n"
  "                reached through its diagnostics socket (PATH: the socket,\n"
  "                $TMPDIR/dotnet-diagnostic-PID-KEY-socket; on Windows the pipe\n"
  "                \\\\.\\pipe\\dotnet-diagnostic-PID). listen=PATH: the agent\n"
  "                listens on the socket PATH first and waits (timeout=S) for\n"
  "                a program started with DOTNET_DiagnosticPorts=PATH, which\n"
  "                it resumes at once, then talks to it on the connections\n"
  "                the runtime makes. Each capture is a\n"
  "                blocking full collection whose walk the runtime sends as\n"
  "                events; the program is stopped for the walk, and grows by\n"
  "                46 to 90 bytes an object (more with more references) while\n"
  "                the events wait in its buffer.\n"
  "                Object IDs are addresses. Knobs:\n"
  "                buffer-mb=N  the runtime's event buffer in MB, 1-1000000\n"
  "                             (default: twice the program's resident memory\n"
  "                             plus 256); the runtime takes only what it uses.\n"
  "                             A capture that loses any event fails and says\n"
  "                             which size to use\n"
  "                timeout=S    seconds without an event before the capture\n"
  "                             fails, 1-3600 (default 30); the runtime's\n"
  "                             answer to the session, which comes once its\n"
  "                             collection is over, may take as long\n";

/* The default buffer for a program of rss bytes: the walk's events are
 * about 46 bytes an object, whose average size is rarely under 24 bytes. */
static uint32_t buffer_for(uint64_t rss) {
  uint64_t mb = 2 * (rss / 1000000u) + BUFFER_MIN_MB;
  return (uint32_t)(mb > BUFFER_MAX_MB ? BUFFER_MAX_MB : mb);
}

typedef struct dotnet_source {
  gs_source base;
  gs_dipc_peer peer;                      /* where the program is */
  unsigned long pid;                      /* 0 when given the socket */
  uint32_t buffer_mb;                     /* 0: from the program's memory */
  unsigned timeout_ms;
  gs_port_socket *sock;
  int timed_out, closed;
  gs_dwatch *watch;                       /* the heap's size for --trigger, once asked */
  gs_dheap_names *names;                  /* type names from earlier walks */
} dotnet_source;

/* The default buffer for the program as it is now (its memory unknown
 * when given only its socket). */
static uint32_t buffer_for_program(const dotnet_source *s) {
  return buffer_for(s->pid ? gs_port_proc_rss(s->pid) : 0);
}

static int fail(dotnet_source *s, int rc, const char *why) {
  snprintf(s->base.error, sizeof s->base.error, "%.250s", why);
  return rc;
}

/* ---- the stream ---- */

static int stream_read(void *ctx, void *buf, size_t cap, size_t *got) {
  dotnet_source *s = ctx;
  int rc = gs_port_net_recv(s->sock, buf, cap, got, (int)s->timeout_ms);
  if (rc == GS_EOF) {
    s->closed = 1;
    *got = 0;
    return GS_OK;
  }
  if (rc == GS_OK && *got == 0) s->timed_out = 1;
  return rc < 0 || *got == 0 ? GS_EIO : GS_OK;
}

typedef struct capture {
  dotnet_source *s;
  gs_nt *nt;
  gs_dheap *heap;
  uint32_t buffer_mb;
  int stopped;                            /* StopTracing sent */
  char err[300];
} capture;

/* What the runtime dropped: events missing by their numbers, and a walk
 * that stopped short (it does when its events no longer fit), which leaves
 * nodes without their edges. */
static uint64_t lost_of(const capture *c) {
  const gs_dheap_stats *st = gs_dheap_stats_of(c->heap);
  return gs_nt_lost(c->nt) + st->index_gaps + st->unpaired;
}

/* The message of a capture that lost events, with a buffer that would do:
 * what the program's memory asks for, and at least four times this one. */
static int fail_lost(capture *c) {
  const gs_dheap_stats *st = gs_dheap_stats_of(c->heap);
  uint64_t numbered = gs_nt_lost(c->nt) + st->index_gaps;
  uint64_t want = buffer_for_program(c->s);
  if (want < 4ull * c->buffer_mb) want = 4ull * c->buffer_mb;
  if (want > BUFFER_MAX_MB) want = BUFFER_MAX_MB;
  snprintf(c->s->base.error, sizeof c->s->base.error,
           "the runtime dropped events of the heap walk (%llu missing by their numbers, %llu "
           "objects and references without each other): its buffer of %lu MB was full after "
           "%llu bytes; nothing was captured; try buffer-mb=%llu",
           (unsigned long long)numbered,
           (unsigned long long)st->unpaired, (unsigned long)c->buffer_mb,
           (unsigned long long)gs_nt_bytes(c->nt), (unsigned long long)want);
  return GS_EIO;
}

/* The stream's failure in words: a timeout, a program gone, or the bytes. */
static int fail_stream(capture *c, int rc) {
  dotnet_source *s = c->s;
  if (s->timed_out)
    snprintf(s->base.error, sizeof s->base.error, "the runtime sent nothing for %u s (raise "
             "timeout=S for a heap that takes longer to walk)", s->timeout_ms / 1000);
  else if (s->closed || rc == GS_EOF)
    snprintf(s->base.error, sizeof s->base.error, "the event stream ended before the heap "
             "walk did (did the program exit?)");
  else
    snprintf(s->base.error, sizeof s->base.error, "the event stream: %.230s", c->err);
  return rc == GS_EOF ? GS_EIO : rc;
}

/* Reads events into the decoder until the walk's collection ends. After a
 * loss, reads on a while without emitting, so as to say how much was lost. */
static int read_walk(capture *c) {
  uint64_t lost_at = 0;
  gs_nt_event ev;
  int rc;
  for (;;) {
    if ((rc = gs_nt_next(c->nt, &ev)) != GS_OK) return fail_stream(c, rc);
    if (!lost_at && lost_of(c)) lost_at = gs_port_time_us();
    if (lost_at) {
      if (gs_port_time_us() - lost_at > AFTER_LOSS_MS * 1000ull) return fail_lost(c);
      if (strcmp(ev.provider, RUNTIME_PROVIDER) || ev.event_id != GS_DHEAP_GC_END) continue;
    }
    if (strcmp(ev.provider, RUNTIME_PROVIDER)) continue;
    rc = gs_dheap_event(c->heap, ev.event_id, ev.payload, ev.payload_len, ev.timestamp,
                        ev.offset);
    if (rc == GS_DHEAP_END) return GS_OK;
    if (rc < 0 && gs_dheap_error(c->heap)[0])
      snprintf(c->s->base.error, sizeof c->s->base.error, "%s", gs_dheap_error(c->heap));
    if (rc < 0) return rc;
  }
}

/* After the walk: the session stopped (on a connection of its own) and the
 * rest of the stream read, for its last sequence point, which counts what
 * was dropped anywhere, a batch that left no gap behind it included. A
 * stream that breaks or stalls now has given its walk whole already. */
static void read_rest(capture *c, uint64_t session) {
  dotnet_source *s = c->s;
  uint64_t t0 = gs_port_time_us();
  unsigned timeout = s->timeout_ms;
  gs_nt_event ev;
  char err[300];
  gs_dipc_stop(&s->peer, session, err, sizeof err);
  c->stopped = 1;
  s->timeout_ms = timeout < REST_MS ? timeout : REST_MS;
  while (gs_nt_next(c->nt, &ev) == GS_OK && gs_port_time_us() - t0 < REST_MS * 1000ull) {}
  s->timeout_ms = timeout;
}

/* ---- the walk ---- */

/* "APP (.NET VERSION)", from the program's own description. */
static void section_name(const gs_dipc_process *p, char *name, size_t cap) {
  const char *app = p->assembly;
  char first[256];
  if (!*app) {                            /* before .NET 6: the command's first word */
    const char *slash;
    size_t n = strcspn(p->command_line, " ");
    snprintf(first, sizeof first, "%.*s", (int)n, p->command_line);
    slash = strrchr(first, '/');
    app = slash ? slash + 1 : first;
  }
  snprintf(name, cap, "%s (.NET%s%s)", *app ? app : "dotnet", *p->version ? " " : "", p->version);
}

/* The program's name and runtime, for a session's hello: a help, so a
 * program that does not answer yet is no error here (its walk says why). */
static void dotnet_describe(gs_source *src) {
  dotnet_source *s = (dotnet_source *)src;
  gs_dipc_process info;
  char err[300];
  if (gs_dipc_process_info(&s->peer, &info, err, sizeof err) == GS_OK)
    section_name(&info, s->base.program, sizeof s->base.program);
}

static uint32_t buffer_of(const dotnet_source *s) {
  return s->buffer_mb ? s->buffer_mb : buffer_for_program(s);
}

static int decode(capture *c, const gs_heap_visitor *v, const char *name, uint64_t session) {
  const gs_dheap_stats *st;
  int rc = gs_nt_open(&c->nt, stream_read, c->s, c->err, sizeof c->err);
  if (rc < 0) return fail_stream(c, rc);
  if ((rc = gs_dheap_new(&c->heap, v, gs_nt_trace_of(c->nt)->pointer_size, c->s->base.max_refs,
                         c->s->names)))
    return fail(c->s, rc, "out of memory");
  if ((rc = v->section(v->ctx, name, strlen(name))) < 0 || (rc = read_walk(c)) < 0) return rc;
  read_rest(c, session);
  if (lost_of(c)) return fail_lost(c);
  if ((rc = gs_dheap_finish(c->heap)) < 0)
    return fail(c->s, rc, gs_dheap_error(c->heap)[0] ? gs_dheap_error(c->heap) : "");
  st = gs_dheap_stats_of(c->heap);
  c->s->base.pause_us = (uint64_t)((double)(st->walk_end - st->walk_start) * 1e6 /
                                   (double)gs_nt_trace_of(c->nt)->qpc_frequency);
  return v->section_end(v->ctx);
}

static int walk_once(dotnet_source *s, const gs_heap_visitor *v) {
  gs_dipc_provider p = {RUNTIME_PROVIDER, HEAP_KEYWORDS, LEVEL_VERBOSE};
  gs_dipc_process info;
  capture c;
  char name[400], err[300];
  uint64_t session = 0;
  int rc;
  memset(&c, 0, sizeof c);
  c.s = s;
  s->timed_out = s->closed = 0;
  s->base.pause_us = s->base.stream_bytes = s->base.lost_events = 0;
  if (gs_dipc_process_info(&s->peer, &info, err, sizeof err) < 0)
    return fail(s, GS_EIO, err);
  section_name(&info, name, sizeof name);
  c.buffer_mb = buffer_of(s);
  if (gs_dipc_collect(&s->peer, c.buffer_mb, &p, 1, s->timeout_ms, &s->sock, &session, err,
                      sizeof err) < 0)
    return fail(s, GS_EIO, err);
  rc = decode(&c, v, name, session);
  if (c.nt) {
    s->base.stream_bytes = gs_nt_bytes(c.nt);
    s->base.lost_events = lost_of(&c);
  }
  /* A walk that failed leaves the session to stop; closing ours ends it too. */
  if (!c.stopped) gs_dipc_stop(&s->peer, session, err, sizeof err);
  gs_port_net_close(s->sock);
  s->sock = NULL;
  gs_dheap_free(c.heap);
  gs_nt_free(c.nt);
  return rc;
}

/* Whether the program has exited, allowing for one that is still going:
 * its sockets close before its process is gone. */
static int exited(unsigned long pid) {
  unsigned i;
  for (i = 0; i < EXIT_WAIT_STEPS && gs_port_proc_alive(pid); i++) gs_port_sleep_ms(20);
  return i == EXIT_WAIT_STEPS ? 0 : 1;
}

/* A walk that failed because the program died says so first. */
static int dotnet_walk(gs_source *src, const gs_heap_visitor *v) {
  dotnet_source *s = (dotnet_source *)src;
  char why[sizeof s->base.error];
  int rc = walk_once(s, v);
  if (rc < 0 && s->pid && exited(s->pid)) {
    memcpy(why, s->base.error, sizeof why);
    snprintf(s->base.error, sizeof s->base.error, "the program (process %lu) exited during the "
             "capture (%.180s)", s->pid, why);
  }
  return rc;
}

/* From the runtime's own collections (gs_dotnet_watch.h): GS_EOF until one
 * has ended since the first call. A watch that broke is opened again. */
static int dotnet_heap_bytes(gs_source *src, uint64_t *bytes) {
  dotnet_source *s = (dotnet_source *)src;
  int rc;
  if (!s->watch && gs_dwatch_open(&s->watch, &s->peer, s->base.error, sizeof s->base.error))
    return GS_EIO;
  rc = gs_dwatch_poll(s->watch, bytes, s->base.error, sizeof s->base.error);
  if (rc == GS_EIO) {
    gs_dwatch_close(s->watch);
    s->watch = NULL;
  }
  return rc;
}

static void dotnet_free(gs_source *src) {
  dotnet_source *s = (dotnet_source *)src;
  if (!s) return;
  gs_dwatch_close(s->watch);
  gs_dheap_names_free(s->names);
  gs_dipc_unlisten(&s->peer);
  gs_port_net_close(s->sock);
  free(s);
}

/* dotnet:PID and listen=PATH know the program's process; a socket given
 * by its path may be served by another. */
static int dotnet_gone(gs_source *src) {
  dotnet_source *s = (dotnet_source *)src;
  if (!s->pid || gs_port_proc_alive(s->pid)) return 0;
  snprintf(s->base.error, sizeof s->base.error, "the program (process %lu) has exited",
           s->pid);
  return 1;
}

static const gs_source_ops dotnet_ops = {"dotnet", dotnet_walk, dotnet_free, dotnet_heap_bytes,
                                         NULL, dotnet_gone, dotnet_describe};

/* ---- options ---- */

static int parse_knobs(dotnet_source *s, const char *p, char *err, size_t errcap) {
  gs_knob k;
  uint64_t v;
  int rc;
  while ((rc = gs_knob_next(&p, &k, err, errcap)) == 1) {
    if (gs_knob_is(&k, "buffer-mb")) {
      if ((rc = gs_knob_count(&k, 1, BUFFER_MAX_MB, &v, err, errcap))) return rc;
      s->buffer_mb = (uint32_t)v;
    } else if (gs_knob_is(&k, "timeout")) {
      if ((rc = gs_knob_count(&k, 1, 3600, &v, err, errcap))) return rc;
      s->timeout_ms = (unsigned)v * 1000u;
    } else {
      return gs_knob_bad(&k, "unknown knob (known: buffer-mb, timeout)", err, errcap);
    }
  }
  return rc;
}

/* listen=PATH: the agent listens and the program connects (reverse mode):
 * it waits, suspended, until the agent resumes it, which is done here. */
static int start_listening(dotnet_source *s, const char *path, size_t n, char *err,
                           size_t errcap) {
  char where[256];
  if (n == 0 || n >= sizeof where) {
    snprintf(err, errcap, "listen=PATH: give the socket's path (at most 255 bytes)");
    return GS_EINVAL;
  }
  memcpy(where, path, n);
  where[n] = '\0';
  if (gs_dipc_listen(&s->peer, where, s->timeout_ms, err, errcap)) return GS_EIO;
  s->pid = s->peer.pid;
  return GS_OK;
}

/* PID, PATH or listen=PATH, before the first comma. */
static int parse_target(dotnet_source *s, const char *spec, size_t n, char *err, size_t errcap) {
  size_t i;
  if (n >= 7 && !memcmp(spec, "listen=", 7))
    return start_listening(s, spec + 7, n - 7, err, errcap);
  for (i = 0; i < n && spec[i] >= '0' && spec[i] <= '9'; i++)
    s->pid = s->pid * 10 + (unsigned)(spec[i] - '0');
  if (n && i == n && n <= 9 && s->pid)
    return gs_port_dotnet_endpoint(s->pid, s->peer.endpoint, sizeof s->peer.endpoint, err, errcap);
  s->pid = 0;
  if (n == 0 || n >= sizeof s->peer.endpoint) {
    snprintf(err, errcap, "give the program's process ID or its diagnostics socket: dotnet:PID");
    return GS_EINVAL;
  }
  memcpy(s->peer.endpoint, spec, n);
  s->peer.endpoint[n] = '\0';
  return GS_OK;
}

int gs_source_dotnet_new(gs_source **out, const char *options, char *err, size_t errcap) {
  dotnet_source *s = calloc(1, sizeof *s);
  const char *comma = strchr(options, ',');
  size_t n = comma ? (size_t)(comma - options) : strlen(options);
  int rc;
  *out = NULL;
  if (!s) {
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  s->base.ops = &dotnet_ops;
  if (gs_dheap_names_new(&s->names)) {
    free(s);
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  s->base.max_refs = GS_READER_DEFAULT_MAX_REFS;   /* until a walker sets it */
  s->timeout_ms = TIMEOUT_MS;
  if ((rc = parse_knobs(s, comma ? comma + 1 : "", err, errcap)) == GS_OK)
    rc = parse_target(s, options, n, err, errcap);
  if (rc) {
    gs_dheap_names_free(s->names);
    free(s);
    return rc;
  }
  *out = &s->base;
  return GS_OK;
}
