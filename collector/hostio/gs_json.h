/* gs_json.h - the few jansson helpers the --json outputs need.
 *
 * jansson refuses strings that are not UTF-8 and integers above INT64_MAX;
 * file names and messages may be either, so these helpers never return
 * NULL for such values (only when out of memory). */
#ifndef GS_JSON_H
#define GS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* A string value; invalid UTF-8 bytes become U+FFFD. */
json_t *gs_json_string(const char *s, size_t len);
json_t *gs_json_cstring(const char *s);
/* An integer value; above INT64_MAX a (rounded) real. */
json_t *gs_json_u64(uint64_t v);
/* object[key] = value, taking the reference; returns -1 if value is NULL. */
int gs_json_set(json_t *object, const char *key, json_t *value);
/* value, or NULL when bad (value released): the end of a builder whose
 * steps may have failed. */
json_t *gs_json_unless(json_t *value, int bad);
/* Prints value and a newline to stdout; returns 0 or -1. */
int gs_json_print(const json_t *value);
/* The layout gs_json_print gives, which gs_jsonw's printed documents share. */
#define GS_JSON_PRINT_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10))

#endif
