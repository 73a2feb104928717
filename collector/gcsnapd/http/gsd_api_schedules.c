/* gsd_api_schedules.c - /api/schedules: POST adds a schedule (parameters
 * from a JSON body or the query), GET lists them or shows one, DELETE
 * removes one. The schedules themselves run in gsd_schedule.c. */
#include <stdio.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_parse.h"
#include "gs_json.h"
#include "gs_units.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

/* A parameter of POST /api/schedules: from the JSON body when it has it
 * (a string, or an integer written in decimal), else from the query. 1
 * when found, 0 when absent, -1 when malformed. */
static int param(const h2o_req_t *req, const json_t *body, const char *key, char *out, size_t cap) {
  json_t *v = body ? json_object_get(body, key) : NULL;
  if (!v || json_is_null(v)) return gsd_query_get(req, key, out, cap);
  if (json_is_string(v) && json_string_length(v) < cap) {
    snprintf(out, cap, "%s", json_string_value(v));
    return 1;
  }
  if (json_is_integer(v) && json_integer_value(v) >= 0) {
    snprintf(out, cap, "%lld", (long long)json_integer_value(v));
    return 1;
  }
  return -1;
}

static int is_device_text(const char *s) {
  size_t n = strlen(s), i;
  if (n == 0 || n > GSD_DEVICE_ID_MAX) return 0;
  for (i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 0;
  return 1;
}

/* Fills sch from the request; on failure answers 400 and returns -1. */
static int read_schedule(h2o_req_t *req, const json_t *body, gsd_schedule *sch) {
  char v[256];
  int rc;
  memset(sch, 0, sizeof *sch);
  if (param(req, body, "device", v, sizeof v) != 1 || !is_device_text(v))
    return gsd_respond_error(req, 400, "bad_request", "device must be a device ID or a "
                                  "pattern of 1 to %d bytes", GSD_DEVICE_ID_MAX), -1;
  snprintf(sch->device, sizeof sch->device, "%s", v);
  if (param(req, body, "every", v, sizeof v) != 1 || gs_parse_duration_ms(v, &sch->every_ms) ||
      sch->every_ms < 1000 || sch->every_ms > GS_UNITS_EVERY_MAX_MS)
    return gsd_respond_error(req, 400, "bad_request", "every must be a duration from 1s "
                                  "to 366d (500ms, 30s, 5m, 2h, 1d)"), -1;
  if ((rc = param(req, body, "jitter", v, sizeof v)) < 0 ||
      (rc && (gs_parse_duration_ms(v, &sch->jitter_ms) || sch->jitter_ms > sch->every_ms)))
    return gsd_respond_error(req, 400, "bad_request", "jitter must be a duration no longer "
                                  "than every"), -1;
  if ((rc = param(req, body, "keep", v, sizeof v)) < 0 ||
      (rc && (gsd_request_u64(v, INT64_MAX, &sch->keep) || sch->keep == 0)))
    return gsd_respond_error(req, 400, "bad_request", "keep must be a count of at least 1"), -1;
  if ((rc = param(req, body, "max_bytes", v, sizeof v)) < 0 ||
      (rc && (gs_parse_size(v, &sch->max_bytes) || sch->max_bytes == 0 ||
              sch->max_bytes > INT64_MAX)))
    return gsd_respond_error(req, 400, "bad_request", "max_bytes must be a size above 0 "
                                  "(1048576, 500M, 1G)"), -1;
  if ((rc = param(req, body, "start", v, sizeof v)) < 0 || (rc && gs_units_time(v, &sch->start_s)) ||
      (rc = param(req, body, "end", v, sizeof v)) < 0 || (rc && gs_units_time(v, &sch->end_s)))
    return gsd_respond_error(req, 400, "bad_request", "start and end must be Unix seconds "
                                  "or UTC times as 2026-11-21T08:00:00Z, up to the end of 9999"), -1;
  if (sch->end_s && sch->end_s <= sch->start_s)
    return gsd_respond_error(req, 400, "bad_request", "end must come after start"), -1;
  return 0;
}

int gsd_api_schedule_add(gsd_server *srv, h2o_req_t *req) {
  json_t *body = NULL;
  gsd_schedule sch;
  int rc;
  if (req->entity.len > 0) {
    body = json_loadb(req->entity.base, req->entity.len, 0, NULL);
    if (!json_is_object(body)) {
      json_decref(body);
      return gsd_respond_error(req, 400, "bad_request", "the body must be a JSON object");
    }
  }
  rc = read_schedule(req, body, &sch);
  json_decref(body);
  if (rc) return 0;
  if (gsd_schedules_add(srv, &sch) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  return gsd_respond_json(req, 201, gsd_schedule_json(srv, &sch));
}

int gsd_api_schedule(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  const gsd_schedule *sch;
  int64_t id;
  if (gsd_request_id(id_text, &id) || !(sch = gsd_schedules_find(srv, id)))
    return gsd_respond_error(req, 404, "not_found", "no schedule %s", id_text);
  return gsd_respond_json(req, 200, gsd_schedule_json(srv, sch));
}

int gsd_api_schedule_remove(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  int64_t id;
  int rc;
  if (gsd_request_id(id_text, &id))
    return gsd_respond_error(req, 404, "not_found", "no schedule %s", id_text);
  rc = gsd_schedules_remove(srv, id);
  if (rc == GS_EOF) return gsd_respond_error(req, 404, "not_found", "no schedule %s", id_text);
  if (rc != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  return gsd_respond_json(req, 200, json_pack("{sI}", "deleted", (json_int_t)id));
}

int gsd_api_schedules(gsd_server *srv, h2o_req_t *req) {
  return gsd_respond_json(req, 200, gsd_schedules_json(srv));
}
