/* gs_cmd_convert.c - "gcsnap convert": rewrite a dump in the canonical form.
 *
 * Every record goes through gs_writer, which writes the later form of the
 * format (timestamps on a and c, lowercase hex, single spaces, LF), and
 * through a validator, so that only a dump that "gcsnap validate" accepts
 * is ever written: on the first error the partial output is deleted and OUT
 * is left as it was. Warnings (dangling references, ...) pass through. */
#include <stdlib.h>
#include <string.h>
#include "gs_args.h"
#include "gs_cli.h"
#include "gs_error.h"
#include "gs_file.h"
#include "gs_output.h"
#include "gs_validate.h"
#include "gs_writer.h"

static const char usage[] =
  "usage: gcsnap convert IN OUT\n"
  "       gcsnap convert IN -o OUT\n"
  "\n"
  "Reads the dump IN (.gclog, .heapsnapshot, .hprof or .gcdump; plain, gzip\n"
  "or zstd) and writes it to OUT in the canonical form of the record format.\n"
  "OUT ending in .zst is compressed with zstd. - is stdin or stdout. OUT\n"
  "is replaced only once the whole dump was read and written; an invalid\n"
  "IN leaves OUT untouched.\n"
  "\n"
  "  -o, --out OUT  the output, as the other commands that write files name it\n"
  "  -h, --help     show this help\n"
  "\n"
  "Exit status: 0 written, 1 IN is invalid, 2 usage or I/O error.\n";

enum { OPT_HELP = 1, OPT_OUT };

static const gs_option options[] = {
  {"help", 'h', 0, OPT_HELP},
  {"out", 'o', 1, OPT_OUT},
  {NULL, 0, 0, 0},
};

typedef struct convert {
  const char *in_name;
  gs_file *in;
  gs_reader *reader;
  gs_validator *validator;
  gs_output *out;
  gs_writer *writer;
  gs_diag first_error;     /* first error the validator reported */
  int failed;
} convert;

static void on_diag(void *ctx, const gs_diag *d) {
  convert *c = ctx;
  if (c->failed || gs_diag_severity(d->code) != GS_SEV_ERROR) return;
  c->first_error = *d;
  c->failed = 1;
}

static int invalid_input(convert *c, const gs_diag *d) {
  gs_file_hide_progress(c->in);
  gs_cli_print_stop(c->in_name, d, "nothing written");
  return GS_EXIT_INVALID;
}

static int input_error(convert *c, int err) {
  gs_file_hide_progress(c->in);
  if (err == GS_EIO && gs_file_diag(c->in)) return invalid_input(c, gs_file_diag(c->in));
  if (err == GS_EIO && gs_file_error(c->in)[0])
    gs_cli_error("%s: %s", c->in_name, gs_file_error(c->in));
  else
    gs_cli_error("%s: %s", c->in_name, gs_strerror(err));
  return GS_EXIT_USAGE;
}

static int output_error(convert *c, int err) {
  gs_file_hide_progress(c->in);
  if (gs_output_error(c->out)[0]) gs_cli_error("%s", gs_output_error(c->out));
  else gs_cli_error("%s", gs_strerror(err));
  return GS_EXIT_USAGE;
}

/* Copies every record; returns the exit code. */
static int copy_records(convert *c) {
  gs_record rec;
  int err;
  while ((err = gs_reader_next(c->reader, &rec)) == GS_OK) {
    if ((err = gs_validator_record(c->validator, &rec))) return input_error(c, err);
    if (c->failed) return invalid_input(c, &c->first_error);
    if ((err = gs_writer_record(c->writer, &rec))) return output_error(c, err);
  }
  if (err == GS_EFORMAT) return invalid_input(c, gs_reader_diag(c->reader));
  if (err != GS_EOF) return input_error(c, err);
  if ((err = gs_validator_finish(c->validator))) return input_error(c, err);
  if (c->failed) return invalid_input(c, &c->first_error);
  return GS_EXIT_OK;
}

/* Flushes the writer and moves the output into place. */
static int finish_output(convert *c) {
  int err = gs_writer_free(c->writer);
  c->writer = NULL;
  if (err || (err = gs_output_commit(c->out))) return output_error(c, err);
  return GS_EXIT_OK;
}

static int open_all(convert *c, const char *in, const char *out) {
  char msg[300];
  if (gs_file_open(&c->in, in, msg, sizeof msg) ||
      gs_output_open(&c->out, out, msg, sizeof msg)) {
    gs_cli_error("%s", msg);
    return GS_EXIT_USAGE;
  }
  gs_file_show_progress(c->in);
  if (gs_file_new_reader(c->in, &c->reader) ||
      gs_validator_new(&c->validator, on_diag, c) ||
      gs_writer_new(&c->writer, gs_output_write, c->out)) {
    gs_cli_error("out of memory");
    return GS_EXIT_USAGE;
  }
  gs_writer_set_max_refs(c->writer, gs_file_max_refs());
  return GS_EXIT_OK;
}

static void close_all(convert *c) {
  if (c->writer) {
    /* Only left on failure: its buffered tail must go nowhere. */
    gs_output_discard(c->out);
    gs_writer_free(c->writer);
  }
  gs_output_close(c->out);       /* removes the temporary file unless committed */
  gs_validator_free(c->validator);
  gs_reader_free(c->reader);
  gs_file_close(c->in);
}

static int parse_args(int argc, char **argv, const char *paths[2], int *help) {
  gs_args a;
  gs_arg_kind k;
  int n = 0;
  gs_args_init(&a, argc, argv, options);
  while ((k = gs_args_next(&a)) != GS_ARG_END) {
    if (k == GS_ARG_ERROR) return gs_cli_usage_error("convert", usage, a.error);
    if (k == GS_ARG_OPTION && a.id == OPT_HELP) { *help = 1; continue; }
    if (k == GS_ARG_OPTION && paths[1]) return gs_cli_usage_error("convert", usage, "OUT is given twice");
    if (k == GS_ARG_OPTION) { paths[1] = a.value; continue; }
    if (n == 2 || (n == 1 && paths[1])) return gs_cli_usage_error("convert", usage, "too many arguments");
    paths[n++] = a.value;
  }
  if (!*help && (!paths[0] || !paths[1])) return gs_cli_usage_error("convert", usage, "IN and OUT are needed");
  return GS_EXIT_OK;
}

int gs_cmd_convert(int argc, char **argv) {
  const char *paths[2] = {NULL, NULL};
  convert c;
  int help = 0, code;
  if ((code = parse_args(argc, argv, paths, &help)) != GS_EXIT_OK) return code;
  if (help) return gs_cli_help(usage);
  memset(&c, 0, sizeof c);
  c.in_name = gs_file_display_name(paths[0]);
  code = open_all(&c, paths[0], paths[1]);
  if (code == GS_EXIT_OK) code = copy_records(&c);
  if (code == GS_EXIT_OK) code = finish_output(&c);
  close_all(&c);
  return gs_cli_finish(code);
}
