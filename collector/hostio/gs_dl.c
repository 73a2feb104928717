/* gs_dl.c - binding a shared library's functions at run time (dlopen). */
#include "gs_dl.h"

#include <assert.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "gs_error.h"

#define MAX_SYMS 32

int gs_dl_bind(const char *soname, const gs_dl_sym *syms, size_t n, void *table,
               char *err, size_t errlen) {
  void *fn[MAX_SYMS];
  void *lib;
  size_t i;
  assert(n <= MAX_SYMS);
  if (!(lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL))) {
    snprintf(err, errlen, "%s", dlerror());
    return GS_EIO;
  }
  for (i = 0; i < n; i++)
    if (!(fn[i] = dlsym(lib, syms[i].name))) {
      snprintf(err, errlen, "%s lacks %s", soname, syms[i].name);
      dlclose(lib);
      return GS_EIO;
    }
  /* POSIX has a function's address survive dlsym's void *; memcpy takes it
   * into the member without the cast from object to function pointer that
   * ISO C leaves undefined. */
  for (i = 0; i < n; i++) memcpy((char *)table + syms[i].offset, &fn[i], sizeof fn[i]);
  return GS_OK;
}
