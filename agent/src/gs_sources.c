/* gs_sources.c - the table of heap sources and the parsing of a source spec. */
#include <string.h>
#include "gs_error.h"
#include "gs_sources.h"

typedef struct source_entry {
  const char *name;
  gs_source_new_fn create;
  const char *help;
} source_entry;

/* GS_AGENT_MINIMAL: a device build with only the sources that read a real
 * heap, which keeps the synthetic heaps and the demo runtime out of it. */
static const source_entry sources[] = {
#ifndef GS_AGENT_MINIMAL
  {"mock", gs_source_mock_new, gs_source_mock_help},
  {"demo", gs_source_demo_new, gs_source_demo_help},
  {"mono", gs_source_mono_new, gs_source_mono_help},
  {"dotnet", gs_source_dotnet_new, gs_source_dotnet_help},
#endif
  {"file", gs_source_file_new, gs_source_file_help},
};

#define NSOURCES (sizeof sources / sizeof sources[0])

const char *gs_sources_names(void) {
#ifdef GS_AGENT_MINIMAL
  return "file";
#else
  return "mock|demo|mono|dotnet|file";
#endif
}

int gs_sources_list(FILE *f, int json) {
#ifdef GS_AGENT_MINIMAL
  (void)f;
  (void)json;
  return GS_EINVAL;
#else
  return gs_dotnet_list(f, json);
#endif
}

void gs_sources_help(FILE *f) {
  size_t i;
  for (i = 0; i < NSOURCES; i++) fputs(sources[i].help, f);
}

/* Creates a source; its error message is prefixed with its name. */
static int source_create(const source_entry *e, gs_source **out, const char *options,
                         char *err, size_t errcap) {
  size_t n = strlen(e->name) + 2;
  int rc;
  if (errcap <= n) return e->create(out, options, err, errcap);
  if ((rc = e->create(out, options, err + n, errcap - n)) == GS_OK) return rc;
  memcpy(err, e->name, n - 2);
  memcpy(err + n - 2, ": ", 2);
  return rc;
}

int gs_sources_open(gs_source **out, const char *spec, char *err, size_t errcap) {
  const char *colon = strchr(spec, ':');
  size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
  size_t i;
  *out = NULL;
  for (i = 0; i < NSOURCES; i++)
    if (strlen(sources[i].name) == len && memcmp(sources[i].name, spec, len) == 0)
      return source_create(&sources[i], out, colon ? colon + 1 : "", err, errcap);
  snprintf(err, errcap, "unknown source '%.*s' (known: %s)", (int)len, spec,
           gs_sources_names());
  return GS_EINVAL;
}
