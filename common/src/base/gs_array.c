/* gs_array.c - growable arrays (see gs_array.h). */
#include <stdlib.h>
#include "gs_array.h"
#include "gs_error.h"

int gs_array_reserve(void **arr, size_t *cap, size_t need, size_t elem) {
  size_t n = *cap ? *cap : 16;
  void *p;
  if (need <= *cap) return GS_OK;
  while (n < need) n += n / 2 + 1;
  if (n > (size_t)-1 / elem) return GS_ENOMEM;
  if (!(p = realloc(*arr, n * elem))) return GS_ENOMEM;
  *arr = p;
  *cap = n;
  return GS_OK;
}

void *gs_array_shrink(void *arr, size_t n, size_t elem) {
  void *p = realloc(arr, n ? n * elem : 1);
  if (!p) return arr;   /* the larger block still holds everything */
  return p;
}
