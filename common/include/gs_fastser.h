/* gs_fastser.h - PerfView's FastSerialization stream, read forwards.
 *
 * The primitives of the format (little-endian integers, strings as a count of
 * UTF-16 units each written in 1 to 3 bytes, tagged objects with their type
 * objects, the trailer at the end) over a gs_read_fn, with the file offset of
 * every byte for error messages. Strings are appended to a growable arena as
 * UTF-8. Every error is returned as a GS_E* code with "byte N: ..." in err.
 * Used by the .gcdump reader (collector/formats) and the NetTrace reader
 * (gs_nettrace.h), whose streams are FastSerialization too. */
#ifndef GS_FASTSER_H
#define GS_FASTSER_H

#include <stddef.h>
#include <stdint.h>
#include "gs_reader.h"

/* Tags of the stream (PerfView's Serializer.Tags). */
enum { GS_FS_TAG_NULL = 1, GS_FS_TAG_OBJREF = 2, GS_FS_TAG_FWDREF = 3, GS_FS_TAG_BEGIN = 4,
       GS_FS_TAG_BEGIN_PRIVATE = 5, GS_FS_TAG_END = 6, GS_FS_TAG_FWDDEF = 7, GS_FS_TAG_BYTE = 8,
       GS_FS_TAG_INT16 = 9, GS_FS_TAG_INT32 = 10, GS_FS_TAG_INT64 = 11, GS_FS_TAG_SKIP_REGION = 12,
       GS_FS_TAG_STRING = 13, GS_FS_TAG_BLOB = 14 };

#define GS_FS_MAGIC "!FastSerialization.1"

typedef struct gs_fs {
  gs_read_fn fn;
  void *ctx;
  unsigned char *buf;
  size_t pos, len;
  uint64_t off;               /* file offset of the next byte */
  int eof;
  int read_rc;                /* the input's error, once it failed */
  char *err;
  size_t cap;
  char *arena;                /* strings read, UTF-8, one after another */
  size_t arena_len, arena_cap;
  unsigned char *tail;        /* the last bytes read, once gs_fs_keep_tail() */
  size_t tail_len;
} gs_fs;

int gs_fs_init(gs_fs *s, gs_read_fn fn, void *ctx, char *err, size_t cap);
void gs_fs_free(gs_fs *s);

/* Formats "byte AT: ..." into err and returns code. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int gs_fs_fail(gs_fs *s, int code, uint64_t at, const char *fmt, ...);

/* Reads n bytes into dst (NULL: skips them); the end of the file there is
 * reported as a truncated file inside `what`. */
int gs_fs_get(gs_fs *s, void *dst, size_t n, const char *what);
int gs_fs_u8(gs_fs *s, unsigned *v, const char *what);
int gs_fs_i32(gs_fs *s, int32_t *v, const char *what);
/* An int32 that must be 0..max (GS_EFORMAT below 0, GS_ELIMIT above max). */
int gs_fs_count(gs_fs *s, uint32_t *v, uint32_t max, const char *what);

/* Appends a string of at most max_units units to the arena; *is_null is set
 * for a null string. Controls become '?', lone surrogates U+FFFD. */
int gs_fs_string(gs_fs *s, int *is_null, uint32_t max_units);
/* Skips a string of any length. */
int gs_fs_skip_string(gs_fs *s);

/* Reads the type of an object after its BeginObject tag: a type object
 * (its name left at *name_off in the arena, *version and *minver set) or a
 * reference to an earlier one (*name_off = SIZE_MAX, *version = -1). */
int gs_fs_type(gs_fs *s, size_t *name_off, int32_t *version, int32_t *minver);

/* Reads the start of an object whose type's name is want, or ends with it
 * when suffix is set: an optional ForwardDefinition, BeginObject, the type. */
int gs_fs_begin(gs_fs *s, const char *want, int suffix, int32_t *version, int32_t *minver);

/* From now on keeps the last 64 KiB read, for gs_fs_finish(): what follows
 * may then be read by guesswork, even past the end, without losing the
 * trailer. */
int gs_fs_keep_tail(gs_fs *s);

/* Reads the rest of the file and checks the trailer that ends every
 * FastSerialization file (gs_fs_keep_tail() first); a file cut anywhere
 * fails here. */
int gs_fs_finish(gs_fs *s);

/* The file's first bytes start with the header (the length and magic). */
int gs_fs_is_header(const unsigned char *head, size_t n);

uint32_t gs_fs_le32(const unsigned char *p);
/* Makes room for need elements of size elem in *p (capacity *cap). */
int gs_fs_grow(void **p, size_t *cap, size_t need, size_t elem);

#endif
