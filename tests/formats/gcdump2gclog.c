/* gcdump2gclog - converts a .gcdump file to the record format, for the tests
 * that compare what gcsnap makes of both.
 *
 *   gcdump2gclog IN.gcdump OUT.gclog     (OUT "-" is standard output)
 *
 * Exits 0, or 1 with the reader's message on stderr. */
#include <stdio.h>
#include <string.h>

#include "gs_error.h"
#include "gsf_gcdump.h"

static int read_file(void *ctx, void *buf, size_t cap, size_t *got) {
  FILE *f = ctx;
  *got = fread(buf, 1, cap, f);
  return *got == 0 && ferror(f) ? GS_EIO : GS_OK;
}

int main(int argc, char **argv) {
  FILE *in, *out;
  gs_writer *w;
  char err[256];
  int rc, wrc;
  if (argc != 3) {
    fprintf(stderr, "usage: gcdump2gclog IN.gcdump OUT.gclog\n");
    return 2;
  }
  if (!(in = fopen(argv[1], "rb"))) {
    perror(argv[1]);
    return 1;
  }
  out = strcmp(argv[2], "-") == 0 ? stdout : fopen(argv[2], "wb");
  if (!out || gs_writer_new_file(&w, out) != GS_OK) {
    perror(argv[2]);
    fclose(in);
    return 1;
  }
  rc = gsf_gcdump_convert(read_file, in, w, err, sizeof err);
  wrc = gs_writer_free(w);
  fclose(in);
  if (out != stdout && fclose(out) != 0 && wrc == GS_OK) wrc = GS_EIO;
  if (rc < 0) fprintf(stderr, "%s: %s (%s)\n", argv[1], err, gs_strerror(rc));
  else if (wrc < 0) fprintf(stderr, "%s: %s\n", argv[2], gs_strerror(wrc));
  return rc < 0 || wrc < 0 ? 1 : 0;
}
