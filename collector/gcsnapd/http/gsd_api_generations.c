/* gsd_api_generations.c - GET /api/snapshots/ID/generations[?top=N]: a
 * snapshot's objects, bytes and largest types by generation, from the
 * generation ranges kept beside its file (gs_genfile.h), run by the analysis
 * runner (analysis/gs_gens.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_genfile.h"
#include "gsd_analysis.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

int gsd_api_generations(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char text[16], *file, *gens;
  uint64_t top;
  gsd_analysis *a;
  if (gsd_query_count(req, "top", "10", text, sizeof text) || gsd_request_u64(text, UINT32_MAX, &top))
    return gsd_respond_error(req, 400, "bad_request", "top takes a count");
  if (!(file = gsd_api_snapshot_file(srv, req, id_text))) return 0;
  if (!(gens = gs_genfile_path(file)) || !(a = gsd_analysis_new(GSD_ANALYSIS_GENS))) {
    free(file);
    free(gens);
    return gsd_respond_error(req, 500, "internal", "out of memory");
  }
  a->files[a->nfiles++] = file;
  a->cache = gens;
  a->top = top;
  if (access(gens, F_OK) != 0) {
    gsd_analysis_free(a);
    return gsd_respond_error(req, 404, "not_found", "snapshot %s has no generation ranges (its agent "
                             "sent none, or it was stored before they were kept)", id_text);
  }
  return gsd_analysis_run(srv, req, a);
}
