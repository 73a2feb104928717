/* gsd_api_devices.c - GET /api/health (the collector's version, devices
 * connected, uptime) and GET /api/devices (the catalog's devices with what
 * their live sessions add: connected, busy, address). */
#include <time.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

int gsd_api_health(gsd_server *srv, h2o_req_t *req) {
  json_t *o = json_object();
  if (o && (gs_json_set(o, "version", json_string(GSD_VERSION_STRING)) ||
            gs_json_set(o, "devices_connected", gs_json_u64(gsd_sessions_connected(srv))) ||
            gs_json_set(o, "uptime_s", json_integer((json_int_t)(time(NULL) - srv->started))))) {
    json_decref(o);
    o = NULL;
  }
  return gsd_respond_json(req, 200, o);
}

int gsd_api_devices(gsd_server *srv, h2o_req_t *req) {
  json_t *arr = NULL, *o, *d;
  size_t i;
  int bad = 0;
  if (gsd_store_list_devices(srv->store, &arr) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  json_array_foreach(arr, i, d) {
    const char *id = json_string_value(json_object_get(d, "device_id"));
    gsd_session *s = id ? gsd_session_find(srv, id) : NULL;
    bad |= gs_json_set(d, "connected", json_boolean(s != NULL));
    bad |= gs_json_set(d, "busy", json_boolean(s && gsd_session_busy(s)));
    if (s) {
      bad |= gsd_session_describe(s, d) != GS_OK;
      bad |= gs_json_set(d, "last_seen", json_integer((json_int_t)time(NULL)));
    } else {
      bad |= gs_json_set(d, "address", json_null());
      bad |= gs_json_set(d, "connected_since", json_null());
    }
  }
  o = json_object();
  if (bad || !o || gs_json_set(o, "devices", arr)) {
    if (!o) json_decref(arr);
    json_decref(o);
    o = NULL;
  }
  return gsd_respond_json(req, 200, o);
}
