/* gsd_request.h - what the collector's HTTP API takes from a request
 * before it routes it: the target's path segments and query parameters,
 * percent-decoded, the decimal numbers and IDs they carry, and the bearer
 * token of the Authorization header.
 *
 * Pure functions over bytes: gsd_http.c calls them with what h2o parsed
 * (req->path and req->query_at, a header's value), and the fuzz target
 * tests/fuzz/fuzz_http.c with what h2o's own parser cut out of raw
 * requests. A path is its bytes [0, len) with the query after the '?' at
 * query_at, or SIZE_MAX when there is none. */
#ifndef GSD_REQUEST_H
#define GSD_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define GSD_REQUEST_MAX_SEGMENTS 6
#define GSD_REQUEST_SEGMENT_MAX 256   /* bytes of a decoded segment, NUL included */

/* Percent-decodes s[0..n) into out (cap bytes, NUL-terminated); in a query
 * '+' is a space. Returns 0, or -1 for a bad escape, a NUL byte or a result
 * that does not fit. */
int gsd_request_decode(const char *s, size_t n, int query, char *out, size_t cap);

/* Splits the path before the query into at most GSD_REQUEST_MAX_SEGMENTS
 * decoded segments ("/api/snapshots/3" gives api, snapshots, 3; a trailing
 * slash adds none). Returns 0, or -1 when the path does not start with '/',
 * has too many segments or one that does not decode. */
int gsd_request_split(const char *path, size_t len, size_t query_at,
                  char seg[][GSD_REQUEST_SEGMENT_MAX], int *nseg);

/* The decoded value of the first key=value (or bare key, giving "") in the
 * query: 1 when found, 0 when absent, -1 when its value does not decode
 * into cap bytes. */
int gsd_request_query(const char *path, size_t len, size_t query_at, const char *key,
                  char *out, size_t cap);

/* A flag: absent, "0", "false" or "no" clear it; a bare key, "1", "true"
 * or "yes" set it. Returns 0, or -1 for any other value. */
int gsd_request_flag(const char *path, size_t len, size_t query_at, const char *key, int *on);

/* Decimal digits only, at most max. Returns 0, or -1. */
int gsd_request_u64(const char *s, uint64_t max, uint64_t *v);

/* A catalog ID: a decimal number from 1 to INT64_MAX. Returns 0, or -1. */
int gsd_request_id(const char *s, int64_t *id);

/* An object ID as dumps write it: hex digits, an optional 0x before them,
 * a value that fits 64 bits (leading zeros aside). Returns 0, or -1. */
int gsd_request_object_id(const char *s, uint64_t *id);

/* The token of an Authorization header's value "Bearer TOKEN" (the scheme
 * in any case, spaces around the token left out): 1 with *token and *len
 * pointing into value, or 0 for another scheme. */
int gsd_request_bearer(const char *value, size_t len, const char **token, size_t *token_len);

#endif
