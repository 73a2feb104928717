/* gs_assets.c - looking up an embedded file by its path. */
#include <string.h>
#include "gs_assets.h"

const gs_asset *gs_asset_find(const gs_asset *table, const char *path, size_t len) {
  const gs_asset *a;
  for (a = table; a->path; a++)
    if (strlen(a->path) == len && !memcmp(a->path, path, len)) return a;
  return NULL;
}
