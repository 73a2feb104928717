/* gs_progress.c - percentage line on stderr while a large input is read.
 *
 * Redraws are rate-limited by a monotonic clock because the update hook runs
 * once per input block, which on a fast disk is thousands of times a second. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include "gs_progress.h"

#define REDRAW_SECONDS 0.25

static double now_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void gs_progress_start(gs_progress *p, const char *label, uint64_t total) {
  p->label = label;
  p->total = total;
  p->active = total > GS_PROGRESS_MIN_BYTES && isatty(STDERR_FILENO);
  p->shown = 0;
  p->last_percent = -1;
  p->last_time = 0.0;
}

void gs_progress_update(gs_progress *p, uint64_t done) {
  double t;
  int percent;
  if (!p->active) return;
  if (done > p->total) done = p->total;
  percent = (int)(done * 100.0 / (double)p->total);
  if (p->shown && percent == p->last_percent) return;
  t = now_seconds();
  if (p->last_percent >= 0 && t - p->last_time < REDRAW_SECONDS) return;
  fprintf(stderr, "\r%s: %3d%%", p->label, percent);
  fflush(stderr);
  p->shown = 1;
  p->last_percent = percent;
  p->last_time = t;
}

void gs_progress_hide(gs_progress *p) {
  if (!p->shown) return;
  /* Carriage return, then erase to the end of the line. */
  fputs("\r\033[K", stderr);
  fflush(stderr);
  p->shown = 0;
}

void gs_progress_end(gs_progress *p) {
  gs_progress_hide(p);
  p->active = 0;
}
