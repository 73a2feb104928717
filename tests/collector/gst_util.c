/* gst_util.c - small helpers of the collector's tests. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gcsnap.pb-c.h"
#include "gs_file.h"
#include "gst_util.h"

char *gst_tempdir(const char *tag) {
  const char *base = getenv("TMPDIR");
  char *path = malloc(4096);
  snprintf(path, 4096, "%s/gsd-%s-XXXXXX", base && *base ? base : "/tmp", tag);
  if (!mkdtemp(path)) {
    free(path);
    return NULL;
  }
  return path;
}

void gst_rmtree(const char *path) {
  DIR *d = opendir(path);
  struct dirent *e;
  char sub[4096];
  if (!d) {
    unlink(path);
    return;
  }
  while ((e = readdir(d))) {
    struct stat st;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) gst_rmtree(sub);
    else unlink(sub);
  }
  closedir(d);
  rmdir(path);
}

char *gst_read_file(const char *path, size_t *len) {
  gs_file *f;
  char err[300], *buf = NULL;
  size_t cap = 0, n = 0, got;
  if (gs_file_open(&f, path, err, sizeof err)) return NULL;
  for (;;) {
    if (cap - n < 65536) {
      cap = cap ? cap * 2 : 1 << 20;
      buf = realloc(buf, cap + 1);
    }
    if (gs_file_read(f, buf + n, cap - n, &got)) {
      free(buf);
      gs_file_close(f);
      return NULL;
    }
    if (got == 0) break;
    n += got;
  }
  gs_file_close(f);
  buf[n] = '\0';
  *len = n;
  return buf;
}

int gst_exists(const char *path) { return access(path, F_OK) == 0; }

int gst_frames_add(void *ctx, const uint8_t *frame, size_t len) {
  gst_frames *f = ctx;
  if (f->n == f->cap) {
    f->cap = f->cap ? f->cap * 2 : 64;
    f->data = realloc(f->data, f->cap * sizeof *f->data);
    f->len = realloc(f->len, f->cap * sizeof *f->len);
  }
  f->data[f->n] = malloc(len);
  memcpy(f->data[f->n], frame, len);
  f->len[f->n++] = len;
  return 0;
}

void gst_frames_free(gst_frames *f) {
  size_t i;
  for (i = 0; i < f->n; i++) free(f->data[i]);
  free(f->data);
  free(f->len);
  memset(f, 0, sizeof *f);
}

Gcsnap__Envelope *gst_frames_decode(const gst_frames *f, size_t i) {
  const uint8_t *p = f->data[i];
  size_t skip = 0;
  while (p[skip] & 0x80) skip++;
  skip++;
  return gcsnap__envelope__unpack(NULL, f->len[i] - skip, p + skip);
}
