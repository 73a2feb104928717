/* gs_progress.h - percentage line on stderr while a large input is read.
 *
 * Shown only for inputs over GS_PROGRESS_MIN_BYTES and only when stderr is a
 * terminal, so that logs and pipes never receive carriage-return clutter. */
#ifndef GS_PROGRESS_H
#define GS_PROGRESS_H

#include <stdint.h>

#define GS_PROGRESS_MIN_BYTES (64ull << 20)

typedef struct gs_progress {
  const char *label;
  uint64_t total;        /* bytes expected */
  int active;            /* a line may be drawn */
  int shown;             /* a line is on the screen now */
  int last_percent;
  double last_time;      /* seconds, monotonic */
} gs_progress;

/* Activates the display when total is large enough and stderr is a tty. */
void gs_progress_start(gs_progress *p, const char *label, uint64_t total);
/* Redraws with done/total, at most a few times per second. */
void gs_progress_update(gs_progress *p, uint64_t done);
/* Erases the line (before other output); the next update draws it again. */
void gs_progress_hide(gs_progress *p);
/* Erases the line for good. */
void gs_progress_end(gs_progress *p);

#endif
