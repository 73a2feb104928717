/* gsf_text.c - cleaning of foreign names, with the library's UTF-8 rule. */
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
