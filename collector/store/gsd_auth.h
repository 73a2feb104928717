/* gsd_auth.h - device keys: making them, and checking an agent's proof.
 *
 * Scheme "gcsnap-key-1" (proto/README.md): a device key K is 32 random
 * bytes, shown once; the catalog keeps only its verifier V = SHA-256(K).
 * For a challenge nonce the agent sends proof = K XOR HMAC-SHA-256(V, M),
 * M binding the nonce, the protocol version and the device ID. The
 * collector recovers K' = proof XOR HMAC-SHA-256(V, M) and accepts when
 * SHA-256(K') equals V, compared in constant time. Uses OpenSSL's
 * libcrypto: the OS CSPRNG through RAND_bytes, SHA-256, HMAC and
 * CRYPTO_memcmp. */
#ifndef GSD_AUTH_H
#define GSD_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "gs_wire.h"

#define GSD_AUTH_VERIFIER_BYTES 32u
/* Longest device ID a proof is checked for (GSD_DEVICE_ID_MAX). */
#define GSD_AUTH_DEVICE_MAX 80u

/* A fresh challenge nonce. GS_EIO when the CSPRNG fails. */
int gsd_auth_nonce(uint8_t nonce[GS_WIRE_NONCE_BYTES]);

/* A new key and its verifier. GS_EIO when the CSPRNG fails. */
int gsd_auth_new_key(uint8_t key[GS_WIRE_KEY_BYTES], uint8_t verifier[GSD_AUTH_VERIFIER_BYTES]);

/* 1 when proof (proof_len bytes) proves the key behind verifier for this
 * nonce, protocol version and device ID; 0 otherwise. Takes the same time
 * whatever bytes differ. */
int gsd_auth_check(const uint8_t verifier[GSD_AUTH_VERIFIER_BYTES],
                   const uint8_t nonce[GS_WIRE_NONCE_BYTES], unsigned protocol_version,
                   const char *device_id, const uint8_t *proof, size_t proof_len);

/* key as 64 lowercase hex digits and a NUL, into out. */
void gsd_auth_hex(const uint8_t *bytes, size_t len, char *out);

#endif
