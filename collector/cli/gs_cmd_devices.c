/* gs_cmd_devices.c - "gcsnap devices": the devices the collector knows.
 *
 * One row per device: whether an agent is connected now (and capturing),
 * what it runs on, how many snapshots are stored and since when the state
 * holds. --json prints the API's answer as it is. */
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_json.h"
#include "gs_table.h"

static const char usage[] =
  "usage: gcsnap devices [--collector URL] [--json]\n"
  "\n"
  "Lists the devices known to the collector gcsnapd: connected or not,\n"
  "capturing, the application and architecture, the agent's address, the\n"
  "snapshots stored and the last one.\n"
  "\n"
  "  --collector URL  the collector's HTTP API (default $" GS_COLLECTOR_ENV ",\n"
  "                   else " GS_DEFAULT_COLLECTOR ")\n"
  "  --json           print the API's JSON answer instead of a table\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 done, 1 the collector refused, 2 usage error or the\n"
  "collector cannot be reached.\n";

enum { OPT_HELP = 1, OPT_COLLECTOR, OPT_JSON };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"json", 0, 0, OPT_JSON},
  {NULL, 0, 0, 0},
};

static const char *state_of(const json_t *d) {
  if (!gs_client_bool(d, "connected")) return "offline";
  return gs_client_bool(d, "busy") ? "capturing" : "connected";
}

static int add_device(gs_table *t, const json_t *d) {
  char arch[64], count[24], last[24], since[32];
  const char *cells[9];
  const char *a = gs_client_str(d, "architecture");
  uint64_t ptr = gs_client_u64(d, "pointer_size");
  if (a && ptr) snprintf(arch, sizeof arch, "%s/%llu", a, (unsigned long long)ptr * 8);
  else snprintf(arch, sizeof arch, "%s", a ? a : "-");
  gs_client_fmt_u64(count, sizeof count, d, "snapshots");
  gs_client_fmt_u64(last, sizeof last, d, "last_snapshot_id");
  gs_client_fmt_time(since, sizeof since,
                     d, gs_client_bool(d, "connected") ? "connected_since" : "last_seen");
  cells[0] = gs_client_str(d, "device_id");
  cells[1] = state_of(d);
  cells[2] = gs_client_str(d, "app_name");
  cells[3] = arch;
  cells[4] = gs_client_str(d, "agent_version");
  cells[5] = gs_client_str(d, "address");
  cells[6] = count;
  cells[7] = last;
  cells[8] = since;
  return gs_table_add(t, cells);
}

static int print_table(const json_t *devices, const char *url) {
  static const char *const heads[] = {"DEVICE", "STATE", "APP", "ARCH", "AGENT",
                                      "ADDRESS", "SNAPSHOTS", "LAST", "SINCE"};
  if (json_array_size(devices) == 0) {
    printf("No devices: no agent has connected to the collector at %s yet.\n", url);
    return 0;
  }
  return gs_client_print_rows(devices, 9, heads, "lllllrrrl", add_device);
}

static int parse_args(int argc, char **argv, const char **collector, int *json, int *help) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("devices", usage, a.error);
    if (k == GS_ARG_OPERAND) return gs_cli_usage_error("devices", usage, "no arguments expected");
    if (a.id == OPT_HELP) *help = 1;
    else if (a.id == OPT_JSON) *json = 1;
    else *collector = a.value;
  }
  return GS_EXIT_OK;
}

int gs_cmd_devices(int argc, char **argv) {
  const char *collector = NULL, *url;
  int json = 0, help = 0, code, err;
  gs_http_reply r;
  if ((code = parse_args(argc, argv, &collector, &json, &help)) != GS_EXIT_OK) return code;
  if (help) return gs_cli_help(usage);
  url = gs_client_url(collector);
  err = gs_http_get_json(url, "/api/devices", &r);
  code = gs_client_check("devices", url, err, &r);
  if (code == GS_EXIT_OK) {
    json_t *devices = json_object_get(r.json, "devices");
    if (json ? gs_json_print(r.json) : print_table(devices, url)) {
      if (!ferror(stdout)) gs_cli_error("out of memory");
      code = GS_EXIT_USAGE;
    }
  }
  gs_http_reply_free(&r);
  return gs_cli_finish(code);
}
