/* gsd_log.h - the collector daemon's log: one line per event on stderr.
 *
 * Each line has a UTC timestamp with milliseconds and a level; lines below
 * the configured level are dropped before they are formatted. A line holds
 * printable ASCII only: the message is escaped by gsd_log_escape, or, in
 * JSON, every byte outside printable ASCII written as \u00NN. */
#ifndef GSD_LOG_H
#define GSD_LOG_H

#include <stddef.h>
#include <stdint.h>

/* Longest log line, without its line end: the message (at most 1023
 * bytes before escaping) fits escaped after the time and level, and in
 * JSON (6 bytes per escaped byte) with the device and snapshot too. */
#define GSD_LOG_LINE_MAX 7000

typedef enum gsd_log_level {
  GSD_LOG_ERROR, GSD_LOG_WARN, GSD_LOG_INFO, GSD_LOG_DEBUG
} gsd_log_level;

/* Text lines ("TIME LEVEL message"), or one JSON object per line:
 * {"time", "level", "event" (the message), "device", "snapshot"}. */
typedef enum gsd_log_format { GSD_LOG_TEXT, GSD_LOG_JSON } gsd_log_format;

void gsd_log_set_level(gsd_log_level level);
void gsd_log_set_format(gsd_log_format format);
/* "text" or "json"; returns GS_OK or GS_EINVAL. */
int gsd_log_parse_format(const char *name, gsd_log_format *format);
/* The device and snapshot the lines logged from now on are about, until
 * gsd_log_scope(NULL, NULL): an agent session's callbacks set them, since
 * its device ID and snapshot ID change as it goes. A snapshot of 0 is
 * none. */
void gsd_log_scope(const char *device, const int64_t *snapshot);
int gsd_log_enabled(gsd_log_level level);
/* "error", "warn", "info" or "debug"; returns GS_OK or GS_EINVAL. */
int gsd_log_parse_level(const char *name, gsd_log_level *level);

/* Copies text into out (cap bytes, NUL included) with every byte outside
 * printable ASCII written as \xNN, and '"' and '\\' preceded by '\\'. Stops
 * before an escape that would not fit; returns the length written. */
size_t gsd_log_escape(char *out, size_t cap, const char *text);

void gsd_log(gsd_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;

#define gsd_log_error(...) gsd_log(GSD_LOG_ERROR, __VA_ARGS__)
#define gsd_log_warn(...) gsd_log(GSD_LOG_WARN, __VA_ARGS__)
#define gsd_log_info(...) gsd_log(GSD_LOG_INFO, __VA_ARGS__)
#define gsd_log_debug(...) gsd_log(GSD_LOG_DEBUG, __VA_ARGS__)

#endif
