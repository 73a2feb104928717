/* gsd_analysis.c - the analyses of the HTTP API: dominators, paths, diff
 * and trend of stored snapshots, as JSON.
 *
 * Each request runs the analysis library, the code of the gcsnap commands
 * with --json, so the API and the command line always agree. The analyses
 * build whole-heap graphs, so they run in a child process (gsd_child.c)
 * from libuv's thread pool: that memory goes back to the system when the
 * child ends, and a heap too large for memory fails its request, not the
 * collector. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_diff.h"
#include "gs_dominators.h"
#include "gs_gens.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gs_summary.h"
#include "gs_trend.h"
#include "gsd_analysis.h"
#include "gsd_child.h"
#include "gsd_log.h"
#include "gsd_respond.h"

/* Largest answer relayed; top keeps real answers far below it. */
#define MAX_OUTPUT (64u << 20)
/* Analyses running at once: each holds one of libuv's four pool threads
 * and a child with a whole heap's graph, and ingests need the pool too.
 * More wait their turn, in order, up to MAX_WAITING; past that a request
 * is answered 503 busy with Retry-After. */
#define MAX_RUNNING 2
#define MAX_WAITING 32
#define RETRY_AFTER_S "2"

gsd_analysis *gsd_analysis_new(gsd_analysis_kind kind) {
  gsd_analysis *a = calloc(1, sizeof *a);
  if (a) a->kind = kind;
  return a;
}

void gsd_analysis_free(gsd_analysis *a) {
  int i;
  if (!a) return;
  for (i = 0; i < a->nfiles; i++) free(a->files[i]);
  free(a->cache);
  free(a);
}

/* ---- in the child ------------------------------------------------------- */

/* Each file's summary and breakdown by generation come from one load. */
static int diff(const gsd_analysis *a, json_t **answer, char *why, size_t cap) {
  gs_file_fault fault;
  gs_summary sums[2];
  gs_gens *gens[2] = {NULL, NULL};
  int status = GSD_CHILD_OK, loaded = 0;
  for (; loaded < 2 && status == GSD_CHILD_OK; loaded++)
    if (gs_gens_load_summary(&sums[loaded], a->files[loaded], a->old_only, &gens[loaded], &fault))
      status = gsd_child_fault(&fault, why, cap);
  if (status == GSD_CHILD_OK && (!(*answer = gs_diff_json(&sums[0], &sums[1], a->top, 0)) ||
                                 gs_gens_diff_of(*answer, gens[0], gens[1]))) {
    json_decref(*answer);
    *answer = NULL;
    snprintf(why, cap, "out of memory");
    status = GSD_CHILD_FAILED;
  }
  while (loaded-- > 0) {
    gs_summary_free(&sums[loaded]);
    gs_gens_free(gens[loaded]);
  }
  return status;
}

static int trend(const gsd_analysis *a, json_t **answer, char *why, size_t cap) {
  gs_file_fault fault;
  gs_trend t;
  int status = GSD_CHILD_OK;
  memset(&t, 0, sizeof t);
  if (gs_trend_analyse(&t, (const char *const *)a->files, a->nfiles, a->old_only, a->threshold,
                       a->top, &fault))
    status = gsd_child_fault(&fault, why, cap);
  else if (!(*answer = gs_trend_json(&t))) {
    snprintf(why, cap, "out of memory");
    status = GSD_CHILD_FAILED;
  }
  gs_trend_free(&t);
  return status;
}

static int compute(void *ctx, json_t **answer, char *why, size_t cap) {
  const gsd_analysis *a = ctx;
  gs_file_fault fault;
  int err = GS_OK;
  switch (a->kind) {
  case GSD_ANALYSIS_DOMINATORS:
    err = gs_dominators_json(a->files[0], a->top, a->by_type, answer, &fault);
    break;
  case GSD_ANALYSIS_PATHS:
    err = gs_retainers_json(a->files[0], &a->paths, answer, &fault);
    break;
  case GSD_ANALYSIS_DIFF:
    return diff(a, answer, why, cap);
  case GSD_ANALYSIS_TREND:
    return trend(a, answer, why, cap);
  case GSD_ANALYSIS_DOMTREE:
    return gsd_domtree_compute(a, answer, why, cap);
  case GSD_ANALYSIS_GENS:
    err = gs_gens_json(a->files[0], a->cache, a->top, answer, &fault);
    break;
  }
  return err ? gsd_child_fault(&fault, why, cap) : GSD_CHILD_OK;
}

/* ---- on the pool and the loop ------------------------------------------ */

typedef struct job job;

/* Lives in the request's memory pool: tells the job when the client went. */
typedef struct job_ref { job *j; } job_ref;

struct job {
  uv_work_t work;
  gsd_server *srv;
  h2o_req_t *req;                /* NULL once the client is gone */
  job_ref *ref;
  gsd_analysis *a;
  char *out;                     /* the answer, or why there is none */
  size_t len;
  int rc, status;
  gsd_child_progress *progress;  /* what its child has read (NULL: not known) */
  uint64_t queued;               /* the loop's time when asked, ms */
  job *next;                     /* in the waiting line */
};

/* The analyses of the process: one loop, one line, and those running. */
static struct {
  unsigned running, waiting;
  job *head, *tail;
  job *run[MAX_RUNNING];
} line;

static void start_next(void);

/* The answer (or the reason) names files as the store does,
 * snapshots/DEVICE/ID.gclog.zst, never by a path of the collector's host. */
static void name_as_store(job *j) {
  char prefix[4200], *at, *from;
  size_t n, keep = strlen("snapshots/");
  if (!j->out || !j->a->dir) return;
  n = (size_t)snprintf(prefix, sizeof prefix, "%s/snapshots/", j->a->dir);
  if (n >= sizeof prefix) return;
  for (from = j->out; (at = strstr(from, prefix)) != NULL; from = at + keep) {
    memmove(at, at + n - keep, strlen(at + n - keep) + 1);
    j->len -= n - keep;
  }
}

static void work(uv_work_t *w) {
  job *j = w->data;
  j->rc = gsd_child_run_watched(compute, j->a, MAX_OUTPUT, &j->out, &j->len, &j->status, j->progress);
  name_as_store(j);
}

static void answer(job *j, h2o_req_t *req) {
  const char *why = j->out && j->out[0] ? j->out : "the analysis failed";
  if (j->rc != GS_OK)
    gsd_respond_error(req, 500, "internal", "cannot start the analysis: %s", gs_strerror(j->rc));
  else if (j->status == GSD_CHILD_TOO_LARGE)
    gsd_respond_error(req, 500, "internal", "the answer is larger than %u MB: ask for fewer rows",
                      MAX_OUTPUT >> 20);
  else if (j->status == GSD_CHILD_OK)
    gsd_respond_text(req, 200, j->out, j->len);
  else if (j->status == GSD_CHILD_WANTING)
    gsd_respond_error(req, 422, "bad_request", "%s", why);
  else
    gsd_respond_error(req, 500, "internal", "%s", j->status == GSD_CHILD_DIED ? "the analysis "
                      "ended without an answer (out of memory?)" : why);
}

static void job_free(job *j) {
  if (j->ref) j->ref->j = NULL;
  gsd_child_progress_free(j->progress);
  gsd_analysis_free(j->a);
  free(j->out);
  free(j);
}

/* Puts j in the first free slot of the running ones (from NULL), or
 * takes it out (to NULL). */
static void set_running(job *from, job *to) {
  unsigned i;
  for (i = 0; i < MAX_RUNNING; i++)
    if (line.run[i] == from) { line.run[i] = to; return; }
}

static void work_done(uv_work_t *w, int status) {
  job *j = w->data;
  set_running(j, NULL);
  if (status != 0) j->rc = GS_EIO;
  if (j->req) answer(j, j->req);
  job_free(j);
  line.running--;
  start_next();
}

/* The oldest waiting job whose client is still there goes to the pool. */
static void start_next(void) {
  while (line.head && line.running < MAX_RUNNING) {
    job *j = line.head;
    if (!(line.head = j->next)) line.tail = NULL;
    line.waiting--;
    j->next = NULL;
    if (uv_queue_work(j->srv->loop, &j->work, work, work_done) == 0) {
      line.running++;
      set_running(NULL, j);
      continue;
    }
    if (j->req) gsd_respond_error(j->req, 500, "internal", "cannot start the analysis");
    job_free(j);
  }
}

/* A job still waiting is taken out of the line and freed; a running one
 * only forgets its request (its work ends in work_done). */
static void on_req_gone(void *p) {
  job_ref *ref = p;
  job *j = ref->j, **at;
  if (!j) return;
  j->req = NULL;
  j->ref = NULL;
  for (at = &line.head; *at && *at != j; at = &(*at)->next) {}
  if (!*at) return;
  *at = j->next;
  if (line.tail == j) {
    job *t = line.head;
    while (t && t->next) t = t->next;
    line.tail = t;
  }
  line.waiting--;
  job_free(j);
}

int gsd_analysis_run(gsd_server *srv, h2o_req_t *req, gsd_analysis *a) {
  job *j;
  assert(a->nfiles >= 1 && a->nfiles <= GSD_ANALYSIS_MAX_FILES);
  a->dir = srv->cfg->store;
  if (line.waiting >= MAX_WAITING) {
    gsd_analysis_free(a);
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_RETRY_AFTER, NULL,
                   H2O_STRLIT(RETRY_AFTER_S));
    return gsd_respond_error(req, 503, "busy", "%u analyses are running and %u waiting, the "
                             "collector's limit: try again in %s s", line.running, line.waiting,
                             RETRY_AFTER_S);
  }
  if (!(j = calloc(1, sizeof *j))) {
    gsd_analysis_free(a);
    return gsd_respond_error(req, 500, "internal", "out of memory");
  }
  j->srv = srv;
  j->a = a;
  j->req = req;
  j->work.data = j;
  j->progress = gsd_child_progress_new();   /* without it, no progress shown */
  j->queued = uv_now(srv->loop);
  j->ref = h2o_mem_alloc_shared(&req->pool, sizeof *j->ref, on_req_gone);
  j->ref->j = j;
  if (line.tail) line.tail->next = j;
  else line.head = j;
  line.tail = j;
  line.waiting++;
  gsd_log_debug("analysis: %d of %d file(s), %u running, %u waiting", (int)a->kind, a->nfiles,
                line.running, line.waiting);
  start_next();
  return 0;
}

/* ---- progress ------------------------------------------------------------ */

static const char *const kind_names[] = {"dominators", "paths", "diff", "trend", "domtree", "generations"};

static int reads_file(const job *j, const char *path) {
  int i;
  for (i = 0; i < j->a->nfiles; i++)
    if (!strcmp(j->a->files[i], path)) return 1;
  return 0;
}

static json_t *progress_json(const job *j, int running) {
  gsd_child_read r = gsd_child_progress_get(j->progress);
  json_t *o = json_object();
  assert((size_t)j->a->kind < sizeof kind_names / sizeof *kind_names);
  gs_json_set(o, "kind", json_string(kind_names[j->a->kind]));
  gs_json_set(o, "state", json_string(running ? "running" : "waiting"));
  gs_json_set(o, "seconds", json_real((double)(uv_now(j->srv->loop) - j->queued) / 1000.0));
  gs_json_set(o, "files", json_integer(j->a->nfiles));
  gs_json_set(o, "reads", gs_json_u64(r.files));
  gs_json_set(o, "bytes_read", gs_json_u64(r.consumed));
  gs_json_set(o, "file_bytes", gs_json_u64(r.size));
  gs_json_set(o, "percent", r.size ? json_real(r.consumed >= r.size ? 100.0 : (double)r.consumed * 100.0 / (double)r.size)
                                   : json_null());
  return o;
}

json_t *gsd_analysis_progress(const char *path) {
  json_t *a = json_array();
  const job *j;
  unsigned i;
  for (i = 0; a && i < MAX_RUNNING; i++)
    if (line.run[i] && reads_file(line.run[i], path)) json_array_append_new(a, progress_json(line.run[i], 1));
  for (j = line.head; a && j; j = j->next)
    if (reads_file(j, path)) json_array_append_new(a, progress_json(j, 0));
  return a;
}
