/* gs_cmd_capture.c - "gcsnap capture": ask a connected device for a snapshot.
 *
 * Without --wait the collector only confirms the request; with --wait the
 * call returns once the snapshot is stored (or failed), and the command
 * prints the new snapshot's ID and main figures. The HTTP call is given a
 * margin over the collector's own deadline so that the collector, which
 * knows what went wrong, is the one to report a timeout. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_json.h"

#define DEFAULT_TIMEOUT_S 120      /* the API's default */
#define MAX_TIMEOUT_S 86400
#define TIMEOUT_MARGIN_S 30

static const char usage[] =
  "usage: gcsnap capture DEVICE [--wait] [--timeout S] [--stable-ids]\n"
  "                      [--collector URL] [--json]\n"
  "\n"
  "Asks the collector gcsnapd to capture a snapshot of DEVICE, which must\n"
  "be connected. Without --wait, prints the request's ID once the collector\n"
  "accepted it; with --wait, waits until the snapshot is stored and prints\n"
  "its ID and figures. A device that is already capturing refuses.\n"
  "\n"
  "  --wait           wait until the snapshot is stored or has failed\n"
  "  --timeout S      with --wait: give up after S seconds (default 120)\n"
  "  --stable-ids     ask for object IDs that stay the same across snapshots\n"
  "  --collector URL  the collector's HTTP API (default $" GS_COLLECTOR_ENV ",\n"
  "                   else " GS_DEFAULT_COLLECTOR ")\n"
  "  --json           print the API's JSON answer instead of text\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 requested (with --wait: stored), 1 the collector refused\n"
  "or the capture failed (unknown device, not connected, busy, stream\n"
  "failed, timed out), 2 usage error or the collector cannot be reached.\n";

enum { OPT_HELP = 1, OPT_COLLECTOR, OPT_JSON, OPT_WAIT, OPT_TIMEOUT, OPT_STABLE };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"json", 0, 0, OPT_JSON},
  {"wait", 0, 0, OPT_WAIT},
  {"timeout", 0, 1, OPT_TIMEOUT},
  {"stable-ids", 0, 0, OPT_STABLE},
  {NULL, 0, 0, 0},
};

typedef struct capture_args {
  const char *collector, *device;
  uint64_t timeout_s;
  int has_timeout, wait, stable_ids, json, help;
} capture_args;

static char *capture_path(const capture_args *ca) {
  char *dev = gs_http_escape(ca->device);
  size_t n = dev ? strlen(dev) + 128 : 0;
  char *p = dev ? malloc(n) : NULL;
  char sep = '?';
  if (!p) { free(dev); return NULL; }
  snprintf(p, n, "/api/devices/%s/capture", dev);
  free(dev);
  if (ca->wait) { strcat(p, "?wait=1"); sep = '&'; }
  if (ca->has_timeout)
    snprintf(p + strlen(p), n - strlen(p), "%ctimeout=%llu", sep,
             (unsigned long long)ca->timeout_s);
  if (ca->has_timeout) sep = '&';
  if (ca->stable_ids) snprintf(p + strlen(p), n - strlen(p), "%cstable_ids=1", sep);
  return p;
}

/* After a stored capture: one line with the snapshot's figures, from the
 * catalog. Falls back to the bare ID when the catalog cannot be read. */
static void print_stored(const char *url, const capture_args *ca, const json_t *answer) {
  uint64_t id = gs_client_u64(answer, "snapshot_id");
  char path[64], bytes[24], file[24];
  gs_http_reply r;
  snprintf(path, sizeof path, "/api/snapshots/%llu", (unsigned long long)id);
  if (gs_http_get_json(url, path, &r) != 0 || r.status != 200 || !json_is_object(r.json)) {
    printf("Snapshot %llu of %s stored (request %llu).\n", (unsigned long long)id,
           ca->device, (unsigned long long)gs_client_u64(answer, "request_id"));
    gs_http_reply_free(&r);
    return;
  }
  gs_client_fmt_bytes(bytes, sizeof bytes, gs_client_u64(r.json, "bytes"));
  gs_client_fmt_bytes(file, sizeof file, gs_client_u64(r.json, "file_bytes"));
  printf("Snapshot %llu of %s stored (request %llu): %llu objects, %s of heap, "
         "%llu roots, %llu unreachable; %s on disk.\n",
         (unsigned long long)id, ca->device,
         (unsigned long long)gs_client_u64(answer, "request_id"),
         (unsigned long long)gs_client_u64(r.json, "objects"), bytes,
         (unsigned long long)gs_client_u64(r.json, "roots"),
         (unsigned long long)gs_client_u64(r.json, "unreachable"), file);
  gs_http_reply_free(&r);
}

static int parse_args(int argc, char **argv, capture_args *ca) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("capture", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (ca->device) return gs_cli_usage_error("capture", usage, "only one DEVICE is allowed");
      ca->device = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: ca->help = 1; break;
    case OPT_JSON: ca->json = 1; break;
    case OPT_WAIT: ca->wait = 1; break;
    case OPT_STABLE: ca->stable_ids = 1; break;
    case OPT_COLLECTOR: ca->collector = a.value; break;
    case OPT_TIMEOUT:
      if (gs_args_parse_count(a.value, MAX_TIMEOUT_S, &ca->timeout_s) != 0 || ca->timeout_s == 0)
        return gs_cli_usage_error("capture", usage, "--timeout needs a number of seconds, 1-86400");
      ca->has_timeout = 1;
      break;
    }
  }
  if (ca->help) return GS_EXIT_OK;
  if (!ca->device || !*ca->device) return gs_cli_usage_error("capture", usage, "no DEVICE given");
  if (ca->has_timeout && !ca->wait)
    return gs_cli_usage_error("capture", usage, "--timeout only applies with --wait");
  return GS_EXIT_OK;
}

int gs_cmd_capture(int argc, char **argv) {
  capture_args ca;
  const char *url;
  char *path;
  gs_http_reply r;
  long deadline;
  int code, err;
  memset(&ca, 0, sizeof ca);
  if ((code = parse_args(argc, argv, &ca)) != GS_EXIT_OK) return code;
  if (ca.help) return gs_cli_help(usage);
  url = gs_client_url(ca.collector);
  if (!(path = capture_path(&ca))) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  deadline = (long)(ca.has_timeout ? ca.timeout_s : DEFAULT_TIMEOUT_S) + TIMEOUT_MARGIN_S;
  err = gs_http_post_json(url, path, ca.wait ? deadline : 0, &r);
  free(path);
  code = gs_client_check("capture", url, err, &r);
  if (code == GS_EXIT_OK) {
    if (ca.json) {
      if (gs_json_print(r.json)) code = GS_EXIT_USAGE;
    } else if (ca.wait) {
      print_stored(url, &ca, r.json);
    } else {
      printf("Capture of %s requested (request %llu); 'gcsnap snapshots --device %s' "
             "lists it once stored.\n", ca.device,
             (unsigned long long)gs_client_u64(r.json, "request_id"), ca.device);
    }
  }
  gs_http_reply_free(&r);
  return gs_cli_finish(code);
}
