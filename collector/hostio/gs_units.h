/* gs_units.h - durations, byte sizes and times as people write them, for
 * the schedules of the collector (gcsnap schedule, gcsnapd's API).
 *
 *   durations  500ms, 30s, 5m, 2h, 1d; a bare number is seconds
 *   sizes      512, 64K, 500M, 1G, 2T (powers of 1024; an optional B, as in
 *              1GB or 1GiB, changes nothing); a bare number is bytes
 *   times      Unix seconds, or UTC as 2026-11-21T08:00:00Z (the seconds
 *              and the Z may be left out: UTC all the same)
 *
 * Each parser takes the whole string and returns 0, or -1 when it is not
 * of its form or does not fit. */
#ifndef GS_UNITS_H
#define GS_UNITS_H

#include <stddef.h>
#include <stdint.h>

int gs_units_duration_ms(const char *s, uint64_t *ms);
int gs_units_bytes(const char *s, uint64_t *bytes);
int gs_units_time(const char *s, int64_t *unix_s);

/* ms in the largest unit that divides it: "5m", "1500ms". */
void gs_units_format_duration(char *buf, size_t cap, uint64_t ms);
/* A Unix time as "2026-11-21T08:00:00Z". */
void gs_units_format_time(char *buf, size_t cap, int64_t unix_s);

#endif
