/* gs_check.h - a stored snapshot checked against its catalog row while its
 * bytes stream past: the .gclog.zst's size and zstd frames (their content
 * checksums included), and the size and CRC-32 of the text inside, so that
 * a truncated, damaged or replaced store file is reported as such rather
 * than served or written as the snapshot.
 *
 * Used by the collector's downloads and by "gcsnap fetch". Memory: a zstd
 * decompression context and a 64 KiB buffer. */
#ifndef GS_CHECK_H
#define GS_CHECK_H

#include <stddef.h>
#include <stdint.h>

typedef struct gs_check gs_check;

typedef struct gs_check_expect {
  uint64_t file_bytes;     /* of the .gclog.zst; not checked for text */
  uint64_t text_bytes;
  uint32_t crc32;          /* of the text */
} gs_check_expect;

/* compressed: the bytes fed are the .gclog.zst (else the text). Returns
 * GS_OK or GS_ENOMEM. */
int gs_check_new(gs_check **c, const gs_check_expect *e, int compressed);
void gs_check_free(gs_check *c);
/* Returns GS_OK, or GS_EFORMAT once the bytes cannot be the snapshot. */
int gs_check_feed(gs_check *c, const void *buf, size_t len);
/* At the end of the bytes: GS_OK when they are the snapshot, else GS_EFORMAT. */
int gs_check_finish(gs_check *c);
/* What did not match, as a sentence. */
const char *gs_check_error(const gs_check *c);

#endif
