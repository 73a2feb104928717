/* gsd_api_download.c - GET /api/snapshots/ID/download: the stored file as
 * it is (.gclog.zst, by h2o's file sender, with ranges) or decompressed
 * (.gclog) a chunk at a time, under a file name safe for any system. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_request.h"
#include "gsd_respond.h"

#include "gsd_log.h"

#define DOWNLOAD_CHUNK (64u << 10)

/* A .gclog download: the stored file decompressed a chunk at a time, each
 * when h2o asks for more, so memory stays one chunk per download. */
typedef struct download {
  h2o_generator_t super;
  h2o_req_t *req;
  gs_file *file;
  char buf[DOWNLOAD_CHUNK];
} download;

static void download_close(download *d) {
  gs_file_close(d->file);
  d->file = NULL;
}

static void download_send(download *d) {
  size_t got = 0;
  h2o_iovec_t v;
  if (!d->file || gs_file_read(d->file, d->buf, sizeof d->buf, &got) != GS_OK) {
    if (d->file) gsd_log_warn("download: %s", gs_file_error(d->file));
    download_close(d);
    h2o_send(d->req, NULL, 0, H2O_SEND_STATE_ERROR);
    return;
  }
  v = h2o_iovec_init(d->buf, got);
  if (got == 0) download_close(d);
  h2o_send(d->req, &v, got ? 1 : 0, got ? H2O_SEND_STATE_IN_PROGRESS : H2O_SEND_STATE_FINAL);
}

static void download_proceed(h2o_generator_t *g, h2o_req_t *req) {
  (void)req;
  download_send((download *)g);
}

static void download_stop(h2o_generator_t *g, h2o_req_t *req) {
  (void)req;
  download_close((download *)g);
}

static void download_dispose(void *p) { download_close(p); }

static int send_plain(h2o_req_t *req, const char *path) {
  download *d = h2o_mem_alloc_shared(&req->pool, sizeof *d, download_dispose);
  char err[300];
  d->super.proceed = download_proceed;
  d->super.stop = download_stop;
  d->req = req;
  d->file = NULL;
  if (gs_file_open(&d->file, path, err, sizeof err) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", err);
  req->res.status = 200;
  req->res.reason = "OK";
  h2o_start_response(req, &d->super);
  download_send(d);
  return 0;
}

int gsd_api_download(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char format[16] = "zst", disposition[400], *path = NULL, *dev;
  const char *device;
  int has_format = gsd_query_get(req, "format", format, sizeof format), plain, rc;
  json_t *o;
  int64_t id;
  if (has_format < 0 || (strcmp(format, "zst") && strcmp(format, "gclog")))
    return gsd_respond_error(req, 400, "bad_request", "format must be gclog or zst");
  plain = strcmp(format, "gclog") == 0;
  if (gsd_request_id(id_text, &id)) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(srv->store, id, 0, &o, &path);
  if (rc == GS_EOF) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  if (!path) {
    json_decref(o);
    return gsd_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
  }
  device = json_string_value(json_object_get(o, "device_id"));
  dev = gsd_store_escape_device(device ? device : "");
  snprintf(disposition, sizeof disposition, "attachment; filename=\"%s-%lld.gclog%s\"",
           dev ? dev : "snapshot", (long long)id, plain ? "" : ".zst");
  free(dev);
  json_decref(o);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_DISPOSITION, NULL,
                 disposition, strlen(disposition));
  if (plain) {
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                   H2O_STRLIT("application/octet-stream"));
    rc = send_plain(req, path);
  } else if (h2o_file_send(req, 200, "OK", path, h2o_iovec_init(H2O_STRLIT("application/octet-stream")),
                           0) != 0) {
    rc = gsd_respond_error(req, 500, "internal", "cannot read the file of snapshot %s", id_text);
  } else {
    rc = 0;
  }
  free(path);
  return rc;
}

