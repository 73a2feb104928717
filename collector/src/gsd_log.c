/* gsd_log.c - the collector daemon's log: one line per event on stderr.
 *
 * A line is formatted whole and written with one fputs, so lines from the
 * loop thread never interleave. Strings from agents (device IDs, messages)
 * are printed with control characters replaced, so an agent cannot forge
 * log lines. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "gs_error.h"
#include "gsd_log.h"

static gsd_log_level current_level = GSD_LOG_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

void gsd_log_set_level(gsd_log_level level) { current_level = level; }

int gsd_log_enabled(gsd_log_level level) { return level <= current_level; }

int gsd_log_parse_level(const char *name, gsd_log_level *level) {
  int i;
  for (i = 0; i <= GSD_LOG_DEBUG; i++)
    if (strcmp(name, level_names[i]) == 0) {
      *level = (gsd_log_level)i;
      return GS_OK;
    }
  return GS_EINVAL;
}

void gsd_log(gsd_log_level level, const char *fmt, ...) {
  char line[1024], *p;
  struct timeval tv;
  struct tm tm;
  time_t secs;
  va_list ap;
  int n;
  if (!gsd_log_enabled(level)) return;
  gettimeofday(&tv, NULL);
  secs = tv.tv_sec;
  gmtime_r(&secs, &tm);
  n = (int)strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
  n += snprintf(line + n, sizeof line - (size_t)n, ".%03dZ %-5s ",
                (int)(tv.tv_usec / 1000), level_names[level]);
  va_start(ap, fmt);
  vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  for (p = line + n; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  strcat(line, "\n");
  fputs(line, stderr);
}
