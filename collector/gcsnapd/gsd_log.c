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
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "gs_error.h"
#include "gsd_log.h"

static gsd_log_level current_level = GSD_LOG_INFO;
static gsd_log_format current_format = GSD_LOG_TEXT;
static const char *const level_names[] = {"error", "warn", "info", "debug"};
#define GSD_LOG_DEVICE_MAX 80        /* GSD_DEVICE_ID_MAX; longer is cut */

static const char *scope_device;
static const int64_t *scope_snapshot;

void gsd_log_set_level(gsd_log_level level) { current_level = level; }

void gsd_log_set_format(gsd_log_format format) { current_format = format; }

int gsd_log_parse_format(const char *name, gsd_log_format *format) {
  if (strcmp(name, "text") == 0) *format = GSD_LOG_TEXT;
  else if (strcmp(name, "json") == 0) *format = GSD_LOG_JSON;
  else return GS_EINVAL;
  return GS_OK;
}

void gsd_log_scope(const char *device, const int64_t *snapshot) {
  scope_device = device;
  scope_snapshot = snapshot;
}

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

/* text into out with '"' and '\\' after a backslash and every byte outside
 * printable ASCII as a backslash, lead ("x" or "u00") and two hex digits;
 * stops before an escape that would not fit. */
static size_t escape(char *out, size_t cap, const char *text, const char *lead) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *p = (const unsigned char *)text;
  size_t n = 0;
  assert(strlen(lead) <= 3);            /* an escape fits esc */
  if (cap == 0) return 0;
  for (; *p; p++) {
    char esc[8];
    size_t k = 0;
    if (*p < 0x20 || *p >= 0x7f) {
      const char *l;
      esc[k++] = '\\';
      for (l = lead; *l; l++) esc[k++] = *l;
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

size_t gsd_log_escape(char *out, size_t cap, const char *text) {
  return escape(out, cap, text, "x");
}

/* A JSON string's contents: bytes outside printable ASCII as \u00NN. */
static size_t json_escape(char *out, size_t cap, const char *text) {
  return escape(out, cap, text, "u00");
}

/* {"time":T,"level":L,"event":MESSAGE,"device":ID|null,"snapshot":N|null} */
static size_t json_line(char *line, size_t cap, const char *time, gsd_log_level level,
                        const char *message) {
  char device[GSD_LOG_DEVICE_MAX * 6 + 1] = "";
  int has_device = scope_device && scope_device[0];
  long long snapshot = scope_snapshot ? (long long)*scope_snapshot : 0;
  size_t n;
  if (has_device) json_escape(device, sizeof device, scope_device);
  n = (size_t)snprintf(line, cap, "{\"time\":\"%s\",\"level\":\"%s\",\"event\":\"", time,
                       level_names[level]);
  n += json_escape(line + n, cap - n - 64 - sizeof device, message);
  n += (size_t)snprintf(line + n, cap - n, "\",\"device\":%s%s%s,\"snapshot\":",
                        has_device ? "\"" : "", has_device ? device : "null", has_device ? "\"" : "");
  n += (size_t)(snapshot > 0 ? snprintf(line + n, cap - n, "%lld}", snapshot)
                             : snprintf(line + n, cap - n, "null}"));
  return n;
}

void gsd_log(gsd_log_level level, const char *fmt, ...) {
  char message[1024], time[40], line[GSD_LOG_LINE_MAX + 2];
  struct timeval tv;
  struct tm tm;
  time_t secs;
  va_list ap;
  size_t n;
  if (!gsd_log_enabled(level)) return;
  gettimeofday(&tv, NULL);
  secs = tv.tv_sec;
  gmtime_r(&secs, &tm);
  n = strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(time + n, sizeof time - n, ".%03dZ", (int)(tv.tv_usec / 1000));
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  if (current_format == GSD_LOG_JSON) {
    n = json_line(line, sizeof line - 1, time, level, message);
  } else {
    n = (size_t)snprintf(line, sizeof line, "%s %-5s ", time, level_names[level]);
    n += gsd_log_escape(line + n, sizeof line - n - 1, message);
  }
  line[n++] = '\n';
  line[n] = '\0';
  fputs(line, stderr);
}
