/* gs_cli.c - output helpers shared by the gcsnap commands.
 *
 * Kept in one place so that every command prints diagnostics, usage errors
 * and file names the same way; scripts depend on these shapes. */
#include <stdarg.h>
#include <string.h>
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_summary.h"

int gs_cli_help(const char *usage) {
  fputs(usage, stdout);
  return GS_EXIT_OK;
}

void gs_cli_print_usage_error(const char *cmd, const char *usage, const char *message) {
  fprintf(stderr, "gcsnap %s: %s\n", cmd, message);
  fputs(usage, stderr);
}

void gs_cli_error(const char *fmt, ...) {
  va_list ap;
  fputs("gcsnap: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

void gs_cli_print_diag(FILE *out, const char *file, const gs_diag *d) {
  const char *severity =
      gs_diag_severity(d->code) == GS_SEV_ERROR ? "error" : "warning";
  if (d->line)
    fprintf(out, "%s:%llu: %s [%s]: %s\n", file, (unsigned long long)d->line,
            severity, gs_diag_name(d->code), d->message);
  else
    fprintf(out, "%s: %s [%s]: %s\n", file, severity, gs_diag_name(d->code),
            d->message);
}

int gs_cli_finish(int code) {
  /* A report cut short by a full disk or a closed pipe must not exit 0. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    gs_cli_error("cannot write the output");
    return GS_EXIT_USAGE;
  }
  return code;
}

int gs_cli_open_dump(const char *path, gs_file **f, gs_reader **r) {
  char err[300];
  *f = NULL;
  *r = NULL;
  if (gs_file_open(f, path, err, sizeof err)) {
    *f = NULL;
    gs_cli_error("%s", err);
    return GS_EXIT_USAGE;
  }
  gs_file_show_progress(*f);
  if (gs_file_new_reader(*f, r)) {
    gs_file_close(*f);
    *f = NULL;
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  return GS_EXIT_OK;
}

void gs_cli_close_dump(gs_file *f, gs_reader *r) {
  gs_reader_free(r);
  gs_file_close(f);
}

int gs_cli_load_error(gs_file *f, int err, const gs_diag *d) {
  const char *name = gs_file_name(f);
  if (err == GS_EFORMAT) {
    gs_cli_print_diag(stderr, name, d);
    if (d->code != GS_D_NO_SECTION)
      fprintf(stderr, "gcsnap: run 'gcsnap validate %s' to list every problem\n", name);
    return GS_EXIT_INVALID;
  }
  if (err == GS_EIO && gs_file_error(f)[0]) gs_cli_error("%s: %s", name, gs_file_error(f));
  else gs_cli_error("%s: %s", name, gs_strerror(err));
  return err == GS_ELIMIT ? GS_EXIT_INVALID : GS_EXIT_USAGE;
}

int gs_cli_load_summary(const char *path, gs_summary *sum) {
  gs_file *f;
  gs_reader *r;
  gs_diag d;
  int code, err;
  gs_summary_init(sum, gs_file_display_name(path));
  if ((code = gs_cli_open_dump(path, &f, &r)) != GS_EXIT_OK) return code;
  err = gs_summary_load(sum, r, &d);
  gs_file_hide_progress(f);
  if (err) code = gs_cli_load_error(f, err, &d);
  gs_cli_close_dump(f, r);
  return code;
}
