/* gsd_config.c - the collector daemon's settings: flags and config file.
 *
 * The flags are scanned twice: once for --config, so that the file can be
 * read first, then for everything, so that each flag overrides the file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include "gs_args.h"
#include "gs_error.h"
#include "gsd_config.h"

const char gsd_usage[] =
  "usage: gcsnapd [--listen ADDR:PORT] [--http ADDR:PORT] [--store DIR]\n"
  "               [--config FILE] [--log-level error|warn|info|debug]\n"
  "               [--gcsnap PATH] [--record DIR]\n"
  "\n"
  "Collector of GC heap snapshots: agents connect to --listen and stream\n"
  "snapshots, which are validated and stored under --store with their\n"
  "summaries; the HTTP API on --http lists and serves them and asks a\n"
  "connected agent for a capture.\n"
  "\n"
  "  --listen ADDR:PORT  address for agents (default " GSD_DEFAULT_LISTEN ")\n"
  "  --http ADDR:PORT    address of the HTTP API (default " GSD_DEFAULT_HTTP ")\n"
  "  --store DIR         store folder: catalog and snapshots (default " GSD_DEFAULT_STORE ")\n"
  "  --config FILE       'key = value' lines with the names above; flags win\n"
  "  --log-level LEVEL   error, warn, info (default) or debug\n"
  "  --gcsnap PATH       the gcsnap tool that runs the API's analyses\n"
  "                      (default: gcsnap in the folder of gcsnapd)\n"
  "  --record DIR        record each agent session's frames into\n"
  "                      DIR/<device>-<session>.gcstream (for gcsnap replay)\n"
  "  -h, --help          show this help\n"
  "  --version           show the version\n";

enum { OPT_HELP = 1, OPT_VERSION, OPT_LISTEN, OPT_HTTP, OPT_STORE, OPT_CONFIG, OPT_LOG_LEVEL,
       OPT_GCSNAP, OPT_RECORD };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"version", 0, 0, OPT_VERSION},
  {"listen", 0, 1, OPT_LISTEN},
  {"http", 0, 1, OPT_HTTP},
  {"store", 0, 1, OPT_STORE},
  {"config", 0, 1, OPT_CONFIG},
  {"log-level", 0, 1, OPT_LOG_LEVEL},
  {"gcsnap", 0, 1, OPT_GCSNAP},
  {"record", 0, 1, OPT_RECORD},
  {NULL, 0, 0, 0},
};

static int fail(char *err, size_t cap, const char *what, const char *value) {
  snprintf(err, cap, "%s: '%s'", what, value);
  return GS_EINVAL;
}

static int copy_value(char *dst, size_t dst_cap, const char *value, char *err,
                      size_t cap, const char *name) {
  if (strlen(value) >= dst_cap || value[0] == '\0')
    return fail(err, cap, name, value);
  strcpy(dst, value);
  return GS_OK;
}

/* One setting, by its long flag name; from the command line or the file. */
static int set_value(gsd_config *c, int id, const char *value, char *err, size_t cap) {
  struct sockaddr_storage ss;
  switch (id) {
  case OPT_LISTEN:
    if (gsd_config_addr(value, &ss)) return fail(err, cap, "bad --listen address", value);
    return copy_value(c->listen, sizeof c->listen, value, err, cap, "bad --listen address");
  case OPT_HTTP:
    if (gsd_config_addr(value, &ss)) return fail(err, cap, "bad --http address", value);
    return copy_value(c->http, sizeof c->http, value, err, cap, "bad --http address");
  case OPT_STORE:
    return copy_value(c->store, sizeof c->store, value, err, cap, "bad --store folder");
  case OPT_GCSNAP:
    return copy_value(c->gcsnap, sizeof c->gcsnap, value, err, cap, "bad --gcsnap path");
  case OPT_RECORD:
    return copy_value(c->record, sizeof c->record, value, err, cap, "bad --record folder");
  case OPT_LOG_LEVEL:
    if (gsd_log_parse_level(value, &c->log_level))
      return fail(err, cap, "--log-level must be error, warn, info or debug, not", value);
    return GS_OK;
  }
  return GS_OK;
}

static char *trim(char *s) {
  char *e = s + strlen(s);
  while (*s && isspace((unsigned char)*s)) s++;
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

static int option_id(const char *name) {
  const gs_option *o;
  for (o = options; o->long_name; o++)
    if (o->takes_value && o->id != OPT_CONFIG && strcmp(o->long_name, name) == 0) return o->id;
  return 0;
}

static int load_file(gsd_config *c, const char *path, char *err, size_t cap) {
  FILE *f = fopen(path, "r");
  char line[2048], *key, *value, *eq, *hash;
  unsigned lineno = 0;
  int rc = GS_OK, id;
  if (!f) {
    snprintf(err, cap, "cannot open config file '%s': %s", path, strerror(errno));
    return GS_EINVAL;
  }
  while (rc == GS_OK && fgets(line, sizeof line, f)) {
    lineno++;
    if ((hash = strchr(line, '#'))) *hash = '\0';
    key = trim(line);
    if (!*key) continue;
    if (!(eq = strchr(key, '='))) {
      snprintf(err, cap, "%s:%u: expected 'key = value'", path, lineno);
      rc = GS_EINVAL;
      break;
    }
    *eq = '\0';
    key = trim(key);
    value = trim(eq + 1);
    if (!(id = option_id(key))) {
      snprintf(err, cap, "%s:%u: unknown key '%s'", path, lineno, key);
      rc = GS_EINVAL;
      break;
    }
    if ((rc = set_value(c, id, value, err, cap)) != GS_OK) {
      char inner[512];
      snprintf(inner, sizeof inner, "%s", err);
      snprintf(err, cap, "%s:%u: %s", path, lineno, inner);
    }
  }
  fclose(f);
  return rc;
}

/* The gcsnap installed beside this gcsnapd, as both are built and installed. */
static int default_gcsnap(gsd_config *c, char *err, size_t cap) {
  char exe[1024];
  size_t len = sizeof exe;
  char *slash;
  if (uv_exepath(exe, &len) || !(slash = strrchr(exe, '/')) ||
      (size_t)(slash - exe) + sizeof "/gcsnap" > sizeof c->gcsnap) {
    snprintf(err, cap, "cannot find the folder of gcsnapd; give --gcsnap PATH");
    return GS_EINVAL;
  }
  memcpy(c->gcsnap, exe, (size_t)(slash - exe));
  strcpy(c->gcsnap + (slash - exe), "/gcsnap");
  return GS_OK;
}

/* First pass: only --config, --help and --version, and usage errors. */
static int find_config(gsd_config *c, int argc, char **argv, const char **path,
                       char *err, size_t cap) {
  gs_args a;
  gs_arg_kind k;
  *path = NULL;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) { snprintf(err, cap, "%s", a.error); return GS_EINVAL; }
    if (k == GS_ARG_OPERAND) return fail(err, cap, "unexpected argument", a.value);
    if (a.id == OPT_HELP) c->help = 1;
    if (a.id == OPT_VERSION) c->version = 1;
    if (a.id == OPT_CONFIG) *path = a.value;
  }
  return GS_OK;
}

int gsd_config_parse(gsd_config *c, int argc, char **argv, char *err, size_t cap) {
  const char *path;
  gs_args a;
  int rc;
  memset(c, 0, sizeof *c);
  strcpy(c->listen, GSD_DEFAULT_LISTEN);
  strcpy(c->http, GSD_DEFAULT_HTTP);
  strcpy(c->store, GSD_DEFAULT_STORE);
  c->log_level = GSD_LOG_INFO;
  if ((rc = find_config(c, argc, argv, &path, err, cap)) != GS_OK) return rc;
  if (c->help || c->version) return GS_OK;
  if (path && (rc = load_file(c, path, err, cap)) != GS_OK) return rc;
  gs_args_init(&a, argc, argv, options);
  while (gs_args_next(&a) == GS_ARG_OPTION)
    if ((rc = set_value(c, a.id, a.value, err, cap)) != GS_OK) return rc;
  return c->gcsnap[0] ? GS_OK : default_gcsnap(c, err, cap);
}

int gsd_config_addr(const char *text, struct sockaddr_storage *addr) {
  char host[256];
  const char *colon = strrchr(text, ':'), *h = text;
  size_t hlen;
  char *end;
  long port;
  if (!colon || colon == text) return GS_EINVAL;
  hlen = (size_t)(colon - text);
  if (text[0] == '[' && colon[-1] == ']') { h = text + 1; hlen -= 2; }
  if (hlen >= sizeof host) return GS_EINVAL;
  memcpy(host, h, hlen);
  host[hlen] = '\0';
  errno = 0;
  port = strtol(colon + 1, &end, 10);
  if (errno || *end || end == colon + 1 || port < 0 || port > 65535) return GS_EINVAL;
  memset(addr, 0, sizeof *addr);
  if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)addr) == 0) return GS_OK;
  if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)addr) == 0) return GS_OK;
  return GS_EINVAL;
}

int gsd_listen(uv_loop_t *loop, uv_tcp_t *tcp, const char *addr, uv_connection_cb cb,
               char *bound, size_t cap) {
  struct sockaddr_storage ss;
  int n = sizeof ss, rc;
  char ip[INET6_ADDRSTRLEN];
  void *data = tcp->data;
  if (gsd_config_addr(addr, &ss) != GS_OK) {
    snprintf(bound, cap, "bad address '%s'", addr);
    return GS_EINVAL;
  }
  uv_tcp_init(loop, tcp);
  tcp->data = data;
  if ((rc = uv_tcp_bind(tcp, (struct sockaddr *)&ss, 0)) != 0 ||
      (rc = uv_listen((uv_stream_t *)tcp, 128, cb)) != 0) {
    snprintf(bound, cap, "cannot listen on %s: %s", addr, uv_strerror(rc));
    return GS_EIO;
  }
  uv_tcp_getsockname(tcp, (struct sockaddr *)&ss, &n);
  if (ss.ss_family == AF_INET6) {
    uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
    snprintf(bound, cap, "[%s]:%d", ip, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
  } else {
    uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
    snprintf(bound, cap, "%s:%d", ip, ntohs(((struct sockaddr_in *)&ss)->sin_port));
  }
  return GS_OK;
}
