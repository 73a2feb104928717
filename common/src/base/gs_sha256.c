/* gs_sha256.c - SHA-256 and HMAC-SHA-256 (see gs_sha256.h).
 *
 * Straight from FIPS 180-4, one 64-byte block at a time: the agent hashes
 * a few hundred bytes per connection, so clarity wins over speed. Words
 * are assembled byte by byte, which works on any endianness and alignment
 * (ARM devices fault on unaligned loads). */
#include <string.h>
#include "gs_sha256.h"

static const uint32_t sha256_k[64] = {
  0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u,
  0x923f82a4u, 0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u,
  0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u,
  0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
  0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u,
  0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u,
  0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
  0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
  0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au,
  0x5b9cca4fu, 0x682e6ff3u, 0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u,
  0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u
};

static uint32_t ror(uint32_t x, unsigned n) {
  return (x >> n) | (x << (32u - n));
}

static void sha256_block(gs_sha256_ctx *c, const uint8_t *p) {
  uint32_t w[64], a, b, d, e, f, g, h, cc, t1, t2;
  unsigned i;
  for (i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
           (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
  for (i = 16; i < 64; i++) {
    uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3];
  e = c->h[4]; f = c->h[5]; g = c->h[6]; h = c->h[7];
  for (i = 0; i < 64; i++) {
    t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
    t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
    h = g; g = f; f = e; e = d + t1;
    d = cc; cc = b; b = a; a = t1 + t2;
  }
  c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
  c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
  gs_sha256_wipe(w, sizeof w);
}

void gs_sha256_wipe(void *p, size_t len) {
  /* Through a volatile pointer, so the stores are kept. */
  volatile uint8_t *v = p;
  while (len--) *v++ = 0;
}

void gs_sha256_init(gs_sha256_ctx *c) {
  static const uint32_t iv[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(c->h, iv, sizeof iv);
  c->total = 0;
  c->fill = 0;
}

void gs_sha256_update(gs_sha256_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->total += len;
  while (len) {
    size_t n = GS_SHA256_BLOCK - c->fill;
    if (n > len) n = len;
    memcpy(c->block + c->fill, p, n);
    c->fill += n;
    p += n;
    len -= n;
    if (c->fill == GS_SHA256_BLOCK) {
      sha256_block(c, c->block);
      c->fill = 0;
    }
  }
}

void gs_sha256_final(gs_sha256_ctx *c, uint8_t out[GS_SHA256_BYTES]) {
  uint64_t bits = c->total * 8u;
  unsigned i;
  c->block[c->fill++] = 0x80;
  if (c->fill > GS_SHA256_BLOCK - 8) {
    memset(c->block + c->fill, 0, GS_SHA256_BLOCK - c->fill);
    sha256_block(c, c->block);
    c->fill = 0;
  }
  memset(c->block + c->fill, 0, GS_SHA256_BLOCK - 8 - c->fill);
  for (i = 0; i < 8; i++) c->block[GS_SHA256_BLOCK - 1 - i] = (uint8_t)(bits >> (8 * i));
  sha256_block(c, c->block);
  for (i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(c->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->h[i];
  }
  gs_sha256_wipe(c, sizeof *c);
}

void gs_sha256(const void *data, size_t len, uint8_t out[GS_SHA256_BYTES]) {
  gs_sha256_ctx c;
  gs_sha256_init(&c);
  gs_sha256_update(&c, data, len);
  gs_sha256_final(&c, out);
}

void gs_hmac_sha256_init(gs_hmac_sha256_ctx *c, const void *key, size_t key_len) {
  uint8_t k[GS_SHA256_BLOCK], pad[GS_SHA256_BLOCK];
  unsigned i;
  memset(k, 0, sizeof k);
  if (key_len > GS_SHA256_BLOCK) gs_sha256(key, key_len, k);
  else if (key_len) memcpy(k, key, key_len);
  for (i = 0; i < GS_SHA256_BLOCK; i++) pad[i] = (uint8_t)(k[i] ^ 0x36);
  gs_sha256_init(&c->inner);
  gs_sha256_update(&c->inner, pad, sizeof pad);
  for (i = 0; i < GS_SHA256_BLOCK; i++) pad[i] = (uint8_t)(k[i] ^ 0x5c);
  gs_sha256_init(&c->outer);
  gs_sha256_update(&c->outer, pad, sizeof pad);
  gs_sha256_wipe(k, sizeof k);
  gs_sha256_wipe(pad, sizeof pad);
}

void gs_hmac_sha256_update(gs_hmac_sha256_ctx *c, const void *data, size_t len) {
  gs_sha256_update(&c->inner, data, len);
}

void gs_hmac_sha256_final(gs_hmac_sha256_ctx *c, uint8_t out[GS_SHA256_BYTES]) {
  uint8_t inner[GS_SHA256_BYTES];
  gs_sha256_final(&c->inner, inner);
  gs_sha256_update(&c->outer, inner, sizeof inner);
  gs_sha256_final(&c->outer, out);
  gs_sha256_wipe(inner, sizeof inner);
}

void gs_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                    uint8_t out[GS_SHA256_BYTES]) {
  gs_hmac_sha256_ctx c;
  gs_hmac_sha256_init(&c, key, key_len);
  gs_hmac_sha256_update(&c, data, len);
  gs_hmac_sha256_final(&c, out);
}
