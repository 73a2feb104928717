/* gs_args.h - command-line option scanner shared by the commands.
 *
 * GNU style, driven by a table per command: long options "--name" and
 * "--name=value" or "--name value", one-letter options "-x", options and
 * operands in any order, "--" ends the options, and "-" alone is an operand
 * (standard input or output). */
#ifndef GS_ARGS_H
#define GS_ARGS_H

#include <stdint.h>

typedef struct gs_option {
  const char *long_name;   /* without the dashes; NULL ends the table */
  char short_name;         /* 0 when there is none */
  int takes_value;
  int id;                  /* what gs_args_next reports; nonzero */
} gs_option;

typedef enum gs_arg_kind {
  GS_ARG_END, GS_ARG_OPTION, GS_ARG_OPERAND, GS_ARG_ERROR
} gs_arg_kind;

typedef struct gs_args {
  int argc;
  char **argv;
  int next;                /* index of the next argument to scan */
  int options_done;        /* set after "--" */
  const gs_option *table;
  /* result of the last gs_args_next() */
  int id;                  /* GS_ARG_OPTION: the option's id */
  const char *value;       /* GS_ARG_OPTION with a value; GS_ARG_OPERAND: the operand */
  char error[160];         /* GS_ARG_ERROR: what is wrong, for the usage message */
} gs_args;

/* argv[0] is the command name and is skipped. */
void gs_args_init(gs_args *a, int argc, char **argv, const gs_option *table);
gs_arg_kind gs_args_next(gs_args *a);

/* Parses a whole decimal string into *out (at most max). Returns 0 or -1. */
int gs_args_parse_count(const char *s, uint64_t max, uint64_t *out);

#endif
