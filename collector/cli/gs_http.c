/* gs_http.c - the HTTP calls the client commands make to the collector.
 *
 * Each call sets up one curl easy handle and does one blocking transfer:
 * the commands make one or two calls each, so connection reuse would buy
 * nothing. A connection that cannot be made fails in seconds rather than
 * hang a script; a download has no overall deadline (snapshots can be
 * large) but gives up when the data stops flowing.
 *
 * Every call carries the token and trusts the CA file set by the global
 * options (gs_client.c); https:// certificates are always verified.
 *
 * libcurl is bound on the first call (gs_dl.h): the commands that never
 * reach a collector do not load it. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include "gs_dl.h"
#include "gs_error.h"
#include "gs_http.h"

#ifndef GS_VERSION
#define GS_VERSION "0.0.0"
#endif

#define CONNECT_TIMEOUT_S 5
#define JSON_TIMEOUT_S 60
#define STALL_SECONDS 60          /* a download slower than 1 byte/s for this long fails */
#define MAX_BODY (64u << 20)      /* a JSON answer larger than this is not the collector's */

typedef struct transfer {
  CURL *curl;
  gs_http_reply *reply;
  gs_write_fn fn;                 /* downloads only */
  void *ctx;
  size_t cap;
  FILE *body;                     /* uploads only: the request body */
  uint64_t body_size;
} transfer;

static const char *bearer_token;   /* gs_http_set_token */
static const char *ca_file;        /* gs_http_set_cacert */

void gs_http_set_token(const char *token) { bearer_token = token; }
void gs_http_set_cacert(const char *path) { ca_file = path; }

/* The libcurl functions used here, by their names without "curl_" (which
 * curl.h makes macros of, for its type checks). */
typedef struct libcurl_api {
  CURLcode (*global_init)(long flags);
  void (*global_cleanup)(void);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
  CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
  CURLcode (*easy_perform)(CURL *curl);
  const char *(*easy_strerror)(CURLcode code);
  void (*easy_cleanup)(CURL *curl);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *data);
  void (*slist_free_all)(struct curl_slist *list);
} libcurl_api;

static libcurl_api libcurl;

#define LIBCURL_SONAME "libcurl.so.4"   /* Debian package libcurl4 */
#define SYM(f) {"curl_" #f, offsetof(libcurl_api, f)}

static void global_cleanup(void) { libcurl.global_cleanup(); }

/* Binds libcurl and initializes it, once; GS_OK, or GS_EIO with r->error. */
static int global_init(gs_http_reply *r) {
  static const gs_dl_sym syms[] = {
    SYM(global_init), SYM(global_cleanup), SYM(easy_init), SYM(easy_setopt), SYM(easy_getinfo),
    SYM(easy_perform), SYM(easy_strerror), SYM(easy_cleanup), SYM(slist_append),
    SYM(slist_free_all),
  };
  static int done;
  char err[256];
  if (done) return GS_OK;
  if (gs_dl_bind(LIBCURL_SONAME, syms, sizeof syms / sizeof syms[0], &libcurl, err, sizeof err)) {
    snprintf(r->error, sizeof r->error, "libcurl: %s (install libcurl4)", err);
    return GS_EIO;
  }
  if (libcurl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return GS_ENOMEM;
  atexit(global_cleanup);
  done = 1;
  return GS_OK;
}

static int keep_body(transfer *t, const char *data, size_t len) {
  gs_http_reply *r = t->reply;
  if (r->body_len + len + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    char *p;
    while (cap < r->body_len + len + 1) cap *= 2;
    if (cap > MAX_BODY) return -1;
    if (!(p = realloc(r->body, cap))) return -1;
    r->body = p;
    t->cap = cap;
  }
  memcpy(r->body + r->body_len, data, len);
  r->body_len += len;
  r->body[r->body_len] = '\0';
  return 0;
}

static size_t on_data(char *data, size_t size, size_t n, void *ctx) {
  transfer *t = ctx;
  size_t len = size * n;
  long status = 0;
  if (t->fn) {
    libcurl.easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200) {
      if (t->fn(t->ctx, data, len) == GS_OK) return len;
      t->reply->write_failed = 1;
      return 0;                   /* makes curl stop with CURLE_WRITE_ERROR */
    }
  }
  return keep_body(t, data, len) == 0 ? len : 0;
}

/* curl's own buffer says most ("Failed to connect to 127.0.0.1 port 7411
 * after 0 ms: Connection refused"); its code's text is the fallback. */
static int fail(gs_http_reply *r, const char *what, const char *detail) {
  snprintf(r->error, sizeof r->error, "%s", detail[0] ? detail : what);
  return GS_EIO;
}

/* Sets up the handle shared by every call; returns it or NULL. */
static CURL *new_handle(const char *url, transfer *t, char *errbuf) {
  CURL *c = libcurl.easy_init();
  if (!c) return NULL;
  libcurl.easy_setopt(c, CURLOPT_URL, url);
  libcurl.easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  libcurl.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  libcurl.easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
  libcurl.easy_setopt(c, CURLOPT_USERAGENT, "gcsnap/" GS_VERSION);
  libcurl.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  libcurl.easy_setopt(c, CURLOPT_WRITEDATA, t);
  /* The collector speaks HTTP, or HTTPS with its own certificate; never
   * follow a redirect elsewhere (the token would go along) or go through a
   * proxy meant for the internet. */
  libcurl.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  libcurl.easy_setopt(c, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
  if (ca_file) libcurl.easy_setopt(c, CURLOPT_CAINFO, ca_file);
  t->curl = c;
  return c;
}

/* The Authorization header, as curl takes it; NULL without a token or
 * when out of memory (*oom set). */
static struct curl_slist *auth_header(int *oom) {
  struct curl_slist *list;
  size_t n;
  char *h;
  *oom = 0;
  if (!bearer_token) return NULL;
  n = strlen(bearer_token) + sizeof "Authorization: Bearer ";
  if (!(h = malloc(n))) { *oom = 1; return NULL; }
  snprintf(h, n, "Authorization: Bearer %s", bearer_token);
  list = libcurl.slist_append(NULL, h);
  free(h);
  if (!list) *oom = 1;
  return list;
}

static int perform(const char *base, const char *path, transfer *t,
                   void (*setup)(CURL *, long), long arg) {
  gs_http_reply *r = t->reply;
  char errbuf[CURL_ERROR_SIZE] = "";
  size_t n = strlen(base) + strlen(path) + 1;
  char *url = malloc(n);
  CURL *c;
  CURLcode rc;
  struct curl_slist *headers;
  int err = GS_OK, oom;
  memset(r, 0, sizeof *r);
  if (!url) return GS_ENOMEM;
  if ((err = global_init(r)) != GS_OK) {
    free(url);
    return err;
  }
  snprintf(url, n, "%s%s", base, path);
  headers = auth_header(&oom);
  if (oom || !(c = new_handle(url, t, errbuf))) {
    libcurl.slist_free_all(headers);
    free(url);
    return GS_ENOMEM;
  }
  if (headers) libcurl.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  setup(c, arg);
  if (t->body) {
    libcurl.easy_setopt(c, CURLOPT_POST, 1L);
    libcurl.easy_setopt(c, CURLOPT_READDATA, t->body);
    libcurl.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)t->body_size);
  }
  rc = libcurl.easy_perform(c);
  libcurl.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
  if (rc != CURLE_OK && !r->write_failed)
    err = fail(r, libcurl.easy_strerror(rc), errbuf);
  else if (rc != CURLE_OK)
    err = fail(r, "cannot write the output", "");
  libcurl.easy_cleanup(c);
  libcurl.slist_free_all(headers);
  free(url);
  if (err == GS_OK && r->body) r->json = json_loadb(r->body, r->body_len, 0, NULL);
  return err;
}

static void setup_get(CURL *c, long timeout_s) {
  libcurl.easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
}

static void setup_post(CURL *c, long timeout_s) {
  libcurl.easy_setopt(c, CURLOPT_POST, 1L);
  libcurl.easy_setopt(c, CURLOPT_POSTFIELDS, "");
  libcurl.easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
  libcurl.easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
}

static void setup_delete(CURL *c, long timeout_s) {
  libcurl.easy_setopt(c, CURLOPT_CUSTOMREQUEST, "DELETE");
  libcurl.easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
}

static void setup_download(CURL *c, long unused) {
  (void)unused;
  libcurl.easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  libcurl.easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)STALL_SECONDS);
}

int gs_http_get_json(const char *base, const char *path, gs_http_reply *r) {
  transfer t = {NULL, r, NULL, NULL, 0, NULL, 0};
  return perform(base, path, &t, setup_get, JSON_TIMEOUT_S);
}

int gs_http_post_json(const char *base, const char *path, long timeout_s,
                      gs_http_reply *r) {
  transfer t = {NULL, r, NULL, NULL, 0, NULL, 0};
  return perform(base, path, &t, setup_post, timeout_s > 0 ? timeout_s : JSON_TIMEOUT_S);
}

int gs_http_delete_json(const char *base, const char *path, gs_http_reply *r) {
  transfer t = {NULL, r, NULL, NULL, 0, NULL, 0};
  return perform(base, path, &t, setup_delete, JSON_TIMEOUT_S);
}

int gs_http_download(const char *base, const char *path, gs_write_fn fn, void *ctx,
                     gs_http_reply *r) {
  transfer t = {NULL, r, fn, ctx, 0, NULL, 0};
  return perform(base, path, &t, setup_download, 0);
}

int gs_http_post_file(const char *base, const char *path, FILE *body, uint64_t size,
                      gs_http_reply *r) {
  transfer t = {NULL, r, NULL, NULL, 0, body, size};
  return perform(base, path, &t, setup_download, 0);
}

void gs_http_reply_free(gs_http_reply *r) {
  json_decref(r->json);
  free(r->body);
  r->json = NULL;
  r->body = NULL;
  r->body_len = 0;
}

char *gs_http_escape(const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  size_t n = strlen(s);
  char *out = malloc(n * 3 + 1), *q = out;
  if (!out) return NULL;
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
        ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      *q++ = (char)ch;
    } else {
      *q++ = '%';
      *q++ = hex[ch >> 4];
      *q++ = hex[ch & 15];
    }
  }
  *q = '\0';
  return out;
}
