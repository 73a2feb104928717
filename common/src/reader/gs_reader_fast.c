/* gs_reader_fast.c - the reader's fast path for object lines.
 *
 * Object lines are nearly all of a dump. When one is written the canonical
 * way ("o ID TYPE SIZE REF...", single spaces, LF or CRLF) it is parsed here;
 * anything else, including every error, is left to the general parser of
 * gs_reader.c, which decides and explains. Both give the same records
 * (test_reader_modes compares them).
 *
 * On x86-64 a line is classified sixteen bytes at a time into a bit per
 * blank and a bit per byte that is neither blank nor hex digit; the numbers
 * are then found from the blank bits and converted each on its own, so the
 * conversions of one line overlap in the processor instead of waiting for
 * one another. Elsewhere (GCC or Clang, little-endian) numbers are parsed a
 * word at a time, one after the other. The parsers read up to 16 bytes past
 * the end of a line, which GS_READER_PAD keeps readable. */
#include <string.h>
#include "gs_reader_int.h"

#if GS_FAST_PATH
/* Fills in the record of the object line of `len` bytes at the reader's
 * position, whose references are refs[0..nrefs), and moves past it. */
static int take_line(gs_reader *r, gs_record *rec, size_t len, const uint64_t *refs, size_t nrefs) {
  if (nrefs > r->max_refs) return 0;
  r->pos += len;
  rec->kind = GS_REC_OBJECT;
  rec->line = ++r->line;
  rec->has_timestamp = 0;
  rec->name = NULL;
  rec->name_len = 0;
  rec->has_container = 0;
  rec->refs = refs;
  rec->nrefs = nrefs;
  return 1;
}
#endif

#if GS_FAST_PATH && defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>

#define WINDOW 64                /* bytes classified at once */
#define MAX_DIGITS 16

/* Bits of the 16 bytes at p: blanks, newlines, and bytes that are neither
 * a blank nor a hex digit. */
static void classify(const unsigned char *p, unsigned *blank, unsigned *newline, unsigned *other) {
  __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
  __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
  __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
  __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                 _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1)));
  __m128i sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
  *blank = (unsigned)_mm_movemask_epi8(sp);
  *newline = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
  *other = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(digit, letter), sp)) & 0xffffu;
}

/* Value of the len (1-16) hex digits at p, followed by a blank, CR or LF:
 * the nibbles of all sixteen bytes packed, less the ones after the number
 * (a CR or LF right after it stays below 16, so it cannot spill). */
static uint64_t hex_value(const unsigned char *p, unsigned len) {
  __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
  __m128i nib = _mm_add_epi8(_mm_and_si128(v, _mm_set1_epi8(0x0f)),
                             _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('9')), _mm_set1_epi8(9)));
  __m128i pairs = _mm_or_si128(_mm_and_si128(_mm_slli_epi16(nib, 4), _mm_set1_epi16(0xf0)),
                               _mm_srli_epi16(nib, 8));
  uint64_t packed = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs));
  return __builtin_bswap64(packed) >> (64 - 4 * len);
}

/* Classifies up to WINDOW bytes at p, stopping after the 16 that hold the
 * line's end: sets *ends to a bit per number end (blank, and the CR or LF
 * that ends the line) and *eol to the line end's bit, or 0 when it is not
 * in the window. Returns 0 when a byte is neither blank nor hex digit. */
static int window_ends(const unsigned char *p, uint64_t *ends, uint64_t *eol) {
  uint64_t blank = 0, other = 0;
  unsigned k;
  *eol = 0;
  for (k = 0; k < WINDOW && !*eol; k += 16) {
    unsigned b, nl, o;
    classify(p + k, &b, &nl, &o);
    blank |= (uint64_t)b << k;
    other |= (uint64_t)o << k;
    if (nl) {
      unsigned at = k + (unsigned)__builtin_ctz(nl);
      if (at && p[at - 1] == '\r') at--;
      *eol = UINT64_C(1) << at;
    }
  }
  if (*eol) {
    blank &= *eol - 1;
    other &= *eol - 1;
  }
  *ends = blank | *eol;
  return !other;
}

/* Parses the numbers from p (the first one's first digit) to the end of
 * the line into r->refs from *n on: the end of the line, or NULL when the
 * general parser must take it. */
static const unsigned char *fast_numbers(gs_reader *r, const unsigned char *p, size_t *n) {
  uint64_t ends, eol = 0;
  size_t k = *n;  /* a local count: a store through r->refs may alias *n */
  while (!eol) {
    unsigned from = 0;
    uint64_t *out;
    if (!window_ends(p, &ends, &eol)) return NULL;
    while (r->refs_cap < k + WINDOW / 2)
      if (gs_reader_grow_refs_(r)) return NULL;
    for (out = r->refs; ends; ends &= ends - 1) {
      unsigned to = (unsigned)__builtin_ctzll(ends), len = to - from;
      if (len - 1 >= MAX_DIGITS) return NULL;  /* empty or too long */
      out[k++] = hex_value(p + from, len);
      from = to + 1;
    }
    if (!from) return NULL;                    /* a number over the window */
    p += from;
  }
  *n = k;
  return p;
}

int gs_reader_fast_object_(gs_reader *r, gs_record *rec) {
  const unsigned char *start = (const unsigned char *)r->buf + r->pos, *p;
  size_t n = 0;
  if (start[1] != ' ' || !(p = fast_numbers(r, start + 2, &n))) return 0;
  if (n < 3) return 0;
  rec->id = r->refs[0];
  rec->type = r->refs[1];
  rec->size = r->refs[2];
  p += p[-1] == '\r';
  return take_line(r, rec, (size_t)(p - start), r->refs + 3, n - 3);
}

#elif GS_FAST_PATH
#define REP(b) (UINT64_C(0x0101010101010101) * (b))

static uint64_t load64(const unsigned char *p) {
  uint64_t x;
  memcpy(&x, p, 8);
  return x;
}

/* Bytes before the first one below '0' (every separator is below it), or 8. */
static unsigned digit_run(uint64_t x) {
  uint64_t stop = (x - REP(0x30)) & ~x & REP(0x80);
  return stop ? (unsigned)__builtin_ctzll(stop) >> 3 : 8;
}

/* Value of the first n (1..8) bytes of x as hex digits; 0 if one is not. */
static int word_value(uint64_t x, unsigned n, uint64_t *out) {
  uint64_t lower = x | REP(0x20), y = lower & REP(0x7f);
  uint64_t digit = (y + REP(0x80 - '0')) & ~(y + REP(0x7f - '9'));
  uint64_t letter = (y + REP(0x80 - 'a')) & ~(y + REP(0x7f - 'f'));
  uint64_t keep = n == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * n)) - 1;
  uint64_t v;
  if (((digit | letter) & ~x & REP(0x80) & keep) != (REP(0x80) & keep)) return 0;
  v = (lower & REP(0x0f)) + ((letter & REP(0x80)) >> 7) * 9;
  v <<= 8 * (8 - n);                        /* leading zeros for short numbers */
  v = ((v << 4) | (v >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
  v = ((v << 8) | (v >> 16)) & UINT64_C(0x0000ffff0000ffff);
  *out = ((v << 16) | (v >> 32)) & UINT64_C(0xffffffff);
  return 1;
}

/* Parses the number at *pp and the separator after it. Returns 1 when a
 * space follows, 2 at the end of the line, 0 to give up. */
static int fast_hex(const unsigned char **pp, uint64_t *out) {
  const unsigned char *p = *pp;
  uint64_t x = load64(p), hi, lo;
  unsigned n = digit_run(x), m;
  if (n == 0) return 0;
  if (n < 8) {
    if (!word_value(x, n, out)) return 0;
  } else {
    m = digit_run(load64(p + 8));
    if (m == 8 && p[16] >= '0') return 0;
    if (!word_value(x, 8, &hi)) return 0;
    if (m == 0) {
      *out = hi;
    } else {
      if (!word_value(load64(p + 8), m, &lo)) return 0;
      *out = (hi << (4 * m)) | lo;
    }
    n += m;
  }
  p += n;
  *pp = p + 1;
  if (*p == ' ') return p[1] != ' ' && p[1] != '\n' && p[1] != '\r';
  if (*p == '\r') { *pp = p + 2; return p[1] == '\n' ? 2 : 0; }
  return *p == '\n' ? 2 : 0;
}

/* Parses the numbers from p (the first one's first digit) to the end of
 * the line into r->refs from *n on: the end of the line, or NULL when the
 * general parser must take it. */
static const unsigned char *fast_numbers(gs_reader *r, const unsigned char *p, size_t *n) {
  int more = 1;
  while (more == 1) {
    if (*n == r->refs_cap && gs_reader_grow_refs_(r)) return NULL;
    if (!(more = fast_hex(&p, &r->refs[*n]))) return NULL;
    ++*n;
  }
  return p;
}

int gs_reader_fast_object_(gs_reader *r, gs_record *rec) {
  const unsigned char *start = (const unsigned char *)r->buf + r->pos, *p = start + 2;
  uint64_t *f[3];
  size_t n = 0;
  int i, more = 1;
  if (start[1] != ' ') return 0;
  f[0] = &rec->id; f[1] = &rec->type; f[2] = &rec->size;
  for (i = 0; i < 3; i++)
    if ((more = fast_hex(&p, f[i])) != 1 && (i < 2 || more != 2)) return 0;
  if (more == 1 && !(p = fast_numbers(r, p, &n))) return 0;
  return take_line(r, rec, (size_t)(p - start), r->refs, n);
}
#endif

#if GS_FAST_PATH
int gs_reader_fast_refs_(gs_reader *r, char *p, char *e, gs_record *rec) {
  size_t n = rec->nrefs;
  char c = *e;
  const unsigned char *end;
  if (e - p < 2 || p[1] == ' ') return 0;
  *e = '\n';
  end = fast_numbers(r, (const unsigned char *)p + 1, &n);
  *e = c;
  if (!end || n > r->max_refs) return 0;
  rec->nrefs = n;
  return 1;
}
#else
int gs_reader_fast_object_(gs_reader *r, gs_record *rec) { (void)r; (void)rec; return 0; }
int gs_reader_fast_refs_(gs_reader *r, char *p, char *e, gs_record *rec) {
  (void)r; (void)p; (void)e; (void)rec;
  return 0;
}
#endif
