/* gsd_respond.h - answering a request of the HTTP API, and reading its
 * query, for the resources (gsd_api_*.c) and the router (gsd_http.c).
 *
 * Every answer is JSON: a body, or the API's error object
 * {"error": CODE, "message": TEXT}. Functions that answer return 0, which
 * is what an h2o handler returns once it has handled a request. */
#ifndef GSD_RESPOND_H
#define GSD_RESPOND_H

#include <stddef.h>
#include <jansson.h>
#include "h2o.h"

/* Sends body (taking the reference); NULL answers 500 "out of memory". */
int gsd_respond_json(h2o_req_t *req, int status, json_t *body);
/* Sends JSON text as it is. */
int gsd_respond_text(h2o_req_t *req, int status, const char *json, size_t len);
/* The error object, or NULL when out of memory. */
json_t *gsd_respond_error_body(const char *code, const char *message);
/* Sends the error object with a printf-style message. */
int gsd_respond_error(h2o_req_t *req, int status, const char *code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 4, 5)))
#endif
  ;

/* The value of key in the query string: 1 found, 0 absent, -1 malformed. */
int gsd_query_get(const h2o_req_t *req, const char *key, char *out, size_t cap);
/* A flag: "1", "true" or "yes" (or no value) sets it; -1 when malformed. */
int gsd_query_flag(const h2o_req_t *req, const char *key, int *on);
/* A 32-bit count into buf as text, def when absent; -1 when malformed. */
int gsd_query_count(const h2o_req_t *req, const char *key, const char *def, char *buf,
                    size_t cap);

#endif
