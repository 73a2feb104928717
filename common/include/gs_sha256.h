/* gs_sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104) in
 * portable C99.
 *
 * For the agent, whose toolchains have no crypto library (Windows CE's
 * CryptoAPI lacks SHA-256 in older images): it proves it holds its
 * device key with these (see proto/README.md). Host programs use OpenSSL
 * instead; the unit tests check that both agree. No allocation, no system
 * call; the contexts hold key material, so callers wipe them when done
 * (gs_sha256_wipe). */
#ifndef GS_SHA256_H
#define GS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GS_SHA256_BYTES 32u
#define GS_SHA256_BLOCK 64u

typedef struct gs_sha256_ctx {
  uint32_t h[8];
  uint64_t total;               /* bytes hashed so far */
  uint8_t block[GS_SHA256_BLOCK];
  size_t fill;                  /* bytes waiting in block */
} gs_sha256_ctx;

void gs_sha256_init(gs_sha256_ctx *c);
void gs_sha256_update(gs_sha256_ctx *c, const void *data, size_t len);
/* Writes the digest and leaves c wiped. */
void gs_sha256_final(gs_sha256_ctx *c, uint8_t out[GS_SHA256_BYTES]);
/* The digest of one buffer. */
void gs_sha256(const void *data, size_t len, uint8_t out[GS_SHA256_BYTES]);

/* Overwrites len bytes in a way the compiler does not drop as a dead
 * store: for keys and the contexts that saw them. */
void gs_sha256_wipe(void *p, size_t len);

typedef struct gs_hmac_sha256_ctx {
  gs_sha256_ctx inner, outer;       /* each already fed its padded key */
} gs_hmac_sha256_ctx;

/* A key longer than a block is hashed first, as RFC 2104 says. */
void gs_hmac_sha256_init(gs_hmac_sha256_ctx *c, const void *key, size_t key_len);
void gs_hmac_sha256_update(gs_hmac_sha256_ctx *c, const void *data, size_t len);
/* Writes the MAC and leaves c wiped. */
void gs_hmac_sha256_final(gs_hmac_sha256_ctx *c, uint8_t out[GS_SHA256_BYTES]);
void gs_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                    uint8_t out[GS_SHA256_BYTES]);

#endif
