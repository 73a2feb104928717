/* gsd_respond.c - what every resource of the HTTP API answers and reads
 * with: JSON bodies, the API's error object, the request's query.
 *
 * Resources call these, never the router, so each stands alone. The query
 * is read by gsd_request.c, which has no h2o in it for the fuzz target. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_json.h"
#include "gsd_request.h"
#include "gsd_respond.h"

static const char *reason_of(int status) {
  switch (status) {
  case 200: return "OK";
  case 201: return "Created";
  case 202: return "Accepted";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 409: return "Conflict";
  case 422: return "Unprocessable Entity";
  case 502: return "Bad Gateway";
  case 503: return "Service Unavailable";
  case 504: return "Gateway Timeout";
  case 507: return "Insufficient Storage";
  default: return "Internal Server Error";
  }
}

int gsd_respond_json(h2o_req_t *req, int status, json_t *body) {
  static const char oom[] = "{\"error\":\"internal\",\"message\":\"out of memory\"}";
  char *text;
  assert(status >= 200 && status <= 599);
  text = body ? json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
  json_decref(body);
  if (!text) status = 500;
  req->res.status = status;
  req->res.reason = reason_of(status);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("application/json"));
  req->res.content_length = text ? strlen(text) : sizeof oom - 1;
  h2o_send_inline(req, text ? text : oom, req->res.content_length);
  free(text);
  return 0;
}

int gsd_respond_text(h2o_req_t *req, int status, const char *json, size_t len) {
  req->res.status = status;
  req->res.reason = reason_of(status);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("application/json"));
  req->res.content_length = len;
  h2o_send_inline(req, json, len);
  return 0;
}

json_t *gsd_respond_error_body(const char *code, const char *message) {
  json_t *o = json_object();
  if (!o || gs_json_set(o, "error", json_string(code)) ||
      gs_json_set(o, "message", gs_json_cstring(message))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

int gsd_respond_error(h2o_req_t *req, int status, const char *code, const char *fmt, ...) {
  char message[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return gsd_respond_json(req, status, gsd_respond_error_body(code, message));
}

int gsd_query_get(const h2o_req_t *req, const char *key, char *out, size_t cap) {
  return gsd_request_query(req->path.base, req->path.len, req->query_at, key, out, cap);
}

int gsd_query_flag(const h2o_req_t *req, const char *key, int *on) {
  return gsd_request_flag(req->path.base, req->path.len, req->query_at, key, on);
}

int gsd_query_count(const h2o_req_t *req, const char *key, const char *def, char *buf, size_t cap) {
  uint64_t v;
  int rc = gsd_query_get(req, key, buf, cap);
  if (rc == 0) snprintf(buf, cap, "%s", def);
  return rc < 0 || gsd_request_u64(buf, UINT32_MAX, &v) ? -1 : 0;
}
