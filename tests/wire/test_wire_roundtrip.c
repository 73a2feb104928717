/* test_wire_roundtrip.c - whole snapshots through the wire and back.
 *
 * Each source is walked twice with the same fixed clock: into the file sink
 * (what --out writes) and into the stream sink, whose frames are decoded
 * with protobuf-c and written again with gs_writer. The two texts must be
 * the same bytes, SnapshotEnd's counts, size and CRC must match them, and
 * seq must run on without a gap (wire_decode checks the stream rules).
 *
 *   test_wire_roundtrip mock WORKDIR            mock heaps of many shapes
 *   test_wire_roundtrip fixtures DIR WORKDIR    every .gclog under DIR
 *   test_wire_roundtrip file PATH WORKDIR       one dump; exit 77 if absent
 *   test_wire_roundtrip ratio SPEC WORKDIR      also wire/text <= 0.45
 *   test_wire_roundtrip measure SPEC            print the ratio and speed
 *
 * Exit status 0 pass, 1 fail, 77 skipped (a missing optional input). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "gs_crc32.h"
#include "gs_error.h"
#include "gs_port.h"
#include "gs_sink.h"
#include "gs_sources.h"
#include "gs_walk.h"
#include "wire_decode.h"

#define RATIO_TARGET 0.45
#define CLOCK_MS 0x3e8u

typedef struct text_buf {
  char *data;
  size_t len, cap;
} text_buf;

static int text_write(void *ctx, const void *data, size_t len) {
  text_buf *b = ctx;
  if (b->len + len > b->cap) {
    size_t cap = b->cap ? b->cap : 1 << 16;
    char *p;
    while (cap < b->len + len) cap *= 2;
    if (!(p = realloc(b->data, cap))) return GS_ENOMEM;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, data, len);
  b->len += len;
  return GS_OK;
}

static int read_file(const char *path, text_buf *b) {
  FILE *f = fopen(path, "rb");
  char chunk[1 << 16];
  size_t n;
  if (!f) return -1;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (text_write(b, chunk, n)) break;
  fclose(f);
  return 0;
}

static int open_source(const char *spec, gs_source **src) {
  char err[320];
  if (gs_sources_open(src, spec, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", spec, err);
    return -1;
  }
  return 0;
}

/* The reference: what --out writes for spec. */
static int walk_to_file(const char *spec, const gs_walk_options *opt, const char *path,
                        text_buf *text, gs_walk_stats *st) {
  gs_source *src;
  gs_sink *sink;
  char err[320];
  int rc = -1;
  if (open_source(spec, &src)) return -1;
  if (gs_sink_file_new(&sink, path, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", path, err);
  } else {
    if (gs_walk(src, sink, opt, st) || sink->ops->commit(sink))
      fprintf(stderr, "%s: walk to file failed: %s\n", spec, st->error);
    else
      rc = read_file(path, text);
    sink->ops->free(sink);
  }
  src->ops->free(src);
  remove(path);
  return rc;
}

/* The same source through the stream sink into the decoder. */
static int walk_to_wire(const char *spec, const gs_walk_options *opt, wd_state *d,
                        gs_wire_counts *counts) {
  gs_source *src;
  gs_sink *sink;
  gs_wire_snapshot snap;
  gs_walk_stats st;
  char err[320];
  int rc = -1;
  memset(&snap, 0, sizeof snap);
  snap.request_id = 5;
  snap.snapshot_id = 77;
  snap.stable_ids = opt->stable_ids;
  snap.trigger = "request";
  snap.clock_ms = CLOCK_MS;
  if (open_source(spec, &src)) return -1;
  if (gs_sink_stream_new(&sink, wd_feed, d, &snap, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", spec, err);
  } else {
    if (gs_walk(src, sink, opt, &st) || sink->ops->commit(sink))
      fprintf(stderr, "%s: walk to the wire failed: %s / %s / %s\n", spec, st.error,
              sink->error, d->error);
    else
      rc = 0;
    *counts = *gs_sink_stream_counts(sink);
    sink->ops->free(sink);
  }
  src->ops->free(src);
  return rc;
}

static int fail(const char *spec, const char *what) {
  fprintf(stderr, "FAIL %s: %s\n", spec, what);
  return 1;
}

/* One source both ways; 0 when everything agrees. ratio: the bound to
 * check, or 0. */
static int roundtrip(const char *spec, int stable_ids, const char *workdir, double bound) {
  gs_walk_options opt;
  gs_walk_stats st;
  gs_wire_counts c;
  text_buf ref = {0}, got = {0};
  wd_state d;
  char path[1024];
  double ratio;
  int rc = 1;

  memset(&opt, 0, sizeof opt);
  opt.stable_ids = stable_ids;
  opt.fixed_clock = 1;
  opt.clock_ms = CLOCK_MS;
  snprintf(path, sizeof path, "%s/ref.gclog", workdir);
  if (walk_to_file(spec, &opt, path, &ref, &st)) return fail(spec, "no reference text");
  if (wd_init(&d, text_write, &got)) return fail(spec, d.error);
  if (walk_to_wire(spec, &opt, &d, &c)) {
    rc = fail(spec, "the stream failed");
  } else if (wd_finish(&d)) {
    rc = fail(spec, d.error);
  } else if (got.len != ref.len || memcmp(got.data, ref.data, ref.len) != 0) {
    rc = fail(spec, "the text rebuilt from the wire differs from --out's");
  } else if (d.end_crc32 != gs_crc32(0, ref.data, ref.len) || d.end_text_bytes != ref.len) {
    rc = fail(spec, "SnapshotEnd's CRC or size is not the text's");
  } else if (d.objects != st.objects || d.references != st.references ||
             d.roots != st.roots || d.types != st.types || d.sections != st.sections ||
             d.generations != st.generations) {
    rc = fail(spec, "the counts decoded differ from the walk's");
  } else if (d.seq != c.seq || d.frames != c.frames || d.wire_bytes != c.wire_bytes) {
    rc = fail(spec, "seq, frames or bytes differ between the two ends");
  } else if (d.snapshot_id != 77 || d.request_id != 5 || d.stable_ids != stable_ids ||
             strcmp(d.trigger, "request") != 0) {
    rc = fail(spec, "SnapshotBegin does not say what was sent");
  } else if (d.largest_frame > GS_WIRE_BATCH_BYTES + 64 + GS_WIRE_MAX_NAME) {
    rc = fail(spec, "a batch above the bound");
  } else {
    ratio = (double)c.wire_bytes / (double)ref.len;
    printf("ok   %-60s %9llu objects %11lu text bytes %10llu wire bytes  ratio %.3f"
           "  %llu frames, largest %lu\n", spec, (unsigned long long)d.objects,
           (unsigned long)ref.len, (unsigned long long)c.wire_bytes, ratio,
           (unsigned long long)d.frames, (unsigned long)d.largest_frame);
    rc = 0;
    if (bound > 0 && ratio > bound) {
      fprintf(stderr, "FAIL %s: wire/text ratio %.3f above %.2f\n", spec, ratio, bound);
      rc = 1;
    }
  }
  wd_free(&d);
  free(ref.data);
  free(got.data);
  return rc;
}

/* ---- modes ---- */

static int mode_mock(const char *workdir) {
  static const char *const specs[] = {
    "mock:objects=12,types=4,garbage=25,large=0,kinds=0/0/0/1/0/0",
    "mock:objects=1",
    "mock:objects=20000,sections=3,garbage=25,large=1",
    "mock:objects=50000,degree=40,degree-dist=uniform",
    "mock:objects=30000,types=20000",
    "mock:objects=100000,seed=9,cycles=0,roots=20",
    "mock:objects=3000,degree=300,degree-dist=geometric,sections=2",
  };
  size_t i;
  int rc = 0;
  for (i = 0; i < sizeof specs / sizeof specs[0]; i++) rc |= roundtrip(specs[i], 0, workdir, 0);
  rc |= roundtrip("mock:objects=20000,sections=2", 1, workdir, 0);
  return rc;
}

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int mode_fixtures(const char *dir, const char *workdir) {
  static const char *const subdirs[] = {"canonical", "valid", "seeds"};
  size_t i, files = 0;
  int rc = 0;
  for (i = 0; i < 3; i++) {
    char path[1024];
    DIR *dp;
    struct dirent *de;
    snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
    if (!(dp = opendir(path))) return fail(path, "cannot open the folder");
    while ((de = readdir(dp)) != NULL) {
      char spec[1200];
      if (!has_suffix(de->d_name, ".gclog")) continue;
      snprintf(spec, sizeof spec, "file:%s/%s", path, de->d_name);
      rc |= roundtrip(spec, 0, workdir, 0);
      files++;
    }
    closedir(dp);
  }
  if (files < 5) return fail(dir, "too few fixtures found");
  return rc;
}

/* Encoding alone: frames counted and dropped. */
static int count_only(void *ctx, const void *data, size_t len) {
  (void)ctx;
  (void)data;
  (void)len;
  return GS_OK;
}

static int mode_measure(const char *spec) {
  gs_source *src;
  gs_sink *sink;
  gs_wire_snapshot snap;
  gs_walk_options opt;
  gs_walk_stats st;
  const gs_wire_counts *c;
  char err[320];
  double seconds;
  uint64_t t0;
  memset(&snap, 0, sizeof snap);
  memset(&opt, 0, sizeof opt);
  opt.fixed_clock = 1;
  opt.clock_ms = CLOCK_MS;
  if (open_source(spec, &src)) return 1;
  if (gs_sink_stream_new(&sink, count_only, NULL, &snap, err, sizeof err)) return fail(spec, err);
  t0 = gs_port_time_us();
  if (gs_walk(src, sink, &opt, &st) || sink->ops->commit(sink)) return fail(spec, st.error);
  seconds = (double)(gs_port_time_us() - t0) / 1e6;
  c = gs_sink_stream_counts(sink);
  printf("%s: %llu objects, %llu text bytes, %llu wire bytes, ratio %.3f, "
         "%.3f s (source walk included), %.0f objects/s, %.0f text MB/s\n",
         spec, (unsigned long long)c->objects, (unsigned long long)c->text_bytes,
         (unsigned long long)c->wire_bytes, (double)c->wire_bytes / (double)c->text_bytes,
         seconds, (double)c->objects / seconds, (double)c->text_bytes / seconds / 1e6);
  sink->ops->free(sink);
  src->ops->free(src);
  return 0;
}

static int usage(void) {
  fprintf(stderr, "usage: test_wire_roundtrip mock WORKDIR | fixtures DIR WORKDIR |\n"
                  "       file PATH WORKDIR | ratio SPEC WORKDIR | measure SPEC\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "mock") && argc == 3) return mode_mock(argv[2]);
  if (!strcmp(mode, "fixtures") && argc == 4) return mode_fixtures(argv[2], argv[3]);
  if (!strcmp(mode, "measure") && argc == 3) return mode_measure(argv[2]);
  if ((!strcmp(mode, "file") || !strcmp(mode, "ratio")) && argc == 4) {
    const char *spec = argv[2];
    char buf[1100];
    struct stat sb;
    if (!strcmp(mode, "file")) {
      if (stat(spec, &sb) != 0) {
        printf("skipped: %s not found\n", spec);
        return 77;
      }
      snprintf(buf, sizeof buf, "file:%s", spec);
      spec = buf;
    } else if (!strncmp(spec, "file:", 5) && stat(spec + 5, &sb) != 0) {
      printf("skipped: %s not found\n", spec + 5);
      return 77;
    }
    return roundtrip(spec, 0, argv[3], !strcmp(mode, "ratio") ? RATIO_TARGET : 0);
  }
  return usage();
}
