/* gst_util.h - small helpers of the collector's tests: temporary folders,
 * whole files, frames collected in memory. */
#ifndef GST_UTIL_H
#define GST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A fresh folder under TMPDIR (malloc'd path); removed with gst_rmtree. */
char *gst_tempdir(const char *tag);
void gst_rmtree(const char *path);
/* A whole file, plain or zstd (decompressed); NULL when unreadable. */
char *gst_read_file(const char *path, size_t *len);
int gst_exists(const char *path);

/* Frames kept in memory, as gst_encode produces them. */
typedef struct gst_frames {
  uint8_t **data;
  size_t *len;
  size_t n, cap;
} gst_frames;

int gst_frames_add(void *ctx, const uint8_t *frame, size_t len);
void gst_frames_free(gst_frames *f);
/* The envelope of frame i (prefix skipped); free with
 * gcsnap__envelope__free_unpacked. */
struct Gcsnap__Envelope *gst_frames_decode(const gst_frames *f, size_t i);

#endif
