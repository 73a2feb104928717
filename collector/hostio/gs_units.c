/* gs_units.c - times as people write them, and durations and times
 * written back.
 *
 * Times are converted by hand (days from the civil date) rather than with
 * timegm(), which is not in POSIX, so that both programs read them alike. */
#include <stdio.h>
#include <string.h>
#include "gs_units.h"

/* The leading decimal number of s: its value and where it ends. */
static const char *number(const char *s, uint64_t *v) {
  uint64_t x = 0;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++) {
    if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) return NULL;
    x = x * 10 + (uint64_t)(*p - '0');
  }
  *v = x;
  return p == s ? NULL : p;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  int64_t era;
  unsigned yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = (unsigned)(y - era * 400);
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

/* n digits at *p into *v, moving *p past them. */
static int digits(const char **p, int n, unsigned *v) {
  unsigned x = 0;
  int i;
  for (i = 0; i < n; i++) {
    if ((*p)[i] < '0' || (*p)[i] > '9') return -1;
    x = x * 10 + (unsigned)((*p)[i] - '0');
  }
  *p += n;
  *v = x;
  return 0;
}

static int expect(const char **p, char c) {
  if (**p != c) return -1;
  (*p)++;
  return 0;
}

int gs_units_time(const char *s, int64_t *unix_s) {
  unsigned y, mo, d, h, mi, sec = 0;
  const char *p = s;
  uint64_t v;
  const char *end = number(s, &v);
  if (end && !*end) {
    if (v > (uint64_t)GS_UNITS_TIME_MAX) return -1;
    *unix_s = (int64_t)v;
    return 0;
  }
  if (digits(&p, 4, &y) || expect(&p, '-') || digits(&p, 2, &mo) || expect(&p, '-') ||
      digits(&p, 2, &d) || (*p != 'T' && *p != ' '))
    return -1;
  p++;
  if (digits(&p, 2, &h) || expect(&p, ':') || digits(&p, 2, &mi)) return -1;
  if (*p == ':' && (p++, digits(&p, 2, &sec))) return -1;
  if (*p == 'Z') p++;
  if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
  *unix_s = days_from_civil(y, mo, d) * 86400 + (int64_t)(h * 3600 + mi * 60 + sec);
  return *unix_s < 0 || *unix_s > GS_UNITS_TIME_MAX ? -1 : 0;
}

void gs_units_format_duration(char *buf, size_t cap, uint64_t ms) {
  static const struct { const char *suffix; uint64_t ms; } units[] = {
    {"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000},
  };
  size_t i;
  for (i = 0; i < sizeof units / sizeof units[0]; i++)
    if (ms && ms % units[i].ms == 0) {
      snprintf(buf, cap, "%llu%s", (unsigned long long)(ms / units[i].ms), units[i].suffix);
      return;
    }
  snprintf(buf, cap, "%llums", (unsigned long long)ms);
}

void gs_units_format_time(char *buf, size_t cap, int64_t t) {
  int64_t days = (t >= 0 ? t : t - 86399) / 86400, secs = t - days * 86400;
  int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
  snprintf(buf, cap, "%04lld-%02u-%02uT%02u:%02u:%02uZ", (long long)y, m, d,
           (unsigned)(secs / 3600), (unsigned)(secs / 60 % 60), (unsigned)(secs % 60));
}
