/* gs_text.c - UTF-8 checking shared by the reader and the host's outputs. */
#include <stdint.h>
#include "gs_text.h"

size_t gs_utf8_len(const unsigned char *p, const unsigned char *e) {
  unsigned c = p[0];
  size_t n, i;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c < 0xc2 || c > 0xf4) return 0;
  n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
  if ((size_t)(e - p) < n) return 0;
  cp = c & (0x3f >> (n - 1));
  for (i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3f);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
      (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

size_t gs_utf8_bom(const unsigned char *p, size_t n) {
  return n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf ? 3 : 0;
}
