/* gs_stream.c - .gcstream files: reading and writing the container (the
 * format is in gs_stream.h). */
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_pb_reader.h"
#include "gs_pb_writer.h"
#include "gs_stream.h"

static int put_varint(FILE *f, uint64_t v) {
  uint8_t b[GS_PB_VARINT_MAX];
  gs_pb w;
  gs_pb_init(&w, b, sizeof b);
  gs_pb_raw_varint(&w, v);
  return fwrite(b, 1, w.len, f) == w.len ? GS_OK : GS_EIO;
}

int gs_stream_write_header(FILE *f, const gs_stream_header *h) {
  size_t n = strlen(h->device_id);
  if (fwrite(GS_STREAM_MAGIC, 1, 8, f) != 8 || put_varint(f, h->version) ||
      put_varint(f, h->protocol_version) || put_varint(f, n) || fwrite(h->device_id, 1, n, f) != n ||
      put_varint(f, h->start_us))
    return GS_EIO;
  return GS_OK;
}

int gs_stream_write_frame(FILE *f, uint64_t offset_us, const void *frame, size_t len) {
  if (put_varint(f, offset_us) || put_varint(f, len) || fwrite(frame, 1, len, f) != len)
    return GS_EIO;
  return GS_OK;
}

/* GS_OK, GS_EOF when the file ends before the first byte, GS_EFORMAT when
 * it ends inside the varint or the varint is malformed (gs_pb's rules). */
static int get_varint(FILE *f, uint64_t *v) {
  uint8_t b[GS_PB_VARINT_MAX];
  const uint8_t *p = b;
  size_t n = 0;
  int c;
  while (n < sizeof b && (c = getc(f)) != EOF) {
    b[n++] = (uint8_t)c;
    if (!(c & 0x80)) return gs_pb_read_varint(&p, b + n, v);
  }
  if (n == sizeof b) return GS_EFORMAT;
  if (ferror(f)) return GS_EIO;
  return n == 0 ? GS_EOF : GS_EFORMAT;
}

static int bad(char *err, size_t cap, const char *why) {
  snprintf(err, cap, "%s", why);
  return GS_EFORMAT;
}

int gs_stream_read_header(FILE *f, gs_stream_header *h, char *err, size_t cap) {
  char magic[8];
  uint64_t version, protocol, n;
  memset(h, 0, sizeof *h);
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, GS_STREAM_MAGIC, 8) != 0)
    return bad(err, cap, "not a .gcstream file (no GCSTREAM magic)");
  if (get_varint(f, &version) || get_varint(f, &protocol) || get_varint(f, &n))
    return bad(err, cap, "the header is cut short");
  if (version != GS_STREAM_VERSION) {
    snprintf(err, cap, "container version %llu is not supported (this reader knows %u)",
             (unsigned long long)version, GS_STREAM_VERSION);
    return GS_EFORMAT;
  }
  if (n > GS_STREAM_DEVICE_MAX || fread(h->device_id, 1, (size_t)n, f) != n)
    return bad(err, cap, "the header's device ID is cut short or too long");
  h->device_id[n] = '\0';
  if (get_varint(f, &h->start_us)) return bad(err, cap, "the header is cut short");
  h->version = (unsigned)version;
  h->protocol_version = protocol > 0xffffffffu ? 0xffffffffu : (unsigned)protocol;
  return GS_OK;
}

int gs_stream_read_frame(FILE *f, uint64_t *offset_us, uint8_t **buf, size_t *cap, size_t *len,
                         char *err, size_t errcap) {
  uint64_t n;
  int rc = get_varint(f, offset_us);
  if (rc == GS_EOF) return GS_EOF;
  if (rc == GS_EIO) return GS_EIO;
  if (rc != GS_OK || (rc = get_varint(f, &n)) != GS_OK)
    return rc == GS_EIO ? GS_EIO : bad(err, errcap, "the file ends inside a frame's header");
  if (n > GS_STREAM_FRAME_MAX) return bad(err, errcap, "a frame is longer than the wire allows");
  if (n > *cap) {
    uint8_t *b = realloc(*buf, (size_t)n);
    if (!b) return GS_ENOMEM;
    *buf = b;
    *cap = (size_t)n;
  }
  if (fread(*buf, 1, (size_t)n, f) != n)
    return ferror(f) ? GS_EIO : bad(err, errcap, "the file ends inside a frame");
  *len = (size_t)n;
  return GS_OK;
}
