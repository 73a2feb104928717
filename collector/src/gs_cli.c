/* gs_cli.c - output helpers shared by the gcsnap commands.
 *
 * Kept in one place so that every command prints diagnostics, usage errors
 * and file names the same way; scripts depend on these shapes. */
#include <stdarg.h>
#include <string.h>
#include "gs_cli.h"

int gs_cli_help(const char *usage) {
  fputs(usage, stdout);
  return GS_EXIT_OK;
}

int gs_cli_usage_error(const char *cmd, const char *usage, const char *message) {
  fprintf(stderr, "gcsnap %s: %s\n", cmd, message);
  fputs(usage, stderr);
  return GS_EXIT_USAGE;
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

const char *gs_cli_display_name(const char *path) {
  return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

int gs_cli_finish(int code) {
  /* A report cut short by a full disk or a closed pipe must not exit 0. */
  if (fflush(stdout) != 0 || ferror(stdout)) {
    gs_cli_error("cannot write the output");
    return GS_EXIT_USAGE;
  }
  return code;
}
