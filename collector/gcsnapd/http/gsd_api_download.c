/* gsd_api_download.c - GET /api/snapshots/ID/download: the stored file as
 * it is (.gclog.zst) or decompressed (.gclog) a chunk at a time, under a
 * file name safe for any system, checked against its catalog row as it
 * streams, or its generation ranges (format=gens, the side file beside it,
 * gs_genfile.h); and the size check every route makes before it uses a
 * file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "h2o.h"
#include "gs_check.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_genfile.h"
#include "gs_json.h"
#include "gsd_api.h"
#include "gsd_log.h"
#include "gsd_request.h"
#include "gsd_respond.h"

#define DOWNLOAD_CHUNK (64u << 10)
#define GENS_MAX_BYTES (16u << 20)  /* above GS_GENFILE_MAX ranges and the statics' bound */

/* ---- store files --------------------------------------------------------- */

/* A store file that disagrees with its row: logged, marked in the catalog. */
static void report_damaged(gsd_server *srv, int64_t id, const char *path, const char *why) {
  gsd_log_error("snapshot %lld: the stored file %s is damaged: %s", (long long)id, path, why);
  if (gsd_store_mark_damaged(srv->store, id, why) != GS_OK)
    gsd_log_error("%s", gsd_store_error(srv->store));
}

static gs_check_expect expected_of(const json_t *row) {
  gs_check_expect e;
  e.file_bytes = (uint64_t)json_integer_value(json_object_get(row, "file_bytes"));
  e.text_bytes = (uint64_t)json_integer_value(json_object_get(row, "text_bytes"));
  e.crc32 = (uint32_t)json_integer_value(json_object_get(row, "crc32"));
  return e;
}

int gsd_api_check_size(gsd_server *srv, h2o_req_t *req, int64_t id, const json_t *row,
                       const char *path) {
  struct stat st;
  char why[200];
  uint64_t want = expected_of(row).file_bytes;
  if (stat(path, &st) != 0)
    snprintf(why, sizeof why, "cannot read it: %s", strerror(errno));
  else if ((uint64_t)st.st_size != want)
    snprintf(why, sizeof why, "a file of %llu bytes where the catalog says %llu",
             (unsigned long long)st.st_size, (unsigned long long)want);
  else
    return 0;
  report_damaged(srv, id, path, why);
  gsd_respond_error(req, 500, "corrupt", "snapshot %lld is damaged in the store: %s", (long long)id, why);
  return -1;
}

/* ---- download ------------------------------------------------------------ */

/* A download: the stored file (as it is, or decompressed) a chunk at a time,
 * each when h2o asks for more, so memory stays one chunk per download; the
 * bytes go through a gs_check, and a file that turns out not to be the
 * snapshot ends the response in error rather than completing it. */
typedef struct download {
  h2o_generator_t super;
  h2o_req_t *req;
  gsd_server *srv;
  int64_t id;
  char *path;
  gs_file *file;             /* decompressed, for .gclog */
  FILE *raw;                 /* as stored, for .zst */
  uint64_t left;             /* bytes of raw still to send */
  gs_check *check;
  char buf[DOWNLOAD_CHUNK];
} download;

static void download_close(download *d) {
  gs_file_close(d->file);
  if (d->raw) fclose(d->raw);
  gs_check_free(d->check);
  free(d->path);
  d->file = NULL;
  d->raw = NULL;
  d->check = NULL;
  d->path = NULL;
}

static int download_read(download *d, size_t *got) {
  if (d->raw) {
    *got = fread(d->buf, 1, d->left < sizeof d->buf ? (size_t)d->left : sizeof d->buf, d->raw);
    d->left -= *got;
    return ferror(d->raw) ? GS_EIO : GS_OK;
  }
  if (gs_file_read(d->file, d->buf, sizeof d->buf, got) == GS_OK) return GS_OK;
  gsd_log_warn("download of snapshot %lld: %s", (long long)d->id, gs_file_error(d->file));
  return GS_EFORMAT;
}

/* With a Content-Length, the last bytes go out with the end of the
 * response: an HTTP/2 stream whose declared length was reached cannot be
 * ended by a later empty send, and its connection would stay open. */
static void download_send(download *d) {
  size_t got = 0;
  h2o_iovec_t v;
  int rc = d->check ? download_read(d, &got) : GS_EIO, last;
  if (rc == GS_OK && got) rc = gs_check_feed(d->check, d->buf, got);
  last = got == 0 || (d->raw && d->left == 0);
  if (rc == GS_OK && last) rc = gs_check_finish(d->check);
  if (rc != GS_OK) {
    if (d->check && (rc == GS_EFORMAT || gs_check_error(d->check)[0]))
      report_damaged(d->srv, d->id, d->path,
                     gs_check_error(d->check)[0] ? gs_check_error(d->check) : "not valid zstd data");
    download_close(d);
    h2o_send(d->req, NULL, 0, H2O_SEND_STATE_ERROR);
    return;
  }
  v = h2o_iovec_init(d->buf, got);
  if (last) download_close(d);
  h2o_send(d->req, &v, got ? 1 : 0, last ? H2O_SEND_STATE_FINAL : H2O_SEND_STATE_IN_PROGRESS);
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

/* Takes path. */
static int send_file(gsd_server *srv, h2o_req_t *req, int64_t id, char *path, const json_t *row,
                     int plain) {
  download *d = h2o_mem_alloc_shared(&req->pool, sizeof *d, download_dispose);
  gs_check_expect want = expected_of(row);
  char err[300] = "out of memory";
  memset(d, 0, sizeof *d);
  d->super.proceed = download_proceed;
  d->super.stop = download_stop;
  d->req = req;
  d->srv = srv;
  d->id = id;
  d->path = path;
  if (gs_check_new(&d->check, &want, !plain) != GS_OK ||
      (plain ? gs_file_open(&d->file, path, err, sizeof err) != GS_OK
             : !(d->raw = fopen(path, "rb")) && snprintf(err, sizeof err, "%s: %s", path, strerror(errno)))) {
    download_close(d);
    return gsd_respond_error(req, 500, "internal", "%s", err);
  }
  req->res.status = 200;
  req->res.reason = "OK";
  if (!plain) req->res.content_length = d->left = want.file_bytes;
  h2o_start_response(req, &d->super);
  download_send(d);
  return 0;
}

/* The side file of the snapshot at path, as it is (the answer copies it);
 * 404 when it has none. */
static int send_gens(h2o_req_t *req, const char *path, const char *id_text) {
  char *side = gs_genfile_path(path), *body = malloc(GENS_MAX_BYTES + 1);
  FILE *f = side && body ? fopen(side, "rb") : NULL;
  size_t n = f ? fread(body, 1, GENS_MAX_BYTES + 1, f) : 0;
  int rc, missing = side && body && !f, failed = !f || ferror(f) || n > GENS_MAX_BYTES;
  if (f) fclose(f);
  if (missing) rc = gsd_respond_error(req, 404, "not_found", "snapshot %s has no generation ranges", id_text);
  else if (failed) rc = gsd_respond_error(req, 500, "internal", "cannot read the generation ranges of snapshot %s", id_text);
  else rc = gsd_respond_text(req, 200, body, n);
  free(side);
  free(body);
  return rc;
}

int gsd_api_download(gsd_server *srv, h2o_req_t *req, const char *id_text) {
  char format[16] = "zst", disposition[400], *path = NULL, *dev;
  const char *device;
  int has_format = gsd_query_get(req, "format", format, sizeof format), plain, rc;
  json_t *o;
  int64_t id;
  if (has_format < 0 || (strcmp(format, "zst") && strcmp(format, "gclog") && strcmp(format, "gens")))
    return gsd_respond_error(req, 400, "bad_request", "format must be gclog, zst or gens");
  plain = strcmp(format, "gclog") == 0;
  if (gsd_request_id(id_text, &id)) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  rc = gsd_store_get_snapshot(srv->store, id, 0, &o, &path);
  if (rc == GS_EOF) return gsd_respond_error(req, 404, "not_found", "no snapshot %s", id_text);
  if (rc != GS_OK) return gsd_respond_error(req, 500, "internal", "%s", gsd_store_error(srv->store));
  if (!path || gsd_api_check_size(srv, req, id, o, path)) {
    json_decref(o);
    if (!path) return gsd_respond_error(req, 404, "not_found", "snapshot %s failed: nothing is stored", id_text);
    free(path);
    return 0;
  }
  if (!strcmp(format, "gens")) {
    rc = send_gens(req, path, id_text);
    json_decref(o);
    free(path);
    return rc;
  }
  device = json_string_value(json_object_get(o, "device_id"));
  dev = gsd_store_escape_device(device ? device : "");
  snprintf(disposition, sizeof disposition, "attachment; filename=\"%s-%lld.gclog%s\"",
           dev ? dev : "snapshot", (long long)id, plain ? "" : ".zst");
  free(dev);
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_DISPOSITION, NULL,
                 disposition, strlen(disposition));
  h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL,
                 H2O_STRLIT("application/octet-stream"));
  rc = send_file(srv, req, id, path, o, plain);
  json_decref(o);
  return rc;
}
