/* ce_crt.c - binds the C library calls the mingw-w64 headers emit to the
 * ones Windows CE's coredll exports.
 *
 * stdin, stdout and stderr: the headers call __acrt_iob_func(i), CE's
 * library _getstdfilex(i). snprintf: the headers call __ms_vsnprintf, which
 * here wraps CE's _vsnprintf and gives it C99's termination. Without a
 * console the standard streams of a CE program go nowhere unless the image
 * redirects them. */
#include <stdarg.h>
#include <stdio.h>

FILE *__cdecl _getstdfilex(int index);
int __cdecl __ms_vsnprintf(char *dst, size_t cap, const char *fmt, va_list ap);

static FILE *__cdecl ce_iob(unsigned index) { return _getstdfilex((int)index); }

/* The headers declare __acrt_iob_func as imported: they read this pointer. */
FILE *(__cdecl *__imp___acrt_iob_func)(unsigned) = ce_iob;

/* _vsnprintf leaves a full buffer unterminated and returns -1; C99 always
 * terminates and returns at least cap on truncation, which is all callers
 * test for (the exact length needed is not known here). */
int __cdecl __ms_vsnprintf(char *dst, size_t cap, const char *fmt, va_list ap) {
  int n = _vsnprintf(dst, cap, fmt, ap);
  if (cap > 0 && (n < 0 || (size_t)n >= cap)) {
    dst[cap - 1] = '\0';
    return n < 0 ? (int)cap : n;
  }
  return n;
}
