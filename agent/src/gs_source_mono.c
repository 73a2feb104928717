/* gs_source_mono.c - the mono heap source: a program running on Mono with
 * the gcsnap profiler module (agent/mono), reached through the Unix socket
 * the module listens on:
 *
 *   mono --profile=gcsnap:socket=PATH[,ids=stable] app.exe
 *   gcsnap-agent --source mono:PATH ...
 *
 * Each walk is one connection: the module greets, the source asks for a
 * capture, the module answers with the snapshot as text lines
 * (agent/mono/gs_mono_emit.c) that are checked and handed to the visitor
 * one by one. The module is another process: every line is bounded and
 * checked, and a connection that ends before the end line fails the walk,
 * so a program that dies mid-capture leaves no snapshot. An object line is
 * parsed as it arrives, a field at a time, so an array of millions of
 * references costs 8 bytes each (at most the walker's limit, by default
 * what the record reader takes back), never its text; other lines are bounded
 * by GS_READER_DEFAULT_MAX_LINE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_port_local.h"
#include "gs_reader.h"
#include "gs_sources.h"

#define MAX_LINE        ((size_t)GS_READER_DEFAULT_MAX_LINE)
#define KEEP_REFS       ((size_t)1 << 20)   /* more are given back after a walk */
#define REPLY_MS        120000              /* a capture of a large heap takes seconds */
#define HELLO           "gcsnap-mono 1 ids="

const char gs_source_mono_help[] =
  "  mono:PATH     a program running on Mono with the gcsnap profiler module,\n"
  "                loaded as mono --profile=gcsnap:socket=PATH[,ids=stable] app.exe;\n"
  "                PATH is that socket. Each capture is an induced full\n"
  "                collection with the program stopped. Object IDs are\n"
  "                addresses; --stable-ids (module loaded with ids=stable) gives\n"
  "                identities that survive compaction.\n";

typedef struct mono_source {
  gs_source base;
  char *path;
  gs_port_socket *sock;
  char *buf;                    /* received bytes; lines are cut in place */
  size_t cap, len, pos;
  uint64_t *refs;
  size_t refs_cap;
  int in_section;               /* an s line came: the next one, or e, ends it */
} mono_source;

static int fail(mono_source *s, int rc, const char *what, const char *detail) {
  snprintf(s->base.error, sizeof s->base.error, "%.80s: %.80s%s%.80s", s->path, what,
           detail ? ": " : "", detail ? detail : "");
  return rc;
}

/* Receives more bytes after those not yet consumed, which move to the
 * buffer's start; the buffer grows when they fill it. GS_OK, or GS_EIO
 * (the reason in base.error). */
static int receive(mono_source *s) {
  size_t got;
  int rc;
  if (s->pos) {
    memmove(s->buf, s->buf + s->pos, s->len - s->pos);
    s->len -= s->pos;
    s->pos = 0;
  }
  if (s->len == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 65536;
    char *bigger;
    if (s->cap >= MAX_LINE) return fail(s, GS_EIO, "a line longer than 64 MiB", NULL);
    if (!(bigger = realloc(s->buf, cap))) return fail(s, GS_EIO, "out of memory", NULL);
    s->buf = bigger;
    s->cap = cap;
  }
  rc = gs_port_net_recv(s->sock, s->buf + s->len, s->cap - s->len, &got, REPLY_MS);
  if (rc == GS_EOF)
    return fail(s, GS_EIO, "the program closed the connection before the end of the "
                           "snapshot (did it exit?)", NULL);
  if (rc || !got)
    return fail(s, GS_EIO, rc ? "reading from the module failed" : "no answer from the "
                "module within 120 s", rc ? gs_port_error_text() : NULL);
  s->len += got;
  return GS_OK;
}

/* The next line, NUL-terminated, or NULL (the reason in base.error). */
static char *next_line(mono_source *s) {
  for (;;) {
    char *nl = s->pos < s->len ? memchr(s->buf + s->pos, '\n', s->len - s->pos) : NULL;
    if (nl) {
      char *line = s->buf + s->pos;
      *nl = 0;
      s->pos = (size_t)(nl - s->buf) + 1;
      return line;
    }
    if (receive(s)) return NULL;
  }
}

/* Connects, checks the greeting and sends cmd. */
static int open_link(mono_source *s, const char *cmd, int *stable) {
  char err[200];
  const char *hello;
  int rc;
  gs_port_net_close(s->sock);
  s->sock = NULL;
  s->len = s->pos = 0;
  if ((rc = gs_port_local_connect(&s->sock, s->path, err, sizeof err)))
    return fail(s, rc, "cannot reach the profiler module (is the program running with "
                       "--profile=gcsnap:socket=PATH?)", err);
  if (!(hello = next_line(s))) return GS_EIO;
  if (strncmp(hello, HELLO, strlen(HELLO)) != 0)
    return fail(s, GS_EFORMAT, "not the gcsnap profiler module", hello);
  if (stable) *stable = strcmp(hello + strlen(HELLO), "stable") == 0;
  if (gs_port_net_send(s->sock, cmd, strlen(cmd), 10000))
    return fail(s, GS_EIO, "sending to the module failed", gs_port_error_text());
  return GS_OK;
}

/* The value of a hexadecimal digit, or -1. */
static int digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* A hexadecimal number of 1 to 16 digits at *p, which then points past it
 * and one blank. 0 or -1. */
static int hex(const char **p, uint64_t *out) {
  const char *c = *p;
  uint64_t v = 0;
  int n = 0, d;
  for (; n < 17 && (d = digit(*c)) >= 0; c++, n++) v = v << 4 | (unsigned)d;
  if (n == 0 || n > 16 || (*c && *c != ' ')) return -1;
  *p = *c ? c + 1 : c;
  *out = v;
  return 0;
}

/* The next field of an object line, received as needed: a hexadecimal
 * number of 1 to 16 digits and the blank or the newline after it (*end
 * set). It never waits for a byte past that one. GS_OK, -1 when malformed,
 * or GS_EIO. */
static int field(mono_source *s, uint64_t *out, int *end) {
  for (;;) {
    const char *c = s->buf + s->pos, *stop = s->buf + s->len;
    uint64_t v = 0;
    int n = 0, d;
    for (; c < stop && n < 17 && (d = digit(*c)) >= 0; c++, n++) v = v << 4 | (unsigned)d;
    if (c < stop) {
      if (n == 0 || n > 16 || (*c != ' ' && *c != '\n')) return -1;
      *end = *c == '\n';
      *out = v;
      s->pos = (size_t)(c - s->buf) + 1;
      return GS_OK;
    }
    if (receive(s)) return GS_EIO;
  }
}

/* Keeps reference n of object id, up to the walker's limit. */
static int keep_ref(mono_source *s, uint64_t id, size_t n, uint64_t ref) {
  if (n == s->base.max_refs) {
    char detail[96];
    snprintf(detail, sizeof detail, "object %llx, more than %lu (--max-refs)",
             (unsigned long long)id, (unsigned long)s->base.max_refs);
    return fail(s, GS_ELIMIT, "an object with more references than the limit of one object",
                detail);
  }
  if (n == s->refs_cap) {
    size_t cap = s->refs_cap ? s->refs_cap * 2 : 1024;
    uint64_t *grown = realloc(s->refs, cap * sizeof *grown);
    if (!grown) return fail(s, GS_ENOMEM, "out of memory for an object's references", NULL);
    s->refs = grown;
    s->refs_cap = cap;
  }
  s->refs[n] = ref;
  return GS_OK;
}

/* An object line, its tag next in the buffer: parsed as it arrives, so
 * that only its references are held. GS_OK, -1 when malformed, or an error. */
static int object_line(mono_source *s, const gs_heap_visitor *v) {
  uint64_t head[3], ref;
  size_t n = 0;
  int end = 0, i, rc;
  if (s->len - s->pos < 2 && receive(s)) return GS_EIO;
  if (s->buf[s->pos + 1] != ' ') return -1;
  s->pos += 2;
  for (i = 0; i < 3; i++)
    if ((rc = field(s, &head[i], &end)) || (end && i < 2)) return rc ? rc : -1;
  for (; !end; n++)
    if ((rc = field(s, &ref, &end)) || (rc = keep_ref(s, head[0], n, ref))) return rc;
  return v->object(v->ctx, head[0], head[1], head[2], s->refs, n);
}

static int root_line(const char *p, const gs_heap_visitor *v) {
  uint64_t id, kind, flags, container;
  if (hex(&p, &id) || hex(&p, &kind) || hex(&p, &flags) || hex(&p, &container) || *p ||
      kind > 5 || flags > 0xffff)
    return -1;
  return v->root(v->ctx, id, (unsigned)kind, (unsigned)flags, container);
}

/* One line of the snapshot: GS_OK, 1 at the end line, or an error (-1: malformed). */
static int snapshot_line(mono_source *s, const char *line, const gs_heap_visitor *v) {
  const char *p = line + 2;
  uint64_t a, b;
  if (line[0] && line[1] != ' ') return -1;
  switch (line[0]) {
  case 's':   /* an AppDomain; the one before ends */
    if (s->in_section && v->section_end(v->ctx)) return GS_EIO;
    s->in_section = 1;
    return v->section(v->ctx, p, strlen(p));
  case 't':
    if (hex(&p, &a) || !*p) return -1;
    return v->type(v->ctx, a, p, strlen(p));
  case 'r': return root_line(p, v);
  case 'e':   /* the world-stopped time, the module's memory and identity map */
    if (hex(&p, &a) || hex(&p, &b) || (*p && hex(&p, &b)) || *p) return -1;
    s->base.pause_us = a;
    if (!s->in_section) return -1;
    return v->section_end(v->ctx) ? GS_EIO : 1;
  case 'x': return fail(s, GS_EIO, "the module could not capture", p);
  default: return -1;
  }
}

/* The bytes of a malformed object line from its bad field on, up to its
 * end or what was received, for the error message. */
static const char *bad_field(const mono_source *s, char *out, size_t cap) {
  size_t n = 0;
  while (s->pos + n < s->len && n + 1 < cap && s->buf[s->pos + n] != '\n') {
    out[n] = s->buf[s->pos + n];
    n++;
  }
  out[n] = 0;
  return out;
}

/* The snapshot's lines to the visitor, up to the end line. */
static int walk_lines(mono_source *s, const gs_heap_visitor *v) {
  char bad[24];
  for (;;) {
    const char *line = NULL;
    int rc;
    if (s->pos == s->len && receive(s)) return GS_EIO;
    if (s->buf[s->pos] == 'o') rc = object_line(s, v);
    else if (!(line = next_line(s))) return GS_EIO;
    else rc = snapshot_line(s, line, v);
    if (rc == 1) return GS_OK;
    if (rc == -1 && line) return fail(s, GS_EFORMAT, "malformed line from the module", line);
    if (rc == -1)
      return fail(s, GS_EFORMAT, "malformed object line from the module, at",
                  bad_field(s, bad, sizeof bad));
    if (rc) return rc;
  }
}

static int mono_walk(gs_source *src, const gs_heap_visitor *v) {
  mono_source *s = (mono_source *)src;
  int rc, stable;
  if ((rc = open_link(s, src->use_stable_ids ? "capture stable\n" : "capture\n", &stable)))
    return rc;
  if (src->use_stable_ids && !stable)
    return fail(s, GS_EINVAL, "stable IDs need the module loaded with ids=stable", NULL);
  s->in_section = 0;
  rc = walk_lines(s, v);
  if (s->refs_cap > KEEP_REFS) {   /* a huge array's references are not kept between walks */
    free(s->refs);
    s->refs = NULL;
    s->refs_cap = 0;
  }
  return rc;
}

static int mono_heap_bytes(gs_source *src, uint64_t *bytes) {
  mono_source *s = (mono_source *)src;
  const char *line, *p;
  int rc;
  if ((rc = open_link(s, "heap\n", NULL))) return rc;
  if (!(line = next_line(s))) return GS_EIO;
  p = line + 5;
  if (strncmp(line, "heap ", 5) != 0 || hex(&p, bytes) || *p)
    return fail(s, GS_EFORMAT, "malformed answer from the module", line);
  return GS_OK;
}

static void mono_free(gs_source *src) {
  mono_source *s = (mono_source *)src;
  if (!s) return;
  gs_port_net_close(s->sock);
  free(s->path);
  free(s->buf);
  free(s->refs);
  free(s);
}

static const gs_source_ops mono_ops = {"mono", mono_walk, mono_free, mono_heap_bytes, NULL, NULL,
                                       NULL};

int gs_source_mono_new(gs_source **out, const char *options, char *err, size_t errcap) {
  mono_source *s;
  int stable = 0, rc;
  *out = NULL;
  if (!*options) {
    snprintf(err, errcap, "give the module's socket: mono:PATH");
    return GS_EINVAL;
  }
  if (!(s = calloc(1, sizeof *s)) || !(s->path = malloc(strlen(options) + 1)) ||
      !(s->buf = malloc(s->cap = 65536))) {
    mono_free(s ? &s->base : NULL);
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  memcpy(s->path, options, strlen(options) + 1);
  s->base.ops = &mono_ops;
  s->base.max_refs = GS_READER_DEFAULT_MAX_REFS;   /* until a walker sets it */
  /* The greeting tells whether the module keeps identities. */
  if ((rc = open_link(s, "", &stable))) {
    snprintf(err, errcap, "%s", s->base.error);
    mono_free(&s->base);
    return rc == GS_EINVAL ? GS_EINVAL : GS_EIO;
  }
  gs_port_net_close(s->sock);
  s->sock = NULL;
  s->base.stable_ids = stable;
  *out = &s->base;
  return GS_OK;
}
