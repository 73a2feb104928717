/* gs_agent_main.c - gcsnap-agent: captures one heap snapshot into a dump.
 *
 * Parses the command line, opens the source, then the sink (so that a bad
 * option never touches the output), walks the one into the other and
 * commits. The exit status says which part failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_error.h"
#include "gs_knob.h"
#include "gs_port.h"
#include "gs_sink.h"
#include "gs_sources.h"
#include "gs_walk.h"

#define AGENT_NAME "gcsnap-agent"
#ifndef GS_VERSION
#define GS_VERSION "0"
#endif

enum {
  EXIT_DONE = 0,
  EXIT_CAPTURE = 1,         /* the source failed: heap not captured */
  EXIT_USAGE = 2,
  EXIT_OUTPUT = 3           /* the dump could not be written */
};

typedef struct agent_args {
  const char *source;
  const char *out;
  gs_walk_options walk;
  int json;
} agent_args;

static void agent_usage(FILE *f) {
  fprintf(f,
    "usage: " AGENT_NAME " --source SPEC --out FILE|- [--stable-ids] [--clock MS] [--json]\n"
    "\n"
    "Captures one snapshot of a heap and writes it as an RPM GC heap dump.\n"
    "\n"
    "  --source SPEC  where the heap comes from: %s, with options\n"
    "                 after a colon (below)\n"
    "  --out FILE     the dump; written under a temporary name in FILE's folder\n"
    "                 and renamed to FILE only when complete, so a failed\n"
    "                 capture leaves no file. - writes to standard output\n"
    "  --stable-ids   object IDs that stay the same for the same object across\n"
    "                 snapshots; marks each section by appending \" [stable-ids]\"\n"
    "                 to its AppDomain name. A source that cannot keep IDs\n"
    "                 (file) refuses it\n"
    "  --clock MS     stamp every section with MS (ms since boot, decimal or 0x\n"
    "                 hex) instead of the time, for reproducible dumps\n"
    "  --json         print one line of JSON statistics: objects, references,\n"
    "                 roots, types, sections, bytes, seconds, pause_us,\n"
    "                 peak_rss_kb; on standard output, or on standard error when\n"
    "                 the dump goes to standard output\n"
    "  -h, --help     this text\n"
    "  --version      the version\n"
    "\n"
    "Sources:\n",
    gs_sources_names());
  gs_sources_help(f);
  fprintf(f,
    "\n"
    "Exit status: 0 the snapshot was written, 1 the heap could not be captured\n"
    "(the source failed), 2 usage error, 3 the dump could not be written.\n");
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
  if (strncmp(arg, name, n) != 0) return NULL;
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

/* Returns EXIT_DONE to go on, or the exit status; *stop after --help. */
static int agent_parse(int argc, char **argv, agent_args *a, int *stop) {
  int i, rc = EXIT_DONE;
  memset(a, 0, sizeof *a);
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
    } else if ((val = agent_value(argc, argv, &i, "--source", &missing))) {
      a->source = val;
    } else if ((val = agent_value(argc, argv, &i, "--out", &missing))) {
      a->out = val;
    } else if ((val = agent_value(argc, argv, &i, "--clock", &missing))) {
      rc = agent_parse_clock(val, a);
    } else if (missing) {
      rc = agent_usage_error("%s: missing value", arg);
    } else {
      rc = agent_usage_error("unknown argument '%s'", arg);
    }
  }
  if (rc != EXIT_DONE) return rc;
  if (!a->source || !*a->source) return agent_usage_error("%s", "--source is required");
  if (!a->out || !*a->out)
    return agent_usage_error("%s", "--out is required (- for standard output)");
  return EXIT_DONE;
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
          "\"peak_rss_kb\":%llu}\n",
          src->ops->name, (unsigned long long)st->objects,
          (unsigned long long)st->references, (unsigned long long)st->roots,
          (unsigned long long)st->types, (unsigned long long)st->sections,
          (unsigned long long)st->generations, (unsigned long long)sink->bytes, seconds,
          seconds > 0 ? (double)st->objects / seconds : 0.0,
          (unsigned long long)src->pause_us,
          (unsigned long long)(gs_port_peak_rss() / 1024));
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
  if ((err = gs_walk(src, sink, &a->walk, &st))) {
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

int main(int argc, char **argv) {
  agent_args a;
  gs_source *src = NULL;
  gs_sink *sink = NULL;
  char err[320];
  int stop, rc;

  if ((rc = agent_parse(argc, argv, &a, &stop)) != EXIT_DONE || stop) return rc;
  if ((rc = gs_sources_open(&src, a.source, err, sizeof err))) {
    fprintf(stderr, AGENT_NAME ": %s\n", err);
    if (rc == GS_EINVAL) fprintf(stderr, "Try '" AGENT_NAME " --help'.\n");
    return rc == GS_EINVAL ? EXIT_USAGE : EXIT_CAPTURE;
  }
  if (gs_walk_check(src, &a.walk, err, sizeof err)) {
    src->ops->free(src);
    return agent_usage_error("%s", err);
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
