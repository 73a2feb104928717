/* gsd_session_finish.c - the end of a stored snapshot: the file is synced,
 * renamed and summarized on libuv's thread pool while the session stops
 * reading, then the catalog row is completed and the agent acked. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gsd_session_int.h"

/* ---- the end of a stored snapshot, on the thread pool --------------------- */

static void finish_work(uv_work_t *w) {
  finish_job *job = w->data;
  gsd_session *s = job->s;
  job->rc = gsd_ingest_commit(s->ingest, job->final_path, job->err, sizeof job->err);
  if (job->rc == GS_OK)
    job->rc = gsd_ingest_summarize(job->final_path, gsd_ingest_stats(s->ingest), job->shown_name,
                                   &job->summary, &job->end, job->err, sizeof job->err);
}

static void free_job(finish_job *job) {
  free(job->final_path);
  free(job->shown_name);
  free(job->summary);
  free(job);
}

/* Receiving is what the stream costs; storing is the sync, the summary
 * and the catalog. */
static void log_stored(gsd_session *s, const gsd_snapshot_end *e) {
  double recv = (double)(s->end_ns - s->begin_ns) / 1e9;
  double store = (double)(uv_hrtime() - s->end_ns) / 1e9;
  if (recv <= 0) recv = 1e-9;
  gsd_log_info("device %s: stored snapshot %lld (agent snapshot %llu): %llu objects, "
               "%.1f MB of text, %.1f MB on the wire; received in %.2f s (%.1f MB/s of "
               "text, %.0f objects/s), stored in %.2f s",
               s->device_id, (long long)s->snapshot_id,
               (unsigned long long)s->agent_snapshot_id, (unsigned long long)e->objects,
               (double)e->text_bytes / 1e6, (double)e->wire_bytes / 1e6, recv,
               (double)e->text_bytes / 1e6 / recv, (double)e->objects / recv, store);
}

static void finish_ended(uv_work_t *w, int status);

/* Log lines from here on name the session's device and snapshot. */
static void finish_done(uv_work_t *w, int status) {
  gsd_session *s = ((finish_job *)w->data)->s;
  gsd_log_scope(s->device_id, &s->snapshot_id);
  finish_ended(w, status);
  gsd_log_scope(NULL, NULL);
}

static void finish_ended(uv_work_t *w, int status) {
  finish_job *job = w->data;
  gsd_session *s = job->s;
  gsd_store *store = s->srv->store;
  char reason[300];
  s->job = NULL;
  if (status == UV_ECANCELED) {
    job->rc = GS_EIO;
    snprintf(job->err, sizeof job->err, "the collector stopped");
  }
  if (job->rc == GS_OK) {
    gsd_snapshot_end *e = &job->end;
    const gsd_ingest_counts *c = gsd_ingest_stats(s->ingest);
    e->text_bytes = c->text_bytes;
    e->file_bytes = c->file_bytes;
    e->wire_bytes = s->wire_bytes;
    e->crc32 = c->crc32;
    e->warnings = c->warnings;
    e->summary = job->summary;
    if (gsd_store_snapshot_complete(store, s->snapshot_id, e) != GS_OK) {
      job->rc = GS_EIO;
      snprintf(job->err, sizeof job->err, "%s", gsd_store_error(store));
      gsd_log_error("%s", job->err);
    }
  }
  s->state = ST_IDLE;
  if (job->rc == GS_OK) {
    log_stored(s, &job->end);
    gsd_metrics_stored(job->end.file_bytes, uv_hrtime() - s->begin_ns);
    if (!s->capture) gsd_metrics_capture("agent", 1);
    gsd_sess_send_ack(s, s->snapshot_id);
    if (s->capture) gsd_capture_streaming(s->srv, s->capture, s->snapshot_id);
    gsd_sess_forget_snapshot(s);
    gsd_sess_end_capture(s, NULL);
    gsd_schedules_stored(s->srv, s->device_id);
  } else {
    if (gsd_ingest_committed(s->ingest)) unlink(job->final_path);
    snprintf(reason, sizeof reason, "could not store the snapshot: %s", job->err);
    gsd_sess_send_error(s, GS_WIRE_E_STORAGE, reason, s->request_id);
    gsd_sess_fail_snapshot(s, reason);
  }
  free_job(job);
  /* The agent waited for us: its silence meanwhile does not count. */
  s->last_rx_ms = uv_now(s->srv->loop);
  s->pinged = 0;
  gsd_sess_arm_timer(s);
  if (s->stop_after_job || s->srv->stopping) {
    gsd_sess_abort_session(s, GS_WIRE_E_SHUTDOWN, "the collector is stopping");
    return;
  }
  gsd_sess_process(s);
  if (s->state != ST_CLOSING && s->state != ST_FINISHING) gsd_sess_resume_reading(s);
}

void gsd_sess_start_finish(gsd_session *s) {
  finish_job *job;
  char *dev;
  size_t n;
  assert(s->snapshot_id > 0 && s->ingest != NULL && s->job == NULL);
  job = calloc(1, sizeof *job);
  dev = gsd_store_escape_device(s->device_id);
  n = (dev ? strlen(dev) : 0) + 64;
  if (job && dev && (job->shown_name = malloc(n)))
    snprintf(job->shown_name, n, "snapshots/%s/%lld.gclog.zst", dev, (long long)s->snapshot_id);
  free(dev);
  if (!job || !job->shown_name ||
      !(job->final_path = gsd_store_snapshot_path(s->srv->store, s->device_id, s->snapshot_id))) {
    if (job) free_job(job);
    gsd_sess_send_error(s, GS_WIRE_E_STORAGE, "out of memory", s->request_id);
    gsd_sess_fail_snapshot(s, "out of memory");
    return;
  }
  job->s = s;
  job->work.data = job;
  s->end_ns = uv_hrtime();
  s->job = job;
  s->state = ST_FINISHING;
  gsd_sess_arm_timer(s);
  uv_read_stop((uv_stream_t *)&s->tcp);
  uv_queue_work(s->srv->loop, &job->work, finish_work, finish_done);
}
