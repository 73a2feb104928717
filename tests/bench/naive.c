/* naive.c - a deliberately simple validator, the baseline of run.sh.
 *
 * What anyone would write in an afternoon: fgets a line, strtoull its
 * fields, an open-addressing hash set of the section's object IDs, and the
 * references to IDs not seen yet kept in an array and checked when the
 * section ends. It finds duplicate objects and dangling references, nothing
 * else, and trusts the syntax. gsbench's validate phase must beat it on
 * every input shape; run.sh prints the ratio. Output: one key=value line
 * like gcsnap-bench's. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define NAIVE_LINE (1 << 20)

typedef struct naive_set { uint64_t *keys; size_t cap, n; unsigned shift; } naive_set;

static double naive_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t naive_slot(const naive_set *s, uint64_t id) {
  size_t i = (size_t)((id * UINT64_C(0x9E3779B97F4A7C15)) >> s->shift);
  while (s->keys[i] && s->keys[i] != id + 1) i = (i + 1) & (s->cap - 1);
  return i;
}

static void naive_grow(naive_set *s) {
  naive_set bigger = {calloc(s->cap * 2, sizeof *s->keys), s->cap * 2, s->n, s->shift - 1};
  size_t i;
  if (!bigger.keys) { fprintf(stderr, "naive: out of memory\n"); exit(1); }
  for (i = 0; i < s->cap; i++)
    if (s->keys[i]) bigger.keys[naive_slot(&bigger, s->keys[i] - 1)] = s->keys[i];
  free(s->keys);
  *s = bigger;
}

/* Returns 1 when added, 0 when id was there already. */
static int naive_add(naive_set *s, uint64_t id) {
  size_t i;
  if ((s->n + 1) * 10 > s->cap * 7) naive_grow(s);
  i = naive_slot(s, id);
  if (s->keys[i]) return 0;
  s->keys[i] = id + 1;
  s->n++;
  return 1;
}

static int naive_has(const naive_set *s, uint64_t id) { return s->keys[naive_slot(s, id)] != 0; }

int main(int argc, char **argv) {
  static char line[NAIVE_LINE];
  naive_set defined = {NULL, 1024, 0, 54};
  uint64_t *later = NULL, nlater = 0, cap_later = 0, records = 0, dup = 0, dangling = 0, i;
  struct rusage ru;
  struct stat st;
  double t0;
  FILE *f;
  if (argc != 2 || !(f = fopen(argv[1], "r")) || stat(argv[1], &st) != 0) {
    fprintf(stderr, "usage: naive FILE\n");
    return 2;
  }
  if (!(defined.keys = calloc(defined.cap, sizeof *defined.keys))) return 1;
  t0 = naive_now();
  while (fgets(line, sizeof line, f)) {
    char *p = line + 1, *end;
    records++;
    if (line[0] == 'c') {
      for (i = 0; i < nlater; i++) dangling += !naive_has(&defined, later[i]);
      nlater = 0;
      memset(defined.keys, 0, defined.cap * sizeof *defined.keys);
      defined.n = 0;
    }
    if (line[0] != 'o') continue;
    dup += !naive_add(&defined, strtoull(p, &p, 16));
    strtoull(p, &p, 16);
    strtoull(p, &p, 16);
    for (;;) {
      uint64_t ref = strtoull(p, &end, 16);
      if (end == p) break;
      p = end;
      if (naive_has(&defined, ref)) continue;
      if (nlater == cap_later) {
        cap_later = cap_later ? cap_later * 2 : 4096;
        if (!(later = realloc(later, cap_later * sizeof *later))) return 1;
      }
      later[nlater++] = ref;
    }
  }
  getrusage(RUSAGE_SELF, &ru);
  printf("phase=naive bytes=%lld seconds=%.6f mb_per_s=%.1f maxrss_kb=%ld records=%" PRIu64
         " duplicates=%" PRIu64 " dangling=%" PRIu64 "\n",
         (long long)st.st_size, naive_now() - t0, (double)st.st_size / 1e6 / (naive_now() - t0),
         ru.ru_maxrss, records, dup, dangling);
  fclose(f);
  free(later);
  free(defined.keys);
  return 0;
}
