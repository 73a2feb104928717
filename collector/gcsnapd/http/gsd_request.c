/* gsd_request.c - what the collector's HTTP API takes from a request before
 * it routes it (see gsd_request.h). No h2o in here, so that the fuzz target
 * can call it with any bytes. */
#include <string.h>
#include <strings.h>
#include "gsd_request.h"

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int gsd_request_decode(const char *s, size_t n, int query, char *out, size_t cap) {
  size_t i, o = 0;
  for (i = 0; i < n; i++) {
    int c = (unsigned char)s[i];
    if (c == '%') {
      int hi, lo;
      if (i + 2 >= n) return -1;
      hi = hexval(s[i + 1]);
      lo = hexval(s[i + 2]);
      if (hi < 0 || lo < 0) return -1;
      c = hi * 16 + lo;
      i += 2;
    } else if (c == '+' && query) {
      c = ' ';
    }
    if (c == 0 || o + 1 >= cap) return -1;
    out[o++] = (char)c;
  }
  out[o] = '\0';
  return 0;
}

int gsd_request_split(const char *path, size_t len, size_t query_at,
                  char seg[][GSD_REQUEST_SEGMENT_MAX], int *nseg) {
  const char *p = path, *end = p + (query_at == SIZE_MAX ? len : query_at);
  int n = 0;
  if (p == end || *p != '/') return -1;
  while (p < end) {
    const char *slash;
    p++;
    slash = memchr(p, '/', (size_t)(end - p));
    if (!slash) slash = end;
    if (slash == p && slash == end) break;          /* a trailing slash */
    if (n == GSD_REQUEST_MAX_SEGMENTS ||
        gsd_request_decode(p, (size_t)(slash - p), 0, seg[n], GSD_REQUEST_SEGMENT_MAX))
      return -1;
    n++;
    p = slash;
  }
  *nseg = n;
  return 0;
}

int gsd_request_query(const char *path, size_t len, size_t query_at, const char *key,
                  char *out, size_t cap) {
  const char *p, *end;
  size_t klen = strlen(key);
  if (query_at == SIZE_MAX) return 0;
  p = path + query_at + 1;
  end = path + len;
  while (p < end) {
    const char *amp = memchr(p, '&', (size_t)(end - p)), *eq;
    if (!amp) amp = end;
    eq = memchr(p, '=', (size_t)(amp - p));
    if ((size_t)((eq ? eq : amp) - p) == klen && memcmp(p, key, klen) == 0) {
      if (!eq) { out[0] = '\0'; return 1; }
      return gsd_request_decode(eq + 1, (size_t)(amp - eq - 1), 1, out, cap) ? -1 : 1;
    }
    p = amp + 1;
  }
  return 0;
}

int gsd_request_flag(const char *path, size_t len, size_t query_at, const char *key, int *on) {
  char v[16];
  int rc = gsd_request_query(path, len, query_at, key, v, sizeof v);
  *on = 0;
  if (rc < 0) return -1;
  if (rc == 0) return 0;
  if (!v[0] || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes")) *on = 1;
  else if (strcmp(v, "0") && strcmp(v, "false") && strcmp(v, "no")) return -1;
  return 0;
}

int gsd_request_u64(const char *s, uint64_t max, uint64_t *v) {
  uint64_t x = 0;
  if (!*s) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || x > (max - (uint64_t)(*s - '0')) / 10) return -1;
    x = x * 10 + (uint64_t)(*s - '0');
  }
  *v = x;
  return 0;
}

int gsd_request_id(const char *s, int64_t *id) {
  uint64_t v;
  if (gsd_request_u64(s, INT64_MAX, &v) || v == 0) return -1;
  *id = (int64_t)v;
  return 0;
}

int gsd_request_object_id(const char *s, uint64_t *id) {
  uint64_t v = 0;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
  if (!*s || strspn(s, "0123456789abcdefABCDEF") != strlen(s)) return -1;
  s += strspn(s, "0");
  if (strlen(s) > 16) return -1;
  for (; *s; s++) v = v << 4 | (uint64_t)(*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
  *id = v;
  return 0;
}

int gsd_request_bearer(const char *value, size_t len, const char **token, size_t *token_len) {
  const char *p = value, *end = value + len;
  if (len < 7 || strncasecmp(p, "Bearer ", 7) != 0) return 0;
  for (p += 6; p < end && *p == ' '; p++) {}
  while (end > p && end[-1] == ' ') end--;
  *token = p;
  *token_len = (size_t)(end - p);
  return 1;
}
