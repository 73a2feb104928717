/* gs_main.c - entry point of the gcsnap command-line tool.
 *
 * Only dispatches: global options (--help, --version, the collector's
 * --token-file and --cacert, and --max-refs of the input files, which may
 * come anywhere before a "--") and the command name are handled here; each
 * command parses its own options. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_client.h"
#include "gs_file.h"
#include "gs_reader.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  int reads_heaps;            /* reads heap files: --max-refs applies */
  const char *summary;
} command;

static const command commands[] = {
  {"validate", gs_cmd_validate, 1, "check dumps against the record format"},
  {"summary", gs_cmd_summary, 1, "report objects, roots, reachability and types of a dump"},
  {"convert", gs_cmd_convert, 1, "rewrite a dump in canonical form, optionally zstd-compressed"},
  {"dominators", gs_cmd_dominators, 1, "list what keeps the most bytes alive (dominator tree)"},
  {"diff", gs_cmd_diff, 1, "compare two dumps type by type"},
  {"paths", gs_cmd_paths, 1, "show which roots keep an object or a type alive"},
  {"export", gs_cmd_export, 1, "write a dump as a Chrome heap snapshot, CSV or Graphviz"},
  {"trend", gs_cmd_trend, 1, "list leak suspects across a series of snapshots"},
  {"report", gs_cmd_report, 1, "write a self-contained HTML report of a dump, a diff or a trend"},
  {"devices", gs_cmd_devices, 0, "list the devices known to the collector (gcsnapd)"},
  {"snapshots", gs_cmd_snapshots, 0, "list the snapshots stored by the collector"},
  {"capture", gs_cmd_capture, 0, "ask the collector for a snapshot of a connected device"},
  {"fetch", gs_cmd_fetch, 0, "download a stored snapshot into a file"},
  {"upload", gs_cmd_upload, 0, "store a heap file (.gclog, .heapsnapshot, .hprof, .gcdump) in the collector"},
  {"schedule", gs_cmd_schedule, 0, "add, list or remove the collector's periodic captures"},
  {"replay", gs_cmd_replay, 0, "play a recorded agent session (.gcstream) to a collector"},
  {"keys", gs_cmd_keys, 0, "add, list or remove the device keys agents prove themselves with"},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void print_usage(FILE *out) {
  size_t i;
  fputs("usage: gcsnap COMMAND [OPTIONS] [ARGS]\n"
        "       gcsnap --version | --help\n"
        "\n"
        "Tools for GC heap snapshots in the RPM GC heap dump record format\n"
        "(.gclog, or .gclog.zst compressed with zstd). Every command also reads\n"
        "V8 .heapsnapshot, HPROF and .gcdump files, plain, gzip or zstd.\n"
        "\n"
        "Commands:\n", out);
  for (i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fputs("\n"
        "Run 'gcsnap COMMAND --help' for the options of a command.\n"
        "\n"
        "Global options, for the commands that talk to the collector:\n"
        "  --token-file PATH  send the token in PATH (its first line) as\n"
        "                     'Authorization: Bearer TOKEN'; else $" GS_TOKEN_ENV "\n"
        "  --cacert FILE      CA certificates (PEM) for an https:// collector\n"
        "and for the commands that read heap files:\n"
        "  --max-refs N       read objects of up to N references (default\n"
        "                     33554432; each costs 8 bytes of memory while\n"
        "                     its object is read); larger ones make a file\n"
        "                     unreadable. Refused by the other commands: the\n"
        "                     collector's limit is gcsnapd\n"
        "                     --max-object-references\n"
        "\n"
        "Exit status: 0 success, 1 invalid input or the collector refused or\n"
        "failed the operation, 2 usage or I/O error or no collector to talk to.\n", out);
}

/* The value of a global option at argv[*i] ("--name VALUE" or
 * "--name=VALUE"), or NULL when argv[*i] is not that option; *missing is
 * set when its value is. */
static const char *global_value(int argc, char **argv, int *i, const char *name, int *missing) {
  size_t n = strlen(name);
  if (!argv[*i] || strncmp(argv[*i], name, n) != 0) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] != '\0') return NULL;
  if (*i + 1 >= argc) { *missing = 1; return NULL; }
  return argv[++*i];
}

static int max_refs_given;

static int set_max_refs(const char *s) {
  uint64_t n, most = GS_READER_MAX_REFS_CEILING;
  if (gs_args_parse_count(s, most, &n) != 0 || n == 0) {
    fprintf(stderr, "gcsnap: --max-refs needs a number from 1 to %llu\n", (unsigned long long)most);
    return GS_EXIT_USAGE;
  }
  gs_file_set_max_refs((size_t)n);
  max_refs_given = 1;
  return GS_EXIT_OK;
}

/* Takes the global options out of argv (up to a "--"), wherever they are. */
static int global_options(int *argc, char **argv) {
  const char *token_file = NULL, *cacert = NULL, *v;
  int i, out = 1, missing = 0, code = GS_EXIT_OK;
  for (i = 1; i < *argc && code == GS_EXIT_OK; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if ((v = global_value(*argc, argv, &i, "--token-file", &missing))) token_file = v;
    else if ((v = global_value(*argc, argv, &i, "--cacert", &missing))) cacert = v;
    else if ((v = global_value(*argc, argv, &i, "--max-refs", &missing))) code = set_max_refs(v);
    else if (!missing) argv[out++] = argv[i];
    if (missing) {
      fprintf(stderr, "gcsnap: option '%s' needs a value\n", argv[i]);
      return GS_EXIT_USAGE;
    }
  }
  while (i < *argc) argv[out++] = argv[i++];
  argv[out] = NULL;
  *argc = out;
  return code != GS_EXIT_OK ? code : gs_client_set_auth(token_file, cacert);
}

/* A limit the command would not use is refused rather than ignored: the
 * collector reads what it is sent with a limit of its own. */
static int run(const command *c, int argc, char **argv) {
  if (max_refs_given && !c->reads_heaps) {
    fprintf(stderr, "gcsnap: --max-refs does not apply to '%s', which reads no heap file (the "
            "collector's limit is gcsnapd --max-object-references)\n", c->name);
    return GS_EXIT_USAGE;
  }
  return c->run(argc, argv);
}

int main(int argc, char **argv) {
  size_t i;
  int code = global_options(&argc, argv);
  if (code != GS_EXIT_OK) return code;
  gs_file_set_progress(1);   /* on a terminal, for large inputs */
  gs_file_set_notes(1);
  if (argc < 2) {
    print_usage(stderr);
    return GS_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    print_usage(stdout);
    return gs_cli_finish(GS_EXIT_OK);
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("gcsnap %s\n", GS_VERSION);
    return gs_cli_finish(GS_EXIT_OK);
  }
  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return run(&commands[i], argc - 1, argv + 1);
  fprintf(stderr, "gcsnap: unknown %s '%s'\n", argv[1][0] == '-' ? "option" : "command",
          argv[1]);
  print_usage(stderr);
  return GS_EXIT_USAGE;
}
