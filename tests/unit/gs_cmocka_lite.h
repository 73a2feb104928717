/* gs_cmocka_lite.h - the few cmocka calls the unit tests make, for a target
 * that has no cmocka.
 *
 * Debian packages cmocka for the host and for armel, but not for mingw-w64,
 * so without this the Win32 tree could not run the unit tests of common/.
 * tests/unit/CMakeLists.txt builds them against this file (and
 * gs_cmocka_lite.c, defining GS_CMOCKA_LITE) only in a cross build whose
 * cmocka is not found; everywhere else they use the real cmocka.
 *
 * It keeps cmocka's names and output lines ("[  SKIPPED ] name",
 * "[  FAILED  ] name", with "file:line:" before a failure). The exit status
 * of cmocka_run_group_tests is the number of failed cases when any failed
 * (at most 76, so that it never reads as 77 or wraps to 0); else 77 when any
 * case called skip(), so that ctest (SKIP_RETURN_CODE 77) reports a test
 * with a skipped case as skipped, never passed; else 0. Not here: mocks,
 * leak checks, and catching a crash (a crash ends the program, which ctest
 * reports as failed). Assertions work on the thread that runs the test only,
 * as in cmocka. */
#ifndef GS_CMOCKA_LITE_H
#define GS_CMOCKA_LITE_H

#include <stddef.h>

typedef void (*CMUnitTestFunction)(void **state);
typedef int (*CMFixtureFunction)(void **state);

struct CMUnitTest {
  const char *name;
  CMUnitTestFunction test_func;
};

#define cmocka_unit_test(f) { #f, f }
#define cmocka_run_group_tests(tests, setup, teardown)                          \
  cml_run_group(#tests, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

#if defined(__GNUC__) && defined(__MINGW32__)
#define CML_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#define CML_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CML_PRINTF(f, a)
#endif
#if defined(__GNUC__)
#define CML_NORETURN __attribute__((noreturn))
#else
#define CML_NORETURN
#endif

int cml_run_group(const char *group, const struct CMUnitTest *tests, size_t n,
                  CMFixtureFunction setup, CMFixtureFunction teardown);

/* End the running case: failed, or skipped. */
CML_NORETURN void cml_fail(const char *file, int line);
CML_NORETURN void cml_skip(const char *file, int line);

void cml_check(int ok, const char *what, const char *file, int line);
void cml_int_equal(unsigned long long a, unsigned long long b, int want_equal,
                   const char *file, int line);
void cml_string_equal(const char *a, const char *b, int want_equal, const char *file,
                      int line);
void cml_memory_equal(const void *a, const void *b, size_t size, const char *file,
                      int line);

void print_message(const char *fmt, ...) CML_PRINTF(1, 2);   /* stdout */
void print_error(const char *fmt, ...) CML_PRINTF(1, 2);     /* stderr */

#define assert_true(c) cml_check(!!(c), #c " is false", __FILE__, __LINE__)
#define assert_false(c) cml_check(!(c), #c " is true", __FILE__, __LINE__)
#define assert_non_null(p) cml_check((p) != NULL, #p " is NULL", __FILE__, __LINE__)
#define assert_null(p) cml_check((p) == NULL, #p " is not NULL", __FILE__, __LINE__)
#define assert_int_equal(a, b)                                                  \
  cml_int_equal((unsigned long long)(a), (unsigned long long)(b), 1, __FILE__, __LINE__)
#define assert_int_not_equal(a, b)                                              \
  cml_int_equal((unsigned long long)(a), (unsigned long long)(b), 0, __FILE__, __LINE__)
#define assert_string_equal(a, b)                                               \
  cml_string_equal((const char *)(a), (const char *)(b), 1, __FILE__, __LINE__)
#define assert_string_not_equal(a, b)                                           \
  cml_string_equal((const char *)(a), (const char *)(b), 0, __FILE__, __LINE__)
#define assert_memory_equal(a, b, size)                                         \
  cml_memory_equal((a), (b), (size), __FILE__, __LINE__)
#define fail() cml_fail(__FILE__, __LINE__)
#define fail_msg(...)                                                           \
  do {                                                                          \
    print_error(__VA_ARGS__);                                                   \
    print_error("\n");                                                          \
    cml_fail(__FILE__, __LINE__);                                               \
  } while (0)
#define skip() cml_skip(__FILE__, __LINE__)
/* cmocka's internal name, which gs_unit.c calls to fail at a caller's line. */
#define _fail(file, line) cml_fail((file), (line))

#endif
