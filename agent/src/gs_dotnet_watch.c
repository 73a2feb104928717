/* gs_dotnet_watch.c - a .NET program's heap size from its own collections
 * (see gs_dotnet_watch.h). The NetTrace reader pulls its input; here the
 * input is what a non-blocking receive found, then, once a block has begun
 * to arrive, the rest of it, which the runtime writes whole. */
#include "gs_dotnet_watch.h"

#include <stdlib.h>
#include <string.h>

#include "gs_dotnet_ipc.h"
#include "gs_error.h"
#include "gs_nettrace.h"
#include "gs_port.h"

#define RUNTIME_PROVIDER "Microsoft-Windows-DotNETRuntime"
#define GC_KEYWORD 0x1ull
#define LEVEL_INFORMATIONAL 4u
#define GC_HEAP_STATS 4u            /* GCHeapStats_V1/V2 */
#define HEAP_STATS_V1_BYTES 94u     /* 10 u64, 3 u32, a u16; V2 adds generation 4 */
#define REST_MS 5000                /* the rest of a block that began to arrive */
#define AHEAD 65536u

struct gs_dwatch {
  gs_dipc_peer *peer;
  gs_port_socket *sock;
  uint64_t session;
  gs_nt *nt;
  unsigned char ahead[AHEAD];       /* received, not yet read by nt */
  size_t ahead_pos, ahead_len;
  uint64_t bytes;
  int have, closed;
  char err[300];
};

static int watch_read(void *ctx, void *buf, size_t cap, size_t *got) {
  gs_dwatch *w = ctx;
  int rc;
  if (w->ahead_pos < w->ahead_len) {
    size_t n = w->ahead_len - w->ahead_pos;
    if (n > cap) n = cap;
    memcpy(buf, w->ahead + w->ahead_pos, n);
    w->ahead_pos += n;
    *got = n;
    return GS_OK;
  }
  rc = gs_port_net_recv(w->sock, buf, cap, got, REST_MS);
  if (rc == GS_EOF) w->closed = 1;
  return rc == GS_EOF ? (*got = 0, GS_OK) : rc < 0 || *got == 0 ? GS_EIO : GS_OK;
}

/* Whatever has arrived, without waiting. */
static int watch_peek(gs_dwatch *w) {
  size_t got = 0;
  int rc;
  if (w->ahead_pos < w->ahead_len) return GS_OK;
  w->ahead_pos = w->ahead_len = 0;
  rc = gs_port_net_recv(w->sock, w->ahead, sizeof w->ahead, &got, 0);
  if (rc == GS_EOF) w->closed = 1;
  w->ahead_len = rc == GS_OK ? got : 0;
  return rc == GS_EOF ? GS_EIO : rc;
}

static uint64_t le64(const unsigned char *p) {
  uint64_t v = 0;
  unsigned i;
  for (i = 8; i-- > 0;) v = v << 8 | p[i];
  return v;
}

static void on_stats(gs_dwatch *w, const gs_nt_event *ev) {
  uint64_t sum = 0;
  unsigned g;
  if (ev->payload_len < HEAP_STATS_V1_BYTES) return;
  for (g = 0; g < 4; g++) sum += le64(ev->payload + 16 * g);
  if (ev->payload_len >= HEAP_STATS_V1_BYTES + 16) sum += le64(ev->payload + HEAP_STATS_V1_BYTES);
  w->bytes = sum;
  w->have = 1;
}

int gs_dwatch_poll(gs_dwatch *w, uint64_t *bytes, char *err, size_t errcap) {
  gs_nt_event ev;
  int rc = GS_OK;
  while (rc == GS_OK && !w->closed) {
    if (!w->nt) {
      if (watch_peek(w) < 0 || w->ahead_len == 0) break;
      rc = gs_nt_open(&w->nt, watch_read, w, w->err, sizeof w->err);
    } else if (gs_nt_buffered(w->nt) || (watch_peek(w) == GS_OK && w->ahead_len)) {
      if ((rc = gs_nt_next(w->nt, &ev)) == GS_OK && ev.event_id == GC_HEAP_STATS &&
          !strcmp(ev.provider, RUNTIME_PROVIDER))
        on_stats(w, &ev);
    } else {
      break;
    }
  }
  if (rc < 0 || w->closed) {
    snprintf(err, errcap, "%.200s: the heap size session ended (%.80s)", w->peer->endpoint,
             w->closed ? "the program closed it" : w->err[0] ? w->err : gs_port_error_text());
    return GS_EIO;
  }
  *bytes = w->bytes;
  return w->have ? GS_OK : GS_EOF;
}

int gs_dwatch_open(gs_dwatch **out, gs_dipc_peer *peer, char *err, size_t errcap) {
  gs_dipc_provider p = {RUNTIME_PROVIDER, GC_KEYWORD, LEVEL_INFORMATIONAL};
  gs_dwatch *w = calloc(1, sizeof *w);
  *out = NULL;
  if (!w) {
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  w->peer = peer;
  if (gs_dipc_collect(peer, GS_DWATCH_BUFFER_MB, &p, 1, 0, &w->sock, &w->session, err, errcap)) {
    free(w);
    return GS_EIO;
  }
  *out = w;
  return GS_OK;
}

void gs_dwatch_close(gs_dwatch *w) {
  char err[300];
  if (!w) return;
  if (!w->closed) gs_dipc_stop(w->peer, w->session, err, sizeof err);
  gs_port_net_close(w->sock);
  gs_nt_free(w->nt);
  free(w);
}
