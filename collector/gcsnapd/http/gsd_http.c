/* gsd_http.c - the HTTP server of the collector, on h2o over the daemon's
 * libuv loop: listener, TLS, access, and the router of the API's paths to
 * their resources (gsd_api_*.c, gsd_types.c) and of the rest to the web
 * console (gsd_console.c).
 *
 * h2o is the HTTP library: it parses requests, keeps connections alive,
 * speaks HTTP/1.1 and HTTP/2, serves files, and does TLS with OpenSSL;
 * Debian builds it on libuv, so it shares the loop of the agent sessions.
 * One handler on "/" routes the API's few paths itself.
 *
 * Access: with a token configured, every /api request must carry
 * "Authorization: Bearer TOKEN" or is answered 401. The token is compared
 * by its SHA-256 digest with CRYPTO_memcmp, so neither its bytes nor its
 * length show in the time an answer takes. With --http-tls-cert and
 * --http-tls-key the listener speaks TLS (1.2 or later) through h2o's
 * OpenSSL support, HTTP/2 or HTTP/1.1 as ALPN agrees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include "h2o.h"
#include "gs_error.h"
#include "gsd_api.h"
#include "gsd_console.h"
#include "gsd_log.h"
#include "gsd_metrics.h"
#include "gsd_request.h"
#include "gsd_respond.h"
#include "gsd_server.h"

typedef struct api_handler {
  h2o_handler_t super;
  gsd_http *http;
} api_handler;

struct gsd_http {
  gsd_server *srv;
  h2o_globalconf_t config;
  h2o_context_t ctx;
  h2o_accept_ctx_t accept_ctx;
  uv_tcp_t listener;
  int listening, ctx_ready;
  gsd_waiters waiters;                    /* capture requests with wait=1 */
  size_t connections;
  SSL_CTX *ssl_ctx;                       /* NULL for plain HTTP */
  int has_token;
  unsigned char token_digest[SHA256_DIGEST_LENGTH];
};

/* ---- routing ---------------------------------------------------------------------- */

static int is_method(const h2o_req_t *req, const char *m) {
  return req->method.len == strlen(m) && memcmp(req->method.base, m, req->method.len) == 0;
}

/* Everything outside /api is the web console's (gsd_console.c). */
static int is_api_path(const h2o_req_t *req) {
  size_t len = req->query_at == SIZE_MAX ? req->path.len : req->query_at;
  return len >= 4 && !memcmp(req->path.base, "/api", 4) && (len == 4 || req->path.base[4] == '/');
}

/* ---- access ------------------------------------------------------------------------ */

/* Whether the request carries the token: "Bearer" (any case), blanks, the
 * token. Digests of equal length are compared, in constant time. */
static int has_token(const gsd_http *http, const h2o_req_t *req) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  ssize_t i = h2o_find_header(&req->headers, H2O_TOKEN_AUTHORIZATION, -1);
  const char *token;
  size_t len;
  if (i < 0 || !gsd_request_bearer(req->headers.entries[i].value.base,
                                   req->headers.entries[i].value.len, &token, &len))
    return 0;
  SHA256((const unsigned char *)token, len, digest);
  return CRYPTO_memcmp(digest, http->token_digest, sizeof digest) == 0;
}

/* 0 when the request may go on; else it is answered 401 and 1 returned. */
static int refuse_unauthorized(const gsd_http *http, h2o_req_t *req) {
  if (!http->has_token || has_token(http, req)) return 0;
  gsd_log_info("http: %.*s %.*s refused: no valid bearer token", (int)req->method.len,
               req->method.base, (int)req->path.len, req->path.base);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_WWW_AUTHENTICATE, NULL,
                 H2O_STRLIT("Bearer realm=\"gcsnapd\""));
  gsd_respond_error(req, 401, "unauthorized", "this collector needs 'Authorization: "
                         "Bearer TOKEN' (gcsnap --token-file FILE or $GCSNAP_TOKEN)");
  return 1;
}

void gsd_http_capture_done(gsd_http *http, const gsd_capture *cap) {
  gsd_waiters_answer(&http->waiters, cap);
}

/* Splits the path (without the query) into percent-decoded segments. */
static int split_path(const h2o_req_t *req, char seg[][GSD_REQUEST_SEGMENT_MAX], int *nseg) {
  return gsd_request_split(req->path.base, req->path.len, req->query_at, seg, nseg);
}

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
  gsd_http *http = ((api_handler *)self)->http;
  gsd_server *srv = http->srv;
  char seg[GSD_REQUEST_MAX_SEGMENTS][GSD_REQUEST_SEGMENT_MAX];
  /* HEAD is GET without the body (h2o sends none). */
  int n = 0, get = is_method(req, "GET") || is_method(req, "HEAD"), post = is_method(req, "POST");
  if (gsd_metrics_path(req->path.base, req->query_at == SIZE_MAX ? req->path.len : req->query_at))
    return refuse_unauthorized(http, req) ? 0 : gsd_api_metrics(srv, req);
  if (!is_api_path(req)) return gsd_console_serve(req);
  if (refuse_unauthorized(http, req)) return 0;
  if (split_path(req, seg, &n) || n < 2 || strcmp(seg[0], "api"))
    return gsd_respond_error(req, 404, "not_found", "no such resource");
  gsd_log_debug("http: %.*s %.*s", (int)req->method.len, req->method.base, (int)req->path.len,
                req->path.base);
  if (n == 2 && !strcmp(seg[1], "health") && get) return gsd_api_health(srv, req);
  if (n == 2 && !strcmp(seg[1], "openapi.json")) return gsd_console_serve(req);
  if (n == 2 && !strcmp(seg[1], "devices") && get) return gsd_api_devices(srv, req);
  if (n == 2 && !strcmp(seg[1], "snapshots") && get) return gsd_api_snapshots(srv, req);
  if (n == 3 && !strcmp(seg[1], "snapshots") && get) return gsd_api_snapshot(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "download") && get)
    return gsd_api_download(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "snapshots") && post)
    return gsd_api_upload(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "capture") && post)
    return gsd_api_capture(srv, &http->waiters, req, seg[2]);
  if (n == 3 && !strcmp(seg[1], "captures") && get) return gsd_api_capture_status(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "dominators") && get)
    return gsd_api_dominators(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "paths") && get)
    return gsd_api_paths(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "generations") && get)
    return gsd_api_generations(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "progress") && get)
    return gsd_api_progress(srv, req, seg[2]);
  if (n == 4 && !strcmp(seg[1], "snapshots") && !strcmp(seg[3], "types") && get)
    return gsd_api_types(srv, req, seg[2]);
  if (n == 2 && !strcmp(seg[1], "diff") && get) return gsd_api_diff(srv, req);
  if (n == 2 && !strcmp(seg[1], "fleet") && get) return gsd_api_fleet(srv, req);
  if (n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "trend") && get)
    return gsd_api_trend(srv, req, seg[2]);
  if (n == 2 && !strcmp(seg[1], "schedules") && post) return gsd_api_schedule_add(srv, req);
  if (n == 2 && !strcmp(seg[1], "schedules") && get)
    return gsd_api_schedules(srv, req);
  if (n == 3 && !strcmp(seg[1], "schedules") && get) return gsd_api_schedule(srv, req, seg[2]);
  if (n == 3 && !strcmp(seg[1], "schedules") && is_method(req, "DELETE"))
    return gsd_api_schedule_remove(srv, req, seg[2]);
  if ((n == 4 && !strcmp(seg[1], "devices") && !strcmp(seg[3], "capture")) ||
      (n <= 3 && !strcmp(seg[1], "schedules")) ||
      (n >= 2 && n <= 4 && (!strcmp(seg[1], "health") || !strcmp(seg[1], "devices") ||
                            !strcmp(seg[1], "snapshots") || !strcmp(seg[1], "captures"))))
    return gsd_respond_error(req, 405, "bad_request", "method %.*s is not allowed here",
                         (int)req->method.len, req->method.base);
  return gsd_respond_error(req, 404, "not_found", "no such resource");
}

/* ---- server ------------------------------------------------------------------------ */

/* h2o takes the handle's data field for itself: the connection finds its
 * server through the struct around the handle. */
typedef struct http_conn {
  uv_tcp_t tcp;
  gsd_http *http;
} http_conn;

static void on_conn_closed(uv_handle_t *h) {
  http_conn *c = (http_conn *)h;
  c->http->connections--;
  free(c);
}

static void on_accept(uv_stream_t *listener, int status) {
  gsd_http *http = listener->data;
  http_conn *c;
  if (status != 0 || !(c = malloc(sizeof *c))) return;
  uv_tcp_init(listener->loop, &c->tcp);
  c->http = http;
  http->connections++;
  if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0) {
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    return;
  }
  h2o_accept(&http->accept_ctx, h2o_uv_socket_create((uv_stream_t *)&c->tcp, on_conn_closed));
}

static int listen_on(gsd_http *http, const char *addr, char *bound, size_t cap) {
  http->listener.data = http;
  http->listening = 1;
  return gsd_listen(http->srv->loop, &http->listener, addr, on_accept, bound, cap);
}

/* The OpenSSL errors queued by a failed call, after what; the queue is
 * emptied. */
static int tls_fail(char *err, size_t cap, const char *what, const char *file) {
  char detail[256] = "";
  unsigned long e, last = 0;
  while ((e = ERR_get_error()) != 0) last = e;
  if (last) ERR_error_string_n(last, detail, sizeof detail);
  snprintf(err, cap, "%s '%s'%s%s", what, file, detail[0] ? ": " : "", detail);
  return GS_EINVAL;
}

/* The listener's TLS: the certificate chain and key of the settings,
 * TLS 1.2 or later, and ALPN offering h2 and http/1.1. */
static int tls_setup(gsd_http *http, const gsd_config *cfg, char *err, size_t cap) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return tls_fail(err, cap, "cannot set up TLS for", cfg->http_tls_cert);
  http->ssl_ctx = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  /* No close_notify on close: h2o writes it without checking that the write
   * was started, and on a connection the client reset that write fails at
   * once and its callback never comes, so the connection would never be
   * released. HTTP frames its messages, so the alert protects nothing. */
  SSL_CTX_set_quiet_shutdown(ctx, 1);
  if (SSL_CTX_use_certificate_chain_file(ctx, cfg->http_tls_cert) != 1)
    return tls_fail(err, cap, "cannot load the TLS certificate", cfg->http_tls_cert);
  if (SSL_CTX_use_PrivateKey_file(ctx, cfg->http_tls_key, SSL_FILETYPE_PEM) != 1)
    return tls_fail(err, cap, "cannot load the TLS private key", cfg->http_tls_key);
  if (SSL_CTX_check_private_key(ctx) != 1)
    return tls_fail(err, cap, "the TLS private key does not match the certificate",
                    cfg->http_tls_cert);
  h2o_ssl_register_alpn_protocols(ctx, h2o_alpn_protocols);
  http->accept_ctx.ssl_ctx = ctx;
  return GS_OK;
}

int gsd_http_start(gsd_server *srv, const char *addr, char *bound, size_t cap) {
  gsd_http *http = calloc(1, sizeof *http);
  h2o_hostconf_t *host;
  h2o_pathconf_t *path;
  api_handler *h;
  if (!http) {
    snprintf(bound, cap, "out of memory");
    return GS_ENOMEM;
  }
  http->srv = srv;
  srv->http = http;
  h2o_config_init(&http->config);
  host = h2o_config_register_host(&http->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
  path = h2o_config_register_path(host, "/", 0);
  h = (api_handler *)h2o_create_handler(path, sizeof *h);
  h->super.on_req = on_req;
  h->http = http;
  h2o_context_init(&http->ctx, srv->loop, &http->config);
  http->ctx_ready = 1;
  http->accept_ctx.ctx = &http->ctx;
  http->accept_ctx.hosts = http->config.hosts;
  gsd_waiters_init(&http->waiters, srv);
  if (srv->cfg->http_token[0]) {
    SHA256((const unsigned char *)srv->cfg->http_token, strlen(srv->cfg->http_token),
           http->token_digest);
    http->has_token = 1;
  }
  if (srv->cfg->http_tls_cert[0] && tls_setup(http, srv->cfg, bound, cap) != GS_OK)
    return GS_EINVAL;
  return listen_on(http, addr, bound, cap);
}

void gsd_http_stop(gsd_http *http) {
  if (http->listening) {
    uv_close((uv_handle_t *)&http->listener, NULL);
    http->listening = 0;
  }
  gsd_waiters_stop(&http->waiters);
}

size_t gsd_http_connections(const gsd_http *http) { return http->connections; }

void gsd_http_close(gsd_http *http) {
  if (!http->ctx_ready) return;
  h2o_context_dispose(&http->ctx);
  http->ctx_ready = 0;
}

void gsd_http_free(gsd_http *http) {
  if (!http) return;
  /* With connections still open the context cannot be disposed of; the
   * process is ending anyway. */
  if (http->ctx_ready) return;
  h2o_config_dispose(&http->config);
  SSL_CTX_free(http->ssl_ctx);
  OPENSSL_cleanse(http->token_digest, sizeof http->token_digest);
  free(http);
}
