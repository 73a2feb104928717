/* gs_http.h - the HTTP calls the client commands make to the collector.
 *
 * A thin layer over libcurl: GET or POST answered with JSON, and GET of a
 * file streamed into a gs_write_fn. A call returns GS_OK whenever the
 * collector answered, whatever the status; the caller decides what a 404
 * means. Only a failed connection or transfer is an error. */
#ifndef GS_HTTP_H
#define GS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "gs_writer.h"

typedef struct gs_http_reply {
  long status;              /* HTTP status; 0 when no answer came */
  json_t *json;             /* the body parsed as JSON; NULL when it is not */
  char *body;               /* the body as received (NUL-terminated), or NULL */
  size_t body_len;
  int write_failed;         /* gs_http_download: the gs_write_fn failed */
  char error[512];          /* why the call failed, when it returns an error */
} gs_http_reply;

/* GET base+path. Returns GS_OK, GS_EIO (r->error says why) or GS_ENOMEM. */
int gs_http_get_json(const char *base, const char *path, gs_http_reply *r);
/* POST base+path with an empty body; timeout_s bounds the whole call. */
int gs_http_post_json(const char *base, const char *path, long timeout_s,
                      gs_http_reply *r);
/* DELETE base+path, answered with JSON. */
int gs_http_delete_json(const char *base, const char *path, gs_http_reply *r);
/* GET base+path; a 200 body goes to fn as it arrives, any other body is
 * kept in r as for the JSON calls. Returns GS_OK when the whole body came,
 * GS_EIO when the transfer or fn failed (r->write_failed says which). */
int gs_http_download(const char *base, const char *path, gs_write_fn fn, void *ctx,
                     gs_http_reply *r);
/* POST base+path with size bytes read from body as the request body
 * (streamed, never held whole), answered with JSON; no overall timeout,
 * but a transfer stalled for a minute fails. */
int gs_http_post_file(const char *base, const char *path, FILE *body, uint64_t size,
                      gs_http_reply *r);
void gs_http_reply_free(gs_http_reply *r);

/* For every later call: the bearer token to send ("Authorization: Bearer
 * TOKEN"; NULL for none) and the CA certificates (PEM file) that an
 * https:// collector's certificate must chain to (NULL: the system's).
 * The strings are not copied. */
void gs_http_set_token(const char *token);
void gs_http_set_cacert(const char *path);

/* s percent-encoded for a URL path segment or query value; free() it. */
char *gs_http_escape(const char *s);

#endif
