/* gsd_auth.c - device keys: making them, and checking an agent's proof
 * (see gsd_auth.h). */
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include "gs_error.h"
#include "gsd_auth.h"

int gsd_auth_nonce(uint8_t nonce[GS_WIRE_NONCE_BYTES]) {
  return RAND_bytes(nonce, GS_WIRE_NONCE_BYTES) == 1 ? GS_OK : GS_EIO;
}

int gsd_auth_new_key(uint8_t key[GS_WIRE_KEY_BYTES], uint8_t verifier[GSD_AUTH_VERIFIER_BYTES]) {
  if (RAND_bytes(key, GS_WIRE_KEY_BYTES) != 1) return GS_EIO;
  SHA256(key, GS_WIRE_KEY_BYTES, verifier);
  return GS_OK;
}

/* HMAC-SHA-256(verifier, M), M as proto/gcsnap.proto gives it. */
static int auth_mac(const uint8_t *verifier, const uint8_t *nonce, unsigned version,
                    const char *device_id, uint8_t out[SHA256_DIGEST_LENGTH]) {
  static const char scheme[] = GS_WIRE_AUTH_SCHEME;   /* its NUL is part of M */
  uint8_t m[sizeof scheme + GS_WIRE_NONCE_BYTES + 4 + GSD_AUTH_DEVICE_MAX];
  size_t id_len = strlen(device_id), n = 0;
  unsigned out_len = 0;
  if (id_len > GSD_AUTH_DEVICE_MAX) return GS_EINVAL;
  memcpy(m, scheme, sizeof scheme);
  n += sizeof scheme;
  memcpy(m + n, nonce, GS_WIRE_NONCE_BYTES);
  n += GS_WIRE_NONCE_BYTES;
  m[n++] = (uint8_t)(version >> 24);
  m[n++] = (uint8_t)(version >> 16);
  m[n++] = (uint8_t)(version >> 8);
  m[n++] = (uint8_t)version;
  memcpy(m + n, device_id, id_len);   /* NOLINT(bugprone-not-null-terminated-result): bytes */
  n += id_len;
  if (!HMAC(EVP_sha256(), verifier, GSD_AUTH_VERIFIER_BYTES, m, n, out, &out_len) ||
      out_len != SHA256_DIGEST_LENGTH)
    return GS_EIO;
  return GS_OK;
}

int gsd_auth_check(const uint8_t verifier[GSD_AUTH_VERIFIER_BYTES],
                   const uint8_t nonce[GS_WIRE_NONCE_BYTES], unsigned protocol_version,
                   const char *device_id, const uint8_t *proof, size_t proof_len) {
  uint8_t mac[SHA256_DIGEST_LENGTH], key[GS_WIRE_KEY_BYTES], check[SHA256_DIGEST_LENGTH];
  size_t i;
  int ok;
  if (proof_len != GS_WIRE_PROOF_BYTES) return 0;
  if (auth_mac(verifier, nonce, protocol_version, device_id, mac) != GS_OK) return 0;
  for (i = 0; i < GS_WIRE_KEY_BYTES; i++) key[i] = proof[i] ^ mac[i];
  SHA256(key, sizeof key, check);
  ok = CRYPTO_memcmp(check, verifier, GSD_AUTH_VERIFIER_BYTES) == 0;
  OPENSSL_cleanse(key, sizeof key);
  OPENSSL_cleanse(mac, sizeof mac);
  return ok;
}

void gsd_auth_hex(const uint8_t *bytes, size_t len, char *out) {
  static const char hex[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < len; i++) {
    out[2 * i] = hex[bytes[i] >> 4];
    out[2 * i + 1] = hex[bytes[i] & 15];
  }
  out[2 * len] = '\0';
}
