/* gsd_session_data.c - a snapshot's stream: SnapshotBegin starts an ingest
 * (gsd_ingest.c), the data messages feed it, SnapshotEnd or the agent's
 * Error ends it. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gsd_session_int.h"

void gsd_sess_on_begin(gsd_session *s, const Gcsnap__SnapshotBegin *b, size_t frame_bytes) {
  gsd_server *srv = s->srv;
  gsd_snapshot_begin row;
  char *tmp = NULL, err[300];
  int rc, asked;
  s->request_id = b->request_id;
  s->agent_snapshot_id = b->snapshot_id;
  s->wire_bytes = frame_bytes;
  s->begin_ns = uv_hrtime();
  s->state = ST_RECEIVING;
  gsd_sess_arm_timer(s);
  /* Request IDs are the collector's: one the session did not ask for is
   * recorded as none (a spooled snapshot may name a request of an earlier
   * session). */
  asked = s->capture && s->capture->request_id == b->request_id;
  if (b->request_id && !asked)
    gsd_log_warn("device %s: SnapshotBegin names request %llu, which is not in flight on this "
                 "session: recorded as unasked", s->device_id, (unsigned long long)b->request_id);
  rc = gsd_store_find_complete(srv->store, s->device_id, b->snapshot_id, &s->duplicate_of);
  if (rc == GS_OK) {
    gsd_log_info("device %s: agent snapshot %llu is already stored as %lld; checking the "
                 "stream without storing it", s->device_id, (unsigned long long)b->snapshot_id,
                 (long long)s->duplicate_of);
  } else {
    s->duplicate_of = 0;
    memset(&row, 0, sizeof row);
    row.device_id = s->device_id;
    row.session_id = s->session_id;
    row.request_id = asked ? b->request_id : 0;
    row.agent_snapshot_id = b->snapshot_id;
    row.trigger = b->trigger;
    row.stable_ids = b->stable_ids;
    row.clock_ms = b->clock_ms;
    row.schedule_id = 0;
    if (s->capture && s->capture->request_id == b->request_id && s->capture->schedule_id) {
      row.trigger = "schedule";
      row.schedule_id = s->capture->schedule_id;
    }
    if (rc != GS_EOF || gsd_store_snapshot_begin(srv->store, &row, &s->snapshot_id) != GS_OK) {
      snprintf(err, sizeof err, "%s", gsd_store_error(srv->store));
      gsd_log_error("%s", err);
      s->snapshot_id = 0;
    } else if (gsd_store_check_space(srv->store, srv->cfg->min_free_bytes) != GS_OK) {
      /* Received and checked, not written: failed at its end. */
      snprintf(err, sizeof err, "%s", gsd_store_error(srv->store));
      gsd_log_warn("device %s: snapshot %lld will not be stored: %s", s->device_id,
                   (long long)s->snapshot_id, err);
    } else if (!(tmp = gsd_store_tmp_path(srv->store, s->device_id, s->snapshot_id))) {
      snprintf(err, sizeof err, "out of memory");
    } else if (gsd_ingest_new(&s->ingest, tmp, err, sizeof err) == GS_OK) {
      free(tmp);
      gsd_sess_set_limits(s);
      gsd_log_debug("device %s: receiving snapshot %lld (agent snapshot %llu, request %llu)",
                    s->device_id, (long long)s->snapshot_id,
                    (unsigned long long)b->snapshot_id, (unsigned long long)b->request_id);
      if (s->capture && s->capture->request_id == b->request_id)
        gsd_capture_streaming(srv, s->capture, s->snapshot_id);
      return;
    }
    free(tmp);
    /* Told at SnapshotEnd, in place of the Ack. */
    s->deferred.code = GS_WIRE_E_STORAGE;
    snprintf(s->deferred.reason, sizeof s->deferred.reason, "cannot store the snapshot: %.200s",
             err);
  }
  if (s->capture && s->capture->request_id == b->request_id)
    gsd_capture_streaming(srv, s->capture, s->duplicate_of);
  if (gsd_ingest_new(&s->ingest, NULL, err, sizeof err) != GS_OK)
    gsd_sess_abort_session(s, GS_WIRE_E_STORAGE, "out of memory");
  else
    gsd_sess_set_limits(s);
}

void gsd_sess_on_agent_error(gsd_session *s, const Gcsnap__Error *e) {
  char reason[300];
  snprintf(reason, sizeof reason, "the agent reported error %u: %s", e->code,
           e->message ? e->message : "");
  if (s->state == ST_RECEIVING) {
    gsd_sess_fail_snapshot(s, reason);
    s->state = ST_IDLE;
    gsd_sess_arm_timer(s);
    return;
  }
  gsd_log_warn("device %s: %s", s->device_id, reason);
  if (s->capture && (e->request_id == 0 || e->request_id == s->capture->request_id))
    gsd_sess_end_capture(s, reason);
}

/* A data message (or SnapshotEnd) of the snapshot being received. */
void gsd_sess_on_data(gsd_session *s, const Gcsnap__Envelope *env) {
  gsd_fault f;
  assert(s->state == ST_RECEIVING && s->ingest != NULL);
  if (gsd_ingest_message(s->ingest, env, &f) != GS_OK) {
    if (f.fatal) {
      gsd_sess_abort_session(s, f.code, "%s", f.reason);
      return;
    }
    gsd_sess_send_error(s, f.code, f.reason, s->request_id);
    gsd_sess_fail_snapshot(s, f.reason);
    s->state = ST_IDLE;
    gsd_sess_arm_timer(s);
    return;
  }
  if (!s->write_warned && gsd_ingest_write_error(s->ingest)) {
    /* Told now, when the space goes back; the agent hears it at SnapshotEnd. */
    s->write_warned = 1;
    gsd_log_warn("device %s: snapshot %lld is no longer written (its file is removed): %s",
                 s->device_id, (long long)s->snapshot_id, gsd_ingest_write_error(s->ingest));
  }
  if (!gsd_ingest_ended(s->ingest)) return;
  if (s->deferred.code) {
    gsd_fault d = s->deferred;
    gsd_sess_send_error(s, d.code, d.reason, s->request_id);
    gsd_sess_fail_snapshot(s, d.reason);
    s->state = ST_IDLE;
    gsd_sess_arm_timer(s);
  } else if (s->duplicate_of) {
    gsd_sess_send_ack(s, s->duplicate_of);
    gsd_sess_forget_snapshot(s);
    gsd_sess_end_capture(s, NULL);
    s->state = ST_IDLE;
    gsd_sess_arm_timer(s);
  } else {
    gsd_sess_start_finish(s);
  }
}
