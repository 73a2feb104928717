/* gs_args.c - command-line option scanner shared by the commands.
 *
 * Written here rather than taken from getopt_long so that the options work
 * the same on every host and the error messages name the exact problem. */
#include <stdio.h>
#include <string.h>
#include "gs_args.h"

void gs_args_init(gs_args *a, int argc, char **argv, const gs_option *table) {
  memset(a, 0, sizeof *a);
  a->argc = argc;
  a->argv = argv;
  a->next = 1;
  a->table = table;
}

/* fmt has one %s, for the argument as typed. */
static gs_arg_kind fail(gs_args *a, const char *fmt, const char *arg) {
  snprintf(a->error, sizeof a->error, fmt, arg);
  return GS_ARG_ERROR;
}

static const gs_option *find_long(const gs_option *t, const char *name, size_t len) {
  for (; t->long_name; t++)
    if (strlen(t->long_name) == len && memcmp(t->long_name, name, len) == 0) return t;
  return NULL;
}

static const gs_option *find_short(const gs_option *t, char c) {
  for (; t->long_name; t++)
    if (t->short_name && t->short_name == c) return t;
  return NULL;
}

/* Takes the option's value from "=value" (inline) or the next argument. */
static gs_arg_kind take_value(gs_args *a, const gs_option *o, const char *arg,
                              const char *inline_value) {
  a->id = o->id;
  a->value = NULL;
  if (!o->takes_value) {
    if (inline_value) return fail(a, "option '%s' takes no value", arg);
    return GS_ARG_OPTION;
  }
  if (inline_value) {
    a->value = inline_value;
  } else if (a->next < a->argc) {
    a->value = a->argv[a->next++];
  } else {
    return fail(a, "option '%s' needs a value", arg);
  }
  return GS_ARG_OPTION;
}

static gs_arg_kind scan_long(gs_args *a, const char *arg) {
  const char *name = arg + 2, *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  const gs_option *o = find_long(a->table, name, len);
  if (!o) return fail(a, "unknown option '%s'", arg);
  return take_value(a, o, arg, eq ? eq + 1 : NULL);
}

static gs_arg_kind scan_short(gs_args *a, const char *arg) {
  const gs_option *o = arg[2] == '\0' ? find_short(a->table, arg[1]) : NULL;
  if (!o) return fail(a, "unknown option '%s'", arg);
  return take_value(a, o, arg, NULL);
}

gs_arg_kind gs_args_next(gs_args *a) {
  const char *arg;
  if (a->next >= a->argc) return GS_ARG_END;
  arg = a->argv[a->next++];
  if (!a->options_done && strcmp(arg, "--") == 0) {
    a->options_done = 1;
    return gs_args_next(a);
  }
  if (a->options_done || arg[0] != '-' || arg[1] == '\0') {
    a->value = arg;
    return GS_ARG_OPERAND;
  }
  return arg[1] == '-' ? scan_long(a, arg) : scan_short(a, arg);
}

int gs_args_parse_count(const char *s, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (!*s) return -1;
  for (; *s; s++) {
    unsigned d = (unsigned)(*s - '0');
    if (d > 9 || v > (max - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}
