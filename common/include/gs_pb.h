/* gs_pb.h - a small allocation-free protobuf writer and reader: what both
 * sides share. The writer (producer) is gs_pb_writer.h, the reader
 * (consumer) gs_pb_reader.h, kept apart the way Perfetto keeps protozero's
 * message writer apart from its decoder: a program that only sends, or
 * only reads, includes only that half. */
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

#endif
