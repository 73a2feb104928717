/* gsd_console.c - the web console of gcsnapd: the files of
 * collector/console, compiled into the binary (embed.cmake), served on the
 * HTTP port beside the API.
 *
 * "/" and "/console/" are the page; "/console/NAME" its scripts and style.
 * Every answer carries the file's ETag and "Cache-Control: no-cache", so a
 * browser keeps its copy and only asks whether it is still current (304),
 * and a new gcsnapd is picked up at once. The Content-Security-Policy
 * allows nothing but the collector itself: the console loads no script,
 * style, font or image from anywhere else and talks to no other host. */
#include <string.h>
#include "h2o.h"
#include "gsd_console.h"
#include "gsd_respond.h"
#include "gsd_server.h"

static const char policy[] =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
  "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const gs_asset *gsd_console_find(const char *path, size_t len) {
  if ((len == 1 && path[0] == '/') || (len == 9 && !memcmp(path, "/console/", 9)) ||
      (len == 8 && !memcmp(path, "/console", 8))) {
    path = "/console/index.html";
    len = strlen(path);
  }
  if (len > 5 && !memcmp(path, "/api/", 5)) return gs_asset_find(gs_api_assets, path, len);
  return gs_asset_find(gs_console_assets, path, len);
}

static void add_header(h2o_req_t *req, const h2o_token_t *token, const char *value) {
  h2o_add_header(&req->pool, &req->res.headers, token, NULL, value, strlen(value));
}

/* The request's If-None-Match names the asset's current ETag. */
static int still_current(h2o_req_t *req, const gs_asset *a) {
  ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_IF_NONE_MATCH, -1);
  size_t n = strlen(a->etag);
  const char *p, *end;
  if (i < 0) return 0;
  p = req->headers.entries[i].value.base;
  end = p + req->headers.entries[i].value.len;
  for (; p + n <= end; p++)
    if (!memcmp(p, a->etag, n)) return 1;
  return 0;
}

int gsd_console_serve(h2o_req_t *req) {
  size_t len = req->query_at == SIZE_MAX ? req->path.len : req->query_at;
  const gs_asset *a = gsd_console_find(req->path.base, len);
  if (!a) return gsd_respond_error(req, 404, "not_found", "no such resource");
  if (!h2o_memis(req->method.base, req->method.len, H2O_STRLIT("GET")) &&
      !h2o_memis(req->method.base, req->method.len, H2O_STRLIT("HEAD")))
    return gsd_respond_error(req, 405, "bad_request", "the console takes GET and HEAD only");
  add_header(req, H2O_TOKEN_ETAG, a->etag);
  add_header(req, H2O_TOKEN_CACHE_CONTROL, "no-cache");
  h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("x-content-type-options"), 0, NULL,
                        H2O_STRLIT("nosniff"));
  h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("content-security-policy"), 0, NULL,
                        policy, sizeof policy - 1);
  h2o_add_header_by_str(&req->pool, &req->res.headers, H2O_STRLIT("referrer-policy"), 0, NULL,
                        H2O_STRLIT("no-referrer"));
  if (still_current(req, a)) {
    req->res.status = 304;
    req->res.reason = "Not Modified";
    h2o_send_inline(req, "", 0);
    return 0;
  }
  req->res.status = 200;
  req->res.reason = "OK";
  add_header(req, H2O_TOKEN_CONTENT_TYPE, a->type);
  req->res.content_length = a->size;
  /* h2o sends no body for HEAD itself. */
  h2o_send_inline(req, (const char *)a->data, a->size);
  return 0;
}
