/* gs_cli.c - output helpers shared by the gcsnap commands.
 *
 * Kept in one place so that every command prints diagnostics, usage errors
 * and file names the same way; scripts depend on these shapes. */
#include <stdarg.h>
#include <string.h>
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"

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
  if (d->code == GS_D_TOO_MANY_REFS)
    fprintf(out, "%s: note: 'gcsnap --max-refs N COMMAND ...' reads objects of up to N references\n",
            file);
}

int gs_cli_finish(int code) {
  /* A report cut short by a full disk or a closed pipe must not exit 0. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    gs_cli_error("cannot write the output");
    return GS_EXIT_USAGE;
  }
  return code;
}

void gs_cli_print_stop(const char *file, const gs_diag *d, const char *lead) {
  int is_stdin = strcmp(file, GS_FILE_STDIN_NAME) == 0;
  gs_cli_print_diag(stderr, file, d);
  if (d->line == 0) {
    if (lead) fprintf(stderr, "gcsnap: %s\n", lead);
    return;
  }
  fprintf(stderr, "gcsnap: %s%srun 'gcsnap validate %s'%s to list every problem\n", lead ? lead : "",
          lead ? "; " : "", is_stdin ? "-" : file, is_stdin ? " on the same input" : "");
}

int gs_cli_fault(const gs_file_fault *fault) {
  if (fault->err == GS_EFORMAT) {
    gs_cli_print_stop(fault->file, &fault->diag, NULL);
    return GS_EXIT_INVALID;
  }
  if (fault->file[0]) gs_cli_error("%s: %s", fault->file, fault->text);
  else gs_cli_error("%s", fault->text);
  return fault->err == GS_ELIMIT || fault->err == GS_EOF ? GS_EXIT_INVALID : GS_EXIT_USAGE;
}

int gs_cli_open_dump(const char *path, gs_file **f, gs_reader **r) {
  gs_file_fault fault;
  return gs_file_open_dump(path, f, r, &fault) ? gs_cli_fault(&fault) : GS_EXIT_OK;
}

void gs_cli_close_dump(gs_file *f, gs_reader *r) { gs_file_close_dump(f, r); }

int gs_cli_load_error(gs_file *f, int err, const gs_diag *d) {
  gs_file_fault fault;
  gs_file_fault_set(&fault, f, err, d);
  return gs_cli_fault(&fault);
}

