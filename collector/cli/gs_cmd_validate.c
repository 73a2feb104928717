/* gs_cmd_validate.c - "gcsnap validate": check files against the format.
 *
 * Diagnostics are printed as the validator finds them, so a huge broken
 * file shows its first problems at once; --max-errors bounds how many are
 * shown, never how many are counted. With --json the report is printed as
 * it is made too, its counts after its diagnostics. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_json.h"
#include "gs_jsonw.h"
#include "gs_validate.h"

#define DEFAULT_MAX_ERRORS 20

static const char usage[] =
  "usage: gcsnap validate [--strict] [--json] [--max-errors N] FILE...\n"
  "\n"
  "Checks each FILE (.gclog or .gclog.zst; - for stdin) against the RPM GC\n"
  "heap dump record format and prints FILE:LINE: error|warning [CODE]: message.\n"
  "\n"
  "  --strict        warnings make a file invalid too\n"
  "  --json          print one JSON report instead of text\n"
  "  --max-errors N  show at most N errors and N warnings per file (default 20,\n"
  "                  0 = no limit); the rest are counted\n"
  "  -h, --help      show this help\n"
  "\n"
  "Exit status: 0 all valid, 1 some file invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_STRICT, OPT_JSON, OPT_MAX_ERRORS };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"strict", 0, 0, OPT_STRICT},
  {"json", 0, 0, OPT_JSON},
  {"max-errors", 0, 1, OPT_MAX_ERRORS},
  {NULL, 0, 0, 0},
};

typedef struct validate_opts {
  int strict;
  int json;
  uint64_t max_shown;      /* per severity; 0 = no limit */
} validate_opts;

/* What one file's run produced. */
typedef struct file_report {
  const validate_opts *opts;
  gs_file *file;
  const char *name;
  uint64_t found[2];       /* diagnostics reported, by gs_severity */
  uint64_t shown[2];       /* of which printed */
  gs_validate_counts counts;  /* sections and records */
  gs_jsonw *json;          /* --json only: the report being printed */
  char io_error[300];      /* set when the file could not be read */
} file_report;

/* ---- diagnostics ----------------------------------------------------- */

static void write_diag(gs_jsonw *w, const gs_diag *d) {
  gs_severity sev = gs_diag_severity(d->code);
  gs_jsonw_object(w, NULL);
  gs_jsonw_value(w, "line", gs_json_u64(d->line));
  gs_jsonw_value(w, "severity", json_string(sev == GS_SEV_ERROR ? "error" : "warning"));
  gs_jsonw_value(w, "code", json_string(gs_diag_name(d->code)));
  gs_jsonw_value(w, "message", gs_json_cstring(d->message));
  gs_jsonw_end(w);
}

static void on_diag(void *ctx, const gs_diag *d) {
  file_report *rep = ctx;
  gs_severity sev = gs_diag_severity(d->code);
  rep->found[sev]++;
  if (rep->opts->max_shown && rep->shown[sev] >= rep->opts->max_shown) return;
  rep->shown[sev]++;
  if (rep->json) {
    write_diag(rep->json, d);
    return;
  }
  gs_file_hide_progress(rep->file);
  gs_cli_print_diag(stdout, rep->name, d);
}

/* ---- one file -------------------------------------------------------- */

static int report_valid(const file_report *rep) {
  if (rep->io_error[0] || rep->found[GS_SEV_ERROR]) return 0;
  return !(rep->opts->strict && rep->found[GS_SEV_WARNING]);
}

static void run_file(file_report *rep, const char *path) {
  gs_reader *r = NULL;
  int err = gs_file_open(&rep->file, path, rep->io_error, sizeof rep->io_error);
  if (err) return;
  gs_file_show_progress(rep->file);
  if ((err = gs_file_new_reader(rep->file, &r)) == GS_OK)
    err = gs_validate_reader(r, on_diag, rep, &rep->counts);
  if (err == GS_EIO && gs_file_diag(rep->file))
    on_diag(rep, gs_file_diag(rep->file));
  else if (err == GS_EIO && gs_file_error(rep->file)[0])
    snprintf(rep->io_error, sizeof rep->io_error, "%s: %s", rep->name,
             gs_file_error(rep->file));
  else if (err)
    snprintf(rep->io_error, sizeof rep->io_error, "%s: %s", rep->name, gs_strerror(err));
  gs_reader_free(r);
  gs_file_close(rep->file);
  rep->file = NULL;
}

static const char *plural(uint64_t n, const char *word, const char *words) {
  return n == 1 ? word : words;
}

static void print_omitted(const file_report *rep, gs_severity sev) {
  uint64_t rest = rep->found[sev] - rep->shown[sev];
  if (rest == 0) return;
  printf("%s: ... and %llu more %s\n", rep->name, (unsigned long long)rest,
         sev == GS_SEV_ERROR ? plural(rest, "error", "errors")
                             : plural(rest, "warning", "warnings"));
}

static void print_verdict(const file_report *rep) {
  unsigned long long e = rep->found[GS_SEV_ERROR], w = rep->found[GS_SEV_WARNING];
  if (rep->io_error[0]) {
    gs_cli_error("%s", rep->io_error);
    return;
  }
  print_omitted(rep, GS_SEV_ERROR);
  print_omitted(rep, GS_SEV_WARNING);
  if (report_valid(rep))
    printf("%s: valid (%llu %s)\n", rep->name, w, plural(w, "warning", "warnings"));
  else
    printf("%s: invalid (%llu %s, %llu %s)%s\n", rep->name, e, plural(e, "error", "errors"),
           w, plural(w, "warning", "warnings"),
           e == 0 ? " with --strict" : "");
}

/* ---- JSON ------------------------------------------------------------ */

/* The report's start; its diagnostics follow as they come. */
static void begin_report(file_report *rep) {
  gs_jsonw_object(rep->json, NULL);
  gs_jsonw_value(rep->json, "file", gs_json_cstring(rep->name));
  gs_jsonw_array(rep->json, "diagnostics");
}

/* What is known once the file was read. */
static void end_report(const file_report *rep) {
  gs_jsonw *w = rep->json;
  const gs_validate_counts *c = &rep->counts;
  gs_jsonw_end(w);
  gs_jsonw_value(w, "valid", json_boolean(report_valid(rep)));
  if (rep->io_error[0]) gs_jsonw_value(w, "io_error", gs_json_cstring(rep->io_error));
  gs_jsonw_value(w, "strict", json_boolean(rep->opts->strict));
  gs_jsonw_value(w, "errors", gs_json_u64(rep->found[GS_SEV_ERROR]));
  gs_jsonw_value(w, "warnings", gs_json_u64(rep->found[GS_SEV_WARNING]));
  gs_jsonw_value(w, "sections", gs_json_u64(c->sections));
  gs_jsonw_value(w, "records", gs_json_u64(c->records));
  gs_jsonw_value(w, "omitted_errors", gs_json_u64(rep->found[GS_SEV_ERROR] - rep->shown[GS_SEV_ERROR]));
  gs_jsonw_value(w, "omitted_warnings", gs_json_u64(rep->found[GS_SEV_WARNING] - rep->shown[GS_SEV_WARNING]));
  gs_jsonw_end(w);
}

/* ---- command --------------------------------------------------------- */

typedef struct validate_args {
  validate_opts opts;
  int help;
  const char **files;
  int nfiles;
} validate_args;

/* Returns GS_EXIT_OK to go on, else the exit code. */
static int parse_args(int argc, char **argv, validate_args *va) {
  gs_args a;
  gs_arg_kind k;
  gs_args_init(&a, argc, argv, options);
  va->opts.max_shown = DEFAULT_MAX_ERRORS;
  if (!(va->files = malloc(sizeof *va->files * (size_t)argc))) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("validate", usage, a.error);
    if (k == GS_ARG_OPERAND) { va->files[va->nfiles++] = a.value; continue; }
    switch (a.id) {
    case OPT_HELP: va->help = 1; break;
    case OPT_STRICT: va->opts.strict = 1; break;
    case OPT_JSON: va->opts.json = 1; break;
    case OPT_MAX_ERRORS:
      if (gs_args_parse_count(a.value, UINT64_MAX, &va->opts.max_shown) != 0)
        return gs_cli_usage_error("validate", usage, "--max-errors needs a number");
      break;
    }
  }
  if (!va->help && va->nfiles == 0)
    return gs_cli_usage_error("validate", usage, "no FILE given");
  return GS_EXIT_OK;
}

/* Validates one file and adds its outcome to *code and, with json, prints
 * its report. */
static void check_one(const validate_opts *opts, const char *path, gs_jsonw *json, int *code,
                      int *all_valid) {
  file_report rep;
  memset(&rep, 0, sizeof rep);
  rep.opts = opts;
  rep.name = gs_file_display_name(path);
  rep.json = json;
  if (json) begin_report(&rep);
  run_file(&rep, path);
  *all_valid = *all_valid && report_valid(&rep);
  if (rep.io_error[0]) *code = GS_EXIT_USAGE;
  else if (!report_valid(&rep) && *code == GS_EXIT_OK) *code = GS_EXIT_INVALID;
  if (!json) {
    print_verdict(&rep);
    return;
  }
  if (rep.io_error[0]) gs_cli_error("%s", rep.io_error);
  end_report(&rep);
}

/* One file: its report. Several: {"files": [...], "valid": all}. */
static int check_all(const validate_args *va, int *code) {
  gs_jsonw *w = va->opts.json ? gs_jsonw_print(stdout) : NULL;
  int i, all_valid = 1, several = va->nfiles > 1;
  if (va->opts.json && !w) return GS_ENOMEM;
  if (w && several) {
    gs_jsonw_object(w, NULL);
    gs_jsonw_array(w, "files");
  }
  for (i = 0; i < va->nfiles; i++) check_one(&va->opts, va->files[i], w, code, &all_valid);
  if (w && several) {
    gs_jsonw_end(w);
    gs_jsonw_value(w, "valid", json_boolean(all_valid));
    gs_jsonw_end(w);
  }
  return w ? gs_jsonw_finish(w, NULL) : GS_OK;
}

int gs_cmd_validate(int argc, char **argv) {
  validate_args va;
  int code, err;
  memset(&va, 0, sizeof va);
  if ((code = parse_args(argc, argv, &va)) != GS_EXIT_OK || va.help) {
    free(va.files);
    return code != GS_EXIT_OK ? code : gs_cli_help(usage);
  }
  err = check_all(&va, &code);
  free(va.files);
  if (err == GS_ENOMEM) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  return gs_cli_finish(err ? GS_EXIT_USAGE : code);
}
