/* gsd_ingest_summary.c - the summary of a stored snapshot (gsd_ingest.h):
 * what "gcsnap summary --json" prints, made by the analysis library in a
 * child process (gsd_child.c): it builds the heap's graph, whose memory
 * goes back to the system when the child exits instead of staying in the
 * collector. A small snapshot is summarized here instead, with the same
 * function: its graph is small and short-lived, while a child costs
 * milliseconds, which a fleet captured every few seconds cannot afford. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "gs_error.h"
#include "gs_summary.h"
#include "gsd_child.h"
#include "gsd_ingest.h"

/* A snapshot this small in work is summarized in this process: its graph
 * (about 24 bytes per object) is a few megabytes for a few milliseconds,
 * less than starting the child takes. The decision goes by the work, not
 * the file: zstd makes a 1 KB file of 300,000 identical sections. */
#define IN_PROCESS_TEXT_BYTES (4u << 20)
#define IN_PROCESS_OBJECTS 100000u
#define IN_PROCESS_SECTIONS 8u
/* The largest summary stored, whichever made it (the catalog serves it). */
#define MAX_SUMMARY (64u << 20)

/* Figures from the summary's JSON (its totals). */
static void figures_of(const json_t *o, gsd_snapshot_end *e) {
  e->objects = (uint64_t)json_integer_value(json_object_get(o, "objects"));
  e->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
  e->references = (uint64_t)json_integer_value(json_object_get(o, "references"));
  e->roots = (uint64_t)json_integer_value(json_object_get(o, "roots"));
  e->types = (uint64_t)json_integer_value(json_object_get(o, "types"));
  e->sections = json_array_size(json_object_get(o, "sections")) +
                (uint64_t)json_integer_value(json_object_get(o, "sections_omitted"));
  e->unreachable = (uint64_t)json_integer_value(json_object_get(o, "unreachable"));
  e->dangling_references = (uint64_t)json_integer_value(json_object_get(o, "dangling_references"));
}

/* The summary's object made in this process, as the child makes it; NULL
 * with err set on failure. */
static json_t *summary_here(const char *path, char *err, size_t cap) {
  gsd_child_summary job;
  json_t *o = NULL;
  char why[300];
  job.path = path;
  job.top = GS_SUMMARY_TOP;
  if (gsd_child_summary_fn(&job, &o, why, sizeof why) != GSD_CHILD_OK)
    snprintf(err, cap, "summary failed: %s", why);
  return o;
}

/* The summary's object made in a child process (gsd_child.c); NULL with
 * err set and *rc the error on failure. */
static json_t *summary_child(const char *path, int *rc, char *err, size_t cap) {
  gsd_child_summary job;
  char *out;
  size_t len;
  int status;
  json_t *o = NULL;
  job.path = path;
  job.top = GS_SUMMARY_TOP;
  if ((*rc = gsd_child_run(gsd_child_summary_fn, &job, MAX_SUMMARY, &out, &len, &status)) != GS_OK) {
    snprintf(err, cap, "cannot start the summary: %s", *rc == GS_ENOMEM ? "out of memory" : strerror(errno));
    free(out);
    return NULL;
  }
  if (status != GSD_CHILD_OK || !(o = json_loads(out, 0, NULL)) || !json_is_object(o)) {
    size_t line = strcspn(out, "\n");
    snprintf(err, cap, "summary failed: %.*s", (int)(line > 200 ? 200 : line), out);
    json_decref(o);
    o = NULL;
    *rc = GS_EIO;
  }
  free(out);
  return o;
}

static int small_work(const gsd_ingest_counts *c) {
  return c && c->text_bytes <= IN_PROCESS_TEXT_BYTES && c->objects <= IN_PROCESS_OBJECTS &&
         c->sections <= IN_PROCESS_SECTIONS;
}

int gsd_ingest_summarize(const char *path, const gsd_ingest_counts *c, const char *shown_name,
                         char **json, gsd_snapshot_end *e, char *err, size_t cap) {
  int rc = GS_OK;
  json_t *o;
  *json = NULL;
  if (small_work(c)) {
    if (!(o = summary_here(path, err, cap))) return GS_EIO;
  } else if (!(o = summary_child(path, &rc, err, cap))) {
    return rc;
  }
  figures_of(o, e);
  if (json_object_set_new(o, "file", json_string(shown_name)) ||
      !(*json = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)))) {
    snprintf(err, cap, "out of memory");
    rc = GS_ENOMEM;
  } else if (strlen(*json) > MAX_SUMMARY) {
    snprintf(err, cap, "its summary is larger than %u MB", MAX_SUMMARY >> 20);
    free(*json);
    *json = NULL;
    rc = GS_ELIMIT;
  }
  json_decref(o);
  return rc;
}
