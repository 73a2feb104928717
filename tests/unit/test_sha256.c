/* test_sha256.c - the agent's SHA-256 and HMAC-SHA-256: the FIPS 180-2
 * example messages, every RFC 4231 test case, and feeding a message in
 * pieces of every size. */
#include "gs_unit.h"

#include <stdlib.h>

#include "gs_sha256.h"

static void from_hex(const char *hex, uint8_t *out, size_t *len) {
  size_t n = 0;
  unsigned v;
  for (; hex[0] && hex[1]; hex += 2) {
    assert_int_equal(sscanf(hex, "%2x", &v), 1);
    out[n++] = (uint8_t)v;
  }
  *len = n;
}

static void assert_digest(const uint8_t *d, size_t len, const char *hex) {
  uint8_t want[GS_SHA256_BYTES];
  size_t n;
  from_hex(hex, want, &n);
  assert_true(len <= n);
  assert_memory_equal(d, want, len);
}

/* ---- FIPS 180-2, appendix B ------------------------------------------- */

static void sha256_abc(void **state) {
  uint8_t d[GS_SHA256_BYTES];
  (void)state;
  gs_sha256("abc", 3, d);
  assert_digest(d, sizeof d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void sha256_448_bits(void **state) {
  static const char m[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  uint8_t d[GS_SHA256_BYTES];
  (void)state;
  assert_int_equal(strlen(m) * 8, 448);
  gs_sha256(m, strlen(m), d);
  assert_digest(d, sizeof d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void sha256_million_a(void **state) {
  char chunk[1000];
  uint8_t d[GS_SHA256_BYTES];
  gs_sha256_ctx c;
  int i;
  (void)state;
  memset(chunk, 'a', sizeof chunk);
  gs_sha256_init(&c);
  for (i = 0; i < 1000; i++) gs_sha256_update(&c, chunk, sizeof chunk);
  gs_sha256_final(&c, d);
  assert_digest(d, sizeof d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void sha256_empty(void **state) {
  uint8_t d[GS_SHA256_BYTES];
  (void)state;
  gs_sha256("", 0, d);
  assert_digest(d, sizeof d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* The padding's edge cases: 55, 56, 63, 64 and 65 bytes fed in pieces of
 * every size give the digest of the whole. */
static void sha256_pieces(void **state) {
  uint8_t m[200], whole[GS_SHA256_BYTES], parts[GS_SHA256_BYTES];
  size_t len, step, i;
  (void)state;
  for (i = 0; i < sizeof m; i++) m[i] = (uint8_t)(i * 7 + 3);
  for (len = 0; len <= sizeof m; len++) {
    gs_sha256(m, len, whole);
    for (step = 1; step <= 65; step += 16) {
      gs_sha256_ctx c;
      gs_sha256_init(&c);
      for (i = 0; i < len; i += step) gs_sha256_update(&c, m + i, len - i < step ? len - i : step);
      gs_sha256_final(&c, parts);
      assert_memory_equal(whole, parts, sizeof whole);
    }
  }
}

/* ---- RFC 4231 ----------------------------------------------------------- */

typedef struct hmac_case {
  const char *key_hex;      /* NULL: key_byte repeated key_len times */
  uint8_t key_byte;
  size_t key_len;
  const char *data;         /* text, or NULL for data_hex */
  const char *data_hex;     /* NULL: data_byte repeated data_len times */
  uint8_t data_byte;
  size_t data_len;
  const char *mac_hex;
  size_t mac_len;           /* bytes compared: 16 for case 5 */
} hmac_case;

static const hmac_case rfc4231[] = {
  /* 1 */ {NULL, 0x0b, 20, "Hi There", NULL, 0, 0,
           "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32},
  /* 2 */ {"4a656665", 0, 0, "what do ya want for nothing?", NULL, 0, 0,
           "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32},
  /* 3 */ {NULL, 0xaa, 20, NULL, NULL, 0xdd, 50,
           "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32},
  /* 4 */ {"0102030405060708090a0b0c0d0e0f10111213141516171819", 0, 0, NULL, NULL, 0xcd, 50,
           "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32},
  /* 5 */ {NULL, 0x0c, 20, "Test With Truncation", NULL, 0, 0,
           "a3b6167473100ee06e0c796c2955552b", 16},
  /* 6 */ {NULL, 0xaa, 131, "Test Using Larger Than Block-Size Key - Hash Key First", NULL, 0, 0,
           "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32},
  /* 7 */ {NULL, 0xaa, 131,
           "This is a test using a larger than block-size key and a larger than block-size "
           "data. The key needs to be hashed before being used by the HMAC algorithm.",
           NULL, 0, 0,
           "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32},
};

static void hmac_rfc4231(void **state) {
  size_t i;
  (void)state;
  for (i = 0; i < sizeof rfc4231 / sizeof rfc4231[0]; i++) {
    const hmac_case *t = &rfc4231[i];
    uint8_t key[200], data[200], mac[GS_SHA256_BYTES];
    size_t key_len, data_len;
    if (t->key_hex) from_hex(t->key_hex, key, &key_len);
    else memset(key, t->key_byte, key_len = t->key_len);
    if (t->data) memcpy(data, t->data, data_len = strlen(t->data));
    else memset(data, t->data_byte, data_len = t->data_len);
    gs_hmac_sha256(key, key_len, data, data_len, mac);
    print_message("RFC 4231 test case %zu\n", i + 1);
    assert_digest(mac, t->mac_len, t->mac_hex);
  }
}

/* The streaming calls give what the one-shot call gives. */
static void hmac_pieces(void **state) {
  static const char *data = "what do ya want for nothing?";
  uint8_t one[GS_SHA256_BYTES], parts[GS_SHA256_BYTES];
  gs_hmac_sha256_ctx c;
  size_t i;
  (void)state;
  gs_hmac_sha256("Jefe", 4, data, strlen(data), one);
  gs_hmac_sha256_init(&c, "Jefe", 4);
  for (i = 0; i < strlen(data); i++) gs_hmac_sha256_update(&c, data + i, 1);
  gs_hmac_sha256_final(&c, parts);
  assert_memory_equal(one, parts, sizeof one);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(sha256_abc),
    cmocka_unit_test(sha256_448_bits),
    cmocka_unit_test(sha256_million_a),
    cmocka_unit_test(sha256_empty),
    cmocka_unit_test(sha256_pieces),
    cmocka_unit_test(hmac_rfc4231),
    cmocka_unit_test(hmac_pieces),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
