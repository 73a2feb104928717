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
#include "gs_parse.h"
#include "gs_reader.h"
#include "gs_units.h"
#include "gsd_config.h"
#include "gsd_store.h"

const char gsd_usage[] =
  "usage: gcsnapd [--listen ADDR:PORT] [--http ADDR:PORT] [--store DIR]\n"
  "               [--config FILE] [--log-level error|warn|info|debug]\n"
  "               [--log-format text|json]\n"
  "               [--record DIR] [--http-token-file FILE]\n"
  "               [--http-tls-cert FILE --http-tls-key FILE] [--insecure]\n"
  "               [--require-keys] [--catalog postgresql://... [--identity NAME]]\n"
  "\n"
  "Collector of GC heap snapshots: agents connect to --listen and stream\n"
  "snapshots, which are validated and stored under --store with their\n"
  "summaries; the HTTP API on --http lists and serves them and asks a\n"
  "connected agent for a capture.\n"
  "\n"
  "  --listen ADDR:PORT  address for agents (default " GSD_DEFAULT_LISTEN ")\n"
  "  --http ADDR:PORT    address of the HTTP API (default " GSD_DEFAULT_HTTP ")\n"
  "  --store DIR         store folder: catalog and snapshots (default " GSD_DEFAULT_STORE ")\n"
  "  --catalog URL       keep the catalog in PostgreSQL (postgresql://...), shared\n"
  "                      by several collectors over one shared --store folder\n"
  "  --identity NAME     this collector's name in a shared catalog, one per\n"
  "                      running collector (default: the host name)\n"
  "  --config FILE       'key = value' lines with the names above; flags win\n"
  "  --log-level LEVEL   error, warn, info (default) or debug\n"
  "  --log-format F      text (default) or json: one object per line with\n"
  "                      time, level, event, device and snapshot\n"
  "  --record DIR        record each agent session's frames into\n"
  "                      DIR/<device>-<session>.gcstream (for gcsnap replay)\n"
  "  --http-token-file FILE  every API request must carry 'Authorization:\n"
  "                      Bearer TOKEN', TOKEN being the file's first line\n"
  "  --http-tls-cert FILE  serve the API over HTTPS with this PEM certificate\n"
  "  --http-tls-key FILE   (chain) and this PEM private key\n"
  "  --insecure          allow --listen beyond loopback without agent keys in\n"
  "                      the catalog, and --http beyond loopback without a token\n"
  "  --require-keys      refuse agents whose device has no key (gcsnap keys add)\n"
  "                      even while no device has one; once one has, this holds\n"
  "                      anyway\n"
  "\n"
  "Limits (sizes as 512K, 256M, 1G; durations as 500ms, 10s, 2m):\n"
  "  --max-sessions N    agent connections at once (default 1024); more are\n"
  "                      refused with Error 9 busy and closed\n"
  "  --max-sessions-per-address N  of them from one IP address (default 256)\n"
  "  --hello-timeout D   a connection without a whole Hello after D is closed\n"
  "                      (default 10s)\n"
  "  --idle-timeout D    a session silent for D is closed, and a snapshot it\n"
  "                      was sending fails with \"timeout\" (default 90s); idle\n"
  "                      agents are pinged after D/3 of silence\n"
  "  --max-objects N     objects in one snapshot (default 50000000; 0: none)\n"
  "  --max-references N  references in one snapshot (default 200000000; 0: none)\n"
  "  --max-object-references N  references of one object (default 33554432),\n"
  "                      in a snapshot and in an uploaded file; each costs 8\n"
  "                      bytes while its object is read\n"
  "  --max-sections N    sections (AppDomains) in one snapshot (default 1000;\n"
  "                      0: none)\n"
  "  --max-validator-memory SIZE  what checking one snapshot may hold: about\n"
  "                      32 bytes per object referenced before it is sent,\n"
  "                      and 8 per reference of the object arriving\n"
  "                      (default 512M; 0: none)\n"
  "  --min-free-bytes SIZE  free space kept on the store's filesystem: below it\n"
  "                      captures are refused (HTTP 507 disk_full) and snapshots\n"
  "                      fail (default 256M; 0: no check)\n"
  "  Frames above 4 MiB (the protocol's maximum) end the session.\n"
  "\n"
  "  -h, --help          show this help\n"
  "  --version           show the version\n";

enum { OPT_HELP = 1, OPT_VERSION, OPT_LISTEN, OPT_HTTP, OPT_STORE, OPT_CONFIG, OPT_LOG_LEVEL,
       OPT_RECORD, OPT_TOKEN_FILE, OPT_TLS_CERT, OPT_TLS_KEY, OPT_INSECURE,
       OPT_REQUIRE_KEYS, OPT_CATALOG, OPT_IDENTITY };
enum { OPT_LOG_FORMAT = 200 };

/* The limits' options, numbered apart from the others. */
enum { OPT_MAX_SESSIONS = 100, OPT_MAX_SESSIONS_PER_ADDRESS, OPT_HELLO_TIMEOUT,
       OPT_IDLE_TIMEOUT, OPT_MAX_OBJECTS, OPT_MAX_REFERENCES, OPT_MAX_OBJECT_REFERENCES, OPT_MAX_SECTIONS,
       OPT_MAX_VALIDATOR_MEMORY, OPT_MIN_FREE_BYTES };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"version", 0, 0, OPT_VERSION},
  {"listen", 0, 1, OPT_LISTEN},
  {"http", 0, 1, OPT_HTTP},
  {"store", 0, 1, OPT_STORE},
  {"config", 0, 1, OPT_CONFIG},
  {"log-level", 0, 1, OPT_LOG_LEVEL},
  {"log-format", 0, 1, OPT_LOG_FORMAT},
  {"record", 0, 1, OPT_RECORD},
  {"http-token-file", 0, 1, OPT_TOKEN_FILE},
  {"http-tls-cert", 0, 1, OPT_TLS_CERT},
  {"http-tls-key", 0, 1, OPT_TLS_KEY},
  {"insecure", 0, 0, OPT_INSECURE},
  {"require-keys", 0, 0, OPT_REQUIRE_KEYS},
  {"catalog", 0, 1, OPT_CATALOG},
  {"identity", 0, 1, OPT_IDENTITY},
  /* limits */
  {"max-sessions", 0, 1, OPT_MAX_SESSIONS},
  {"max-sessions-per-address", 0, 1, OPT_MAX_SESSIONS_PER_ADDRESS},
  {"hello-timeout", 0, 1, OPT_HELLO_TIMEOUT},
  {"idle-timeout", 0, 1, OPT_IDLE_TIMEOUT},
  {"max-objects", 0, 1, OPT_MAX_OBJECTS},
  {"max-references", 0, 1, OPT_MAX_REFERENCES},
  {"max-object-references", 0, 1, OPT_MAX_OBJECT_REFERENCES},
  {"max-sections", 0, 1, OPT_MAX_SECTIONS},
  {"max-validator-memory", 0, 1, OPT_MAX_VALIDATOR_MEMORY},
  {"min-free-bytes", 0, 1, OPT_MIN_FREE_BYTES},
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

/* ---- limits ---- */

static int parse_count(const char *value, uint64_t min, uint64_t max, uint64_t *out) {
  char *end;
  unsigned long long v;
  if (!isdigit((unsigned char)value[0])) return GS_EINVAL;
  errno = 0;
  v = strtoull(value, &end, 10);
  if (errno || *end || v < min || v > max) return GS_EINVAL;
  *out = v;
  return GS_OK;
}

/* A limit's setting; GS_EOF when id is not one. */
static int set_limit(gsd_config *c, int id, const char *value, char *err, size_t cap) {
  uint64_t v;
  switch (id) {
  case OPT_MAX_SESSIONS:
    if (parse_count(value, 1, 1000000, &c->max_sessions))
      return fail(err, cap, "--max-sessions must be 1 to 1000000, not", value);
    return GS_OK;
  case OPT_MAX_SESSIONS_PER_ADDRESS:
    if (parse_count(value, 1, 1000000, &c->max_sessions_per_address))
      return fail(err, cap, "--max-sessions-per-address must be 1 to 1000000, not", value);
    return GS_OK;
  case OPT_HELLO_TIMEOUT:
  case OPT_IDLE_TIMEOUT:
    if (gs_parse_duration_ms(value, &v) || v < 100 || v > 86400000u)
      return fail(err, cap, id == OPT_HELLO_TIMEOUT
                  ? "--hello-timeout must be a duration from 100ms to 1d, not"
                  : "--idle-timeout must be a duration from 100ms to 1d, not", value);
    *(id == OPT_HELLO_TIMEOUT ? &c->hello_timeout_ms : &c->idle_timeout_ms) = v;
    return GS_OK;
  case OPT_MAX_OBJECTS:
    if (parse_count(value, 0, UINT64_MAX, &c->max_objects))
      return fail(err, cap, "--max-objects must be a count (0: no limit), not", value);
    return GS_OK;
  case OPT_MAX_REFERENCES:
    if (parse_count(value, 0, UINT64_MAX, &c->max_references))
      return fail(err, cap, "--max-references must be a count (0: no limit), not", value);
    return GS_OK;
  case OPT_MAX_OBJECT_REFERENCES:
    if (parse_count(value, 1, UINT32_MAX, &c->max_object_references))
      return fail(err, cap, "--max-object-references must be a count from 1 to 4294967295, not",
                  value);
    return GS_OK;
  case OPT_MAX_SECTIONS:
    if (parse_count(value, 0, UINT64_MAX, &c->max_sections))
      return fail(err, cap, "--max-sections must be a count (0: no limit), not", value);
    return GS_OK;
  case OPT_MAX_VALIDATOR_MEMORY:
    if (gs_parse_size(value, &c->max_validator_bytes))
      return fail(err, cap, "--max-validator-memory must be a size such as 512M (0: no limit), not",
                  value);
    return GS_OK;
  case OPT_MIN_FREE_BYTES:
    if (gs_parse_size(value, &c->min_free_bytes))
      return fail(err, cap, "--min-free-bytes must be a size such as 256M (0: no check), not",
                  value);
    return GS_OK;
  }
  return GS_EOF;
}

static void default_limits(gsd_config *c) {
  c->max_sessions = GSD_DEFAULT_MAX_SESSIONS;
  c->max_sessions_per_address = GSD_DEFAULT_MAX_SESSIONS_PER_ADDRESS;
  c->hello_timeout_ms = GSD_DEFAULT_HELLO_TIMEOUT_MS;
  c->idle_timeout_ms = GSD_DEFAULT_IDLE_TIMEOUT_MS;
  c->max_objects = GSD_DEFAULT_MAX_OBJECTS;
  c->max_references = GSD_DEFAULT_MAX_REFERENCES;
  c->max_object_references = GS_READER_DEFAULT_MAX_REFS;
  c->max_sections = GSD_DEFAULT_MAX_SECTIONS;
  c->max_validator_bytes = GSD_DEFAULT_MAX_VALIDATOR_BYTES;
  c->min_free_bytes = GSD_DEFAULT_MIN_FREE_BYTES;
}

/* One setting, by its long flag name; from the command line or the file. */
static int set_value(gsd_config *c, int id, const char *value, char *err, size_t cap) {
  struct sockaddr_storage ss;
  int rc = set_limit(c, id, value, err, cap);
  if (rc != GS_EOF) return rc;
  switch (id) {
  case OPT_LISTEN:
    if (gsd_config_addr(value, &ss)) return fail(err, cap, "bad --listen address", value);
    return copy_value(c->listen, sizeof c->listen, value, err, cap, "bad --listen address");
  case OPT_HTTP:
    if (gsd_config_addr(value, &ss)) return fail(err, cap, "bad --http address", value);
    return copy_value(c->http, sizeof c->http, value, err, cap, "bad --http address");
  case OPT_STORE:
    return copy_value(c->store, sizeof c->store, value, err, cap, "bad --store folder");
  case OPT_CATALOG:
    if (!gsd_store_is_pg_url(value)) return fail(err, cap, "bad --catalog: not a postgresql:// URL", value);
    return copy_value(c->catalog, sizeof c->catalog, value, err, cap, "bad --catalog URL");
  case OPT_IDENTITY:
    return copy_value(c->identity, sizeof c->identity, value, err, cap, "bad --identity");
  case OPT_RECORD:
    return copy_value(c->record, sizeof c->record, value, err, cap, "bad --record folder");
  case OPT_TOKEN_FILE:
    return copy_value(c->http_token_file, sizeof c->http_token_file, value, err, cap,
                      "bad --http-token-file path");
  case OPT_TLS_CERT:
    return copy_value(c->http_tls_cert, sizeof c->http_tls_cert, value, err, cap,
                      "bad --http-tls-cert path");
  case OPT_TLS_KEY:
    return copy_value(c->http_tls_key, sizeof c->http_tls_key, value, err, cap,
                      "bad --http-tls-key path");
  case OPT_INSECURE:
    /* On the command line the flag has no value; in the file it says yes or no. */
    if (!value || !strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "1"))
      c->insecure = 1;
    else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0"))
      c->insecure = 0;
    else
      return fail(err, cap, "insecure must be yes or no, not", value);
    return GS_OK;
  case OPT_REQUIRE_KEYS:
    if (!value || !strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "1"))
      c->require_keys = 1;
    else if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0"))
      c->require_keys = 0;
    else
      return fail(err, cap, "require-keys must be yes or no, not", value);
    return GS_OK;
  case OPT_LOG_LEVEL:
    if (gsd_log_parse_level(value, &c->log_level))
      return fail(err, cap, "--log-level must be error, warn, info or debug, not", value);
    return GS_OK;
  case OPT_LOG_FORMAT:
    if (gsd_log_parse_format(value, &c->log_format))
      return fail(err, cap, "--log-format must be text or json, not", value);
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
    if ((o->takes_value || o->id == OPT_INSECURE || o->id == OPT_REQUIRE_KEYS) &&
        o->id != OPT_CONFIG &&
        strcmp(o->long_name, name) == 0)
      return o->id;
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

/* The token is the file's first line without its line end. Only visible
 * ASCII is accepted, so it goes into a header as it is and a stray blank
 * cannot make two tokens that look the same. */
static int load_token(gsd_config *c, char *err, size_t cap) {
  FILE *f = fopen(c->http_token_file, "r");
  char line[GSD_TOKEN_MAX + 3];
  size_t n, i;
  if (!f) {
    snprintf(err, cap, "cannot open --http-token-file '%s': %s", c->http_token_file,
             strerror(errno));
    return GS_EINVAL;
  }
  if (!fgets(line, sizeof line, f)) line[0] = '\0';
  fclose(f);
  n = strcspn(line, "\r\n");
  if (n > GSD_TOKEN_MAX) {                /* also a line too long for the buffer */
    snprintf(err, cap, "the token in '%s' is longer than %d bytes", c->http_token_file,
             GSD_TOKEN_MAX);
    return GS_EINVAL;
  }
  line[n] = '\0';
  for (i = 0; i < n; i++)
    if (line[i] <= ' ' || line[i] > '~') break;
  if (n == 0 || i < n) {
    snprintf(err, cap, "the token in '%s' must be one line of visible ASCII characters "
             "(no blanks)", c->http_token_file);
    return GS_EINVAL;
  }
  memcpy(c->http_token, line, n + 1);
  return GS_OK;
}

/* What the settings allow together: TLS needs both files, and the API
 * answers beyond loopback only with a token (or --insecure). The agent
 * port's rule needs the catalog and is checked when the store is open. */
static int check_settings(gsd_config *c, char *err, size_t cap) {
  int rc;
  if (!c->http_tls_cert[0] != !c->http_tls_key[0]) {
    snprintf(err, cap, "--http-tls-cert and --http-tls-key go together");
    return GS_EINVAL;
  }
  if (c->http_token_file[0] && (rc = load_token(c, err, cap)) != GS_OK) return rc;
  if (!c->http_token[0] && !c->insecure && !gsd_config_is_loopback(c->http)) {
    snprintf(err, cap, "refusing to serve the HTTP API on %s, beyond loopback, without a "
             "token: give --http-token-file FILE (or --insecure to allow it)", c->http);
    return GS_EINVAL;
  }
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
  default_limits(c);
  if ((rc = find_config(c, argc, argv, &path, err, cap)) != GS_OK) return rc;
  if (c->help || c->version) return GS_OK;
  if (path && (rc = load_file(c, path, err, cap)) != GS_OK) return rc;
  gs_args_init(&a, argc, argv, options);
  while (gs_args_next(&a) == GS_ARG_OPTION)
    if ((rc = set_value(c, a.id, a.value, err, cap)) != GS_OK) return rc;
  return check_settings(c, err, cap);
}

int gsd_config_addr(const char *text, struct sockaddr_storage *addr) {
  char host[256], port_text[8], *end;
  long port;
  if (gs_parse_address(text, NULL, host, sizeof host, port_text, sizeof port_text) != GS_OK)
    return GS_EINVAL;
  errno = 0;
  port = strtol(port_text, &end, 10);
  if (errno || *end || port < 0 || port > 65535) return GS_EINVAL;
  memset(addr, 0, sizeof *addr);
  if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)addr) == 0) return GS_OK;
  if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)addr) == 0) return GS_OK;
  return GS_EINVAL;
}

int gsd_config_is_loopback(const char *addr) {
  static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  struct sockaddr_storage ss;
  const unsigned char *b;
  if (gsd_config_addr(addr, &ss) != GS_OK) return 0;
  if (ss.ss_family == AF_INET)
    return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
  b = ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr;
  if (memcmp(b, mapped, sizeof mapped) == 0) return b[12] == 127;
  return memcmp(b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16) == 0;
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
