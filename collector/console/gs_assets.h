/* gs_assets.h - files of collector/console compiled into the programs.
 *
 * embed.cmake turns each file into a byte array with its URL path,
 * Content-Type and ETag at build time, so nothing is read at run time. */
#ifndef GS_ASSETS_H
#define GS_ASSETS_H

#include <stddef.h>

typedef struct gs_asset {
  const char *path;              /* "/console/index.html" */
  const char *type;              /* Content-Type */
  const char *etag;              /* quoted SHA-1 of the bytes */
  const unsigned char *data;
  size_t size;
} gs_asset;

/* The web console gcsnapd serves. Ends with an entry whose path is NULL. */
extern const gs_asset gs_console_assets[];

#endif
