/* gs_client.h - what the commands that talk to the collector share.
 *
 * Which collector to ask (--collector, else $GCSNAP_COLLECTOR, else the
 * local default), how a failed call is reported and which exit code it
 * gives, and reading the fields of the API's JSON answers.
 *
 * Exit codes follow the rest of the tool: 0 done; 1 the collector refused
 * or failed the operation (unknown snapshot or device, device not
 * connected or busy, capture failed or timed out); 2 usage, I/O, or no
 * collector to talk to (unreachable, or an answer that is not the API's). */
#ifndef GS_CLIENT_H
#define GS_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "gs_http.h"
#include "gs_table.h"

#define GS_DEFAULT_COLLECTOR "http://127.0.0.1:7411"
#define GS_COLLECTOR_ENV "GCSNAP_COLLECTOR"
#define GS_TOKEN_ENV "GCSNAP_TOKEN"
#define GS_TOKEN_MAX 1024

/* Hands the global options --token-file PATH (the collector's API token:
 * the file's first line; NULL: $GCSNAP_TOKEN, if set) and --cacert FILE
 * (PEM CA certificates for an https:// collector; NULL: none) to gs_http.
 * Returns GS_EXIT_OK, or GS_EXIT_USAGE after printing why. */
int gs_client_set_auth(const char *token_file, const char *cacert);

/* The base URL, without a trailing slash: option if not NULL, else the
 * environment, else the default. Points into static storage. */
const char *gs_client_url(const char *option);

/* After a call: when it failed or the status is not 2xx, prints why as
 * "gcsnap CMD: ..." and returns the exit code; else returns GS_EXIT_OK.
 * A 2xx answer that is not a JSON object counts as a failure too. */
int gs_client_check(const char *cmd, const char *url, int err, const gs_http_reply *r);

/* Downloads snapshot id in format ("gclog" or "zst") into path (written
 * under a temporary name and renamed when complete; - is stdout), and its
 * generation ranges, when the collector has them, into path.gens.json
 * (gs_genfile.h); *bytes gets the snapshot's size. Reports failures as cmd
 * and returns the exit code. */
int gs_client_fetch(const char *cmd, const char *url, uint64_t id, const char *format,
                    const char *path, uint64_t *bytes);

/* Fields of a JSON object; missing or null give 0 / NULL. */
uint64_t gs_client_u64(const json_t *o, const char *key);
const char *gs_client_str(const json_t *o, const char *key);
int gs_client_bool(const json_t *o, const char *key);
int gs_client_is_null(const json_t *o, const char *key);

/* Formats a field for a table cell ("-" when missing or null). */
void gs_client_fmt_u64(char *buf, size_t cap, const json_t *o, const char *key);
/* A unix time as local "YYYY-MM-DD HH:MM:SS". */
void gs_client_fmt_time(char *buf, size_t cap, const json_t *o, const char *key);
/* Bytes with a unit: "512 B", "3.4 KB", "12.0 MB" (powers of 10). */
void gs_client_fmt_bytes(char *buf, size_t cap, uint64_t bytes);

/* Prints the rows of a JSON array on stdout as a table of ncols columns,
 * each row's cells added by add. GS_OK or GS_ENOMEM. */
typedef int (*gs_client_row_fn)(gs_table *t, const json_t *row);
int gs_client_print_rows(const json_t *rows, size_t ncols, const char *const *heads,
                         const char *align, gs_client_row_fn add);

#endif
