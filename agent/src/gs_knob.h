/* gs_knob.h - the "key=value,key=value" options of a heap source.
 *
 * A source spec on the command line is NAME[:OPTIONS]; every source except
 * file (whose option is a path) reads OPTIONS as knobs with these helpers.
 * Numbers are parsed without the C library and without floating point, so
 * that equal strings mean equal values on every platform. Every parser
 * writes a message naming the knob into err on failure. */
#ifndef GS_KNOB_H
#define GS_KNOB_H

#include <stddef.h>
#include <stdint.h>

typedef struct gs_knob {
  const char *key;        /* not NUL-terminated */
  size_t key_len;
  const char *val;        /* not NUL-terminated */
  size_t val_len;
} gs_knob;

/* Splits the next knob off *p (NULL or "" is no knob). Returns 1 with *k
 * filled, 0 at the end, or GS_EINVAL for a knob without "=" or key. */
int gs_knob_next(const char **p, gs_knob *k, char *err, size_t errcap);

int gs_knob_is(const gs_knob *k, const char *key);

/* An integer in lo..hi, decimal or 0x hex. */
int gs_knob_count(const gs_knob *k, uint64_t lo, uint64_t hi, uint64_t *out,
                  char *err, size_t errcap);

/* A decimal with up to `decimals` digits after the point, scaled by
 * 10^decimals: "2.5" with 3 decimals is 2500. At most max (scaled). */
int gs_knob_fixed(const gs_knob *k, unsigned decimals, uint64_t max, uint64_t *out,
                  char *err, size_t errcap);

/* A percentage 0-100 with up to 4 decimals, in parts per million. */
int gs_knob_percent(const gs_knob *k, uint32_t *ppm, char *err, size_t errcap);

/* One of words (NULL-terminated list): *index is its position. */
int gs_knob_word(const gs_knob *k, const char *const *words, unsigned *index,
                 char *err, size_t errcap);

/* Writes "KEY: WHY: 'VALUE'" into err and returns GS_EINVAL. */
int gs_knob_bad(const gs_knob *k, const char *why, char *err, size_t errcap);

#endif
