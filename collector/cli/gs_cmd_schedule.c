/* gs_cmd_schedule.c - "gcsnap schedule": the collector's periodic captures.
 *
 *   gcsnap schedule add DEVICE --every D [--jitter D] [--keep N]
 *                       [--max-bytes SIZE] [--start T] [--end T]
 *   gcsnap schedule list
 *   gcsnap schedule rm ID
 *
 * Values are checked here with the collector's own parsers (gs_units.c),
 * so that a typo is a usage error before anything is sent, and passed on
 * as written. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_error.h"
#include "gs_parse.h"
#include "gs_json.h"
#include "gs_table.h"
#include "gs_units.h"

static const char usage[] =
  "usage: gcsnap schedule add DEVICE --every D [--jitter D] [--keep N]\n"
  "                           [--max-bytes SIZE] [--start T] [--end T]\n"
  "       gcsnap schedule list\n"
  "       gcsnap schedule rm ID\n"
  "       (each also takes [--collector URL] [--json])\n"
  "\n"
  "Periodic captures by the collector gcsnapd. A schedule names a device ID\n"
  "or a pattern (pos-*, as for file names) and captures each connected\n"
  "device it matches every D, its runs spread over the interval by device;\n"
  "a run missed while the device was away is taken once when it is back.\n"
  "The retention rule applies to the devices it matches after each stored\n"
  "snapshot: the newest N, and the newest that fit in SIZE, are kept.\n"
  "\n"
  "  --every D        interval: 500ms, 30s, 5m, 2h, 1d (at least 1s)\n"
  "  --jitter D       delay each run by up to D more (at most --every)\n"
  "  --keep N         keep the last N complete snapshots per device\n"
  "  --max-bytes SIZE keep at most SIZE of files per device (512K, 500M, 1G;\n"
  "                   powers of 1024); the newest snapshot always stays\n"
  "  --start T        first run not before T; --end T: none from T on\n"
  "                   (Unix seconds or UTC as 2026-11-21T08:00:00Z)\n"
  "  --collector URL  the collector's HTTP API (default $" GS_COLLECTOR_ENV ",\n"
  "                   else " GS_DEFAULT_COLLECTOR ")\n"
  "  --json           print the API's JSON answer instead of text\n"
  "  -h, --help       show this help\n"
  "\n"
  "Exit status: 0 done, 1 the collector refused (no such schedule), 2 usage\n"
  "error or the collector cannot be reached.\n";

enum { OPT_HELP = 1, OPT_COLLECTOR, OPT_JSON, OPT_EVERY, OPT_JITTER, OPT_KEEP, OPT_MAX_BYTES,
       OPT_START, OPT_END };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"collector", 0, 1, OPT_COLLECTOR},
  {"json", 0, 0, OPT_JSON},
  {"every", 0, 1, OPT_EVERY},
  {"jitter", 0, 1, OPT_JITTER},
  {"keep", 0, 1, OPT_KEEP},
  {"max-bytes", 0, 1, OPT_MAX_BYTES},
  {"start", 0, 1, OPT_START},
  {"end", 0, 1, OPT_END},
  {NULL, 0, 0, 0},
};

typedef struct schedule_args {
  const char *collector, *action, *operand;
  const char *every, *jitter, *keep, *max_bytes, *start, *end;
  int json, help;
} schedule_args;

static int usage_error(const char *message) {
  return gs_cli_usage_error("schedule", usage, message);
}

static int check_values(const schedule_args *sa) {
  uint64_t v, every = 0;
  int64_t start = 0, end = 0;
  if (!sa->every || gs_parse_duration_ms(sa->every, &every) || every < 1000 ||
      every > GS_UNITS_EVERY_MAX_MS)
    return usage_error("--every needs a duration from 1s to 366d (30s, 5m, 2h, 1d)");
  if (sa->jitter && (gs_parse_duration_ms(sa->jitter, &v) || v > every))
    return usage_error("--jitter needs a duration no longer than --every");
  if (sa->keep && (gs_args_parse_count(sa->keep, INT64_MAX, &v) || v == 0))
    return usage_error("--keep needs a count of at least 1");
  if (sa->max_bytes && (gs_parse_size(sa->max_bytes, &v) || v == 0 || v > INT64_MAX))
    return usage_error("--max-bytes needs a size above 0 (512K, 500M, 1G)");
  if ((sa->start && gs_units_time(sa->start, &start)) || (sa->end && gs_units_time(sa->end, &end)))
    return usage_error("--start and --end need Unix seconds or a UTC time as 2026-11-21T08:00:00Z, "
                       "up to the end of 9999");
  if (sa->end && end <= start) return usage_error("--end must come after --start");
  return GS_EXIT_OK;
}

static int parse_args(int argc, char **argv, schedule_args *sa) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return usage_error(a.error);
    if (k == GS_ARG_OPERAND) {
      if (!sa->action) sa->action = a.value;
      else if (!sa->operand) sa->operand = a.value;
      else return usage_error("too many arguments");
      continue;
    }
    switch (a.id) {
    case OPT_HELP: sa->help = 1; break;
    case OPT_JSON: sa->json = 1; break;
    case OPT_COLLECTOR: sa->collector = a.value; break;
    case OPT_EVERY: sa->every = a.value; break;
    case OPT_JITTER: sa->jitter = a.value; break;
    case OPT_KEEP: sa->keep = a.value; break;
    case OPT_MAX_BYTES: sa->max_bytes = a.value; break;
    case OPT_START: sa->start = a.value; break;
    case OPT_END: sa->end = a.value; break;
    }
  }
  if (sa->help) return GS_EXIT_OK;
  if (!sa->action) return usage_error("no action given (add, list or rm)");
  if (strcmp(sa->action, "add") == 0) {
    if (!sa->operand || !*sa->operand) return usage_error("add needs a DEVICE (an ID or a pattern)");
    return check_values(sa);
  }
  if (sa->every || sa->jitter || sa->keep || sa->max_bytes || sa->start || sa->end)
    return usage_error("--every, --jitter, --keep, --max-bytes, --start and --end go with add");
  if (strcmp(sa->action, "list") == 0)
    return sa->operand ? usage_error("list takes no argument") : GS_EXIT_OK;
  if (strcmp(sa->action, "rm") == 0) {
    uint64_t id;
    if (!sa->operand || gs_args_parse_count(sa->operand, INT64_MAX, &id) || id == 0)
      return usage_error("rm needs the ID of a schedule");
    return GS_EXIT_OK;
  }
  return usage_error("unknown action (add, list or rm)");
}

/* "&key=value" (escaped) at the end of path, when value is set. */
static int add_query(char **path, const char *key, const char *value) {
  char *v, *p;
  size_t n;
  if (!value) return 0;
  if (!(v = gs_http_escape(value))) return -1;
  n = strlen(*path) + strlen(key) + strlen(v) + 3;
  if (!(p = realloc(*path, n))) { free(v); return -1; }
  snprintf(p + strlen(p), n - strlen(p), "%c%s=%s", strchr(p, '?') ? '&' : '?', key, v);
  free(v);
  *path = p;
  return 0;
}

static char *add_path(const schedule_args *sa) {
  char *path = malloc(sizeof "/api/schedules");
  if (!path) return NULL;
  strcpy(path, "/api/schedules");
  if (add_query(&path, "device", sa->operand) || add_query(&path, "every", sa->every) ||
      add_query(&path, "jitter", sa->jitter) || add_query(&path, "keep", sa->keep) ||
      add_query(&path, "max_bytes", sa->max_bytes) || add_query(&path, "start", sa->start) ||
      add_query(&path, "end", sa->end)) {
    free(path);
    return NULL;
  }
  return path;
}

static void fmt_time(char *buf, size_t cap, const json_t *o, const char *key) {
  if (gs_client_is_null(o, key)) snprintf(buf, cap, "-");
  else gs_units_format_time(buf, cap, (int64_t)gs_client_u64(o, key));
}

static void describe(const json_t *sch) {
  char jitter[32], bytes[32], t[40];
  printf("Schedule %llu: %s every %s", (unsigned long long)gs_client_u64(sch, "id"),
         gs_client_str(sch, "device"), gs_client_str(sch, "every"));
  if (gs_client_u64(sch, "jitter_ms")) {
    gs_units_format_duration(jitter, sizeof jitter, gs_client_u64(sch, "jitter_ms"));
    printf(" (jitter %s)", jitter);
  }
  if (!gs_client_is_null(sch, "keep"))
    printf(", keep %llu", (unsigned long long)gs_client_u64(sch, "keep"));
  if (!gs_client_is_null(sch, "max_bytes")) {
    gs_client_fmt_bytes(bytes, sizeof bytes, gs_client_u64(sch, "max_bytes"));
    printf(", at most %s", bytes);
  }
  if (!gs_client_is_null(sch, "start")) {
    fmt_time(t, sizeof t, sch, "start");
    printf(", from %s", t);
  }
  if (!gs_client_is_null(sch, "end")) {
    fmt_time(t, sizeof t, sch, "end");
    printf(", until %s", t);
  }
  printf(".\n");
}

static int add_row(gs_table *t, const json_t *sch) {
  char id[24], jitter[32], keep[24], bytes[24], start[40], end[40], devices[24];
  const char *cells[9];
  snprintf(id, sizeof id, "%llu", (unsigned long long)gs_client_u64(sch, "id"));
  gs_units_format_duration(jitter, sizeof jitter, gs_client_u64(sch, "jitter_ms"));
  if (!gs_client_u64(sch, "jitter_ms")) snprintf(jitter, sizeof jitter, "-");
  gs_client_fmt_u64(keep, sizeof keep, sch, "keep");
  if (gs_client_is_null(sch, "max_bytes")) snprintf(bytes, sizeof bytes, "-");
  else gs_client_fmt_bytes(bytes, sizeof bytes, gs_client_u64(sch, "max_bytes"));
  fmt_time(start, sizeof start, sch, "start");
  fmt_time(end, sizeof end, sch, "end");
  snprintf(devices, sizeof devices, "%zu", json_array_size(json_object_get(sch, "devices")));
  cells[0] = id;
  cells[1] = gs_client_str(sch, "device");
  cells[2] = gs_client_str(sch, "every");
  cells[3] = jitter;
  cells[4] = keep;
  cells[5] = bytes;
  cells[6] = start;
  cells[7] = end;
  cells[8] = devices;
  return gs_table_add(t, cells);
}

static int print_list(const json_t *list, const char *url) {
  static const char *const heads[] = {"ID", "DEVICE", "EVERY", "JITTER", "KEEP", "MAX BYTES",
                                      "START", "END", "DEVICES"};
  if (json_array_size(list) == 0) {
    printf("No schedules at the collector at %s.\n", url);
    return 0;
  }
  return gs_client_print_rows(list, 9, heads, "rlrrrrllr", add_row);
}

static int call(const schedule_args *sa, const char *url, gs_http_reply *r) {
  char path[64];
  char *add;
  int err;
  if (strcmp(sa->action, "list") == 0) return gs_http_get_json(url, "/api/schedules", r);
  if (strcmp(sa->action, "rm") == 0) {
    snprintf(path, sizeof path, "/api/schedules/%s", sa->operand);
    return gs_http_delete_json(url, path, r);
  }
  if (!(add = add_path(sa))) {
    memset(r, 0, sizeof *r);
    return GS_ENOMEM;
  }
  err = gs_http_post_json(url, add, 0, r);
  free(add);
  return err;
}

int gs_cmd_schedule(int argc, char **argv) {
  schedule_args sa;
  const char *url;
  gs_http_reply r;
  int code, err;
  memset(&sa, 0, sizeof sa);
  if ((code = parse_args(argc, argv, &sa)) != GS_EXIT_OK) return code;
  if (sa.help) return gs_cli_help(usage);
  url = gs_client_url(sa.collector);
  err = call(&sa, url, &r);
  code = gs_client_check("schedule", url, err, &r);
  if (code == GS_EXIT_OK) {
    if (sa.json) err = gs_json_print(r.json);
    else if (strcmp(sa.action, "list") == 0)
      err = print_list(json_object_get(r.json, "schedules"), url);
    else if (strcmp(sa.action, "rm") == 0)
      printf("Schedule %s removed.\n", sa.operand);
    else
      describe(r.json);
    if (err) code = GS_EXIT_USAGE;
  }
  gs_http_reply_free(&r);
  return gs_cli_finish(code);
}
