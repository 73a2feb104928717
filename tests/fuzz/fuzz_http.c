/* fuzz_http.c - libFuzzer target for the request path of the collector's
 * HTTP API: a raw HTTP/1 request is parsed by h2o's own parser
 * (picohttpparser's phr_parse_request, which h2o's HTTP/1 server calls),
 * its query found as h2o finds it (h2o_url_normalize_path sets
 * req->query_at), then taken apart by gsd_request.c exactly as gsd_http.c does
 * before it routes: path segments, every query parameter of the API with the
 * room its handler gives it, flags, IDs, the durations, sizes and times of
 * the schedules (gs_parse.c, gs_units.c), and the bearer token of each header value.
 *
 * What must hold:
 *   - percent-decoding agrees with a plain reference decoder: it succeeds
 *     exactly when the reference does and the result fits, with the same
 *     bytes, never a NUL inside;
 *   - segments are at most GSD_REQUEST_MAX_SEGMENTS, each the decoded bytes
 *     between two slashes of the path before the query;
 *   - a query value found is the reference decoding of the first key=value
 *     with that key;
 *   - numbers and IDs agree with a reference parser;
 *   - a duration or a time that parses formats into text that parses back
 *     to the same value;
 *   - a bearer token is found exactly for "Bearer " in any case, and is the
 *     rest of the value without its surrounding spaces. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "h2o.h"
#include "gs_parse.h"
#include "gs_units.h"
#include "gsd_request.h"
#include "fuzz_util.h"

/* picohttpparser, as bundled in libh2o (it installs no header for it). */
struct phr_header {
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
};
int phr_parse_request(const char *buf, size_t len, const char **method, size_t *method_len,
                      const char **path, size_t *path_len, int *minor_version,
                      struct phr_header *headers, size_t *num_headers, size_t last_len);

#define MAX_HEADERS 100
#define MAX_DECODED 4096

/* ---- reference decoders ------------------------------------------------ */

static int hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Percent-decoding with no limit on the result: its length, or -1 for a bad
 * escape or a NUL. */
static long ref_decode(const char *s, size_t n, int query, char *out) {
  size_t i, o = 0;
  for (i = 0; i < n; i++) {
    char c = s[i];
    if (c == '%') {
      char hex[3];
      if (n - i < 3 || !hex_digit(s[i + 1]) || !hex_digit(s[i + 2])) return -1;
      hex[0] = s[i + 1];
      hex[1] = s[i + 2];
      hex[2] = '\0';
      c = (char)strtoul(hex, NULL, 16);
      i += 2;
    } else if (c == '+' && query) {
      c = ' ';
    }
    if (c == '\0') return -1;
    out[o++] = c;
  }
  return (long)o;
}

static void check_decode(const char *s, size_t n, int query, size_t cap) {
  static char want[MAX_DECODED * 3], got[MAX_DECODED];
  long len;
  int rc;
  if (n > MAX_DECODED || cap > sizeof got) return;
  len = ref_decode(s, n, query, want);
  rc = gsd_request_decode(s, n, query, got, cap);
  FUZZ_CHECK(rc == 0 || rc == -1);
  FUZZ_CHECK((rc == 0) == (len >= 0 && (size_t)len < cap));
  if (rc == 0) FUZZ_CHECK(strlen(got) == (size_t)len && memcmp(got, want, (size_t)len) == 0);
}

/* The reference's answer for a query parameter: 1 found (value in out, or
 * -1 when it does not decode into cap bytes), 0 absent. */
static int ref_query(const char *q, size_t n, const char *key, size_t cap, char *out) {
  size_t start = 0, klen = strlen(key);
  static char tmp[MAX_DECODED * 3];
  while (start < n) {
    size_t end = start, eq;
    long len;
    while (end < n && q[end] != '&') end++;
    for (eq = start; eq < end && q[eq] != '='; eq++) {}
    if (eq - start == klen && memcmp(q + start, key, klen) == 0) {
      if (eq == end) { out[0] = '\0'; return 1; }
      len = ref_decode(q + eq + 1, end - eq - 1, 1, tmp);
      if (len < 0 || (size_t)len >= cap) return -1;
      memcpy(out, tmp, (size_t)len);
      out[len] = '\0';
      return 1;
    }
    start = end + 1;
  }
  return 0;
}

static int ref_u64(const char *s, uint64_t max, uint64_t *v) {
  uint64_t x = 0;
  size_t i, n = strlen(s);
  if (n == 0) return -1;
  for (i = 0; i < n; i++) {
    unsigned d;
    if (s[i] < '0' || s[i] > '9') return -1;
    d = (unsigned)(s[i] - '0');
    if (x > UINT64_MAX / 10 || x * 10 > UINT64_MAX - d) return -1;
    x = x * 10 + d;
  }
  if (x > max) return -1;
  *v = x;
  return 0;
}

/* ---- what gsd_http.c takes from a request -------------------------------- */

/* An object ID read back from its hex is the same, and was taken only
 * when it fits 64 bits. */
static void check_object_id(const char *s) {
  uint64_t v, again;
  char text[24];
  if (gsd_request_object_id(s, &v)) return;
  snprintf(text, sizeof text, "%llx", (unsigned long long)v);
  FUZZ_CHECK(gsd_request_object_id(text, &again) == 0 && again == v);
  FUZZ_CHECK(strlen(s) - strspn(s, "0xX") <= 16);
}

static void check_number(const char *s) {
  static const uint64_t maxes[] = {10, 100000, INT64_MAX, UINT64_MAX};
  size_t i;
  int64_t id;
  for (i = 0; i < sizeof maxes / sizeof maxes[0]; i++) {
    uint64_t a = 0, b = 0;
    int ra = gsd_request_u64(s, maxes[i], &a), rb = ref_u64(s, maxes[i], &b);
    FUZZ_CHECK(ra == rb && a == b);
  }
  if (gsd_request_id(s, &id) == 0) {
    uint64_t v;
    FUZZ_CHECK(ref_u64(s, INT64_MAX, &v) == 0 && v > 0 && (uint64_t)id == v);
  }
  check_object_id(s);
}

/* The schedules' values (gsd_http.c's read_schedule). */
static void check_units(const char *s) {
  uint64_t ms, again_ms, bytes;
  int64_t t, again_t;
  char text[64];
  if (gs_parse_duration_ms(s, &ms) == 0) {
    gs_units_format_duration(text, sizeof text, ms);
    FUZZ_CHECK(gs_parse_duration_ms(text, &again_ms) == 0 && again_ms == ms);
  }
  (void)gs_parse_size(s, &bytes);
  /* Four-digit years only: later ones do not format into the same form. */
  if (gs_units_time(s, &t) == 0 && t >= 0 && t < INT64_C(253402300800)) {
    gs_units_format_time(text, sizeof text, t);
    FUZZ_CHECK(gs_units_time(text, &again_t) == 0 && again_t == t);
  }
}

/* Every parameter of the API, with the room its handler gives it. */
static const struct { const char *key; size_t cap; } params[] = {
  {"device", 256}, {"status", 32}, {"limit", 32}, {"format", 16}, {"wait", 16},
  {"stable_ids", 16}, {"timeout", 32}, {"top", 16}, {"by_type", 16}, {"object", 1024},
  {"type", 1024}, {"max", 16}, {"old", 32}, {"new", 32}, {"last", 16}, {"threshold", 16},
  {"every", 256}, {"jitter", 256}, {"keep", 256}, {"max_bytes", 256}, {"start", 256},
  {"end", 256}, {"", 16},
};

static void check_query(const char *path, size_t len, size_t query_at) {
  size_t i;
  for (i = 0; i < sizeof params / sizeof params[0]; i++) {
    static char got[1024], want[1024];
    int rc = gsd_request_query(path, len, query_at, params[i].key, got, params[i].cap), ref, on;
    FUZZ_CHECK(rc >= -1 && rc <= 1);
    if (query_at == SIZE_MAX) {
      FUZZ_CHECK(rc == 0);
      continue;
    }
    ref = ref_query(path + query_at + 1, len - query_at - 1, params[i].key, params[i].cap, want);
    FUZZ_CHECK(rc == ref);
    if (rc == 1) {
      FUZZ_CHECK(strlen(got) < params[i].cap && strcmp(got, want) == 0);
      check_number(got);
      check_units(got);
    }
    rc = gsd_request_flag(path, len, query_at, params[i].key, &on);
    FUZZ_CHECK(rc == 0 || rc == -1);
    FUZZ_CHECK(rc == 0 || on == 0);
  }
}

static void check_segments(const char *path, size_t len, size_t query_at) {
  char seg[GSD_REQUEST_MAX_SEGMENTS][GSD_REQUEST_SEGMENT_MAX];
  size_t end = query_at == SIZE_MAX ? len : query_at, at = 1;
  int n = -1, i;
  if (gsd_request_split(path, len, query_at, seg, &n) != 0) return;
  FUZZ_CHECK(end > 0 && path[0] == '/' && n >= 0 && n <= GSD_REQUEST_MAX_SEGMENTS);
  /* Segment i is what lies between slash i and the next one. */
  for (i = 0; i < n; i++) {
    static char want[GSD_REQUEST_SEGMENT_MAX * 3];
    size_t stop = at;
    long k;
    while (stop < end && path[stop] != '/') stop++;
    k = ref_decode(path + at, stop - at, 0, want);
    FUZZ_CHECK(k >= 0 && (size_t)k < GSD_REQUEST_SEGMENT_MAX);
    FUZZ_CHECK(strlen(seg[i]) == (size_t)k && memcmp(seg[i], want, (size_t)k) == 0);
    check_number(seg[i]);
    at = stop + 1;
  }
  /* Nothing is left but a trailing slash. */
  FUZZ_CHECK(at >= end);
}

/* The bearer token of a header value, against a plain reading of the
 * scheme: "Bearer" in any case, one space, then the token between spaces. */
static void check_bearer(const char *value, size_t len) {
  static const char scheme[] = "bearer ";
  const char *token = NULL, *p = value + 6, *end = value + len;
  size_t n = 0, i;
  int want = len >= 7, rc;
  for (i = 0; want && i < 7; i++)
    want = (value[i] >= 'A' && value[i] <= 'Z' ? value[i] - 'A' + 'a' : value[i]) == scheme[i];
  rc = gsd_request_bearer(value, len, &token, &n);
  FUZZ_CHECK(rc == want);
  if (!rc) return;
  while (p < end && *p == ' ') p++;
  while (end > p && end[-1] == ' ') end--;
  FUZZ_CHECK(token == p && n == (size_t)(end - p));
}

/* ---- the request ----------------------------------------------------------- */

static void check_target(const char *path, size_t len) {
  h2o_mem_pool_t pool;
  size_t query_at = SIZE_MAX, *norm_indexes = NULL;
  h2o_mem_init_pool(&pool);
  (void)h2o_url_normalize_path(&pool, path, len, &query_at, &norm_indexes);
  FUZZ_CHECK(query_at == SIZE_MAX || (query_at < len && path[query_at] == '?'));
  check_segments(path, len, query_at);
  check_query(path, len, query_at);
  check_decode(path, len, 0, GSD_REQUEST_SEGMENT_MAX);
  check_decode(path, len, 1, 1024);
  h2o_mem_clear_pool(&pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *buf = (const char *)data, *method, *path;
  size_t method_len, path_len, nheaders = MAX_HEADERS, i;
  struct phr_header headers[MAX_HEADERS];
  int minor, rc;
  rc = phr_parse_request(buf, size, &method, &method_len, &path, &path_len, &minor, headers,
                         &nheaders, 0);
  if (rc > 0) {
    FUZZ_CHECK((size_t)rc <= size && nheaders <= MAX_HEADERS);
    FUZZ_CHECK(path >= buf && path_len <= size && path + path_len <= buf + size);
    for (i = 0; i < nheaders; i++) {
      FUZZ_CHECK(headers[i].value >= buf && headers[i].value + headers[i].value_len <= buf + rc);
      check_bearer(headers[i].value, headers[i].value_len);
    }
    check_target(path, path_len);
  } else if (size > 0 && size <= MAX_DECODED && data[0] == '/') {
    /* Not a whole request: still a path, as gsd_http.c gets it. */
    check_target(buf, size);
  }
  return 0;
}
