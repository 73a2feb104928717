/* gs_cmd_fetch.c - "gcsnap fetch": download a stored snapshot into a file.
 *
 * The bytes are streamed from the collector into the output through
 * gs_output, so FILE appears only once the whole snapshot arrived and was
 * synced: a download that is cut short or refused leaves FILE as it was.
 * The zst form is the stored file itself and is written as it comes, never
 * compressed again, whatever FILE is called. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_error.h"
#include "gs_output.h"

static const char usage[] =
  "usage: gcsnap fetch SNAPSHOT -o FILE [--format gclog|zst] [--collector URL]\n"
  "\n"
  "Downloads the stored snapshot with ID SNAPSHOT (see 'gcsnap snapshots')\n"
  "into FILE, as the .gclog text or as the stored .gclog.zst. FILE is written\n"
  "under a temporary name and renamed when complete; - writes to stdout.\n"
  "\n"
  "  -o, --output FILE  where to write the snapshot\n"
  "  --format F         gclog (text) or zst (compressed, as stored); default:\n"
  "                     zst when FILE ends in .zst, else gclog\n"
  "  --collector URL    the collector's HTTP API (default $" GS_COLLECTOR_ENV ",\n"
  "                     else " GS_DEFAULT_COLLECTOR ")\n"
  "  -h, --help         show this help\n"
  "\n"
  "Exit status: 0 written, 1 no such complete snapshot, 2 usage or I/O error\n"
  "or the collector cannot be reached.\n";

enum { OPT_HELP = 1, OPT_COLLECTOR, OPT_OUTPUT, OPT_FORMAT };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"output", 'o', 1, OPT_OUTPUT},
  {"format", 0, 1, OPT_FORMAT},
  {NULL, 0, 0, 0},
};

typedef struct fetch_args {
  const char *collector, *output, *format;
  uint64_t id;
  int has_id, help;
} fetch_args;

typedef struct counted {
  gs_output *out;
  uint64_t bytes;
} counted;

static int counted_write(void *ctx, const void *buf, size_t len) {
  counted *c = ctx;
  c->bytes += len;
  return gs_output_write(c->out, buf, len);
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int parse_args(int argc, char **argv, fetch_args *fa) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("fetch", usage, a.error);
    if (k == GS_ARG_OPERAND) {
      if (fa->has_id) return gs_cli_usage_error("fetch", usage, "only one SNAPSHOT is allowed");
      if (gs_args_parse_count(a.value, INT64_MAX, &fa->id) != 0)
        return gs_cli_usage_error("fetch", usage, "SNAPSHOT is a snapshot ID (a number)");
      fa->has_id = 1;
      continue;
    }
    switch (a.id) {
    case OPT_HELP: fa->help = 1; break;
    case OPT_COLLECTOR: fa->collector = a.value; break;
    case OPT_OUTPUT: fa->output = a.value; break;
    case OPT_FORMAT:
      if (strcmp(a.value, "gclog") != 0 && strcmp(a.value, "zst") != 0)
        return gs_cli_usage_error("fetch", usage, "--format is gclog or zst");
      fa->format = a.value;
      break;
    }
  }
  if (fa->help) return GS_EXIT_OK;
  if (!fa->has_id) return gs_cli_usage_error("fetch", usage, "no SNAPSHOT given");
  if (!fa->output || !*fa->output) return gs_cli_usage_error("fetch", usage, "-o FILE is needed");
  if (!fa->format) fa->format = ends_with(fa->output, ".zst") ? "zst" : "gclog";
  return GS_EXIT_OK;
}

static int download(const fetch_args *fa, const char *url, counted *c) {
  char path[96];
  gs_http_reply r;
  int err, code;
  snprintf(path, sizeof path, "/api/snapshots/%llu/download?format=%s",
           (unsigned long long)fa->id, fa->format);
  err = gs_http_download(url, path, counted_write, c, &r);
  if (err != GS_OK && r.write_failed) gs_cli_error("%s", gs_output_error(c->out));
  code = gs_client_check("fetch", url, err, &r);
  /* A stored snapshot is never empty: an empty 200 is not the collector's. */
  if (code == GS_EXIT_OK && c->bytes == 0) {
    fprintf(stderr, "gcsnap fetch: the collector at %s sent an empty snapshot\n", url);
    code = GS_EXIT_USAGE;
  }
  gs_http_reply_free(&r);
  return code;
}

int gs_cmd_fetch(int argc, char **argv) {
  fetch_args fa;
  counted c = {NULL, 0};
  const char *url;
  char msg[300];
  int code, err;
  memset(&fa, 0, sizeof fa);
  if ((code = parse_args(argc, argv, &fa)) != GS_EXIT_OK) return code;
  if (fa.help) return gs_cli_help(usage);
  url = gs_client_url(fa.collector);
  if (gs_output_open_raw(&c.out, fa.output, msg, sizeof msg)) {
    gs_cli_error("%s", msg);
    return GS_EXIT_USAGE;
  }
  code = download(&fa, url, &c);
  if (code == GS_EXIT_OK && (err = gs_output_commit(c.out)) != GS_OK) {
    gs_cli_error("%s", gs_output_error(c.out)[0] ? gs_output_error(c.out) : gs_strerror(err));
    code = GS_EXIT_USAGE;
  }
  gs_output_close(c.out);
  if (code == GS_EXIT_OK && strcmp(fa.output, "-") != 0)
    printf("Snapshot %llu written to %s (%llu bytes, %s).\n", (unsigned long long)fa.id,
           fa.output, (unsigned long long)c.bytes, fa.format);
  return gs_cli_finish(code);
}
