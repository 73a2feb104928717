/* gsd_log.c - the collector daemon's log: one line per event on stderr.
 *
 * A line is formatted whole and written with one fputs, so lines from the
 * loop thread never interleave. The message is then escaped: every byte
 * outside printable ASCII as \xNN, and '"' and '\\' with a backslash. Names
 * from the wire (device IDs, application names, agents' messages, request
 * paths) go into messages, so an agent or an HTTP client cannot end a line,
 * forge one, or send escape sequences to the terminal of whoever reads
 * the log; and since a backslash is itself escaped, the text always says
 * which bytes were sent. */
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

size_t gsd_log_escape(char *out, size_t cap, const char *text) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)text;
  size_t n = 0;
  if (cap == 0) return 0;
  for (; *p; p++) {
    char esc[4];
    size_t k = 0;
    if (*p < 0x20 || *p >= 0x7f) {
      esc[k++] = '\\';
      esc[k++] = 'x';
      esc[k++] = hex[*p >> 4];
      esc[k++] = hex[*p & 15];
    } else {
      if (*p == '"' || *p == '\\') esc[k++] = '\\';
      esc[k++] = (char)*p;
    }
    if (n + k >= cap) break;            /* never half an escape */
    memcpy(out + n, esc, k);
    n += k;
  }
  out[n] = '\0';
  return n;
}

void gsd_log(gsd_log_level level, const char *fmt, ...) {
  char message[1024], line[GSD_LOG_LINE_MAX + 2];
  struct timeval tv;
  struct tm tm;
  time_t secs;
  va_list ap;
  size_t n;
  if (!gsd_log_enabled(level)) return;
  gettimeofday(&tv, NULL);
  secs = tv.tv_sec;
  gmtime_r(&secs, &tm);
  n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
  n += (size_t)snprintf(line + n, sizeof line - n, ".%03dZ %-5s ",
                        (int)(tv.tv_usec / 1000), level_names[level]);
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  n += gsd_log_escape(line + n, sizeof line - n - 1, message);
  line[n++] = '\n';
  line[n] = '\0';
  fputs(line, stderr);
}
