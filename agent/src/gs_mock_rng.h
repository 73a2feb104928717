/* gs_mock_rng.h - the mock heap's random numbers: splitmix64 to seed and to
 * hash, xoshiro256** to draw.
 *
 * Integer arithmetic only, so a seed gives the same heap on every platform
 * and C library. Inline: the mock draws several numbers per object. */
#ifndef GS_MOCK_RNG_H
#define GS_MOCK_RNG_H

#include <stdint.h>

#define GS_MOCK_PPM 1000000u      /* percentages are kept in parts per million */

typedef struct gs_mock_rng { uint64_t s[4]; } gs_mock_rng;

static inline uint64_t gs_mock_mix(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static inline uint64_t gs_mock_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline void gs_mock_rng_seed(gs_mock_rng *r, uint64_t seed) {
  int i;
  for (i = 0; i < 4; i++) {
    seed = gs_mock_mix(seed);
    r->s[i] = seed;
  }
}

static inline uint64_t gs_mock_rng_next(gs_mock_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = gs_mock_rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = gs_mock_rotl(s[3], 45);
  return out;
}

/* Uniform in [0, n) for n > 0. Below 2^32 a multiply replaces the division
 * (Lemire); the bias of either is far below anything a test could notice. */
static inline uint64_t gs_mock_below(gs_mock_rng *r, uint64_t n) {
  uint64_t x = gs_mock_rng_next(r);
  if (n <= UINT64_C(0xffffffff)) return ((x >> 32) * n) >> 32;
  return x % n;
}

/* True with probability ppm / 1e6. */
static inline int gs_mock_chance(gs_mock_rng *r, uint32_t ppm) {
  return gs_mock_below(r, GS_MOCK_PPM) < ppm;
}

/* Heavy-tailed length: P(len >= x) is about 1/(x+1); median 0. */
static inline uint64_t gs_mock_heavy(gs_mock_rng *r, uint64_t cap) {
  uint64_t u = 1 + gs_mock_below(r, UINT64_C(1) << 24);
  uint64_t len = ((UINT64_C(1) << 24) / u) - 1;
  return len < cap ? len : cap;
}

#endif
