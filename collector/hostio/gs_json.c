/* gs_json.c - the few jansson helpers the --json outputs need. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gs_json.h"
#include "gs_text.h"

static json_t *string_repaired(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *e = p + len;
  char *copy = malloc(len * 3 + 1), *q = copy;
  json_t *v;
  if (!copy) return NULL;
  while (p < e) {
    size_t n = gs_utf8_len(p, e);
    if (n) {
      memcpy(q, p, n);
      q += n;
      p += n;
    } else {
      memcpy(q, "\xef\xbf\xbd", 3);   /* U+FFFD */
      q += 3;
      p++;
    }
  }
  v = json_stringn(copy, (size_t)(q - copy));
  free(copy);
  return v;
}

json_t *gs_json_string(const char *s, size_t len) {
  json_t *v = json_stringn(s, len);
  return v ? v : string_repaired(s, len);
}

json_t *gs_json_cstring(const char *s) { return gs_json_string(s, strlen(s)); }

json_t *gs_json_u64(uint64_t v) {
  if (v <= (uint64_t)INT64_MAX) return json_integer((json_int_t)v);
  return json_real((double)v);
}

int gs_json_set(json_t *object, const char *key, json_t *value) {
  return value ? json_object_set_new(object, key, value) : -1;
}

json_t *gs_json_unless(json_t *value, int bad) {
  if (!bad) return value;
  json_decref(value);
  return NULL;
}

int gs_json_print(const json_t *value) {
  if (json_dumpf(value, stdout, GS_JSON_PRINT_FLAGS) != 0) return -1;
  return fputc('\n', stdout) == EOF ? -1 : 0;
}
