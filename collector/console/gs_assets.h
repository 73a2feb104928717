/* gs_assets.h - files of collector/console compiled into the programs.
 *
 * embed.cmake turns each file into a byte array with its path, Content-Type
 * and ETag at build time, so nothing is read at run time. Each table ends
 * with an entry whose path is NULL; data is followed by a NUL byte, not
 * counted in size. */
#ifndef GS_ASSETS_H
#define GS_ASSETS_H

#include <stddef.h>

typedef struct gs_asset {
  const char *path;              /* "/console/index.html", "report.css" */
  const char *type;              /* Content-Type */
  const char *etag;              /* quoted SHA-1 of the bytes */
  const unsigned char *data;
  size_t size;
} gs_asset;

/* The web console gcsnapd serves, under "/console/". */
extern const gs_asset gs_console_assets[];
/* The style and script of gcsnap report's page: "report.css", "report.js". */
extern const gs_asset gs_report_assets[];
/* The HTTP API's OpenAPI description: "/api/openapi.json". */
extern const gs_asset gs_api_assets[];

/* The entry of table whose path is the len bytes at path, or NULL. */
const gs_asset *gs_asset_find(const gs_asset *table, const char *path, size_t len);

#endif
