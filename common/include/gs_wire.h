/* gs_wire.h - the wire protocol between gcsnap-agent and gcsnapd, for C.
 *
 * proto/gcsnap.proto is the schema; this header holds what both sides must
 * agree on beyond it (versions, limits, ports, error codes, the envelope's
 * field numbers) and the framing. What produces frames (the snapshot stream
 * encoder, the control messages the agent writes) is gs_wire_writer.h;
 * what consumes them (the control messages the agent reads) is
 * gs_wire_decode.h.
 *
 * Framing: each frame is a varint length (of the bytes that follow; a
 * non-minimal varint of up to GS_WIRE_PREFIX_MAX bytes is accepted) and one
 * Envelope. A frame longer than GS_WIRE_MAX_FRAME is a protocol error.
 *
 * Portable C99. */
#ifndef GS_WIRE_H
#define GS_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* ---- constants shared with the collector ---- */

#define GS_WIRE_PROTOCOL_VERSION 1u
/* Largest Envelope in one frame, prefix not included. */
#define GS_WIRE_MAX_FRAME (4u << 20)
/* Data batches are cut when their content reaches about this size. */
#define GS_WIRE_BATCH_BYTES (64u << 10)
/* Longest frame length prefix: a varint of a 32-bit length. */
#define GS_WIRE_PREFIX_MAX 5u
/* Longest AppDomain or type name the encoder sends; a longer one fails the
 * capture with GS_ELIMIT. */
#define GS_WIRE_MAX_NAME (64u << 10)

#define GS_WIRE_AGENT_PORT 7410       /* gcsnapd listens for agents */
#define GS_WIRE_HTTP_PORT 7411        /* gcsnapd's HTTP API */
#define GS_WIRE_AGENT_PORT_STR "7410"
#define GS_WIRE_HTTP_PORT_STR "7411"

/* Field numbers of Envelope's body. */
typedef enum gs_wire_body {
  GS_WIRE_NONE = 0,
  GS_WIRE_HELLO = 1,
  GS_WIRE_WELCOME = 2,
  GS_WIRE_CAPTURE_REQUEST = 3,
  GS_WIRE_SNAPSHOT_BEGIN = 4,
  GS_WIRE_SECTION_BEGIN = 5,
  GS_WIRE_TYPES = 6,
  GS_WIRE_OBJECTS = 7,
  GS_WIRE_ROOTS = 8,
  GS_WIRE_GENERATIONS = 9,
  GS_WIRE_SECTION_END = 10,
  GS_WIRE_SNAPSHOT_END = 11,
  GS_WIRE_ACK = 12,
  GS_WIRE_ERROR = 13,
  GS_WIRE_PING = 14,
  GS_WIRE_AUTH_CHALLENGE = 15,
  GS_WIRE_AUTH_PROOF = 16,
  GS_WIRE_STATICS = 17
} gs_wire_body;

/* The device key proof (proto/README.md): AuthChallenge.nonce holds
 * GS_WIRE_NONCE_BYTES, AuthProof.proof GS_WIRE_PROOF_BYTES. */
#define GS_WIRE_AUTH_SCHEME "gcsnap-key-1"
#define GS_WIRE_NONCE_BYTES 32u
#define GS_WIRE_PROOF_BYTES 32u
#define GS_WIRE_KEY_BYTES 32u

/* Error.code values. Either side may send Error. The collector sends it in
 * place of Ack when it refuses a snapshot, before it closes a session
 * that broke the protocol, and in place of AuthChallenge or Welcome when
 * it refuses the device (GS_WIRE_E_AUTH: no key for it, or a wrong proof;
 * the agent then waits long before it tries again). The agent sends it in place of SnapshotEnd when
 * its capture fails half way (GS_WIRE_E_CAPTURE: the snapshot is cut short
 * and must not be stored as complete), or in place of SnapshotBegin when it
 * cannot start the capture asked for (GS_WIRE_E_CAPTURE, or
 * GS_WIRE_E_UNSUPPORTED for options its source cannot honour). */
typedef enum gs_wire_error {
  GS_WIRE_E_NONE = 0,
  GS_WIRE_E_PROTOCOL = 1,       /* malformed frame or unexpected message */
  GS_WIRE_E_VERSION = 2,        /* protocol version not supported */
  GS_WIRE_E_FRAME_SIZE = 3,     /* frame above GS_WIRE_MAX_FRAME */
  GS_WIRE_E_SEQUENCE = 4,       /* a data message's seq is not the next one */
  GS_WIRE_E_CRC = 5,            /* SnapshotEnd's crc32 or text_bytes differ */
  GS_WIRE_E_COUNTS = 6,         /* SnapshotEnd's counts differ */
  GS_WIRE_E_INVALID = 7,        /* the snapshot failed validation */
  GS_WIRE_E_STORAGE = 8,        /* the collector could not store it */
  GS_WIRE_E_BUSY = 9,           /* a capture is already under way */
  GS_WIRE_E_CAPTURE = 10,       /* the agent could not capture the heap */
  GS_WIRE_E_UNSUPPORTED = 11,   /* an option the agent cannot honour */
  GS_WIRE_E_TIMEOUT = 12,       /* the peer was silent too long */
  GS_WIRE_E_SHUTDOWN = 13,      /* the collector is stopping */
  GS_WIRE_E_DEVICE = 14,        /* device ID missing or already connected */
  GS_WIRE_E_AUTH = 15           /* no key for the device, or a wrong proof */
} gs_wire_error;
#define GS_WIRE_E_COUNT 16

/* "protocol", "crc", ...; "unknown" for a code not listed. */
const char *gs_wire_error_name(unsigned code);

/* ---- framing ---- */

/* Writes the varint length prefix of a frame of len bytes into out (room for
 * GS_WIRE_PREFIX_MAX); returns its size. */
size_t gs_wire_prefix(uint8_t *out, size_t len);

/* Parses the length prefix at the start of data[0..avail). GS_OK with
 * *prefix_len and *frame_len set; GS_EOF when more bytes are needed;
 * GS_EFORMAT for a prefix longer than GS_WIRE_PREFIX_MAX bytes or above 32
 * bits; GS_ELIMIT when the frame is longer than max_frame (*prefix_len
 * and *frame_len are set then too, for the error message). */
int gs_wire_frame_peek(const uint8_t *data, size_t avail, size_t max_frame,
                       size_t *prefix_len, size_t *frame_len);

/* Pulls complete frames out of a byte stream, in a caller-owned buffer of
 * cap bytes (at least max_frame + GS_WIRE_PREFIX_MAX to take any frame). */
typedef struct gs_wire_reader {
  uint8_t *buf;
  size_t cap, start, end;
  size_t max_frame;
  int failed;                   /* the first error; the stream is dead */
} gs_wire_reader;

void gs_wire_reader_init(gs_wire_reader *r, void *buf, size_t cap, size_t max_frame);
/* Where to receive the next bytes, and how many fit (0 when a frame larger
 * than the buffer is pending). */
uint8_t *gs_wire_reader_space(gs_wire_reader *r, size_t *avail);
/* n bytes were received into the space. */
void gs_wire_reader_commit(gs_wire_reader *r, size_t n);
/* Copies up to len bytes in; *used says how many were taken. */
void gs_wire_reader_feed(gs_wire_reader *r, const void *data, size_t len, size_t *used);
/* GS_OK with the next complete frame (valid until the next call); GS_EOF
 * when more bytes are needed; GS_ELIMIT for a frame above max_frame or the
 * buffer; GS_EFORMAT for a garbled prefix. After an error it keeps
 * returning it. */
int gs_wire_reader_next(gs_wire_reader *r, const uint8_t **frame, size_t *len);
/* Bytes received but not yet returned as frames (a cut stream leaves some). */
size_t gs_wire_reader_pending(const gs_wire_reader *r);

#endif
