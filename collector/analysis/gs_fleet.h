/* gs_fleet.h - the figures of the fleet overview: a device's heap growth
 * from a least-squares fit over its recent snapshots, and its leak
 * suspects by "gcsnap trend"'s rule applied to the snapshots' stored
 * summaries (their largest types), so a page of devices costs no heap
 * read. */
#ifndef GS_FLEET_H
#define GS_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* The slope of y over x by least squares; GS_EINVAL when fewer than two
 * points or every x is the same. */
int gs_fleet_slope(const double *x, const double *y, size_t n, double *slope);

/* The names of the suspect types over n (2 to 64) summaries, oldest first,
 * each the JSON of "gcsnap summary --json" (its by_type rows), as a new
 * array in *out, largest gain first. GS_OK, GS_EINVAL, GS_ENOMEM.
 * The list is gs_trend's (gcsnap trend --top 0 over the same dumps and
 * threshold) when trend's suspects are all among the last summary's rows
 * and each type of those rows is among the rows of every earlier one.
 * Otherwise it can differ: a suspect outside the last rows is not seen,
 * and a type missing from an earlier summary's rows counts 0 there, which
 * makes it a suspect when missing from the first (it grew from nothing)
 * and breaks "grew in every interval" when missing from one in between. */
int gs_fleet_suspects(json_t *const *sums, int n, uint64_t threshold, json_t **out);

#endif
