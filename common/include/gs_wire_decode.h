/* gs_wire_decode.h - the control messages the agent reads (Welcome,
 * CaptureRequest, Ack, Error, Ping, AuthChallenge), decoded with bounds
 * checks from a frame without its prefix. Portable C99. */
#ifndef GS_WIRE_DECODE_H
#define GS_WIRE_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"

/* A decoded control message; strings point into the frame, not
 * NUL-terminated. Fields absent from the frame are 0. */
typedef struct gs_wire_control {
  gs_wire_body body;            /* the Envelope field set (the last one) */
  struct { uint32_t protocol_version, max_frame;
           const char *collector_version; size_t collector_version_len; } welcome;
  struct { uint64_t request_id; int stable_ids; } capture;
  struct { uint64_t request_id, snapshot_id, stored_id; } ack;
  struct { uint32_t code; const char *message; size_t message_len;
           uint64_t request_id; } error;
  struct { uint64_t nonce; int reply; } ping;
  struct { const uint8_t *nonce; size_t nonce_len;
           const char *scheme; size_t scheme_len; } challenge;
} gs_wire_control;

/* Decodes one Envelope (a frame without its prefix). Bodies other than
 * Welcome, CaptureRequest, Ack, Error, Ping and AuthChallenge are reported by number with
 * no fields. GS_EFORMAT, with the reason in err, for malformed input. */
int gs_wire_decode_control(const uint8_t *env, size_t len, gs_wire_control *m,
                           char *err, size_t errcap);

#endif
