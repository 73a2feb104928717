/* gs_pb_reader.h - the fields of one protobuf message, walked with bounds
 * checks, for the few small messages the agent decodes. */
#ifndef GS_PB_READER_H
#define GS_PB_READER_H

#include <stddef.h>
#include <stdint.h>
#include "gs_pb.h"

/* The two's complement of a zigzag value (gs_pb_zigzag's inverse). */
uint64_t gs_pb_unzigzag(uint64_t v);

typedef struct gs_pb_field {
  uint32_t number;
  unsigned wire_type;
  uint64_t value;               /* varint, fixed32, fixed64 */
  const uint8_t *data;          /* length-delimited */
  size_t len;
} gs_pb_field;

typedef struct gs_pb_reader {
  const uint8_t *p, *end;
  const char *error;            /* why the last gs_pb_next failed */
} gs_pb_reader;

void gs_pb_reader_init(gs_pb_reader *r, const void *data, size_t len);
/* GS_OK with the next field; GS_EOF at the end of the message; GS_EFORMAT
 * for malformed input (r->error says what: a truncated varint, a length past
 * the end, field number 0, a group or an unknown wire type). */
int gs_pb_next(gs_pb_reader *r, gs_pb_field *f);
/* Reads one varint at *p (before end), advancing *p. GS_EFORMAT when it is
 * cut short or longer than 10 bytes. */
int gs_pb_read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v);

#endif
