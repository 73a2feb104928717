/* gs_link.c - framed messages to and from the collector over one socket.
 *
 * Two fixed buffers and a socket: nothing grows with the size of what is
 * sent, and every wait is bounded (GS_LINK_STALL_MS for a send, the
 * caller's timeout for a receive). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_link.h"
#include "gs_port.h"

struct gs_link {
  gs_port_socket *sock;
  uint8_t out[GS_LINK_OUT_BYTES];
  size_t out_len;
  gs_wire_reader in;
  uint8_t in_buf[GS_LINK_MAX_IN + GS_WIRE_PREFIX_MAX];
  int dead;                     /* a send or receive failed: nothing more */
  char error[256];
};

int gs_link_open(gs_link **out, const char *host, const char *port, unsigned timeout_ms,
                 char *err, size_t errcap) {
  gs_link *l = calloc(1, sizeof *l);
  int rc;
  *out = NULL;
  if (!l) {
    snprintf(err, errcap, "out of memory");
    return GS_ENOMEM;
  }
  if ((rc = gs_port_net_connect(&l->sock, host, port, timeout_ms, err, errcap))) {
    free(l);
    return rc;
  }
  gs_wire_reader_init(&l->in, l->in_buf, sizeof l->in_buf, GS_LINK_MAX_IN);
  *out = l;
  return GS_OK;
}

void gs_link_close(gs_link *l) {
  if (!l) return;
  gs_port_net_close(l->sock);
  free(l);
}

int gs_link_failed(const gs_link *l) {
  return l->dead;
}

const char *gs_link_error(const gs_link *l) {
  return l->error;
}

static int link_fail(gs_link *l, int err, const char *what, const char *why) {
  l->dead = 1;
  snprintf(l->error, sizeof l->error, "%s: %s", what, why);
  return err;
}

static int link_write(gs_link *l, const void *data, size_t len) {
  int err;
  if (l->dead) return GS_EIO;
  if ((err = gs_port_net_send(l->sock, data, len, GS_LINK_STALL_MS)))
    return link_fail(l, err, "sending to the collector", gs_port_error_text());
  return GS_OK;
}

int gs_link_flush(gs_link *l) {
  int err = l->out_len ? link_write(l, l->out, l->out_len) : (l->dead ? GS_EIO : GS_OK);
  l->out_len = 0;
  return err;
}

int gs_link_send(void *ctx, const void *frame, size_t len) {
  gs_link *l = ctx;
  int err;
  if (len > sizeof l->out - l->out_len && (err = gs_link_flush(l))) return err;
  if (len > sizeof l->out) return link_write(l, frame, len);
  memcpy(l->out + l->out_len, frame, len);
  l->out_len += len;
  return GS_OK;
}

/* The collector broke the protocol: the link can still carry the Error
 * that says so, so it is not marked dead. */
static int link_protocol(gs_link *l, int err, const char *why) {
  snprintf(l->error, sizeof l->error, "from the collector: %s", why);
  return err;
}

/* The next whole frame, decoded; GS_EOF when more bytes are needed. */
static int link_next(gs_link *l, gs_wire_control *m) {
  const uint8_t *frame;
  size_t len;
  char why[160];
  int err = gs_wire_reader_next(&l->in, &frame, &len);
  if (err == GS_EOF) return GS_EOF;
  if (err == GS_ELIMIT) return link_protocol(l, err, "a frame above the agent's limit");
  if (err) return link_protocol(l, err, "a garbled frame length");
  if ((err = gs_wire_decode_control(frame, len, m, why, sizeof why)))
    return link_protocol(l, err, why);
  return GS_OK;
}

int gs_link_recv(gs_link *l, gs_wire_control *m, int timeout_ms) {
  uint64_t deadline = gs_port_time_us() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000u;
  memset(m, 0, sizeof *m);
  if (l->dead) return GS_EIO;
  for (;;) {
    size_t avail, got;
    uint8_t *space;
    int err = link_next(l, m), left = timeout_ms;
    if (err != GS_EOF) return err;
    if (timeout_ms >= 0) {
      uint64_t now = gs_port_time_us();
      if (now >= deadline) return GS_OK;
      left = (int)((deadline - now + 999) / 1000);
    }
    space = gs_wire_reader_space(&l->in, &avail);
    err = gs_port_net_recv(l->sock, space, avail, &got, left);
    if (err == GS_EOF) {
      l->dead = 1;
      snprintf(l->error, sizeof l->error, "the collector closed the connection");
      return GS_EOF;
    }
    if (err) return link_fail(l, err, "receiving from the collector", gs_port_error_text());
    gs_wire_reader_commit(&l->in, got);
    if (got == 0 && timeout_ms >= 0 && gs_port_time_us() >= deadline) return GS_OK;
  }
}
