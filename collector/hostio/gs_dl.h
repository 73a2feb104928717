/* gs_dl.h - a shared library bound when a command first needs it.
 *
 * libpq and libcurl bring their TLS, Kerberos and LDAP libraries with them:
 * linked at build time, they cost every run of gcsnap 6 MB of memory and
 * 5 ms before main, though most commands never reach a server or a
 * PostgreSQL catalog. Their users open them here instead, by name, into a
 * table of function pointers. */
#ifndef GS_DL_H
#define GS_DL_H

#include <stddef.h>

/* One function of a table: its name in the library, and the offsetof of
 * the table's member (a function pointer) that receives it. */
typedef struct gs_dl_sym {
  const char *name;
  size_t offset;
} gs_dl_sym;

/* Opens the library soname and stores each of the n functions of syms in
 * table. GS_OK, or GS_EIO with err set ("libpq.so.5: cannot open shared
 * object file...", or the function it lacks); the table is then left
 * untouched. The library stays loaded for the life of the process. */
int gs_dl_bind(const char *soname, const gs_dl_sym *syms, size_t n, void *table,
               char *err, size_t errlen);

#endif
