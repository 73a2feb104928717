/* gs_link.h - the agent's connection to a collector: framed messages over
 * TCP through bounded buffers.
 *
 * Outgoing frames are gathered in a fixed buffer and sent when it fills (or
 * on flush) with blocking sends, so a slow collector slows the capture down
 * through TCP's backpressure instead of growing memory. Incoming frames are
 * the collector's small control messages, read through a fixed buffer;
 * one above GS_LINK_MAX_IN is a protocol error. */
#ifndef GS_LINK_H
#define GS_LINK_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"
#include "gs_wire_writer.h"
#include "gs_wire_decode.h"

#define GS_LINK_OUT_BYTES (64u << 10)
#define GS_LINK_MAX_IN (64u << 10)
/* A send that makes no progress for this long means the link is dead. */
#define GS_LINK_STALL_MS 60000u

typedef struct gs_link gs_link;

/* GS_EIO with the reason in err when the collector cannot be reached. */
int gs_link_open(gs_link **l, const char *host, const char *port, unsigned timeout_ms,
                 char *err, size_t errcap);
void gs_link_close(gs_link *l);

/* Queues one frame (a gs_wire_frame_fn: ctx is the link). */
int gs_link_send(void *link, const void *frame, size_t len);
/* Sends what is queued. */
int gs_link_flush(gs_link *l);

/* Waits up to timeout_ms (negative: no limit) for the next message. GS_OK
 * with m->body set, or GS_WIRE_NONE when the time ran out; GS_EOF when the
 * collector closed the link; GS_EIO when it failed; GS_EFORMAT or GS_ELIMIT
 * when the collector broke the protocol. */
int gs_link_recv(gs_link *l, gs_wire_control *m, int timeout_ms);

/* Whether a send or receive failed: the link is gone. */
int gs_link_failed(const gs_link *l);
/* Why the last call failed. */
const char *gs_link_error(const gs_link *l);

#endif
