/* gs_text.h - the text rules names in a dump follow.
 *
 * Names are UTF-8; the reader rejects anything else, and every output that
 * must stay valid text (JSON, logs) checks with the same function. */
#ifndef GS_TEXT_H
#define GS_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence that starts at p (1 for ASCII), or 0
 * when the bytes before e are not one (overlong, surrogate, truncated...). */
size_t gs_utf8_len(const unsigned char *p, const unsigned char *e);
/* Bytes of the UTF-8 byte order mark that p[0..n) starts with: 3, or 0.
 * Some Windows tools write one before text; it is read past. */
size_t gs_utf8_bom(const unsigned char *p, size_t n);

#endif
