/* gsd_console.h - the web console: its files, built into gcsnapd, served
 * on the HTTP port at "/" and "/console/...". */
#ifndef GSD_CONSOLE_H
#define GSD_CONSOLE_H

#include <stddef.h>

/* One file of collector/console, as embed.cmake wrote it. */
typedef struct gsd_console_asset {
  const char *path;              /* "/console/index.html" */
  const char *type;              /* Content-Type */
  const char *etag;              /* quoted SHA-1 of the bytes */
  const unsigned char *data;
  size_t size;
} gsd_console_asset;

/* Ends with an entry whose path is NULL. */
extern const gsd_console_asset gsd_console_assets[];

/* The asset for a request path ("/" is the index page), or NULL. */
const gsd_console_asset *gsd_console_find(const char *path, size_t len);

struct st_h2o_req_t;
/* Answers a GET or HEAD for the console (200, 304 on a matching
 * If-None-Match, 404, 405); returns 0. */
int gsd_console_serve(struct st_h2o_req_t *req);

#endif
