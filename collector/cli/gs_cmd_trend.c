/* gs_cmd_trend.c - "gcsnap trend": leak suspects across a series of snapshots.
 *
 * Snapshots of one application, oldest first. A type is a suspect when its
 * instance count grew in every interval, or when its bytes grew by more
 * than a threshold from the first snapshot to the last; suspects are ranked
 * by bytes gained. For each, the last snapshot says what holds its
 * instances: the group of roots and first hops that keeps most of them
 * alive, with the shortest path of one instance. When every snapshot was
 * taken with stable object IDs (sections named "... [stable-ids]"), the
 * objects alive in all of them are counted too: what was never freed. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_genfile.h"
#include "gs_gens.h"
#include "gs_json.h"
#include "gs_trend.h"

#define DEFAULT_TOP 10
#define DEFAULT_THRESHOLD 20
#define MAX_FILES 1000

static const char usage[] =
  "usage: gcsnap trend [--top N] [--threshold PCT] [--old-only] [--json] FILE FILE...\n"
  "       gcsnap trend --device ID [--last N] [--collector URL] [--top N] ...\n"
  "\n"
  "Reads snapshots of one application, oldest first, and lists the types\n"
  "that look like leaks: their count grew in every interval, or their bytes\n"
  "grew by more than PCT percent from the first snapshot to the last. For\n"
  "each, the roots and first hop that hold most of its instances in the last\n"
  "snapshot, with one shortest path. When all snapshots have stable object\n"
  "IDs (gcsnap-agent --stable-ids), also the objects alive in every one.\n"
  "\n"
  "  --top N          list N suspects (default 10, 0 = all)\n"
  "  --threshold PCT  bytes growth that makes a suspect (default 20)\n"
  "  --old-only       count only the objects of generation 2 and the large\n"
  "                   object heap, the long-lived ones, placed by the generation\n"
  "                   ranges in FILE.gens.json beside each FILE (as the\n"
  "                   collector keeps them; with --device, fetched with them)\n"
  "  --json           print one JSON object instead of text\n"
  "  --device ID      the device's last N complete snapshots at the collector\n"
  "                   (fetched to a temporary folder, removed afterwards)\n"
  "  --last N         how many (default 10, at least 2)\n"
  "  --collector URL  the collector (default $GCSNAP_COLLECTOR, else\n"
  "                   http://127.0.0.1:7411)\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 done, 1 a file is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_TOP, OPT_THRESHOLD, OPT_JSON, OPT_DEVICE, OPT_LAST, OPT_COLLECTOR, OPT_OLD };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"top", 0, 1, OPT_TOP},
  {"threshold", 0, 1, OPT_THRESHOLD},
  {"json", 0, 0, OPT_JSON},
  {"device", 0, 1, OPT_DEVICE},
  {"last", 0, 1, OPT_LAST},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"old-only", 0, 0, OPT_OLD},
  {NULL, 0, 0, 0},
};

typedef struct trend_args {
  int help, json, old_only;
  uint64_t top, threshold, last;
  const char *device, *collector;
  char folder[256];                /* --device: where the snapshots were fetched */
  const char **paths;
  int npaths;
} trend_args;

/* ---- output ------------------------------------------------------------ */

static void print_series(const uint64_t *v, int n) {
  int i;
  for (i = 0; i < n; i++) printf("%s%" PRIu64, i ? " -> " : "", v[i]);
}

static void print_text(const gs_trend *t) {
  size_t i, k;
  printf("%d snapshots, %s -> %s\n", t->nfiles, t->sums[0].name, t->sums[t->nfiles - 1].name);
  printf("  Bytes    ");
  for (i = 0; i < (size_t)t->nfiles; i++) printf("%s%" PRIu64, i ? " -> " : "", t->sums[i].total.bytes);
  printf("\n\nLeak suspects (%zu):\n", t->nsuspects);
  for (i = 0; i < t->nsuspects; i++) {
    const gs_trend_series *s = t->suspects[i];
    printf("\n  %zu. %s: %+" PRId64 " bytes%s\n     count ", i + 1, s->name, s->gained,
           s->every ? ", grew in every interval" : "");
    print_series(s->count, t->nfiles);
    printf("\n     bytes ");
    print_series(s->bytes, t->nfiles);
    printf("\n");
    if (!s->held) continue;
    printf("     %" PRIu64 " of them held by a %s root%s%.200s of type %s through %s, e.g.:\n",
           s->held_count, s->root_kind, s->root_field ? " field " : "",
           s->root_field ? s->root_field : "", s->root_type, s->hop_type);
    for (k = 0; k < json_array_size(s->path); k++) {
      json_t *n = json_array_get(s->path, k);
      if (json_object_get(n, "elided"))
        printf("       %*s... %" PRId64 " more objects on this path ...\n", (int)(2 * k), "",
               (int64_t)json_integer_value(json_object_get(n, "elided")));
      else
        printf("       %*s%s  %s\n", (int)(2 * k), "", json_string_value(json_object_get(n, "id")),
               json_string_value(json_object_get(n, "type")));
    }
  }
  if (t->stable)
    printf("\nObjects alive in every snapshot (stable IDs): %" PRIu64 " (%" PRIu64 " bytes)\n",
           t->survivors, t->survivor_bytes);
}

/* ---- command ----------------------------------------------------------- */

static int parse_args(int argc, char **argv, trend_args *ta) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  ta->top = DEFAULT_TOP;
  ta->threshold = DEFAULT_THRESHOLD;
  /* Room for the FILEs, or for the snapshots --device fetches. */
  if (!(ta->paths = calloc((size_t)argc + MAX_FILES + 1, sizeof *ta->paths))) return GS_EXIT_USAGE;
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("trend", usage, a.error);
    if (k == GS_ARG_OPERAND) { ta->paths[ta->npaths++] = a.value; continue; }
    switch (a.id) {
    case OPT_HELP: ta->help = 1; break;
    case OPT_JSON: ta->json = 1; break;
    case OPT_OLD: ta->old_only = 1; break;
    case OPT_TOP:
      if (gs_args_parse_count(a.value, UINT32_MAX, &ta->top)) return gs_cli_usage_error("trend", usage, "--top needs a number");
      break;
    case OPT_THRESHOLD:
      if (gs_args_parse_count(a.value, 1000000, &ta->threshold)) return gs_cli_usage_error("trend", usage, "--threshold needs a percentage");
      break;
    case OPT_DEVICE: ta->device = a.value; break;
    case OPT_COLLECTOR: ta->collector = a.value; break;
    case OPT_LAST:
      if (gs_args_parse_count(a.value, MAX_FILES, &ta->last) || ta->last < 2)
        return gs_cli_usage_error("trend", usage, "--last needs a number from 2 to 1000");
      break;
    }
  }
  if (ta->help) return GS_EXIT_OK;
  if (ta->device && ta->npaths) return gs_cli_usage_error("trend", usage, "give FILEs or --device, not both");
  if (ta->device) return GS_EXIT_OK;
  if (ta->npaths < 2) return gs_cli_usage_error("trend", usage, "give at least two snapshots, oldest first");
  if (ta->npaths > MAX_FILES) return gs_cli_usage_error("trend", usage, "at most 1000 snapshots");
  return GS_EXIT_OK;
}

/* --device: fetches the device's last snapshots, oldest first, into a
 * temporary folder and names them as the files to read. */
static int fetch_series(trend_args *ta) {
  const char *url = gs_client_url(ta->collector), *tmp = getenv("TMPDIR");
  char api[300], *dev = gs_http_escape(ta->device);
  gs_http_reply r;
  json_t *rows;
  size_t i, n;
  int code;
  if (!dev) return GS_EXIT_USAGE;
  snprintf(api, sizeof api, "/api/snapshots?device=%s&status=complete&limit=%llu", dev,
           (unsigned long long)(ta->last ? ta->last : 10));
  free(dev);
  code = gs_client_check("trend", url, gs_http_get_json(url, api, &r), &r);
  rows = code ? NULL : json_object_get(r.json, "snapshots");
  n = json_array_size(rows);
  if (!code && n < 2) {
    fprintf(stderr, "gcsnap trend: device %s has %zu complete snapshots at %s; a trend needs 2\n",
            ta->device, n, url);
    code = GS_EXIT_INVALID;
  }
  snprintf(ta->folder, sizeof ta->folder, "%s/gcsnap-trend-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!code && !mkdtemp(ta->folder)) {
    gs_cli_error("cannot make a temporary folder in %s", tmp && *tmp ? tmp : "/tmp");
    code = GS_EXIT_USAGE;
  }
  for (i = 0; !code && i < n; i++) {
    uint64_t id = gs_client_u64(json_array_get(rows, n - 1 - i), "id"), bytes;
    char *path = malloc(strlen(ta->folder) + 32);
    if (!path) { code = GS_EXIT_USAGE; break; }
    sprintf(path, "%s/%llu.gclog.zst", ta->folder, (unsigned long long)id);
    ta->paths[ta->npaths++] = path;
    code = gs_client_fetch("trend", url, id, "zst", path, &bytes);
  }
  gs_http_reply_free(&r);
  return code;
}

static void remove_series(trend_args *ta) {
  int i;
  if (!ta->device) return;
  for (i = 0; i < ta->npaths; i++) {
    char *gens = gs_genfile_path(ta->paths[i]);
    if (gens) unlink(gens);         /* the generation ranges fetched beside it */
    free(gens);
    unlink(ta->paths[i]);
    free((char *)ta->paths[i]);
  }
  if (ta->folder[0]) rmdir(ta->folder);
}

/* The analysis, printed as text or JSON; returns the exit code. */
static int run(const trend_args *ta) {
  gs_file_fault fault;
  gs_trend t;
  json_t *o = NULL;
  int code = GS_EXIT_OK;
  memset(&t, 0, sizeof t);
  if (gs_trend_analyse(&t, ta->paths, ta->npaths, ta->old_only, ta->threshold, ta->top, &fault)) {
    code = gs_cli_fault(&fault);
  } else if (!ta->json) {
    print_text(&t);
  } else if (!(o = gs_trend_json(&t))) {
    gs_cli_error("out of memory");
    code = GS_EXIT_USAGE;
  } else if (gs_json_print(o)) {
    code = GS_EXIT_USAGE;
  }
  json_decref(o);
  gs_trend_free(&t);
  return code;
}

int gs_cmd_trend(int argc, char **argv) {
  trend_args ta;
  int code;
  memset(&ta, 0, sizeof ta);
  if ((code = parse_args(argc, argv, &ta)) != GS_EXIT_OK || ta.help) {
    free(ta.paths);
    return code ? code : gs_cli_help(usage);
  }
  if (ta.device) code = fetch_series(&ta);
  if (!code) code = run(&ta);
  remove_series(&ta);
  free(ta.paths);
  return gs_cli_finish(code);
}
