/* gs_agent_main.c - gcsnap-agent: captures heap snapshots into a dump or
 * for a collector.
 *
 * Parses the command line and opens the source. With --out it then opens
 * the file sink (so that a bad option never touches the output), walks the
 * one into the other and commits; with --connect it hands the source to a
 * session with the collector. The exit status says which part failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_knob.h"
#include "gs_parse.h"
#include "gs_port.h"
#include "gs_reader.h"
#include "gs_session.h"
#include "gs_sha256.h"
#include "gs_sink.h"
#include "gs_sources.h"
#include "gs_spool.h"
#include "gs_walk.h"

#define AGENT_NAME "gcsnap-agent"
#ifndef GS_VERSION
#define GS_VERSION "0"
#endif

enum {
  EXIT_DONE = 0,
  EXIT_CAPTURE = 1,         /* the source failed: heap not captured */
  EXIT_USAGE = 2,
  EXIT_OUTPUT = 3,          /* the dump could not be written */
  EXIT_REFUSED = 4,         /* --once: the collector refused the device's key */
  EXIT_GONE = 5             /* a session's program exited (GS_SESSION_GONE) */
};

#define AGENT_CONNECT_TIMEOUT_MS 10000u
#define AGENT_RETRY_MAX_MS 30000u
#define AGENT_COOLDOWN_MS 60000u
#define AGENT_CHECK_MS 1000u
#define AGENT_SPOOL_MAX 20u
#define AGENT_SPOOL_BYTES ((uint64_t)64 << 20)
#define AGENT_DURATION_MAX_MS 604800000u      /* a week */
#define AGENT_COLLECTORS_MAX 8                /* addresses in --connect */
#define AGENT_COLLECTORS_MAX_STR "8"

typedef struct agent_args {
  const char *source;
  const char *out;
  const char *connect;      /* HOST:PORT[,HOST:PORT...] as given */
  char host[AGENT_COLLECTORS_MAX][256], port[AGENT_COLLECTORS_MAX][32];
  const char *hosts[AGENT_COLLECTORS_MAX], *ports[AGENT_COLLECTORS_MAX];
  unsigned naddrs;
  const char *device_id, *app_name;
  const char *key_file, *key_hex;   /* --key-file, --key */
  uint8_t key[GS_WIRE_KEY_BYTES];
  int has_key;
  int once;
  unsigned connect_timeout_ms, retry_max_ms;
  const char *session_only;   /* an option given that only --connect takes */
  const char *own_only;       /* an option given that --once excludes */
  gs_walk_options walk;
  int json;
  int list;                 /* --list */
  /* captures on the agent's own, and the spool */
  unsigned every_ms, cooldown_ms, check_ms;
  const char *growth_trigger, *bytes_trigger;
  uint32_t growth_bp;
  uint64_t heap_limit;
  const char *trigger_only;   /* --cooldown or --check-interval given */
  const char *spool_dir;
  unsigned spool_max;
  uint64_t spool_bytes;
  const char *spool_only;     /* --spool-max or --spool-bytes given */
} agent_args;

static void agent_usage(FILE *f) {
  fprintf(f,
    "usage: " AGENT_NAME " --source SPEC --out FILE|- [--stable-ids] [--clock MS] [--json]\n"
    "                    [--max-refs N]\n"
#ifndef GS_AGENT_MINIMAL
    "       " AGENT_NAME " --list [--json]\n"
#endif
    "       " AGENT_NAME " --source SPEC --connect HOST[:PORT][,...] --device-id ID [--app NAME]\n"
    "                    [--key-file PATH | --key HEX]\n"
    "                    [--once] [--stable-ids] [--clock MS] [--json] [--max-refs N]\n"
    "                    [--connect-timeout S] [--retry-max S]\n"
    "                    [--every DURATION] [--trigger heap-growth=P%%|heap-bytes=SIZE]...\n"
    "                    [--cooldown DURATION] [--check-interval DURATION]\n"
    "                    [--spool DIR [--spool-max N] [--spool-bytes SIZE]]\n"
    "\n"
    "Captures one snapshot of a heap and writes it as an RPM GC heap dump, or\n"
    "keeps a session with a collector (gcsnapd) and streams a snapshot each\n"
    "time it asks for one.\n"
    "\n"
    "  --source SPEC  where the heap comes from: %s, with options\n"
    "                 after a colon (below)\n"
    "  --out FILE     the dump; written under a temporary name in FILE's folder\n"
    "                 and renamed to FILE only when complete, so a failed\n"
    "                 capture leaves no file. - writes to standard output.\n"
    "                 The source's generation ranges go beside it, to\n"
    "                 FILE.gens.json (not for - or a device)\n"
    "  --stable-ids   object IDs that stay the same for the same object across\n"
    "                 snapshots; marks each section by appending \" [stable-ids]\"\n"
    "                 to its AppDomain name. A source that cannot keep IDs\n"
    "                 (file) refuses it\n"
    "  --clock MS     stamp every section with MS (ms since boot, decimal or 0x\n"
    "                 hex) instead of the time, for reproducible dumps\n"
    "  --max-refs N   refuse the capture of a heap with an object of more than N\n"
    "                 references (default 33554432, what readers take unless\n"
    "                 told more: gcsnap --max-refs, gcsnapd\n"
    "                 --max-object-references); each costs 8 bytes while its\n"
    "                 object is read\n"
    "  --json         print one line of JSON statistics: objects, references,\n"
    "                 roots, types, sections, bytes, seconds, pause_us,\n"
    "                 stream_bytes, lost_events (what a dotnet source read and\n"
    "                 lost), peak_rss_kb; on standard output, or on standard\n"
    "                 error when the dump goes to standard output. With\n"
    "                 --connect, one line per snapshot sent, with text_bytes,\n"
    "                 wire_bytes, wire_ratio, crc32, request_id and snapshot_id\n"
    "                 instead of bytes\n"
#ifndef GS_AGENT_MINIMAL
    "  --list         list the .NET programs this user can capture with\n"
    "                 --source dotnet:PID: pid, name, runtime version, command\n"
    "                 line (with --json: a JSON object per line)\n"
#endif
    "  -h, --help     this text\n"
    "  --version      the version\n"
    "\n"
    "Collector session (instead of --out):\n"
    "  --connect HOST[:PORT]  the collector (port %s by default; [ADDR]:PORT\n"
    "                 for an IPv6 address). The agent says hello, then answers\n"
    "                 each capture request with a streamed snapshot and logs\n"
    "                 the collector's acknowledgements and errors on standard\n"
    "                 error. When the link drops it reconnects after 0.5 s,\n"
    "                 doubling up to --retry-max, with jitter; it runs until\n"
    "                 it is stopped. Several collectors, separated by commas\n"
    "                 (at most " AGENT_COLLECTORS_MAX_STR "), are tried in turn: the next one at once\n"
    "                 when one cannot be reached or its link drops\n"
    "  --device-id ID this device's name at the collector (required)\n"
    "  --key-file PATH  the device key (64 hex digits, from 'gcsnap keys add'\n"
    "                 on the collector's host): proves the device to a\n"
    "                 collector that asks. Keep the file readable by the\n"
    "                 agent only. A refused key is tried again after 60 s\n"
    "  --key HEX      the key itself: less safe, as other users of the device\n"
    "                 may see the command line\n"
    "  --app NAME     the application's name in the hello (default: the\n"
    "                 program and its runtime where the source knows them,\n"
    "                 \"Contacts (.NET 10.0.12)\", else the source's name)\n"
    "  --once         connect, send one snapshot unasked, wait for the\n"
    "                 collector's verdict and exit\n"
    "  --connect-timeout S  give up a connection attempt, and the wait for\n"
    "                 the collector's welcome, after S seconds (default 10;\n"
    "                 up to 3 decimals)\n"
    "  --retry-max S  longest delay between reconnections (default 30)\n",
    gs_sources_names(), GS_WIRE_AGENT_PORT_STR);
  /* A second string: C99 compilers need take no literal above 4095 bytes. */
  fprintf(f,
    "\n"
    "Captures on the agent's own (with --connect, not with --once), sent\n"
    "unasked (request 0) and tagged with what made them. DURATION is a number\n"
    "with ms, s, m or h (seconds without; up to 3 decimals); SIZE a number of\n"
    "bytes with K, M, G or T (powers of 1024):\n"
    "  --every DURATION  capture every DURATION (trigger \"every\"), connected\n"
    "                 or not; the first one DURATION after the start\n"
    "  --trigger heap-growth=P%%  capture when the heap has grown by P percent\n"
    "                 (up to 2 decimals) since the last capture, or since the\n"
    "                 start before the first\n"
    "  --trigger heap-bytes=SIZE  capture when the heap holds more than SIZE\n"
    "                 bytes (again after each cool-down while it does). Both\n"
    "                 may be given; the trigger tag is the option as given\n"
    "  --cooldown DURATION  at least this long between two trigger captures\n"
    "                 (default 60s)\n"
    "  --check-interval DURATION  how often the heap's size is read for\n"
    "                 --trigger (default 1s); the demo source runs its every=N\n"
    "                 steps between two reads. Needs a source that can tell its\n"
    "                 heap's size (demo, mono; dotnet: as of the runtime's last\n"
    "                 collection, from a light session kept open)\n"
    "  --spool DIR    store and forward: every capture of the agent's own is\n"
    "                 written to DIR first (created if missing; one agent per\n"
    "                 folder) and sent from there, oldest first, when the\n"
    "                 collector is reachable; it leaves DIR only once the\n"
    "                 collector acknowledged it, so nothing is lost while the\n"
    "                 collector is down or when the link drops, and spooled\n"
    "                 snapshots survive a restart of the agent. Without\n"
    "                 --spool, a capture due while the collector cannot be\n"
    "                 reached is not taken, and one whose link drops is lost\n"
    "                 (both logged)\n"
    "  --spool-max N  at most N snapshots in the spool (default %u)\n"
    "  --spool-bytes SIZE  at most SIZE bytes in the spool (default 64M; 0: no\n"
    "                 byte bound). When a new snapshot makes the spool exceed\n"
    "                 a bound, the oldest ones are dropped, each logged; the\n"
    "                 newest is always kept, even alone above SIZE\n"
    "\n"
    "Sources:\n",
    AGENT_SPOOL_MAX);
  gs_sources_help(f);
  fprintf(f,
    "\n"
    "Exit status: 0 the snapshot was written, 1 the heap could not be captured\n"
    "(the source failed), 2 usage error, 3 the dump could not be written.\n"
    "With --once: 0 the collector stored the snapshot, 1 it refused it, the\n"
    "capture failed or the link dropped, 2 usage error, 3 could not connect,\n"
    "4 the collector refused the device's key (or wants one and none was given).\n"
    "Without --once the agent runs until it is stopped; it exits with 2 for a\n"
    "usage error, 3 when the --spool folder cannot be created or read"
#ifndef GS_AGENT_MINIMAL
    ", and 5\nwhen the program behind the source has exited (dotnet:PID, listen=PATH)"
#endif
    ".\n");
}

static int agent_usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, AGENT_NAME ": ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry '" AGENT_NAME " --help'.\n");
  return EXIT_USAGE;
}

/* ---- arguments ---- */

/* "--name VALUE" or "--name=VALUE": the value, or NULL if arg is not name. */
static const char *agent_value(int argc, char **argv, int *i, const char *name, int *missing) {
  const char *arg = argv[*i];
  size_t n = strlen(name);
  if (!arg || strncmp(arg, name, n) != 0) return NULL;
  if (arg[n] == '=') return arg + n + 1;
  if (arg[n] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

static int agent_parse_clock(const char *val, agent_args *a) {
  gs_knob k;
  char err[160];
  k.key = "--clock";
  k.key_len = strlen(k.key);
  k.val = val;
  k.val_len = strlen(val);
  if (gs_knob_count(&k, 0, UINT64_MAX, &a->walk.clock_ms, err, sizeof err))
    return agent_usage_error("%s", err);
  a->walk.fixed_clock = 1;
  return EXIT_DONE;
}

static int agent_parse_max_refs(const char *val, agent_args *a) {
  gs_knob k;
  char err[160];
  uint64_t n;
  k.key = "--max-refs";
  k.key_len = strlen(k.key);
  k.val = val;
  k.val_len = strlen(val);
  if (gs_knob_count(&k, 1, GS_READER_MAX_REFS_CEILING, &n, err, sizeof err))
    return agent_usage_error("%s", err);
  a->walk.max_refs = (size_t)n;
  return EXIT_DONE;
}

/* Seconds with up to 3 decimals ("2", "0.5"), as milliseconds. */
static int agent_parse_seconds(const char *name, const char *val, unsigned *ms) {
  unsigned long whole = 0, frac = 0, scale = 100;
  const char *p = val;
  int ok = *p >= '0' && *p <= '9';
  while (*p >= '0' && *p <= '9' && whole <= 86400) whole = whole * 10 + (unsigned long)(*p++ - '0');
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9' && scale; scale /= 10) frac += (unsigned long)(*p++ - '0') * scale;
  if (!ok || *p || whole > 86400) {
    fprintf(stderr, AGENT_NAME ": %s: bad number of seconds '%s' (0 to 86400, up to 3 decimals)\n",
            name, val);
    fprintf(stderr, "Try '" AGENT_NAME " --help'.\n");
    return EXIT_USAGE;
  }
  *ms = (unsigned)(whole * 1000 + frac);
  return EXIT_DONE;
}

/* A decimal number with up to max_dec decimals: *units is it times
 * 10^max_dec; *end is what follows it. 0 when there is no number. */
static int agent_parse_decimal(const char *p, unsigned max_dec, uint64_t *units,
                               const char **end) {
  uint64_t v = 0, scale = 1;
  unsigned i, dec = 0;
  int ok = *p >= '0' && *p <= '9';
  for (i = 0; i < max_dec; i++) scale *= 10;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (v > (UINT64_MAX / 10 - 9) / scale) return 0;
    v = v * 10 + (uint64_t)(*p - '0');
  }
  v *= scale;
  if (*p == '.' && max_dec) {
    for (p++; *p >= '0' && *p <= '9'; p++) {
      if (++dec > max_dec) return 0;
      scale /= 10;
      v += (uint64_t)(*p - '0') * scale;
    }
  }
  *units = v;
  *end = p;
  return ok;
}

/* DURATION (gs_parse.h), 1 ms to a week. */
static int agent_parse_duration(const char *name, const char *val, unsigned *ms) {
  uint64_t v;
  if (gs_parse_duration_ms(val, &v) != GS_OK || v < 1 || v > AGENT_DURATION_MAX_MS) {
    fprintf(stderr, AGENT_NAME ": %s: bad duration '%s' (a number with ms, s, m, h or d;"
            " 1ms to 168h)\n", name, val);
    fprintf(stderr, "Try '" AGENT_NAME " --help'.\n");
    return EXIT_USAGE;
  }
  *ms = (unsigned)v;
  return EXIT_DONE;
}

/* SIZE (gs_parse.h): bytes, or a number with K, M, G or T. */
static int agent_parse_size(const char *name, const char *val, uint64_t *bytes) {
  if (gs_parse_size(val, bytes) != GS_OK) {
    fprintf(stderr, AGENT_NAME ": %s: bad size '%s' (bytes, or a number with K, M, G or T)\n",
            name, val);
    fprintf(stderr, "Try '" AGENT_NAME " --help'.\n");
    return EXIT_USAGE;
  }
  return EXIT_DONE;
}

/* --trigger heap-growth=P% or heap-bytes=SIZE. */
static int agent_parse_trigger(const char *val, agent_args *a) {
  const char *end;
  uint64_t v;
  int rc;
  if (!strncmp(val, "heap-growth=", 12)) {
    if (a->growth_trigger) return agent_usage_error("%s", "--trigger heap-growth given twice");
    if (!agent_parse_decimal(val + 12, 2, &v, &end) || strcmp(end, "%") || v == 0 ||
        v > 100000000u)
      return agent_usage_error("--trigger: bad growth '%s' (a percentage above 0, up to 2"
                               " decimals, then %%: heap-growth=25%%)", val);
    a->growth_trigger = val;
    a->growth_bp = (uint32_t)v;
    return EXIT_DONE;
  }
  if (!strncmp(val, "heap-bytes=", 11)) {
    if (a->bytes_trigger) return agent_usage_error("%s", "--trigger heap-bytes given twice");
    if ((rc = agent_parse_size("--trigger heap-bytes", val + 11, &a->heap_limit))) return rc;
    if (a->heap_limit == 0) return agent_usage_error("--trigger: '%s' must be above 0", val);
    a->bytes_trigger = val;
    return EXIT_DONE;
  }
  return agent_usage_error("--trigger: unknown trigger '%s' (heap-growth=P%% or"
                           " heap-bytes=SIZE)", val);
}

/* 64 hex digits, with blanks (a newline) around them, into a->key. */
static int agent_parse_key(const char *text, size_t len, agent_args *a, const char *what) {
  size_t i, n = 0;
  while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ' ||
                 text[len - 1] == '\t'))
    len--;
  while (len && (*text == ' ' || *text == '\t')) text++, len--;
  for (i = 0; i < len && n < 2 * GS_WIRE_KEY_BYTES; i++, n++) {
    char c = text[i];
    unsigned v = c >= '0' && c <= '9' ? (unsigned)(c - '0')
               : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
               : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
    if (v == 16u) break;
    if (n % 2 == 0) a->key[n / 2] = (uint8_t)(v << 4);
    else a->key[n / 2] |= (uint8_t)v;
  }
  if (i != len || n != 2 * GS_WIRE_KEY_BYTES) {
    gs_sha256_wipe(a->key, sizeof a->key);
    return agent_usage_error("%s: a device key is 64 hex digits (from 'gcsnap keys add')", what);
  }
  a->has_key = 1;
  return EXIT_DONE;
}

/* Reads --key-file through the port layer (no more than a key's worth). */
static int agent_read_key_file(agent_args *a) {
  gs_port_file *f = NULL;
  char text[160];
  size_t len = 0, got = 1;
  int rc;
  if (gs_port_file_open(&f, a->key_file)) {
    fprintf(stderr, AGENT_NAME ": --key-file: cannot open '%s': %s\n", a->key_file,
            gs_port_error_text());
    return EXIT_USAGE;
  }
  while (got && len < sizeof text)
    if (gs_port_file_read(f, text + len, sizeof text - len, &got)) {
      fprintf(stderr, AGENT_NAME ": --key-file: cannot read '%s': %s\n", a->key_file,
              gs_port_error_text());
      gs_port_file_close(f);
      return EXIT_USAGE;
    } else {
      len += got;
    }
  gs_port_file_close(f);
  rc = agent_parse_key(text, len, a, "--key-file");
  gs_sha256_wipe(text, sizeof text);
  return rc;
}

/* A list of HOST, HOST:PORT or [ADDR]:PORT (gs_parse.h), separated by
 * commas, into a->host and a->port. */
static int agent_parse_connect(agent_args *a) {
  const char *p = a->connect, *comma;
  char one[300];
  for (a->naddrs = 0; *p; p = *comma ? comma + 1 : comma) {
    size_t len;
    comma = strchr(p, ',');
    if (!comma) comma = p + strlen(p);
    len = (size_t)(comma - p);
    if (a->naddrs == AGENT_COLLECTORS_MAX)
      return agent_usage_error("--connect: more than " AGENT_COLLECTORS_MAX_STR " collectors in '%s'",
                               a->connect);
    if (len == 0 || len >= sizeof one) break;
    memcpy(one, p, len);
    one[len] = '\0';
    if (gs_parse_address(one, GS_WIRE_AGENT_PORT_STR, a->host[a->naddrs], sizeof a->host[0],
                         a->port[a->naddrs], sizeof a->port[0]) != GS_OK)
      break;
    a->hosts[a->naddrs] = a->host[a->naddrs];
    a->ports[a->naddrs] = a->port[a->naddrs];
    a->naddrs++;
    if (!*comma) return EXIT_DONE;
  }
  return agent_usage_error("--connect: bad address in '%s' (HOST[:PORT] or [ADDR]:PORT,"
                           " separated by commas)", a->connect);
}

/* The options must make one mode: a dump (--out) or a session (--connect). */
static int agent_check_mode(agent_args *a) {
  if (a->list && (a->source || a->out || a->connect))
    return agent_usage_error("%s", "--list takes no --source, --out or --connect");
  if (a->list) return EXIT_DONE;
  if (!a->source || !*a->source) return agent_usage_error("%s", "--source is required");
  if (a->out && a->connect) return agent_usage_error("%s", "--out and --connect exclude each other");
  if (a->trigger_only && !a->growth_trigger && !a->bytes_trigger)
    return agent_usage_error("%s needs --trigger", a->trigger_only);
  if (a->spool_only && !a->spool_dir) return agent_usage_error("%s needs --spool", a->spool_only);
  if (a->connect) {
    if (!a->device_id || !*a->device_id)
      return agent_usage_error("%s", "--connect needs --device-id");
    if (a->once && a->own_only) return agent_usage_error("--once and %s exclude each other",
                                                         a->own_only);
    if (a->key_file && a->key_hex)
      return agent_usage_error("%s", "--key-file and --key exclude each other");
    if (a->key_file && agent_read_key_file(a) != EXIT_DONE) return EXIT_USAGE;
    if (a->key_hex && agent_parse_key(a->key_hex, strlen(a->key_hex), a, "--key") != EXIT_DONE)
      return EXIT_USAGE;
    return agent_parse_connect(a);
  }
  if (a->session_only) return agent_usage_error("%s needs --connect", a->session_only);
  if (!a->out || !*a->out)
    return agent_usage_error("%s", "--out is required (- for standard output), or --connect");
  return EXIT_DONE;
}

/* Returns EXIT_DONE to go on, or the exit status; *stop after --help. */
static int agent_parse(int argc, char **argv, agent_args *a, int *stop) {
  int i, rc = EXIT_DONE;
  memset(a, 0, sizeof *a);
  a->connect_timeout_ms = AGENT_CONNECT_TIMEOUT_MS;
  a->retry_max_ms = AGENT_RETRY_MAX_MS;
  a->cooldown_ms = AGENT_COOLDOWN_MS;
  a->check_ms = AGENT_CHECK_MS;
  a->spool_max = AGENT_SPOOL_MAX;
  a->spool_bytes = AGENT_SPOOL_BYTES;
  *stop = 0;
  for (i = 1; i < argc && rc == EXIT_DONE; i++) {
    const char *arg = argv[i], *val;
    int missing = 0;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      agent_usage(stdout);
      *stop = 1;
      return EXIT_DONE;
    } else if (!strcmp(arg, "--version")) {
      printf(AGENT_NAME " " GS_VERSION "\n");
      *stop = 1;
      return EXIT_DONE;
    } else if (!strcmp(arg, "--stable-ids")) {
      a->walk.stable_ids = 1;
    } else if (!strcmp(arg, "--json")) {
      a->json = 1;
    } else if (!strcmp(arg, "--list")) {
      a->list = 1;
    } else if (!strcmp(arg, "--once")) {
      a->once = 1;
      a->session_only = "--once";
    } else if ((val = agent_value(argc, argv, &i, "--source", &missing))) {
      a->source = val;
    } else if ((val = agent_value(argc, argv, &i, "--out", &missing))) {
      a->out = val;
    } else if ((val = agent_value(argc, argv, &i, "--clock", &missing))) {
      rc = agent_parse_clock(val, a);
    } else if ((val = agent_value(argc, argv, &i, "--max-refs", &missing))) {
      rc = agent_parse_max_refs(val, a);
    } else if ((val = agent_value(argc, argv, &i, "--connect-timeout", &missing))) {
      rc = agent_parse_seconds("--connect-timeout", val, &a->connect_timeout_ms);
      a->session_only = "--connect-timeout";
    } else if ((val = agent_value(argc, argv, &i, "--connect", &missing))) {
      a->connect = val;
    } else if ((val = agent_value(argc, argv, &i, "--device-id", &missing))) {
      a->device_id = val;
      a->session_only = "--device-id";
    } else if ((val = agent_value(argc, argv, &i, "--key-file", &missing))) {
      a->key_file = val;
      a->session_only = "--key-file";
    } else if ((val = agent_value(argc, argv, &i, "--key", &missing))) {
      a->key_hex = val;
      a->session_only = "--key";
    } else if ((val = agent_value(argc, argv, &i, "--app", &missing))) {
      a->app_name = val;
      a->session_only = "--app";
    } else if ((val = agent_value(argc, argv, &i, "--retry-max", &missing))) {
      rc = agent_parse_seconds("--retry-max", val, &a->retry_max_ms);
      a->session_only = "--retry-max";
    } else if ((val = agent_value(argc, argv, &i, "--every", &missing))) {
      rc = agent_parse_duration("--every", val, &a->every_ms);
      a->session_only = a->own_only = "--every";
    } else if ((val = agent_value(argc, argv, &i, "--trigger", &missing))) {
      rc = agent_parse_trigger(val, a);
      a->session_only = a->own_only = "--trigger";
    } else if ((val = agent_value(argc, argv, &i, "--cooldown", &missing))) {
      rc = agent_parse_duration("--cooldown", val, &a->cooldown_ms);
      a->session_only = a->trigger_only = "--cooldown";
    } else if ((val = agent_value(argc, argv, &i, "--check-interval", &missing))) {
      rc = agent_parse_duration("--check-interval", val, &a->check_ms);
      a->session_only = a->trigger_only = "--check-interval";
    } else if ((val = agent_value(argc, argv, &i, "--spool-max", &missing))) {
      uint64_t n = 0;
      const char *end;
      if (!agent_parse_decimal(val, 0, &n, &end) || *end || n < 1 || n > 1000000)
        rc = agent_usage_error("--spool-max: bad number '%s' (1 to 1000000)", val);
      a->spool_max = (unsigned)n;
      a->session_only = a->spool_only = "--spool-max";
    } else if ((val = agent_value(argc, argv, &i, "--spool-bytes", &missing))) {
      rc = agent_parse_size("--spool-bytes", val, &a->spool_bytes);
      a->session_only = a->spool_only = "--spool-bytes";
    } else if ((val = agent_value(argc, argv, &i, "--spool", &missing))) {
      if (!*val) rc = agent_usage_error("%s", "--spool: empty folder name");
      a->spool_dir = val;
      a->session_only = a->own_only = "--spool";
    } else if (missing) {
      rc = agent_usage_error("%s: missing value", arg);
    } else {
      rc = agent_usage_error("unknown argument '%s'", arg);
    }
  }
  if (rc != EXIT_DONE) return rc;
  return agent_check_mode(a);
}

/* ---- the capture ---- */

static void agent_print_json(const agent_args *a, const gs_source *src, const gs_sink *sink,
                             const gs_walk_stats *st, uint64_t us) {
  FILE *f = strcmp(a->out, "-") == 0 ? stderr : stdout;
  double seconds = (double)us / 1e6;
  fprintf(f,
          "{\"source\":\"%s\",\"objects\":%llu,\"references\":%llu,\"roots\":%llu,"
          "\"types\":%llu,\"sections\":%llu,\"generations\":%llu,\"bytes\":%llu,"
          "\"seconds\":%.6f,\"objects_per_second\":%.0f,\"pause_us\":%llu,"
          "\"stream_bytes\":%llu,\"lost_events\":%llu,\"peak_rss_kb\":%llu}\n",
          src->ops->name, (unsigned long long)st->objects,
          (unsigned long long)st->references, (unsigned long long)st->roots,
          (unsigned long long)st->types, (unsigned long long)st->sections,
          (unsigned long long)st->generations, (unsigned long long)sink->bytes, seconds,
          seconds > 0 ? (double)st->objects / seconds : 0.0,
          (unsigned long long)src->pause_us, (unsigned long long)src->stream_bytes,
          (unsigned long long)src->lost_events, (unsigned long long)(gs_port_peak_rss() / 1024));
  fflush(f);
}

static int agent_exit_of(gs_walk_failure failed) {
  switch (failed) {
  case GS_WALK_USAGE: return EXIT_USAGE;
  case GS_WALK_SINK: return EXIT_OUTPUT;
  default: return EXIT_CAPTURE;
  }
}

/* Walks and commits; the sink is freed by the caller either way. */
static int agent_capture(const agent_args *a, gs_source *src, gs_sink *sink) {
  gs_walk_stats st;
  uint64_t t0 = gs_port_time_us();
  int err;
  if (gs_walk(src, sink, &a->walk, &st) != GS_OK) {
    fprintf(stderr, AGENT_NAME ": %s\n", st.error);
    return agent_exit_of(st.failed);
  }
  if ((err = sink->ops->commit(sink))) {
    fprintf(stderr, AGENT_NAME ": %s\n", sink->error[0] ? sink->error : gs_strerror(err));
    return EXIT_OUTPUT;
  }
  if (a->json) agent_print_json(a, src, sink, &st, gs_port_time_us() - t0);
  return EXIT_DONE;
}

/* --connect: a session with the collector; returns only with --once or on
 * a fatal error. */
static int agent_session(const agent_args *a, gs_source *src) {
  gs_session_options o;
  gs_spool *spool = NULL;
  char err[400];
  int rc;
  if ((a->growth_trigger || a->bytes_trigger) && !src->ops->heap_bytes) {
    fprintf(stderr, AGENT_NAME ": --trigger: the %s source cannot tell its heap's size\n",
            src->ops->name);
    fprintf(stderr, "Try '" AGENT_NAME " --help'.\n");
    return EXIT_USAGE;
  }
  if (a->spool_dir &&
      gs_spool_open(&spool, a->spool_dir, a->spool_max, a->spool_bytes, err, sizeof err)) {
    fprintf(stderr, AGENT_NAME ": %s\n", err);
    return EXIT_OUTPUT;
  }
  memset(&o, 0, sizeof o);
  o.hosts = a->hosts;
  o.ports = a->ports;
  o.naddrs = a->naddrs;
  o.device_id = a->device_id;
  o.key = a->has_key ? a->key : NULL;
  if (!a->app_name && src->ops->describe) src->ops->describe(src);
  o.app_name = a->app_name ? a->app_name : src->program[0] ? src->program : src->ops->name;
  o.connect_timeout_ms = a->connect_timeout_ms;
  o.retry_max_ms = a->retry_max_ms < GS_SESSION_BACKOFF_MS ? GS_SESSION_BACKOFF_MS
                                                            : a->retry_max_ms;
  o.once = a->once;
  o.json = a->json;
  o.walk = a->walk;
  o.every_ms = a->every_ms;
  o.growth_trigger = a->growth_trigger;
  o.growth_bp = a->growth_bp;
  o.bytes_trigger = a->bytes_trigger;
  o.heap_limit = a->heap_limit;
  o.cooldown_ms = a->cooldown_ms;
  o.check_ms = a->growth_trigger || a->bytes_trigger ? a->check_ms : 0;
  o.spool = spool;
  rc = (int)gs_session_run(src, &o);
  gs_spool_close(spool);
  return rc;
}

static int agent_list(int json) {
  int rc = gs_sources_list(stdout, json);
  if (rc == GS_EINVAL) fprintf(stderr, AGENT_NAME ": --list: this build has no dotnet source\n");
  else if (rc) fprintf(stderr, AGENT_NAME ": --list: %s\n", gs_strerror(rc));
  return rc == GS_EINVAL ? EXIT_USAGE : rc ? EXIT_CAPTURE : EXIT_DONE;
}

int main(int argc, char **argv) {
  agent_args a;
  gs_source *src = NULL;
  gs_sink *sink = NULL;
  char err[320];
  int stop, rc;

  if ((rc = agent_parse(argc, argv, &a, &stop)) != EXIT_DONE || stop) return rc;
  if (a.list) return agent_list(a.json);
  if ((rc = gs_sources_open(&src, a.source, err, sizeof err))) {
    fprintf(stderr, AGENT_NAME ": %s\n", err);
    if (rc == GS_EINVAL) fprintf(stderr, "Try '" AGENT_NAME " --help'.\n");
    return rc == GS_EINVAL ? EXIT_USAGE : EXIT_CAPTURE;
  }
  if (gs_walk_check(src, &a.walk, err, sizeof err)) {
    src->ops->free(src);
    return agent_usage_error("%s", err);
  }
  if (a.connect) {
    rc = agent_session(&a, src);
    gs_sha256_wipe(a.key, sizeof a.key);
    src->ops->free(src);
    return rc == GS_SESSION_REFUSED ? EXIT_REFUSED : rc == GS_SESSION_GONE ? EXIT_GONE : rc;
  }
  if (gs_sink_file_new(&sink, a.out, err, sizeof err)) {
    fprintf(stderr, AGENT_NAME ": %s\n", err);
    src->ops->free(src);
    return EXIT_OUTPUT;
  }
  rc = agent_capture(&a, src, sink);
  sink->ops->free(sink);
  src->ops->free(src);
  return rc;
}
