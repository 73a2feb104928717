/* gs_cmd_validate.c - "gcsnap validate": check files against the format.
 *
 * Diagnostics are printed as the validator finds them, so a huge broken
 * file shows its first problems at once; --max-errors bounds how many are
 * shown, never how many are counted. With --json the report is built in
 * memory instead and printed at the end (bounded the same way). */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_json.h"
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
  json_t *diagnostics;     /* --json only */
  int oom;
  char io_error[300];      /* set when the file could not be read */
} file_report;

/* ---- diagnostics ----------------------------------------------------- */

static json_t *diag_json(const gs_diag *d) {
  json_t *o = json_object();
  gs_severity sev = gs_diag_severity(d->code);
  if (!o) return NULL;
  if (gs_json_set(o, "line", gs_json_u64(d->line)) ||
      gs_json_set(o, "severity", json_string(sev == GS_SEV_ERROR ? "error" : "warning")) ||
      gs_json_set(o, "code", json_string(gs_diag_name(d->code))) ||
      gs_json_set(o, "message", gs_json_cstring(d->message))) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static void on_diag(void *ctx, const gs_diag *d) {
  file_report *rep = ctx;
  gs_severity sev = gs_diag_severity(d->code);
  rep->found[sev]++;
  if (rep->opts->max_shown && rep->shown[sev] >= rep->opts->max_shown) return;
  rep->shown[sev]++;
  if (!rep->opts->json) {
    gs_file_hide_progress(rep->file);
    gs_cli_print_diag(stdout, rep->name, d);
  } else if (json_array_append_new(rep->diagnostics, diag_json(d)) != 0) {
    rep->oom = 1;
  }
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

static json_t *report_json(file_report *rep) {
  json_t *o = json_object();
  const gs_validate_counts *c = &rep->counts;
  int bad = !o;
  bad = bad || gs_json_set(o, "file", gs_json_cstring(rep->name)) ||
        gs_json_set(o, "valid", json_boolean(report_valid(rep)));
  if (!bad && rep->io_error[0])
    bad = gs_json_set(o, "io_error", gs_json_cstring(rep->io_error));
  bad = bad || gs_json_set(o, "strict", json_boolean(rep->opts->strict)) ||
        gs_json_set(o, "errors", gs_json_u64(rep->found[GS_SEV_ERROR])) ||
        gs_json_set(o, "warnings", gs_json_u64(rep->found[GS_SEV_WARNING])) ||
        gs_json_set(o, "sections", gs_json_u64(c->sections)) ||
        gs_json_set(o, "records", gs_json_u64(c->records)) ||
        gs_json_set(o, "diagnostics", json_incref(rep->diagnostics)) ||
        gs_json_set(o, "omitted_errors",
                    gs_json_u64(rep->found[GS_SEV_ERROR] - rep->shown[GS_SEV_ERROR])) ||
        gs_json_set(o, "omitted_warnings",
                    gs_json_u64(rep->found[GS_SEV_WARNING] - rep->shown[GS_SEV_WARNING]));
  if (bad || rep->oom) { json_decref(o); return NULL; }
  return o;
}

/* One file: its report object. Several: {"valid": all, "files": [...]}. */
static int print_json(json_t *reports, int all_valid) {
  json_t *top;
  int rc;
  if (json_array_size(reports) == 1) return gs_json_print(json_array_get(reports, 0));
  top = json_object();
  if (!top || gs_json_set(top, "valid", json_boolean(all_valid)) ||
      gs_json_set(top, "files", json_incref(reports))) {
    json_decref(top);
    return -1;
  }
  rc = gs_json_print(top);
  json_decref(top);
  return rc;
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

/* Validates one file and adds its outcome to *code and the JSON reports. */
static int check_one(const validate_opts *opts, const char *path, json_t *reports,
                     int *code, int *all_valid) {
  file_report rep;
  memset(&rep, 0, sizeof rep);
  rep.opts = opts;
  rep.name = gs_file_display_name(path);
  if (opts->json && !(rep.diagnostics = json_array())) return GS_ENOMEM;
  run_file(&rep, path);
  *all_valid = *all_valid && report_valid(&rep);
  if (rep.io_error[0]) *code = GS_EXIT_USAGE;
  else if (!report_valid(&rep) && *code == GS_EXIT_OK) *code = GS_EXIT_INVALID;
  if (!opts->json) {
    print_verdict(&rep);
  } else {
    if (rep.io_error[0]) gs_cli_error("%s", rep.io_error);
    if (json_array_append_new(reports, report_json(&rep)) != 0) rep.oom = 1;
  }
  json_decref(rep.diagnostics);
  return rep.oom ? GS_ENOMEM : GS_OK;
}

int gs_cmd_validate(int argc, char **argv) {
  validate_args va;
  json_t *reports = NULL;
  int i, code, all_valid = 1, err = GS_OK;
  memset(&va, 0, sizeof va);
  if ((code = parse_args(argc, argv, &va)) != GS_EXIT_OK || va.help) {
    free(va.files);
    return code != GS_EXIT_OK ? code : gs_cli_help(usage);
  }
  if (va.opts.json && !(reports = json_array())) err = GS_ENOMEM;
  for (i = 0; i < va.nfiles && !err; i++)
    err = check_one(&va.opts, va.files[i], reports, &code, &all_valid);
  if (!err && va.opts.json && print_json(reports, all_valid) != 0) code = GS_EXIT_USAGE;
  json_decref(reports);
  free(va.files);
  if (err) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  return gs_cli_finish(code);
}
