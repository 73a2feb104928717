/* fuzz_util.c - what the fuzz targets share (see fuzz_util.h). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_util.h"

static char temp_dir[FUZZ_PATH_MAX / 2];

static void remove_temp_dir(void) {
  DIR *d = opendir(temp_dir);
  struct dirent *e;
  char path[FUZZ_PATH_MAX];
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(path, sizeof path, "%s/%s", temp_dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(temp_dir);
}

void fuzz_temp_path(char *out, size_t cap, const char *name) {
  if (!temp_dir[0]) {
    const char *base = getenv("TMPDIR");
    int n;
    /* In memory when it can be: the collector target syncs what it stores. */
    if (!base || !*base) base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    n = snprintf(temp_dir, sizeof temp_dir, "%s/gcsnap-fuzz-XXXXXX", base);
    FUZZ_CHECK(n > 0 && (size_t)n < sizeof temp_dir && mkdtemp(temp_dir) != NULL);
    atexit(remove_temp_dir);
  }
  FUZZ_CHECK((size_t)snprintf(out, cap, "%s/%s", temp_dir, name) < cap);
}

uint8_t *fuzz_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0, got;
  if (!f) return NULL;
  do {
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap = cap ? cap * 2 : 4096);
      if (!bigger) { free(buf); fclose(f); return NULL; }
      buf = bigger;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
  } while (got > 0);
  fclose(f);
  *len = n;
  return buf;
}

int fuzz_src_read(void *ctx, void *buf, size_t cap, size_t *got) {
  fuzz_src *s = ctx;
  size_t n = s->len - s->pos;
  if (n > cap) n = cap;
  if (s->piece && n > s->piece) n = s->piece;
  memcpy(buf, s->p + s->pos, n);
  s->pos += n;
  *got = n;
  return 0;
}
