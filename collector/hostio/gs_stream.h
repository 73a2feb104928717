/* gs_stream.h - .gcstream files: an agent session's inbound frames as the
 * collector received them, with their receive times (gcsnapd --record
 * writes them, gcsnap replay plays them back).
 *
 *   header   "GCSTREAM" (8 bytes), then varints: container version (1),
 *            wire protocol version (GS_WIRE_PROTOCOL_VERSION), device ID
 *            length and its bytes, start time (Unix microseconds)
 *   frames   to the end of the file, each: varint receive time (micro-
 *            seconds after the start time), varint length, the frame (one
 *            Envelope, without the wire's length prefix)
 *
 * Varints are unsigned LEB128, as in protobuf. proto/README.md documents
 * the same format for other readers. */
#ifndef GS_STREAM_H
#define GS_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GS_STREAM_MAGIC "GCSTREAM"
#define GS_STREAM_VERSION 1u
#define GS_STREAM_DEVICE_MAX 255u
/* Frames above this are refused on reading (the wire's maximum). */
#define GS_STREAM_FRAME_MAX (4u << 20)

typedef struct gs_stream_header {
  unsigned version, protocol_version;
  char device_id[GS_STREAM_DEVICE_MAX + 1];
  uint64_t start_us;
} gs_stream_header;

/* Writers: GS_OK or GS_EIO (errno says why). */
int gs_stream_write_header(FILE *f, const gs_stream_header *h);
int gs_stream_write_frame(FILE *f, uint64_t offset_us, const void *frame, size_t len);

/* GS_OK, or GS_EFORMAT with the reason in err. */
int gs_stream_read_header(FILE *f, gs_stream_header *h, char *err, size_t cap);
/* The next frame into *buf (grown as needed; free() it at the end): GS_OK,
 * GS_EOF at the end of the file, GS_EFORMAT (reason in err) for a file
 * that ends inside a frame or is garbled, GS_EIO for a read error,
 * GS_ENOMEM. */
int gs_stream_read_frame(FILE *f, uint64_t *offset_us, uint8_t **buf, size_t *cap, size_t *len,
                         char *err, size_t errcap);

#endif
