/* gs_knob.c - parsing of "key=value,key=value" source options. */
#include <stdio.h>
#include <string.h>
#include "gs_error.h"
#include "gs_knob.h"

int gs_knob_bad(const gs_knob *k, const char *why, char *err, size_t errcap) {
  snprintf(err, errcap, "%.*s: %s: '%.*s'", (int)k->key_len, k->key, why,
           (int)k->val_len, k->val);
  return GS_EINVAL;
}

int gs_knob_next(const char **p, gs_knob *k, char *err, size_t errcap) {
  const char *s = *p, *end, *eq;
  if (!s || *s == '\0') return 0;
  end = strchr(s, ',');
  if (!end) end = s + strlen(s);
  eq = memchr(s, '=', (size_t)(end - s));
  if (!eq || eq == s) {
    snprintf(err, errcap, "'%.*s' is not KEY=VALUE", (int)(end - s), s);
    return GS_EINVAL;
  }
  k->key = s;
  k->key_len = (size_t)(eq - s);
  k->val = eq + 1;
  k->val_len = (size_t)(end - eq - 1);
  *p = *end ? end + 1 : end;
  return 1;
}

int gs_knob_is(const gs_knob *k, const char *key) {
  return strlen(key) == k->key_len && memcmp(k->key, key, k->key_len) == 0;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int gs_knob_count(const gs_knob *k, uint64_t lo, uint64_t hi, uint64_t *out,
                  char *err, size_t errcap) {
  const char *s = k->val, *e = k->val + k->val_len;
  unsigned base = 10;
  uint64_t v = 0;
  if (k->val_len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s += 2;
  }
  if (s == e) return gs_knob_bad(k, "not a non-negative integer", err, errcap);
  for (; s < e; s++) {
    int d = hex_digit(*s);
    if (d < 0 || (unsigned)d >= base)
      return gs_knob_bad(k, "not a non-negative integer", err, errcap);
    if (v > (UINT64_MAX - (unsigned)d) / base) return gs_knob_bad(k, "out of range", err, errcap);
    v = v * base + (unsigned)d;
  }
  if (v < lo || v > hi) {
    char why[80];
    snprintf(why, sizeof why, "out of range %llu-%llu", (unsigned long long)lo,
             (unsigned long long)hi);
    return gs_knob_bad(k, why, err, errcap);
  }
  *out = v;
  return GS_OK;
}

/* "larger than MAX", MAX written as the decimal it stands for. */
static int too_large(const gs_knob *k, unsigned decimals, uint64_t max, char *err,
                     size_t errcap) {
  uint64_t scale = 1, frac;
  unsigned i, width = decimals;
  char why[64];
  for (i = 0; i < decimals; i++) scale *= 10;
  frac = max % scale;
  while (width > 0 && frac % 10 == 0 && frac) { frac /= 10; width--; }
  if (frac)
    snprintf(why, sizeof why, "larger than %llu.%0*llu", (unsigned long long)(max / scale),
             (int)width, (unsigned long long)frac);
  else
    snprintf(why, sizeof why, "larger than %llu", (unsigned long long)(max / scale));
  return gs_knob_bad(k, why, err, errcap);
}

int gs_knob_fixed(const gs_knob *k, unsigned decimals, uint64_t max, uint64_t *out,
                  char *err, size_t errcap) {
  const char *s = k->val, *e = k->val + k->val_len;
  uint64_t v = 0;
  unsigned digits = 0, fdigits = 0;
  for (; s < e && *s >= '0' && *s <= '9'; s++, digits++) {
    v = v * 10 + (uint64_t)(*s - '0');
    if (v > max) return too_large(k, decimals, max, err, errcap);
  }
  if (s < e && *s == '.') {
    for (s++; s < e && *s >= '0' && *s <= '9'; s++, fdigits++) {
      if (fdigits >= decimals) {
        char why[40];
        snprintf(why, sizeof why, "more than %u decimals", decimals);
        return gs_knob_bad(k, why, err, errcap);
      }
      v = v * 10 + (uint64_t)(*s - '0');
    }
  }
  if (s != e || digits + fdigits == 0) return gs_knob_bad(k, "not a number", err, errcap);
  for (; fdigits < decimals && v <= max; fdigits++) v *= 10;
  if (v > max) return too_large(k, decimals, max, err, errcap);
  *out = v;
  return GS_OK;
}

int gs_knob_percent(const gs_knob *k, uint32_t *ppm, char *err, size_t errcap) {
  uint64_t v = 0;
  int rc = gs_knob_fixed(k, 4, 100 * 10000, &v, err, errcap);
  if (rc == GS_OK) *ppm = (uint32_t)v;
  return rc;
}

int gs_knob_word(const gs_knob *k, const char *const *words, unsigned *index,
                 char *err, size_t errcap) {
  unsigned i;
  char why[160];
  size_t n = 0;
  for (i = 0; words[i]; i++) {
    if (strlen(words[i]) == k->val_len && memcmp(words[i], k->val, k->val_len) == 0) {
      *index = i;
      return GS_OK;
    }
  }
  n += (size_t)snprintf(why, sizeof why, "not one of");
  for (i = 0; words[i] && n < sizeof why; i++)
    n += (size_t)snprintf(why + n, sizeof why - n, "%s %s", i ? "," : "", words[i]);
  return gs_knob_bad(k, why, err, errcap);
}
