/* gs_cli.h - what the gcsnap commands share: exit codes, entry points and
 * the helpers that keep their output uniform.
 *
 * Exit codes are part of the command-line contract: 0 success, 1 the input
 * is invalid (or, for validate --strict, has warnings), 2 the command could
 * not do its work (bad usage, missing or unreadable file, write failure). */
#ifndef GS_CLI_H
#define GS_CLI_H

#include <stdio.h>
#include "gs_diag.h"
#include "gs_reader.h"

#define GS_EXIT_OK      0
#define GS_EXIT_INVALID 1
#define GS_EXIT_USAGE   2   /* also I/O errors: nothing was decided about the input */

#ifndef GS_VERSION
#define GS_VERSION "0.0.0"
#endif

/* Each command takes its own argv, argv[0] being the command name. */
int gs_cmd_validate(int argc, char **argv);
int gs_cmd_summary(int argc, char **argv);
int gs_cmd_convert(int argc, char **argv);
int gs_cmd_dominators(int argc, char **argv);
int gs_cmd_diff(int argc, char **argv);
int gs_cmd_paths(int argc, char **argv);
int gs_cmd_export(int argc, char **argv);
int gs_cmd_trend(int argc, char **argv);
int gs_cmd_report(int argc, char **argv);
int gs_cmd_devices(int argc, char **argv);
int gs_cmd_snapshots(int argc, char **argv);
int gs_cmd_capture(int argc, char **argv);
int gs_cmd_fetch(int argc, char **argv);
int gs_cmd_upload(int argc, char **argv);
int gs_cmd_schedule(int argc, char **argv);
int gs_cmd_replay(int argc, char **argv);
int gs_cmd_keys(int argc, char **argv);

/* Prints usage to stdout for --help; returns GS_EXIT_OK. */
int gs_cli_help(const char *usage);
/* Prints "gcsnap CMD: MESSAGE" and the usage to stderr. */
void gs_cli_print_usage_error(const char *cmd, const char *usage, const char *message);
/* The same, returning GS_EXIT_USAGE; inline so that every caller (and the
 * static analyzer) sees that a usage error never reads as success. */
static inline int gs_cli_usage_error(const char *cmd, const char *usage, const char *message) {
  gs_cli_print_usage_error(cmd, usage, message);
  return GS_EXIT_USAGE;
}
/* Prints "gcsnap: MESSAGE" to stderr (printf-style). */
void gs_cli_error(const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 1, 2)))
#endif
  ;
/* "FILE:LINE: error [CODE]: message", or "FILE: ..." when line is 0; an
 * object above the limit of references adds how to raise it. */
void gs_cli_print_diag(FILE *out, const char *file, const gs_diag *d);
/* Prints d, the problem a command stopped at, and how to list every one:
 * "gcsnap: [LEAD; ]run 'gcsnap validate FILE' ...", or LEAD alone when d is
 * about the whole input (line 0) and so the only one. */
void gs_cli_print_stop(const char *file, const gs_diag *d, const char *lead);
/* Reports what went wrong with an input (the FILE:LINE diagnostic for
 * invalid input, else "gcsnap: FILE: reason") and returns the exit code. */
struct gs_file_fault;
int gs_cli_fault(const struct gs_file_fault *fault);
/* Opens the dump at path (plain or zstd; - is stdin) with progress on a
 * terminal. On failure reports it, leaves *f and *r NULL and returns the
 * exit code. */
struct gs_file;
int gs_cli_open_dump(const char *path, struct gs_file **f, gs_reader **r);
void gs_cli_close_dump(struct gs_file *f, gs_reader *r);
/* Reports a failed read of a dump (the FILE:LINE diagnostic for invalid
 * input, else the I/O or memory error) and returns the exit code. */
int gs_cli_load_error(struct gs_file *f, int err, const gs_diag *d);
/* Flushes stdout; on a write error (full disk, closed pipe) reports it and
 * returns GS_EXIT_USAGE, else returns code unchanged. */
int gs_cli_finish(int code);

#endif
