/* gsf_numlist.c - a JSON array of whole numbers, read across reads (see
 * gsf_numlist.h). The digits of a number are read in one loop, and the
 * comma right after them taken there; every other byte goes through
 * number_byte. */
#include "gsf_numlist.h"

#define MAX_BEFORE_DIGIT ((UINT64_MAX - 9) / 10)   /* a digit more cannot overflow */

void gsf_numlist_start(gsf_numlist *l) {
  l->in_number = l->after_number = l->seen = 0;
  l->number = 0;
}

int gsf_numlist_blank(unsigned char b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }

/* One byte that is not a digit continuing a number: GSF_NUMLIST_MORE to go on. */
static int number_byte(gsf_numlist *l, unsigned char b, size_t at,
                       int (*take)(void *, uint64_t, size_t), void *ctx) {
  if (b >= '0' && b <= '9') return l->after_number ? GSF_NUMLIST_NO_COMMA : GSF_NUMLIST_NOT_WHOLE;
  if (l->in_number) {
    l->in_number = 0;
    l->after_number = l->seen = 1;
    if (!take(ctx, l->number, at)) return GSF_NUMLIST_STOP;
  }
  if (gsf_numlist_blank(b)) return GSF_NUMLIST_MORE;
  if (b == ',' && l->after_number) {
    l->after_number = 0;
    return GSF_NUMLIST_MORE;
  }
  if (b == ']' && (l->after_number || !l->seen)) return GSF_NUMLIST_END;
  return b == ',' || b == ']' ? GSF_NUMLIST_MISSING : GSF_NUMLIST_NOT_WHOLE;
}

int gsf_numlist_read(gsf_numlist *l, const unsigned char *buf, size_t n, size_t *used,
                     int (*take)(void *ctx, uint64_t value, size_t at), void *ctx) {
  size_t i = 0;
  int rc = GSF_NUMLIST_MORE;
  while (i < n && rc == GSF_NUMLIST_MORE) {
    uint64_t v = l->in_number ? l->number : 0;
    size_t from = i;
    if (!l->after_number)
      for (; i < n && (unsigned)(buf[i] - '0') < 10u && v <= MAX_BEFORE_DIGIT; i++)
        v = v * 10 + (uint64_t)(buf[i] - '0');
    if (i > from) {
      /* The common end of a number, its comma, taken here. */
      if (i < n && buf[i] == ',') {
        l->in_number = l->after_number = 0;
        l->seen = 1;
        if (!take(ctx, v, i)) { rc = GSF_NUMLIST_STOP; break; }
        i++;
        continue;
      }
      l->number = v;
      l->in_number = 1;
    }
    if (i < n && (rc = number_byte(l, buf[i], i, take, ctx)) == GSF_NUMLIST_MORE) i++;
  }
  *used = i;
  return rc;
}
