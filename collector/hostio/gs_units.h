/* gs_units.h - times as people write them, for the schedules of the
 * collector (gcsnap schedule, gcsnapd's API), and durations and times
 * written back for people. Durations and sizes are read by common/'s
 * gs_parse.h, one grammar for every program.
 *
 *   times      Unix seconds, or UTC as 2026-11-21T08:00:00Z (the seconds
 *              and the Z may be left out: UTC all the same)
 *
 * The parser takes the whole string and returns 0, or -1 when it is not
 * of its form or does not fit. Times are from 1970 to the end of 9999, so
 * that a time in milliseconds, plus a schedule's interval, fits 64 bits. */
#ifndef GS_UNITS_H
#define GS_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define GS_UNITS_TIME_MAX 253402300799LL          /* 9999-12-31T23:59:59Z */
#define GS_UNITS_EVERY_MAX_MS 31622400000ULL      /* 366d: the longest schedule interval */

int gs_units_time(const char *s, int64_t *unix_s);

/* ms in the largest unit that divides it: "5m", "1500ms". */
void gs_units_format_duration(char *buf, size_t cap, uint64_t ms);
/* A Unix time as "2026-11-21T08:00:00Z". */
void gs_units_format_time(char *buf, size_t cap, int64_t unix_s);

#endif
