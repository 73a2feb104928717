/* gs_dotnet_ipc.c - the client side of a .NET program's diagnostics IPC
 * (gs_dotnet_ipc.h): messages built and replies checked byte by byte. */
#include "gs_dotnet_ipc.h"

#include <stdio.h>
#include <string.h>

#include "gs_error.h"
#include "gs_port_dotnet.h"
#include "gs_port_local.h"

#define MAGIC "DOTNET_IPC_V1"       /* and its NUL: 14 bytes */
#define HEADER 20u
enum { SET_EVENTPIPE = 0x02, SET_PROCESS = 0x04, SET_SERVER = 0xff };
enum { EP_STOP = 0x01, EP_COLLECT2 = 0x03 };
enum { PROCESS_INFO = 0x00, PROCESS_RESUME = 0x01, PROCESS_INFO2 = 0x04 };
enum { REPLY_OK = 0x00, REPLY_ERROR = 0xff };
#define FORMAT_NETTRACE 1u
#define ADVERT_MAGIC "ADVR_V1"      /* and its NUL: 8 bytes */
#define ADVERT_BYTES 34u

typedef struct msg {
  unsigned char b[GS_DIPC_MESSAGE_MAX];
  size_t n;
  int overflow;
  unsigned reply_ms;                /* how long its reply may take */
} msg;

static void put(msg *m, const void *p, size_t n) {
  if (m->n + n > sizeof m->b) m->overflow = 1;
  if (m->overflow) return;
  memcpy(m->b + m->n, p, n);
  m->n += n;
}

static void put_le(msg *m, uint64_t v, unsigned n) {
  unsigned char b[8];
  unsigned i;
  for (i = 0; i < n; i++) b[i] = (unsigned char)(v >> 8 * i);
  put(m, b, n);
}

/* A string as the IPC has them: UTF-16 units with the NUL, then the units. */
static void put_string(msg *m, const char *s) {
  size_t i, n = s ? strlen(s) : 0;
  put_le(m, n ? n + 1 : 0, 4);
  for (i = 0; i < n; i++) put_le(m, (unsigned char)s[i], 2);   /* ASCII names */
  if (n) put_le(m, 0, 2);
}

static void begin(msg *m, unsigned set, unsigned id) {
  m->n = 0;
  m->overflow = 0;
  m->reply_ms = GS_DIPC_REPLY_MS;
  put(m, MAGIC, sizeof MAGIC);
  put_le(m, 0, 2);                                  /* the size, set by finish */
  put_le(m, set, 1);
  put_le(m, id, 1);
  put_le(m, 0, 2);
}

/* ---- the exchange ---- */

static int recv_all(gs_port_socket *s, unsigned char *b, size_t n, unsigned ms,
                    const char *endpoint, char *err, size_t errcap) {
  while (n > 0) {
    size_t got = 0;
    int rc = gs_port_net_recv(s, b, n, &got, (int)ms);
    if (rc == GS_EOF || rc < 0 || got == 0) {
      if (rc == GS_EOF || rc < 0)
        snprintf(err, errcap, "%.200s: %s", endpoint, rc == GS_EOF ?
                 "the program closed the connection before its reply" : gs_port_error_text());
      else
        snprintf(err, errcap, "%.200s: no reply within %u s", endpoint, ms / 1000);
      return GS_EIO;
    }
    b += got;
    n -= got;
  }
  return GS_OK;
}

static uint64_t le(const unsigned char *p, unsigned n) {
  uint64_t v = 0;
  while (n-- > 0) v = v << 8 | p[n];
  return v;
}

/* Sends m on a new connection and reads the reply's payload into m. */
/* Reverse mode: the runtime's next connection and its advertisement
 * ("ADVR_V1\0", a 16-byte cookie, its pid, two reserved bytes). */
static int peer_accept(gs_dipc_peer *p, gs_port_socket **s, char *err, size_t errcap) {
  unsigned char ad[ADVERT_BYTES];
  int rc = gs_port_local_accept(p->listener, s, (int)p->wait_ms, err, errcap);
  if (rc == GS_EOF)
    snprintf(err, errcap, "%.200s: the program did not connect within %u s", p->endpoint,
             p->wait_ms / 1000);
  if (rc) return GS_EIO;
  if ((rc = recv_all(*s, ad, sizeof ad, GS_DIPC_REPLY_MS, p->endpoint, err, errcap)) == GS_OK &&
      memcmp(ad, ADVERT_MAGIC, sizeof ADVERT_MAGIC)) {
    snprintf(err, errcap, "%.200s: a connection that is not a .NET runtime's", p->endpoint);
    rc = GS_EFORMAT;
  }
  if (rc) {
    gs_port_net_close(*s);
    *s = NULL;
    return rc;
  }
  p->pid = (unsigned long)le(ad + 24, 8);
  return GS_OK;
}

static int peer_open(gs_dipc_peer *p, gs_port_socket **s, char *err, size_t errcap) {
  return p->listener ? peer_accept(p, s, err, errcap)
                     : gs_port_dotnet_connect(s, p->endpoint, err, errcap);
}

static int exchange(gs_dipc_peer *peer, msg *m, gs_port_socket **out, char *err,
                    size_t errcap) {
  const char *endpoint = peer->endpoint;
  gs_port_socket *s;
  size_t size;
  int rc;
  if (m->overflow) return snprintf(err, errcap, "a message too long"), GS_EINVAL;
  m->b[14] = (unsigned char)m->n;
  m->b[15] = (unsigned char)(m->n >> 8);
  if ((rc = peer_open(peer, &s, err, errcap)) < 0) return rc;
  if (gs_port_net_send(s, m->b, m->n, GS_DIPC_REPLY_MS)) {
    snprintf(err, errcap, "%.200s: sending failed: %s", endpoint, gs_port_error_text());
    gs_port_net_close(s);
    return GS_EIO;
  }
  rc = recv_all(s, m->b, HEADER, m->reply_ms, endpoint, err, errcap);
  if (rc == GS_OK && (memcmp(m->b, MAGIC, sizeof MAGIC) || (size = le(m->b + 14, 2)) < HEADER)) {
    snprintf(err, errcap, "%.200s: not a .NET diagnostics reply", endpoint);
    rc = GS_EFORMAT;
  }
  if (rc == GS_OK && (rc = recv_all(s, m->b + HEADER, size - HEADER, m->reply_ms, endpoint, err,
                                         errcap)) == 0)
    m->n = size;
  if (rc == GS_OK && m->b[16] != SET_SERVER) {
    snprintf(err, errcap, "%.200s: a reply of command set %u", endpoint, m->b[16]);
    rc = GS_EFORMAT;
  } else if (rc == GS_OK && m->b[17] == REPLY_ERROR) {
    snprintf(err, errcap, "%.200s: the runtime refused the command (HRESULT 0x%08lx)", endpoint,
             (unsigned long)(size >= HEADER + 4 ? le(m->b + HEADER, 4) : 0));
    rc = GS_EINVAL;
  } else if (rc == GS_OK && m->b[17] != REPLY_OK) {
    snprintf(err, errcap, "%.200s: a reply of unknown kind %u", endpoint, m->b[17]);
    rc = GS_EFORMAT;
  }
  if (rc == GS_OK && out) *out = s;
  else gs_port_net_close(s);
  return rc;
}

/* ---- process information ---- */

/* The IPC string at *p into dst as UTF-8 (cut to fit; controls as '?'). */
static int get_string(const unsigned char **p, const unsigned char *end, char *dst, size_t cap) {
  uint64_t units;
  size_t n = 0, i;
  if (end - *p < 4) return GS_EFORMAT;
  units = le(*p, 4);
  *p += 4;
  if (units > (uint64_t)(end - *p) / 2) return GS_EFORMAT;
  for (i = 0; i < units; i++) {
    unsigned c = (unsigned)le(*p + 2 * i, 2);
    if (c == 0) break;
    if (c < 0x20 || c == 0x7f) c = '?';
    if (c >= 0x80) c = '?';             /* kept ASCII: names of files and versions */
    if (n + 1 < cap) dst[n++] = (char)c;
  }
  dst[n] = '\0';
  *p += 2 * units;
  return GS_OK;
}

static int parse_info(const msg *m, int v2, gs_dipc_process *info) {
  const unsigned char *p = m->b + HEADER, *end = m->b + m->n;
  if (end - p < 24) return GS_EFORMAT;
  info->pid = le(p, 8);
  p += 24;                               /* the pid and the runtime's cookie */
  if (get_string(&p, end, info->command_line, sizeof info->command_line) ||
      get_string(&p, end, info->os, sizeof info->os) ||
      get_string(&p, end, info->arch, sizeof info->arch))
    return GS_EFORMAT;
  if (v2 && (get_string(&p, end, info->assembly, sizeof info->assembly) ||
             get_string(&p, end, info->version, sizeof info->version)))
    return GS_EFORMAT;
  return GS_OK;
}

int gs_dipc_process_info(gs_dipc_peer *peer, gs_dipc_process *info, char *err, size_t errcap) {
  static msg m;                          /* 64 KiB: not on a device's stack */
  int v2 = 1, rc;
  memset(info, 0, sizeof *info);
  begin(&m, SET_PROCESS, PROCESS_INFO2);
  rc = exchange(peer, &m, NULL, err, errcap);
  if (rc == GS_EINVAL) {                 /* before .NET 6 */
    v2 = 0;
    begin(&m, SET_PROCESS, PROCESS_INFO);
    rc = exchange(peer, &m, NULL, err, errcap);
  }
  if (rc == GS_OK && parse_info(&m, v2, info)) {
    snprintf(err, errcap, "%.200s: a malformed process information reply", peer->endpoint);
    rc = GS_EFORMAT;
  }
  return rc;
}

/* ---- tracing ---- */

int gs_dipc_collect(gs_dipc_peer *peer, uint32_t buffer_mb, const gs_dipc_provider *p,
                    unsigned n, unsigned reply_ms, gs_port_socket **stream, uint64_t *session,
                    char *err, size_t errcap) {
  static msg m;
  unsigned i;
  int rc;
  begin(&m, SET_EVENTPIPE, EP_COLLECT2);
  if (reply_ms > m.reply_ms) m.reply_ms = reply_ms;
  put_le(&m, buffer_mb, 4);
  put_le(&m, FORMAT_NETTRACE, 4);
  put_le(&m, 0, 1);                      /* no rundown: no method events needed */
  put_le(&m, n, 4);
  for (i = 0; i < n; i++) {
    put_le(&m, p[i].keywords, 8);
    put_le(&m, p[i].level, 4);
    put_string(&m, p[i].name);
    put_string(&m, NULL);
  }
  if ((rc = exchange(peer, &m, stream, err, errcap)) < 0) return rc;
  if (m.n < HEADER + 8) {
    gs_port_net_close(*stream);
    *stream = NULL;
    snprintf(err, errcap, "%.200s: a tracing reply without its session", peer->endpoint);
    return GS_EFORMAT;
  }
  *session = le(m.b + HEADER, 8);
  return GS_OK;
}

int gs_dipc_stop(gs_dipc_peer *peer, uint64_t session, char *err, size_t errcap) {
  static msg m;
  begin(&m, SET_EVENTPIPE, EP_STOP);
  put_le(&m, session, 8);
  return exchange(peer, &m, NULL, err, errcap);
}

int gs_dipc_listen(gs_dipc_peer *peer, const char *path, unsigned wait_ms, char *err,
                   size_t errcap) {
  static msg m;
  int rc;
  memset(peer, 0, sizeof *peer);
  snprintf(peer->endpoint, sizeof peer->endpoint, "%s", path);
  peer->wait_ms = wait_ms;
  if ((rc = gs_port_local_listen(&peer->listener, path, err, errcap))) return rc;
  begin(&m, SET_PROCESS, PROCESS_RESUME);               /* it waits for this, by default */
  if ((rc = exchange(peer, &m, NULL, err, errcap))) {
    gs_port_local_unlisten(peer->listener);
    peer->listener = NULL;
  }
  return rc;
}

void gs_dipc_unlisten(gs_dipc_peer *peer) {
  gs_port_local_unlisten(peer->listener);
  peer->listener = NULL;
}
