/* test_sha256_openssl.c - the agent's SHA-256 and HMAC-SHA-256 give what
 * OpenSSL's give, the collector's side of the same proof, on random keys
 * and messages of every length around the block size. */
#include "gs_unit.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "gs_sha256.h"

/* Reproducible inputs: a failure can be run again. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint8_t next_byte(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint8_t)((rng * 0x2545F4914F6CDD1Dull) >> 56);
}

static void fill(uint8_t *p, size_t n) {
  while (n--) *p++ = next_byte();
}

static void sha256_agrees(void **state) {
  uint8_t m[600], ours[GS_SHA256_BYTES], theirs[SHA256_DIGEST_LENGTH];
  size_t len;
  (void)state;
  for (len = 0; len <= sizeof m; len++) {
    fill(m, len);
    gs_sha256(m, len, ours);
    SHA256(m, len, theirs);
    assert_memory_equal(ours, theirs, sizeof ours);
  }
}

static void hmac_agrees(void **state) {
  uint8_t key[160], m[400], ours[GS_SHA256_BYTES], theirs[EVP_MAX_MD_SIZE];
  unsigned theirs_len = 0;
  int i;
  (void)state;
  for (i = 0; i < 2000; i++) {
    size_t key_len = next_byte() % sizeof key, len = (size_t)(next_byte() + next_byte()) % sizeof m;
    if (i < 160) key_len = (size_t)i;   /* every key length around the block */
    fill(key, key_len);
    fill(m, len);
    gs_hmac_sha256(key, key_len, m, len, ours);
    assert_non_null(HMAC(EVP_sha256(), key, (int)key_len, m, len, theirs, &theirs_len));
    assert_int_equal(theirs_len, GS_SHA256_BYTES);
    assert_memory_equal(ours, theirs, sizeof ours);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(sha256_agrees),
    cmocka_unit_test(hmac_agrees),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
