/* gsd_console.h - the web console: its files, built into gcsnapd, served
 * on the HTTP port at "/" and "/console/...". */
#ifndef GSD_CONSOLE_H
#define GSD_CONSOLE_H

#include <stddef.h>
#include "gs_assets.h"

/* The asset for a request path ("/" is the index page), or NULL. */
const gs_asset *gsd_console_find(const char *path, size_t len);

struct st_h2o_req_t;
/* Answers a GET or HEAD for the console (200, 304 on a matching
 * If-None-Match, 404, 405); returns 0. */
int gsd_console_serve(struct st_h2o_req_t *req);

#endif
