/* gs_cmd_upload.c - "gcsnap upload": a heap file into the collector's store.
 *
 * The file is streamed as the body of POST /api/devices/ID/snapshots; the
 * collector answers at once with the new snapshot's ID and converts,
 * validates and summarizes it on its own, so this command then follows
 * GET /api/snapshots/ID until the snapshot is complete or failed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_error.h"
#include "gs_json.h"

#define POLL_NS 200000000L
#define DEFAULT_TIMEOUT_S 600

static const char usage[] =
  "usage: gcsnap upload FILE --device ID [--note TEXT] [--timeout S] [--json]\n"
  "                     [--collector URL]\n"
  "\n"
  "Stores FILE in the collector as a snapshot of device ID, validated and\n"
  "summarized like a captured one, with its source format recorded. FILE is\n"
  "a .gclog, a V8 .heapsnapshot, an HPROF dump or a .gcdump, plain, gzip or\n"
  "zstd (told apart by content). The device need not have connected. Waits until\n"
  "the collector has stored it or refused it.\n"
  "\n"
  "  --device ID        the device the snapshot belongs to\n"
  "  --note TEXT        a note kept with the snapshot\n"
  "  --timeout S        give up waiting after S seconds (default 600)\n"
  "  --json             print the snapshot's catalog entry as JSON\n"
  "  --collector URL    the collector's HTTP API (default $" GS_COLLECTOR_ENV ",\n"
  "                     else " GS_DEFAULT_COLLECTOR ")\n"
  "  -h, --help         show this help\n"
  "\n"
  "Exit status: 0 stored, 1 the file is invalid (the collector's reason is\n"
  "printed), 2 usage or I/O error, the collector cannot be reached, or the\n"
  "wait timed out.\n";

enum { OPT_HELP = 1, OPT_COLLECTOR, OPT_DEVICE, OPT_NOTE, OPT_TIMEOUT, OPT_JSON };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"device", 0, 1, OPT_DEVICE},
  {"note", 0, 1, OPT_NOTE},
  {"timeout", 0, 1, OPT_TIMEOUT},
  {"json", 0, 0, OPT_JSON},
  {NULL, 0, 0, 0},
};

typedef struct upload_args {
  const char *collector, *device, *note, *file;
  uint64_t timeout_s;
  int help, json;
} upload_args;

static int parse_args(int argc, char **argv, upload_args *ua) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  ua->timeout_s = DEFAULT_TIMEOUT_S;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("upload", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (ua->file) return gs_cli_usage_error("upload", usage, "only one FILE is allowed");
      ua->file = a.value;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: ua->help = 1; break;
    case OPT_COLLECTOR: ua->collector = a.value; break;
    case OPT_DEVICE: ua->device = a.value; break;
    case OPT_NOTE: ua->note = a.value; break;
    case OPT_JSON: ua->json = 1; break;
    case OPT_TIMEOUT:
      if (gs_args_parse_count(a.value, 86400, &ua->timeout_s) || ua->timeout_s == 0)
        return gs_cli_usage_error("upload", usage, "--timeout takes 1 to 86400 seconds");
      break;
    }
  }
  if (ua->help) return GS_EXIT_OK;
  if (!ua->file) return gs_cli_usage_error("upload", usage, "no FILE given");
  if (!strcmp(ua->file, "-"))
    return gs_cli_usage_error("upload", usage, "FILE must be a file: its size is sent first");
  if (!ua->device || !*ua->device) return gs_cli_usage_error("upload", usage, "--device ID is needed");
  return GS_EXIT_OK;
}

/* "/api/devices/ID/snapshots?note=TEXT", escaped; free() it. */
static char *upload_path(const upload_args *ua) {
  char *dev = gs_http_escape(ua->device), *note = ua->note ? gs_http_escape(ua->note) : NULL;
  size_t n = (dev ? strlen(dev) : 0) + (note ? strlen(note) : 0) + 64;
  char *p = dev && (note || !ua->note) ? malloc(n) : NULL;
  if (p) snprintf(p, n, "/api/devices/%s/snapshots%s%s", dev, note ? "?note=" : "", note ? note : "");
  free(dev);
  free(note);
  return p;
}

/* Sends the file; *id gets the new snapshot's ID. Returns the exit code. */
static int send_file(const upload_args *ua, const char *url, uint64_t *id) {
  gs_http_reply r;
  struct stat st;
  char *path;
  FILE *f = fopen(ua->file, "rb");
  int err, code;
  if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
    gs_cli_error("upload: cannot read '%s': %s", ua->file,
                 f ? "not a regular file" : strerror(errno));
    if (f) fclose(f);
    return GS_EXIT_USAGE;
  }
  if (!(path = upload_path(ua))) {
    fclose(f);
    gs_cli_error("upload: out of memory");
    return GS_EXIT_USAGE;
  }
  err = gs_http_post_file(url, path, f, (uint64_t)st.st_size, &r);
  fclose(f);
  free(path);
  if ((code = gs_client_check("upload", url, err, &r)) == GS_EXIT_OK)
    *id = gs_client_u64(r.json, "id");
  gs_http_reply_free(&r);
  return code;
}

/* Follows the snapshot until it is complete or failed (the API answers 404
 * while it is being stored); *entry gets it. */
static int wait_stored(const upload_args *ua, const char *url, uint64_t id, json_t **entry) {
  struct timespec pause = {0, POLL_NS};
  time_t deadline = time(NULL) + (time_t)ua->timeout_s;
  char path[64];
  snprintf(path, sizeof path, "/api/snapshots/%llu", (unsigned long long)id);
  for (;;) {
    gs_http_reply r;
    int err = gs_http_get_json(url, path, &r), code;
    int receiving = err == GS_OK && r.status == 404;
    if (!receiving && (code = gs_client_check("upload", url, err, &r)) != GS_EXIT_OK) {
      gs_http_reply_free(&r);
      return code;
    }
    if (!receiving && strcmp(gs_client_str(r.json, "status"), "receiving") != 0) {
      *entry = json_incref(r.json);
      gs_http_reply_free(&r);
      return GS_EXIT_OK;
    }
    gs_http_reply_free(&r);
    if (time(NULL) >= deadline) {
      gs_cli_error("upload: snapshot %llu is still being stored after %llu s",
                   (unsigned long long)id, (unsigned long long)ua->timeout_s);
      return GS_EXIT_USAGE;
    }
    nanosleep(&pause, NULL);
  }
}

static int report(const upload_args *ua, uint64_t id, json_t *e) {
  int stored = strcmp(gs_client_str(e, "status"), "complete") == 0;
  if (ua->json) {
    char *s = json_dumps(e, JSON_INDENT(2));
    if (s) puts(s);
    free(s);
  } else if (stored) {
    printf("Snapshot %llu of %s stored from %s (%s): %llu objects, %llu bytes, %llu roots.\n",
           (unsigned long long)id, ua->device, ua->file, gs_client_str(e, "source_format"),
           (unsigned long long)gs_client_u64(e, "objects"),
           (unsigned long long)gs_client_u64(e, "bytes"),
           (unsigned long long)gs_client_u64(e, "roots"));
  }
  if (!stored)
    gs_cli_error("upload: the collector refused %s (snapshot %llu): %s", ua->file,
                 (unsigned long long)id, gs_client_str(e, "reason"));
  return stored ? GS_EXIT_OK : GS_EXIT_INVALID;
}

int gs_cmd_upload(int argc, char **argv) {
  upload_args ua;
  uint64_t id = 0;
  json_t *entry = NULL;
  const char *url;
  int code;
  memset(&ua, 0, sizeof ua);
  if ((code = parse_args(argc, argv, &ua)) != GS_EXIT_OK) return code;
  if (ua.help) return gs_cli_help(usage);
  url = gs_client_url(ua.collector);
  if ((code = send_file(&ua, url, &id)) == GS_EXIT_OK &&
      (code = wait_stored(&ua, url, id, &entry)) == GS_EXIT_OK)
    code = report(&ua, id, entry);
  json_decref(entry);
  return gs_cli_finish(code);
}
