/* gsf_text.c - cleaning of foreign names, with the library's UTF-8 rule, and
 * Java's internal names as Java writes them. */
#include <stdio.h>
#include <string.h>
#include "gs_text.h"
#include "gsf_text.h"

size_t gsf_text_clean(char *out, size_t cap, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s, *e = p + n;
  size_t o = 0;
  while (p < e && *p == ' ') p++;
  while (e > p && e[-1] == ' ') e--;
  while (p < e) {
    size_t len = gs_utf8_len(p, e);
    if (len == 0 || *p < 0x20 || *p == 0x7f) {
      if (o + 1 >= cap) break;
      out[o++] = '?';
      p += len ? len : 1;
      continue;
    }
    if (o + len >= cap) break;
    while (len--) out[o++] = (char)*p++;
  }
  out[o] = '\0';
  return o;
}

/* Java's internal names as Java writes them: java.lang.String, int[][],
 * and a hidden class (a lambda's) App$$Lambda$1/0x7f00 (the JVM writes
 * "+" there, which no Java name holds otherwise). */
size_t gsf_text_java_name(char *out, size_t cap, const char *s, size_t n) {
  static const char codes[] = "ZCFDBSIJ";
  static const char *const prims[] = {"boolean", "char", "float", "double",
                                      "byte", "short", "int", "long"};
  char tmp[GSF_NAME_MAX];
  size_t dims = 0, len, i;
  const char *code;
  while (dims < n && s[dims] == '[') dims++;
  s += dims;
  n -= dims;
  if (dims && n == 1 && s[0] && (code = strchr(codes, s[0])) != NULL) {
    s = prims[code - codes];
    n = strlen(s);
  } else if (dims && n >= 2 && s[0] == 'L' && s[n - 1] == ';') {
    s++;
    n -= 2;
  }
  len = gsf_text_clean(tmp, sizeof tmp, s, n);
  for (i = 0; i < len; i++) {
    if (tmp[i] == '/') tmp[i] = '.';
    else if (tmp[i] == '+') tmp[i] = '/';
  }
  for (i = 0; i < dims && len + 2 < sizeof tmp; i++) {
    tmp[len++] = '[';
    tmp[len++] = ']';
  }
  tmp[len] = '\0';
  return (size_t)snprintf(out, cap, "%s", tmp) < cap ? len : cap - 1;
}
