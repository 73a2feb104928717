/* gs_array.h - growable arrays for the tables of the library and the host. */
#ifndef GS_ARRAY_H
#define GS_ARRAY_H

#include <stddef.h>

/* Makes *arr (of *cap elements of elem bytes) hold at least need elements,
 * growing by half again so that appends cost amortized O(1). Returns GS_OK,
 * or GS_ENOMEM (also when the size would overflow), leaving *arr intact. */
int gs_array_reserve(void **arr, size_t *cap, size_t need, size_t elem);
/* Gives back the slack that growth left in arr, which holds n elements of
 * elem bytes: the smaller block, or arr itself when realloc fails (it
 * still holds everything). */
void *gs_array_shrink(void *arr, size_t n, size_t elem);

/* Asks for the memory at p ahead of its use: a heap's references land
 * anywhere in tables far larger than the cache, and misses asked for early
 * overlap. Only a hint; nothing where the compiler has none. */
#if defined(__GNUC__) || defined(__clang__)
#define GS_PREFETCH(p) __builtin_prefetch(p)
#else
#define GS_PREFETCH(p) ((void)0)
#endif

#endif
