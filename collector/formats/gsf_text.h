/* gsf_text.h - names from foreign files made safe for a record.
 *
 * A type name in the record format runs to the end of its line and must be
 * UTF-8 text without control bytes; foreign names (V8 strings, Java's
 * modified UTF-8) may hold anything. */
#ifndef GSF_TEXT_H
#define GSF_TEXT_H

#include <stddef.h>

/* Longest type name written, in bytes; longer names are cut at a character. */
#define GSF_NAME_MAX 1024

/* Copies s[0..n) to out (cap > 0 bytes) without its blanks at either end
 * (a name is read back without them), replacing control bytes and bytes
 * that do not form valid UTF-8 with '?', stopping at a whole character
 * before cap; returns the length written (out is NUL-terminated), 0 for a
 * name that was empty or blank, which the caller must replace. */
size_t gsf_text_clean(char *out, size_t cap, const char *s, size_t n);

/* A Java internal name (HPROF's) as Java writes it, cleaned as above:
 * java/lang/String is java.lang.String, [[I is int[][], a hidden class's
 * App$$Lambda$1+0x7f00 is App$$Lambda$1/0x7f00. */
size_t gsf_text_java_name(char *out, size_t cap, const char *s, size_t n);

#endif
