/* gs_array.h - growable arrays for the tables of the library and the host. */
#ifndef GS_ARRAY_H
#define GS_ARRAY_H

#include <stddef.h>

/* Makes *arr (of *cap elements of elem bytes) hold at least need elements,
 * growing by half again so that appends cost amortized O(1). Returns GS_OK,
 * or GS_ENOMEM (also when the size would overflow), leaving *arr intact. */
int gs_array_reserve(void **arr, size_t *cap, size_t need, size_t elem);

#endif
