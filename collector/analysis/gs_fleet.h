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
 * array in *out, largest gain first. GS_OK, GS_EINVAL, GS_ENOMEM. */
int gs_fleet_suspects(json_t *const *sums, int n, uint64_t threshold, json_t **out);

#endif
