/* test_pb.c - the protobuf writer and reader (gs_pb), CRC-32 (gs_crc32)
 * and the frame reader (gs_wire), byte by byte against the encoding rules. */
#include "gs_unit.h"

#include <stdlib.h>
#include "gs_crc32.h"
#include "gs_pb_reader.h"
#include "gs_pb_writer.h"
#include "gs_wire.h"

static void assert_bytes(const gs_pb *w, const char *hex) {
  char got[512];
  size_t i;
  got[0] = '\0';
  for (i = 0; i < w->len && i < 200; i++)
    snprintf(got + 2 * i, sizeof got - 2 * i, "%02x", w->buf[i]);
  assert_int_equal(gs_pb_status(w), GS_OK);
  assert_string_equal(got, hex);
}

/* ---- writer ---- */

static void test_varint_edges(void **state) {
  static const struct { uint64_t v; const char *hex; } cases[] = {
    {0, "00"}, {1, "01"}, {127, "7f"}, {128, "8001"}, {300, "ac02"},
    {16383, "ff7f"}, {16384, "808001"}, {0xffffffffu, "ffffffff0f"},
    {1ull << 63, "80808080808080808001"}, {UINT64_MAX, "ffffffffffffffffff01"}};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t buf[16];
    gs_pb w;
    gs_pb_init(&w, buf, sizeof buf);
    gs_pb_raw_varint(&w, cases[i].v);
    assert_bytes(&w, cases[i].hex);
    assert_int_equal(gs_pb_varint_size(cases[i].v), w.len);
  }
}

static void test_zigzag(void **state) {
  (void)state;
  assert_int_equal(gs_pb_zigzag(0), 0);
  assert_int_equal(gs_pb_zigzag((uint64_t)-1), 1);
  assert_int_equal(gs_pb_zigzag(1), 2);
  assert_int_equal(gs_pb_zigzag((uint64_t)-2), 3);
  assert_true(gs_pb_zigzag((uint64_t)INT64_MAX) == UINT64_MAX - 1);
  assert_true(gs_pb_zigzag((uint64_t)INT64_MIN) == UINT64_MAX);
  assert_true(gs_pb_unzigzag(UINT64_MAX) == (uint64_t)INT64_MIN);
  assert_true(gs_pb_unzigzag(gs_pb_zigzag(0x123456789abcdefull)) == 0x123456789abcdefull);
}

static void test_tags_and_scalars(void **state) {
  uint8_t buf[64];
  gs_pb w;
  (void)state;
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_varint(&w, 1, 150);                 /* the encoding guide's example */
  assert_bytes(&w, "089601");
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_varint(&w, 15, 0);
  gs_pb_varint(&w, 16, 1);
  assert_bytes(&w, "7800800101");
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_varint(&w, GS_PB_FIELD_MAX, 0);
  assert_bytes(&w, "f8ffffff0f00");
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_sint64(&w, 2, -1);
  gs_pb_sint64(&w, 2, INT64_MIN);
  assert_bytes(&w, "1001" "10ffffffffffffffffff01");
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_fixed32(&w, 3, 0x01020304u);
  gs_pb_fixed64(&w, 4, 0x0102030405060708ull);
  assert_bytes(&w, "1d04030201" "210807060504030201");
}

static void test_bytes_and_strings(void **state) {
  uint8_t buf[64];
  gs_pb w;
  (void)state;
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_string(&w, 2, "testing");
  gs_pb_string(&w, 3, "");
  gs_pb_string(&w, 4, NULL);
  gs_pb_bytes(&w, 5, "\0\xff", 2);
  assert_bytes(&w, "120774657374696e67" "1a00" "2a0200ff");
}

static void test_nested_lengths(void **state) {
  uint8_t buf[512];
  gs_pb w;
  size_t outer, inner, i;
  (void)state;
  gs_pb_init(&w, buf, sizeof buf);
  outer = gs_pb_begin(&w, 1);
  gs_pb_varint(&w, 1, 1);
  inner = gs_pb_begin(&w, 2);
  gs_pb_end(&w, inner);                   /* empty: length 0 in four bytes */
  gs_pb_end(&w, outer);
  assert_bytes(&w, "0a" "87808000" "0801" "12" "80808000");

  /* 200 bytes of body: 0xc8 0x01 spread over four bytes. */
  gs_pb_init(&w, buf, sizeof buf);
  outer = gs_pb_begin(&w, 3);
  for (i = 0; i < 200; i++) gs_pb_raw_bytes(&w, "x", 1);
  gs_pb_end(&w, outer);
  assert_int_equal(w.len, 1 + 4 + 200);
  assert_memory_equal(buf, "\x1a\xc8\x81\x80\x00", 5);

  /* A packed field built element by element. */
  gs_pb_init(&w, buf, sizeof buf);
  outer = gs_pb_begin(&w, 4);
  gs_pb_raw_varint(&w, 3);
  gs_pb_raw_varint(&w, 270);
  gs_pb_raw_varint(&w, 86942);
  gs_pb_end(&w, outer);
  assert_bytes(&w, "22" "86808000" "038e029ea705");
}

static void test_overflow(void **state) {
  uint8_t buf[8];
  gs_pb w;
  size_t mark;
  (void)state;
  /* An exact fit is fine, even for a varint near the end. */
  gs_pb_init(&w, buf, 3);
  gs_pb_varint(&w, 1, 300);
  assert_int_equal(gs_pb_status(&w), GS_OK);
  assert_int_equal(w.len, 3);
  /* One byte more overflows, and the flag sticks. */
  gs_pb_raw_varint(&w, 0);
  assert_int_equal(gs_pb_status(&w), GS_ELIMIT);
  assert_int_equal(w.len, 3);
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_bytes(&w, 1, "123456789", 9);
  assert_int_equal(gs_pb_status(&w), GS_ELIMIT);
  gs_pb_init(&w, buf, 4);
  mark = gs_pb_begin(&w, 1);
  gs_pb_end(&w, mark);
  assert_int_equal(gs_pb_status(&w), GS_ELIMIT);
  gs_pb_init(&w, buf, 0);
  gs_pb_raw_varint(&w, 0);
  assert_int_equal(gs_pb_status(&w), GS_ELIMIT);
}

/* ---- reader ---- */

static void test_reader_fields(void **state) {
  uint8_t buf[128];
  gs_pb w;
  gs_pb_reader r;
  gs_pb_field f;
  size_t mark;
  (void)state;
  gs_pb_init(&w, buf, sizeof buf);
  gs_pb_varint(&w, 1, UINT64_MAX);
  gs_pb_fixed64(&w, 2, 0x1122334455667788ull);
  gs_pb_string(&w, 3, "abc");
  gs_pb_fixed32(&w, 4, 0xdeadbeefu);
  mark = gs_pb_begin(&w, 5);
  gs_pb_varint(&w, 1, 7);
  gs_pb_end(&w, mark);
  gs_pb_reader_init(&r, buf, w.len);
  assert_int_equal(gs_pb_next(&r, &f), GS_OK);
  assert_int_equal(f.number, 1);
  assert_int_equal(f.wire_type, GS_PB_VARINT);
  assert_true(f.value == UINT64_MAX);
  assert_int_equal(gs_pb_next(&r, &f), GS_OK);
  assert_int_equal(f.wire_type, GS_PB_FIXED64);
  assert_true(f.value == 0x1122334455667788ull);
  assert_int_equal(gs_pb_next(&r, &f), GS_OK);
  assert_int_equal(f.wire_type, GS_PB_LEN);
  assert_int_equal(f.len, 3);
  assert_memory_equal(f.data, "abc", 3);
  assert_int_equal(gs_pb_next(&r, &f), GS_OK);
  assert_true(f.value == 0xdeadbeefu);
  assert_int_equal(gs_pb_next(&r, &f), GS_OK);
  assert_int_equal(f.number, 5);
  assert_int_equal(f.len, 2);               /* from a redundant 4-byte length */
  assert_memory_equal(f.data, "\x08\x07", 2);
  assert_int_equal(gs_pb_next(&r, &f), GS_EOF);
}

static void expect_malformed(const char *bytes, size_t len, const char *why) {
  gs_pb_reader r;
  gs_pb_field f;
  int err;
  gs_pb_reader_init(&r, bytes, len);
  while ((err = gs_pb_next(&r, &f)) == GS_OK) {
  }
  assert_int_equal(err, GS_EFORMAT);
  assert_string_equal(r.error, why);
}

static void test_reader_malformed(void **state) {
  (void)state;
  expect_malformed("\x08", 1, "truncated or overlong varint");
  expect_malformed("\x08\x80", 2, "truncated or overlong varint");
  expect_malformed("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12,
                   "truncated or overlong varint");
  expect_malformed("\x80", 1, "truncated or overlong field key");
  /* Keys and lengths are 32-bit: no more than 5 bytes, as protobuf-c. */
  expect_malformed("\x88\x80\x80\x80\x80\x00\x01", 7, "truncated or overlong field key");
  expect_malformed("\x12\x80\x80\x80\x80\x80\x00", 7, "truncated or overlong length");
  /* A 10th varint byte holds only bit 63. */
  expect_malformed("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11,
                   "truncated or overlong varint");
  expect_malformed("\x12\x05" "abc", 5, "length past the end of the message");
  expect_malformed("\x12\xff\xff\xff\xff\x0f", 6, "length past the end of the message");
  expect_malformed("\x00\x00", 2, "field number out of range");
  expect_malformed("\x0b", 1, "group or unknown wire type");       /* start group */
  expect_malformed("\x0c", 1, "group or unknown wire type");       /* end group */
  expect_malformed("\x0e", 1, "group or unknown wire type");       /* 6 */
  expect_malformed("\x0f", 1, "group or unknown wire type");       /* 7 */
  expect_malformed("\x0d\x01\x02", 3, "truncated fixed-size field");
  expect_malformed("\x09\x01\x02\x03\x04\x05\x06\x07", 8, "truncated fixed-size field");
}

/* ---- CRC-32 ---- */

/* The plain bitwise definition, to check the table-driven one against. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  while (n--) {
    int k;
    c ^= *p++;
    for (k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return ~c;
}

static void test_crc32_vectors(void **state) {
  static const char fox[] = "The quick brown fox jumps over the lazy dog";
  uint8_t *big;
  uint32_t crc = 0;
  size_t i, n = 1u << 20;
  (void)state;
  assert_int_equal(gs_crc32(0, "", 0), 0);
  assert_int_equal(gs_crc32(0, "a", 1), 0xe8b7be43u);
  assert_int_equal(gs_crc32(0, "123456789", 9), 0xcbf43926u);
  assert_int_equal(gs_crc32(0, fox, strlen(fox)), 0x414fa339u);
  /* Incremental: any split gives the same. */
  for (i = 0; i <= strlen(fox); i++)
    assert_int_equal(gs_crc32(gs_crc32(0, fox, i), fox + i, strlen(fox) - i), 0x414fa339u);
  big = malloc(n);
  assert_non_null(big);
  for (i = 0; i < n; i++) big[i] = (uint8_t)((i * 2654435761u) >> 13);
  for (i = 0; i < n; i += 4093) crc = gs_crc32(crc, big + i, n - i < 4093 ? n - i : 4093);
  assert_int_equal(crc, crc_bitwise(big, n));
  assert_int_equal(gs_crc32(0, big + 1, n - 1), crc_bitwise(big + 1, n - 1));
  free(big);
}

/* ---- frames ---- */

static void test_frame_prefix(void **state) {
  uint8_t p[GS_WIRE_PREFIX_MAX];
  size_t plen, flen;
  (void)state;
  assert_int_equal(gs_wire_prefix(p, 0), 1);
  assert_int_equal(gs_wire_prefix(p, GS_WIRE_MAX_FRAME), 4);
  assert_int_equal(gs_wire_frame_peek(p, 4, GS_WIRE_MAX_FRAME, &plen, &flen), GS_OK);
  assert_int_equal(plen, 4);
  assert_int_equal(flen, GS_WIRE_MAX_FRAME);
  assert_int_equal(gs_wire_frame_peek(p, 3, GS_WIRE_MAX_FRAME, &plen, &flen), GS_EOF);
  assert_int_equal(gs_wire_frame_peek(p, 4, GS_WIRE_MAX_FRAME - 1, &plen, &flen), GS_ELIMIT);
  /* Non-minimal but well-formed: 3 in five bytes. */
  assert_int_equal(gs_wire_frame_peek((const uint8_t *)"\x83\x80\x80\x80\x00", 5,
                                      GS_WIRE_MAX_FRAME, &plen, &flen), GS_OK);
  assert_int_equal(plen, 5);
  assert_int_equal(flen, 3);
  /* Six bytes, or a value above 32 bits, is garbage. */
  assert_int_equal(gs_wire_frame_peek((const uint8_t *)"\xff\xff\xff\xff\xff\x01", 6,
                                      GS_WIRE_MAX_FRAME, &plen, &flen), GS_EFORMAT);
  assert_int_equal(gs_wire_frame_peek((const uint8_t *)"\xff\xff\xff\xff\x7f", 5,
                                      UINT32_MAX, &plen, &flen), GS_EFORMAT);
}

static void test_frame_reader(void **state) {
  uint8_t buf[64], stream[64];
  const uint8_t *frame;
  size_t len, used, i, n = 0;
  gs_wire_reader r;
  (void)state;
  /* Three frames: "abc", "", "defgh", fed one byte at a time. */
  stream[n++] = 3; memcpy(stream + n, "abc", 3); n += 3;
  stream[n++] = 0;
  stream[n++] = 5; memcpy(stream + n, "defgh", 5); n += 5;
  gs_wire_reader_init(&r, buf, sizeof buf, 32);
  for (i = 0; i < n; i++) {
    gs_wire_reader_feed(&r, stream + i, 1, &used);
    assert_int_equal(used, 1);
    if (i == 3) {
      assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_OK);
      assert_int_equal(len, 3);
      assert_memory_equal(frame, "abc", 3);
    } else if (i == 4) {
      assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_OK);
      assert_int_equal(len, 0);
    } else if (i == n - 1) {
      assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_OK);
      assert_memory_equal(frame, "defgh", 5);
    } else {
      assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_EOF);
    }
  }
  assert_int_equal(gs_wire_reader_pending(&r), 0);
}

static void test_frame_reader_errors(void **state) {
  uint8_t buf[64];
  const uint8_t *frame;
  size_t len, used;
  gs_wire_reader r;
  (void)state;
  /* Oversize: a frame above the maximum is refused from its prefix alone. */
  gs_wire_reader_init(&r, buf, sizeof buf, 16);
  gs_wire_reader_feed(&r, "\x11", 1, &used);
  assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_ELIMIT);
  assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_ELIMIT);  /* sticky */
  /* A frame above the buffer, though under max_frame, is refused too. */
  gs_wire_reader_init(&r, buf, 8, 16);
  gs_wire_reader_feed(&r, "\x0a", 1, &used);
  assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_ELIMIT);
  /* Truncated: the stream stops inside a frame; the bytes stay pending. */
  gs_wire_reader_init(&r, buf, sizeof buf, 16);
  gs_wire_reader_feed(&r, "\x05" "ab", 3, &used);
  assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_EOF);
  assert_int_equal(gs_wire_reader_pending(&r), 3);
  /* Garbage: a length varint that never ends. */
  gs_wire_reader_init(&r, buf, sizeof buf, GS_WIRE_MAX_FRAME);
  gs_wire_reader_feed(&r, "\x80\x80\x80\x80\x80\x80", 6, &used);
  assert_int_equal(gs_wire_reader_next(&r, &frame, &len), GS_EFORMAT);
}

static void test_error_names(void **state) {
  (void)state;
  assert_string_equal(gs_wire_error_name(GS_WIRE_E_PROTOCOL), "protocol");
  assert_string_equal(gs_wire_error_name(GS_WIRE_E_CRC), "crc");
  assert_string_equal(gs_wire_error_name(GS_WIRE_E_DEVICE), "device");
  assert_string_equal(gs_wire_error_name(GS_WIRE_E_COUNT), "unknown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_varint_edges),
    cmocka_unit_test(test_zigzag),
    cmocka_unit_test(test_tags_and_scalars),
    cmocka_unit_test(test_bytes_and_strings),
    cmocka_unit_test(test_nested_lengths),
    cmocka_unit_test(test_overflow),
    cmocka_unit_test(test_reader_fields),
    cmocka_unit_test(test_reader_malformed),
    cmocka_unit_test(test_crc32_vectors),
    cmocka_unit_test(test_frame_prefix),
    cmocka_unit_test(test_frame_reader),
    cmocka_unit_test(test_frame_reader_errors),
    cmocka_unit_test(test_error_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
