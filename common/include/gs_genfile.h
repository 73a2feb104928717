/* gs_genfile.h - the generation ranges of a dump, in a side file beside it.
 *
 * The record format has no record for generation ranges (gen 0, 1, 2 and
 * the large object heap), so whoever writes a dump with them (the agent's
 * --out, the collector's store) writes DUMP.gens.json beside it, a file
 * no record reader opens:
 *   {"format": "gcsnap-generations/1", "dropped": N,
 *    "ranges": [{"section": I, "generation": G, "start": "HEX",
 *                "used": N, "reserved": N}]}
 * generation 3 is the large object heap; section counts the dump's
 * sections from 0. At most GS_GENFILE_MAX ranges are kept; "dropped"
 * counts the others. */
#ifndef GS_GENFILE_H
#define GS_GENFILE_H

#include <stdint.h>

#define GS_GENFILE_MAX 1024

typedef struct gs_genfile gs_genfile;

/* DUMP.gens.json for the dump at dump (malloc'd; NULL when out of memory). */
char *gs_genfile_path(const char *dump);

/* Adds a range of section to *g (made on first use). GS_OK or GS_ENOMEM. */
int gs_genfile_add(gs_genfile **g, uint64_t section, unsigned generation, uint64_t start,
                   uint64_t used, uint64_t reserved);

/* Writes g to DUMP.gens.json: a temporary file beside it, synced, then
 * renamed over it, so a reader sees the whole file or none. g NULL removes
 * a side file left there, which would describe another dump. GS_OK, or
 * GS_ENOMEM or GS_EIO with the reason in err. */
int gs_genfile_write(const gs_genfile *g, const char *dump, char *err, size_t errcap);

void gs_genfile_free(gs_genfile *g);

#endif
