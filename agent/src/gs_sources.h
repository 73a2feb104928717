/* gs_sources.h - the heap sources gcsnap-agent knows, by name.
 *
 * A source spec is NAME or NAME:OPTIONS. Every backend has a constructor of
 * the same shape: it parses OPTIONS, writes a one-line reason into err when
 * it fails, and returns GS_EINVAL for options that are wrong (a usage error)
 * or another code when the source cannot start (a missing file, no memory). */
#ifndef GS_SOURCES_H
#define GS_SOURCES_H

#include <stddef.h>
#include <stdio.h>
#include "gs_source.h"

typedef int (*gs_source_new_fn)(gs_source **out, const char *options, char *err,
                                size_t errcap);

int gs_source_mock_new(gs_source **out, const char *options, char *err, size_t errcap);
int gs_source_file_new(gs_source **out, const char *options, char *err, size_t errcap);
int gs_source_demo_new(gs_source **out, const char *options, char *err, size_t errcap);
int gs_source_mono_new(gs_source **out, const char *options, char *err, size_t errcap);
int gs_source_dotnet_new(gs_source **out, const char *options, char *err, size_t errcap);

/* --help text of each backend: one block, indented, ending in a newline. */
extern const char gs_source_mock_help[];
extern const char gs_source_file_help[];
extern const char gs_source_demo_help[];
extern const char gs_source_mono_help[];
extern const char gs_source_dotnet_help[];

/* --list: the .NET programs that dotnet:PID can capture, a line each
 * (JSON lines with json) on f. GS_EINVAL in a build without that source. */
int gs_dotnet_list(FILE *f, int json);
int gs_sources_list(FILE *f, int json);

/* Opens the source spec names. An unknown name is GS_EINVAL. */
int gs_sources_open(gs_source **out, const char *spec, char *err, size_t errcap);

/* Writes the help of every source built in. */
void gs_sources_help(FILE *f);

/* The names of the sources built in, "mock|demo|mono|dotnet|file", for messages. */
const char *gs_sources_names(void);

#endif
