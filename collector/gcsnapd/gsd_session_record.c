/* gsd_session_record.c - --record: every frame a session takes from its
 * Hello on is also written to DIR/<device>-<session>.gcstream with the time
 * it was taken (gs_stream.h), for gcsnap replay. A recording that cannot be
 * written is given up, never the session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gsd_session_int.h"

/* ---- recording (--record) ------------------------------------------------ */

void gsd_sess_stop_recording(gsd_session *s) {
  if (s->rec && fclose(s->rec) != 0)
    gsd_log_warn("device %s: the recording of session %lld is incomplete: %s", s->device_id,
                 (long long)s->session_id, strerror(errno));
  s->rec = NULL;
}

void gsd_sess_record_frame(gsd_session *s, const uint8_t *frame, size_t len);

/* Opens DIR/<device>-<session>.gcstream; the Hello kept from the
 * handshake is its first frame. A recording that cannot be written is given up, not the
 * session. */
void gsd_sess_start_recording(gsd_session *s) {
  const char *dir = s->srv->cfg->record;
  gs_stream_header h;
  char *dev, *path;
  size_t n;
  if (!dir[0] || !(dev = gsd_store_escape_device(s->device_id))) return;
  n = strlen(dir) + strlen(dev) + 48;
  if ((path = malloc(n)) != NULL) {
    snprintf(path, n, "%s/%s-%lld.gcstream", dir, dev, (long long)s->session_id);
    memset(&h, 0, sizeof h);
    h.version = GS_STREAM_VERSION;
    h.protocol_version = GS_WIRE_PROTOCOL_VERSION;
    snprintf(h.device_id, sizeof h.device_id, "%s", s->device_id);
    h.start_us = (uint64_t)gsd_schedule_now_ms() * 1000;
    s->rec_start_ns = s->frame_ns;
    if (!(s->rec = fopen(path, "wb")) || gs_stream_write_header(s->rec, &h) != GS_OK) {
      gsd_log_warn("device %s: cannot record the session into %s: %s", s->device_id, path,
                   strerror(errno));
      gsd_sess_stop_recording(s);
    } else {
      /* The Hello is the first frame; an AuthProof is never recorded. */
      gsd_sess_record_frame(s, s->hello, s->hello_len);
    }
    free(path);
  }
  free(dev);
}

void gsd_sess_record_frame(gsd_session *s, const uint8_t *frame, size_t len) {
  uint64_t us = (s->frame_ns - s->rec_start_ns) / 1000;
  if (gs_stream_write_frame(s->rec, us, frame, len) != GS_OK) {
    gsd_log_warn("device %s: recording stopped: %s", s->device_id, strerror(errno));
    gsd_sess_stop_recording(s);
  }
}
