/* gs_parse.c - durations, sizes and addresses as written on command lines
 * (the grammar is in gs_parse.h). */
#include <string.h>
#include "gs_error.h"
#include "gs_parse.h"

#define MAX_DECIMALS 3

/* A decimal number at s: its whole part, its fraction in thousandths, and
 * where it ends; NULL when s does not start with one or it does not fit. */
static const char *decimal(const char *s, uint64_t *whole, unsigned *milli) {
  uint64_t x = 0;
  unsigned f = 0, n = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) return NULL;
    x = x * 10 + (uint64_t)(*p - '0');
  }
  if (p == s) return NULL;
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, n++) {
      if (n == MAX_DECIMALS) return NULL;
      f = f * 10 + (unsigned)(*p - '0');
    }
    if (n == 0) return NULL;
    for (; n < MAX_DECIMALS; n++) f *= 10;
  }
  *whole = x;
  *milli = f;
  return p;
}

/* whole.milli units into *out, GS_EINVAL when it does not fit. */
static int scale(uint64_t whole, unsigned milli, uint64_t unit, uint64_t *out) {
  uint64_t part = (uint64_t)milli * (unit / 1000) + (uint64_t)milli * (unit % 1000) / 1000;
  if (whole > UINT64_MAX / unit || whole * unit > UINT64_MAX - part) return GS_EINVAL;
  *out = whole * unit + part;
  return GS_OK;
}

int gs_parse_duration_ms(const char *s, uint64_t *ms) {
  static const struct { const char *suffix; uint64_t ms; } units[] = {
    {"ms", 1}, {"s", 1000}, {"", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000},
  };
  uint64_t whole;
  unsigned milli;
  const char *end = decimal(s, &whole, &milli);
  size_t i;
  if (!end) return GS_EINVAL;
  for (i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strcmp(end, units[i].suffix) == 0) return scale(whole, milli, units[i].ms, ms);
  return GS_EINVAL;
}

int gs_parse_size(const char *s, uint64_t *bytes) {
  static const char letters[] = "KMGT";
  uint64_t whole, unit = 1;
  unsigned milli;
  const char *end = decimal(s, &whole, &milli), *l;
  char c;
  if (!end) return GS_EINVAL;
  c = *end >= 'a' && *end <= 'z' ? (char)(*end - 'a' + 'A') : *end;
  if (c && (l = strchr(letters, c)) != NULL) {
    unit = (uint64_t)1 << (10 * (l - letters + 1));
    end++;
    if (*end == 'i') end++;
  } else if (milli) {
    return GS_EINVAL;          /* a fraction of a byte */
  }
  if (*end == 'B') end++;
  if (*end) return GS_EINVAL;
  return scale(whole, milli, unit, bytes);
}

static int copy(const char *s, size_t n, char *out, size_t cap) {
  if (n == 0 || n >= cap) return GS_EINVAL;
  memcpy(out, s, n);
  out[n] = '\0';
  return GS_OK;
}

int gs_parse_address(const char *s, const char *default_port, char *host, size_t host_cap,
                     char *port, size_t port_cap) {
  const char *h = s, *end, *colon;
  if (*s == '[') {
    h = s + 1;
    if (!(end = strchr(h, ']')) || (end[1] && end[1] != ':')) return GS_EINVAL;
    colon = end[1] ? end + 1 : NULL;
  } else {
    colon = strrchr(s, ':');
    end = colon ? colon : s + strlen(s);
  }
  if (copy(h, (size_t)(end - h), host, host_cap)) return GS_EINVAL;
  if (colon) return copy(colon + 1, strlen(colon + 1), port, port_cap);
  if (!default_port) return GS_EINVAL;
  return copy(default_port, strlen(default_port), port, port_cap);
}
