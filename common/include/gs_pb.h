/* gs_pb.h - a small allocation-free protobuf writer and reader.
 *
 * The writer fills a caller buffer, in the manner of Perfetto's protozero:
 * fields are appended in order, and a nested message or packed field whose
 * length is unknown when it starts gets a fixed 4-byte varint for its
 * length, patched when it ends (decoders accept the redundant bytes). A
 * write that does not fit sets a sticky overflow flag and writes nothing
 * more, so a caller checks once, at the end.
 *
 * The reader walks the fields of one message with bounds checks, for the
 * few small messages the agent decodes. */
#ifndef GS_PB_H
#define GS_PB_H

#include <stddef.h>
#include <stdint.h>

enum gs_pb_wire_type {
  GS_PB_VARINT = 0, GS_PB_FIXED64 = 1, GS_PB_LEN = 2, GS_PB_FIXED32 = 5
};

#define GS_PB_VARINT_MAX 10       /* bytes of the longest varint */
#define GS_PB_NESTED_LEN 4        /* bytes reserved for a patched length */
#define GS_PB_NESTED_MAX ((1u << 28) - 1)  /* longest body they can say */
#define GS_PB_FIELD_MAX ((1u << 29) - 1)

typedef struct gs_pb {
  uint8_t *buf;
  size_t len, cap;
  int overflow;
} gs_pb;

void gs_pb_init(gs_pb *w, void *buf, size_t cap);
/* GS_OK, or GS_ELIMIT when a write did not fit. */
int gs_pb_status(const gs_pb *w);

/* Bytes a varint of v takes. */
size_t gs_pb_varint_size(uint64_t v);
/* The zigzag form of a signed 64-bit value given as its two's complement,
 * and back: 0, -1, 1, -2 ... become 0, 1, 2, 3 ... */
uint64_t gs_pb_zigzag(uint64_t v);
uint64_t gs_pb_unzigzag(uint64_t v);

/* Without tag: for packed fields and prefixes. */
void gs_pb_raw_varint(gs_pb *w, uint64_t v);
void gs_pb_raw_bytes(gs_pb *w, const void *data, size_t len);

/* Tagged fields. Singular proto3 fields whose value is 0 may simply be left
 * out; these write what they are given. */
void gs_pb_tag(gs_pb *w, uint32_t field, unsigned wire_type);
void gs_pb_varint(gs_pb *w, uint32_t field, uint64_t v);
void gs_pb_sint64(gs_pb *w, uint32_t field, int64_t v);
void gs_pb_fixed32(gs_pb *w, uint32_t field, uint32_t v);
void gs_pb_fixed64(gs_pb *w, uint32_t field, uint64_t v);
void gs_pb_bytes(gs_pb *w, uint32_t field, const void *data, size_t len);
/* A NUL-terminated string; NULL writes nothing. */
void gs_pb_string(gs_pb *w, uint32_t field, const char *s);

/* A nested message or packed field: gs_pb_begin writes the tag and reserves
 * the length, returning a bookmark that gs_pb_end takes to patch it. */
size_t gs_pb_begin(gs_pb *w, uint32_t field);
void gs_pb_end(gs_pb *w, size_t bookmark);

/* ---- reader ---- */

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
