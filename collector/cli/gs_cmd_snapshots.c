/* gs_cmd_snapshots.c - "gcsnap snapshots": the snapshots the collector holds.
 *
 * Newest first, as the API lists them: complete snapshots with their main
 * figures from the catalog, failed ones with the reason they failed. The
 * filters are passed to the API, which does the work. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_json.h"
#include "gs_table.h"

static const char usage[] =
  "usage: gcsnap snapshots [--device ID] [--status complete|failed] [--limit N]\n"
  "                        [--collector URL] [--json]\n"
  "\n"
  "Lists the snapshots stored by the collector gcsnapd, newest first: ID,\n"
  "device, time, status, objects, heap bytes, roots, unreachable objects,\n"
  "stored file size, and for a failed snapshot the reason.\n"
  "\n"
  "  --device ID      only the snapshots of device ID\n"
  "  --status S       only complete or only failed snapshots\n"
  "  --limit N        at most N snapshots\n"
  "  --collector URL  the collector's HTTP API (default $" GS_COLLECTOR_ENV ",\n"
  "                   else " GS_DEFAULT_COLLECTOR ")\n"
  "  --json           print the API's JSON answer instead of a table\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 done, 1 the collector refused, 2 usage error or the\n"
  "collector cannot be reached.\n";

enum { OPT_HELP = 1, OPT_COLLECTOR, OPT_JSON, OPT_DEVICE, OPT_STATUS, OPT_LIMIT };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"json", 0, 0, OPT_JSON},
  {"device", 0, 1, OPT_DEVICE},
  {"status", 0, 1, OPT_STATUS},
  {"limit", 0, 1, OPT_LIMIT},
  {NULL, 0, 0, 0},
};

typedef struct snapshots_args {
  const char *collector, *device, *status;
  uint64_t limit;
  int has_limit, json, help;
} snapshots_args;

static int add_snapshot(gs_table *t, const json_t *s) {
  char id[24], created[32], objects[24], bytes[24], roots[24], unreachable[24], file[24];
  const char *cells[10];
  int complete = strcmp(gs_client_str(s, "status") ? gs_client_str(s, "status") : "",
                        "complete") == 0;
  gs_client_fmt_u64(id, sizeof id, s, "id");
  gs_client_fmt_time(created, sizeof created, s, "created");
  gs_client_fmt_u64(objects, sizeof objects, s, "objects");
  gs_client_fmt_u64(bytes, sizeof bytes, s, "bytes");
  gs_client_fmt_u64(roots, sizeof roots, s, "roots");
  gs_client_fmt_u64(unreachable, sizeof unreachable, s, "unreachable");
  gs_client_fmt_bytes(file, sizeof file, gs_client_u64(s, "file_bytes"));
  cells[0] = id;
  cells[1] = gs_client_str(s, "device_id");
  cells[2] = created;
  cells[3] = gs_client_str(s, "status");
  cells[4] = complete ? objects : NULL;
  cells[5] = complete ? bytes : NULL;
  cells[6] = complete ? roots : NULL;
  cells[7] = complete ? unreachable : NULL;
  cells[8] = complete ? file : NULL;
  cells[9] = complete ? (gs_client_bool(s, "stable_ids") ? "stable IDs" : "")
                      : gs_client_str(s, "reason");
  return gs_table_add(t, cells);
}

static int print_table(const json_t *list, const char *url) {
  static const char *const heads[] = {"ID", "DEVICE", "CREATED", "STATUS", "OBJECTS",
                                      "BYTES", "ROOTS", "UNREACHABLE", "FILE", "NOTE"};
  if (json_array_size(list) == 0) {
    printf("No snapshots at the collector %s.\n", url);
    return 0;
  }
  return gs_client_print_rows(list, 10, heads, "rlllrrrrrl", add_snapshot);
}

/* "/api/snapshots?device=...&status=...&limit=..."; NULL when out of memory. */
static char *list_path(const snapshots_args *sa) {
  char *dev = sa->device ? gs_http_escape(sa->device) : NULL;
  size_t n = 96 + (dev ? strlen(dev) : 0);
  char *p = malloc(n);
  char sep = '?';
  if (!p || (sa->device && !dev)) { free(p); free(dev); return NULL; }
  strcpy(p, "/api/snapshots");
  if (dev) { snprintf(p + strlen(p), n - strlen(p), "%cdevice=%s", sep, dev); sep = '&'; }
  if (sa->status) { snprintf(p + strlen(p), n - strlen(p), "%cstatus=%s", sep, sa->status); sep = '&'; }
  if (sa->has_limit)
    snprintf(p + strlen(p), n - strlen(p), "%climit=%llu", sep, (unsigned long long)sa->limit);
  free(dev);
  return p;
}

static int parse_args(int argc, char **argv, snapshots_args *sa) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("snapshots", usage, a.error);
    if (k == GS_ARG_OPERAND)
      return gs_cli_usage_error("snapshots", usage, "no arguments expected (--device ID filters)");
    switch (a.id) {
    case OPT_HELP: sa->help = 1; break;
    case OPT_JSON: sa->json = 1; break;
    case OPT_COLLECTOR: sa->collector = a.value; break;
    case OPT_DEVICE: sa->device = a.value; break;
    case OPT_STATUS:
      if (strcmp(a.value, "complete") != 0 && strcmp(a.value, "failed") != 0)
        return gs_cli_usage_error("snapshots", usage, "--status is complete or failed");
      sa->status = a.value;
      break;
    case OPT_LIMIT:
      if (gs_args_parse_count(a.value, 1000000000, &sa->limit) != 0 || sa->limit == 0)
        return gs_cli_usage_error("snapshots", usage, "--limit needs a positive number");
      sa->has_limit = 1;
      break;
    }
  }
  return GS_EXIT_OK;
}

int gs_cmd_snapshots(int argc, char **argv) {
  snapshots_args sa;
  const char *url;
  char *path;
  gs_http_reply r;
  int code, err;
  memset(&sa, 0, sizeof sa);
  if ((code = parse_args(argc, argv, &sa)) != GS_EXIT_OK) return code;
  if (sa.help) return gs_cli_help(usage);
  url = gs_client_url(sa.collector);
  if (!(path = list_path(&sa))) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  err = gs_http_get_json(url, path, &r);
  free(path);
  code = gs_client_check("snapshots", url, err, &r);
  if (code == GS_EXIT_OK) {
    json_t *list = json_object_get(r.json, "snapshots");
    if (sa.json ? gs_json_print(r.json) : print_table(list, url)) {
      if (!ferror(stdout)) gs_cli_error("out of memory");
      code = GS_EXIT_USAGE;
    }
  }
  gs_http_reply_free(&r);
  return gs_cli_finish(code);
}
