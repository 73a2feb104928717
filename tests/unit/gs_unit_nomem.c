/* gs_unit_nomem.c - the wrapped allocators of gs_unit_nomem.h. The count is
 * atomic: the reader's workers allocate too. */
#include <stdatomic.h>
#include <stddef.h>
#include "gs_unit_nomem.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

/* Allocations left before the one that fails; 0: none fails. */
static atomic_long countdown;
static atomic_int armed;

void gsu_nomem_arm(long k) {
  atomic_store(&armed, k > 0);
  atomic_store(&countdown, k);
}

int gsu_nomem_disarm(void) {
  int met = atomic_load(&armed) && atomic_load(&countdown) == 0;
  atomic_store(&countdown, 0);
  atomic_store(&armed, 0);
  return met;
}

static int fails(void) {
  long left = atomic_load(&countdown);
  while (left > 0 && !atomic_compare_exchange_weak(&countdown, &left, left - 1)) continue;
  return left == 1;
}

void *__wrap_malloc(size_t n) { return fails() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { return fails() ? NULL : __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { return fails() ? NULL : __real_realloc(p, n); }
