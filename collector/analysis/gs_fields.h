/* gs_fields.h - the field names of a dump's static roots, from the side
 * file beside it (DUMP.gens.json, gs_genfile.h), for the analyses that
 * name what holds an object: "held by the static field Orders" says more
 * than the root's type. A dump without a side file, or whose side file
 * has no names, simply has none. */
#ifndef GS_FIELDS_H
#define GS_FIELDS_H

#include <stdint.h>

typedef struct gs_fields gs_fields;

/* The names beside the dump at path into *out (NULL when there are none,
 * or the side file is unreadable: names are a help, never a reason to
 * fail). GS_OK or GS_ENOMEM. */
int gs_fields_load(gs_fields **out, const char *path);

/* The field of the static root of object in section (counted from 0), or
 * NULL. f may be NULL. */
const char *gs_fields_name(const gs_fields *f, uint64_t section, uint64_t object);

void gs_fields_free(gs_fields *f);

#endif
