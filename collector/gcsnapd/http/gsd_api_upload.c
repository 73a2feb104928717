/* gsd_api_upload.c - POST /api/devices/ID/snapshots[?note=TEXT]: a heap
 * file (.gclog, .heapsnapshot, .hprof or .gcdump, plain, gzip or zstd) as the
 * body becomes a snapshot of the device.
 *
 * The body is kept as STORE/snapshots/<device>/<id>.upload.tmp, the row
 * inserted as "receiving" (trigger "upload", with its source format and
 * note), and the answer is 202 with the snapshot ID. On the thread pool, a
 * child process (gsd_child.h) reads the file as records, validates them
 * and writes the canonical text as the snapshot's .gclog.zst (only when
 * the whole input is valid); it is then summarized like a captured one and
 * the row turns "complete", or "failed" with the reader's diagnostic. The
 * uploaded file is removed either way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_crc32.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_json.h"
#include "gs_output.h"
#include "gs_validate.h"
#include "gs_writer.h"
#include "gsd_api.h"
#include "gsd_child.h"
#include "gsd_ingest.h"
#include "gsd_log.h"
#include "gsd_metrics.h"
#include "gsd_respond.h"

#define CHILD_ANSWER_MAX 4096

typedef struct upload_job {
  uv_work_t work;
  gsd_server *srv;
  int64_t id;
  char *device, *src_path, *final_path, *shown_name, *summary;
  int rc;
  char err[400];
  gsd_snapshot_end end;
  uint64_t begin_ns;             /* uv_hrtime() at the request, for the metrics */
} upload_job;

/* ---- the conversion, in a child process --------------------------------- */

typedef struct convert {
  gs_output *out;
  uint64_t text_bytes;
  uint32_t crc32;
  gs_diag first_error;
  int failed;
} convert;

static int counted_write(void *ctx, const void *buf, size_t len) {
  convert *c = ctx;
  c->crc32 = gs_crc32(c->crc32, buf, len);
  c->text_bytes += len;
  return gs_output_write(c->out, buf, len);
}

static void on_diag(void *ctx, const gs_diag *d) {
  convert *c = ctx;
  if (c->failed || gs_diag_severity(d->code) != GS_SEV_ERROR) return;
  c->first_error = *d;
  c->failed = 1;
}

/* Every record through the validator to the writer; stops at the first
 * error. Fills fault on failure. */
static int copy_records(gs_file *f, gs_reader *r, gs_validator *v, gs_writer *w, convert *c,
                        gs_file_fault *fault) {
  gs_record rec;
  int err;
  while ((err = gs_reader_next(r, &rec)) == GS_OK && !c->failed) {
    if ((err = gs_validator_record(v, &rec)) || c->failed) break;
    if ((err = gs_writer_record(w, &rec))) return gs_file_fault_text(fault, NULL, err, "cannot write the snapshot");
  }
  if (err == GS_EOF && !c->failed) err = gs_validator_finish(v);
  if (c->failed) return gs_file_fault_set(fault, f, GS_EFORMAT, &c->first_error);
  if (err == GS_EFORMAT) return gs_file_fault_set(fault, f, err, gs_reader_diag(r));
  return err ? gs_file_fault_set(fault, f, err, NULL) : GS_OK;
}

static int convert_fn(void *ctx, json_t **answer, char *why, size_t cap) {
  const upload_job *job = ctx;
  convert c;
  gs_file *f = NULL;
  gs_reader *r = NULL;
  gs_validator *v = NULL;
  gs_writer *w = NULL;
  gs_file_fault fault;
  char msg[300];
  int rc;
  memset(&c, 0, sizeof c);
  if ((rc = gs_file_open_records(job->src_path, &f, &r, &fault)) == GS_OK) {
    if ((rc = gs_output_open(&c.out, job->final_path, msg, sizeof msg)) != GS_OK)
      gs_file_fault_text(&fault, NULL, rc, msg);
    else if (gs_validator_new(&v, on_diag, &c) || gs_writer_new(&w, counted_write, &c))
      rc = gs_file_fault_text(&fault, NULL, GS_ENOMEM, "out of memory");
    else
      gs_writer_set_max_refs(w, gs_file_max_refs());
  }
  if (rc == GS_OK) rc = copy_records(f, r, v, w, &c, &fault);
  if (rc == GS_OK && ((rc = gs_writer_free(w)) || (rc = gs_output_commit(c.out))))
    gs_file_fault_text(&fault, NULL, rc, gs_output_error(c.out));
  else if (rc != GS_OK && w)
    gs_writer_free(w);
  gs_output_close(c.out);
  gs_validator_free(v);
  gs_file_close_dump(f, r);
  if (rc != GS_OK) return gsd_child_fault(&fault, why, cap);
  *answer = json_pack("{sIsI}", "text_bytes", (json_int_t)c.text_bytes, "crc32", (json_int_t)c.crc32);
  return GSD_CHILD_OK;
}

/* Runs convert_fn in a child; sets the text's figures, or err. */
static int convert_upload(upload_job *job) {
  char *out = NULL;
  size_t len = 0, skip;
  int status, rc = gsd_child_run(convert_fn, job, CHILD_ANSWER_MAX, &out, &len, &status);
  json_t *o;
  if (rc != GS_OK) {
    snprintf(job->err, sizeof job->err, "cannot start the conversion");
  } else if (status != GSD_CHILD_OK) {
    /* Said of the upload, not of its temporary file. */
    skip = out && !strncmp(out, job->src_path, strlen(job->src_path)) ? strlen(job->src_path) : 0;
    snprintf(job->err, sizeof job->err, "%s%.300s", skip ? "the uploaded file" : "",
             out ? out + skip : "the conversion failed");
    rc = status == GSD_CHILD_WANTING ? GS_EFORMAT : GS_EIO;
  } else if ((o = json_loadb(out, len, 0, NULL)) != NULL) {
    job->end.text_bytes = (uint64_t)json_integer_value(json_object_get(o, "text_bytes"));
    job->end.crc32 = (uint32_t)json_integer_value(json_object_get(o, "crc32"));
    json_decref(o);
  } else {
    snprintf(job->err, sizeof job->err, "the conversion gave no answer");
    rc = GS_EIO;
  }
  free(out);
  return rc;
}

/* ---- the job ------------------------------------------------------------ */

static void upload_work(uv_work_t *w) {
  upload_job *job = w->data;
  gs_file *f;
  char err[300];
  job->rc = convert_upload(job);
  if (job->rc == GS_OK && gs_file_open(&f, job->final_path, err, sizeof err) == GS_OK) {
    job->end.file_bytes = gs_file_size(f);
    gs_file_close(f);
  }
  if (job->rc == GS_OK)
    job->rc = gsd_ingest_summarize(job->final_path, NULL, job->shown_name, &job->summary, &job->end,
                                   job->err, sizeof job->err);
}

static void free_job(upload_job *job) {
  free(job->device);
  free(job->src_path);
  free(job->final_path);
  free(job->shown_name);
  free(job->summary);
  free(job);
}

static void upload_done(uv_work_t *w, int status) {
  upload_job *job = w->data;
  gsd_store *store = job->srv->store;
  if (status == UV_ECANCELED) {
    job->rc = GS_EIO;
    snprintf(job->err, sizeof job->err, "the collector stopped");
  }
  unlink(job->src_path);
  job->end.summary = job->summary;
  if (job->rc == GS_OK && gsd_store_snapshot_complete(store, job->id, &job->end) != GS_OK) {
    job->rc = GS_EIO;
    snprintf(job->err, sizeof job->err, "%s", gsd_store_error(store));
  }
  gsd_metrics_capture("upload", job->rc == GS_OK);
  if (job->rc == GS_OK) {
    gsd_metrics_stored(job->end.file_bytes, uv_hrtime() - job->begin_ns);
    gsd_log_info("device %s: stored uploaded snapshot %lld: %llu objects", job->device,
                 (long long)job->id, (unsigned long long)job->end.objects);
  } else {
    unlink(job->final_path);
    gsd_log_warn("device %s: uploaded snapshot %lld failed: %s", job->device, (long long)job->id,
                 job->err);
    job->end.summary = NULL;
    gsd_store_snapshot_fail(store, job->id, job->err, &job->end);
  }
  free_job(job);
}

/* STORE/snapshots/<device>/<id>.upload.tmp, from the snapshot's path. */
static char *upload_path(const char *final_path) {
  size_t n = strlen(final_path);
  char *p = malloc(n + 16);
  if (p) snprintf(p, n + 16, "%.*s.upload.tmp", (int)(n - strlen(".gclog.zst")), final_path);
  return p;
}

static int save_body(const char *path, const void *body, size_t len, char *err, size_t cap) {
  FILE *f = fopen(path, "wbx");
  int ok = f && fwrite(body, 1, len, f) == len;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok) {
    snprintf(err, cap, "cannot write '%s'", path);
    unlink(path);
    return GS_EIO;
  }
  return GS_OK;
}

/* The format of the saved upload, by content. */
static void format_of(const char *path, char *out, size_t cap) {
  char err[300];
  gs_file *f;
  snprintf(out, cap, "unknown");
  if (gs_file_open(&f, path, err, sizeof err) == GS_OK) {
    snprintf(out, cap, "%s", gs_file_format(f));
    gs_file_close(f);
  }
}

/* Saves the body, records its format and queues the conversion. */
static int start_job(gsd_server *srv, upload_job *job, const h2o_req_t *req, char *format,
                     size_t format_cap, char *err, size_t cap) {
  char *dev = gsd_store_escape_device(job->device);
  size_t n = (dev ? strlen(dev) : 0) + 64;
  int rc = GS_ENOMEM;
  snprintf(err, cap, "out of memory");
  if (dev && (job->shown_name = malloc(n)) &&
      (job->final_path = gsd_store_snapshot_path(srv->store, job->device, job->id)) &&
      (job->src_path = upload_path(job->final_path))) {
    snprintf(job->shown_name, n, "snapshots/%s/%lld.gclog.zst", dev, (long long)job->id);
    rc = save_body(job->src_path, req->entity.base, req->entity.len, err, cap);
  }
  free(dev);
  if (rc != GS_OK) return rc;
  format_of(job->src_path, format, format_cap);
  if ((rc = gsd_store_snapshot_format(srv->store, job->id, format)) != GS_OK) {
    snprintf(err, cap, "%s", gsd_store_error(srv->store));
  } else {
    job->srv = srv;
    job->work.data = job;
    job->end.wire_bytes = req->entity.len;
    if (uv_queue_work(srv->loop, &job->work, upload_work, upload_done) != 0) {
      snprintf(err, cap, "cannot start the conversion");
      rc = GS_EIO;
    }
  }
  if (rc != GS_OK) unlink(job->src_path);
  return rc;
}

/* Records the "receiving" row (*id) and starts the job. */
static int upload(gsd_server *srv, const h2o_req_t *req, const char *device, const char *note,
                  int64_t *id, char *format, size_t format_cap, char *err, size_t cap) {
  static unsigned counter;
  gsd_snapshot_begin b;
  upload_job *job = calloc(1, sizeof *job);
  int rc;
  if (!job || !(job->device = strdup(device))) {
    free(job);
    snprintf(err, cap, "out of memory");
    return GS_ENOMEM;
  }
  job->begin_ns = uv_hrtime();
  memset(&b, 0, sizeof b);
  b.device_id = device;
  b.trigger = "upload";
  b.note = note;
  /* Uploads have no agent numbering: 2^62 + time and a counter keep them
   * apart from agents' snapshot IDs and from each other. */
  b.agent_snapshot_id = (1ull << 62) | ((uint64_t)uv_now(srv->loop) << 8) | (counter++ & 0xff);
  if ((rc = gsd_store_device_add(srv->store, device)) != GS_OK ||
      (rc = gsd_store_snapshot_begin(srv->store, &b, &job->id)) != GS_OK) {
    snprintf(err, cap, "%s", gsd_store_error(srv->store));
    free_job(job);
    return rc;
  }
  *id = job->id;
  if ((rc = start_job(srv, job, req, format, format_cap, err, cap)) != GS_OK) {
    gsd_metrics_capture("upload", 0);
    gsd_store_snapshot_fail(srv->store, job->id, err, &job->end);
    free_job(job);
  }
  return rc;
}

static int is_text(const char *s, size_t max) {
  size_t n = strlen(s), i;
  if (n > max) return 0;
  for (i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 0;
  return 1;
}

int gsd_api_upload(gsd_server *srv, h2o_req_t *req, const char *device_id) {
  char note[256], format[16], err[400];
  int64_t id;
  int has_note = gsd_query_get(req, "note", note, sizeof note);
  if (has_note <= 0) note[0] = '\0';
  if (!device_id[0] || !is_text(device_id, GSD_DEVICE_ID_MAX) || strpbrk(device_id, "*?[") ||
      has_note < 0 || !is_text(note, sizeof note - 1))
    return gsd_respond_error(req, 400, "bad_request", "the device must be an ID of 1 to %d "
                             "bytes, the note text of up to 255 bytes", GSD_DEVICE_ID_MAX);
  if (req->entity.len == 0)
    return gsd_respond_error(req, 400, "bad_request", "the body must be the heap file");
  if (upload(srv, req, device_id, has_note == 1 ? note : NULL, &id, format, sizeof format, err,
             sizeof err) != GS_OK)
    return gsd_respond_error(req, 500, "internal", "%s", err);
  return gsd_respond_json(req, 202, json_pack("{sIssss}", "id", (json_int_t)id, "status",
                                              "receiving", "source_format", format));
}
