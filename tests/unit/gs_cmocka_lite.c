/* gs_cmocka_lite.c - runs a group of unit tests for gs_cmocka_lite.h: each
 * case under setjmp, so that a failed assertion or skip() ends that case
 * alone, and a summary in cmocka's words. */
#include "gs_cmocka_lite.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CML_PASSED, CML_FAILED, CML_SKIPPED };

static jmp_buf cml_case_end;
static int cml_running;    /* a case is running: cml_case_end is valid */
static int cml_outcome;

static void cml_vprint(FILE *to, const char *fmt, va_list ap) {
  fflush(stdout);   /* keep stdout and stderr lines in order */
  vfprintf(to, fmt, ap);
  fflush(to);
}

void print_message(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cml_vprint(stdout, fmt, ap);
  va_end(ap);
}

void print_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cml_vprint(stderr, fmt, ap);
  va_end(ap);
}

CML_NORETURN static void cml_end_case(int outcome) {
  if (!cml_running) {   /* an assertion outside a case: nothing to return to */
    print_error("[  ERROR   ] --- assertion outside a test case\n");
    exit(1);
  }
  cml_outcome = outcome;
  longjmp(cml_case_end, 1);
}

void cml_fail(const char *file, int line) {
  print_error("[   LINE   ] --- %s:%d: error: Failure!\n", file, line);
  cml_end_case(CML_FAILED);
}

void cml_skip(const char *file, int line) {
  print_message("%s:%d: skipped\n", file, line);
  cml_end_case(CML_SKIPPED);
}

void cml_check(int ok, const char *what, const char *file, int line) {
  if (ok) return;
  print_error("[  ERROR   ] --- %s\n", what);
  cml_fail(file, line);
}

void cml_int_equal(unsigned long long a, unsigned long long b, int want_equal,
                   const char *file, int line) {
  if ((a == b) == want_equal) return;
  print_error("[  ERROR   ] --- %llu (0x%llx) %s %llu (0x%llx)\n", a, a,
              want_equal ? "!=" : "==", b, b);
  cml_fail(file, line);
}

void cml_string_equal(const char *a, const char *b, int want_equal, const char *file,
                      int line) {
  int equal = a && b ? strcmp(a, b) == 0 : a == b;
  if (equal == want_equal) return;
  print_error("[  ERROR   ] --- \"%s\" %s \"%s\"\n", a ? a : "(null)",
              want_equal ? "!=" : "==", b ? b : "(null)");
  cml_fail(file, line);
}

void cml_memory_equal(const void *a, const void *b, size_t size, const char *file,
                      int line) {
  const unsigned char *x = a, *y = b;
  size_t i;
  if (!x || !y) cml_check(0, "a block to compare is NULL", file, line);
  for (i = 0; i < size && x[i] == y[i]; i++) {}
  if (i == size) return;
  print_error("[  ERROR   ] --- byte %llu of %llu differs: 0x%02x != 0x%02x\n",
              (unsigned long long)i, (unsigned long long)size, x[i], y[i]);
  cml_fail(file, line);
}

static int cml_run_case(const struct CMUnitTest *t, void **state) {
  print_message("[ RUN      ] %s\n", t->name);
  cml_outcome = CML_PASSED;
  cml_running = 1;
  if (setjmp(cml_case_end) == 0) t->test_func(state);
  cml_running = 0;
  print_message("%s %s\n",
                cml_outcome == CML_PASSED ? "[       OK ]"
                : cml_outcome == CML_SKIPPED ? "[  SKIPPED ]" : "[  FAILED  ]",
                t->name);
  return cml_outcome;
}

static void cml_list(const struct CMUnitTest *tests, const int *outcome, size_t n,
                     int which, const char *tag) {
  size_t i;
  for (i = 0; i < n; i++)
    if (outcome[i] == which) print_message("%s %s\n", tag, tests[i].name);
}

int cml_run_group(const char *group, const struct CMUnitTest *tests, size_t n,
                  CMFixtureFunction setup, CMFixtureFunction teardown) {
  void *state = NULL;
  size_t i, count[3] = {0, 0, 0};
  int *outcome = calloc(n ? n : 1, sizeof *outcome);
  if (!outcome) {
    print_error("[  ERROR   ] --- out of memory\n");
    return 1;
  }
  print_message("[==========] %s: Running %llu test(s).\n", group, (unsigned long long)n);
  if (setup && setup(&state) != 0) {
    print_error("[  ERROR   ] --- %s: group setup failed\n", group);
    free(outcome);
    return 1;
  }
  for (i = 0; i < n; i++) count[outcome[i] = cml_run_case(&tests[i], &state)]++;
  if (teardown && teardown(&state) != 0) {
    print_error("[  ERROR   ] --- %s: group teardown failed\n", group);
    count[CML_FAILED]++;
  }
  print_message("[==========] %s: %llu test(s) run.\n", group, (unsigned long long)n);
  print_message("[  PASSED  ] %llu test(s).\n", (unsigned long long)count[CML_PASSED]);
  if (count[CML_SKIPPED]) {
    print_message("[  SKIPPED ] %llu test(s), listed below:\n",
                  (unsigned long long)count[CML_SKIPPED]);
    cml_list(tests, outcome, n, CML_SKIPPED, "[  SKIPPED ]");
  }
  if (count[CML_FAILED]) {
    print_message("[  FAILED  ] %llu test(s), listed below:\n",
                  (unsigned long long)count[CML_FAILED]);
    cml_list(tests, outcome, n, CML_FAILED, "[  FAILED  ]");
  }
  free(outcome);
  if (count[CML_FAILED]) return count[CML_FAILED] < 76 ? (int)count[CML_FAILED] : 76;
  return count[CML_SKIPPED] ? 77 : 0;
}
