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

int gs_cmd_fetch(int argc, char **argv) {
  fetch_args fa;
  uint64_t bytes = 0;
  int code;
  memset(&fa, 0, sizeof fa);
  if ((code = parse_args(argc, argv, &fa)) != GS_EXIT_OK) return code;
  if (fa.help) return gs_cli_help(usage);
  code = gs_client_fetch("fetch", gs_client_url(fa.collector), fa.id, fa.format, fa.output, &bytes);
  if (code == GS_EXIT_OK && strcmp(fa.output, "-") != 0)
    printf("Snapshot %llu written to %s (%llu bytes, %s).\n", (unsigned long long)fa.id,
           fa.output, (unsigned long long)bytes, fa.format);
  return gs_cli_finish(code);
}
