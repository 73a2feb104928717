/* gsd_analysis.c - the analyses of the HTTP API: dominators, paths, diff
 * and trend of stored snapshots, as JSON.
 *
 * Each request runs the gcsnap tool installed beside gcsnapd (for example
 * "gcsnap dominators --json FILE") as a child process and relays what it
 * prints, so the API and the command line always agree. The analyses build
 * whole-heap graphs: in a child, that memory goes back to the system when
 * it exits, and a heap too large for memory fails its request, not the
 * collector. */
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gsd_log.h"
#include "gsd_respond.h"
#include "gsd_server.h"

/* Largest answer relayed; --top keeps real answers far below it. */
#define MAX_OUTPUT (64u << 20)
#define MAX_MESSAGE 1024

typedef struct job job;

/* Lives in the request's memory pool: tells the job when the client went. */
typedef struct job_ref { job *j; } job_ref;

struct job {
  uv_process_t proc;
  uv_pipe_t out, err;
  int open_handles;
  h2o_req_t *req;                /* NULL once answered or the client is gone */
  job_ref *ref;                  /* the request's link back, while both live */
  char *buf;                     /* stdout */
  size_t len, cap;
  char message[MAX_MESSAGE];     /* the start of stderr */
  size_t message_len;
  int64_t status;
  int exited, too_large;
};

static void job_free_if_done(job *j) {
  if (j->open_handles) return;
  free(j->buf);
  free(j);
}

static void on_closed(uv_handle_t *h) {
  job *j = h->data;
  j->open_handles--;
  job_free_if_done(j);
}

static void alloc_buf(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  static char scratch[65536];
  (void)h;
  (void)suggested;
  b->base = scratch;
  b->len = sizeof scratch;
}

static void answer(job *j) {
  h2o_req_t *req = j->req;
  if (!req) return;
  j->req = NULL;
  j->ref->j = NULL;
  if (j->too_large) {
    gsd_respond_error(req, 500, "internal", "the answer is larger than %u MB: ask for fewer rows",
                           MAX_OUTPUT >> 20);
  } else if (j->status == 0) {
    gsd_respond_text(req, 200, j->buf ? j->buf : "{}", j->buf ? j->len : 2);
  } else {
    while (j->message_len && (j->message[j->message_len - 1] == '\n')) j->message_len--;
    j->message[j->message_len] = 0;
    gsd_respond_error(req, j->status == 1 ? 422 : 500, j->status == 1 ? "bad_request" : "internal",
                           "%s", j->message_len ? j->message : "the analysis failed");
  }
}

/* The answer goes out once the process exited and both pipes are drained. */
static void maybe_answer(job *j) {
  if (j->exited && !uv_is_active((uv_handle_t *)&j->out) && !uv_is_active((uv_handle_t *)&j->err))
    answer(j);
}

static void on_out(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  job *j = s->data;
  if (n > 0 && !j->too_large) {
    if (j->len + (size_t)n > MAX_OUTPUT) {
      j->too_large = 1;
    } else {
      if (j->len + (size_t)n > j->cap) {
        size_t cap = j->cap ? j->cap : 65536;
        char *p;
        while (cap < j->len + (size_t)n) cap *= 2;
        if (!(p = realloc(j->buf, cap))) { j->too_large = 1; return; }
        j->buf = p;
        j->cap = cap;
      }
      memcpy(j->buf + j->len, b->base, (size_t)n);
      j->len += (size_t)n;
    }
  }
  if (n < 0) {
    uv_read_stop(s);
    maybe_answer(j);
  }
}

static void on_err(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  job *j = s->data;
  if (n > 0) {
    size_t room = sizeof j->message - 1 - j->message_len, k = (size_t)n < room ? (size_t)n : room;
    memcpy(j->message + j->message_len, b->base, k);
    j->message_len += k;
  }
  if (n < 0) {
    uv_read_stop(s);
    maybe_answer(j);
  }
}

static void on_child_exit(uv_process_t *p, int64_t status, int signal) {
  job *j = p->data;
  j->status = signal ? -1 : status;
  j->exited = 1;
  maybe_answer(j);
  uv_close((uv_handle_t *)&j->proc, on_closed);
  uv_close((uv_handle_t *)&j->out, on_closed);
  uv_close((uv_handle_t *)&j->err, on_closed);
}

static void on_req_gone(void *p) {
  job_ref *ref = p;
  if (ref->j) ref->j->req = NULL;
}

int gsd_analysis_run(gsd_server *srv, h2o_req_t *req, const char *const *args) {
  uv_process_options_t opt;
  uv_stdio_container_t stdio[3];
  char *argv[16];
  job *j = calloc(1, sizeof *j);
  job_ref *ref;
  int i, rc;
  if (!j) return gsd_respond_error(req, 500, "internal", "out of memory");
  argv[0] = (char *)srv->cfg->gcsnap;
  for (i = 0; i < 14 && args[i]; i++) argv[i + 1] = (char *)args[i];
  argv[i + 1] = NULL;
  uv_pipe_init(srv->loop, &j->out, 0);
  uv_pipe_init(srv->loop, &j->err, 0);
  j->out.data = j->err.data = j->proc.data = j;
  j->open_handles = 2;
  memset(&opt, 0, sizeof opt);
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)&j->out;
  stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[2].data.stream = (uv_stream_t *)&j->err;
  opt.file = argv[0];
  opt.args = argv;
  opt.stdio = stdio;
  opt.stdio_count = 3;
  opt.exit_cb = on_child_exit;
  if ((rc = uv_spawn(srv->loop, &j->proc, &opt)) != 0) {
    gsd_log_error("analysis: cannot run %s: %s", argv[0], uv_strerror(rc));
    uv_close((uv_handle_t *)&j->out, on_closed);
    uv_close((uv_handle_t *)&j->err, on_closed);
    return gsd_respond_error(req, 500, "internal", "cannot run the analysis tool %s: %s",
                                  argv[0], uv_strerror(rc));
  }
  j->open_handles = 3;
  j->req = req;
  ref = h2o_mem_alloc_shared(&req->pool, sizeof *ref, on_req_gone);
  ref->j = j;
  j->ref = ref;
  uv_read_start((uv_stream_t *)&j->out, alloc_buf, on_out);
  uv_read_start((uv_stream_t *)&j->err, alloc_buf, on_err);
  gsd_log_debug("analysis: %s %s", argv[0], argv[1]);
  return 0;
}
