/* gs_crc32.h - CRC-32 as IEEE 802.3, zlib and PNG define it.
 *
 * Incremental: start from 0 and feed the bytes in any pieces,
 * crc = gs_crc32(crc, piece, len); the result equals zlib's crc32(). */
#ifndef GS_CRC32_H
#define GS_CRC32_H

#include <stddef.h>
#include <stdint.h>

uint32_t gs_crc32(uint32_t crc, const void *data, size_t len);

#endif
