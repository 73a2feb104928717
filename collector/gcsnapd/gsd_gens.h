/* gsd_gens.h - the generation ranges an agent streams with a snapshot
 * (gen 0, 1, 2 and the large object heap), kept beside the snapshot's file
 * in SNAPSHOT.gens.json, which the record format's readers never open:
 *   {"format": "gcsnap-generations/1", "dropped": N,
 *    "ranges": [{"section": I, "generation": G, "start": "HEX",
 *                "used": N, "reserved": N}]}
 * generation 3 is the large object heap; section counts from 0. At most
 * GSD_GENS_MAX ranges a snapshot are kept; "dropped" counts the others.
 * GET /api/snapshots/ID/generations breaks a snapshot down by them
 * (http/gsd_api_generations.c, analysis/gs_gens.h). */
#ifndef GSD_GENS_H
#define GSD_GENS_H

#include <stdint.h>
#include <jansson.h>
#include "gcsnap.pb-c.h"

#define GSD_GENS_MAX 1024

typedef struct gsd_gens gsd_gens;

/* Adds the ranges of r, of section index section, to *g (made on first
 * use). GS_OK or GS_ENOMEM. */
int gsd_gens_add(gsd_gens **g, uint64_t section, const Gcsnap__GenerationRanges *r);
/* Writes g (NULL: nothing) to snapshot_path.gens.json through a temporary
 * file and a rename. GS_OK, GS_ENOMEM or GS_EIO. */
int gsd_gens_write(const gsd_gens *g, const char *snapshot_path);
void gsd_gens_free(gsd_gens *g);

#endif
