/* fuzz_replay.c - runs a fuzz target's entry point over files, without
 * libFuzzer: the regression corpus and the seeds, in every build.
 *
 *   fuzz_replay_NAME PATH...   (a folder: each file in it, in name order;
 *                               a folder that does not exist is empty)
 *
 * Exits 0 when every input ran; a broken expectation aborts, as it does
 * under libFuzzer. At least one input must have run. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  size_t len = 0;
  uint8_t *data = fuzz_read_file(path, &len);
  if (!data) {
    fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
    return -1;
  }
  LLVMFuzzerTestOneInput(data, len);
  free(data);
  return 0;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs each regular file of the folder; returns how many, or -1. */
static long run_dir(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char **names = NULL, path[4096];
  size_t n = 0, cap = 0, i;
  long ran = 0;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      char **bigger = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
      FUZZ_CHECK(bigger != NULL);
      names = bigger;
    }
    FUZZ_CHECK((names[n++] = strdup(e->d_name)) != NULL);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  for (i = 0; i < n; i++) {
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      if (run_file(path)) ran = -1;
      else if (ran >= 0) ran++;
    }
    free(names[i]);
  }
  free(names);
  return ran;
}

int main(int argc, char **argv) {
  long total = 0;
  int i;
  for (i = 1; i < argc; i++) {
    struct stat st;
    long ran;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) ran = run_dir(argv[i]);
    else ran = stat(argv[i], &st) == 0 ? (run_file(argv[i]) ? -1 : 1) : 0;
    if (ran < 0) return 1;
    printf("%s: %ld inputs\n", argv[i], ran);
    total += ran;
  }
  if (total == 0) {
    fprintf(stderr, "fuzz_replay: no input found\n");
    return 1;
  }
  printf("%ld inputs ran\n", total);
  return 0;
}
