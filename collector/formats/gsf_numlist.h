/* gsf_numlist.h - the elements of a JSON array of whole numbers (V8's
 * nodes and edges), read across any number of reads, a run of digits at a
 * time, from just after its "[" up to its "]".
 *
 * Only decimal digits, commas and blanks are taken; anything else is an
 * error at its byte, so what is not a list of whole numbers never passes
 * for one. */
#ifndef GSF_NUMLIST_H
#define GSF_NUMLIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct gsf_numlist {
  int in_number;         /* in the digits of a number */
  int after_number;      /* past a number, before its comma */
  int seen;              /* a number was read */
  uint64_t number;       /* its value so far */
} gsf_numlist;

/* What gsf_numlist_read stopped at. */
enum {
  GSF_NUMLIST_MORE,      /* the end of buf: more to come */
  GSF_NUMLIST_END,       /* the "]" that ends the list, not read */
  GSF_NUMLIST_STOP,      /* take returned 0 */
  GSF_NUMLIST_NOT_WHOLE, /* a byte that cannot be in a whole number, or one above 2^64 - 1 */
  GSF_NUMLIST_MISSING,   /* a comma or "]" where a number must be */
  GSF_NUMLIST_NO_COMMA   /* two numbers with no comma between */
};

/* Nonzero for the bytes JSON allows between tokens. */
int gsf_numlist_blank(unsigned char b);

void gsf_numlist_start(gsf_numlist *l);
/* Reads buf[0..n); *used is how many bytes were read (at a stop or error,
 * the offset of the byte that made it). take(ctx, value, at) gets each
 * number once the byte after it, at offset at, ends it; 0 from it stops. */
int gsf_numlist_read(gsf_numlist *l, const unsigned char *buf, size_t n, size_t *used,
                     int (*take)(void *ctx, uint64_t value, size_t at), void *ctx);

#endif
