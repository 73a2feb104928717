/* gs_pb_writer.h - protobuf messages written into a caller buffer.
 *
 * In the manner of Perfetto's protozero: fields are appended in order, and
 * a nested message or packed field whose length is unknown when it starts
 * gets a fixed 4-byte varint for its length, patched when it ends
 * (decoders accept the redundant bytes). A write that does not fit sets a
 * sticky overflow flag and writes nothing more, so a caller checks once,
 * at the end. */
#ifndef GS_PB_WRITER_H
#define GS_PB_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "gs_pb.h"

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
/* The zigzag form of a signed 64-bit value given as its two's complement:
 * 0, -1, 1, -2 ... become 0, 1, 2, 3 ... (gs_pb_unzigzag undoes it). */
uint64_t gs_pb_zigzag(uint64_t v);

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

#endif
