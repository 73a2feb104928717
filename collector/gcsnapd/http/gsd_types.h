/* gsd_types.h - GET /api/snapshots/ID/types: a stored snapshot's whole
 * type histogram, filtered, sorted and cut into pages by the collector. */
#ifndef GSD_TYPES_H
#define GSD_TYPES_H

#include <stdint.h>
#include "gsd_server.h"

typedef enum gsd_types_sort { GSD_TYPES_BY_BYTES, GSD_TYPES_BY_COUNT, GSD_TYPES_BY_NAME } gsd_types_sort;

typedef struct gsd_types_query {
  int64_t snapshot_id;
  uint32_t crc32;                /* with the ID, tells a cached histogram is current */
  uint64_t offset, limit;        /* limit 0: every row from offset */
  char filter[256];              /* case-insensitive substring of the name; "" for all */
  gsd_types_sort sort;
  int descending;
} gsd_types_query;

/* Answers req with the page q asks for of the histogram of the file at
 * path (loaded by "gcsnap summary --top 0" on the thread pool the first
 * time, then kept for the last few snapshots asked for). Returns 0. */
int gsd_types_answer(gsd_server *srv, struct st_h2o_req_t *req, const char *path,
                     const gsd_types_query *q);

#endif
