/* gs_genfile.h - what a dump's records cannot say, in a side file beside it.
 *
 * The record format has no record for generation ranges (gen 0, 1, 2 and
 * the large object heap) nor for the names of static fields, so whoever
 * writes a dump with them (the agent's --out, the collector's store)
 * writes DUMP.gens.json beside it, a file no record reader opens:
 *   {"format": "gcsnap-generations/1", "dropped": N,
 *    "ranges": [{"section": I, "generation": G, "start": "HEX",
 *                "used": N, "reserved": N}],
 *    "statics": [{"section": I, "object": "HEX", "field": "NAME"}]}
 * generation 3 is the large object heap, 4 the pinned object heap (.NET
 * 5+); section counts the dump's sections from 0; "statics" names the field of each static root that has
 * one (absent when none has). At most GS_GENFILE_MAX ranges are kept;
 * "dropped" counts the others. Field names are kept whole, at most
 * GS_GENFILE_NAME_MAX bytes each, for at most GS_GENFILE_STATICS_MAX
 * statics and GS_GENFILE_NAMES_BYTES in all; "statics_dropped" counts the
 * others. */
#ifndef GS_GENFILE_H
#define GS_GENFILE_H

#include <stdint.h>

#define GS_GENFILE_MAX 1024
#define GS_GENFILE_NAME_MAX 1024
#define GS_GENFILE_STATICS_MAX 65536u
#define GS_GENFILE_NAMES_BYTES (4u << 20)    /* of all field names together */

typedef struct gs_genfile gs_genfile;

/* DUMP.gens.json for the dump at dump (malloc'd; NULL when out of memory). */
char *gs_genfile_path(const char *dump);

/* Adds a range of section to *g (made on first use). GS_OK or GS_ENOMEM. */
int gs_genfile_add(gs_genfile **g, uint64_t section, unsigned generation, uint64_t start,
                   uint64_t used, uint64_t reserved);

/* Adds the field name of the static root of object in section (a longer
 * name is cut at GS_GENFILE_NAME_MAX bytes). GS_OK or GS_ENOMEM. */
int gs_genfile_add_static(gs_genfile **g, uint64_t section, uint64_t object, const char *name,
                          size_t len);

/* Writes g to DUMP.gens.json: a temporary file beside it, synced, then
 * renamed over it, so a reader sees the whole file or none. g NULL removes
 * a side file left there, which would describe another dump. GS_OK, or
 * GS_ENOMEM or GS_EIO with the reason in err. */
int gs_genfile_write(const gs_genfile *g, const char *dump, char *err, size_t errcap);

void gs_genfile_free(gs_genfile *g);

#endif
